// SPDX-License-Identifier: GPL-2.0
/*
 * Model: parameter arena, initialisation, regressor, features, backend
 * choice and the graph embedding (the prediction itself: prediction.c).
 *
 * Regressor: out = w3 . relu(W2 relu(W1 x + b1) + b2) + b3, the predicted
 * log seconds of one training iteration of one worker, with
 * x = [graph vector (d), normalised job/stat features].
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ghn.h"

static const char *const param_names[P_NUM] = {
	"op_emb", "shape_emb", "msg_w1", "msg_b1", "msg_w2", "msg_b2",
	"sp_w1", "sp_b1", "sp_w2", "sp_b2", "gru_wih", "gru_whh", "gru_bih", "gru_bhh",
	"ln_g", "ln_b", "reg_w1", "reg_b1", "reg_w2", "reg_b2", "reg_w3", "reg_b3",
};

const char *tp_param_name(int p)
{
	return p >= 0 && p < P_NUM ? param_names[p] : "?";
}

void tp_model_config_default(struct tp_model_config *cfg)
{
	cfg->hid = 32;
	cfg->reg_hidden = 64;
	cfg->features = TP_FEAT_JOB | TP_FEAT_STATS | TP_FEAT_RES | TP_FEAT_COST;
	cfg->use_ghn = true;
}

static int check_config(const struct tp_model_config *c)
{
	if (c->hid < 4 || c->hid > 256 || c->hid % 4)
		return tp_fail(-EINVAL, "encoder width %d: must be a multiple of 4 in 4..256",
			       c->hid);
	if (c->reg_hidden < 1 || c->reg_hidden > TP_MAX_REG_HIDDEN)
		return tp_fail(-EINVAL, "regressor width %d: must be 1..%d", c->reg_hidden,
			       TP_MAX_REG_HIDDEN);
	if (c->features & ~(uint32_t)(TP_FEAT_JOB | TP_FEAT_STATS | TP_FEAT_RES | TP_FEAT_COST |
				      TP_FEAT_BASE | TP_FEAT_BASE_ONLY))
		return tp_fail(-EINVAL, "unknown feature bits 0x%x", c->features);
	if ((c->features & TP_FEAT_BASE_ONLY) && !(c->features & TP_FEAT_BASE))
		return tp_fail(-EINVAL, "the baseline alone (0x%x) without the baseline (0x%x)",
			       TP_FEAT_BASE_ONLY, TP_FEAT_BASE);
	return 0;
}

static void layout(struct tp_model *m)
{
	size_t d = m->cfg.hid, h = m->cfg.reg_hidden;
	size_t sz[P_NUM] = {
		[P_OP_EMB] = TP_NUM_PRIMS * d, [P_SHAPE_EMB] = 4 * TP_SHAPE_BUCKETS * (d / 4),
		[P_MSG_W1] = d * d, [P_MSG_B1] = d, [P_MSG_W2] = d * d, [P_MSG_B2] = d,
		[P_SP_W1] = d * d, [P_SP_B1] = d, [P_SP_W2] = d * d, [P_SP_B2] = d,
		[P_GRU_WIH] = 3 * d * d, [P_GRU_WHH] = 3 * d * d,
		[P_GRU_BIH] = 3 * d, [P_GRU_BHH] = 3 * d, [P_LN_G] = d, [P_LN_B] = d,
		[P_R_W1] = h * m->in, [P_R_B1] = h, [P_R_W2] = h * h, [P_R_B2] = h,
		[P_R_W3] = h, [P_R_B3] = 1,
	};

	m->nparams = 0;
	for (int p = 0; p < P_NUM; p++) {
		m->size[p] = sz[p];
		m->nparams += sz[p];
	}
}

static void layout_ptrs(struct tp_model *m)
{
	size_t off = 0;

	for (int p = 0; p < P_NUM; p++) {
		m->p[p] = m->params + off;
		m->g[p] = m->grads + off;
		off += m->size[p];
	}
}

static int count_feats(uint32_t features)
{
	return (features & TP_FEAT_JOB ? TP_NUM_JOB_FEATS : 0) +
		(features & TP_FEAT_STATS ? TP_NUM_STAT_FEATS : 0) +
		(features & TP_FEAT_RES ? TP_NUM_RES_FEATS : 0) +
		(features & TP_FEAT_COST ? TP_NUM_COST_FEATS : 0);
}

int tp_model_alloc(const struct tp_model_config *cfg, struct tp_model **out)
{
	struct tp_model *m;
	size_t total;
	int err = check_config(cfg);

	if (err)
		return err;
	m = calloc(1, sizeof(*m));
	if (!m)
		return tp_fail(-ENOMEM, "out of memory for a model");
	m->cfg = *cfg;
	m->nfeat = count_feats(cfg->features);
	m->in = cfg->hid + m->nfeat;
	layout(m);
	total = m->nparams;
	m->params = calloc(total, sizeof(float));
	m->grads = calloc(total, sizeof(float));
	if (!m->params || !m->grads) {
		tp_model_free(m);
		return tp_fail(-ENOMEM, "out of memory for %zu parameters", total);
	}
	layout_ptrs(m);
	for (int k = 0; k < TP_MAX_FEATS; k++)
		m->feat_std[k] = 1.0f;
	m->backend = TP_BACKEND_CPU;
	m->version = 3;
	*out = m;
	return 0;
}

static void fill_uniform(struct tp_rng *r, float *p, size_t n, double bound)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (float)((2.0 * tp_rng_uniform(r) - 1.0) * bound);
}

void tp_model_init_params(struct tp_model *m, uint64_t seed)
{
	double d = m->cfg.hid, h = m->cfg.reg_hidden;
	struct tp_rng r;

	tp_rng_seed(&r, seed);
	/* like torch's defaults: U(+-1/sqrt(fan_in)); embeddings N(0, 1) */
	for (int p = 0; p < P_NUM; p++) {
		double fan = p >= P_R_W1 ? (p <= P_R_B1 ? m->in : h) : d;

		if (p == P_OP_EMB || p == P_SHAPE_EMB) {
			for (size_t i = 0; i < m->size[p]; i++)
				m->p[p][i] = (float)tp_rng_normal(&r);
		} else {
			fill_uniform(&r, m->p[p], m->size[p], 1.0 / sqrt(fan));
		}
	}
	for (int j = 0; j < m->cfg.hid; j++) {
		m->p[P_LN_G][j] = 1.0f;
		m->p[P_LN_B][j] = 0.0f;
	}
}

void tp_model_zero_grads(struct tp_model *m)
{
	memset(m->grads, 0, m->nparams * sizeof(float));
}

int tp_model_new(const struct tp_model_config *cfg, uint64_t seed, struct tp_model **out)
{
	int err;

	tp_clear_error();
	err = tp_model_alloc(cfg, out);
	if (err)
		return err;
	tp_model_init_params(*out, seed);
	return 0;
}

void tp_model_free(struct tp_model *m)
{
	if (!m)
		return;
	tp_cuda_release(m);
	free(m->params);
	free(m->grads);
	free(m);
}

void tp_model_get_config(const struct tp_model *m, struct tp_model_config *cfg)
{
	*cfg = m->cfg;
}

const char *tp_model_trained_on(const struct tp_model *m)
{
	return m->trained_on;
}

int tp_model_file_version(const struct tp_model *m)
{
	return m->version;
}

size_t tp_model_num_params(const struct tp_model *m)
{
	return m->nparams;
}

const struct tp_probe *tp_model_probe(const struct tp_model *m)
{
	return m->has_probe ? &m->probe : NULL;
}

void tp_model_set_probe(struct tp_model *m, const struct tp_probe *p)
{
	m->has_probe = p != NULL;
	if (p)
		m->probe = *p;
	else
		memset(&m->probe, 0, sizeof(m->probe));
}

/* ---- regressor ---- */

float tp_reg_forward(const struct tp_model *m, struct tp_reg_acts *a)
{
	int h = m->cfg.reg_hidden;

	tp_linear_fwd(a->z1, a->x, m->p[P_R_W1], m->p[P_R_B1], m->in, h);
	for (int j = 0; j < h; j++)
		a->h1[j] = a->z1[j] > 0.0f ? a->z1[j] : 0.0f;
	tp_linear_fwd(a->z2, a->h1, m->p[P_R_W2], m->p[P_R_B2], h, h);
	for (int j = 0; j < h; j++)
		a->h2[j] = a->z2[j] > 0.0f ? a->z2[j] : 0.0f;
	tp_linear_fwd(&a->out, a->h2, m->p[P_R_W3], m->p[P_R_B3], h, 1);
	return a->out;
}

void tp_reg_backward(struct tp_model *m, const struct tp_reg_acts *a, float dout, float *dx)
{
	int h = m->cfg.reg_hidden;
	float dh2[TP_MAX_REG_HIDDEN] = { 0 }, dh1[TP_MAX_REG_HIDDEN] = { 0 };

	tp_linear_bwd(dh2, m->g[P_R_W3], m->g[P_R_B3], &dout, a->h2, m->p[P_R_W3], h, 1);
	for (int j = 0; j < h; j++)
		if (a->z2[j] <= 0.0f)
			dh2[j] = 0.0f;
	tp_linear_bwd(dh1, m->g[P_R_W2], m->g[P_R_B2], dh2, a->h1, m->p[P_R_W2], h, h);
	for (int j = 0; j < h; j++)
		if (a->z1[j] <= 0.0f)
			dh1[j] = 0.0f;
	tp_linear_bwd(dx, m->g[P_R_W1], m->g[P_R_B1], dh1, a->x, m->p[P_R_W1], m->in, h);
}

void tp_raw_features(const struct tp_model *m, const struct tp_graph *g, double batch,
		     int gpus, int nodes, const struct tp_device *dev, double *x)
{
	int i = 0;

	if (!dev)
		dev = &m->train_dev;
	if (m->cfg.features & TP_FEAT_JOB) {
		x[i++] = log(batch > 0 ? batch : 1);
		x[i++] = log(gpus > 0 ? gpus : 1);
		x[i++] = log(nodes > 0 ? nodes : 1);
		for (int k = 0; k < TP_DEV_FEATS; k++)
			x[i++] = log1p(dev->feat[k] > 0 ? dev->feat[k] : 0);
	}
	if (m->cfg.features & TP_FEAT_STATS) {
		x[i++] = log1p(g->stats.params);
		x[i++] = log1p(g->stats.flops);
		x[i++] = log1p(g->stats.act_elems);
		x[i++] = log((double)g->n);
	}
	if (m->cfg.features & TP_FEAT_RES)
		x[i++] = log1p(g->stats.input_res);
	if (m->cfg.features & TP_FEAT_COST)
		for (int k = 0; k < TP_FLOP_CLASSES; k++)
			x[i++] = log1p(g->stats.flops_by[k]);
}

void tp_reg_input(const struct tp_model *m, const float *gvec, const double *raw, float *x)
{
	int d = m->cfg.hid;

	for (int j = 0; j < d; j++)
		x[j] = m->cfg.use_ghn ? gvec[j] : 0.0f;
	for (int k = 0; k < m->nfeat; k++)
		x[d + k] = (float)((raw[k] - m->feat_mean[k]) / m->feat_std[k]);
}

double tp_log_time(const struct tp_model *m, const float *gvec, const struct tp_graph *g,
		   double batch, int gpus, int nodes, const struct tp_device *dev,
		   struct tp_reg_acts *ra)
{
	double raw[TP_MAX_FEATS];

	ra->out = 0;
	if (tp_model_regresses(m)) {
		tp_raw_features(m, g, batch, gpus, nodes, dev, raw);
		tp_reg_input(m, gvec, raw, ra->x);
		tp_reg_forward(m, ra);
	}
	return tp_base_log(m, g, batch) + ra->out;
}

/* ---- backend and embedding ---- */

int tp_model_set_backend(struct tp_model *m, enum tp_backend b)
{
	if (b == TP_BACKEND_AUTO)
		b = tp_cuda_available() ? TP_BACKEND_CUDA : TP_BACKEND_CPU;
	if (b == TP_BACKEND_CUDA && !tp_cuda_available())
		return tp_fail(-ENODEV, "CUDA backend requested but no GPU is usable");
	if (m->backend == TP_BACKEND_CUDA && b != TP_BACKEND_CUDA)
		tp_cuda_release(m);
	m->backend = b;
	return 0;
}

enum tp_backend tp_model_backend(const struct tp_model *m)
{
	return m->backend;
}

int tp_embed(struct tp_model *m, const struct tp_graph *g, float *out)
{
	struct tp_acts a;
	int err;

	tp_clear_error();
	if (m->backend == TP_BACKEND_CUDA)
		return tp_cuda_embed(m, g, out);
	err = tp_acts_alloc(g->n, m->cfg.hid, &a);
	if (err)
		return err;
	tp_ghn_forward(m, g, &a);
	memcpy(out, a.gvec, m->cfg.hid * sizeof(float));
	tp_acts_free(&a);
	return 0;
}
