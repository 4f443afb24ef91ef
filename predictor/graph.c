// SPDX-License-Identifier: GPL-2.0
/*
 * GHN-2 graphs: construction from an edge list (topological renumbering,
 * CSR neighbour lists, virtual edges by shortest-path distance), the plain
 * text format, and accessors.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const prim_names[TP_NUM_PRIMS] = {
	"max_pool", "avg_pool", "sep_conv", "dil_conv", "conv", "msa", "cse", "sum",
	"concat", "input", "bias", "bn", "ln", "pos_enc", "glob_avg",
};

#define MAX_GRAPH_NODES	(1 << 20)
#define MAX_VIRTUAL	(32L << 20)	/* virtual edges; ~200 MB of lists at most */

const char *tp_prim_name(int prim)
{
	return prim >= 0 && prim < TP_NUM_PRIMS ? prim_names[prim] : "?";
}

int tp_prim_from_name(const char *name)
{
	for (int i = 0; i < TP_NUM_PRIMS; i++)
		if (!strcmp(prim_names[i], name))
			return i;
	return -1;
}

/* Channels (dims 0, 1) by powers of two, kernel sizes (2, 3) by value. */
int tp_shape_bucket(int k, int32_t v)
{
	int b = 1;

	if (v <= 0)
		return 0;
	if (k >= 2)
		return v < TP_SHAPE_BUCKETS - 1 ? v : TP_SHAPE_BUCKETS - 1;
	while (v > 1 && b < TP_SHAPE_BUCKETS - 1) {
		v >>= 1;
		b++;
	}
	return b;
}

static void csr_free(struct tp_csr *c)
{
	free(c->off);
	free(c->idx);
	free(c->dist);
}

void tp_graph_free(struct tp_graph *g)
{
	if (!g)
		return;
	free(g->prim);
	free(g->shape);
	free(g->ops);
	csr_free(&g->pred);
	csr_free(&g->succ);
	csr_free(&g->vpred);
	csr_free(&g->vsucc);
	free(g);
}

/* CSR from (key, value, dist) triples; by = 0 groups by src, 1 by dst. */
static int csr_fill(struct tp_csr *c, int n, long ne, const int32_t (*e)[2],
		    const uint8_t *dist, int by)
{
	c->off = calloc(n + 1, sizeof(*c->off));
	c->idx = malloc((ne ? ne : 1) * sizeof(*c->idx));
	c->dist = malloc(ne ? ne : 1);
	if (!c->off || !c->idx || !c->dist)
		return tp_fail(-ENOMEM, "out of memory building neighbour lists");
	for (long i = 0; i < ne; i++)
		c->off[e[i][by] + 1]++;
	for (int v = 0; v < n; v++)
		c->off[v + 1] += c->off[v];
	for (long i = 0; i < ne; i++) {
		int32_t k = c->off[e[i][by]]++;

		c->idx[k] = e[i][!by];
		c->dist[k] = dist ? dist[i] : 1;
	}
	for (int v = n; v > 0; v--)
		c->off[v] = c->off[v - 1];
	c->off[0] = 0;
	return 0;
}

static int cmp_edge(const void *a, const void *b)
{
	const int32_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Kahn's algorithm; order[k] = old id of the k-th node. FIFO keeps an
 * already sorted graph in its original order. */
static int topo_order(int n, int ne, const int32_t (*e)[2], int32_t *order)
{
	int32_t *indeg = calloc(n, sizeof(*indeg));
	struct tp_csr c = { 0 };
	int head = 0, tail = 0, err;

	err = indeg ? csr_fill(&c, n, ne, e, NULL, 0) :
		tp_fail(-ENOMEM, "out of memory sorting the graph");
	if (err)
		goto out;
	for (int i = 0; i < ne; i++)
		indeg[e[i][1]]++;
	for (int v = 0; v < n; v++)
		if (!indeg[v])
			order[tail++] = v;
	while (head < tail) {
		int u = order[head++];

		for (int k = c.off[u]; k < c.off[u + 1]; k++)
			if (!--indeg[c.idx[k]])
				order[tail++] = c.idx[k];
	}
	if (tail != n)
		err = tp_fail(-EINVAL, "graph has a cycle (%d of %d nodes sortable)", tail, n);
out:
	free(indeg);
	csr_free(&c);
	return err;
}

/* the virtual edges found so far: pairs and their distances */
struct vedges {
	int32_t (*e)[2];
	uint8_t *d;
	long n, cap;
};

static int vedge_push(struct vedges *v, int s, int u, int dist)
{
	if (v->n == v->cap) {
		void *p1, *p2;

		if (v->n >= MAX_VIRTUAL)
			return tp_fail(-E2BIG, "graph has more than %ld virtual edges", MAX_VIRTUAL);
		v->cap = v->cap ? v->cap * 2 : 1024;
		p1 = realloc(v->e, v->cap * sizeof(*v->e));
		if (p1)
			v->e = p1;
		p2 = realloc(v->d, v->cap);
		if (p2)
			v->d = p2;
		if (!p1 || !p2)
			return tp_fail(-ENOMEM, "out of memory for virtual edges");
	}
	v->e[v->n][0] = s;
	v->e[v->n][1] = u;
	v->d[v->n++] = (uint8_t)dist;
	return 0;
}

/* Breadth-first search from every node along successors up to TP_S_MAX. */
static int virtual_edges(struct tp_graph *g)
{
	int32_t *dist = malloc(g->n * sizeof(*dist)), *queue = malloc(g->n * sizeof(*queue));
	struct vedges v = { 0 };
	int err = 0;

	if (!dist || !queue) {
		err = tp_fail(-ENOMEM, "out of memory computing distances");
		goto out;
	}
	for (int i = 0; i < g->n; i++)
		dist[i] = -1;
	for (int s = 0; s < g->n && !err; s++) {
		int head = 0, tail = 0;

		dist[s] = 0;
		queue[tail++] = s;
		while (head < tail && !err) {
			int u = queue[head++];

			if (dist[u] >= 2)
				err = vedge_push(&v, s, u, dist[u]);
			if (err || dist[u] == TP_S_MAX)
				continue;
			for (int k = g->succ.off[u]; k < g->succ.off[u + 1]; k++) {
				int w = g->succ.idx[k];

				if (dist[w] < 0) {
					dist[w] = dist[u] + 1;
					queue[tail++] = w;
				}
			}
		}
		for (int k = 0; k < tail; k++)
			dist[queue[k]] = -1;
	}
	if (!err)
		err = csr_fill(&g->vsucc, g->n, v.n, (const int32_t (*)[2])v.e, v.d, 0);
	if (!err)
		err = csr_fill(&g->vpred, g->n, v.n, (const int32_t (*)[2])v.e, v.d, 1);
out:
	free(dist);
	free(queue);
	free(v.e);
	free(v.d);
	return err;
}

static int check_input(int n, const uint8_t *prim, int ne, const int32_t (*edges)[2])
{
	if (n <= 0 || n > MAX_GRAPH_NODES)
		return tp_fail(-EINVAL, "graph with %d nodes (1..%d allowed)", n, MAX_GRAPH_NODES);
	for (int v = 0; v < n; v++)
		if (prim[v] >= TP_NUM_PRIMS)
			return tp_fail(-EINVAL, "node %d: unknown primitive %d", v, prim[v]);
	for (int i = 0; i < ne; i++) {
		if (edges[i][0] < 0 || edges[i][0] >= n || edges[i][1] < 0 || edges[i][1] >= n)
			return tp_fail(-EINVAL, "edge %d -> %d: no such node", edges[i][0],
				       edges[i][1]);
		if (edges[i][0] == edges[i][1])
			return tp_fail(-EINVAL, "self-loop on node %d", edges[i][0]);
	}
	return 0;
}

/* Renumber edges into topological ids, sort and drop duplicates. */
static long renumber_edges(int n, int ne, const int32_t (*edges)[2], const int32_t *order,
			   int32_t (*out)[2], int32_t *newid)
{
	long k = 0;

	for (int i = 0; i < n; i++)
		newid[order[i]] = i;
	for (int i = 0; i < ne; i++) {
		out[i][0] = newid[edges[i][0]];
		out[i][1] = newid[edges[i][1]];
	}
	qsort(out, ne, sizeof(*out), cmp_edge);
	for (int i = 0; i < ne; i++)
		if (!k || out[i][0] != out[k - 1][0] || out[i][1] != out[k - 1][1]) {
			out[k][0] = out[i][0];
			out[k][1] = out[i][1];
			k++;
		}
	return k;
}

static int graph_alloc(int n, struct tp_graph **out)
{
	struct tp_graph *g = calloc(1, sizeof(*g));

	if (!g)
		return tp_fail(-ENOMEM, "out of memory for a graph");
	g->n = n;
	g->prim = malloc(n);
	g->shape = malloc(n * sizeof(*g->shape));
	if (!g->prim || !g->shape) {
		tp_graph_free(g);
		return tp_fail(-ENOMEM, "out of memory for a graph");
	}
	*out = g;
	return 0;
}

int tp_graph_build(int n, const uint8_t *prim, const int32_t (*shape)[4],
		   int ne, const int32_t (*edges)[2],
		   const struct tp_graph_stats *st, struct tp_graph **out)
{
	int32_t *order = NULL, *newid = NULL, (*e)[2] = NULL;
	struct tp_graph *g = NULL;
	long ke;
	int err;

	err = check_input(n, prim, ne, edges);
	if (err)
		return err;
	order = malloc(n * sizeof(*order));
	newid = malloc(n * sizeof(*newid));
	e = malloc((ne ? ne : 1) * sizeof(*e));
	if (!order || !newid || !e) {
		err = tp_fail(-ENOMEM, "out of memory building a graph");
		goto out_free;
	}
	err = topo_order(n, ne, edges, order);
	if (err)
		goto out_free;
	err = graph_alloc(n, &g);
	if (err)
		goto out_free;
	for (int i = 0; i < n; i++) {
		g->prim[i] = prim[order[i]];
		memcpy(g->shape[i], shape[order[i]], sizeof(g->shape[i]));
	}
	ke = renumber_edges(n, ne, edges, order, e, newid);
	err = csr_fill(&g->succ, n, ke, (const int32_t (*)[2])e, NULL, 0);
	if (!err)
		err = csr_fill(&g->pred, n, ke, (const int32_t (*)[2])e, NULL, 1);
	if (!err)
		err = virtual_edges(g);
	if (err)
		goto out_graph;
	if (st)
		g->stats = *st;
	*out = g;
	g = NULL;
out_graph:
	tp_graph_free(g);
out_free:
	free(order);
	free(newid);
	free(e);
	return err;
}

int tp_graph_num_nodes(const struct tp_graph *g)
{
	return g->n;
}

int tp_graph_num_edges(const struct tp_graph *g)
{
	return g->succ.off[g->n];
}

long tp_graph_num_virtual(const struct tp_graph *g)
{
	return g->vsucc.off[g->n];
}

void tp_graph_get_stats(const struct tp_graph *g, struct tp_graph_stats *st)
{
	*st = g->stats;
}

void tp_graph_prim_hist(const struct tp_graph *g, int hist[TP_NUM_PRIMS])
{
	memset(hist, 0, TP_NUM_PRIMS * sizeof(*hist));
	for (int v = 0; v < g->n; v++)
		hist[g->prim[v]]++;
}
