// SPDX-License-Identifier: GPL-2.0
/*
 * Which NUMA node is the CXL memory. A CXL memory expander onlined as system
 * RAM shows up as a node with memory and no CPUs. The kernel onlines it
 * through device-dax and kmem, which puts the node in a lower memory tier;
 * 6.1 does not export the tiers (node_is_toptier(), next_demotion_node()) to
 * modules, but kmem's memory is visible in iomem_resource as driver-managed
 * System RAM ("System RAM (kmem)"), inside the range it came from: a CXL
 * window, persistent memory or soft-reserved (EFI specific-purpose) memory.
 * Auto-detection prefers CPU-less nodes with such memory, else takes the
 * largest CPU-less memory node (a plain NUMA node, same tier as DRAM).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ioport.h>
#include <linux/memory_hotplug.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/nodemask.h>

#include "tandem.h"

struct tandem_kmem_scan {
	int nid;
	u64 bytes;		/* online driver-managed System RAM of the node */
	unsigned long desc;	/* IORES_DESC_* of the range it was carved from */
};

static int tandem_origin_cb(struct resource *res, void *arg)
{
	return 1;	/* found one: stop */
}

/* which kind of range [start, end] lies in: CXL window, pmem, soft-reserved */
static unsigned long tandem_kmem_origin(u64 start, u64 end)
{
	static const unsigned long descs[] = {
		IORES_DESC_CXL, IORES_DESC_PERSISTENT_MEMORY, IORES_DESC_SOFT_RESERVED,
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(descs); i++)
		if (walk_iomem_res_desc(descs[i], 0, start, end, NULL, tandem_origin_cb) == 1)
			return descs[i];
	return IORES_DESC_NONE;
}

static int tandem_kmem_cb(struct resource *res, void *arg)
{
	struct tandem_kmem_scan *scan = arg;
	struct page *page = pfn_to_online_page(PHYS_PFN(res->start));
	unsigned long desc;

	/* node spans can interleave: count only memory online on this node */
	if (!page || page_to_nid(page) != scan->nid)
		return 0;
	desc = tandem_kmem_origin(res->start, res->end);
	scan->bytes += resource_size(res);
	if (scan->desc == IORES_DESC_NONE)
		scan->desc = desc;
	return 0;
}

/* online driver-managed (dax/kmem) System RAM of nid, within its pfn span */
static void tandem_node_kmem(int nid, struct tandem_kmem_scan *scan)
{
	u64 start = PFN_PHYS(node_start_pfn(nid)), end = PFN_PHYS(node_end_pfn(nid));

	scan->nid = nid;
	scan->bytes = 0;
	scan->desc = IORES_DESC_NONE;
	if (end > start)
		walk_iomem_res_desc(IORES_DESC_NONE,
				    IORESOURCE_SYSTEM_RAM | IORESOURCE_SYSRAM_DRIVER_MANAGED,
				    start, end - 1, scan, tandem_kmem_cb);
}

static const char *tandem_origin_name(unsigned long desc)
{
	switch (desc) {
	case IORES_DESC_CXL:
		return "CXL window";
	case IORES_DESC_PERSISTENT_MEMORY:
		return "persistent memory";
	case IORES_DESC_SOFT_RESERVED:
		return "soft-reserved memory";
	default:
		return "driver-managed";
	}
}

struct tandem_pick {
	int nid, count;
	unsigned long pages;
	struct tandem_kmem_scan kmem;
};

static void tandem_pick_consider(struct tandem_pick *p, int nid, unsigned long pages,
				 const struct tandem_kmem_scan *kmem)
{
	p->count++;
	if (p->nid == TANDEM_NODE_NONE || pages > p->pages) {
		p->nid = nid;
		p->pages = pages;
		p->kmem = *kmem;
	}
}

/*
 * Returns the CPU-less memory node with the most dax/kmem memory, else the
 * CPU-less memory node with the most present pages, else TANDEM_NODE_NONE;
 * reason says which and why.
 */
int tandem_node_autodetect(char *reason, size_t len)
{
	struct tandem_pick kmem = { .nid = TANDEM_NODE_NONE }, plain = kmem;
	struct tandem_kmem_scan scan;
	int nid;

	for_each_node_state(nid, N_MEMORY) {
		if (node_state(nid, N_CPU))
			continue;
		tandem_node_kmem(nid, &scan);
		if (scan.bytes)
			tandem_pick_consider(&kmem, nid, node_present_pages(nid), &scan);
		else
			tandem_pick_consider(&plain, nid, node_present_pages(nid), &scan);
	}
	if (kmem.nid != TANDEM_NODE_NONE) {
		scnprintf(reason, len,
			  "auto: node %d has memory (%lu MiB) and no CPUs, dax/kmem memory (%s): lower memory tier, largest of %d such",
			  kmem.nid, kmem.pages >> (20 - PAGE_SHIFT),
			  tandem_origin_name(kmem.kmem.desc), kmem.count);
		return kmem.nid;
	}
	if (plain.nid == TANDEM_NODE_NONE) {
		scnprintf(reason, len, "auto: no CPU-less memory node, steering disabled");
		return TANDEM_NODE_NONE;
	}
	scnprintf(reason, len,
		  "auto: node %d has memory (%lu MiB) and no CPUs, largest of %d such node%s (no dax/kmem node)",
		  plain.nid, plain.pages >> (20 - PAGE_SHIFT), plain.count,
		  plain.count == 1 ? "" : "s");
	return plain.nid;
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
	WRITE_ONCE(tandem.cxl_node, node);
	strscpy(tandem.cxl_reason, reason, sizeof(tandem.cxl_reason));
	tandem_headroom_apply();	/* the CPU nodes' headroom follows the CXL node */
	return 0;
}
