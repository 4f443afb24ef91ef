// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl status: is tandem.ko loaded, which node is the CXL node and why,
 * the knobs, the registry, the NUMA nodes and memory tiers as the kernel sees
 * them, and the dax/CXL device behind the CXL node.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "lib/log.h"
#include "lib/numa.h"
#include "lib/out.h"
#include "lib/units.h"
#include "lib/util.h"
#include "module/module.h"

static void print_module(const struct tmod_stats *s)
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
	struct tmod_stats s = { 0 };
	struct tnl *nl = NULL;
	bool loaded;
	int err;

	err = ctl_args(&argc, argv, 0, 0, "status", NULL);
	if (err)
		return err;
	loaded = tnl_open(&nl, true) == 0;
	out_obj_open(NULL);
	out_bool("loaded", NULL, loaded);
	if (loaded) {
		err = tmod_stats_get(nl, &s);
		if (!err)
			print_module(&s);
		tnl_close(nl);
	} else {
		out_text("tandem.ko: not loaded (observability-only: the tracker works without it)\n");
	}
	numa_print_nodes(loaded && !err ? s.cxl_node : -2);
	numa_print_dax(loaded && !err ? s.cxl_node : -2);
	out_obj_close();
	return err;
}

TANDEM_CMD(status, "status", NULL, cmd_status, "",
	   "module loaded?, CXL node and why, knobs, registry, NUMA nodes");
