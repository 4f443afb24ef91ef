// SPDX-License-Identifier: GPL-2.0
/*
 * Prefetch: read a dataset's pages into the page cache with every new folio
 * allocated on the target (CXL) node, so nothing needs migrating afterwards.
 * Pages already cached are skipped. Each batch of up to TANDEM_PF_BATCH
 * contiguous missing pages is inserted locked and read with the filesystem's
 * ->readahead under one block plug, so the reads merge; the batches are
 * paced to the bandwidth cap (prefetch_kbps, or the request's own cap).
 * One prefetch per dataset at a time; it can be cancelled, and its progress
 * is in the dataset's netlink attributes and sysfs files.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/pagemap.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "tandem.h"

#define TANDEM_PF_BATCH		256	/* pages: 1 MiB reads */
/*
 * Batches in flight at most: the prefetch never queues more than this much
 * ahead of the jobs' own reads, and "done" means read, not just submitted.
 */
#define TANDEM_PF_INFLIGHT	4

struct tandem_prefetch {
	struct work_struct work;
	struct tandem_dataset *ds;	/* holds a reference */
	struct tandem_file **files;	/* each holds a reference */
	int nfiles;
	int node;
	u32 kbps;			/* 0: follow tandem.prefetch_kbps */
	atomic_t cancel;
	wait_queue_head_t wq;		/* pacing sleeps; cancel wakes it */
	u8 state;			/* enum tandem_prefetch_state */
	atomic64_t pages_done;		/* read or found cached */
	u64 pages_total;
	u64 bytes_read;			/* submitted, for pacing */
	ktime_t start, end;
	struct folio *inflight[TANDEM_PF_INFLIGHT];	/* last folio of each batch, oldest first */
	int nr_inflight;
};

/* netlink.c's event for a prefetch that ended; READ_ONCE, set at its init */
static tandem_prefetch_done_fn tandem_pf_done;

void tandem_prefetch_set_done(tandem_prefetch_done_fn fn)
{
	WRITE_ONCE(tandem_pf_done, fn);
}

/* Wait for the oldest batch in flight to be read (its last folio unlocked). */
static void tandem_pf_wait_oldest(struct tandem_prefetch *pf)
{
	struct folio *folio = pf->inflight[0];

	folio_wait_locked(folio);
	folio_put(folio);
	memmove(pf->inflight, pf->inflight + 1, --pf->nr_inflight * sizeof(pf->inflight[0]));
}

static void tandem_pf_track(struct tandem_prefetch *pf, struct address_space *mapping,
			    pgoff_t last)
{
	struct folio *folio = tandem_filemap_get_folio(mapping, last);

	if (!folio)
		return;	/* already gone (truncated): nothing to wait for */
	if (pf->nr_inflight == TANDEM_PF_INFLIGHT)
		tandem_pf_wait_oldest(pf);
	pf->inflight[pf->nr_inflight++] = folio;
}

static bool tandem_pf_cancelled(struct tandem_prefetch *pf)
{
	return atomic_read(&pf->cancel);
}

/* Sleep until bytes_read is within the cap's budget; false if cancelled. */
static bool tandem_pf_pace(struct tandem_prefetch *pf)
{
	u32 kbps = pf->kbps ?: READ_ONCE(tandem.prefetch_kbps);
	s64 due_ns, now_ns;

	if (!kbps)
		return !tandem_pf_cancelled(pf);
	due_ns = div64_u64(pf->bytes_read * NSEC_PER_SEC, (u64)kbps * 1024);
	now_ns = ktime_to_ns(ktime_sub(ktime_get(), pf->start));
	if (due_ns > now_ns)
		wait_event_interruptible_timeout(pf->wq, tandem_pf_cancelled(pf),
						 nsecs_to_jiffies(due_ns - now_ns));
	return !tandem_pf_cancelled(pf);
}

/* Like mm/readahead.c read_pages(): the folios in rac are locked and cached. */
static void tandem_pf_read(struct readahead_control *rac)
{
	const struct address_space_operations *aops = rac->mapping->a_ops;
	struct folio *folio;
	struct blk_plug plug;

	blk_start_plug(&plug);
	if (aops->readahead) {
		aops->readahead(rac);
		/* folios the filesystem did not take stay cached, not uptodate */
		while ((folio = readahead_folio(rac)) != NULL) {
			folio_get(folio);
			folio_unlock(folio);
			folio_put(folio);
		}
	} else {
		while ((folio = readahead_folio(rac)) != NULL)
			aops->read_folio(rac->file, folio);
	}
	blk_finish_plug(&plug);
}

static bool tandem_pf_cached(struct address_space *mapping, pgoff_t index)
{
	void *entry;

	rcu_read_lock();
	entry = xa_load(&mapping->i_pages, index);
	rcu_read_unlock();
	return entry && !xa_is_value(entry);
}

/*
 * Allocate on the target node and insert locked up to max pages from
 * index, stopping at a cached one. Returns how many were inserted; *err
 * says why it stopped short (-ENOMEM, -EEXIST, ...), 0 when it did not.
 */
static unsigned long tandem_pf_insert(struct tandem_prefetch *pf,
				      struct address_space *mapping, pgoff_t index,
				      unsigned long max, int *err)
{
	gfp_t gfp = (readahead_gfp_mask(mapping) & ~__GFP_DIRECT_RECLAIM) | __GFP_THISNODE;
	unsigned int nofs = memalloc_nofs_save();	/* as page_cache_ra_unbounded(): folios are locked */
	struct page *page;
	unsigned long i;

	*err = 0;
	for (i = 0; i < max; i++) {
		if (i && tandem_pf_cached(mapping, index + i))
			break;
		page = alloc_pages_node(pf->node, gfp, 0);
		if (!page) {
			*err = -ENOMEM;
			break;
		}
		*err = filemap_add_folio(mapping, page_folio(page), index + i, gfp);
		if (*err) {
			put_page(page);
			break;
		}
	}
	memalloc_nofs_restore(nofs);
	return i;
}

/*
 * Insert and read up to max missing pages from index. Returns the pages
 * consumed (read or skipped as cached), 0 past the end of the file (it was
 * truncated), or -ENOMEM when the node is full. Holds the invalidate lock
 * like the kernel's readahead, so truncation and hole punching wait.
 */
static long tandem_pf_batch(struct tandem_prefetch *pf, struct file *file,
			    struct file_ra_state *ra, pgoff_t index, unsigned long max)
{
	struct address_space *mapping = file->f_mapping;
	DEFINE_READAHEAD(rac, file, ra, mapping, index);
	unsigned long n, cached = 0;
	pgoff_t end;
	int err;
	long ret;

	filemap_invalidate_lock_shared(mapping);
	end = DIV_ROUND_UP(i_size_read(mapping->host), PAGE_SIZE);
	if (index >= end) {
		ret = 0;
		goto out_unlock;
	}
	max = min_t(unsigned long, max, end - index);
	while (cached < max && tandem_pf_cached(mapping, index + cached))
		cached++;
	if (cached) {
		atomic64_add(cached, &pf->ds->cnt[TANDEM_CNT_PREFETCH_CACHED]);
		ret = cached;
		goto out_unlock;
	}
	n = tandem_pf_insert(pf, mapping, index, max, &err);
	/*
	 * -EEXIST: a reader inserted the page since tandem_pf_cached() looked
	 * (jobs read the files the prefetch reads): it is cached, go on after
	 * it. Only a failed allocation or insertion ends the prefetch.
	 */
	if (!n && err == -EEXIST) {
		atomic64_inc(&pf->ds->cnt[TANDEM_CNT_PREFETCH_CACHED]);
		ret = 1;
		goto out_unlock;
	}
	if (!n) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	rac._nr_pages = n;
	tandem_pf_read(&rac);
	tandem_pf_track(pf, mapping, index + n - 1);
	atomic64_add(n, &pf->ds->cnt[TANDEM_CNT_PREFETCHED]);
	pf->bytes_read += (u64)n << PAGE_SHIFT;
	ret = n;
out_unlock:
	filemap_invalidate_unlock_shared(mapping);
	return ret;
}

static int tandem_pf_file(struct tandem_prefetch *pf, struct tandem_file *f)
{
	struct file_ra_state ra;
	struct file *file;
	pgoff_t index = 0, nr;
	long done;
	int err = 0;

	file = dentry_open(&f->path, O_RDONLY | O_LARGEFILE | O_NOATIME, current_cred());
	if (IS_ERR(file))
		return 0;	/* unreadable now: nothing to prefetch */
	file_ra_state_init(&ra, file->f_mapping);
	nr = DIV_ROUND_UP(i_size_read(file_inode(file)), PAGE_SIZE);
	while (index < nr && tandem_pf_pace(pf)) {
		done = tandem_pf_batch(pf, file, &ra, index,
				       min_t(unsigned long, nr - index, TANDEM_PF_BATCH));
		if (done <= 0) {
			err = done;
			break;
		}
		index += done;
		atomic64_add(done, &pf->pages_done);
		cond_resched();
	}
	fput(file);
	return err;
}

static void tandem_pf_info(struct tandem_prefetch *pf, struct tandem_prefetch_info *info)
{
	/* pairs with the release in tandem_pf_workfn(): end time after state */
	info->state = smp_load_acquire(&pf->state);
	info->pages_done = atomic64_read(&pf->pages_done);
	info->pages_total = pf->pages_total;
	info->elapsed_ns = ktime_to_ns(ktime_sub(info->state == TANDEM_PREFETCH_RUNNING ?
						 ktime_get() : pf->end, pf->start));
}

static void tandem_pf_workfn(struct work_struct *work)
{
	struct tandem_prefetch *pf = container_of(work, struct tandem_prefetch, work);
	struct tandem_prefetch_info info;
	tandem_prefetch_done_fn done;
	int i, err = 0;

	for (i = 0; i < pf->nfiles && !err && !tandem_pf_cancelled(pf); i++)
		err = tandem_pf_file(pf, pf->files[i]);
	while (pf->nr_inflight)
		tandem_pf_wait_oldest(pf);
	pf->end = ktime_get();
	if (err)
		pr_warn("prefetch of dataset %u stopped: no memory on node %d\n",
			pf->ds->id, pf->node);
	/* readers of state look at the counters and times after it */
	smp_store_release(&pf->state, err ? TANDEM_PREFETCH_FAILED :
			  tandem_pf_cancelled(pf) ? TANDEM_PREFETCH_CANCELLED :
			  TANDEM_PREFETCH_DONE);
	done = READ_ONCE(tandem_pf_done);
	if (done) {
		tandem_pf_info(pf, &info);
		done(pf->ds->id, &info);
	}
}

static void tandem_pf_free(struct tandem_prefetch *pf)
{
	int i;

	for (i = 0; i < pf->nfiles; i++)
		tandem_file_put(pf->files[i]);
	kvfree(pf->files);
	tandem_dataset_put(pf->ds);
	kfree(pf);
	atomic64_dec(&tandem_live_objects);
}

/*
 * Start prefetching files (n references, taken over; freed on error too)
 * into the dataset's target node. -EBUSY while one runs, -ENODEV without a
 * target node, -ESHUTDOWN while the module unloads.
 */
int tandem_prefetch_start(struct tandem_dataset *ds, struct tandem_file **files, int n,
			  u32 kbps)
{
	struct tandem_prefetch *pf, *old = ds->prefetch;
	int i, node = tandem_dataset_target_node(ds), err;

	lockdep_assert_held(&tandem.lock);
	err = tandem.exiting ? -ESHUTDOWN : node < 0 ? -ENODEV :
	      old && READ_ONCE(old->state) == TANDEM_PREFETCH_RUNNING ? -EBUSY : 0;
	pf = err ? NULL : kzalloc(sizeof(*pf), GFP_KERNEL);
	if (!pf) {
		for (i = 0; i < n; i++)
			tandem_file_put(files[i]);
		kvfree(files);
		return err ?: -ENOMEM;
	}
	atomic64_inc(&tandem_live_objects);
	if (old) {
		/* finished: wait for its last lines, then drop it */
		flush_work(&old->work);
		tandem_pf_free(old);
	}
	INIT_WORK(&pf->work, tandem_pf_workfn);
	init_waitqueue_head(&pf->wq);
	tandem_dataset_get(ds);
	pf->ds = ds;
	pf->files = files;
	pf->nfiles = n;
	pf->node = node;
	pf->kbps = kbps;
	for (i = 0; i < n; i++)
		pf->pages_total += DIV_ROUND_UP(i_size_read(files[i]->inode), PAGE_SIZE);
	pf->state = TANDEM_PREFETCH_RUNNING;
	pf->start = ktime_get();
	ds->prefetch = pf;
	queue_work(tandem_workqueue(), &pf->work);
	return 0;
}

static void tandem_pf_cancel(struct tandem_prefetch *pf)
{
	atomic_set(&pf->cancel, 1);
	wake_up_all(&pf->wq);
}

int tandem_prefetch_cancel(struct tandem_dataset *ds)
{
	lockdep_assert_held(&tandem.lock);
	if (!ds->prefetch || READ_ONCE(ds->prefetch->state) != TANDEM_PREFETCH_RUNNING)
		return -ENOENT;
	tandem_pf_cancel(ds->prefetch);
	return 0;
}

void tandem_prefetch_info(struct tandem_dataset *ds, struct tandem_prefetch_info *info)
{
	struct tandem_prefetch *pf = ds->prefetch;

	lockdep_assert_held(&tandem.lock);
	memset(info, 0, sizeof(*info));
	if (pf)
		tandem_pf_info(pf, info);
}

/*
 * The dataset is deleted (ds->dead): detach its prefetch under the lock, so
 * that no reader (sysfs, netlink) can reach it any more, then stop it and
 * free it outside the lock.
 */
void tandem_prefetch_release(struct tandem_dataset *ds)
{
	struct tandem_prefetch *pf;

	mutex_lock(&tandem.lock);
	pf = ds->prefetch;
	ds->prefetch = NULL;
	if (pf)
		tandem_pf_cancel(pf);
	mutex_unlock(&tandem.lock);
	if (!pf)
		return;
	flush_work(&pf->work);
	tandem_pf_free(pf);
}

/* Module unload: cancel every prefetch and wait for them. */
void tandem_prefetch_stop_all(void)
{
	struct tandem_dataset *ds;
	unsigned long id;

	mutex_lock(&tandem.lock);
	xa_for_each(&tandem.datasets, id, ds)
		if (ds->prefetch)
			tandem_pf_cancel(ds->prefetch);
	xa_for_each(&tandem.datasets, id, ds)
		if (ds->prefetch)
			flush_work(&ds->prefetch->work);
	mutex_unlock(&tandem.lock);
}
