// SPDX-License-Identifier: GPL-2.0
/*
 * The release vector of a run (release.h, struct rel_plan): given seconds,
 * progress:F, or the makespan model's choice, and with a model, what it
 * predicts for the vector used and for the same release without steering.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lib/log.h"
#include "lib/util.h"
#include "release/release.h"

const char *rel_stagger_name(enum rel_stagger s)
{
	static const char *const names[] = { "auto", "time", "progress" };

	return s <= REL_STAGGER_PROGRESS ? names[s] : "?";
}

void rel_plan_opts_init(struct rel_plan_opts *o)
{
	memset(o, 0, sizeof(*o));
	model_args_init(&o->args);
	o->min_gain = MO_MIN_GAIN;
	o->cal.sample_bytes = 256.0 * 1024 * 1024;
	o->cal.bw_seconds = CAL_BW_SECONDS;
	o->cal.max_readers = 2;
}

static bool model_wanted(const struct rel_plan_opts *o)
{
	return o->profile || o->args.nrate || o->args.nspec;
}

/* "auto", "progress:F", or seconds (rel_parse_stagger) */
static int parse_stagger(const char *s, int n, struct rel_plan *p, char *err, size_t errlen)
{
	if (!strcmp(s, "auto")) {
		p->stagger = REL_STAGGER_AUTO;
		return 0;
	}
	if (!strncmp(s, "progress:", 9)) {
		p->stagger = REL_STAGGER_PROGRESS;
		if (parse_double(s + 9, &p->fraction) || !(p->fraction > 0) || p->fraction > 1)
			return snprintf(err, errlen, "progress:F needs 0 < F <= 1"), -EINVAL;
		return 0;
	}
	p->stagger = REL_STAGGER_TIME;
	if (rel_parse_stagger(s, n, p->delta))
		return snprintf(err, errlen, "--stagger: give SECONDS, N-1 or N comma-separated "
				"seconds, auto or progress:F"), -EINVAL;
	return 0;
}

/* The stagger of o, checked: a bad one is the caller's usage error. */
static int plan_stagger(const struct rel_plan_opts *o, struct rel_plan *p, char *err,
			size_t errlen)
{
	const char *st = o->stagger ? o->stagger : model_wanted(o) ? "auto" : "0";
	int ret = parse_stagger(st, o->n, p, err, errlen);

	if (!ret && p->stagger == REL_STAGGER_AUTO && !model_wanted(o))
		return snprintf(err, errlen, "--stagger auto needs --profile (tandemctl "
				"calibrate) or --rate/--instance with rates"), -EINVAL;
	return ret;
}

int rel_plan_opts_check(const struct rel_plan_opts *o, char *err, size_t errlen)
{
	struct rel_plan p;

	return plan_stagger(o, &p, err, errlen);
}

static int load_profile(const struct rel_plan_opts *o, const struct lg_dataset *ds,
			struct profile *prof)
{
	char err[256];
	int ret;

	if (o->profile) {
		ret = profile_load(o->profile, prof, err, sizeof(err));
		if (ret)
			ctl_err("%s: %s", o->profile, err);
		return ret;
	}
	/* no stored profile: measure storage and memory now (a few seconds) */
	ret = cal_profile(&o->cal, o->dataset_dir, ds, prof);
	if (ret)
		ctl_err("calibration failed: %s", strerror(-ret));
	return ret;
}

/*
 * Where each instance's rate came from: given here (--rate, rate=), else
 * the profile's rate_source (a replica: its original's).
 */
static void plan_rate_sources(const struct model_args *a, const struct profile *prof, int n,
			      struct rel_plan *p)
{
	for (int i = 0; i < n && i < REL_MAX_INST; i++) {
		int k = i < prof->ninst ? i : prof->ninst - 1;
		bool given = (i < a->nrate && a->rate[i] > 0) ||
			     (i < a->nspec && a->spec_str[i] && strstr(a->spec_str[i], "rate="));
		const char *src = PROFILE_SRC_RATE;

		if (!given && k >= 0 && prof->inst[k].rate_source[0])
			src = prof->inst[k].rate_source;
		snprintf(p->rate_source[i], sizeof(p->rate_source[i]), "%s", src);
	}
}

/* The model of the run's n instances; its prediction at p->delta. */
static int predict(const struct rel_plan_opts *o, const struct profile *prof,
		   struct rel_plan *p)
{
	struct model_args a = o->args;
	struct model_result alt;
	struct model_set set;
	char err[256];
	int ret;

	a.ninstances = o->n;
	a.exactly = o->n;
	if (a.steer < 0)
		a.steer = o->module_steers;
	ret = model_set_new(&a, prof, true, &set, err, sizeof(err));
	if (ret) {
		ctl_err("model: %s", err);
		goto free_set;
	}
	p->model = true;
	p->steer = set.steer;
	plan_rate_sources(&a, prof, o->n, p);
	p->sys = set.sys;
	memcpy(p->inst, set.inst, sizeof(p->inst));
	if (p->stagger == REL_STAGGER_AUTO) {
		ret = mo_search(set.m, &p->mo, 0, o->min_gain);
		if (ret)
			goto free_set;
		memcpy(p->delta, p->mo.chosen, sizeof(p->delta));
	}
	if (p->stagger == REL_STAGGER_PROGRESS)
		goto free_set;	/* no release vector to predict for */
	ret = model_eval(set.m, p->delta, &p->res);
	p->have = !ret;
	if (p->have && set.alt && !model_eval(set.alt, p->delta, &alt))
		p->nosteer_m = alt.makespan;
free_set:
	model_set_free(&set);
	return ret;
}

int rel_plan_make(const struct rel_plan_opts *o, const struct lg_dataset *ds,
		  struct rel_plan *p)
{
	struct profile prof;
	char err[160];
	int ret;

	memset(p, 0, sizeof(*p));
	p->nosteer_m = NAN;
	p->min_gain = o->min_gain;
	ret = plan_stagger(o, p, err, sizeof(err));
	if (ret)
		return ctl_err("%s", err), ret;
	if (!model_wanted(o))
		return 0;
	profile_init(&prof);
	ret = load_profile(o, ds, &prof);
	if (!ret)
		ret = predict(o, &prof, p);
	profile_free(&prof);
	return ret;
}

void rel_plan_free(struct rel_plan *p)
{
	mo_report_free(&p->mo);
}

void rel_plan_apply(const struct rel_plan *p, struct rel_run *r)
{
	r->mode = p->stagger == REL_STAGGER_PROGRESS ? REL_PROGRESS : REL_TIME;
	r->fraction = p->fraction;
	for (int i = 0; i < r->n; i++) {
		struct rel_inst *in = &r->inst[i];

		in->delta = p->delta[i];
		if (p->model)
			snprintf(in->name, sizeof(in->name), "%s", p->inst[i].name);
		else
			snprintf(in->name, sizeof(in->name), "%c", 'A' + i % 26);
	}
}
