/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prefetch orders from the jobs' own read orders (Documentation/model.md,
 * "The learned read order"): N instances each read a sequence of the
 * dataset's files; a prefetch that serves all of them reads every file
 * once. The merge by need orders the files by the time an instance will
 * first need each one: its first read (release plus start-up) plus the
 * bytes before the file in its own sequence at its rate. The merge by
 * position (each instance's first file, then each one's second, ...) is
 * what `run` did before; it ignores the release times, so with staggered
 * releases it loads the followers' files while only the leader runs.
 *
 * And the map from files to the makespan model's extents, so a merged
 * order and the jobs' own orders can be given to the model
 * (model_set_prefetch(), model_set_order()).
 */
#ifndef TANDEM_CTL_MODEL_ORDER_H
#define TANDEM_CTL_MODEL_ORDER_H

#include <stddef.h>
#include <stdint.h>

/* One instance's sequence and its schedule. */
struct mo_seq {
	const uint32_t *files;	/* indices into the dataset's files */
	size_t len;
	double first;		/* s: when it reads its first file (release + start-up) */
	double rate;		/* bytes/s it consumes (> 0) */
};

/*
 * Merge by need: each file once, at its earliest need over the instances;
 * ties (equal times) go to the lower instance, then the earlier position.
 * out has room for nfiles indices; need (may be NULL) gets each one's
 * time. -EINVAL for an index >= nfiles or a rate <= 0, -ENOMEM.
 */
int mo_merge_by_need(const struct mo_seq *seqs, int n, const uint64_t *sizes,
		     uint32_t nfiles, uint32_t *out, double *need, size_t *nout);

/* Merge by position: each instance's i-th file in turn, each file once (first and rate unused). */
int mo_merge_by_position(const struct mo_seq *seqs, int n, uint32_t nfiles, uint32_t *out,
			 size_t *nout);

/*
 * The model's extents (K equal parts of the dataset, its files laid out in
 * index order) that the files cover, in the files' order, each extent once.
 * out has room for K. -EINVAL for a bad index or K = 0.
 */
int mo_files_to_extents(const uint32_t *files, size_t n, const uint64_t *sizes,
			uint32_t nfiles, uint32_t K, uint32_t *out, uint32_t *nout);

#endif
