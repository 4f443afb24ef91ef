// SPDX-License-Identifier: GPL-2.0
/*
 * CPU contention (host.cpu_contention): the instances that had warm runs,
 * all of them at once, --warm-runs times. In each run, each one's CPU over
 * the window in which all of them read, against what it spent alone on the
 * same reads (its warm runs), is 1 + C (n - 1); the run's C is the median
 * of the instances', the profile's the median of the runs' (at least 0). A
 * run that fails leaves C at 0, said on stderr.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibrate/calibrate.h"
#include "calibrate/session.h"
#include "lib/log.h"
#include "lib/util.h"

/* the runs together: who takes part and what each run gave */
struct together {
	int n;
	char **argvs[MODEL_MAX_INST];
	char names[MODEL_MAX_INST][64];
	const char *np[MODEL_MAX_INST];
	double stop[MODEL_MAX_INST];		/* bytes: no further than its warm runs read */
	double cs[CAL_MAX_WARM_RUNS];		/* each run's C */
	double spans[CAL_MAX_WARM_RUNS];	/* each run's window with all of them reading */
	double ratio[MODEL_MAX_INST][CAL_MAX_WARM_RUNS];	/* CPU against alone */
};

/*
 * What instance i spent alone on its reads from byte b0 to b1: the median
 * over its warm runs; < 0 when none of them read that far.
 */
static double alone_cpu(const struct cal_session *s, int i, double b0, double b1)
{
	double v[CAL_MAX_WARM_RUNS];
	int n = 0;

	for (uint32_t r = 0; r < s->req->warm_runs; r++) {
		double cpu = cal_curve_cpu(&s->curves[i * CAL_MAX_WARM_RUNS + r], b0, b1);

		if (cpu > 0)
			v[n++] = cpu;
	}
	return n ? median_d(v, n) : -1;
}

/* the instances that had warm runs, into tg and pc->inst[] */
static void together_pick(const struct cal_session *s, const struct profile *p,
			  struct profile_contention *pc, struct together *tg)
{
	const struct cal_request *r = s->req;

	tg->n = 0;
	for (int i = 0; i < p->ninst && i < r->ncmds; i++) {
		int n = tg->n;

		if (!p->inst[i].warm.method[0])
			continue;
		pc->inst[n] = i;
		tg->argvs[n] = r->cmds[i];
		snprintf(tg->names[n], sizeof(tg->names[n]), "together-%s", p->inst[i].m.name);
		tg->np[n] = tg->names[n];
		/* no further than its warm runs all read: their curves end there */
		tg->stop[n] = INFINITY;
		for (uint32_t k = 0; k < r->warm_runs; k++)
			tg->stop[n] = fmin(tg->stop[n], s->curves[i * CAL_MAX_WARM_RUNS + k].bytes);
		tg->stop[n] *= 0.98;
		tg->n++;
	}
}

/* why run r of them together failed: C stays unmeasured */
static void together_err(const struct profile *p, const struct profile_contention *pc,
			 const struct cal_together *tog, int n, uint32_t r, int err)
{
	char when[512];
	int len = 0;

	if (err != -ENODATA) {
		ctl_err("calibrate: run %u of the %d instances together: %s; CPU contention "
			"not measured (0)", r + 1, n, cal_warm_err(err));
		return;
	}
	for (int k = 0; k < n && len < (int)sizeof(when); k++)
		len += snprintf(when + len, sizeof(when) - len, "%s%s %.2f-%.2f s",
				k ? ", " : "", p->inst[pc->inst[k]].m.name,
				tog->first[k], tog->last[k]);
	ctl_err("calibrate: run %u of the %d instances together: no %.0f s in which "
		"all of them read (reads: %s); "
		"CPU contention not measured (0)", r + 1, n, CAL_TOGETHER_MIN_S, when);
}

/* run r's CPU ratios and C into tg; -ERANGE when one read further than alone */
static int together_ratios(const struct cal_session *s, const struct profile *p,
			   const struct profile_contention *pc, const struct cal_together *tog,
			   struct together *tg, uint32_t r)
{
	double v[MODEL_MAX_INST];
	int n = tg->n;

	for (int k = 0; k < n; k++) {
		double alone = alone_cpu(s, pc->inst[k], tog->from[k], tog->to[k]);

		if (!(alone > 0)) {
			ctl_err("calibrate: instance %s read further together than alone; "
				"CPU contention not measured (0)", p->inst[pc->inst[k]].m.name);
			return -ERANGE;
		}
		tg->ratio[k][r] = tog->cpu[k] / alone;
		v[k] = (tg->ratio[k][r] - 1) / (n - 1);
	}
	tg->cs[r] = median_d(v, n);
	tg->spans[r] = tog->span_s;
	return 0;
}

/* the runs' medians and range into the profile */
static void together_sum(const struct cal_session *s, struct together *tg, struct profile *p)
{
	struct profile_contention *pc = &p->contention;
	uint32_t runs = s->req->warm_runs;

	pc->runs = runs;
	pc->n = tg->n;
	pc->c_min = pc->c_max = tg->cs[0];
	for (uint32_t r = 0; r < runs; r++) {
		pc->c_min = fmin(pc->c_min, tg->cs[r]);
		pc->c_max = fmax(pc->c_max, tg->cs[r]);
	}
	pc->measured = median_d(tg->cs, runs);
	pc->span_s = median_d(tg->spans, runs);
	pc->seconds = s->times->together_seconds;
	for (int k = 0; k < tg->n; k++)
		pc->ratio[k] = median_d(tg->ratio[k], runs);
	p->cpu_contention = fmin(fmax(pc->measured, 0), 10);
}

void cal_contention(struct cal_session *s, struct profile *p)
{
	const struct cal_request *r = s->req;
	struct cal_warm_opts o = { .first_read_limit = CAL_FIRST_READ_LIMIT };
	struct profile_contention *pc = &p->contention;
	struct cal_together tog;
	struct together tg;
	int err;

	memset(pc, 0, sizeof(*pc));
	if (r->no_contention || !s->curves)
		return;
	together_pick(s, p, pc, &tg);
	if (tg.n < 2)
		return;
	/* n of them on the CPUs read about n times slower */
	o.window = r->warm_time * tg.n;
	for (uint32_t k = 0; k < r->warm_runs; k++) {
		if (r->opts.verbose)
			fprintf(stderr, "calibrate: run %u/%u of %d instances together\n", k + 1,
				r->warm_runs, tg.n);
		err = cal_warm_together(tg.argvs, tg.n, s->ds, &o, &s->trk, tg.np, tg.stop, &tog);
		s->times->together_seconds += tog.seconds;
		if (err)
			together_err(p, pc, &tog, tg.n, k, err);
		if (err || together_ratios(s, p, pc, &tog, &tg, k)) {
			memset(pc, 0, sizeof(*pc));
			return;
		}
	}
	together_sum(s, &tg, p);
}
