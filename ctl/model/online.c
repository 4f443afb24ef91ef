// SPDX-License-Identifier: GPL-2.0
/*
 * Online evaluation: the model from where a node is now, for an agent that
 * sees jobs arrive one at a time (Documentation/model.md, "Online").
 *
 * The instances already running start the simulation at their positions
 * (the bytes each consumed so far, model_set_start()), the cache holds what
 * they read last (or as many bytes as were measured resident), the planned
 * ones wait for their planned starts, and the newcomer is released x
 * seconds from now. M(x) is then a one-dimensional function: a coarse grid
 * over [0, M(0)] refined around its best point, as search.c does for two
 * instances (releasing at M(0) or later can only make M larger, so the grid
 * covers every useful x). Ties go to the earlier release.
 *
 * With nothing running and nothing resident this is the offline model at
 * t = 0; selftests/host/test_model_online.c checks that, and that a
 * half-done instance is predicted to end where the offline run ends.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/model.h"

struct online {
	const struct mo_online *o;
	struct model *m;
	int n;				/* o->n others and the newcomer, last */
	double delta[MODEL_MAX_INST];	/* s after now */
	unsigned evals;
};

static int check_inst(const struct mo_online *o, const struct mo_online_inst *x, int i,
		      char *err, size_t errlen)
{
	if (!isfinite(x->start) || (x->running && x->start > o->now + 1e-6))
		return snprintf(err, errlen, "instance %d: a running start must be <= now", i),
		       -EINVAL;
	if (x->running && (!(x->consumed >= 0) || !isfinite(x->consumed)))
		return snprintf(err, errlen, "instance %d: consumed bytes must be >= 0", i),
		       -EINVAL;
	return 0;
}

static int online_new(const struct mo_online *o, struct online *on, char *err, size_t errlen)
{
	struct model_inst inst[MODEL_MAX_INST];
	struct model_start st = { .resident = o->resident };
	int ret;

	memset(on, 0, sizeof(*on));
	if (o->n < 0 || o->n >= MODEL_MAX_INST)
		return snprintf(err, errlen, "need 0 to %d other instances", MODEL_MAX_INST - 1),
		       -EINVAL;
	if (!(o->now >= 0) || !isfinite(o->now))
		return snprintf(err, errlen, "now must be >= 0 (s after the origin)"), -EINVAL;
	for (int i = 0; i < o->n; i++) {
		const struct mo_online_inst *x = &o->inst[i];

		ret = check_inst(o, x, i, err, errlen);
		if (ret)
			return ret;
		inst[i] = x->m;
		st.running[i] = x->running;
		st.consumed[i] = x->running ? x->consumed : 0;
		/* a planned start that is overdue is taken as now */
		on->delta[i] = x->running ? 0 : fmax(0, x->start - o->now);
	}
	inst[o->n] = o->newcomer;
	on->o = o;
	on->n = o->n + 1;
	ret = model_new(&o->sys, inst, on->n, &on->m, err, errlen);
	if (ret)
		return ret;
	if (st.resident > o->sys.dataset)
		st.resident = o->sys.dataset;	/* measured with the page rounding */
	ret = model_set_start(on->m, &st);
	if (ret) {
		snprintf(err, errlen, "bad start state (resident or consumed bytes)");
		model_free(on->m);
		on->m = NULL;
	}
	return ret;
}

static int online_at(struct online *on, double x, struct model_result *res)
{
	on->delta[on->n - 1] = x;
	on->evals++;
	return model_eval(on->m, on->delta, res);
}

static void online_fill(const struct online *on, const struct model_result *res,
			struct mo_online_result *r)
{
	r->makespan = on->o->now + res->makespan;
	for (int i = 0; i < on->n; i++)
		r->end[i] = on->o->now + res->inst[i].end;
	r->evals = on->evals;
}

int mo_online_eval(const struct mo_online *o, double release, struct mo_online_result *r,
		   char *err, size_t errlen)
{
	struct model_result res;
	struct online on;
	int ret;

	if (!(release >= 0) || !isfinite(release))
		return snprintf(err, errlen, "release must be >= 0"), -EINVAL;
	memset(r, 0, sizeof(*r));
	ret = online_new(o, &on, err, errlen);
	if (ret)
		return ret;
	ret = online_at(&on, 0, &res);
	r->makespan_now = o->now + res.makespan;
	if (!ret)
		ret = online_at(&on, release, &res);
	if (!ret) {
		r->release = release;
		online_fill(&on, &res, r);
	}
	model_free(on.m);
	return ret;
}

/* grid over [lo, hi] with step, keeping the best x (ties: the earlier) */
static int online_grid(struct online *on, double lo, double hi, double step, double horizon,
		       double *best_x, double *best_m)
{
	struct model_result res;
	int ret;

	for (double x = fmax(lo, 0); x <= fmin(hi, horizon) + step * 1e-6; x += step) {
		ret = online_at(on, x, &res);
		if (ret)
			return ret;
		if (res.makespan < *best_m - 1e-9 * fmax(*best_m, 1e-9) ||
		    (res.makespan <= *best_m + 1e-9 * fmax(*best_m, 1e-9) && x < *best_x)) {
			*best_m = res.makespan;
			*best_x = x;
		}
	}
	return 0;
}

int mo_online_best(const struct mo_online *o, const struct model_search *opt, double min_gain,
		   struct mo_online_result *r, char *err, size_t errlen)
{
	unsigned grid = opt && opt->grid ? opt->grid : 24;
	double tol = opt && opt->tol > 0 ? opt->tol : 0;
	double m_now, best_m, best_x = 0, horizon, step, lo;
	struct model_result res;
	struct online on;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = online_new(o, &on, err, errlen);
	if (ret)
		return ret;
	ret = online_at(&on, 0, &res);
	if (ret)
		goto free_model;
	m_now = best_m = res.makespan;
	/* released at M(0) or later, M >= that release > M(0) */
	horizon = o->latest > 0 ? fmin(m_now, o->latest) : m_now;
	grid = grid < 4 ? 4 : grid;
	if (!(tol > 0))
		tol = model_default_tol(horizon);
	step = horizon / grid;
	lo = 0;
	while (horizon > 0 && step >= tol / 4) {
		ret = online_grid(&on, lo, lo + grid * step, step, horizon, &best_x, &best_m);
		if (ret)
			goto free_model;
		/* refine around the best point: 8 steps of a quarter */
		lo = best_x - step;
		step /= 4;
		grid = 8;
	}
	r->makespan_now = o->now + m_now;
	r->gain = m_now > 0 ? (m_now - best_m) / m_now : 0;
	r->together = r->gain < min_gain;
	r->release = r->together ? 0 : best_x;
	ret = online_at(&on, r->release, &res);
	if (!ret)
		online_fill(&on, &res, r);
free_model:
	model_free(on.m);
	return ret;
}
