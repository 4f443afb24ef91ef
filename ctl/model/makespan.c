// SPDX-License-Identifier: GPL-2.0
/*
 * Makespan model: an event-driven fluid simulation over dataset extents.
 *
 * Each instance is a two-stage pipeline, as a data loader is: a reader that
 * walks the instance's order of extents, and a consumer (the training step)
 * that eats bytes at the compute-bound rate R_i. The reader may run ahead of
 * the consumer by the prefetch window; a resident extent passes at once (a
 * hit), a missing one is loaded from storage (a miss), and an extent another
 * instance is loading is waited for without a second read (a join, as two
 * readers of one file share one disk read through the page cache). Loads in
 * flight split B(k) equally, which is the max-min fair share when every
 * stream wants more than it gets; consumers with preprocessing cost split
 * the CPUs max-min fairly. A loaded extent enters the cache, which evicts
 * (LRU or random) beyond its capacity C.
 *
 * Real jobs add three things (all zero for the emulator): a start-up phase
 * after the release in which the instance reads nothing and needs some CPU
 * (shared with the others' consumers), a pause at each epoch boundary that
 * also holds the reader there (a DataLoader forks its workers again), and a
 * weight per instance for its share of B(k) (the throttle shares per request,
 * so per loader worker).
 *
 * And the prefetch `run` starts (model_set_prefetch()): one more reader
 * that walks its own order of extents from its start time, skips what is
 * resident or being loaded, and loads the rest one at a time, sharing B(k)
 * as one stream up to its cap; what it loads enters the cache, so a job
 * that reaches it later hits (or joins the load in flight). A job's first
 * epoch can follow a given order (model_set_order(): the learned one), so
 * the prefetch's order and the jobs' refer to the same extents.
 *
 * Here: model_new(), the event loop and its bound (model_eval_bound()); the
 * page cache is in sim_cache.c, the read orders in sim_order.c, the start
 * state, prefetch and given orders in sim_start.c, their shared state in sim.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/sim.h"

#define MODEL_DEFAULT_EXTENTS	512

static int check_input(const struct model_sys *sys, const struct model_inst *inst,
		       int n, char *err, size_t errlen)
{
	if (n < 1 || n > MODEL_MAX_INST)
		return snprintf(err, errlen, "need 1 to %d instances", MODEL_MAX_INST), -EINVAL;
	if (!(sys->dataset > 0) || !(sys->dataset <= MODEL_MAX_BYTES))
		return snprintf(err, errlen, "dataset size must be > 0 and at most 1 PB"), -EINVAL;
	if (!(sys->cache >= 0) || !(sys->cache <= MODEL_MAX_BYTES) || sys->nbw < 1 ||
	    sys->nbw > MODEL_MAX_BW)
		return snprintf(err, errlen, "need a cache size of 0 to 1 PB and B(1)"), -EINVAL;
	if (!(sys->cpu_contention >= 0) || sys->cpu_contention > 10)
		return snprintf(err, errlen, "CPU contention must be in [0, 10]"), -EINVAL;
	for (int k = 0; k < sys->nbw; k++)
		if (!(sys->bw[k] >= MODEL_MIN_RATE) || !(sys->bw[k] <= MODEL_MAX_BYTES))
			return snprintf(err, errlen, "B(%d) must be 1 B/s to 1 PB/s", k + 1), -EINVAL;
	for (int i = 0; i < n; i++) {
		const struct model_inst *in = &inst[i];

		if (!(in->rate >= MODEL_MIN_RATE) || !(in->rate <= MODEL_MAX_BYTES))
			return snprintf(err, errlen, "instance %d: rate must be 1 B/s to 1 PB/s", i),
			       -EINVAL;
		if (in->epochs > MODEL_MAX_EPOCHS)
			return snprintf(err, errlen, "instance %d: at most %u epochs", i,
					MODEL_MAX_EPOCHS), -EINVAL;
		if (!(in->cpu_per_byte >= 0 && in->cpu_per_byte <= 1) ||
		    !(in->cpu_task_per_byte >= 0 && in->cpu_task_per_byte <= 1) ||
		    !(in->window >= 0 && in->window <= MODEL_MAX_BYTES) ||
		    !(in->mem >= 0 && in->mem <= MODEL_MAX_BYTES) || in->order > MODEL_ORDER_SEQ)
			return snprintf(err, errlen, "instance %d: bad parameter (CPU per byte 0 to 1 s, "
					"window and memory 0 to 1 PB)", i), -EINVAL;
		if (!(in->startup >= 0 && in->startup <= MODEL_MAX_SECONDS) ||
		    !(in->startup_cpu >= 0 && in->startup_cpu <= MODEL_MAX_SECONDS) ||
		    !(in->epoch_gap >= 0 && in->epoch_gap <= MODEL_MAX_SECONDS) ||
		    !(in->exit >= 0 && in->exit <= MODEL_MAX_SECONDS) ||
		    !(in->streams >= 0 && in->streams <= 4096))
			return snprintf(err, errlen, "instance %d: start-up, its CPU, gap and exit must "
					"be 0 to %.0e s, streams 0 to 4096", i, MODEL_MAX_SECONDS),
			       -EINVAL;
	}
	return 0;
}

static int alloc_scratch(struct model *m)
{
	uint32_t K = m->K;

	m->resident = calloc(K, 1);
	m->prev = calloc(K, sizeof(uint32_t));
	m->next = calloc(K, sizeof(uint32_t));
	m->rlist = calloc(K, sizeof(uint32_t));
	m->rslot = calloc(K, sizeof(uint32_t));
	m->flow_rem = calloc(K, sizeof(double));
	m->permbuf = calloc((size_t)K * m->n, sizeof(uint32_t));
	if (!m->resident || !m->prev || !m->next || !m->rlist || !m->rslot ||
	    !m->flow_rem || !m->permbuf)
		return -ENOMEM;
	for (int i = 0; i < m->n; i++)
		m->st[i].perm = m->permbuf + (size_t)K * i;
	return 0;
}

int model_new(const struct model_sys *sys, const struct model_inst *inst,
	      int n, struct model **out, char *err, size_t errlen)
{
	struct model *m;
	double mem = 0, room;
	int ret;

	ret = check_input(sys, inst, n, err, errlen);
	if (ret)
		return ret;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->sys = *sys;
	memcpy(m->inst, inst, n * sizeof(*inst));
	m->n = n;
	m->K = sys->extents ? sys->extents : MODEL_DEFAULT_EXTENTS;
	m->s = sys->dataset / m->K;
	m->eps = m->s * 1e-9;
	for (int i = 0; i < n; i++)
		mem += inst[i].mem;
	/* the jobs' own memory is taken from what the page cache can keep */
	room = sys->cache - mem;
	m->cap = room <= 0 ? 0 : (uint32_t)fmin(floor(room / m->s + 1e-9), m->K);
	ret = alloc_scratch(m);
	if (ret) {
		model_free(m);
		return ret;
	}
	*out = m;
	return 0;
}

void model_free(struct model *m)
{
	if (!m)
		return;
	free(m->resident);
	free(m->prev);
	free(m->next);
	free(m->rlist);
	free(m->rslot);
	free(m->flow_rem);
	free(m->permbuf);
	free(m->pf_order);
	for (int i = 0; i < m->n; i++)
		free(m->given[i]);
	free(m);
}

uint32_t model_extents(const struct model *m)
{
	return m->K;
}

uint32_t model_cache_extents(const struct model *m)
{
	return m->cap;
}

const struct model_inst *model_inst_of(const struct model *m, int i)
{
	return &m->inst[i];
}

int model_ninst(const struct model *m)
{
	return m->n;
}

const struct model_sys *model_sys_of(const struct model *m)
{
	return &m->sys;
}

/* ---- instances ---- */

/*
 * The extent instance i reads at position q. Asked for the reader's
 * position at every event: the last answer is kept (memo_q, memo_c).
 */
static inline uint32_t extent_at(struct model *m, int i, uint64_t q)
{
	struct inst_state *st = &m->st[i];

	if (q == st->memo_q)
		return st->memo_c;
	return sim_extent_lookup(m, i, q);
}

/* Extents the reader may have handed over: up to the end of its open epoch. */
static uint64_t barrier_of(const struct model *m, const struct inst_state *st)
{
	return st->open == UINT32_MAX ? UINT64_MAX : (uint64_t)(st->open + 1) * m->K;
}

/* Let instance i's reader run ahead as far as its window and the cache allow. */
static void reader_advance(struct model *m, int i, struct model_result *res)
{
	struct inst_state *st = &m->st[i];
	struct model_inst_result *r = &res->inst[i];

	if (st->state != ST_RUN || st->wait != NONE || st->in_gap)
		return;
	while (st->rpos < st->total && st->rpos < barrier_of(m, st) &&
	       st->rnext - st->cpos <= st->window + m->eps) {
		uint32_t c = extent_at(m, i, st->rpos);

		if (m->resident[c]) {
			sim_cache_touch(m, c);
			r->hit_bytes += m->s;
			set_rpos(m, st, st->rpos + 1);
			continue;
		}
		st->wait = c;
		if (m->flow_rem[c] >= 0) {
			m->pf_joined |= c == m->pf_wait;
			r->join_bytes += m->s;
		} else {
			m->flow_rem[c] = m->s;
			m->flow_w[m->nflows] = m->inst[i].streams > 0 ? m->inst[i].streams : 1;
			m->flows[m->nflows++] = c;
			r->miss_bytes += m->s;
		}
		return;
	}
}

static void flow_complete(struct model *m, int f, struct model_result *res)
{
	uint32_t c = m->flows[f];

	m->nflows--;
	m->flows[f] = m->flows[m->nflows];
	m->flow_w[f] = m->flow_w[m->nflows];
	m->flow_rem[c] = -1;
	res->storage_bytes += m->s;
	sim_cache_insert(m, c);
	if (c == m->pf_wait) {
		m->pf_wait = NONE;
		m->pf_joined = false;
		m->pf_pos++;
	}
	for (int i = 0; i < m->n; i++) {
		if (m->st[i].wait == c) {
			m->st[i].wait = NONE;
			set_rpos(m, &m->st[i], m->st[i].rpos + 1);
		}
	}
}

struct cpu_share {
	double unit[MODEL_MAX_INST];	/* cores per unit of want (with contention) */
	double task[MODEL_MAX_INST];	/* the busiest task's part of unit */
	double want[MODEL_MAX_INST];	/* bytes/s, or 1 for a start-up */
	double demand[MODEL_MAX_INST];	/* want * unit cores; 0: none or satisfied */
	int left;			/* instances with a demand */
};

/* Each instance's rate before the CPUs are shared, and its wants of them. */
static void cpu_wants(struct model *m, struct cpu_share *c)
{
	c->left = 0;
	for (int i = 0; i < m->n; i++) {
		struct inst_state *st = &m->st[i];
		const struct model_inst *in = &m->inst[i];
		bool busy = st->state == ST_RUN && !st->in_gap &&
			    st->rbytes - st->cpos > m->eps;

		st->rate = busy ? in->rate : 0;
		st->srate = 1;
		c->demand[i] = c->unit[i] = 0;
		if (m->sys.ncpu <= 0)
			continue;
		if (st->state == ST_START && in->startup_cpu > 0) {
			c->unit[i] = c->task[i] = fmin(1, in->startup_cpu / in->startup);
		} else if (busy && in->cpu_per_byte > 0) {
			c->unit[i] = in->cpu_per_byte;
			c->task[i] = in->cpu_task_per_byte > 0 ?
				     fmin(in->cpu_task_per_byte, c->unit[i]) : c->unit[i];
		}
		if (c->unit[i] > 0) {
			c->want[i] = st->state == ST_START ? 1 : st->rate;
			c->left++;
		}
	}
	/*
	 * Contention: with `left` instances on the CPUs, each one's CPU per
	 * byte (per second of start-up) is 1 + c (left - 1) times its own.
	 */
	for (int i = 0; i < m->n; i++) {
		if (c->unit[i] <= 0)
			continue;
		if (c->left > 1 && m->sys.cpu_contention > 0) {
			double f = 1 + m->sys.cpu_contention * (c->left - 1);

			c->unit[i] *= f;
			c->task[i] *= f;
		}
		c->demand[i] = c->want[i] * c->unit[i];
	}
}

/*
 * Consumer rates: R_i, or less where preprocessing CPUs are the bottleneck;
 * start-up rates: 1, or less where the CPUs are short. Each wants
 * rate * unit cores (unit: CPU-seconds per byte, or per second of start-up),
 * of which its busiest task rate * task (task <= unit; = unit for one task
 * and for start-ups). The scheduler shares per task, so the CPUs are split
 * max-min fairly on the busiest tasks' shares (water-filling on a level L:
 * an instance that does not get all it wants runs at L / task, and uses
 * L * unit / task cores); with task = unit that is max-min per instance.
 */
static void consumer_rates(struct model *m)
{
	double cpu_left = m->sys.ncpu;
	struct cpu_share c;
	int i;

	cpu_wants(m, &c);
	/* water-filling: satisfy the smallest levels, split the rest */
	while (c.left > 0) {
		double wsum = 0, level;
		bool fixed = false;

		for (i = 0; i < m->n; i++)
			if (c.demand[i] > 0)
				wsum += c.unit[i] / c.task[i];
		level = cpu_left / wsum;
		for (i = 0; i < m->n; i++) {
			if (c.demand[i] > 0 && c.want[i] * c.task[i] <= level) {
				cpu_left -= c.demand[i];
				c.demand[i] = 0;
				c.left--;
				fixed = true;
			}
		}
		if (fixed)
			continue;
		for (i = 0; i < m->n; i++) {
			if (c.demand[i] <= 0)
				continue;
			if (m->st[i].state == ST_START)
				m->st[i].srate = level / c.task[i];
			else
				m->st[i].rate = level / c.task[i];
		}
		break;
	}
}

/*
 * Time to instance i's next event at its current rate; INFINITY if none.
 * A reader held by its window only needs an event when the window opens
 * on an extent that must be loaded: resident extents are passed at the
 * next event anyway (at the latest when the consumer drains what it has),
 * which saves most events of a cache-bound phase.
 */
static double inst_next(struct model *m, int i)
{
	struct inst_state *st = &m->st[i];
	double dt = INFINITY, thr;

	if (st->state == ST_START)
		return st->srate > 0 ? (m->inst[i].startup - st->spos) / st->srate : dt;
	if (st->state == ST_RUN && st->in_gap)
		return fmax(st->gap_left, 0);
	if (st->state != ST_RUN || st->rate <= 0)
		return dt;
	/*
	 * Running dry while a load for us is in flight needs no event
	 * (advance() stops the consumer at what it has; the load's end is an
	 * event) unless it is the end or frees CPU for others.
	 */
	if (st->wait == NONE || st->rpos == st->total || st->cpu_bound)
		dt = (st->rbytes - st->cpos) / st->rate;
	if (st->wait != NONE || st->rpos >= st->total || st->rpos >= barrier_of(m, st))
		return dt;
	thr = st->rnext - st->window - st->cpos;
	if (thr > m->eps && !m->resident[extent_at(m, i, st->rpos)])
		dt = min2(dt, thr / st->rate);
	return dt;
}

/* The release: start-up first, when the instance has one (and any work). */
static void inst_release(struct model *m, int i, const double *delta,
			 struct model_result *res)
{
	struct inst_state *st = &m->st[i];

	st->state = m->inst[i].startup > 0 && st->total ? ST_START : ST_RUN;
	st->srate = 1;
	res->inst[i].start = delta[i];
	res->inst[i].first_read = delta[i];
}

/*
 * The epoch boundary of a job with a gap: the reader has handed over its
 * whole open epoch and the consumer has eaten it. Returns whether the gap
 * began. An instance placed mid-run (model_set_start()) may be past the
 * barrier its open epoch says: the barrier follows the reader then.
 */
static bool inst_epoch_gap(struct model *m, int i)
{
	struct inst_state *st = &m->st[i];

	if (st->open == UINT32_MAX)
		return false;
	if (st->rpos > 0 && (st->rpos - 1) / m->K > st->open)
		st->open = (st->rpos - 1) / m->K;
	if (st->rpos != barrier_of(m, st) || st->rpos >= st->total)
		return false;
	st->in_gap = true;
	st->gap_left = m->inst[i].epoch_gap;
	st->rate = 0;
	return true;
}

/*
 * Instance i's next event at its rate, unless the CPUs are shared: then its
 * rate is only known once consumer_rates() has run, and settle() asks again
 * (at the uncontended R_i the event came too early, at half the distance
 * with two jobs on one CPU, then half of the rest, ...: about 30 events per
 * extent, which ran past the event limit).
 */
static double rate_event(struct model *m, int i)
{
	return m->cpu_model ? INFINITY : inst_next(m, i);
}

/*
 * Bring instance i up to time t (release, start-up, gap, end, reader) and
 * return the time to its next event, so one pass over the instances does
 * all of it.
 */
static double inst_settle(struct model *m, int i, const double *delta, double t,
			  struct model_result *res)
{
	struct inst_state *st = &m->st[i];

	if (st->state == ST_WAIT) {
		if (delta[i] > t + 1e-12)
			return delta[i] - t;
		inst_release(m, i, delta, res);
	}
	if (st->state == ST_START) {
		if (m->inst[i].startup - st->spos > 1e-9)
			return rate_event(m, i);
		st->state = ST_RUN;
		res->inst[i].first_read = t;
	}
	if (st->state != ST_RUN)
		return INFINITY;
	if (st->in_gap) {
		if (st->gap_left > 1e-9)
			return st->gap_left;
		st->in_gap = false;
		st->gap_left = 0;
		st->open++;
	}
	if (st->cpos >= st->rbytes - m->eps) {
		st->cpos = st->rbytes;
		if (st->rpos == st->total) {
			st->state = ST_DONE;
			/* the exit takes no resource: nothing else waits for it */
			res->inst[i].end = st->total ? t + m->inst[i].exit : delta[i];
			return INFINITY;
		}
		if (inst_epoch_gap(m, i))
			return st->gap_left;
	}
	reader_advance(m, i, res);
	st->rate = st->rbytes - st->cpos > m->eps ? m->inst[i].rate : 0;
	return rate_event(m, i);
}

/*
 * B(k) split among the k loads in flight by their weights (equal: B(k)/k),
 * max-min: a prefetch whose share is above its cap gets the cap, and the
 * others split the rest. The cap paces the prefetch's requests, not a read
 * in flight: once a job waits on the prefetch's load, it is not capped.
 * Each load's rate into flow_r[], once per event (settle() and advance()
 * both use it; the loads do not change in between).
 */
static void flow_rates(struct model *m)
{
	double wsum = 0, bw = model_bw(&m->sys, m->nflows);
	bool capped;
	int pf = -1;

	for (int g = 0; g < m->nflows; g++) {
		wsum += m->flow_w[g];
		if (m->flows[g] == m->pf_wait)
			pf = g;
	}
	capped = pf >= 0 && !m->pf_joined && m->pf_cap > 0 &&
		 bw * m->flow_w[pf] / wsum > m->pf_cap;
	for (int f = 0; f < m->nflows; f++) {
		if (capped)
			m->flow_r[f] = f == pf ? m->pf_cap :
				       (bw - m->pf_cap) * m->flow_w[f] / (wsum - m->flow_w[pf]);
		else
			m->flow_r[f] = bw * m->flow_w[f] / wsum;
	}
}

static void advance(struct model *m, double dt)
{
	for (int f = 0; f < m->nflows; f++)
		m->flow_rem[m->flows[f]] -= m->flow_r[f] * dt;
	for (int i = 0; i < m->n; i++) {
		struct inst_state *st = &m->st[i];

		if (st->state == ST_START)
			st->spos = min2(st->spos + st->srate * dt, m->inst[i].startup);
		else if (st->state == ST_RUN && st->in_gap)
			st->gap_left -= dt;
		else if (st->state == ST_RUN)
			st->cpos = min2(st->cpos + st->rate * dt, st->rbytes);
	}
}

/*
 * The prefetch at time t: started when its time has come, then on to the
 * next extent of its order that is neither resident nor being loaded.
 * Returns the time to its start, or INFINITY (its load is a flow).
 */
static double pf_settle(struct model *m, double t, struct model_result *res)
{
	if (m->pf_state == PF_DONE)
		return INFINITY;
	if (m->pf_state == PF_WAIT) {
		if (m->pf_start > t + 1e-12)
			return m->pf_start - t;
		m->pf_state = PF_RUN;
		res->pf.ran = true;
		res->pf.start = t;
	}
	if (m->pf_wait != NONE)
		return INFINITY;
	for (; m->pf_pos < m->pf_n; m->pf_pos++) {
		uint32_t c = m->pf_order[m->pf_pos];

		if (m->resident[c] || m->flow_rem[c] >= 0)
			continue;
		m->flow_rem[c] = m->s;
		m->flow_w[m->nflows] = 1;
		m->flows[m->nflows++] = c;
		m->pf_wait = c;
		res->pf.bytes += m->s;
		return INFINITY;
	}
	m->pf_state = PF_DONE;
	res->pf.end = t;
	return INFINITY;
}

/* Apply what happened at time t; returns the time to the next event. */
static double settle(struct model *m, const double *delta, double t,
		     struct model_result *res, int *done)
{
	double dt = INFINITY;

	for (int f = m->nflows - 1; f >= 0; f--)
		if (m->flow_rem[m->flows[f]] <= m->eps)
			flow_complete(m, f, res);
	*done = 0;
	for (int i = 0; i < m->n; i++) {
		dt = min2(dt, inst_settle(m, i, delta, t, res));
		*done += m->st[i].state == ST_DONE;
	}
	dt = min2(dt, pf_settle(m, t, res));
	if (m->cpu_model) {
		/* shares changed: every running consumer's event moves */
		consumer_rates(m);
		for (int i = 0; i < m->n; i++)
			dt = min2(dt, inst_next(m, i));
	}
	flow_rates(m);
	for (int f = 0; f < m->nflows; f++)
		dt = min2(dt, m->flow_rem[m->flows[f]] / m->flow_r[f]);
	return dt;
}

static void sim_reset(struct model *m, const bool *mask, struct model_result *res)
{
	memset(res, 0, sizeof(*res));
	sim_cache_reset(m);
	m->cpu_model = false;
	for (uint32_t c = 0; c < m->K; c++)
		m->flow_rem[c] = -1;
	m->nflows = 0;
	m->pf_state = m->pf_order ? PF_WAIT : PF_DONE;
	m->pf_pos = 0;
	m->pf_wait = NONE;
	m->pf_joined = false;
	res->pf.start = res->pf.end = NAN;
	for (int i = 0; i < m->n; i++) {
		struct inst_state *st = &m->st[i];
		double w = m->inst[i].window;

		st->state = mask && !mask[i] ? ST_DONE : ST_WAIT;
		st->total = (uint64_t)m->inst[i].epochs * m->K;
		set_rpos(m, st, 0);
		st->cpos = 0;
		st->wait = NONE;
		st->perm_epoch = UINT32_MAX;
		st->memo_q = UINT64_MAX;
		st->spos = 0;
		st->srate = 1;
		st->in_gap = false;
		st->gap_left = 0;
		/* a job with a gap reads epoch by epoch, as a DataLoader does */
		st->open = m->inst[i].epoch_gap > 0 ? 0 : UINT32_MAX;
		/* at least double buffering, so loads overlap compute as in a loader */
		st->window = fmax(w, 2 * m->s);
		st->cpu_bound = m->sys.ncpu > 0 && m->inst[i].cpu_per_byte > 0;
		m->cpu_model |= st->cpu_bound ||
				(m->sys.ncpu > 0 && m->inst[i].startup_cpu > 0);
	}
	if (m->has_start)
		sim_start_apply(m, res);
}

/*
 * A lower bound of instance i's end from the state at time t: it cannot
 * consume faster than R_i nor start up faster than alone, and its exit
 * follows. The margin covers what the simulation may gain on that: the
 * snap of a consumer within eps of an extent's end (eps = 1e-9 of an
 * extent, once per extent), a release 1e-12 s and a start-up 1e-9 s early,
 * and rounding, at most half an ulp per operation and event (slack: the
 * relative margin m->lb_rel, set by simulate() from its event limit).
 */
static double inst_end_bound(const struct model *m, int i, const double *delta, double t)
{
	const struct inst_state *st = &m->st[i];
	const struct model_inst *in = &m->inst[i];
	double left, base = st->state == ST_WAIT ? fmax(delta[i], t) : t;

	if (!st->total)
		return base - 1e-6;
	left = fmax(pos_bytes(m, st->total) - st->cpos, 0) - 2 * m->eps;
	base += fmax(left, 0) / in->rate + in->exit;
	if (st->state == ST_WAIT || st->state == ST_START)
		base += fmax(in->startup - st->spos - 1e-9, 0);
	return base * (1 - m->lb_rel) - 1e-6;
}

/* Whether the makespan is certain to be above bound already at time t. */
static bool sim_past(const struct model *m, const double *delta, const bool *mask,
		     double t, double bound, const struct model_result *res)
{
	for (int i = 0; i < m->n; i++) {
		if (mask && !mask[i])
			continue;
		if (m->st[i].state == ST_DONE ? res->inst[i].end > bound :
		    inst_end_bound(m, i, delta, t) > bound)
			return true;
	}
	return false;
}

/*
 * Simulate from t = 0 until every instance is done; 1 (res incomplete)
 * as soon as the makespan is certain to be above bound (checked at the
 * start and every 64 events): a search that only asks "is it better"
 * stops there.
 */
static int simulate(struct model *m, const double *delta, const bool *mask,
		    double bound, struct model_result *res)
{
	uint64_t limit = 64;
	double t = 0;
	bool cut = false;
	int done;

	for (int i = 0; i < m->n; i++) {
		if (!(delta[i] >= 0) || !isfinite(delta[i]))
			return -EINVAL;
		limit += 8 * ((uint64_t)m->inst[i].epochs * m->K + 1) + 4 * m->inst[i].epochs;
	}
	limit += 8 * ((uint64_t)m->pf_n + 1);
	/* the snaps (1e-9 of what is left), and 4 roundings per event */
	m->lb_rel = 2e-9 + 4.0 * limit * 0x1p-53;
	sim_reset(m, mask, res);
	for (;;) {
		double dt;

		cut = !(res->events & 63) && bound < INFINITY &&
		      sim_past(m, delta, mask, t, bound, res);
		if (cut)
			break;
		dt = settle(m, delta, t, res, &done);
		if (done == m->n)
			break;
		if (!isfinite(dt) || ++res->events > limit)
			return -EDEADLK;	/* a bug, not an input error */
		advance(m, dt);
		t += dt;
	}
	m->events_all += res->events;
	if (cut)
		return 1;
	for (int i = 0; i < m->n; i++)
		if (!mask || mask[i])
			res->makespan = fmax(res->makespan, res->inst[i].end);
	return 0;
}

int model_eval(struct model *m, const double *delta, struct model_result *res)
{
	return simulate(m, delta, NULL, INFINITY, res);
}

int model_eval_bound(struct model *m, const double *delta, double bound,
		     struct model_result *res)
{
	return simulate(m, delta, NULL, bound, res);
}

uint64_t model_events(const struct model *m)
{
	return m->events_all;
}

int model_solo(struct model *m, int i, double *t)
{
	bool mask[MODEL_MAX_INST] = { false };
	double zero[MODEL_MAX_INST] = { 0 };
	struct model_result res;
	int err;

	if (i < 0 || i >= m->n)
		return -EINVAL;
	mask[i] = true;
	err = simulate(m, zero, mask, INFINITY, &res);
	if (!err)
		*t = res.inst[i].end;
	return err;
}

