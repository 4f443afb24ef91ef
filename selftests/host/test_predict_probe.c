// SPDX-License-Identifier: GPL-2.0
/*
 * The device probe (issue 33): its record and text form, the per-host cache
 * (a second call reads it, fast; another CPU model string invalidates it),
 * the model file's probe block, and the mapping of a prediction to a host
 * whose probe differs: every kind 2x slower doubles the compute time
 * exactly; one kind slower scales by the cost-weighted mean of the ratios,
 * recomputed here from the model's baseline weights and terms; the device
 * warning gives way to the mapping only when both probes exist.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "internal.h"
#include "ghn.h"

#define GRAPH224 "predictor/data/r224-2026-12-03/onnx/resnet34.onnx"
#define GRAPH32 "predictor/data/onnx/mobilenet_v3_small.onnx"

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

FIXTURE(cache) {
	char dir[64], path[128], cpuinfo[128];
	char *old_dir, *old_cpuinfo;
};

FIXTURE_SETUP(cache)
{
	snprintf(self->dir, sizeof(self->dir), "/tmp/tandem-probe-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->path, sizeof(self->path), "%s/probe-v%u.txt", self->dir, TP_PROBE_VERSION);
	snprintf(self->cpuinfo, sizeof(self->cpuinfo), "%s/cpuinfo", self->dir);
	self->old_dir = getenv("TANDEM_PROBE_DIR");
	self->old_cpuinfo = getenv("TANDEM_CPUINFO");
	setenv("TANDEM_PROBE_DIR", self->dir, 1);
	unsetenv("TANDEM_CPUINFO");
}

FIXTURE_TEARDOWN(cache)
{
	unlink(self->path);
	unlink(self->cpuinfo);
	rmdir(self->dir);
	if (self->old_dir)
		setenv("TANDEM_PROBE_DIR", self->old_dir, 1);
	else
		unsetenv("TANDEM_PROBE_DIR");
	if (self->old_cpuinfo)
		setenv("TANDEM_CPUINFO", self->old_cpuinfo, 1);
	else
		unsetenv("TANDEM_CPUINFO");
}

/* measured once: every rate finite and > 0, within 30 s, this host's key;
 * the text form round-trips to its printed precision */
TEST_F(cache, first_call_measures_second_reads_the_cache)
{
	struct tp_probe p, q, r;
	char cpu[96], cache[256];
	uint32_t ncpu;
	bool cached = true;
	double t0;

	ASSERT_EQ(0, tp_probe_cache_path(cache, sizeof(cache)));
	EXPECT_STREQ(self->path, cache);
	t0 = wall();
	ASSERT_EQ(0, tp_probe_host(false, &p, &cached)) TH_LOG("%s", tp_errmsg());
	EXPECT_FALSE(cached);
	EXPECT_LT(wall() - t0, 30.0);
	EXPECT_GT(p.seconds, 0.0);
	EXPECT_LT(p.seconds, 30.0);
	tp_probe_host_key(cpu, &ncpu);
	EXPECT_STREQ(cpu, p.cpu);
	EXPECT_EQ(ncpu, p.ncpu);
	EXPECT_EQ(TP_PROBE_VERSION, p.version);
	EXPECT_LE(llabs((long long)(p.when - time(NULL))), 60);
	for (int k = 0; k < TP_PROBE_KINDS; k++) {
		EXPECT_TRUE(isfinite(p.rate[k]) && p.rate[k] > 0) TH_LOG("%s", tp_probe_kind_name(k));
		EXPECT_GE(p.spread[k], 0.0);
	}
	ASSERT_EQ(0, tp_probe_load(self->path, &q)) TH_LOG("%s", tp_errmsg());
	t0 = wall();
	ASSERT_EQ(0, tp_probe_host(false, &r, &cached));
	EXPECT_TRUE(cached);
	EXPECT_LT(wall() - t0, 0.5);	/* a file read, not seconds of kernels */
	EXPECT_STREQ(p.cpu, r.cpu);
	EXPECT_EQ(p.when, r.when);
	for (int k = 0; k < TP_PROBE_KINDS; k++) {
		EXPECT_LT(fabs(q.rate[k] / p.rate[k] - 1), 1e-5);	/* %.6g */
		EXPECT_EQ(q.rate[k], r.rate[k]);
	}
	ASSERT_EQ(0, tp_probe_host(true, &r, &cached));	/* --rerun */
	EXPECT_FALSE(cached);
}

/* another CPU model string (TANDEM_CPUINFO) is another host: measured again,
 * and the cache then holds the new key */
TEST_F(cache, another_cpu_invalidates_it)
{
	struct tp_probe p, q;
	bool cached;

	ASSERT_EQ(0, tp_probe_host(false, &p, &cached));
	write_file(self->cpuinfo, "processor\t: 0\nvendor_id\t: GenuineIntel\n"
		   "model name\t: Intel(R) Xeon(R) Test CPU @ 9.99GHz\ncpu MHz\t\t: 9990.0\n");
	setenv("TANDEM_CPUINFO", self->cpuinfo, 1);
	ASSERT_EQ(0, tp_probe_host(false, &q, &cached));
	EXPECT_FALSE(cached);
	EXPECT_STREQ("Intel(R) Xeon(R) Test CPU @ 9.99GHz", q.cpu);
	ASSERT_EQ(0, tp_probe_load(self->path, &p));
	EXPECT_STREQ("Intel(R) Xeon(R) Test CPU @ 9.99GHz", p.cpu);
	ASSERT_EQ(0, tp_probe_host(false, &q, &cached));
	EXPECT_TRUE(cached);
	/* a cache of another probe version is measured again too */
	write_file(self->path, "tandem-probe 999\ncpu Intel(R) Xeon(R) Test CPU @ 9.99GHz\n");
	ASSERT_EQ(0, tp_probe_host(false, &q, &cached));
	EXPECT_FALSE(cached);
}

TEST(broken_probe_files_are_errors)
{
	char path[] = "/tmp/tandem-probe-XXXXXX";
	struct tp_probe p;
	int fd = mkstemp(path);

	ASSERT_GE(fd, 0);
	close(fd);
	write_file(path, "tandem-probe 1\ncpu X\nncpu 2\nwhen 5\nseconds 1\n"
		   "conv 1 0\ndwconv 1 0\ngemm 1 0\nmem 1 0\n");	/* no op line */
	EXPECT_EQ(-EBADMSG, tp_probe_load(path, &p));
	EXPECT_NE(NULL, strstr(tp_errmsg(), "not a complete device probe")) TH_LOG("%s", tp_errmsg());
	write_file(path, "tandem-probe 1\ncpu X\nncpu 2\nwhen 5\nseconds 1\n"
		   "conv 1 0\ndwconv 1 0\ngemm 1 0\nmem 1 0\nop -3 0\n");	/* a rate <= 0 */
	EXPECT_EQ(-EBADMSG, tp_probe_load(path, &p));
	write_file(path, "garbage\n");
	EXPECT_EQ(-EBADMSG, tp_probe_load(path, &p));
	unlink(path);
	EXPECT_EQ(-ENOENT, tp_probe_load(path, &p));
}

/* the predictions of model m on graph g at batch 4: unmapped and with host */
static void predict_pair(struct __test_metadata *_metadata, struct tp_model *m,
			 const struct tp_graph *g, const struct tp_probe *host,
			 struct tp_prediction *plain, struct tp_prediction *mapped)
{
	struct tp_job job;

	tp_job_default(&job);
	job.batch = 4;
	ASSERT_EQ(0, tp_predict(m, g, &job, plain)) TH_LOG("%s", tp_errmsg());
	EXPECT_FALSE(plain->probe_mapped);
	EXPECT_EQ(1.0, plain->probe_ratio);
	job.probe = host;
	ASSERT_EQ(0, tp_predict(m, g, &job, mapped)) TH_LOG("%s", tp_errmsg());
}

/* every kind 2x slower than the training host: exactly twice the compute,
 * for the baseline (224x224) and the regressor-only (32x32) built-ins */
TEST(two_times_slower_host_doubles_the_compute)
{
	const char *graphs[] = { GRAPH224, GRAPH32 }, *name;

	for (int i = 0; i < 2; i++) {
		struct tp_prediction plain, mapped;
		struct tp_graph *g;
		struct tp_model *m;
		struct tp_probe slow;

		ASSERT_EQ(0, tp_graph_load_onnx(graphs[i], &g)) TH_LOG("%s", tp_errmsg());
		ASSERT_EQ(0, tp_model_load_builtin(g, &m, &name));
		ASSERT_NE(NULL, tp_model_probe(m)) TH_LOG("%s has no reference probe", name);
		EXPECT_STREQ("AMD EPYC", tp_model_probe(m)->cpu);
		slow = *tp_model_probe(m);
		for (int k = 0; k < TP_PROBE_KINDS; k++)
			slow.rate[k] /= 2;
		predict_pair(_metadata, m, g, &slow, &plain, &mapped);
		EXPECT_TRUE(mapped.probe_mapped) TH_LOG("%s", name);
		EXPECT_LT(fabs(mapped.probe_ratio - 2.0), 1e-12) TH_LOG("%s: %.17g", name,
									 mapped.probe_ratio);
		EXPECT_LT(fabs(mapped.compute_s / plain.compute_s - 2.0), 1e-12) TH_LOG("%s", name);
		EXPECT_EQ(plain.allreduce_s, mapped.allreduce_s);
		for (int k = 0; k < TP_PROBE_KINDS; k++)
			EXPECT_LT(fabs(mapped.kind_ratio[k] - 2.0), 1e-12);
		tp_model_free(m);
		tp_graph_free(g);
	}
}

/* only dense convolutions 3x slower: the factor is the baseline with its kxk
 * convolution term tripled over the baseline, computed here from the weights */
TEST(one_kind_slower_scales_by_its_share)
{
	struct tp_prediction plain, mapped;
	double x[TP_BASE_TERMS], num = 0, den = 0;
	struct tp_probe slow;
	struct tp_graph *g;
	struct tp_model *m;
	const char *name;

	ASSERT_EQ(0, tp_graph_load_onnx(GRAPH224, &g));
	ASSERT_EQ(0, tp_model_load_builtin(g, &m, &name));
	slow = *tp_model_probe(m);
	slow.rate[TP_PROBE_CONV] /= 3;
	predict_pair(_metadata, m, g, &slow, &plain, &mapped);
	tp_base_terms(g, 4, x);
	for (int t = 0; t < TP_BASE_TERMS; t++) {
		den += m->base_w[t] * x[t];
		num += m->base_w[t] * x[t] * (t == 3 + TP_FLOPS_CONVK ? 3.0 : 1.0);
	}
	EXPECT_GT(m->base_w[3 + TP_FLOPS_CONVK] * x[3 + TP_FLOPS_CONVK], 0.0);
	EXPECT_LT(fabs(mapped.probe_ratio / (num / den) - 1), 1e-12)
		TH_LOG("%.17g vs %.17g", mapped.probe_ratio, num / den);
	EXPECT_GT(mapped.probe_ratio, 1.0);
	EXPECT_LT(mapped.probe_ratio, 3.0);
	EXPECT_LT(fabs(mapped.compute_s / plain.compute_s / mapped.probe_ratio - 1), 1e-12);
	EXPECT_EQ(3.0, mapped.kind_ratio[TP_PROBE_CONV]);
	EXPECT_EQ(1.0, mapped.kind_ratio[TP_PROBE_GEMM]);
	tp_model_free(m);
	tp_graph_free(g);
}

/* the device warning keeps its text without a probe and gives way to the
 * mapping with one; a model without a training-host probe is not mapped */
TEST(device_warning_only_when_not_mapped)
{
	char warn[8][TP_WARN_LEN];
	struct tp_prediction p;
	struct tp_device dev = { .feat = { 2, 2.0, 0 }, .name = "Intel(R) Xeon(R) Processor" };
	struct tp_probe host;
	struct tp_graph *g;
	struct tp_model *m;
	struct tp_job job;
	const char *name;
	int n;

	ASSERT_EQ(0, tp_graph_load_onnx(GRAPH224, &g));
	ASSERT_EQ(0, tp_model_load_builtin(g, &m, &name));
	host = *tp_model_probe(m);
	tp_job_default(&job);
	job.batch = 2;
	job.dev = &dev;
	n = tp_ood_warnings(m, g, &job, warn, 8);
	ASSERT_EQ(1, n);
	EXPECT_STREQ("device 'Intel(R) Xeon(R) Processor' is not the profiled one ('AMD EPYC'): "
		     "profile it and train a model for it (Documentation/predictor.md)", warn[0]);
	job.probe = &host;
	EXPECT_EQ(0, tp_ood_warnings(m, g, &job, warn, 8));
	tp_model_set_probe(m, NULL);
	EXPECT_EQ(1, tp_ood_warnings(m, g, &job, warn, 8));
	ASSERT_EQ(0, tp_predict(m, g, &job, &p));
	EXPECT_FALSE(p.probe_mapped);
	tp_model_free(m);
	tp_graph_free(g);
}

/* version 4 keeps the training host's probe; a file without one has none */
TEST(model_file_keeps_the_probe)
{
	struct tp_model_config cfg;
	struct tp_model *m, *m2;
	struct tp_probe p = {
		.version = 1, .cpu = "Some CPU", .ncpu = 8, .when = 1234567890, .seconds = 4.5,
		.rate = { 10, 20, 30, 4, 0.5 }, .spread = { 0.01, 0.02, 0.03, 0.04, 0.05 },
	};
	char path[] = "/tmp/tandem-probe-XXXXXX.tpm";
	int fd = mkstemps(path, 4);

	ASSERT_GE(fd, 0);
	close(fd);
	tp_model_config_default(&cfg);
	ASSERT_EQ(0, tp_model_new(&cfg, 1, &m));
	EXPECT_EQ(NULL, tp_model_probe(m));
	ASSERT_EQ(0, tp_model_save(m, path));
	ASSERT_EQ(0, tp_model_load(path, &m2)) TH_LOG("%s", tp_errmsg());
	EXPECT_EQ(NULL, tp_model_probe(m2));
	tp_model_free(m2);
	tp_model_set_probe(m, &p);
	ASSERT_EQ(0, tp_model_save(m, path));
	ASSERT_EQ(0, tp_model_load(path, &m2)) TH_LOG("%s", tp_errmsg());
	EXPECT_EQ(4, tp_model_file_version(m2));
	ASSERT_NE(NULL, tp_model_probe(m2));
	EXPECT_EQ(0, memcmp(&p, tp_model_probe(m2), sizeof(p)));
	tp_model_free(m2);
	tp_model_free(m);
	unlink(path);
}

TEST_HARNESS_MAIN
