// SPDX-License-Identifier: GPL-2.0
/*
 * Measured runs: the CSV written by bench/predictor/profile.py. Comment
 * lines start with '#'; the first other line names the columns; the
 * columns used are arch, onnx, batch, gpus, nodes and time_median_s. Each
 * architecture's ONNX graph (path relative to the CSV) is imported once.
 */
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runs.h"

enum { C_ARCH, C_ONNX, C_BATCH, C_GPUS, C_NODES, C_TIME, C_NUM };
static const char *const col_names[C_NUM] = {
	"arch", "onnx", "batch", "gpus", "nodes", "time_median_s",
};

#define MAX_COLS 32
#define MAX_RUNS (1 << 20)

static int split(char *line, char **f, int max)
{
	int n = 0;

	line[strcspn(line, "\r\n")] = '\0';
	for (char *s = line; n < max; ) {
		f[n++] = s;
		s = strchr(s, ',');
		if (!s)
			break;
		*s++ = '\0';
	}
	return n;
}

static int header(char *line, int *col)
{
	char *f[MAX_COLS];
	int n = split(line, f, MAX_COLS);

	for (int c = 0; c < C_NUM; c++) {
		col[c] = -1;
		for (int i = 0; i < n; i++)
			if (!strcmp(f[i], col_names[c]))
				col[c] = i;
		if (col[c] < 0)
			return tp_fail(-EINVAL, "runs CSV: no column '%s'", col_names[c]);
	}
	return 0;
}

static int find_arch(struct tp_dataset *d, const char *name, const char *onnx, const char *dir)
{
	char path[4096];
	struct tp_arch *a;
	int err;

	snprintf(path, sizeof(path), "%s/%s", onnx[0] == '/' ? "" : dir, onnx);
	for (int i = 0; i < d->narchs; i++)
		if (!strcmp(d->archs[i].name, name) &&
		    !strncmp(d->archs[i].path, onnx[0] == '/' ? onnx : path, sizeof(a->path) - 1))
			return i;
	if (d->narchs == d->cap_archs) {
		int ncap = d->cap_archs ? 2 * d->cap_archs : 64;
		void *p = realloc(d->archs, ncap * sizeof(*d->archs));

		if (!p)
			return tp_fail(-ENOMEM, "out of memory reading runs");
		d->archs = p;
		d->cap_archs = ncap;
	}
	a = &d->archs[d->narchs];
	memset(a, 0, sizeof(*a));
	snprintf(a->name, sizeof(a->name), "%s", name);
	if (strlen(onnx[0] == '/' ? onnx : path) >= sizeof(a->path))
		return tp_fail(-ENAMETOOLONG, "ONNX path too long: %s", onnx);
	memcpy(a->path, onnx[0] == '/' ? onnx : path, strlen(onnx[0] == '/' ? onnx : path) + 1);
	a->group = d->narchs;
	for (int i = 0; i < d->narchs; i++)
		if (!strcmp(d->archs[i].name, name)) {
			a->group = d->archs[i].group;
			break;
		}
	err = tp_graph_load_onnx(a->path, &a->g);
	if (err)
		return err;
	return d->narchs++;
}

static int parse_double_field(const char *s, double *v, int lineno, const char *what)
{
	char *end;

	*v = strtod(s, &end);
	if (end == s || *end || !isfinite(*v) || *v <= 0)
		return tp_fail(-EINVAL, "runs CSV line %d: bad %s '%s'", lineno, what, s);
	return 0;
}

static int add_run(struct tp_dataset *d, char *line, const int *col, const char *dir,
		   int lineno)
{
	char *f[MAX_COLS];
	int n = split(line, f, MAX_COLS), err = 0;
	double gpus, nodes;
	struct tp_run *r;

	for (int c = 0; c < C_NUM; c++)
		if (col[c] >= n)
			return tp_fail(-EINVAL, "runs CSV line %d: %d fields, too few", lineno, n);
	if (d->nruns == d->cap_runs) {
		int ncap = d->cap_runs ? 2 * d->cap_runs : 256;
		void *p = ncap <= MAX_RUNS ? realloc(d->runs, ncap * sizeof(*d->runs)) : NULL;

		if (!p)
			return tp_fail(-ENOMEM, "runs CSV: too many runs");
		d->runs = p;
		d->cap_runs = ncap;
	}
	r = &d->runs[d->nruns];
	err = parse_double_field(f[col[C_BATCH]], &r->batch, lineno, "batch");
	if (!err)
		err = parse_double_field(f[col[C_GPUS]], &gpus, lineno, "gpus");
	if (!err)
		err = parse_double_field(f[col[C_NODES]], &nodes, lineno, "nodes");
	if (!err)
		err = parse_double_field(f[col[C_TIME]], &r->t, lineno, "time");
	if (err)
		return err;
	r->gpus = (int)gpus;
	r->nodes = (int)nodes;
	r->arch = find_arch(d, f[col[C_ARCH]], f[col[C_ONNX]], dir);
	if (r->arch < 0)
		return r->arch;
	d->nruns++;
	return 0;
}

/* "# device: NAME; units U; clock_ghz C; mem_bw_gbs B[; ...]" */
static void device_line(struct tp_device *dev, const char *s)
{
	static const char *const keys[TP_DEV_FEATS] = { "units ", "clock_ghz ", "mem_bw_gbs " };
	size_t n = strcspn(s, ";\r\n");

	memset(dev, 0, sizeof(*dev));
	snprintf(dev->name, sizeof(dev->name), "%.*s", (int)(n < 95 ? n : 95), s);
	for (int k = 0; k < TP_DEV_FEATS; k++) {
		const char *p = strstr(s, keys[k]);

		dev->feat[k] = p ? atof(p + strlen(keys[k])) : 0;
	}
}

static void comment(struct tp_dataset *d, const char *line, struct tp_device *dev)
{
	if (!strncmp(line, "# machine: ", 11)) {
		snprintf(d->machine, sizeof(d->machine), "%s", line + 11);
		d->machine[strcspn(d->machine, "\r\n")] = '\0';
		if (!dev->name[0])	/* older CSVs: the CPU model, as device.c names it */
			snprintf(dev->name, sizeof(dev->name), "%.*s",
				 (int)strcspn(d->machine, ";"), d->machine);
	} else if (!strncmp(line, "# device: ", 10)) {
		device_line(dev, line + 10);
	}
}

static int read_csv(struct tp_dataset *d, FILE *f, const char *dir, struct tp_device *dev)
{
	int col[C_NUM], have_header = 0, lineno = 0, err = 0, nruns = d->nruns;
	char *line = NULL;
	size_t cap = 0;

	memset(dev, 0, sizeof(*dev));
	while (!err && getline(&line, &cap, f) > 0) {
		lineno++;
		if (line[0] == '#')
			comment(d, line, dev);
		else if (line[0] == '\n' || line[0] == '\r')
			continue;
		else if (!have_header)
			err = header(line, col), have_header = 1;
		else
			err = add_run(d, line, col, dir, lineno);
	}
	free(line);
	if (!err && d->nruns == nruns)
		err = tp_fail(-EINVAL, "runs CSV has no runs");
	return err;
}

/* Group run indices by architecture. */
static int index_runs(struct tp_dataset *d)
{
	int *fill = calloc(d->narchs, sizeof(*fill));

	d->by_arch = malloc(d->nruns * sizeof(*d->by_arch));
	if (!fill || !d->by_arch) {
		free(fill);
		return tp_fail(-ENOMEM, "out of memory indexing runs");
	}
	for (int i = 0; i < d->nruns; i++)
		d->archs[d->runs[i].arch].nruns++;
	for (int a = 1; a < d->narchs; a++)
		d->archs[a].run0 = d->archs[a - 1].run0 + d->archs[a - 1].nruns;
	for (int i = 0; i < d->nruns; i++) {
		struct tp_arch *a = &d->archs[d->runs[i].arch];

		d->by_arch[a->run0 + fill[d->runs[i].arch]++] = i;
	}
	free(fill);
	return 0;
}

static int load_csv(struct tp_dataset *d, const char *csv)
{
	struct tp_device dev;
	char *dup = strdup(csv), msg[400];
	FILE *f;
	int err;

	if (!dup)
		return tp_fail(-ENOMEM, "out of memory");
	f = fopen(csv, "r");
	if (!f) {
		err = tp_fail(-errno, "%s: %s", csv, strerror(errno));
		goto out_free;
	}
	err = read_csv(d, f, dirname(dup), &dev);
	fclose(f);
	if (err) {
		snprintf(msg, sizeof(msg), "%s", tp_errmsg());
		err = tp_fail(err, "%s: %s", csv, msg);
	} else if (!d->dev.name[0]) {
		d->dev = dev;
	} else if (strcmp(d->dev.name, dev.name)) {
		d->mixed_devices = true;
	}
out_free:
	free(dup);
	return err;
}

int tp_dataset_load_many(const char *const *csv, int n, struct tp_dataset **out)
{
	struct tp_dataset *d;
	int err = 0;

	tp_clear_error();
	d = calloc(1, sizeof(*d));
	if (!d)
		return tp_fail(-ENOMEM, "out of memory");
	for (int i = 0; i < n && !err; i++)
		err = load_csv(d, csv[i]);
	if (!err)
		err = index_runs(d);
	if (err) {
		tp_dataset_free(d);
		return err;
	}
	*out = d;
	return 0;
}

int tp_dataset_load(const char *csv, struct tp_dataset **out)
{
	return tp_dataset_load_many(&csv, 1, out);
}

void tp_dataset_free(struct tp_dataset *d)
{
	if (!d)
		return;
	for (int a = 0; a < d->narchs; a++)
		tp_graph_free(d->archs[a].g);
	free(d->archs);
	free(d->runs);
	free(d->by_arch);
	free(d);
}

int tp_dataset_num_archs(const struct tp_dataset *d)
{
	return d->narchs;
}

int tp_dataset_num_runs(const struct tp_dataset *d)
{
	return d->nruns;
}
