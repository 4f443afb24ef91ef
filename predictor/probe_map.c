// SPDX-License-Identifier: GPL-2.0
/*
 * Mapping a prediction from the host a model was trained on to the host it
 * runs on (Documentation/predictor.md, "Device probe"). Each term of the
 * cost baseline (base.c) prices one kind of work the probe measures:
 *
 *   1, graph nodes, B x graph nodes           op      (per-operator overhead)
 *   params, B x activations, B x params       mem     (memory-bound)
 *   B x FLOPs of kxk convolutions             conv
 *   B x FLOPs of grouped convolutions         dwconv
 *   B x FLOPs of 1x1 conv, linear, matmul     gemm
 *
 * A cost of kind k measured on the training host takes r_k = rate_train(k)
 * / rate_host(k) times as long here. The prediction's compute time is
 * multiplied by the cost-weighted mean of the ratios,
 *
 *   r = sum_t w_t x_t r_kind(t) / sum_t w_t x_t
 *
 * with x_t the job's terms and w_t the model's baseline weights, or, for a
 * model without a baseline (the GHN-2 regressor alone), the 224x224
 * built-in model's weights as the estimate of each kind's share. For a
 * baseline-only model this is the baseline with every term scaled by its
 * ratio; with a regressor on top, the regressor's correction is kept.
 */
#include <math.h>
#include <string.h>

#include "ghn.h"

/* enum tp_probe_kind of each term, in tp_base_terms() order */
static const int term_kind[TP_BASE_TERMS] = {
	TP_PROBE_OP, TP_PROBE_OP, TP_PROBE_MEM,
	[3 + TP_FLOPS_CONV1] = TP_PROBE_GEMM,
	[3 + TP_FLOPS_CONVK] = TP_PROBE_CONV,
	[3 + TP_FLOPS_GROUP] = TP_PROBE_DWCONV,
	[3 + TP_FLOPS_LINEAR] = TP_PROBE_GEMM,
	[3 + TP_FLOPS_MATMUL] = TP_PROBE_GEMM,
	[3 + TP_FLOP_CLASSES] = TP_PROBE_MEM,
	[4 + TP_FLOP_CLASSES] = TP_PROBE_MEM,
	[5 + TP_FLOP_CLASSES] = TP_PROBE_OP,
};
_Static_assert(TP_BASE_TERMS == 6 + TP_FLOP_CLASSES, "a kind for every baseline term");

static bool any_weight(const double *w)
{
	for (int k = 0; k < TP_BASE_TERMS; k++)
		if (w[k] > 0)
			return true;
	return false;
}

bool tp_probe_maps(const struct tp_model *m, const struct tp_job *job)
{
	return job->probe && m->has_probe && m->backend == TP_BACKEND_CPU;
}

void tp_probe_map(const struct tp_model *m, const struct tp_graph *g, const struct tp_job *job,
		  struct tp_prediction *out)
{
	double w[TP_BASE_TERMS], x[TP_BASE_TERMS], num = 0, den = 0;

	out->probe_mapped = false;
	out->probe_ratio = 1.0;
	for (int k = 0; k < TP_PROBE_KINDS; k++)
		out->kind_ratio[k] = 1.0;
	if (!tp_probe_maps(m, job))
		return;
	if ((m->cfg.features & TP_FEAT_BASE) && any_weight(m->base_w))
		memcpy(w, m->base_w, sizeof(w));
	else if (tp_builtin224_base_w(w))
		return;
	tp_probe_ratios(&m->probe, job->probe, out->kind_ratio);
	tp_base_terms(g, job->batch, x);
	for (int t = 0; t < TP_BASE_TERMS; t++) {
		num += w[t] * x[t] * out->kind_ratio[term_kind[t]];
		den += w[t] * x[t];
	}
	if (!(den > 0) || !isfinite(num / den))
		return;
	out->probe_mapped = true;
	out->probe_ratio = num / den;
	out->compute_s *= out->probe_ratio;
}
