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
#define ONNX_MAX_INTS	8		/* ints kept per attribute */

struct pb_str {
	const char *p;
	uint32_t n;
};

struct onnx_attr {
	struct pb_str name;
	int64_t i;
	int nints;		/* kept ints, at most ONNX_MAX_INTS */
	int64_t ints[ONNX_MAX_INTS];
};

struct onnx_node {
	struct pb_str op_type, name, domain;
	uint32_t in0, nin;	/* range in onnx_model.strs */
	uint32_t out0, nout;
	uint32_t attr0, nattr;	/* range in onnx_model.attrs */
};

/* A named tensor with a (maybe partly) known shape. */
struct onnx_value {
	struct pb_str name;
	int rank;		/* -1: no shape */
	int64_t dims[ONNX_MAX_RANK];	/* -1: symbolic or unknown */
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
	/* inputs, outputs, initializers, value_info in one array by kind */
	struct onnx_value *vals[4];
	uint32_t nvals[4], cap_vals[4];
};

enum { ONNX_INPUT, ONNX_OUTPUT, ONNX_INIT, ONNX_VINFO };

/* 0, or -EBADMSG / -E2BIG / -ENOMEM with tp_errmsg() set */
int onnx_parse(const void *buf, size_t len, struct onnx_model *m);
void onnx_free(struct onnx_model *m);

const struct onnx_attr *onnx_attr_find(const struct onnx_model *m,
				       const struct onnx_node *n, const char *name);
int pb_str_eq(struct pb_str s, const char *c);

#endif
