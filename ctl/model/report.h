/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Evaluating the model for the CLI (`model`, `run --stagger auto`): solo
 * times, M over a grid of uniform staggers, the searched best vector, and
 * their text/JSON output and gnuplot plot.
 */
#ifndef TANDEM_CTL_MODEL_OUT_H
#define TANDEM_CTL_MODEL_OUT_H

#include <stdbool.h>

#include "model/model.h"
#include "model/profile.h"

/*
 * Staggering must gain at least this fraction of M(0) before it is advised:
 * the model's error against measured runs is of this order.
 */
#define MO_MIN_GAIN 0.02

struct mo_report {
	int n;
	double solo[MODEL_MAX_INST];	/* each instance alone, cold cache */
	/* grid: x >= 0 releases instance k at k*x, x < 0 in reverse order */
	double *xs;
	int nx;
	double *mk;			/* M at each x */
	double *ends;			/* nx * n instance ends */
	/* search */
	bool searched;
	double best[MODEL_MAX_INST];	/* release vector minimising M */
	double best_m, m0;		/* M(best), M(0) */
	double gain;			/* (m0 - best_m) / m0 */
	bool together;			/* gain below the threshold: start together */
	double chosen[MODEL_MAX_INST];	/* what to apply: best, or zeros */
	double chosen_m;
	struct model_result chosen_res;
	unsigned evals;
	double search_ms, search_cpu_ms;
};

void mo_grid_delta(double x, int n, double *delta);
double mo_nice_step(double raw);
int mo_solo_all(struct model *m, struct mo_report *r, double *horizon);
int mo_eval_grid(struct model *m, struct mo_report *r);
/* model_best(), then the advice: stagger only when it gains >= min_gain */
int mo_search(struct model *m, struct mo_report *r, unsigned grid, double min_gain);
/* alt (may be NULL): the same search without CXL steering, model alt_m */
void mo_print(const struct model *m, const struct profile *p, const struct mo_report *r,
	      const struct model *alt_m, const struct mo_report *alt);
/* gnuplot: M over the grid, the best point, and measured "x,M" points */
int mo_plot(const char *path, const char *measured, const struct model *m,
	    const struct mo_report *r);
void mo_report_free(struct mo_report *r);

#endif
