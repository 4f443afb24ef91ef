/* SPDX-License-Identifier: GPL-2.0 */
/* Private to calibrate/: a warm run's samples (warm.c) and their fit (warmfit.c). */
#ifndef TANDEM_CTL_CALIBRATE_WARM_H
#define TANDEM_CTL_CALIBRATE_WARM_H

#include "calibrate/calibrate.h"
#include "lib/procio.h"

#define WARM_MAX_PROCS	32
#define WARM_MAX_SCANS	1024

struct warm_sample {
	double t;		/* s after the release */
	double count;		/* dataset read so far: tracker pages, or rchar bytes */
};

/* a scan of the process group: CPU and every member's rchar */
struct warm_scan {
	double t;
	double cpu;		/* CPU-s of the group (reaped members included) */
	int n;
	struct procio_proc proc[WARM_MAX_PROCS];
};

struct warm_run {
	struct cal_warm_opts opt;
	const struct sample_set *ds;
	struct cal_track *trk;		/* NULL: /proc */
	uint32_t job;			/* the tracker's job */
	pid_t pgid;
	bool reaped;
	/*
	 * The job's stderr: an unlinked O_APPEND file, relayed to ours as it
	 * grows, up to calibrate's SIGINT (what it prints then, a Python
	 * KeyboardInterrupt traceback, is calibrate's doing, not the job's).
	 */
	int err_fd;			/* < 0: inherited */
	off_t err_off;			/* relayed up to here */
	double t0;			/* monotonic time of the release */
	double first;			/* first dataset read, s after t0; < 0: none yet */
	int first_scan;			/* the scan taken then */
	uint64_t rchar0;		/* /proc: the group's rchar at the first read */
	uint64_t rchar_prev;		/* /proc: ... at the previous poll, before it */
	bool opened;			/* /proc: fanotify saw a member open a dataset file */
	unsigned polls;
	struct warm_sample *s;
	size_t n, cap;
	double count;			/* the last sample's */
	struct warm_scan *scans;
	int nscans;
	/* the first epoch boundary: the reads stall, then resume */
	double last_inc_t, last_inc_count;
	double pause_t;			/* a pause at the boundary, then a trickle: its start */
	double stall, stall_count;	/* the last read before the stall; < 0: none */
	double resumed;			/* the first read after it; < 0: none */
	double paused;			/* the pause's start (before a trickle: its last
					 * steady read; else = stall) */
	/* the second: one epoch's count later; at the run's end when it ended there */
	double stall2, stall2_count;	/* < 0: none */
	double resumed2;		/* < 0: none (or the run ended after it) */
	double ended;			/* s after t0 the leader ended by itself; < 0: it did not */
};

/* One epoch in the run's units: the dataset's pages (tracker), or its bytes. */
double warm_units_expected(const struct warm_run *w);
/* Watch for the first two epoch boundaries (every sample). */
void warm_boundary_update(struct warm_run *w, double t);
/* The run over: its last epoch's end, when it ended there by itself. */
void warm_boundary_end(struct warm_run *w);
/* The dataset bytes read so far (the last sample's count, by the dataset's size). */
double warm_bytes_read(const struct warm_run *w);
/* The time of the last sample at which the count grew. */
double warm_last_read(const struct warm_run *w);
/*
 * The group's CPU between the first scan at or after TA and the last at or
 * before TB (s after its release), and the dataset bytes it had read at
 * each; -ENODATA when there is no such pair or nothing was read.
 */
int warm_span(const struct warm_run *w, double ta, double tb, double *cpu, double *b0,
	      double *b1);
/* What the samples say: rate, CPU per byte, start-up, gap, streams. */
int warm_fit(const struct warm_run *w, double window, struct cal_warm *out);

#endif
