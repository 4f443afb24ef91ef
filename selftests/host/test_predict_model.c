// SPDX-License-Identifier: GPL-2.0
/*
 * Predictor model file (round trip, truncation, corruption, versions; the
 * version 1 and 2 files of earlier releases predict what their tandemctl
 * printed), NNLS against brute force, Ernest on exact data, the all-reduce
 * formula, training on a synthetic target the features can explain, the
 * cost baseline on times made of its own terms, each out-of-distribution
 * warning, and which model a prediction uses.
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "internal.h"
#include "runs.h"
#include "ghn.h"

/* A new empty file /tmp/tandem-predict-XXXXXX<suffix>, its name in path[n]. */
static char *tmpname(char *path, size_t n, const char *suffix)
{
	int fd;

	snprintf(path, n, "/tmp/tandem-predict-XXXXXX%s", suffix);
	fd = mkstemps(path, (int)strlen(suffix));
	if (fd >= 0)
		close(fd);
	return path;
}

static int write_bytes(const char *path, const uint8_t *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	int ok = f && fwrite(buf, 1, len, f) == len;

	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

FIXTURE(file) {
	struct tp_model *m;
	char path[128];
	uint8_t *buf;
	size_t len;
};

FIXTURE_SETUP(file)
{
	struct tp_model_config cfg;

	tp_model_config_default(&cfg);
	cfg.hid = 8;
	cfg.reg_hidden = 8;
	ASSERT_EQ(0, tp_model_new(&cfg, 5, &self->m));
	tmpname(self->path, sizeof(self->path), ".tpm");
	ASSERT_EQ(0, tp_model_save(self->m, self->path)) TH_LOG("%s", tp_errmsg());
	ASSERT_EQ(0, tp_read_file(self->path, 1 << 24, &self->buf, &self->len));
}

FIXTURE_TEARDOWN(file)
{
	unlink(self->path);
	free(self->buf);
	tp_model_free(self->m);
}

TEST_F(file, round_trip_predicts_the_same)
{
	struct tp_prediction a, b;
	struct tp_model *m2;
	struct tp_graph *g;
	struct tp_job job;

	ASSERT_EQ(0, tp_model_load(self->path, &m2)) TH_LOG("%s", tp_errmsg());
	ASSERT_EQ(0, tp_graph_load_onnx("predictor/data/onnx/resnet18.onnx", &g));
	tp_job_default(&job);
	job.batch = 4;
	ASSERT_EQ(0, tp_predict(self->m, g, &job, &a));
	ASSERT_EQ(0, tp_predict(m2, g, &job, &b));
	EXPECT_EQ(a.compute_s, b.compute_s);
	EXPECT_EQ(tp_model_num_params(self->m), tp_model_num_params(m2));
	tp_graph_free(g);
	tp_model_free(m2);
}

TEST_F(file, truncated_is_an_error)
{
	size_t cuts[] = { 0, 5, 8, 100, 287, 300, self->len / 2, self->len - 1 };
	struct tp_model *m2 = NULL;

	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		EXPECT_EQ(-EBADMSG, tp_model_load_mem(self->buf, cuts[i], &m2))
			TH_LOG("cut %zu", cuts[i]);
		EXPECT_TRUE(strstr(tp_errmsg(), "truncated") || strstr(tp_errmsg(), "magic"))
			TH_LOG("cut %zu: %s", cuts[i], tp_errmsg());
	}
	EXPECT_NE(NULL, strstr(tp_errmsg(), "truncated"));
}

TEST_F(file, corrupt_is_an_error)
{
	struct tp_model *m2 = NULL;
	uint8_t *copy = malloc(self->len + 1);

	ASSERT_NE(NULL, copy);
	memcpy(copy, self->buf, self->len);
	copy[self->len / 2] ^= 0x40;	/* one bit in the parameters */
	EXPECT_EQ(-EBADMSG, tp_model_load_mem(copy, self->len, &m2));
	EXPECT_NE(NULL, strstr(tp_errmsg(), "checksum")) TH_LOG("%s", tp_errmsg());
	copy[self->len / 2] ^= 0x40;
	copy[self->len] = 0;	/* one byte too many */
	EXPECT_EQ(-EBADMSG, tp_model_load_mem(copy, self->len + 1, &m2));
	EXPECT_NE(NULL, strstr(tp_errmsg(), "trailing"));
	copy[0] = 'X';
	EXPECT_EQ(-EBADMSG, tp_model_load_mem(copy, self->len, &m2));
	EXPECT_NE(NULL, strstr(tp_errmsg(), "magic"));
	copy[0] = 'T';
	copy[8] = 5;	/* a version from the future */
	EXPECT_EQ(-EPROTONOSUPPORT, tp_model_load_mem(copy, self->len, &m2));
	EXPECT_NE(NULL, strstr(tp_errmsg(), "version 5")) TH_LOG("%s", tp_errmsg());
	EXPECT_NE(NULL, strstr(tp_errmsg(), "retrain")) TH_LOG("%s", tp_errmsg());
	copy[8] = 1;	/* version 1 cannot have the resolution feature */
	EXPECT_EQ(-EBADMSG, tp_model_load_mem(copy, self->len, &m2));
	EXPECT_NE(NULL, strstr(tp_errmsg(), "version 1")) TH_LOG("%s", tp_errmsg());
	copy[8] = 3;
	copy[12] = 0xff, copy[13] = 0x7f;	/* absurd encoder width */
	EXPECT_EQ(-EINVAL, tp_model_load_mem(copy, self->len, &m2));
	EXPECT_NE(NULL, strstr(tp_errmsg(), "encoder width")) TH_LOG("%s", tp_errmsg());
	free(copy);
	/* and through the file path, which names the file */
	ASSERT_EQ(0, write_bytes(self->path, self->buf, self->len - 10));
	EXPECT_EQ(-EBADMSG, tp_model_load(self->path, &m2));
	EXPECT_NE(NULL, strstr(tp_errmsg(), self->path));
}

/* predictor/data/compat/default_v1.tpm is the previous release's built-in
 * model (version 1); the numbers are what its tandemctl -j predict printed
 * (compute_s) for these graphs and batch sizes. */
TEST(version1_file_is_read_and_predicts_as_before)
{
	static const struct { const char *graph; double batch, compute_s; } ref[] = {
		{ "predictor/data/onnx/resnet18.onnx", 8, 0.14750652725565799 },
		{ "predictor/data/onnx/mobilenet_v2.onnx", 16, 0.13044461043846764 },
	};
	char warn[8][TP_WARN_LEN];
	struct tp_model *m;
	struct tp_job job;

	ASSERT_EQ(0, tp_model_load("predictor/data/compat/default_v1.tpm", &m))
		TH_LOG("%s", tp_errmsg());
	EXPECT_EQ(1, tp_model_file_version(m));
	ASSERT_EQ(0, tp_model_set_backend(m, TP_BACKEND_CPU));
	for (size_t i = 0; i < sizeof(ref) / sizeof(ref[0]); i++) {
		struct tp_prediction p;
		struct tp_graph *g;

		ASSERT_EQ(0, tp_graph_load_onnx(ref[i].graph, &g));
		tp_job_default(&job);
		job.batch = ref[i].batch;
		ASSERT_EQ(0, tp_predict(m, g, &job, &p));
		EXPECT_LE(fabs(p.compute_s - ref[i].compute_s), 1e-6 * ref[i].compute_s)
			TH_LOG("%s: %.17g", ref[i].graph, p.compute_s);
		/* it knows no training range: one warning saying so */
		ASSERT_EQ(1, tp_ood_warnings(m, g, &job, warn, 8));
		EXPECT_NE(NULL, strstr(warn[0], "version 1")) TH_LOG("%s", warn[0]);
		tp_graph_free(g);
	}
	tp_model_free(m);
}

/* ---- out-of-distribution warnings: a model trained on four 32x32 graphs
 * of one device, each trigger against a graph or job outside them ---- */

FIXTURE(ood) {
	struct tp_model *m;
	struct tp_job job;
	struct tp_device dev;
	char warn[8][TP_WARN_LEN];
};

FIXTURE_SETUP(ood)
{
	static const char *const archs[] = { "resnet18", "darts002", "mobilenet_v3_small",
					     "vgg11_gap" };
	struct tp_model_config cfg;
	struct tp_train_opts o;
	struct tp_dataset *d;
	char csv[128];
	FILE *f = fopen(tmpname(csv, sizeof(csv), ".csv"), "w");

	ASSERT_NE(NULL, f);
	fprintf(f, "# device: Test CPU; units 1; clock_ghz 2; mem_bw_gbs 0\n"
		"arch,onnx,batch,gpus,nodes,time_median_s\n");
	for (size_t a = 0; a < sizeof(archs) / sizeof(archs[0]); a++)
		for (int b = 2; b <= 8; b *= 2)
			fprintf(f, "%s,%s/predictor/data/onnx/%s.onnx,%d,1,1,%g\n", archs[a],
				getenv("PWD") ? getenv("PWD") : ".", archs[a], b, 0.01 * b);
	fclose(f);
	ASSERT_EQ(0, tp_dataset_load(csv, &d)) TH_LOG("%s", tp_errmsg());
	unlink(csv);
	tp_model_config_default(&cfg);
	cfg.hid = 8;
	cfg.reg_hidden = 8;
	tp_train_opts_default(&o);
	o.epochs = 1;
	ASSERT_EQ(0, tp_model_new(&cfg, 1, &self->m));
	ASSERT_EQ(0, tp_train(self->m, d, NULL, &o, NULL)) TH_LOG("%s", tp_errmsg());
	tp_dataset_free(d);
	tp_job_default(&self->job);
	self->job.batch = 4;
	memset(&self->dev, 0, sizeof(self->dev));
	snprintf(self->dev.name, sizeof(self->dev.name), "Test CPU");
	self->job.dev = &self->dev;
}

FIXTURE_TEARDOWN(ood)
{
	tp_model_free(self->m);
}

/* the warnings of graph `path` for the fixture's job; 1 when one contains `what` */
static int ood_has(struct __test_metadata *_metadata, FIXTURE_DATA(ood) *self,
		   const char *path, const char *what)
{
	struct tp_graph *g;
	int n, hit = 0;

	if (tp_graph_load_onnx(path, &g)) {
		TH_LOG("%s", tp_errmsg());
		return -1;
	}
	n = tp_ood_warnings(self->m, g, &self->job, self->warn, 8);
	for (int i = 0; i < n; i++) {
		TH_LOG("%s: %s", path, self->warn[i]);
		hit |= what && strstr(self->warn[i], what) != NULL;
	}
	tp_graph_free(g);
	return what ? hit : n;
}

#define ONNX32 "predictor/data/onnx/"

TEST_F(ood, in_distribution_has_no_warning)
{
	EXPECT_EQ(0, ood_has(_metadata, self, ONNX32 "resnet18.onnx", NULL));
	EXPECT_EQ(0, ood_has(_metadata, self, ONNX32 "darts002.onnx", NULL));
}

TEST_F(ood, resolution)
{
	/* the tiny 64x64 graph: a resolution the model never saw */
	EXPECT_EQ(1, ood_has(_metadata, self, "predictor/data/test/ood_tiny.onnx",
			     "resolution 64"));
	EXPECT_EQ(0, ood_has(_metadata, self, ONNX32 "resnet18.onnx", "resolution"));
}

TEST_F(ood, flops_range)
{
	EXPECT_EQ(1, ood_has(_metadata, self, "predictor/data/test/ood_tiny.onnx", "FLOPs"));
	/* VGG-16-BN at 32x32: 6.6e8 FLOPs, twice VGG-11 (the largest trained) */
	EXPECT_EQ(1, ood_has(_metadata, self, ONNX32 "vgg16_bn_gap.onnx", "FLOPs"));
}

TEST_F(ood, parameter_range)
{
	EXPECT_EQ(1, ood_has(_metadata, self, "predictor/data/test/ood_tiny.onnx", "parameters"));
	EXPECT_EQ(1, ood_has(_metadata, self, ONNX32 "wide_resnet50_2.onnx", "parameters"));
}

TEST_F(ood, op_type_never_seen)
{
	/* Resize (the Upsample) and LayerNormalization are in none of the four */
	EXPECT_EQ(1, ood_has(_metadata, self, "predictor/data/test/ood_tiny.onnx", "Resize"));
	EXPECT_EQ(1, ood_has(_metadata, self, ONNX32 "vit_l4_d128_p8.onnx", "LayerNormalization"));
}

TEST_F(ood, workers_beyond_training)
{
	self->job.gpus = 2;
	EXPECT_EQ(1, ood_has(_metadata, self, ONNX32 "resnet18.onnx", "GPU"));
	self->job.gpus = 1;
	self->job.nodes = 4;
	EXPECT_EQ(1, ood_has(_metadata, self, ONNX32 "resnet18.onnx", "all-reduce"));
}

TEST_F(ood, other_device)
{
	snprintf(self->dev.name, sizeof(self->dev.name), "NVIDIA H100");
	EXPECT_EQ(1, ood_has(_metadata, self, ONNX32 "resnet18.onnx", "not the profiled"));
	self->job.dev = NULL;	/* the model's own device */
	EXPECT_EQ(0, ood_has(_metadata, self, ONNX32 "resnet18.onnx", NULL));
}

TEST_F(ood, range_survives_the_model_file)
{
	char path[128];
	struct tp_model *m2;

	ASSERT_EQ(0, tp_model_save(self->m, tmpname(path, sizeof(path), ".tpm")));
	ASSERT_EQ(0, tp_model_load(path, &m2)) TH_LOG("%s", tp_errmsg());
	unlink(path);
	EXPECT_EQ(4, tp_model_file_version(m2));
	tp_model_free(self->m);
	self->m = m2;	/* freed by the teardown */
	EXPECT_EQ(1, ood_has(_metadata, self, "predictor/data/test/ood_tiny.onnx", "Resize"));
	EXPECT_EQ(1, ood_has(_metadata, self, "predictor/data/test/ood_tiny.onnx", "resolution"));
	EXPECT_EQ(0, ood_has(_metadata, self, ONNX32 "resnet18.onnx", NULL));
}

/* Lawson-Hanson against enumeration of all active sets (the NNLS optimum
 * is the unconstrained LS solution on some subset with all entries >= 0). */
static double ls_subset_resid(const double *a, const double *b, int m, int n, unsigned set,
			      double *x)
{
	double g[4][5] = { { 0 } }, r = 0;
	int idx[4], k = 0;

	for (int j = 0; j < n; j++) {
		x[j] = 0;
		if (set >> j & 1)
			idx[k++] = j;
	}
	for (int p = 0; p < k; p++) {
		for (int q = 0; q < k; q++)
			for (int i = 0; i < m; i++)
				g[p][q] += a[i * n + idx[p]] * a[i * n + idx[q]];
		for (int i = 0; i < m; i++)
			g[p][k] += a[i * n + idx[p]] * b[i];
	}
	for (int c = 0; c < k; c++)	/* Gauss-Jordan, no pivoting: SPD */
		for (int p = 0; p < k; p++) {
			double f = p == c ? 0 : g[p][c] / g[c][c];

			for (int q = 0; q <= k; q++)
				g[p][q] -= f * g[c][q];
		}
	for (int c = 0; c < k; c++)
		x[idx[c]] = g[c][k] / g[c][c];
	for (int i = 0; i < m; i++) {
		double e = b[i];

		for (int j = 0; j < n; j++)
			e -= a[i * n + j] * x[j];
		r += e * e;
	}
	return r;
}

TEST(nnls_matches_brute_force)
{
	double a[8 * 4], b[8], x[4], best[4] = { 0 }, t[4], rbest;
	struct tp_rng r;

	tp_rng_seed(&r, 11);
	for (int trial = 0; trial < 200; trial++) {
		for (int i = 0; i < 32; i++)
			a[i] = tp_rng_normal(&r);
		for (int i = 0; i < 8; i++)
			b[i] = tp_rng_normal(&r);
		ASSERT_EQ(0, tp_nnls(a, b, 8, 4, x));
		rbest = INFINITY;
		for (unsigned set = 0; set < 16; set++) {
			double rs = ls_subset_resid(a, b, 8, 4, set, t);
			bool ok = true;

			for (int j = 0; j < 4; j++)
				ok &= t[j] >= -1e-12;
			if (ok && rs < rbest) {
				rbest = rs;
				memcpy(best, t, sizeof(best));
			}
		}
		for (int j = 0; j < 4; j++) {
			EXPECT_GE(x[j], 0);
			EXPECT_LE(fabs(x[j] - best[j]), 1e-8) TH_LOG("trial %d j %d", trial, j);
		}
	}
}

TEST(ernest_recovers_exact_coefficients)
{
	const double th[4] = { 0.5, 2.0, 0.1, 0.3 };
	double s[12], m[12], t[12], fit[4];
	int n = 0;

	for (int mi = 1; mi <= 8; mi *= 2)
		for (int si = 1; si <= 3; si++, n++) {
			s[n] = 10.0 * si;
			m[n] = mi;
			t[n] = tp_ernest_predict(th, s[n], m[n]);
		}
	ASSERT_EQ(0, tp_ernest_fit(s, m, t, n, fit));
	for (int j = 0; j < 4; j++) {
		EXPECT_LE(fabs(fit[j] - th[j]), 1e-8) TH_LOG("theta %d: %g vs %g", j, fit[j], th[j]);
	}
	/* a decreasing time cannot be fitted with th >= 0: slope clamps at 0 */
	s[0] = 1, s[1] = 2, t[0] = 2, t[1] = 1, m[0] = m[1] = 1;
	ASSERT_EQ(0, tp_ernest_fit(s, m, t, 2, fit));
	EXPECT_EQ(0, fit[1]);
	EXPECT_LE(fabs(tp_ernest_predict(fit, 1, 1) - 1.5), 1e-9);
}

TEST(allreduce_formula)
{
	struct tp_job j;

	tp_job_default(&j);
	j.bw_intra = 1e10;
	j.bw_inter = 1e9;
	EXPECT_EQ(0, tp_allreduce_seconds(1e9, &j));	/* one worker: nothing to reduce */
	j.gpus = 4;
	/* 2 (p-1)/p * S / B + 2 (p-1) * lat = 1.5 * 0.1 + 6 * 5us */
	EXPECT_LE(fabs(tp_allreduce_seconds(1e9, &j) - (0.15 + 6 * 5e-6)), 1e-12);
	j.nodes = 2;	/* 8 workers; the network is the bottleneck */
	EXPECT_LE(fabs(tp_allreduce_seconds(1e9, &j) - (1.75 + 14 * 20e-6)), 1e-12);
}

/* Synthetic times that depend on FLOPs and batch only: training must fit
 * them far better than their spread. */
TEST(training_fits_a_learnable_target)
{
	static const char *const archs[] = {
		"darts002", "resnet18", "squeezenet1_1", "mobilenet_v3_small",
		"shufflenet_v2_x0_5", "vgg11_gap",
	};
	struct tp_model_config cfg;
	struct tp_train_opts o;
	struct tp_dataset *d;
	struct tp_model *m;
	char csv[128];
	FILE *f = fopen(tmpname(csv, sizeof(csv), ".csv"), "w");
	double rmse, mean = 0, var = 0, lt[64];
	int n = 0;

	ASSERT_NE(NULL, f);
	fprintf(f, "# machine: synthetic\narch,onnx,batch,gpus,nodes,time_median_s\n");
	for (size_t a = 0; a < sizeof(archs) / sizeof(archs[0]); a++) {
		char path[256];
		struct tp_graph *g;
		struct tp_graph_stats st;

		snprintf(path, sizeof(path), "%s/predictor/data/onnx/%s.onnx",
			 getenv("PWD") ? getenv("PWD") : ".", archs[a]);
		ASSERT_EQ(0, tp_graph_load_onnx(path, &g)) TH_LOG("%s", tp_errmsg());
		tp_graph_get_stats(g, &st);
		tp_graph_free(g);
		for (int b = 1; b <= 16; b *= 2, n++) {
			double t = 0.02 + 2e-9 * st.flops * b;

			fprintf(f, "%s,%s,%d,1,1,%.6g\n", archs[a], path, b, t);
			lt[n] = log(t);
			mean += lt[n];
		}
	}
	fclose(f);
	mean /= n;
	for (int i = 0; i < n; i++)
		var += (lt[i] - mean) * (lt[i] - mean) / n;
	ASSERT_EQ(0, tp_dataset_load(csv, &d)) TH_LOG("%s", tp_errmsg());
	EXPECT_EQ(6, tp_dataset_num_archs(d));
	tp_model_config_default(&cfg);
	cfg.hid = 8;
	cfg.reg_hidden = 16;
	tp_train_opts_default(&o);
	o.epochs = 150;
	o.archs_per_step = 3;
	ASSERT_EQ(0, tp_model_new(&cfg, 1, &m));
	ASSERT_EQ(0, tp_train(m, d, NULL, &o, &rmse)) TH_LOG("%s", tp_errmsg());
	TH_LOG("log-time spread %.3f, training rmse %.4f", sqrt(var), rmse);
	EXPECT_LT(rmse, 0.1 * sqrt(var));
	EXPECT_NE(NULL, strstr(tp_model_trained_on(m), "synthetic"));
	tp_model_free(m);
	tp_dataset_free(d);
	unlink(csv);
}

/* The previous release's built-in model (version 2, before the cost
 * baseline) is read, with no baseline, and predicts what that release's
 * tandemctl -j predict printed. */
TEST(version2_file_is_read_and_predicts_as_before)
{
	struct tp_prediction p;
	struct tp_model *m;
	struct tp_graph *g;
	struct tp_job job;

	ASSERT_EQ(0, tp_model_load("predictor/data/compat/default_v2.tpm", &m))
		TH_LOG("%s", tp_errmsg());
	EXPECT_EQ(2, tp_model_file_version(m));
	EXPECT_EQ(0u, m->cfg.features & (TP_FEAT_BASE | TP_FEAT_BASE_ONLY));
	ASSERT_EQ(0, tp_graph_load_onnx("predictor/data/r224-2026-12-03/onnx/resnet18.onnx", &g));
	tp_job_default(&job);
	job.batch = 8;
	ASSERT_EQ(0, tp_model_set_backend(m, TP_BACKEND_CPU));
	ASSERT_EQ(0, tp_predict(m, g, &job, &p)) TH_LOG("%s", tp_errmsg());
	EXPECT_LE(fabs(p.compute_s - 1.6304628719160505) / 1.6304628719160505, 1e-6)
		TH_LOG("%.17g", p.compute_s);
	tp_graph_free(g);
	tp_model_free(m);
}

/* Times that are exactly a non-negative sum of the baseline's terms: the
 * baseline alone must fit them (relative error ~0), save and load with its
 * weights, and a file with a negative weight is refused. */
TEST(cost_baseline_fits_an_exact_cost)
{
	static const char *const archs[] = {
		"darts002", "resnet18", "squeezenet1_1", "mobilenet_v3_small",
		"shufflenet_v2_x0_5", "vgg11_gap", "regnet_x_400mf", "densenet121",
	};
	/* 1, nodes, params, B x (conv1, convk, group, linear, matmul), B x act,
	 * B x params, B x nodes */
	static const double w[TP_BASE_TERMS] = {
		0.01, 0, 0, 1e-10, 2e-11, 5e-10, 1e-10, 0, 1e-9, 0, 1e-5,
	};
	struct tp_model_config cfg;
	struct tp_train_opts o;
	struct tp_dataset *d;
	struct tp_model *m, *m2;
	char csv[128], path[256], tpm[128];
	FILE *f = fopen(tmpname(csv, sizeof(csv), ".csv"), "w");
	double rmse, x[TP_BASE_TERMS], worst = 0;
	uint8_t *buf;
	size_t len;

	ASSERT_NE(NULL, f);
	fprintf(f, "# machine: synthetic\narch,onnx,batch,gpus,nodes,time_median_s\n");
	for (size_t a = 0; a < sizeof(archs) / sizeof(archs[0]); a++) {
		struct tp_graph *g;

		snprintf(path, sizeof(path), "%s/predictor/data/onnx/%s.onnx",
			 getenv("PWD") ? getenv("PWD") : ".", archs[a]);
		ASSERT_EQ(0, tp_graph_load_onnx(path, &g)) TH_LOG("%s", tp_errmsg());
		for (int b = 1; b <= 16; b *= 2) {
			double t = 0;

			tp_base_terms(g, b, x);
			for (int k = 0; k < TP_BASE_TERMS; k++)
				t += w[k] * x[k];
			fprintf(f, "%s,%s,%d,1,1,%.17g\n", archs[a], path, b, t);
		}
		tp_graph_free(g);
	}
	fclose(f);
	ASSERT_EQ(0, tp_dataset_load(csv, &d)) TH_LOG("%s", tp_errmsg());
	tp_model_config_default(&cfg);
	cfg.hid = 8;
	cfg.reg_hidden = 8;
	cfg.features |= TP_FEAT_BASE | TP_FEAT_BASE_ONLY;
	tp_train_opts_default(&o);
	ASSERT_EQ(0, tp_model_new(&cfg, 1, &m));
	ASSERT_EQ(0, tp_train(m, d, NULL, &o, &rmse)) TH_LOG("%s", tp_errmsg());
	EXPECT_LT(rmse, 1e-6) TH_LOG("rmse %g", rmse);
	tmpname(tpm, sizeof(tpm), ".tpm");
	ASSERT_EQ(0, tp_model_save(m, tpm)) TH_LOG("%s", tp_errmsg());
	ASSERT_EQ(0, tp_model_load(tpm, &m2)) TH_LOG("%s", tp_errmsg());
	EXPECT_EQ(4, tp_model_file_version(m2));
	for (int i = 0; i < d->nruns; i++) {
		const struct tp_run *r = &d->runs[i];
		struct tp_prediction p;
		struct tp_job job;

		tp_job_default(&job);
		job.batch = r->batch;
		ASSERT_EQ(0, tp_predict(m2, d->archs[r->arch].g, &job, &p));
		worst = fmax(worst, fabs(p.compute_s - r->t) / r->t);
	}
	EXPECT_LT(worst, 1e-6) TH_LOG("worst relative error %g", worst);
	tp_model_free(m);
	m = NULL;
	/* a negative weight, checksum fixed: refused by name */
	ASSERT_EQ(0, tp_read_file(tpm, 1 << 24, &buf, &len));
	/* before the probe block (version 4: 32 + 16 x kinds + 96 bytes) */
	buf[len - 4 - (32 + 16 * TP_PROBE_KINDS + 96) - 8 * TP_BASE_TERMS + 7] |= 0x80;
	{
		uint32_t crc = tp_crc32(0, buf, len - 4);

		for (int i = 0; i < 4; i++)
			buf[len - 4 + i] = (uint8_t)(crc >> (8 * i));
	}
	EXPECT_EQ(-EBADMSG, tp_model_load_mem(buf, len, &m));
	EXPECT_NE(NULL, strstr(tp_errmsg(), "cost baseline weight 0")) TH_LOG("%s", tp_errmsg());
	/* the baseline alone without the baseline is a bad configuration */
	cfg.features &= ~(uint32_t)TP_FEAT_BASE;
	EXPECT_EQ(-EINVAL, tp_model_new(&cfg, 1, &m));
	free(buf);
	tp_model_free(m2);
	tp_dataset_free(d);
	unlink(tpm);
	unlink(csv);
}

/* tp_model_choose(): the path given, else $TANDEM_PREDICT_MODEL, else the
 * built-in model for the graph's resolution; the files' versions say which
 * was loaded, and a missing file is an error that still names it */
TEST(model_choice_order)
{
	const char *v1 = "predictor/data/compat/default_v1.tpm";
	const char *v2 = "predictor/data/compat/default_v2.tpm", *name;
	struct tp_graph *g32, *g224;
	struct tp_model *m;

	ASSERT_EQ(0, tp_graph_load_onnx("predictor/data/onnx/mobilenet_v2.onnx", &g32));
	ASSERT_EQ(0, tp_graph_load_onnx("predictor/data/r224-2026-12-03/onnx/resnet34.onnx",
					&g224));
	unsetenv("TANDEM_PREDICT_MODEL");
	ASSERT_EQ(0, tp_model_choose(NULL, g32, &m, &name)) TH_LOG("%s", tp_errmsg());
	EXPECT_STREQ("built-in (32x32)", name);
	tp_model_free(m);
	ASSERT_EQ(0, tp_model_choose(NULL, g224, &m, &name)) TH_LOG("%s", tp_errmsg());
	EXPECT_STREQ("built-in (224x224)", name);
	tp_model_free(m);
	setenv("TANDEM_PREDICT_MODEL", v1, 1);
	ASSERT_EQ(0, tp_model_choose(NULL, g224, &m, &name)) TH_LOG("%s", tp_errmsg());
	EXPECT_STREQ(v1, name);
	EXPECT_EQ(1, tp_model_file_version(m));
	tp_model_free(m);
	ASSERT_EQ(0, tp_model_choose(v2, g224, &m, &name)) TH_LOG("%s", tp_errmsg());
	EXPECT_STREQ(v2, name);
	EXPECT_EQ(2, tp_model_file_version(m));
	tp_model_free(m);
	setenv("TANDEM_PREDICT_MODEL", "/nonexistent/tandem.tpm", 1);
	EXPECT_GT(0, tp_model_choose(NULL, g32, &m, &name));
	EXPECT_STREQ("/nonexistent/tandem.tpm", name);
	unsetenv("TANDEM_PREDICT_MODEL");
	tp_graph_free(g32);
	tp_graph_free(g224);
}

TEST_HARNESS_MAIN
