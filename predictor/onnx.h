/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small reader of the ONNX ModelProto protobuf: only the fields the
 * predictor needs (graph nodes, their inputs/outputs/attributes, graph
 * inputs/outputs, initializer and value_info shapes). Strings point into
 * the caller's buffer, which must outlive the model.
 */
#ifndef TANDEM_PREDICT_ONNX_H
#define TANDEM_PREDICT_ONNX_H

#include <stddef.h>
#include <stdint.h>

#define ONNX_MAX_FILE	(512u << 20)	/* bigger files are rejected */
#define ONNX_MAX_ITEMS	(1u << 22)	/* nodes, names, values, attributes */
#define ONNX_MAX_RANK	8
#define ONNX_MAX_INTS	8		/* ints (floats) kept per attribute */
#define ONNX_MAX_VALS	64		/* values kept of a constant tensor (shape data) */

struct pb_str {
	const char *p;
	uint32_t n;
};

struct onnx_attr {
	struct pb_str name;
	int64_t i;
	float f;
	struct pb_str s;
	int nints;		/* kept ints, at most ONNX_MAX_INTS */
	int nints_all;		/* ints in the file */
	int64_t ints[ONNX_MAX_INTS];
	int nfloats;		/* kept floats */
	int nfloats_all;
	float floats[ONNX_MAX_INTS];
	int32_t t;		/* a tensor value: index in vals[ONNX_ATTR_T], -1 none */
};

struct onnx_node {
	struct pb_str op_type, name, domain;
	uint32_t in0, nin;	/* range in onnx_model.strs */
	uint32_t out0, nout;
	uint32_t attr0, nattr;	/* range in onnx_model.attrs */
};

/* TensorProto.DataType values the reader decodes */
enum {
	ONNX_FLOAT = 1, ONNX_UINT8 = 2, ONNX_INT8 = 3, ONNX_UINT16 = 4, ONNX_INT16 = 5,
	ONNX_INT32 = 6, ONNX_INT64 = 7, ONNX_BOOL = 9, ONNX_DOUBLE = 11,
};

/*
 * A named tensor with a (maybe partly) known shape. Initializers and
 * tensor attributes also carry their element type and, when they have at
 * most ONNX_MAX_VALS elements of a decoded type, their values (as double,
 * in onnx_model.cvals), which shape inference folds.
 */
struct onnx_value {
	struct pb_str name;
	int rank;		/* -1: no shape */
	int64_t dims[ONNX_MAX_RANK];	/* -1: symbolic or unknown */
	int32_t dtype;		/* TensorProto.DataType, 0 unknown */
	int32_t nval;		/* values kept, -1: none */
	uint32_t val0;		/* first value in onnx_model.cvals */
};

struct onnx_model {
	int64_t ir_version;
	int64_t opset;		/* default domain */
	struct onnx_node *nodes;
	uint32_t nnodes, cap_nodes;
	struct pb_str *strs;
	uint32_t nstrs, cap_strs;
	struct onnx_attr *attrs;
	uint32_t nattrs, cap_attrs;
	/* inputs, outputs, initializers, value_info, attribute tensors by kind */
	struct onnx_value *vals[5];
	uint32_t nvals[5], cap_vals[5];
	double *cvals;		/* values of small constant tensors */
	uint32_t ncvals, cap_cvals;
};

enum { ONNX_INPUT, ONNX_OUTPUT, ONNX_INIT, ONNX_VINFO, ONNX_ATTR_T, ONNX_NKINDS };

/* 0, or -EBADMSG / -E2BIG / -ENOMEM with tp_errmsg() set */
int onnx_parse(const void *buf, size_t len, struct onnx_model *m);
void onnx_free(struct onnx_model *m);

const struct onnx_attr *onnx_attr_find(const struct onnx_model *m,
				       const struct onnx_node *n, const char *name);
int pb_str_eq(struct pb_str s, const char *c);

#endif
