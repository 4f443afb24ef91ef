/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The simulation's state, shared by its files and by nothing else:
 * makespan.c (model_new(), the event loop), sim_cache.c (the page cache),
 * sim_order.c (read orders) and sim_start.c (start state, prefetch, given
 * orders). model.h is the API.
 */
#ifndef TANDEM_CTL_MODEL_SIM_H
#define TANDEM_CTL_MODEL_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"

#define NONE			UINT32_MAX

enum { ST_WAIT, ST_START, ST_RUN, ST_DONE };
enum { PF_WAIT, PF_RUN, PF_DONE };

struct inst_state {
	int state;
	uint64_t total;		/* extents to consume: epochs * K */
	uint64_t rpos;		/* extents handed to the consumer */
	double rbytes, rnext;	/* bytes before rpos and rpos + 1 (set_rpos()) */
	double cpos;		/* bytes consumed */
	uint32_t wait;		/* extent being loaded for us, or NONE */
	uint32_t perm_epoch;	/* epoch whose order is in perm */
	uint32_t *perm;		/* order of the current epoch (K) */
	double window;		/* effective prefetch window, bytes */
	bool cpu_bound;		/* shares the preprocessing CPUs */
	double rate;		/* consumer rate until the next event */
	double spos;		/* ST_START: start-up done, in seconds of it alone */
	double srate;		/* ST_START: start-up seconds per second (< 1: CPUs short) */
	bool in_gap;		/* in an epoch gap */
	double gap_left;	/* seconds of it left */
	uint32_t open;		/* the last epoch the reader may read; UINT32_MAX: all */
	uint64_t memo_q;	/* extent_at(memo_q) = memo_c; UINT64_MAX: none */
	uint32_t memo_c;
};

struct model {
	struct model_sys sys;
	struct model_inst inst[MODEL_MAX_INST];
	int n;
	uint32_t K;
	double s;		/* extent size, bytes */
	uint32_t cap;		/* extents the cache holds */
	bool cpu_model;		/* some instance shares preprocessing CPUs */
	double eps;		/* bytes treated as zero */
	/* simulation scratch, reused across evaluations */
	uint8_t *resident;	/* RES_*, 0 = not resident */
	uint32_t *prev, *next;	/* LRU list (2Q: both lists), head = most recent */
	uint32_t head, tail;	/* LRU list, 2Q inactive list */
	uint32_t ahead, atail;	/* 2Q active list */
	uint32_t nact;		/* 2Q: extents on the active list */
	uint32_t *rlist, *rslot;	/* random eviction: resident set */
	uint32_t nres;
	double *flow_rem;	/* remaining bytes of a load, < 0: none */
	uint32_t flows[MODEL_MAX_INST + 1];	/* the instances', and the prefetch's */
	double flow_w[MODEL_MAX_INST + 1];	/* weight of each load's share of B(k) */
	double flow_r[MODEL_MAX_INST + 1];	/* its rate until the next event */
	int nflows;
	uint64_t rng;
	uint32_t *permbuf;
	struct inst_state st[MODEL_MAX_INST];
	/* where a simulation starts (model_set_start(), online.c) */
	bool has_start;
	struct model_start start;
	/* the prefetch (model_set_prefetch()) and its state in a simulation */
	uint32_t *pf_order, pf_n;
	double pf_start, pf_cap;	/* s; bytes/s, 0: none */
	int pf_state;			/* PF_*; PF_DONE also when there is none */
	uint32_t pf_pos, pf_wait;	/* next in its order; the extent it loads, or NONE */
	bool pf_joined;			/* a job waits on that load: no longer paced */
	/* a given first epoch per instance (model_set_order()), K extents, or NULL */
	uint32_t *given[MODEL_MAX_INST];
	double lb_rel;			/* inst_end_bound()'s relative margin */
	uint64_t events_all;		/* model_events() */
};

static inline double min2(double a, double b)
{
	return b < a ? b : a;
}

/*
 * Bytes before position q (extents): q * s. The positions are below 2^63,
 * so the signed conversion gives the same double as the unsigned one, in
 * one instruction instead of a branch (this is on every event's path).
 */
static inline double pos_bytes(const struct model *m, uint64_t q)
{
	return (double)(int64_t)q * m->s;
}

/* The reader's position, and the bytes before it and the next one. */
static inline void set_rpos(const struct model *m, struct inst_state *st, uint64_t q)
{
	st->rpos = q;
	st->rbytes = pos_bytes(m, q);
	st->rnext = pos_bytes(m, q + 1);
}

static inline uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

enum { RES_NONE, RES_INACTIVE, RES_REFERENCED, RES_ACTIVE };

/* sim_cache.c */
void sim_cache_touch(struct model *m, uint32_t c);
void sim_cache_insert(struct model *m, uint32_t c);
void sim_cache_evict_one(struct model *m);
void sim_cache_reset(struct model *m);
/* sim_order.c */
void sim_shuffle(uint32_t *p, uint32_t k, uint64_t seed, uint32_t epoch);
uint32_t sim_extent_lookup(struct model *m, int i, uint64_t q);
/* sim_start.c: the instances and the cache as model_set_start() says */
void sim_start_apply(struct model *m, struct model_result *res);

#endif
