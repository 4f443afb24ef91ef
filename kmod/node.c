// SPDX-License-Identifier: GPL-2.0
/*
 * Which NUMA node is the CXL memory. A CXL memory expander onlined as system
 * RAM shows up as a node with memory and no CPUs; that is what auto-detection
 * looks for.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mmzone.h>
#include <linux/nodemask.h>

#include "tandem.h"

/* Returns the CPU-less memory node with the most present pages, or TANDEM_NODE_NONE. */
int tandem_node_autodetect(char *reason, size_t len)
{
	unsigned long best_pages = 0, pages;
	int nid, best = TANDEM_NODE_NONE, candidates = 0;

	for_each_node_state(nid, N_MEMORY) {
		if (node_state(nid, N_CPU))
			continue;
		candidates++;
		pages = node_present_pages(nid);
		if (pages > best_pages) {
			best_pages = pages;
			best = nid;
		}
	}
	if (best == TANDEM_NODE_NONE)
		scnprintf(reason, len, "auto: no CPU-less memory node, steering disabled");
	else
		scnprintf(reason, len,
			  "auto: node %d has memory (%lu MiB) and no CPUs, largest of %d such node%s",
			  best, best_pages >> (20 - PAGE_SHIFT), candidates,
			  candidates == 1 ? "" : "s");
	return best;
}

/* 0 when nid can hold steered pages, -EINVAL otherwise */
int tandem_node_validate(int nid)
{
	if (nid < 0 || nid >= MAX_NUMNODES || !node_online(nid))
		return -EINVAL;
	if (!node_state(nid, N_MEMORY))
		return -EINVAL;
	return 0;
}

/*
 * Set the target node from a cxl_node value (node id, AUTO or NONE). On error
 * the old node stays and *why says why the value was refused.
 */
int tandem_node_set(int nid, const char **why)
{
	char reason[TANDEM_REASON_LEN];
	int node;

	if (nid != TANDEM_NODE_AUTO && nid != TANDEM_NODE_NONE && tandem_node_validate(nid)) {
		*why = "not an online NUMA node with memory (use a node id, -1 = auto, -2 = none)";
		return -EINVAL;
	}
	if (nid == TANDEM_NODE_AUTO) {
		node = tandem_node_autodetect(reason, sizeof(reason));
	} else if (nid == TANDEM_NODE_NONE) {
		node = TANDEM_NODE_NONE;
		scnprintf(reason, sizeof(reason), "disabled (cxl_node=-2)");
	} else {
		node = nid;
		scnprintf(reason, sizeof(reason), "explicit: cxl_node=%d%s", nid,
			  node_state(nid, N_CPU) ? " (note: this node has CPUs)" : "");
	}
	tandem.cxl_node = node;
	strscpy(tandem.cxl_reason, reason, sizeof(tandem.cxl_reason));
	return 0;
}
