// SPDX-License-Identifier: GPL-2.0
/*
 * The release vector of a run (release.h, struct rel_plan): given seconds,
 * progress:F, or the makespan model's choice, and with a model, what it
 * predicts for the vector used and for the same release without steering.
 *
 * With a learned read order to prefetch by, one plan: the model (given the
 * jobs' own orders) predicts the run with no prefetch, with the orders
 * merged by position, and merged by need at the release times (each file
 * when its first reader needs it), each with its own release vector under
 * --stagger auto, and the fastest is kept (Documentation/model.md, "One
 * plan").
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/util.h"
#include "release/release.h"

const char *rel_stagger_name(enum tandem_stagger_mode s)
{
	static const char *const names[] = { "auto", "time", "progress" };

	return s <= TANDEM_STAGGER_PROGRESS ? names[s] : "?";
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

/* The stagger of o, checked: a bad one is the caller's usage error. */
static int plan_stagger(const struct rel_plan_opts *o, struct rel_plan *p, char *err,
			size_t errlen)
{
	const char *st = o->stagger ? o->stagger : model_wanted(o) ? "auto" : "0";
	int ret = tandem_stagger_parse_run(st, o->n, &p->stagger, &p->fraction, p->delta,
					   err, errlen);

	if (!ret && p->stagger == TANDEM_STAGGER_AUTO && !model_wanted(o))
		return snprintf(err, errlen, "--stagger auto needs --profile (tandemctl "
				"calibrate) or --rate/--instance with rates"), -EINVAL;
	return ret;
}

int rel_plan_opts_check(const struct rel_plan_opts *o, char *err, size_t errlen)
{
	struct rel_plan p;

	return plan_stagger(o, &p, err, errlen);
}

static int load_profile(const struct rel_plan_opts *o, const struct sample_set *ds,
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

const char *rel_pf_plan_name(enum rel_pf_plan p)
{
	static const char *const names[] = { "need", "position", "none" };

	return p <= REL_PF_NONE ? names[p] : "?";
}

/* The learned sequences with each one's first read at delta (NULL: 0) and rate. */
static void plan_seqs(const struct rel_plan_opts *o, const struct rel_plan *p, const double *delta,
		      struct mo_seq *seqs)
{
	for (int j = 0; j < o->seqs->n; j++)
		seqs[j] = (struct mo_seq){
			.files = o->seqs->seq[j], .len = o->seqs->len[j],
			.first = (delta ? delta[j] : 0) + (p->model ? p->inst[j].startup : 0),
			.rate = p->model ? p->inst[j].rate : 1,
		};
}

/* Both models of set prefetch files[0..n) from 0 at the cap (files NULL: no prefetch). */
static int set_prefetch(struct model_set *set, const struct sample_set *ds,
			const uint32_t *files, size_t n, double cap, uint32_t *ext)
{
	struct model_prefetch pf = { .order = ext, .start = 0, .cap = cap };
	int err = 0;

	if (files)
		err = mo_files_to_extents(files, n, ds->files.sizes, ds->files.n, model_extents(set->m),
					  ext, &pf.n);
	if (!err)
		err = model_set_prefetch(set->m, files ? &pf : NULL);
	if (!err && set->alt)
		err = model_set_prefetch(set->alt, files ? &pf : NULL);
	return err;
}

/* The jobs' first epochs in the model follow their learned sequences. */
static int set_orders(struct model_set *set, const struct rel_seqs *s,
		      const struct sample_set *ds, uint32_t *ext)
{
	uint32_t ne;
	int err = 0;

	for (int j = 0; j < s->n && !err; j++) {
		err = mo_files_to_extents(s->seq[j], s->len[j], ds->files.sizes, ds->files.n,
					  model_extents(set->m), ext, &ne);
		if (!err)
			err = model_set_order(set->m, j, ext, ne);
		if (!err && set->alt)
			err = model_set_order(set->alt, j, ext, ne);
	}
	return err;
}

/* The prediction of alternative a at delta. */
static int alt_eval(struct model *m, const double *delta, struct rel_plan_alt *a)
{
	struct model_result res;
	int err = model_eval(m, delta, &res);

	if (err)
		return err;
	a->have = true;
	memmove(a->delta, delta, sizeof(a->delta));
	a->makespan = res.makespan;
	a->pf = res.pf;
	return 0;
}

/* Alternative a with the prefetch set on m: searched under auto, else at p->delta. */
static int alt_plan(const struct rel_plan_opts *o, struct model *m, struct rel_plan *p,
		    struct mo_report *mo, enum rel_pf_plan a)
{
	int err = 0;

	if (p->stagger == TANDEM_STAGGER_AUTO)
		err = mo_search(m, mo, 0, o->min_gain);
	return err ?: alt_eval(m, p->stagger == TANDEM_STAGGER_AUTO ? mo->chosen : p->delta,
			       &p->alt[a]);
}

/* The order merged by need at release vector d into out (*n files), predicted in a. */
static int need_eval(const struct rel_plan_opts *o, const struct sample_set *ds,
		     struct model_set *set, const struct rel_plan *p, const double *d,
		     uint32_t *out, size_t *n, uint32_t *ext, struct rel_plan_alt *a)
{
	struct mo_seq seqs[REL_MAX_INST];
	int err;

	plan_seqs(o, p, d, seqs);
	err = mo_merge_by_need(seqs, o->seqs->n, ds->files.sizes, ds->files.n, out, NULL, n);
	err = err ?: set_prefetch(set, ds, out, *n, o->pf_cap, ext);
	return err ?: alt_eval(set->m, d, a);
}

/* A kept as the need alternative, its order ORDER[0..n) in files, when faster (true). */
static bool need_keep(struct rel_plan *p, const struct rel_plan_alt *a, uint32_t *files,
		      const uint32_t *order, size_t n)
{
	if (p->alt[REL_PF_NEED].have && a->makespan >= p->alt[REL_PF_NEED].makespan)
		return false;
	p->alt[REL_PF_NEED] = *a;
	memmove(files, order, n * sizeof(*files));
	p->pf_nfiles = n;
	return true;
}

/* uniform staggers the need merge is searched over under auto, 0 included */
#define NEED_GRID	24

/*
 * Under auto, the need merge along the uniform staggers (instance k at
 * k * u, u from 0 to the longest instance alone, NEED_GRID steps), each
 * merged for its own releases (model_best() cannot: its model's prefetch
 * is fixed); the best kept unless it gains less than --min-gain over u = 0,
 * as the search does. MO gets what was searched when it is kept.
 */
static int need_line(const struct rel_plan_opts *o, const struct sample_set *ds,
		     struct model_set *set, struct rel_plan *p, struct mo_report *mo,
		     uint32_t *files, uint32_t *ext)
{
	double d[REL_MAX_INST] = { 0 }, horizon;
	uint32_t *scratch = files + ds->files.n;
	struct mo_report r = { .searched = true, .best_m = INFINITY };
	struct rel_plan_alt a;
	size_t n;
	int err = mo_solo_all(set->m, &r, &horizon);

	for (int g = 0; g <= NEED_GRID && !err; g++) {
		mo_grid_delta(horizon * g / NEED_GRID, o->n, d);
		err = need_eval(o, ds, set, p, d, scratch, &n, ext, &a);
		if (!err && !g)
			r.m0 = a.makespan;
		if (!err && a.makespan < r.best_m) {
			r.best_m = a.makespan;
			memcpy(r.best, d, sizeof(d));
		}
	}
	if (err)
		return err;
	r.gain = r.m0 > 0 ? (r.m0 - r.best_m) / r.m0 : 0;
	r.together = r.gain < o->min_gain;
	if (!r.together)
		memcpy(r.chosen, r.best, sizeof(r.chosen));
	r.evals = NEED_GRID + 2;
	err = need_eval(o, ds, set, p, r.chosen, scratch, &n, ext, &a);
	r.chosen_m = a.makespan;
	if (!err && need_keep(p, &a, files, scratch, n))
		mo[REL_PF_NEED] = r;
	return err;
}

/*
 * By need: under auto at the release vector of no prefetch and of the
 * position merge, and along the uniform staggers (need_line()): the order
 * follows the releases, so it is merged for each; else at the given
 * vector. The fastest is kept, its order in files.
 */
static int alt_need(const struct rel_plan_opts *o, const struct sample_set *ds,
		    struct model_set *set, struct rel_plan *p, struct mo_report *mo,
		    uint32_t *files, uint32_t *ext)
{
	bool autom = p->stagger == TANDEM_STAGGER_AUTO;
	uint32_t *scratch = files + ds->files.n;
	struct rel_plan_alt a;
	size_t n;
	int err = 0;

	for (int c = 0; c < (autom ? 2 : 1) && !err; c++) {
		enum rel_pf_plan from = c ? REL_PF_POSITION : REL_PF_NONE;

		err = need_eval(o, ds, set, p, autom ? p->alt[from].delta : p->delta, scratch, &n,
				ext, &a);
		if (!err && need_keep(p, &a, files, scratch, n))
			mo[REL_PF_NEED] = mo[from];
	}
	return err || !autom ? err : need_line(o, ds, set, p, mo, files, ext);
}

/*
 * One plan (release vector and prefetch): every alternative predicted, the
 * fastest kept (on a tie the earlier of need, position, none), and left
 * set on the models for the prediction of the run.
 */
static int plan_prefetch(const struct rel_plan_opts *o, const struct sample_set *ds,
			 struct model_set *set, struct rel_plan *p)
{
	uint32_t *ext = malloc(model_extents(set->m) * sizeof(*ext));
	uint32_t *files = malloc(2 * (ds->files.n + 1) * sizeof(*files));
	struct mo_report mo[REL_PF_PLANS] = { 0 };
	struct mo_seq seqs[REL_MAX_INST];
	size_t npos;
	int err = ext && files ? set_orders(set, o->seqs, ds, ext) : -ENOMEM;

	err = err ?: set_prefetch(set, ds, NULL, 0, 0, ext);
	err = err ?: alt_plan(o, set->m, p, &mo[REL_PF_NONE], REL_PF_NONE);
	plan_seqs(o, p, NULL, seqs);
	err = err ?: mo_merge_by_position(seqs, o->seqs->n, ds->files.n, files, &npos);
	err = err ?: set_prefetch(set, ds, files, npos, o->pf_cap, ext);
	err = err ?: alt_plan(o, set->m, p, &mo[REL_PF_POSITION], REL_PF_POSITION);
	err = err ?: alt_need(o, ds, set, p, mo, files, ext);
	if (err)
		goto out;
	p->pf = REL_PF_NEED;
	for (int a = REL_PF_POSITION; a <= REL_PF_NONE; a++)
		if (p->alt[a].makespan < p->alt[p->pf].makespan)
			p->pf = a;
	if (p->pf == REL_PF_POSITION) {
		err = mo_merge_by_position(seqs, o->seqs->n, ds->files.n, files, &npos);
		p->pf_nfiles = npos;
	}
	p->pf_modelled = true;
	memcpy(p->delta, p->alt[p->pf].delta, sizeof(p->delta));
	p->mo = mo[p->pf];
	err = err ?: set_prefetch(set, ds, p->pf == REL_PF_NONE ? NULL : files, p->pf_nfiles,
				  o->pf_cap, ext);
	if (!err && p->pf != REL_PF_NONE)
		p->pf_files = files;
	else
		p->pf_nfiles = 0;
out:
	if (!p->pf_files)
		free(files);
	free(ext);
	return err;
}

/*
 * Instance i of in at its warm runs' slowest (k 0) or fastest (k 1) rate,
 * its CPU per byte scaled inversely (the job's own speed moved: model.md,
 * "calibrate's spread"): 1, or 0 when its rate is not a warm run's or its
 * runs did not differ.
 */
static int range_rate(const struct profile *prof, const struct rel_plan *p, int i, int k,
		      struct model_inst *in)
{
	int j = i < prof->ninst ? i : prof->ninst - 1;
	const struct profile_warm *w;
	double r;

	if (j < 0 || strcmp(p->rate_source[i], PROFILE_SRC_WARM))
		return 0;
	w = &prof->inst[j].warm;
	if (w->runs < 2 || !(w->rate_min > 0) || !(w->rate_max > w->rate_min) || !(in->rate > 0))
		return 0;
	r = k ? w->rate_max : w->rate_min;
	in->cpu_per_byte *= in->rate / r;
	in->rate = r;
	return 1;
}

/*
 * C at calibrate's runs of the instances together that gave the least
 * (k 1) or the most (k 0) contention: 1, or 0 when C was given or its runs
 * did not differ.
 */
static int range_contention(const struct rel_plan_opts *o, const struct profile *prof, int k,
			    struct model_sys *sys)
{
	const struct profile_contention *c = &prof->contention;

	if (o->args.cpu_contention >= 0 || c->runs < 2 || !(c->c_max > c->c_min))
		return 0;
	sys->cpu_contention = k ? fmax(c->c_min, 0) : fmin(c->c_max, 10);
	return 1;
}

/*
 * The plan's M (its release vector and prefetch) with every instance at
 * its warm runs' slowest rate and C at its most, then at the fastest and
 * the least: p->range, NAN when neither the warm runs nor C's runs differed.
 */
static int plan_range(const struct rel_plan_opts *o, const struct profile *prof,
		      const struct sample_set *ds, const struct model_set *set, struct rel_plan *p)
{
	uint32_t *ext = NULL;
	int err = 0;

	for (int k = 0; k < 2 && !err; k++) {
		struct model_set r = { .sys = set->sys, .n = set->n };
		struct model_result res;
		char msg[160];
		int spread = 0;

		memcpy(r.inst, set->inst, sizeof(r.inst));
		for (int i = 0; i < set->n; i++)
			spread += range_rate(prof, p, i, k, &r.inst[i]);
		spread += range_contention(o, prof, k, &r.sys);
		if (!spread)
			break;
		err = model_new(&r.sys, r.inst, r.n, &r.m, msg, sizeof(msg));
		if (err)
			break;
		if (!ext && !(ext = malloc(model_extents(r.m) * sizeof(*ext))))
			err = -ENOMEM;
		if (!err && p->pf_modelled)
			err = set_orders(&r, o->seqs, ds, ext) ?:
			      set_prefetch(&r, ds, p->pf_nfiles ? p->pf_files : NULL, p->pf_nfiles,
					   o->pf_cap, ext);
		if (!err && !(err = model_eval(r.m, p->delta, &res)))
			p->range[k ? 0 : 1] = res.makespan;
		model_free(r.m);
	}
	free(ext);
	return err;
}

/* The model of the run's n instances; its prediction at p->delta. */
static int predict(const struct rel_plan_opts *o, const struct profile *prof,
		   const struct sample_set *ds, struct rel_plan *p)
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
	if (o->seqs && p->stagger != TANDEM_STAGGER_PROGRESS) {
		ret = plan_prefetch(o, ds, &set, p);
		if (ret) {
			ctl_err("model: the prefetch plan failed (%s)", strerror(-ret));
			goto free_set;
		}
	} else if (p->stagger == TANDEM_STAGGER_AUTO) {
		ret = mo_search(set.m, &p->mo, 0, o->min_gain);
		if (ret)
			goto free_set;
		memcpy(p->delta, p->mo.chosen, sizeof(p->delta));
	}
	if (p->stagger == TANDEM_STAGGER_PROGRESS)
		goto free_set;	/* no release vector to predict for */
	ret = model_eval(set.m, p->delta, &p->res);
	p->have = !ret;
	if (p->have && set.alt && !model_eval(set.alt, p->delta, &alt))
		p->nosteer_m = alt.makespan;
	if (p->have && plan_range(o, prof, ds, &set, p))
		p->range[0] = p->range[1] = NAN;	/* not worth failing the run for */
free_set:
	model_set_free(&set);
	return ret;
}

/* No model or no release vector: the learned order merged by position, as before. */
static int plan_position(const struct rel_plan_opts *o, const struct sample_set *ds,
			 struct rel_plan *p)
{
	struct mo_seq seqs[REL_MAX_INST];

	p->pf_files = malloc((ds->files.n + 1) * sizeof(*p->pf_files));
	if (!p->pf_files)
		return -ENOMEM;
	plan_seqs(o, p, NULL, seqs);
	p->pf = REL_PF_POSITION;
	return mo_merge_by_position(seqs, o->seqs->n, ds->files.n, p->pf_files, &p->pf_nfiles);
}

int rel_plan_make(const struct rel_plan_opts *o, const struct sample_set *ds,
		  struct rel_plan *p)
{
	struct profile prof;
	char err[160];
	int ret;

	memset(p, 0, sizeof(*p));
	p->nosteer_m = NAN;
	p->range[0] = p->range[1] = NAN;
	p->min_gain = o->min_gain;
	p->pf_planned = o->seqs;
	p->pf = REL_PF_NONE;
	p->pf_cap = o->pf_cap;
	ret = plan_stagger(o, p, err, sizeof(err));
	if (ret)
		return ctl_err("%s", err), ret;
	if (model_wanted(o)) {
		profile_init(&prof);
		ret = load_profile(o, ds, &prof);
		if (!ret)
			ret = predict(o, &prof, ds, p);
		profile_free(&prof);
	}
	if (!ret && o->seqs && !p->pf_modelled)
		ret = plan_position(o, ds, p);
	return ret;
}

void rel_plan_free(struct rel_plan *p)
{
	mo_report_free(&p->mo);
	free(p->pf_files);
	p->pf_files = NULL;
}

void rel_plan_apply(const struct rel_plan *p, struct rel_run *r)
{
	r->mode = p->stagger == TANDEM_STAGGER_PROGRESS ? TANDEM_STAGGER_PROGRESS :
		  TANDEM_STAGGER_SECONDS;
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

void rel_plan_opts_module(struct rel_plan_opts *o, struct tnl *nl)
{
	struct tmod_stats s;

	o->module_steers = false;
	o->pf_cap = 0;
	if (!nl || tmod_stats_get(nl, &s))
		return;
	o->pf_cap = s.prefetch_kbps * 1024.0;
	o->module_steers = tmod_steers(&s);
}
