// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl run: release N training instances that read one dataset on the
 * schedule the makespan model chose (or a given one), and report predicted
 * against measured makespan.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "lib/log.h"
#include "lib/out.h"
#include "lib/units.h"
#include "lib/util.h"
#include "release/release.h"
#include "scratch/scratch.h"

struct run_cmd {
	const char *dataset, *report, *name, *prefetch_order, *learn_order, *scratch;
	struct scratch_cfg scratch_cfg;
	struct file_list order;		/* the prefetch's files: --prefetch-order's, or learned */
	char learn_path[PATH_MAX];	/* the learned-order file */
	struct rel_learn learn;
	uint64_t record_size;
	bool fail_fast, no_track, no_register, no_learn;
	double grace;
	struct rel_plan_opts plan;
	char ***cmds;
	int ncmds;
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
	{ "prefetch-order", required_argument, NULL, 'O' },
	{ "learn-order", required_argument, NULL, 'L' },
	{ "no-learn-order", no_argument, NULL, 'l' },
	{ "scratch", required_argument, NULL, 'C' },
	{ 0 }
};

static int run_opt(struct run_cmd *c, int opt, const char *arg)
{
	struct model_args *a = &c->plan.args;
	char err[160];
	int ret;

	switch (opt) {
	case 'd': c->dataset = arg; return 0;
	case 's': c->plan.stagger = arg; return 0;
	case 'P': c->plan.profile = arg; return 0;
	case 'i':
		ret = model_args_add_instance(a, arg, err, sizeof(err));
		if (ret)
			return ctl_usage_err("run", NULL, "--instance: %s", err);
		return 0;
	case 'R': return model_args_parse_rates(arg, a->rate, MODEL_MAX_INST, &a->nrate);
	case 'S':
		if (strcmp(arg, "on") && strcmp(arg, "off"))
			return -EINVAL;
		a->steer = !strcmp(arg, "on");
		return 0;
	case 'r': return units_parse_bytes(arg, &c->record_size);
	case 'a': return units_parse_size(arg, &c->plan.cal.sample_bytes);
	case 'm': return parse_double(arg, &c->plan.min_gain);
	case 'f': c->fail_fast = true; return 0;
	case 'g': return units_parse_duration(arg, &c->grace);
	case 'o': c->report = arg; return 0;
	case 'n': c->name = arg; return 0;
	case 'T': c->no_track = true; return 0;
	case 'N': c->no_register = true; return 0;
	case 'F': return parse_double(arg, &a->nosteer_frac);
	case 'D': return parse_double(arg, &a->steer_dram_frac);
	case 'O': c->prefetch_order = arg; return 0;
	case 'L': c->learn_order = arg; return 0;
	case 'l': c->no_learn = true; return 0;
	case 'C': c->scratch = arg; return 0;
	}
	return -EINVAL;
}

static int run_parse(int argc, char **argv, struct run_cmd *c)
{
	int opt, ret, dash = -1;
	char err[160];

	memset(c, 0, sizeof(*c));
	rel_plan_opts_init(&c->plan);
	for (int i = 1; i < argc && dash < 0; i++)
		if (!strcmp(argv[i], "--"))
			dash = i;
	if (dash < 0)
		return ctl_usage_err("run", NULL, "give the instances' commands after '--', "
				     "separated by ':::'");
	optind = 0;	/* 0: full re-initialisation (main() used "+" mode) */
	while ((opt = ctl_getopt(dash, argv, "", run_opts, "run", NULL)) != -1) {
		if (opt == CTL_EUSAGE)
			return opt;
		ret = run_opt(c, opt, optarg);
		if (ret == CTL_EUSAGE)
			return ret;
		if (ret)
			return ctl_usage_err("run", NULL, "bad value '%s' for --%s", optarg,
					     opt_name(run_opts, opt));
	}
	if (optind != dash)
		return ctl_usage_err("run", NULL, "unexpected argument '%s' before '--'",
				     argv[optind]);
	if (!c->dataset)
		return ctl_usage_err("run", NULL, "--dataset is required");
	if (c->prefetch_order && c->no_register)
		return ctl_usage_err("run", NULL, "--prefetch-order or --no-register, not both: "
				     "tandem.ko prefetches only a registered dataset");
	if (c->learn_order && c->no_learn)
		return ctl_usage_err("run", NULL, "--learn-order or --no-learn-order, not both");
	if (ctl_split_commands(argc - dash - 1, argv + dash + 1, &c->cmds, &c->ncmds) ||
	    !c->ncmds || c->ncmds > REL_MAX_INST)
		return ctl_usage_err("run", NULL, "commands after '--' must be separated by "
				     "':::' and not empty (at most %d)", REL_MAX_INST);
	c->plan.dataset_dir = c->dataset;
	c->plan.n = c->ncmds;
	if (rel_plan_opts_check(&c->plan, err, sizeof(err)))
		return ctl_usage_err("run", NULL, "%s", err);
	return 0;
}

/*
 * Whether tandem.ko will steer the dataset's pages to a CXL node: it is
 * loaded with steering on and a CXL node, and run registers the dataset.
 * That decides the cache the model gets, unless --steer. And its prefetch
 * cap (prefetch_kbps), which the model's prefetch term gets.
 */
static bool module_steers(const struct run_cmd *c, struct tnl *nl, double *pf_cap)
{
	struct tmod_stats s;

	*pf_cap = 0;
	if (c->no_register || !nl || tmod_stats_get(nl, &s))
		return false;
	*pf_cap = s.prefetch_kbps * 1024.0;
	return tmod_steers(&s);
}

/*
 * --prefetch-order FILE: its paths, each a file of the dataset (same inode:
 * a binary search, so a million-file order is checked in one pass), and
 * tandem.ko there to prefetch them. Checked before anything starts.
 */
static int prefetch_order_read(struct run_cmd *c, const struct lg_dataset *ds, struct tnl *nl)
{
	struct file_index ids = { 0 };
	int err;

	if (!nl) {
		ctl_err("--prefetch-order: tandem.ko is not loaded (modprobe tandem), and "
			"only it prefetches");
		return -ENOENT;
	}
	err = file_list_read(&c->order, c->prefetch_order);
	if (err)
		return err;
	if (!c->order.n) {
		ctl_err("%s: no files", c->prefetch_order);
		return -ENODATA;
	}
	err = file_index_make(&ids, ds->devs, ds->inos, ds->nfiles);
	for (size_t i = 0; i < c->order.n && !err; i++) {
		if (file_index_find(&ids, c->order.devs[i], c->order.inos[i]) < 0) {
			ctl_err("%s: %s is not a file of the dataset %s", c->prefetch_order,
				c->order.paths[i], c->dataset);
			err = -EINVAL;
		}
	}
	file_index_free(&ids);
	return err;
}

/*
 * The learned read order (Documentation/model.md): where this run's order
 * is kept, and whether the prefetch runs in the one kept there. With
 * --learn-order FILE always (recording needs CAP_SYS_ADMIN; the prefetch is
 * tandem.ko's, or without it a thread of tandemctl: release/prefetch.c);
 * without it only when tandem.ko steers this run's dataset and we are root,
 * in LEARN_DIR under a key of the dataset and the commands.
 * A learned order is prefetched by only once two runs agreed on it, and
 * then as the plan says (plan.c: merged by need or by position, or not at
 * all when the model predicts the run faster without it).
 */
#define LEARN_DIR			"/var/lib/tandem/order"
#define LEARN_STABLE_DISPLACEMENT	0.05
#define LEARN_STABLE_COVERAGE		0.9

/* FNV-1a of s with its terminating NUL, continuing from h */
static uint64_t fnv1a(uint64_t h, const char *s)
{
	do
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	while (*s++);
	return h;
}

/* over the dataset's real path and every instance's words */
static uint64_t learn_key(const struct run_cmd *c, const char *dir)
{
	uint64_t h = fnv1a(0xcbf29ce484222325ULL, dir);

	for (int i = 0; i < c->ncmds; i++) {
		h = (h ^ 0x1e) * 0x100000001b3ULL;	/* instance separator */
		for (char **w = c->cmds[i]; *w; w++)
			h = fnv1a(h, *w);
	}
	return h;
}

static void learn_setup(struct run_cmd *c, const struct lg_dataset *ds, struct tnl *nl)
{
	struct rel_learn *l = &c->learn;
	char real[PATH_MAX];

	l->displacement = l->coverage = NAN;
	if (c->no_learn)
		return;
	if (c->learn_order) {
		snprintf(c->learn_path, sizeof(c->learn_path), "%s", c->learn_order);
	} else {
		if (!nl || c->no_register || geteuid() || !realpath(c->dataset, real))
			return;
		snprintf(c->learn_path, sizeof(c->learn_path), LEARN_DIR "/%016llx.order",
			 (unsigned long long)learn_key(c, real));
		l->is_default = true;
	}
	l->file = c->learn_path;
	l->load_err = rel_order_load(l->file, ds, &l->old);
	if (l->load_err && l->load_err != -ENOENT)
		ctl_err("%s: not a learned read order (%s); it is learned again",
			l->file, strerror(-l->load_err));
	if (l->load_err)
		return;
	if (c->prefetch_order)
		l->unused_why = "--prefetch-order given";
	else if (!l->old.stable)
		l->unused_why = "seen in one run only";
	else if (c->no_register)
		l->unused_why = "tandem.ko not used";
	else if (l->old.seqs.n != c->ncmds)
		l->unused_why = "learned for another number of instances";
	if (l->unused_why)
		return;
	for (int j = 0; j < l->old.seqs.n; j++)
		l->usable |= l->old.seqs.len[j] > 0;
	if (!l->usable)
		l->unused_why = "none of its files is in the dataset";
}

/* The plan's prefetch of the learned order: its files, or why none. */
static int learn_plan(struct run_cmd *c, const struct rel_plan *plan, const struct lg_dataset *ds)
{
	struct rel_learn *l = &c->learn;
	int err;

	if (!l->usable)
		return 0;
	if (plan->pf == REL_PF_NONE || !plan->pf_nfiles) {
		l->unused_why = "the model predicts the run faster without the prefetch";
		return 0;
	}
	err = rel_order_paths(plan->pf_files, plan->pf_nfiles, ds, &c->order);
	if (err) {	/* the jobs run all the same, without the prefetch */
		ctl_err("run: the learned order's prefetch is left out: %s", strerror(-err));
		l->unused_why = "its files could not be listed";
		return 0;
	}
	l->used = true;
	return 0;
}

/* After the run: its order against the learned one, and kept. */
static void learn_finish(struct run_cmd *c, const struct rel_run *r, const struct lg_dataset *ds)
{
	struct rel_learn *l = &c->learn;
	size_t total = 0;
	int err;

	for (int j = 0; j < l->rec.seqs.n; j++)
		total += l->rec.seqs.len[j];
	if (!l->rec.recording)
		l->not_saved_why = "not recorded";
	else if (r->interrupted || r->nfailed || r->nskipped)
		l->not_saved_why = "the run did not complete";
	else if (l->rec.incomplete)
		l->not_saved_why = "open events were lost";
	else if (!total)
		l->not_saved_why = "no instance opened a dataset file";
	if (l->not_saved_why)
		return;
	if (!l->load_err)
		l->displacement = rel_order_displacement(&l->old.seqs, &l->rec.seqs, ds->nfiles,
							 &l->coverage);
	l->stable = !isnan(l->displacement) && l->displacement <= LEARN_STABLE_DISPLACEMENT &&
		    l->coverage >= LEARN_STABLE_COVERAGE;
	err = l->is_default ? mkdir_p(LEARN_DIR) : 0;
	if (!err)
		err = rel_order_save(l->file, &l->rec.seqs, ds, l->stable, l->displacement);
	if (err) {
		ctl_err("%s: read order not kept: %s", l->file, strerror(-err));
		l->not_saved_why = "the file could not be written";
	}
	l->saved = !err;
}

/*
 * --scratch NAME: a folder per instance in the scratch, made now as the
 * caller (the mount is its owner's, mode 0700); the engine gives each
 * instance its folder in TANDEM_SCRATCH.
 */
static int scratch_dirs(struct run_cmd *c, struct rel_run *r)
{
	char dir[PATH_MAX];

	for (int i = 0; i < r->n; i++) {
		if (strchr(r->inst[i].name, '/') || r->inst[i].name[0] == '.' ||
		    snprintf(dir, sizeof(dir), "%s/%s", c->scratch_cfg.mnt, r->inst[i].name) >=
		    (int)sizeof(dir)) {
			ctl_err("--scratch: instance name '%s' cannot name a folder", r->inst[i].name);
			return -EINVAL;
		}
		if (mkdir(dir, 0700) && errno != EEXIST) {
			ctl_err("--scratch %s: %s: %s", c->scratch, dir, strerror(errno));
			return -errno;
		}
	}
	r->scratch = c->scratch_cfg.mnt;
	return 0;
}

/* The run itself: instances, hooks, the engine; then the report. */
static int run_instances(struct run_cmd *c, struct rel_run *r, const struct rel_plan *plan,
			 struct tnl *nl)
{
	struct rel_module mod = {
		.nl = nl, .prefetch = c->prefetch_order || c->learn.used ? &c->order : NULL,
		.prefetch_source = c->prefetch_order ? "file" : c->learn.used ? "learned" : NULL,
		.prefetch_order = c->learn.used ? rel_pf_plan_name(plan->pf) : NULL,
	};
	/* without tandem.ko, tandemctl prefetches the learned order itself */
	struct rel_uprefetch upf = { .files = &c->order, .cap_bps = plan->pf_cap, .report = &mod };
	struct rel_tracker trk = { 0 };
	struct rel_report rep = {
		.run = r, .plan = plan,
		.module = c->no_register ? NULL : &mod, .tracker = c->no_track ? NULL : &trk,
		.learn = c->learn.file ? &c->learn : NULL,
	};
	int err, ret;

	for (int i = 0; i < r->n; i++)
		r->inst[i].argv = c->cmds[i];
	rel_plan_apply(plan, r);
	if (c->scratch) {
		err = scratch_dirs(c, r);
		if (err)
			return err;
	}
	r->fail_fast = c->fail_fast;
	r->grace = c->grace;
	if (!c->no_register)
		rel_hook_add(r, &rel_module_ops, &mod);
	if (!c->no_track)
		rel_hook_add(r, &rel_tracker_ops, &trk);
	if (c->learn.file)
		rel_hook_add(r, &rel_order_ops, &c->learn.rec);
	if (!nl && c->learn.used)
		rel_hook_add(r, &rel_uprefetch_ops, &upf);
	fflush(stdout);		/* nothing buffered may be written twice by a child */
	err = rel_run(r);
	if (err == REL_EREFUSED)
		return err;	/* nothing ran: no report */
	if (c->learn.file)
		learn_finish(c, r, r->ds.files);
	rel_report_print(&rep);
	if (c->report && (ret = rel_report_save(&rep, c->report)))
		ctl_err("%s: %s", c->report, strerror(-ret));
	return err;
}

int cmd_run_start(int argc, char **argv)
{
	char name[TANDEM_NAME_MAX];
	struct rel_plan plan = { 0 };
	struct rel_run r = { 0 };
	struct tnl *nl = NULL;
	struct lg_dataset ds;
	struct run_cmd c;
	int err;

	err = run_parse(argc, argv, &c);
	if (err)
		goto free_cmds;
	if (c.scratch && (err = scratch_cfg_load(c.scratch, &c.scratch_cfg)))
		goto free_cmds;
	err = lg_dataset_scan(c.dataset, c.record_size, &ds);
	if (err) {
		if (err == -ENODATA)	/* other errors: the walk said what */
			ctl_err("%s: no files", c.dataset);
		goto free_cmds;
	}
	if (!c.no_register && tnl_open(&nl, true))
		nl = NULL;	/* tandem.ko not loaded: run without it */
	if (c.prefetch_order) {
		err = prefetch_order_read(&c, &ds, nl);
		if (err)
			goto free_order;
	}
	learn_setup(&c, &ds, nl);
	c.plan.module_steers = module_steers(&c, nl, &c.plan.pf_cap);
	c.plan.seqs = c.learn.usable ? &c.learn.old.seqs : NULL;
	r.n = c.ncmds;
	r.inst = calloc(r.n, sizeof(*r.inst));
	err = r.inst ? rel_plan_make(&c.plan, &ds, &plan) : -ENOMEM;
	err = err ?: learn_plan(&c, &plan, &ds);
	if (err)
		goto free_run;
	dataset_name_make(c.name, c.dataset, name, sizeof(name));
	r.ds = (struct rel_dataset){ .name = name, .dir = c.dataset, .files = &ds };
	err = run_instances(&c, &r, &plan, nl);
	if (err == -ECHILD)
		ctl_err("%d instance(s) failed, %d not started", r.nfailed, r.nskipped);
	else if (err == -EINTR)
		ctl_err("interrupted by signal %d", r.interrupted);
	else if (err)
		ctl_err("run: %s", strerror(-err));
free_run:
	rel_plan_free(&plan);
	free(r.inst);
free_order:
	file_list_free(&c.order);
	rel_seqs_free(&c.learn.old.seqs);
	rel_seqs_free(&c.learn.rec.seqs);
	tnl_close(nl);
	lg_dataset_free(&ds);
free_cmds:
	ctl_free_commands(c.cmds, c.ncmds);
	return err;
}

TANDEM_CMD(run, "run", NULL, cmd_run_start,
	   "--dataset DIR [--stagger auto|SECONDS[,SECONDS...]|progress:FRACTION] "
	   "[--profile FILE] [--instance SPEC]... [--rate R[,R...]] [--fail-fast] "
	   "[--grace DUR] [--report FILE] [--name NAME] [--no-track] [--no-register] "
	   "[--steer on|off] [--nosteer-fraction F] [--steer-dram-fraction F] "
	   "[--prefetch-order FILE] [--learn-order FILE|--no-learn-order] "
	   "[--record-size S] [--sample SIZE] [--min-gain F] [--scratch NAME] "
	   "-- CMD_A ::: CMD_B [::: ...]",
	   "release training instances on the best stagger; report predicted vs measured")
