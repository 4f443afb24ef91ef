// SPDX-License-Identifier: GPL-2.0
/*
 * What a calibration measured, through the one print path (lib/out: text,
 * or JSON with -j): the profile's storage, memory and instances, the CPU
 * contention and what each part took (cal_print()).
 */
#include <stdio.h>
#include <string.h>

#include "calibrate/calibrate.h"
#include "lib/out.h"
#include "lib/units.h"

/* graph=: what the predictor said */
static void cal_print_pred(const struct profile_inst *pi)
{
	const struct model_inst *in = &pi->m;
	char b[32];

	if (strcmp(pi->rate_source, PROFILE_SRC_PRED)) {
		out_null("predictor", NULL);
		return;
	}
	out_obj_open("predictor");
	out_str("graph", " [%s", in->graph);
	out_double("batch", " at batch %.0f", in->batch);
	out_double("iteration_s", ": %.3f s per iteration", pi->pred.iteration_s);
	out_double("sample_bytes", NULL, in->sample_bytes);
	out_text(" of %s", units_fmt_size(pi->pred.bytes_per_iter, b, sizeof(b)));
	out_double("bytes_per_iteration", NULL, pi->pred.bytes_per_iter);
	out_str("model", ", model %s", pi->pred.model);
	out_str("trained_on", " (%s)", pi->pred.trained_on);
	out_double("probe_ratio", pi->pred.probe_ratio > 0 ? ", probe x%.3f" : NULL,
		   pi->pred.probe_ratio);
	out_str("probe", " (%s)", pi->pred.probe);
	out_arr_open("warnings");
	for (int k = 0; k < pi->pred.nwarn; k++)
		out_str(NULL, NULL, pi->pred.warn[k]);
	out_arr_close();
	out_text("%s]", pi->pred.nwarn ? ", with warnings" : "");
	out_obj_close();
}

/* a warm run: what it measured the terms from */
static void cal_print_warm(const struct profile_inst *pi)
{
	char b[32];

	if (!pi->warm.method[0]) {
		out_null("warm_run", NULL);
		return;
	}
	out_obj_open("warm_run");
	out_u64("runs", NULL, pi->warm.runs);
	if (pi->warm.runs > 1) {
		out_text("; %u warm runs, medians (rate %s", pi->warm.runs,
			 units_fmt_rate(pi->warm.rate_min, b, sizeof(b)));
		out_text("-%s)", units_fmt_rate(pi->warm.rate_max, b, sizeof(b)));
	}
	out_double("rate_min_bps", NULL, pi->warm.rate_min);
	out_double("rate_max_bps", NULL, pi->warm.rate_max);
	out_double("seconds", pi->warm.runs > 1 ? ", %.1f s" : "; warm run %.1f s",
		   pi->warm.seconds);
	out_double("window_s", pi->warm.epoch2_seen ? " (rate over epoch 2: %.1f s" :
		   " (rate over epoch 1's steady part: %.1f s", pi->warm.window_s);
	out_double("bytes", NULL, pi->warm.bytes);
	out_text(", %.1f MiB)", pi->warm.bytes / 1048576);
	out_double("cpu_s", NULL, pi->warm.cpu_s);
	out_bool("epoch_seen", NULL, pi->warm.epoch_seen);
	out_bool("exit_measured", NULL, pi->warm.exit_measured);
	out_str("exit_from", NULL, pi->warm.exit_from[0] ? pi->warm.exit_from : NULL);
	out_bool("epoch2_seen", NULL, pi->warm.epoch2_seen);
	out_str("method", NULL, pi->warm.method);
	out_obj_close();
}

/* one instance: what it was given or what its warm run measured */
static void cal_print_inst(const struct profile_inst *pi)
{
	const struct model_inst *in = &pi->m;
	char b[32];

	out_obj_open(NULL);
	out_str("name", "instance %s: ", in->name);
	out_double("rate_bps", NULL, in->rate);
	out_text("%s", units_fmt_rate(in->rate, b, sizeof(b)));
	out_str("rate_source", " (%s", pi->rate_source);
	out_text("%s%s)", pi->warm.method[0] ? ", " : "", pi->warm.method);
	cal_print_pred(pi);
	out_double("cpu_s_per_byte", NULL, in->cpu_per_byte);
	out_text(", CPU %.3f s/MiB (%.2f cores)", in->cpu_per_byte * 1048576,
		 in->cpu_per_byte * in->rate);
	out_double("cpu_task_s_per_byte", NULL, in->cpu_task_per_byte);
	if (in->cpu_task_per_byte > 0)
		out_text(" (busiest process %.2f cores)", in->cpu_task_per_byte * in->rate);
	out_double("startup_s", ", start-up %.2f s", in->startup);
	if (pi->warm.method[0])
		out_text(" (first read %.2f s)", pi->warm.first_read_s);
	out_double("startup_cpu_s", " (%.2f CPU-s)", in->startup_cpu);
	out_double("epoch_gap_s", ", epoch gap %.2f s", in->epoch_gap);
	out_text("%s", pi->warm.method[0] && !pi->warm.epoch_seen ? " (no boundary seen)" : "");
	out_double("streams", ", %.0f read streams", in->streams > 0 ? in->streams : 1);
	out_double("exit_s", ", exit %.2f s", in->exit);
	out_text("%s", !pi->warm.method[0] ? "" : !pi->warm.exit_measured ?
		 " (not measured: it read all its epochs, or outlived SIGINT)" :
		 !strcmp(pi->warm.exit_from, "end") ? " (its last epoch's reads to its end)" :
		 " (SIGINT to its end)");
	out_double("window_bytes", NULL, in->window);
	out_text(", read-ahead %s%s", units_fmt_size(in->window, b, sizeof(b)),
		 pi->warm.method[0] && pi->warm.window_measured ? " (measured)" : "");
	cal_print_warm(pi);
	out_text("\n");
	out_obj_close();
}

static void cal_print_time(const struct profile *p, const struct cal_times *t)
{
	out_double("calibration_seconds", "calibration took %.1f s", p->calib_seconds);
	out_double("storage_seconds", ": storage and memory %.1f s", p->storage_seconds);
	out_double("warmup_seconds", NULL, p->warmup_seconds);
	if (p->warmup_seconds > 0)
		out_text(", reading the dataset into the cache %.1f s", p->warmup_seconds);
	out_arr_open("warm_run_seconds");
	for (int i = 0; i < p->ninst; i++) {
		if (!p->inst[i].warm.method[0])
			continue;
		out_double(NULL, NULL, t->warm_seconds[i]);
		out_text(", warm run %s %.1f s", p->inst[i].m.name, t->warm_seconds[i]);
	}
	out_arr_close();
	out_double("together_seconds", NULL, t->together_seconds);
	if (t->together_seconds > 0)
		out_text(", together %.1f s", t->together_seconds);
	out_text("\n");
}

/* host.cpu_contention and how it was measured */
static void cal_print_contention(const struct profile *p)
{
	const struct profile_contention *pc = &p->contention;

	out_double("cpu_contention", "CPU contention %.3f per co-runner", p->cpu_contention);
	if (!pc->runs) {
		out_null("contention", NULL);
		out_text(" (not measured)\n");
		return;
	}
	out_obj_open("contention");
	out_double("measured", " (measured %.3f", pc->measured);
	out_double("min", ", runs %.3f", pc->c_min);
	out_double("max", "-%.3f", pc->c_max);
	out_u64("runs", ", %llu runs", pc->runs);
	out_s64("instances", " of %lld instances together", pc->n);
	out_double("window_s", ", %.1f s all reading", pc->span_s);
	out_arr_open("cpu_ratio");
	for (int k = 0; k < pc->n; k++) {
		out_double(NULL, NULL, pc->ratio[k]);
		out_text("%s%s x%.2f", k ? ", " : "; CPU per byte against alone: ",
			 p->inst[pc->inst[k]].m.name, pc->ratio[k]);
	}
	out_arr_close();
	out_text(")\n");
	out_obj_close();
}

void cal_print(const struct profile *p, const struct cal_times *t, const char *output)
{
	char b[32];

	out_obj_open(NULL);
	out_str("profile", "profile %s\n", output);
	out_double("dataset_bytes", NULL, p->dataset_bytes);
	out_text("dataset %s, %s", p->dataset_path, units_fmt_size(p->dataset_bytes, b, sizeof(b)));
	out_u64("files", " in %llu files", p->files);
	out_text("\n");
	out_arr_open("bandwidth_bps");
	for (int k = 0; k < p->nbw; k++) {
		out_double(NULL, NULL, p->bw[k]);
		out_text("B(%d) = %s%s", k + 1, units_fmt_rate(p->bw[k], b, sizeof(b)),
			 k + 1 < p->nbw ? ", " : "");
	}
	out_arr_close();
	out_double("eta", p->nbw > 1 ? " (eta %.2f)" : NULL, p->nbw > 1 ? p->bw[1] / p->bw[0] : 1);
	out_str("cold_method", ", cold reads by %s\n", p->cold_method);
	out_s64("cxl_node", "CXL node %lld", p->cxl_node);
	out_double("cache_dram_bytes", NULL, p->cache_dram);
	out_text(", page cache can use %s of DRAM", units_fmt_size(p->cache_dram, b, sizeof(b)));
	out_double("cache_cxl_bytes", NULL, p->cache_cxl);
	out_text(" + %s on the CXL node", units_fmt_size(p->cache_cxl, b, sizeof(b)));
	out_double("cpus", ", %.0f CPUs\n", p->ncpu);
	out_arr_open("instances");
	for (int i = 0; i < p->ninst; i++)
		cal_print_inst(&p->inst[i]);
	out_arr_close();
	cal_print_contention(p);
	cal_print_time(p, t);
	out_obj_close();
}
