// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl calibrate: measure the model's inputs cheaply and save them as a
 * profile (JSON). Storage: B(1), B(2) from cold reads of a sample of the
 * dataset; memory: what the page cache can use per node, with and without
 * the CXL node; instances: compute-bound rates given by the user or from a
 * short warm run of each command.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/calibrate.h"
#include "cli/cmd.h"
#include "lib/log.h"
#include "lib/out.h"
#include "lib/units.h"
#include "lib/util.h"
#include "release/release.h"

struct cal_cmd {
	const char *dataset, *output;
	uint64_t record_size;
	struct cal_opts opts;
	struct model_args args;		/* only the instance specs are used */
	double rates[MODEL_MAX_INST];
	int nrates;
	double warm_time;
	char ***cmds;
	int ncmds;
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
	c->warm_time = 10;
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

static int cal_instance(struct cal_cmd *c, const struct lg_dataset *ds, struct profile *p, int i)
{
	struct profile_inst *pi = &p->inst[i];
	int err;

	if (i < c->args.nspec)
		pi->m = c->args.spec[i];
	else
		profile_inst_default(&pi->m, i);
	snprintf(pi->rate_source, sizeof(pi->rate_source), "user");
	if (i < c->nrates)
		pi->m.rate = c->rates[i];
	if (i < c->ncmds)
		pi->cmd = join_argv(c->cmds[i]);
	if (pi->m.rate > 0)
		return 0;
	if (i >= c->ncmds) {
		ctl_err("instance %s: no rate: give --rate or its command after '--'", pi->m.name);
		return -EINVAL;
	}
	err = cal_warm_rate(c->cmds[i], ds, p->cache_dram + p->cache_cxl, c->warm_time,
			    &pi->m.rate);
	if (err) {
		ctl_err("instance %s: warm run of '%s' failed (%s)", pi->m.name, c->cmds[i][0],
			err == -ENOEXEC ? "command not found" : strerror(-err));
		return err;
	}
	snprintf(pi->rate_source, sizeof(pi->rate_source), "warm-run");
	return 0;
}

static void cal_print(const struct profile *p, const char *output)
{
	char b[32];

	out_obj_open(NULL);
	out_str("profile", "profile %s\n", output);
	out_double("dataset_bytes", NULL, p->dataset_bytes);
	out_text("dataset %s, %s", p->dataset_path, units_fmt_size(p->dataset_bytes, b, sizeof(b)));
	out_u64("files", " in %llu files\n", p->files);
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
	out_text(" + %s on the CXL node\n", units_fmt_size(p->cache_cxl, b, sizeof(b)));
	out_arr_open("instances");
	for (int i = 0; i < p->ninst; i++) {
		out_obj_open(NULL);
		out_str("name", "instance %s: ", p->inst[i].m.name);
		out_double("rate_bps", NULL, p->inst[i].m.rate);
		out_text("%s", units_fmt_rate(p->inst[i].m.rate, b, sizeof(b)));
		out_str("rate_source", " (%s)\n", p->inst[i].rate_source);
		out_obj_close();
	}
	out_arr_close();
	out_double("calibration_seconds", "calibration took %.2f s\n", p->calib_seconds);
	out_obj_close();
}

int cmd_calibrate_run(int argc, char **argv)
{
	struct lg_dataset ds;
	struct profile p;
	struct cal_cmd c;
	double t0 = now_s();
	int n, err;

	err = cal_parse(argc, argv, &c);
	if (err)
		return err;
	profile_init(&p);
	err = lg_dataset_scan(c.dataset, c.record_size, &ds);
	if (err) {
		ctl_err("%s: %s", c.dataset, err == -ENODATA ? "no files" : strerror(-err));
		goto free_cmds;
	}
	err = cal_profile(&c.opts, c.dataset, &ds, &p);
	if (err) {
		ctl_err("calibration failed: %s", err == -ENODATA ?
			"the sample has fewer samples than readers" : strerror(-err));
		goto free_ds;
	}
	n = c.args.nspec > c.nrates ? c.args.nspec : c.nrates;
	n = c.ncmds > n ? c.ncmds : n;
	for (int i = 0; i < n && !err; i++, p.ninst++)
		err = cal_instance(&c, &ds, &p, i);
	p.calib_seconds = now_s() - t0;
	if (!err && (err = profile_save(c.output, &p)))
		ctl_err("%s: %s", c.output, strerror(-err));
	if (!err)
		cal_print(&p, c.output);
free_ds:
	lg_dataset_free(&ds);
free_cmds:
	profile_free(&p);
	rel_free_commands(c.cmds, c.ncmds);
	return err;
}

TANDEM_CMD(calibrate, "calibrate", NULL, cmd_calibrate_run,
	   "--dataset DIR [--record-size S] [--sample SIZE] [--cold fadvise|drop-caches] "
	   "[--readers K] [--instance SPEC]... [--rate R[,R...]] [--warm-time DUR] "
	   "[-o FILE] [-- CMD_A ::: CMD_B ...]",
	   "measure B(1), B(2), page-cache memory and instance rates; save a profile")
