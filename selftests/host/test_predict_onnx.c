// SPDX-License-Identifier: GPL-2.0
/*
 * ONNX import of the committed graphs against python3-onnx: node counts
 * and op-type histograms from onnx's own parser; the shape of every node
 * output from onnx's infer_shapes(data_prop=True) (numpy folding where onnx
 * stops), with the importer's own inference and no value_info; GHN-2
 * node/edge counts, primitive histograms, parameter counts, FLOPs and
 * activation sizes from an independent Python implementation of the import
 * rules (predictor/tools/onnx_expect.py -> predictor/data/{onnx,shape}_expect.txt).
 * Eval-mode exports and graphs with data-dependent shapes are reported.
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
#include "import.h"

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

/* "F1,F2,..": the FLOPs by enum tp_flop_class, which add up to flops */
static void check_flops_by(struct __test_metadata *_metadata, const char *arch, const char *list,
			   const struct tp_graph_stats *st)
{
	double sum = 0;
	char *end;

	ASSERT_NE(NULL, list) TH_LOG("%s: no flops_by", arch);
	for (int k = 0; k < TP_FLOP_CLASSES; k++, list = end + (*end == ',')) {
		double want = strtod(list, &end);

		EXPECT_LE(fabs(want - st->flops_by[k]), 1e-9 * st->flops)
			TH_LOG("%s: flops class %d: %g vs %g", arch, k, want, st->flops_by[k]);
		sum += st->flops_by[k];
	}
	EXPECT_LE(fabs(sum - st->flops), 1e-9 * st->flops) TH_LOG("%s", arch);
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
	flops = strtod(field(line, "acts"), NULL);
	EXPECT_LE(fabs(flops - st.act_elems), 1e-9 * flops)
		TH_LOG("%s: activations %g vs %g", arch, flops, st.act_elems);
	check_flops_by(_metadata, arch, field(line, "flops_by"), &st);
	EXPECT_TRUE(st.shapes_known);
	EXPECT_EQ(0, st.unresolved) TH_LOG("%s: %s", arch, st.unresolved_at);
	EXPECT_EQ(0, st.eval_bn + st.folded_bn) TH_LOG("%s", arch);
}

TEST(committed_graphs_match_python_onnx)
{
	FILE *f = fopen(DATA "onnx_expect.txt", "r");
	char line[16384], arch[128], path[512];
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
		snprintf(path, sizeof(path), DATA "%s.onnx", arch);
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
	EXPECT_GE(graphs, 290);	/* onnx/, r224/, r224-2026-12-03/, h200-2026-12-04/ */
	TH_LOG("%d graphs checked", graphs);
}

/* "d0xd1x.." / "[]" / "?" against an inferred shape */
static bool shape_matches(const char *tok, const struct onnx_value *v)
{
	char *end;
	int k = 0;

	if (!strcmp(tok, "?"))
		return true;	/* onnx could not tell either: nothing to compare */
	if (!strcmp(tok, "[]"))
		return v->rank == 0;
	for (const char *p = tok; *p; p = *end ? end + 1 : end, k++) {
		long long d = strtoll(p, &end, 10);

		if (k >= v->rank || v->dims[k] != d)
			return false;
	}
	return k == v->rank;
}

static int check_shapes(struct __test_metadata *_metadata, char *line, int *tensors)
{
	char *save, *arch = strtok_r(line, " \n", &save), path[512];
	struct onnx_value *v = NULL;
	struct onnx_model m;
	uint32_t n = 0, i = 0;
	int bad = 0;
	uint8_t *buf;
	size_t len;

	snprintf(path, sizeof(path), DATA "%s.onnx", arch);
	if (tp_read_file(path, ONNX_MAX_FILE, &buf, &len) || onnx_parse(buf, len, &m)) {
		TH_LOG("%s: %s", path, tp_errmsg());
		return 1;
	}
	/* the importer's inference alone: the committed value_info is ignored */
	EXPECT_EQ(0, tp_onnx_infer_shapes(&m, TP_IMPORT_NO_VALUE_INFO, &v, &n)) TH_LOG("%s", arch);
	for (char *tok; (tok = strtok_r(NULL, " \n", &save)); i++) {
		if (i >= n || !shape_matches(tok, &v[i])) {
			if (bad++ < 3)
				TH_LOG("%s: output %u (%.*s): onnx %s, importer rank %d", arch, i,
				       i < n ? (int)v[i].name.n : 0, i < n ? v[i].name.p : "",
				       tok, i < n ? v[i].rank : -2);
		}
		(*tensors)++;
	}
	EXPECT_EQ(n, i) TH_LOG("%s: %u outputs, %u expected", arch, n, i);
	free(v);
	onnx_free(&m);
	free(buf);
	return bad;
}

TEST(shapes_match_onnx_infer_shapes)
{
	FILE *f = fopen(DATA "shape_expect.txt", "r");
	int graphs = 0, tensors = 0, bad = 0;
	char *line = NULL;
	size_t cap = 0;

	ASSERT_NE(NULL, f);
	while (getline(&line, &cap, f) > 0) {
		if (line[0] == '#')
			continue;
		bad += check_shapes(_metadata, line, &tensors);
		graphs++;
	}
	free(line);
	fclose(f);
	EXPECT_EQ(0, bad);
	EXPECT_GE(graphs, 290);
	TH_LOG("%d graphs, %d tensors checked", graphs, tensors);
}

/* The 32x32 graphs carry onnx's value_info: with or without it, the same. */
TEST(value_info_changes_nothing)
{
	static const char *const archs[] = { "resnet18", "vit_l4_d128_p8", "shufflenet_v2_x1_0",
					     "darts001", "densenet121", "efficientnet_b0" };

	for (size_t a = 0; a < sizeof(archs) / sizeof(archs[0]); a++) {
		struct tp_graph_stats s1, s2;
		struct tp_graph *g1, *g2;
		char path[256];
		uint8_t *buf;
		size_t len;

		snprintf(path, sizeof(path), DATA "onnx/%s.onnx", archs[a]);
		ASSERT_EQ(0, tp_read_file(path, ONNX_MAX_FILE, &buf, &len));
		ASSERT_EQ(0, tp_import_onnx(buf, len, 0, &g1)) TH_LOG("%s", tp_errmsg());
		ASSERT_EQ(0, tp_import_onnx(buf, len, TP_IMPORT_NO_VALUE_INFO, &g2));
		tp_graph_get_stats(g1, &s1);
		tp_graph_get_stats(g2, &s2);
		EXPECT_EQ(s1.flops, s2.flops) TH_LOG("%s", archs[a]);
		EXPECT_EQ(s1.act_elems, s2.act_elems) TH_LOG("%s", archs[a]);
		EXPECT_EQ(s1.params, s2.params) TH_LOG("%s", archs[a]);
		EXPECT_TRUE(s2.shapes_known) TH_LOG("%s", archs[a]);
		tp_graph_free(g1);
		tp_graph_free(g2);
		free(buf);
	}
}

static void load_stats(struct __test_metadata *_metadata, const char *path,
		       struct tp_graph_stats *st, char (*warn)[TP_WARN_LEN], int *nwarn)
{
	struct tp_graph *g;

	ASSERT_EQ(0, tp_graph_load_onnx(path, &g)) TH_LOG("%s", tp_errmsg());
	tp_graph_get_stats(g, st);
	*nwarn = tp_graph_warnings(g, warn, 8);
	tp_graph_free(g);
}

/* torch.onnx.export's default (eval) folds BatchNorm into the convolution
 * (predictor/tools/test_graphs.py); where it cannot, BatchNorm stays in
 * inference mode. Both are reported; a training-mode export is not. */
TEST(eval_mode_export_is_reported)
{
	char warn[8][TP_WARN_LEN];
	struct tp_graph_stats st;
	int n;

	load_stats(_metadata, DATA "test/eval_folded.onnx", &st, warn, &n);
	EXPECT_EQ(1, st.folded_bn);
	ASSERT_EQ(1, n);
	EXPECT_NE(NULL, strstr(warn[0], "eval-mode export")) TH_LOG("%s", warn[0]);
	load_stats(_metadata, DATA "test/eval_bn.onnx", &st, warn, &n);
	EXPECT_EQ(1, st.eval_bn);
	ASSERT_EQ(1, n);
	EXPECT_NE(NULL, strstr(warn[0], "TRAINING")) TH_LOG("%s", warn[0]);
	load_stats(_metadata, DATA "test/ood_tiny.onnx", &st, warn, &n);	/* same net, training */
	EXPECT_EQ(0, st.eval_bn + st.folded_bn);
	EXPECT_EQ(0, n);
}

/* Shapes after NonZero depend on data: reported, with the op that lost them. */
TEST(unresolved_shapes_are_reported)
{
	char warn[8][TP_WARN_LEN];
	struct tp_graph_stats st;
	int n;

	load_stats(_metadata, DATA "test/unresolved.onnx", &st, warn, &n);
	EXPECT_EQ(3, st.unresolved);	/* NonZero, Reshape, Relu */
	EXPECT_FALSE(st.shapes_known);
	EXPECT_NE(NULL, strstr(st.unresolved_at, "NonZero")) TH_LOG("%s", st.unresolved_at);
	ASSERT_EQ(1, n);
	EXPECT_NE(NULL, strstr(warn[0], "could not be inferred")) TH_LOG("%s", warn[0]);
	/* the Conv before them is counted: 2 x 8x8 outputs x 4 x 27 */
	EXPECT_EQ(2.0 * 64 * 4 * 27, st.flops);
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
