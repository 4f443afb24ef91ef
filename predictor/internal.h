/* SPDX-License-Identifier: GPL-2.0 */
/* Internal declarations shared by the predictor's source files. */
#ifndef TANDEM_PREDICT_INTERNAL_H
#define TANDEM_PREDICT_INTERNAL_H

#include <errno.h>
#include <stdint.h>

#include "tandem_predict.h"

/* Record the thread's error message; returns err (a negative errno). */
int tp_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tp_clear_error(void);

/* Read a whole file (at most max bytes) into a malloc'd buffer. */
int tp_read_file(const char *path, size_t max, uint8_t **buf, size_t *len);

uint32_t tp_crc32(uint32_t crc, const void *buf, size_t len);

/* xorshift64* stream for initialisation and shuffles */
struct tp_rng {
	uint64_t s;
};
void tp_rng_seed(struct tp_rng *r, uint64_t seed);
uint64_t tp_rng_u64(struct tp_rng *r);
double tp_rng_uniform(struct tp_rng *r);	/* [0, 1) */
double tp_rng_normal(struct tp_rng *r);

/*
 * The GHN-2 graph. Nodes are numbered in topological order (every edge goes
 * from a lower to a higher id), so the forward sweep is 0..n-1 and the
 * backward sweep n-1..0. Neighbour lists are CSR: for node v, entries
 * [off[v], off[v+1]).
 */
struct tp_csr {
	int32_t *off;		/* [n + 1] */
	int32_t *idx;		/* [off[n]] neighbour node */
	uint8_t *dist;		/* [off[n]] shortest-path distance (virtual lists) */
};

struct tp_graph {
	int n;
	uint8_t *prim;		/* [n] enum tp_prim */
	int32_t (*shape)[4];	/* [n][4] parameter shape, 0 = absent */
	struct tp_csr pred, succ;	/* real edges */
	struct tp_csr vpred, vsucc;	/* distance 2..TP_S_MAX */
	struct tp_graph_stats stats;
	char (*ops)[32];	/* [nops] distinct ONNX op types (none for text graphs) */
	int nops;
};

/* Build from an edge list (src < dst not required; must be acyclic):
 * renumbers nodes topologically, fills CSR lists and virtual edges. */
int tp_graph_build(int n, const uint8_t *prim, const int32_t (*shape)[4],
		   int nedges, const int32_t (*edges)[2],
		   const struct tp_graph_stats *st, struct tp_graph **out);

/* Shape embedding bucket of dimension k (0..3) of a shape value. */
#define TP_SHAPE_BUCKETS 16
int tp_shape_bucket(int k, int32_t v);

#endif
