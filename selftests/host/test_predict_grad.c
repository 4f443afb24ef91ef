// SPDX-License-Identifier: GPL-2.0
/*
 * Finite-difference gradient checks of the predictor's backward passes:
 * every parameter tensor of encoder and regressor, through the same path
 * training uses (encoder -> graph vector -> regressor -> squared error).
 * Central differences in float32; each tensor is compared on its entries
 * with the largest analytic gradients plus a few random ones, by the
 * relative norm of the difference.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "ghn.h"

/* Two small graphs with branches, a join and chains long enough for
 * virtual edges at distances 2..5. */
static const char *const graphs[] = {
	"tandem-graph 1\nstats 1000 20000 3000\n"
	"node 0 input 0 0 0 0\nnode 1 conv 16 3 3 3 <- 0\nnode 2 bn 16 0 0 0 <- 1\n"
	"node 3 sep_conv 16 1 3 3 <- 2\nnode 4 dil_conv 16 1 5 5 <- 2\n"
	"node 5 sum 0 0 0 0 <- 3 4\nnode 6 max_pool 0 0 0 0 <- 5\n"
	"node 7 glob_avg 0 0 0 0 <- 6\nnode 8 conv 10 16 0 0 <- 7\nnode 9 bias 10 0 0 0 <- 8\n",
	"tandem-graph 1\nstats 5000 90000 7000\n"
	"node 0 input 0 0 0 0\nnode 1 conv 32 3 7 7 <- 0\nnode 2 ln 32 0 0 0 <- 1\n"
	"node 3 msa 0 0 0 0 <- 2\nnode 4 pos_enc 17 32 0 0 <- 3\nnode 5 concat 0 0 0 0 <- 2 4\n"
	"node 6 cse 32 0 0 0 <- 5\nnode 7 avg_pool 0 0 0 0 <- 6\n",
};
#define NG 2
#define NROWS 3

struct problem {
	struct tp_model *m;
	struct tp_graph *g[NG];
	double raw[NG][NROWS][TP_MAX_FEATS];
	double y[NG][NROWS];
};

/* L = sum over graphs and rows of (out - y)^2 / 2; grads when backward */
static double loss(struct problem *p, bool backward)
{
	struct tp_reg_acts *ra = calloc(1, sizeof(*ra));
	double total = 0;

	for (int k = 0; k < NG; k++) {
		float dx[256 + TP_MAX_FEATS], dg[256] = { 0 };
		struct tp_acts a;

		if (tp_acts_alloc(p->g[k]->n, p->m->cfg.hid, &a))
			abort();
		tp_ghn_forward(p->m, p->g[k], &a);
		for (int r = 0; r < NROWS; r++) {
			double e;

			tp_reg_input(p->m, a.gvec, p->raw[k][r], ra->x);
			e = tp_reg_forward(p->m, ra) - p->y[k][r];
			total += 0.5 * e * e;
			if (!backward)
				continue;
			memset(dx, 0, sizeof(dx));
			tp_reg_backward(p->m, ra, (float)e, dx);
			for (int j = 0; j < p->m->cfg.hid; j++)
				dg[j] += dx[j];
		}
		if (backward && tp_ghn_backward(p->m, p->g[k], &a, dg))
			abort();
		tp_acts_free(&a);
	}
	free(ra);
	return total;
}

static int setup(struct problem *p, int hid)
{
	struct tp_model_config cfg;
	struct tp_rng r;

	tp_model_config_default(&cfg);
	/* text graphs carry no input resolution (its feature would be a constant
	 * column of reg_w1, the same code as the others): the set the finite
	 * differences were tuned on, whose draw of weights keeps them off ReLU kinks */
	cfg.features = TP_FEAT_JOB | TP_FEAT_STATS;
	cfg.hid = hid;
	cfg.reg_hidden = 12;
	if (tp_model_new(&cfg, 42, &p->m))
		return -1;
	for (int k = 0; k < NG; k++)
		if (tp_graph_parse_text(graphs[k], &p->g[k]))
			return -1;
	tp_rng_seed(&r, 3);
	/* non-trivial LayerNorm and normalisation so their gradients matter */
	for (int j = 0; j < hid; j++) {
		p->m->p[P_LN_G][j] = (float)(1 + 0.3 * tp_rng_normal(&r));
		p->m->p[P_LN_B][j] = (float)(0.2 * tp_rng_normal(&r));
	}
	for (int f = 0; f < p->m->nfeat; f++) {
		p->m->feat_mean[f] = (float)tp_rng_normal(&r);
		p->m->feat_std[f] = (float)(0.5 + tp_rng_uniform(&r));
	}
	for (int k = 0; k < NG; k++)
		for (int row = 0; row < NROWS; row++) {
			tp_raw_features(p->m, p->g[k], 1 << (2 * row), 1 + row, 1, NULL, p->raw[k][row]);
			p->y[k][row] = tp_rng_normal(&r);
		}
	return 0;
}

static void teardown(struct problem *p)
{
	for (int k = 0; k < NG; k++)
		tp_graph_free(p->g[k]);
	tp_model_free(p->m);
}

/* Relative error between analytic and numerical gradients of tensor t. */
static double check_tensor(struct problem *p, int t, int *checked)
{
	float *w = p->m->p[t], *g = p->m->g[t];
	size_t n = p->m->size[t], idx[24];
	double num2 = 0, diff2 = 0, an2 = 0;
	struct tp_rng r;
	int k = 0;

	tp_rng_seed(&r, (uint64_t)t);
	for (int pick = 0; pick < 16 && pick < (int)n; pick++) {	/* largest |grad| */
		size_t best = 0;
		bool found = false;

		for (size_t i = 0; i < n; i++) {
			bool used = false;

			for (int q = 0; q < k; q++)
				used |= idx[q] == i;
			if (!used && (!found || fabsf(g[i]) > fabsf(g[best])))
				best = i, found = true;
		}
		idx[k++] = best;
	}
	while (k < 24 && (size_t)k < n)
		idx[k++] = tp_rng_u64(&r) % n;
	for (int q = 0; q < k; q++) {
		float save = w[idx[q]], h = 2e-3f * fmaxf(1.0f, fabsf(save));
		double lp, lm, fd;

		w[idx[q]] = save + h;
		lp = loss(p, false);
		w[idx[q]] = save - h;
		lm = loss(p, false);
		w[idx[q]] = save;
		fd = (lp - lm) / (2.0 * h);
		num2 += fd * fd;
		an2 += (double)g[idx[q]] * g[idx[q]];
		diff2 += (fd - g[idx[q]]) * (fd - g[idx[q]]);
	}
	*checked = k;
	return sqrt(diff2) / fmax(sqrt(fmax(num2, an2)), 1e-6);
}

TEST(every_parameter_tensor)
{
	struct problem p = { 0 };
	int nonzero = 0;

	ASSERT_EQ(0, setup(&p, 8)) TH_LOG("%s", tp_errmsg());
	tp_model_zero_grads(p.m);
	loss(&p, true);
	for (int t = 0; t < P_NUM; t++) {
		double norm = 0, err;
		int checked;

		for (size_t i = 0; i < p.m->size[t]; i++)
			norm += fabsf(p.m->g[t][i]);
		nonzero += norm > 0;
		err = check_tensor(&p, t, &checked);
		EXPECT_LT(err, 2e-2) TH_LOG("%s: relative error %.3g", tp_param_name(t), err);
		TH_LOG("%-9s %6zu elements, %2d checked, |grad|_1 %.3g, rel err %.2g",
		       tp_param_name(t), p.m->size[t], checked, norm, err);
	}
	/* every tensor takes part: an all-zero gradient would pass vacuously */
	EXPECT_EQ(P_NUM, nonzero);
	teardown(&p);
}

/* The check itself can fail: a wrong gradient is caught. */
TEST(a_wrong_gradient_is_caught)
{
	struct problem p = { 0 };
	int checked;

	ASSERT_EQ(0, setup(&p, 8));
	tp_model_zero_grads(p.m);
	loss(&p, true);
	for (size_t i = 0; i < p.m->size[P_GRU_WHH]; i++)
		p.m->g[P_GRU_WHH][i] *= 1.1f;
	EXPECT_GT(check_tensor(&p, P_GRU_WHH, &checked), 5e-2);
	teardown(&p);
}

TEST_HARNESS_MAIN
