// SPDX-License-Identifier: GPL-2.0
/*
 * Steering: move page-cache folios of registered files to the target (CXL)
 * node.
 *
 * A probe on the mm_filemap_add_to_page_cache tracepoint notes, per file,
 * the range of pages that entered the cache on another node; it only takes a
 * spinlock and queues work, nothing else on the insertion path. A worker
 * then migrates the folios of each queued range: allocate on the target
 * node, copy, replace the page-cache entry (which moves the memcg charge),
 * add the new folio to the LRU. Only clean, uptodate, unmapped, unpinned
 * folios not under writeback, with no private data that cannot be
 * released, are moved (large folios whole, from 6.2: compat.h); everything
 * else is skipped and counted by reason.
 * File contents never change: the folio is locked from the checks through
 * the replacement, and writers, truncation and faults all take that lock.
 *
 * A dataset larger than the target node must not evict itself there: the
 * steering allocation does no reclaim but wakes the node's kswapd, which
 * takes the oldest pages of the node, other files' first and then the
 * dataset's own. A second probe, on mm_filemap_delete_from_page_cache, sees
 * reclaim (kswapd or direct reclaim, not truncation or drop_caches) take a
 * dataset page from its target node; steering of that dataset then pauses
 * for TANDEM_FULL_BACKOFF (skip_target_full), so the rest of the dataset
 * stays where the kernel put it, in DRAM, and steering tries again after.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/mm_inline.h>
#include <linux/moduleparam.h>
#include <linux/page_idle.h>
#include <linux/pagemap.h>
#include <linux/pagevec.h>
#include <linux/sched.h>
#include <linux/swap.h>
#include <linux/rhashtable.h>
#include <linux/tracepoint.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "tandem.h"

#define TANDEM_RETRY_DELAY	(HZ / 50)
#define TANDEM_MAX_RETRIES	200
#define TANDEM_INSERT_DELAY	2	/* jiffies: batch insertion bursts */
#define TANDEM_FULL_BACKOFF	HZ	/* pause after the target reclaimed the dataset */

/*
 * Registered files by inode, for the page-cache probes: a resizable hash
 * (rhltable: one inode may be in several datasets), so a lookup stays O(1)
 * at millions of files; a fixed table of 1024 buckets made every page-cache
 * insert on the node walk files/1024 entries.
 */
static const struct rhashtable_params tandem_inode_params = {
	.key_len = sizeof(struct inode *),
	.key_offset = offsetof(struct tandem_file, inode),
	.head_offset = offsetof(struct tandem_file, hash),
	.automatic_shrinking = true,
};
static struct rhltable tandem_inode_hash;
static DEFINE_SPINLOCK(tandem_steer_lock);
static LIST_HEAD(tandem_steer_ready);	/* files with a range to steer now */
static LIST_HEAD(tandem_steer_later);	/* files waiting for locked folios */
static struct workqueue_struct *tandem_wq;
static struct delayed_work tandem_steer_work;
static struct tracepoint *tandem_tp_add, *tandem_tp_del;
static bool tandem_steer_stopping;

/* token bucket of the migration rate cap, worker only */
static u64 tandem_tokens;
static unsigned long tandem_tokens_at;

struct workqueue_struct *tandem_workqueue(void)
{
	return tandem_wq;
}

int tandem_dataset_target_node(struct tandem_dataset *ds)
{
	int node = READ_ONCE(ds->node);

	return node >= 0 ? node : READ_ONCE(tandem.cxl_node);
}

static struct tandem_file *tandem_file_lookup_rcu(struct inode *inode)
{
	struct rhlist_head *l;

	l = rhltable_lookup(&tandem_inode_hash, &inode, tandem_inode_params);
	return l ? container_of(l, struct tandem_file, hash) : NULL;
}

/* 0 or -errno (-ENOMEM: the table could not grow); atomic context is fine */
int tandem_steer_file_add(struct tandem_file *f)
{
	lockdep_assert_held(&tandem.lock);
	return rhltable_insert(&tandem_inode_hash, &f->hash, tandem_inode_params);
}

/* Unregister f from steering; its queue reference is dropped (never the last). */
void tandem_steer_file_del(struct tandem_file *f)
{
	bool was_queued;

	lockdep_assert_held(&tandem.lock);
	rhltable_remove(&tandem_inode_hash, &f->hash, tandem_inode_params);
	spin_lock_irq(&tandem_steer_lock);
	WRITE_ONCE(f->dead, true);
	was_queued = f->queued;
	if (was_queued) {
		list_del_init(&f->work);
		f->queued = false;
	}
	spin_unlock_irq(&tandem_steer_lock);
	if (was_queued) {
		atomic_dec(&f->ds->steer_queued);
		/* the registry still holds its reference */
		WARN_ON(refcount_dec_and_test(&f->ref));
	}
}

/* Add [start, end] to f's pending range and queue f; atomic context is fine. */
static void __tandem_steer_queue(struct tandem_file *f, pgoff_t start, pgoff_t end,
				 struct list_head *list)
{
	unsigned long flags;

	spin_lock_irqsave(&tandem_steer_lock, flags);
	if (f->dead || tandem_steer_stopping) {
		spin_unlock_irqrestore(&tandem_steer_lock, flags);
		return;
	}
	if (f->pend_start > f->pend_end) {
		f->pend_start = start;
		f->pend_end = end;
	} else {
		f->pend_start = min(f->pend_start, start);
		f->pend_end = max(f->pend_end, end);
	}
	if (!f->queued) {
		f->queued = true;
		refcount_inc(&f->ref);
		list_add_tail(&f->work, list);
		/* counted before the worker can take it: never below zero */
		atomic_inc(&f->ds->steer_queued);
	}
	spin_unlock_irqrestore(&tandem_steer_lock, flags);
}

/* Tracepoint probe: a folio entered the page cache (locked, not yet read). */
static void tandem_probe_add(void *data, struct folio *folio)
{
	struct address_space *mapping = folio->mapping;
	struct tandem_file *f;
	int node;

	if (!READ_ONCE(tandem.steer) || !mapping)
		return;
	rcu_read_lock();
	f = tandem_file_lookup_rcu(mapping->host);
	if (f) {
		node = tandem_dataset_target_node(f->ds);
		if (node >= 0 && folio_nid(folio) != node) {
			__tandem_steer_queue(f, folio->index,
					     folio->index + folio_nr_pages(folio) - 1,
					     &tandem_steer_ready);
			queue_delayed_work(tandem_wq, &tandem_steer_work, TANDEM_INSERT_DELAY);
		}
	}
	rcu_read_unlock();
}

/*
 * Tracepoint probe: a folio leaves the page cache (under the mapping's
 * i_pages lock, interrupts off). Reclaim taking a dataset page from its
 * target node pauses that dataset's steering (see the top of the file).
 */
static void tandem_probe_delete(void *data, struct folio *folio)
{
	struct address_space *mapping = folio->mapping;
	struct tandem_file *f;

	if (!READ_ONCE(tandem.steer) || !mapping ||
	    !(current->flags & (PF_KSWAPD | PF_MEMALLOC)))
		return;
	rcu_read_lock();
	f = tandem_file_lookup_rcu(mapping->host);
	if (f && folio_nid(folio) == tandem_dataset_target_node(f->ds))
		WRITE_ONCE(f->ds->full_until, jiffies + TANDEM_FULL_BACKOFF);
	rcu_read_unlock();
}

/*
 * steer_batch: a folio batch's order-0 destination pages come from one call
 * of the bulk allocator instead of one allocation each (bench/steer's
 * tandem-batch; Documentation/steering.md). Read once per range.
 */
static bool steer_batch;
module_param(steer_batch, bool, 0644);
MODULE_PARM_DESC(steer_batch,
		 "Allocate steering's order-0 destination pages in bulk, one call per folio batch (bool, default: N)");

/* Outcome of one folio, a counter index or one of these. */
enum { TANDEM_MOVED = -1, TANDEM_MOVED_LARGE = -2, TANDEM_IN_PLACE = -3 };

static int tandem_folio_check(struct folio *folio, struct address_space *mapping)
{
	if (folio->mapping != mapping)
		return TANDEM_CNT_SKIP_TRUNCATED;
	if (!folio_test_uptodate(folio))
		return TANDEM_CNT_SKIP_NOT_UPTODATE;
	if (folio_test_dirty(folio))
		return TANDEM_CNT_SKIP_DIRTY;
	if (folio_test_writeback(folio))
		return TANDEM_CNT_SKIP_WRITEBACK;
	if (folio_mapped(folio))
		return TANDEM_CNT_SKIP_MAPPED;
	if (folio_maybe_dma_pinned(folio))
		return TANDEM_CNT_SKIP_PINNED;
	if (folio_has_private(folio) && !filemap_release_folio(folio, 0))
		return TANDEM_CNT_SKIP_PRIVATE;
	return 0;
}

/*
 * The flags the kernel's own migration carries to the new folio
 * (folio_migrate_flags(), mm/migrate.c) that a clean, unmapped page-cache
 * folio can have: reclaim's view of it (referenced, active, workingset),
 * the filesystem's (checked, mappedtodisk), idle-page tracking (young,
 * idle) and the readahead marker, without which the next read of this
 * folio would not start async readahead. Not copied: dirty and writeback
 * (never steered), unevictable (folio_add_lru() decides it again from the
 * mapping), the NUMA-balancing cpupid (for mapped pages), memcg (moved by
 * the page-cache replacement). Unlike migration, the old folio stays on
 * its LRU list until it is freed, so its own flags are left as they are.
 */
/*
 * Whether reclaim sees folio (locked, on an LRU list) as active. The classic
 * LRU keeps PG_active; MGLRU (CONFIG_LRU_GEN, on by default in Debian's
 * 6.12) keeps a generation instead and turns the two youngest into
 * PG_active when migration isolates the folio (lru_gen_del_folio()).
 * Steering does not isolate (folio_isolate_lru() is not exported), so it
 * asks the same question here. folio_lruvec() is not usable by a module
 * (root_mem_cgroup is not exported): a folio without a memcg is on its
 * node's own lruvec.
 */
static bool tandem_folio_active(struct folio *folio)
{
#ifdef CONFIG_LRU_GEN
	int gen = folio_lru_gen(folio);

	if (gen >= 0) {
		struct mem_cgroup *memcg = folio_memcg(folio);
		struct lruvec *lruvec = memcg ? &memcg->nodeinfo[folio_nid(folio)]->lruvec :
					&folio_pgdat(folio)->__lruvec;

		return lru_gen_is_active(lruvec, gen);
	}
#endif
	return folio_test_active(folio);
}

static void tandem_copy_flags(struct folio *new, struct folio *old)
{
	if (folio_test_referenced(old))
		folio_set_referenced(new);
	if (tandem_folio_active(old))
		folio_set_active(new);
	if (folio_test_workingset(old))
		folio_set_workingset(new);
	if (folio_test_checked(old))
		folio_set_checked(new);
	if (folio_test_mappedtodisk(old))
		folio_set_mappedtodisk(new);
	if (folio_test_young(old))
		folio_set_young(new);
	if (folio_test_idle(old))
		folio_set_idle(new);
	if (folio_test_readahead(old))
		folio_set_readahead(new);
}

/*
 * A folio of the same order on node, without direct reclaim: steering must
 * not push anything else out (kswapd is woken). Large folios are moved
 * whole, as the kernel's migration does; it splits one only when it cannot
 * get the large destination, with split_folio(), which is not exported to
 * modules, so a failed allocation here is counted as migrate_failed.
 */
static gfp_t tandem_steer_gfp(struct address_space *mapping)
{
	return (mapping_gfp_mask(mapping) & ~(__GFP_FS | __GFP_DIRECT_RECLAIM)) |
	       __GFP_THISNODE | __GFP_NOWARN | __GFP_NORETRY;
}

static struct folio *tandem_folio_alloc(struct address_space *mapping, int node,
					unsigned int order)
{
	return __folio_alloc_node(tandem_steer_gfp(mapping), order, node);
}

/*
 * Order-0 pages on the target node allocated ahead, in bulk (steer_batch):
 * pages[0..nr) are held, the rest NULL, as the bulk allocator wants its
 * array. Same gfp and node as tandem_folio_alloc(); the allocator prepares
 * each page as a single allocation would (init_on_alloc zeroing included),
 * and an order-0 page is a folio. What a range does not use is freed.
 */
struct tandem_spare {
	struct page *pages[PAGEVEC_SIZE];
	unsigned int nr;
	gfp_t gfp;
	int node;
};

/* Hold at least want pages (fewer when the node's free lists cannot). */
static void tandem_spare_fill(struct tandem_spare *sp, unsigned int want)
{
	want = min_t(unsigned int, want, ARRAY_SIZE(sp->pages));
	if (sp->nr < want)
		sp->nr = tandem_alloc_pages_bulk_node(sp->gfp, sp->node, want, sp->pages);
}

static struct folio *tandem_spare_take(struct tandem_spare *sp)
{
	struct page *page;

	if (!sp || !sp->nr)
		return NULL;
	page = sp->pages[--sp->nr];
	sp->pages[sp->nr] = NULL;
	return page_folio(page);
}

static void tandem_spare_drain(struct tandem_spare *sp)
{
	while (sp->nr) {
		__free_page(sp->pages[--sp->nr]);
		sp->pages[sp->nr] = NULL;
	}
}

static void tandem_folio_copy(struct folio *new, struct folio *old)
{
	long i, nr = folio_nr_pages(old);

	for (i = 0; i < nr; i++) {
		copy_highpage(folio_page(new, i), folio_page(old, i));
		if (nr > 1)
			cond_resched();
	}
}

/* Lock folio for steering; waits only for a read in flight. */
static bool tandem_folio_trylock(struct folio *folio)
{
	if (folio_trylock(folio))
		return true;
	/*
	 * Locked and not uptodate: its read is in flight (the probe fires at
	 * insertion). Waiting for it here costs no CPU, where polling again
	 * later re-walks the range; other holders of the lock are left alone
	 * and retried.
	 */
	if (folio_test_uptodate(folio))
		return false;
	folio_wait_locked(folio);
	return folio_trylock(folio);
}

/* Move one cached folio to node; see the top of the file for the rules. */
static int tandem_migrate_folio(struct folio *folio, struct address_space *mapping, int node,
				struct tandem_spare *sp)
{
	struct folio *new;
	int why;

	if (folio_nid(folio) == node)
		return TANDEM_IN_PLACE;
	if (folio_test_large(folio) && !TANDEM_STEER_LARGE)
		return TANDEM_CNT_SKIP_LARGE;
	if (!tandem_folio_trylock(folio))
		return TANDEM_CNT_SKIP_LOCKED;
	why = tandem_folio_check(folio, mapping);
	if (why)
		goto out_unlock;
	new = folio_test_large(folio) ? NULL : tandem_spare_take(sp);
	if (!new)
		new = tandem_folio_alloc(mapping, node, folio_order(folio));
	if (!new) {
		why = TANDEM_CNT_MIGRATE_FAILED;
		goto out_unlock;
	}
	tandem_folio_copy(new, folio);
	__folio_set_locked(new);
	folio_mark_uptodate(new);
	tandem_copy_flags(new, folio);
	tandem_replace_page_cache(folio, new);
	folio_add_lru(new);
	folio_unlock(new);
	folio_put(new);
	why = folio_test_large(folio) ? TANDEM_MOVED_LARGE : TANDEM_MOVED;
out_unlock:
	folio_unlock(folio);
	return why;
}

/* Spend the migration rate budget; false when the cap says wait. */
static bool tandem_rate_take(size_t bytes, unsigned long *wait)
{
	u32 kbps = READ_ONCE(tandem.steer_kbps);
	unsigned long now = jiffies;
	u64 rate, burst;

	if (!kbps)
		return true;
	rate = (u64)kbps * 1024;
	burst = max_t(u64, rate / 10, 64 * PAGE_SIZE);
	tandem_tokens = min(burst, tandem_tokens +
			    rate * jiffies_to_msecs(now - tandem_tokens_at) / 1000);
	tandem_tokens_at = now;
	if (tandem_tokens >= bytes) {
		tandem_tokens -= bytes;
		return true;
	}
	*wait = max(1UL, msecs_to_jiffies(div64_u64((bytes - tandem_tokens) * 1000, rate)));
	return false;
}

struct tandem_pass {
	pgoff_t retry_from;	/* first folio to retry, or ULONG_MAX */
	pgoff_t stopped_at;	/* rate cap hit here, or ULONG_MAX */
	unsigned long wait;
	bool progress;
};

static void tandem_count(struct tandem_dataset *ds, int what, struct tandem_pass *p,
			 struct folio *folio)
{
	if (what == TANDEM_MOVED || what == TANDEM_MOVED_LARGE) {
		atomic64_add(folio_nr_pages(folio), &ds->cnt[TANDEM_CNT_STEERED]);
		if (what == TANDEM_MOVED_LARGE)
			atomic64_inc(&ds->cnt[TANDEM_CNT_STEERED_LARGE]);
		p->progress = true;
		return;
	}
	if (what == TANDEM_IN_PLACE)
		return;
	atomic64_inc(&ds->cnt[what]);
	if (what == TANDEM_CNT_SKIP_LOCKED)
		p->retry_from = min(p->retry_from, folio->index);
}

/* The folios of fbatch the batch's bulk allocation is for: order 0, elsewhere. */
static unsigned int tandem_batch_want(struct folio_batch *fbatch, int node)
{
	unsigned int i, want = 0;

	for (i = 0; i < folio_batch_count(fbatch); i++)
		if (!folio_test_large(fbatch->folios[i]) && folio_nid(fbatch->folios[i]) != node)
			want++;
	return want;
}

/* Steer the cached folios of f in [start, end]. */
static void tandem_steer_range(struct tandem_file *f, pgoff_t start, pgoff_t end,
			       int node, struct tandem_pass *p)
{
	struct address_space *mapping = f->inode->i_mapping;
	struct tandem_spare spare, *sp = NULL;
	struct folio_batch fbatch;
	pgoff_t index = start;
	unsigned int i;

	if (READ_ONCE(steer_batch)) {
		memset(&spare, 0, sizeof(spare));
		spare.gfp = tandem_steer_gfp(mapping);
		spare.node = node;
		sp = &spare;
	}
	folio_batch_init(&fbatch);
	while (!READ_ONCE(tandem_steer_stopping) &&
	       filemap_get_folios(mapping, &index, end, &fbatch)) {
		if (sp && !time_before(jiffies, READ_ONCE(f->ds->full_until)))
			tandem_spare_fill(sp, tandem_batch_want(&fbatch, node));
		for (i = 0; i < folio_batch_count(&fbatch); i++) {
			struct folio *folio = fbatch.folios[i];

			if (p->stopped_at != ULONG_MAX)
				break;
			if (folio_nid(folio) == node)
				continue;
			if (time_before(jiffies, READ_ONCE(f->ds->full_until))) {
				/* paused: spends no rate budget */
				tandem_count(f->ds, TANDEM_CNT_SKIP_TARGET_FULL, p, folio);
				continue;
			}
			if (!tandem_rate_take(folio_size(folio), &p->wait)) {
				p->stopped_at = folio->index;
				break;
			}
			tandem_count(f->ds, tandem_migrate_folio(folio, mapping, node, sp), p,
				     folio);
		}
		folio_batch_release(&fbatch);
		if (p->stopped_at != ULONG_MAX)
			break;
		cond_resched();
	}
	if (sp)
		tandem_spare_drain(sp);
}

/* Take the next ready file and its range; NULL when none. */
static struct tandem_file *tandem_steer_next(pgoff_t *start, pgoff_t *end)
{
	struct tandem_file *f;

	spin_lock_irq(&tandem_steer_lock);
	f = list_first_entry_or_null(&tandem_steer_ready, struct tandem_file, work);
	if (f) {
		list_del_init(&f->work);
		f->queued = false;	/* the queue's reference is now ours */
		*start = f->pend_start;
		*end = f->pend_end;
		f->pend_start = 1;
		f->pend_end = 0;
	}
	spin_unlock_irq(&tandem_steer_lock);
	return f;
}

static void tandem_steer_file(struct tandem_file *f, pgoff_t start, pgoff_t end,
			      unsigned long *delay)
{
	struct tandem_pass p = { .retry_from = ULONG_MAX, .stopped_at = ULONG_MAX };
	int node = tandem_dataset_target_node(f->ds);

	if (READ_ONCE(f->dead) || node < 0 || start > end)
		return;
	tandem_steer_range(f, start, end, node, &p);
	if (p.progress)
		f->retries = 0;
	if (p.stopped_at != ULONG_MAX) {
		/* rate cap: the rest comes back first, after the wait */
		__tandem_steer_queue(f, p.stopped_at, end, &tandem_steer_later);
		*delay = min(*delay, p.wait);
	} else if (p.retry_from != ULONG_MAX && f->retries++ < TANDEM_MAX_RETRIES) {
		__tandem_steer_queue(f, p.retry_from, end, &tandem_steer_later);
		*delay = min_t(unsigned long, *delay, TANDEM_RETRY_DELAY);
	}
}

static void tandem_steer_workfn(struct work_struct *work)
{
	unsigned long delay = ULONG_MAX;
	struct tandem_file *f;
	pgoff_t start, end;

	while (!READ_ONCE(tandem_steer_stopping) && delay == ULONG_MAX) {
		f = tandem_steer_next(&start, &end);
		if (!f)
			break;
		tandem_steer_file(f, start, end, &delay);
		/* counters before the queue count: see tandem_ds_snap_locked() */
		smp_mb__before_atomic();
		atomic_dec(&f->ds->steer_queued);
		tandem_file_put(f);
		cond_resched();
	}
	spin_lock_irq(&tandem_steer_lock);
	list_splice_tail_init(&tandem_steer_later, &tandem_steer_ready);
	if (!list_empty(&tandem_steer_ready) && !tandem_steer_stopping)
		queue_delayed_work(tandem_wq, &tandem_steer_work,
				   delay == ULONG_MAX ? 0 : delay);
	spin_unlock_irq(&tandem_steer_lock);
}

/* A full pass over the dataset's cached pages. */
int tandem_steer_dataset(struct tandem_dataset *ds)
{
	struct tandem_file *f;
	struct rb_node *n;

	lockdep_assert_held(&tandem.lock);
	if (tandem_dataset_target_node(ds) < 0)
		return -ENODEV;
	for (n = rb_first(&ds->files); n; n = rb_next(n)) {
		f = rb_entry(n, struct tandem_file, node);
		__tandem_steer_queue(f, 0, ULONG_MAX - 1, &tandem_steer_ready);
	}
	queue_delayed_work(tandem_wq, &tandem_steer_work, 0);
	return 0;
}

static void tandem_find_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "mm_filemap_add_to_page_cache"))
		tandem_tp_add = tp;
	else if (!strcmp(tp->name, "mm_filemap_delete_from_page_cache"))
		tandem_tp_del = tp;
}

int tandem_steer_init(void)
{
	int err;

	err = rhltable_init(&tandem_inode_hash, &tandem_inode_params);
	if (err)
		return err;
	tandem_wq = alloc_workqueue("tandem", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!tandem_wq) {
		err = -ENOMEM;
		goto out_hash;
	}
	INIT_DELAYED_WORK(&tandem_steer_work, tandem_steer_workfn);
	/* the tracepoint is not exported to modules: find it by name */
	for_each_kernel_tracepoint(tandem_find_tp, NULL);
	if (!tandem_tp_add || !tandem_tp_del) {
		pr_err("tracepoint mm_filemap_%s not found\n",
		       tandem_tp_add ? "delete_from_page_cache" : "add_to_page_cache");
		err = -ENOENT;
		goto out_wq;
	}
	err = tracepoint_probe_register(tandem_tp_add, tandem_probe_add, NULL);
	if (err)
		goto out_wq;
	err = tracepoint_probe_register(tandem_tp_del, tandem_probe_delete, NULL);
	if (err)
		goto out_add;
	return 0;

out_add:
	tracepoint_probe_unregister(tandem_tp_add, tandem_probe_add, NULL);
	tracepoint_synchronize_unregister();
out_wq:
	destroy_workqueue(tandem_wq);
out_hash:
	rhltable_destroy(&tandem_inode_hash);
	return err;
}

/* Stop the probe and the worker; queued files keep their references. */
void tandem_steer_stop(void)
{
	tracepoint_probe_unregister(tandem_tp_add, tandem_probe_add, NULL);
	tracepoint_probe_unregister(tandem_tp_del, tandem_probe_delete, NULL);
	tracepoint_synchronize_unregister();
	spin_lock_irq(&tandem_steer_lock);
	WRITE_ONCE(tandem_steer_stopping, true);
	spin_unlock_irq(&tandem_steer_lock);
	cancel_delayed_work_sync(&tandem_steer_work);
}

/* After tandem_steer_stop() and the registry teardown. */
void tandem_steer_exit(void)
{
	destroy_workqueue(tandem_wq);
	rhltable_destroy(&tandem_inode_hash);	/* empty: every file was removed */
}
