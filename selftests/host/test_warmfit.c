// SPDX-License-Identifier: GPL-2.0
/*
 * calibrate's warm-run fit (ctl/calibrate/warmfit.c) on read timelines made
 * here, polled as warm.c polls a real run (every 20 ms, a scan of the group
 * every 10th poll): the epoch boundaries (with the late trickle a real
 * DataLoader leaves after an epoch's pause), the rate over epoch 2, its CPU
 * per byte, and the exit from the run's own end. Counts are rchar bytes
 * (no tracker), the dataset one file of E bytes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "calibrate/warm_run.h"

#define MiB	1048576.0
#define POLL	0.02

/*
 * A job: first read at T0; its reader runs W ahead of a step that eats R1
 * bytes/s in epoch 1 and R2 in epoch 2 (and on); at each epoch's end the
 * last TAIL bytes come TAIL_S late, the step finishes W / R after the
 * reads, and the next epoch's reads start GAP later. CPU: K1 per byte the
 * step ate in epoch 1, K2 after. The leader ends EXIT after its last step.
 */
struct job {
	double E, W, R1, R2, tail, tail_s, gap, k1, k2, exit;
	int epochs;
	double t0;
	/* derived: epoch k's reads start at rs[k], reach E - tail at re[k] */
	double rs[4], re[4], end;
};

static void job_plan(struct job *j)
{
	double t = j->t0;

	for (int k = 0; k < j->epochs; k++) {
		double r = k ? j->R2 : j->R1;

		j->rs[k] = t;
		j->re[k] = t + (j->E - j->tail - j->W) / r;
		t = j->re[k] + j->tail / r + j->W / r + j->gap;
	}
	j->end = j->re[j->epochs - 1] + (j->tail + j->W) / j->R2 + j->exit;
}

/* bytes read by t */
static double job_count(const struct job *j, double t)
{
	double c = 0;

	for (int k = 0; k < j->epochs; k++) {
		double r = k ? j->R2 : j->R1;

		if (t < j->rs[k])
			break;
		if (t >= j->re[k] + j->tail_s)
			c += j->E;
		else
			c += fmin(j->E - j->tail, j->W + r * (t - j->rs[k]));
	}
	return c;
}

/* the group's CPU by t: what the step ate, W behind the reads */
static double job_cpu(const struct job *j, double t)
{
	double cpu = 0.5;	/* start-up */

	for (int k = 0; k < j->epochs; k++) {
		double r = k ? j->R2 : j->R1, kk = k ? j->k2 : j->k1;

		if (t < j->rs[k])
			break;
		cpu += kk * fmin(j->E, fmax(0, r * (t - j->rs[k])));
	}
	return cpu;
}

struct sim {
	struct sample_set ds;
	uint64_t size;
	struct warm_run w;
};

/* Poll the job from its release until STOP (or its end), as warm.c does. */
static void sim_run(struct sim *s, const struct job *j, double stop)
{
	struct warm_run *w = &s->w;
	double t;

	memset(s, 0, sizeof(*s));
	s->size = j->E;
	s->ds.files.n = 1;
	s->ds.files.sizes = &s->size;
	s->ds.files.bytes = j->E;
	*w = (struct warm_run){ .first = -1, .resumed = -1, .stall = -1, .stall2 = -1,
				.resumed2 = -1, .ended = -1, .pause_t = -1, .ds = &s->ds };
	w->cap = 4096;
	w->s = calloc(w->cap, sizeof(*w->s));
	w->scans = calloc(WARM_MAX_SCANS, sizeof(*w->scans));
	for (int i = 1; (t = i * POLL) < fmin(stop, j->end) && w->n < w->cap; i++) {
		double c = job_count(j, t);
		bool scan = w->first < 0 || w->polls++ % 10 == 0;

		if (w->first < 0 && c > 0) {
			w->first = t;
			scan = true;
		}
		if (scan && w->nscans < WARM_MAX_SCANS) {
			struct warm_scan *sc = &w->scans[w->nscans];

			sc->t = t;
			sc->cpu = job_cpu(j, t);
			sc->n = 1;
			sc->proc[0] = (struct procio_proc){ .pid = 100, .rchar = c,
							    .cpu_s = sc->cpu };
			if (w->first == t)
				w->first_scan = w->nscans;
			w->nscans++;
		}
		w->s[w->n++] = (struct warm_sample){ t, c };
		w->count = c;
		warm_boundary_update(w, t);
	}
	if (j->end <= stop)
		w->ended = j->end;
	warm_boundary_end(w);
}

static void sim_free(struct sim *s)
{
	free(s->w.s);
	free(s->w.scans);
}

/*
 * What the step ate after epoch 2's reads resumed (E - W), over the time
 * to their last read: the late trickle is in it, as it is in every epoch
 * of the real runs the model predicts.
 */
static double epoch2_rate(const struct job *j)
{
	return (j->E - j->W) / (j->re[1] + j->tail_s - j->rs[1]);
}

static struct job job_default(void)
{
	struct job j = {
		.E = 96 * MiB, .W = 3 * MiB, .R1 = 60 * MiB, .R2 = 48 * MiB,
		.tail = 0.05 * MiB, .tail_s = 0.14, .gap = 0.15,
		.k1 = 0.030 / MiB, .k2 = 0.040 / MiB, .exit = 0.4, .epochs = 2, .t0 = 1.0,
	};

	job_plan(&j);
	return j;
}

/* The trickle after the pause is epoch 1's: the boundary is at the whole epoch. */
TEST(boundary_takes_the_trickle)
{
	struct job j = job_default();
	struct sim s;

	sim_run(&s, &j, 100);
	ASSERT_GE(s.w.stall, 0);
	EXPECT_EQ(j.E, s.w.stall_count);
	EXPECT_LT(fabs(s.w.stall - (j.re[0] + j.tail_s)), POLL + 1e-9);
	EXPECT_LT(fabs(s.w.resumed - j.rs[1]), POLL + 1e-9);
	/* the second boundary: the run's own end after epoch 2's reads */
	ASSERT_GE(s.w.stall2, 0);
	EXPECT_EQ(2 * j.E, s.w.stall2_count);
	EXPECT_LT(s.w.resumed2, 0);
	sim_free(&s);
}

/* Epoch 2 sets the rate and the CPU per byte; the exit is its own end's. */
TEST(rate_cpu_exit_from_epoch2)
{
	struct job j = job_default();
	struct cal_warm out = { 0 };
	double cpu_epoch2;
	struct sim s;

	sim_run(&s, &j, 100);
	ASSERT_EQ(0, warm_fit(&s.w, 0, &out));
	EXPECT_TRUE(out.epoch_seen);
	ASSERT_TRUE(out.epoch2_seen);
	TH_LOG("rate %.2f MiB/s (R2 %.2f), W %.2f MiB, CPU %.4f s/MiB, exit %.3f s",
	       out.rate / MiB, j.R2 / MiB, out.window / MiB, out.cpu_per_byte * MiB, out.exit);
	EXPECT_LT(fabs(out.window - j.W) / j.W, 0.05);
	/* within 1%: the boundaries are known to a poll (20 ms) over a 2 s epoch */
	EXPECT_LT(fabs(out.rate / epoch2_rate(&j) - 1), 0.01);
	EXPECT_LT(out.rate, 0.99 * j.R1);
	/* the group's CPU from one stall to the next, over one epoch */
	cpu_epoch2 = (job_cpu(&j, s.w.stall2) - job_cpu(&j, s.w.stall)) / j.E;
	EXPECT_LT(fabs(out.cpu_per_byte / cpu_epoch2 - 1), 0.05);
	EXPECT_LT(fabs(out.cpu_task_per_byte - out.cpu_per_byte), 1e-12);
	/* its end after the last reads, less the step's W: the exit plus the trickle's lateness */
	EXPECT_TRUE(out.exit_measured);
	EXPECT_STREQ("end", out.exit_from);
	EXPECT_LT(fabs(out.exit - (j.exit - j.tail_s + j.tail / j.R2)), 0.03);
	sim_free(&s);
}

/* Stopped in epoch 2: the rate is epoch 1's steady slope, as before. */
TEST(no_second_boundary_keeps_epoch1)
{
	struct job j = job_default();
	struct cal_warm out = { 0 };
	struct sim s;

	sim_run(&s, &j, j.rs[1] + 1.0);
	ASSERT_EQ(0, warm_fit(&s.w, 0, &out));
	EXPECT_TRUE(out.epoch_seen);
	EXPECT_FALSE(out.epoch2_seen);
	EXPECT_FALSE(out.exit_measured);
	EXPECT_LT(fabs(out.rate / j.R1 - 1), 0.02);
	EXPECT_LT(fabs(out.cpu_per_byte * MiB - j.k1 * MiB), 0.002);
	sim_free(&s);
}

/* Three epochs: the reads resume after the second boundary; no exit from it. */
TEST(third_epoch_resumes)
{
	struct job j = job_default();
	struct cal_warm out = { 0 };
	struct sim s;

	j.epochs = 3;
	job_plan(&j);
	sim_run(&s, &j, j.rs[2] + 0.3);
	ASSERT_GE(s.w.resumed2, 0);
	EXPECT_LT(fabs(s.w.resumed2 - j.rs[2]), POLL + 1e-9);
	ASSERT_EQ(0, warm_fit(&s.w, 0, &out));
	EXPECT_TRUE(out.epoch2_seen);
	EXPECT_FALSE(out.exit_measured);
	EXPECT_LT(fabs(out.rate / epoch2_rate(&j) - 1), 0.01);
	sim_free(&s);
}

/*
 * calibrate's contention measure: a run's CPU curve against bytes read, and
 * the same job slowed to half its rate and using 1.15x the CPU per byte (as
 * with co-runners), seen over a window that stops in its epoch 2: its CPU
 * there against the curve's on the same reads is 1.15, the epoch boundary
 * in the window or not; the curve ends where the run's reads did.
 */
TEST(together_cpu_against_alone_curve)
{
	struct job j = job_default(), slow = job_default();
	struct cal_warm out = { 0 };
	double cpu, b0, b1, alone;
	struct sim s;

	sim_run(&s, &j, 100);
	ASSERT_EQ(0, warm_fit(&s.w, 0, &out));
	ASSERT_GT(out.curve.bytes, 1.99 * j.E);
	EXPECT_LT(cal_curve_cpu(&out.curve, 0, 2.1 * j.E), 0);
	EXPECT_LT(cal_curve_cpu(&out.curve, j.E, 0.5 * j.E), 0);
	sim_free(&s);
	slow.R1 /= 2;
	slow.R2 /= 2;
	slow.k1 *= 1.15;
	slow.k2 *= 1.15;
	job_plan(&slow);
	/* a window inside epoch 1, then one across the boundary into epoch 2 */
	for (int k = 0; k < 2; k++) {
		double tb = k ? slow.rs[1] + 1.5 : slow.re[0] - 0.5;

		sim_run(&s, &slow, 100);
		ASSERT_EQ(0, warm_span(&s.w, s.w.first + 1.0, tb, &cpu, &b0, &b1));
		alone = cal_curve_cpu(&out.curve, b0, b1);
		TH_LOG("window %d: bytes %.1f-%.1f MiB, CPU %.3f s, alone %.3f s: x%.3f", k,
		       b0 / MiB, b1 / MiB, cpu, alone, cpu / alone);
		ASSERT_GT(alone, 0);
		EXPECT_LT(fabs(cpu / alone - 1.15), 0.02);
		EXPECT_EQ(k, b1 > j.E);
		sim_free(&s);
	}
}

/* Several runs as one: medians, the rates' range, exit over the runs that had one. */
TEST(median_of_runs)
{
	struct cal_warm r[3] = { 0 }, m;

	r[0].rate = 40, r[1].rate = 50, r[2].rate = 36;
	r[0].cpu_per_byte = 3, r[1].cpu_per_byte = 1, r[2].cpu_per_byte = 2;
	r[0].startup = 1.2, r[1].startup = 1.0, r[2].startup = 1.1;
	r[0].seconds = r[1].seconds = r[2].seconds = 5;
	r[0].epoch2_seen = r[2].epoch2_seen = true;
	r[1].exit_measured = true, r[1].exit = 0.3;
	strcpy(r[1].exit_from, "end");
	r[2].exit = 9;	/* not measured: left out */
	cal_warm_median(r, 3, &m);
	EXPECT_EQ(40, m.rate);
	EXPECT_EQ(36, m.rate_min);
	EXPECT_EQ(50, m.rate_max);
	EXPECT_EQ(2, m.cpu_per_byte);
	EXPECT_EQ(1.1, m.startup);
	EXPECT_EQ(15, m.seconds);
	EXPECT_EQ(3, m.runs);
	EXPECT_TRUE(m.epoch2_seen);
	EXPECT_TRUE(m.exit_measured);
	EXPECT_EQ(0.3, m.exit);
	EXPECT_STREQ("end", m.exit_from);
	/* an even count: the middle two's mean; none measured the exit */
	r[1].exit_measured = false;
	cal_warm_median(r, 2, &m);
	EXPECT_EQ(45, m.rate);
	EXPECT_FALSE(m.exit_measured);
	EXPECT_EQ(0, m.exit);
	EXPECT_FALSE(m.epoch2_seen);	/* 1 of 2: not most */
}

/*
 * The runs' spread calibrate warns about: (max - min) / median, above 0.2.
 * The figures are calibrate's of one PyTorch job on a 2-vCPU host
 * (results/validation.md, "calibrate three times in a row").
 */
TEST(spread_of_runs)
{
	struct cal_warm r[3] = { 0 }, m;

	r[0].rate = 12.4, r[1].rate = 13.2, r[2].rate = 19.9;
	cal_warm_median(r, 3, &m);
	EXPECT_TRUE(fabs(cal_warm_spread(&m) - 7.5 / 13.2) < 1e-9);
	EXPECT_GT(cal_warm_spread(&m), CAL_WARM_SPREAD_WARN);
	r[0].rate = 41.8, r[1].rate = 42.9, r[2].rate = 45.9;
	cal_warm_median(r, 3, &m);
	EXPECT_TRUE(fabs(cal_warm_spread(&m) - 4.1 / 42.9) < 1e-9);
	EXPECT_LT(cal_warm_spread(&m), CAL_WARM_SPREAD_WARN);
	/* one run: nothing to compare, whatever its rate */
	cal_warm_median(r, 1, &m);
	EXPECT_EQ(0, cal_warm_spread(&m));
	/* no rate (a run that measured none): no spread, not a division by 0 */
	r[0].rate = r[1].rate = r[2].rate = 0;
	cal_warm_median(r, 3, &m);
	EXPECT_EQ(0, cal_warm_spread(&m));
}

TEST_HARNESS_MAIN
