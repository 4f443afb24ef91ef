/* SPDX-License-Identifier: GPL-2.0 */
#ifndef TANDEM_CTL_NUMA_H
#define TANDEM_CTL_NUMA_H

#include <stdbool.h>
#include <stdint.h>

#define NUMA_MAX_NODES 64

struct numa_node {
	int id;
	bool has_cpus;
	int tier;	/* memory_tier<N> of /sys/devices/virtual/memory_tiering, -1: none */
	uint64_t mem_total_kb, mem_free_kb, file_pages_kb, anon_pages_kb;
	uint64_t lru_file_kb;	/* Active(file) + Inactive(file): cache reclaim can take */
};

/* The device-dax memory behind a node, and the CXL devices behind that. */
struct numa_dax {
	char dax[32];		/* dax0.0 */
	char driver[32];	/* kmem when onlined as system RAM, device_dax, "" */
	uint64_t start, size;	/* its physical range */
	char region[32];	/* CXL region holding the range ("" when not CXL) */
	char memdevs[96];	/* CXL memory devices of the region, "mem0,mem1" */
	char hosts[160];	/* their PCI devices, "0000:0d:00.0,..." */
};

/*
 * Online nodes from /sys/devices/system/node, with their memory tier (root may
 * be NULL for "/"). Returns count.
 */
int numa_read_nodes(const char *root, struct numa_node *nodes, int max);
/*
 * The CPU-less memory node to steer to, as tandem.ko's auto-detection picks
 * it: the largest one in a lower memory tier than the nodes with CPUs (CXL
 * and other dax/kmem memory), else the largest one; -1 when there is none.
 */
int numa_cpuless_node(const struct numa_node *nodes, int n);
/*
 * Fill out with the device-dax instance targeting node and, when it lies in a
 * CXL region, the region and its memory devices. 0, or -ENOENT when no dax
 * device targets the node.
 */
int numa_dax_of_node(const char *root, int node, struct numa_dax *out);
/*
 * One line per node (JSON array "nodes"), cxl_node marked, then the memory
 * tiers (JSON array "memory_tiers").
 */
void numa_print_nodes(int cxl_node);
/* The dax device and CXL memory device behind cxl_node (JSON "cxl_node_memory"). */
void numa_print_dax(int cxl_node);

#endif
