// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl run: release N training instances that read one dataset on the
 * schedule the makespan model chose (or a given one), and report predicted
 * against measured makespan.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "calibrate/calibrate.h"
#include "cli/cmd.h"
#include "lib/json.h"
#include "model/report.h"
#include "lib/out.h"
#include "model/profile.h"
#include "release/release.h"
#include "release/hooks.h"
#include "lib/units.h"
#include "lib/util.h"

struct run_cmd {
	const char *dataset, *stagger, *report, *profile, *name;
	uint64_t record_size;
	bool fail_fast, no_track, no_register;
	double grace, min_gain;
	struct model_args args;
	double rates[MODEL_MAX_INST];
	int nrates;
	struct cal_opts cal;
	char ***cmds;
	int ncmds;
};

/* What the model said, when there was one. */
struct run_pred {
	bool have;
	const char *mode;		/* "auto", "time", "progress" */
	struct mo_report mo;		/* auto: the search */
	struct model_result res;	/* at the delta actually used */
	struct model_sys sys;		/* what the model was given */
	struct model_inst inst[MODEL_MAX_INST];
	double nosteer_m;		/* M at the same release without steering, or NAN */
};

static const struct option run_opts[] = {
	{ "dataset", required_argument, NULL, 'd' },
	{ "stagger", required_argument, NULL, 's' },
	{ "profile", required_argument, NULL, 'P' },
	{ "instance", required_argument, NULL, 'i' },
	{ "rate", required_argument, NULL, 'R' },
	{ "steer", required_argument, NULL, 'S' },
	{ "record-size", required_argument, NULL, 'r' },
	{ "sample", required_argument, NULL, 'a' },
	{ "min-gain", required_argument, NULL, 'm' },
	{ "fail-fast", no_argument, NULL, 'f' },
	{ "grace", required_argument, NULL, 'g' },
	{ "report", required_argument, NULL, 'o' },
	{ "name", required_argument, NULL, 'n' },
	{ "no-track", no_argument, NULL, 'T' },
	{ "no-register", no_argument, NULL, 'N' },
	{ "nosteer-fraction", required_argument, NULL, 'F' },
	{ "steer-dram-fraction", required_argument, NULL, 'D' },
	{ 0 }
};

static int parse_inst(struct run_cmd *c, const char *arg)
{
	struct model_args *a = &c->args;
	char err[160];

	if (a->nspec == MODEL_MAX_INST)
		return -E2BIG;
	profile_inst_default(&a->spec[a->nspec], a->nspec);
	if (profile_inst_parse(arg, &a->spec[a->nspec], err, sizeof(err))) {
		ctl_err("--instance: %s", err);
		return -EINVAL;
	}
	a->spec_str[a->nspec++] = arg;
	return 0;
}

static int run_opt(struct run_cmd *c, int opt, const char *arg)
{
	struct model_args tmp;
	int err;

	switch (opt) {
	case 'd': c->dataset = arg; return 0;
	case 's': c->stagger = arg; return 0;
	case 'P': c->profile = arg; return 0;
	case 'i': return parse_inst(c, arg);
	case 'R':
		model_args_init(&tmp);
		err = model_args_parse_bw(&tmp, arg);
		c->nrates = tmp.nbw;
		memcpy(c->rates, tmp.bw, sizeof(c->rates[0]) * tmp.nbw);
		return err;
	case 'S':
		if (strcmp(arg, "on") && strcmp(arg, "off"))
			return -EINVAL;
		c->args.steer = !strcmp(arg, "on");
		return 0;
	case 'r': return units_parse_bytes(arg, &c->record_size);
	case 'a': return units_parse_size(arg, &c->cal.sample_bytes);
	case 'm': return parse_double(arg, &c->min_gain);
	case 'f': c->fail_fast = true; return 0;
	case 'g': return units_parse_duration(arg, &c->grace);
	case 'o': c->report = arg; return 0;
	case 'n': c->name = arg; return 0;
	case 'T': c->no_track = true; return 0;
	case 'N': c->no_register = true; return 0;
	case 'F': return parse_double(arg, &c->args.nosteer_frac);
	case 'D': return parse_double(arg, &c->args.steer_dram_frac);
	}
	return -EINVAL;
}

static int run_parse(int argc, char **argv, struct run_cmd *c)
{
	int opt, dash = -1;

	memset(c, 0, sizeof(*c));
	model_args_init(&c->args);
	c->min_gain = MO_MIN_GAIN;
	c->cal.sample_bytes = 256.0 * 1024 * 1024;
	c->cal.max_readers = 2;
	for (int i = 1; i < argc && dash < 0; i++)
		if (!strcmp(argv[i], "--"))
			dash = i;
	if (dash < 0) {
		ctl_err("give the instances' commands after '--', separated by ':::'");
		return -EINVAL;
	}
	optind = 0;	/* 0: full re-initialisation (main() used "+" mode) */
	while ((opt = getopt_long(dash, argv, "", run_opts, NULL)) != -1) {
		if (opt == '?' || run_opt(c, opt, optarg)) {
			if (opt != '?')
				ctl_err("bad value '%s'", optarg);
			return ctl_usage("run", NULL);
		}
	}
	if (optind != dash || !c->dataset) {
		ctl_err(c->dataset ? "unexpected argument before '--'" : "--dataset is required");
		return -EINVAL;
	}
	if (rel_split_commands(argc - dash - 1, argv + dash + 1, &c->cmds, &c->ncmds) ||
	    !c->ncmds || c->ncmds > MODEL_MAX_INST) {
		ctl_err("commands after '--' must be separated by ':::' and not empty");
		return -EINVAL;
	}
	return 0;
}

/* ---- prediction ---- */

static int load_profile(struct run_cmd *c, const struct lg_dataset *ds, struct profile *p)
{
	char err[256];
	int ret;

	if (c->profile) {
		ret = profile_load(c->profile, p, err, sizeof(err));
		if (ret)
			ctl_err("%s: %s", c->profile, err);
		return ret;
	}
	/* no stored profile: measure storage and memory now (a few seconds) */
	ret = cal_profile(&c->cal, c->dataset, ds, p);
	if (ret)
		ctl_err("calibration failed: %s", strerror(-ret));
	return ret;
}

static int read_sysfs_int(const char *path, int *v)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%d", v) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

/*
 * Whether the dataset's pages will be steered to a CXL node: tandem.ko is
 * loaded with steering on and a CXL node, and run registers the dataset.
 * That decides the cache the model gets (profile_cache()), unless --steer.
 */
static bool module_steers(const struct run_cmd *c)
{
	int steer = 0, node = -1;

	if (c->no_register || read_sysfs_int("/sys/kernel/tandem/steer", &steer) ||
	    read_sysfs_int("/sys/kernel/tandem/cxl_node", &node))
		return false;
	return steer == 1 && node >= 0;
}

/* The model of a's cache for the run's commands, with --rate overriding. */
static int run_model_new(const struct run_cmd *c, const struct model_args *a,
			 const struct profile *p, struct model_inst *inst,
			 struct model_sys *sys, struct model **m, char *err, size_t errlen)
{
	int n, ret = model_args_build(a, p, sys, inst, &n, err, errlen);

	for (int i = 0; !ret && i < c->nrates && i < n; i++)
		inst[i].rate = c->rates[i];
	if (!ret && n < c->ncmds)
		ret = -EINVAL, snprintf(err, errlen, "fewer instances than commands");
	return ret ?: model_new(sys, inst, c->ncmds, m, err, errlen);
}

/*
 * With steering, also the same jobs without it, to tell when steering would
 * cost time (a dataset larger than the CXL node thrashes there:
 * Documentation/validation.md, nodram-steer); *nosteer stays NULL when it
 * cannot be built.
 */
static int build_model(struct run_cmd *c, const struct lg_dataset *ds, struct run_pred *pr,
		       struct model **m, struct model **nosteer)
{
	struct model_inst inst[MODEL_MAX_INST];
	struct model_args a;
	struct model_sys sys;
	struct profile p;
	char err[256];
	int ret;

	profile_init(&p);
	ret = load_profile(c, ds, &p);
	if (ret)
		return ret;
	c->args.ninstances = c->ncmds;
	if (c->args.steer < 0)
		c->args.steer = module_steers(c);
	ret = run_model_new(c, &c->args, &p, pr->inst, &sys, m, err, sizeof(err));
	pr->sys = sys;
	if (ret)
		ctl_err("model: %s", err);
	a = c->args;
	a.steer = 0;
	if (!ret && c->args.steer > 0 &&
	    run_model_new(c, &a, &p, inst, &sys, nosteer, err, sizeof(err)))
		*nosteer = NULL;
	profile_free(&p);
	return ret;
}

static bool model_wanted(const struct run_cmd *c)
{
	return c->profile || c->nrates || c->args.nspec;
}

/* Decide the release vector; with a model, also predict M for it. */
static int plan(struct run_cmd *c, const struct lg_dataset *ds, struct rel_run *r,
		struct run_pred *pr)
{
	const char *st = c->stagger ? c->stagger : model_wanted(c) ? "auto" : "0";
	bool is_auto = !strcmp(st, "auto");
	double d[MODEL_MAX_INST] = { 0 };
	struct model *m = NULL, *nosteer = NULL;
	struct model_result alt;
	int ret = 0;

	pr->mode = is_auto ? "auto" : strncmp(st, "progress:", 9) ? "time" : "progress";
	if (!strcmp(pr->mode, "progress")) {
		r->mode = REL_PROGRESS;
		if (parse_double(st + 9, &r->fraction) || !(r->fraction > 0) || r->fraction > 1)
			return ctl_err("progress:F needs 0 < F <= 1"), -EINVAL;
	} else if (!is_auto && rel_parse_stagger(st, c->ncmds, d)) {
		return ctl_err("--stagger: give SECONDS, N-1 or N comma-separated seconds, "
			       "auto or progress:F"), -EINVAL;
	}
	for (int i = 0; i < c->ncmds; i++)
		r->inst[i].delta = d[i];
	if (is_auto && !model_wanted(c))
		return ctl_err("--stagger auto needs --profile (tandemctl calibrate) or "
			       "--rate/--instance with rates"), -EINVAL;
	if (!model_wanted(c))
		return 0;
	ret = build_model(c, ds, pr, &m, &nosteer);
	if (!ret && is_auto)
		ret = mo_search(m, &pr->mo, 0, c->min_gain);
	if (!ret && is_auto)
		for (int i = 0; i < c->ncmds; i++)
			r->inst[i].delta = d[i] = pr->mo.chosen[i];
	if (!ret && r->mode == REL_TIME) {
		ret = model_eval(m, d, &pr->res);
		pr->have = !ret;
	}
	if (pr->have && nosteer && !model_eval(nosteer, d, &alt))
		pr->nosteer_m = alt.makespan;
	model_free(nosteer);
	model_free(m);
	return ret;
}

/* ---- report ---- */

static void inst_exit(const struct rel_inst *in, int *code, int *sig)
{
	*code = -1;
	*sig = 0;
	if (in->state != REL_EXITED)
		return;
	if (WIFEXITED(in->status))
		*code = WEXITSTATUS(in->status);
	else if (WIFSIGNALED(in->status))
		*sig = WTERMSIG(in->status);
}

static const char *state_name(const struct rel_inst *in)
{
	static const char *const names[] = { "pending", "running", "exited", "skipped" };

	return names[in->state];
}

static void print_inst(const struct rel_run *r, const struct run_pred *pr, int i)
{
	const struct rel_inst *in = &r->inst[i];
	int code, sig;

	inst_exit(in, &code, &sig);
	out_obj_open(NULL);
	out_str("name", "%-8s", in->name);
	out_double("requested_s", r->mode == REL_TIME ? " %9.3f" : NULL, in->delta);
	out_text(r->mode == REL_TIME ? "" : " %9s", "progress");
	out_double("start_s", " %9.3f", in->start);
	out_double("end_s", " %9.3f", in->end);
	if (pr->have)
		out_double("predicted_end_s", " %9.3f", pr->res.inst[i].end);
	else
		out_null("predicted_end_s", "         -");
	out_str("state", " %-8s", state_name(in));
	out_s64("exit", code >= 0 ? " exit %lld" : NULL, code);
	out_s64("signal", sig ? " signal %lld" : NULL, sig);
	if (in->have_stats) {
		out_u64("misses", " misses %llu", in->stats.misses);
		out_u64("own_hits", " own %llu", in->stats.own_hits);
		out_u64("shared_hits", " shared %llu", in->stats.shared_hits);
	}
	out_text("\n");
	out_obj_close();
}

static void print_registration(const struct run_hooks_state *h)
{
	out_str("dataset_name", "dataset %s:", h->name);
	if (h->module) {
		out_obj_open("module");
		out_u64("dataset_id", " tandem.ko dataset %llu", h->module_id);
		out_bool("created", NULL, h->module_created);
		out_text(" (%s)", h->module_created ? "registered by this run" : "existing");
		out_obj_close();
	} else {
		out_null("module", " tandem.ko not used");
	}
	if (h->tracker) {
		out_obj_open("tracker");
		out_u64("dataset_id", ", tracker dataset %llu", h->tracker_dataset);
		out_bool("loaded_by_run", NULL, h->tracker_loaded_here);
		out_text("%s", h->tracker_loaded_here ? " (tracker loaded by this run)" : "");
		out_obj_close();
	} else {
		out_null("tracker", ", not tracked");
	}
	out_text("\n");
}

static void print_residency(const struct rel_run *r, const struct run_hooks_state *h)
{
	out_u64("page_size", NULL, 4096);
	if (!h->residency_source) {
		out_null("residency_source", NULL);
		return;
	}
	out_str("residency_source", "residency (%s):", h->residency_source);
	out_arr_open("residency_bytes_per_node");
	for (int k = 0; k < r->nres_nodes; k++) {
		out_double(NULL, NULL, r->residency[k]);
		out_text(" node%d %.1f MiB", k, r->residency[k] / 1048576);
	}
	out_arr_close();
	if (h->module) {
		out_u64("steered_pages", ", steered %llu pages", h->steered);
		out_u64("prefetched_pages", ", prefetched %llu", h->prefetched);
	}
	out_text("\n");
}

/* auto: what the search found, whatever was chosen */
static void print_search(const struct run_pred *pr, int n)
{
	const struct mo_report *mo = &pr->mo;

	if (strcmp(pr->mode, "auto") || !mo->searched) {
		out_null("search", NULL);
		return;
	}
	out_obj_open("search");
	out_text("model: best release vector");
	out_arr_open("best_delta_s");
	for (int i = 0; i < n; i++)
		out_double(NULL, " %.2f", mo->best[i]);
	out_arr_close();
	out_double("best_makespan_s", " s: M %.2f s", mo->best_m);
	out_double("together_makespan_s", ", together %.2f s", mo->m0);
	out_double("gain", ", gain %.1f%%", mo->gain * 100);
	out_bool("together", NULL, mo->together);
	out_text("\n");
	out_obj_close();
}

static void print_model_input(const struct run_pred *pr, const struct run_cmd *c, int n)
{
	if (!pr->sys.nbw) {
		out_null("model_input", NULL);
		return;
	}
	out_obj_open("model_input");
	out_double("cache_bytes", NULL, pr->sys.cache);
	out_text("model input: cache %.0f MiB (%s), B(1) %.1f MiB/s", pr->sys.cache / 1048576,
		 c->args.steer > 0 ? "steered to the CXL node" : "no steering", pr->sys.bw[0] / 1048576);
	out_bool("steer", NULL, c->args.steer > 0);
	out_arr_open("bw_bps");
	for (int k = 0; k < pr->sys.nbw; k++)
		out_double(NULL, NULL, pr->sys.bw[k]);
	out_arr_close();
	out_arr_open("rate_bps");
	for (int i = 0; i < n; i++) {
		out_double(NULL, NULL, pr->inst[i].rate);
		out_text(", %s %.1f MiB/s", pr->inst[i].name, pr->inst[i].rate / 1048576);
	}
	out_arr_close();
	out_text("\n");
	out_obj_close();
}

/* Say so when the model expects steering to cost time (JSON: always, or null). */
static void print_nosteer(const struct run_pred *pr, const struct run_cmd *c)
{
	double m = pr->res.makespan, alt = pr->nosteer_m;

	if (isnan(alt)) {
		out_null("predicted_without_steering_s", NULL);
		return;
	}
	out_double("predicted_without_steering_s", NULL, alt);
	if (alt < m * (1 - c->min_gain))
		out_text("model: without steering M = %.2f s, %.0f%% less than %.2f s with it: the "
			 "dataset (%.0f MiB) does not fit the CXL node's %.0f MiB and would evict "
			 "itself there; consider `tandemctl config set steer off`\n",
			 alt, (m - alt) / m * 100, m, pr->sys.dataset / 1048576,
			 pr->sys.cache / 1048576);
}

static void print_report(const struct rel_run *r, const struct run_pred *pr,
			 const struct run_cmd *c)
{
	out_obj_open(NULL);
	print_registration(run_hooks_state());
	out_str("stagger", "release: %s", pr->mode);
	if (!strcmp(pr->mode, "auto"))
		out_str("advice", " (%s)", pr->mo.together ? "model: start together" :
			"model: stagger");
	if (r->mode == REL_PROGRESS)
		out_double("fraction", " at fraction %.3f", r->fraction);
	out_text("\n");
	print_search(pr, r->n);
	print_model_input(pr, c, r->n);
	print_nosteer(pr, c);
	out_text("name     requested     start       end predicted\n");
	out_arr_open("instances");
	for (int i = 0; i < r->n; i++)
		print_inst(r, pr, i);
	out_arr_close();
	out_double("measured_makespan_s", "measured makespan %.3f s", r->makespan);
	if (pr->have) {
		out_double("predicted_makespan_s", ", predicted %.3f s", pr->res.makespan);
		out_double("error", " (error %+.1f%%)", (r->makespan / pr->res.makespan - 1) * 100);
	} else {
		out_null("predicted_makespan_s", NULL);
	}
	out_text("\n");
	out_s64("interrupted_by", r->interrupted ? "interrupted by signal %lld\n" : NULL,
		r->interrupted);
	out_s64("failed", r->nfailed ? "%lld instance(s) failed\n" : NULL, r->nfailed);
	out_s64("skipped", r->nskipped ? "%lld instance(s) not started\n" : NULL, r->nskipped);
	print_residency(r, run_hooks_state());
	out_obj_close();
}

static void save_inst(struct tjw *w, const struct rel_run *r, const struct run_pred *pr,
		      char **argv, int i)
{
	const struct rel_inst *in = &r->inst[i];
	int code, sig;

	inst_exit(in, &code, &sig);
	tjw_obj_open(w, NULL);
	tjw_str(w, "name", in->name);
	tjw_arr_open(w, "argv");
	for (char **a = argv; *a; a++)
		tjw_str(w, NULL, *a);
	tjw_arr_close(w);
	tjw_num(w, "requested_s", r->mode == REL_TIME ? in->delta : NAN);
	tjw_num(w, "start_s", in->start);
	tjw_num(w, "end_s", in->end);
	tjw_num(w, "predicted_end_s", pr->have ? pr->res.inst[i].end : NAN);
	/* the model's own view of the sharing, next to the tracker's */
	tjw_num(w, "predicted_miss_bytes", pr->have ? pr->res.inst[i].miss_bytes : NAN);
	tjw_num(w, "predicted_join_bytes", pr->have ? pr->res.inst[i].join_bytes : NAN);
	tjw_num(w, "predicted_hit_bytes", pr->have ? pr->res.inst[i].hit_bytes : NAN);
	/* progress:F: the fraction this one had when the next was released */
	tjw_num(w, "progress_at_next_release",
		r->mode == REL_PROGRESS && i + 1 < r->n ? in->loaded : NAN);
	tjw_str(w, "state", state_name(in));
	tjw_s64(w, "exit", code);
	tjw_s64(w, "signal", sig);
	if (in->have_stats) {
		tjw_u64(w, "misses", in->stats.misses);
		tjw_u64(w, "own_hits", in->stats.own_hits);
		tjw_u64(w, "shared_hits", in->stats.shared_hits);
	} else {
		tjw_null(w, "misses");
		tjw_null(w, "own_hits");
		tjw_null(w, "shared_hits");
	}
	tjw_obj_close(w);
}

static void save_search(struct tjw *w, const struct run_pred *pr, int n)
{
	const struct mo_report *mo = &pr->mo;

	if (strcmp(pr->mode, "auto") || !mo->searched) {
		tjw_null(w, "search");
		return;
	}
	tjw_obj_open(w, "search");
	tjw_arr_open(w, "best_delta_s");
	for (int i = 0; i < n; i++)
		tjw_num(w, NULL, mo->best[i]);
	tjw_arr_close(w);
	tjw_num(w, "best_makespan_s", mo->best_m);
	tjw_num(w, "together_makespan_s", mo->m0);
	tjw_num(w, "gain", mo->gain);
	tjw_bool(w, "together", mo->together);
	tjw_obj_close(w);
}

static void save_model_input(struct tjw *w, const struct run_pred *pr,
			     const struct run_cmd *c, int n)
{
	if (!pr->sys.nbw) {
		tjw_null(w, "model_input");
		return;
	}
	tjw_obj_open(w, "model_input");
	tjw_num(w, "cache_bytes", pr->sys.cache);
	tjw_bool(w, "steer", c->args.steer > 0);
	tjw_arr_open(w, "bw_bps");
	for (int k = 0; k < pr->sys.nbw; k++)
		tjw_num(w, NULL, pr->sys.bw[k]);
	tjw_arr_close(w);
	tjw_arr_open(w, "rate_bps");
	for (int i = 0; i < n; i++)
		tjw_num(w, NULL, pr->inst[i].rate);
	tjw_arr_close(w);
	tjw_obj_close(w);
}

static void save_hooks(struct tjw *w, const struct rel_run *r, const struct run_hooks_state *h)
{
	tjw_str(w, "dataset_name", h->name);
	if (h->module) {
		tjw_obj_open(w, "module");
		tjw_u64(w, "dataset_id", h->module_id);
		tjw_bool(w, "created", h->module_created);
		tjw_u64(w, "files_added", h->files_added);
		tjw_u64(w, "files_present", h->files_present);
		tjw_u64(w, "steered_pages", h->steered);
		tjw_u64(w, "prefetched_pages", h->prefetched);
		tjw_obj_close(w);
	} else {
		tjw_null(w, "module");
	}
	if (h->tracker) {
		tjw_obj_open(w, "tracker");
		tjw_u64(w, "dataset_id", h->tracker_dataset);
		tjw_bool(w, "loaded_by_run", h->tracker_loaded_here);
		tjw_obj_close(w);
	} else {
		tjw_null(w, "tracker");
	}
	tjw_u64(w, "page_size", 4096);
	if (h->residency_source)
		tjw_str(w, "residency_source", h->residency_source);
	else
		tjw_null(w, "residency_source");
	tjw_arr_open(w, "residency_bytes_per_node");
	for (int k = 0; k < r->nres_nodes; k++)
		tjw_num(w, NULL, r->residency[k]);
	tjw_arr_close(w);
}

static int save_report(const char *path, const struct run_cmd *c, const struct rel_run *r,
		       const struct run_pred *pr)
{
	FILE *f = fopen(path, "w");
	struct tjw w;
	int err;

	if (!f)
		return -errno;
	tjw_init(&w, f);
	tjw_obj_open(&w, NULL);
	tjw_s64(&w, "tandem_run", 1);
	tjw_str(&w, "dataset", c->dataset);
	tjw_str(&w, "stagger", pr->mode);
	tjw_num(&w, "fraction", r->mode == REL_PROGRESS ? r->fraction : NAN);
	tjw_num(&w, "predicted_makespan_s", pr->have ? pr->res.makespan : NAN);
	tjw_num(&w, "predicted_without_steering_s", pr->nosteer_m);
	tjw_num(&w, "measured_makespan_s", r->makespan);
	tjw_s64(&w, "interrupted_by", r->interrupted);
	tjw_arr_open(&w, "instances");
	for (int i = 0; i < r->n; i++)
		save_inst(&w, r, pr, c->cmds[i], i);
	tjw_arr_close(&w);
	save_search(&w, pr, r->n);
	save_model_input(&w, pr, c, r->n);
	save_hooks(&w, r, run_hooks_state());
	tjw_obj_close(&w);
	err = tjw_finish(&w);
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

static void name_instances(struct rel_run *r, const struct run_cmd *c, const struct run_pred *pr)
{
	for (int i = 0; i < r->n; i++) {
		struct rel_inst *in = &r->inst[i];

		in->argv = c->cmds[i];
		if (model_wanted(c))
			snprintf(in->name, sizeof(in->name), "%s", pr->inst[i].name);
		else
			snprintf(in->name, sizeof(in->name), "%c", 'A' + i % 26);
	}
}

int cmd_run_start(int argc, char **argv)
{
	struct run_pred pr = { .nosteer_m = NAN };
	struct rel_run r = { 0 };
	struct lg_dataset ds;
	struct run_cmd c;
	int err, ret;

	err = run_parse(argc, argv, &c);
	if (err)
		goto free_cmds;
	err = lg_dataset_scan(c.dataset, c.record_size, &ds);
	if (err) {
		ctl_err("%s: %s", c.dataset, err == -ENODATA ? "no files" : strerror(-err));
		goto free_cmds;
	}
	r.n = c.ncmds;
	r.inst = calloc(r.n, sizeof(*r.inst));
	err = r.inst ? plan(&c, &ds, &r, &pr) : -ENOMEM;
	if (err)
		goto free_run;
	name_instances(&r, &c, &pr);
	r.dataset_bytes = ds.bytes;
	r.fail_fast = c.fail_fast;
	r.grace = c.grace;
	rel_hooks_register(run_hooks(&(struct run_hooks_opts){
		.name = c.name, .module = !c.no_register, .tracker = !c.no_track }));
	fflush(stdout);		/* nothing buffered may be written twice by a child */
	err = rel_run(&r, c.dataset, &ds);
	print_report(&r, &pr, &c);
	if (c.report && (ret = save_report(c.report, &c, &r, &pr)))
		ctl_err("%s: %s", c.report, strerror(-ret));
	if (err == -ECHILD)
		ctl_err("%d instance(s) failed, %d not started", r.nfailed, r.nskipped);
	else if (err == -EINTR)
		ctl_err("interrupted by signal %d", r.interrupted);
	else if (err)
		ctl_err("run: %s", strerror(-err));
free_run:
	mo_report_free(&pr.mo);
	free(r.inst);
	lg_dataset_free(&ds);
free_cmds:
	rel_free_commands(c.cmds, c.ncmds);
	return err;
}

TANDEM_CMD(run, "run", NULL, cmd_run_start,
	   "--dataset DIR [--stagger auto|SECONDS[,SECONDS...]|progress:FRACTION] "
	   "[--profile FILE] [--instance SPEC]... [--rate R[,R...]] [--fail-fast] "
	   "[--grace DUR] [--report FILE] [--name NAME] [--no-track] [--no-register] "
	   "[--steer on|off] [--nosteer-fraction F] [--steer-dram-fraction F] "
	   "-- CMD_A ::: CMD_B [::: ...]",
	   "release training instances on the best stagger; report predicted vs measured")
