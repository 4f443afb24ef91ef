// SPDX-License-Identifier: GPL-2.0
/*
 * Device probe: a few seconds of single-threaded kernels that measure this
 * host's speed on the kinds of work the cost baseline prices (base.c), at
 * the sizes of a 224x224 network's layers at batch 2:
 *
 *   conv    dense 3x3 convolution, 32 -> 32 channels, 56x56, batch 2 (GFLOP/s)
 *   dwconv  depthwise 3x3 convolution, 64 channels, 56x56, batch 2 (GFLOP/s)
 *   gemm    256 x 256 x 256 matrix product (GFLOP/s)
 *   mem     normalisation (mean, variance, scale) of 64 MiB (GB/s moved)
 *   op      small operators: allocate, touch, reduce, chase pointers, free (Mop/s)
 *
 * The kernels are plain C vectorised by the compiler (an AVX2+FMA clone and
 * a baseline one, picked at load time), not PyTorch's: what matters is the
 * ratio of two hosts' rates, which follows the same hardware (vector width,
 * caches, memory, clock). One thread, timed in thread CPU time (the
 * profiling runs were one thread, CPU time), best of the repetitions
 * (contention only slows a repetition down). Not instrumented by the
 * sanitizers, so a sanitized build measures what a plain one does.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define TP_PROBE_HOT __attribute__((target_clones("arch=x86-64-v3", "default"), \
				    no_sanitize("address", "undefined"), noinline))

#define CV_B 2
#define CV_C 32
#define CV_HW 56
#define CV_P (CV_HW + 2)	/* padded row */
#define DW_C 64
#define GM_N 256
#define MEM_N (16u << 20)	/* floats: 64 MiB */
#define OP_CHASE (1u << 18)	/* 1 MiB of pointers to chase */
#define OP_N 4096		/* operators per repetition */

#define REP_BUDGET_S 0.8	/* CPU time per kind; $TANDEM_PROBE_SECONDS */
#define REP_MIN 5
#define REP_MAX 400

static volatile double sink;

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* out [B][K][HW][HW] = w [K][C][3][3] * in [B][C][P][P] (padded), groups 1 */
TP_PROBE_HOT static void conv3x3(float *restrict out, const float *restrict in,
				 const float *restrict w)
{
	for (int b = 0; b < CV_B; b++)
		for (int k = 0; k < CV_C; k++) {
			float *o = out + ((size_t)b * CV_C + k) * CV_HW * CV_HW;

			memset(o, 0, sizeof(float) * CV_HW * CV_HW);
			for (int c = 0; c < CV_C; c++)
				for (int t = 0; t < 9; t++) {
					const float *ip = in + ((size_t)b * CV_C + c) * CV_P * CV_P +
							  (t / 3) * CV_P + t % 3;
					float wv = w[((size_t)k * CV_C + c) * 9 + t];

					for (int y = 0; y < CV_HW; y++)
						for (int x = 0; x < CV_HW; x++)
							o[y * CV_HW + x] += wv * ip[y * CV_P + x];
				}
		}
}

/* out [B][C][HW][HW] = w [C][3][3] * in [B][C][P][P], one filter per channel */
TP_PROBE_HOT static void dwconv3x3(float *restrict out, const float *restrict in,
				   const float *restrict w)
{
	for (int bc = 0; bc < CV_B * DW_C; bc++) {
		float *o = out + (size_t)bc * CV_HW * CV_HW;
		const float *wc = w + (size_t)(bc % DW_C) * 9;

		memset(o, 0, sizeof(float) * CV_HW * CV_HW);
		for (int t = 0; t < 9; t++) {
			const float *ip = in + (size_t)bc * CV_P * CV_P + (t / 3) * CV_P + t % 3;

			for (int y = 0; y < CV_HW; y++)
				for (int x = 0; x < CV_HW; x++)
					o[y * CV_HW + x] += wc[t] * ip[y * CV_P + x];
		}
	}
}

/* c [N][N] = a [N][N] b [N][N] */
TP_PROBE_HOT static void gemm(float *restrict c, const float *restrict a, const float *restrict b)
{
	memset(c, 0, sizeof(float) * GM_N * GM_N);
	for (int i = 0; i < GM_N; i++)
		for (int k = 0; k < GM_N; k++) {
			float av = a[i * GM_N + k];

			for (int j = 0; j < GM_N; j++)
				c[i * GM_N + j] += av * b[k * GM_N + j];
		}
}

/* y = (x - mean) / std over MEM_N floats: one pass to read, one to write */
TP_PROBE_HOT static void normalise(float *restrict y, const float *restrict x)
{
	float s[8] = { 0 }, q[8] = { 0 }, mean, rstd;
	double sum = 0, sq = 0;

	for (size_t i = 0; i < MEM_N; i += 8)
		for (int k = 0; k < 8; k++) {
			s[k] += x[i + k];
			q[k] += x[i + k] * x[i + k];
		}
	for (int k = 0; k < 8; k++) {
		sum += s[k];
		sq += q[k];
	}
	mean = (float)(sum / MEM_N);
	rstd = (float)(1.0 / sqrt(fmax(sq / MEM_N - (double)mean * mean, 1e-12)));
	for (size_t i = 0; i < MEM_N; i++)
		y[i] = (x[i] - mean) * rstd;
}

/* OP_N small operators: a buffer of 1..64 KiB allocated, 256 floats
 * written and summed, 32 dependent loads through a random cycle, freed. */
TP_PROBE_HOT static double small_ops(const uint32_t *restrict chase)
{
	uint32_t at = 0;
	double acc = 0;

	for (int n = 0; n < OP_N; n++) {
		size_t bytes = 1024 + (size_t)((n * 2654435761u) % 64) * 1024;
		float *buf = malloc(bytes);

		if (!buf)
			return -1;
		for (int i = 0; i < 256; i++)
			buf[i] = (float)(i + n);
		for (int i = 0; i < 256; i++)
			acc += buf[i];
		for (int i = 0; i < 32; i++)
			at = chase[at];
		acc += at;
		free(buf);
	}
	return acc;
}

struct probe_bufs {
	float *in, *w, *out;	/* convolutions */
	float *a, *b, *c;	/* gemm */
	float *x, *y;		/* normalisation */
	uint32_t *chase;	/* a random cycle over OP_CHASE entries */
};

static void probe_free(struct probe_bufs *pb)
{
	free(pb->in);
	free(pb->w);
	free(pb->out);
	free(pb->a);
	free(pb->b);
	free(pb->c);
	free(pb->x);
	free(pb->y);
	free(pb->chase);
}

static void fill(float *p, size_t n, struct tp_rng *r)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (float)(tp_rng_uniform(r) - 0.5);
}

static int probe_alloc(struct probe_bufs *pb)
{
	size_t nin = (size_t)CV_B * DW_C * CV_P * CV_P, nout = (size_t)CV_B * DW_C * CV_HW * CV_HW;
	struct tp_rng r;

	memset(pb, 0, sizeof(*pb));
	pb->in = malloc(nin * sizeof(float));
	pb->w = malloc((size_t)CV_C * CV_C * 9 * sizeof(float));
	pb->out = malloc(nout * sizeof(float));
	pb->a = malloc(sizeof(float) * GM_N * GM_N);
	pb->b = malloc(sizeof(float) * GM_N * GM_N);
	pb->c = malloc(sizeof(float) * GM_N * GM_N);
	pb->x = malloc(sizeof(float) * MEM_N);
	pb->y = malloc(sizeof(float) * MEM_N);
	pb->chase = malloc(sizeof(uint32_t) * OP_CHASE);
	if (!pb->in || !pb->w || !pb->out || !pb->a || !pb->b || !pb->c || !pb->x || !pb->y ||
	    !pb->chase) {
		probe_free(pb);
		return tp_fail(-ENOMEM, "out of memory for the device probe");
	}
	tp_rng_seed(&r, 1);
	fill(pb->in, nin, &r);
	fill(pb->w, (size_t)CV_C * CV_C * 9, &r);
	fill(pb->a, (size_t)GM_N * GM_N, &r);
	fill(pb->b, (size_t)GM_N * GM_N, &r);
	fill(pb->x, MEM_N, &r);
	memset(pb->y, 0, sizeof(float) * MEM_N);	/* fault it in before timing */
	for (uint32_t i = 0; i < OP_CHASE; i++)
		pb->chase[i] = i;
	for (uint32_t i = OP_CHASE - 1; i > 0; i--) {	/* Sattolo: one cycle */
		uint32_t j = (uint32_t)(tp_rng_u64(&r) % i), t = pb->chase[i];

		pb->chase[i] = pb->chase[j];
		pb->chase[j] = t;
	}
	return 0;
}

/* One repetition of a kind; returns its units of work (FLOPs, bytes, ops). */
static double run_kind(int kind, struct probe_bufs *pb)
{
	switch (kind) {
	case TP_PROBE_CONV:
		conv3x3(pb->out, pb->in, pb->w);
		sink = pb->out[7];
		return 2.0 * CV_B * CV_C * CV_C * 9 * CV_HW * CV_HW;
	case TP_PROBE_DWCONV:
		dwconv3x3(pb->out, pb->in, pb->w);
		sink = pb->out[7];
		return 2.0 * CV_B * DW_C * 9 * CV_HW * CV_HW;
	case TP_PROBE_GEMM:
		gemm(pb->c, pb->a, pb->b);
		sink = pb->c[7];
		return 2.0 * GM_N * GM_N * GM_N;
	case TP_PROBE_MEM:
		normalise(pb->y, pb->x);
		sink = pb->y[7];
		return 3.0 * sizeof(float) * MEM_N;	/* read twice, written once */
	default:
		sink = small_ops(pb->chase);
		return OP_N;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * CPU time per kind: REP_BUDGET_S, or $TANDEM_PROBE_SECONDS (0.01-10; the
 * test suite's probes check the format and the cache, not the rates, and
 * take 0.1). A value out of range or not a number is ignored.
 */
static double rep_budget(void)
{
	const char *env = getenv("TANDEM_PROBE_SECONDS");
	char *end;
	double v;

	if (!env || !*env)
		return REP_BUDGET_S;
	v = strtod(env, &end);
	if (*end || !(v >= 0.01 && v <= 10))
		return REP_BUDGET_S;
	return v;
}

/* Repeat a kind for its budget of CPU time (REP_MIN..REP_MAX times). */
static void measure(int kind, struct probe_bufs *pb, struct tp_probe *p, double budget)
{
	double t[REP_MAX], spent = 0, units = 0, scale = kind == TP_PROBE_OP ? 1e6 : 1e9;
	int n = 0;

	run_kind(kind, pb);	/* warm-up: caches, page tables, the allocator */
	while (n < REP_MAX && (n < REP_MIN || spent < budget)) {
		double t0 = cpu_now();

		units = run_kind(kind, pb);
		t[n] = cpu_now() - t0;
		spent += t[n];
		if (t[n] < 1e-7)
			t[n] = 1e-7;
		n++;
	}
	qsort(t, n, sizeof(t[0]), cmp_double);
	p->rate[kind] = units / t[0] / scale;
	p->spread[kind] = t[n / 2] / t[0] - 1.0;
}

/*
 * The host's key: the CPU's model name as the device query reads it
 * ($TANDEM_CPUINFO, else /proc/cpuinfo; "cpu" where neither says) and the
 * online CPUs.
 */
void tp_probe_host_key(char cpu[96], uint32_t *ncpu)
{
	struct tp_device dev;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	snprintf(cpu, 96, "cpu");
	if (!tp_device_query(TP_BACKEND_CPU, &dev))
		snprintf(cpu, 96, "%.95s", dev.name);
	tp_clear_error();
	*ncpu = n > 0 ? (uint32_t)n : 1;
}

int tp_probe_run(struct tp_probe *p)
{
	struct probe_bufs pb;
	double t0 = wall_now(), budget = rep_budget();
	int err;

	tp_clear_error();
	memset(p, 0, sizeof(*p));
	err = probe_alloc(&pb);
	if (err)
		return err;
	for (int k = 0; k < TP_PROBE_KINDS; k++)
		measure(k, &pb, p, budget);
	probe_free(&pb);
	p->version = TP_PROBE_VERSION;
	tp_probe_host_key(p->cpu, &p->ncpu);
	p->when = (int64_t)time(NULL);
	p->seconds = wall_now() - t0;
	return 0;
}
