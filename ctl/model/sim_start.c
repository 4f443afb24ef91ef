// SPDX-License-Identifier: GPL-2.0
/*
 * What a simulation starts from besides an empty cache and instances at
 * their beginning (makespan.c): a node's state (model_set_start(), for
 * online.c), the prefetch `run` starts (model_set_prefetch()) and a given
 * first epoch per instance (model_set_order()).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/sim.h"

int model_set_start(struct model *m, const struct model_start *s)
{
	m->has_start = false;
	if (!s)
		return 0;
	if (!(s->resident <= m->sys.dataset) || !isfinite(s->resident))
		return -EINVAL;
	for (int i = 0; i < m->n; i++)
		if (!(s->consumed[i] >= 0) || !isfinite(s->consumed[i]))
			return -EINVAL;
	m->start = *s;
	m->has_start = true;
	return 0;
}

/*
 * What the running instances read goes into the cache, oldest first and
 * interleaved in proportion to what each read (so an LRU cache keeps the
 * most recent reads of all of them): up to two passes back, which covers
 * every extent an instance past its first epoch has read. An extent read
 * again is touched, as a hit would.
 */
static void start_fill_reads(struct model *m)
{
	uint64_t len[MODEL_MAX_INST], last[MODEL_MAX_INST], L = 0;

	for (int i = 0; i < m->n; i++) {
		uint64_t r = m->st[i].rpos;

		len[i] = m->start.running[i] && m->st[i].state == ST_RUN ?
			 (r < 2 * (uint64_t)m->K ? r : 2 * (uint64_t)m->K) : 0;
		last[i] = UINT64_MAX;
		L = len[i] > L ? len[i] : L;
	}
	for (uint64_t j = 0; j < L; j++) {
		for (int i = 0; i < m->n; i++) {
			uint32_t c;
			uint64_t q;

			if (!len[i])
				continue;
			q = m->st[i].rpos - len[i] + j * len[i] / L;
			if (q == last[i])
				continue;
			last[i] = q;
			c = sim_extent_lookup(m, i, q);
			if (m->resident[c])
				sim_cache_touch(m, c);
			else
				sim_cache_insert(m, c);
		}
	}
}

/* Running instances at their positions; the cache as s->resident says. */
void sim_start_apply(struct model *m, struct model_result *res)
{
	double want = m->start.resident;
	uint32_t target;

	for (int i = 0; i < m->n; i++) {
		struct inst_state *st = &m->st[i];
		double c = fmin(m->start.consumed[i], pos_bytes(m, st->total));

		if (!m->start.running[i] || st->state == ST_DONE)
			continue;
		st->state = ST_RUN;
		st->cpos = c;
		/* the extent it is in the middle of has been read */
		set_rpos(m, st, (uint64_t)ceil(c / m->s - 1e-9));
		res->inst[i].start = 0;
	}
	start_fill_reads(m);
	if (want < 0)
		return;
	target = (uint32_t)fmin(floor(want / m->s + 0.5), m->cap);
	while (m->nres > target)
		sim_cache_evict_one(m);
	/* more than the running instances read: pages of earlier runs */
	for (uint32_t c = 0; c < m->K && m->nres < target; c++)
		if (!m->resident[c])
			sim_cache_insert(m, c);
}

int model_set_prefetch(struct model *m, const struct model_prefetch *p)
{
	uint32_t *o;

	if (!p || !p->n) {
		free(m->pf_order);
		m->pf_order = NULL;
		m->pf_n = 0;
		return 0;
	}
	if (!(p->start >= 0) || !(p->start <= MODEL_MAX_SECONDS) || !(p->cap >= 0) ||
	    !(p->cap <= MODEL_MAX_BYTES) || p->n > m->K)
		return -EINVAL;
	for (uint32_t k = 0; k < p->n; k++)
		if (p->order[k] >= m->K)
			return -EINVAL;
	o = realloc(m->pf_order, m->K * sizeof(*o));
	if (!o)
		return -ENOMEM;
	memcpy(o, p->order, p->n * sizeof(*o));
	m->pf_order = o;
	m->pf_n = p->n;
	m->pf_start = p->start;
	m->pf_cap = p->cap;
	return 0;
}

/* ext first (each once), then the rest in the instance's own first epoch */
int model_set_order(struct model *m, int i, const uint32_t *ext, uint32_t n)
{
	uint8_t *taken;
	uint32_t k = 0;

	if (i < 0 || i >= m->n)
		return -EINVAL;
	free(m->given[i]);
	m->given[i] = NULL;
	if (!ext)
		return 0;
	for (uint32_t j = 0; j < n; j++)
		if (ext[j] >= m->K)
			return -EINVAL;
	taken = calloc(m->K, 1);
	m->given[i] = malloc(m->K * sizeof(uint32_t));
	if (!taken || !m->given[i]) {
		free(taken);
		free(m->given[i]);
		m->given[i] = NULL;
		return -ENOMEM;
	}
	for (uint32_t j = 0; j < n; j++)
		if (!taken[ext[j]]++)
			m->given[i][k++] = ext[j];
	sim_shuffle(m->st[i].perm, m->K, m->inst[i].order == MODEL_ORDER_SAME ? m->sys.same_seed :
		m->inst[i].seed, 0);
	m->st[i].perm_epoch = UINT32_MAX;	/* perm was only borrowed */
	m->st[i].memo_q = UINT64_MAX;
	for (uint32_t q = 0; q < m->K; q++) {
		uint32_t c = m->inst[i].order == MODEL_ORDER_SEQ ? q : m->st[i].perm[q];

		if (!taken[c]++)
			m->given[i][k++] = c;
	}
	free(taken);
	return 0;
}
