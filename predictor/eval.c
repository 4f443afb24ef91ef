// SPDX-License-Identifier: GPL-2.0
/*
 * Leave-architecture-out evaluation, ours vs Ernest.
 *
 * Ours: architectures are split into folds; for each fold a fresh model is
 * trained on the other folds and predicts every run of the held-out
 * architectures, which it has never seen.
 *
 * Ernest needs runs of the workload itself by design: for each
 * architecture it is fitted on that architecture's `ernest_points` smallest
 * batch sizes (batch size standing for Ernest's scale, GPUs x nodes for
 * its machines) and predicts the architecture's other runs. Both are
 * scored (mean absolute percentage error) on those other runs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runs.h"
#include "ghn.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_batch(const void *a, const void *b, void *d)
{
	const struct tp_run *r = ((const struct tp_dataset *)d)->runs;
	double x = r[*(const int *)a].batch, y = r[*(const int *)b].batch;

	return (x > y) - (x < y);
}

/* Ernest's prediction for every run of arch a; fitted[k] marks fit points.
 * pred, fitted: [nruns] in by_arch order after sorting by batch. */
static int ernest_arch(const struct tp_dataset *d, int *runs, int nr, int points, double *pred,
		       bool *fitted)
{
	double s[64], mm[64], t[64], th[4];
	int k = points < nr - 1 ? points : nr - 1, err;	/* one run left to score at least */

	/* one point cannot fit Ernest's model: an architecture with fewer than
	 * 3 runs (the biggest 224x224 ones) is not scored against Ernest */
	if (k < 2)
		k = nr;
	qsort_r(runs, nr, sizeof(*runs), cmp_batch, (void *)d);
	for (int i = 0; i < k && i < 64; i++) {
		const struct tp_run *r = &d->runs[runs[i]];

		s[i] = r->batch;
		mm[i] = (double)r->gpus * r->nodes;
		t[i] = r->t;
	}
	err = tp_ernest_fit(s, mm, t, k < 64 ? k : 64, th);
	for (int i = 0; i < nr && !err; i++) {
		const struct tp_run *r = &d->runs[runs[i]];

		pred[i] = tp_ernest_predict(th, r->batch, (double)r->gpus * r->nodes);
		fitted[i] = i < k;
	}
	return err;
}

struct cv_acc {
	double ape_ours_all, ape_ours, ape_ernest, ape_ernest_loo;
	int n_all, n_eval;
	struct tp_eval_res by_res[TP_EVAL_MAX_RES];	/* sums until tp_eval_cv ends */
	int nres;
};

/* The per-resolution accumulator of an architecture's runs. */
static struct tp_eval_res *res_acc(struct cv_acc *acc, double res)
{
	for (int i = 0; i < acc->nres; i++)
		if (fabs(acc->by_res[i].res - res) < 0.5)
			return &acc->by_res[i];
	if (acc->nres == TP_EVAL_MAX_RES)
		return &acc->by_res[TP_EVAL_MAX_RES - 1];	/* lumped */
	acc->by_res[acc->nres].res = res;
	return &acc->by_res[acc->nres++];
}

/* Ernest's most favourable use: run k predicted from all the architecture's
 * other runs (interpolation as well as extrapolation). runs: [nr] */
static double ernest_loo_ape(const struct tp_dataset *d, const int *runs, int nr, int k)
{
	double s[64], mm[64], t[64], th[4];
	const struct tp_run *r = &d->runs[runs[k]];
	int n = 0;

	for (int i = 0; i < nr; i++) {
		if (i == k)
			continue;
		s[n] = d->runs[runs[i]].batch;
		mm[n] = (double)d->runs[runs[i]].gpus * d->runs[runs[i]].nodes;
		t[n++] = d->runs[runs[i]].t;
	}
	if (!n || tp_ernest_fit(s, mm, t, n, th))
		return 0;
	return fabs(tp_ernest_predict(th, r->batch, (double)r->gpus * r->nodes) - r->t) / r->t;
}

static int predict_run(struct tp_model *m, const struct tp_dataset *d, int i, const float *gvec,
		       double *t)
{
	struct tp_reg_acts *ra = calloc(1, sizeof(*ra));
	const struct tp_run *r = &d->runs[i];

	if (!ra)
		return tp_fail(-ENOMEM, "out of memory");
	*t = exp(tp_log_time(m, gvec, d->archs[r->arch].g, r->batch, r->gpus, r->nodes,
			     &m->train_dev, ra));
	free(ra);
	return 0;
}

static int score_arch(struct tp_model *m, const struct tp_dataset *d, int a, int points,
		      struct cv_acc *acc, FILE *per_arch)
{
	const struct tp_arch *ar = &d->archs[a];
	struct tp_eval_res *rr = res_acc(acc, ar->g->stats.input_res);
	int nr = ar->nruns < 64 ? ar->nruns : 64, runs[64], ne = 0, err;
	double ern[64], ours = 0, so = 0, se = 0, so_all = 0;
	bool fitted[64];
	float gvec[256];

	memcpy(runs, d->by_arch + ar->run0, nr * sizeof(*runs));
	err = tp_model_regresses(m) ? tp_embed(m, ar->g, gvec) : 0;
	if (!err)
		err = ernest_arch(d, runs, nr, points, ern, fitted);
	for (int k = 0; k < nr && !err; k++) {
		double t = d->runs[runs[k]].t, e_ours;

		err = predict_run(m, d, runs[k], gvec, &ours);
		e_ours = fabs(ours - t) / t;
		so_all += e_ours;
		acc->ape_ernest_loo += ernest_loo_ape(d, runs, nr, k);
		acc->ape_ours_all += e_ours;
		acc->n_all++;
		if (fitted[k])
			continue;
		so += e_ours;
		se += fabs(ern[k] - t) / t;
		ne++;
	}
	acc->ape_ours += so;
	acc->ape_ernest += se;
	acc->n_eval += ne;
	rr->runs += nr;
	rr->eval_runs += ne;
	rr->mape_ours_all += so_all;
	rr->mape_ours += so;
	rr->mape_ernest += se;
	if (per_arch && !err)
		fprintf(per_arch, "%-22s runs %d  ours(all) %6.1f%%  ours(eval) %6.1f%%  "
			"ernest(eval) %6.1f%%\n", ar->name, nr, 100 * so_all / nr,
			ne ? 100 * so / ne : 0, ne ? 100 * se / ne : 0);
	return err;
}

static void assign_folds(int narchs, int folds, uint64_t seed, int *fold)
{
	int *perm = malloc(narchs * sizeof(*perm));
	struct tp_rng r;

	tp_rng_seed(&r, seed ^ 0xF01D);
	for (int i = 0; i < narchs; i++)
		perm[i] = i;
	for (int i = narchs - 1; i > 0 && perm; i--) {
		int j = (int)(tp_rng_u64(&r) % (uint64_t)(i + 1)), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (int i = 0; i < narchs; i++)
		fold[perm ? perm[i] : i] = i % folds;
	free(perm);
}

/* Folds of whole groups: an architecture profiled at several resolutions
 * (one name, several graphs) is held out at all of them together. */
static void assign_group_folds(const struct tp_dataset *d, int folds, uint64_t seed, int *fold)
{
	assign_folds(d->narchs, folds, seed, fold);
	for (int a = 0; a < d->narchs; a++)
		fold[a] = fold[d->archs[a].group];
}

static int count_groups(const struct tp_dataset *d)
{
	int n = 0;

	for (int a = 0; a < d->narchs; a++)
		n += d->archs[a].group == a;
	return n;
}

static int run_fold(const struct tp_dataset *d, const struct tp_model_config *cfg,
		    const struct tp_train_opts *o, const int *fold, int f, int points,
		    struct cv_acc *acc, FILE *per_arch)
{
	bool *mask = malloc(d->narchs * sizeof(*mask));
	struct tp_model *m = NULL;
	int err;

	if (!mask)
		return tp_fail(-ENOMEM, "out of memory");
	for (int a = 0; a < d->narchs; a++)
		mask[a] = fold[a] != f;
	err = tp_model_new(cfg, o->seed + 1000 * (uint64_t)f, &m);
	if (!err)
		err = tp_train(m, d, mask, o, NULL);
	for (int a = 0; a < d->narchs && !err; a++)
		if (!mask[a])
			err = score_arch(m, d, a, points, acc, per_arch);
	tp_model_free(m);
	free(mask);
	return err;
}

int tp_eval_cv(const struct tp_dataset *d, const struct tp_model_config *cfg,
	       const struct tp_train_opts *o, int folds, int points,
	       struct tp_eval_result *res, FILE *per_arch)
{
	int *fold = malloc(d->narchs * sizeof(*fold)), err = 0;
	struct cv_acc acc = { 0 };
	double t0 = now();

	tp_clear_error();
	if (!fold)
		return tp_fail(-ENOMEM, "out of memory");
	if (folds <= 0 || folds > count_groups(d))
		folds = count_groups(d);
	if (folds < 2 || points < 1) {
		free(fold);
		return tp_fail(-EINVAL, "need at least 2 folds and 1 Ernest fit point");
	}
	assign_group_folds(d, folds, o->seed, fold);
	for (int f = 0; f < folds && !err; f++)
		err = run_fold(d, cfg, o, fold, f, points, &acc, per_arch);
	free(fold);
	if (err)
		return err;
	memset(res, 0, sizeof(*res));
	res->folds = folds;
	res->archs = d->narchs;
	res->runs = d->nruns;
	res->ernest_fit_points = points;
	res->eval_runs = acc.n_eval;
	res->mape_ours_all = acc.n_all ? 100 * acc.ape_ours_all / acc.n_all : NAN;
	res->mape_ours = acc.n_eval ? 100 * acc.ape_ours / acc.n_eval : NAN;
	res->mape_ernest = acc.n_eval ? 100 * acc.ape_ernest / acc.n_eval : NAN;
	res->mape_ernest_loo = acc.n_all ? 100 * acc.ape_ernest_loo / acc.n_all : NAN;
	res->train_seconds = now() - t0;
	res->nres = acc.nres;
	for (int i = 0; i < acc.nres; i++) {
		struct tp_eval_res *r = &res->by_res[i];

		*r = acc.by_res[i];
		r->mape_ours_all = r->runs ? 100 * r->mape_ours_all / r->runs : NAN;
		r->mape_ours = r->eval_runs ? 100 * r->mape_ours / r->eval_runs : NAN;
		r->mape_ernest = r->eval_runs ? 100 * r->mape_ernest / r->eval_runs : NAN;
	}
	return 0;
}
