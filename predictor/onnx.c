// SPDX-License-Identifier: GPL-2.0
/*
 * Protobuf wire-format reader for the subset of onnx.proto the predictor
 * uses. Every read is bounded by the enclosing message; malformed input is
 * an -EBADMSG with a message naming what was being read. Field numbers are
 * those of onnx/onnx.proto (IR version 8).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "onnx.h"

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

struct pb {
	const uint8_t *p, *end;
	const char *what;	/* message being read, for errors */
};

static int pb_bad(const struct pb *b, const char *why)
{
	return tp_fail(-EBADMSG, "malformed ONNX protobuf: %s in %s", why, b->what);
}

static int pb_varint(struct pb *b, uint64_t *v)
{
	uint64_t x = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		if (b->p >= b->end)
			return pb_bad(b, "truncated varint");
		x |= (uint64_t)(*b->p & 0x7f) << shift;
		if (!(*b->p++ & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return pb_bad(b, "varint longer than 10 bytes");
}

static int pb_key(struct pb *b, uint32_t *field, uint32_t *wt)
{
	uint64_t k;
	int err = pb_varint(b, &k);

	if (err)
		return err;
	*field = (uint32_t)(k >> 3);
	*wt = (uint32_t)(k & 7);
	if (!*field || k >> 32)
		return pb_bad(b, "invalid field number");
	return 0;
}

/* A length-delimited field as a sub-reader. */
static int pb_len(struct pb *b, struct pb *sub, const char *what)
{
	uint64_t n;
	int err = pb_varint(b, &n);

	if (err)
		return err;
	if (n > (uint64_t)(b->end - b->p))
		return pb_bad(b, "length beyond the end of the message");
	sub->p = b->p;
	sub->end = b->p + n;
	sub->what = what;
	b->p += n;
	return 0;
}

static int pb_skip(struct pb *b, uint32_t wt)
{
	struct pb sub;
	uint64_t v;

	switch (wt) {
	case WT_VARINT:
		return pb_varint(b, &v);
	case WT_I64:
	case WT_I32: {
		size_t n = wt == WT_I64 ? 8 : 4;

		if ((size_t)(b->end - b->p) < n)
			return pb_bad(b, "truncated fixed-width field");
		b->p += n;
		return 0;
	}
	case WT_LEN:
		return pb_len(b, &sub, b->what);
	default:		/* groups (3, 4) are not used by onnx.proto */
		return pb_bad(b, "unsupported wire type");
	}
}

static int pb_string(struct pb *b, uint32_t wt, struct pb_str *s)
{
	struct pb sub;
	int err;

	if (wt != WT_LEN)
		return pb_bad(b, "string field with a non-length wire type");
	err = pb_len(b, &sub, b->what);
	if (err)
		return err;
	s->p = (const char *)sub.p;
	s->n = (uint32_t)(sub.end - sub.p);
	return 0;
}

static int pb_int(struct pb *b, uint32_t wt, int64_t *v)
{
	uint64_t u = 0;
	int err;

	if (wt != WT_VARINT)
		return pb_bad(b, "integer field with a non-varint wire type");
	err = pb_varint(b, &u);
	*v = (int64_t)u;
	return err;
}

int pb_str_eq(struct pb_str s, const char *c)
{
	size_t n = strlen(c);

	return s.n == n && !memcmp(s.p, c, n);
}

/* Grow an array to hold one more item; caps the item count. */
static int grow(void **arr, uint32_t *cap, uint32_t n, size_t size)
{
	uint32_t ncap;
	void *p;

	if (n < *cap)
		return 0;
	if (n >= ONNX_MAX_ITEMS)
		return tp_fail(-E2BIG, "ONNX graph has more than %u items of one kind",
			       ONNX_MAX_ITEMS);
	ncap = *cap ? *cap * 2 : 64;
	p = realloc(*arr, (size_t)ncap * size);
	if (!p)
		return tp_fail(-ENOMEM, "out of memory reading ONNX");
	*arr = p;
	*cap = ncap;
	return 0;
}

/* ---- TensorShapeProto / TypeProto / ValueInfoProto / TensorProto ---- */

static int parse_dim(struct pb *b, int64_t *dim)
{
	uint32_t f, wt;
	int err;

	*dim = -1;
	while (b->p < b->end) {
		err = pb_key(b, &f, &wt);
		if (!err && f == 1) {
			err = pb_int(b, wt, dim);
			if (!err && *dim < 0)
				err = pb_bad(b, "negative dimension");
		} else if (!err) {
			err = pb_skip(b, wt);	/* dim_param, denotation */
		}
		if (err)
			return err;
	}
	return 0;
}

static int parse_shape(struct pb *b, struct onnx_value *v)
{
	struct pb sub;
	uint32_t f, wt;
	int err;

	v->rank = 0;
	while (b->p < b->end) {
		err = pb_key(b, &f, &wt);
		if (err)
			return err;
		if (f != 1 || wt != WT_LEN) {
			err = pb_skip(b, wt);
			if (err)
				return err;
			continue;
		}
		err = pb_len(b, &sub, "TensorShapeProto.Dimension");
		if (err)
			return err;
		if (v->rank >= ONNX_MAX_RANK)
			return tp_fail(-E2BIG, "ONNX tensor of rank > %d", ONNX_MAX_RANK);
		err = parse_dim(&sub, &v->dims[v->rank++]);
		if (err)
			return err;
	}
	return 0;
}

/* Walk TypeProto -> tensor_type(1) -> shape(2); depth says where we are. */
static int parse_type(struct pb *b, struct onnx_value *v, int depth)
{
	struct pb sub;
	uint32_t f, wt;
	int err;

	while (b->p < b->end) {
		err = pb_key(b, &f, &wt);
		if (err)
			return err;
		if (wt == WT_LEN && depth == 0 && f == 1) {
			err = pb_len(b, &sub, "TypeProto.Tensor");
			if (!err)
				err = parse_type(&sub, v, 1);
		} else if (wt == WT_LEN && depth == 1 && f == 2) {
			err = pb_len(b, &sub, "TensorShapeProto");
			if (!err)
				err = parse_shape(&sub, v);
		} else {
			err = pb_skip(b, wt);
		}
		if (err)
			return err;
	}
	return 0;
}

static int parse_value_info(struct pb *b, struct onnx_value *v)
{
	struct pb sub;
	uint32_t f, wt;
	int err;

	while (b->p < b->end) {
		err = pb_key(b, &f, &wt);
		if (err)
			return err;
		if (f == 1) {
			err = pb_string(b, wt, &v->name);
		} else if (f == 2 && wt == WT_LEN) {
			err = pb_len(b, &sub, "TypeProto");
			if (!err)
				err = parse_type(&sub, v, 0);
		} else {
			err = pb_skip(b, wt);
		}
		if (err)
			return err;
	}
	return 0;
}

/* repeated int64, packed (one LEN field) or not (one VARINT per item);
 * seen (may be NULL) counts them all */
static int parse_ints(struct pb *b, uint32_t wt, int64_t *out, int *n, int max, bool strict,
		      int *seen)
{
	struct pb sub;
	int64_t v;
	int err;

	if (wt == WT_VARINT) {
		err = pb_int(b, wt, &v);
		if (err)
			return err;
		if (seen)
			(*seen)++;
		if (*n < max)
			out[(*n)++] = v;
		else if (strict)
			return tp_fail(-E2BIG, "ONNX tensor of rank > %d", max);
		return 0;
	}
	err = pb_len(b, &sub, b->what);
	while (!err && sub.p < sub.end) {
		err = pb_int(&sub, WT_VARINT, &v);
		if (err)
			break;
		if (seen)
			(*seen)++;
		if (*n < max)
			out[(*n)++] = v;
		else if (strict)
			return tp_fail(-E2BIG, "ONNX tensor of rank > %d", max);
	}
	return err;
}

/* Values of a small tensor while its fields are read (in any order). */
struct tensor_data {
	struct pb_str raw;	/* raw_data; p NULL when absent */
	double v[ONNX_MAX_VALS];
	int n;			/* typed values seen (beyond ONNX_MAX_VALS: counted only) */
};

static void td_add(struct tensor_data *td, double x)
{
	if (td->n < ONNX_MAX_VALS)
		td->v[td->n] = x;
	td->n++;
}

static uint64_t le_bytes(const uint8_t *p, int n)
{
	uint64_t u = 0;

	for (int i = 0; i < n; i++)
		u |= (uint64_t)p[i] << (8 * i);
	return u;
}

/* One element of a typed field: fixed-width (size 4 or 8) or a varint. */
static int read_elem(struct pb *b, int size, uint64_t *u)
{
	if (!size)
		return pb_varint(b, u);
	if (b->end - b->p < size)
		return pb_bad(b, "truncated tensor data");
	*u = le_bytes(b->p, size);
	b->p += size;
	return 0;
}

static double elem_value(uint32_t f, uint64_t u)
{
	uint32_t w = (uint32_t)u;
	float x;
	double d;

	if (f == 4) {
		memcpy(&x, &w, 4);
		return x;
	}
	if (f == 10) {
		memcpy(&d, &u, 8);
		return d;
	}
	return f == 5 ? (double)(int32_t)u : (double)(int64_t)u;
}

/* One typed repeated field: float_data (4), int32_data (5), int64_data (7)
 * or double_data (10), packed (one length-delimited field) or not (one
 * element per field). */
static int typed_values(struct pb *b, uint32_t f, uint32_t wt, struct tensor_data *td)
{
	int size = f == 4 ? 4 : f == 10 ? 8 : 0;	/* fixed-width, else varints */
	uint32_t want = size == 4 ? WT_I32 : size == 8 ? WT_I64 : WT_VARINT;
	struct pb sub;
	uint64_t u;
	int err;

	if (wt != WT_LEN) {
		if (wt != want)
			return pb_bad(b, "tensor data with a wrong wire type");
		err = read_elem(b, size, &u);
		if (!err)
			td_add(td, elem_value(f, u));
		return err;
	}
	err = pb_len(b, &sub, b->what);
	while (!err && sub.p < sub.end) {
		err = read_elem(&sub, size, &u);
		if (!err)
			td_add(td, elem_value(f, u));
	}
	return err;
}

static int dtype_size(int32_t t)
{
	switch (t) {
	case ONNX_UINT8: case ONNX_INT8: case ONNX_BOOL: return 1;
	case ONNX_UINT16: case ONNX_INT16: return 2;
	case ONNX_FLOAT: case ONNX_INT32: return 4;
	case ONNX_INT64: case ONNX_DOUBLE: return 8;
	default: return 0;
	}
}

static double raw_value(const uint8_t *p, int32_t t)
{
	uint64_t u = le_bytes(p, dtype_size(t));
	uint32_t w = (uint32_t)u;
	float f;
	double d;

	switch (t) {
	case ONNX_INT8: return (int8_t)u;
	case ONNX_INT16: return (int16_t)u;
	case ONNX_INT32: return (int32_t)u;
	case ONNX_INT64: return (double)(int64_t)u;
	case ONNX_FLOAT: memcpy(&f, &w, 4); return f;
	case ONNX_DOUBLE: memcpy(&d, &u, 8); return d;
	default: return (double)u;	/* unsigned, bool */
	}
}

/* Keep the values of a tensor of at most ONNX_MAX_VALS elements. */
static int keep_values(struct onnx_model *m, struct pb *b, struct onnx_value *v,
		       const struct tensor_data *td)
{
	int size = dtype_size(v->dtype);
	double count = 1;
	int err;

	for (int i = 0; i < v->rank; i++)
		count *= (double)v->dims[i];
	if (!size || count > ONNX_MAX_VALS)
		return 0;
	if (td->raw.p && td->raw.n != count * size)
		return pb_bad(b, "raw_data size does not match the tensor's shape");
	if (!td->raw.p && td->n != count)
		return td->n ? pb_bad(b, "tensor data count does not match the tensor's shape") : 0;
	for (int i = 0; i < (int)count; i++) {
		err = grow((void **)&m->cvals, &m->cap_cvals, m->ncvals, sizeof(*m->cvals));
		if (err)
			return err;
		m->cvals[m->ncvals++] = td->raw.p ?
			raw_value((const uint8_t *)td->raw.p + (size_t)i * size, v->dtype) : td->v[i];
	}
	v->nval = (int32_t)count;
	v->val0 = m->ncvals - (uint32_t)count;
	return 0;
}

static int parse_tensor(struct onnx_model *m, struct pb *b, struct onnx_value *v)
{
	struct tensor_data td = { { NULL, 0 }, { 0 }, 0 };
	struct pb start = *b;
	uint32_t f, wt;
	int64_t dt = 0;
	int err;

	v->rank = 0;
	while (b->p < b->end) {
		err = pb_key(b, &f, &wt);
		if (err)
			return err;
		if (f == 1)
			err = parse_ints(b, wt, v->dims, &v->rank, ONNX_MAX_RANK, true, NULL);
		else if (f == 2)
			err = pb_int(b, wt, &dt);
		else if (f == 8)
			err = pb_string(b, wt, &v->name);
		else if (f == 9)
			err = pb_string(b, wt, &td.raw);
		else if (f == 4 || f == 5 || f == 7 || f == 10)
			err = typed_values(b, f, wt, &td);
		else
			err = pb_skip(b, wt);	/* segment, external data, ... */
		if (err)
			return err;
	}
	for (int i = 0; i < v->rank; i++)
		if (v->dims[i] < 0)
			return pb_bad(b, "negative initializer dimension");
	v->dtype = dt > 0 && dt < 64 ? (int32_t)dt : 0;
	return keep_values(m, &start, v, &td);
}

/* ---- AttributeProto / NodeProto ---- */

static int add_value(struct onnx_model *m, int kind, struct pb *sub);

static int parse_floats(struct pb *b, uint32_t wt, struct onnx_attr *a)
{
	struct tensor_data td = { { NULL, 0 }, { 0 }, 0 };
	int err = typed_values(b, 4, wt, &td);

	for (int i = 0; !err && i < td.n && a->nfloats < ONNX_MAX_INTS && i < ONNX_MAX_VALS; i++)
		a->floats[a->nfloats++] = (float)td.v[i];
	a->nfloats_all += td.n;
	return err;
}

static int parse_attr(struct onnx_model *m, struct pb *b, struct onnx_attr *a)
{
	struct pb sub;
	uint32_t f, wt;
	int err;

	memset(a, 0, sizeof(*a));
	a->t = -1;
	while (b->p < b->end) {
		err = pb_key(b, &f, &wt);
		if (err)
			return err;
		if (f == 1) {
			err = pb_string(b, wt, &a->name);
		} else if (f == 2 && wt == WT_I32) {
			uint64_t u = 0;

			err = read_elem(b, 4, &u);
			a->f = (float)elem_value(4, u);
		} else if (f == 3) {
			err = pb_int(b, wt, &a->i);
		} else if (f == 4) {
			err = pb_string(b, wt, &a->s);
		} else if (f == 5 && wt == WT_LEN) {
			err = pb_len(b, &sub, "AttributeProto.t");
			if (!err)
				err = add_value(m, ONNX_ATTR_T, &sub);
			a->t = (int32_t)m->nvals[ONNX_ATTR_T] - 1;
		} else if (f == 7) {
			err = parse_floats(b, wt, a);
		} else if (f == 8) {
			err = parse_ints(b, wt, a->ints, &a->nints, ONNX_MAX_INTS, false,
					 &a->nints_all);
		} else {
			err = pb_skip(b, wt);
		}
		if (err)
			return err;
	}
	return 0;
}

/* One pass over a NodeProto collecting the strings of one field. */
static int node_strings(struct onnx_model *m, struct pb b, uint32_t field, uint32_t *first,
			uint32_t *count)
{
	uint32_t f, wt;
	int err;

	*first = m->nstrs;
	*count = 0;
	while (b.p < b.end) {
		err = pb_key(&b, &f, &wt);
		if (err)
			return err;
		if (f != field) {
			err = pb_skip(&b, wt);
			if (err)
				return err;
			continue;
		}
		err = grow((void **)&m->strs, &m->cap_strs, m->nstrs, sizeof(*m->strs));
		if (!err)
			err = pb_string(&b, wt, &m->strs[m->nstrs]);
		if (err)
			return err;
		m->nstrs++;
		(*count)++;
	}
	return 0;
}

static int node_attrs(struct onnx_model *m, struct pb b, struct onnx_node *n)
{
	struct pb sub;
	uint32_t f, wt;
	int err;

	n->attr0 = m->nattrs;
	while (b.p < b.end) {
		err = pb_key(&b, &f, &wt);
		if (err)
			return err;
		if (f != 5 || wt != WT_LEN) {
			err = pb_skip(&b, wt);
			if (err)
				return err;
			continue;
		}
		err = pb_len(&b, &sub, "AttributeProto");
		if (!err)
			err = grow((void **)&m->attrs, &m->cap_attrs, m->nattrs,
				   sizeof(*m->attrs));
		if (!err)
			err = parse_attr(m, &sub, &m->attrs[m->nattrs]);
		if (err)
			return err;
		m->nattrs++;
		n->nattr++;
	}
	return 0;
}

static int parse_node(struct onnx_model *m, struct pb b, struct onnx_node *n)
{
	struct pb scan = b;
	uint32_t f, wt;
	int err;

	memset(n, 0, sizeof(*n));
	while (scan.p < scan.end) {
		err = pb_key(&scan, &f, &wt);
		if (!err && f == 3)
			err = pb_string(&scan, wt, &n->name);
		else if (!err && f == 4)
			err = pb_string(&scan, wt, &n->op_type);
		else if (!err && f == 7)
			err = pb_string(&scan, wt, &n->domain);
		else if (!err)
			err = pb_skip(&scan, wt);
		if (err)
			return err;
	}
	if (!n->op_type.n)
		return pb_bad(&b, "node without op_type");
	err = node_strings(m, b, 1, &n->in0, &n->nin);
	if (!err)
		err = node_strings(m, b, 2, &n->out0, &n->nout);
	if (!err)
		err = node_attrs(m, b, n);
	return err;
}

/* ---- GraphProto / ModelProto ---- */

static int add_value(struct onnx_model *m, int kind, struct pb *sub)
{
	struct onnx_value *v;
	int err;

	err = grow((void **)&m->vals[kind], &m->cap_vals[kind], m->nvals[kind],
		   sizeof(struct onnx_value));
	if (err)
		return err;
	v = &m->vals[kind][m->nvals[kind]];
	memset(v, 0, sizeof(*v));
	v->rank = -1;
	v->nval = -1;
	err = kind == ONNX_INIT || kind == ONNX_ATTR_T ? parse_tensor(m, sub, v) :
		parse_value_info(sub, v);
	if (err)
		return err;
	m->nvals[kind]++;
	return 0;
}

static int graph_field(struct onnx_model *m, struct pb *b, uint32_t f, uint32_t wt)
{
	static const struct {
		uint32_t field;
		int kind;
		const char *what;
	} vfields[] = {
		{ 11, ONNX_INPUT, "GraphProto.input" },
		{ 12, ONNX_OUTPUT, "GraphProto.output" },
		{ 5, ONNX_INIT, "TensorProto" },
		{ 13, ONNX_VINFO, "GraphProto.value_info" },
	};
	struct pb sub;
	int err;

	if (wt != WT_LEN)
		return pb_skip(b, wt);
	if (f == 1) {
		err = pb_len(b, &sub, "NodeProto");
		if (!err)
			err = grow((void **)&m->nodes, &m->cap_nodes, m->nnodes,
				   sizeof(*m->nodes));
		if (!err)
			err = parse_node(m, sub, &m->nodes[m->nnodes]);
		if (!err)
			m->nnodes++;
		return err;
	}
	for (size_t i = 0; i < sizeof(vfields) / sizeof(vfields[0]); i++) {
		if (f != vfields[i].field)
			continue;
		err = pb_len(b, &sub, vfields[i].what);
		return err ? err : add_value(m, vfields[i].kind, &sub);
	}
	return pb_skip(b, wt);
}

static int parse_opset(struct pb *b, struct onnx_model *m)
{
	struct pb_str domain = { 0 };
	int64_t version = 0;
	uint32_t f, wt;
	int err;

	while (b->p < b->end) {
		err = pb_key(b, &f, &wt);
		if (!err && f == 1)
			err = pb_string(b, wt, &domain);
		else if (!err && f == 2)
			err = pb_int(b, wt, &version);
		else if (!err)
			err = pb_skip(b, wt);
		if (err)
			return err;
	}
	if (!domain.n || pb_str_eq(domain, "ai.onnx"))
		m->opset = version;
	return 0;
}

static int parse_graph(struct pb *b, struct onnx_model *m)
{
	uint32_t f, wt;
	int err;

	while (b->p < b->end) {
		err = pb_key(b, &f, &wt);
		if (!err)
			err = graph_field(m, b, f, wt);
		if (err)
			return err;
	}
	return 0;
}

static int parse_model(struct pb *b, struct onnx_model *m, int *graphs)
{
	struct pb sub;
	uint32_t f, wt;
	int err;

	while (b->p < b->end) {
		err = pb_key(b, &f, &wt);
		if (err)
			return err;
		if (f == 1) {
			err = pb_int(b, wt, &m->ir_version);
		} else if (f == 7 && wt == WT_LEN) {
			/* a repeated message field merges: a second graph extends the first */
			err = pb_len(b, &sub, "GraphProto");
			if (!err)
				err = parse_graph(&sub, m);
			(*graphs)++;
		} else if (f == 8 && wt == WT_LEN) {
			err = pb_len(b, &sub, "OperatorSetIdProto");
			if (!err)
				err = parse_opset(&sub, m);
		} else {
			err = pb_skip(b, wt);
		}
		if (err)
			return err;
	}
	return 0;
}

int onnx_parse(const void *buf, size_t len, struct onnx_model *m)
{
	struct pb b = { buf, (const uint8_t *)buf + len, "ModelProto" };
	int graphs = 0, err;

	memset(m, 0, sizeof(*m));
	if (len > ONNX_MAX_FILE) {
		err = tp_fail(-EFBIG, "ONNX model of %zu bytes exceeds the %u MiB limit",
			      len, ONNX_MAX_FILE >> 20);
		goto out_free;
	}
	err = parse_model(&b, m, &graphs);
	if (err)
		goto out_free;
	if (!graphs || !m->ir_version) {
		err = tp_fail(-EBADMSG, "not an ONNX model: %s",
			      !graphs ? "no graph" : "no ir_version");
		goto out_free;
	}
	if (!m->nnodes || !m->nvals[ONNX_INPUT]) {
		err = tp_fail(-EBADMSG, "ONNX graph without %s",
			      !m->nnodes ? "nodes" : "inputs");
		goto out_free;
	}
	return 0;
out_free:
	onnx_free(m);
	return err;
}

void onnx_free(struct onnx_model *m)
{
	free(m->nodes);
	free(m->strs);
	free(m->attrs);
	free(m->cvals);
	for (int k = 0; k < ONNX_NKINDS; k++)
		free(m->vals[k]);
	memset(m, 0, sizeof(*m));
}

const struct onnx_attr *onnx_attr_find(const struct onnx_model *m,
				       const struct onnx_node *n, const char *name)
{
	for (uint32_t i = 0; i < n->nattr; i++)
		if (pb_str_eq(m->attrs[n->attr0 + i].name, name))
			return &m->attrs[n->attr0 + i];
	return NULL;
}
