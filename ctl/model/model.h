/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Makespan model (DESIGN.md, "Makespan model"): N training instances read
 * one dataset through a shared page cache of capacity C from a store whose
 * aggregate bandwidth is B(k) with k concurrent streams. For a vector of
 * release times delta it predicts each instance's end and the makespan
 * M(delta) = max_i(delta_i + F_i(delta)); model_best() searches delta.
 *
 * The dataset is cut into K equal extents. Within an extent everything is
 * fluid (bytes flow at rates); across extents the simulation keeps which
 * extents are resident, so the hit ratio of each access pattern (independent
 * shuffles, same order, sequential) and the cache window of a follower come
 * out of the cache state instead of a formula per pattern. Rates are
 * constant between events, so the integration is exact between events.
 * Documentation/model.md has the derivation and its limits.
 *
 * The library: the simulation (makespan.c, with its cache in sim_cache.c,
 * read orders in sim_order.c, start state, prefetch and given orders in
 * sim_start.c) and its
 * search (search.c); the calibration profile that feeds it and the model
 * input built from a profile and overrides (profile.c); the evaluation the CLI and `run` show,
 * with its text/JSON output and plot (grid_report.c).
 */
#ifndef TANDEM_CTL_MODEL_H
#define TANDEM_CTL_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MODEL_MAX_INST	64
#define MODEL_MAX_BW	8
#define MODEL_NAME_LEN	32
#define MODEL_GRAPH_LEN	256	/* graph= paths, with the NUL */
/*
 * What model_new() accepts: sizes and rates up to 1 PB (per second), rates
 * from 1 B/s, durations up to 1e7 s, 10000 epochs (the simulation's cost
 * grows with epochs x extents where the dataset does not fit: 1000 epochs of
 * 1024 extents took a 10 s search here).
 */
#define MODEL_MAX_BYTES		1e15
#define MODEL_MIN_RATE		1.0
#define MODEL_MAX_SECONDS	1e7
#define MODEL_MAX_EPOCHS	10000u

enum model_order {
	MODEL_ORDER_INDEP,	/* own shuffle per epoch, seeded per instance */
	MODEL_ORDER_SAME,	/* shuffle with a seed shared by all SAME instances */
	MODEL_ORDER_SEQ,	/* dataset order every epoch */
};

enum model_evict {
	/*
	 * A random resident extent leaves: the default, because the kernel's
	 * page cache is not a strict LRU (a follower's hits activate pages, so
	 * the extents it has not read yet go first) and the testbed's
	 * same-order runs fit this policy (Documentation/model.md; beyond
	 * capacity MODEL_EVICT_2Q fitted the rig's nofit runs better).
	 */
	MODEL_EVICT_RANDOM,
	MODEL_EVICT_LRU,	/* least recently used extent leaves first */
	/*
	 * The kernel's two lists (mm/vmscan.c, mm/swap.c): a loaded extent
	 * enters the inactive list (its loading read is its first access), a
	 * second access moves it to the active list, eviction takes the
	 * inactive list's tail, and the active list's tail is moved back to
	 * the inactive list while the active list is longer (inactive_is_low()
	 * with inactive_ratio 1). No refault detection.
	 */
	MODEL_EVICT_2Q,
};

struct model_inst {
	char name[MODEL_NAME_LEN];
	double rate;		/* compute-bound rate R_i on cached data, bytes/s */
	uint32_t epochs;	/* passes over the dataset; 0 = no work */
	enum model_order order;
	uint64_t seed;		/* shuffle seed (INDEP); SAME uses the shared one */
	double cpu_per_byte;	/* p_i, CPU-seconds per byte of preprocessing */
	/*
	 * The CPU per byte of its busiest process (a DataLoader job: the main
	 * one, the step; its workers decode): the scheduler shares the CPUs
	 * per runnable task, so when they are short a job is held back where
	 * its busiest task gets its share. 0: one task, = cpu_per_byte.
	 */
	double cpu_task_per_byte;
	double window;		/* prefetch depth in bytes (>= one extent) */
	double mem;		/* bytes the job itself takes from the cache */
	/*
	 * Real jobs (Documentation/model.md, "Real jobs"): the time from the
	 * release to the first dataset read when alone (interpreter, imports,
	 * model), and the CPU-seconds it takes (its demand, at most one core,
	 * shares the CPUs with the others; no I/O); the pause at each epoch
	 * boundary in which nothing is read or consumed (a DataLoader's workers
	 * are forked again), which also stops the reader at the boundary; the
	 * read streams the job keeps in flight (loader workers), which weight
	 * its share of B(k). All 0 for loadgen: the model is then what it was.
	 */
	double startup;		/* s */
	double startup_cpu;	/* CPU-s; it runs on one core at most */
	double epoch_gap;	/* s per epoch boundary */
	double streams;		/* weight of its loads in B(k); 0 = 1 */
	/*
	 * After its last step the process still has to end (the interpreter's
	 * teardown): its end is that much later; it uses neither the CPUs nor
	 * the storage in the model. 0 for loadgen.
	 */
	double exit;		/* s */
	/*
	 * Not model terms: where calibrate takes the rate from the predictor
	 * instead of a warm run (Documentation/model.md, "calibrate"): the
	 * job's graph (ONNX; "" none), its batch, and the dataset bytes one
	 * sample is (0: the dataset's bytes per file).
	 */
	char graph[MODEL_GRAPH_LEN];
	double batch;
	double sample_bytes;
};

struct model_sys {
	double dataset;		/* D, bytes */
	uint32_t extents;	/* K; 0 picks a default */
	double cache;		/* C, bytes the dataset's pages can stay in */
	double bw[MODEL_MAX_BW];	/* B(1..nbw), bytes/s; B(k>nbw) = B(nbw) */
	int nbw;
	double ncpu;		/* CPUs for preprocessing; 0 = unlimited */
	/*
	 * CPU contention: with j instances using the CPUs at once, each one's
	 * CPU per byte (and per second of start-up) is 1 + c (j - 1) times
	 * what it is alone (threads of co-located jobs stall one another:
	 * intra-op barriers, cache, context switches). 0: none, as before.
	 */
	double cpu_contention;
	enum model_evict evict;
	bool warm;		/* whole dataset resident at t = 0 (as fits) */
	uint64_t same_seed;	/* shuffle seed shared by SAME instances */
};

struct model_inst_result {
	double start, end;	/* seconds from t = 0 */
	double first_read;	/* when its start-up ended (= start without one) */
	double miss_bytes;	/* read from storage by this instance's loads */
	double join_bytes;	/* waited on a load another instance started */
	double hit_bytes;	/* found resident */
};

/* The prefetch's part of a simulation (model_set_prefetch()). */
struct model_pf_result {
	bool ran;		/* it started before the jobs ended */
	double start, end;	/* s; end: it was through its order (NAN: not before the jobs ended) */
	double bytes;		/* it loaded from storage */
};

struct model_result {
	double makespan;
	double storage_bytes;	/* everything read from storage, the prefetch's included */
	struct model_pf_result pf;
	uint64_t events;
	struct model_inst_result inst[MODEL_MAX_INST];
};

struct model;

/* Copies sys and inst; -EINVAL with a message in err for bad input. */
int model_new(const struct model_sys *sys, const struct model_inst *inst,
	      int n, struct model **out, char *err, size_t errlen);
void model_free(struct model *m);
int model_ninst(const struct model *m);
const struct model_sys *model_sys_of(const struct model *m);
const struct model_inst *model_inst_of(const struct model *m, int i);
/* extents K, and how many the cache holds */
uint32_t model_extents(const struct model *m);
uint32_t model_cache_extents(const struct model *m);

/* Simulate one release vector (delta[i] >= 0, seconds). */
int model_eval(struct model *m, const double *delta, struct model_result *res);
/*
 * The same, for a search that only needs to know whether the makespan is
 * at most bound: 1 (res incomplete) once the simulation is certain that it
 * is above (a lower bound of some instance's end passed it; checked at the
 * start and every 64 events), otherwise 0 and res as model_eval() gives
 * it, bit for bit (its makespan may still be above bound).
 */
int model_eval_bound(struct model *m, const double *delta, double bound,
		     struct model_result *res);
/* Events simulated with m so far (every evaluation, those cut short too). */
uint64_t model_events(const struct model *m);
/* Makespan of instance i alone on a cold cache (its solo time). */
int model_solo(struct model *m, int i, double *t);

/*
 * The prefetch `run` starts (tandem.ko's; Documentation/model.md, "The
 * prefetch term"): from `start` (s) it walks `order` (extents, at most K;
 * copied), skips what is resident or being loaded, and loads the rest one
 * extent at a time as one more reader in the share of B(k) (weight 1), at
 * most `cap` bytes/s when cap > 0 (the others split the rest). What it
 * loads enters the cache; a job that reaches an extent it is loading waits
 * for that load. NULL (or n = 0): none. -EINVAL for bad values.
 */
struct model_prefetch {
	const uint32_t *order;
	uint32_t n;
	double start;		/* s */
	double cap;		/* bytes/s; 0: none */
};

int model_set_prefetch(struct model *m, const struct model_prefetch *p);
/*
 * Instance i's first epoch reads the extents ext[0..n) first (each once),
 * then the rest in its own order (the learned order: the prefetch's
 * extents and the job's are the same then). ext NULL: its own order.
 */
int model_set_order(struct model *m, int i, const uint32_t *ext, uint32_t n);

struct model_search {
	unsigned grid;		/* candidates per coordinate (default 24) */
	double tol;		/* stop refining below this step, s (default: model_default_tol) */
	unsigned max_evals;	/* 0 = default 4000 */
};

/*
 * Best release vector: min over delta of M(delta), normalised so that
 * min(delta) = 0. N = 2: a grid over +-horizon then refinement; N > 2:
 * coordinate descent from the best uniform stagger, with step halving.
 * evals (may be NULL) gets the number of simulations run.
 */
int model_best(struct model *m, const struct model_search *opt,
	       double *delta, double *makespan, unsigned *evals);
/* the default refinement step: 0.05 s, or horizon / 1000 when that is more */
double model_default_tol(double horizon);

/*
 * Start a simulation from a given state instead of an empty cache with every
 * instance at its beginning (online.c): instance i with running[i] has
 * consumed consumed[i] bytes of its epochs * D before t = 0 (its delta is
 * ignored); the cache holds what the running instances read last, then,
 * when resident >= 0, exactly that many bytes (fewer evicted, more filled
 * with extents nobody read). NULL clears it. -EINVAL for bad values.
 */
struct model_start {
	bool running[MODEL_MAX_INST];
	double consumed[MODEL_MAX_INST];	/* bytes */
	double resident;			/* bytes; < 0: the running ones' reads */
};

int model_set_start(struct model *m, const struct model_start *s);

/* ---- online: from where a node is now (online.c) ---- */

/*
 * A node agent's question: instances are running on the dataset (each since
 * its start, with the bytes it consumed so far), some are planned to start,
 * `resident` bytes of the dataset are cached, and a newcomer wants to start.
 * Times are seconds after the group's origin (its first start); `now` is
 * the current time on that axis. The answer: the newcomer's release (s
 * after now, at most `latest`) that minimises the predicted makespan, the
 * makespan if it started now, and each instance's predicted end.
 */
struct mo_online_inst {
	struct model_inst m;
	bool running;		/* else planned: starts at `start` (>= now) */
	double start;		/* s after the origin */
	double consumed;	/* running: bytes consumed so far */
};

struct mo_online {
	struct model_sys sys;
	double now;
	double resident;	/* bytes; < 0: unknown (the running ones' reads, as fit) */
	int n;			/* other instances */
	struct mo_online_inst inst[MODEL_MAX_INST - 1];
	struct model_inst newcomer;
	double latest;		/* s after now; <= 0: no limit but the search horizon */
};

struct mo_online_result {
	double release;		/* s after now */
	double makespan;	/* at release, s after the origin */
	double makespan_now;	/* released now */
	double gain;		/* (makespan_now - best) / makespan_now, searched */
	bool together;		/* gain below min_gain: release = 0 */
	double end[MODEL_MAX_INST];	/* at release: others, then the newcomer */
	unsigned evals;
};

/* The prediction for a given release (s after now). */
int mo_online_eval(const struct mo_online *o, double release, struct mo_online_result *r,
		   char *err, size_t errlen);
/* Search the release (opt: grid and tol as model_best's); min_gain as mo_search's. */
int mo_online_best(const struct mo_online *o, const struct model_search *opt, double min_gain,
		   struct mo_online_result *r, char *err, size_t errlen);

/* Bandwidth with k concurrent streams. */
double model_bw(const struct model_sys *sys, int k);
const char *model_order_name(enum model_order o);
int model_order_parse(const char *s, enum model_order *o);
const char *model_evict_name(enum model_evict e);
int model_evict_parse(const char *s, enum model_evict *e);

/* ---- prefetch orders from the jobs' read orders ---- */

/*
 * Prefetch orders from the jobs' own read orders (Documentation/model.md,
 * "The learned read order"): N instances each read a sequence of the
 * dataset's files; a prefetch that serves all of them reads every file
 * once. The merge by need orders the files by the time an instance will
 * first need each one: its first read (release plus start-up) plus the
 * bytes before the file in its own sequence at its rate. The merge by
 * position (each instance's first file, then each one's second, ...) is
 * what `run` did before; it ignores the release times, so with staggered
 * releases it loads the followers' files while only the leader runs.
 *
 * And the map from files to the makespan model's extents, so a merged
 * order and the jobs' own orders can be given to the model
 * (model_set_prefetch(), model_set_order()). In order.c.
 */
/* One instance's sequence and its schedule. */
struct mo_seq {
	const uint32_t *files;	/* indices into the dataset's files */
	size_t len;
	double first;		/* s: when it reads its first file (release + start-up) */
	double rate;		/* bytes/s it consumes (> 0) */
};

/*
 * Merge by need: each file once, at its earliest need over the instances;
 * ties (equal times) go to the lower instance, then the earlier position.
 * out has room for nfiles indices; need (may be NULL) gets each one's
 * time. -EINVAL for an index >= nfiles or a rate <= 0, -ENOMEM.
 */
int mo_merge_by_need(const struct mo_seq *seqs, int n, const uint64_t *sizes,
		     uint32_t nfiles, uint32_t *out, double *need, size_t *nout);

/* Merge by position: each instance's i-th file in turn, each file once (first and rate unused). */
int mo_merge_by_position(const struct mo_seq *seqs, int n, uint32_t nfiles, uint32_t *out,
			 size_t *nout);

/*
 * The model's extents (K equal parts of the dataset, its files laid out in
 * index order) that the files cover, in the files' order, each extent once.
 * out has room for K. -EINVAL for a bad index or K = 0.
 */
int mo_files_to_extents(const uint32_t *files, size_t n, const uint64_t *sizes,
			uint32_t nfiles, uint32_t K, uint32_t *out, uint32_t *nout);

/* ---- profile and model input ---- */

/*
 * Calibration profile: what `tandemctl calibrate` measured, stored as a
 * versioned JSON document (Documentation/model.md lists the fields), and
 * turned into model input by profile_to_model(). Also the instance
 * description syntax shared by `model`, `calibrate` and `run`:
 *   name=A,rate=50M,epochs=2,order=indep|same|seq,seed=1,window=8M,cpu=0,mem=0,
 *   startup=3s,startup_cpu=2s,gap=0.3s,streams=2,exit=0.3s,cpu_task=0
 * where rate is bytes/s of cached data consumed (or step=15ms,sample=1M).
 */
#define PROFILE_VERSION		1
#define PROFILE_MAX_NODES	16

struct profile_node {
	int id;
	bool has_cpus;
	double total, free, file;	/* bytes, from nodeN/meminfo */
	double avail;			/* free + file - high watermark */
};

/*
 * Where an instance's numbers came from (rate_source): "rate" (given:
 * --rate, rate=), "warm" (a warm run of its command, calibrate.h), or
 * "predictor" (its graph through libtandem-predict: graph=, batch=). Profiles written
 * before used "user" and "warm-run" for the first two; they load as such.
 */
#define PROFILE_SRC_RATE	"rate"
#define PROFILE_SRC_WARM	"warm"
#define PROFILE_SRC_PRED	"predictor"

/* What the predictor said, for rate_source "predictor" (calibrate.h, cal_pred). */
#define PROFILE_PRED_WARN	4
struct profile_pred {
	double iteration_s;		/* predicted s per training iteration */
	double bytes_per_iter;		/* batch x bytes per sample */
	char model[256];		/* "built-in" or the model file */
	char trained_on[160];
	double probe_ratio;		/* the device probe's mapping factor, 0: not mapped */
	char probe[160];		/* the probes it used, or why none */
	int nwarn;
	char warn[PROFILE_PRED_WARN][200];
};

/* What a warm run measured, beyond the model's terms (0: not measured). */
struct profile_warm {
	double seconds;			/* the run, exec to kill */
	double window_s;		/* the rate's window (after the first read) */
	double bytes;			/* dataset bytes read in it */
	double cpu_s;			/* CPU of the process group in it */
	double first_read_s;		/* release to the first dataset read */
	bool epoch_seen;		/* an epoch boundary was in the run */
	bool window_measured;		/* window_bytes is the measured run-ahead */
	bool exit_measured;		/* exit_s was measured (false: 0, not seen) */
	char exit_from[8];		/* "sigint" (SIGINT to its end) or "end" (its own end) */
	bool epoch2_seen;		/* rate and CPU are over epoch 2 (false: epoch 1's
					 * second half, or the run) */
	unsigned runs;			/* warm runs: the terms are their medians (0: 1) */
	double rate_min, rate_max;	/* their rates' range */
	char method[16];		/* "tracker" (page counts) or "proc" (fds, rchar) */
};

/*
 * How host.cpu_contention was measured: calibrate's runs of the instances
 * together (a loaded profile has runs, measured, the range and the times,
 * not n and the per-instance ratios).
 */
struct profile_contention {
	unsigned runs;			/* 0: not measured */
	int n;				/* instances in each run */
	int inst[MODEL_MAX_INST];	/* which (profile order) */
	double ratio[MODEL_MAX_INST];	/* CPU per byte together / alone, median of the runs */
	double measured;		/* C as measured (cpu_contention: at least 0) */
	double c_min, c_max;		/* the runs' range */
	double span_s;			/* the window all read in, median */
	double seconds;			/* the runs, all of them */
};

struct profile_inst {
	struct model_inst m;
	char rate_source[16];		/* PROFILE_SRC_*, or an older profile's value */
	char *cmd;			/* the command line, or NULL */
	struct profile_warm warm;	/* rate_source "warm" */
	struct profile_pred pred;	/* rate_source "predictor" */
};

struct profile {
	int version;
	char created[32];		/* UTC, ISO 8601 */
	double calib_seconds;
	double storage_seconds;		/* of it: memory and B(k) */
	double warmup_seconds;		/* of it: reading the dataset into the cache */
	/* dataset */
	char *dataset_path;
	double dataset_bytes;
	uint64_t files;
	double record_size;
	/* storage */
	double bw[MODEL_MAX_BW];	/* B(1), B(2), ... bytes/s */
	int nbw;
	char cold_method[16];		/* "fadvise" or "drop-caches" */
	double sample_bytes;
	/* memory */
	int cxl_node;			/* -1: none */
	double cache_dram, cache_cxl;	/* bytes the page cache can use */
	double mem_available;		/* /proc/meminfo MemAvailable */
	int nnodes;
	struct profile_node nodes[PROFILE_MAX_NODES];
	double ncpu;
	double cpu_contention;		/* model_sys.cpu_contention, measured */
	struct profile_contention contention;
	int ninst;
	struct profile_inst inst[MODEL_MAX_INST];
};

void profile_init(struct profile *p);
void profile_free(struct profile *p);
int profile_load(const char *path, struct profile *p, char *err, size_t errlen);
int profile_save(const char *path, const struct profile *p);

/*
 * Cache capacity the model gets. Without steering: DRAM plus the fraction
 * frac of the CXL node (the page allocator spills there by itself: 1,
 * measured). With steering: the CXL node plus the fraction frac of DRAM
 * (tandem.ko fills the CXL node and leaves the rest where the kernel put
 * it: 1; Documentation/validation.md, nodram-steer).
 */
double profile_cache(const struct profile *p, bool steer, double frac);

/* Model input from a profile (may be empty) and command-line overrides. */
struct model_args {
	double dataset;			/* D; 0: from the profile */
	double cache;			/* C; < 0: from the profile */
	double cxl_cache;		/* CXL part of C; < 0: from the profile */
	double nosteer_frac;		/* see profile_cache() */
	double steer_dram_frac;		/* see profile_cache() */
	double bw[MODEL_MAX_BW];	/* B(k); nbw = 0: from the profile */
	int nbw;
	double eta;			/* B(2) = eta * B(1) when > 0 */
	double ncpu;			/* < 0: from the profile */
	double cpu_contention;		/* < 0: from the profile */
	int steer;			/* -1: on when there is a CXL node */
	int evict;			/* -1: default */
	bool warm;
	uint32_t extents;		/* 0: from the file count */
	int nspec;			/* instances given on the command line */
	struct model_inst spec[MODEL_MAX_INST];
	/* the same as text: applied on top of the profile's instance i */
	const char *spec_str[MODEL_MAX_INST];
	int ninstances;			/* replicate the last one up to this */
	double rate[MODEL_MAX_INST];	/* rates of the first nrate instances, bytes/s */
	int nrate;
	int exactly;			/* > 0: the first this many instances; fewer is an error */
};

void model_args_init(struct model_args *a);
/* --instance SPEC: one more instance on the command line (err says what is wrong) */
int model_args_add_instance(struct model_args *a, const char *spec, char *err, size_t errlen);
/* Parse a rate list R[,R...] ("50M,25M", lib/units.h) into out; *n of them. */
int model_args_parse_rates(const char *list, double *out, int max, int *n);
/* Parse B(1)[,B(2)...] into a->bw. */
int model_args_parse_bw(struct model_args *a, const char *list);
/* Whether the cache of a is the steered one (a->steer, else a CXL node in p). */
bool model_args_steer(const struct model_args *a, const struct profile *p);
int model_args_build(const struct model_args *a, const struct profile *p,
		     struct model_sys *sys, struct model_inst *inst, int *n,
		     char *err, size_t errlen);

/*
 * The model a and p describe and, when it steers and alt is wanted, the
 * same jobs without steering (alt stays NULL when it cannot be built): the
 * comparison that says when steering costs time (a dataset larger than the
 * CXL node thrashes there: Documentation/validation.md, nodram-steer).
 */
struct model_set {
	struct model *m, *alt;
	struct model_sys sys;			/* m's input */
	struct model_inst inst[MODEL_MAX_INST];
	int n;
	bool steer;				/* m's cache is the steered one */
};

int model_set_new(const struct model_args *a, const struct profile *p, bool want_alt,
		  struct model_set *s, char *err, size_t errlen);
void model_set_free(struct model_set *s);

/* Parse one instance description into in (defaults for missing keys). */
int profile_inst_parse(const char *spec, struct model_inst *in, char *err, size_t errlen);
void profile_inst_default(struct model_inst *in, int idx);

/* ---- evaluation for the CLI ---- */

/*
 * Evaluating the model for the CLI (`model`, `run --stagger auto`): solo
 * times, M over a grid of uniform staggers, the searched best vector, and
 * their text/JSON output and gnuplot plot.
 */
/*
 * Staggering must gain at least this fraction of M(0) before it is advised:
 * the model's error against measured runs is of this order.
 */
#define MO_MIN_GAIN 0.02

struct mo_report {
	int n;
	double solo[MODEL_MAX_INST];	/* each instance alone, cold cache */
	/* grid: x >= 0 releases instance k at k*x, x < 0 in reverse order */
	double *xs;
	int nx;
	double *mk;			/* M at each x */
	double *ends;			/* nx * n instance ends */
	/* search */
	bool searched;
	double best[MODEL_MAX_INST];	/* release vector minimising M */
	double best_m, m0;		/* M(best), M(0) */
	double gain;			/* (m0 - best_m) / m0 */
	bool together;			/* gain below the threshold: start together */
	double chosen[MODEL_MAX_INST];	/* what to apply: best, or zeros */
	double chosen_m;
	struct model_result chosen_res;
	unsigned evals;
	uint64_t search_events;	/* events the search simulated (cut ones too) */
	double search_ms, search_cpu_ms;
};

void mo_grid_delta(double x, int n, double *delta);
double mo_nice_step(double raw);
int mo_solo_all(struct model *m, struct mo_report *r, double *horizon);
int mo_eval_grid(struct model *m, struct mo_report *r);
/* model_best(), then the advice: stagger only when it gains >= min_gain */
int mo_search(struct model *m, struct mo_report *r, unsigned grid, double min_gain);
/* alt (may be NULL): the same search without CXL steering, model alt_m */
void mo_print(const struct model *m, const struct profile *p, const struct mo_report *r,
	      const struct model *alt_m, const struct mo_report *alt);
/* gnuplot: M over the grid, the best point, and measured "x,M" points */
int mo_plot(const char *path, const char *measured, const struct model *m,
	    const struct mo_report *r);
void mo_report_free(struct mo_report *r);

#endif
