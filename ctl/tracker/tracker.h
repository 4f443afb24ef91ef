/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Page-cache sharing tracker, userspace side: load the BPF programs and pin
 * them (load.c), find and remove the pins (pins.c), work on the pinned maps
 * from any later process (tracker.c: the pin directory, datasets, jobs) and read them all at
 * once (snapshot.c). State lives in the pinned maps and in struct tracker,
 * the caller's open maps; nothing here is kept between calls.
 *
 * The pin directory is /sys/fs/bpf/tandem/tracker, or $TANDEM_TRACKER_DIR
 * (tests use their own so they never disturb a tracker in use). Unloading
 * removes the directory, and with the default /sys/fs/bpf/tandem too once
 * it is empty.
 */
#ifndef TANDEM_CTL_TRACKER_H
#define TANDEM_CTL_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/files.h"
#include "../../bpf/tracker.h"	/* the map types shared with the BPF side */

#define TRACKER_DEFAULT_PARENT		"/sys/fs/bpf/tandem"
#define TRACKER_DEFAULT_DIR		TRACKER_DEFAULT_PARENT "/tracker"
#define TRACKER_DEFAULT_MAX_PAGES	131072	/* 512 MiB of dataset pages */
#define TRACKER_DEFAULT_MAX_FILES	16384
/* what a load sized from a dataset asks at most (hash max_entries are u32) */
#define TRACKER_MAX_FILES		(1U << 27)
#define TRACKER_MAX_PAGES		(UINT32_MAX / 2)

enum tracker_kind {
	TRACKER_KIND_ANY = 0,
	TRACKER_KIND_TRACEPOINT,
	TRACKER_KIND_FENTRY,
	TRACKER_KIND_KPROBE,
};

struct tracker_load_opts {
	uint32_t max_pages;		/* 0: default */
	uint32_t max_files;		/* 0: default */
	/*
	 * max_pages was asked for: a later registration never grows the page
	 * words (pages without one are counted as overflow), only the file table
	 */
	bool pages_set;
	enum tracker_kind prefer;	/* try this kind first where offered */
	bool verbose;			/* libbpf's messages to stderr */
};

/* the pin directory in use */
const char *tracker_dir(void);
bool tracker_is_loaded(void);
int tracker_load(const struct tracker_load_opts *opts);
int tracker_unload(void);
/* load with default options unless already loaded; *loaded says which */
int tracker_ensure_loaded(bool *loaded);
/*
 * Load options for a dataset of FILES files and PAGES pages: a quarter more
 * of each, at least the defaults, so it is counted without overflow.
 */
void tracker_size_for(uint64_t files, uint64_t pages, struct tracker_load_opts *o);
int tracker_kind_parse(const char *s, enum tracker_kind *kind);

/* The pinned maps, opened by path. */
struct tracker {
	int files_fd;
	int pages_fd;
	int tasks_fd;
	int jobs_fd;
	int datasets_fd;
	int counts_fd;
	int matrix_fd;
	int global_fd;
	int meta_fd;
	int filter_fd;
	int fileinfo_fd;
	int taskgen_fd;		/* moved after each write of tasks (tracker_job_add_pid()) */
	uint32_t filter_words;	/* the filter's max_entries */
	uint32_t meta_id;	/* the meta map's kernel id: changes when reloaded */
	int lock_fd;
	int ncpus;
};

int tracker_open(struct tracker *t);
void tracker_close(struct tracker *t);
/* serialise id allocation between tandemctl processes (flock) */
int tracker_lock(struct tracker *t);
void tracker_unlock(struct tracker *t);

/*
 * Datasets: NAME is created on first use; PATHs are files or directories,
 * walked by the dataset walk every command uses (lib/files.h).
 */
struct tracker_add_result {
	uint32_t dataset;
	uint32_t added;		/* files newly registered */
	uint32_t present;	/* already registered (to this or another dataset) */
	/*
	 * The dataset the present files belong to: 0 when none was present,
	 * TRACKER_OWNER_MIXED when they belong to several. A file belongs to
	 * one dataset, and its reads count there (tracker_add_counts_in()).
	 */
	uint32_t owner;
	uint64_t pages;		/* pages of the newly registered files */
	struct file_skips skipped;	/* what the walk left out */
};
#define TRACKER_OWNER_MIXED	UINT32_MAX
/*
 * Where the reads of the files just added count: the new dataset, or, when
 * every file was already registered to one other dataset (another command
 * registered the directory first, under its name), that one.
 */
uint32_t tracker_add_counts_in(const struct tracker_add_result *res);
/*
 * Register NAME's files (PATHS walked) with the tracker, sized for them,
 * the one entry every command uses: a tracker is loaded sized for the
 * dataset when none is (not with TRACKER_REG_IF_LOADED: then nothing is
 * done, *t is left closed, fit->tracked false); a loaded one whose file
 * table or page words cannot hold the dataset is reloaded larger with every
 * map copied (tracker_grow(), fit->grown) when no tracked job is running,
 * and refused with -EBUSY and an error line that says what to do when one
 * is. Nothing is registered unless all of it fits. On success *t is the
 * open tracker (the caller closes it).
 */
#define TRACKER_REG_IF_LOADED	1U
struct tracker_fit {
	bool tracked;		/* *t is open and the files registered */
	bool loaded;		/* this call loaded the tracker */
	bool grown;		/* this call reloaded it larger */
	uint64_t files, pages;	/* the dataset's, from the walk */
};
int tracker_register(struct tracker *t, const char *name, char *const *paths, int npaths,
		     unsigned int flags, struct tracker_add_result *res,
		     struct tracker_fit *fit);
/* reopen T's maps when the pinned tracker was reloaded (grown) since T was opened */
int tracker_refresh(struct tracker *t);
/* find by decimal id or by name; -ENOENT if neither */
int tracker_dataset_find(struct tracker *t, const char *id_or_name, uint32_t *id);

/* Jobs */
int tracker_job_new(struct tracker *t, const char *name, uint32_t dataset,
		    uint32_t *id);
int tracker_job_find(struct tracker *t, const char *id_or_name, uint32_t *id);
/* register a process (by tgid) with a job; it and its later children count */
int tracker_job_add_pid(struct tracker *t, uint32_t job, pid_t pid);
/* the process and its current descendants (from /proc) */
int tracker_job_add_tree(struct tracker *t, uint32_t job, pid_t pid, int *nadded);
int tracker_job_set_root(struct tracker *t, uint32_t job, pid_t pid);
int tracker_job_set_exit(struct tracker *t, uint32_t job, int exit_code);
/*
 * One job's counters on one dataset, summed over CPUs: one map lookup, cheap
 * enough to poll every few milliseconds (zeroes before its first event).
 */
int tracker_job_counts(struct tracker *t, uint32_t job, uint32_t dataset,
		       struct tandem_trk_counts *sum);

/* A summed, consistent-enough copy of every counter (for stats). */
struct tracker_count_row {
	struct tandem_trk_ckey key;
	struct tandem_trk_counts c;
};

struct tracker_matrix_row {
	struct tandem_trk_mkey key;
	uint64_t pages;
};

struct tracker_job_row {
	uint32_t id;
	uint32_t nproc;		/* live processes now */
	struct tandem_trk_job job;
};

struct tracker_dataset_row {
	uint32_t id;
	struct tandem_trk_dataset ds;
};

struct tracker_snapshot {
	struct tracker_count_row *counts;
	size_t ncounts;
	struct tracker_matrix_row *matrix;
	size_t nmatrix;
	struct tracker_job_row *jobs;
	size_t njobs;
	struct tracker_dataset_row *datasets;
	size_t ndatasets;
	struct tandem_trk_global global;
	struct tandem_trk_meta meta;
	uint64_t pages_tracked;		/* pages with a state now (meta) */
	/*
	 * Pages without a state although cached: failed inserts (max_pages
	 * reached) plus states lost otherwise (inserted - removed - tracked).
	 */
	uint64_t overflow;
};

int tracker_snapshot_read(struct tracker *t, struct tracker_snapshot *s);
void tracker_snapshot_free(struct tracker_snapshot *s);
/* a dataset's or job's name in the snapshot: "?" when absent, job 0 "(untracked)" */
const char *tracker_snapshot_dataset_name(const struct tracker_snapshot *s, uint32_t id);
const char *tracker_snapshot_job_name(const struct tracker_snapshot *s, uint32_t id);
/* one (job, dataset) row, summed; zeroes when absent */
struct tandem_trk_counts tracker_snapshot_counts(const struct tracker_snapshot *s,
						 uint32_t job, uint32_t dataset);

/*
 * One (job, dataset) row summed over CPUs, by one lookup: cheap enough to
 * poll (a snapshot walks every map). Zeroes when the job has no event yet.
 */
int tracker_counts_get(struct tracker *t, uint32_t job, uint32_t dataset,
		       struct tandem_trk_counts *c);
/* Every job's rows of one dataset summed (job 0 too): the counts map only. */
int tracker_dataset_counts(struct tracker *t, uint32_t dataset, struct tandem_trk_counts *c);

#endif
