// SPDX-License-Identifier: GPL-2.0
/*
 * One calibration of a dataset and its instances (cal_calibrate()): the
 * storage and memory part of the profile, then each instance's rate as
 * given, from the predictor (graph=), or with its other terms (CPU per
 * byte, start-up, epoch gap, read streams) from short warm runs of its
 * command (warm.c), then their CPU contention (contention.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/calibrate.h"
#include "calibrate/session.h"
#include "lib/log.h"
#include "lib/units.h"
#include "lib/util.h"
#include "module/module.h"

void cal_request_init(struct cal_request *r)
{
	memset(r, 0, sizeof(*r));
	model_args_init(&r->args);
	r->opts.sample_bytes = 256.0 * 1024 * 1024;
	r->opts.max_readers = 2;
	r->opts.bw_seconds = CAL_BW_SECONDS;
	r->warm_time = 20;
	r->warm_runs = 3;
}

static char *join_argv(char **argv)
{
	size_t len = 1;
	char *s;

	for (char **a = argv; *a; a++)
		len += strlen(*a) + 1;
	s = calloc(1, len);
	for (char **a = argv; s && *a; a++) {
		if (a != argv)
			strcat(s, " ");
		strcat(s, *a);
	}
	return s;
}

/* The terms a warm run measured, then the keys --instance gave on top. */
static int cal_apply_warm(const struct cal_request *r, struct profile_inst *pi, int i,
			  const struct cal_warm *w)
{
	char err[160];

	pi->m.rate = w->rate;
	pi->m.cpu_per_byte = w->cpu_per_byte;
	pi->m.cpu_task_per_byte = w->cpu_task_per_byte;
	pi->m.startup = w->startup;
	pi->m.startup_cpu = w->startup_cpu;
	pi->m.epoch_gap = w->epoch_gap;
	pi->m.streams = w->streams;
	pi->m.window = w->window;
	pi->m.exit = w->exit;
	pi->warm = (struct profile_warm){
		.seconds = w->seconds, .window_s = w->window_s, .bytes = w->bytes,
		.cpu_s = w->cpu_s, .first_read_s = w->first_read, .epoch_seen = w->epoch_seen,
		.window_measured = w->window_measured, .exit_measured = w->exit_measured,
		.epoch2_seen = w->epoch2_seen, .runs = w->runs, .rate_min = w->rate_min,
		.rate_max = w->rate_max,
	};
	snprintf(pi->warm.method, sizeof(pi->warm.method), "%s", w->method);
	snprintf(pi->warm.exit_from, sizeof(pi->warm.exit_from), "%s", w->exit_from);
	snprintf(pi->rate_source, sizeof(pi->rate_source), PROFILE_SRC_WARM);
	if (i < r->args.nspec && profile_inst_parse(r->args.spec_str[i], &pi->m, err, sizeof(err))) {
		ctl_err("instance %s: %s", pi->m.name, err);
		return -EINVAL;
	}
	return 0;
}

/* --warm-trace PREFIX: PREFIX NAME.csv, or NAME-R.csv for each of several runs */
static const char *warm_trace(const struct cal_request *r, const char *name, uint32_t run,
			      char *buf, size_t len)
{
	int n = -1;

	if (r->trace && r->warm_runs > 1)
		n = snprintf(buf, len, "%s%s-%u.csv", r->trace, name, run + 1);
	else if (r->trace)
		n = snprintf(buf, len, "%s%s.csv", r->trace, name);
	return n >= 0 && n < (int)len ? buf : NULL;
}

static int cal_warm_instance(struct cal_session *s, struct profile_inst *pi, int i)
{
	const struct cal_request *r = s->req;
	struct cal_warm_opts o = { .window = r->warm_time,
				   .first_read_limit = CAL_FIRST_READ_LIMIT };
	struct cal_warm w, runs[CAL_MAX_WARM_RUNS];
	char job[64], trace[4096];
	double spread;
	int err;

	/* epochs= given: a warm run that read them all was ending by itself */
	if (i < r->args.nspec && strstr(r->args.spec_str[i], "epochs="))
		o.epochs = pi->m.epochs;

	/* window= given: the fit takes it; else it measures the run-ahead */
	if (i < r->args.nspec && strstr(r->args.spec_str[i], "window="))
		o.window_bytes = pi->m.window;
	snprintf(job, sizeof(job), "calibrate-%s", pi->m.name);
	for (uint32_t k = 0; k < r->warm_runs; k++) {
		o.trace = warm_trace(r, pi->m.name, k, trace, sizeof(trace));
		if (r->opts.verbose)
			fprintf(stderr, "calibrate: warm run %u/%u of %s: %s\n", k + 1, r->warm_runs,
				pi->m.name, pi->cmd);
		err = cal_warm_run(r->cmds[i], s->ds, &o, &s->trk, job, &runs[k]);
		s->times->warm_seconds[i] += runs[k].seconds;
		if (!err && s->curves)
			s->curves[i * CAL_MAX_WARM_RUNS + k] = runs[k].curve;
		if (err) {
			ctl_err("instance %s: warm run %u of '%s' failed: %s", pi->m.name, k + 1,
				r->cmds[i][0], cal_warm_err(err));
			return err;
		}
	}
	cal_warm_median(runs, r->warm_runs, &w);
	spread = cal_warm_spread(&w);
	if (spread > CAL_WARM_SPREAD_WARN) {
		char lo[32], hi[32];

		ctl_err("instance %s: its %d warm runs read %s to %s, %.0f%% of their median "
			"apart: the job's own speed varied between runs (a busy machine, or its "
			"own processes' scheduling), and predictions from this profile carry "
			"that; a quieter machine or more --warm-runs narrow it", pi->m.name,
			w.runs, units_fmt_rate(w.rate_min, lo, sizeof(lo)),
			units_fmt_rate(w.rate_max, hi, sizeof(hi)), 100 * spread);
	}
	return cal_apply_warm(r, pi, i, &w);
}

/* what the predictor said beside the rate, into the profile */
static void cal_pred_record(struct profile_inst *pi, const struct cal_pred *pr)
{
	snprintf(pi->rate_source, sizeof(pi->rate_source), PROFILE_SRC_PRED);
	pi->pred = (struct profile_pred){ .iteration_s = pr->iter_s,
					  .bytes_per_iter = pr->bytes_per_iter, .nwarn = pr->nwarn };
	snprintf(pi->pred.model, sizeof(pi->pred.model), "%s", pr->model);
	snprintf(pi->pred.trained_on, sizeof(pi->pred.trained_on), "%s", pr->trained_on);
	pi->pred.probe_ratio = pr->probe_ratio;
	snprintf(pi->pred.probe, sizeof(pi->pred.probe), "%s", pr->probe);
	for (int k = 0; k < pr->nwarn && k < PROFILE_PRED_WARN; k++) {
		snprintf(pi->pred.warn[k], sizeof(pi->pred.warn[k]), "%s", pr->warn[k]);
		ctl_err("instance %s: predictor warning: %s", pi->m.name, pr->warn[k]);
	}
}

/*
 * graph= (and batch=): the rate from the predictor, no warm run; the bytes
 * per sample from sample_bytes=, else the dataset's bytes per sample.
 */
static int cal_pred_instance(const struct sample_set *ds, struct profile_inst *pi)
{
	double samples = ds->nsamples ? ds->nsamples : ds->files.n;
	double sb = pi->m.sample_bytes > 0 ? pi->m.sample_bytes : ds->files.bytes / samples;
	struct cal_pred pr;
	int err;

	if (!(pi->m.batch >= 1)) {
		ctl_err("instance %s: graph= needs batch= (samples per iteration)", pi->m.name);
		return -EINVAL;
	}
	err = cal_predict_rate(pi->m.graph, pi->m.batch, sb, &pr);
	if (err) {
		ctl_err("instance %s: %s: %s", pi->m.name, pi->m.graph, pr.err);
		return err;
	}
	pi->m.rate = pr.rate;
	pi->m.sample_bytes = sb;
	if (!(pi->m.cpu_per_byte > 0))
		pi->m.cpu_per_byte = pr.cpu_per_byte;
	cal_pred_record(pi, &pr);
	return 0;
}

static int cal_instance(struct cal_session *s, struct profile *p, int i)
{
	const struct cal_request *r = s->req;
	struct profile_inst *pi = &p->inst[i];

	if (i < r->args.nspec)
		pi->m = r->args.spec[i];
	else
		profile_inst_default(&pi->m, i);
	snprintf(pi->rate_source, sizeof(pi->rate_source), PROFILE_SRC_RATE);
	if (i < r->nrates)
		pi->m.rate = r->rates[i];
	if (i < r->ncmds)
		pi->cmd = join_argv(r->cmds[i]);
	if (pi->m.rate > 0)
		return 0;
	if (pi->m.graph[0])
		return cal_pred_instance(s->ds, pi);
	if (i >= r->ncmds) {
		ctl_err("instance %s: no rate: give --rate, graph= and batch=, or its command after '--'",
			pi->m.name);
		return -EINVAL;
	}
	return cal_warm_instance(s, pi, i);
}

/* Whether instance i gets a warm run (no rate given for it). */
static bool needs_warm(const struct cal_request *r, int i)
{
	return i < r->ncmds && !(i < r->nrates && r->rates[i] > 0) &&
	       !(i < r->args.nspec && r->args.spec[i].graph[0]) &&
	       !(i < r->args.nspec && r->args.spec[i].rate > 0);
}

/* The dataset into the cache once for every warm run, and the tracker. */
static int cal_warm_setup(struct cal_session *s, struct profile *p)
{
	const struct cal_request *r = s->req;
	double t0 = now_s();
	int err;

	err = cal_warm_dataset(s->ds, (p->cache_dram + p->cache_cxl) * 0.9);
	p->warmup_seconds = now_s() - t0;
	if (err) {
		ctl_err("calibrate: reading %s into the cache: %s", r->dataset, strerror(-err));
		return err;
	}
	if (r->no_track)
		return 0;
	dataset_name_make(NULL, r->dataset, s->name, sizeof(s->name));
	err = cal_track_open(&s->trk, s->ds, s->name);
	/* loaded but too small and it cannot grow now: say so rather than count in /proc */
	if (err == -EBUSY || err == -E2BIG)
		return err;
	if (err)
		ctl_err("calibrate: tracker not available (%s): warm runs counted in /proc",
			strerror(-err));
	return 0;
}

/* the instances: as many as specs, rates or commands */
static int cal_ninst(const struct cal_request *r)
{
	int n = r->args.nspec > r->nrates ? r->args.nspec : r->nrates;

	return r->ncmds > n ? r->ncmds : n;
}

/* After the storage and memory part: the instances and their contention. */
static int cal_instances(struct cal_session *s, struct profile *p, int n, bool warm)
{
	int err = 0;

	if (warm)
		err = cal_warm_setup(s, p);
	for (int i = 0; i < n && !err; i++, p->ninst++)
		err = cal_instance(s, p, i);
	if (!err && warm)
		cal_contention(s, p);
	return err;
}

int cal_calibrate(const struct cal_request *r, struct profile *p, struct cal_times *t)
{
	struct cal_session s = { .req = r, .times = t };
	struct cal_opts opts = r->opts;
	struct sample_set ds;
	double t0 = now_s();
	bool warm = false;
	int n, err;

	memset(t, 0, sizeof(*t));
	s.curves = calloc(MODEL_MAX_INST * CAL_MAX_WARM_RUNS, sizeof(*s.curves));
	err = sample_set_scan(r->dataset, r->record_size, &ds);
	if (err) {
		if (err == -ENODATA)	/* other errors: the walk said what */
			ctl_err("%s: no files", r->dataset);
		goto free_curves;
	}
	s.ds = &ds;
	n = cal_ninst(r);
	for (int i = 0; i < n; i++)
		warm |= needs_warm(r, i);
	/* what B(k) read stays cached when warm runs come next */
	opts.keep_cached = warm;
	err = cal_profile(&opts, r->dataset, &ds, p);
	if (err)
		ctl_err("calibration failed: %s", err == -ENODATA ?
			"the sample has fewer samples than readers (a dataset of a few large "
			"files: --record-size cuts them into samples)" : strerror(-err));
	else
		err = cal_instances(&s, p, n, warm);
	p->calib_seconds = now_s() - t0;
	cal_track_close(&s.trk);
	sample_set_free(&ds);
free_curves:
	free(s.curves);
	return err;
}
