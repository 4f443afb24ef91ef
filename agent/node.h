/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's node side, on the ctl libraries: the page-cache sharing
 * tracker (loaded when it is not, unloaded at the end if the agent loaded
 * it), tandem.ko when it is loaded, and each dataset's registration with
 * both. Registering a dataset walks the user's directory, which a hung
 * mount can stall: it runs in a thread of its own, and the event loop
 * learns of its end through node->efd (an eventfd).
 *
 * Every task the agent releases becomes a tracker job before it execs (its
 * pid is the task's own: the plugin holds the task in that process), so
 * the tracker counts everything it and its children read; its progress is
 * the bytes it read from the dataset, from the tracker's counters.
 */
#ifndef TANDEM_AGENT_NODE_H
#define TANDEM_AGENT_NODE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/prom.h"
#include "module/module.h"
#include "tracker/tracker.h"

struct agent_node_opts {
	bool tracker;			/* use (and load) the tracker */
	bool module;			/* register datasets with tandem.ko when loaded */
	uint32_t tracker_pages;		/* page states when the agent loads it; 0: default */
};

struct agent_node {
	struct agent_node_opts o;
	bool trk_open, trk_loaded_here;
	struct tracker trk;
	struct tnl *nl;			/* the event loop's connection; NULL: not loaded */
	int efd;			/* eventfd: a registration ended */
	size_t nscratch;		/* scratch spaces at the last metrics write */
};

/* One registration (a walk of the dataset and what follows), owned by its thread until done. */
struct node_scan {
	/* in */
	char *path;
	char name[48];			/* for the tracker and tandem.ko */
	bool want_trk, want_mod;
	int efd;
	/* out */
	atomic_int done;
	int err;			/* of the walk; the rest only logs */
	char msg[256];			/* what went wrong, when something did */
	uint64_t files;
	double bytes;
	double resident;		/* bytes cached when it was walked (mincore) */
	bool trk_ok, mod_ok;
	uint32_t trk_id, mod_id;
	uint32_t added, present;	/* files the tracker had not / had seen */
	double took_s;
};

enum node_ds_state { NODE_DS_NONE, NODE_DS_SCANNING, NODE_DS_READY, NODE_DS_FAILED };

/* What the node knows of one dataset. */
struct node_ds {
	enum node_ds_state state;
	char name[48];
	struct node_scan *scan;		/* the registration in progress */
	/* from the last registration that ended */
	uint64_t files;
	double bytes;
	bool trk_ok, mod_ok;
	uint32_t trk_id, mod_id;
	double resident0;		/* cached bytes when it was walked */
	struct tandem_trk_counts base;	/* every job's counts on it then */
};

int agent_node_init(struct agent_node *n, const struct agent_node_opts *o);
void agent_node_fini(struct agent_node *n);

/* a name the tracker and tandem.ko take: "<last component>-<hash of the path>" */
void agent_node_ds_name(const char *path, char *name, size_t len);
/* start a registration unless one runs; -errno when no thread could start */
int agent_node_scan(struct agent_node *n, struct node_ds *d, const char *path);
/* a registration that ended: 1 (d updated, *msg what to log), 0 when none */
int agent_node_scan_done(struct agent_node *n, struct node_ds *d, const struct node_scan **s);
void agent_node_scan_free(struct node_scan *s);
/* drain the eventfd */
void agent_node_ack(struct agent_node *n);
/* at exit: a walk still running (a hung mount) keeps its memory */
void agent_node_ds_fini(struct node_ds *d);

/* a released task: a tracker job for pid (before it execs) */
int agent_node_job_start(struct agent_node *n, const char *name, pid_t pid, uint32_t *job);
void agent_node_job_exit(struct agent_node *n, uint32_t job, int code);
/* bytes of d the job read (its accesses: first ones, own hits, shared hits) */
int agent_node_job_read(struct agent_node *n, const struct node_ds *d, uint32_t job,
			double *bytes);
/* bytes of d in the page cache now: tandem.ko's count, else the tracker's
 * loads minus evictions since the walk on top of what the walk found */
int agent_node_resident(struct agent_node *n, const struct node_ds *d, double *bytes);

/* the tracker's, tandem.ko's and the scratch spaces' families (ctl/metrics) */
int agent_node_metrics(struct agent_node *n, struct tandem_prom *p, const char *node);
/* whether the metrics show scratch spaces or should (one exists now): refresh them */
bool agent_node_scratch_any(struct agent_node *n);

#endif
