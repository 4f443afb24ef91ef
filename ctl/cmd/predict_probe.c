// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl predict probe [--rerun]: this host's device probe
 * (Documentation/predictor.md, "Device probe"), from its cache or measured
 * now.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cmd.h"
#include "cmd/predict_probe.h"
#include "lib/log.h"
#include "lib/out.h"

static void date_of(int64_t when, char *buf, size_t len)
{
	time_t t = (time_t)when;
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "?");
}

void print_probe(const char *key, const struct tp_probe *p, const char *indent)
{
	char date[32], fmt[64];

	date_of(p->when, date, sizeof(date));
	out_obj_open(key);
	out_str("cpu", "%s", p->cpu);
	out_u64("ncpu", " (%llu CPUs", (uint64_t)p->ncpu);
	out_str("date", ", probed %s", date);
	out_s64("when", NULL, p->when);
	out_u64("version", indent ? ", probe version %llu" : NULL, (uint64_t)p->version);
	out_double("seconds", indent ? ", %.1f s)\n" : ")", p->seconds);
	out_obj_open("rates");
	for (int k = 0; k < TP_PROBE_KINDS; k++) {
		snprintf(fmt, sizeof(fmt), "%s%-7s %%10.4g %s", indent ? indent : "",
			 tp_probe_kind_name(k), tp_probe_kind_unit(k));
		out_double(tp_probe_kind_name(k), indent ? fmt : NULL, p->rate[k]);
		if (indent)
			out_text(" (median of the repetitions %+.1f %%)\n", 100 * p->spread[k]);
	}
	out_obj_close();
	out_obj_open("spread");
	for (int k = 0; k < TP_PROBE_KINDS; k++)
		out_double(tp_probe_kind_name(k), NULL, p->spread[k]);
	out_obj_close();
	out_obj_close();
}

static int cmd_predict_probe(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rerun", no_argument, NULL, 'r' },
		{ 0 },
	};
	struct tp_probe p;
	char path[4096] = "";
	bool rerun = false, cached = false;
	int opt, err;

	optind = 0;
	while ((opt = ctl_getopt(argc, argv, "", opts, "predict", "probe")) != -1) {
		if (opt == CTL_EUSAGE)
			return opt;
		rerun = true;
	}
	if (optind != argc)
		return ctl_usage_err("predict", "probe", "no argument expected");
	err = tp_probe_host(rerun, &p, &cached);
	if (err) {
		ctl_err("device probe: %s", tp_errmsg());
		return err;
	}
	if (tp_probe_cache_path(path, sizeof(path)))
		snprintf(path, sizeof(path), "-");
	out_obj_open(NULL);
	out_bool("cached", cached ? "device probe (cached, " : "device probe (measured now, ",
		 cached);
	out_str("cache", "%s): ", path);
	print_probe("probe", &p, "  ");
	out_obj_close();
	return 0;
}

TANDEM_CMD(predict_probe, "predict", "probe", cmd_predict_probe, "[--rerun]",
	   "this host's device probe (cached per host; --rerun measures again)")
