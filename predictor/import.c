// SPDX-License-Identifier: GPL-2.0
/*
 * ONNX graph -> GHN-2 graph.
 *
 * Tensors are classified as they are produced: activations depend on a
 * data input; static tensors depend only on parameters or constants. Ops
 * with no activation input (shape arithmetic, Constant, Expand of a class
 * token) vanish. Ops on the activation path either become GHN-2 nodes
 * (weighted ops and the structural primitives) or are contracted: their
 * outputs stand for the set of GHN nodes feeding them, so ReLU, Reshape,
 * Dropout, Transpose and friends become plain edges. A Conv or Gemm with a
 * bias becomes a conv node followed by a bias node, as in GHN-2.
 *
 * The mapping rules are documented in Documentation/predictor.md; the
 * Python check (predictor/tools/onnx_expect.py) implements them
 * independently.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"

#define REP_MAX 256	/* GHN nodes one contracted tensor may stand for */

#define grow tp_grow

static uint32_t hash_str(struct pb_str s)
{
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < s.n; i++)
		h = (h ^ (uint8_t)s.p[i]) * 16777619u;
	return h;
}

static int str_same(struct pb_str a, struct pb_str b)
{
	return a.n == b.n && !memcmp(a.p, b.p, a.n);
}

/* Tensor id of a name, creating an undefined entry when new. */
static int tensor_id(struct builder *b, struct pb_str name, int32_t *id)
{
	uint32_t h = hash_str(name) & (b->nslot - 1);
	int cap = (int)b->cap_t, err;

	while (b->slot[h]) {
		if (str_same(b->t[b->slot[h] - 1].name, name)) {
			*id = (int32_t)b->slot[h] - 1;
			return 0;
		}
		h = (h + 1) & (b->nslot - 1);
	}
	if (b->nt >= b->nslot / 2)
		return tp_fail(-E2BIG, "ONNX graph has too many tensor names");
	err = grow((void **)&b->t, &cap, (int)b->nt, sizeof(*b->t));
	if (err)
		return err;
	b->cap_t = (uint32_t)cap;
	memset(&b->t[b->nt], 0, sizeof(b->t[b->nt]));
	b->t[b->nt].name = name;
	b->t[b->nt].rank = -1;
	b->t[b->nt].param = -1;
	b->t[b->nt].vi = -1;
	b->t[b->nt].nval = -1;
	b->slot[h] = ++b->nt;
	*id = (int32_t)b->nt - 1;
	return 0;
}

static void set_shape(struct tinfo *t, const struct onnx_value *v)
{
	if (v->rank < 0 || t->rank >= 0)
		return;
	t->rank = v->rank;
	memcpy(t->dims, v->dims, sizeof(t->dims));
}

#define elems tp_tensor_elems

static int add_node(struct builder *b, int prim, const int32_t shape[4], int32_t *id)
{
	int cap = b->cap_n, err;

	err = grow((void **)&b->prim, &cap, b->n, 1);
	if (!err) {
		int cap2 = b->cap_n;

		err = grow((void **)&b->shape, &cap2, b->n, sizeof(*b->shape));
	}
	if (err)
		return err;
	b->cap_n = cap;
	b->prim[b->n] = (uint8_t)prim;
	memcpy(b->shape[b->n], shape, sizeof(b->shape[b->n]));
	*id = b->n++;
	return 0;
}

static int add_edge(struct builder *b, int32_t u, int32_t v)
{
	int err = grow((void **)&b->edge, &b->cap_e, b->ne, sizeof(*b->edge));

	if (err)
		return err;
	b->edge[b->ne][0] = u;
	b->edge[b->ne][1] = v;
	b->ne++;
	return 0;
}

/* Set an activation's representative GHN nodes. */
static int set_rep(struct builder *b, int32_t tid, const int32_t *nodes, uint32_t k)
{
	int cap = (int)b->cap_pool, err;

	while (b->npool + k > (uint32_t)cap) {
		err = grow((void **)&b->pool, &cap, cap, sizeof(*b->pool));
		if (err)
			return err;
	}
	b->cap_pool = (uint32_t)cap;
	memcpy(b->pool + b->npool, nodes, k * sizeof(*nodes));
	b->t[tid].kind = T_ACT;
	b->t[tid].rep0 = b->npool;
	b->t[tid].nrep = k;
	b->npool += k;
	return 0;
}

/* Union of the representatives of the activation inputs, sorted, unique. */
static int gather_preds(struct builder *b, const int32_t *in, int nin, int32_t *out, int *k)
{
	*k = 0;
	for (int i = 0; i < nin; i++) {
		const struct tinfo *t = in[i] >= 0 ? &b->t[in[i]] : NULL;

		if (!t || t->kind != T_ACT)
			continue;
		for (uint32_t r = 0; r < t->nrep; r++) {
			int32_t v = b->pool[t->rep0 + r];
			int j = *k;

			while (j > 0 && out[j - 1] > v)
				j--;
			if (j > 0 && out[j - 1] == v)
				continue;
			if (*k >= REP_MAX)
				return tp_fail(-E2BIG, "an ONNX op merges more than %d graph nodes",
					       REP_MAX);
			memmove(out + j + 1, out + j, (*k - j) * sizeof(*out));
			out[j] = v;
			(*k)++;
		}
	}
	return 0;
}

struct op_class {
	int prim;		/* -1: contracted */
	int wi;			/* input index of the weight, -1 none */
	int32_t w, bias;	/* tensor ids of weight and bias leaves, -1 none */
};

static bool is_param(const struct builder *b, const int32_t *in, int nin, int i)
{
	return i >= 0 && i < nin && in[i] >= 0 && b->t[in[i]].kind == T_PARAM;
}

static int first_param(const struct builder *b, const int32_t *in, int nin)
{
	for (int i = 0; i < nin; i++)
		if (is_param(b, in, nin, i))
			return i;
	return -1;
}

static int conv_prim(const struct builder *b, const struct onnx_node *nd)
{
	const struct onnx_attr *g = onnx_attr_find(b->m, nd, "group");
	const struct onnx_attr *d = onnx_attr_find(b->m, nd, "dilations");

	for (int i = 0; d && i < d->nints; i++)
		if (d->ints[i] > 1)
			return TP_DIL_CONV;
	return g && g->i > 1 ? TP_SEP_CONV : TP_CONV;
}

/* Two activation inputs of different known shapes: a broadcast product. */
static bool broadcast_mul(const struct builder *b, const int32_t *in, int nin)
{
	const struct tinfo *x = NULL, *y = NULL;

	for (int i = 0; i < nin; i++) {
		if (in[i] < 0 || b->t[in[i]].kind != T_ACT)
			continue;
		if (!x)
			x = &b->t[in[i]];
		else if (!y)
			y = &b->t[in[i]];
	}
	if (!y || x->rank < 0 || y->rank < 0)
		return false;
	return elems(x) != elems(y);
}

/* Parameter with two or more non-unit dims added to activations. */
static int add_prim(const struct builder *b, int32_t leaf)
{
	const struct tinfo *t = &b->t[leaf];
	int big = 0;

	for (int i = 0; i < t->rank; i++)
		big += t->dims[i] > 1;
	return big >= 2 ? TP_POS_ENC : TP_BIAS;
}

static int32_t leaf_of(const struct builder *b, const int32_t *in, int i)
{
	return b->t[in[i]].param;
}

static struct op_class classify(const struct builder *b, const struct onnx_node *nd,
				const int32_t *in, int nin, int nact)
{
	struct op_class c = { -1, -1, -1, -1 };
	struct pb_str op = nd->op_type;
	int p = first_param(b, in, nin);

	if (pb_str_eq(op, "Conv") || pb_str_eq(op, "ConvTranspose")) {
		c.prim = conv_prim(b, nd);
		c.wi = is_param(b, in, nin, 1) ? 1 : -1;
		c.bias = is_param(b, in, nin, 2) ? leaf_of(b, in, 2) : -1;
	} else if (pb_str_eq(op, "Gemm") || (pb_str_eq(op, "MatMul") && p >= 0)) {
		c.prim = TP_CONV;
		c.wi = is_param(b, in, nin, 1) ? 1 : p;
		c.bias = is_param(b, in, nin, 2) ? leaf_of(b, in, 2) : -1;
	} else if (pb_str_eq(op, "BatchNormalization") || pb_str_eq(op, "InstanceNormalization") ||
		   pb_str_eq(op, "GroupNormalization") || pb_str_eq(op, "LayerNormalization")) {
		c.prim = pb_str_eq(op, "LayerNormalization") ? TP_LN : TP_BN;
		c.wi = is_param(b, in, nin, 1) ? 1 : -1;
	} else if (pb_str_eq(op, "MaxPool") || pb_str_eq(op, "GlobalMaxPool")) {
		c.prim = TP_MAX_POOL;
	} else if (pb_str_eq(op, "AveragePool")) {
		c.prim = TP_AVG_POOL;
	} else if (pb_str_eq(op, "GlobalAveragePool")) {
		c.prim = TP_GLOB_AVG;
	} else if (pb_str_eq(op, "Softmax")) {
		c.prim = TP_MSA;
	} else if (pb_str_eq(op, "Add") || pb_str_eq(op, "Sum")) {
		if (nact >= 2)
			c.prim = TP_SUM;
		else if (p >= 0)
			c.prim = add_prim(b, leaf_of(b, in, c.wi = p));
	} else if (pb_str_eq(op, "Mul")) {
		if (nact >= 2 && broadcast_mul(b, in, nin))
			c.prim = TP_CSE;
		else if (nact == 1 && p >= 0)
			c.prim = TP_CSE, c.wi = p;
	} else if (pb_str_eq(op, "Concat")) {
		if (nact >= 2 || p >= 0)
			c.prim = TP_CONCAT;
	} else if (pb_str_eq(op, "Gather") && is_param(b, in, nin, 0)) {
		c.prim = TP_CONV;
		c.wi = 0;
	}
	if (c.wi >= 0)
		c.w = leaf_of(b, in, c.wi);
	return c;
}

/* The GHN-2 shape of a node: weights (out, in, kh, kw), vectors (C). */
static void node_shape(const struct builder *b, const struct onnx_node *nd,
		       const struct op_class *c, int32_t shape[4])
{
	const struct tinfo *t = c->w >= 0 ? &b->t[c->w] : NULL;
	const struct onnx_attr *tb;
	int64_t d[ONNX_MAX_RANK];
	bool swap = false;
	int r = 0;

	memset(shape, 0, 4 * sizeof(*shape));
	if (!t || t->rank < 0)
		return;
	if (c->prim != TP_CONV && c->prim != TP_SEP_CONV && c->prim != TP_DIL_CONV &&
	    c->prim != TP_POS_ENC) {
		double e = elems(t);	/* vectors: their length */

		shape[0] = e > 0 && e < INT32_MAX ? (int32_t)e : 0;
		return;
	}
	for (int i = 0; i < t->rank; i++)	/* squeeze leading unit dims */
		if (r || t->dims[i] != 1 || t->rank - i <= 2)
			d[r++] = t->dims[i];
	if (pb_str_eq(nd->op_type, "Gemm")) {
		tb = onnx_attr_find(b->m, nd, "transB");
		swap = !(tb && tb->i);	/* torch's Linear is Gemm(transB=1): [out, in] */
	} else if (pb_str_eq(nd->op_type, "MatMul")) {
		swap = c->wi == 1;	/* x @ W: W is [in, out] */
	}
	if (swap && r >= 2) {
		int64_t x = d[r - 2];

		d[r - 2] = d[r - 1];
		d[r - 1] = x;
	}
	for (int i = 0; i < r && i < 4; i++)
		shape[i] = d[i] > 0 && d[i] < INT32_MAX ? (int32_t)d[i] : 0;
}

/* The enum tp_flop_class of a Conv with weight w [out, in / group, k...]. */
static int conv_class(struct builder *b, const struct onnx_node *nd, const struct tinfo *w)
{
	const struct onnx_attr *g = onnx_attr_find(b->m, nd, "group");
	double kernel = 1;

	if (g && g->i > 1)
		return TP_FLOPS_GROUP;
	for (int i = 2; i < w->rank; i++)
		kernel *= (double)w->dims[i];
	return kernel == 1 ? TP_FLOPS_CONV1 : TP_FLOPS_CONVK;
}

/* Multiply-adds x 2 of the matrix products in one op (0 when unknown);
 * *cls: their enum tp_flop_class. */
static double op_flops(struct builder *b, const struct onnx_node *nd, const struct op_class *c,
		       const int32_t *in, int nin, const struct tinfo *out, int *cls)
{
	const struct tinfo *w = c->w >= 0 ? &b->t[c->w] : NULL;
	bool conv = c->prim == TP_CONV || c->prim == TP_SEP_CONV || c->prim == TP_DIL_CONV;
	double eo = elems(out), ew = w ? elems(w) : -1, k = -1;

	if (conv && c->prim >= 0 && w) {
		b->weighted++;
		if (eo < 0 || ew < 0 || w->rank < 1)
			return 0;
		b->weighted_shaped++;
		*cls = TP_FLOPS_LINEAR;
		if (pb_str_eq(nd->op_type, "Conv") || pb_str_eq(nd->op_type, "ConvTranspose")) {
			k = w->dims[0] ? ew / (double)w->dims[0] : 0;
			*cls = conv_class(b, nd, w);
		} else if (pb_str_eq(nd->op_type, "Gather"))
			k = 0;	/* a lookup, no products */
		else if (pb_str_eq(nd->op_type, "MatMul") && c->wi == 1 && w->rank >= 2)
			k = (double)w->dims[w->rank - 2];
		else
			k = w->dims[w->rank - 1];
		if (pb_str_eq(nd->op_type, "Gemm")) {
			const struct onnx_attr *tb = onnx_attr_find(b->m, nd, "transB");

			k = w->rank == 2 ? (double)w->dims[tb && tb->i ? 1 : 0] : 0;
		}
		return 2.0 * eo * k;
	}
	if (pb_str_eq(nd->op_type, "MatMul") && nin == 2 && in[0] >= 0 && eo >= 0) {
		const struct tinfo *a = &b->t[in[0]];

		*cls = TP_FLOPS_MATMUL;
		if (a->rank >= 1 && a->dims[a->rank - 1] >= 0)
			return 2.0 * eo * (double)a->dims[a->rank - 1];
	}
	return 0;
}

/* Static op: outputs derive from a parameter (first one) or constants. */
static void static_outputs(struct builder *b, const int32_t *in, int nin, const int32_t *out,
			   int nout, bool shape_op)
{
	int p = shape_op ? -1 : first_param(b, in, nin);

	for (int o = 0; o < nout; o++) {
		if (out[o] < 0)
			continue;
		b->t[out[o]].kind = p >= 0 ? T_PARAM : T_CONST;
		b->t[out[o]].param = p >= 0 ? b->t[in[p]].param : -1;
	}
}

static int node_inputs(struct builder *b, const struct onnx_node *nd, int32_t *in, int *nin,
		       int *nact)
{
	*nin = 0;
	*nact = 0;
	for (uint32_t i = 0; i < nd->nin; i++) {
		struct pb_str name = b->m->strs[nd->in0 + i];
		int32_t id = -1;
		int err = 0;

		if (name.n)	/* "" marks an omitted optional input */
			err = tensor_id(b, name, &id);
		if (err)
			return err;
		if (id >= 0 && b->t[id].kind == T_UNDEF)
			return tp_fail(-EBADMSG,
				       "ONNX node '%.*s' (%.*s) reads '%.*s' before it is produced",
				       (int)nd->name.n, nd->name.p, (int)nd->op_type.n,
				       nd->op_type.p, (int)name.n, name.p);
		in[(*nin)++] = id;	/* -1: omitted, positions kept */
		*nact += id >= 0 && b->t[id].kind == T_ACT;
	}
	return 0;
}

#define T_PENDING 4	/* an output of the node being processed */

/* Tensor ids of the node's outputs (-1: omitted), each produced once. */
static int node_outputs(struct builder *b, const struct onnx_node *nd, int32_t *out)
{
	for (uint32_t o = 0; o < nd->nout; o++) {
		struct pb_str name = b->m->strs[nd->out0 + o];
		int err;

		out[o] = -1;
		if (!name.n)
			continue;
		err = tensor_id(b, name, &out[o]);
		if (err)
			return err;
		if (b->t[out[o]].kind != T_UNDEF)
			return tp_fail(-EBADMSG, "ONNX tensor '%.*s' is produced twice",
				       (int)name.n, name.p);
		b->t[out[o]].kind = T_PENDING;
	}
	return 0;
}

/* Outputs of an activation op: activations standing for `rep`. */
static int act_outputs(struct builder *b, const int32_t *out, int nout, const int32_t *rep,
		       int k)
{
	for (int o = 0; o < nout; o++) {
		int err = out[o] >= 0 ? set_rep(b, out[o], rep, (uint32_t)k) : 0;

		if (err)
			return err;
	}
	return 0;
}

static void mark_trainable(struct builder *b, const struct onnx_node *nd, const int32_t *in,
			   int nin)
{
	bool bn = pb_str_eq(nd->op_type, "BatchNormalization");

	for (int i = 0; i < nin; i++)
		if (in[i] >= 0 && b->t[in[i]].kind == T_PARAM && !(bn && i >= 3) &&
		    b->t[in[i]].param >= 0)
			b->t[b->t[in[i]].param].trainable = 1;
}

/* Create the GHN node(s) of a weighted or structural op; rep = its output. */
static int emit_node(struct builder *b, const struct onnx_node *nd, const struct op_class *c,
		     const int32_t *preds, int k, int32_t *rep)
{
	int32_t shape[4], v, bias;
	int err;

	node_shape(b, nd, c, shape);
	err = add_node(b, c->prim, shape, &v);
	for (int i = 0; !err && i < k; i++)
		err = add_edge(b, preds[i], v);
	*rep = v;
	if (err || c->bias < 0)
		return err;
	memset(shape, 0, sizeof(shape));
	shape[0] = elems(&b->t[c->bias]) > 0 ? (int32_t)elems(&b->t[c->bias]) : 0;
	err = add_node(b, TP_BIAS, shape, &bias);
	if (!err)
		err = add_edge(b, v, bias);
	*rep = bias;
	return err;
}

/* The declared shape (value_info or graph output) of a tensor inference
 * left unknown, unless the caller asked for inference alone. */
static void fallback_shapes(struct builder *b, const int32_t *out, int nout)
{
	for (int o = 0; o < nout; o++) {
		struct tinfo *t = out[o] >= 0 ? &b->t[out[o]] : NULL;

		if (!t || t->vi < 0 || sc_known(t) || (b->flags & TP_IMPORT_NO_VALUE_INFO))
			continue;
		t->rank = -1;
		set_shape(t, &b->m->vals[t->vi_kind][t->vi]);
	}
}

/* BatchNorm in inference form, or a convolution whose weight the exporter
 * made by folding one in (torch names those "onnx::Conv_N"): an eval-mode
 * export, which has lost its BatchNorm nodes. */
static void check_eval_mode(struct builder *b, const struct onnx_node *nd, const int32_t *in,
			    int nin)
{
	if (pb_str_eq(nd->op_type, "BatchNormalization")) {
		const struct onnx_attr *tm = onnx_attr_find(b->m, nd, "training_mode");

		if (b->m->opset >= 14 ? !(tm && tm->i) : nd->nout == 1)
			b->st.eval_bn++;
	} else if ((pb_str_eq(nd->op_type, "Conv") || pb_str_eq(nd->op_type, "ConvTranspose")) &&
		   nin >= 2 && in[1] >= 0 && b->t[in[1]].kind == T_PARAM) {
		struct pb_str w = b->t[b->t[in[1]].param].name;

		if (w.n > 6 && !memcmp(w.p, "onnx::", 6))
			b->st.folded_bn++;
	}
}

static void count_activation(struct builder *b, const struct onnx_node *nd, int32_t out0)
{
	const struct tinfo *t = &b->t[out0];

	if (elems(t) >= 0) {
		b->st.act_elems += elems(t);
		return;
	}
	if (!b->st.unresolved++)
		snprintf(b->st.unresolved_at, sizeof(b->st.unresolved_at), "%.*s '%.*s'",
			 (int)(nd->op_type.n < 24 ? nd->op_type.n : 24), nd->op_type.p,
			 (int)(t->name.n < 32 ? t->name.n : 32), t->name.p);
}

/* Shape and Size read no values: their outputs are constants. */
static bool is_shape_op(const struct onnx_node *nd)
{
	return pb_str_eq(nd->op_type, "Shape") || pb_str_eq(nd->op_type, "Size");
}

static int process_node(struct builder *b, const struct onnx_node *nd, int32_t *in,
			int32_t *out, int32_t *preds)
{
	struct sctx sc = { b, nd, in, 0, out, (int)nd->nout };
	struct op_class c;
	int nin, nact, k, err, cls = TP_FLOPS_LINEAR;
	double f;
	int32_t rep;

	if (nd->nin > 4 * REP_MAX || nd->nout > 4 * REP_MAX)
		return tp_fail(-E2BIG, "ONNX node with %u inputs and %u outputs", nd->nin,
			       nd->nout);
	err = node_inputs(b, nd, in, &nin, &nact);
	if (!err)
		err = node_outputs(b, nd, out);
	sc.nin = nin;
	if (!err)
		err = tp_infer_node(&sc);
	if (err)
		return err;
	fallback_shapes(b, out, sc.nout);
	check_eval_mode(b, nd, in, nin);
	if (!nact || is_shape_op(nd)) {
		static_outputs(b, in, nin, out, sc.nout, is_shape_op(nd));
		return 0;
	}
	c = classify(b, nd, in, nin, nact);
	mark_trainable(b, nd, in, nin);
	err = gather_preds(b, in, nin, preds, &k);
	if (!err && c.prim >= 0)
		err = emit_node(b, nd, &c, preds, k, &rep);
	if (!err)
		err = c.prim >= 0 ? act_outputs(b, out, sc.nout, &rep, 1) :
			act_outputs(b, out, sc.nout, preds, k);
	if (err || !sc.nout || out[0] < 0)
		return err;
	count_activation(b, nd, out[0]);
	f = op_flops(b, nd, &c, in, nin, &b->t[out[0]], &cls);
	b->st.flops += f;
	b->st.flops_by[cls] += f;
	return 0;
}

static int builder_init(struct builder *b, const struct onnx_model *m, unsigned flags)
{
	uint64_t names = (uint64_t)m->nstrs + 16;

	for (int k = 0; k < ONNX_NKINDS; k++)
		names += m->nvals[k];
	memset(b, 0, sizeof(*b));
	b->m = m;
	b->flags = flags;
	b->nslot = 64;
	while (b->nslot < 2 * names)
		b->nslot <<= 1;
	b->slot = calloc(b->nslot, sizeof(*b->slot));
	if (!b->slot)
		return tp_fail(-ENOMEM, "out of memory importing ONNX");
	b->batch = 1;
	return 0;
}

static void builder_free(struct builder *b)
{
	free(b->t);
	free(b->slot);
	free(b->prim);
	free(b->shape);
	free(b->edge);
	free(b->pool);
	free(b->cv);
}

/* A tensor the file gives: shape, type and (small ones) values. */
static int declare_tensor(struct builder *b, const struct onnx_value *v, int32_t id)
{
	struct tinfo *t = &b->t[id];

	set_shape(t, v);
	if (v->dtype)
		t->dtype = v->dtype;
	if (v->nval >= 0 && t->nval < 0)
		return sc_set_vals(b, t, b->m->cvals + v->val0, v->nval);
	return 0;
}

/* Shapes of inputs and initializers; the declared shapes of the others
 * (value_info, outputs) are only a fallback for what inference leaves
 * unknown. Parameters are the initializers, or - in a model exported
 * without them (export_params=False) - the graph inputs after the first,
 * which is the data. */
static int declare_values(struct builder *b)
{
	const struct onnx_model *m = b->m;
	bool has_init = m->nvals[ONNX_INIT] > 0;
	int32_t id;
	int err;

	for (int k = 0; k < ONNX_ATTR_T; k++)
		for (uint32_t i = 0; i < m->nvals[k]; i++) {
			if (!m->vals[k][i].name.n)
				continue;
			err = tensor_id(b, m->vals[k][i].name, &id);
			if (err)
				return err;
			if (k == ONNX_OUTPUT || k == ONNX_VINFO) {
				if (b->t[id].vi < 0 && m->vals[k][i].rank >= 0) {
					b->t[id].vi = (int32_t)i;
					b->t[id].vi_kind = (uint8_t)k;
				}
				continue;
			}
			err = declare_tensor(b, &m->vals[k][i], id);
			if (err)
				return err;
			if (k == ONNX_INIT || (k == ONNX_INPUT && !has_init && i > 0)) {
				b->t[id].kind = T_PARAM;
				b->t[id].param = id;
			}
		}
	return 0;
}

static void data_input_stats(struct builder *b, const struct tinfo *t)
{
	if (t->rank > 0 && t->dims[0] > 0)
		b->batch = (double)t->dims[0];
	if (t->rank == 4 && t->dims[2] > 0 && t->dims[3] > 0)	/* [N, C, H, W] */
		b->st.input_res = sqrt((double)t->dims[2] * (double)t->dims[3]);
}

static int data_inputs(struct builder *b)
{
	const struct onnx_model *m = b->m;
	static const int32_t zero[4];
	int32_t id, v;
	int err, ndata = 0;

	for (uint32_t i = 0; i < m->nvals[ONNX_INPUT]; i++) {
		if (!m->vals[ONNX_INPUT][i].name.n)
			continue;
		err = tensor_id(b, m->vals[ONNX_INPUT][i].name, &id);
		if (err)
			return err;
		if (b->t[id].kind != T_UNDEF)
			continue;
		err = add_node(b, TP_INPUT, zero, &v);
		if (!err)
			err = set_rep(b, id, &v, 1);
		if (err)
			return err;
		if (!ndata++)
			data_input_stats(b, &b->t[id]);
	}
	if (!ndata)
		return tp_fail(-EINVAL, "ONNX graph has no data input (every input is a parameter)");
	return 0;
}

static void finish_stats(struct builder *b, uint32_t onnx_nodes)
{
	for (uint32_t i = 0; i < b->nt; i++)
		if (b->t[i].trainable && elems(&b->t[i]) > 0)
			b->st.params += elems(&b->t[i]);
	b->st.flops /= b->batch;
	for (int k = 0; k < TP_FLOP_CLASSES; k++)
		b->st.flops_by[k] /= b->batch;
	b->st.act_elems /= b->batch;
	b->st.onnx_nodes = onnx_nodes;
	b->st.shapes_known = b->weighted > 0 && b->weighted_shaped == b->weighted &&
		!b->st.unresolved;
}

/* The distinct op types of the model, for the out-of-distribution check. */
static int collect_op_types(const struct onnx_model *m, struct tp_graph *g)
{
	for (uint32_t i = 0; i < m->nnodes; i++) {
		struct pb_str op = m->nodes[i].op_type;
		int k = 0;

		while (k < g->nops && !pb_str_eq(op, g->ops[k]))
			k++;
		if (k < g->nops || op.n >= sizeof(g->ops[0]))
			continue;
		if (!(g->nops & (g->nops + 1))) {	/* 0, 1, 3, 7, ...: double */
			void *p = realloc(g->ops, 2 * (g->nops + 1) * sizeof(g->ops[0]));

			if (!p)
				return tp_fail(-ENOMEM, "out of memory importing ONNX");
			g->ops = p;
		}
		memcpy(g->ops[g->nops], op.p, op.n);
		g->ops[g->nops++][op.n] = '\0';
	}
	return 0;
}

/* Shapes of every node output, in node order, into dump (tests). */
static int dump_shapes(const struct builder *b, struct onnx_value **dump, uint32_t *n)
{
	const struct onnx_model *m = b->m;
	uint32_t k = 0;

	*dump = calloc(m->nstrs + 1, sizeof(**dump));
	if (!*dump)
		return tp_fail(-ENOMEM, "out of memory");
	for (uint32_t i = 0; i < m->nnodes; i++)
		for (uint32_t o = 0; o < m->nodes[i].nout; o++) {
			struct pb_str name = m->strs[m->nodes[i].out0 + o];
			uint32_t h = hash_str(name) & (b->nslot - 1);

			if (!name.n)
				continue;
			while (b->slot[h] && !str_same(b->t[b->slot[h] - 1].name, name))
				h = (h + 1) & (b->nslot - 1);
			if (!b->slot[h])
				continue;
			(*dump)[k].name = name;
			(*dump)[k].rank = b->t[b->slot[h] - 1].rank;
			memcpy((*dump)[k].dims, b->t[b->slot[h] - 1].dims, sizeof((*dump)[k].dims));
			k++;
		}
	*n = k;
	return 0;
}

static int import_model(const struct onnx_model *m, unsigned flags, struct tp_graph **out,
			struct onnx_value **dump, uint32_t *ndump)
{
	int32_t *in = malloc(4 * REP_MAX * sizeof(*in)), *outs = malloc(4 * REP_MAX * sizeof(*in));
	int32_t *preds = malloc(REP_MAX * sizeof(*preds));
	struct builder b;
	int err;

	err = builder_init(&b, m, flags);
	if (err)
		goto out_free;
	if (!in || !outs || !preds) {
		err = tp_fail(-ENOMEM, "out of memory importing ONNX");
		goto out_builder;
	}
	err = declare_values(&b);
	if (!err)
		err = data_inputs(&b);
	for (uint32_t i = 0; !err && i < m->nnodes; i++)
		err = process_node(&b, &m->nodes[i], in, outs, preds);
	if (err)
		goto out_builder;
	if (dump) {
		err = dump_shapes(&b, dump, ndump);
		goto out_builder;
	}
	finish_stats(&b, m->nnodes);
	err = tp_graph_build(b.n, b.prim, (const int32_t (*)[4])b.shape, b.ne,
			     (const int32_t (*)[2])b.edge, &b.st, out);
	if (!err)
		err = collect_op_types(m, *out);
	if (err && *out) {
		tp_graph_free(*out);
		*out = NULL;
	}
out_builder:
	builder_free(&b);
out_free:
	free(in);
	free(outs);
	free(preds);
	return err;
}

int tp_onnx_infer_shapes(const struct onnx_model *m, unsigned flags, struct onnx_value **out,
			 uint32_t *n)
{
	tp_clear_error();
	return import_model(m, flags, NULL, out, n);
}

int tp_import_onnx(const void *buf, size_t len, unsigned flags, struct tp_graph **out)
{
	struct onnx_model m;
	int err;

	tp_clear_error();
	*out = NULL;
	err = onnx_parse(buf, len, &m);
	if (err)
		return err;
	err = import_model(&m, flags, out, NULL, NULL);
	onnx_free(&m);
	return err;
}

int tp_graph_from_onnx(const void *buf, size_t len, struct tp_graph **out)
{
	return tp_import_onnx(buf, len, 0, out);
}

int tp_graph_load_onnx(const char *path, struct tp_graph **out)
{
	uint8_t *buf;
	size_t len;
	int err;

	tp_clear_error();
	err = tp_read_file(path, ONNX_MAX_FILE, &buf, &len);
	if (err)
		return err;
	err = tp_graph_from_onnx(buf, len, out);
	free(buf);
	if (err && tp_errmsg()[0]) {
		char msg[400];

		snprintf(msg, sizeof(msg), "%s", tp_errmsg());
		return tp_fail(err, "%s: %s", path, msg);
	}
	return err;
}
