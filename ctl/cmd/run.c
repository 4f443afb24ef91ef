// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl run: release N training instances that read one dataset on the
 * schedule the makespan model chose (or a given one), and report predicted
 * against measured makespan.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* --prefetch-order FILE: checked before anything starts */
static int prefetch_order_read(struct run_cmd *c, const struct sample_set *ds, struct tnl *nl)
{
	if (!nl) {
		ctl_err("--prefetch-order: tandem.ko is not loaded (modprobe tandem), and "
			"only it prefetches");
		return -ENOENT;
	}
	return rel_prefetch_order_read(c->prefetch_order, ds, &c->order);
}

/* The learned read order (release/learn.c): where it is kept, whether it is used. */
static void learn_setup(struct run_cmd *c, const struct sample_set *ds, struct tnl *nl)
{
	struct rel_learn_opts o = {
		.file = c->learn_order, .off = c->no_learn, .module = nl,
		.registers = !c->no_register, .prefetch_given = c->prefetch_order,
		.dataset_dir = c->dataset, .cmds = c->cmds, .ncmds = c->ncmds,
	};

	rel_learn_setup(&c->learn, &o, ds);
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
	if (c->scratch && (err = rel_scratch_dirs(r, c->scratch_cfg.mnt, c->scratch)))
		return err;
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
	rel_learn_finish(&c->learn, r);
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
	struct sample_set ds;
	struct run_cmd c;
	int err;

	err = run_parse(argc, argv, &c);
	if (err)
		goto free_cmds;
	if (c.scratch && (err = scratch_cfg_load(c.scratch, &c.scratch_cfg)))
		goto free_cmds;
	err = sample_set_scan(c.dataset, c.record_size, &ds);
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
	rel_plan_opts_module(&c.plan, nl);
	c.plan.seqs = c.learn.usable ? &c.learn.old.seqs : NULL;
	r.n = c.ncmds;
	r.inst = calloc(r.n, sizeof(*r.inst));
	err = r.inst ? rel_plan_make(&c.plan, &ds, &plan) : -ENOMEM;
	if (err)
		goto free_run;
	rel_learn_plan(&c.learn, &plan, &ds, &c.order);
	dataset_name_make(c.name, c.dataset, name, sizeof(name));
	r.ds = (struct rel_dataset){ .name = name, .dir = c.dataset, .set = &ds };
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
	rel_learn_free(&c.learn);
	tnl_close(nl);
	sample_set_free(&ds);
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
