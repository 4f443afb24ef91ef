/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tracker's accesses: a range of cached pages of one dataset file read
 * (read(), 6.1's per-PTE mmap) or mapped (6.18's mmap) by a job, counted
 * against the pages' words (tracker_state.bpf.h): own hits, shared hits
 * with their loader, first accesses. Included by tracker.bpf.c after the
 * state.
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
struct access_ctx {
	__u64 first;		/* first page of the range */
	__u64 mapper;		/* mmap: the mapper's hash, in place; 0 for reads */
	__u32 job;
	__u32 dataset;
	__u32 first_access;
	__u32 own;
	__u32 shared;
	__u32 loader;		/* loader of the current run of shared hits */
	__u32 run;		/* its length: one matrix update per run */
	__u32 pad;
	struct tandem_trk_fileinfo *fi;
};

static __always_inline void count_shared(struct access_ctx *ac, __u32 loader)
{
	if (loader != ac->loader) {
		if (ac->loader != NO_LOADER)
			matrix_add(ac->job, ac->loader, ac->dataset, ac->run);
		ac->loader = loader;
		ac->run = 0;
	}
	ac->run++;
	ac->shared++;
}

/*
 * Page IDX read or mapped by the job: a shared hit when another job loaded
 * it; else a first access when it is fresh (its bit cleared atomically: of
 * two threads of the job reading it at once, one counts it), an own hit
 * when not. A read copied the page from the cache, so a page without a
 * state was cached before tracking began or got none: a shared hit of job
 * 0. A mapping skips such pages (they were not cached, so not mapped), and
 * pages the same process mapped last.
 */
static __always_inline void access_page(struct access_ctx *ac, __u64 idx)
{
	__u64 *w = page_word(ac->fi, idx), s, old, f;

	s = w ? *(volatile __u64 *)w : 0;
	if (!PG_IS_CACHED(s)) {
		if (!ac->mapper) {
			GLOBAL_INC(access_unknown, 1);
			count_shared(ac, 0);
		}
		return;
	}
	if (ac->mapper) {
		if ((s & PG_MAPPER) == ac->mapper)
			return;
		/* lost to another change of the word: counted all the same */
		__sync_val_compare_and_swap(w, s, (s & ~PG_MAPPER) | ac->mapper);
	}
	if ((__u32)s != ac->job) {
		count_shared(ac, (__u32)s);
		return;
	}
	old = s & PG_FRESH ? __sync_fetch_and_and(w, ~PG_FRESH) : 0;
	f = PG_IS_FRESH(old);
	ac->first_access += f;
	ac->own += 1 - f;
}

static long access_step(__u32 i, void *data)
{
	struct access_ctx *ac = data;

	access_page(ac, ac->first + i);
	return 0;
}

/* pages FIRST..LAST of a file read (MAPPER 0) or mapped (the mapper's stamp) */
static __always_inline void account(__u32 job, __u32 file_id, __u32 dataset,
				    __u64 first, __u64 last, __u64 mapper)
{
	struct access_ctx ac = {
		.job = job, .dataset = dataset, .first = first, .loader = NO_LOADER,
	};
	struct tandem_trk_counts *c;
	__u64 n;

	if (last < first)
		return;
	if (last >> 32) {
		GLOBAL_INC(index_too_big, 1);
		return;
	}
	if (mapper) {
		/* 25 bits of the stamp, hashed; never 0 (no mapper) */
		mapper = ((mapper * 0x9e3779b97f4a7c15ULL) >> 39) | 1;
		ac.mapper = (mapper & TANDEM_TRK_PG_MAPPER_MASK) << TANDEM_TRK_PG_MAPPER_SHIFT;
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
	if (n == 1)
		access_page(&ac, first);
	else
		bpf_loop(n, access_step, &ac, 0);
	/* the last run of shared hits, if any */
	if (ac.loader != NO_LOADER)
		matrix_add(job, ac.loader, dataset, ac.run);
	/* the file's fresh pages this range took */
	__sync_fetch_and_add(&ac.fi->fresh, -(__s32)ac.first_access);
	c = counts_of(job, dataset);
	if (!c)
		return;
	__sync_fetch_and_add(&c->first_access, ac.first_access);
	__sync_fetch_and_add(&c->own_hit, ac.own);
	__sync_fetch_and_add(&c->shared_hit, ac.shared);
}

/* page IDX of the file FILE_ID has a state (is cached, as the events tell) */
static __always_inline __u64 page_state(__u32 file_id, __u64 idx)
{
	struct tandem_trk_fileinfo *fi = bpf_map_lookup_elem(&fileinfo, &file_id);
	__u64 *w = fi ? page_word(fi, idx) : NULL;

	return w ? *(volatile __u64 *)w : 0;
}

#endif
