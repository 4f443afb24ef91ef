// SPDX-License-Identifier: GPL-2.0
/*
 * The simulation's page cache (makespan.c): which extents are resident,
 * and which leaves when a load needs room: a random one (the default), the
 * least recently used, or the kernel's two lists (MODEL_EVICT_2Q).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/sim.h"

static void list_unlink(struct model *m, uint32_t *head, uint32_t *tail, uint32_t c)
{
	if (m->prev[c] != NONE)
		m->next[m->prev[c]] = m->next[c];
	else
		*head = m->next[c];
	if (m->next[c] != NONE)
		m->prev[m->next[c]] = m->prev[c];
	else
		*tail = m->prev[c];
}

static void list_push(struct model *m, uint32_t *head, uint32_t *tail, uint32_t c)
{
	m->prev[c] = NONE;
	m->next[c] = *head;
	if (*head != NONE)
		m->prev[*head] = c;
	else
		*tail = c;
	*head = c;
}

/* 2Q: a second access while inactive activates (folio_mark_accessed()) */
static void touch_2q(struct model *m, uint32_t c)
{
	if (m->resident[c] == RES_INACTIVE) {
		m->resident[c] = RES_REFERENCED;
	} else if (m->resident[c] == RES_REFERENCED) {
		list_unlink(m, &m->head, &m->tail, c);
		list_push(m, &m->ahead, &m->atail, c);
		m->resident[c] = RES_ACTIVE;
		m->nact++;
	}
}

void sim_cache_touch(struct model *m, uint32_t c)
{
	if (m->sys.evict == MODEL_EVICT_2Q) {
		touch_2q(m, c);
	} else if (m->sys.evict == MODEL_EVICT_LRU && m->head != c) {
		list_unlink(m, &m->head, &m->tail, c);
		list_push(m, &m->head, &m->tail, c);
	}
}

/* 2Q: deactivate while the active list is the longer, then the inactive tail */
static uint32_t evict_2q(struct model *m)
{
	uint32_t c;

	while (m->nact > m->nres - m->nact || m->head == NONE) {
		c = m->atail;
		list_unlink(m, &m->ahead, &m->atail, c);
		list_push(m, &m->head, &m->tail, c);
		m->resident[c] = RES_INACTIVE;
		m->nact--;
	}
	c = m->tail;
	list_unlink(m, &m->head, &m->tail, c);
	return c;
}

void sim_cache_evict_one(struct model *m)
{
	uint32_t c;

	if (m->sys.evict == MODEL_EVICT_2Q) {
		c = evict_2q(m);
	} else if (m->sys.evict == MODEL_EVICT_LRU) {
		c = m->tail;
		list_unlink(m, &m->head, &m->tail, c);
	} else {
		uint32_t slot = splitmix64(&m->rng) % m->nres;

		c = m->rlist[slot];
		m->rlist[slot] = m->rlist[m->nres - 1];
		m->rslot[m->rlist[slot]] = slot;
	}
	m->resident[c] = RES_NONE;
	m->nres--;
}

void sim_cache_insert(struct model *m, uint32_t c)
{
	if (!m->cap || m->resident[c])
		return;
	if (m->nres >= m->cap)
		sim_cache_evict_one(m);
	/* 2Q: the read that loaded it was its first access */
	m->resident[c] = m->sys.evict == MODEL_EVICT_2Q ? RES_REFERENCED : RES_INACTIVE;
	if (m->sys.evict == MODEL_EVICT_RANDOM) {
		m->rslot[c] = m->nres;
		m->rlist[m->nres] = c;
	} else {
		list_push(m, &m->head, &m->tail, c);
	}
	m->nres++;
}

void sim_cache_reset(struct model *m)
{
	memset(m->resident, 0, m->K);
	m->head = m->tail = m->ahead = m->atail = NONE;
	m->nres = m->nact = 0;
	m->rng = 0x7a4de3;
	if (m->sys.warm)
		for (uint32_t c = 0; c < m->K && c < m->cap; c++)
			sim_cache_insert(m, c);
}
