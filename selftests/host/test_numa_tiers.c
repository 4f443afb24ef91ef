// SPDX-License-Identifier: GPL-2.0
/*
 * Memory tiers and the dax/CXL device behind a node, read from a sysfs tree
 * laid out as the VM rig's cxl mode shows it (QEMU 7.2 CXL type-3 device,
 * Debian 6.1: a pmem region, its namespace as device-dax, onlined by kmem).
 * The VM test 70-node-detect.sh checks the same against the live kernel and
 * the cxl tool.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "lib/numa.h"

static void put(const char *root, const char *rel, const char *text)
{
	char path[PATH_MAX], cmd[PATH_MAX + 32];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	if (system(cmd))
		return;
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void link_to(const char *root, const char *rel, const char *target)
{
	char path[PATH_MAX], cmd[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	if (!system(cmd) && symlink(target, path))
		perror(path);
}

FIXTURE(sys) {
	char dir[64];
};

FIXTURE_SETUP(sys)
{
	strcpy(self->dir, "/tmp/tandem-numa-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
}

FIXTURE_TEARDOWN(sys)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", self->dir);
	if (system(cmd))
		perror(cmd);
}

static void nodes(const char *d, int n, const char *const *cpulists, const char *const *mem)
{
	char rel[128], text[128];

	for (int i = 0; i < n; i++) {
		snprintf(rel, sizeof(rel), "sys/devices/system/node/node%d/cpulist", i);
		put(d, rel, cpulists[i]);
		snprintf(rel, sizeof(rel), "sys/devices/system/node/node%d/meminfo", i);
		snprintf(text, sizeof(text), "Node %d MemTotal: %s kB\n", i, mem[i]);
		put(d, rel, text);
	}
}

TEST_F(sys, tiers_are_read_and_the_lower_tier_node_is_preferred)
{
	static const char *const cpus[] = { "0-1\n", "\n", "\n" };
	static const char *const mem[] = { "393216", "1048576", "262144" };
	struct numa_node n[8];
	int count;

	/* node 1: a plain CPU-less node, larger; node 2: dax/kmem, lower tier */
	nodes(self->dir, 3, cpus, mem);
	put(self->dir, "sys/devices/virtual/memory_tiering/memory_tier4/nodelist", "0-1\n");
	put(self->dir, "sys/devices/virtual/memory_tiering/memory_tier22/nodelist", "2\n");
	count = numa_read_nodes(self->dir, n, 8);
	ASSERT_EQ(3, count);
	EXPECT_EQ(4, n[0].tier);
	EXPECT_EQ(4, n[1].tier);
	EXPECT_EQ(22, n[2].tier);
	EXPECT_EQ(2, numa_cpuless_node(n, count));
}

TEST_F(sys, without_tiers_the_largest_cpuless_node_is_picked)
{
	static const char *const cpus[] = { "0-1\n", "\n", "\n" };
	static const char *const mem[] = { "393216", "1048576", "262144" };
	struct numa_node n[8];
	int count;

	nodes(self->dir, 3, cpus, mem);
	count = numa_read_nodes(self->dir, n, 8);
	ASSERT_EQ(3, count);
	EXPECT_EQ(-1, n[2].tier);
	EXPECT_EQ(1, numa_cpuless_node(n, count));
	/* all in one tier (a plain NUMA node): still the largest */
	put(self->dir, "sys/devices/virtual/memory_tiering/memory_tier4/nodelist", "0-2\n");
	count = numa_read_nodes(self->dir, n, 8);
	EXPECT_EQ(4, n[2].tier);
	EXPECT_EQ(1, numa_cpuless_node(n, count));
}

/* the cxl-mode layout: dax0.0 under the nvdimm bridge, region0 by address */
static void cxl_tree(const char *d)
{
	put(d, "sys/bus/dax/devices/dax0.0/target_node", "1\n");
	put(d, "sys/bus/dax/devices/dax0.0/resource", "0x290600000\n");
	put(d, "sys/bus/dax/devices/dax0.0/size", "262144000\n");
	link_to(d, "sys/bus/dax/devices/dax0.0/driver", "../../../../bus/dax/drivers/kmem");
	put(d, "sys/bus/cxl/devices/region0/resource", "0x290000000\n");
	put(d, "sys/bus/cxl/devices/region0/size", "0x10000000\n");
	put(d, "sys/bus/cxl/devices/region0/target0", "decoder2.0\n");
	link_to(d, "sys/bus/cxl/devices/decoder2.0",
		"../../../devices/platform/ACPI0017:00/root0/port1/endpoint2/decoder2.0");
	link_to(d, "sys/bus/cxl/devices/endpoint2/uport",
		"../../../../../pci0000:0c/0000:0c:00.0/0000:0d:00.0/mem0");
}

TEST_F(sys, cxl_memory_device_behind_the_node)
{
	struct numa_dax dax;

	cxl_tree(self->dir);
	ASSERT_EQ(0, numa_dax_of_node(self->dir, 1, &dax));
	EXPECT_STREQ("dax0.0", dax.dax);
	EXPECT_STREQ("kmem", dax.driver);
	EXPECT_EQ(0x290600000ULL, dax.start);
	EXPECT_EQ(262144000ULL, dax.size);
	EXPECT_STREQ("region0", dax.region);
	EXPECT_STREQ("mem0", dax.memdevs);
	EXPECT_STREQ("0000:0d:00.0", dax.hosts);
	EXPECT_EQ(-ENOENT, numa_dax_of_node(self->dir, 0, &dax));
}

TEST_F(sys, interleaved_region_lists_every_memdev)
{
	struct numa_dax dax;

	cxl_tree(self->dir);
	put(self->dir, "sys/bus/cxl/devices/region0/target1", "decoder3.0\n");
	link_to(self->dir, "sys/bus/cxl/devices/decoder3.0",
		"../../../devices/platform/ACPI0017:00/root0/port1/endpoint3/decoder3.0");
	link_to(self->dir, "sys/bus/cxl/devices/endpoint3/uport",
		"../../../../../pci0000:0c/0000:0c:01.0/0000:0e:00.0/mem1");
	ASSERT_EQ(0, numa_dax_of_node(self->dir, 1, &dax));
	EXPECT_STREQ("mem0,mem1", dax.memdevs);
	EXPECT_STREQ("0000:0d:00.0,0000:0e:00.0", dax.hosts);
}

TEST_F(sys, dax_outside_any_region_is_not_cxl)
{
	struct numa_dax dax;

	/* the kmem-mode layout: an NVDIMM namespace, no CXL bus */
	put(self->dir, "sys/bus/dax/devices/dax0.0/target_node", "1\n");
	put(self->dir, "sys/bus/dax/devices/dax0.0/resource", "0x100800000\n");
	put(self->dir, "sys/bus/dax/devices/dax0.0/size", "394264576\n");
	ASSERT_EQ(0, numa_dax_of_node(self->dir, 1, &dax));
	EXPECT_STREQ("dax0.0", dax.dax);
	EXPECT_STREQ("", dax.driver);
	EXPECT_STREQ("", dax.region);
	EXPECT_STREQ("", dax.memdevs);
	/* a region elsewhere does not claim it */
	cxl_tree(self->dir);
	put(self->dir, "sys/bus/dax/devices/dax0.0/resource", "0x100800000\n");
	ASSERT_EQ(0, numa_dax_of_node(self->dir, 1, &dax));
	EXPECT_STREQ("", dax.region);
}

TEST_HARNESS_MAIN
