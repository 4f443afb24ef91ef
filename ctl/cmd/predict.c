// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl predict: training time per iteration from an ONNX graph
 * (libtandem-predict), training the predictor on measured runs, and its
 * leave-architecture-out evaluation against Ernest, and this host's device
 * probe (Documentation/predictor.md, "Device probe") from its cache or measured now.
 *
 * "predict MODEL.onnx" is the bare object; train, eval, graph and probe are its
 * verbs, each with its own options (one verb refuses another's).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cmd.h"
#include "lib/log.h"
#include "lib/out.h"
#include "lib/units.h"
#include "tandem_predict.h"
#include "lib/util.h"

/* ---- the device probe: `predict probe`, and the probe part of a prediction ---- */

static void date_of(int64_t when, char *buf, size_t len)
{
	time_t t = (time_t)when;
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "?");
}

static void print_probe(const char *key, const struct tp_probe *p, const char *indent)
{
	char date[32], fmt[64];

	date_of(p->when, date, sizeof(date));
	out_obj_open(key);
	out_str("cpu", "%s", p->cpu);
	out_u64("ncpu", " (%llu CPUs", (uint64_t)p->ncpu);
	out_str("date", ", probed %s", date);
	out_s64("when", NULL, p->when);
	out_u64("version", indent ? ", probe version %llu" : NULL, (uint64_t)p->version);
	out_double("seconds", indent ? ", %.1f s)\n" : ")", p->seconds);
	out_obj_open("rates");
	for (int k = 0; k < TP_PROBE_KINDS; k++) {
		snprintf(fmt, sizeof(fmt), "%s%-7s %%10.4g %s", indent ? indent : "",
			 tp_probe_kind_name(k), tp_probe_kind_unit(k));
		out_double(tp_probe_kind_name(k), indent ? fmt : NULL, p->rate[k]);
		if (indent)
			out_text(" (median of the repetitions %+.1f %%)\n", 100 * p->spread[k]);
	}
	out_obj_close();
	out_obj_open("spread");
	for (int k = 0; k < TP_PROBE_KINDS; k++)
		out_double(tp_probe_kind_name(k), NULL, p->spread[k]);
	out_obj_close();
	out_obj_close();
}

static void print_probe_mapping(const struct tp_model *m, const struct tp_probe *host, bool cached,
			 const struct tp_prediction *pr, const char *why_not)
{
	const struct tp_probe *train = tp_model_probe(m);

	out_obj_open("probe");
	out_bool("mapped", NULL, pr->probe_mapped);
	if (!pr->probe_mapped) {
		out_str("reason", "probe: not mapped (%s)\n",
			why_not ? why_not : "the graph has no cost the baseline prices");
		out_obj_close();
		return;
	}
	out_double("ratio", "probe: compute mapped to this host x%.3f", pr->probe_ratio);
	out_obj_open("ratios");
	for (int k = 0; k < TP_PROBE_KINDS; k++) {
		char fmt[32];

		snprintf(fmt, sizeof(fmt), "%s%s %%.3f", k ? ", " : " (", tp_probe_kind_name(k));
		out_double(tp_probe_kind_name(k), fmt, pr->kind_ratio[k]);
	}
	out_obj_close();
	out_text(")\n  from the training host's probe: ");
	print_probe("trained", train, NULL);
	out_text("\n  to this host's (%s): ", cached ? "cached" : "measured now");
	out_bool("host_cached", NULL, cached);
	print_probe("host", host, NULL);
	out_text("\n");
	out_obj_close();
}

static int cmd_predict_probe(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rerun", no_argument, NULL, 'r' },
		{ 0 },
	};
	struct tp_probe p;
	char path[4096] = "";
	bool rerun = false, cached = false;
	int opt, err;

	optind = 0;
	while ((opt = ctl_getopt(argc, argv, "", opts, "predict", "probe")) != -1) {
		if (opt == CTL_EUSAGE)
			return opt;
		rerun = true;
	}
	if (optind != argc)
		return ctl_usage_err("predict", "probe", "no argument expected");
	err = tp_probe_host(rerun, &p, &cached);
	if (err) {
		ctl_err("device probe: %s", tp_errmsg());
		return err;
	}
	if (tp_probe_cache_path(path, sizeof(path)))
		snprintf(path, sizeof(path), "-");
	out_obj_open(NULL);
	out_bool("cached", cached ? "device probe (cached, " : "device probe (measured now, ",
		 cached);
	out_str("cache", "%s): ", path);
	print_probe("probe", &p, "  ");
	out_obj_close();
	return 0;
}

TANDEM_CMD(predict_probe, "predict", "probe", cmd_predict_probe, "[--rerun]",
	   "this host's device probe (cached per host; --rerun measures again)")

/* ---- predictions ---- */

#define MAX_DATA 8
#define MAX_WARN 16

struct predict_opts {
	const char *model, *out, *backend, *probe;
	const char *data[MAX_DATA];	/* --data, repeatable */
	int ndata;
	bool strict, no_probe;
	struct tp_job job;
	struct tp_model_config cfg;
	struct tp_train_opts train;
	int folds, ernest_points;
	bool per_arch;
};

enum {
	O_BATCH = 256, O_GPUS, O_NODES, O_MODEL, O_DATA, O_OUT, O_EPOCHS, O_SEED, O_FOLDS,
	O_POINTS, O_NO_GHN, O_NO_STATS, O_HID, O_BACKEND, O_BW_INTRA, O_BW_INTER, O_PER_ARCH,
	O_VERBOSE, O_LR, O_STRICT, O_NO_RES, O_NO_COST, O_BASE, O_NO_BASE, O_BASE_ONLY,
	O_PROBE, O_NO_PROBE,
};

static const struct option long_opts[] = {
	{ "batch", required_argument, NULL, O_BATCH },
	{ "gpus", required_argument, NULL, O_GPUS },
	{ "nodes", required_argument, NULL, O_NODES },
	{ "model", required_argument, NULL, O_MODEL },
	{ "data", required_argument, NULL, O_DATA },
	{ "out", required_argument, NULL, O_OUT },
	{ "epochs", required_argument, NULL, O_EPOCHS },
	{ "seed", required_argument, NULL, O_SEED },
	{ "folds", required_argument, NULL, O_FOLDS },
	{ "ernest-points", required_argument, NULL, O_POINTS },
	{ "hid", required_argument, NULL, O_HID },
	{ "no-ghn", no_argument, NULL, O_NO_GHN },
	{ "no-stats", no_argument, NULL, O_NO_STATS },
	{ "backend", required_argument, NULL, O_BACKEND },
	{ "bw-intra", required_argument, NULL, O_BW_INTRA },
	{ "bw-inter", required_argument, NULL, O_BW_INTER },
	{ "per-arch", no_argument, NULL, O_PER_ARCH },
	{ "verbose", no_argument, NULL, O_VERBOSE },
	{ "lr", required_argument, NULL, O_LR },
	{ "strict", no_argument, NULL, O_STRICT },
	{ "no-res", no_argument, NULL, O_NO_RES },
	{ "no-cost", no_argument, NULL, O_NO_COST },
	{ "base", no_argument, NULL, O_BASE },
	{ "no-base", no_argument, NULL, O_NO_BASE },
	{ "base-only", no_argument, NULL, O_BASE_ONLY },
	{ "probe", required_argument, NULL, O_PROBE },
	{ "no-probe", no_argument, NULL, O_NO_PROBE },
	{ 0 }
};

/* the options of each verb, by their val */
static const int one_opts[] = {
	O_BATCH, O_GPUS, O_NODES, O_MODEL, O_BACKEND, O_BW_INTRA, O_BW_INTER, O_STRICT,
	O_NO_PROBE, 0,
};
static const int train_opts[] = {
	O_DATA, O_OUT, O_EPOCHS, O_SEED, O_LR, O_HID, O_NO_GHN, O_NO_STATS, O_NO_RES, O_NO_COST,
	O_BASE, O_NO_BASE, O_BASE_ONLY, O_VERBOSE, O_PROBE, 0,
};
static const int eval_opts[] = {
	O_DATA, O_FOLDS, O_POINTS, O_EPOCHS, O_SEED, O_LR, O_HID, O_NO_GHN, O_NO_STATS,
	O_NO_RES, O_NO_COST, O_BASE, O_NO_BASE, O_BASE_ONLY, O_PER_ARCH, O_VERBOSE, 0,
};

static int num_opt(int opt, const char *arg, const char *verb, struct predict_opts *o)
{
	bool real = opt == O_BATCH || opt == O_LR;
	bool rate = opt == O_BW_INTRA || opt == O_BW_INTER;
	uint64_t u = 0;
	double v = 0;
	int err = rate ? units_parse_rate(arg, &v) : real ? parse_double(arg, &v) :
		  parse_u64(arg, 1u << 30, &u);

	if (!err && ((real || rate) ? v <= 0 : (opt != O_SEED && u == 0)))
		err = -ERANGE;
	if (err)
		return ctl_usage_err("predict", verb, "invalid value '%s' for --%s", arg,
				     opt_name(long_opts, opt));
	switch (opt) {
	case O_BATCH: o->job.batch = v; break;
	case O_GPUS: o->job.gpus = (int)u; break;
	case O_NODES: o->job.nodes = (int)u; break;
	case O_EPOCHS: o->train.epochs = (int)u; break;
	case O_SEED: o->train.seed = u; break;
	case O_LR: o->train.lr = v; break;
	case O_FOLDS: o->folds = (int)u; break;
	case O_POINTS: o->ernest_points = (int)u; break;
	case O_HID: o->cfg.hid = (int)u; break;
	case O_BW_INTRA: o->job.bw_intra = v; break;	/* bytes/s */
	case O_BW_INTER: o->job.bw_inter = v; break;
	}
	return 0;
}

static const char *verb_name(const int *allowed)
{
	return allowed == train_opts ? "train" : allowed == eval_opts ? "eval" : NULL;
}

static int parse_opts(int argc, char **argv, const int *allowed, struct predict_opts *o)
{
	struct option opts[sizeof(long_opts) / sizeof(long_opts[0])];
	const char *verb = verb_name(allowed);
	int opt, n = 0;

	/* this verb's options only */
	for (const struct option *l = long_opts; l->name; l++)
		for (const int *a = allowed; *a; a++)
			if (l->val == *a)
				opts[n++] = *l;
	opts[n] = (struct option){ 0 };

	memset(o, 0, sizeof(*o));
	tp_job_default(&o->job);
	o->job.batch = 0;	/* required for a prediction */
	tp_model_config_default(&o->cfg);
	tp_train_opts_default(&o->train);
	o->folds = 10;
	o->ernest_points = 3;
	optind = 0;	/* 0: glibc re-initialises (main() scanned with "+") */
	while ((opt = ctl_getopt(argc, argv, "", opts, "predict", verb)) != -1) {
		switch (opt) {
		case CTL_EUSAGE:
			return opt;
		case O_MODEL: o->model = optarg; break;
		case O_DATA:
			if (o->ndata == MAX_DATA)
				return ctl_usage_err("predict", verb, "at most %d --data files",
						     MAX_DATA);
			o->data[o->ndata++] = optarg;
			break;
		case O_STRICT: o->strict = true; break;
		case O_PROBE: o->probe = optarg; break;
		case O_NO_PROBE: o->no_probe = true; break;
		case O_OUT: o->out = optarg; break;
		case O_BACKEND: o->backend = optarg; break;
		case O_NO_GHN: o->cfg.use_ghn = false; break;
		case O_NO_STATS: o->cfg.features &= ~(uint32_t)TP_FEAT_STATS; break;
		case O_NO_RES: o->cfg.features &= ~(uint32_t)TP_FEAT_RES; break;
		case O_NO_COST: o->cfg.features &= ~(uint32_t)TP_FEAT_COST; break;
		case O_BASE:
			o->cfg.features |= TP_FEAT_BASE;
			o->cfg.features &= ~(uint32_t)TP_FEAT_BASE_ONLY;
			break;
		case O_NO_BASE: o->cfg.features &= ~(uint32_t)(TP_FEAT_BASE | TP_FEAT_BASE_ONLY); break;
		case O_BASE_ONLY: o->cfg.features |= TP_FEAT_BASE | TP_FEAT_BASE_ONLY; break;
		case O_PER_ARCH: o->per_arch = true; break;
		case O_VERBOSE: o->train.verbose = true; break;
		default:
			if (num_opt(opt, optarg, verb, o))
				return CTL_EUSAGE;
		}
	}
	return 0;
}

static int lib_err(int err, const char *what)
{
	ctl_err("%s: %s", what, tp_errmsg()[0] ? tp_errmsg() : strerror(-err));
	return err;
}

/* --model FILE, else the library's choice (tp_model_choose(): *src says which) */
static int open_model(const struct predict_opts *o, const struct tp_graph *g,
		      struct tp_model **m, const char **src)
{
	enum tp_backend b = TP_BACKEND_AUTO;
	int err;

	err = tp_model_choose(o->model, g, m, src);
	if (err)
		return lib_err(err, "cannot load the predictor model");
	if (o->backend && !strcmp(o->backend, "cpu")) {
		b = TP_BACKEND_CPU;
	} else if (o->backend && !strcmp(o->backend, "cuda")) {
		b = TP_BACKEND_CUDA;
	} else if (o->backend && strcmp(o->backend, "auto")) {
		ctl_err("--backend must be auto, cpu or cuda");
		err = -EINVAL;
		goto out_free;
	}
	err = tp_model_set_backend(*m, b);
	if (err) {
		lib_err(err, "backend");
		goto out_free;
	}
	return 0;
out_free:
	tp_model_free(*m);
	*m = NULL;
	return err;
}

/* wall times of the import and of the prediction, for the record */
struct predict_timing {
	double import_ms, predict_ms;
};

/* Warnings come first in text (read before the numbers) and as an array in
 * JSON; --strict turns any of them into exit status 1. */
static void print_warnings(char (*warn)[TP_WARN_LEN], int n)
{
	out_arr_open("warnings");
	for (int i = 0; i < n; i++)
		out_str(NULL, "warning: %s\n", warn[i]);
	out_arr_close();
}

/* This host's probe for the mapping of a prediction (Documentation/
 * predictor.md, "Device probe"): only for a model that records its training
 * host's probe, on the CPU backend; *why_not says why there is none. */
struct host_probe {
	struct tp_probe p;
	bool cached;
	const char *why_not;
	char err[200];
};

static void host_probe(const struct predict_opts *o, const struct tp_model *m,
		       struct tp_job *job, struct host_probe *hp)
{
	const char *env = getenv("TANDEM_PROBE");

	memset(hp, 0, sizeof(*hp));
	if (o->no_probe || (env && !strcmp(env, "off")))
		hp->why_not = o->no_probe ? "--no-probe" : "TANDEM_PROBE=off";
	else if (!tp_model_probe(m))
		hp->why_not = "the model records no probe of its training host";
	else if (tp_model_backend(m) != TP_BACKEND_CPU)
		hp->why_not = "the probe measures the CPU, the backend is not";
	if (hp->why_not)
		return;
	if (tp_probe_host(false, &hp->p, &hp->cached)) {
		snprintf(hp->err, sizeof(hp->err), "this host's probe failed: %s", tp_errmsg());
		hp->why_not = hp->err;
		return;
	}
	job->probe = &hp->p;
}

static void print_prediction(const char *onnx, const char *src, const struct tp_model *m,
			     const struct tp_job *job, const struct tp_graph *g,
			     const struct tp_prediction *p, const struct predict_timing *t,
			     const struct host_probe *hp, char (*warn)[TP_WARN_LEN], int nwarn)
{
	struct tp_graph_stats st;

	tp_graph_get_stats(g, &st);
	out_obj_open(NULL);
	print_warnings(warn, nwarn);
	out_str("graph", "graph: %s", onnx);
	out_u64("graph_nodes", " (%llu GHN-2 nodes,", (uint64_t)tp_graph_num_nodes(g));
	out_double("params", " %.4g parameters,", st.params);
	out_double("flops_per_sample", " %.4g FLOPs/sample,", st.flops);
	out_double("input_res", " input %g)\n", st.input_res);
	out_bool("shapes_known", NULL, st.shapes_known);
	out_double("batch", "job: batch %g per worker,", job->batch);
	out_u64("gpus", " %llu GPU(s)", (uint64_t)job->gpus);
	out_u64("nodes", " x %llu node(s)\n", (uint64_t)job->nodes);
	out_double("compute_s", "compute per iteration: %.4f s\n", p->compute_s);
	out_double("allreduce_s", "ring all-reduce:       %.4f s", p->allreduce_s);
	out_double("grad_bytes", " (%.4g gradient bytes)\n", p->grad_bytes);
	out_double("total_s", "predicted iteration:   %.4f s\n", p->total_s);
	out_str("model", "model: %s", src);
	out_str("trained_on", ", trained on %s", tp_model_trained_on(m));
	out_str("backend", ", backend %s", tp_backend_name(tp_model_backend(m)));
	out_str("device", " on %s\n", job->dev ? job->dev->name : "?");
	print_probe_mapping(m, &hp->p, hp->cached, p, hp->why_not);
	out_double("import_ms", "import %.2f ms", t->import_ms);
	out_double("predict_ms", ", prediction %.2f ms\n", t->predict_ms);
	out_obj_close();
}

static int cmd_predict_one(int argc, char **argv)
{
	char warn[MAX_WARN][TP_WARN_LEN];
	struct tp_graph *g = NULL;
	struct tp_model *m = NULL;
	struct predict_timing t;
	struct tp_prediction p;
	struct tp_device dev;
	struct predict_opts o;
	struct host_probe hp;
	const char *src;
	double t0, t1;
	int nwarn = 0, err = parse_opts(argc, argv, one_opts, &o);

	if (err)
		return err;
	if (optind != argc - 1 || o.job.batch <= 0)
		return ctl_usage_err("predict", NULL, "need one MODEL.onnx and --batch B");
	t0 = now_s();
	err = tp_graph_load_onnx(argv[optind], &g);
	if (err)
		return lib_err(err, "cannot import the graph");
	t.import_ms = 1e3 * (now_s() - t0);
	err = open_model(&o, g, &m, &src);
	/* the features of the device this runs on; a model trained on another
	 * device has zero weights for them (Documentation/predictor.md) */
	if (!err && !tp_device_query(tp_model_backend(m), &dev))
		o.job.dev = &dev;
	else if (!err)
		ctl_err("predict: the device is not checked: %s", tp_errmsg());
	if (!err)
		host_probe(&o, m, &o.job, &hp);
	if (!err) {
		t1 = now_s();
		err = tp_predict(m, g, &o.job, &p);
		t.predict_ms = 1e3 * (now_s() - t1);
		if (err)
			lib_err(err, "prediction failed");
	}
	if (!err) {
		nwarn = tp_graph_warnings(g, warn, MAX_WARN);
		nwarn += tp_ood_warnings(m, g, &o.job, warn + nwarn, MAX_WARN - nwarn);
		print_prediction(argv[optind], src, m, &o.job, g, &p, &t, &hp, warn, nwarn);
		if (o.strict && nwarn) {
			ctl_err("--strict: %d warning(s)", nwarn);
			err = -EDOM;
		}
	}
	tp_model_free(m);
	tp_graph_free(g);
	return err;
}

/* --probe FILE: the probe of the host the runs were measured on */
static int train_probe(const char *path, struct tp_model *m)
{
	struct tp_probe p;
	int err = tp_probe_load(path, &p);

	if (!err)
		tp_model_set_probe(m, &p);
	return err;
}

static int cmd_predict_train(int argc, char **argv)
{
	struct tp_dataset *d = NULL;
	struct tp_model *m = NULL;
	struct predict_opts o;
	double rmse = 0, t0 = now_s();
	int err = parse_opts(argc, argv, train_opts, &o);

	if (err)
		return err;
	if (!o.ndata || !o.out || optind != argc)
		return ctl_usage_err("predict", "train", "need --data runs.csv and --out FILE, "
				     "and no other argument");
	err = tp_dataset_load_many(o.data, o.ndata, &d);
	if (err)
		return lib_err(err, "cannot load runs");
	err = tp_model_new(&o.cfg, o.train.seed, &m);
	if (!err && o.probe)
		err = train_probe(o.probe, m);
	if (!err)
		err = tp_train(m, d, NULL, &o.train, &rmse);
	if (!err)
		err = tp_model_save(m, o.out);
	if (err) {
		lib_err(err, "training failed");
	} else {
		out_obj_open(NULL);
		out_u64("archs", "trained on %llu architectures", (uint64_t)tp_dataset_num_archs(d));
		out_u64("runs", ", %llu runs", (uint64_t)tp_dataset_num_runs(d));
		out_double("train_rmse_log", ": rmse of log time %.4f", rmse);
		out_double("seconds", " in %.1f s", now_s() - t0);
		out_str("out", " -> %s\n", o.out);
		out_obj_close();
	}
	tp_model_free(m);
	tp_dataset_free(d);
	return err;
}

static void print_eval(const struct tp_eval_result *r)
{
	out_obj_open(NULL);
	out_u64("archs", "leave-architecture-out CV: %llu architectures", (uint64_t)r->archs);
	out_u64("runs", ", %llu runs", (uint64_t)r->runs);
	out_u64("folds", ", %llu folds\n", (uint64_t)r->folds);
	out_u64("ernest_fit_points", "Ernest fitted per architecture on its %llu smallest batch "
		"sizes; scored on the other ", (uint64_t)r->ernest_fit_points);
	out_u64("eval_runs", "%llu runs\n", (uint64_t)r->eval_runs);
	out_double("mape_ours", "MAPE ours:   %.2f%% (on the same runs)", r->mape_ours);
	out_double("mape_ours_all", "; %.2f%% on all runs of held-out architectures\n",
		   r->mape_ours_all);
	out_double("mape_ernest", "MAPE Ernest: %.2f%%\n", r->mape_ernest);
	out_double("ratio", "Ernest / ours: %.2fx\n", r->mape_ernest / r->mape_ours);
	out_double("mape_ernest_loo", "(Ernest fitted on all other runs of the architecture: "
		   "%.2f%% over all runs)\n", r->mape_ernest_loo);
	out_arr_open("by_resolution");
	for (int i = 0; i < r->nres; i++) {
		const struct tp_eval_res *x = &r->by_res[i];

		out_obj_open(NULL);
		out_double("input_res", "  input %g:", x->res);
		out_u64("runs", " %llu runs,", (uint64_t)x->runs);
		out_double("mape_ours_all", " ours %.2f%% on all;", x->mape_ours_all);
		out_u64("eval_runs", " on Ernest's %llu:", (uint64_t)x->eval_runs);
		out_double("mape_ours", " ours %.2f%%,", x->mape_ours);
		out_double("mape_ernest", " Ernest %.2f%%", x->mape_ernest);
		out_double("ratio", " (%.2fx)\n", x->mape_ernest / x->mape_ours);
		out_obj_close();
	}
	out_arr_close();
	out_double("train_seconds", "training and scoring took %.1f s\n", r->train_seconds);
	out_obj_close();
}

static int cmd_predict_eval(int argc, char **argv)
{
	struct tp_eval_result r;
	struct tp_dataset *d = NULL;
	struct predict_opts o;
	int err = parse_opts(argc, argv, eval_opts, &o);

	if (err)
		return err;
	if (!o.ndata || optind != argc)
		return ctl_usage_err("predict", "eval", "need --data runs.csv, and no other argument");
	err = tp_dataset_load_many(o.data, o.ndata, &d);
	if (err)
		return lib_err(err, "cannot load runs");
	err = tp_eval_cv(d, &o.cfg, &o.train, o.folds, o.ernest_points, &r,
			 o.per_arch && !opt_json ? stdout : NULL);
	if (err)
		lib_err(err, "evaluation failed");
	else
		print_eval(&r);
	tp_dataset_free(d);
	return err;
}

static int cmd_predict_graph(int argc, char **argv)
{
	struct tp_graph *g = NULL;
	int hist[TP_NUM_PRIMS], err;

	err = ctl_args(&argc, argv, 1, 1, "predict", "graph");
	if (err)
		return err;
	err = tp_graph_load_onnx(argv[1], &g);
	if (err)
		return lib_err(err, "cannot import the graph");
	if (!opt_json) {
		err = tp_graph_write_text(g, stdout);
		tp_graph_free(g);
		return err;
	}
	tp_graph_prim_hist(g, hist);
	out_obj_open(NULL);
	out_u64("nodes", NULL, (uint64_t)tp_graph_num_nodes(g));
	out_u64("edges", NULL, (uint64_t)tp_graph_num_edges(g));
	out_u64("virtual_edges", NULL, (uint64_t)tp_graph_num_virtual(g));
	out_obj_open("primitives");
	for (int p = 0; p < TP_NUM_PRIMS; p++)
		out_u64(tp_prim_name(p), NULL, (uint64_t)hist[p]);
	out_obj_close();
	out_obj_close();
	tp_graph_free(g);
	return 0;
}

TANDEM_CMD(predict, "predict", NULL, cmd_predict_one,
	   "MODEL.onnx --batch B [--gpus G] [--nodes N] [--model FILE] [--backend auto|cpu|cuda] "
	   "[--bw-intra RATE] [--bw-inter RATE] [--strict] [--no-probe]",
	   "predict seconds per training iteration of an ONNX graph (GHN-2 + regressor)")
TANDEM_CMD(predict_train, "predict", "train", cmd_predict_train,
	   "--data runs.csv [--data more.csv] --out FILE [--epochs N] [--seed S] [--lr LR] "
	   "[--hid D] [--no-ghn] [--no-stats] [--no-res] [--no-cost] [--base|--no-base|--base-only] "
	   "[--verbose] [--probe FILE]",
	   "train the predictor on measured runs")
TANDEM_CMD(predict_eval, "predict", "eval", cmd_predict_eval,
	   "--data runs.csv [--data more.csv] [--folds K] [--seed S] [--ernest-points P] "
	   "[--epochs N] [--lr LR] [--hid D] [--no-ghn] [--no-stats] [--no-res] [--no-cost] "
	   "[--base|--no-base|--base-only] [--per-arch] [--verbose]",
	   "leave-architecture-out cross-validation, ours vs Ernest")
TANDEM_CMD(predict_graph, "predict", "graph", cmd_predict_graph,
	   "MODEL.onnx", "print the GHN-2 graph of an ONNX model (text; -j: summary)")
