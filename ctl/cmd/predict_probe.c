// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl predict probe [--rerun]: this host's device probe
 * (Documentation/predictor.md, "Device probe"), from its cache or measured
 * now; and the probe part of a prediction's output.
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

void print_probe_mapping(const struct tp_model *m, const struct tp_probe *host, bool cached,
			 const struct tp_prediction *pr, const char *why_not)
{
	const struct tp_probe *train = tp_model_probe(m);

	out_obj_open("probe");
	out_bool("mapped", NULL, pr->probe_mapped);
	if (!pr->probe_mapped) {
		out_str("reason", "probe: not mapped (%s)\n",
			why_not ? why_not : "the graph has no cost the baseline prices");
		out_obj_close();
		return;
	}
	out_double("ratio", "probe: compute mapped to this host x%.3f", pr->probe_ratio);
	out_obj_open("ratios");
	for (int k = 0; k < TP_PROBE_KINDS; k++) {
		char fmt[32];

		snprintf(fmt, sizeof(fmt), "%s%s %%.3f", k ? ", " : " (", tp_probe_kind_name(k));
		out_double(tp_probe_kind_name(k), fmt, pr->kind_ratio[k]);
	}
	out_obj_close();
	out_text(")\n  from the training host's probe: ");
	print_probe("trained", train, NULL);
	out_text("\n  to this host's (%s): ", cached ? "cached" : "measured now");
	out_bool("host_cached", NULL, cached);
	print_probe("host", host, NULL);
	out_text("\n");
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
