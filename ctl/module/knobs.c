// SPDX-License-Identifier: GPL-2.0
/* tandem.ko's status and knobs over netlink (module.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "module/nl.h"

static int stats_parse(struct nlattr **tb, void *out)
{
	struct tmod_stats *s = out;

	if (!tb[TANDEM_A_VERSION] || !tb[TANDEM_A_CXL_NODE] || !tb[TANDEM_A_STEER])
		return -EBADMSG;
	memset(s, 0, sizeof(*s));
	snprintf(s->version, sizeof(s->version), "%s", nla_get_string(tb[TANDEM_A_VERSION]));
	if (tb[TANDEM_A_CXL_NODE_REASON])
		snprintf(s->reason, sizeof(s->reason), "%s",
			 nla_get_string(tb[TANDEM_A_CXL_NODE_REASON]));
	s->cxl_node = (int32_t)nla_get_u32(tb[TANDEM_A_CXL_NODE]);
	s->steer = nla_get_u8(tb[TANDEM_A_STEER]);
#define GET32(f, a) s->f = tb[a] ? nla_get_u32(tb[a]) : 0
	GET32(prefetch_kbps, TANDEM_A_PREFETCH_KBPS);
	GET32(steer_kbps, TANDEM_A_STEER_KBPS);
	GET32(nr_datasets, TANDEM_A_NR_DATASETS);
	GET32(nr_files, TANDEM_A_NR_FILES);
	GET32(max_datasets, TANDEM_A_MAX_DATASETS);
	GET32(max_files, TANDEM_A_MAX_FILES);
#undef GET32
	s->live_objects = tb[TANDEM_A_LIVE_OBJECTS] ? nla_get_u64(tb[TANDEM_A_LIVE_OBJECTS]) : 0;
	return 0;
}

int tmod_stats_get(struct tnl *nl, struct tmod_stats *s)
{
	struct tnl_req req = { .cmd = TANDEM_CMD_STATS_GET, .parse = stats_parse, .out = s };

	return tnl_request(nl, &req);
}

bool tmod_steers(const struct tmod_stats *s)
{
	return s->steer == 1 && s->cxl_node >= 0;
}

static int config_build(struct nl_msg *msg, const void *in)
{
	const struct tmod_config *c = in;

	if ((c->has_node && nla_put_s32(msg, TANDEM_A_CXL_NODE, c->node)) ||
	    (c->has_steer && nla_put_u8(msg, TANDEM_A_STEER, c->steer)) ||
	    (c->has_kbps && nla_put_u32(msg, TANDEM_A_PREFETCH_KBPS, c->kbps)) ||
	    (c->has_steer_kbps && nla_put_u32(msg, TANDEM_A_STEER_KBPS, c->steer_kbps)))
		return -EMSGSIZE;
	return 0;
}

int tmod_config_set(struct tnl *nl, const struct tmod_config *c)
{
	struct tnl_req req = { .cmd = TANDEM_CMD_CONFIG_SET, .build = config_build, .in = c };

	return tnl_request(nl, &req);
}
