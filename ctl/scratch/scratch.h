/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Scratch spaces: a tmpfs whose pages are bound to one NUMA node (the CXL
 * node) with mpol=bind, and a drainer process that copies every file closed
 * in it to a durable directory, in order, at a capped rate, each one made
 * durable with fsync and an atomic rename (Documentation/scratch.md).
 *
 * State of scratch NAME, under scratch_root() (/run/tandem/scratch, or
 * $TANDEM_SCRATCH_DIR):
 *   NAME/config       key=value lines (struct scratch_cfg), root's
 *   NAME/mnt/         the tmpfs, mode 0700, owned by the scratch's owner
 *   NAME/drainer.pid  the drainer's pid, root's
 *   NAME/drained.log  one line per file made durable, the owner's (the
 *                     drainer runs as the owner)
 *   NAME/drainer.err  the drainer's error lines, the owner's
 * and its durable record, which a reboot keeps (journal.c), under
 * scratch_record_root() (/var/lib/tandem/scratch, or $TANDEM_SCRATCH_RECORD_DIR):
 *   NAME/config       the same config, root's
 *   NAME/journal      one line fsync'ed per file queued for drain and per
 *                     copy made durable, the owner's
 */
#ifndef TANDEM_CTL_SCRATCH_H
#define TANDEM_CTL_SCRATCH_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define SCRATCH_NAME_MAX	64
#define SCRATCH_ROOT		"/run/tandem/scratch"
#define SCRATCH_RECORD_ROOT	"/var/lib/tandem/scratch"
/* the drainer's process name (comm), checked before it is signalled */
#define SCRATCH_DRAINER_COMM	"tandem-drain"
/* the name a file is copied to in its destination folder before the rename */
#define SCRATCH_TMP_SUFFIX	".tandem-drain"

struct scratch_cfg {
	char name[SCRATCH_NAME_MAX];
	char dir[PATH_MAX];		/* its state folder */
	char record[PATH_MAX];		/* its durable record folder */
	char mnt[PATH_MAX];		/* the tmpfs */
	char drain_to[PATH_MAX];	/* real path of the destination */
	uint64_t size;			/* bytes */
	double rate;			/* drain cap, bytes/s; 0: none */
	int node;			/* mpol=bind:<node> */
	uid_t uid;			/* owner */
	gid_t gid;
	bool evict;			/* remove a file from scratch once durable */
	bool huge;			/* huge=always: 2 MiB pages where it can */
	double created;			/* unix time */
	bool lost;			/* its state went with a reboot: the record only */
};

/* One file in scratch and whether its current content is durable. */
struct scratch_file {
	char *path;			/* relative to the mount */
	uint64_t bytes;
	bool drained;
	double durable;			/* unix time it became durable, 0: not */
};

struct scratch_status {
	pid_t drainer;			/* 0: not running */
	uint64_t used_bytes;		/* of the tmpfs (statfs) */
	uint64_t drained_files, drained_bytes, pending_files, pending_bytes;
	uint64_t durable_files;		/* lines of drained.log: files made durable */
	double last_durable;		/* unix time of the last one, 0: none */
	struct scratch_file *files;	/* every file now in scratch, by path */
	size_t nfiles;
};

/* the state root: $TANDEM_SCRATCH_DIR or SCRATCH_ROOT */
const char *scratch_root(void);
/* the durable records' root: $TANDEM_SCRATCH_RECORD_DIR or SCRATCH_RECORD_ROOT */
const char *scratch_record_root(void);
/* 1-63 characters of A-Z a-z 0-9 . _ - (not starting with '.'); 0 or -EINVAL */
int scratch_name_check(const char *name);
/* Fill c's paths for name (nothing read). */
void scratch_cfg_paths(struct scratch_cfg *c, const char *name);
/*
 * Read scratch name's config: 0, -ENOENT (no such scratch, said),
 * -ESTALE (lost at a reboot, said) or -errno.
 */
int scratch_cfg_load(const char *name, struct scratch_cfg *c);
/* The same, and a scratch lost at a reboot from its record (c->lost set). */
int scratch_cfg_load_any(const char *name, struct scratch_cfg *c);
/* The scratch names, sorted; *names freed with scratch_names_free(). */
int scratch_names(char ***names, size_t *n);
void scratch_names_free(char **names, size_t n);

/*
 * Make scratch c (name, drain_to, size, rate, node, uid, gid, evict set):
 * its state folder, the tmpfs on c->node, and its drainer. Every failure is
 * said in one line and undone. Needs root.
 */
int scratch_create(struct scratch_cfg *c);
/*
 * Stop the drainer, unmount and remove scratch c. Files not yet durable
 * refuse it (-EBUSY, the drainer left running) unless force; either way
 * *undrained gets what was not durable (freed by scratch_status_free()).
 */
int scratch_del(const struct scratch_cfg *c, bool force, struct scratch_status *undrained);

/* Whether each file in scratch is durable, and the totals. */
int scratch_status_get(const struct scratch_cfg *c, struct scratch_status *st);
void scratch_status_free(struct scratch_status *st);
/* bytes in use on c's tmpfs (statfs: anyone may ask), 0 when not mounted */
uint64_t scratch_used_bytes(const struct scratch_cfg *c);

/* The running drainer's pid, 0 when none. */
pid_t scratch_drainer_pid(const struct scratch_cfg *c);
/*
 * Start c's drainer (a daemon running as c's owner); returns once it
 * watches the scratch, or the error it met (said). -EALREADY when running.
 */
int scratch_drainer_start(const struct scratch_cfg *c, pid_t *pid);
/* SIGTERM (then SIGKILL after 5 s) to the drainer; 0 when none ran. */
int scratch_drainer_stop(const struct scratch_cfg *c);

/* A file queued for drain whose copy was not durable when the scratch was lost. */
struct scratch_lost_file {
	char *path;			/* relative to the mount */
	uint64_t bytes;			/* as it was queued */
	double mtime;			/* its modification time then, unix seconds */
	int64_t dest_bytes;		/* what the destination holds: -1 nothing */
};

struct scratch_lost {
	struct scratch_lost_file *files;	/* by path */
	size_t nfiles;
	uint64_t bytes;
	uint64_t durable_files;		/* copies the journal has as durable */
	double last_durable;		/* unix time of the last, 0: none */
};

/* The names of the scratches lost at a reboot (a record, no state), sorted. */
int scratch_lost_names(char ***names, size_t *n);
/* What lost scratch c's journal has as queued and not durable. */
int scratch_lost_get(const struct scratch_cfg *c, struct scratch_lost *l);
void scratch_lost_free(struct scratch_lost *l);
/* Remove lost scratch c's record (root). */
int scratch_record_del(const struct scratch_cfg *c);

#endif
