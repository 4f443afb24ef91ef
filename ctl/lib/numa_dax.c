// SPDX-License-Identifier: GPL-2.0
/*
 * What memory is behind a CPU-less node: the device-dax instance targeting
 * it (onlined as system RAM by kmem) and, when its range lies in a CXL
 * region, the region and the CXL memory devices decoding it. Everything
 * comes from sysfs:
 *
 *   /sys/bus/dax/devices/daxX.Y/{target_node,resource,size,driver}
 *   /sys/bus/cxl/devices/regionN/{resource,size,target0..}
 *   /sys/bus/cxl/devices/decoderE.D -> .../endpointE/decoderE.D
 *   /sys/bus/cxl/devices/endpointE/uport -> .../<pci device>/memM
 *
 * A pmem region's dax device sits under the nvdimm bridge, not under the
 * CXL region, so the region is found by address.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/numa.h"
#include "lib/out.h"

#define SYSFS_PATH 600

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int err = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		err = -EIO;
	else
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
	return err;
}

/* a number in any base strtoull takes ("0x1000", "4096"); -1 when unreadable */
static int read_num(const char *path, unsigned long long *v)
{
	char buf[64], *end;

	if (read_line(path, buf, sizeof(buf)) || !buf[0])
		return -1;
	*v = strtoull(buf, &end, 0);
	return *end ? -1 : 0;
}

/* copy a name, cut to fit (sysfs names here are short) */
static void set_name(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
}

/* the last and second-to-last components of a symlink's target */
static int link_tail(const char *path, char *last, size_t llen, char *parent, size_t plen)
{
	char target[SYSFS_PATH], *slash;
	ssize_t n = readlink(path, target, sizeof(target) - 1);

	if (n <= 0)
		return -1;
	target[n] = 0;
	slash = strrchr(target, '/');
	set_name(last, llen, slash ? slash + 1 : target);
	if (parent) {
		if (slash)
			*slash = 0;
		slash = strrchr(target, '/');
		set_name(parent, plen, slash ? slash + 1 : target);
	}
	return 0;
}

static void append(char *buf, size_t len, const char *item)
{
	size_t used = strlen(buf);

	snprintf(buf + used, len - used, "%s%s", used ? "," : "", item);
}

/* the memory devices behind region's targets: decoder -> endpoint -> uport */
static void region_memdevs(const char *cxl, struct numa_dax *out)
{
	char path[SYSFS_PATH * 2], decoder[64], endpoint[64], memdev[64], host[64];

	for (int i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), "%s/%s/target%d", cxl, out->region, i);
		if (read_line(path, decoder, sizeof(decoder)) || !decoder[0])
			break;
		snprintf(path, sizeof(path), "%s/%s", cxl, decoder);
		if (link_tail(path, memdev, sizeof(memdev), endpoint, sizeof(endpoint)))
			continue;
		snprintf(path, sizeof(path), "%s/%s/uport", cxl, endpoint);
		if (link_tail(path, memdev, sizeof(memdev), host, sizeof(host)))
			continue;
		append(out->memdevs, sizeof(out->memdevs), memdev);
		append(out->hosts, sizeof(out->hosts), host);
	}
}

/* the CXL region whose range holds out's range, if any */
static void find_region(const char *root, struct numa_dax *out)
{
	char cxl[SYSFS_PATH], path[SYSFS_PATH * 2];
	unsigned long long start, size;
	struct dirent *e;
	DIR *d;

	snprintf(cxl, sizeof(cxl), "%s/sys/bus/cxl/devices", root);
	d = opendir(cxl);
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "region", 6))
			continue;
		snprintf(path, sizeof(path), "%s/%s/resource", cxl, e->d_name);
		if (read_num(path, &start))
			continue;
		snprintf(path, sizeof(path), "%s/%s/size", cxl, e->d_name);
		if (read_num(path, &size) || out->start < start ||
		    out->start + out->size > start + size)
			continue;
		set_name(out->region, sizeof(out->region), e->d_name);
		region_memdevs(cxl, out);
		break;
	}
	closedir(d);
}

/* the first (by name) dax device targeting node */
static int find_dax(const char *root, int node, struct numa_dax *out)
{
	char base[SYSFS_PATH], path[SYSFS_PATH * 2];
	unsigned long long target, v;
	struct dirent *e;
	DIR *d;

	snprintf(base, sizeof(base), "%s/sys/bus/dax/devices", root);
	d = opendir(base);
	if (!d)
		return -ENOENT;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/target_node", base, e->d_name);
		if (read_num(path, &target) || (long long)target != node)
			continue;
		if (out->dax[0] && strcmp(e->d_name, out->dax) > 0)
			continue;
		set_name(out->dax, sizeof(out->dax), e->d_name);
	}
	closedir(d);
	if (!out->dax[0])
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/%s/resource", base, out->dax);
	if (!read_num(path, &v))
		out->start = v;
	snprintf(path, sizeof(path), "%s/%s/size", base, out->dax);
	if (!read_num(path, &v))
		out->size = v;
	snprintf(path, sizeof(path), "%s/%s/driver", base, out->dax);
	if (link_tail(path, out->driver, sizeof(out->driver), NULL, 0))
		out->driver[0] = 0;
	return 0;
}

int numa_dax_of_node(const char *root, int node, struct numa_dax *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	root = root ? root : "";
	err = find_dax(root, node, out);
	if (err)
		return err;
	if (out->size)
		find_region(root, out);
	return 0;
}

void numa_print_dax(int cxl_node)
{
	struct numa_dax dax;

	if (cxl_node < 0)
		return;
	if (numa_dax_of_node(NULL, cxl_node, &dax)) {
		out_text("node %d memory: no device-dax instance targets it (a plain NUMA node)\n",
			 cxl_node);
		return;
	}
	out_obj_open("cxl_node_memory");
	out_text("node %d memory: ", cxl_node);
	out_str("dax", "%s", dax.dax);
	out_str("driver", " (driver %s", dax.driver[0] ? dax.driver : "none");
	out_u64("size", ", %llu bytes", dax.size);
	out_u64("start", " at 0x%llx)", dax.start);
	if (dax.region[0]) {
		out_str("cxl_region", ", CXL %s", dax.region);
		out_str("cxl_memdevs", " on %s", dax.memdevs);
		out_str("cxl_hosts", " (%s)\n", dax.hosts);
	} else {
		out_text(", not in a CXL region\n");
	}
	out_obj_close();
}
