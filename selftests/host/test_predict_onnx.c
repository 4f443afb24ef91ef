// SPDX-License-Identifier: GPL-2.0
/*
 * ONNX import of the committed graphs against python3-onnx: node counts
 * and op-type histograms from onnx's own parser, and GHN-2 node/edge
 * counts, primitive histograms, parameter counts and FLOPs from an
 * independent Python implementation of the import rules
 * (predictor/tools/onnx_expect.py -> predictor/data/onnx_expect.txt).
 * Then bad input: truncated, garbage, empty, huge files and broken text
 * graphs must give a clear error.
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "internal.h"
#include "onnx.h"

#define DATA "predictor/data/"

/* "key=value" of one expectation line */
static const char *field(const char *line, const char *key)
{
	char pat[32];
	const char *p;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(line, pat);
	return p ? p + strlen(pat) : NULL;
}

/* count of `name` in "a:1,b:2 ..." (0 when absent) */
static long hist_get(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p && *p != ' '; ) {
		if (!strncmp(p, name, n) && p[n] == ':')
			return strtol(p + n + 1, NULL, 10);
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	return 0;
}

static long hist_total(const char *list)
{
	long total = 0;

	for (const char *p = list; p && *p && *p != ' '; ) {
		const char *c = strchr(p, ':');

		if (!c)
			break;
		total += strtol(c + 1, NULL, 10);
		p = strchr(c, ',');
		p = p && p < strchr(c, ' ') ? p + 1 : NULL;
	}
	return total;
}

static void check_raw(struct __test_metadata *_metadata, const char *arch, const char *line,
		      const struct onnx_model *m)
{
	const char *ops = field(line, "ops");
	char name[128];

	ASSERT_NE(NULL, ops);
	EXPECT_EQ(strtol(field(line, "onnx_nodes"), NULL, 10), (long)m->nnodes) TH_LOG("%s", arch);
	EXPECT_EQ(strtol(field(line, "inputs"), NULL, 10), (long)m->nvals[ONNX_INPUT]);
	for (uint32_t i = 0; i < m->nnodes; i++) {
		long mine = 0;

		snprintf(name, sizeof(name), "%.*s", (int)m->nodes[i].op_type.n,
			 m->nodes[i].op_type.p);
		for (uint32_t k = 0; k < m->nnodes; k++)
			mine += pb_str_eq(m->nodes[k].op_type, name);
		EXPECT_EQ(hist_get(ops, name), mine) TH_LOG("%s: op %s", arch, name);
	}
	EXPECT_EQ(hist_total(ops), (long)m->nnodes);
}

static void check_ghn(struct __test_metadata *_metadata, const char *arch, const char *line,
		      const struct tp_graph *g)
{
	const char *prims = field(line, "prims");
	struct tp_graph_stats st;
	int hist[TP_NUM_PRIMS];
	double flops;

	tp_graph_prim_hist(g, hist);
	tp_graph_get_stats(g, &st);
	EXPECT_EQ(strtol(field(line, "ghn_nodes"), NULL, 10), tp_graph_num_nodes(g))
		TH_LOG("%s", arch);
	EXPECT_EQ(strtol(field(line, "ghn_edges"), NULL, 10), tp_graph_num_edges(g))
		TH_LOG("%s", arch);
	for (int p = 0; p < TP_NUM_PRIMS; p++) {
		EXPECT_EQ(hist_get(prims, tp_prim_name(p)), hist[p])
			TH_LOG("%s: %s", arch, tp_prim_name(p));
	}
	EXPECT_EQ(strtod(field(line, "params"), NULL), st.params) TH_LOG("%s", arch);
	flops = strtod(field(line, "flops"), NULL);
	EXPECT_LE(fabs(flops - st.flops), 1e-9 * flops) TH_LOG("%s: %g vs %g", arch, flops, st.flops);
	EXPECT_TRUE(st.shapes_known);
}

TEST(committed_graphs_match_python_onnx)
{
	FILE *f = fopen(DATA "onnx_expect.txt", "r");
	char line[8192], arch[128], path[512];
	int graphs = 0;

	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		struct onnx_model m;
		struct tp_graph *g;
		uint8_t *buf;
		size_t len;

		if (line[0] == '#' || sscanf(line, "%127s", arch) != 1)
			continue;
		line[strcspn(line, "\n")] = ' ';
		snprintf(path, sizeof(path), DATA "onnx/%s.onnx", arch);
		ASSERT_EQ(0, tp_read_file(path, ONNX_MAX_FILE, &buf, &len)) TH_LOG("%s", tp_errmsg());
		ASSERT_EQ(0, onnx_parse(buf, len, &m)) TH_LOG("%s: %s", arch, tp_errmsg());
		check_raw(_metadata, arch, line, &m);
		onnx_free(&m);
		ASSERT_EQ(0, tp_graph_from_onnx(buf, len, &g)) TH_LOG("%s: %s", arch, tp_errmsg());
		check_ghn(_metadata, arch, line, g);
		tp_graph_free(g);
		free(buf);
		graphs++;
	}
	fclose(f);
	EXPECT_GE(graphs, 60);
	TH_LOG("%d graphs checked", graphs);
}

static int import_bytes(const void *buf, size_t len)
{
	struct tp_graph *g = NULL;
	int err = tp_graph_from_onnx(buf, len, &g);

	tp_graph_free(g);
	return err;
}

TEST(truncated_files_are_errors)
{
	uint8_t *buf;
	size_t len;
	int errors = 0, cuts = 0;

	ASSERT_EQ(0, tp_read_file(DATA "onnx/resnet18.onnx", ONNX_MAX_FILE, &buf, &len));
	ASSERT_EQ(0, import_bytes(buf, len));
	/* any prefix either fails with a message or still is a valid model */
	for (size_t cut = 1; cut < len; cut += len / 97 + 1, cuts++) {
		int err = import_bytes(buf, cut);

		if (err) {
			errors++;
			EXPECT_NE(0, tp_errmsg()[0]);
		}
	}
	EXPECT_EQ(-EBADMSG, import_bytes(buf, len / 2));
	EXPECT_NE(NULL, strstr(tp_errmsg(), "malformed ONNX")) TH_LOG("%s", tp_errmsg());
	EXPECT_GT(errors, cuts / 2);
	free(buf);
}

TEST(garbage_and_empty_are_errors)
{
	uint8_t junk[4096];
	struct tp_rng r;

	tp_rng_seed(&r, 7);
	for (int round = 0; round < 200; round++) {
		for (size_t i = 0; i < sizeof(junk); i++)
			junk[i] = (uint8_t)tp_rng_u64(&r);
		EXPECT_GT(0, import_bytes(junk, sizeof(junk)));
		EXPECT_NE(0, tp_errmsg()[0]);
	}
	EXPECT_EQ(-EBADMSG, import_bytes("", 0));
	EXPECT_NE(NULL, strstr(tp_errmsg(), "not an ONNX model")) TH_LOG("%s", tp_errmsg());
}

TEST(huge_file_is_refused)
{
	char path[] = "/tmp/tandem-huge-XXXXXX.onnx";
	struct tp_graph *g = NULL;
	int fd = mkstemps(path, 5);

	ASSERT_LE(0, fd);
	/* sparse: no disk space used */
	ASSERT_EQ(0, ftruncate(fd, (off_t)ONNX_MAX_FILE + 1));
	close(fd);
	EXPECT_EQ(-EFBIG, tp_graph_load_onnx(path, &g));
	EXPECT_NE(NULL, strstr(tp_errmsg(), "limit")) TH_LOG("%s", tp_errmsg());
	unlink(path);
	EXPECT_EQ(-ENOENT, tp_graph_load_onnx("/nonexistent.onnx", &g));
}

TEST(text_graph_errors)
{
	struct tp_graph *g = NULL;

	EXPECT_EQ(-EINVAL, tp_graph_parse_text("tandem-graph 1\nnode 0 input 0 0 0 0 <- 1\n"
					       "node 1 conv 8 3 3 3 <- 0\n", &g));
	EXPECT_NE(NULL, strstr(tp_errmsg(), "cycle")) TH_LOG("%s", tp_errmsg());
	EXPECT_EQ(-EINVAL, tp_graph_parse_text("tandem-graph 1\nnode 0 wibble 0 0 0 0\n", &g));
	EXPECT_NE(NULL, strstr(tp_errmsg(), "unknown primitive"));
	EXPECT_EQ(-EINVAL, tp_graph_parse_text("tandem-graph 1\nnode 1 input 0 0 0 0\n", &g));
	EXPECT_NE(NULL, strstr(tp_errmsg(), "node 0 missing"));
	EXPECT_EQ(-EINVAL, tp_graph_parse_text("graph\n", &g));
}

/* Virtual edges: in a chain of 60 nodes, node k sees k-2 .. k-50 */
TEST(virtual_edges_of_a_chain)
{
	char text[8192];
	struct tp_graph *g;
	int n = 60, len;
	long expect = 0;

	len = snprintf(text, sizeof(text), "tandem-graph 1\nnode 0 input 0 0 0 0\n");
	for (int v = 1; v < n; v++)
		len += snprintf(text + len, sizeof(text) - len, "node %d conv 8 8 3 3 <- %d\n", v,
				v - 1);
	ASSERT_EQ(0, tp_graph_parse_text(text, &g));
	EXPECT_EQ(n - 1, tp_graph_num_edges(g));
	/* pairs (u, v) with 2 <= v - u <= 50: sum over distance s of (n - s) */
	for (int s = 2; s <= TP_S_MAX; s++)
		expect += n - s;
	EXPECT_EQ(expect, tp_graph_num_virtual(g));
	tp_graph_free(g);
}

TEST_HARNESS_MAIN
