// SPDX-License-Identifier: GPL-2.0
/*
 * Search for the release vector that minimises the predicted makespan.
 *
 * M(delta) is piecewise smooth but not unimodal (a follower that just
 * catches its leader and one that just misses it differ by a step), so
 * every search starts from a coarse grid and refines around the best point.
 * Ties go to the smaller total stagger: when waiting buys nothing the user
 * should be told to start together.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "model/model.h"

struct search {
	struct model *m;
	int n;
	unsigned evals, max_evals;
	double best_m;
	double best[MODEL_MAX_INST];
};

static double stagger_sum(const double *d, int n)
{
	double s = 0;

	for (int i = 0; i < n; i++)
		s += d[i];
	return s;
}

/*
 * Evaluate d; keep it when better, or as good with less total stagger. The
 * simulation stops once it is certain that d is not better (the bound: the
 * incumbent, less the tie margin unless d staggers less), so the choice is
 * what a full simulation of every point would make.
 */
static int try_point(struct search *s, const double *d, bool *better)
{
	struct model_result res;
	double tie, bound;
	bool less;
	int err;

	*better = false;
	if (s->evals >= s->max_evals)
		return 0;
	s->evals++;
	tie = isfinite(s->best_m) ? 1e-9 * fmax(s->best_m, 1e-9) : 0;
	less = stagger_sum(d, s->n) < stagger_sum(s->best, s->n) - 1e-12;
	bound = less ? s->best_m + tie : s->best_m - tie;
	err = model_eval_bound(s->m, d, bound, &res);
	if (err)
		return err < 0 ? err : 0;
	if (res.makespan < s->best_m - tie || (res.makespan <= s->best_m + tie && less)) {
		s->best_m = res.makespan;
		memcpy(s->best, d, s->n * sizeof(*d));
		*better = true;
	}
	return 0;
}

/* N = 2 on one axis: x >= 0 delays instance 1, x < 0 delays instance 0. */
static int search_two(struct search *s, double horizon, unsigned grid, double tol)
{
	double lo = -horizon, hi = horizon, step = 2 * horizon / grid;
	bool better;
	int err;

	while (step >= tol / 4 && s->evals < s->max_evals) {
		double centre;

		for (double x = lo; x <= hi + step * 1e-6; x += step) {
			double d[2] = { x < 0 ? -x : 0, x > 0 ? x : 0 };

			err = try_point(s, d, &better);
			if (err)
				return err;
		}
		centre = s->best[1] > 0 ? s->best[1] : -s->best[0];
		lo = centre - step;
		hi = centre + step;
		step /= 4;
	}
	return 0;
}

/* Start for N > 2: instance k released at k * u, the best u on a grid. */
static int search_uniform(struct search *s, double horizon, unsigned grid)
{
	double d[MODEL_MAX_INST];
	bool better;
	int err;

	for (unsigned g = 0; g <= grid; g++) {
		double u = horizon * g / grid;

		for (int i = 0; i < s->n; i++)
			d[i] = u * i;
		err = try_point(s, d, &better);
		if (err)
			return err;
	}
	return 0;
}

/* One pass of coordinate moves of +-j*h, j = 1..span; true if any helped. */
static int coord_pass(struct search *s, double h, int span, double upper, bool *improved)
{
	double d[MODEL_MAX_INST];
	bool better;
	int err;

	*improved = false;
	for (int i = 0; i < s->n; i++) {
		double base = s->best[i];

		for (int j = -span; j <= span; j++) {
			double v = base + j * h;

			if (!j || v < 0 || v > upper)
				continue;
			memcpy(d, s->best, s->n * sizeof(*d));
			d[i] = v;
			err = try_point(s, d, &better);
			if (err)
				return err;
			*improved |= better;
		}
	}
	return 0;
}

static int search_coord(struct search *s, double horizon, double upper,
			unsigned grid, double tol)
{
	double h = 2 * horizon / grid;
	int span = grid / 4;
	bool improved;
	int err;

	err = search_uniform(s, horizon, grid);
	while (!err && h >= tol && s->evals < s->max_evals) {
		err = coord_pass(s, h, span, upper, &improved);
		if (!improved) {
			h /= 2;
			span = 2;
		}
	}
	return err;
}

/*
 * The step below which the search stops refining, unless the caller gives
 * one: 0.05 s, or a thousandth of the longest solo time when that is more
 * (on an ImageNet-sized dataset, hours: refining a release to 0.05 s there
 * cost 8 instances 779 simulations, 1.8 s of CPU, for nothing the model's
 * own error of a few percent could tell apart).
 */
double model_default_tol(double horizon)
{
	return fmax(0.05, horizon * 1e-3);
}

int model_best(struct model *m, const struct model_search *opt,
	       double *delta, double *makespan, unsigned *evals)
{
	struct search s = { .m = m, .n = model_ninst(m), .best_m = INFINITY };
	unsigned grid = opt && opt->grid ? opt->grid : 24;
	double tol = opt && opt->tol > 0 ? opt->tol : 0;
	double horizon = 0, total = 0, shift = INFINITY;
	struct model_result res;
	int err = 0;

	s.max_evals = opt && opt->max_evals ? opt->max_evals : 4000;
	for (int i = 0; i < s.n; i++) {
		double t;

		err = model_solo(m, i, &t);
		if (err)
			return err;
		horizon = fmax(horizon, t);
		total += t;
		s.best[i] = 0;
	}
	if (grid < 4)
		grid = 4;
	if (!(tol > 0))
		tol = model_default_tol(horizon);
	if (s.n == 2 && horizon > 0)
		err = search_two(&s, horizon, grid, tol);
	else if (s.n > 2 && horizon > 0)
		err = search_coord(&s, horizon, total, grid, tol);
	if (err)
		return err;
	/* starting later than necessary only adds to M */
	for (int i = 0; i < s.n; i++)
		shift = fmin(shift, s.best[i]);
	for (int i = 0; i < s.n; i++)
		delta[i] = s.best[i] - shift;
	err = model_eval(m, delta, &res);
	if (err)
		return err;
	*makespan = res.makespan;
	if (evals)
		*evals = s.evals + 1;
	return 0;
}
