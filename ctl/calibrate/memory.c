// SPDX-License-Identifier: GPL-2.0
/* Calibration: what the page cache can use per NUMA node (calibrate.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calibrate/calibrate.h"
#include "module/module.h"

#define NODE_SYS	"/sys/devices/system/node"
#define MAX_NODE_ID	1024

static int read_meminfo_kb(const char *path, const char *want, double *out)
{
	char line[256], key[64];
	unsigned long long v;
	FILE *f = fopen(path, "r");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		/* "Node 0 MemFree:  123 kB" or "MemAvailable:  123 kB" */
		const char *p = strncmp(line, "Node ", 5) ? line : strchr(line + 5, ' ');

		if (p && sscanf(p, " %63[^:]: %llu", key, &v) == 2 && !strcmp(key, want)) {
			*out = v * 1024.0;
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

static bool node_has_cpus(int id)
{
	char path[96], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), NODE_SYS "/node%d/cpulist", id);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return buf[0] >= '0' && buf[0] <= '9';
}

/* High watermark of each node (kswapd reclaims up to it), bytes. */
static void zone_high(double *high, int max)
{
	long psz = sysconf(_SC_PAGESIZE);
	FILE *f = fopen("/proc/zoneinfo", "r");
	unsigned long long v;
	char line[256];
	int node = -1;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Node %d, zone", &node) == 1)
			continue;
		if (node >= 0 && node < max && sscanf(line, " high %llu", &v) == 1)
			high[node] += (double)v * psz;
	}
	fclose(f);
}

static int read_node(int id, const double *high, struct profile_node *n)
{
	char path[96];
	double act = 0, inact = 0;
	int err;

	snprintf(path, sizeof(path), NODE_SYS "/node%d/meminfo", id);
	memset(n, 0, sizeof(*n));
	n->id = id;
	n->has_cpus = node_has_cpus(id);
	err = read_meminfo_kb(path, "MemTotal", &n->total);
	err = err ?: read_meminfo_kb(path, "MemFree", &n->free);
	err = err ?: read_meminfo_kb(path, "Active(file)", &act);
	err = err ?: read_meminfo_kb(path, "Inactive(file)", &inact);
	n->file = act + inact;
	/* free memory plus page cache that can be reclaimed for the dataset */
	n->avail = n->free + n->file - high[id];
	if (n->avail < 0)
		n->avail = 0;
	return err;
}

/* tandem.ko's CXL node, over netlink; -1 when it is not loaded or has none */
static int tandem_cxl_node(void)
{
	struct tmod_stats s;
	struct tnl *nl;
	int node = -1;

	if (tnl_open(&nl, true))
		return -1;
	if (!tmod_stats_get(nl, &s))
		node = s.cxl_node;
	tnl_close(nl);
	return node;
}

static int read_nodes(struct profile *p)
{
	double *high = calloc(MAX_NODE_ID, sizeof(*high));
	struct dirent *e;
	int id, err = 0;
	DIR *d;

	if (!high)
		return -ENOMEM;
	zone_high(high, MAX_NODE_ID);
	p->nnodes = 0;
	d = opendir(NODE_SYS);
	if (!d) {
		err = -errno;
		goto free_high;
	}
	while ((e = readdir(d)) && !err && p->nnodes < PROFILE_MAX_NODES) {
		if (sscanf(e->d_name, "node%d", &id) != 1 || id < 0 || id >= MAX_NODE_ID)
			continue;
		err = read_node(id, high, &p->nodes[p->nnodes++]);
	}
	closedir(d);
free_high:
	free(high);
	return err;
}

int cal_memory(struct profile *p)
{
	int err = read_nodes(p);

	if (err)
		return err;
	read_meminfo_kb("/proc/meminfo", "MemAvailable", &p->mem_available);
	/* tandem.ko's choice wins; else the first CPU-less node with memory */
	p->cxl_node = tandem_cxl_node();
	for (int i = 0; i < p->nnodes && p->cxl_node < 0; i++)
		if (!p->nodes[i].has_cpus && p->nodes[i].total > 0)
			p->cxl_node = p->nodes[i].id;
	p->cache_dram = p->cache_cxl = 0;
	for (int i = 0; i < p->nnodes; i++) {
		if (p->nodes[i].id == p->cxl_node)
			p->cache_cxl += p->nodes[i].avail;
		else
			p->cache_dram += p->nodes[i].avail;
	}
	return 0;
}
