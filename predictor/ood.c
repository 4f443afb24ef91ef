// SPDX-License-Identifier: GPL-2.0
/*
 * Warnings that belong to a prediction: the graph's own (shapes left
 * unknown, an eval-mode export) and where a job lies outside what the
 * model was trained on. The training range is recorded by tp_train
 * (tp_ood_fit) and stored in the model file (version 2).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "runs.h"
#include "ghn.h"

/* One warning line (cut at TP_WARN_LEN); counts past max too. */
static __attribute__((format(printf, 4, 5)))
void add_warn(char (*warn)[TP_WARN_LEN], int *n, int max, const char *fmt, ...)
{
	va_list ap;

	if (*n < max) {
		va_start(ap, fmt);
		vsnprintf(warn[*n], TP_WARN_LEN, fmt, ap);
		va_end(ap);
	}
	(*n)++;
}

#define WARN(...) add_warn(warn, &n, max, __VA_ARGS__)

int tp_graph_warnings(const struct tp_graph *g, char (*warn)[TP_WARN_LEN], int max)
{
	const struct tp_graph_stats *st = &g->stats;
	int n = 0;

	if (st->unresolved)
		WARN("shapes of %u activation tensors could not be inferred (first: %s): FLOPs "
		     "and activation sizes are undercounted", st->unresolved, st->unresolved_at);
	else if (!st->shapes_known && st->onnx_nodes)
		WARN("no weighted op with known shapes: FLOPs are undercounted");
	if (st->eval_bn || st->folded_bn)
		WARN("eval-mode export (%u BatchNorm nodes in inference mode, %u convolutions with "
		     "BatchNorm folded in): export with training=torch.onnx.TrainingMode.TRAINING",
		     st->eval_bn, st->folded_bn);
	return n < max ? n : max;
}

static bool has_res(const struct tp_ood *o, double r)
{
	for (int k = 0; k < o->nres; k++)
		if (fabs(o->res[k] - r) < 0.5)
			return true;
	return false;
}

static int res_list(const struct tp_ood *o, char *buf, size_t len)
{
	int w = 0;

	buf[0] = '\0';
	for (int k = 0; k < o->nres && w < (int)len; k++)
		w += snprintf(buf + w, len - w, "%s%g", k ? ", " : "", o->res[k]);
	return w;
}

/* Op types of g the training graphs never had, comma-separated into buf. */
static int unseen_ops(const struct tp_ood *o, const struct tp_graph *g, char *buf, size_t len)
{
	int count = 0, w = 0;

	buf[0] = '\0';
	for (int i = 0; i < g->nops; i++) {
		int k = 0;

		while (k < o->nops && strcmp(o->ops[k], g->ops[i]))
			k++;
		if (k < o->nops)
			continue;
		if (w < (int)len)
			w += snprintf(buf + w, len - w, "%s%s", count ? ", " : "", g->ops[i]);
		count++;
	}
	return count;
}

int tp_ood_warnings(const struct tp_model *m, const struct tp_graph *g, const struct tp_job *job,
		    char (*warn)[TP_WARN_LEN], int max)
{
	const struct tp_ood *o = &m->ood;
	const struct tp_graph_stats *st = &g->stats;
	char list[120];
	int n = 0, k;

	if (!o->known) {
		WARN("model file version %d records no training range: resolution, FLOPs, op "
		     "types, workers and device not checked", m->version);
		return n < max ? n : max;
	}
	if (st->input_res > 0 && o->nres && !has_res(o, st->input_res)) {
		res_list(o, list, sizeof(list));
		WARN("input resolution %g was never trained on (trained: %s)", st->input_res, list);
	}
	if (st->flops < o->flops_lo || st->flops > o->flops_hi)
		WARN("%.3g FLOPs/sample is outside the training range %.3g..%.3g", st->flops,
		     o->flops_lo, o->flops_hi);
	if (st->params < o->params_lo || st->params > o->params_hi)
		WARN("%.3g parameters is outside the training range %.3g..%.3g", st->params,
		     o->params_lo, o->params_hi);
	if (o->nops && (k = unseen_ops(o, g, list, sizeof(list))))
		WARN("%d op type%s never seen in training: %s", k, k > 1 ? "s" : "", list);
	if (job->gpus > o->max_gpus || job->nodes > o->max_nodes)
		WARN("%d GPU(s) x %d node(s), but every training run had at most %d x %d: the "
		     "multi-worker part is the analytic all-reduce term alone", job->gpus,
		     job->nodes, o->max_gpus, o->max_nodes);
	/* mapped by the probes (tp_probe_map): said by the prediction's probe
	 * fields, not a warning */
	if (job->dev && m->train_dev.name[0] && strcmp(job->dev->name, m->train_dev.name) &&
	    !tp_probe_maps(m, job))
		WARN("device '%s' is not the profiled one ('%s'): profile it and train a model "
		     "for it (Documentation/predictor.md)", job->dev->name, m->train_dev.name);
	return n < max ? n : max;
}

static void add_res(struct tp_ood *o, double r)
{
	if (r > 0 && !has_res(o, r) && o->nres < TP_OOD_MAX_RES)
		o->res[o->nres++] = r;
}

static void add_ops(struct tp_ood *o, const struct tp_graph *g)
{
	for (int i = 0; i < g->nops; i++) {
		int k = 0;

		while (k < o->nops && strcmp(o->ops[k], g->ops[i]))
			k++;
		if (k == o->nops && o->nops < TP_OOD_MAX_OPS)
			snprintf(o->ops[o->nops++], sizeof(o->ops[0]), "%s", g->ops[i]);
	}
}

/* The range of the training runs (architectures with mask[a], NULL: all). */
void tp_ood_fit(struct tp_model *m, const struct tp_dataset *d, const bool *mask)
{
	struct tp_ood *o = &m->ood;

	memset(o, 0, sizeof(*o));
	o->flops_lo = o->params_lo = INFINITY;
	for (int a = 0; a < d->narchs; a++) {
		const struct tp_arch *ar = &d->archs[a];
		const struct tp_graph_stats *st = &ar->g->stats;

		if (mask && !mask[a])
			continue;
		add_res(o, st->input_res);
		add_ops(o, ar->g);
		o->flops_lo = fmin(o->flops_lo, st->flops);
		o->flops_hi = fmax(o->flops_hi, st->flops);
		o->params_lo = fmin(o->params_lo, st->params);
		o->params_hi = fmax(o->params_hi, st->params);
		for (int k = 0; k < ar->nruns; k++) {
			const struct tp_run *r = &d->runs[d->by_arch[ar->run0 + k]];

			o->max_gpus = r->gpus > o->max_gpus ? r->gpus : o->max_gpus;
			o->max_nodes = r->nodes > o->max_nodes ? r->nodes : o->max_nodes;
		}
	}
	o->known = true;
}
