/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ONNX importer's state, shared by import.c (tensor classes, GHN-2
 * nodes), shape.c (static shape inference) and fold.c (constant folding of
 * shape arithmetic), and one node's view of it (import_ctx.c).
 */
#ifndef TANDEM_PREDICT_IMPORT_CTX_H
#define TANDEM_PREDICT_IMPORT_CTX_H

#include <stdbool.h>

#include "internal.h"
#include "onnx.h"

enum tkind { T_UNDEF, T_ACT, T_PARAM, T_CONST };

struct tinfo {
	struct pb_str name;
	uint8_t kind;
	uint8_t trainable;	/* a parameter leaf used as a weight */
	uint8_t vi_kind;	/* where a declared shape came from (ONNX_OUTPUT, ONNX_VINFO) */
	int32_t vi;		/* index there, -1 none: the fallback when inference fails */
	int32_t param;		/* T_PARAM: tensor id of the parameter leaf */
	int rank;		/* -1 unknown */
	int64_t dims[ONNX_MAX_RANK];	/* -1 unknown */
	int32_t dtype;		/* TensorProto.DataType, 0 unknown (float assumed) */
	int32_t nval;		/* known values (row-major), -1 none */
	uint32_t val0;		/* first value in builder.cv */
	uint32_t rep0, nrep;	/* T_ACT: GHN nodes in builder.pool */
};

struct builder {
	const struct onnx_model *m;
	unsigned flags;		/* TP_IMPORT_* */
	struct tinfo *t;
	uint32_t nt, cap_t;
	uint32_t *slot;		/* open-addressing hash of tensor names -> id + 1 */
	uint32_t nslot;
	uint8_t *prim;
	int32_t (*shape)[4];
	int n, cap_n;
	int32_t (*edge)[2];
	int ne, cap_e;
	int32_t *pool;
	uint32_t npool, cap_pool;
	double *cv;		/* constant values of tensors */
	uint32_t ncv, cap_cv;
	struct tp_graph_stats st;
	int weighted, weighted_shaped;
	double batch;
};

/* room for element n of the array *p of *cap elements of size bytes, doubling it */
int tp_grow(void **p, int *cap, int n, size_t size);
double tp_tensor_elems(const struct tinfo *t);	/* -1 when not fully known */

/* One node's context for shape inference and folding. */
struct sctx {
	struct builder *b;
	const struct onnx_node *nd;
	const int32_t *in;	/* [nin] tensor ids, -1: omitted input */
	int nin;
	const int32_t *out;	/* [nout] tensor ids, -1: omitted output */
	int nout;
};

/* shape.c: shapes (and, through fold.c, values) of the node's outputs */
int tp_infer_node(struct sctx *c);
/* fold.c: values of the outputs when the inputs' values are known */
int tp_fold_node(struct sctx *c);

/* A node's inputs, outputs and attributes (import_ctx.c). */
const struct tinfo *sc_in(const struct sctx *c, int i);
struct tinfo *sc_out(const struct sctx *c, int k);
int64_t sc_attr_i(const struct sctx *c, const char *name, int64_t def);
int sc_attr_ints(const struct sctx *c, const char *name, int64_t *v, int max);
/* a value as a dimension-sized integer (saturated: INT64_MAX ends of Slice) */
int64_t sc_to_i64(double x);
/* values of input i as integers (at most max), -1 when unknown */
int sc_in_ints(const struct sctx *c, int i, int64_t *v, int max);
const double *sc_vals(const struct builder *b, const struct tinfo *t);
int sc_set_vals(struct builder *b, struct tinfo *t, const double *v, int n);
bool sc_known(const struct tinfo *t);	/* rank and every dim known */
/* the model's opset (17 when it names none) */
int sc_opset(const struct sctx *c);
/* axis in [-rank, rank) -> [0, rank), -1 when out of range */
int sc_norm_axis(int64_t a, int rank);
/* Slice's starts, ends, axes (normalised), steps; their count or -1 */
int tp_slice_args(const struct sctx *c, int rank, int64_t *st, int64_t *en, int64_t *ax,
		  int64_t *sp);
/* the [lo, hi) dims a Shape node returns */
void tp_shape_range(const struct sctx *c, int rank, int *lo, int *hi);

#endif
