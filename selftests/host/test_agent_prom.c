// SPDX-License-Identifier: GPL-2.0
/*
 * The Prometheus textfile writer (agent/prom.c): naming rules refused with
 * the right error, label values and HELP escaped, the file replaced
 * atomically; and the output read back by real parsers: promtool check
 * metrics (Debian's prometheus) must pass it and must fail a file that
 * breaks the conventions, and the Python client's parser must read back
 * every label value and number that was written.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "lib/prom.h"

static char dir[] = "/tmp/tandem-prom-XXXXXX";

static int run(const char *cmd, char *out, size_t len)
{
	FILE *p = popen(cmd, "r");
	size_t n = 0;

	if (!p)
		return -1;
	if (out) {
		n = fread(out, 1, len - 1, p);
		out[n] = '\0';
	} else {
		char sink[256];

		while (fread(sink, 1, sizeof(sink), p) > 0)
			;
	}
	return pclose(p);
}

static int have(const char *tool)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", tool);
	return system(cmd) == 0;
}

static int count_entries(const char *d)
{
	DIR *dp = opendir(d);
	struct dirent *de;
	int n = 0;

	if (!dp)
		return -1;
	while ((de = readdir(dp)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(dp);
	return n;
}

/* label values that need every escape, and one byte that is not UTF-8 */
static const char *const values[] = {
	"/data/image net", "say \"hi\"", "back\\slash", "two\nlines", "caf\xc3\xa9",
	"bad\xff" "byte", "",
};
static const char *const want_values[] = {
	"/data/image net", "say \"hi\"", "back\\slash", "two\nlines", "caf\xc3\xa9",
	"bad\xef\xbf\xbd" "byte", "",
};
#define NVAL (sizeof(values) / sizeof(values[0]))
static const double numbers[] = { 0, 1.5, 1e-9, 9007199254740992.0, 0.1, 123456789.25, 7 };

static void write_good(struct __test_metadata *_metadata, const char *name)
{
	struct tandem_prom p;

	ASSERT_EQ(0, tandem_prom_open(&p, dir, name));
	ASSERT_EQ(0, tandem_prom_family(&p, "tandem_test_reads_total", TANDEM_PROM_COUNTER,
					"Reads, counted\nwith a \\ in HELP."));
	for (size_t i = 0; i < NVAL; i++) {
		char job[8];
		struct tandem_prom_label l[] = { { "dataset", values[i] }, { "job", job } };

		snprintf(job, sizeof(job), "%zu", i);
		ASSERT_EQ(0, tandem_prom_sample(&p, l, 2, numbers[i]));
	}
	ASSERT_EQ(0, tandem_prom_family(&p, "tandem_test_resident_bytes", TANDEM_PROM_GAUGE,
					"Bytes resident."));
	ASSERT_EQ(0, tandem_prom_sample(&p, NULL, 0, -2.5));
	ASSERT_EQ(0, tandem_prom_family(&p, "tandem_test_ratio", TANDEM_PROM_GAUGE, "A ratio."));
	ASSERT_EQ(0, tandem_prom_sample(&p, (struct tandem_prom_label[]){ { "node", "n1" } }, 1, NAN));
	ASSERT_EQ(0, tandem_prom_sample(&p, (struct tandem_prom_label[]){ { "node", "n2" } }, 1, INFINITY));
	ASSERT_EQ(0, tandem_prom_commit(&p));
}

FIXTURE(prom) {
	char path[128];
};

FIXTURE_SETUP(prom)
{
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(self->path, sizeof(self->path), "%s/t.prom", dir);
}

FIXTURE_TEARDOWN(prom)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	EXPECT_EQ(0, system(cmd));
	strcpy(dir, "/tmp/tandem-prom-XXXXXX");
}

TEST_F(prom, conventions_are_enforced)
{
	struct tandem_prom p;
	struct tandem_prom_label l = { "node", "x" };
	static const struct { const char *name; enum tandem_prom_type t; int err; } fam[] = {
		{ "tandem_reads", TANDEM_PROM_COUNTER, -EINVAL },	/* counter without _total */
		{ "tandem_reads_total", TANDEM_PROM_GAUGE, -EINVAL },	/* gauge with _total */
		{ "reads_total", TANDEM_PROM_COUNTER, -EINVAL },	/* no tandem_ prefix */
		{ "tandem_Reads_total", TANDEM_PROM_COUNTER, -EINVAL },
		{ "tandem_reads_", TANDEM_PROM_GAUGE, -EINVAL },
		{ "tandem__reads", TANDEM_PROM_GAUGE, -EINVAL },
		{ "tandem_re-ads", TANDEM_PROM_GAUGE, -EINVAL },
		{ "tandem_", TANDEM_PROM_GAUGE, -EINVAL },
	};

	for (size_t i = 0; i < sizeof(fam) / sizeof(fam[0]); i++) {
		ASSERT_EQ(0, tandem_prom_open(&p, dir, "t.prom"));
		EXPECT_EQ(fam[i].err, tandem_prom_family(&p, fam[i].name, fam[i].t, "h")) {
			TH_LOG("%s", fam[i].name);
		}
		/* the first error sticks: nothing is written, no file is left */
		EXPECT_EQ(fam[i].err, tandem_prom_commit(&p));
		EXPECT_EQ(0, count_entries(dir));
	}
	ASSERT_EQ(0, tandem_prom_open(&p, dir, "t.prom"));
	EXPECT_EQ(-EINVAL, tandem_prom_sample(&p, &l, 1, 1));	/* no family yet */
	tandem_prom_abort(&p);
	ASSERT_EQ(0, tandem_prom_open(&p, dir, "t.prom"));
	ASSERT_EQ(0, tandem_prom_family(&p, "tandem_x_total", TANDEM_PROM_COUNTER, "h"));
	EXPECT_EQ(-ERANGE, tandem_prom_sample(&p, &l, 1, -1));
	tandem_prom_abort(&p);
	ASSERT_EQ(0, tandem_prom_open(&p, dir, "t.prom"));
	ASSERT_EQ(0, tandem_prom_family(&p, "tandem_x_total", TANDEM_PROM_COUNTER, "h"));
	EXPECT_EQ(-ERANGE, tandem_prom_sample(&p, &l, 1, NAN));
	tandem_prom_abort(&p);
	ASSERT_EQ(0, tandem_prom_open(&p, dir, "t.prom"));
	ASSERT_EQ(0, tandem_prom_family(&p, "tandem_x", TANDEM_PROM_GAUGE, "h"));
	EXPECT_EQ(-EINVAL, tandem_prom_sample(&p, (struct tandem_prom_label[]){ { "__name", "a" } }, 1, 1));
	tandem_prom_abort(&p);
	ASSERT_EQ(0, tandem_prom_open(&p, dir, "t.prom"));
	ASSERT_EQ(0, tandem_prom_family(&p, "tandem_x", TANDEM_PROM_GAUGE, "h"));
	EXPECT_EQ(-EINVAL, tandem_prom_sample(&p, (struct tandem_prom_label[]){ { "1a", "a" } }, 1, 1));
	tandem_prom_abort(&p);
	ASSERT_EQ(0, tandem_prom_open(&p, dir, "t.prom"));
	ASSERT_EQ(0, tandem_prom_family(&p, "tandem_x", TANDEM_PROM_GAUGE, "h"));
	EXPECT_EQ(-EINVAL, tandem_prom_sample(&p, (struct tandem_prom_label[]){ { "a", "1" }, { "a", "2" } },
					      2, 1));
	tandem_prom_abort(&p);
	ASSERT_EQ(0, tandem_prom_open(&p, dir, "t.prom"));
	ASSERT_EQ(0, tandem_prom_family(&p, "tandem_x", TANDEM_PROM_GAUGE, "h"));
	EXPECT_EQ(-EEXIST, tandem_prom_family(&p, "tandem_x", TANDEM_PROM_GAUGE, "h"));
	tandem_prom_abort(&p);
	EXPECT_EQ(0, count_entries(dir));
	EXPECT_EQ(-EINVAL, tandem_prom_open(&p, dir, "t.txt"));	/* the collector reads *.prom */
	EXPECT_EQ(-EINVAL, tandem_prom_open(&p, dir, "../t.prom"));
	EXPECT_EQ(-ENOENT, tandem_prom_open(&p, "/nonexistent/dir", "t.prom"));
}

TEST_F(prom, replaced_atomically)
{
	struct tandem_prom p;
	struct stat st;
	FILE *f;
	char buf[64] = "";

	f = fopen(self->path, "w");
	ASSERT_NE(NULL, f);
	fputs("old\n", f);
	fclose(f);
	ASSERT_EQ(0, tandem_prom_open(&p, dir, "t.prom"));
	ASSERT_EQ(0, tandem_prom_family(&p, "tandem_x", TANDEM_PROM_GAUGE, "h"));
	ASSERT_EQ(0, tandem_prom_sample(&p, NULL, 0, 1));
	/* until commit a reader sees the old file, and the temporary is no *.prom */
	f = fopen(self->path, "r");
	ASSERT_NE(NULL, f);
	EXPECT_NE(NULL, fgets(buf, sizeof(buf), f));
	fclose(f);
	EXPECT_STREQ("old\n", buf);
	EXPECT_EQ(2, count_entries(dir));
	EXPECT_EQ('.', strrchr(p.tmp, '/')[1]);
	EXPECT_EQ(NULL, strstr(p.tmp + strlen(p.tmp) - 5, ".prom"));
	ASSERT_EQ(0, tandem_prom_commit(&p));
	EXPECT_EQ(1, count_entries(dir));
	ASSERT_EQ(0, stat(self->path, &st));
	EXPECT_EQ(0644, st.st_mode & 0777);
	f = fopen(self->path, "r");
	ASSERT_NE(NULL, f);
	EXPECT_NE(NULL, fgets(buf, sizeof(buf), f));
	fclose(f);
	EXPECT_STREQ("# HELP tandem_x h\n", buf);
}

TEST_F(prom, promtool_passes_it_and_fails_a_bad_file)
{
	char cmd[256], out[4096];
	FILE *f;

	if (!have("promtool"))
		SKIP(return, "promtool not installed (Debian's prometheus)");
	write_good(_metadata, "t.prom");
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s 2>&1", self->path);
	EXPECT_EQ(0, run(cmd, out, sizeof(out))) {
		TH_LOG("promtool: %s", out);
	}
	EXPECT_STREQ("", out);
	/* the tool does check: a counter without _total and a non-base unit */
	snprintf(cmd, sizeof(cmd), "%s/bad.prom", dir);
	f = fopen(cmd, "w");
	ASSERT_NE(NULL, f);
	fputs("# HELP tandem_reads Reads.\n# TYPE tandem_reads counter\ntandem_reads 1\n"
	      "# HELP tandem_size_milliseconds S.\n# TYPE tandem_size_milliseconds gauge\n"
	      "tandem_size_milliseconds 1\n", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s/bad.prom 2>&1", dir);
	EXPECT_NE(0, run(cmd, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "_total"));
}

static void hex(const char *s, char *out)
{
	for (; *s; s++, out += 2)
		sprintf(out, "%02x", (unsigned char)*s);
	*out = '\0';
}

TEST_F(prom, python_parser_reads_back_what_was_written)
{
	static const char py[] =
		"import sys\n"
		"from prometheus_client.parser import text_string_to_metric_families as p\n"
		"for f in p(open(sys.argv[1], encoding='utf-8').read()):\n"
		"  for s in f.samples:\n"
		"    print(f.type, s.name, s.labels.get('job', '-'),\n"
		"          s.labels.get('dataset', '').encode().hex() or '-', repr(s.value))\n"
		"  print('help', f.name, f.documentation.encode().hex())\n";
	char cmd[512], out[8192], line[512], h[256], *p;
	FILE *f;

	if (run("/usr/bin/python3 -c 'import prometheus_client' 2>/dev/null", NULL, 0))
		SKIP(return, "python3-prometheus-client not installed");
	write_good(_metadata, "t.prom");
	snprintf(cmd, sizeof(cmd), "%s/parse.py", dir);
	f = fopen(cmd, "w");
	ASSERT_NE(NULL, f);
	fputs(py, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 %s/parse.py %s 2>&1", dir, self->path);
	ASSERT_EQ(0, run(cmd, out, sizeof(out))) {
		TH_LOG("%s", out);
	}
	for (size_t i = 0; i < NVAL; i++) {
		hex(want_values[i], h);
		snprintf(line, sizeof(line), "counter tandem_test_reads_total %zu %s ", i, *h ? h : "-");
		p = strstr(out, line);
		EXPECT_NE(NULL, p) {
			TH_LOG("missing '%s' in\n%s", line, out);
		}
		/* Python's repr of the float it read: the same number */
		if (p)
			EXPECT_EQ(numbers[i], strtod(p + strlen(line), NULL));
	}
	hex("Reads, counted\nwith a \\ in HELP.", h);
	snprintf(line, sizeof(line), "help tandem_test_reads %s", h);
	EXPECT_NE(NULL, strstr(out, line));
	EXPECT_NE(NULL, strstr(out, "gauge tandem_test_resident_bytes - - -2.5"));
	EXPECT_NE(NULL, strstr(out, "gauge tandem_test_ratio - - nan"));
	EXPECT_NE(NULL, strstr(out, "gauge tandem_test_ratio - - inf"));
}

TEST_HARNESS_MAIN
