// SPDX-License-Identifier: GPL-2.0
/*
 * Plain text graphs, for hand-written tests and for the golden dumps:
 *
 *   tandem-graph 1
 *   stats PARAMS FLOPS ACT_ELEMS       (optional, per sample)
 *   node ID PRIM D0 D1 D2 D3 [<- PRED...]
 *
 * IDs are 0..n-1 in any order; '#' starts a comment.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define TEXT_MAX (64u << 20)

struct text_graph {
	int n, cap, ne, cap_e;
	uint8_t *prim;
	int32_t (*shape)[4];
	uint8_t *seen;
	int32_t (*edge)[2];
	struct tp_graph_stats st;
};

static int tg_reserve(struct text_graph *t, int id)
{
	while (id >= t->cap) {
		int ncap = t->cap ? t->cap * 2 : 64;
		void *p = realloc(t->prim, ncap), *q, *r;

		if (p)
			t->prim = p;
		q = realloc(t->shape, ncap * sizeof(*t->shape));
		if (q)
			t->shape = q;
		r = realloc(t->seen, ncap);
		if (r)
			t->seen = r;
		if (!p || !q || !r)
			return tp_fail(-ENOMEM, "out of memory reading a text graph");
		memset(t->seen + t->cap, 0, ncap - t->cap);
		t->cap = ncap;
	}
	return 0;
}

static int tg_edge(struct text_graph *t, int32_t u, int32_t v)
{
	if (t->ne == t->cap_e) {
		int ncap = t->cap_e ? t->cap_e * 2 : 128;
		void *p = realloc(t->edge, ncap * sizeof(*t->edge));

		if (!p)
			return tp_fail(-ENOMEM, "out of memory reading a text graph");
		t->edge = p;
		t->cap_e = ncap;
	}
	t->edge[t->ne][0] = u;
	t->edge[t->ne][1] = v;
	t->ne++;
	return 0;
}

static int parse_node_line(struct text_graph *t, char *s, int lineno)
{
	char prim[32], *rest;
	int id, d[4], used, p, err;

	if (sscanf(s, "node %d %31s %d %d %d %d%n", &id, prim, &d[0], &d[1], &d[2], &d[3],
		   &used) != 6)
		return tp_fail(-EINVAL, "text graph line %d: expected 'node ID PRIM D0 D1 D2 D3'",
			       lineno);
	p = tp_prim_from_name(prim);
	if (p < 0)
		return tp_fail(-EINVAL, "text graph line %d: unknown primitive '%s'", lineno, prim);
	if (id < 0 || id >= (1 << 20))
		return tp_fail(-EINVAL, "text graph line %d: node id %d out of range", lineno, id);
	err = tg_reserve(t, id);
	if (err)
		return err;
	if (t->seen[id])
		return tp_fail(-EINVAL, "text graph line %d: node %d defined twice", lineno, id);
	t->seen[id] = 1;
	t->prim[id] = (uint8_t)p;
	for (int k = 0; k < 4; k++)
		t->shape[id][k] = d[k] > 0 ? d[k] : 0;
	if (id >= t->n)
		t->n = id + 1;
	rest = s + used;
	while (*rest == ' ' || *rest == '\t')
		rest++;
	if (!*rest)
		return 0;
	if (strncmp(rest, "<-", 2))
		return tp_fail(-EINVAL, "text graph line %d: expected '<-' before predecessors",
			       lineno);
	rest += 2;
	for (;;) {
		char *end;
		long u = strtol(rest, &end, 10);

		if (end == rest)
			break;
		err = tg_edge(t, (int32_t)u, id);
		if (err)
			return err;
		rest = end;
	}
	while (*rest == ' ' || *rest == '\t')
		rest++;
	if (*rest)
		return tp_fail(-EINVAL, "text graph line %d: junk '%s'", lineno, rest);
	return 0;
}

static int parse_line(struct text_graph *t, char *s, int lineno, int *header)
{
	char *hash = strchr(s, '#');

	if (hash)
		*hash = '\0';
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return 0;
	if (!*header) {
		if (strncmp(s, "tandem-graph 1", 14))
			return tp_fail(-EINVAL, "not a text graph: first line must be 'tandem-graph 1'");
		*header = 1;
		return 0;
	}
	if (!strncmp(s, "stats ", 6)) {
		if (sscanf(s + 6, "%lf %lf %lf", &t->st.params, &t->st.flops,
			   &t->st.act_elems) != 3)
			return tp_fail(-EINVAL, "text graph line %d: bad stats", lineno);
		t->st.shapes_known = t->st.flops > 0;
		return 0;
	}
	if (!strncmp(s, "flops_by ", 9)) {
		double *f = t->st.flops_by;

		if (sscanf(s + 9, "%lf %lf %lf %lf %lf", &f[0], &f[1], &f[2], &f[3], &f[4]) !=
		    TP_FLOP_CLASSES)
			return tp_fail(-EINVAL, "text graph line %d: bad flops_by", lineno);
		return 0;
	}
	if (!strncmp(s, "node ", 5))
		return parse_node_line(t, s, lineno);
	return tp_fail(-EINVAL, "text graph line %d: unknown keyword", lineno);
}

int tp_graph_parse_text(const char *text, struct tp_graph **out)
{
	struct text_graph t = { 0 };
	char *copy = strdup(text), *line, *save = NULL;
	int lineno = 0, header = 0, err = 0;

	tp_clear_error();
	if (!copy)
		return tp_fail(-ENOMEM, "out of memory reading a text graph");
	for (line = strtok_r(copy, "\n", &save); line && !err; line = strtok_r(NULL, "\n", &save))
		err = parse_line(&t, line, ++lineno, &header);
	if (!err && !header)
		err = tp_fail(-EINVAL, "empty text graph");
	for (int v = 0; !err && v < t.n; v++)
		if (!t.seen[v])
			err = tp_fail(-EINVAL, "text graph: node %d missing", v);
	if (!err)
		err = tp_graph_build(t.n, t.prim, (const int32_t (*)[4])t.shape, t.ne,
				     (const int32_t (*)[2])t.edge, &t.st, out);
	free(copy);
	free(t.prim);
	free(t.shape);
	free(t.seen);
	free(t.edge);
	return err;
}

int tp_graph_load_text(const char *path, struct tp_graph **out)
{
	uint8_t *buf, *text;
	size_t len;
	int err;

	tp_clear_error();
	err = tp_read_file(path, TEXT_MAX, &buf, &len);
	if (err)
		return err;
	text = realloc(buf, len + 1);
	if (!text) {
		free(buf);
		return tp_fail(-ENOMEM, "out of memory reading %s", path);
	}
	text[len] = '\0';
	err = tp_graph_parse_text((const char *)text, out);
	free(text);
	return err;
}

int tp_graph_write_text(const struct tp_graph *g, FILE *f)
{
	const double *fb = g->stats.flops_by;

	fprintf(f, "tandem-graph 1\n");
	fprintf(f, "stats %.17g %.17g %.17g\n", g->stats.params, g->stats.flops,
		g->stats.act_elems);
	if (fb[0] || fb[1] || fb[2] || fb[3] || fb[4])
		fprintf(f, "flops_by %.17g %.17g %.17g %.17g %.17g\n", fb[0], fb[1], fb[2], fb[3],
			fb[4]);
	for (int v = 0; v < g->n; v++) {
		fprintf(f, "node %d %s %d %d %d %d", v, tp_prim_name(g->prim[v]),
			g->shape[v][0], g->shape[v][1], g->shape[v][2], g->shape[v][3]);
		if (g->pred.off[v] < g->pred.off[v + 1])
			fprintf(f, " <-");
		for (int k = g->pred.off[v]; k < g->pred.off[v + 1]; k++)
			fprintf(f, " %d", g->pred.idx[k]);
		fputc('\n', f);
	}
	return ferror(f) ? tp_fail(-EIO, "write error") : 0;
}
