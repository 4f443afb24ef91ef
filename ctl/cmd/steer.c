// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl steer DATASET [--node N] [--no-wait] [--timeout S]
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "lib/log.h"
#include "lib/out.h"
#include "lib/units.h"
#include "lib/util.h"
#include "module/module.h"

/* Poll until the dataset's steering queue is empty; seconds taken in *secs. */
static int steer_wait(struct tnl *nl, uint32_t id, double timeout, struct dataset_state *st,
		      double *secs)
{
	double t0 = now_s();
	int err;

	for (;;) {
		err = dataset_state_get(nl, id, st);
		if (err)
			return err;
		*secs = now_s() - t0;
		if (!st->steer_pending)
			return 0;
		if (*secs > timeout) {
			ctl_err("steering still has %u files queued after %.0f s",
				st->steer_pending, timeout);
			return -ETIMEDOUT;
		}
		usleep(10000);
	}
}

struct steer_opts {
	bool has_node, wait;
	int32_t node;
	double timeout;
};

static int steer_parse(int argc, char **argv, struct steer_opts *o)
{
	static const struct option opts[] = {
		{ "node", required_argument, NULL, 'n' },
		{ "no-wait", no_argument, NULL, 'W' },
		{ "timeout", required_argument, NULL, 't' },
		{ 0 }
	};
	int64_t v;
	int opt;

	*o = (struct steer_opts){ .wait = true, .timeout = 600 };
	optind = 0;	/* reinitialise getopt: main() parsed in "+" mode */
	while ((opt = ctl_getopt(argc, argv, "n:Wt:", opts, "steer", NULL)) != -1) {
		switch (opt) {
		case 'n':
			if (parse_s64(optarg, -1, 1023, &v))
				return ctl_usage_err("steer", NULL,
						     "--node: a node id, or -1 for cxl_node");
			o->node = (int32_t)v;
			o->has_node = true;
			break;
		case 'W':
			o->wait = false;
			break;
		case 't':
			if (units_parse_duration(optarg, &o->timeout) || o->timeout <= 0)
				return ctl_usage_err("steer", NULL, "--timeout: a duration");
			break;
		default:
			return opt;	/* CTL_EUSAGE, printed */
		}
	}
	if (optind != argc - 1)
		return ctl_usage_err("steer", NULL, optind < argc ? "one DATASET" : "missing DATASET");
	return 0;
}

static void steer_print(const struct dataset_state *before, const struct dataset_state *after,
			double secs)
{
	uint64_t pages = after->cnt[TANDEM_CNT_STEERED] - before->cnt[TANDEM_CNT_STEERED];
	double bps = pages * (double)sysconf(_SC_PAGESIZE) / (secs > 0 ? secs : 1e-9);
	unsigned long long failed;
	char b[32];

	out_obj_open(NULL);
	out_u64("pages_steered", "steered %llu pages", pages);
	out_double("seconds", " in %.3f s", secs);
	out_double("rate_bps", NULL, bps);
	out_text(" (%s)\n", units_fmt_rate(bps, b, sizeof(b)));
	failed = after->cnt[TANDEM_CNT_MIGRATE_FAILED] - before->cnt[TANDEM_CNT_MIGRATE_FAILED] +
		 after->cnt[TANDEM_CNT_SKIP_TARGET_FULL] - before->cnt[TANDEM_CNT_SKIP_TARGET_FULL];
	out_u64("pages_failed", failed ?
		"%llu pages left where they are: the target node is full\n" : NULL, failed);
	dataset_state_print("dataset", after);
	out_obj_close();
}

static int cmd_steer(int argc, char **argv)
{
	struct dataset_state before, after;
	struct steer_opts o;
	double secs = 0;
	struct tnl *nl;
	uint32_t id;
	int err;

	err = steer_parse(argc, argv, &o);
	err = err ?: dataset_open(&nl, argv[optind], &id);
	if (err)
		return err;
	err = dataset_state_get(nl, id, &before);
	err = err ?: dataset_steer(nl, id, o.has_node, o.node);
	if (!err && o.wait)
		err = steer_wait(nl, id, o.timeout, &after, &secs);
	tnl_close(nl);
	if (err)
		return err;
	if (o.wait) {
		steer_print(&before, &after, secs);
		return 0;
	}
	out_obj_open(NULL);
	out_u64("id", "dataset %llu: steering queued\n", id);
	out_obj_close();
	return 0;
}

TANDEM_CMD(steer, "steer", NULL, cmd_steer, "DATASET [--node N] [--no-wait] [--timeout DUR]",
	   "migrate the dataset's cached pages to the CXL node (or N) and wait; prints the rate");
