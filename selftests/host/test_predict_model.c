// SPDX-License-Identifier: GPL-2.0
/*
 * Predictor model file (round trip, truncation, corruption, versions),
 * NNLS against brute force, Ernest on exact data, the all-reduce formula,
 * and training on a synthetic target the features can explain.
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "internal.h"

static char *tmpname(const char *suffix)
{
	static char path[128];
	int fd;

	snprintf(path, sizeof(path), "/tmp/tandem-predict-XXXXXX%s", suffix);
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
	snprintf(self->path, sizeof(self->path), "%s", tmpname(".tpm"));
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
	copy[8] = 2;	/* version 2 */
	EXPECT_EQ(-EPROTONOSUPPORT, tp_model_load_mem(copy, self->len, &m2));
	EXPECT_NE(NULL, strstr(tp_errmsg(), "version 2")) TH_LOG("%s", tp_errmsg());
	copy[8] = 1;
	copy[12] = 0xff, copy[13] = 0x7f;	/* absurd encoder width */
	EXPECT_EQ(-EINVAL, tp_model_load_mem(copy, self->len, &m2));
	EXPECT_NE(NULL, strstr(tp_errmsg(), "encoder width")) TH_LOG("%s", tp_errmsg());
	free(copy);
	/* and through the file path, which names the file */
	ASSERT_EQ(0, write_bytes(self->path, self->buf, self->len - 10));
	EXPECT_EQ(-EBADMSG, tp_model_load(self->path, &m2));
	EXPECT_NE(NULL, strstr(tp_errmsg(), self->path));
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
	char *csv = tmpname(".csv");
	FILE *f = fopen(csv, "w");
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

TEST_HARNESS_MAIN
