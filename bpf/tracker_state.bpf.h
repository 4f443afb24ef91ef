/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tracker's page state: one 64-bit word per registered page of a
 * dataset file, in the array `pages` (layout in tracker.h), at the file's
 * fileinfo.pbase plus the page's index. Included by tracker.bpf.c after its
 * maps and counters.
 *
 * Invariants the programs keep:
 *  - a word holds a state (TANDEM_TRK_PG_CACHED) exactly while its page is
 *    in the page cache, as far as the insert and evict events tell: the
 *    insert of a folio sets the word of each of its pages with an atomic
 *    swap, its eviction clears them the same way, so each page keeps its
 *    own loader, fresh bit and last mapper whatever the kernel does to the
 *    folio (a split needs nothing: there are no extents to carve);
 *  - meta.pages_tracked is the number of words set;
 *  - fileinfo.fresh is the number of the file's words with the fresh bit,
 *    exactly once the events are over: every change of a fresh bit is an
 *    atomic operation that returns the old word (swap, fetch-and-and), and
 *    the count moves by what it changed; up before bits are set, down
 *    after they are cleared, so that it is never below the bits meanwhile.
 * A page with no word (past the file's npages: the file grew after it was
 * registered, or the array was full) gets no state: insert_failed, and the
 * file is no longer one job's (fileinfo.loader).
 */
#ifndef TANDEM_TRACKER_STATE_BPF_H
#define TANDEM_TRACKER_STATE_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 131072);	/* set by the loader (--max-pages) */
	__type(key, __u32);
	__type(value, __u64);
} pages SEC(".maps");

/*
 * fileinfo (the map is in tracker_files.bpf.h) keeps per file whether one
 * job loaded every cached page of it (`loader`): then a read of the file by
 * any other job is all shared hits of that job, and is counted without
 * walking its pages (tracker_access.bpf.h). It is set at the file's first
 * tracked insert when that folio is all the file has in the cache (so no
 * page was cached before tracking began), and becomes MIXED for good when
 * another job inserts a page, or a cached page is left without a state (no
 * word for it). `evicts` counts the file's evictions, so that a read whose
 * pages may have left the cache before it is counted (which the walk counts
 * as hits of no job) is walked. `fresh` counts the file's fresh pages, so
 * that a re-read by the loader itself, once nothing is fresh, is all own
 * hits without the walk too.
 */
#define LOADER_UNSET	0		/* no tracked insert yet */
#define LOADER_MIXED	0xffffffffU	/* otherwise: the loading job + 1 */

#define PG_CACHED	TANDEM_TRK_PG_CACHED
#define PG_FRESH	TANDEM_TRK_PG_FRESH
#define PG_MAPPER	(TANDEM_TRK_PG_MAPPER_MASK << TANDEM_TRK_PG_MAPPER_SHIFT)

static __always_inline __u32 popcount64(__u64 x)
{
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (x * 0x0101010101010101ULL) >> 56;
}

/* a word's bit 62 (fresh) and 63 (cached) as 0 or 1 */
#define PG_IS_FRESH(w)	(((w) >> 62) & 1)
#define PG_IS_CACHED(w)	((w) >> 63)

/* the word of page IDX of the file FI; NULL when the file has none for it */
static __always_inline __u64 *page_word(const struct tandem_trk_fileinfo *fi, __u64 idx)
{
	__u32 key;

	if (idx >= fi->npages)
		return NULL;
	key = fi->pbase + (__u32)idx;
	return bpf_map_lookup_elem(&pages, &key);
}

static __always_inline void file_mixed_fi(struct tandem_trk_fileinfo *fi)
{
	if (fi->loader != LOADER_MIXED)
		fi->loader = LOADER_MIXED;
}

/*
 * A folio of NR pages of MAPPING inserted by JOB: is the file still loaded
 * by one job? At the first insert, only when the folio is all the file has
 * in the cache: the tracepoint fires with the folio locked and counted in
 * nrpages, so any other page there was cached before, or at the same time.
 */
static __always_inline void file_loader_note(struct tandem_trk_fileinfo *fi, __u32 job,
					     struct address_space *mapping, __u32 nr)
{
	__u32 cur, want = job + 1;

	cur = fi->loader;
	if (cur == want || cur == LOADER_MIXED)
		return;
	if (cur == LOADER_UNSET && want != LOADER_UNSET && want != LOADER_MIXED &&
	    mapping->nrpages == nr) {
		cur = __sync_val_compare_and_swap(&fi->loader, LOADER_UNSET, want);
		if (cur == LOADER_UNSET || cur == want)
			return;
	}
	fi->loader = LOADER_MIXED;
}

/* ---- insert and evict: a word per page ---- */

/* a dataset folio: its file, first page and size */
struct folio_at {
	__u64 index;
	__u32 file_id;
	__u32 dataset;
	__u32 nr;
	__u32 order;		/* log2 of nr, for the words */
	struct tandem_trk_fileinfo *fi;
};

static __always_inline bool folio_target(struct folio *folio, struct folio_at *fa)
{
	struct tandem_trk_file fv, *f = &fv;

	if (!lookup_file_btf(folio->mapping, f))
		return false;
	fa->index = BPF_CORE_READ(folio, index);
	fa->nr = tandem_folio_nr_pages(folio);
	if (fa->nr > MAX_FOLIO_PAGES)
		fa->nr = MAX_FOLIO_PAGES;
	if ((fa->index + fa->nr) >> 32) {
		GLOBAL_INC(index_too_big, fa->nr);
		return false;
	}
	/* a folio is 2^k pages: k is the count of ones below that bit */
	fa->order = popcount64(fa->nr - 1);
	fa->file_id = f->file_id;
	fa->dataset = f->dataset;
	/* an array index below max_files + 1: always there */
	fa->fi = bpf_map_lookup_elem(&fileinfo, &fa->file_id);
	return fa->fi != NULL;
}

/* pages of the folio [INDEX, INDEX + NR) that have a word: the first N */
static __always_inline __u32 pages_with_word(const struct tandem_trk_fileinfo *fi,
					     __u64 index, __u32 nr)
{
	__u64 np = fi->npages;

	if (index >= np)
		return 0;
	return np - index < nr ? np - index : nr;
}

/*
 * Loop contexts: no branch may depend on a counter kept in them (see
 * access_ctx in tracker_access.bpf.h), so the counters are only added to,
 * and used unconditionally after the loop.
 */
struct insert_ctx {
	struct tandem_trk_fileinfo *fi;
	__u64 index;
	__u64 word;		/* the new pages' state */
	__u32 stale;		/* words that were still set: pages that left unseen */
	__u32 stale_fresh;	/* of them, fresh */
};

static __always_inline void insert_page(struct insert_ctx *ic, __u64 idx)
{
	__u64 *w = page_word(ic->fi, idx), old;

	if (!w)
		return;
	old = __sync_lock_test_and_set(w, ic->word);
	ic->stale += PG_IS_CACHED(old);
	ic->stale_fresh += PG_IS_FRESH(old);
}

static long insert_step(__u32 i, void *data)
{
	struct insert_ctx *ic = data;

	insert_page(ic, ic->index + i);
	return 0;
}

static __always_inline int on_insert(struct folio *folio)
{
	struct folio_at fa = {};
	struct insert_ctx ic = {};
	struct tandem_trk_counts *c;
	__u32 job, n;

	if (!folio_target(folio, &fa))
		return 0;
	/* readahead runs in the reader's context: its job is the loader */
	job = current_job();
	c = counts_of(job, fa.dataset);
	if (c)
		__sync_fetch_and_add(&c->miss, fa.nr);
	file_loader_note(fa.fi, job, folio->mapping, fa.nr);
	n = pages_with_word(fa.fi, fa.index, fa.nr);
	if (n < fa.nr) {
		/* a cached page without a state: the file is no longer one job's */
		file_mixed_fi(fa.fi);
		GLOBAL_INC(insert_failed, fa.nr - n);
	}
	ic.fi = fa.fi;
	ic.index = fa.index;
	ic.word = PG_CACHED | PG_FRESH |
		  ((__u64)(fa.order & TANDEM_TRK_PG_ORDER_MASK) << TANDEM_TRK_PG_ORDER_SHIFT) | job;
	/*
	 * the new pages are fresh: counted before their bits are set, so that
	 * the count is never below the bits (read_one_loader() trusts a 0);
	 * a stale word replaced was counted when it was set
	 */
	__sync_fetch_and_add(&fa.fi->fresh, n);
	if (n == 1)
		insert_page(&ic, fa.index);
	else
		bpf_loop(n, insert_step, &ic, 0);
	__sync_fetch_and_add(&fa.fi->fresh, -(__s32)ic.stale_fresh);
	META_ADD(pages_tracked, n - ic.stale);
	GLOBAL_INC(inserted, n);
	GLOBAL_INC(removed, ic.stale);
	return 0;
}

/* N pages loaded by LOADER left the cache */
static __always_inline void evicted(__u32 loader, __u32 dataset, __u32 n)
{
	struct tandem_trk_counts *c = counts_of(loader, dataset);

	if (c)
		__sync_fetch_and_add(&c->evict, n);
}

#define NO_LOADER	0xffffffffU

struct evict_ctx {
	struct tandem_trk_fileinfo *fi;
	__u64 index;
	__u32 dataset;
	__u32 loader;		/* loader of the current run; NO_LOADER before the first */
	__u32 run;		/* its length: one counter update per run */
	__u32 removed;
	__u32 fresh;
	__u32 unknown;		/* pages with a word but no state */
};

static __always_inline void evict_page(struct evict_ctx *ec, __u64 idx)
{
	__u64 *w = page_word(ec->fi, idx), old;
	__u32 loader, cached;

	old = w ? __sync_lock_test_and_set(w, 0) : 0;
	cached = PG_IS_CACHED(old);
	/* no state: cached before tracking began, or it got none; job 0's */
	loader = cached ? (__u32)old : 0;
	if (loader != ec->loader) {
		if (ec->loader != NO_LOADER)
			evicted(ec->loader, ec->dataset, ec->run);
		ec->loader = loader;
		ec->run = 0;
	}
	ec->run++;
	ec->removed += cached;
	ec->unknown += 1 - cached;
	ec->fresh += PG_IS_FRESH(old);
}

static long evict_step(__u32 i, void *data)
{
	struct evict_ctx *ec = data;

	evict_page(ec, ec->index + i);
	return 0;
}

static __always_inline int on_evict(struct folio *folio)
{
	struct folio_at fa = {};
	struct evict_ctx ec = { .loader = NO_LOADER };
	__u32 n;

	if (!folio_target(folio, &fa))
		return 0;
	/* a read pending may lose pages (read_one_loader) */
	__sync_fetch_and_add(&fa.fi->evicts, 1);
	n = pages_with_word(fa.fi, fa.index, fa.nr);
	ec.fi = fa.fi;
	ec.index = fa.index;
	ec.dataset = fa.dataset;
	if (n == 1)
		evict_page(&ec, fa.index);
	else
		bpf_loop(n, evict_step, &ec, 0);
	if (ec.loader != NO_LOADER)
		evicted(ec.loader, ec.dataset, ec.run);
	__sync_fetch_and_add(&fa.fi->fresh, -(__s32)ec.fresh);
	META_ADD(pages_tracked, -(__s64)ec.removed);
	GLOBAL_INC(removed, ec.removed);
	/* pages with no word at all: job 0's too (n is known before the loop) */
	if (n < fa.nr)
		evicted(0, fa.dataset, fa.nr - n);
	GLOBAL_INC(evict_unknown, fa.nr - n + ec.unknown);
	return 0;
}

#endif
