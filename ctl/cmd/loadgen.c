// SPDX-License-Identifier: GPL-2.0
/* tandemctl loadgen: the training-job emulator and its dataset generator. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "loadgen/loadgen.h"
#include "lib/out.h"
#include "lib/units.h"
#include "lib/util.h"

static const struct option run_opts[] = {
	{ "epochs", required_argument, NULL, 'e' },
	{ "order", required_argument, NULL, 'o' },
	{ "seed", required_argument, NULL, 's' },
	{ "threads", required_argument, NULL, 't' },
	{ "queue", required_argument, NULL, 'q' },
	{ "batch", required_argument, NULL, 'b' },
	{ "compute", required_argument, NULL, 'c' },
	{ "decode", required_argument, NULL, 'd' },
	{ "record-size", required_argument, NULL, 'r' },
	{ "limit", required_argument, NULL, 'l' },
	{ "verify", no_argument, NULL, 'v' },
	{ "timeline", required_argument, NULL, 'T' },
	{ "checkpoint-dir", required_argument, NULL, 'C' },
	{ "checkpoint-size", required_argument, NULL, 'S' },
	{ "checkpoint-every", required_argument, NULL, 'K' },
	{ 0 }
};

#define LG_CKPT_EVERY_DEFAULT	100

static int parse_count(const char *s, uint32_t *out)
{
	return parse_u32(s, out) || !*out ? -EINVAL : 0;
}

static int run_opt(int opt, const char *arg, struct lg_opts *o, uint64_t *rs)
{
	switch (opt) {
	case 'e': return parse_u32(arg, &o->epochs);
	case 'o':
		if (strcmp(arg, "shuffle") && strcmp(arg, "seq"))
			return -EINVAL;
		o->shuffle = !strcmp(arg, "shuffle");
		return 0;
	case 's': return parse_u64(arg, UINT64_MAX, &o->seed);
	case 't': return parse_count(arg, &o->threads);
	case 'q': return parse_count(arg, &o->queue);
	case 'b': return parse_count(arg, &o->batch);
	case 'c': return units_parse_duration(arg, &o->compute);
	case 'd': return units_parse_duration(arg, &o->decode);
	case 'r': return units_parse_bytes(arg, rs);
	case 'l': return parse_u64(arg, UINT64_MAX, &o->limit);
	case 'v': o->verify = true; return 0;
	case 'T': o->timeline = arg; return 0;
	case 'C': o->ckpt_dir = arg; return 0;
	case 'S': return units_parse_bytes(arg, &o->ckpt_size) || !o->ckpt_size ? -EINVAL : 0;
	case 'K': return parse_count(arg, &o->ckpt_every);
	}
	return -EINVAL;
}

static void print_ckpts(const struct lg_opts *o, const struct lg_result *res)
{
	double med, max, copy, copy_new, measure = 0;
	char b[32];

	lg_ckpt_stats(res, &med, &max, &copy, &copy_new);
	out_arr_open("checkpoints");
	for (uint32_t i = 0; i < res->nckpt; i++) {
		const struct lg_ckpt *c = &res->ckpt[i];

		out_obj_open(NULL);
		out_u64("step", "checkpoint at step %llu:", c->step);
		out_double("at_s", NULL, c->at);
		out_double("stall_s", " stall %.6f s", c->stall);
		out_double("copy_s", ", in-memory copy %.6f s", c->copy);
		out_double("copy_new_s", " (to new memory %.6f s)\n", c->copy_new);
		out_obj_close();
		measure += c->measure;
	}
	out_arr_close();
	out_str("checkpoint_dir", "checkpoints to %s: ", o->ckpt_dir);
	out_u64("checkpoint_count", "%llu", res->nckpt);
	out_u64("checkpoint_bytes", NULL, o->ckpt_size);
	out_text(" of %s", units_fmt_size(o->ckpt_size, b, sizeof(b)));
	out_u64("checkpoint_every", " every %llu steps", o->ckpt_every);
	out_double("checkpoint_stall_median_s", ", stall median %.6f s", med);
	out_double("checkpoint_stall_max_s", " max %.6f s", max);
	out_double("checkpoint_copy_median_s", ", in-memory copy median %.6f s", copy);
	out_double("checkpoint_copy_new_median_s", " (to new memory %.6f s)", copy_new);
	/* the copies are timed inside the step: their time is in total_s */
	out_double("checkpoint_measure_s", "; timing the copies took %.3f s of the total\n",
		   measure);
}

static void print_result(const struct sample_set *ds, const struct lg_opts *o,
			 const struct lg_result *res)
{
	char b[32];

	out_obj_open(NULL);
	out_str("dataset", "dataset %s: ", ds->dir);
	out_u64("samples_per_epoch", "%llu samples, ", ds->nsamples);
	out_u64("files", "%llu files, ", ds->files.n);
	out_u64("dataset_bytes", NULL, ds->files.bytes);
	out_text("%s", units_fmt_size(ds->files.bytes, b, sizeof(b)));
	file_skips_print(&ds->files.skipped);
	out_text("; ");
	out_str("order", "order %s", o->shuffle ? "shuffle" : "seq");
	out_u64("seed", " seed %llu\n", o->seed);
	out_arr_open("epochs");
	for (uint32_t e = 0; e < res->epochs; e++) {
		const struct lg_epoch *ep = &res->ep[e];

		out_obj_open(NULL);
		out_u64("epoch", "epoch %llu:", e);
		out_double("start_s", NULL, ep->start);
		out_double("end_s", NULL, ep->end);
		out_double("time_s", " %.3f s", ep->end - ep->start);
		out_u64("bytes", NULL, ep->bytes);
		out_double("wait_s", ", waited for data %.3f s\n", ep->wait);
		out_obj_close();
	}
	out_arr_close();
	if (o->ckpt_dir)
		print_ckpts(o, res);
	out_double("total_s", "total %.3f s", res->total);
	out_u64("bytes", NULL, res->bytes);
	out_u64("samples", NULL, res->samples);
	out_double("rate_bps", NULL, res->total > 0 ? res->bytes / res->total : 0);
	out_text(", %s", units_fmt_rate(res->total > 0 ? res->bytes / res->total : 0,
					b, sizeof(b)));
	out_double("wait_s", ", waited for data %.3f s", res->wait);
	out_u64("verify_errors", o->verify ? ", %llu samples failed verification\n" : "\n",
		res->verify_errors);
	out_obj_close();
}

static int cmd_loadgen_run(int argc, char **argv)
{
	struct sample_set ds;
	struct lg_result res;
	struct lg_opts o;
	uint64_t rs = 0;
	int opt, err;

	lg_opts_default(&o);
	optind = 0;	/* 0: full re-initialisation (main() used "+" mode) */
	while ((opt = ctl_getopt(argc, argv, "", run_opts, "loadgen", NULL)) != -1) {
		if (opt == CTL_EUSAGE)
			return opt;
		if (run_opt(opt, optarg, &o, &rs))
			return ctl_usage_err("loadgen", NULL, "bad value '%s' for --%s", optarg,
					     opt_name(run_opts, opt));
	}
	if (optind != argc - 1)
		return ctl_usage_err("loadgen", NULL, optind < argc ? "one DIR" : "missing DIR");
	if (!o.ckpt_dir != !o.ckpt_size || (o.ckpt_every && !o.ckpt_dir))
		return ctl_usage_err("loadgen", NULL, "--checkpoint-dir and --checkpoint-size "
				     "go together (--checkpoint-every with them)");
	if (o.ckpt_dir && !o.ckpt_every)
		o.ckpt_every = LG_CKPT_EVERY_DEFAULT;
	err = sample_set_scan(argv[optind], rs, &ds);
	if (err) {
		if (err == -ENODATA)	/* other errors: the walk said what */
			ctl_err("%s: no samples", argv[optind]);
		return err;
	}
	err = lg_run(&ds, &o, &res);
	if (err && err != -ECANCELED)	/* a checkpoint's error: printed */
		ctl_err("loadgen: %s", err == -EBADMSG ? "--verify needs a dataset written by "
			"'loadgen gen'" : strerror(-err));
	else if (!err)
		print_result(&ds, &o, &res);
	if (!err && res.verify_errors)
		err = -EBADMSG;
	lg_result_free(&res);
	sample_set_free(&ds);
	return err;
}

static const struct option gen_opts[] = {
	{ "files", required_argument, NULL, 'n' },
	{ "size", required_argument, NULL, 's' },
	{ "seed", required_argument, NULL, 'S' },
	{ 0 }
};

/* SIZE[:fixed|uniform|lognormal] */
static int parse_size_dist(char *arg, struct lg_gen_opts *g)
{
	char *colon = strchr(arg, ':');

	if (colon) {
		*colon = '\0';
		if (lg_dist_parse(colon + 1, &g->dist))
			return -EINVAL;
	}
	return units_parse_bytes(arg, &g->size) || !g->size ? -EINVAL : 0;
}

static int cmd_loadgen_gen(int argc, char **argv)
{
	struct lg_gen_opts g = { .seed = 1 };
	uint64_t total;
	double t0;
	char b[32];
	int opt, err = 0;

	optind = 0;	/* 0: full re-initialisation (main() used "+" mode) */
	while ((opt = ctl_getopt(argc, argv, "", gen_opts, "loadgen", "gen")) != -1) {
		if (opt == 'n')
			err = parse_count(optarg, &g.files);
		else if (opt == 's')
			err = parse_size_dist(optarg, &g);
		else if (opt == 'S')
			err = parse_u64(optarg, UINT64_MAX, &g.seed);
		else
			return opt;	/* CTL_EUSAGE, printed */
		if (err)
			return ctl_usage_err("loadgen", "gen", "bad value '%s' for --%s", optarg,
					     opt_name(gen_opts, opt));
	}
	if (optind != argc - 1)
		return ctl_usage_err("loadgen", "gen", optind < argc ? "one DIR" : "missing DIR");
	if (!g.files || !g.size)
		return ctl_usage_err("loadgen", "gen", "--files and --size are required");
	t0 = now_s();
	err = lg_gen(argv[optind], &g, &total);
	if (err) {
		ctl_err("%s: %s", argv[optind], strerror(-err));
		return err;
	}
	out_obj_open(NULL);
	out_str("dir", "wrote %s: ", argv[optind]);
	out_u64("files", "%llu files, ", g.files);
	out_u64("bytes", NULL, total);
	out_text("%s", units_fmt_size(total, b, sizeof(b)));
	out_double("seconds", " in %.2f s (fsync'd)\n", now_s() - t0);
	out_obj_close();
	return 0;
}

static const struct option order_opts[] = {
	{ "seed", required_argument, NULL, 's' },
	{ "epoch", required_argument, NULL, 'e' },
	{ "order", required_argument, NULL, 'o' },
	{ "record-size", required_argument, NULL, 'r' },
	{ 0 }
};

#define LG_ORDER_MAX_SEEDS	64

/* "S[,S...]" -> seeds; -EINVAL on an empty, bad or too long list */
static int parse_seeds(const char *arg, uint64_t *seeds, unsigned int *n)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int err = copy ? 0 : -ENOMEM;

	*n = 0;
	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && !err;
	     tok = strtok_r(NULL, ",", &save)) {
		if (*n == LG_ORDER_MAX_SEEDS || parse_u64(tok, UINT64_MAX, &seeds[*n]))
			err = -EINVAL;
		else
			(*n)++;
	}
	free(copy);
	return err ?: (*n ? 0 : -EINVAL);
}

static int cmd_loadgen_order(int argc, char **argv)
{
	uint64_t seeds[LG_ORDER_MAX_SEEDS] = { 1 }, rs = 0;
	unsigned int nseeds = 1;
	struct sample_set ds;
	bool shuffle = true;
	uint32_t epoch = 0, n, *files;
	int opt, err = 0;

	optind = 0;	/* 0: full re-initialisation (main() used "+" mode) */
	while ((opt = ctl_getopt(argc, argv, "", order_opts, "loadgen", "order")) != -1) {
		switch (opt) {
		case 's': err = parse_seeds(optarg, seeds, &nseeds); break;
		case 'e': err = parse_u32(optarg, &epoch); break;
		case 'o':
			err = strcmp(optarg, "shuffle") && strcmp(optarg, "seq") ? -EINVAL : 0;
			shuffle = !strcmp(optarg, "shuffle");
			break;
		case 'r': err = units_parse_bytes(optarg, &rs); break;
		default: return opt;	/* CTL_EUSAGE, printed */
		}
		if (err)
			return ctl_usage_err("loadgen", "order", "bad value '%s' for --%s", optarg,
					     opt_name(order_opts, opt));
	}
	if (optind != argc - 1)
		return ctl_usage_err("loadgen", "order", optind < argc ? "one DIR" : "missing DIR");
	err = sample_set_scan(argv[optind], rs, &ds);
	if (err) {
		if (err == -ENODATA)
			ctl_err("%s: no samples", argv[optind]);
		return err;
	}
	files = calloc(ds.files.n, sizeof(*files));
	err = files ? lg_first_needs(&ds, seeds, nseeds, epoch, shuffle, files, &n) : -ENOMEM;
	if (err) {
		ctl_err("loadgen order: %s", strerror(-err));
	} else {
		out_obj_open(NULL);
		out_u64("epoch", NULL, epoch);
		out_arr_open("files");
		for (uint32_t i = 0; i < n; i++)
			out_str(NULL, "%s\n", ds.files.paths[files[i]]);
		out_arr_close();
		out_obj_close();
	}
	free(files);
	sample_set_free(&ds);
	return err;
}

TANDEM_CMD(loadgen, "loadgen", NULL, cmd_loadgen_run,
	   "DIR [--epochs N] [--order shuffle|seq] [--seed S] [--threads T] [--queue Q] "
	   "[--batch B] [--compute DUR] [--decode DUR] [--record-size SIZE] [--limit N] "
	   "[--verify] [--timeline CSV] [--checkpoint-dir DIR --checkpoint-size SIZE "
	   "[--checkpoint-every K]]",
	   "emulate a training job reading DIR (per-batch compute is a sleep)")
TANDEM_CMD(loadgen_gen, "loadgen", "gen", cmd_loadgen_gen,
	   "DIR --files N --size SIZE[:fixed|uniform|lognormal] [--seed S]",
	   "write a synthetic dataset with verifiable content (fsync'd)")
TANDEM_CMD(loadgen_order, "loadgen", "order", cmd_loadgen_order,
	   "DIR [--seed S[,S...]] [--epoch E] [--order shuffle|seq] [--record-size SIZE]",
	   "print DIR's files in the order loadgen jobs with these seeds first read them")
