// SPDX-License-Identifier: GPL-2.0
/*
 * drained.log and what it says about the files in scratch. The drainer
 * appends one line per file it made durable, after the rename and the
 * directory's fsync:
 *   <unix time, durable> <bytes> <mtime s>.<mtime ns> <path, '%' and '\n' as %25 %0A>
 * A file is drained when the last line for its path has its size and
 * modification time as they are now: a file written again is pending
 * again. A line lost to a crash after the rename only drains the file once
 * more.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "scratch/internal.h"

int64_t stat_mtime_ns(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

void scratch_path_esc(const char *s, char *out)
{
	for (; *s; s++) {
		if (*s == '%' || *s == '\n')
			out += sprintf(out, "%%%02X", (unsigned char)*s);
		else
			*out++ = *s;
	}
	*out = 0;
}

void scratch_path_unesc(char *s)
{
	char *o = s;
	unsigned int v;

	for (; *s; s++) {
		if (*s == '%' && sscanf(s + 1, "%2X", &v) == 1) {
			*o++ = (char)v;
			s += 2;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct drain_rec *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* one log line into log->v[log->n]; a malformed one (a torn last line) is skipped */
static int log_line(struct drain_log *log, char *line)
{
	struct drain_rec *r = &log->v[log->n];
	unsigned long long bytes;
	long long sec, nsec;
	double t;
	int off = 0;

	if (sscanf(line, "%lf %llu %lld.%lld %n", &t, &bytes, &sec, &nsec, &off) != 4 || !off ||
	    !line[off])
		return 0;
	scratch_path_unesc(line + off);
	r->path = strdup(line + off);
	if (!r->path)
		return -ENOMEM;
	r->bytes = bytes;
	r->mtime_ns = sec * 1000000000LL + nsec;
	r->durable = t;
	r->line = log->lines++;
	if (t > log->last)
		log->last = t;
	log->n++;
	return 0;
}

/* sort by path, keep the last line of each */
static void log_dedup(struct drain_log *log)
{
	size_t k = 0;

	if (!log->n)
		return;
	qsort(log->v, log->n, sizeof(*log->v), cmp_rec);
	for (size_t i = 0; i < log->n; i++) {
		if (i + 1 < log->n && !strcmp(log->v[i].path, log->v[i + 1].path)) {
			free(log->v[i].path);
			continue;
		}
		log->v[k++] = log->v[i];
	}
	log->n = k;
}

int drain_log_load(const struct scratch_cfg *c, struct drain_log *log)
{
	char path[PATH_MAX + 16], *line = NULL;
	size_t cap = 0, room = 0;
	struct drain_rec *nv;
	ssize_t len;
	int err = 0;
	FILE *f;

	memset(log, 0, sizeof(*log));
	snprintf(path, sizeof(path), "%s/drained.log", c->dir);
	f = fopen(path, "r");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (!err && (len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] != '\n')
			break;	/* torn: the drainer died writing it */
		line[len - 1] = 0;
		if (log->n == room) {
			room = room ? room * 2 : 64;
			nv = realloc(log->v, room * sizeof(*nv));
			if (!nv) {
				err = -ENOMEM;
				break;
			}
			log->v = nv;
		}
		err = log_line(log, line);
	}
	free(line);
	fclose(f);
	if (err) {
		drain_log_free(log);
		return err;
	}
	log_dedup(log);
	return 0;
}

void drain_log_free(struct drain_log *log)
{
	for (size_t i = 0; i < log->n; i++)
		free(log->v[i].path);
	free(log->v);
	memset(log, 0, sizeof(*log));
}

const struct drain_rec *drain_log_find(const struct drain_log *log, const char *path,
				       const struct stat *st)
{
	size_t lo = 0, hi = log->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(log->v[mid].path, path);

		if (!c) {
			const struct drain_rec *r = &log->v[mid];

			return r->bytes == (uint64_t)st->st_size &&
			       r->mtime_ns == stat_mtime_ns(st) ? r : NULL;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int drain_log_append(const struct scratch_cfg *c, const char *path, const struct stat *st,
		     double t)
{
	char lp[PATH_MAX + 16], *e, *line;
	int fd, n, err = 0;

	e = malloc(strlen(path) * 3 + 1);
	line = malloc(strlen(path) * 3 + 96);
	if (!e || !line) {
		err = -ENOMEM;
		goto free_bufs;
	}
	scratch_path_esc(path, e);
	n = sprintf(line, "%.6f %llu %lld.%09ld %s\n", t, (unsigned long long)st->st_size,
		    (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec, e);
	snprintf(lp, sizeof(lp), "%s/drained.log", c->dir);
	fd = open(lp, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		goto free_bufs;
	}
	/* one write of O_APPEND: a line is whole or, after a crash, torn at the end */
	if (write(fd, line, n) != n)
		err = -EIO;
	close(fd);
free_bufs:
	free(e);
	free(line);
	return err;
}
