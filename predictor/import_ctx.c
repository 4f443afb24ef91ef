// SPDX-License-Identifier: GPL-2.0
/*
 * The ONNX importer's state and one node's view of it (import_ctx.h): the
 * growth of the builder's arrays, a tensor's element count, and a node's
 * inputs, outputs, attributes and known input values as import.c, shape.c
 * and fold.c read them.
 */
#include <stdlib.h>
#include <string.h>

#include "import_ctx.h"

int tp_grow(void **p, int *cap, int n, size_t size)
{
	void *q;
	int ncap;

	if (n < *cap)
		return 0;
	if (*cap >= (1 << 26))
		return tp_fail(-E2BIG, "ONNX graph too large");
	ncap = *cap ? *cap * 2 : 256;
	q = realloc(*p, (size_t)ncap * size);
	if (!q)
		return tp_fail(-ENOMEM, "out of memory importing ONNX");
	*p = q;
	*cap = ncap;
	return 0;
}

double tp_tensor_elems(const struct tinfo *t)
{
	double e = 1;

	if (t->rank < 0)
		return -1;
	for (int i = 0; i < t->rank; i++) {
		if (t->dims[i] < 0)
			return -1;
		e *= (double)t->dims[i];
	}
	return e;
}

const struct tinfo *sc_in(const struct sctx *c, int i)
{
	return i >= 0 && i < c->nin && c->in[i] >= 0 ? &c->b->t[c->in[i]] : NULL;
}

struct tinfo *sc_out(const struct sctx *c, int k)
{
	return k >= 0 && k < c->nout && c->out[k] >= 0 ? &c->b->t[c->out[k]] : NULL;
}

int64_t sc_attr_i(const struct sctx *c, const char *name, int64_t def)
{
	const struct onnx_attr *a = onnx_attr_find(c->b->m, c->nd, name);

	return a ? a->i : def;
}

int sc_attr_ints(const struct sctx *c, const char *name, int64_t *v, int max)
{
	const struct onnx_attr *a = onnx_attr_find(c->b->m, c->nd, name);
	int n;

	if (!a || a->nints_all > a->nints || a->nints > max)
		return -1;	/* absent, or longer than kept */
	n = a->nints;
	memcpy(v, a->ints, n * sizeof(*v));
	return n;
}

int sc_opset(const struct sctx *c)
{
	return c->b->m->opset ? (int)c->b->m->opset : 17;
}

bool sc_known(const struct tinfo *t)
{
	if (!t || t->rank < 0)
		return false;
	for (int i = 0; i < t->rank; i++)
		if (t->dims[i] < 0)
			return false;
	return true;
}

const double *sc_vals(const struct builder *b, const struct tinfo *t)
{
	return t && t->nval >= 0 ? b->cv + t->val0 : NULL;
}

int sc_set_vals(struct builder *b, struct tinfo *t, const double *v, int n)
{
	int cap = (int)b->cap_cv, err;

	while (b->ncv + n > (uint32_t)cap) {
		err = tp_grow((void **)&b->cv, &cap, cap, sizeof(*b->cv));
		if (err)
			return err;
	}
	b->cap_cv = (uint32_t)cap;
	memcpy(b->cv + b->ncv, v, n * sizeof(*v));
	t->val0 = b->ncv;
	t->nval = n;
	b->ncv += n;
	return 0;
}

int64_t sc_to_i64(double x)
{
	if (!(x > -4e18))
		return x != x ? 0 : -(int64_t)4e18;
	return x < 4e18 ? (int64_t)x : (int64_t)4e18;
}

int sc_in_ints(const struct sctx *c, int i, int64_t *v, int max)
{
	const struct tinfo *t = sc_in(c, i);
	const double *x = sc_vals(c->b, t);

	if (!x || t->nval > max)
		return -1;
	for (int k = 0; k < t->nval; k++)
		v[k] = sc_to_i64(x[k]);
	return t->nval;
}

int sc_norm_axis(int64_t a, int rank)
{
	if (a < 0)
		a += rank;
	return a >= 0 && a < rank ? (int)a : -1;
}

/* starts, ends, axes, steps of a Slice (inputs from opset 10, else attributes) */
int tp_slice_args(const struct sctx *c, int rank, int64_t *st, int64_t *en, int64_t *ax,
		  int64_t *sp)
{
	int n, m;

	if (sc_opset(c) >= 10) {
		n = sc_in_ints(c, 1, st, ONNX_MAX_RANK);
		m = sc_in_ints(c, 2, en, ONNX_MAX_RANK);
		if (n < 0 || m != n)
			return -1;
		if (c->nin > 3 && c->in[3] >= 0 && sc_in_ints(c, 3, ax, ONNX_MAX_RANK) != n)
			return -1;
		if (!(c->nin > 3 && c->in[3] >= 0))
			for (int i = 0; i < n; i++)
				ax[i] = i;
		if (c->nin > 4 && c->in[4] >= 0 && sc_in_ints(c, 4, sp, ONNX_MAX_RANK) != n)
			return -1;
		if (!(c->nin > 4 && c->in[4] >= 0))
			for (int i = 0; i < n; i++)
				sp[i] = 1;
	} else {
		n = sc_attr_ints(c, "starts", st, ONNX_MAX_RANK);
		if (n < 0 || sc_attr_ints(c, "ends", en, ONNX_MAX_RANK) != n)
			return -1;
		if (sc_attr_ints(c, "axes", ax, ONNX_MAX_RANK) != n)
			for (int i = 0; i < n; i++)
				ax[i] = i;
		for (int i = 0; i < n; i++)
			sp[i] = 1;
	}
	for (int i = 0; i < n; i++)
		if ((ax[i] = sc_norm_axis(ax[i], rank)) < 0)
			return -1;
	return n;
}

/* [start, end) of Shape (opset 15 attributes) */
void tp_shape_range(const struct sctx *c, int rank, int *lo, int *hi)
{
	int64_t s = sc_attr_i(c, "start", 0), e = sc_attr_i(c, "end", rank);

	s = s < 0 ? s + rank : s;
	e = e < 0 ? e + rank : e;
	*lo = (int)(s < 0 ? 0 : s > rank ? rank : s);
	*hi = (int)(e < 0 ? 0 : e > rank ? rank : e);
	if (*hi < *lo)
		*hi = *lo;
}
