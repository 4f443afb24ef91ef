// SPDX-License-Identifier: GPL-2.0
/*
 * CUDA backend: encoder and regressor forward passes (inference).
 * Training stays on the CPU reference.
 *
 * A sweep is sequential along the topological order, but nodes at the same
 * depth never feed each other (every real or virtual edge joins different
 * depths), so each depth level is one launch: a block per node, a thread
 * per hidden unit. This computes exactly the CPU sweep, up to float
 * summation order.
 */
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "../ghn.h"
}

struct tp_cuda_ctx {
	float *params;		/* device copy of the parameter arena */
	size_t nparams;
};

struct dparams {		/* device pointers into the arena */
	const float *p[P_NUM];
};

#define CK(call) do {							\
	cudaError_t e_ = (call);					\
	if (e_ != cudaSuccess) {					\
		err = tp_fail(-EIO, "CUDA: %s: %s", #call, cudaGetErrorString(e_)); \
		goto out;						\
	}								\
} while (0)

extern "C" int tp_cuda_probe(void)
{
	int n = 0;

	if (cudaGetDeviceCount(&n) != cudaSuccess)
		return 0;	/* e.g. error 35 without a driver: CPU fallback */
	return n;
}

extern "C" int tp_cuda_device(struct tp_device *dev)
{
	int sm = 0, clk = 0, memclk = 0, bus = 0, err = 0;
	cudaDeviceProp prop;

	memset(dev, 0, sizeof(*dev));
	CK(cudaGetDeviceProperties(&prop, 0));
	CK(cudaDeviceGetAttribute(&sm, cudaDevAttrMultiProcessorCount, 0));
	CK(cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0));
	CK(cudaDeviceGetAttribute(&memclk, cudaDevAttrMemoryClockRate, 0));
	CK(cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, 0));
	dev->feat[0] = sm;
	dev->feat[1] = clk / 1e6;				/* kHz -> GHz */
	dev->feat[2] = 2.0 * memclk * 1e3 * (bus / 8.0) / 1e9;	/* DDR: GB/s */
	snprintf(dev->name, sizeof(dev->name), "%.95s", prop.name);
out:
	return err;
}

/* h0 [n][d]; block v, thread j */
__global__ void k_embed(struct dparams P, const unsigned char *prim, const int *bucket, int d,
			float *h0)
{
	int v = blockIdx.x, j = threadIdx.x, q = d / 4, k = j / q;

	h0[v * d + j] = P.p[P_OP_EMB][prim[v] * d + j] +
		P.p[P_SHAPE_EMB][(k * TP_SHAPE_BUCKETS + bucket[v * 4 + k]) * q + (j % q)];
}

__device__ float dot(const float *w, const float *x, int n)
{
	float s = 0.0f;

	for (int i = 0; i < n; i++)
		s += w[i] * x[i];
	return s;
}

/* One depth level of a sweep: nodes [lvl[0..count)), block per node. */
__global__ void k_sweep(struct dparams P, const int *lvl, const int *off, const int *idx,
			const int *voff, const int *vidx, const unsigned char *vdist, int d,
			const float *hprev, float *H, float *A, float *B)
{
	extern __shared__ float sh[];
	float *sm = sh, *shp = sh + d, *sn = sh + 2 * d, *sa = sh + 3 * d, *sb = sh + 4 * d;
	int v = lvl[blockIdx.x], j = threadIdx.x;
	float m = 0.0f;

	for (int e = off[v]; e < off[v + 1]; e++)
		m += A[idx[e] * d + j];
	for (int e = voff[v]; e < voff[v + 1]; e++)
		m += B[vidx[e] * d + j] * (1.0f / (float)vdist[e]);
	sm[j] = m;
	shp[j] = hprev[v * d + j];
	__syncthreads();
	{
		const float *wih = P.p[P_GRU_WIH], *whh = P.p[P_GRU_WHH];
		const float *bih = P.p[P_GRU_BIH], *bhh = P.p[P_GRU_BHH];
		float r = 1.0f / (1.0f + expf(-(dot(wih + j * d, sm, d) + bih[j] +
						dot(whh + j * d, shp, d) + bhh[j])));
		float z = 1.0f / (1.0f + expf(-(dot(wih + (d + j) * d, sm, d) + bih[d + j] +
						dot(whh + (d + j) * d, shp, d) + bhh[d + j])));
		float hn = dot(whh + (2 * d + j) * d, shp, d) + bhh[2 * d + j];
		float n = tanhf(dot(wih + (2 * d + j) * d, sm, d) + bih[2 * d + j] + r * hn);
		float h = (1.0f - z) * n + z * shp[j];

		H[v * d + j] = h;
		sn[j] = h;
	}
	__syncthreads();
	sa[j] = fmaxf(dot(P.p[P_MSG_W1] + j * d, sn, d) + P.p[P_MSG_B1][j], 0.0f);
	sb[j] = fmaxf(dot(P.p[P_SP_W1] + j * d, sn, d) + P.p[P_SP_B1][j], 0.0f);
	__syncthreads();
	A[v * d + j] = dot(P.p[P_MSG_W2] + j * d, sa, d) + P.p[P_MSG_B2][j];
	B[v * d + j] = dot(P.p[P_SP_W2] + j * d, sb, d) + P.p[P_SP_B2][j];
}

/* y [n][d] = LayerNorm(H); block per node. Thread 0 reduces (d is small). */
__global__ void k_layernorm(struct dparams P, int d, const float *H, float *Y)
{
	__shared__ float stat[2];
	int v = blockIdx.x, j = threadIdx.x;
	const float *x = H + v * d;

	if (j == 0) {
		float mean = 0.0f, var = 0.0f;

		for (int i = 0; i < d; i++)
			mean += x[i];
		mean /= d;
		for (int i = 0; i < d; i++)
			var += (x[i] - mean) * (x[i] - mean);
		stat[0] = mean;
		stat[1] = rsqrtf(var / d + 1e-5f);
	}
	__syncthreads();
	Y[v * d + j] = (x[j] - stat[0]) * stat[1] * P.p[P_LN_G][j] + P.p[P_LN_B][j];
}

__global__ void k_mean(int n, int d, const float *Y, float *g)
{
	int j = threadIdx.x;
	float s = 0.0f;

	for (int v = 0; v < n; v++)
		s += Y[v * d + j];
	g[j] = s / (float)n;
}

/* Regressor, one block of h threads; out[0] = log seconds. */
__global__ void k_regress(struct dparams P, int in, int h, const float *x, float *out)
{
	extern __shared__ float sh[];
	float *sx = sh, *s1 = sh + in, *s2 = sh + in + h;
	int j = threadIdx.x;

	for (int i = j; i < in; i += h)
		sx[i] = x[i];
	__syncthreads();
	s1[j] = fmaxf(dot(P.p[P_R_W1] + j * in, sx, in) + P.p[P_R_B1][j], 0.0f);
	__syncthreads();
	s2[j] = fmaxf(dot(P.p[P_R_W2] + j * h, s1, h) + P.p[P_R_B2][j], 0.0f);
	__syncthreads();
	if (j == 0)
		out[0] = dot(P.p[P_R_W3], s2, h) + P.p[P_R_B3][0];
}

/* ---- host side ---- */

struct devbufs {
	void *ptr[32];
	int n;
};

static int to_dev(struct devbufs *b, void **dst, const void *src, size_t bytes)
{
	cudaError_t e;

	if (b->n == 32)
		return tp_fail(-ENOMEM, "CUDA: too many buffers");
	e = cudaMalloc(dst, bytes ? bytes : 4);
	if (e == cudaSuccess && bytes)
		e = cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice);
	if (e != cudaSuccess)
		return tp_fail(-EIO, "CUDA: copy of %zu bytes: %s", bytes, cudaGetErrorString(e));
	b->ptr[b->n++] = *dst;
	return 0;
}

static void free_bufs(struct devbufs *b)
{
	for (int i = 0; i < b->n; i++)
		cudaFree(b->ptr[i]);
	b->n = 0;
}

static int upload_params(struct tp_model *m, struct dparams *P)
{
	struct tp_cuda_ctx *c = m->cuda;
	size_t off = 0;
	int err = 0;

	if (!c) {
		c = (struct tp_cuda_ctx *)calloc(1, sizeof(*c));
		if (!c)
			return tp_fail(-ENOMEM, "out of memory");
		m->cuda = c;
	}
	if (!c->params) {
		CK(cudaMalloc((void **)&c->params, m->nparams * sizeof(float)));
		c->nparams = m->nparams;
	}
	/* every call: the CPU may have trained the parameters since */
	CK(cudaMemcpy(c->params, m->params, m->nparams * sizeof(float), cudaMemcpyHostToDevice));
	for (int p = 0; p < P_NUM; p++) {
		P->p[p] = c->params + off;
		off += m->size[p];
	}
out:
	return err;
}

/* Nodes grouped by depth for sweep s: lvl [n] and level starts lstart [n+1]. */
static int levels(const struct tp_graph *g, int s, int *lvl, int *lstart, int *nlev)
{
	const struct tp_csr *nb = s ? &g->succ : &g->pred;
	int *depth = (int *)calloc(g->n, sizeof(int));

	if (!depth)
		return tp_fail(-ENOMEM, "out of memory");
	*nlev = 0;
	for (int k = 0; k < g->n; k++) {
		int v = s ? g->n - 1 - k : k;

		for (int e = nb->off[v]; e < nb->off[v + 1]; e++)
			if (depth[nb->idx[e]] + 1 > depth[v])
				depth[v] = depth[nb->idx[e]] + 1;
		if (depth[v] + 1 > *nlev)
			*nlev = depth[v] + 1;
	}
	memset(lstart, 0, (g->n + 1) * sizeof(int));
	for (int v = 0; v < g->n; v++)
		lstart[depth[v] + 1]++;
	for (int l = 0; l < *nlev; l++)
		lstart[l + 1] += lstart[l];
	for (int v = 0; v < g->n; v++)
		lvl[lstart[depth[v]]++] = v;
	for (int l = *nlev; l > 0; l--)
		lstart[l] = lstart[l - 1];
	lstart[0] = 0;
	free(depth);
	return 0;
}

struct dcsr {
	int *off, *idx;
	unsigned char *dist;
};

static int csr_to_dev(struct devbufs *b, int n, const struct tp_csr *c, struct dcsr *dc)
{
	int ne = c->off[n], err;

	err = to_dev(b, (void **)&dc->off, c->off, (n + 1) * sizeof(int));
	if (!err)
		err = to_dev(b, (void **)&dc->idx, c->idx, ne * sizeof(int));
	if (!err)
		err = to_dev(b, (void **)&dc->dist, c->dist, ne);
	return err;
}

static int run_sweep(const struct tp_graph *g, int s, struct dparams P, struct devbufs *b,
		     const struct dcsr *nb, const struct dcsr *vnb, int d, const float *hprev,
		     float *H, float *A, float *B)
{
	int *lvl = (int *)calloc(g->n, sizeof(int)), *lstart = (int *)calloc(g->n + 1, sizeof(int));
	int nlev = 0, *dlvl = NULL, err;

	err = lvl && lstart ? levels(g, s, lvl, lstart, &nlev) : tp_fail(-ENOMEM, "out of memory");
	if (!err)
		err = to_dev(b, (void **)&dlvl, lvl, g->n * sizeof(int));
	for (int l = 0; l < nlev && !err; l++) {
		int count = lstart[l + 1] - lstart[l];

		k_sweep<<<count, d, 5 * d * sizeof(float)>>>(P, dlvl + lstart[l], nb->off, nb->idx,
							     vnb->off, vnb->idx, vnb->dist, d,
							     hprev, H, A, B);
		CK(cudaGetLastError());
	}
out:
	free(lvl);
	free(lstart);
	return err;
}

static int graph_buckets(const struct tp_graph *g, int **out)
{
	int *bk = (int *)malloc(g->n * 4 * sizeof(int));

	if (!bk)
		return tp_fail(-ENOMEM, "out of memory");
	for (int v = 0; v < g->n; v++)
		for (int k = 0; k < 4; k++)
			bk[v * 4 + k] = tp_shape_bucket(k, g->shape[v][k]);
	*out = bk;
	return 0;
}

extern "C" int tp_cuda_embed(struct tp_model *m, const struct tp_graph *g, float *gvec)
{
	int d = m->cfg.hid, *bk = NULL, *dbk = NULL, err;
	size_t nd = (size_t)g->n * d;
	struct devbufs b = { { 0 }, 0 };
	struct dcsr pred, vpred, succ, vsucc;
	unsigned char *dprim = NULL;
	float *act = NULL, *dg = NULL;
	struct dparams P;

	err = upload_params(m, &P);
	if (!err)
		err = graph_buckets(g, &bk);
	if (!err)
		err = to_dev(&b, (void **)&dbk, bk, nd / d * 4 * sizeof(int));
	if (!err)
		err = to_dev(&b, (void **)&dprim, g->prim, g->n);
	if (!err)
		err = csr_to_dev(&b, g->n, &g->pred, &pred);
	if (!err)
		err = csr_to_dev(&b, g->n, &g->vpred, &vpred);
	if (!err)
		err = csr_to_dev(&b, g->n, &g->succ, &succ);
	if (!err)
		err = csr_to_dev(&b, g->n, &g->vsucc, &vsucc);
	if (err)
		goto out;
	/* h0, h1, h2, A, B, Y [n][d] each, then the graph vector [d] */
	CK(cudaMalloc((void **)&act, (6 * nd + d) * sizeof(float)));
	b.ptr[b.n++] = act;
	dg = act + 6 * nd;
	k_embed<<<g->n, d>>>(P, dprim, dbk, d, act);
	CK(cudaGetLastError());
	err = run_sweep(g, 0, P, &b, &pred, &vpred, d, act, act + nd, act + 3 * nd, act + 4 * nd);
	if (!err)
		err = run_sweep(g, 1, P, &b, &succ, &vsucc, d, act + nd, act + 2 * nd,
				act + 3 * nd, act + 4 * nd);
	if (err)
		goto out;
	k_layernorm<<<g->n, d>>>(P, d, act + 2 * nd, act + 5 * nd);
	k_mean<<<1, d>>>(g->n, d, act + 5 * nd, dg);
	CK(cudaGetLastError());
	CK(cudaMemcpy(gvec, dg, d * sizeof(float), cudaMemcpyDeviceToHost));
out:
	free_bufs(&b);
	free(bk);
	return err;
}

extern "C" float tp_cuda_regress(struct tp_model *m, const float *x, int *errp)
{
	struct devbufs b = { { 0 }, 0 };
	int h = m->cfg.reg_hidden, err;
	float *dx = NULL, *dout = NULL, out = 0.0f;
	struct dparams P;

	err = upload_params(m, &P);
	if (!err)
		err = to_dev(&b, (void **)&dx, x, m->in * sizeof(float));
	if (!err)
		err = to_dev(&b, (void **)&dout, &out, sizeof(float));
	if (err)
		goto out;
	k_regress<<<1, h, (m->in + 2 * h) * sizeof(float)>>>(P, m->in, h, dx, dout);
	CK(cudaGetLastError());
	CK(cudaMemcpy(&out, dout, sizeof(float), cudaMemcpyDeviceToHost));
out:
	free_bufs(&b);
	*errp = err;
	return out;
}

extern "C" void tp_cuda_release(struct tp_model *m)
{
	if (!m->cuda)
		return;
	cudaFree(m->cuda->params);
	free(m->cuda);
	m->cuda = NULL;
}
