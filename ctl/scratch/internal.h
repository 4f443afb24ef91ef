/* SPDX-License-Identifier: GPL-2.0 */
/* Inside ctl/scratch/: the drained log (drained_log.c), the tree walk and the drainer. */
#ifndef TANDEM_CTL_SCRATCH_INTERNAL_H
#define TANDEM_CTL_SCRATCH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "scratch/scratch.h"

/* The scratch names among DIR's entries that keep() accepts (NULL: all), sorted (config.c). */
int scratch_dir_names(const char *dir, bool (*keep)(const char *name),
		      char ***names, size_t *n);
/* A path in a log line: '%' and '\n' as %25 and %0A (out: 3x as long as s, plus one),
 * and back in place (drained_log.c; journal.c's lines too). */
void scratch_path_esc(const char *s, char *out);
void scratch_path_unesc(char *s);

/* c's config file, written whole (config.c), in its state folder or in dir */
int scratch_cfg_save(const struct scratch_cfg *c);
int scratch_cfg_save_in(const struct scratch_cfg *c, const char *dir);

/*
 * The durable record (journal.c): made at create, before the drainer starts
 * (said on failure), removed with the scratch. The drainer journals each
 * file it queues and each copy it made durable (fsync'ed), and a queued file
 * that is gone; failures are said on its stderr and do not stop the drain.
 */
int scratch_record_create(const struct scratch_cfg *c);
void scratch_record_remove(const struct scratch_cfg *c);
void scratch_journal_queued(const struct scratch_cfg *c, const char *rel);
void scratch_journal_durable(const struct scratch_cfg *c, const char *rel, const struct stat *st);
void scratch_journal_gone(const struct scratch_cfg *c, const char *rel);

/* A file's identity for the log: its size and modification time. */
struct drain_rec {
	char *path;		/* relative to the mount */
	uint64_t bytes;
	int64_t mtime_ns;
	double durable;		/* unix time */
	size_t line;		/* the later line of a path wins */
};

struct drain_log {
	struct drain_rec *v;	/* by path, one per path (the last line) */
	size_t n;
	size_t lines;
	double last;		/* the last durable time */
};

/* drained.log of c (a missing one is empty) */
int drain_log_load(const struct scratch_cfg *c, struct drain_log *log);
void drain_log_free(struct drain_log *log);
/* whether the log says path, as st has it now, is durable; its record or NULL */
const struct drain_rec *drain_log_find(const struct drain_log *log, const char *path,
				       const struct stat *st);
/* one line: path, as st had it, durable at time t */
int drain_log_append(const struct scratch_cfg *c, const char *path, const struct stat *st,
		     double t);
int64_t stat_mtime_ns(const struct stat *st);

/*
 * fn(arg, path relative to root, its stat) for every regular file under
 * root (names starting with '.' skipped: writers' temporaries), depth first
 * in readdir order; stops at fn's first non-zero return.
 */
typedef int (*scratch_walk_fn)(void *arg, const char *rel, const struct stat *st);
int scratch_walk(const char *root, const char *rel, scratch_walk_fn fn, void *arg);

/* The drainer's loop (drain.c); ready gets one int, 0 or -errno, once it watches. */
int scratch_drain_main(const struct scratch_cfg *c, int ready);

#endif
