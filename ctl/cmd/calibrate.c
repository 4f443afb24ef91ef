// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl calibrate: measure the model's inputs cheaply and save them as a
 * profile (JSON). Storage: B(1), B(2) from cold reads of a sample of the
 * dataset; memory: what the page cache can use per node, with and without
 * the CXL node; instances: compute-bound rates given by the user or, with
 * the other terms of a real job (CPU per byte, start-up, epoch gap, read
 * streams), from a short warm run of each command. The command parses and
 * prints; calibrate/ measures (cal_calibrate()) and says what it measured
 * (cal_print()).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/calibrate.h"
#include "cli/cmd.h"
#include "lib/log.h"
#include "lib/units.h"
#include "lib/util.h"
#include "release/release.h"

struct cal_cmd {
	struct cal_request req;
	const char *output;
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
	case 'd': c->req.dataset = arg; return 0;
	case 'r': return units_parse_bytes(arg, &c->req.record_size);
	case 's': return units_parse_size(arg, &c->req.opts.sample_bytes);
	case 'c':
		if (!strcmp(arg, "fadvise"))
			c->req.opts.cold = CAL_COLD_FADVISE;
		else if (!strcmp(arg, "drop-caches"))
			c->req.opts.cold = CAL_COLD_DROP_CACHES;
		else
			return -EINVAL;
		return 0;
	case 'k':
		if (parse_u32(arg, &k) || k < 1 || k > MODEL_MAX_BW)
			return -EINVAL;
		c->req.opts.max_readers = k;
		return 0;
	case 'i':
		if (model_args_add_instance(&c->req.args, arg, err, sizeof(err)))
			return ctl_usage_err("calibrate", NULL, "--instance: %s", err);
		return 0;
	case 'R': return model_args_parse_rates(arg, c->req.rates, MODEL_MAX_INST, &c->req.nrates);
	case 'w': return units_parse_duration(arg, &c->req.warm_time);
	case 'W':
		if (parse_u32(arg, &k) || k < 1 || k > CAL_MAX_WARM_RUNS)
			return -EINVAL;
		c->req.warm_runs = k;
		return 0;
	case 'b': return units_parse_duration(arg, &c->req.opts.bw_seconds);
	case 'T': c->req.no_track = true; return 0;
	case 'C': c->req.no_contention = true; return 0;
	case 't': c->req.trace = arg; return 0;
	case 'o': c->output = arg; return 0;
	}
	return -EINVAL;
}

static int cal_parse(int argc, char **argv, struct cal_cmd *c)
{
	int opt, ret, dash = argc;

	cal_request_init(&c->req);
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
	if (!c->req.dataset)
		return ctl_usage_err("calibrate", NULL, "--dataset is required");
	if (dash < argc && ctl_split_commands(argc - dash - 1, argv + dash + 1,
					      &c->req.cmds, &c->req.ncmds))
		return ctl_usage_err("calibrate", NULL, "commands after '--' must be separated "
				     "by ':::' and not empty");
	return 0;
}

int cmd_calibrate_run(int argc, char **argv)
{
	struct cal_times t;
	struct profile p;
	struct cal_cmd c;
	int err;

	err = cal_parse(argc, argv, &c);
	if (err)
		return err;
	profile_init(&p);
	err = cal_calibrate(&c.req, &p, &t);
	if (!err && (err = profile_save(c.output, &p)))
		ctl_err("%s: %s", c.output, strerror(-err));
	if (!err)
		cal_print(&p, &t, c.output);
	profile_free(&p);
	ctl_free_commands(c.req.cmds, c.req.ncmds);
	return err;
}

TANDEM_CMD(calibrate, "calibrate", NULL, cmd_calibrate_run,
	   "--dataset DIR [--record-size S] [--sample SIZE] [--bw-time DUR] "
	   "[--cold fadvise|drop-caches] [--readers K] [--instance SPEC]... [--rate R[,R...]] "
	   "[--warm-time DUR] [--warm-runs N] [--warm-trace PREFIX] [--no-track] [--no-contention] [-o FILE] [-- CMD_A ::: CMD_B ...]",
	   "measure B(k), page-cache memory, each instance's rate, CPU, start-up and their CPU contention; save a profile")
