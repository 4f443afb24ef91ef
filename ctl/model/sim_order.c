// SPDX-License-Identifier: GPL-2.0
/*
 * The instances' read orders in a simulation (makespan.c): an epoch's
 * shuffle, and the extent an instance reads at a position (a given first
 * epoch, the dataset's order, or its epoch's shuffle).
 */
#include "model/model.h"
#include "model/sim.h"

/* The order of an epoch: a Fisher-Yates shuffle seeded by seed and epoch. */
void sim_shuffle(uint32_t *p, uint32_t k, uint64_t seed, uint32_t epoch)
{
	uint64_t x = seed * 0x100000001b3ULL ^ ((uint64_t)epoch << 32 | 0x5eed);

	for (uint32_t i = 0; i < k; i++)
		p[i] = i;
	for (uint32_t i = k; i > 1; i--) {
		uint32_t j = splitmix64(&x) % i;
		uint32_t t = p[i - 1];

		p[i - 1] = p[j];
		p[j] = t;
	}
}

/* The extent instance i reads at position q, kept as its memo (memo_q, memo_c). */
uint32_t sim_extent_lookup(struct model *m, int i, uint64_t q)
{
	struct inst_state *st = &m->st[i];
	const struct model_inst *in = &m->inst[i];
	uint32_t epoch = q / m->K;

	st->memo_q = q;
	if (!epoch && m->given[i])
		return st->memo_c = m->given[i][q];
	if (in->order == MODEL_ORDER_SEQ)
		return st->memo_c = q % m->K;
	if (st->perm_epoch != epoch) {
		sim_shuffle(st->perm, m->K, in->order == MODEL_ORDER_SAME ?
			m->sys.same_seed : in->seed, epoch);
		st->perm_epoch = epoch;
	}
	return st->memo_c = st->perm[q % m->K];
}
