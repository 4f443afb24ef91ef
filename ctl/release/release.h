/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The release engine and what plugs into it.
 *
 * Engine (engine.c): forks every instance into its own process group up
 * front, where it waits on a pipe, and lets each one exec at its release
 * time (or when the previous instance has loaded a fraction of the
 * dataset), forwards SIGINT/SIGTERM/SIGHUP to all of them, and leaves no
 * process behind (the caller is a child subreaper for the run and kills what
 * is left of every group and every orphan it inherited). Everything it needs
 * comes in struct rel_run, and everything the report needs goes back in it:
 * no state is kept between runs, so another caller (a node agent) can drive
 * it as `tandemctl run` does. rel_run() blocks until every instance ended;
 * meanwhile it blocks SIGCHLD/SIGINT/SIGTERM/SIGHUP (taken with
 * sigtimedwait()), and at the end it kills and reaps every child of the
 * calling process: a caller with other children runs it in a process of its
 * own.
 *
 * Hooks (struct rel_ops, each with its own state): the parts that live
 * elsewhere. tandem.ko registration, steering counters and residency
 * (hook_module.c, struct rel_module) and the BPF tracker's jobs, progress
 * and sharing counters (hook_tracker.c, struct rel_tracker). Without hooks
 * the engine measures progress by the instances' read_bytes (/proc) and
 * residency by mincore (lib/residency.h).
 *
 * Plan (plan.c): the release vector from --stagger and the makespan model;
 * report (run_report.c): the one document `run` prints (text, -j) and saves.
 */
#ifndef TANDEM_CTL_RELEASE_H
#define TANDEM_CTL_RELEASE_H

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "calibrate/calibrate.h"
#include "lib/openwatch.h"
#include "lib/samples.h"
#include "lib/stagger.h"
#include "model/model.h"
#include "module/module.h"
#include "tracker/tracker.h"

#define REL_MAX_INST	MODEL_MAX_INST
#define REL_MAX_HOOKS	4
#define REL_MAX_NODES	16
#define REL_EREFUSED	(-ECANCELED)

/* ---- the engine ---- */

/* Per-job page-cache sharing counters for the report (pages). */
struct rel_job_stats {
	uint64_t misses;	/* loaded from storage by this job */
	uint64_t own_hits;	/* hits on pages this job loaded */
	uint64_t shared_hits;	/* hits on pages another job loaded */
	uint64_t evicted;	/* pages this job loaded that left the cache */
};

/* The dataset the instances read, as the hooks get it. */
struct rel_dataset {
	const char *name;		/* a name tandem.ko takes (dataset_name_make()) */
	const char *dir;
	const struct sample_set *set;	/* its files and samples (lib/samples.h) */
};

/* One part plugged into the engine; every operation is optional. */
struct rel_ops {
	const char *name;		/* "tandem.ko": also the report's residency_source */
	/*
	 * Before any instance is forked. An error leaves the hook out of the
	 * run (its finish is still called); the hook says why itself.
	 * REL_EREFUSED stops the run before anything starts (the tracker is
	 * loaded but too small for the dataset and cannot grow now: running
	 * untracked would hide that).
	 */
	int (*dataset_register)(void *state, const struct rel_dataset *ds);
	/*
	 * Instance idx was forked as process group pgid and waits to exec
	 * until this returns, so a tracker sees every read it makes.
	 */
	int (*job_start)(void *state, int idx, const char *name, pid_t pgid);
	/* The leader of instance idx exited with wait status `status`. */
	void (*job_exit)(void *state, int idx, int status);
	/* progress:F: fraction (0..1) of the dataset instance idx has loaded */
	int (*progress)(void *state, int idx, pid_t pgid, double *fraction);
	/* For the report, after every instance ended. */
	int (*job_stats)(void *state, int idx, struct rel_job_stats *st);
	/* Dataset bytes resident per NUMA node, for the report. */
	int (*residency)(void *state, double *bytes, int max_nodes, int *nnodes);
	void (*finish)(void *state);
};

struct rel_hook {
	const struct rel_ops *ops;
	void *state;			/* the caller's, e.g. a struct rel_module */
	bool active;			/* registered for this run */
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
	double delta;		/* requested release, s after t0 (not PROGRESS) */
	enum rel_state state;
	pid_t pgid;		/* = pid of the instance's first process */
	int gate;		/* write end of its release pipe while it waits, else -1 */
	double start, end;	/* measured, s after t0 */
	double loaded;		/* progress fraction when the next was released */
	int status;		/* wait status of the leader */
	double cpu_s;		/* CPU-s of the leader and the descendants it reaped */
	bool have_stats;
	struct rel_job_stats stats;
};

struct rel_run {
	/* what to run */
	struct rel_dataset ds;
	int n;
	struct rel_inst *inst;
	/* PROGRESS: instance k+1 when k has loaded fraction; else k at delta[k] */
	enum tandem_stagger_mode mode;
	double fraction;	/* TANDEM_STAGGER_PROGRESS */
	bool fail_fast;
	double grace;		/* s between SIGTERM and SIGKILL (0: 5) */
	const char *scratch;	/* a scratch mount: instance NAME gets TANDEM_SCRATCH=<it>/NAME */
	struct rel_hook hooks[REL_MAX_HOOKS];
	int nhooks;
	/* what happened */
	double t0;		/* monotonic time of the first release */
	double makespan;	/* last end - t0 */
	int interrupted;	/* signal that interrupted the run, or 0 */
	int nfailed;
	int nskipped;
	double residency[REL_MAX_NODES];
	int nres_nodes;
	const char *residency_source;	/* the hook's name, "mincore", or NULL */
};

/* Plug ops (with its state) into r; -E2BIG when r has REL_MAX_HOOKS. */
int rel_hook_add(struct rel_run *r, const struct rel_ops *ops, void *state);

/*
 * Run every instance to completion. Returns 0 when all exited with 0,
 * -ECHILD when some failed or were skipped, -EINTR when interrupted, or
 * another negative errno when the run could not be set up.
 */
int rel_run(struct rel_run *r);
bool rel_inst_ok(const struct rel_inst *in);
const char *rel_state_name(enum rel_state s);
/*
 * A folder per instance (named for it) in the scratch mount mnt, made now
 * as the caller (the mount is its owner's, mode 0700), and r->scratch set:
 * the engine gives each instance its folder in TANDEM_SCRATCH. given: the
 * scratch's name, for the error line. Errors printed.
 */
int rel_scratch_dirs(struct rel_run *r, const char *mnt, const char *given);

/* ---- hooks ---- */

/* tandem.ko: the dataset registered (found or created), its counters after the run */
struct rel_module {
	/* in: a connection, or NULL (the hook opens and closes its own) */
	struct tnl *nl;
	/* in: files of the dataset to prefetch in this order, or NULL */
	const struct file_list *prefetch;
	const char *prefetch_source;	/* "file" (--prefetch-order) or "learned" */
	const char *prefetch_order;	/* learned: its merge (rel_pf_plan_name()) */
	const char *prefetch_by;	/* who prefetched: NULL (tandem.ko) or "tandemctl" */
	/* out */
	bool registered;
	bool prefetch_started;		/* cancelled at the end if still running */
	uint32_t id;
	bool created;			/* by this run (else it existed) */
	uint32_t files_added, files_present;
	uint64_t steered, prefetched;	/* the dataset's counters after the run */
	/* this run's prefetch when the jobs had ended (prefetch_started) */
	bool pf_have;
	uint8_t pf_state;		/* TANDEM_PREFETCH_* */
	uint64_t pf_done, pf_total;	/* pages read or found cached, of its order's */
	double pf_seconds;		/* its time: to its end, or to the jobs' end */
	double pf_request;		/* monotonic time of the request (prefetch_t0) */
	/* inside */
	bool own_nl;			/* nl is the hook's own */
	double prefetch_t0;		/* monotonic time of the prefetch request */
};

extern const struct rel_ops rel_module_ops;

/*
 * Without tandem.ko (uprefetch.c): a thread of tandemctl reads files in
 * their order (1 MiB pread()s, one at a time, paced by cap_bps) from the
 * registration, just before the first release, until it is through or the
 * jobs have ended; its figures go to *report (prefetch_by "tandemctl").
 */
struct rel_uprefetch {
	/* in */
	const struct file_list *files;
	double cap_bps;			/* 0: none */
	struct rel_module *report;	/* where the report finds its figures, or NULL */
	/* out (after finish) */
	uint8_t state;			/* TANDEM_PREFETCH_* */
	uint64_t total;			/* pages of its files */
	double seconds;			/* its time: to its end, or to the jobs' end */
	int err;			/* why it failed */
	/* inside */
	bool started;
	pthread_t tid;
	double t_start;			/* monotonic */
	atomic_bool stop;
	atomic_uint_fast64_t pages;	/* read or found cached */
};

extern const struct rel_ops rel_uprefetch_ops;

#define REL_TRACKER_MAX_JOBS 256

/* the tracker (loaded when it is not): one job per instance */
struct rel_tracker {
	/* out */
	bool registered;		/* the instances were tracked */
	bool loaded_here;		/* this run loaded the tracker */
	uint32_t dataset;		/* the tracker's id of the dataset */
	uint32_t files_added, files_present;	/* by this run's registration */
	/* inside */
	bool open;
	struct tracker t;
	uint64_t pages;			/* of the dataset, 4 KiB pages */
	uint32_t job[REL_TRACKER_MAX_JOBS];
};

extern const struct rel_ops rel_tracker_ops;

/*
 * The read order (hook_order.c): the dataset files each instance opened,
 * in the order it first opened them (fanotify), and the learned-order files
 * that keep them between runs.
 */
struct rel_seqs {
	int n;				/* instances */
	uint32_t *seq[REL_MAX_INST];	/* file indices of the dataset */
	size_t len[REL_MAX_INST], cap[REL_MAX_INST];
};

void rel_seqs_free(struct rel_seqs *s);

struct rel_order {
	/* out */
	bool recording;			/* fanotify was set up: opens were watched */
	bool incomplete;		/* events lost (queue overflow, memory) */
	bool flushed;			/* every instance opened every file: marks removed */
	char why[96];			/* why not recording */
	uint64_t opens;			/* dataset opens by the instances */
	struct rel_seqs seqs;
	/* inside */
	const struct sample_set *ds;
	int complete;			/* instances that opened every file */
	struct file_index ids;		/* the dataset's files */
	uint64_t *seen[REL_MAX_INST];	/* per instance, a bit per file */
	struct openwatch ow;		/* the dataset's opens (lib/openwatch.h) */
	int stop[2];
	bool thread;
	pthread_t tid;
	pthread_mutex_t mu;
	pid_t pgid[REL_MAX_INST];
};

extern const struct rel_ops rel_order_ops;

struct rel_learned {
	struct rel_seqs seqs;
	bool stable;			/* two runs agreed on it */
	double displacement;		/* theirs; NAN: not compared */
	size_t dropped;			/* paths no longer in the dataset */
};

/* Read a learned-order file for ds: -errno (-ENOENT: none, -EINVAL: not one). */
int rel_order_load(const char *path, const struct sample_set *ds, struct rel_learned *l);
/* Write s (paths of ds) to path, atomically (a temporary renamed). */
int rel_order_save(const char *path, const struct rel_seqs *s, const struct sample_set *ds,
		   bool stable, double displacement);
/*
 * The prefetch order, each file once: with first (s, each instance's first
 * read: release plus start-up) and rate (bytes/s), by the time each file is
 * first needed (model/model.h, mo_merge_by_need()); without them (NULL),
 * each instance's i-th file in turn.
 */
int rel_order_merge(const struct rel_seqs *s, const struct sample_set *ds, const double *first,
		    const double *rate, struct file_list *fl);
/* fl: the paths of the dataset's files files[0..n), in that order */
int rel_order_paths(const uint32_t *files, size_t n, const struct sample_set *ds,
		    struct file_list *fl);
/*
 * Mean |position in a - position in b| (each as a fraction of its
 * sequence) over the files both hold, instance by instance; NAN when they
 * share none or differ in instances. coverage: the share of b's files in a.
 */
double rel_order_displacement(const struct rel_seqs *a, const struct rel_seqs *b,
			      uint32_t nfiles, double *coverage);

/* What `run` did with a learned order (learn.c), for the report. */
struct rel_learn {
	const char *file;		/* the learned-order file; NULL: not learning */
	char path[PATH_MAX];		/* where file points */
	bool is_default;		/* run's own file for these instances */
	int load_err;			/* 0: it was read; -ENOENT: none yet */
	struct rel_learned old;		/* what it held */
	bool usable;			/* stable, for these instances: the plan decides */
	bool used;			/* the prefetch ran in its order */
	const char *unused_why;		/* why not, when it was read */
	struct rel_order rec;		/* this run's */
	double displacement, coverage;	/* this run's order against old; NAN: none */
	bool stable;			/* the two agreed: saved as stable */
	bool saved;
	const char *not_saved_why;
};

/* What the caller asks of the learned order (learn.c). */
struct rel_learn_opts {
	const char *file;		/* --learn-order FILE; NULL: run's own when it can */
	bool off;			/* --no-learn-order */
	bool module;			/* tandem.ko is loaded */
	bool registers;			/* the run registers the dataset with it */
	bool prefetch_given;		/* --prefetch-order: the learned order is not used */
	const char *dataset_dir;	/* as given */
	char ***cmds;			/* the instances' commands (the default file's key) */
	int ncmds;
};

/*
 * --prefetch-order FILE: its paths into order, each a file of ds (same
 * inode: a binary search, so a million-file order is checked in one pass).
 * Errors printed.
 */
int rel_prefetch_order_read(const char *path, const struct sample_set *ds,
			    struct file_list *order);
/* Before the plan: l's file, what it held, and whether the plan may use it. l zeroed. */
void rel_learn_setup(struct rel_learn *l, const struct rel_learn_opts *o,
		     const struct sample_set *ds);
struct rel_plan;
/* After the plan: the learned order's prefetch into order (l->used), or why not. */
void rel_learn_plan(struct rel_learn *l, const struct rel_plan *plan,
		    const struct sample_set *ds, struct file_list *order);
/* After the run: its order against the learned one, and kept (r->ds.set). */
void rel_learn_finish(struct rel_learn *l, const struct rel_run *r);
void rel_learn_free(struct rel_learn *l);

/* ---- plan: the release vector ---- */

/* "auto" (the model's best vector, or together), "time" (given seconds), "progress" */
const char *rel_stagger_name(enum tandem_stagger_mode s);

/*
 * The prefetch of a learned order, as the plan considers it (plan.c): none,
 * the sequences merged by position (each one's i-th file in turn), or by
 * the time each file is first needed at the planned releases and rates.
 */
enum rel_pf_plan {
	REL_PF_NEED,
	REL_PF_POSITION,
	REL_PF_NONE,
};
#define REL_PF_PLANS	3

const char *rel_pf_plan_name(enum rel_pf_plan p);	/* "need", "position", "none" */

/* One alternative the plan weighed: its release vector and prediction. */
struct rel_plan_alt {
	bool have;
	double delta[REL_MAX_INST];
	double makespan;		/* predicted */
	struct model_pf_result pf;	/* the prefetch's part of it */
};

struct rel_plan_opts {
	const char *stagger;		/* --stagger; NULL: auto with a model, else 0 */
	const char *profile;		/* NULL: calibrate now when the model is wanted */
	struct cal_opts cal;		/* for that calibration */
	const char *dataset_dir;
	struct model_args args;		/* instances, rates and overrides */
	double min_gain;
	bool module_steers;		/* tandem.ko will steer the dataset (args.steer < 0) */
	int n;				/* instances (commands) */
	/* a learned order run can prefetch by (NULL: none); the plan decides how */
	const struct rel_seqs *seqs;
	double pf_cap;			/* bytes/s: tandem.ko's prefetch cap (0: none) */
};

void rel_plan_opts_init(struct rel_plan_opts *o);
/* Whether o's stagger can be planned (-EINVAL, what is wrong in err): before any work. */
int rel_plan_opts_check(const struct rel_plan_opts *o, char *err, size_t errlen);
/*
 * What tandem.ko means for the plan (nl: NULL when the run does not use it):
 * whether it will steer the dataset's pages to a CXL node (loaded with
 * steering on and a CXL node), which decides the cache the model gets
 * unless --steer; and its prefetch cap (prefetch_kbps), which the model's
 * prefetch term gets.
 */
void rel_plan_opts_module(struct rel_plan_opts *o, struct tnl *nl);

/* What the model said, when there was one. */
struct rel_plan {
	enum tandem_stagger_mode stagger;
	double delta[REL_MAX_INST];	/* the release vector (TANDEM_STAGGER_PROGRESS: 0) */
	double fraction;		/* TANDEM_STAGGER_PROGRESS */
	bool model;			/* a model was built (sys, inst hold its input) */
	bool have;			/* res holds the prediction at delta */
	bool steer;			/* the model's cache is the steered one */
	struct mo_report mo;		/* auto: the search */
	struct model_result res;
	struct model_sys sys;
	struct model_inst inst[REL_MAX_INST];
	char rate_source[REL_MAX_INST][16];	/* each rate's: the profile's, or "rate" */
	double nosteer_m;		/* M at the same release without steering, or NAN */
	/* M at the warm runs' fastest rates and C's least [0], at the slowest and most [1]; NAN */
	double range[2];
	double min_gain;
	/* the prefetch of o->seqs, when there was one to plan */
	bool pf_planned;
	bool pf_modelled;		/* alt[] holds the model's predictions */
	enum rel_pf_plan pf;		/* the plan chosen */
	struct rel_plan_alt alt[REL_PF_PLANS];
	uint32_t *pf_files;		/* its order (pf != REL_PF_NONE): dataset file indices */
	size_t pf_nfiles;
	double pf_cap;
};

/* Decide the release vector; with a model, predict M for it. -EINVAL printed. */
int rel_plan_make(const struct rel_plan_opts *o, const struct sample_set *ds,
		  struct rel_plan *p);
void rel_plan_free(struct rel_plan *p);
/* Set r's mode, deltas and instance names from the plan. */
void rel_plan_apply(const struct rel_plan *p, struct rel_run *r);

/* ---- report ---- */

/*
 * The run's one document, on the text/JSON print path (lib/out.h): `run`
 * prints it, and prints it again as JSON into --report FILE.
 * Documentation/model.md lists the fields.
 */
struct rel_report {
	const struct rel_run *run;
	const struct rel_plan *plan;
	const struct rel_module *module;	/* NULL: not used */
	const struct rel_tracker *tracker;	/* NULL: not used */
	const struct rel_learn *learn;		/* NULL: not learning */
};

void rel_report_print(const struct rel_report *rep);
/* the same document as JSON into path */
int rel_report_save(const struct rel_report *rep, const char *path);

#endif
