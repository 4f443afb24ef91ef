// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/numa.h"
#include "lib/out.h"

static void read_meminfo(const char *dir, struct numa_node *n)
{
	char path[600], line[256], key[64];
	unsigned long long v;
	FILE *f;

	snprintf(path, sizeof(path), "%s/meminfo", dir);
	f = fopen(path, "r");
	if (!f)
		return;
	/* "Node 1 MemTotal:  262144 kB" */
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Node %*d %63[^:]: %llu", key, &v) != 2)
			continue;
		if (!strcmp(key, "MemTotal"))
			n->mem_total_kb = v;
		else if (!strcmp(key, "MemFree"))
			n->mem_free_kb = v;
		else if (!strcmp(key, "FilePages"))
			n->file_pages_kb = v;
		else if (!strcmp(key, "AnonPages"))
			n->anon_pages_kb = v;
		else if (!strcmp(key, "Active(file)") || !strcmp(key, "Inactive(file)"))
			n->lru_file_kb += v;
	}
	fclose(f);
}

static bool has_cpus(const char *dir)
{
	char path[600], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/cpulist", dir);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return buf[0] && buf[0] != '\n';
}

/* set .tier of the nodes in a sysfs node list such as "0-1,3" */
static void set_tier(struct numa_node *nodes, int n, const char *list, int tier)
{
	const char *p = list;
	char *end;
	long lo, hi;

	while (*p >= '0' && *p <= '9') {
		lo = strtol(p, &end, 10);
		hi = *end == '-' ? strtol(end + 1, &end, 10) : lo;
		for (int i = 0; i < n; i++)
			if (nodes[i].id >= lo && nodes[i].id <= hi)
				nodes[i].tier = tier;
		p = *end == ',' ? end + 1 : end;
	}
}

static void read_tiers(const char *root, struct numa_node *nodes, int n)
{
	char base[256], path[600], list[256];
	struct dirent *e;
	DIR *d;
	FILE *f;
	int tier;

	snprintf(base, sizeof(base), "%s/sys/devices/virtual/memory_tiering", root ? root : "");
	d = opendir(base);
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (sscanf(e->d_name, "memory_tier%d", &tier) != 1)
			continue;
		snprintf(path, sizeof(path), "%s/%s/nodelist", base, e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(list, sizeof(list), f))
			set_tier(nodes, n, list, tier);
		fclose(f);
	}
	closedir(d);
}

static int cmp_node(const void *a, const void *b)
{
	return ((const struct numa_node *)a)->id - ((const struct numa_node *)b)->id;
}

int numa_read_nodes(const char *root, struct numa_node *nodes, int max)
{
	char base[256], dir[520];
	struct dirent *e;
	DIR *d;
	int n = 0, id;

	snprintf(base, sizeof(base), "%s/sys/devices/system/node", root ? root : "");
	d = opendir(base);
	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max) {
		if (sscanf(e->d_name, "node%d", &id) != 1)
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", base, e->d_name);
		memset(&nodes[n], 0, sizeof(nodes[n]));
		nodes[n].id = id;
		nodes[n].tier = -1;
		nodes[n].has_cpus = has_cpus(dir);
		read_meminfo(dir, &nodes[n]);
		n++;
	}
	closedir(d);
	qsort(nodes, n, sizeof(*nodes), cmp_node);
	read_tiers(root, nodes, n);
	return n;
}

/* the tier of the fastest node with CPUs, INT_MAX when unknown */
static int cpu_tier(const struct numa_node *nodes, int n)
{
	int top = INT_MAX;

	for (int i = 0; i < n; i++)
		if (nodes[i].has_cpus && nodes[i].tier >= 0 && nodes[i].tier < top)
			top = nodes[i].tier;
	return top;
}

int numa_cpuless_node(const struct numa_node *nodes, int n)
{
	int best = -1, best_lower = -1, top = cpu_tier(nodes, n);

	for (int i = 0; i < n; i++) {
		if (nodes[i].has_cpus || !nodes[i].mem_total_kb)
			continue;
		if (best < 0 || nodes[i].mem_total_kb > nodes[best].mem_total_kb)
			best = i;
		if (top == INT_MAX || nodes[i].tier <= top)
			continue;
		if (best_lower < 0 || nodes[i].mem_total_kb > nodes[best_lower].mem_total_kb)
			best_lower = i;
	}
	if (best_lower >= 0)
		return nodes[best_lower].id;
	return best < 0 ? -1 : nodes[best].id;
}

/* memory tiers, fastest first: "memory_tier4: node 0; memory_tier22: node 1" */
static void print_tiers(const struct numa_node *nodes, int n)
{
	int last = -1, next, first = 1;

	out_text("memory tiers:");
	out_arr_open("memory_tiers");
	for (;;) {
		next = INT_MAX;
		for (int i = 0; i < n; i++)
			if (nodes[i].tier > last && nodes[i].tier < next)
				next = nodes[i].tier;
		if (next == INT_MAX)
			break;
		out_obj_open(NULL);
		out_u64("tier", first ? " memory_tier%llu:" : "; memory_tier%llu:", next);
		out_arr_open("nodes");
		for (int i = 0, k = 0; i < n; i++)
			if (nodes[i].tier == next)
				out_u64(NULL, k++ ? ",%llu" : " node %llu", nodes[i].id);
		out_arr_close();
		out_obj_close();
		first = 0;
		last = next;
	}
	out_arr_close();
	out_text(first ? " none reported (no memory_tiering in sysfs)\n" :
		 " (a higher number is a slower tier)\n");
}

void numa_print_nodes(int cxl_node)
{
	struct numa_node nodes[NUMA_MAX_NODES];
	int n = numa_read_nodes(NULL, nodes, NUMA_MAX_NODES);

	out_text("%-5s %-5s %12s %12s %12s %12s %5s\n", "NODE", "CPUS", "MEM MiB", "FREE MiB",
		 "FILE MiB", "ANON MiB", "TIER");
	out_arr_open("nodes");
	for (int i = 0; i < n; i++) {
		out_obj_open(NULL);
		out_u64("node", "%-5llu ", nodes[i].id);
		out_bool("cpus", "%-5s ", nodes[i].has_cpus);
		out_u64("mem_total_kb", NULL, nodes[i].mem_total_kb);
		out_u64("mem_free_kb", NULL, nodes[i].mem_free_kb);
		out_u64("file_pages_kb", NULL, nodes[i].file_pages_kb);
		out_u64("anon_pages_kb", NULL, nodes[i].anon_pages_kb);
		out_s64("tier", NULL, nodes[i].tier);
		out_text("%12llu %12llu %12llu %12llu",
			 (unsigned long long)nodes[i].mem_total_kb / 1024,
			 (unsigned long long)nodes[i].mem_free_kb / 1024,
			 (unsigned long long)nodes[i].file_pages_kb / 1024,
			 (unsigned long long)nodes[i].anon_pages_kb / 1024);
		if (nodes[i].tier >= 0)
			out_text(" %5d", nodes[i].tier);
		else
			out_text(" %5s", "-");
		out_text("%s\n", nodes[i].id == cxl_node ? "  <- CXL node" : "");
		out_bool("cxl", NULL, nodes[i].id == cxl_node);
		out_obj_close();
	}
	out_arr_close();
	print_tiers(nodes, n);
}
