/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tracker's accesses: a range of cached pages of one dataset file read
 * (read(), 6.1's per-PTE mmap) or mapped (6.18's mmap) by a job, counted
 * against the extents that hold them (tracker_state.bpf.h): own hits,
 * shared hits with their loader, first accesses. Included by tracker.bpf.c
 * after the state.
 */
#ifndef TANDEM_TRACKER_ACCESS_BPF_H
#define TANDEM_TRACKER_ACCESS_BPF_H

/* ---- accesses: a range of cached pages read or mapped by a job ---- */

/*
 * Loop context for bpf_loop(). Since 6.7 the verifier walks a callback as
 * a loop until its states converge, so no branch, in the callback or after
 * the loop, may depend on a counter kept here (that would make it precise
 * and every iteration a new state): the counters are only ever added, and
 * used unconditionally. `loader` starts as NO_LOADER, which is not a
 * counter: a branch on it is fine.
 */
#define NO_LOADER	0xffffffffU

struct access_ctx {
	__u64 base;		/* file_id << 32 */
	__u64 next;		/* first page not yet counted */
	__u64 last;		/* last page of the range */
	__u64 mapper;		/* mmap: mapping stamp for dedup; 0 for reads */
	__u64 hint;		/* in: first page of the extent the range may start
				 * in; out: that of the last extent counted */
	__u32 file_id;
	__u32 job;
	__u32 dataset;
	__u32 first_access;
	__u32 own;
	__u32 shared;
	__u32 loader;		/* loader of the current run of shared hits */
	__u32 run;		/* its length: one matrix update per run */
	__u32 probe;		/* the next lookup is the range's first */
	__u32 pad;
	struct tandem_trk_fileinfo *fi;	/* the file's: fresh_ext (ext_fresh_take) */
};

static __always_inline void count_shared(struct access_ctx *ac, __u32 loader,
					 __u32 n)
{
	if (loader != ac->loader) {
		if (ac->loader != NO_LOADER)
			matrix_add(ac->job, ac->loader, ac->dataset, ac->run);
		ac->loader = loader;
		ac->run = 0;
	}
	ac->run += n;
	ac->shared += n;
}

/*
 * Pages A..B of extent E (first page HEAD) read or mapped by the job: all
 * shared hits when another job loaded them; else the fresh ones are first
 * accesses (their bits cleared, atomically: of two threads of the job
 * reading a page at once, one counts it) and the others own hits.
 */
static __always_inline void count_extent(struct access_ctx *ac, struct tandem_trk_page *e,
					 __u64 head, __u64 a, __u64 b)
{
	__u64 lo = a - head, hi = b - head, mask, old;
	__u32 n = b - a + 1, firsts = 0, had;
	__u64 x, y;

	if (e->loader != ac->job) {
		count_shared(ac, e->loader, n);
		return;
	}
	if (!e->nfresh) {
		ac->own += n;
		return;
	}
#pragma unroll
	for (int w = 0; w < EXT_WORDS; w++) {
		if (hi < w * 64 || lo > w * 64 + 63)
			continue;
		mask = ~0ULL;
		if (lo > w * 64)
			mask &= ~0ULL << ((lo - w * 64) & 63);
		if (hi < w * 64 + 63)
			mask &= ~0ULL >> ((w * 64 + 63 - hi) & 63);
		old = __sync_fetch_and_and(&e->fresh[w], ~mask);
		firsts += popcount64(old & mask);
	}
	had = __sync_fetch_and_add(&e->nfresh, -firsts);
	/*
	 * The extent's last fresh pages (firsts != 0 and had == firsts):
	 * fileinfo.fresh_ext, see ext_fresh_take. Computed without a branch
	 * and added in the map, not in this context: the mmap path's callback
	 * is at the verifier's limit, and either doubles its states. For
	 * 0 <= v < 2^32, (v - 1) >> 63 is v == 0 and (0 - v) >> 63 is v != 0;
	 * the barriers keep the compiler from turning them back into compares.
	 */
	x = (__u32)(had - firsts);
	y = firsts;
	barrier_var(x);
	barrier_var(y);
	__sync_fetch_and_add(&ac->fi->fresh_ext, -(__s32)(((x - 1) >> 63) & ((0 - y) >> 63)));
	ac->first_access += firsts;
	ac->own += n - firsts;
}

/*
 * mmap: pages A..B of extent E mapped by the process ac->mapper. Pages it
 * mapped last already are not counted again; when only part of the extent
 * is mapped, the largest aligned block at A is carved out of it first, so
 * that the extent's pages keep one last mapper. Returns the last page done.
 */
static __always_inline __u64 map_extent(struct access_ctx *ac, struct tandem_trk_page *e,
					__u64 head, __u64 a, __u64 b)
{
	struct tandem_trk_page *blk;
	__u64 key, nr = e->nr, m;
	__u32 s;

	if (e->mapper == ac->mapper)
		return b;
	if (a == head && b == head + nr - 1) {
		e->mapper = ac->mapper;
		count_extent(ac, e, head, a, b);
		return b;
	}
	/*
	 * The largest 2^k, k < EXT_ORDERS, with 2^k < nr, A aligned to it and
	 * A + 2^k - 1 <= B (1 when none): the smallest of four powers of two,
	 * which is the lowest bit of their OR. Without a branch: a compare per
	 * order in the mmap path's callback took more than the verifier's 1M
	 * instructions on 6.18.
	 */
	m = (a & (0 - a)) | floor_pow2(b - a + 1) | floor_pow2(nr - 1) |
	    ((nr - 2) >> 63) | (1ULL << (EXT_ORDERS - 1));
	barrier_var(m);
	s = m & (0 - m);
	carve(ac->base, head, a, s, e, ac->file_id, true);
	key = ac->base | a;
	blk = bpf_map_lookup_elem(&pages, &key);
	if (!blk || blk->nr != s)
		return a + s - 1;
	blk->mapper = ac->mapper;
	count_extent(ac, blk, a, a, a + s - 1);
	return a + s - 1;
}

/*
 * One extent of the range per call (or one page that has none). A read
 * copied every page of its range from the cache, so a page without a state
 * was cached before tracking began or got none: a shared hit of job 0. A
 * mapping skips such pages (they were not cached, so not mapped).
 */
static long access_step(__u32 i, void *data)
{
	struct access_ctx *ac = data;
	struct tandem_trk_page *e = NULL;
	__u64 idx = ac->next, head = idx, end, key;

	if (idx > ac->last)
		return 1;
	if (ac->probe) {
		/* after the first page, the next extent starts where one ended */
		ac->probe = 0;
		if (ac->hint <= idx) {
			key = ac->base | (ac->hint & 0xffffffffULL);
			e = bpf_map_lookup_elem(&pages, &key);
			if (e && idx - ac->hint < e->nr)
				head = ac->hint;
			else
				e = NULL;
		}
		if (!e)
			e = extent_find(ac->base, idx, file_orders(ac->file_id), &head);
	} else {
		key = ac->base | idx;
		e = bpf_map_lookup_elem(&pages, &key);
	}
	if (!e) {
		if (!ac->mapper) {
			GLOBAL_INC(access_unknown, 1);
			count_shared(ac, 0, 1);
		}
		ac->next = idx + 1;
		return 0;
	}
	end = head + e->nr - 1;
	if (end > ac->last)
		end = ac->last;
	if (ac->mapper)
		end = map_extent(ac, e, head, idx, end);
	else
		count_extent(ac, e, head, idx, end);
	ac->next = end + 1;
	ac->hint = head;
	return 0;
}

/* pages FIRST..LAST of a file read (MAPPER 0) or mapped; HINT: see access_ctx */
static __always_inline void account(__u32 job, __u32 file_id, __u32 dataset,
				    __u64 first, __u64 last, __u64 mapper, __u64 *hint)
{
	struct access_ctx ac = {
		.job = job, .dataset = dataset, .mapper = mapper, .file_id = file_id,
		.base = (__u64)file_id << 32, .next = first, .probe = 1,
		.hint = hint ? *hint : first, .loader = NO_LOADER,
	};
	struct tandem_trk_counts *c;
	__u64 n;

	if (last < first)
		return;
	if (last >> 32) {
		GLOBAL_INC(index_too_big, 1);
		return;
	}
	/* an array index below max_files + 1: always there */
	ac.fi = bpf_map_lookup_elem(&fileinfo, &file_id);
	if (!ac.fi)
		return;
	n = last - first + 1;
	if (n > MAX_RANGE_PAGES) {
		GLOBAL_INC(range_capped, n - MAX_RANGE_PAGES);
		n = MAX_RANGE_PAGES;
	}
	ac.last = first + n - 1;
	/* at most one iteration per page; access_step stops early */
	bpf_loop(n, access_step, &ac, 0);
	if (hint)
		*hint = ac.hint;
	/* the last run of shared hits, if any */
	if (ac.loader != NO_LOADER)
		matrix_add(job, ac.loader, dataset, ac.run);
	c = counts_of(job, dataset);
	if (!c)
		return;
	__sync_fetch_and_add(&c->first_access, ac.first_access);
	__sync_fetch_and_add(&c->own_hit, ac.own);
	__sync_fetch_and_add(&c->shared_hit, ac.shared);
}

#endif
