// SPDX-License-Identifier: GPL-2.0
/*
 * Constant folding of shape arithmetic: the values of small tensors
 * (at most ONNX_MAX_VALS elements) that depend on no activation value -
 * Constant, Shape of a tensor of known shape, and what is computed from
 * them (Gather, Concat, Slice, Unsqueeze, Cast, Add, Div, Where, ...) - so
 * that the shape arguments torch.onnx.export computes at run time are known
 * to shape.c. Values are doubles (exact for every dimension), computed with
 * ONNX's semantics for the element type (integer Div truncates, Mod takes
 * the divisor's sign).
 */
#include <math.h>
#include <string.h>

#include "import_ctx.h"

static bool is_op(const struct sctx *c, const char *op)
{
	return pb_str_eq(c->nd->op_type, op);
}

static bool int_type(int32_t t)
{
	return (t >= ONNX_UINT8 && t <= ONNX_INT64) || t == ONNX_BOOL || t == 12 || t == 13;
}

/* Output k's element count when it is known and small, else -1. */
static int small_out(const struct sctx *c, int k)
{
	const struct tinfo *t = sc_out(c, k);
	double e = t && sc_known(t) ? tp_tensor_elems(t) : -1;

	return e >= 0 && e <= ONNX_MAX_VALS ? (int)e : -1;
}

static int store(const struct sctx *c, int k, const double *v, int n)
{
	struct tinfo *t = sc_out(c, k);

	return t ? sc_set_vals(c->b, t, v, n) : 0;
}

/* Coordinates of flat index i of a shape, and the flat index in an input
 * broadcast to it (dims of size 1 repeat). */
static void unravel(int i, const struct tinfo *t, int64_t *co)
{
	for (int j = t->rank - 1; j >= 0; j--) {
		co[j] = t->dims[j] ? i % t->dims[j] : 0;
		i = t->dims[j] ? (int)(i / t->dims[j]) : 0;
	}
}

static int bcast_index(const int64_t *co, int rank, const struct tinfo *in)
{
	int idx = 0;

	for (int j = 0; j < in->rank; j++) {
		int64_t d = in->dims[j], x = co[j + rank - in->rank];

		idx = (int)(idx * d + (d == 1 ? 0 : x));
	}
	return idx;
}

static double cast_to(double x, int32_t t)
{
	if (t == ONNX_BOOL)
		return x != 0;
	if (int_type(t))
		return trunc(x);
	return t == ONNX_FLOAT ? (float)x : x;
}

/* ---- elementwise ---- */

static double binary(const struct sctx *c, double a, double b, bool ints)
{
	if (is_op(c, "Add") || is_op(c, "Sum"))
		return a + b;
	if (is_op(c, "Sub"))
		return a - b;
	if (is_op(c, "Mul"))
		return a * b;
	if (is_op(c, "Div"))
		return ints ? (b ? trunc(a / b) : 0) : a / b;
	if (is_op(c, "Mod")) {
		double r = b ? fmod(a, b) : 0;

		return sc_attr_i(c, "fmod", 0) || !r || (r < 0) == (b < 0) ? r : r + b;
	}
	if (is_op(c, "Pow"))
		return pow(a, b);
	if (is_op(c, "Max"))
		return a > b ? a : b;
	if (is_op(c, "Min"))
		return a < b ? a : b;
	if (is_op(c, "Equal"))
		return a == b;
	if (is_op(c, "Less"))
		return a < b;
	if (is_op(c, "Greater"))
		return a > b;
	if (is_op(c, "LessOrEqual"))
		return a <= b;
	if (is_op(c, "GreaterOrEqual"))
		return a >= b;
	if (is_op(c, "And"))
		return a && b;
	if (is_op(c, "Or"))
		return a || b;
	return (a != 0) != (b != 0);	/* Xor */
}

static int fold_broadcast(struct sctx *c, int n)
{
	const struct tinfo *o = sc_out(c, 0);
	bool ints = int_type(sc_in(c, 0)->dtype) && int_type(sc_in(c, c->nin - 1)->dtype);
	double v[ONNX_MAX_VALS];
	int64_t co[ONNX_MAX_RANK];

	for (int i = 0; i < c->nin; i++)
		if (!sc_vals(c->b, sc_in(c, i)))
			return 0;
	for (int i = 0; i < n; i++) {
		unravel(i, o, co);
		if (is_op(c, "Where")) {
			const struct tinfo *w = sc_in(c, 0), *x = sc_in(c, 1), *y = sc_in(c, 2);

			v[i] = sc_vals(c->b, w)[bcast_index(co, o->rank, w)] ?
				sc_vals(c->b, x)[bcast_index(co, o->rank, x)] :
				sc_vals(c->b, y)[bcast_index(co, o->rank, y)];
			continue;
		}
		v[i] = sc_vals(c->b, sc_in(c, 0))[bcast_index(co, o->rank, sc_in(c, 0))];
		for (int k = 1; k < c->nin; k++)
			v[i] = binary(c, v[i], sc_vals(c->b, sc_in(c, k))[
				bcast_index(co, o->rank, sc_in(c, k))], ints);
		if (int_type(o->dtype) && !is_op(c, "Div"))
			v[i] = cast_to(v[i], o->dtype);
	}
	return store(c, 0, v, n);
}

static double unary(const struct sctx *c, double x)
{
	if (is_op(c, "Neg"))
		return -x;
	if (is_op(c, "Abs"))
		return fabs(x);
	if (is_op(c, "Floor"))
		return floor(x);
	if (is_op(c, "Ceil"))
		return ceil(x);
	if (is_op(c, "Round"))
		return nearbyint(x);	/* half to even, the default rounding mode */
	if (is_op(c, "Sqrt"))
		return sqrt(x);
	if (is_op(c, "Reciprocal"))
		return 1 / x;
	if (is_op(c, "Not"))
		return !x;
	if (is_op(c, "Sign"))
		return (x > 0) - (x < 0);
	if (is_op(c, "Relu"))
		return x > 0 ? x : 0;
	return x;	/* Identity; layout ops keep the row-major order */
}

static int fold_unary(struct sctx *c, int n)
{
	const struct tinfo *x = sc_in(c, 0), *o = sc_out(c, 0);
	const double *xv = sc_vals(c->b, x);
	double v[ONNX_MAX_VALS];

	if (!xv || x->nval != n)
		return 0;
	for (int i = 0; i < n; i++)
		v[i] = is_op(c, "Cast") ? cast_to(xv[i], o->dtype) : unary(c, xv[i]);
	return store(c, 0, v, n);
}

static int fold_clip(struct sctx *c, int n)
{
	const double *xv = sc_vals(c->b, sc_in(c, 0)), *lo = sc_vals(c->b, sc_in(c, 1));
	const double *hi = sc_vals(c->b, sc_in(c, 2));
	double v[ONNX_MAX_VALS];

	if (!xv || sc_in(c, 0)->nval != n || (sc_in(c, 1) && !lo) || (sc_in(c, 2) && !hi))
		return 0;
	for (int i = 0; i < n; i++) {
		v[i] = lo && xv[i] < *lo ? *lo : xv[i];
		v[i] = hi && v[i] > *hi ? *hi : v[i];
	}
	return store(c, 0, v, n);
}

/* ---- shape ops and constants ---- */

static int fold_constant(struct sctx *c)
{
	const struct onnx_model *m = c->b->m;
	const struct onnx_attr *a = onnx_attr_find(m, c->nd, "value");
	double v[ONNX_MAX_VALS];
	int n = 0;

	if (a && a->t >= 0) {
		const struct onnx_value *t = &m->vals[ONNX_ATTR_T][a->t];

		return t->nval >= 0 ? store(c, 0, m->cvals + t->val0, t->nval) : 0;
	}
	if ((a = onnx_attr_find(m, c->nd, "value_int")))
		v[n++] = (double)a->i;
	else if ((a = onnx_attr_find(m, c->nd, "value_float")))
		v[n++] = a->f;
	else if ((a = onnx_attr_find(m, c->nd, "value_ints")) && a->nints == a->nints_all)
		for (; n < a->nints; n++)
			v[n] = (double)a->ints[n];
	else if ((a = onnx_attr_find(m, c->nd, "value_floats")) && a->nfloats == a->nfloats_all)
		for (; n < a->nfloats; n++)
			v[n] = a->floats[n];
	else
		return 0;
	return store(c, 0, v, n);
}

static int fold_shape(struct sctx *c)
{
	const struct tinfo *x = sc_in(c, 0);
	double v[ONNX_MAX_RANK], e;
	int lo, hi;

	if (!x || x->rank < 0)
		return 0;
	if (is_op(c, "Size")) {
		e = tp_tensor_elems(x);
		return e >= 0 ? store(c, 0, &e, 1) : 0;
	}
	tp_shape_range(c, x->rank, &lo, &hi);
	for (int i = lo; i < hi; i++) {
		if (x->dims[i] < 0)
			return 0;
		v[i - lo] = (double)x->dims[i];
	}
	return store(c, 0, v, hi - lo);
}

static int fold_constant_of_shape(struct sctx *c, int n)
{
	const struct onnx_model *m = c->b->m;
	const struct onnx_attr *a = onnx_attr_find(m, c->nd, "value");
	double v[ONNX_MAX_VALS], x = 0;

	if (a && a->t >= 0 && m->vals[ONNX_ATTR_T][a->t].nval == 1)
		x = m->cvals[m->vals[ONNX_ATTR_T][a->t].val0];
	for (int i = 0; i < n; i++)
		v[i] = x;
	return store(c, 0, v, n);
}

static int fold_range(struct sctx *c, int n)
{
	const double *s = sc_vals(c->b, sc_in(c, 0)), *d = sc_vals(c->b, sc_in(c, 2));
	double v[ONNX_MAX_VALS];

	if (!s || !d)
		return 0;
	for (int i = 0; i < n; i++)
		v[i] = *s + i * *d;
	return store(c, 0, v, n);
}

/* ---- layout ---- */

static int fold_gather(struct sctx *c, int n)
{
	const struct tinfo *x = sc_in(c, 0), *idx = sc_in(c, 1), *o = sc_out(c, 0);
	const double *xv = sc_vals(c->b, x), *iv = sc_vals(c->b, idx);
	int64_t axis = sc_attr_i(c, "axis", 0), inner = 1, outer, dim, ni, k;
	double v[ONNX_MAX_VALS];

	if (!xv || !iv || !sc_known(x) || x->rank < 1 || is_op(c, "GatherElements"))
		return 0;
	axis = axis < 0 ? axis + x->rank : axis;
	if (axis < 0 || axis >= x->rank)
		return 0;
	for (int i = (int)axis + 1; i < x->rank; i++)
		inner *= x->dims[i];
	dim = x->dims[axis];
	ni = idx->nval;
	outer = ni && inner ? n / (ni * inner) : 0;
	if (outer * ni * inner != n || !o)
		return 0;
	for (int64_t a = 0; a < outer; a++)
		for (int64_t j = 0; j < ni; j++) {
			k = (int64_t)iv[j] < 0 ? (int64_t)iv[j] + dim : (int64_t)iv[j];
			if (k < 0 || k >= dim)
				return 0;	/* out of range: leave unknown */
			for (int64_t r = 0; r < inner; r++)
				v[(a * ni + j) * inner + r] = xv[(a * dim + k) * inner + r];
		}
	return store(c, 0, v, n);
}

static int fold_concat(struct sctx *c, int n)
{
	const struct tinfo *o = sc_out(c, 0);
	int64_t axis = sc_attr_i(c, "axis", 0), inner = 1, outer = 1, off = 0;
	double v[ONNX_MAX_VALS];

	axis = axis < 0 ? axis + o->rank : axis;
	if (axis < 0 || axis >= o->rank)
		return 0;
	for (int i = (int)axis + 1; i < o->rank; i++)
		inner *= o->dims[i];
	for (int i = 0; i < axis; i++)
		outer *= o->dims[i];
	for (int k = 0; k < c->nin; k++) {
		const struct tinfo *t = sc_in(c, k);
		const double *tv = sc_vals(c->b, t);
		int64_t len;

		if (!tv || !sc_known(t))
			return 0;
		len = t->dims[axis];
		for (int64_t a = 0; a < outer; a++)
			for (int64_t j = 0; j < len * inner; j++)
				v[a * o->dims[axis] * inner + off * inner + j] = tv[a * len * inner + j];
		off += len;
	}
	return off == o->dims[axis] ? store(c, 0, v, n) : 0;
}

static int fold_slice(struct sctx *c, int n)
{
	const struct tinfo *x = sc_in(c, 0), *o = sc_out(c, 0);
	int64_t st[ONNX_MAX_RANK], en[ONNX_MAX_RANK], ax[ONNX_MAX_RANK], sp[ONNX_MAX_RANK];
	int64_t first[ONNX_MAX_RANK] = { 0 }, step[ONNX_MAX_RANK], co[ONNX_MAX_RANK];
	const double *xv = sc_vals(c->b, x);
	double v[ONNX_MAX_VALS];
	int k;

	if (!xv || !sc_known(x) || (k = tp_slice_args(c, x->rank, st, en, ax, sp)) < 0)
		return 0;
	for (int i = 0; i < x->rank; i++)
		step[i] = 1;
	for (int i = 0; i < k; i++) {	/* the first index taken, clamped as in shape.c */
		int64_t d = x->dims[ax[i]], s = st[i] < 0 ? st[i] + d : st[i];

		s = sp[i] > 0 ? (s < 0 ? 0 : s > d ? d : s) : (s < 0 ? 0 : s > d - 1 ? d - 1 : s);
		first[ax[i]] = s;
		step[ax[i]] = sp[i];
	}
	for (int i = 0; i < n; i++) {
		int idx = 0;

		unravel(i, o, co);
		for (int j = 0; j < x->rank; j++)
			idx = (int)(idx * x->dims[j] + first[j] + co[j] * step[j]);
		v[i] = xv[idx];
	}
	return store(c, 0, v, n);
}

static int fold_expand(struct sctx *c, int n)
{
	const struct tinfo *x = sc_in(c, 0), *o = sc_out(c, 0);
	const double *xv = sc_vals(c->b, x);
	int64_t co[ONNX_MAX_RANK];
	double v[ONNX_MAX_VALS];

	if (!xv || !sc_known(x))
		return 0;
	for (int i = 0; i < n; i++) {
		unravel(i, o, co);
		v[i] = xv[bcast_index(co, o->rank, x)];
	}
	return store(c, 0, v, n);
}

static int fold_transpose(struct sctx *c, int n)
{
	const struct tinfo *x = sc_in(c, 0), *o = sc_out(c, 0);
	const double *xv = sc_vals(c->b, x);
	int64_t perm[ONNX_MAX_RANK], co[ONNX_MAX_RANK], xc[ONNX_MAX_RANK];
	double v[ONNX_MAX_VALS];
	int np;

	if (!xv || !sc_known(x))
		return 0;
	np = sc_attr_ints(c, "perm", perm, ONNX_MAX_RANK);
	for (int i = 0; np < 0 && i < x->rank; i++)
		perm[i] = x->rank - 1 - i;
	for (int i = 0; i < n; i++) {
		int idx = 0;

		unravel(i, o, co);
		for (int j = 0; j < x->rank; j++)
			xc[perm[j] < 0 ? perm[j] + x->rank : perm[j]] = co[j];
		for (int j = 0; j < x->rank; j++)
			idx = (int)(idx * x->dims[j] + xc[j]);
		v[i] = xv[idx];
	}
	return store(c, 0, v, n);
}

/* ReduceProd/Sum/Max/Min over the axes shape.c kept as 1 or dropped. */
static int fold_reduce(struct sctx *c, int n)
{
	const struct tinfo *x = sc_in(c, 0);
	const double *xv = sc_vals(c->b, x);
	bool prod = is_op(c, "ReduceProd"), mx = is_op(c, "ReduceMax"), mn = is_op(c, "ReduceMin");
	double v[ONNX_MAX_VALS];

	if (!xv || !sc_known(x) || n != 1)
		return 0;	/* full reductions only: shape arithmetic needs no more */
	v[0] = prod ? 1 : mx ? -INFINITY : mn ? INFINITY : 0;
	for (int i = 0; i < x->nval; i++)
		v[0] = prod ? v[0] * xv[i] : mx ? fmax(v[0], xv[i]) : mn ? fmin(v[0], xv[i]) :
			v[0] + xv[i];
	return store(c, 0, v, 1);
}

int tp_fold_node(struct sctx *c)
{
	static const char *const passthrough[] = {
		"Identity", "Cast", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Neg", "Abs",
		"Floor", "Ceil", "Round", "Sqrt", "Reciprocal", "Not", "Sign", "Relu",
	};
	static const char *const bcast[] = {
		"Add", "Sub", "Mul", "Div", "Mod", "Pow", "Max", "Min", "Sum", "Equal", "Less",
		"Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Where",
	};
	int n = small_out(c, 0);

	if (is_op(c, "Constant"))
		return fold_constant(c);
	if (is_op(c, "Shape") || is_op(c, "Size"))
		return fold_shape(c);
	if (n < 0 || c->nin < 1 || !sc_in(c, 0) || sc_out(c, 0)->nval >= 0)
		return 0;
	for (size_t i = 0; i < sizeof(passthrough) / sizeof(passthrough[0]); i++)
		if (is_op(c, passthrough[i]))
			return fold_unary(c, n);
	for (size_t i = 0; i < sizeof(bcast) / sizeof(bcast[0]); i++)
		if (is_op(c, bcast[i]))
			return fold_broadcast(c, n);
	if (is_op(c, "Clip"))
		return fold_clip(c, n);
	if (is_op(c, "ConstantOfShape"))
		return fold_constant_of_shape(c, n);
	if (is_op(c, "Range"))
		return fold_range(c, n);
	if (is_op(c, "Gather"))
		return fold_gather(c, n);
	if (is_op(c, "Concat"))
		return fold_concat(c, n);
	if (is_op(c, "Slice"))
		return fold_slice(c, n);
	if (is_op(c, "Expand"))
		return fold_expand(c, n);
	if (is_op(c, "Transpose"))
		return fold_transpose(c, n);
	if (is_op(c, "ReduceProd") || is_op(c, "ReduceSum") || is_op(c, "ReduceMax") ||
	    is_op(c, "ReduceMin"))
		return fold_reduce(c, n);
	return 0;
}
