// SPDX-License-Identifier: GPL-2.0
/*
 * What a warm run's samples say (calibrate.h, struct cal_warm;
 * Documentation/model.md, "Real jobs: the terms and how calibrate measures
 * them"). Everything is read off the read timeline count(t), which the
 * model reproduces: its reader runs ahead of its consumer by the window W
 * (the instance's window=), stops at an epoch's end, and resumes after the
 * consumer ate the epoch and the gap passed.
 *
 *  - the first epoch boundary: a stall of the reads (>= 0.1 s) once the
 *    count reached 99.8% of an epoch (the dataset's pages for the tracker,
 *    its bytes for rchar); the count there is one epoch's worth of units;
 *    the second: the same, one epoch's count later, or the run's own end
 *    after it;
 *  - rate R: what the step ate over epoch 2 (fit_epoch2); without a second
 *    boundary, the slope of the reads over the second half of the first
 *    epoch (or of the run, without a boundary): past the first batches,
 *    which run slower (the loader fills its queue, the framework warms up);
 *  - CPU per byte: the group's CPU over the same window, over its bytes;
 *  - streams: the members that read at least a tenth of it (loader workers),
 *    between consecutive scans where no member left (its rchar then moves
 *    to its parent); the count that read the most bytes;
 *  - the run-ahead W (the instance's window, unless window= was given):
 *    the steady line's bytes back at the first read, bytes(t_b) - R (t_b -
 *    first read), at least 0: what the loader read ahead of the step (its
 *    workers x prefetch batches) less what its first, slower steps lost;
 *  - start-up: where the model's reader must start to be where the real
 *    one is at the window's end: t_b - (bytes(t_b) - W) / R, at least the
 *    first read (which the profile also keeps); the first batches' slowness
 *    is in it;
 *  - start-up CPU: the group's CPU at the first read;
 *  - epoch gap: the stall minus what the model's reader waits for its
 *    consumer there (W / R); below three polls (60 ms) none.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/warm_run.h"
#include "lib/util.h"

#define STALL_MIN_S	0.1	/* no read for this long at an epoch's end: the boundary */
#define EPOCH_END	0.998	/* of an epoch's units: its last batches */
#define GAP_MIN_S	0.06	/* three polls */
#define RAMP_S		1.0

/* one epoch's count by the dataset's size: pages (tracker, counted once) or bytes */
double warm_units_expected(const struct warm_run *w)
{
	return w->trk ? (double)w->trk->pages : w->ds->files.bytes;
}

/* the count at which boundary K (0: the first) is due: epoch K+1's last batches */
static double boundary_due(const struct warm_run *w, int k)
{
	return k ? w->stall_count * (1 + EPOCH_END) : EPOCH_END * warm_units_expected(w);
}

/*
 * Boundary K: the reads pause (>= STALL_MIN_S) once the count is due, then
 * resume. A trickle after the pause (at most the last 0.2% of an epoch: a
 * last batch's file, read late) is still the old epoch: the pause goes on
 * from its start, and the boundary is at the trickle's last read.
 */
void warm_boundary_update(struct warm_run *w, double t)
{
	double c = w->count, since, resumed;
	int k = w->resumed >= 0;
	bool tail;

	if (w->resumed2 >= 0 || w->first < 0)
		return;
	if (c <= w->last_inc_count)
		return;
	tail = c - w->last_inc_count <= (1 - EPOCH_END) * (k ? w->stall_count :
							  warm_units_expected(w));
	if (w->last_inc_count >= boundary_due(w, k)) {
		since = w->pause_t >= 0 ? w->pause_t : w->last_inc_t;
		if (tail) {
			if (w->pause_t < 0 && t - w->last_inc_t >= STALL_MIN_S)
				w->pause_t = w->last_inc_t;
		} else if (t - since >= STALL_MIN_S) {
			/* it resumed between the previous poll and this one */
			resumed = w->n > 1 ? (w->s[w->n - 2].t + t) / 2 : t;
			if (!k) {
				w->paused = since;
				w->stall = w->last_inc_t;
				w->stall_count = w->last_inc_count;
				w->resumed = resumed;
			} else {
				w->stall2 = w->last_inc_t;
				w->stall2_count = w->last_inc_count;
				w->resumed2 = resumed;
			}
			w->pause_t = -1;
		} else {
			w->pause_t = -1;
		}
	}
	w->last_inc_t = t;
	w->last_inc_count = c;
}

/*
 * The run over: a run that ended by itself after its second epoch's reads
 * (its last epoch) has its second boundary at its last read.
 */
void warm_boundary_end(struct warm_run *w)
{
	if (w->ended >= 0 && w->resumed >= 0 && w->stall2 < 0 &&
	    w->last_inc_count >= boundary_due(w, 1) && w->ended - w->last_inc_t >= 0) {
		w->stall2 = w->last_inc_t;
		w->stall2_count = w->last_inc_count;
	}
}

/* the count at time t (the last sample at or before it) */
static double count_at(const struct warm_run *w, double t)
{
	double c = 0;

	for (size_t i = 0; i < w->n && w->s[i].t <= t + 1e-9; i++)
		c = w->s[i].count;
	return c;
}

/* the first scan at or after t, and the last at or before t */
static int scan_after(const struct warm_run *w, double t)
{
	for (int i = 0; i < w->nscans; i++)
		if (w->scans[i].t >= t - 1e-9)
			return i;
	return w->nscans - 1;
}

static int scan_before(const struct warm_run *w, double t)
{
	for (int i = w->nscans - 1; i >= 0; i--)
		if (w->scans[i].t <= t + 1e-9)
			return i;
	return 0;
}

/*
 * Members that read at least a tenth of what the group read between two
 * scans; *TOTAL: what it read. -1 when a member of A is gone in B: a reaped
 * member's rchar moves to its parent, which then looks like the one reader
 * (a loader whose workers end with each epoch, inside one window).
 */
static int streams_between(const struct warm_scan *a, const struct warm_scan *b,
			   double *total)
{
	double d[WARM_MAX_PROCS];
	int n = 0, found;

	*total = 0;
	for (int j = 0; j < a->n; j++) {
		found = 0;
		for (int i = 0; i < b->n && !found; i++)
			found = a->proc[j].pid == b->proc[i].pid;
		if (!found)
			return -1;
	}
	for (int i = 0; i < b->n; i++) {
		d[i] = b->proc[i].rchar;
		for (int j = 0; j < a->n; j++)
			if (a->proc[j].pid == b->proc[i].pid)
				d[i] -= a->proc[j].rchar;
		*total += d[i];
	}
	for (int i = 0; i < b->n; i++)
		n += *total > 0 && d[i] >= 0.1 * *total;
	return n;
}

/*
 * The read streams over scans A..B: per pair of consecutive scans with no
 * member gone, how many members read; the count that read the most bytes
 * wins. Without such a pair, the window's ends compared (at least 1).
 */
static double streams_over(const struct warm_run *w, int a, int b)
{
	double by_n[WARM_MAX_PROCS + 1] = { 0 }, total, best = 0;
	int n, pick = 0;

	for (int i = a; i < b; i++) {
		n = streams_between(&w->scans[i], &w->scans[i + 1], &total);
		if (n > 0 && total > 0)
			by_n[n] += total;
	}
	for (n = 1; n <= WARM_MAX_PROCS; n++)
		if (by_n[n] > best) {
			best = by_n[n];
			pick = n;
		}
	if (!pick)
		pick = streams_between(&w->scans[a], &w->scans[b], &total);
	return pick > 0 ? pick : 1;
}

/*
 * The CPU of the busiest member over scans A..B: a member in both scans,
 * its CPU at B minus at A (a DataLoader's workers are forked again each
 * epoch; the window is inside epoch 1). 0 when no member is in both.
 */
static double busiest_over(const struct warm_run *w, int a, int b)
{
	const struct warm_scan *sa = &w->scans[a], *sb = &w->scans[b];
	double best = 0;

	for (int j = 0; j < sb->n; j++)
		for (int i = 0; i < sa->n; i++)
			if (sa->proc[i].pid == sb->proc[j].pid)
				best = fmax(best, sb->proc[j].cpu_s - sa->proc[i].cpu_s);
	return best;
}

/* the time the count first reached c */
static double time_of(const struct warm_run *w, double c)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->s[i].count >= c)
			return w->s[i].t;
	return w->s[w->n - 1].t;
}

/*
 * The steady window [*a, *b] as two scans: the second half of epoch 1, to
 * where its reads paused (a trickle after that is no pace)
 */
static int steady_window(const struct warm_run *w, int *a, int *b)
{
	double end = w->stall >= 0 ? w->paused : w->s[w->n - 1].t;
	double half = time_of(w, count_at(w, end) / 2);

	*a = scan_after(w, fmax(half, w->first + fmin(RAMP_S, 0.2 * (end - w->first))));
	*b = scan_before(w, end);
	if (*b <= *a) {
		*a = w->first_scan;
		*b = w->nscans - 1;
	}
	return *b > *a ? 0 : -ENODATA;
}

/*
 * Epoch 2, from the first boundary to the second: the step eats one epoch
 * there, E - W of it after the reads resumed (the reader ran W ahead, from
 * the cache at once), the workers' fork and first, slower batches included.
 * So R = (E - W) / (second stall - resumed), and the CPU per byte is the
 * group's CPU between the scans nearest the two stalls over what the step
 * ate in between. The busiest member keeps its share of the group's CPU
 * from epoch 1's window (epoch 1's workers are gone in epoch 2). 0: not
 * measurable (no second boundary, or W is most of an epoch).
 */
static int fit_epoch2(const struct warm_run *w, double bpu, struct cal_warm *out)
{
	double e = (w->stall2_count - w->stall_count) * bpu, eat = e - out->window;
	double span = w->stall2 - w->resumed, period = w->stall2 - w->stall;
	int a = scan_before(w, w->stall), b = scan_before(w, w->stall2);
	double ate, task_share;

	if (w->stall2 < 0 || !(span > 0) || !(eat >= 0.5 * e) || b <= a)
		return 0;
	ate = e * (w->scans[b].t - w->scans[a].t) / period;
	if (!(ate > 0) || w->scans[b].cpu <= w->scans[a].cpu)
		return 0;
	task_share = out->cpu_per_byte > 0 ? out->cpu_task_per_byte / out->cpu_per_byte : 1;
	out->rate = eat / span;
	out->window_s = w->scans[b].t - w->scans[a].t;
	out->bytes = ate;
	out->cpu_s = w->scans[b].cpu - w->scans[a].cpu;
	out->cpu_per_byte = out->cpu_s / ate;
	out->cpu_task_per_byte = task_share * out->cpu_per_byte;
	out->epoch2_seen = true;
	return 1;
}

double warm_last_read(const struct warm_run *w)
{
	for (size_t i = w->n; i-- > 1;)
		if (w->s[i].count > w->s[i - 1].count)
			return w->s[i].t;
	return w->n ? w->s[0].t : 0;
}

/*
 * dataset bytes per unit of the count, by the dataset's size alone: the
 * same in every run of a command (a boundary found where it is not, on a
 * tiny dataset, moves stall_count)
 */
static double bytes_per_unit(const struct warm_run *w)
{
	return w->ds->files.bytes / warm_units_expected(w);
}

double warm_bytes_read(const struct warm_run *w)
{
	return w->count * bytes_per_unit(w);
}

int warm_span(const struct warm_run *w, double ta, double tb, double *cpu, double *b0,
	      double *b1)
{
	double bpu = bytes_per_unit(w);
	int a, b;

	if (w->first < 0 || !w->n || !w->nscans || !(tb > ta))
		return -ENODATA;
	a = scan_after(w, ta);
	b = scan_before(w, tb);
	if (b <= a)
		return -ENODATA;
	*cpu = w->scans[b].cpu - w->scans[a].cpu;
	*b0 = count_at(w, w->scans[a].t) * bpu;
	*b1 = count_at(w, w->scans[b].t) * bpu;
	return *b1 > *b0 && *cpu > 0 ? 0 : -ENODATA;
}

/* cumulative CPU against bytes read, at the scans from the first read on, on a grid */
static void warm_curve(const struct warm_run *w, struct cal_curve *cv)
{
	double bpu = bytes_per_unit(w), pb = 0, pc, b, c;
	int k = 0;

	memset(cv, 0, sizeof(*cv));
	if (w->first_scan < 0 || w->first_scan >= w->nscans)
		return;
	cv->bytes = count_at(w, w->scans[w->nscans - 1].t) * bpu;
	if (!(cv->bytes > 0))
		return;
	pc = w->scans[w->first_scan].cpu;
	for (int j = w->first_scan; j < w->nscans && k <= CAL_CURVE_POINTS; j++) {
		b = count_at(w, w->scans[j].t) * bpu;
		c = w->scans[j].cpu;
		/* every grid point up to b: on the line from the previous scan */
		for (; k <= CAL_CURVE_POINTS && k * cv->bytes / CAL_CURVE_POINTS <= b + 1e-6; k++) {
			double g = k * cv->bytes / CAL_CURVE_POINTS;

			cv->cpu[k] = b > pb ? pc + (c - pc) * (g - pb) / (b - pb) : c;
		}
		pb = b;
		pc = c;
	}
	for (; k <= CAL_CURVE_POINTS; k++)
		cv->cpu[k] = pc;
}

static double curve_at(const struct cal_curve *cv, double b)
{
	double x = b / cv->bytes * CAL_CURVE_POINTS;
	int k = (int)floor(x);

	if (k >= CAL_CURVE_POINTS)
		return cv->cpu[CAL_CURVE_POINTS];
	if (k < 0)
		return cv->cpu[0];
	return cv->cpu[k] + (cv->cpu[k + 1] - cv->cpu[k]) * (x - k);
}

double cal_curve_cpu(const struct cal_curve *cv, double b0, double b1)
{
	if (!(cv->bytes > 0) || b0 < 0 || !(b1 > b0) || b1 > cv->bytes * 1.001)
		return -1;
	return curve_at(cv, b1) - curve_at(cv, b0);
}

int warm_fit(const struct warm_run *w, double window, struct cal_warm *out)
{

	const struct warm_scan *sa, *sb;
	double units, bpu, bytes, read_b, ahead;
	int a, b;

	if (w->first < 0 || !w->n || steady_window(w, &a, &b))
		return -ENODATA;
	sa = &w->scans[a];
	sb = &w->scans[b];
	units = w->stall >= 0 ? w->stall_count : warm_units_expected(w);
	bpu = w->ds->files.bytes / units;
	bytes = (count_at(w, sb->t) - count_at(w, sa->t)) * bpu;
	if (!(bytes > 0))
		return -ENODATA;
	out->first_read = w->first;
	out->window_s = sb->t - sa->t;
	out->bytes = bytes;
	out->cpu_s = sb->cpu - sa->cpu;
	out->rate = bytes / out->window_s;
	out->cpu_per_byte = out->cpu_s / bytes;
	out->cpu_task_per_byte = fmin(busiest_over(w, a, b), out->cpu_s) / bytes;
	out->streams = streams_over(w, a, b);
	out->units_per_epoch = units;
	/*
	 * The run-ahead W: where the steady line is back at the first read
	 * (the loader's first batches came faster than the step eats them);
	 * at most what epoch 1 had read at the window's end. Then the start-up
	 * puts the model's consumer where the line says the real one is.
	 */
	read_b = count_at(w, sb->t) * bpu;
	ahead = read_b - out->rate * (sb->t - w->first);
	out->window = window > 0 ? window : fmin(fmax(ahead, 0), read_b);
	out->window_measured = !(window > 0);
	out->startup = sb->t - (read_b - out->window) / out->rate;
	out->startup = fmin(fmax(out->startup, w->first), sb->t);
	out->startup_cpu = w->scans[w->first_scan].cpu;
	out->epoch_seen = w->resumed >= 0;
	/* the rate the step keeps over a whole epoch, where one was seen */
	if (out->epoch_seen) {
		fit_epoch2(w, bpu, out);
		out->epoch_gap = (w->resumed - w->stall) - out->window / out->rate;
	}
	if (out->epoch_gap < GAP_MIN_S)
		out->epoch_gap = 0;
	/*
	 * It ended by itself after its last epoch's reads: the step ate W
	 * after them, then it exited.
	 */
	if (out->epoch2_seen && w->resumed2 < 0 && w->ended >= w->stall2) {
		out->exit = w->ended - w->stall2 - out->window / out->rate;
		out->exit = fmax(out->exit, 0);
		out->exit_measured = true;
		strcpy(out->exit_from, "end");
	}
	warm_curve(w, &out->curve);
	strcpy(out->method, w->trk ? "tracker" : "proc");
	return 0;
}

/* the median of field OFF (a double) of the runs where PICK (NULL: all) */
static double median_of(const struct cal_warm *runs, int n, size_t off, const bool *pick)
{
	double v[CAL_MAX_WARM_RUNS];
	int k = 0;

	for (int i = 0; i < n && i < CAL_MAX_WARM_RUNS; i++)
		if (!pick || pick[i])
			v[k++] = *(const double *)((const char *)&runs[i] + off);
	return median_d(v, k);
}

#define MEDIAN(field, pick) \
	(out->field = median_of(runs, n, offsetof(struct cal_warm, field), pick))

void cal_warm_median(const struct cal_warm *runs, int n, struct cal_warm *out)
{
	bool exit_ok[CAL_MAX_WARM_RUNS] = { 0 };
	int ep = 0, ep2 = 0, wm = 0, nexit = 0;
	double secs = 0;

	n = n < CAL_MAX_WARM_RUNS ? n : CAL_MAX_WARM_RUNS;
	*out = runs[0];
	out->rate_min = out->rate_max = runs[0].rate;
	for (int i = 0; i < n; i++) {
		out->rate_min = fmin(out->rate_min, runs[i].rate);
		out->rate_max = fmax(out->rate_max, runs[i].rate);
		ep += runs[i].epoch_seen;
		ep2 += runs[i].epoch2_seen;
		wm += runs[i].window_measured;
		exit_ok[i] = runs[i].exit_measured;
		if (exit_ok[i] && !nexit++)
			strcpy(out->exit_from, runs[i].exit_from);
		secs += runs[i].seconds;
	}
	MEDIAN(rate, NULL);
	MEDIAN(cpu_per_byte, NULL);
	MEDIAN(cpu_task_per_byte, NULL);
	MEDIAN(startup, NULL);
	MEDIAN(first_read, NULL);
	MEDIAN(window, NULL);
	MEDIAN(startup_cpu, NULL);
	MEDIAN(epoch_gap, NULL);
	MEDIAN(streams, NULL);
	MEDIAN(units_per_epoch, NULL);
	MEDIAN(window_s, NULL);
	MEDIAN(bytes, NULL);
	MEDIAN(cpu_s, NULL);
	MEDIAN(exit, exit_ok);
	out->exit_measured = nexit > 0;
	if (!nexit)
		out->exit_from[0] = 0;
	out->epoch_seen = 2 * ep > n;
	out->epoch2_seen = 2 * ep2 > n;
	out->window_measured = 2 * wm > n;
	out->seconds = secs;
	out->runs = n;
}

double cal_warm_spread(const struct cal_warm *w)
{
	if (w->runs < 2 || !(w->rate > 0) || !(w->rate_max >= w->rate_min))
		return 0;
	return (w->rate_max - w->rate_min) / w->rate;
}
