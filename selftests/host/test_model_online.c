// SPDX-License-Identifier: GPL-2.0
/*
 * The online evaluation (ctl/model/online.c) against the offline simulation
 * it starts from: at t = 0 with nothing running it is the offline model,
 * bit for bit, and its search finds the offline optimum over the newcomer's
 * release; an instance half done is predicted to end where the offline run
 * of the same instance ends, alone or with a newcomer; the measured
 * residency moves the prediction the right way; where storage loses
 * bandwidth under concurrency the newcomer is held, as the offline search
 * staggers. Expected values are derived in the comments.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "kselftest_harness.h"
#include "model/model.h"

#define MiB (1024.0 * 1024.0)

static struct model_inst job(const char *name, double rate, unsigned epochs, uint64_t seed)
{
	struct model_inst in = { .rate = rate, .epochs = epochs, .order = MODEL_ORDER_INDEP,
				 .seed = seed, .window = 8 * MiB };

	snprintf(in.name, sizeof(in.name), "%s", name);
	return in;
}

/* 500 MiB in 500 extents, B(1) = 100 MiB/s, room for all of it */
static struct model_sys sys500(void)
{
	return (struct model_sys){ .dataset = 500 * MiB, .extents = 500, .cache = 1000 * MiB,
				   .bw = { 100 * MiB }, .nbw = 1 };
}

static double offline(const struct model_sys *sys, const struct model_inst *in, int n,
		      const double *delta, struct model_result *r)
{
	struct model *m = NULL;
	char err[160];
	double mk = NAN;

	if (model_new(sys, in, n, &m, err, sizeof(err))) {
		fprintf(stderr, "model_new: %s\n", err);
		return NAN;
	}
	if (!model_eval(m, delta, r))
		mk = r->makespan;
	model_free(m);
	return mk;
}

static double online_at(const struct mo_online *o, double x, struct mo_online_result *r)
{
	char err[160];

	if (mo_online_eval(o, x, r, err, sizeof(err))) {
		fprintf(stderr, "mo_online_eval: %s\n", err);
		return NAN;
	}
	return r->makespan;
}

/*
 * Two different jobs, B(2) = 0.6 B(1), 2 epochs: with nothing running,
 * nothing resident and the other planned at 0, M_online(x) is the offline
 * M(0, x) (the same simulation), and the search finds the offline best
 * over x >= 0 (brute force every 10 ms).
 */
TEST(at_zero_it_is_the_offline_model)
{
	struct model_sys sys = sys500();
	struct model_inst in[2] = { job("A", 150 * MiB, 2, 1), job("B", 60 * MiB, 2, 2) };
	struct mo_online o = { .sys = sys, .now = 0, .resident = -1, .n = 1 };
	struct mo_online_result r;
	struct model_result res;
	double brute = INFINITY, brute_x = 0;
	char err[160];

	sys.bw[1] = 60 * MiB;
	sys.nbw = 2;
	o.sys = sys;
	o.inst[0] = (struct mo_online_inst){ .m = in[0], .start = 0 };
	o.newcomer = in[1];
	for (double x = 0; x <= 20; x += 2.5) {
		double d[2] = { 0, x }, want = offline(&sys, in, 2, d, &res);

		EXPECT_EQ(want, online_at(&o, x, &r));
		EXPECT_EQ(res.inst[0].end, r.end[0]);
		EXPECT_EQ(res.inst[1].end, r.end[1]);
	}
	/* resident = 0 is the same empty cache */
	o.resident = 0;
	EXPECT_EQ(offline(&sys, in, 2, (double[]){ 0, 5 }, &res), online_at(&o, 5, &r));
	o.resident = -1;
	for (double x = 0; x <= 30; x += 0.01) {
		double d[2] = { 0, x }, m = offline(&sys, in, 2, d, &res);

		if (m < brute - 1e-9) {
			brute = m;
			brute_x = x;
		}
	}
	ASSERT_EQ(0, mo_online_best(&o, NULL, 0, &r, err, sizeof(err)));
	fprintf(stderr, "# offline best over x: M(0, %.2f) = %.3f s; online: x = %.3f, M = %.3f s, %u evals\n",
		brute_x, brute, r.release, r.makespan, r.evals);
	EXPECT_LT(r.makespan, brute + 0.05);
	EXPECT_GT(r.makespan, brute - 0.05);
	EXPECT_LT(fabs(r.makespan_now - offline(&sys, in, 2, (double[]){ 0, 0 }, &res)), 1e-9);
}

/*
 * One instance alone, 1000 MiB/s on cached data (storage-bound): the
 * offline run ends at 5 s (500 MiB at 100 MiB/s) plus the last extent's
 * compute, 1 ms; a second epoch from the cache adds 0.5 s. Online at 2.5 s
 * with 250 MiB consumed (the offline position then), and at 5.25 s with
 * 750 MiB (epoch 2 at 1000 MiB/s, half done), the end is the same within an
 * extent's load (10 ms). Compute-bound (50 MiB/s): 10.01 s; at 5.01 s
 * 250 MiB consumed. Where the reader was ahead of the consumer is not part
 * of the state (an agent cannot see it): the online run starts it at the
 * consumer, so a compute-bound one waits for one extent more, 10 ms.
 */
TEST(a_half_done_instance_ends_where_the_offline_run_ends)
{
	struct model_sys sys = sys500();
	struct model_inst a1 = job("A", 1000 * MiB, 1, 1), a2 = job("A", 1000 * MiB, 2, 1);
	struct model_inst c1 = job("C", 50 * MiB, 1, 1);
	struct mo_online o = { .sys = sys, .resident = -1, .n = 1 };
	struct model_result res;
	struct mo_online_result r;
	double want;

	/* the newcomer has no work: only the running one is predicted */
	o.newcomer = job("Z", 1000 * MiB, 0, 9);
	want = offline(&sys, &a1, 1, (double[]){ 0 }, &res);
	EXPECT_LT(fabs(want - 5.001), 0.002);
	o.now = 2.5;
	o.inst[0] = (struct mo_online_inst){ .m = a1, .running = true, .start = 0,
					     .consumed = 250 * MiB };
	online_at(&o, 0, &r);
	fprintf(stderr, "# storage-bound, 1 epoch: offline %.4f s, online at 2.5 s %.4f s\n",
		want, r.end[0]);
	EXPECT_LT(fabs(r.end[0] - want), 0.01);

	want = offline(&sys, &a2, 1, (double[]){ 0 }, &res);
	EXPECT_LT(fabs(want - 5.501), 0.002);
	o.now = 5.25;
	o.inst[0].m = a2;
	o.inst[0].consumed = 750 * MiB;
	online_at(&o, 0, &r);
	fprintf(stderr, "# storage-bound, 2 epochs: offline %.4f s, online at 5.25 s %.4f s\n",
		want, r.end[0]);
	EXPECT_LT(fabs(r.end[0] - want), 0.01);
	/* epoch 2 comes from the cache: with it evicted, it is read again (5 s more) */
	o.resident = 0;
	online_at(&o, 0, &r);
	EXPECT_GT(r.end[0], want + 2);
	o.resident = -1;

	want = offline(&sys, &c1, 1, (double[]){ 0 }, &res);
	EXPECT_LT(fabs(want - 10.01), 0.002);
	o.now = 5.01;
	o.inst[0].m = c1;
	o.inst[0].consumed = 250 * MiB;
	online_at(&o, 0, &r);
	fprintf(stderr, "# compute-bound: offline %.4f s, online at 5.01 s %.4f s\n", want, r.end[0]);
	EXPECT_LT(fabs(r.end[0] - want), 0.015);
	EXPECT_LT(fabs(r.makespan - want), 0.015);
}

/*
 * A newcomer at 2.5 s while A (storage-bound, alone so far, so 250 MiB
 * consumed and cached) is half done: online from that state against the
 * offline run with A at 0 and B at 2.5 s. They differ only in where A's
 * reader and the cache are inside an extent, so by well under 1%.
 */
TEST(a_newcomer_while_half_done_as_offline)
{
	struct model_sys sys = sys500();
	struct model_inst in[2] = { job("A", 1000 * MiB, 1, 1), job("B", 1000 * MiB, 1, 2) };
	struct mo_online o = { .sys = sys, .now = 2.5, .resident = -1, .n = 1 };
	struct mo_online_result r, r0, rall;
	struct model_result res;
	double want;

	o.inst[0] = (struct mo_online_inst){ .m = in[0], .running = true, .start = 0,
					     .consumed = 250 * MiB };
	o.newcomer = in[1];
	want = offline(&sys, in, 2, (double[]){ 0, 2.5 }, &res);
	online_at(&o, 0, &r);
	fprintf(stderr, "# A at 0, B at 2.5 s: offline M %.3f s (A %.3f, B %.3f), online %.3f s (A %.3f, B %.3f)\n",
		want, res.inst[0].end, res.inst[1].end, r.makespan, r.end[0], r.end[1]);
	EXPECT_LT(fabs(r.makespan - want) / want, 0.01);
	EXPECT_LT(fabs(r.end[0] - res.inst[0].end) / res.inst[0].end, 0.01);
	/* the residency it starts from matters: evicted, B reads more; all cached, less */
	o.resident = 0;
	online_at(&o, 0, &r0);
	o.resident = 500 * MiB;
	online_at(&o, 0, &rall);
	fprintf(stderr, "# B's end with A's pages evicted %.3f s, as read %.3f s, all cached %.3f s\n",
		r0.end[1], r.end[1], rall.end[1]);
	EXPECT_GT(r0.end[1], r.end[1] + 0.5);
	EXPECT_LT(rall.end[1], r.end[1] - 0.5);
}

/*
 * Two storage-bound jobs on a store that loses bandwidth with two streams
 * (B(2) = 0.4 B(1)): together they read the dataset at 40 MiB/s (12.5 s),
 * staggered the second finds the first's pages, so the offline search
 * staggers (M about 5.3 s). The online search for the second, with the
 * first planned at 0, must hold it and find the offline optimum over its
 * release (brute force every 10 ms). With B(2) = B(1) it releases at once.
 */
TEST(held_where_the_offline_search_staggers)
{
	struct model_sys sys = sys500();
	struct model_inst in[2] = { job("A", 1000 * MiB, 1, 1), job("B", 1000 * MiB, 1, 2) };
	struct mo_online o = { .resident = -1, .n = 1 };
	struct mo_online_result r;
	struct model_result res;
	struct model *m = NULL;
	double delta[2], best, brute = INFINITY;
	char err[160];

	sys.bw[1] = 40 * MiB;
	sys.nbw = 2;
	ASSERT_EQ(0, model_new(&sys, in, 2, &m, err, sizeof(err)));
	ASSERT_EQ(0, model_best(m, NULL, delta, &best, NULL));
	model_free(m);
	for (double x = 0; x <= 12; x += 0.01)
		brute = fmin(brute, offline(&sys, in, 2, (double[]){ 0, x }, &res));
	o.sys = sys;
	o.inst[0] = (struct mo_online_inst){ .m = in[0], .start = 0 };
	o.newcomer = in[1];
	ASSERT_EQ(0, mo_online_best(&o, NULL, MO_MIN_GAIN, &r, err, sizeof(err)));
	fprintf(stderr, "# B(2) = 0.4 B(1): offline best (%.2f, %.2f) M %.3f s, over B's release %.3f s; "
		"online release %.3f s, M %.3f s (now %.3f), gain %.3f\n",
		delta[0], delta[1], best, brute, r.release, r.makespan, r.makespan_now, r.gain);
	EXPECT_GT(fmax(delta[0], delta[1]), 1);
	EXPECT_LT(fabs(best - brute) / brute, 0.03);
	EXPECT_FALSE(r.together);
	EXPECT_GT(r.release, 1);
	EXPECT_LT(fabs(r.makespan - brute) / brute, 0.005);

	o.sys.bw[1] = 100 * MiB;
	ASSERT_EQ(0, mo_online_best(&o, NULL, MO_MIN_GAIN, &r, err, sizeof(err)));
	EXPECT_TRUE(r.together);
	EXPECT_EQ(0, r.release);
	/* the cap: never later than latest */
	o.sys.bw[1] = 40 * MiB;
	o.latest = 0.5;
	ASSERT_EQ(0, mo_online_best(&o, NULL, 0, &r, err, sizeof(err)));
	EXPECT_LE(r.release, 0.5);
}

TEST(bad_input_is_refused)
{
	struct mo_online o = { .sys = sys500(), .now = 1, .resident = -1, .n = 1 };
	struct mo_online_result r;
	char err[160] = "";

	o.newcomer = job("B", 100 * MiB, 1, 2);
	o.inst[0] = (struct mo_online_inst){ .m = job("A", 100 * MiB, 1, 1), .running = true,
					     .start = 2, .consumed = 0 };
	EXPECT_EQ(-EINVAL, mo_online_eval(&o, 0, &r, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "running start"));
	o.inst[0].start = 0;
	o.inst[0].consumed = -1;
	EXPECT_EQ(-EINVAL, mo_online_best(&o, NULL, 0, &r, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "consumed"));
	o.inst[0].consumed = 0;
	EXPECT_EQ(-EINVAL, mo_online_eval(&o, -1, &r, err, sizeof(err)));
	o.n = MODEL_MAX_INST;
	EXPECT_EQ(-EINVAL, mo_online_eval(&o, 0, &r, err, sizeof(err)));
	o.n = 1;
	o.now = NAN;
	EXPECT_EQ(-EINVAL, mo_online_eval(&o, 0, &r, err, sizeof(err)));
	o.now = 1;
	EXPECT_EQ(0, mo_online_eval(&o, 0, &r, err, sizeof(err)));
}

TEST_HARNESS_MAIN
