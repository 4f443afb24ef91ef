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
 */
struct fileinfo {
	__u32 orders;		/* bit k: an extent of 2^k pages was made */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16385);	/* set by the loader: max_files + 1 */
	__type(key, __u32);
	__type(value, struct fileinfo);
} fileinfo SEC(".maps");

/* the page budget, --max-pages; set by the loader */
const volatile __u32 max_pages = 131072;

static __always_inline __u32 popcount64(__u64 x)
{
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (x * 0x0101010101010101ULL) >> 56;
}

/* extent sizes FILE_ID has had; all of them when unknown */
static __always_inline __u32 file_orders(__u32 file_id)
{
	struct fileinfo *fi = bpf_map_lookup_elem(&fileinfo, &file_id);

	return fi ? fi->orders : ALL_ORDERS;
}

static __always_inline void file_orders_add(__u32 file_id, __u32 orders)
{
	struct fileinfo *fi = bpf_map_lookup_elem(&fileinfo, &file_id);

	if (fi && (fi->orders & orders) != orders)
		__sync_fetch_and_or(&fi->orders, orders);
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
	struct ext_src src;
	__u64 base;
	__u64 head;
	__u64 h;
	__u32 s;
	__u32 pad;
};

static long carve_level(__u32 l, void *data)
{
	struct carve_ctx *cc = data;
	struct tandem_trk_page dst;
	__u32 half = cc->src.nr >> ((l + 1) & 15);
	__u64 sib, key;

	if (half < cc->s || !half)
		return 1;
	sib = (cc->h & ~((__u64)half - 1)) ^ half;
	ext_slice(&cc->src, sib - cc->head, half, &dst);
	key = cc->base | sib;
	bpf_map_update_elem(&pages, &key, &dst, BPF_ANY);
	return 0;
}

static __always_inline void carve(struct carve_ctx *cc, __u32 file_id, bool keep)
{
	struct tandem_trk_page dst;
	__u64 key = cc->base | cc->h;

	bpf_loop(EXT_ORDERS - 1, carve_level, cc, 0);
	if (keep) {
		ext_slice(&cc->src, cc->h - cc->head, cc->s, &dst);
		bpf_map_update_elem(&pages, &key, &dst, BPF_ANY);
	} else if (cc->h == cc->head) {
		/* no half took the old key */
		bpf_map_delete_elem(&pages, &key);
	}
	/* sizes s .. nr / 2 were made; a size 2^k is bit k of an orders mask */
	file_orders_add(file_id, (cc->src.nr - 1) & ~(cc->s - 1));
}

#endif
