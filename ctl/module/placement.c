// SPDX-License-Identifier: GPL-2.0
/* Steering and prefetching a dataset's pages (module.h). */
#include <errno.h>
#include <string.h>

#include "module/nl.h"

struct steer_req {
	uint32_t id;
	int32_t node;
	bool has_node;
};

static int steer_build(struct nl_msg *msg, const void *in)
{
	const struct steer_req *r = in;

	if (nla_put_u32(msg, TANDEM_A_DATASET_ID, r->id) ||
	    (r->has_node && nla_put_s32(msg, TANDEM_A_DATASET_NODE, r->node)))
		return -EMSGSIZE;
	return 0;
}

int dataset_steer(struct tnl *nl, uint32_t id, bool has_node, int32_t node)
{
	struct steer_req r = { .id = id, .node = node, .has_node = has_node };
	struct tnl_req req = { .cmd = TANDEM_CMD_STEER, .build = steer_build, .in = &r };

	return tnl_request(nl, &req);
}

static int prefetch_build(struct nl_msg *msg, const void *in)
{
	const struct dataset_prefetch *p = in;

	if (nla_put_u32(msg, TANDEM_A_DATASET_ID, p->id) ||
	    (p->has_kbps && nla_put_u32(msg, TANDEM_A_PREFETCH_KBPS, p->kbps)))
		return -EMSGSIZE;
	for (size_t i = 0; p->files && i < p->files->n; i++)
		if (nla_put_string(msg, TANDEM_A_FILE_PATH, p->files->paths[i]))
			return -EMSGSIZE;
	return 0;
}

int dataset_prefetch(struct tnl *nl, const struct dataset_prefetch *p)
{
	struct tnl_req req = {
		.cmd = TANDEM_CMD_PREFETCH, .size = 256 * 1024, .build = prefetch_build, .in = p,
	};

	return tnl_request(nl, &req);
}

int dataset_prefetch_cancel(struct tnl *nl, uint32_t id)
{
	struct tnl_req req = {
		.cmd = TANDEM_CMD_PREFETCH_CANCEL, .build = tnl_put_id, .in = &id,
	};

	return tnl_request(nl, &req);
}
