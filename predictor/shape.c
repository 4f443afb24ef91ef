// SPDX-License-Identifier: GPL-2.0
/*
 * Static shape inference of the ONNX importer: the shapes of every node's
 * outputs from its inputs' shapes, attributes and - for shape arguments
 * (Reshape's shape, Slice's starts, Resize's sizes, ...) - the values of
 * constant inputs, which fold.c computes as it goes (Shape -> Gather ->
 * Concat chains of torch.onnx.export, like onnx's data propagation).
 *
 * The rules are ONNX's (the onnx/defs schemas), checked against onnx's own
 * infer_shapes(data_prop=True) on every committed graph
 * (selftests/host/test_predict_onnx.c). A dimension that cannot be known
 * is -1; an output whose rank cannot be known has rank -1, which the
 * importer reports. Nothing here fails on a malformed graph: an impossible
 * shape is an unknown one.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "import_ctx.h"

static bool is_op(const struct sctx *c, const char *op)
{
	return pb_str_eq(c->nd->op_type, op);
}

static void set_out(const struct sctx *c, int k, int rank, const int64_t *dims, int32_t dtype)
{
	struct tinfo *t = sc_out(c, k);

	if (!t || rank < 0 || rank > ONNX_MAX_RANK)
		return;
	t->rank = rank;
	for (int i = 0; i < rank; i++)
		t->dims[i] = dims[i] >= 0 ? dims[i] : -1;
	if (dtype)
		t->dtype = dtype;
}

static int64_t dim_mul(int64_t a, int64_t b)
{
	return a < 0 || b < 0 ? -1 : a * b;
}

static int64_t dims_prod(const int64_t *d, int lo, int hi)
{
	int64_t p = 1;

	for (int i = lo; i < hi; i++)
		p = dim_mul(p, d[i]);
	return p;
}

static int32_t in_dtype(const struct sctx *c, int i)
{
	const struct tinfo *t = sc_in(c, i);

	return t ? t->dtype : 0;
}

/* ---- elementwise ---- */

/* Every output gets the first input's shape (unary ops, normalisation, Dropout). */
static void same_shape(struct sctx *c)
{
	const struct tinfo *x = sc_in(c, 0);

	if (!x || x->rank < 0)
		return;
	for (int k = 0; k < c->nout; k++)
		set_out(c, k, x->rank, x->dims, k && is_op(c, "Dropout") ? ONNX_BOOL : x->dtype);
}

/* numpy broadcasting of inputs lo..nin-1 */
static bool broadcast(const struct sctx *c, int lo, int *rank, int64_t *d)
{
	*rank = 0;
	for (int i = lo; i < c->nin; i++) {
		const struct tinfo *t = sc_in(c, i);

		if (!t || t->rank < 0)
			return false;
		if (t->rank > *rank)
			*rank = t->rank;
	}
	for (int j = 0; j < *rank; j++) {
		bool unknown = false;

		d[j] = 1;
		for (int i = lo; i < c->nin; i++) {
			const struct tinfo *t = sc_in(c, i);
			int k = j - (*rank - t->rank);
			int64_t v = k >= 0 ? t->dims[k] : 1;

			if (v < 0)
				unknown = true;
			else if (v != 1)
				d[j] = v;
		}
		if (unknown && d[j] == 1)
			d[j] = -1;
	}
	return true;
}

static void infer_broadcast(struct sctx *c)
{
	static const char *const cmp[] = {
		"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor",
	};
	int64_t d[ONNX_MAX_RANK];
	int32_t dt = in_dtype(c, is_op(c, "Where") ? 1 : 0);
	int rank;

	if (!broadcast(c, 0, &rank, d))
		return;
	for (size_t i = 0; i < sizeof(cmp) / sizeof(cmp[0]); i++)
		if (is_op(c, cmp[i]))
			dt = ONNX_BOOL;
	set_out(c, 0, rank, d, dt);
}

static void infer_cast(struct sctx *c)
{
	const struct tinfo *x = sc_in(c, 0);

	if (x && x->rank >= 0)
		set_out(c, 0, x->rank, x->dims, is_op(c, "CastLike") ? in_dtype(c, 1) :
			(int32_t)sc_attr_i(c, "to", 0));
}

/* BatchNorm's running mean and variance are [C]; LayerNorm's Mean and
 * InvStdDev keep the leading dims and 1 for the normalised ones. */
static void infer_norm(struct sctx *c)
{
	const struct tinfo *x = sc_in(c, 0);
	int64_t d[ONNX_MAX_RANK];

	if (!x || x->rank < 0)
		return;
	set_out(c, 0, x->rank, x->dims, x->dtype);
	memcpy(d, x->dims, sizeof(d));
	if (is_op(c, "LayerNormalization")) {
		int axis = sc_norm_axis(sc_attr_i(c, "axis", -1), x->rank);

		for (int i = axis < 0 ? x->rank : axis; i < x->rank; i++)
			d[i] = 1;
		for (int k = 1; k < c->nout && axis >= 0; k++)
			set_out(c, k, x->rank, d, ONNX_FLOAT);
	} else if (x->rank >= 2) {
		for (int k = 1; k < c->nout; k++)
			set_out(c, k, 1, &x->dims[1], x->dtype);
	}
}

/* ---- convolution and pooling ---- */

struct window {
	int n;				/* spatial dims */
	int64_t k[ONNX_MAX_RANK], s[ONNX_MAX_RANK], d[ONNX_MAX_RANK];
	int64_t pads[2 * ONNX_MAX_RANK], outpad[ONNX_MAX_RANK];
	int autopad;			/* 0 NOTSET, 1 SAME_*, 2 VALID */
	bool ceil;
};

static void window_attrs(const struct sctx *c, const struct tinfo *w, int n, struct window *win)
{
	const struct onnx_attr *ap = onnx_attr_find(c->b->m, c->nd, "auto_pad");
	int64_t v[2 * ONNX_MAX_RANK];

	memset(win, 0, sizeof(*win));
	win->n = n;
	for (int i = 0; i < n; i++) {
		win->k[i] = w && w->rank == n + 2 ? w->dims[i + 2] : -1;
		win->s[i] = win->d[i] = 1;
	}
	if (sc_attr_ints(c, "kernel_shape", v, ONNX_MAX_RANK) == n)
		memcpy(win->k, v, n * sizeof(*v));
	if (sc_attr_ints(c, "strides", v, ONNX_MAX_RANK) == n)
		memcpy(win->s, v, n * sizeof(*v));
	if (sc_attr_ints(c, "dilations", v, ONNX_MAX_RANK) == n)
		memcpy(win->d, v, n * sizeof(*v));
	if (2 * n <= ONNX_MAX_INTS && sc_attr_ints(c, "pads", v, 2 * ONNX_MAX_RANK) == 2 * n)
		memcpy(win->pads, v, 2 * n * sizeof(*v));
	if (sc_attr_ints(c, "output_padding", v, ONNX_MAX_RANK) == n)
		memcpy(win->outpad, v, n * sizeof(*v));
	if (ap && (pb_str_eq(ap->s, "SAME_UPPER") || pb_str_eq(ap->s, "SAME_LOWER")))
		win->autopad = 1;
	else if (ap && pb_str_eq(ap->s, "VALID"))
		win->autopad = 2;
	win->ceil = sc_attr_i(c, "ceil_mode", 0) != 0;
}

/* Output size of one spatial dim, as onnx's convPoolShapeInference. */
static int64_t window_out(const struct window *w, int i, int64_t in, bool transposed)
{
	int64_t ek = (w->k[i] - 1) * w->d[i] + 1, pad = w->pads[i] + w->pads[i + w->n], span;

	if (in < 0 || w->k[i] < 1 || w->s[i] < 1 || w->d[i] < 1)
		return -1;
	if (transposed)
		return w->autopad == 1 ? in * w->s[i] :
			w->s[i] * (in - 1) + w->outpad[i] + ek - (w->autopad == 2 ? 0 : pad);
	if (w->autopad == 1)
		return (in + w->s[i] - 1) / w->s[i];
	span = in + (w->autopad == 2 ? 0 : pad) - ek;
	if (span < 0)
		return -1;
	return 1 + (w->ceil ? (span + w->s[i] - 1) / w->s[i] : span / w->s[i]);
}

static void infer_window(struct sctx *c)
{
	const struct tinfo *x = sc_in(c, 0), *w = sc_in(c, 1);
	bool conv = is_op(c, "Conv"), tr = is_op(c, "ConvTranspose");
	int64_t d[ONNX_MAX_RANK], os[ONNX_MAX_RANK];
	struct window win;
	int n;

	if (!x || x->rank < 3)
		return;
	n = x->rank - 2;
	window_attrs(c, conv || tr ? w : NULL, n, &win);
	d[0] = x->dims[0];
	d[1] = x->dims[1];
	if (conv || tr) {
		if (!w || w->rank != x->rank)
			return;
		d[1] = tr ? dim_mul(w->dims[1], sc_attr_i(c, "group", 1)) : w->dims[0];
	}
	for (int i = 0; i < n; i++)
		d[i + 2] = window_out(&win, i, x->dims[i + 2], tr);
	if (tr && sc_attr_ints(c, "output_shape", os, ONNX_MAX_RANK) == n)
		memcpy(d + 2, os, n * sizeof(*os));
	set_out(c, 0, x->rank, d, x->dtype);
	if (c->nout > 1)	/* MaxPool's Indices */
		set_out(c, 1, x->rank, d, ONNX_INT64);
}

static void infer_global_pool(struct sctx *c)
{
	const struct tinfo *x = sc_in(c, 0);
	int64_t d[ONNX_MAX_RANK];

	if (!x || x->rank < 2)
		return;
	for (int i = 0; i < x->rank; i++)
		d[i] = i < 2 ? x->dims[i] : 1;
	set_out(c, 0, x->rank, d, x->dtype);
}

/* ---- matrix products ---- */

static void infer_gemm(struct sctx *c)
{
	const struct tinfo *a = sc_in(c, 0), *b = sc_in(c, 1);
	int64_t d[2];

	if (!a || !b || a->rank != 2 || b->rank != 2)
		return;
	d[0] = a->dims[sc_attr_i(c, "transA", 0) ? 1 : 0];
	d[1] = b->dims[sc_attr_i(c, "transB", 0) ? 0 : 1];
	set_out(c, 0, 2, d, a->dtype);
}

static void infer_matmul(struct sctx *c)
{
	const struct tinfo *a = sc_in(c, 0), *b = sc_in(c, 1);
	int64_t d[ONNX_MAX_RANK];
	int ra, rb, rank = 0;

	if (!a || !b || a->rank < 1 || b->rank < 1)
		return;
	ra = a->rank > 2 ? a->rank - 2 : 0;	/* batch dims */
	rb = b->rank > 2 ? b->rank - 2 : 0;
	rank = ra > rb ? ra : rb;
	for (int j = 0; j < rank; j++) {
		int ka = j - (rank - ra), kb = j - (rank - rb);
		int64_t x = ka >= 0 ? a->dims[ka] : 1, y = kb >= 0 ? b->dims[kb] : 1;

		d[j] = x == 1 ? y : y == 1 ? x : x < 0 || y < 0 ? -1 : x;
	}
	if (a->rank >= 2)
		d[rank++] = a->dims[a->rank - 2];
	if (b->rank >= 2 && rank < ONNX_MAX_RANK)
		d[rank++] = b->dims[b->rank - 1];
	set_out(c, 0, rank, d, a->dtype);
}

/* ---- layout ---- */

static void infer_reshape(struct sctx *c)
{
	const struct tinfo *x = sc_in(c, 0);
	int64_t s[ONNX_MAX_RANK], known = 1;
	int n = sc_in_ints(c, 1, s, ONNX_MAX_RANK), infer = -1;
	bool allowzero = sc_attr_i(c, "allowzero", 0) != 0;

	if (!x || n < 0)
		return;
	for (int i = 0; i < n; i++) {
		if (s[i] == -1 && infer < 0) {
			infer = i;
			continue;
		}
		if (s[i] == 0 && !allowzero)
			s[i] = i < x->rank ? x->dims[i] : -1;
		known = dim_mul(known, s[i] < 0 ? -1 : s[i]);
	}
	if (infer >= 0) {
		int64_t total = sc_known(x) ? dims_prod(x->dims, 0, x->rank) : -1;

		s[infer] = total >= 0 && known > 0 && total % known == 0 ? total / known : -1;
	}
	set_out(c, 0, n, s, x->dtype);
}

static void infer_flatten(struct sctx *c)
{
	const struct tinfo *x = sc_in(c, 0);
	int64_t d[2], axis;

	if (!x || x->rank < 0)
		return;
	axis = sc_attr_i(c, "axis", 1);
	if (axis < 0)
		axis += x->rank;
	if (axis < 0 || axis > x->rank)
		return;
	d[0] = dims_prod(x->dims, 0, (int)axis);
	d[1] = dims_prod(x->dims, (int)axis, x->rank);
	set_out(c, 0, 2, d, x->dtype);
}

static void infer_transpose(struct sctx *c)
{
	const struct tinfo *x = sc_in(c, 0);
	int64_t perm[ONNX_MAX_RANK], d[ONNX_MAX_RANK];
	int n;

	if (!x || x->rank < 0)
		return;
	n = sc_attr_ints(c, "perm", perm, ONNX_MAX_RANK);
	if (n < 0)
		for (n = 0; n < x->rank; n++)
			perm[n] = x->rank - 1 - n;
	if (n != x->rank)
		return;
	for (int i = 0; i < n; i++) {
		int p = sc_norm_axis(perm[i], n);

		if (p < 0)
			return;
		d[i] = x->dims[p];
	}
	set_out(c, 0, n, d, x->dtype);
}

/* axes of Squeeze/Unsqueeze/Reduce*: an input from opset `from`, else the attribute */
static int axes_of(const struct sctx *c, int from, int input, int64_t *axes)
{
	if (sc_opset(c) >= from && c->nin > input && c->in[input] >= 0)
		return sc_in_ints(c, input, axes, ONNX_MAX_RANK);
	if (sc_opset(c) >= from)
		return -2;	/* no axes given */
	return sc_attr_ints(c, "axes", axes, ONNX_MAX_RANK) < 0 ? -2 :
		sc_attr_ints(c, "axes", axes, ONNX_MAX_RANK);
}

static void infer_squeeze(struct sctx *c)
{
	const struct tinfo *x = sc_in(c, 0);
	int64_t axes[ONNX_MAX_RANK], d[ONNX_MAX_RANK];
	bool drop[ONNX_MAX_RANK] = { false };
	int n = axes_of(c, 13, 1, axes), r = 0;

	if (!x || x->rank < 0 || n == -1)
		return;
	for (int i = 0; i < x->rank; i++) {
		if (n == -2 && x->dims[i] < 0)
			return;	/* which dims are 1 is unknown */
		drop[i] = n == -2 && x->dims[i] == 1;
	}
	for (int k = 0; k < n; k++) {
		int a = sc_norm_axis(axes[k], x->rank);

		if (a < 0)
			return;
		drop[a] = true;
	}
	for (int i = 0; i < x->rank; i++)
		if (!drop[i])
			d[r++] = x->dims[i];
	set_out(c, 0, r, d, x->dtype);
}

static void infer_unsqueeze(struct sctx *c)
{
	const struct tinfo *x = sc_in(c, 0);
	int64_t axes[ONNX_MAX_RANK], d[ONNX_MAX_RANK];
	bool one[ONNX_MAX_RANK] = { false };
	int n = axes_of(c, 13, 1, axes), r, j = 0;

	if (!x || x->rank < 0 || n < 0 || x->rank + n > ONNX_MAX_RANK)
		return;
	r = x->rank + n;
	for (int k = 0; k < n; k++) {
		int a = sc_norm_axis(axes[k], r);

		if (a < 0 || one[a])
			return;
		one[a] = true;
	}
	for (int i = 0; i < r; i++)
		d[i] = one[i] ? 1 : x->dims[j++];
	set_out(c, 0, r, d, x->dtype);
}

static void infer_concat(struct sctx *c)
{
	const struct tinfo *x = sc_in(c, 0);
	int64_t d[ONNX_MAX_RANK];
	int axis;

	if (!x || x->rank < 0 || (axis = sc_norm_axis(sc_attr_i(c, "axis", 0), x->rank)) < 0)
		return;
	memcpy(d, x->dims, sizeof(d));
	d[axis] = 0;
	for (int i = 0; i < c->nin; i++) {
		const struct tinfo *t = sc_in(c, i);

		if (!t || t->rank != x->rank)
			return;
		d[axis] = d[axis] < 0 || t->dims[axis] < 0 ? -1 : d[axis] + t->dims[axis];
		for (int j = 0; j < x->rank; j++)
			if (j != axis && d[j] < 0)
				d[j] = t->dims[j];
	}
	set_out(c, 0, x->rank, d, x->dtype);
}

static void infer_split(struct sctx *c)
{
	const struct tinfo *x = sc_in(c, 0);
	int64_t d[ONNX_MAX_RANK], split[ONNX_MAX_VALS];
	int axis, n;

	if (!x || x->rank < 0 || (axis = sc_norm_axis(sc_attr_i(c, "axis", 0), x->rank)) < 0)
		return;
	n = sc_opset(c) >= 13 ? (c->nin > 1 && c->in[1] >= 0 ?
			      sc_in_ints(c, 1, split, ONNX_MAX_VALS) : -2) :
		sc_attr_ints(c, "split", split, ONNX_MAX_INTS);
	if (n == -1 && sc_opset(c) >= 13)
		return;
	memcpy(d, x->dims, sizeof(d));
	for (int k = 0; k < c->nout; k++) {
		int64_t len = x->dims[axis], parts = c->nout, chunk = (len + parts - 1) / parts;

		if (n >= 0 && n == c->nout)
			d[axis] = split[k];
		else if (n >= 0 || len < 0)
			d[axis] = -1;
		else	/* equal parts; from opset 18 the last may be smaller */
			d[axis] = k < parts - 1 ? chunk : len - chunk * (parts - 1);
		set_out(c, k, x->rank, d, x->dtype);
	}
}

/* Slice length of one axis after ONNX's clamping. */
static int64_t slice_len(int64_t dim, int64_t start, int64_t end, int64_t step)
{
	if (dim < 0 || step == 0)
		return -1;
	if (start < 0)
		start += dim;
	if (end < 0)
		end += dim;
	if (step > 0) {
		start = start < 0 ? 0 : start > dim ? dim : start;
		end = end < 0 ? 0 : end > dim ? dim : end;
		return end > start ? (end - start + step - 1) / step : 0;
	}
	start = start < 0 ? 0 : start > dim - 1 ? dim - 1 : start;
	end = end < -1 ? -1 : end > dim - 1 ? dim - 1 : end;
	return start > end ? (start - end - step - 1) / -step : 0;
}

static void infer_slice(struct sctx *c)
{
	const struct tinfo *x = sc_in(c, 0);
	int64_t st[ONNX_MAX_RANK], en[ONNX_MAX_RANK], ax[ONNX_MAX_RANK], sp[ONNX_MAX_RANK];
	int64_t d[ONNX_MAX_RANK];
	int n;

	if (!x || x->rank < 0)
		return;
	n = tp_slice_args(c, x->rank, st, en, ax, sp);
	if (n < 0)
		return;
	memcpy(d, x->dims, sizeof(d));
	for (int i = 0; i < n; i++)
		d[ax[i]] = slice_len(x->dims[ax[i]], st[i], en[i], sp[i]);
	set_out(c, 0, x->rank, d, x->dtype);
}

static void infer_gather(struct sctx *c)
{
	const struct tinfo *x = sc_in(c, 0), *idx = sc_in(c, 1);
	int64_t d[ONNX_MAX_RANK];
	int axis, r = 0;

	if (!x || !idx || x->rank < 1 || idx->rank < 0 || x->rank + idx->rank - 1 > ONNX_MAX_RANK)
		return;
	if (is_op(c, "GatherElements")) {
		set_out(c, 0, idx->rank, idx->dims, x->dtype);
		return;
	}
	if ((axis = sc_norm_axis(sc_attr_i(c, "axis", 0), x->rank)) < 0)
		return;
	for (int i = 0; i < axis; i++)
		d[r++] = x->dims[i];
	for (int i = 0; i < idx->rank; i++)
		d[r++] = idx->dims[i];
	for (int i = axis + 1; i < x->rank; i++)
		d[r++] = x->dims[i];
	set_out(c, 0, r, d, x->dtype);
}

static void infer_expand(struct sctx *c)
{
	const struct tinfo *x = sc_in(c, 0);
	int64_t s[ONNX_MAX_RANK], d[ONNX_MAX_RANK];
	int n = sc_in_ints(c, 1, s, ONNX_MAX_RANK), rank;

	if (!x || x->rank < 0 || n < 0)
		return;
	rank = n > x->rank ? n : x->rank;
	for (int j = 0; j < rank; j++) {
		int kx = j - (rank - x->rank), ks = j - (rank - n);
		int64_t a = kx >= 0 ? x->dims[kx] : 1, b = ks >= 0 ? s[ks] : 1;

		d[j] = a == 1 ? b : b == 1 ? a : a < 0 ? b : a;
	}
	set_out(c, 0, rank, d, x->dtype);
}

static void infer_tile(struct sctx *c)
{
	const struct tinfo *x = sc_in(c, 0);
	int64_t rep[ONNX_MAX_RANK], d[ONNX_MAX_RANK];

	if (!x || x->rank < 0 || sc_in_ints(c, 1, rep, ONNX_MAX_RANK) != x->rank)
		return;
	for (int i = 0; i < x->rank; i++)
		d[i] = rep[i] < 0 ? -1 : dim_mul(x->dims[i], rep[i]);
	set_out(c, 0, x->rank, d, x->dtype);
}

static void infer_pad(struct sctx *c)
{
	const struct tinfo *x = sc_in(c, 0);
	int64_t p[2 * ONNX_MAX_RANK], d[ONNX_MAX_RANK];
	int n;

	if (!x || x->rank < 0)
		return;
	n = sc_opset(c) >= 11 ? sc_in_ints(c, 1, p, 2 * ONNX_MAX_RANK) :
		sc_attr_ints(c, "pads", p, 2 * ONNX_MAX_RANK);
	if (n != 2 * x->rank || (sc_opset(c) >= 18 && c->nin > 3 && c->in[3] >= 0))
		return;	/* (axes of opset 18 not followed) */
	for (int i = 0; i < x->rank; i++)
		d[i] = x->dims[i] < 0 ? -1 : x->dims[i] + p[i] + p[i + x->rank];
	set_out(c, 0, x->rank, d, x->dtype);
}

/* Resize (X, roi, scales, sizes) from opset 11, (X, scales) in 10; Upsample */
static void infer_resize(struct sctx *c)
{
	const struct tinfo *x = sc_in(c, 0), *sc, *sz;
	const struct onnx_attr *as = onnx_attr_find(c->b->m, c->nd, "scales");
	int64_t d[ONNX_MAX_RANK];
	const double *v;

	if (!x || x->rank < 0)
		return;
	sc = sc_in(c, is_op(c, "Resize") && sc_opset(c) >= 11 ? 2 : 1);
	sz = is_op(c, "Resize") && sc_opset(c) >= 11 ? sc_in(c, 3) : NULL;
	if (sz && sz->nval == x->rank && (v = sc_vals(c->b, sz))) {
		for (int i = 0; i < x->rank; i++)
			d[i] = sc_to_i64(v[i]);
	} else if (sc && sc->nval == x->rank && (v = sc_vals(c->b, sc))) {
		for (int i = 0; i < x->rank; i++)
			d[i] = x->dims[i] < 0 ? -1 : sc_to_i64(floor((double)x->dims[i] * v[i]));
	} else if (as && as->nfloats == x->rank && as->nfloats_all == x->rank) {	/* Upsample-7 */
		for (int i = 0; i < x->rank; i++)
			d[i] = x->dims[i] < 0 ? -1 :
				sc_to_i64(floor((double)x->dims[i] * as->floats[i]));
	} else {
		return;
	}
	set_out(c, 0, x->rank, d, x->dtype);
}

static void infer_depth_space(struct sctx *c)
{
	const struct tinfo *x = sc_in(c, 0);
	int64_t bs = sc_attr_i(c, "blocksize", 0), d[4];
	bool to_space = is_op(c, "DepthToSpace");

	if (!x || x->rank != 4 || bs < 1)
		return;
	d[0] = x->dims[0];
	d[1] = x->dims[1] < 0 ? -1 : to_space ? x->dims[1] / (bs * bs) : x->dims[1] * bs * bs;
	for (int i = 2; i < 4; i++)
		d[i] = x->dims[i] < 0 ? -1 : to_space ? x->dims[i] * bs : x->dims[i] / bs;
	set_out(c, 0, 4, d, x->dtype);
}

/* ---- shape ops, constants, reductions ---- */

static void infer_shape(struct sctx *c)
{
	const struct tinfo *x = sc_in(c, 0);
	int64_t n;
	int lo, hi;

	if (is_op(c, "Size")) {
		set_out(c, 0, 0, NULL, ONNX_INT64);
		return;
	}
	if (!x || x->rank < 0)
		return;
	tp_shape_range(c, x->rank, &lo, &hi);
	n = hi - lo;
	set_out(c, 0, 1, &n, ONNX_INT64);
}

static void infer_constant(struct sctx *c)
{
	const struct onnx_attr *a = onnx_attr_find(c->b->m, c->nd, "value");
	const struct onnx_model *m = c->b->m;
	int64_t n;

	if (a && a->t >= 0) {
		const struct onnx_value *v = &m->vals[ONNX_ATTR_T][a->t];

		set_out(c, 0, v->rank, v->dims, v->dtype ? v->dtype : ONNX_FLOAT);
	} else if (onnx_attr_find(m, c->nd, "value_int")) {
		set_out(c, 0, 0, NULL, ONNX_INT64);
	} else if (onnx_attr_find(m, c->nd, "value_float")) {
		set_out(c, 0, 0, NULL, ONNX_FLOAT);
	} else if ((a = onnx_attr_find(m, c->nd, "value_ints"))) {
		n = a->nints_all;
		set_out(c, 0, 1, &n, ONNX_INT64);
	} else if ((a = onnx_attr_find(m, c->nd, "value_floats"))) {
		n = a->nfloats_all;
		set_out(c, 0, 1, &n, ONNX_FLOAT);
	}
}

static void infer_constant_of_shape(struct sctx *c)
{
	const struct onnx_attr *a = onnx_attr_find(c->b->m, c->nd, "value");
	int64_t s[ONNX_MAX_RANK];
	int n = sc_in_ints(c, 0, s, ONNX_MAX_RANK);

	if (n >= 0)
		set_out(c, 0, n, s, a && a->t >= 0 ?
			c->b->m->vals[ONNX_ATTR_T][a->t].dtype : ONNX_FLOAT);
}

static void infer_range(struct sctx *c)
{
	const double *s = sc_vals(c->b, sc_in(c, 0)), *l = sc_vals(c->b, sc_in(c, 1));
	const double *dl = sc_vals(c->b, sc_in(c, 2));
	int64_t n = -1;

	if (s && l && dl && *dl != 0) {
		double k = ceil((*l - *s) / *dl);

		n = k > 0 ? sc_to_i64(k) : 0;
	}
	set_out(c, 0, 1, &n, in_dtype(c, 0));
}

static void infer_reduce(struct sctx *c)
{
	const struct tinfo *x = sc_in(c, 0);
	bool arg = is_op(c, "ArgMax") || is_op(c, "ArgMin"), keep = sc_attr_i(c, "keepdims", 1);
	int64_t axes[ONNX_MAX_RANK], d[ONNX_MAX_RANK];
	bool red[ONNX_MAX_RANK] = { false };
	int n, r = 0;

	if (!x || x->rank < 0)
		return;
	if (arg) {
		axes[0] = sc_attr_i(c, "axis", 0);
		n = 1;
	} else {
		n = axes_of(c, is_op(c, "ReduceSum") ? 13 : 18, 1, axes);
	}
	if (n == -1)
		return;
	if (n == -2 && sc_attr_i(c, "noop_with_empty_axes", 0)) {
		set_out(c, 0, x->rank, x->dims, x->dtype);
		return;
	}
	for (int k = 0; k < n; k++) {
		int a = sc_norm_axis(axes[k], x->rank);

		if (a < 0)
			return;
		red[a] = true;
	}
	for (int i = 0; i < x->rank; i++) {
		if (n == -2 || red[i]) {
			if (keep)
				d[r++] = 1;
		} else {
			d[r++] = x->dims[i];
		}
	}
	set_out(c, 0, r, d, arg ? ONNX_INT64 : x->dtype);
}

static void infer_topk(struct sctx *c)
{
	const struct tinfo *x = sc_in(c, 0);
	int64_t k, d[ONNX_MAX_RANK];
	int axis;

	if (!x || x->rank < 1 || (axis = sc_norm_axis(sc_attr_i(c, "axis", -1), x->rank)) < 0)
		return;
	memcpy(d, x->dims, sizeof(d));
	d[axis] = sc_opset(c) >= 10 ? (sc_in_ints(c, 1, &k, 1) == 1 ? k : -1) : sc_attr_i(c, "k", -1);
	set_out(c, 0, x->rank, d, x->dtype);
	set_out(c, 1, x->rank, d, ONNX_INT64);
}

/* ---- dispatch ---- */

struct rule {
	const char *op;
	void (*fn)(struct sctx *c);
};

static const struct rule rules[] = {
	{ "Conv", infer_window }, { "ConvTranspose", infer_window },
	{ "MaxPool", infer_window }, { "AveragePool", infer_window }, { "LpPool", infer_window },
	{ "GlobalAveragePool", infer_global_pool }, { "GlobalMaxPool", infer_global_pool },
	{ "GlobalLpPool", infer_global_pool },
	{ "Gemm", infer_gemm }, { "MatMul", infer_matmul },
	{ "BatchNormalization", infer_norm }, { "LayerNormalization", infer_norm },
	{ "Reshape", infer_reshape }, { "Flatten", infer_flatten },
	{ "Transpose", infer_transpose }, { "Squeeze", infer_squeeze },
	{ "Unsqueeze", infer_unsqueeze }, { "Concat", infer_concat }, { "Split", infer_split },
	{ "Slice", infer_slice }, { "Gather", infer_gather }, { "GatherElements", infer_gather },
	{ "Expand", infer_expand }, { "Tile", infer_tile }, { "Pad", infer_pad },
	{ "Resize", infer_resize }, { "Upsample", infer_resize },
	{ "DepthToSpace", infer_depth_space }, { "SpaceToDepth", infer_depth_space },
	{ "Shape", infer_shape }, { "Size", infer_shape }, { "Constant", infer_constant },
	{ "ConstantOfShape", infer_constant_of_shape }, { "Range", infer_range },
	{ "ReduceMean", infer_reduce }, { "ReduceSum", infer_reduce },
	{ "ReduceMax", infer_reduce }, { "ReduceMin", infer_reduce },
	{ "ReduceProd", infer_reduce }, { "ReduceL1", infer_reduce },
	{ "ReduceL2", infer_reduce }, { "ReduceLogSumExp", infer_reduce },
	{ "ReduceSumSquare", infer_reduce }, { "ArgMax", infer_reduce },
	{ "ArgMin", infer_reduce }, { "TopK", infer_topk },
	{ "Cast", infer_cast }, { "CastLike", infer_cast },
	/* numpy broadcasting */
	{ "Add", infer_broadcast }, { "Sub", infer_broadcast }, { "Mul", infer_broadcast },
	{ "Div", infer_broadcast }, { "Pow", infer_broadcast }, { "Mod", infer_broadcast },
	{ "Equal", infer_broadcast }, { "Less", infer_broadcast },
	{ "Greater", infer_broadcast }, { "LessOrEqual", infer_broadcast },
	{ "GreaterOrEqual", infer_broadcast }, { "And", infer_broadcast },
	{ "Or", infer_broadcast }, { "Xor", infer_broadcast }, { "Where", infer_broadcast },
	{ "Max", infer_broadcast }, { "Min", infer_broadcast }, { "Sum", infer_broadcast },
	{ "Mean", infer_broadcast }, { "BitShift", infer_broadcast },
	{ "PRelu", same_shape },
	/* the output has the input's shape */
	{ "Identity", same_shape }, { "Dropout", same_shape }, { "Relu", same_shape },
	{ "LeakyRelu", same_shape }, { "Sigmoid", same_shape }, { "Tanh", same_shape },
	{ "Erf", same_shape }, { "Exp", same_shape }, { "Log", same_shape },
	{ "Sqrt", same_shape }, { "Neg", same_shape }, { "Abs", same_shape },
	{ "Reciprocal", same_shape }, { "Floor", same_shape }, { "Ceil", same_shape },
	{ "Round", same_shape }, { "Sign", same_shape }, { "Not", same_shape },
	{ "HardSwish", same_shape }, { "HardSigmoid", same_shape }, { "Elu", same_shape },
	{ "Selu", same_shape }, { "Celu", same_shape }, { "Softplus", same_shape },
	{ "Softsign", same_shape }, { "Gelu", same_shape }, { "Mish", same_shape },
	{ "Clip", same_shape }, { "Softmax", same_shape }, { "LogSoftmax", same_shape },
	{ "Hardmax", same_shape }, { "CumSum", same_shape }, { "Trilu", same_shape },
	{ "LRN", same_shape }, { "InstanceNormalization", same_shape },
	{ "GroupNormalization", same_shape }, { "LpNormalization", same_shape },
	{ "MeanVarianceNormalization", same_shape }, { "Shrink", same_shape },
	{ "ThresholdedRelu", same_shape }, { "Sin", same_shape }, { "Cos", same_shape },
	{ "IsNaN", same_shape }, { "IsInf", same_shape }, { "EyeLike", same_shape },
	{ "ScatterND", same_shape }, { "ScatterElements", same_shape },
};

int tp_infer_node(struct sctx *c)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (is_op(c, rules[i].op)) {
			rules[i].fn(c);
			break;
		}
	return tp_fold_node(c);
}
