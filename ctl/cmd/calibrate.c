// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl calibrate: measure the model's inputs cheaply and save them as a
 * profile (JSON). Storage: B(1), B(2) from cold reads of a sample of the
 * dataset; memory: what the page cache can use per node, with and without
 * the CXL node; instances: compute-bound rates given by the user or, with
 * the other terms of a real job (CPU per byte, start-up, epoch gap, read
 * streams), from a short warm run of each command (calibrate/warm.c).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/calibrate.h"
#include "cli/cmd.h"
#include "lib/log.h"
#include "lib/out.h"
#include "lib/units.h"
#include "lib/util.h"
#include "module/module.h"
#include "release/release.h"

#define CAL_FIRST_READ_LIMIT	120.0	/* s: a start-up longer than this is a wrong command */

struct cal_cmd {
	const char *dataset, *output;
	uint64_t record_size;
	struct cal_opts opts;
	struct model_args args;		/* only the instance specs are used */
	double rates[MODEL_MAX_INST];
	int nrates;
	double warm_time;
	uint32_t warm_runs;		/* per instance; its terms are their medians */
	bool no_track;
	bool no_contention;		/* --no-contention: no run of them together */
	const char *trace;		/* --warm-trace PREFIX */
	char ***cmds;
	int ncmds;
	/* the warm runs */
	struct cal_track trk;
	char name[TANDEM_NAME_MAX];	/* the dataset's, as run names it */
	double warm_seconds[MODEL_MAX_INST];
	double together_seconds;
	/* each instance's warm runs' CPU curves: [i * CAL_MAX_WARM_RUNS + r] */
	struct cal_curve *curves;
};

static const struct option cal_opts_long[] = {
	{ "dataset", required_argument, NULL, 'd' },
	{ "record-size", required_argument, NULL, 'r' },
	{ "sample", required_argument, NULL, 's' },
	{ "cold", required_argument, NULL, 'c' },
	{ "readers", required_argument, NULL, 'k' },
	{ "instance", required_argument, NULL, 'i' },
	{ "rate", required_argument, NULL, 'R' },
	{ "warm-time", required_argument, NULL, 'w' },
	{ "warm-runs", required_argument, NULL, 'W' },
	{ "bw-time", required_argument, NULL, 'b' },
	{ "no-track", no_argument, NULL, 'T' },
	{ "no-contention", no_argument, NULL, 'C' },
	{ "warm-trace", required_argument, NULL, 't' },
	{ "output", required_argument, NULL, 'o' },
	{ 0 }
};

static int cal_opt(struct cal_cmd *c, int opt, const char *arg)
{
	char err[160];
	uint32_t k;

	switch (opt) {
	case 'd': c->dataset = arg; return 0;
	case 'r': return units_parse_bytes(arg, &c->record_size);
	case 's': return units_parse_size(arg, &c->opts.sample_bytes);
	case 'c':
		if (!strcmp(arg, "fadvise"))
			c->opts.cold = CAL_COLD_FADVISE;
		else if (!strcmp(arg, "drop-caches"))
			c->opts.cold = CAL_COLD_DROP_CACHES;
		else
			return -EINVAL;
		return 0;
	case 'k':
		if (parse_u32(arg, &k) || k < 1 || k > MODEL_MAX_BW)
			return -EINVAL;
		c->opts.max_readers = k;
		return 0;
	case 'i':
		if (model_args_add_instance(&c->args, arg, err, sizeof(err)))
			return ctl_usage_err("calibrate", NULL, "--instance: %s", err);
		return 0;
	case 'R': return model_args_parse_rates(arg, c->rates, MODEL_MAX_INST, &c->nrates);
	case 'w': return units_parse_duration(arg, &c->warm_time);
	case 'W':
		if (parse_u32(arg, &k) || k < 1 || k > CAL_MAX_WARM_RUNS)
			return -EINVAL;
		c->warm_runs = k;
		return 0;
	case 'b': return units_parse_duration(arg, &c->opts.bw_seconds);
	case 'T': c->no_track = true; return 0;
	case 'C': c->no_contention = true; return 0;
	case 't': c->trace = arg; return 0;
	case 'o': c->output = arg; return 0;
	}
	return -EINVAL;
}

static int cal_parse(int argc, char **argv, struct cal_cmd *c)
{
	int opt, ret, dash = argc;

	memset(c, 0, sizeof(*c));
	model_args_init(&c->args);
	c->opts.sample_bytes = 256.0 * 1024 * 1024;
	c->opts.max_readers = 2;
	c->opts.bw_seconds = CAL_BW_SECONDS;
	c->warm_time = 20;
	c->warm_runs = 3;
	c->output = "tandem-profile.json";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			dash = i;
			break;
		}
	}
	optind = 0;	/* 0: full re-initialisation (main() used "+" mode) */
	while ((opt = ctl_getopt(dash, argv, "o:", cal_opts_long, "calibrate", NULL)) != -1) {
		if (opt == CTL_EUSAGE)
			return opt;
		ret = cal_opt(c, opt, optarg);
		if (ret == CTL_EUSAGE)
			return ret;
		if (ret)
			return ctl_usage_err("calibrate", NULL, "bad value '%s' for --%s", optarg,
					     opt_name(cal_opts_long, opt));
	}
	if (optind != dash)
		return ctl_usage_err("calibrate", NULL, "unexpected argument '%s'", argv[optind]);
	if (!c->dataset)
		return ctl_usage_err("calibrate", NULL, "--dataset is required");
	if (dash < argc && rel_split_commands(argc - dash - 1, argv + dash + 1,
					      &c->cmds, &c->ncmds))
		return ctl_usage_err("calibrate", NULL, "commands after '--' must be separated "
				     "by ':::' and not empty");
	return 0;
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
static int cal_apply_warm(struct cal_cmd *c, struct profile_inst *pi, int i,
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
	if (i < c->args.nspec && profile_inst_parse(c->args.spec_str[i], &pi->m, err, sizeof(err))) {
		ctl_err("instance %s: %s", pi->m.name, err);
		return -EINVAL;
	}
	return 0;
}

static const char *warm_err(int err)
{
	switch (err) {
	case -ENOEXEC: return "command not found";
	case -ETIMEDOUT: return "it read no file of the dataset within 120 s of its start "
				"(does it read --dataset?)";
	case -ENODATA: return "it read too little of the dataset to measure (ended or "
			      "killed early?)";
	default: return strerror(-err);
	}
}

static int cal_warm_instance(struct cal_cmd *c, const struct lg_dataset *ds,
			     struct profile_inst *pi, int i)
{
	struct cal_warm_opts o = { .window = c->warm_time,
				   .first_read_limit = CAL_FIRST_READ_LIMIT };
	struct cal_warm w, runs[CAL_MAX_WARM_RUNS];
	char job[64], trace[4096];
	int err;

	/* epochs= given: a warm run that read them all was ending by itself */
	if (i < c->args.nspec && strstr(c->args.spec_str[i], "epochs="))
		o.epochs = pi->m.epochs;

	/* window= given: the fit takes it; else it measures the run-ahead */
	if (i < c->args.nspec && strstr(c->args.spec_str[i], "window="))
		o.window_bytes = pi->m.window;
	snprintf(job, sizeof(job), "calibrate-%s", pi->m.name);
	for (uint32_t r = 0; r < c->warm_runs; r++) {
		/* NAME.csv, or NAME-R.csv for each of several runs */
		int len = -1;

		if (c->trace && c->warm_runs > 1)
			len = snprintf(trace, sizeof(trace), "%s%s-%u.csv", c->trace, pi->m.name, r + 1);
		else if (c->trace)
			len = snprintf(trace, sizeof(trace), "%s%s.csv", c->trace, pi->m.name);
		o.trace = len >= 0 && len < (int)sizeof(trace) ? trace : NULL;
		if (c->opts.verbose)
			fprintf(stderr, "calibrate: warm run %u/%u of %s: %s\n", r + 1, c->warm_runs,
				pi->m.name, pi->cmd);
		err = cal_warm_run(c->cmds[i], ds, &o, &c->trk, job, &runs[r]);
		c->warm_seconds[i] += runs[r].seconds;
		if (!err && c->curves)
			c->curves[i * CAL_MAX_WARM_RUNS + r] = runs[r].curve;
		if (err) {
			ctl_err("instance %s: warm run %u of '%s' failed: %s", pi->m.name, r + 1,
				c->cmds[i][0], warm_err(err));
			return err;
		}
	}
	cal_warm_median(runs, c->warm_runs, &w);
	return cal_apply_warm(c, pi, i, &w);
}

/*
 * graph= (and batch=): the rate from the predictor, no warm run; the bytes
 * per sample from sample_bytes=, else the dataset's bytes per sample.
 */
static int cal_pred_instance(const struct lg_dataset *ds, struct profile_inst *pi)
{
	double samples = ds->nsamples ? ds->nsamples : ds->nfiles;
	double sb = pi->m.sample_bytes > 0 ? pi->m.sample_bytes : ds->bytes / samples;
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
	snprintf(pi->rate_source, sizeof(pi->rate_source), PROFILE_SRC_PRED);
	pi->pred = (struct profile_pred){ .iteration_s = pr.iter_s,
					  .bytes_per_iter = pr.bytes_per_iter, .nwarn = pr.nwarn };
	snprintf(pi->pred.model, sizeof(pi->pred.model), "%s", pr.model);
	snprintf(pi->pred.trained_on, sizeof(pi->pred.trained_on), "%s", pr.trained_on);
	pi->pred.probe_ratio = pr.probe_ratio;
	snprintf(pi->pred.probe, sizeof(pi->pred.probe), "%s", pr.probe);
	for (int k = 0; k < pr.nwarn && k < PROFILE_PRED_WARN; k++) {
		snprintf(pi->pred.warn[k], sizeof(pi->pred.warn[k]), "%s", pr.warn[k]);
		ctl_err("instance %s: predictor warning: %s", pi->m.name, pr.warn[k]);
	}
	return 0;
}

static int cal_instance(struct cal_cmd *c, const struct lg_dataset *ds, struct profile *p, int i)
{
	struct profile_inst *pi = &p->inst[i];

	if (i < c->args.nspec)
		pi->m = c->args.spec[i];
	else
		profile_inst_default(&pi->m, i);
	snprintf(pi->rate_source, sizeof(pi->rate_source), PROFILE_SRC_RATE);
	if (i < c->nrates)
		pi->m.rate = c->rates[i];
	if (i < c->ncmds)
		pi->cmd = join_argv(c->cmds[i]);
	if (pi->m.rate > 0)
		return 0;
	if (pi->m.graph[0])
		return cal_pred_instance(ds, pi);
	if (i >= c->ncmds) {
		ctl_err("instance %s: no rate: give --rate, graph= and batch=, or its command after '--'",
			pi->m.name);
		return -EINVAL;
	}
	return cal_warm_instance(c, ds, pi, i);
}

/* Whether instance i gets a warm run (no rate given for it). */
static bool needs_warm(const struct cal_cmd *c, int i)
{
	return i < c->ncmds && !(i < c->nrates && c->rates[i] > 0) &&
	       !(i < c->args.nspec && c->args.spec[i].graph[0]) &&
	       !(i < c->args.nspec && c->args.spec[i].rate > 0);
}

/*
 * What instance i spent alone on its reads from byte b0 to b1: the median
 * over its warm runs; < 0 when none of them read that far.
 */
static double alone_cpu(const struct cal_cmd *c, int i, double b0, double b1)
{
	double v[CAL_MAX_WARM_RUNS];
	int n = 0;

	for (uint32_t r = 0; r < c->warm_runs; r++) {
		double cpu = cal_curve_cpu(&c->curves[i * CAL_MAX_WARM_RUNS + r], b0, b1);

		if (cpu > 0)
			v[n++] = cpu;
	}
	return n ? median_d(v, n) : -1;
}

/*
 * CPU contention (host.cpu_contention): the instances that had warm runs, all
 * of them at once, --warm-runs times. In each run, each one's CPU over the
 * window in which all of them read, against what it spent alone on the same
 * reads (its warm runs), is 1 + C (n - 1); the run's C is the median of the
 * instances', the profile's the median of the runs' (at least 0). A run
 * that fails leaves C at 0, said on stderr.
 */
static void cal_contention(struct cal_cmd *c, const struct lg_dataset *ds, struct profile *p)
{
	struct cal_warm_opts o = { .first_read_limit = CAL_FIRST_READ_LIMIT };
	struct profile_contention *pc = &p->contention;
	double stop[MODEL_MAX_INST];
	char **argvs[MODEL_MAX_INST], names[MODEL_MAX_INST][64];
	const char *np[MODEL_MAX_INST];
	double cs[CAL_MAX_WARM_RUNS], spans[CAL_MAX_WARM_RUNS];
	double ratio[MODEL_MAX_INST][CAL_MAX_WARM_RUNS], v[MODEL_MAX_INST];
	struct cal_together tog;
	int n = 0, err;
	uint32_t r;

	memset(pc, 0, sizeof(*pc));
	if (c->no_contention || !c->curves)
		return;
	for (int i = 0; i < p->ninst && i < c->ncmds; i++) {
		if (!p->inst[i].warm.method[0])
			continue;
		pc->inst[n] = i;
		argvs[n] = c->cmds[i];
		snprintf(names[n], sizeof(names[n]), "together-%s", p->inst[i].m.name);
		np[n] = names[n];
		/* no further than its warm runs all read: their curves end there */
		stop[n] = INFINITY;
		for (r = 0; r < c->warm_runs; r++)
			stop[n] = fmin(stop[n], c->curves[i * CAL_MAX_WARM_RUNS + r].bytes);
		stop[n] *= 0.98;
		n++;
	}
	if (n < 2)
		return;
	/* n of them on the CPUs read about n times slower */
	o.window = c->warm_time * n;
	for (r = 0; r < c->warm_runs; r++) {
		if (c->opts.verbose)
			fprintf(stderr, "calibrate: run %u/%u of %d instances together\n", r + 1,
				c->warm_runs, n);
		err = cal_warm_together(argvs, n, ds, &o, &c->trk, np, stop, &tog);
		c->together_seconds += tog.seconds;
		if (err == -ENODATA) {
			char when[512];
			int len = 0;

			for (int k = 0; k < n && len < (int)sizeof(when); k++)
				len += snprintf(when + len, sizeof(when) - len, "%s%s %.2f-%.2f s",
						k ? ", " : "", p->inst[pc->inst[k]].m.name,
						tog.first[k], tog.last[k]);
			ctl_err("calibrate: run %u of the %d instances together: no %.0f s in which "
				"all of them read (reads: %s); "
				"CPU contention not measured (0)", r + 1, n, CAL_TOGETHER_MIN_S, when);
		} else if (err) {
			ctl_err("calibrate: run %u of the %d instances together: %s; CPU contention "
				"not measured (0)", r + 1, n, warm_err(err));
		}
		if (err) {
			memset(pc, 0, sizeof(*pc));
			return;
		}
		for (int k = 0; k < n; k++) {
			double alone = alone_cpu(c, pc->inst[k], tog.from[k], tog.to[k]);

			if (!(alone > 0)) {
				ctl_err("calibrate: instance %s read further together than alone; "
					"CPU contention not measured (0)", p->inst[pc->inst[k]].m.name);
				memset(pc, 0, sizeof(*pc));
				return;
			}
			ratio[k][r] = tog.cpu[k] / alone;
			v[k] = (ratio[k][r] - 1) / (n - 1);
		}
		cs[r] = median_d(v, n);
		spans[r] = tog.span_s;
	}
	pc->runs = c->warm_runs;
	pc->n = n;
	pc->c_min = pc->c_max = cs[0];
	for (r = 0; r < c->warm_runs; r++) {
		pc->c_min = fmin(pc->c_min, cs[r]);
		pc->c_max = fmax(pc->c_max, cs[r]);
	}
	pc->measured = median_d(cs, c->warm_runs);
	pc->span_s = median_d(spans, c->warm_runs);
	pc->seconds = c->together_seconds;
	for (int k = 0; k < n; k++)
		pc->ratio[k] = median_d(ratio[k], c->warm_runs);
	p->cpu_contention = fmin(fmax(pc->measured, 0), 10);
}

/* The dataset into the cache once for every warm run, and the tracker. */
static int cal_warm_setup(struct cal_cmd *c, const struct lg_dataset *ds, struct profile *p)
{
	double t0 = now_s();
	int err;

	err = cal_warm_dataset(ds, (p->cache_dram + p->cache_cxl) * 0.9);
	p->warmup_seconds = now_s() - t0;
	if (err) {
		ctl_err("calibrate: reading %s into the cache: %s", c->dataset, strerror(-err));
		return err;
	}
	if (c->no_track)
		return 0;
	dataset_name_make(NULL, c->dataset, c->name, sizeof(c->name));
	err = cal_track_open(&c->trk, ds, c->name);
	/* loaded but too small and it cannot grow now: say so rather than count in /proc */
	if (err == -EBUSY || err == -E2BIG)
		return err;
	if (err)
		ctl_err("calibrate: tracker not available (%s): warm runs counted in /proc",
			strerror(-err));
	return 0;
}

/* one instance: what it was given or what its warm run measured */
static void cal_print_inst(const struct profile_inst *pi)
{
	const struct model_inst *in = &pi->m;
	char b[32];

	out_obj_open(NULL);
	out_str("name", "instance %s: ", in->name);
	out_double("rate_bps", NULL, in->rate);
	out_text("%s", units_fmt_rate(in->rate, b, sizeof(b)));
	out_str("rate_source", " (%s", pi->rate_source);
	out_text("%s%s)", pi->warm.method[0] ? ", " : "", pi->warm.method);
	if (!strcmp(pi->rate_source, PROFILE_SRC_PRED)) {
		out_obj_open("predictor");
		out_str("graph", " [%s", in->graph);
		out_double("batch", " at batch %.0f", in->batch);
		out_double("iteration_s", ": %.3f s per iteration", pi->pred.iteration_s);
		out_double("sample_bytes", NULL, in->sample_bytes);
		out_text(" of %s", units_fmt_size(pi->pred.bytes_per_iter, b, sizeof(b)));
		out_double("bytes_per_iteration", NULL, pi->pred.bytes_per_iter);
		out_str("model", ", model %s", pi->pred.model);
		out_str("trained_on", " (%s)", pi->pred.trained_on);
		out_double("probe_ratio", pi->pred.probe_ratio > 0 ? ", probe x%.3f" : NULL,
			   pi->pred.probe_ratio);
		out_str("probe", " (%s)", pi->pred.probe);
		out_arr_open("warnings");
		for (int k = 0; k < pi->pred.nwarn; k++)
			out_str(NULL, NULL, pi->pred.warn[k]);
		out_arr_close();
		out_text("%s]", pi->pred.nwarn ? ", with warnings" : "");
		out_obj_close();
	} else {
		out_null("predictor", NULL);
	}
	out_double("cpu_s_per_byte", NULL, in->cpu_per_byte);
	out_text(", CPU %.3f s/MiB (%.2f cores)", in->cpu_per_byte * 1048576,
		 in->cpu_per_byte * in->rate);
	out_double("cpu_task_s_per_byte", NULL, in->cpu_task_per_byte);
	if (in->cpu_task_per_byte > 0)
		out_text(" (busiest process %.2f cores)", in->cpu_task_per_byte * in->rate);
	out_double("startup_s", ", start-up %.2f s", in->startup);
	if (pi->warm.method[0])
		out_text(" (first read %.2f s)", pi->warm.first_read_s);
	out_double("startup_cpu_s", " (%.2f CPU-s)", in->startup_cpu);
	out_double("epoch_gap_s", ", epoch gap %.2f s", in->epoch_gap);
	out_text("%s", pi->warm.method[0] && !pi->warm.epoch_seen ? " (no boundary seen)" : "");
	out_double("streams", ", %.0f read streams", in->streams > 0 ? in->streams : 1);
	out_double("exit_s", ", exit %.2f s", in->exit);
	out_text("%s", !pi->warm.method[0] ? "" : !pi->warm.exit_measured ?
		 " (not measured: it read all its epochs, or outlived SIGINT)" :
		 !strcmp(pi->warm.exit_from, "end") ? " (its last epoch's reads to its end)" :
		 " (SIGINT to its end)");
	out_double("window_bytes", NULL, in->window);
	out_text(", read-ahead %s%s", units_fmt_size(in->window, b, sizeof(b)),
		 pi->warm.method[0] && pi->warm.window_measured ? " (measured)" : "");
	if (pi->warm.method[0]) {
		out_obj_open("warm_run");
		out_u64("runs", NULL, pi->warm.runs);
		if (pi->warm.runs > 1) {
			out_text("; %u warm runs, medians (rate %s", pi->warm.runs,
				 units_fmt_rate(pi->warm.rate_min, b, sizeof(b)));
			out_text("-%s)", units_fmt_rate(pi->warm.rate_max, b, sizeof(b)));
		}
		out_double("rate_min_bps", NULL, pi->warm.rate_min);
		out_double("rate_max_bps", NULL, pi->warm.rate_max);
		out_double("seconds", pi->warm.runs > 1 ? ", %.1f s" : "; warm run %.1f s",
			   pi->warm.seconds);
		out_double("window_s", pi->warm.epoch2_seen ? " (rate over epoch 2: %.1f s" :
			   " (rate over epoch 1's steady part: %.1f s", pi->warm.window_s);
		out_double("bytes", NULL, pi->warm.bytes);
		out_text(", %.1f MiB)", pi->warm.bytes / 1048576);
		out_double("cpu_s", NULL, pi->warm.cpu_s);
		out_bool("epoch_seen", NULL, pi->warm.epoch_seen);
		out_bool("exit_measured", NULL, pi->warm.exit_measured);
		out_str("exit_from", NULL, pi->warm.exit_from[0] ? pi->warm.exit_from : NULL);
		out_bool("epoch2_seen", NULL, pi->warm.epoch2_seen);
		out_str("method", NULL, pi->warm.method);
		out_obj_close();
	} else {
		out_null("warm_run", NULL);
	}
	out_text("\n");
	out_obj_close();
}

static void cal_print_time(const struct profile *p, const struct cal_cmd *c)
{
	out_double("calibration_seconds", "calibration took %.1f s", p->calib_seconds);
	out_double("storage_seconds", ": storage and memory %.1f s", p->storage_seconds);
	out_double("warmup_seconds", NULL, p->warmup_seconds);
	if (p->warmup_seconds > 0)
		out_text(", reading the dataset into the cache %.1f s", p->warmup_seconds);
	out_arr_open("warm_run_seconds");
	for (int i = 0; i < p->ninst; i++) {
		if (!p->inst[i].warm.method[0])
			continue;
		out_double(NULL, NULL, c->warm_seconds[i]);
		out_text(", warm run %s %.1f s", p->inst[i].m.name, c->warm_seconds[i]);
	}
	out_arr_close();
	out_double("together_seconds", NULL, c->together_seconds);
	if (c->together_seconds > 0)
		out_text(", together %.1f s", c->together_seconds);
	out_text("\n");
}

/* host.cpu_contention and how it was measured */
static void cal_print_contention(const struct profile *p)
{
	const struct profile_contention *pc = &p->contention;

	out_double("cpu_contention", "CPU contention %.3f per co-runner", p->cpu_contention);
	if (!pc->runs) {
		out_null("contention", NULL);
		out_text(" (not measured)\n");
		return;
	}
	out_obj_open("contention");
	out_double("measured", " (measured %.3f", pc->measured);
	out_double("min", ", runs %.3f", pc->c_min);
	out_double("max", "-%.3f", pc->c_max);
	out_u64("runs", ", %llu runs", pc->runs);
	out_s64("instances", " of %lld instances together", pc->n);
	out_double("window_s", ", %.1f s all reading", pc->span_s);
	out_arr_open("cpu_ratio");
	for (int k = 0; k < pc->n; k++) {
		out_double(NULL, NULL, pc->ratio[k]);
		out_text("%s%s x%.2f", k ? ", " : "; CPU per byte against alone: ",
			 p->inst[pc->inst[k]].m.name, pc->ratio[k]);
	}
	out_arr_close();
	out_text(")\n");
	out_obj_close();
}

static void cal_print(const struct profile *p, const struct cal_cmd *c)
{
	char b[32];

	out_obj_open(NULL);
	out_str("profile", "profile %s\n", c->output);
	out_double("dataset_bytes", NULL, p->dataset_bytes);
	out_text("dataset %s, %s", p->dataset_path, units_fmt_size(p->dataset_bytes, b, sizeof(b)));
	out_u64("files", " in %llu files", p->files);
	out_text("\n");
	out_arr_open("bandwidth_bps");
	for (int k = 0; k < p->nbw; k++) {
		out_double(NULL, NULL, p->bw[k]);
		out_text("B(%d) = %s%s", k + 1, units_fmt_rate(p->bw[k], b, sizeof(b)),
			 k + 1 < p->nbw ? ", " : "");
	}
	out_arr_close();
	out_double("eta", p->nbw > 1 ? " (eta %.2f)" : NULL, p->nbw > 1 ? p->bw[1] / p->bw[0] : 1);
	out_str("cold_method", ", cold reads by %s\n", p->cold_method);
	out_s64("cxl_node", "CXL node %lld", p->cxl_node);
	out_double("cache_dram_bytes", NULL, p->cache_dram);
	out_text(", page cache can use %s of DRAM", units_fmt_size(p->cache_dram, b, sizeof(b)));
	out_double("cache_cxl_bytes", NULL, p->cache_cxl);
	out_text(" + %s on the CXL node", units_fmt_size(p->cache_cxl, b, sizeof(b)));
	out_double("cpus", ", %.0f CPUs\n", p->ncpu);
	out_arr_open("instances");
	for (int i = 0; i < p->ninst; i++)
		cal_print_inst(&p->inst[i]);
	out_arr_close();
	cal_print_contention(p);
	cal_print_time(p, c);
	out_obj_close();
}

int cmd_calibrate_run(int argc, char **argv)
{
	bool warm = false;
	struct lg_dataset ds;
	struct profile p;
	struct cal_cmd c;
	double t0 = now_s();
	int n, err;

	err = cal_parse(argc, argv, &c);
	if (err)
		return err;
	profile_init(&p);
	c.curves = calloc(MODEL_MAX_INST * CAL_MAX_WARM_RUNS, sizeof(*c.curves));
	err = lg_dataset_scan(c.dataset, c.record_size, &ds);
	if (err) {
		if (err == -ENODATA)	/* other errors: the walk said what */
			ctl_err("%s: no files", c.dataset);
		goto free_cmds;
	}
	n = c.args.nspec > c.nrates ? c.args.nspec : c.nrates;
	n = c.ncmds > n ? c.ncmds : n;
	for (int i = 0; i < n; i++)
		warm |= needs_warm(&c, i);
	/* what B(k) read stays cached when warm runs come next */
	c.opts.keep_cached = warm;
	err = cal_profile(&c.opts, c.dataset, &ds, &p);
	if (err) {
		ctl_err("calibration failed: %s", err == -ENODATA ?
			"the sample has fewer samples than readers" : strerror(-err));
		goto free_ds;
	}
	if (warm)
		err = cal_warm_setup(&c, &ds, &p);
	for (int i = 0; i < n && !err; i++, p.ninst++)
		err = cal_instance(&c, &ds, &p, i);
	if (!err && warm)
		cal_contention(&c, &ds, &p);
	p.calib_seconds = now_s() - t0;
	if (!err && (err = profile_save(c.output, &p)))
		ctl_err("%s: %s", c.output, strerror(-err));
	if (!err)
		cal_print(&p, &c);
free_ds:
	cal_track_close(&c.trk);
	lg_dataset_free(&ds);
free_cmds:
	profile_free(&p);
	rel_free_commands(c.cmds, c.ncmds);
	free(c.curves);
	return err;
}

TANDEM_CMD(calibrate, "calibrate", NULL, cmd_calibrate_run,
	   "--dataset DIR [--record-size S] [--sample SIZE] [--bw-time DUR] "
	   "[--cold fadvise|drop-caches] [--readers K] [--instance SPEC]... [--rate R[,R...]] "
	   "[--warm-time DUR] [--warm-runs N] [--warm-trace PREFIX] [--no-track] [--no-contention] [-o FILE] [-- CMD_A ::: CMD_B ...]",
	   "measure B(k), page-cache memory, each instance's rate, CPU, start-up and their CPU contention; save a profile")
