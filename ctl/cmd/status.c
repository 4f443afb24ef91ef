// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl status: is tandem.ko loaded, which node is the CXL node and why,
 * the knobs, the registry, the NUMA nodes and memory tiers as the kernel sees
 * them, and the dax/CXL device behind the CXL node.
 * tandemctl config set: change the knobs over netlink.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "module/nl.h"
#include "lib/numa.h"
#include "lib/out.h"
#include "lib/util.h"

struct stats {
	char version[32], reason[160];
	int32_t cxl_node;
	uint8_t steer;
	uint32_t prefetch_kbps, steer_kbps, nr_datasets, nr_files, max_datasets, max_files;
	uint64_t live_objects;
};

static int stats_parse(struct nlattr **tb, void *out)
{
	struct stats *s = out;

	if (!tb[TANDEM_A_VERSION] || !tb[TANDEM_A_CXL_NODE] || !tb[TANDEM_A_STEER])
		return -EBADMSG;
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

static void print_module(const struct stats *s)
{
	out_str("version", "tandem.ko: loaded, version %s\n", s->version);
	out_s64("cxl_node", "cxl node: %lld", s->cxl_node);
	out_str("cxl_node_reason", " (%s)\n", s->reason);
	out_bool("steer", "steering: %s\n", s->steer);
	out_u64("prefetch_kbps", "prefetch cap: %llu KiB/s", s->prefetch_kbps);
	out_u64("steer_kbps", ", steering cap: %llu KiB/s (0 = unlimited)\n", s->steer_kbps);
	out_u64("datasets", "datasets: %llu", s->nr_datasets);
	out_u64("max_datasets", " of %llu", s->max_datasets);
	out_u64("files", ", files: %llu", s->nr_files);
	out_u64("max_files", " (at most %llu per dataset)\n", s->max_files);
	out_u64("live_objects", NULL, s->live_objects);
}

static int cmd_status(int argc, char **argv)
{
	struct stats s = { 0 };
	struct tnl_req req = { .cmd = TANDEM_CMD_STATS_GET, .parse = stats_parse, .out = &s };
	bool loaded;
	int err = 0;

	(void)argv;
	if (argc > 1)
		return ctl_usage("status", NULL);
	loaded = tnl_open(true) == 0;
	out_obj_open(NULL);
	out_bool("loaded", NULL, loaded);
	if (loaded) {
		err = tnl_request(&req);
		if (!err)
			print_module(&s);
	} else {
		out_text("tandem.ko: not loaded (observability-only: the tracker works without it)\n");
	}
	numa_print_nodes(loaded && !err ? s.cxl_node : -2);
	numa_print_dax(loaded && !err ? s.cxl_node : -2);
	out_obj_close();
	return err;
}

/* tandemctl config set [cxl_node N|auto|none] [steer on|off] [prefetch_kbps N] */
struct config {
	bool has_node, has_steer, has_kbps, has_steer_kbps;
	int32_t node;
	uint8_t steer;
	uint32_t kbps, steer_kbps;
};

static int config_build(struct nl_msg *msg, const void *in)
{
	const struct config *c = in;

	if ((c->has_node && nla_put_s32(msg, TANDEM_A_CXL_NODE, c->node)) ||
	    (c->has_steer && nla_put_u8(msg, TANDEM_A_STEER, c->steer)) ||
	    (c->has_kbps && nla_put_u32(msg, TANDEM_A_PREFETCH_KBPS, c->kbps)) ||
	    (c->has_steer_kbps && nla_put_u32(msg, TANDEM_A_STEER_KBPS, c->steer_kbps)))
		return -EMSGSIZE;
	return 0;
}

static int config_parse_arg(struct config *c, const char *key, const char *val)
{
	int64_t v;

	if (!strcmp(key, "cxl_node")) {
		c->has_node = true;
		if (!strcmp(val, "auto"))
			c->node = -1;
		else if (!strcmp(val, "none"))
			c->node = -2;
		else if (parse_s64(val, -2, INT32_MAX, &v))
			return -EINVAL;
		else
			c->node = (int32_t)v;
		return 0;
	}
	if (!strcmp(key, "steer")) {
		c->has_steer = true;
		if (!strcmp(val, "on") || !strcmp(val, "1"))
			c->steer = 1;
		else if (!strcmp(val, "off") || !strcmp(val, "0"))
			c->steer = 0;
		else
			return -EINVAL;
		return 0;
	}
	if (!strcmp(key, "prefetch_kbps")) {
		c->has_kbps = true;
		return parse_u32(val, &c->kbps);
	}
	if (!strcmp(key, "steer_kbps")) {
		c->has_steer_kbps = true;
		return parse_u32(val, &c->steer_kbps);
	}
	return -ENOENT;
}

static int cmd_config_set(int argc, char **argv)
{
	struct config c = { 0 };
	struct tnl_req req = { .cmd = TANDEM_CMD_CONFIG_SET, .build = config_build, .in = &c };
	int i, err;

	if (argc < 3 || argc % 2 == 0)
		return ctl_usage("config", "set");
	for (i = 1; i < argc; i += 2) {
		err = config_parse_arg(&c, argv[i], argv[i + 1]);
		if (err == -ENOENT) {
			ctl_err("unknown knob '%s' (cxl_node, steer, prefetch_kbps, steer_kbps)", argv[i]);
			return -EINVAL;
		}
		if (err) {
			ctl_err("invalid value '%s' for %s", argv[i + 1], argv[i]);
			return -EINVAL;
		}
	}
	return tnl_request(&req);
}

TANDEM_CMD(status, "status", NULL, cmd_status, "",
	   "module loaded?, CXL node and why, knobs, registry, NUMA nodes");
TANDEM_CMD(config_set, "config", "set", cmd_config_set,
	   "[cxl_node N|auto|none] [steer on|off] [prefetch_kbps N] [steer_kbps N]",
	   "change the module's knobs (needs CAP_SYS_ADMIN)");
