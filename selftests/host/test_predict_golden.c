// SPDX-License-Identifier: GPL-2.0
/*
 * Golden test of the predictor's encoder and regressor: graph vectors and
 * predictions of fixed weights on real graphs must match a PyTorch
 * implementation of the same equations (predictor/tools/ghn_ref.py, whose
 * output is committed in predictor/data/golden/), to 1e-5 relative.
 * Then the CUDA backend must match the CPU one (skipped without a GPU).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "tandem_predict.h"

#define GOLDEN "predictor/data/golden/"
#define MAXD 256

struct expect {
	char graph[64];
	bool is_pred;
	double v[MAXD];		/* graph vector, or {batch, gpus, nodes, log t} */
	int n;
};

static int read_expected(struct expect *e, int max)
{
	FILE *f = fopen(GOLDEN "expected.txt", "r");
	char line[8192], kind[16];
	int n = 0;

	if (!f)
		return -1;
	while (n < max && fgets(line, sizeof(line), f)) {
		char *p = line;
		int used;

		if (line[0] == '#' || sscanf(p, "%15s %63s%n", kind, e[n].graph, &used) != 2)
			continue;
		e[n].is_pred = !strcmp(kind, "pred");
		e[n].n = 0;
		p += used;
		while (e[n].n < MAXD && sscanf(p, "%lf%n", &e[n].v[e[n].n], &used) == 1) {
			e[n].n++;
			p += used;
		}
		n++;
	}
	fclose(f);
	return n;
}

/* max |a - b| / max |b| */
static double rel_err(const float *a, const double *b, int n)
{
	double num = 0, den = 0;

	for (int i = 0; i < n; i++) {
		num = fmax(num, fabs(a[i] - b[i]));
		den = fmax(den, fabs(b[i]));
	}
	return num / den;
}

FIXTURE(golden) {
	struct tp_model *m;
	struct expect e[64];
	int n;
	struct tp_model_config cfg;
};

FIXTURE_SETUP(golden)
{
	ASSERT_EQ(0, tp_model_load(GOLDEN "model.tpm", &self->m)) TH_LOG("%s", tp_errmsg());
	ASSERT_EQ(0, tp_model_set_backend(self->m, TP_BACKEND_CPU));
	self->n = read_expected(self->e, 64);
	ASSERT_GE(self->n, 12) TH_LOG("expected.txt missing or short");
	tp_model_get_config(self->m, &self->cfg);
}

FIXTURE_TEARDOWN(golden)
{
	tp_model_free(self->m);
}

static struct tp_graph *load(struct __test_metadata *_metadata, const char *name)
{
	char path[256];
	struct tp_graph *g = NULL;

	snprintf(path, sizeof(path), GOLDEN "%s", name);
	EXPECT_EQ(0, tp_graph_load_text(path, &g)) TH_LOG("%s: %s", path, tp_errmsg());
	return g;
}

TEST_F(golden, graph_vectors_match_pytorch)
{
	float vec[MAXD];
	int graphs = 0;

	for (int i = 0; i < self->n; i++) {
		struct tp_graph *g;
		double err;

		if (self->e[i].is_pred)
			continue;
		ASSERT_EQ(self->cfg.hid, self->e[i].n);
		g = load(_metadata, self->e[i].graph);
		ASSERT_NE(NULL, g);
		ASSERT_EQ(0, tp_embed(self->m, g, vec));
		err = rel_err(vec, self->e[i].v, self->e[i].n);
		EXPECT_LE(err, 1e-5) TH_LOG("%s: relative error %.3g", self->e[i].graph, err);
		TH_LOG("%s: %d nodes, relative error %.2g", self->e[i].graph,
		       tp_graph_num_nodes(g), err);
		tp_graph_free(g);
		graphs++;
	}
	EXPECT_GE(graphs, 3);
}

TEST_F(golden, predictions_match_pytorch)
{
	for (int i = 0; i < self->n; i++) {
		struct tp_prediction p;
		struct tp_job job;
		struct tp_graph *g;
		double lt;

		if (!self->e[i].is_pred)
			continue;
		ASSERT_EQ(4, self->e[i].n);
		g = load(_metadata, self->e[i].graph);
		ASSERT_NE(NULL, g);
		tp_job_default(&job);
		job.batch = self->e[i].v[0];
		job.gpus = (int)self->e[i].v[1];
		job.nodes = (int)self->e[i].v[2];
		ASSERT_EQ(0, tp_predict(self->m, g, &job, &p)) TH_LOG("%s", tp_errmsg());
		lt = log(p.compute_s);
		EXPECT_LE(fabs(lt - self->e[i].v[3]), 1e-5 * fmax(1, fabs(self->e[i].v[3])))
			TH_LOG("%s batch %g: %.9g vs %.9g", self->e[i].graph, job.batch, lt,
			       self->e[i].v[3]);
		tp_graph_free(g);
	}
}

/* A graph vector changes when the graph does: the test above is not
 * passing on a constant. */
TEST_F(golden, vectors_differ_between_graphs)
{
	int a = -1, b = -1;

	for (int i = 0; i < self->n; i++)
		if (!self->e[i].is_pred)
			a < 0 ? (a = i) : (b = b < 0 ? i : b);
	ASSERT_GE(b, 0);
	EXPECT_GT(fabs(self->e[a].v[0] - self->e[b].v[0]) + fabs(self->e[a].v[1] - self->e[b].v[1]),
		  1e-3);
}

TEST_F(golden, cuda_matches_cpu)
{
	float cpu[MAXD], gpu[MAXD];
	double ref[MAXD];

	if (!tp_cuda_available())
		SKIP(return, "no usable GPU (CUDA backend not exercised)");
	for (int i = 0; i < self->n; i++) {
		struct tp_prediction pc, pg;
		struct tp_job job;
		struct tp_graph *g;

		if (self->e[i].is_pred)
			continue;
		g = load(_metadata, self->e[i].graph);
		ASSERT_NE(NULL, g);
		ASSERT_EQ(0, tp_model_set_backend(self->m, TP_BACKEND_CPU));
		ASSERT_EQ(0, tp_embed(self->m, g, cpu));
		tp_job_default(&job);
		job.batch = 16;
		ASSERT_EQ(0, tp_predict(self->m, g, &job, &pc));
		ASSERT_EQ(0, tp_model_set_backend(self->m, TP_BACKEND_CUDA));
		ASSERT_EQ(0, tp_embed(self->m, g, gpu)) TH_LOG("%s", tp_errmsg());
		ASSERT_EQ(0, tp_predict(self->m, g, &job, &pg)) TH_LOG("%s", tp_errmsg());
		for (int j = 0; j < self->cfg.hid; j++)
			ref[j] = cpu[j];
		EXPECT_LE(rel_err(gpu, ref, self->cfg.hid), 1e-5);
		EXPECT_LE(fabs(log(pg.compute_s) - log(pc.compute_s)), 1e-5);
		tp_graph_free(g);
	}
}

TEST_HARNESS_MAIN
