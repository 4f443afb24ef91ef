/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tracker's page state: extents (struct tandem_trk_page in tracker.h),
 * one per folio as the folio entered the page cache, so that inserting,
 * evicting or reading a large folio costs one map operation, not one per
 * 4 KiB page. Included by tracker.bpf.c after its maps and counters.
 *
 * Invariants the programs keep:
 *  - an extent is an aligned block of 2^k pages, 2^k <= TANDEM_TRK_EXTENT_MAX,
 *    keyed by its first page; the extents of a file do not overlap, and
 *    every page of an extent is in the page cache;
 *  - its pages share one loader and one last mapper; which of them are
 *    fresh (inserted by the loader and not yet read by it) is a bitmap;
 *  - meta.pages_tracked is the sum of the extents' sizes, never above
 *    max_pages: a folio that would pass it gets no state (insert_failed),
 *    instead of an old state being dropped.
 * Page-cache folios are naturally aligned, so the folio holding page i,
 * when it has a state, is the extent at i rounded down to its size; which
 * sizes a file has is kept per file (fileinfo.orders) so that a lookup by
 * page tries only those. When the kernel splits a cached folio (truncation
 * inside it, migration that falls back to small folios) no event says so;
 * the first eviction of a part of it splits its extent in aligned halves
 * down to that part ("carving"); so does a mapping of part of an extent by
 * a process other than its last mapper.
 */
#ifndef TANDEM_TRACKER_STATE_BPF_H
#define TANDEM_TRACKER_STATE_BPF_H

#define EXT_WORDS	(TANDEM_TRK_EXTENT_MAX / 64)
#define EXT_ORDERS	10		/* sizes 2^0 .. 2^9 pages */
#define ALL_ORDERS	((1U << EXT_ORDERS) - 1)

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	/* entries are made as pages are cached: memory follows use */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 131072);	/* set by the loader (--max-pages) */
	__type(key, __u64);
	__type(value, struct tandem_trk_page);
} pages SEC(".maps");

/*
 * per file_id: the extent sizes the file has had (a lookup hint). Sizes are
 * powers of two, so the OR of the sizes is the mask: bit k, size 2^k.
 *
 * And whether one job loaded every cached page of the file (`loader`): then
 * a read of the file by any other job is all shared hits of that job, and
 * is counted without walking its extents (tracker_access.bpf.h). It is set
 * at the file's first tracked insert when that folio is all the file has
 * in the cache (so no page was cached before tracking began), and becomes
 * MIXED for good when another job inserts a page, or a cached page is left
 * without a state (no budget, a full map, a misaligned folio). `evicts`
 * counts the file's evictions, so that a read whose pages may have left
 * the cache before it is counted (which the walk counts as hits of no job)
 * is walked. `fresh_ext` counts the file's extents that have fresh pages, so
 * that a re-read by the loader itself, once nothing is fresh, is all own
 * hits without the walk too.
 */
#define LOADER_UNSET	0		/* no tracked insert yet */
#define LOADER_MIXED	0xffffffffU	/* otherwise: the loading job + 1 */
#define FRESH_UNKNOWN	0x80000000U	/* fresh_ext after a carve; adds leave it nonzero */

/* the map, `fileinfo`, and its entry are in tracker.bpf.c and tracker.h */

/* the page budget, --max-pages; set by the loader */
const volatile __u32 max_pages = 131072;

static __always_inline __u32 popcount64(__u64 x)
{
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (x * 0x0101010101010101ULL) >> 56;
}

/* the largest power of two <= X (0 for 0), without a branch */
static __always_inline __u64 floor_pow2(__u64 x)
{
	x |= x >> 1;
	x |= x >> 2;
	x |= x >> 4;
	x |= x >> 8;
	x |= x >> 16;
	x |= x >> 32;
	return x - (x >> 1);
}

/* extent sizes FILE_ID has had; all of them when unknown */
static __always_inline __u32 file_orders(__u32 file_id)
{
	struct tandem_trk_fileinfo *fi = bpf_map_lookup_elem(&fileinfo, &file_id);

	return fi ? fi->orders : ALL_ORDERS;
}

static __always_inline void fi_orders_add(struct tandem_trk_fileinfo *fi, __u32 orders)
{
	if ((fi->orders & orders) != orders)
		__sync_fetch_and_or(&fi->orders, orders);
}

static __always_inline void file_orders_add(__u32 file_id, __u32 orders)
{
	struct tandem_trk_fileinfo *fi = bpf_map_lookup_elem(&fileinfo, &file_id);

	if (fi)
		fi_orders_add(fi, orders);
}

static __always_inline void fresh_ext_add(__u32 file_id, __s32 d)
{
	struct tandem_trk_fileinfo *fi = bpf_map_lookup_elem(&fileinfo, &file_id);

	if (fi)
		__sync_fetch_and_add(&fi->fresh_ext, d);
}

/*
 * fileinfo.fresh_ext is exact: an extent counts once from when it is made
 * with fresh pages until whoever takes its nfresh from > 0 to <= 0 first:
 * the access that clears its last fresh bits (the fetch-and-add that
 * returns exactly what it subtracts: tracker_access.bpf.h), or this swap,
 * done before an extent leaves the map (evicted, carved, replaced as
 * stale). An access holding a pointer to an extent that left finds 0 there
 * (or less: a wrapped count, never swapped again) and takes nothing.
 * Returns 1 when it took a count.
 */
static __always_inline __u32 ext_fresh_take(struct tandem_trk_page *e)
{
	__s64 old = (__s32)__sync_lock_test_and_set(&e->nfresh, 0);
	__u64 v = old;

	/* old > 0, without a branch (see count_extent) */
	barrier_var(v);
	return (0 - v) >> 63;
}

static __always_inline void file_mixed(__u32 file_id)
{
	struct tandem_trk_fileinfo *fi = bpf_map_lookup_elem(&fileinfo, &file_id);

	if (fi && fi->loader != LOADER_MIXED)
		fi->loader = LOADER_MIXED;
}

/*
 * A folio of NR pages of MAPPING inserted by JOB: is the file still loaded
 * by one job? At the first insert, only when the folio is all the file has
 * in the cache: the tracepoint fires with the folio locked and counted in
 * nrpages, so any other page there was cached before, or at the same time.
 */
static __always_inline void file_loader_note(__u32 file_id, __u32 job,
					     struct address_space *mapping, __u32 nr)
{
	struct tandem_trk_fileinfo *fi = bpf_map_lookup_elem(&fileinfo, &file_id);
	__u32 cur, want = job + 1;

	if (!fi)
		return;
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

/*
 * After a carve: the sizes made; and the file's count of extents with fresh
 * pages is given up (FRESH_UNKNOWN, for good: its loader's re-reads are
 * walked). Keeping it exact through carving costs branches in the access
 * loop's callback, which is at the verifier's limit; with the one lookup
 * file_orders_add() makes, this costs none. Small folios (6.1, 6.12 on
 * ext4) are never carved.
 */
static __always_inline void file_carved(__u32 file_id, __u32 orders)
{
	struct tandem_trk_fileinfo *fi = bpf_map_lookup_elem(&fileinfo, &file_id);

	if (!fi)
		return;
	fi->fresh_ext = FRESH_UNKNOWN;
	fi_orders_add(fi, orders);
}

/* ---- the budget: meta.pages_tracked <= max_pages ---- */

static __always_inline bool budget_take(__u32 n)
{
	__u32 zero = 0;
	struct tandem_trk_meta *m = bpf_map_lookup_elem(&meta, &zero);
	__u64 old;

	if (!m)
		return false;
	old = __sync_fetch_and_add(&m->pages_tracked, n);
	if (old + n <= max_pages)
		return true;
	__sync_fetch_and_add(&m->pages_tracked, -(__s64)n);
	return false;
}

static __always_inline void budget_give(__u32 n)
{
	__u32 zero = 0;
	struct tandem_trk_meta *m = bpf_map_lookup_elem(&meta, &zero);

	if (m)
		__sync_fetch_and_add(&m->pages_tracked, -(__s64)n);
}

/* ---- finding the extent that holds a page ---- */

/*
 * The extent holding page IDX of the file at BASE (file_id << 32), trying
 * the sizes in ORDERS largest first; *HEAD is its first page.
 */
static __always_inline struct tandem_trk_page *
extent_find(__u64 base, __u64 idx, __u32 orders, __u64 *head)
{
	struct tandem_trk_page *e;
	__u64 key, h;

#pragma unroll
	for (int k = EXT_ORDERS - 1; k >= 0; k--) {
		if (!(orders & (1U << k)))
			continue;
		h = idx & ~((1ULL << k) - 1);
		key = base | h;
		e = bpf_map_lookup_elem(&pages, &key);
		if (e && idx - h < e->nr) {
			*head = h;
			return e;
		}
	}
	return NULL;
}

/* ---- splitting an extent ---- */

/* what carving copies from the extent it splits */
struct ext_src {
	__u32 loader;
	__u32 nr;
	__u64 mapper;
	__u64 fresh[EXT_WORDS];
};

static __always_inline void ext_copy(struct ext_src *src, const struct tandem_trk_page *e)
{
	src->loader = e->loader;
	src->nr = e->nr;
	src->mapper = e->mapper;
#pragma unroll
	for (int w = 0; w < EXT_WORDS; w++)
		src->fresh[w] = e->fresh[w];
}

/* DST: the aligned block of SIZE pages at offset OFF of SRC */
static __always_inline void ext_slice(const struct ext_src *src, __u64 off,
				      __u32 size, struct tandem_trk_page *dst)
{
	__u32 nfresh = 0;

	dst->loader = src->loader;
	dst->nr = size;
	dst->mapper = src->mapper;
	dst->pad = 0;
#pragma unroll
	for (int w = 0; w < EXT_WORDS; w++)
		dst->fresh[w] = 0;
	if (size >= 64) {
		/* a block of 64 pages or more starts on a word */
#pragma unroll
		for (int w = 0; w < EXT_WORDS; w++)
			if (w < size / 64)
				dst->fresh[w] = src->fresh[((off >> 6) + w) & (EXT_WORDS - 1)];
	} else {
		dst->fresh[0] = (src->fresh[(off >> 6) & (EXT_WORDS - 1)] >> (off & 63)) &
				((1ULL << size) - 1);
	}
#pragma unroll
	for (int w = 0; w < EXT_WORDS; w++)
		nfresh += popcount64(dst->fresh[w]);
	dst->nfresh = nfresh;
}

/*
 * Split the extent SRC at HEAD into aligned halves down to the block of S
 * pages at H (inside it): the halves that do not hold H become extents of
 * their own; the block itself becomes one when KEEP, and is dropped (its
 * pages left the cache) otherwise. At level l the half that does not hold
 * H is (H rounded down to the half's size) xor the half's size. One level
 * per bpf_loop() step, so that the verifier checks one level, not every
 * combination of them; at most log2(nr) + 1 updates in all.
 */
struct carve_ctx {
	__u64 base;
	__u64 head;
	__u64 h;
	__u32 s;
	__u32 nr;		/* the split extent's size */
	__u32 file_id;
	__u32 pad;
};

/*
 * The split extent's copy and the slice being written, per CPU, not on the
 * stack: the verifier counts a bpf_loop() callback's frame together with
 * its caller's (512 B in all), and carving runs inside the access loop.
 * Only tracepoint programs carve (map_pages, page_fault_user, evict), and
 * tracepoints run with preemption off, so no other carve on this CPU can
 * come between.
 */
struct carve_buf {
	struct ext_src src;
	struct tandem_trk_page dst;
	struct carve_ctx cc;	/* here too: 6.12 counted 528 B with it on the stack */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct carve_buf);
} carve_bufs SEC(".maps");

static __always_inline struct carve_buf *carve_buf(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&carve_bufs, &zero);
}

static long carve_level(__u32 l, void *data)
{
	struct carve_buf *cb = carve_buf();
	struct carve_ctx *cc;
	__u32 half;
	__u64 sib, key;

	if (!cb)
		return 1;
	cc = &cb->cc;
	half = cc->nr >> ((l + 1) & 15);
	if (half < cc->s || !half)
		return 1;
	sib = (cc->h & ~((__u64)half - 1)) ^ half;
	ext_slice(&cb->src, sib - cc->head, half, &cb->dst);
	key = cc->base | sib;
	/* a cached half left without a state: the file is no longer one job's */
	if (bpf_map_update_elem(&pages, &key, &cb->dst, BPF_ANY))
		file_mixed(cc->file_id);
	return 0;
}

/* split extent E (first page HEAD) as described above */
static __always_inline void carve(__u64 base, __u64 head, __u64 h, __u32 s,
				  const struct tandem_trk_page *e, __u32 file_id, bool keep)
{
	struct carve_buf *cb = carve_buf();
	__u64 key = base | h;
	struct carve_ctx *cc;

	if (!cb)
		return;
	cc = &cb->cc;
	cc->base = base;
	cc->head = head;
	cc->h = h;
	cc->s = s;
	cc->file_id = file_id;
	/* copied first: a half may take the old key */
	ext_copy(&cb->src, e);
	cc->nr = cb->src.nr;
	bpf_loop(EXT_ORDERS - 1, carve_level, NULL, 0);
	if (keep) {
		ext_slice(&cb->src, cc->h - cc->head, cc->s, &cb->dst);
		if (bpf_map_update_elem(&pages, &key, &cb->dst, BPF_ANY))
			file_mixed(file_id);
	} else if (cc->h == cc->head) {
		/* no half took the old key */
		bpf_map_delete_elem(&pages, &key);
	}
	/* sizes s .. nr / 2 were made; a size 2^k is bit k of an orders mask */
	file_carved(file_id, (cc->nr - 1) & ~(cc->s - 1));
}

/* ---- insert and evict: one extent per folio ---- */

/* a dataset folio: its file, first page and size */
struct folio_at {
	__u64 base;		/* file_id << 32 */
	__u64 index;
	__u32 file_id;
	__u32 dataset;
	__u32 nr;
	__u32 pad;
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
	fa->file_id = f->file_id;
	fa->dataset = f->dataset;
	fa->base = (__u64)f->file_id << 32;
	return true;
}

/* a new extent of NR pages (<= TANDEM_TRK_EXTENT_MAX) at INDEX; 0 or -1 */
static __always_inline int extent_new(__u64 base, __u64 index, __u32 nr, __u32 job)
{
	struct tandem_trk_page e = { .loader = job, .nr = nr, .nfresh = nr };
	struct tandem_trk_page *old;
	__u64 key = base | index;
	__u32 stale = 0, taken = 0, file_id = base >> 32;

#pragma unroll
	for (int w = 0; w < EXT_WORDS; w++)
		e.fresh[w] = nr >= (w + 1) * 64 ? ~0ULL :
			     nr > w * 64 ? (1ULL << ((nr - w * 64) & 63)) - 1 : 0;
	if (!bpf_map_update_elem(&pages, &key, &e, BPF_NOEXIST)) {
		fresh_ext_add(file_id, 1);
		return 0;
	}
	/* a state whose pages left without an event (tracker_state.bpf.h) */
	old = bpf_map_lookup_elem(&pages, &key);
	if (old) {
		stale = old->nr;
		taken = ext_fresh_take(old);
	}
	if (bpf_map_update_elem(&pages, &key, &e, BPF_ANY)) {
		fresh_ext_add(file_id, -(__s32)taken);
		return -1;
	}
	fresh_ext_add(file_id, 1 - (__s32)taken);
	budget_give(stale);
	GLOBAL_INC(removed, stale);
	return 0;
}

/* folios larger than an extent: one extent per aligned block */
struct big_ctx {
	__u64 base;
	__u64 index;
	__u32 job;
	__u32 failed;
	__u32 file_id;
	__u32 pad;
};

static long insert_block(__u32 i, void *data)
{
	struct big_ctx *bc = data;

	if (extent_new(bc->base, bc->index + (__u64)i * TANDEM_TRK_EXTENT_MAX,
		       TANDEM_TRK_EXTENT_MAX, bc->job)) {
		bc->failed += TANDEM_TRK_EXTENT_MAX;
		file_mixed(bc->file_id);
	}
	return 0;
}

static __always_inline int on_insert(struct folio *folio)
{
	struct folio_at fa = {};
	struct tandem_trk_counts *c;
	struct big_ctx bc = {};
	__u32 job;

	if (!folio_target(folio, &fa))
		return 0;
	/* readahead runs in the reader's context: its job is the loader */
	job = current_job();
	c = counts_of(job, fa.dataset);
	if (c)
		__sync_fetch_and_add(&c->miss, fa.nr);
	file_loader_note(fa.file_id, job, folio->mapping, fa.nr);
	/* page-cache folios are naturally aligned; anything else gets no state */
	if ((fa.index & (fa.nr - 1)) || !budget_take(fa.nr)) {
		file_mixed(fa.file_id);
		GLOBAL_INC(insert_failed, fa.nr);
		return 0;
	}
	if (fa.nr <= TANDEM_TRK_EXTENT_MAX) {
		if (extent_new(fa.base, fa.index, fa.nr, job)) {
			file_mixed(fa.file_id);
			budget_give(fa.nr);
			GLOBAL_INC(insert_failed, fa.nr);
			return 0;
		}
		file_orders_add(fa.file_id, fa.nr);
		GLOBAL_INC(inserted, fa.nr);
		return 0;
	}
	bc.base = fa.base;
	bc.index = fa.index;
	bc.job = job;
	bc.file_id = fa.file_id;
	bpf_loop(fa.nr / TANDEM_TRK_EXTENT_MAX, insert_block, &bc, 0);
	file_orders_add(fa.file_id, TANDEM_TRK_EXTENT_MAX);
	/* no branch on what the loop counted (see access_ctx) */
	budget_give(bc.failed);
	GLOBAL_INC(insert_failed, bc.failed);
	GLOBAL_INC(inserted, fa.nr - bc.failed);
	return 0;
}

/* a folio of the file leaves the cache: a read pending may lose pages */
static __always_inline void file_evicted(__u32 file_id)
{
	struct tandem_trk_fileinfo *fi = bpf_map_lookup_elem(&fileinfo, &file_id);

	if (fi)
		__sync_fetch_and_add(&fi->evicts, 1);
}

/* N pages loaded by LOADER left the cache */
static __always_inline void evicted(__u32 loader, __u32 dataset, __u32 n)
{
	struct tandem_trk_counts *c = counts_of(loader, dataset);

	if (c)
		__sync_fetch_and_add(&c->evict, n);
}

/* a folio that holds several extents (collapsed by the kernel, or larger
 * than an extent): each extent in it, one by one */
struct evict_ctx {
	__u64 base;
	__u64 next;
	__u64 end;		/* first page after the folio */
	__u32 dataset;
	__u32 removed;
	__u32 unknown;
	__u32 pad;
};

static long evict_scan(__u32 i, void *data)
{
	struct evict_ctx *ec = data;
	struct tandem_trk_page *e;
	__u64 key = ec->base | ec->next;
	__u32 n, loader;

	if (ec->next >= ec->end)
		return 1;
	e = bpf_map_lookup_elem(&pages, &key);
	if (!e) {
		ec->unknown++;
		ec->next++;
		return 0;
	}
	n = e->nr;
	loader = e->loader;
	fresh_ext_add(ec->base >> 32, -(__s32)ext_fresh_take(e));
	if (!bpf_map_delete_elem(&pages, &key)) {
		ec->removed += n;
		evicted(loader, ec->dataset, n);
	}
	ec->next += n;
	return 0;
}

static __always_inline int on_evict(struct folio *folio)
{
	struct folio_at fa = {};
	struct evict_ctx ec = {};
	struct tandem_trk_page *e;
	__u64 key, head;
	__u32 loader;

	if (!folio_target(folio, &fa))
		return 0;
	file_evicted(fa.file_id);
	key = fa.base | fa.index;
	head = fa.index;
	e = bpf_map_lookup_elem(&pages, &key);
	if (!e)
		e = extent_find(fa.base, fa.index, file_orders(fa.file_id), &head);
	if (!e) {
		/* cached before tracking began, or it got no state */
		evicted(0, fa.dataset, fa.nr);
		GLOBAL_INC(evict_unknown, fa.nr);
		return 0;
	}
	loader = e->loader;
	if (head == fa.index && e->nr == fa.nr) {
		fresh_ext_add(fa.file_id, -(__s32)ext_fresh_take(e));
		if (bpf_map_delete_elem(&pages, &key)) {
			GLOBAL_INC(evict_unknown, fa.nr);	/* deleted meanwhile */
			return 0;
		}
		evicted(loader, fa.dataset, fa.nr);
		budget_give(fa.nr);
		GLOBAL_INC(removed, fa.nr);
		return 0;
	}
	if (e->nr > fa.nr) {
		/* a part of a folio the kernel split: carve it out of its extent */
		carve(fa.base, head, fa.index, fa.nr, e, fa.file_id, false);
		evicted(loader, fa.dataset, fa.nr);
		budget_give(fa.nr);
		GLOBAL_INC(removed, fa.nr);
		return 0;
	}
	ec.base = fa.base;
	ec.next = fa.index;
	ec.end = fa.index + fa.nr;
	ec.dataset = fa.dataset;
	bpf_loop(fa.nr, evict_scan, &ec, 0);
	/* no branch on what the loop counted (see access_ctx) */
	budget_give(ec.removed);
	GLOBAL_INC(removed, ec.removed);
	evicted(0, fa.dataset, ec.unknown);
	GLOBAL_INC(evict_unknown, ec.unknown);
	return 0;
}

#endif
