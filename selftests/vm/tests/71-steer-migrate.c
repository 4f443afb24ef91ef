// SPDX-License-Identifier: GPL-2.0
/*
 * Steering by migration onto the detected node, small enough for every rig
 * mode including cxl (QEMU's emulated CXL memory is slow under TCG, and disk
 * DMA into it hangs the guest, so no prefetch here: pages are read onto node
 * 0 and copied over by tandem.ko). Ground truth: move_pages(2) for each
 * page's node, node meminfo, and every byte of a known pattern, from the
 * cache and again from storage.
 */
#include "kselftest_harness.h"
#include "dataset.h"

#define DIR_	"/mnt/data/migrate"
#define NFILES	4
#define FSIZE	(1 << 20)
#define SEED	0x63786c21
#define DS_	"/sys/kernel/tandem/datasets/1"
#define PAGES_ALL ((long)NFILES * FSIZE / 4096)

static const char *ko(void)
{
	return getenv("TANDEM_KO") ?: "/lib/tandem/tandem.ko";
}

static void path_of(char *p, size_t len, int k)
{
	snprintf(p, len, DIR_ "/f%d", k);
}

FIXTURE(ds) {
	int node;	/* the node tandem.ko detected */
};

FIXTURE_SETUP(ds)
{
	char p[64];

	sh("rmmod tandem 2>/dev/null; rm -rf " DIR_ "; mkdir -p " DIR_);
	for (int k = 0; k < NFILES; k++) {
		path_of(p, sizeof(p), k);
		ASSERT_EQ(0, ds_write(p, SEED, k, FSIZE));
	}
	ASSERT_EQ(0, sh("insmod %s steer=0", ko()));
	self->node = read_long("/sys/kernel/tandem/cxl_node");
	ASSERT_GE(self->node, 1);
	ASSERT_LT(self->node, 4);
	drop_caches();
	ASSERT_EQ(0, sh("tandemctl dataset add migrate " DIR_ " >/dev/null"));
}

FIXTURE_TEARDOWN(ds)
{
	sh("rmmod tandem 2>/dev/null; rm -rf " DIR_);
}

static long nodes_of_all(long *nodes)
{
	long one[4], total = 0;
	char p[64];

	memset(nodes, 0, sizeof(*nodes) * 4);
	for (int k = 0; k < NFILES; k++) {
		path_of(p, sizeof(p), k);
		total += ds_page_nodes(p, one, 4);
		for (int n = 0; n < 4; n++)
			nodes[n] += one[n];
	}
	return total;
}

static long check_all(void)
{
	long bad = 0, b;
	char p[64];

	for (int k = 0; k < NFILES; k++) {
		path_of(p, sizeof(p), k);
		b = ds_check(p, SEED, k, FSIZE);
		bad += b < 0 ? 1 : b;
	}
	return bad;
}

static void read_all(void)
{
	char p[64];

	for (int k = 0; k < NFILES; k++) {
		path_of(p, sizeof(p), k);
		sh("cat %s > /dev/null", p);
	}
}

TEST_F(ds, full_pass_moves_cached_pages_and_keeps_contents)
{
	long nodes[4], before;
	double t0;

	read_all();
	ASSERT_EQ(PAGES_ALL, nodes_of_all(nodes));
	EXPECT_EQ(PAGES_ALL, nodes[0]);	/* read onto node 0 with steering off */
	before = node_meminfo_kb(self->node, "FilePages");
	sh("echo 1 > /sys/kernel/tandem/steer");
	t0 = mono_s();
	ASSERT_EQ(0, sh("tandemctl steer migrate > /dev/null"));
	TH_LOG("steered %ld pages to node %d in %.2f s", PAGES_ALL, self->node, mono_s() - t0);
	EXPECT_GE(node_meminfo_kb(self->node, "FilePages") - before, PAGES_ALL * 4 * 95 / 100);
	EXPECT_EQ(PAGES_ALL, nodes_of_all(nodes));
	EXPECT_EQ(PAGES_ALL, nodes[self->node]);
	EXPECT_EQ(PAGES_ALL, read_long(DS_ "/counters/steered"));
	EXPECT_EQ(0, check_all());	/* from the moved pages */
	drop_caches();
	EXPECT_EQ(0, check_all());	/* from storage */
}

TEST_F(ds, pages_entering_the_cache_are_steered)
{
	long nodes[4];
	double t0;

	sh("echo 1 > /sys/kernel/tandem/steer");
	read_all();
	usleep(50000);
	t0 = mono_s();
	while (read_long(DS_ "/steer_pending") != 0 && mono_s() - t0 < 120)
		usleep(20000);
	EXPECT_EQ(0, read_long(DS_ "/steer_pending"));
	EXPECT_EQ(PAGES_ALL, nodes_of_all(nodes));
	EXPECT_EQ(PAGES_ALL, nodes[self->node]);
	EXPECT_EQ(0, check_all());
}

TEST_HARNESS_MAIN
