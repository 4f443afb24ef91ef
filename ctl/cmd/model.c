// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl model: predicted makespan over a grid of staggers and the best
 * release vector, from a calibration profile and/or flags.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "lib/log.h"
#include "lib/out.h"
#include "lib/units.h"
#include "lib/util.h"
#include "model/model.h"

#define GRID_MAX 1024

struct model_cmd {
	struct model_args args;
	const char *profile;
	double grid_lo, grid_hi, grid_step;	/* step 0: automatic */
	bool search;
	double min_gain;
	const char *plot, *measured;
	unsigned sgrid;
};

static const struct option model_opts[] = {
	{ "profile", required_argument, NULL, 'P' },
	{ "dataset-size", required_argument, NULL, 'D' },
	{ "extents", required_argument, NULL, 'K' },
	{ "cache", required_argument, NULL, 'C' },
	{ "cxl-cache", required_argument, NULL, 'X' },
	{ "steer", required_argument, NULL, 'S' },
	{ "nosteer-fraction", required_argument, NULL, 'F' },
	{ "steer-dram-fraction", required_argument, NULL, 'Q' },
	{ "bw", required_argument, NULL, 'B' },
	{ "eta", required_argument, NULL, 'E' },
	{ "cpus", required_argument, NULL, 'c' },
	{ "cpu-contention", required_argument, NULL, 'o' },
	{ "evict", required_argument, NULL, 'v' },
	{ "warm", no_argument, NULL, 'w' },
	{ "instance", required_argument, NULL, 'i' },
	{ "instances", required_argument, NULL, 'n' },
	{ "grid", required_argument, NULL, 'g' },
	{ "search-grid", required_argument, NULL, 'G' },
	{ "no-search", no_argument, NULL, 'N' },
	{ "min-gain", required_argument, NULL, 'm' },
	{ "plot", required_argument, NULL, 'p' },
	{ "measured", required_argument, NULL, 'M' },
	{ 0 }
};

static int parse_grid(const char *s, struct model_cmd *c)
{
	char buf[128], *a, *b;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", s);
	a = strchr(buf, ':');
	b = a ? strchr(a + 1, ':') : NULL;
	if (!a || !b)
		return -EINVAL;
	*a = *b = '\0';
	if (parse_double(buf, &c->grid_lo) || parse_double(a + 1, &c->grid_hi) ||
	    parse_double(b + 1, &c->grid_step) || !(c->grid_step > 0) ||
	    c->grid_hi < c->grid_lo || (c->grid_hi - c->grid_lo) / c->grid_step > GRID_MAX)
		return -EINVAL;
	return 0;
}

static int parse_onoff(const char *s, int *out)
{
	if (!strcmp(s, "on"))
		*out = 1;
	else if (!strcmp(s, "off"))
		*out = 0;
	else
		return -EINVAL;
	return 0;
}

static int model_opt(struct model_cmd *c, int opt, const char *arg)
{
	struct model_args *a = &c->args;
	char err[160];
	uint64_t u;
	int ret = 0;

	switch (opt) {
	case 'P': c->profile = arg; break;
	case 'D': ret = units_parse_size(arg, &a->dataset); break;
	case 'K':
		ret = units_parse_bytes(arg, &u);
		if (!ret && (u < 1 || u > 1u << 20))
			ret = -EINVAL;
		a->extents = u;
		break;
	case 'C': ret = units_parse_size(arg, &a->cache); break;
	case 'X': ret = units_parse_size(arg, &a->cxl_cache); break;
	case 'S': ret = parse_onoff(arg, &a->steer); break;
	case 'F': ret = parse_double(arg, &a->nosteer_frac); break;
	case 'Q': ret = parse_double(arg, &a->steer_dram_frac); break;
	case 'B': ret = model_args_parse_bw(a, arg); break;
	case 'E': ret = parse_double(arg, &a->eta); break;
	case 'c': ret = parse_double(arg, &a->ncpu); break;
	case 'o':
		ret = parse_double(arg, &a->cpu_contention);
		if (!ret && !(a->cpu_contention >= 0 && a->cpu_contention <= 10))
			ret = -EINVAL;
		break;
	case 'v': ret = model_evict_parse(arg, (enum model_evict *)&a->evict); break;
	case 'w': a->warm = true; break;
	case 'i':
		if (model_args_add_instance(a, arg, err, sizeof(err)))
			return ctl_usage_err("model", NULL, "--instance: %s", err);
		break;
	case 'n':
		ret = units_parse_bytes(arg, &u);
		if (!ret && (u < 1 || u > MODEL_MAX_INST))
			ret = -EINVAL;
		a->ninstances = u;
		break;
	case 'g': ret = parse_grid(arg, c); break;
	case 'G': ret = parse_u32(arg, &c->sgrid); break;
	case 'N': c->search = false; break;
	case 'm': ret = parse_double(arg, &c->min_gain); break;
	case 'p': c->plot = arg; break;
	case 'M': c->measured = arg; break;
	default: return opt;	/* CTL_EUSAGE, printed */
	}
	if (ret)
		return ctl_usage_err("model", NULL, "bad value '%s' for --%s", arg,
				     opt_name(model_opts, opt));
	return 0;
}

static int model_parse(int argc, char **argv, struct model_cmd *c)
{
	int opt, err;

	memset(c, 0, sizeof(*c));
	model_args_init(&c->args);
	c->search = true;
	c->min_gain = MO_MIN_GAIN;
	optind = 0;	/* 0: full re-initialisation (main() used "+" mode) */
	while ((opt = ctl_getopt(argc, argv, "", model_opts, "model", NULL)) != -1) {
		err = model_opt(c, opt, optarg);
		if (err)
			return err;
	}
	if (optind < argc)
		return ctl_usage_err("model", NULL, "unexpected argument '%s'", argv[optind]);
	return 0;
}

/* Grid points: x >= 0 releases instance k at k*x, x < 0 in reverse order. */
static int make_grid(const struct model_cmd *c, double horizon, double **xs, int *nx)
{
	double lo = c->grid_lo, hi = c->grid_hi, step = c->grid_step;
	int n;

	if (!(step > 0)) {
		lo = 0;
		hi = horizon;
		step = mo_nice_step(horizon / 16);
	}
	n = (int)floor((hi - lo) / step + 1e-9) + 1;
	*xs = calloc(n, sizeof(double));
	if (!*xs)
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		(*xs)[i] = lo + i * step;
	*nx = n;
	return 0;
}

static int model_run_cmd(struct model_cmd *c, struct model *m, struct mo_report *r)
{
	double horizon = 0;
	int err;

	err = mo_solo_all(m, r, &horizon);
	if (err)
		return err;
	err = make_grid(c, horizon, &r->xs, &r->nx);
	if (err)
		return err;
	err = mo_eval_grid(m, r);
	if (err || !c->search)
		return err;
	return mo_search(m, r, c->sgrid, c->min_gain);
}

int cmd_model_show(int argc, char **argv)
{
	struct mo_report r = { 0 }, alt = { 0 };
	struct model_set set = { 0 };
	struct model_cmd c;
	struct profile p;
	char err[256];
	int ret;

	ret = model_parse(argc, argv, &c);
	if (ret)
		return ret;
	profile_init(&p);
	if (c.profile && (ret = profile_load(c.profile, &p, err, sizeof(err)))) {
		ctl_err("%s: %s", c.profile, err);
		return ret;
	}
	/*
	 * When steering was not forced either way and there is CXL capacity,
	 * show what the schedule would give without steering too.
	 */
	ret = model_set_new(&c.args, &p, c.args.steer < 0 && c.search, &set, err, sizeof(err));
	if (ret) {
		ctl_err("%s", err);
		goto free_profile;
	}
	ret = model_run_cmd(&c, set.m, &r);
	if (!ret && set.alt)
		ret = mo_search(set.alt, &alt, c.sgrid, c.min_gain);
	if (ret) {
		ctl_err("model: simulation failed (%s)", strerror(-ret));
		goto free_model;
	}
	mo_print(set.m, &p, &r, set.alt, &alt);
	if (c.plot)
		ret = mo_plot(c.plot, c.measured, set.m, &r);
free_model:
	mo_report_free(&r);
	mo_report_free(&alt);
	model_set_free(&set);
free_profile:
	profile_free(&p);
	return ret;
}

TANDEM_CMD(model, "model", NULL, cmd_model_show,
	   "[--profile FILE] [--instance SPEC]... [--instances N] [--dataset-size S] "
	   "[--extents K] [--cache S] [--cxl-cache S] [--steer on|off] [--nosteer-fraction F] "
	   "[--steer-dram-fraction F] [--bw B1[,B2]] [--eta E] [--cpus N] [--cpu-contention C] "
	   "[--evict random|lru|2q] [--warm] [--grid LO:HI:STEP] [--search-grid G] [--no-search] "
	   "[--min-gain F] [--plot FILE.svg|png] [--measured CSV]",
	   "predicted makespan M(delta) over a grid of staggers and the best release vector")
