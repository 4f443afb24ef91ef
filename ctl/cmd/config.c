// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl config set [cxl_node N|auto|none] [steer on|off] [prefetch_kbps N]
 * [steer_kbps N]: change tandem.ko's knobs over netlink.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd.h"
#include "lib/log.h"
#include "lib/out.h"
#include "lib/units.h"
#include "lib/util.h"
#include "module/module.h"

/*
 * A rate knob: a bare number is the knob's own unit (KiB/s, its name says
 * so; 0 = unlimited), a rate with a unit ("50M", "50MiB/s") is converted.
 */
static int knob_kbps(const char *val, uint32_t *kbps)
{
	size_t n = strlen(val);
	double bps, k;

	if (!parse_u32(val, kbps))
		return 0;
	if (!n || (val[n - 1] >= '0' && val[n - 1] <= '9') || units_parse_rate(val, &bps))
		return -EINVAL;
	k = round(bps / 1024);
	if ((k < 1 && bps > 0) || k > UINT32_MAX)
		return -ERANGE;
	*kbps = (uint32_t)k;
	return 0;
}

static int config_parse_arg(struct tmod_config *c, const char *key, const char *val)
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
		return knob_kbps(val, &c->kbps);
	}
	if (!strcmp(key, "steer_kbps")) {
		c->has_steer_kbps = true;
		return knob_kbps(val, &c->steer_kbps);
	}
	return -ENOENT;
}

/* what was set, as the knobs now are */
static void print_config(const struct tmod_config *c)
{
	out_obj_open(NULL);
	out_text("set");
	if (c->has_node)
		out_s64("cxl_node", " cxl_node %lld", c->node);
	if (c->has_steer)
		out_bool("steer", " steer %s", c->steer);
	if (c->has_kbps)
		out_u64("prefetch_kbps", " prefetch_kbps %llu", c->kbps);
	if (c->has_steer_kbps)
		out_u64("steer_kbps", " steer_kbps %llu", c->steer_kbps);
	out_text("\n");
	out_obj_close();
}

static int cmd_config_set(int argc, char **argv)
{
	struct tmod_config c = { 0 };
	struct tnl *nl;
	int i, err;

	err = ctl_args(&argc, argv, 2, -1, "config", "set");
	if (err)
		return err;
	if (argc % 2 == 0)
		return ctl_usage_err("config", "set", "knob '%s' needs a value", argv[argc - 1]);
	for (i = 1; i < argc; i += 2) {
		err = config_parse_arg(&c, argv[i], argv[i + 1]);
		if (err == -ENOENT)
			return ctl_usage_err("config", "set", "unknown knob '%s' (cxl_node, steer, "
					     "prefetch_kbps, steer_kbps)", argv[i]);
		if (err)
			return ctl_usage_err("config", "set", "invalid value '%s' for %s",
					     argv[i + 1], argv[i]);
	}
	err = tnl_open(&nl, false);
	if (err)
		return err;
	err = tmod_config_set(nl, &c);
	tnl_close(nl);
	if (err)
		return err;
	print_config(&c);
	return 0;
}

TANDEM_CMD(config_set, "config", "set", cmd_config_set,
	   "[cxl_node N|auto|none] [steer on|off] [prefetch_kbps KIB_S|RATE] [steer_kbps KIB_S|RATE]",
	   "change the module's knobs (needs CAP_SYS_ADMIN); *_kbps: KiB/s, or a rate such as 50M");
