// SPDX-License-Identifier: GPL-2.0
/* The makespan model's names: access orders, eviction policies, and B(k). */
#include <errno.h>
#include <string.h>

#include "model/model.h"

double model_bw(const struct model_sys *sys, int k)
{
	if (k <= 0 || sys->nbw <= 0)
		return 0;
	return sys->bw[(k < sys->nbw ? k : sys->nbw) - 1];
}

static const char *const order_names[] = {
	[MODEL_ORDER_INDEP] = "indep",
	[MODEL_ORDER_SAME] = "same",
	[MODEL_ORDER_SEQ] = "seq",
};

const char *model_order_name(enum model_order o)
{
	return o <= MODEL_ORDER_SEQ ? order_names[o] : "?";
}

int model_order_parse(const char *s, enum model_order *o)
{
	for (int i = 0; i <= MODEL_ORDER_SEQ; i++) {
		if (!strcmp(s, order_names[i])) {
			*o = i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *model_evict_name(enum model_evict e)
{
	return e == MODEL_EVICT_LRU ? "lru" : e == MODEL_EVICT_2Q ? "2q" : "random";
}

int model_evict_parse(const char *s, enum model_evict *e)
{
	if (!strcmp(s, "lru"))
		*e = MODEL_EVICT_LRU;
	else if (!strcmp(s, "random"))
		*e = MODEL_EVICT_RANDOM;
	else if (!strcmp(s, "2q"))
		*e = MODEL_EVICT_2Q;
	else
		return -EINVAL;
	return 0;
}

