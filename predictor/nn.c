// SPDX-License-Identifier: GPL-2.0
/*
 * CPU reference of the encoder: embeddings, message MLPs, GRU cell,
 * LayerNorm, the two sweeps, and their backward passes.
 *
 * Equations (d = hidden width; v runs over the sweep order; N_s(v) are the
 * real neighbours in the sweep's direction - predecessors going forward,
 * successors going backward - and V_s(v) the nodes at shortest-path
 * distance 2..50 in that direction, with distance s_uv):
 *
 *   h0_v   = E_op[prim_v] + concat_k E_shape[k][bucket_k(shape_v)]
 *   m_v    = sum_{u in N_s(v)} MLP(h_u) + sum_{u in V_s(v)} MLP_sp(h_u) / s_uv
 *   h_v    = GRUCell(m_v, h_v)            (h_u already updated this sweep)
 *   y_v    = LayerNorm(h_v) after both sweeps
 *   g      = mean_v y_v
 *
 * MLP(x) = W2 relu(W1 x + b1) + b2. predictor/tools/ghn_ref.py implements
 * the same equations in PyTorch for the golden test.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ghn.h"

/*
 * The two hot loops of training. Eight partial sums make the dot product
 * vectorisable without -ffast-math, and fix the summation order, so every
 * clone (AVX2 or baseline, picked at load time) gives the same bits.
 */
#define TP_HOT __attribute__((target_clones("avx2", "default")))

/* y [out] = w [out][in] x [in] + b [out] */
TP_HOT void tp_linear_fwd(float *restrict y, const float *restrict x, const float *restrict w,
			  const float *restrict b, int in, int out)
{
	for (int o = 0; o < out; o++) {
		const float *wr = w + (size_t)o * in;
		float acc[8] = { 0 }, s;
		int i = 0;

		for (; i + 8 <= in; i += 8)
			for (int k = 0; k < 8; k++)
				acc[k] += wr[i + k] * x[i + k];
		s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
		for (; i < in; i++)
			s += wr[i] * x[i];
		y[o] = s + (b ? b[o] : 0.0f);
	}
}

/* dx [in] += w^T dy; dw [out][in] += dy x^T; db [out] += dy (NULLs skip) */
TP_HOT void tp_linear_bwd(float *restrict dx, float *restrict dw, float *restrict db,
			  const float *restrict dy, const float *restrict x,
			  const float *restrict w, int in, int out)
{
	for (int o = 0; o < out; o++) {
		float g = dy[o];

		if (g == 0.0f)
			continue;
		if (db)
			db[o] += g;
		if (dw) {
			float *dwr = dw + (size_t)o * in;

			for (int i = 0; i < in; i++)
				dwr[i] += g * x[i];
		}
		if (dx) {
			const float *wr = w + (size_t)o * in;

			for (int i = 0; i < in; i++)
				dx[i] += g * wr[i];
		}
	}
}

static float sigmoidf(float x)
{
	return 1.0f / (1.0f + expf(-x));
}

/* a1 [d] = W1 x + b1 (kept for backward); y [d] = W2 relu(a1) + b2 */
static void mlp_fwd(const struct tp_model *m, int w1, float *a1, float *y, const float *x)
{
	int d = m->cfg.hid;
	float hid[256] = { 0 };

	tp_linear_fwd(a1, x, m->p[w1], m->p[w1 + 1], d, d);
	for (int j = 0; j < d; j++)
		hid[j] = a1[j] > 0.0f ? a1[j] : 0.0f;
	tp_linear_fwd(y, hid, m->p[w1 + 2], m->p[w1 + 3], d, d);
}

/* dx [d] += dL/dx given dy [d]; parameter grads accumulate */
static void mlp_bwd(struct tp_model *m, int w1, float *dx, const float *dy, const float *x,
		    const float *a1)
{
	int d = m->cfg.hid;
	float hid[256] = { 0 }, dhid[256] = { 0 };

	for (int j = 0; j < d; j++) {
		hid[j] = a1[j] > 0.0f ? a1[j] : 0.0f;
		dhid[j] = 0.0f;
	}
	tp_linear_bwd(dhid, m->g[w1 + 2], m->g[w1 + 3], dy, hid, m->p[w1 + 2], d, d);
	for (int j = 0; j < d; j++)
		if (a1[j] <= 0.0f)
			dhid[j] = 0.0f;
	tp_linear_bwd(dx, m->g[w1], m->g[w1 + 1], dhid, x, m->p[w1], d, d);
}

/* GRU cell: x [d] input, h [d] state -> hout [d]; r, z, n, hn [d] kept */
static void gru_fwd(const struct tp_model *m, const float *x, const float *h, float *hout,
		    float *r, float *z, float *n, float *hn)
{
	int d = m->cfg.hid;
	float gi[768], gh[768];

	tp_linear_fwd(gi, x, m->p[P_GRU_WIH], m->p[P_GRU_BIH], d, 3 * d);
	tp_linear_fwd(gh, h, m->p[P_GRU_WHH], m->p[P_GRU_BHH], d, 3 * d);
	for (int j = 0; j < d; j++) {
		r[j] = sigmoidf(gi[j] + gh[j]);
		z[j] = sigmoidf(gi[d + j] + gh[d + j]);
		hn[j] = gh[2 * d + j];
		n[j] = tanhf(gi[2 * d + j] + r[j] * hn[j]);
		hout[j] = (1.0f - z[j]) * n[j] + z[j] * h[j];
	}
}

/* dhout [d] -> dx [d] (overwritten), dh [d] (+=); parameter grads accumulate */
static void gru_bwd(struct tp_model *m, const float *dhout, const float *x, const float *h,
		    const float *r, const float *z, const float *n, const float *hn,
		    float *dx, float *dh)
{
	int d = m->cfg.hid;
	float dgi[768], dgh[768];

	for (int j = 0; j < d; j++) {
		float dn = dhout[j] * (1.0f - z[j]);
		float dz = dhout[j] * (h[j] - n[j]);
		float dnp = dn * (1.0f - n[j] * n[j]);
		float drp = dnp * hn[j] * r[j] * (1.0f - r[j]);
		float dzp = dz * z[j] * (1.0f - z[j]);

		dh[j] += dhout[j] * z[j];
		dgi[j] = dgh[j] = drp;
		dgi[d + j] = dgh[d + j] = dzp;
		dgi[2 * d + j] = dnp;
		dgh[2 * d + j] = dnp * r[j];
		dx[j] = 0.0f;
	}
	tp_linear_bwd(dx, m->g[P_GRU_WIH], m->g[P_GRU_BIH], dgi, x, m->p[P_GRU_WIH], d, 3 * d);
	tp_linear_bwd(dh, m->g[P_GRU_WHH], m->g[P_GRU_BHH], dgh, h, m->p[P_GRU_WHH], d, 3 * d);
}

int tp_acts_alloc(int n, int d, struct tp_acts *a)
{
	size_t nd = (size_t)n * d, total = nd * (2 + 2 * 10) + 2 * (size_t)n + d;
	float *p;

	memset(a, 0, sizeof(*a));
	a->mem = calloc(total, sizeof(float));
	if (!a->mem)
		return tp_fail(-ENOMEM, "out of memory for activations of %d nodes", n);
	a->n = n;
	a->d = d;
	p = a->mem;
	a->h0 = p, p += nd;
	for (int s = 0; s < 2; s++) {
		float **f[] = { &a->sw[s].m, &a->sw[s].h, &a->sw[s].r, &a->sw[s].z,
				&a->sw[s].nn, &a->sw[s].hn, &a->sw[s].a1, &a->sw[s].a,
				&a->sw[s].b1, &a->sw[s].b };

		for (size_t k = 0; k < sizeof(f) / sizeof(f[0]); k++)
			*f[k] = p, p += nd;
	}
	a->y = p, p += nd;
	a->mu = p, p += n;
	a->rstd = p, p += n;
	a->gvec = p;
	return 0;
}

void tp_acts_free(struct tp_acts *a)
{
	free(a->mem);
	memset(a, 0, sizeof(*a));
}

/* h0 [n][d] from the op and shape embeddings */
static void embed_fwd(const struct tp_model *m, const struct tp_graph *g, float *h0)
{
	int d = m->cfg.hid, q = d / 4;

	for (int v = 0; v < g->n; v++) {
		float *h = h0 + (size_t)v * d;

		memcpy(h, m->p[P_OP_EMB] + (size_t)g->prim[v] * d, d * sizeof(float));
		for (int k = 0; k < 4; k++) {
			const float *e = m->p[P_SHAPE_EMB] +
				((size_t)k * TP_SHAPE_BUCKETS + tp_shape_bucket(k, g->shape[v][k])) * q;

			for (int j = 0; j < q; j++)
				h[k * q + j] += e[j];
		}
	}
}

static void embed_bwd(struct tp_model *m, const struct tp_graph *g, const float *dh0)
{
	int d = m->cfg.hid, q = d / 4;

	for (int v = 0; v < g->n; v++) {
		const float *dh = dh0 + (size_t)v * d;
		float *de = m->g[P_OP_EMB] + (size_t)g->prim[v] * d;

		for (int j = 0; j < d; j++)
			de[j] += dh[j];
		for (int k = 0; k < 4; k++) {
			de = m->g[P_SHAPE_EMB] +
				((size_t)k * TP_SHAPE_BUCKETS + tp_shape_bucket(k, g->shape[v][k])) * q;
			for (int j = 0; j < q; j++)
				de[j] += dh[k * q + j];
		}
	}
}

/* Sweep s (0 forward, 1 backward): node order and neighbour lists. */
static void sweep_lists(const struct tp_graph *g, int s, const struct tp_csr **nb,
			const struct tp_csr **vnb)
{
	*nb = s ? &g->succ : &g->pred;
	*vnb = s ? &g->vsucc : &g->vpred;
}

static void sweep_fwd(const struct tp_model *m, const struct tp_graph *g, int s,
		      const float *hprev, struct tp_sweep_acts *sw)
{
	const struct tp_csr *nb, *vnb;
	int d = m->cfg.hid;

	sweep_lists(g, s, &nb, &vnb);
	for (int k = 0; k < g->n; k++) {
		int v = s ? g->n - 1 - k : k;
		size_t o = (size_t)v * d;
		float *msg = sw->m + o;

		memset(msg, 0, d * sizeof(float));
		for (int e = nb->off[v]; e < nb->off[v + 1]; e++) {
			const float *au = sw->a + (size_t)nb->idx[e] * d;

			for (int j = 0; j < d; j++)
				msg[j] += au[j];
		}
		for (int e = vnb->off[v]; e < vnb->off[v + 1]; e++) {
			const float *bu = sw->b + (size_t)vnb->idx[e] * d;
			float w = 1.0f / (float)vnb->dist[e];

			for (int j = 0; j < d; j++)
				msg[j] += bu[j] * w;
		}
		gru_fwd(m, msg, hprev + o, sw->h + o, sw->r + o, sw->z + o, sw->nn + o,
			sw->hn + o);
		mlp_fwd(m, P_MSG_W1, sw->a1 + o, sw->a + o, sw->h + o);
		mlp_fwd(m, P_SP_W1, sw->b1 + o, sw->b + o, sw->h + o);
	}
}

/* y [d] = LayerNorm(x [d]); eps as torch's default */
static void ln_fwd(const struct tp_model *m, const float *x, float *y, float *mu, float *rstd)
{
	int d = m->cfg.hid;
	float mean = 0.0f, var = 0.0f;

	for (int j = 0; j < d; j++)
		mean += x[j];
	mean /= d;
	for (int j = 0; j < d; j++)
		var += (x[j] - mean) * (x[j] - mean);
	var /= d;
	*mu = mean;
	*rstd = 1.0f / sqrtf(var + 1e-5f);
	for (int j = 0; j < d; j++)
		y[j] = (x[j] - mean) * *rstd * m->p[P_LN_G][j] + m->p[P_LN_B][j];
}

void tp_ghn_forward(const struct tp_model *m, const struct tp_graph *g, struct tp_acts *a)
{
	int d = m->cfg.hid;

	embed_fwd(m, g, a->h0);
	sweep_fwd(m, g, 0, a->h0, &a->sw[0]);
	sweep_fwd(m, g, 1, a->sw[0].h, &a->sw[1]);
	memset(a->gvec, 0, d * sizeof(float));
	for (int v = 0; v < g->n; v++) {
		float *y = a->y + (size_t)v * d;

		ln_fwd(m, a->sw[1].h + (size_t)v * d, y, &a->mu[v], &a->rstd[v]);
		for (int j = 0; j < d; j++)
			a->gvec[j] += y[j];
	}
	for (int j = 0; j < d; j++)
		a->gvec[j] /= (float)g->n;
}

/* dx [d] = LayerNorm backward of dy [d]; grads of gain and bias accumulate */
static void ln_bwd(struct tp_model *m, const float *x, float mu, float rstd, const float *dy,
		   float *dx)
{
	int d = m->cfg.hid;
	float xhat[256], dxhat[256], s1 = 0.0f, s2 = 0.0f;

	for (int j = 0; j < d; j++) {
		xhat[j] = (x[j] - mu) * rstd;
		m->g[P_LN_G][j] += dy[j] * xhat[j];
		m->g[P_LN_B][j] += dy[j];
		dxhat[j] = dy[j] * m->p[P_LN_G][j];
		s1 += dxhat[j];
		s2 += dxhat[j] * xhat[j];
	}
	for (int j = 0; j < d; j++)
		dx[j] = rstd * (dxhat[j] - s1 / d - xhat[j] * s2 / d);
}

/*
 * Backward through sweep s. dh [n][d] holds dL/dh_v of the sweep's outputs
 * from later stages; nodes are visited in reverse sweep order, so every
 * node that consumed MLP(h_v) has already scattered its message gradient
 * into da/db [n][d]. dhprev [n][d] receives dL/d(GRU state input).
 */
static void sweep_bwd(struct tp_model *m, const struct tp_graph *g, int s, const float *hprev,
		      const struct tp_sweep_acts *sw, float *dh, float *dhprev, float *da,
		      float *db)
{
	const struct tp_csr *nb, *vnb, *cons, *vcons;
	int d = m->cfg.hid;
	float dm[256];

	sweep_lists(g, s, &nb, &vnb);
	sweep_lists(g, !s, &cons, &vcons);	/* who reads MLP(h_v) */
	for (int k = g->n - 1; k >= 0; k--) {
		int v = s ? g->n - 1 - k : k;
		size_t o = (size_t)v * d;

		if (cons->off[v] < cons->off[v + 1])
			mlp_bwd(m, P_MSG_W1, dh + o, da + o, sw->h + o, sw->a1 + o);
		if (vcons->off[v] < vcons->off[v + 1])
			mlp_bwd(m, P_SP_W1, dh + o, db + o, sw->h + o, sw->b1 + o);
		gru_bwd(m, dh + o, sw->m + o, hprev + o, sw->r + o, sw->z + o, sw->nn + o,
			sw->hn + o, dm, dhprev + o);
		for (int e = nb->off[v]; e < nb->off[v + 1]; e++) {
			float *du = da + (size_t)nb->idx[e] * d;

			for (int j = 0; j < d; j++)
				du[j] += dm[j];
		}
		for (int e = vnb->off[v]; e < vnb->off[v + 1]; e++) {
			float *du = db + (size_t)vnb->idx[e] * d;
			float w = 1.0f / (float)vnb->dist[e];

			for (int j = 0; j < d; j++)
				du[j] += dm[j] * w;
		}
	}
}

int tp_ghn_backward(struct tp_model *m, const struct tp_graph *g, const struct tp_acts *a,
		    const float *dgvec)
{
	size_t nd = (size_t)g->n * m->cfg.hid;
	int d = m->cfg.hid;
	float *buf = calloc(5 * nd, sizeof(float)), dy[256];
	float *dh2, *dh1, *dh0, *da, *db;

	if (!buf)
		return tp_fail(-ENOMEM, "out of memory for the encoder backward pass");
	dh2 = buf, dh1 = buf + nd, dh0 = buf + 2 * nd, da = buf + 3 * nd, db = buf + 4 * nd;
	for (int j = 0; j < d; j++)
		dy[j] = dgvec[j] / (float)g->n;
	for (int v = 0; v < g->n; v++)
		ln_bwd(m, a->sw[1].h + (size_t)v * d, a->mu[v], a->rstd[v], dy,
		       dh2 + (size_t)v * d);
	sweep_bwd(m, g, 1, a->sw[0].h, &a->sw[1], dh2, dh1, da, db);
	memset(da, 0, 2 * nd * sizeof(float));
	sweep_bwd(m, g, 0, a->h0, &a->sw[0], dh1, dh0, da, db);
	embed_bwd(m, g, dh0);
	free(buf);
	return 0;
}
