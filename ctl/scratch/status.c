// SPDX-License-Identifier: GPL-2.0
/*
 * What is in scratch and whether each file is durable, as drained.log
 * (drained_log.c) says; whether the drainer runs (daemon.c); the tmpfs's
 * use.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/statfs.h>

#include "lib/log.h"
#include "scratch/internal.h"

struct status_walk {
	const struct drain_log *log;
	struct scratch_status *st;
	size_t room;
};

static int status_file(void *arg, const char *rel, const struct stat *s)
{
	struct status_walk *w = arg;
	struct scratch_status *st = w->st;
	const struct drain_rec *r = drain_log_find(w->log, rel, s);
	struct scratch_file *f, *nv;

	if (st->nfiles == w->room) {
		w->room = w->room ? w->room * 2 : 32;
		nv = realloc(st->files, w->room * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		st->files = nv;
	}
	f = &st->files[st->nfiles];
	f->path = strdup(rel);
	if (!f->path)
		return -ENOMEM;
	st->nfiles++;
	f->bytes = s->st_size;
	f->drained = r != NULL;
	f->durable = r ? r->durable : 0;
	if (r) {
		st->drained_files++;
		st->drained_bytes += f->bytes;
	} else {
		st->pending_files++;
		st->pending_bytes += f->bytes;
	}
	return 0;
}

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct scratch_file *)a)->path, ((const struct scratch_file *)b)->path);
}

uint64_t scratch_used_bytes(const struct scratch_cfg *c)
{
	struct statfs sf;

	if (statfs(c->mnt, &sf) || sf.f_type != TMPFS_MAGIC)
		return 0;
	return (uint64_t)(sf.f_blocks - sf.f_bfree) * sf.f_bsize;
}

int scratch_status_get(const struct scratch_cfg *c, struct scratch_status *st)
{
	struct status_walk w = { .st = st };
	struct drain_log log;
	int err;

	memset(st, 0, sizeof(*st));
	err = drain_log_load(c, &log);
	if (err) {
		ctl_err("%s/drained.log: %s", c->dir, strerror(-err));
		return err;
	}
	w.log = &log;
	st->drainer = scratch_drainer_pid(c);
	st->durable_files = log.lines;
	st->last_durable = log.last;
	st->used_bytes = scratch_used_bytes(c);
	err = scratch_walk(c->mnt, "", status_file, &w);
	drain_log_free(&log);
	if (err) {
		ctl_err("%s: %s", c->mnt, strerror(-err));
		scratch_status_free(st);
		return err;
	}
	if (st->nfiles)
		qsort(st->files, st->nfiles, sizeof(*st->files), cmp_file);
	return 0;
}

void scratch_status_free(struct scratch_status *st)
{
	for (size_t i = 0; i < st->nfiles; i++)
		free(st->files[i].path);
	free(st->files);
	st->files = NULL;
	st->nfiles = 0;
}
