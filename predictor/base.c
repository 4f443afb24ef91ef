// SPDX-License-Identifier: GPL-2.0
/*
 * Analytic cost baseline (TP_FEAT_BASE): seconds of one training iteration
 * as a non-negative weighted sum of cost terms of the graph,
 *
 *   base = w . [1, graph nodes, params,
 *               B x FLOPs of each enum tp_flop_class, B x activation elements,
 *               B x params, B x graph nodes]
 *
 * with B the batch size: a fixed cost per iteration and per operator
 * (launch, optimizer step over the parameters) and a cost per sample for
 * each kind of product, for the activations written and for each operator.
 * The weights are fitted on the training runs by least squares of the
 * relative error, subject to w >= 0 (Lawson-Hanson, tp_nnls). With
 * the baseline the regressor predicts log(t / base) rather than log t, and
 * with TP_FEAT_BASE_ONLY the baseline is the prediction.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runs.h"
#include "ghn.h"

void tp_base_terms(const struct tp_graph *g, double batch, double *x)
{
	const struct tp_graph_stats *s = &g->stats;
	int i = 0;

	x[i++] = 1.0;
	x[i++] = g->n;
	x[i++] = s->params;
	for (int k = 0; k < TP_FLOP_CLASSES; k++)
		x[i++] = batch * s->flops_by[k];
	x[i++] = batch * s->act_elems;
	x[i++] = batch * s->params;
	x[i++] = batch * g->n;
}

double tp_base_log(const struct tp_model *m, const struct tp_graph *g, double batch)
{
	double x[TP_BASE_TERMS], t = 0;

	if (!(m->cfg.features & TP_FEAT_BASE))
		return 0;
	tp_base_terms(g, batch > 0 ? batch : 1, x);
	for (int k = 0; k < TP_BASE_TERMS; k++)
		t += m->base_w[k] * x[k];
	/* never log(0): a graph with no cost the weights see (none in practice) */
	return log(t > 1e-9 ? t : 1e-9);
}

int tp_base_fit(struct tp_model *m, const struct tp_dataset *d, const bool *mask)
{
	double sc[TP_BASE_TERMS] = { 0 }, w[TP_BASE_TERMS], *a, *b;
	const int K = TP_BASE_TERMS;
	int n = 0, err;

	memset(m->base_w, 0, sizeof(m->base_w));
	a = malloc((size_t)(d->nruns ? d->nruns : 1) * K * sizeof(*a));
	b = malloc((size_t)(d->nruns ? d->nruns : 1) * sizeof(*b));
	if (!a || !b) {
		free(a);
		free(b);
		return tp_fail(-ENOMEM, "out of memory for the cost baseline");
	}
	/* rows x / t: the residual of row i is the relative error of run i;
	 * each column is then scaled to at most 1 */
	for (int i = 0; i < d->nruns; i++) {
		const struct tp_run *r = &d->runs[i];
		double *x = a + (size_t)n * K;

		if (mask && !mask[r->arch])
			continue;
		tp_base_terms(d->archs[r->arch].g, r->batch, x);
		for (int k = 0; k < K; k++) {
			x[k] /= r->t;
			sc[k] = fmax(sc[k], x[k]);
		}
		b[n++] = 1.0;
	}
	for (int i = 0; i < n; i++)
		for (int k = 0; k < K; k++)
			a[(size_t)i * K + k] = sc[k] > 0 ? a[(size_t)i * K + k] / sc[k] : 0;
	err = n ? tp_nnls(a, b, n, K, w) : tp_fail(-EINVAL, "no runs to fit the cost baseline on");
	free(a);
	free(b);
	if (err)
		return err;
	for (int k = 0; k < K; k++)
		m->base_w[k] = sc[k] > 0 ? w[k] / sc[k] : 0;
	for (int k = 0; k < K; k++)
		if (m->base_w[k] > 0)
			return 0;
	return tp_fail(-EDOM, "cost baseline: every weight fitted to 0");
}
