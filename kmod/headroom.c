// SPDX-License-Identifier: GPL-2.0
/*
 * Headroom on the CPU nodes (Documentation/tiering.md, "Headroom").
 *
 * CXL memory onlined by kmem lives in ZONE_MOVABLE of a CPU-less node: only
 * movable allocations (anonymous memory, page cache, tmpfs: __GFP_MOVABLE |
 * __GFP_HIGHMEM, highest zone ZONE_MOVABLE) may use it. The kernel's own
 * allocations (slab, page tables, kernel stacks, network and block buffers)
 * must come from a CPU node. Once Tandem has moved the dataset's page cache
 * off the CPU node, that node holds a job's anonymous memory and nothing the
 * kernel can reclaim (no swap): a job that grows fills it to the low
 * watermark before its allocations fall back to the CXL node, the kernel's
 * allocations then take it to the min watermark, and the next one finds
 * nothing to reclaim and invokes the OOM killer, with the CXL node free.
 *
 * The kernel has a mechanism for exactly this inside one node: a zone's
 * lowmem_reserve[j] is kept free from allocations that could have used zone
 * j (ZONE_NORMAL keeps 1/32 of the node's ZONE_MOVABLE from movable
 * allocations, vm.lowmem_reserve_ratio). It is computed per node, so a
 * ZONE_MOVABLE on another node protects nothing. tandem.ko adds the same
 * reserve across nodes: on every node with CPUs and memory, the largest zone
 * below ZONE_MOVABLE gets cpu_headroom_kb more in lowmem_reserve[ZONE_MOVABLE];
 * movable allocations then go to the CXL node while that much is left free
 * on the CPU node, for the allocations only it can serve. The default (-1)
 * is the kernel's own ratio: the CXL node's ZONE_MOVABLE / 32, at most a
 * quarter of the CPU node's memory.
 *
 * The kernel recomputes lowmem_reserve when memory goes online or offline
 * (before the memory notifier runs) and when vm.lowmem_reserve_ratio is
 * written; the notifier applies the headroom again. What was added is taken
 * back at unload.
 *
 * The headroom must never cost an OOM kill the kernel would not have made:
 * an allocation bound to the CPU node (MPOL_BIND, a cpuset) cannot go to the
 * CXL node, and without the headroom it could have used that memory. So
 * tandem.ko is on the OOM notifier chain, which out_of_memory() calls before
 * it picks a victim: the headroom is handed back there (every node's), the
 * pages it held reported as freed, and the allocation is retried without
 * it instead of killing a task. It is applied again once every CPU node has
 * it free above the high watermark (checked every HEADROOM_REARM_MS), and
 * headroom_yields counts the hand-backs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/memory.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/nodemask.h>
#include <linux/oom.h>
#include <linux/workqueue.h>

#include "tandem.h"

static DEFINE_MUTEX(tandem_headroom_lock);
/* per node: the zone given the headroom, what was added, the value written */
static struct {
	struct zone *zone;
	long added, written;
} tandem_hr[MAX_NUMNODES];

static int tandem_headroom_kb = -1;
static bool tandem_hr_ready;	/* init done, exit not begun; tandem_headroom_lock */
static bool tandem_hr_yielded;	/* handed back to an OOM, not applied again yet */
static unsigned int tandem_hr_yields;
module_param_named(headroom_yields, tandem_hr_yields, uint, 0444);
MODULE_PARM_DESC(headroom_yields,
		 "Times the CPU nodes' headroom was handed back to an allocation that would otherwise have invoked the OOM killer; read-only (count, default: 0)");

#define HEADROOM_REARM_MS	2000
static void tandem_headroom_rearm(struct work_struct *work);
static DECLARE_DELAYED_WORK(tandem_hr_rearm_work, tandem_headroom_rearm);
static int tandem_headroom_set_param(const char *val, const struct kernel_param *kp);
static const struct kernel_param_ops tandem_headroom_ops = {
	.set = tandem_headroom_set_param,
	.get = param_get_int,
};
module_param_cb(cpu_headroom_kb, &tandem_headroom_ops, &tandem_headroom_kb, 0644);
MODULE_PARM_DESC(cpu_headroom_kb,
		 "Memory kept free from movable allocations on every CPU node while a CXL node is set, for the kernel allocations the CXL node's ZONE_MOVABLE cannot serve; -1 = the CXL node's memory / 32 (the kernel's lowmem_reserve_ratio for ZONE_NORMAL), at most 1/4 of the CPU node's; 0 = none (KiB, default: -1)");

/* the zone of nid that kernel allocations use most: the largest below ZONE_MOVABLE */
static struct zone *tandem_headroom_zone(int nid)
{
	struct zone *best = NULL;
	int i;

	for (i = 0; i < ZONE_MOVABLE; i++) {
		struct zone *z = &NODE_DATA(nid)->node_zones[i];

		if (zone_managed_pages(z) && (!best || zone_managed_pages(z) > zone_managed_pages(best)))
			best = z;
	}
	return best;
}

/* pages of headroom for CPU node nid; 0: none */
static long tandem_headroom_pages(int nid, int cxl)
{
	long cap = node_present_pages(nid) / 4, pages;

	if (cxl < 0 || !tandem_headroom_kb)
		return 0;
	if (tandem_headroom_kb > 0)
		pages = (long)tandem_headroom_kb >> (PAGE_SHIFT - 10);
	else
		pages = zone_managed_pages(&NODE_DATA(cxl)->node_zones[ZONE_MOVABLE]) / 32;
	return min(pages, cap);
}

/* undo what was added to nid, if the kernel has not recomputed it meanwhile; the pages added */
static long tandem_headroom_undo(int nid)
{
	struct zone *z = tandem_hr[nid].zone;
	long added = z ? tandem_hr[nid].added : 0;

	if (z && READ_ONCE(z->lowmem_reserve[ZONE_MOVABLE]) == tandem_hr[nid].written)
		WRITE_ONCE(z->lowmem_reserve[ZONE_MOVABLE], tandem_hr[nid].written - tandem_hr[nid].added);
	tandem_hr[nid].zone = NULL;
	tandem_hr[nid].added = 0;
	return added;
}

/* the zone of CPU node nid that gets a headroom, and its pages (0: none) */
static long tandem_headroom_target(int nid, int cxl, struct zone **z)
{
	if (nid == cxl || !node_state(nid, N_CPU))
		return 0;
	*z = tandem_headroom_zone(nid);
	return *z ? tandem_headroom_pages(nid, cxl) : 0;
}

static void tandem_headroom_apply_locked(void)
{
	int cxl = READ_ONCE(tandem.cxl_node), nid;

	tandem_hr_yielded = false;
	for_each_node_state(nid, N_MEMORY) {
		struct zone *z;
		long add;

		tandem_headroom_undo(nid);
		add = tandem_headroom_target(nid, cxl, &z);
		if (!add)
			continue;
		tandem_hr[nid].zone = z;
		tandem_hr[nid].added = add;
		tandem_hr[nid].written = READ_ONCE(z->lowmem_reserve[ZONE_MOVABLE]) + add;
		WRITE_ONCE(z->lowmem_reserve[ZONE_MOVABLE], tandem_hr[nid].written);
	}
}

void tandem_headroom_apply(void)
{
	mutex_lock(&tandem_headroom_lock);
	if (tandem_hr_ready)
		tandem_headroom_apply_locked();
	mutex_unlock(&tandem_headroom_lock);
}

static int tandem_headroom_set_param(const char *val, const struct kernel_param *kp)
{
	int v, err = kstrtoint(val, 0, &v);

	if (err)
		return err;
	if (v < -1)
		return -EINVAL;
	mutex_lock(&tandem_headroom_lock);
	tandem_headroom_kb = v;
	/* at load the parameter is set before init: init applies it */
	if (tandem_hr_ready)
		tandem_headroom_apply_locked();
	mutex_unlock(&tandem_headroom_lock);
	return 0;
}

/*
 * Re-arm after a hand-back: only when every CPU node that gets a headroom
 * has it free above its zone's high watermark, so that applying it does not
 * at once leave a bound allocation short again; else look again later.
 */
static void tandem_headroom_rearm(struct work_struct *work)
{
	int cxl, nid;
	bool room = true;

	mutex_lock(&tandem_headroom_lock);
	if (!tandem_hr_ready || !tandem_hr_yielded)
		goto out;
	cxl = READ_ONCE(tandem.cxl_node);
	for_each_node_state(nid, N_MEMORY) {
		struct zone *z;
		long add;

		add = tandem_headroom_target(nid, cxl, &z);
		if (add && zone_page_state(z, NR_FREE_PAGES) < high_wmark_pages(z) + add)
			room = false;
	}
	if (room)
		tandem_headroom_apply_locked();
	else
		schedule_delayed_work(&tandem_hr_rearm_work, msecs_to_jiffies(HEADROOM_REARM_MS));
out:
	mutex_unlock(&tandem_headroom_lock);
}

/*
 * out_of_memory(), before it picks a victim (oom_lock held): hand the
 * headroom back, so that the failing allocation is retried with it. Called
 * for any OOM that is not a memory cgroup's; a kernel allocation that failed
 * is not helped (the headroom never kept memory from it), and the next OOM
 * finds nothing to hand back and goes on.
 */
static int tandem_headroom_oom_cb(struct notifier_block *nb, unsigned long unused, void *parm)
{
	unsigned long *freed = parm;
	long pages = 0;
	int nid;

	/* never wait here: the lock's holders do not allocate, but be sure */
	if (!mutex_trylock(&tandem_headroom_lock))
		return NOTIFY_OK;
	if (tandem_hr_ready)
		for (nid = 0; nid < MAX_NUMNODES; nid++)
			pages += tandem_headroom_undo(nid);
	if (pages) {
		tandem_hr_yielded = true;
		tandem_hr_yields++;
		*freed += pages;
		schedule_delayed_work(&tandem_hr_rearm_work, msecs_to_jiffies(HEADROOM_REARM_MS));
		pr_warn("headroom of %ld pages handed back to an allocation that would have invoked the OOM killer; applied again once it is free\n",
			pages);
	}
	mutex_unlock(&tandem_headroom_lock);
	return NOTIFY_OK;
}

static struct notifier_block tandem_headroom_oom_nb = {
	.notifier_call = tandem_headroom_oom_cb,
};

static int tandem_headroom_mem_cb(struct notifier_block *nb, unsigned long action, void *arg)
{
	/* lowmem_reserve was just recomputed for the new memory layout */
	if (action == MEM_ONLINE || action == MEM_OFFLINE)
		tandem_headroom_apply();
	return NOTIFY_OK;
}

static struct notifier_block tandem_headroom_nb = {
	.notifier_call = tandem_headroom_mem_cb,
};

int tandem_headroom_init(void)
{
	int err = register_memory_notifier(&tandem_headroom_nb);

	if (err)
		return err;
	err = register_oom_notifier(&tandem_headroom_oom_nb);
	if (err) {
		unregister_memory_notifier(&tandem_headroom_nb);
		return err;
	}
	mutex_lock(&tandem_headroom_lock);
	tandem_hr_ready = true;
	tandem_headroom_apply_locked();
	mutex_unlock(&tandem_headroom_lock);
	return 0;
}

void tandem_headroom_exit(void)
{
	int nid;

	unregister_memory_notifier(&tandem_headroom_nb);
	unregister_oom_notifier(&tandem_headroom_oom_nb);
	mutex_lock(&tandem_headroom_lock);
	tandem_hr_ready = false;
	mutex_unlock(&tandem_headroom_lock);
	/* a re-arm queued sees tandem_hr_ready false and stops */
	cancel_delayed_work_sync(&tandem_hr_rearm_work);
	mutex_lock(&tandem_headroom_lock);
	for (nid = 0; nid < MAX_NUMNODES; nid++)
		tandem_headroom_undo(nid);
	mutex_unlock(&tandem_headroom_lock);
}
