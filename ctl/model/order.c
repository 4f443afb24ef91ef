// SPDX-License-Identifier: GPL-2.0
/*
 * Prefetch orders from the jobs' read orders (model.h, "prefetch orders"): merged by the time
 * each file is first needed, or by position; and the model's extents of a
 * file order.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

struct need_ent {
	double t;
	int j;
	size_t pos;
	uint32_t file;
};

static int need_cmp(const void *a, const void *b)
{
	const struct need_ent *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->j != y->j)
		return x->j < y->j ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Every (instance, position) with the time it needs its file. */
static int need_entries(const struct mo_seq *seqs, int n, const uint64_t *sizes,
			uint32_t nfiles, struct need_ent *e, size_t *ne)
{
	*ne = 0;
	for (int j = 0; j < n; j++) {
		double bytes = 0;

		if (!(seqs[j].rate > 0) || !isfinite(seqs[j].first))
			return -EINVAL;
		for (size_t i = 0; i < seqs[j].len; i++) {
			uint32_t f = seqs[j].files[i];

			if (f >= nfiles)
				return -EINVAL;
			e[(*ne)++] = (struct need_ent){
				.t = seqs[j].first + bytes / seqs[j].rate, .j = j, .pos = i, .file = f,
			};
			bytes += (double)sizes[f];
		}
	}
	return 0;
}

int mo_merge_by_need(const struct mo_seq *seqs, int n, const uint64_t *sizes,
		     uint32_t nfiles, uint32_t *out, double *need, size_t *nout)
{
	size_t total = 0, ne;
	struct need_ent *e;
	uint8_t *taken;
	int err;

	*nout = 0;
	for (int j = 0; j < n; j++)
		total += seqs[j].len;
	e = malloc((total ? total : 1) * sizeof(*e));
	taken = calloc(nfiles ? nfiles : 1, 1);
	err = e && taken ? need_entries(seqs, n, sizes, nfiles, e, &ne) : -ENOMEM;
	if (err)
		goto out;
	qsort(e, ne, sizeof(*e), need_cmp);
	for (size_t k = 0; k < ne; k++) {
		if (taken[e[k].file])
			continue;
		taken[e[k].file] = 1;
		if (need)
			need[*nout] = e[k].t;
		out[(*nout)++] = e[k].file;
	}
out:
	free(e);
	free(taken);
	return err;
}

int mo_merge_by_position(const struct mo_seq *seqs, int n, uint32_t nfiles, uint32_t *out,
			 size_t *nout)
{
	uint8_t *taken = calloc(nfiles ? nfiles : 1, 1);
	size_t longest = 0;

	*nout = 0;
	if (!taken)
		return -ENOMEM;
	for (int j = 0; j < n; j++)
		longest = seqs[j].len > longest ? seqs[j].len : longest;
	for (size_t i = 0; i < longest; i++) {
		for (int j = 0; j < n; j++) {
			uint32_t f;

			if (i >= seqs[j].len)
				continue;
			f = seqs[j].files[i];
			if (f >= nfiles) {
				free(taken);
				return -EINVAL;
			}
			if (!taken[f]++)
				out[(*nout)++] = f;
		}
	}
	free(taken);
	return 0;
}

int mo_files_to_extents(const uint32_t *files, size_t n, const uint64_t *sizes,
			uint32_t nfiles, uint32_t K, uint32_t *out, uint32_t *nout)
{
	double *off = malloc(((size_t)nfiles + 1) * sizeof(*off)), s;
	uint8_t *taken = calloc(K ? K : 1, 1);
	int err = off && taken ? 0 : -ENOMEM;

	*nout = 0;
	if (!err && !K)
		err = -EINVAL;
	if (err)
		goto out;
	off[0] = 0;
	for (uint32_t f = 0; f < nfiles; f++)
		off[f + 1] = off[f] + (double)sizes[f];
	s = off[nfiles] / K;
	for (size_t i = 0; i < n && !err && s > 0; i++) {
		uint32_t f = files[i], a, b;
		double hi;

		if (f >= nfiles) {
			err = -EINVAL;
			break;
		}
		/* extents [a, b] hold bytes [off[f], off[f + 1]) */
		a = (uint32_t)fmin(floor(off[f] / s), K - 1);
		hi = ceil(off[f + 1] / s - 1e-9) - 1;
		b = hi <= a ? a : (uint32_t)fmin(hi, K - 1);
		for (uint32_t c = a; c <= b; c++)
			if (!taken[c]++)
				out[(*nout)++] = c;
	}
out:
	free(off);
	free(taken);
	return err;
}
