/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Measurements behind a calibration profile (model/model.h): cold-read
 * bandwidth with k concurrent readers (bandwidth.c, on the samples of
 * cold.c), memory the page cache can use per NUMA node and which node is the
 * CXL one (memory.c), what a short warm run of an instance's command says
 * about it (warm.c runs and samples it, warmfit.c reads the samples: rate,
 * CPU per byte, start-up, epoch gap, read streams), and the storage and
 * memory part of a profile from all of them (system.c); one calibration
 * of a dataset and its instances from these (calibration.c, contention.c)
 * and what it measured, printed (summary.c).
 */
#ifndef TANDEM_CTL_CALIBRATE_H
#define TANDEM_CTL_CALIBRATE_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/samples.h"
#include "model/model.h"
#include "tracker/tracker.h"

enum cal_cold {
	/*
	 * posix_fadvise(POSIX_FADV_DONTNEED) on the dataset's files: drops only
	 * their clean, unmapped pages; other workloads keep their cache.
	 */
	CAL_COLD_FADVISE,
	/* echo 1 > /proc/sys/vm/drop_caches: the whole page cache (root) */
	CAL_COLD_DROP_CACHES,
};

/* Evict the dataset's pages; resident (may be NULL) gets what is left, 0..1. */
int cal_make_cold(const struct sample_set *ds, uint64_t nsamples, enum cal_cold how,
		  double *resident);
/* Fraction of the pages of the first nsamples samples' files in the cache. */
int cal_resident(const struct sample_set *ds, uint64_t nsamples, double *frac);

struct cal_bw {
	double bps;		/* aggregate while all readers were active */
	double bytes;		/* read by all readers in that window */
	double seconds;
	double resident_before;	/* of the sample, after making it cold */
};

/*
 * Cold-read the first nsamples samples with k reader threads on disjoint
 * samples (round robin), stopping all when the first one runs out or after
 * limit seconds (0: no limit).
 */
int cal_bandwidth(const struct sample_set *ds, uint64_t nsamples, int k,
		  enum cal_cold how, double limit, struct cal_bw *out);
/* How many leading samples make up at least bytes (all if 0). */
uint64_t cal_sample_count(const struct sample_set *ds, double bytes);

/* Per-node memory, the CXL node and cache capacities into p. */
int cal_memory(struct profile *p);

/* Read the first `bytes` of the dataset (samples in order) into the page cache. */
int cal_warm_dataset(const struct sample_set *ds, double bytes);

/* The tracker, when it can be used, for warm runs: the dataset registered. */
struct cal_track {
	bool ok;
	bool loaded_here;
	struct tracker t;
	uint32_t dataset;
	uint64_t pages;			/* the dataset's 4 KiB pages: one epoch's count */
};

/* Load (sized for ds) or open the tracker and register ds as `name`; -errno when it cannot. */
int cal_track_open(struct cal_track *k, const struct sample_set *ds, const char *name);
void cal_track_close(struct cal_track *k);

struct cal_warm_opts {
	double window;			/* s after the first dataset read, at most (--warm-time) */
	double first_read_limit;	/* s to wait for the first dataset read */
	double window_bytes;		/* window= given for this instance; 0: measure it */
	const char *trace;		/* write the samples here as CSV (t_s,count,cpu_s), or NULL */
	uint32_t epochs;		/* the instance's epochs: a run that read them all was ending */
};

#define CAL_CURVE_POINTS	64

/*
 * A run's CPU as its reads went: cpu[k] the group's CPU-s when it had read
 * k / CAL_CURVE_POINTS of `bytes` (dataset bytes, from its first read on).
 */
struct cal_curve {
	double bytes;			/* 0: none */
	double cpu[CAL_CURVE_POINTS + 1];
};

/* The CPU-s the run spent while reading from byte b0 to b1; < 0 when beyond it. */
double cal_curve_cpu(const struct cal_curve *cv, double b0, double b1);

/* What a warm run measured (warmfit.c has how). */
struct cal_warm {
	double rate;			/* dataset bytes/s the step eats (warmfit.c) */
	double cpu_per_byte;		/* CPU-s of the process group per dataset byte */
	double cpu_task_per_byte;	/* CPU-s of its busiest member per dataset byte */
	double startup;			/* s, the model's start-up (warmfit.c) */
	double first_read;		/* s, release to the first dataset read */
	double window;			/* bytes the reads run ahead of the step (warmfit.c) */
	bool window_measured;		/* false: window= given, taken as it is */
	double startup_cpu;		/* CPU-s of the group until then */
	double epoch_gap;		/* s per epoch boundary beyond reading; 0: none or not seen */
	double streams;			/* members that read the dataset */
	double exit;			/* s from the last step to the leader's end */
	bool exit_measured;		/* false: it ended by itself before its last epoch's
					 * end was seen, had read all its epochs (SIGINT met
					 * its exit midway), or outlived the limit */
	char exit_from[8];		/* "sigint": SIGINT to its end; "end": its own end
					 * after its last epoch's reads; "": not measured */
	bool epoch_seen;		/* the first epoch boundary was in the run */
	bool epoch2_seen;		/* and the second: rate and CPU are epoch 2's */
	double units_per_epoch;		/* tracker pages or rchar bytes per epoch */
	double seconds;			/* release to kill */
	int runs;			/* warm runs behind it (cal_warm_median) */
	double rate_min, rate_max;	/* their rates' range */
	double window_s, bytes, cpu_s;	/* the rate's window: epoch 2, or the steady part of 1 */
	char method[16];		/* "tracker" or "proc" */
	struct cal_curve curve;		/* not a median: the first run's */
};

/*
 * Run argv (its own process group, a tracker job when trk->ok) on the warm
 * dataset until the second epoch boundary was seen and the reads resumed,
 * or o->window after its first dataset read, or its end; kill the group
 * and say what it measured. -ETIMEDOUT: no dataset read within
 * o->first_read_limit; -ENOEXEC: the command was not found; -ENODATA: too
 * short to measure.
 */
int cal_warm_run(char *const *argv, const struct sample_set *ds,
		 const struct cal_warm_opts *o, struct cal_track *trk, const char *name,
		 struct cal_warm *out);
/* What a warm run's error means, for the line that says it failed. */
const char *cal_warm_err(int err);

/* A run of several instances' commands at once (cal_warm_together). */
struct cal_together {
	double seconds;			/* release to kill */
	double span_s;			/* the window in which all of them read */
	/* each one's in it: CPU-s, and its bytes from its first read at its ends */
	double cpu[MODEL_MAX_INST], from[MODEL_MAX_INST], to[MODEL_MAX_INST];
	/* each one's first and last read, s after the release (< 0: none) */
	double first[MODEL_MAX_INST], last[MODEL_MAX_INST];
};

#define CAL_TOGETHER_MIN_S	1.0	/* the common window, at least */

/*
 * Run the N commands at once on the warm dataset (each in its own process
 * group and tracker job), until the first of them has read its two epochs,
 * or stop_bytes[i] (NULL or 0: no limit), ended or reached o->window after
 * its first read; then kill them all and
 * say each one's CPU per byte over the window in which all of them read
 * (from the last first read to the first last read), with
 * the bytes it had read at the window's ends: its own warm runs' curves
 * say what it spent alone on the same reads. -ENODATA: no
 * common window of CAL_TOGETHER_MIN_S; else as cal_warm_run.
 */
int cal_warm_together(char **const *argvs, int n, const struct sample_set *ds,
		      const struct cal_warm_opts *o, struct cal_track *trk,
		      const char *const *names, const double *stop_bytes,
		      struct cal_together *out);

#define CAL_PRED_WARN		4
#define CAL_PRED_WARN_LEN	200

/* An instance's rate from its graph (graph_rate.c): what libtandem-predict said. */
struct cal_pred {
	double iter_s;			/* predicted s per training iteration */
	double bytes_per_iter;		/* batch x bytes per sample */
	double rate;			/* bytes_per_iter / iter_s */
	double cpu_per_byte;		/* iter_s / bytes_per_iter: one core while it computes */
	char model[256];		/* "built-in (RES)" or $TANDEM_PREDICT_MODEL */
	char trained_on[160];		/* the runs and device the model was trained on */
	double probe_ratio;		/* compute mapped to this host by the probes, 0: not */
	char probe[160];		/* which probes ("HOST (N CPUs) -> HOST"), or why none */
	int nwarn;			/* out of distribution, shapes left unknown, ... */
	char warn[CAL_PRED_WARN][CAL_PRED_WARN_LEN];
	char err[320];			/* what failed, on an error */
};

/*
 * The rate of a job training GRAPH (ONNX) at BATCH samples per iteration
 * on a dataset of SAMPLE_BYTES per sample. 0 or -errno, out->err says why.
 */
int cal_predict_rate(const char *graph, double batch, double sample_bytes,
		     struct cal_pred *out);

#define CAL_MAX_WARM_RUNS	9	/* --warm-runs, at most */

/*
 * N warm runs of one command as one: each term the median of the runs'
 * (exit over the runs that measured it; a flag true when most runs had it);
 * rate_min/rate_max the runs' range, runs N, seconds their sum.
 */
void cal_warm_median(const struct cal_warm *runs, int n, struct cal_warm *out);

/*
 * How far apart the warm runs' rates were: (max - min) / median, 0 with one
 * run. Above CAL_WARM_SPREAD_WARN calibrate says so: the job's own speed
 * varied between runs, and every prediction from the profile carries it.
 */
#define CAL_WARM_SPREAD_WARN	0.2
double cal_warm_spread(const struct cal_warm *w);

#define CAL_BW_SECONDS	3.0	/* default length of each B(k) measurement */

struct cal_opts {
	double sample_bytes;	/* cold-read sample; 0 = the whole dataset */
	enum cal_cold cold;
	int max_readers;	/* measure B(1..max_readers), default 2 */
	double bw_seconds;	/* each B(k) reads for this long at most; 0: the sample */
	bool keep_cached;	/* leave what B(k) read cached (warm runs come next) */
	bool verbose;		/* progress lines on stderr */
};

/*
 * Storage and memory part of a profile for dataset ds (no instances):
 * B(1..k), cache capacities, dataset size, CPUs. Warnings (a sample that
 * stayed resident) go to stderr.
 */
int cal_profile(const struct cal_opts *o, const char *dir, const struct sample_set *ds,
		struct profile *p);

/*
 * One calibration (calibration.c), as `tandemctl calibrate` runs it and
 * any other caller (the node agent) could: the storage and memory part
 * (cal_profile()), then each instance's terms: its rate as given (rates[],
 * rate= in its spec), predicted from graph= and batch=, or measured with
 * its other terms by warm runs of its command; then the CPU contention of
 * the warm-run instances run together (contention.c).
 */
struct cal_request {
	const char *dataset;		/* the dataset's directory */
	uint64_t record_size;		/* records of this size in a file; 0: a file is a sample */
	struct cal_opts opts;		/* storage and memory; keep_cached is decided here */
	struct model_args args;		/* only the instance specs are used */
	double rates[MODEL_MAX_INST];	/* --rate, instance by instance; 0: not given */
	int nrates;
	double warm_time;		/* s after a warm run's first read, at most */
	uint32_t warm_runs;		/* per instance; its terms are their medians */
	bool no_track;			/* warm runs counted in /proc, not by the tracker */
	bool no_contention;		/* no run of them together */
	const char *trace;		/* warm runs' samples into PREFIX NAME[-R].csv, or NULL */
	char ***cmds;			/* instance i's command (argv) */
	int ncmds;
};

/* tandemctl calibrate's defaults: 256 MiB sample, B(1..2), 3 warm runs of 20 s */
void cal_request_init(struct cal_request *r);

/* What the calibration spent beyond what the profile holds. */
struct cal_times {
	double warm_seconds[MODEL_MAX_INST];	/* instance i's warm runs together */
	double together_seconds;		/* the runs of the instances together */
};

/*
 * Calibrate as r asks into p (profile_init()ed by the caller, who saves and
 * frees it); t says what the warm runs took. 0 or -errno; what failed is
 * said on stderr.
 */
int cal_calibrate(const struct cal_request *r, struct profile *p, struct cal_times *t);

/* What p and t say, as `tandemctl calibrate` prints it (text or JSON), saved as output. */
void cal_print(const struct profile *p, const struct cal_times *t, const char *output);

#endif
