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
 */
#ifndef TANDEM_CTL_MODEL_H
#define TANDEM_CTL_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#define MODEL_MAX_INST	64
#define MODEL_MAX_BW	8
#define MODEL_NAME_LEN	32

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
	double window;		/* prefetch depth in bytes (>= one extent) */
	double mem;		/* bytes the job itself takes from the cache */
};

struct model_sys {
	double dataset;		/* D, bytes */
	uint32_t extents;	/* K; 0 picks a default */
	double cache;		/* C, bytes the dataset's pages can stay in */
	double bw[MODEL_MAX_BW];	/* B(1..nbw), bytes/s; B(k>nbw) = B(nbw) */
	int nbw;
	double ncpu;		/* CPUs for preprocessing; 0 = unlimited */
	enum model_evict evict;
	bool warm;		/* whole dataset resident at t = 0 (as fits) */
	uint64_t same_seed;	/* shuffle seed shared by SAME instances */
};

struct model_inst_result {
	double start, end;	/* seconds from t = 0 */
	double miss_bytes;	/* read from storage by this instance's loads */
	double join_bytes;	/* waited on a load another instance started */
	double hit_bytes;	/* found resident */
};

struct model_result {
	double makespan;
	double storage_bytes;	/* everything read from storage */
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
/* Makespan of instance i alone on a cold cache (its solo time). */
int model_solo(struct model *m, int i, double *t);

struct model_search {
	unsigned grid;		/* candidates per coordinate (default 24) */
	double tol;		/* stop refining below this step, s (default 0.05) */
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

/* Bandwidth with k concurrent streams. */
double model_bw(const struct model_sys *sys, int k);
const char *model_order_name(enum model_order o);
int model_order_parse(const char *s, enum model_order *o);
const char *model_evict_name(enum model_evict e);
int model_evict_parse(const char *s, enum model_evict *e);

#endif
