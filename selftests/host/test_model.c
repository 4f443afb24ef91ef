// SPDX-License-Identifier: GPL-2.0
/*
 * Makespan model on cases with answers known in closed form (issue 5's
 * acceptance list), the hit ratio each access pattern must show, the search
 * against brute force, and the qualitative behaviour of DESIGN.md's
 * measured table. Expected values are derived by hand in the comments.
 */
#include <math.h>
#include <string.h>

#include "kselftest_harness.h"
#include "model/model.h"

#define MiB (1024.0 * 1024.0)

static struct model *mk(const struct model_sys *sys, const struct model_inst *in, int n)
{
	struct model *m = NULL;
	char err[160];

	if (model_new(sys, in, n, &m, err, sizeof(err)))
		fprintf(stderr, "model_new: %s\n", err);
	return m;
}

static struct model_inst job(const char *name, double rate, unsigned epochs,
			     enum model_order order, uint64_t seed)
{
	struct model_inst in = { .rate = rate, .epochs = epochs, .order = order,
				 .seed = seed, .window = 8 * MiB };

	snprintf(in.name, sizeof(in.name), "%s", name);
	return in;
}

static double eval2(struct model *m, double da, double db)
{
	double d[2] = { da, db };
	struct model_result r;

	return model_eval(m, d, &r) ? NAN : r.makespan;
}

/*
 * One instance: 1000 MiB, B = 100 MiB/s, cache holds it all.
 * Compute-bound R = 50: epoch 1 is 20 s after the first 1 MiB extent
 * arrives (0.01 s), epochs 2-3 come from the cache: 60.01 s.
 * I/O-bound R = 200: epoch 1 takes 10 s plus computing the last extent
 * (0.005 s), epochs 2-3 take 5 s each: 20.005 s.
 */
TEST(one_instance_is_its_solo_time)
{
	struct model_sys sys = { .dataset = 1000 * MiB, .extents = 1000,
				 .cache = 2000 * MiB, .bw = { 100 * MiB }, .nbw = 1 };
	struct model_inst in[2] = { job("A", 50 * MiB, 3, MODEL_ORDER_INDEP, 1),
				    job("Z", 50 * MiB, 0, MODEL_ORDER_INDEP, 2) };
	double d[2] = { 0, 0 }, t;
	struct model_result r;
	struct model *m = mk(&sys, in, 1);

	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, model_eval(m, d, &r));
	EXPECT_LT(fabs(r.makespan - 60.01), 0.01);
	ASSERT_EQ(0, model_solo(m, 0, &t));
	EXPECT_LT(fabs(t - 60.01), 0.01);
	model_free(m);

	in[0].rate = 200 * MiB;
	m = mk(&sys, in, 2);	/* with a second instance that has no work */
	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, model_eval(m, d, &r));
	EXPECT_LT(fabs(r.makespan - 20.005), 0.01);
	/* everything was read from storage exactly once */
	EXPECT_LT(fabs(r.storage_bytes - 1000 * MiB), 1);
	model_free(m);
}

/*
 * No I/O (dataset resident from the start): A does 2 epochs at 100 MiB/s
 * of 1000 MiB = 20 s, B one epoch = 10 s; nothing is shared, so
 * M(delta) = max(T_A, delta + T_B).
 */
TEST(compute_bound_no_io)
{
	struct model_sys sys = { .dataset = 1000 * MiB, .extents = 500, .cache = 1000 * MiB,
				 .bw = { 10 * MiB }, .nbw = 1, .warm = true };
	struct model_inst in[2] = { job("A", 100 * MiB, 2, MODEL_ORDER_INDEP, 1),
				    job("B", 100 * MiB, 1, MODEL_ORDER_INDEP, 2) };
	static const double deltas[] = { 0, 5, 10, 12.5, 15, 25, 40 };
	struct model *m = mk(&sys, in, 2);

	ASSERT_NE(NULL, m);
	for (size_t k = 0; k < sizeof(deltas) / sizeof(deltas[0]); k++) {
		double want = fmax(20.0, deltas[k] + 10.0);

		EXPECT_LT(fabs(eval2(m, 0, deltas[k]) - want), 1e-6 * want)
			TH_LOG("delta %.1f: M %.6f want %.6f", deltas[k],
			       eval2(m, 0, deltas[k]), want);
	}
	model_free(m);
}

/*
 * Same order, dataset fits: 600 MiB at B = 50 MiB/s, R = 100 MiB/s, two
 * epochs. The leader takes 12 s + 6 s = 18 s. A follower released at delta
 * reads the leader's pages at R and catches it if delta + 600/100 <= 12,
 * i.e. delta <= 6 s; then both finish with the leader: M = 18. Later, the
 * follower runs alone from the cache: M = delta + 12 (slope 1).
 */
TEST(same_order_fits_flat_then_slope_one)
{
	struct model_sys sys = { .dataset = 600 * MiB, .extents = 600, .cache = 1024 * MiB,
				 .bw = { 50 * MiB }, .nbw = 1 };
	struct model_inst in[2] = { job("A", 100 * MiB, 2, MODEL_ORDER_SAME, 0),
				    job("B", 100 * MiB, 2, MODEL_ORDER_SAME, 0) };
	struct model *m = mk(&sys, in, 2);

	ASSERT_NE(NULL, m);
	for (double d = 0; d <= 6.0; d += 0.5) {
		EXPECT_LT(fabs(eval2(m, 0, d) - 18.0), 0.05)
			TH_LOG("flat part: delta %.1f M %.3f", d, eval2(m, 0, d));
	}
	for (double d = 7; d <= 20; d += 1.5) {
		EXPECT_LT(fabs(eval2(m, 0, d) - (d + 12.0)), 0.05)
			TH_LOG("slope part: delta %.1f M %.3f", d, eval2(m, 0, d));
	}
	EXPECT_LT(fabs((eval2(m, 0, 16) - eval2(m, 0, 10)) / 6.0 - 1.0), 0.01);
	model_free(m);
}

/* A third instance with no work changes nothing for the other two. */
TEST(three_reduce_to_two_with_zero_work)
{
	struct model_sys sys = { .dataset = 600 * MiB, .extents = 600, .cache = 450 * MiB,
				 .bw = { 50 * MiB, 40 * MiB }, .nbw = 2 };
	struct model_inst in[3] = { job("A", MiB / 0.015, 2, MODEL_ORDER_INDEP, 1),
				    job("B", MiB / 0.010, 2, MODEL_ORDER_INDEP, 2),
				    job("Z", MiB / 0.010, 0, MODEL_ORDER_INDEP, 3) };
	struct model *m2 = mk(&sys, in, 2), *m3 = mk(&sys, in, 3);

	ASSERT_NE(NULL, m2);
	ASSERT_NE(NULL, m3);
	for (double d = 0; d <= 20; d += 2.5) {
		double d2[2] = { 0, d }, d3[3] = { 0, d, d / 2 };
		struct model_result r2, r3;

		ASSERT_EQ(0, model_eval(m2, d2, &r2));
		ASSERT_EQ(0, model_eval(m3, d3, &r3));
		/* the harness compares integers: compare the doubles here */
		EXPECT_TRUE(r2.makespan == r3.makespan);
		EXPECT_TRUE(r2.inst[0].end == r3.inst[0].end);
		EXPECT_TRUE(r2.inst[1].end == r3.inst[1].end);
		EXPECT_TRUE(r2.storage_bytes == r3.storage_bytes);
		EXPECT_TRUE(d / 2 == r3.inst[2].end);	/* no work: ends when released */
	}
	model_free(m2);
	model_free(m3);
}

/*
 * Beyond capacity a shuffled reader hits less than C/D: within an epoch
 * every miss may evict an extent not read yet. With random eviction the
 * hit probability f after j reads of an epoch obeys df/dj = -f(1-f)/C
 * (a resident unread extent is lost with probability (1-f)/C per read),
 * f(0) = C/D, so the epoch's mean hit ratio is, with r = C/D and
 * o = r/(1-r):  h = r * (1/r - ln((o + e^(1/r)) / (o + 1))),
 * 0.2831 for r = 1/2 and 0.5474 for r = 3/4. (This is the thrashing that
 * CoorDL's MinIO cache removes; C/D is the ideal.) LRU does worse still;
 * the kernel's two lists hit, below the ideal.
 */
static double shuffle_hit(double r)
{
	double o = r / (1 - r);

	return r * (1 / r - log((o + exp(1 / r)) / (o + 1)));
}

TEST(shuffle_beyond_capacity_thrashes)
{
	struct model_sys sys = { .dataset = 1000 * MiB, .extents = 1000,
				 .bw = { 100 * MiB }, .nbw = 1 };
	struct model_inst in = job("A", 100 * MiB, 9, MODEL_ORDER_INDEP, 7);
	static const double ratio[] = { 0.5, 0.75 };

	for (int k = 0; k < 2; k++) {
		struct model_result r;
		double d = 0, h, want = shuffle_hit(ratio[k]);
		struct model *m;

		sys.cache = ratio[k] * 1000 * MiB;
		sys.evict = MODEL_EVICT_RANDOM;
		m = mk(&sys, &in, 1);
		ASSERT_NE(NULL, m);
		ASSERT_EQ(0, model_eval(m, &d, &r));
		/* epoch 1 is all misses: average over epochs 2..9 */
		h = r.inst[0].hit_bytes / (8 * 1000 * MiB);
		EXPECT_LT(fabs(h - want), 0.02) TH_LOG("C/D %.2f: hit %.4f want %.4f",
						       ratio[k], h, want);
		model_free(m);
		sys.evict = MODEL_EVICT_LRU;
		m = mk(&sys, &in, 1);
		ASSERT_NE(NULL, m);
		ASSERT_EQ(0, model_eval(m, &d, &r));
		EXPECT_LT(r.inst[0].hit_bytes / (8 * 1000 * MiB), want);
		model_free(m);
		/* the two lists: some hits, never more than the ideal C/D */
		sys.evict = MODEL_EVICT_2Q;
		m = mk(&sys, &in, 1);
		ASSERT_NE(NULL, m);
		ASSERT_EQ(0, model_eval(m, &d, &r));
		h = r.inst[0].hit_bytes / (8 * 1000 * MiB);
		EXPECT_GT(h, 0.05);
		EXPECT_LT(h, ratio[k]);
		model_free(m);
	}
}

/*
 * Same order hits only inside the cache window (LRU, cache 200 MiB): the
 * follower reads at the leader's speed, so its lag is delta * 50 MiB. A lag
 * of 100 MiB is inside the window (all hits), 300 MiB outside (all misses).
 */
TEST(same_order_hits_inside_the_window)
{
	struct model_sys sys = { .dataset = 600 * MiB, .extents = 600, .cache = 200 * MiB,
				 .bw = { 50 * MiB }, .nbw = 1, .evict = MODEL_EVICT_LRU };
	struct model_inst in[2] = { job("A", 50 * MiB, 1, MODEL_ORDER_SAME, 0),
				    job("B", 50 * MiB, 1, MODEL_ORDER_SAME, 0) };
	struct model *m = mk(&sys, in, 2);
	double d_in[2] = { 0, 2 }, d_out[2] = { 0, 6 };
	struct model_result r;

	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, model_eval(m, d_in, &r));
	EXPECT_GT(r.inst[1].hit_bytes / (600 * MiB), 0.95);
	ASSERT_EQ(0, model_eval(m, d_out, &r));
	EXPECT_LT(r.inst[1].hit_bytes / (600 * MiB), 0.05);
	model_free(m);
}

/* The search is at least as good as a brute-force grid for N = 3. */
TEST(search_beats_brute_force_n3)
{
	struct model_sys sys = { .dataset = 300 * MiB, .extents = 150, .cache = 200 * MiB,
				 .bw = { 50 * MiB, 30 * MiB }, .nbw = 2 };
	struct model_inst in[3] = { job("A", MiB / 0.030, 2, MODEL_ORDER_INDEP, 1),
				    job("B", MiB / 0.010, 2, MODEL_ORDER_INDEP, 2),
				    job("C", MiB / 0.015, 2, MODEL_ORDER_INDEP, 3) };
	struct model *m = mk(&sys, in, 3);
	double best[3], mbest, brute = INFINITY;
	struct model_result r;

	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, model_best(m, NULL, best, &mbest, NULL));
	EXPECT_EQ(0, fmin(best[0], fmin(best[1], best[2])));	/* normalised */
	ASSERT_EQ(0, model_eval(m, best, &r));
	EXPECT_EQ(mbest, r.makespan);
	for (double b = 0; b <= 16; b += 2)
		for (double c = 0; c <= 16; c += 2)
			for (int who = 0; who < 3; who++) {
				double d[3] = { b, c, 0 };

				d[who] = 0;	/* some instance starts at 0 */
				d[(who + 1) % 3] = b;
				d[(who + 2) % 3] = c;
				ASSERT_EQ(0, model_eval(m, d, &r));
				brute = fmin(brute, r.makespan);
			}
	EXPECT_LE(mbest, brute * 1.005) TH_LOG("search %.3f brute %.3f", mbest, brute);
	model_free(m);
}

/*
 * model_eval_bound(): with the makespan itself as the bound, or above, the
 * simulation runs to its end and gives model_eval()'s result bit for bit,
 * whatever the eviction policy. With a bound below, it stops: when the
 * jobs are compute-bound (storage 2 GiB/s), their ends are known from the
 * start (each reads at most at R_i), so within the first 64 events.
 */
TEST(bounded_eval_is_exact_or_cut)
{
	struct model_sys sys = { .dataset = 300 * MiB, .extents = 150, .cache = 120 * MiB,
				 .bw = { 50 * MiB, 30 * MiB }, .nbw = 2 };
	struct model_inst in[3] = { job("A", MiB / 0.030, 2, MODEL_ORDER_INDEP, 1),
				    job("B", MiB / 0.010, 2, MODEL_ORDER_SAME, 2),
				    job("C", MiB / 0.015, 2, MODEL_ORDER_SEQ, 3) };
	double d[3] = { 0, 3.5, 1.25 };
	struct model_result full, r;
	struct model *m;

	for (int ev = MODEL_EVICT_RANDOM; ev <= MODEL_EVICT_2Q; ev++) {
		sys.evict = ev;
		m = mk(&sys, in, 3);
		ASSERT_NE(NULL, m);
		ASSERT_EQ(0, model_eval(m, d, &full));
		ASSERT_EQ(0, model_eval_bound(m, d, full.makespan, &r));
		EXPECT_EQ(0, memcmp(&full, &r, sizeof(r)));
		ASSERT_EQ(0, model_eval_bound(m, d, full.makespan * 1.01, &r));
		EXPECT_EQ(0, memcmp(&full, &r, sizeof(r)));
		model_free(m);
	}
	sys.bw[0] = sys.bw[1] = 2048 * MiB;
	m = mk(&sys, in, 3);
	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, model_eval(m, d, &full));
	EXPECT_EQ(1, model_eval_bound(m, d, full.makespan * 0.999, &r));
	EXPECT_LT(r.events, 64) TH_LOG("%llu of %llu events",
		(unsigned long long)r.events, (unsigned long long)full.events);
	EXPECT_GT(full.events, 256);
	model_free(m);
}

/*
 * DESIGN.md's testbed (600 x 1 MiB files, disk 50 MiB/s, two epochs,
 * 15 ms per file; page cache assumed 450 MiB): with a fair throttle
 * (eta = 1) simultaneous start is at or near the optimum for independent
 * shuffles and for the same order; with eta = 0.5 staggering pays; with
 * a slow and a fast job, delaying the fast one helps a little.
 */
static double gain(struct model *m, double *best)
{
	double mb, d0[2] = { 0, 0 };
	struct model_result r;

	if (model_best(m, NULL, best, &mb, NULL) || model_eval(m, d0, &r))
		return NAN;
	return (r.makespan - mb) / r.makespan;
}

TEST(design_table_qualitative)
{
	struct model_sys sys = { .dataset = 600 * MiB, .extents = 600, .cache = 450 * MiB,
				 .bw = { 50 * MiB, 50 * MiB }, .nbw = 2 };
	struct model_inst in[2] = { job("A", MiB / 0.015, 2, MODEL_ORDER_INDEP, 1),
				    job("B", MiB / 0.015, 2, MODEL_ORDER_INDEP, 2) };
	struct model *m;
	double best[2], g;

	m = mk(&sys, in, 2);
	ASSERT_NE(NULL, m);
	EXPECT_LT(gain(m, best), 0.02);
	/* and M grows with the stagger once past the start */
	EXPECT_LT(eval2(m, 0, 0), eval2(m, 0, 8));
	EXPECT_LT(eval2(m, 0, 8), eval2(m, 0, 16));
	model_free(m);

	in[0].order = in[1].order = MODEL_ORDER_SAME;
	m = mk(&sys, in, 2);
	ASSERT_NE(NULL, m);
	EXPECT_LT(gain(m, best), 0.02);
	model_free(m);

	in[0].order = in[1].order = MODEL_ORDER_INDEP;
	sys.bw[1] = 25 * MiB;	/* eta = 0.5 */
	m = mk(&sys, in, 2);
	ASSERT_NE(NULL, m);
	g = gain(m, best);
	EXPECT_GT(g, 0.10);
	EXPECT_GT(fmax(best[0], best[1]), 2.0);
	model_free(m);

	sys.bw[1] = 50 * MiB;
	in[0].rate = MiB / 0.030;
	in[1].rate = MiB / 0.008;
	m = mk(&sys, in, 2);
	ASSERT_NE(NULL, m);
	g = gain(m, best);
	EXPECT_GT(g, 0.0);
	EXPECT_GT(best[1], best[0]);	/* the fast job goes second */
	model_free(m);
}

/*
 * Preprocessing CPUs are shared max-min fairly. Dataset resident, one CPU:
 * A needs 0.25 CPU at its 100 MiB/s and gets it (6 s for 600 MiB); B would
 * need 1 CPU and gets the other 0.75: 75 MiB/s for 6 s (450 MiB), then the
 * whole CPU, 100 MiB/s for the last 150 MiB: 7.5 s.
 */
static void cpu_case(struct model_sys *sys, struct model_inst in[2], double contention)
{
	*sys = (struct model_sys){ .dataset = 600 * MiB, .extents = 600, .cache = 600 * MiB,
				   .bw = { 50 * MiB }, .nbw = 1, .warm = true, .ncpu = 1,
				   .cpu_contention = contention };
	in[0] = job("A", 100 * MiB, 1, MODEL_ORDER_INDEP, 1);
	in[1] = job("B", 100 * MiB, 1, MODEL_ORDER_INDEP, 2);
	in[0].cpu_per_byte = 0.25 / (100 * MiB);
	in[1].cpu_per_byte = 1.0 / (100 * MiB);
}

TEST(cpu_shares_are_max_min_fair)
{
	struct model_sys sys;
	struct model_inst in[2];
	double d[2] = { 0, 0 };
	struct model_result r;
	struct model *m;

	cpu_case(&sys, in, 0);
	m = mk(&sys, in, 2);
	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, model_eval(m, d, &r));
	EXPECT_LT(fabs(r.inst[0].end - 6.0), 0.01) TH_LOG("A ends at %.3f", r.inst[0].end);
	EXPECT_LT(fabs(r.inst[1].end - 7.5), 0.01) TH_LOG("B ends at %.3f", r.inst[1].end);
	model_free(m);
}

/*
 * CPU contention c = 0.2 (model_sys.cpu_contention), the case above: with
 * both on the CPU each needs 1.2x its CPU per byte, A 0.3 CPU (6 s for 600
 * MiB), B gets the other 0.7: 0.7 / 1.2 x 100 MiB/s = 58.3 MiB/s for 6 s (350
 * MiB), then alone its own 1 CPU, 100 MiB/s for the last 250 MiB: 8.5 s.
 */
TEST(cpu_contention_inflates_the_cpu_of_co_running_jobs)
{
	struct model_sys sys;
	struct model_inst in[2];
	double d[2] = { 0, 0 };
	struct model_result r;
	struct model *m;
	char err[160] = "";

	cpu_case(&sys, in, 0.2);
	m = mk(&sys, in, 2);
	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, model_eval(m, d, &r));
	EXPECT_LT(fabs(r.inst[0].end - 6.0), 0.01) TH_LOG("A ends at %.3f", r.inst[0].end);
	EXPECT_LT(fabs(r.inst[1].end - 8.5), 0.01) TH_LOG("B ends at %.3f", r.inst[1].end);
	model_free(m);
	/* one job alone: no co-runner, no contention (600 MiB at 100 MiB/s) */
	m = mk(&sys, &in[1], 1);
	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, model_eval(m, d, &r));
	EXPECT_LT(fabs(r.inst[0].end - 6.0), 0.01) TH_LOG("B alone ends at %.3f", r.inst[0].end);
	model_free(m);
	m = NULL;
	sys.cpu_contention = -0.1;
	EXPECT_EQ(-EINVAL, model_new(&sys, in, 2, &m, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "contention"));
	EXPECT_EQ(NULL, m);
}

/*
 * Two CPU-bound jobs reading from storage (1 CPU, each needs a whole one at
 * its 10 MiB/s): each runs at 5 MiB/s, 64 MiB in 12.8 s (+ the first
 * extent's load, 0.01 s). The events used to come at the uncontended rate,
 * too early by half each time: about 30 per extent, and the simulation
 * failed with -EDEADLK past its event limit.
 */
TEST(cpu_bound_jobs_on_storage_take_few_events)
{
	struct model_sys sys = { .dataset = 64 * MiB, .extents = 64, .cache = 0,
				 .bw = { 100 * MiB }, .nbw = 1, .ncpu = 1 };
	struct model_inst in[2] = { job("A", 10 * MiB, 1, MODEL_ORDER_INDEP, 1),
				    job("B", 10 * MiB, 1, MODEL_ORDER_INDEP, 2) };
	double d[2] = { 0, 0 };
	struct model_result r;
	struct model *m;

	in[0].cpu_per_byte = in[1].cpu_per_byte = 0.1 / MiB;
	m = mk(&sys, in, 2);
	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, model_eval(m, d, &r));
	EXPECT_LT(fabs(r.makespan - 12.81), 0.05) TH_LOG("M %.3f", r.makespan);
	EXPECT_LT(r.events, 16 * 64 * 2) TH_LOG("%llu events", (unsigned long long)r.events);
	model_free(m);
}

TEST(bad_input_is_rejected)
{
	struct model_sys sys = { .dataset = 600 * MiB, .cache = 0, .bw = { 50 * MiB }, .nbw = 1 };
	struct model_inst in = job("A", 0, 1, MODEL_ORDER_INDEP, 1);
	struct model *m = NULL;
	char err[160] = "";

	EXPECT_EQ(-EINVAL, model_new(&sys, &in, 1, &m, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "rate"));
	/* absurd values a profile may carry are refused, not simulated */
	in.rate = 1e-300;
	EXPECT_EQ(-EINVAL, model_new(&sys, &in, 1, &m, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "rate must be 1 B/s"));
	in.rate = MiB;
	in.epochs = MODEL_MAX_EPOCHS + 1;
	EXPECT_EQ(-EINVAL, model_new(&sys, &in, 1, &m, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "epochs"));
	in.epochs = 1;
	in.exit = 1e308;
	EXPECT_EQ(-EINVAL, model_new(&sys, &in, 1, &m, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "exit"));
	in.exit = 0;
	sys.dataset = 1e308;
	EXPECT_EQ(-EINVAL, model_new(&sys, &in, 1, &m, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "1 PB"));
	sys.dataset = 600 * MiB;
	sys.bw[0] = 1e-300;
	EXPECT_EQ(-EINVAL, model_new(&sys, &in, 1, &m, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "B(1)"));
	sys.bw[0] = 50 * MiB;
	EXPECT_EQ(NULL, m);
	sys.nbw = 0;
	EXPECT_EQ(-EINVAL, model_new(&sys, &in, 1, &m, err, sizeof(err)));
	EXPECT_EQ(NULL, m);
}

/*
 * Real-job terms (model.h, struct model_inst), warm and compute-bound:
 * 1000 MiB at R = 100 MiB/s, 3 epochs = 30 s of consuming.
 *  - start-up 4 s: M = 4 + 30 = 34, the first read at 4 s;
 *  - an epoch gap of 0.5 s: 2 boundaries, M = 30 + 1 = 31;
 *  - two jobs with 3 s start-ups of 3 CPU-s each (one core) on 1 CPU,
 *    released together: the start-ups share the core, both end at 6 s,
 *    then each consumes 1000 MiB (1 epoch) at 100 MiB/s: M = 16; on 2
 *    CPUs, 3 + 10 = 13.
 */
TEST(real_job_startup_gap_and_startup_cpu)
{
	struct model_sys sys = { .dataset = 1000 * MiB, .extents = 500, .cache = 2000 * MiB,
				 .bw = { 10 * MiB }, .nbw = 1, .warm = true };
	struct model_inst in[2] = { job("A", 100 * MiB, 3, MODEL_ORDER_INDEP, 1),
				    job("B", 100 * MiB, 1, MODEL_ORDER_INDEP, 2) };
	double d[2] = { 0, 0 };
	struct model_result r;
	struct model *m;

	in[0].startup = 4;
	m = mk(&sys, in, 1);
	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, model_eval(m, d, &r));
	EXPECT_LT(fabs(r.makespan - 34.0), 1e-3) TH_LOG("start-up: M %.4f", r.makespan);
	EXPECT_LT(fabs(r.inst[0].first_read - 4.0), 1e-6);
	model_free(m);

	in[0].startup = 0;
	in[0].epoch_gap = 0.5;
	m = mk(&sys, in, 1);
	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, model_eval(m, d, &r));
	EXPECT_LT(fabs(r.makespan - 31.0), 1e-3) TH_LOG("gap: M %.4f", r.makespan);
	model_free(m);

	in[0] = job("A", 100 * MiB, 1, MODEL_ORDER_INDEP, 1);
	for (int i = 0; i < 2; i++) {
		in[i].startup = 3;
		in[i].startup_cpu = 3;
	}
	sys.ncpu = 1;
	m = mk(&sys, in, 2);
	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, model_eval(m, d, &r));
	EXPECT_LT(fabs(r.makespan - 16.0), 1e-3) TH_LOG("1 CPU: M %.4f", r.makespan);
	EXPECT_LT(fabs(r.inst[1].first_read - 6.0), 1e-3);
	model_free(m);
	sys.ncpu = 2;
	m = mk(&sys, in, 2);
	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, model_eval(m, d, &r));
	EXPECT_LT(fabs(r.makespan - 13.0), 1e-3) TH_LOG("2 CPUs: M %.4f", r.makespan);
	model_free(m);
}

/* N instances released together: 0, or -1 when the model refused them or failed */
static int eval_together(const struct model_sys *sys, const struct model_inst *in, int n,
			 struct model_result *r)
{
	double d[MODEL_MAX_INST] = { 0 };
	struct model *m = mk(sys, in, n);
	int err = m ? model_eval(m, d, r) : -1;

	model_free(m);
	return err ? -1 : 0;
}

/*
 * CPU shares per task (model.h, cpu_task_per_byte): 1000 MiB warm, 1 epoch,
 * two jobs at R = 100 MiB/s that each need 2 cores there (0.02 s/MiB), on 2
 * CPUs. Per job (task = unit, or 0): 1 core each, both at 50 MiB/s, both end
 * at 20 s. A's busiest task needs 1 core at R (0.01 s/MiB), B's 0.5 (B has
 * more, smaller tasks): on the level L of the busiest tasks' shares
 * A runs at L / 0.01, B at L / 0.005, using 2 L and 4 L cores: L = 1/3, A at 33.3
 * and B 66.7 MiB/s: B ends at 15 s, then A alone at 100 MiB/s has 500 MiB
 * left: 20 s. Tasks above the job's whole CPU count as the whole.
 */
TEST(real_job_cpu_shared_per_task)
{
	struct model_sys sys = { .dataset = 1000 * MiB, .extents = 500, .cache = 2000 * MiB,
				 .bw = { 10 * MiB }, .nbw = 1, .warm = true, .ncpu = 2 };
	struct model_inst in[2] = { job("A", 100 * MiB, 1, MODEL_ORDER_INDEP, 1),
				    job("B", 100 * MiB, 1, MODEL_ORDER_INDEP, 2) };
	struct model_result r;

	for (int i = 0; i < 2; i++)
		in[i].cpu_per_byte = 0.02 / MiB;
	ASSERT_EQ(0, eval_together(&sys, in, 2, &r));
	EXPECT_LT(fabs(r.inst[0].end - 20.0), 1e-2) TH_LOG("per job: A %.3f", r.inst[0].end);
	EXPECT_LT(fabs(r.inst[1].end - 20.0), 1e-2) TH_LOG("per job: B %.3f", r.inst[1].end);

	in[0].cpu_task_per_byte = 0.01 / MiB;
	in[1].cpu_task_per_byte = 0.005 / MiB;
	ASSERT_EQ(0, eval_together(&sys, in, 2, &r));
	EXPECT_LT(fabs(r.inst[1].end - 15.0), 1e-2) TH_LOG("per task: B %.3f", r.inst[1].end);
	EXPECT_LT(fabs(r.inst[0].end - 20.0), 1e-2) TH_LOG("per task: A %.3f", r.inst[0].end);

	in[0].cpu_task_per_byte = in[1].cpu_task_per_byte = 1.0 / MiB;	/* > unit: = unit */
	ASSERT_EQ(0, eval_together(&sys, in, 2, &r));
	EXPECT_LT(fabs(r.inst[1].end - 20.0), 1e-2) TH_LOG("capped: B %.3f", r.inst[1].end);
}

/*
 * The exit (model.h): it takes no resource. 1000 MiB at 100 MiB/s, 1 epoch
 * (10 s) and an exit of 0.75 s: A ends at 10.75. With B (the same job,
 * released together, 1 CPU, CPU-bound at 1 core each) the two share the core
 * for 20 s; A's exit does not slow B: both end at 20.75, not later; and a
 * job with exit = -1 is refused.
 */
TEST(real_job_exit_takes_no_resource)
{
	struct model_sys sys = { .dataset = 1000 * MiB, .extents = 500, .cache = 2000 * MiB,
				 .bw = { 10 * MiB }, .nbw = 1, .warm = true };
	struct model_inst in[2] = { job("A", 100 * MiB, 1, MODEL_ORDER_INDEP, 1),
				    job("B", 100 * MiB, 1, MODEL_ORDER_INDEP, 2) };
	struct model_result r;
	struct model *m;
	char err[128];

	in[0].exit = 0.75;
	ASSERT_EQ(0, eval_together(&sys, in, 1, &r));
	EXPECT_LT(fabs(r.makespan - 10.75), 1e-3) TH_LOG("exit: M %.4f", r.makespan);
	EXPECT_LT(fabs(r.inst[0].end - 10.75), 1e-3);

	in[1].exit = 0.75;
	for (int i = 0; i < 2; i++)
		in[i].cpu_per_byte = 1.0 / (100 * MiB);	/* 1 core at its rate */
	sys.ncpu = 1;
	ASSERT_EQ(0, eval_together(&sys, in, 2, &r));
	EXPECT_LT(fabs(r.makespan - 20.75), 1e-2) TH_LOG("1 CPU: M %.4f", r.makespan);
	EXPECT_LT(fabs(r.inst[0].end - r.inst[1].end), 1e-2);

	in[0].exit = -1;
	m = NULL;
	EXPECT_EQ(-EINVAL, model_new(&sys, in, 2, &m, err, sizeof(err)));
	EXPECT_EQ(NULL, m);
}

/*
 * Read streams weight the share of B(k): two disk-bound jobs on separate
 * halves... here on one dataset read once each (independent shuffles, no
 * cache): 100 MiB at B = 10 MiB/s, cache too small to matter (1 extent).
 * Equal weights: each gets 5 MiB/s, both end at 20 s. A with 3 streams, B
 * with 1: A gets 7.5 MiB/s until it ends (13.33 s, 100 MiB), B has read
 * 33.3 MiB by then, then reads the other 66.7 at 10 MiB/s: 20 s.
 */
TEST(real_job_streams_weight_the_bandwidth)
{
	struct model_sys sys = { .dataset = 100 * MiB, .extents = 100, .cache = 1 * MiB,
				 .bw = { 10 * MiB }, .nbw = 1 };
	struct model_inst in[2] = { job("A", 1000 * MiB, 1, MODEL_ORDER_INDEP, 1),
				    job("B", 1000 * MiB, 1, MODEL_ORDER_INDEP, 2) };
	double d[2] = { 0, 0 };
	struct model_result r;
	struct model *m;

	in[0].window = in[1].window = 1 * MiB;
	m = mk(&sys, in, 2);
	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, model_eval(m, d, &r));
	EXPECT_LT(fabs(r.inst[0].end - r.inst[1].end), 0.3) TH_LOG("equal: A %.3f B %.3f",
								    r.inst[0].end, r.inst[1].end);
	EXPECT_LT(fabs(r.makespan - 20.0), 0.3);
	model_free(m);
	in[0].streams = 3;
	in[1].streams = 1;
	m = mk(&sys, in, 2);
	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, model_eval(m, d, &r));
	EXPECT_LT(fabs(r.inst[0].end - 13.33), 0.3) TH_LOG("3:1: A %.3f B %.3f",
							     r.inst[0].end, r.inst[1].end);
	EXPECT_LT(fabs(r.makespan - 20.0), 0.3);
	model_free(m);
}

TEST_HARNESS_MAIN
