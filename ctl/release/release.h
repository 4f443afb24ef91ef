/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Release engine of `tandemctl run`: forks every instance into its own
 * process group up front, where it waits on a pipe, and lets each one exec
 * at its release time (or when the previous instance has
 * loaded a fraction of the dataset), forwards SIGINT/SIGTERM/SIGHUP to all
 * of them, and leaves no process behind (tandemctl is a child subreaper and
 * kills what is left of every group and every orphan it inherited).
 *
 * Hook points for the parts that live elsewhere (tandem.ko, the BPF
 * tracker) are in struct rel_hooks; every hook is optional.
 */
#ifndef TANDEM_CTL_RELEASE_H
#define TANDEM_CTL_RELEASE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "loadgen/loadgen.h"
#include "model/model.h"

/* Per-job page-cache sharing counters for the report (pages). */
struct rel_job_stats {
	uint64_t misses;	/* loaded from storage by this job */
	uint64_t own_hits;	/* hits on pages this job loaded */
	uint64_t shared_hits;	/* hits on pages another job loaded */
};

#define REL_MAX_NODES 16

struct rel_hooks {
	const char *name;
	/* Before any instance starts: register the dataset (tandem.ko, tracker). */
	int (*dataset_register)(void *ctx, const char *dir, const struct lg_dataset *ds);
	/*
	 * Instance idx was forked as process group pgid and waits to exec
	 * until this returns, so a tracker sees every read it makes.
	 */
	int (*job_start)(void *ctx, int idx, const char *name, pid_t pgid);
	/* The leader of instance idx exited with wait status `status`. */
	void (*job_exit)(void *ctx, int idx, int status);
	/*
	 * progress:F trigger: fraction (0..1) of the dataset instance idx has
	 * loaded. Without this hook the engine uses read_bytes of the
	 * instance's process group (/proc/PID/io) over the dataset size.
	 */
	int (*progress)(void *ctx, int idx, pid_t pgid, double *fraction);
	/* For the report, after every instance ended. */
	int (*job_stats)(void *ctx, int idx, struct rel_job_stats *st);
	/* Dataset bytes resident per NUMA node, for the report. */
	int (*residency)(void *ctx, double *bytes, int max_nodes, int *nnodes);
	void (*finish)(void *ctx);
	void *ctx;
};

/* The hooks `tandemctl run` uses (NULL: none). Not thread-safe; call early. */
void rel_hooks_register(const struct rel_hooks *h);
const struct rel_hooks *rel_hooks_get(void);

enum rel_mode {
	REL_TIME,		/* release instance k at delta[k] */
	REL_PROGRESS,		/* instance k+1 when k has loaded fraction */
};

enum rel_state {
	REL_PENDING,
	REL_RUNNING,
	REL_EXITED,
	REL_SKIPPED,		/* never started: interrupted or --fail-fast */
};

struct rel_inst {
	char name[MODEL_NAME_LEN];
	char **argv;		/* NULL-terminated, borrowed */
	double delta;		/* requested release, s after t0 (REL_TIME) */
	enum rel_state state;
	pid_t pgid;		/* = pid of the instance's first process */
	int gate;		/* write end of its release pipe while it waits, else -1 */
	double start, end;	/* measured, s after t0 */
	double loaded;		/* progress fraction when the next was released */
	int status;		/* wait status of the leader */
	bool have_stats;
	struct rel_job_stats stats;
};

struct rel_run {
	int n;
	struct rel_inst *inst;
	enum rel_mode mode;
	double fraction;	/* REL_PROGRESS */
	double dataset_bytes;	/* for the progress fallback */
	bool fail_fast;
	double grace;		/* s between SIGTERM and SIGKILL (default 5) */
	/* results */
	double t0;		/* monotonic time of the first release */
	double makespan;	/* last end - t0 */
	int interrupted;	/* signal that interrupted the run, or 0 */
	int nfailed;
	int nskipped;
	double residency[REL_MAX_NODES];
	int nres_nodes;
};

/* Split "CMD_A ::: CMD_B ::: ..." (argv after "--") into n argv arrays. */
int rel_split_commands(int argc, char **argv, char ****cmds, int *n);
void rel_free_commands(char ***cmds, int n);
/* "0.5", "2,5.5", "30s": delta[0..n) (one value v: k * v). */
int rel_parse_stagger(const char *s, int n, double *delta);

/*
 * Run every instance to completion. Returns 0 when all exited with 0,
 * -ECHILD when some failed or were skipped, -EINTR when interrupted, or
 * another negative errno when the run could not be set up.
 */
int rel_run(struct rel_run *r, const char *dataset_dir, const struct lg_dataset *ds);
bool rel_inst_ok(const struct rel_inst *in);

#endif
