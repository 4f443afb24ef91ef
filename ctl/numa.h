/* SPDX-License-Identifier: GPL-2.0 */
#ifndef TANDEM_CTL_NUMA_H
#define TANDEM_CTL_NUMA_H

#include <stdbool.h>
#include <stdint.h>

#define NUMA_MAX_NODES 64

struct numa_node {
	int id;
	bool has_cpus;
	uint64_t mem_total_kb, mem_free_kb, file_pages_kb, anon_pages_kb;
};

/* Online nodes from /sys/devices/system/node (root may be NULL for "/"). Returns count. */
int numa_read_nodes(const char *root, struct numa_node *nodes, int max);
/* The CPU-less memory node with the most memory, or -1. */
int numa_cpuless_node(const struct numa_node *nodes, int n);
/* One line per node (JSON array "nodes"); cxl_node is marked. */
void numa_print_nodes(int cxl_node);

#endif
