// SPDX-License-Identifier: GPL-2.0
/*
 * The run's report (release.h): one document on the text/JSON print path,
 * printed by `run` (text or -j) and saved as JSON by --report, so the two
 * are the same document. Fractions are fractions in JSON (gain, error);
 * text shows them as percentages.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "lib/files.h"
#include "lib/out.h"
#include "release/release.h"

static void inst_exit(const struct rel_inst *in, int *code, int *sig)
{
	*code = -1;
	*sig = 0;
	if (in->state != REL_EXITED)
		return;
	if (WIFEXITED(in->status))
		*code = WEXITSTATUS(in->status);
	else if (WIFSIGNALED(in->status))
		*sig = WTERMSIG(in->status);
}

static void print_registration(const struct rel_report *rep)
{
	const struct rel_module *m = rep->module;
	const struct rel_tracker *t = rep->tracker;

	const struct sample_set *ds = rep->run->ds.set;

	out_str("dataset", NULL, rep->run->ds.dir);
	out_str("dataset_name", "dataset %s", rep->run->ds.name);
	out_u64("dataset_files", " (%llu files", ds ? ds->files.n : 0);
	out_double("dataset_bytes", NULL, ds ? ds->files.bytes : 0);
	out_text(", %.1f MiB", ds ? ds->files.bytes / 1048576.0 : 0);
	if (ds)
		file_skips_print(&ds->files.skipped);
	out_text("):");
	if (m && m->registered) {
		out_obj_open("module");
		out_u64("dataset_id", " tandem.ko dataset %llu", m->id);
		out_bool("created", NULL, m->created);
		out_text(" (%s)", m->created ? "registered by this run" : "existing");
		out_u64("files_added", NULL, m->files_added);
		out_u64("files_present", NULL, m->files_present);
		out_u64("steered_pages", NULL, m->steered);
		out_u64("prefetched_pages", NULL, m->prefetched);
		out_bool("prefetch_started", NULL, m->prefetch_started);
		if (m->prefetch_source)
			out_str("prefetch_source", NULL, m->prefetch_source);
		else
			out_null("prefetch_source", NULL);
		if (m->prefetch_started)
			out_text(", prefetched in %s", m->prefetch_source &&
				 !strcmp(m->prefetch_source, "learned") ?
				 "the learned read order" : "--prefetch-order's order");
		out_obj_close();
	} else {
		out_null("module", " tandem.ko not used");
	}
	if (t && t->registered) {
		out_obj_open("tracker");
		out_u64("dataset_id", ", tracker dataset %llu", t->dataset);
		out_bool("loaded_by_run", NULL, t->loaded_here);
		out_text("%s", t->loaded_here ? " (tracker loaded by this run)" : "");
		out_u64("files_added", NULL, t->files_added);
		out_u64("files_present", NULL, t->files_present);
		out_u64("pages", NULL, t->pages);
		out_obj_close();
	} else {
		out_null("tracker", ", not tracked");
	}
	out_text("\n");
}

static void print_release(const struct rel_report *rep)
{
	const struct rel_plan *p = rep->plan;

	out_str("stagger", "release: %s", rel_stagger_name(p->stagger));
	if (p->stagger == TANDEM_STAGGER_AUTO)
		out_str("advice", " (%s)", p->mo.together ? "model: start together" :
			"model: stagger");
	else
		out_null("advice", NULL);
	if (p->stagger == TANDEM_STAGGER_PROGRESS)
		out_double("fraction", " at fraction %.3f", p->fraction);
	else
		out_null("fraction", NULL);
	out_text("\n");
}

/* auto: what the search found, whatever was chosen */
static void print_search(const struct rel_plan *p, int n)
{
	const struct mo_report *mo = &p->mo;

	if (p->stagger != TANDEM_STAGGER_AUTO || !mo->searched) {
		out_null("search", NULL);
		return;
	}
	out_obj_open("search");
	out_text("model: best release vector");
	out_arr_open("best_delta_s");
	for (int i = 0; i < n; i++)
		out_double(NULL, " %.2f", mo->best[i]);
	out_arr_close();
	out_double("best_makespan_s", " s: M %.2f s", mo->best_m);
	out_double("together_makespan_s", ", together %.2f s", mo->m0);
	out_double("gain", NULL, mo->gain);
	out_text(", gain %.1f%%", mo->gain * 100);
	out_bool("together", NULL, mo->together);
	out_text("\n");
	out_obj_close();
}

static const char *pf_plan_text(enum rel_pf_plan a)
{
	return a == REL_PF_NEED ? "merged by need" : a == REL_PF_POSITION ? "merged by position" :
	       "no prefetch";
}

/* One plan: the learned order's prefetch chosen with the release vector. */
static void print_plan(const struct rel_plan *p, int n)
{
	if (!p->pf_planned) {
		out_null("plan", NULL);
		return;
	}
	out_obj_open("plan");
	out_str("prefetch", "plan: %s", rel_pf_plan_name(p->pf));
	out_text(" (%s%s)", p->pf == REL_PF_NONE ? "" : "the learned order ", pf_plan_text(p->pf));
	out_bool("modelled", p->pf_modelled ? NULL : ", without a model: as before", p->pf_modelled);
	out_double("prefetch_cap_bps", NULL, p->pf_cap);
	out_arr_open("alternatives");
	for (int a = 0; a < REL_PF_PLANS; a++) {
		const struct rel_plan_alt *alt = &p->alt[a];

		if (!alt->have)
			continue;
		out_obj_open(NULL);
		out_str("prefetch", a ? ", %s" : "; predicted: %s", pf_plan_text(a));
		out_arr_open("delta_s");
		for (int i = 0; i < n; i++)
			out_double(NULL, NULL, alt->delta[i]);
		out_arr_close();
		out_double("predicted_makespan_s", " %.2f s", alt->makespan);
		out_double("predicted_prefetch_bytes", NULL, alt->pf.bytes);
		out_double("predicted_prefetch_end_s", NULL, alt->pf.end);
		out_obj_close();
	}
	out_arr_close();
	out_text("\n");
	out_obj_close();
}

static void print_model_input(const struct rel_plan *p, int n)
{
	if (!p->model) {
		out_null("model_input", NULL);
		return;
	}
	out_obj_open("model_input");
	out_double("cache_bytes", NULL, p->sys.cache);
	out_text("model input: cache %.0f MiB (%s), B(1) %.1f MiB/s", p->sys.cache / 1048576,
		 p->steer ? "steered to the CXL node" : "no steering", p->sys.bw[0] / 1048576);
	out_bool("steer", NULL, p->steer);
	out_arr_open("bw_bps");
	for (int k = 0; k < p->sys.nbw; k++)
		out_double(NULL, NULL, p->sys.bw[k]);
	out_arr_close();
	out_arr_open("rate_bps");
	for (int i = 0; i < n; i++) {
		out_double(NULL, NULL, p->inst[i].rate);
		out_text(", %s %.1f MiB/s", p->inst[i].name, p->inst[i].rate / 1048576);
	}
	out_arr_close();
	out_text("\n");
	out_obj_close();
}

/* Say so when the model expects steering to cost time. */
static void print_nosteer(const struct rel_plan *p)
{
	double m = p->res.makespan, alt = p->nosteer_m;

	out_double("predicted_without_steering_s", NULL, alt);
	if (!isnan(alt) && alt < m * (1 - p->min_gain))
		out_text("model: without steering M = %.2f s, %.0f%% less than %.2f s with it: the "
			 "dataset (%.0f MiB) does not fit the CXL node's %.0f MiB and would evict "
			 "itself there; consider `tandemctl config set steer off`\n",
			 alt, (m - alt) / m * 100, m, p->sys.dataset / 1048576,
			 p->sys.cache / 1048576);
}

static void print_prediction(const struct rel_plan *p, int i)
{
	const struct model_inst_result *res = &p->res.inst[i];

	out_str("rate_source", NULL, p->model ? p->rate_source[i] : NULL);
	if (p->have)
		out_double("predicted_end_s", " %9.3f", res->end);
	else
		out_null("predicted_end_s", "         -");
	/* the model's own view of the sharing, next to the tracker's */
	out_double("predicted_miss_bytes", NULL, p->have ? res->miss_bytes : NAN);
	out_double("predicted_join_bytes", NULL, p->have ? res->join_bytes : NAN);
	out_double("predicted_hit_bytes", NULL, p->have ? res->hit_bytes : NAN);
}

static void print_inst(const struct rel_report *rep, int i)
{
	const struct rel_run *r = rep->run;
	const struct rel_inst *in = &r->inst[i];
	int code, sig;

	inst_exit(in, &code, &sig);
	out_obj_open(NULL);
	out_str("name", "%-8s", in->name);
	out_arr_open("argv");
	for (char **a = in->argv; a && *a; a++)
		out_str(NULL, NULL, *a);
	out_arr_close();
	if (r->mode != TANDEM_STAGGER_PROGRESS) {
		out_double("requested_s", " %9.3f", in->delta);
	} else {
		out_null("requested_s", NULL);
		out_text(" %9s", "progress");
	}
	out_double("start_s", " %9.3f", in->start);
	out_double("end_s", " %9.3f", in->end);
	print_prediction(rep->plan, i);
	/* progress:F: the fraction this one had when the next was released */
	out_double("progress_at_next_release",
		   NULL, r->mode == TANDEM_STAGGER_PROGRESS && i + 1 < r->n ? in->loaded : NAN);
	out_str("state", " %-8s", rel_state_name(in->state));
	out_s64("exit", code >= 0 ? " exit %lld" : NULL, code);
	out_s64("signal", sig ? " signal %lld" : NULL, sig);
	out_double("cpu_s", NULL, in->state == REL_PENDING ? NAN : in->cpu_s);
	if (in->have_stats) {
		out_u64("misses", " misses %llu", in->stats.misses);
		out_u64("own_hits", " own %llu", in->stats.own_hits);
		out_u64("shared_hits", " shared %llu", in->stats.shared_hits);
		out_u64("evicted", in->stats.evicted ? " evicted %llu" : NULL,
			in->stats.evicted);
	} else {
		out_null("misses", NULL);
		out_null("own_hits", NULL);
		out_null("shared_hits", NULL);
		out_null("evicted", NULL);
	}
	out_text("\n");
	out_obj_close();
}

/* The prediction over calibrate's spread (rates, C): [fastest, slowest], or null. */
static void print_range(const struct rel_plan *p)
{
	if (!p->have || isnan(p->range[0]) || isnan(p->range[1])) {
		out_null("predicted_range_s", NULL);
		return;
	}
	out_arr_open("predicted_range_s");
	out_double(NULL, NULL, p->range[0]);
	out_double(NULL, NULL, p->range[1]);
	out_arr_close();
	out_text("; %.3f-%.3f s over calibrate's spread", p->range[0], p->range[1]);
}

static void print_outcome(const struct rel_report *rep)
{
	const struct rel_run *r = rep->run;
	const struct rel_plan *p = rep->plan;

	out_double("measured_makespan_s", "measured makespan %.3f s", r->makespan);
	if (p->have) {
		double error = r->makespan / p->res.makespan - 1;

		out_double("predicted_makespan_s", ", predicted %.3f s", p->res.makespan);
		out_double("error", NULL, error);	/* measured / predicted - 1 */
		out_text(" (error %+.1f%%)", error * 100);
	} else {
		out_null("predicted_makespan_s", NULL);
		out_null("error", NULL);
	}
	print_range(p);
	out_text("\n");
	out_s64("interrupted_by", r->interrupted ? "interrupted by signal %lld\n" : NULL,
		r->interrupted);
	out_s64("failed", r->nfailed ? "%lld instance(s) failed\n" : NULL, r->nfailed);
	out_s64("skipped", r->nskipped ? "%lld instance(s) not started\n" : NULL, r->nskipped);
}

static void print_residency(const struct rel_report *rep)
{
	const struct rel_module *m = rep->module;
	const struct rel_run *r = rep->run;

	out_u64("page_size", NULL, TANDEM_TRK_PAGE_SIZE);
	out_str("residency_source", r->residency_source ? "residency (%s):" : NULL,
		r->residency_source);
	out_arr_open("residency_bytes_per_node");
	for (int k = 0; k < r->nres_nodes && r->residency_source; k++) {
		out_double(NULL, NULL, r->residency[k]);
		out_text(" node%d %.1f MiB", k, r->residency[k] / 1048576);
	}
	out_arr_close();
	if (!r->residency_source)
		return;
	if (m && m->registered)
		out_text(", steered %llu pages, prefetched %llu", (unsigned long long)m->steered,
			 (unsigned long long)m->prefetched);
	out_text("\n");
}

static void out_frac(const char *key, double v)
{
	if (isnan(v))
		out_null(key, NULL);
	else
		out_double(key, NULL, v);
}

/* This run's prefetch: what tandem.ko did by the jobs' end, and what the model said. */
static void print_prefetch(const struct rel_report *rep)
{
	const struct rel_module *m = rep->module;
	const struct rel_plan *p = rep->plan;
	double fin = NAN;

	if (!m || !m->prefetch_started || !m->pf_have) {
		out_null("prefetch", NULL);
		return;
	}
	if (m->pf_state == TANDEM_PREFETCH_DONE)
		fin = m->pf_request + m->pf_seconds - rep->run->t0;
	out_obj_open("prefetch");
	out_str("source", "prefetch (%s", m->prefetch_source ? m->prefetch_source : "?");
	if (m->prefetch_order)
		out_str("order", ", by %s", m->prefetch_order);
	else
		out_null("order", NULL);
	out_str("by", m->prefetch_by ? ", read by %s" : NULL, m->prefetch_by ? m->prefetch_by : "tandem.ko");
	out_u64("pages", "): %llu", m->pf_done);
	out_u64("pages_total", " of %llu pages read or found cached", m->pf_total);
	out_double("seconds", " in %.2f s", m->pf_seconds);
	out_str("state", ", %s", dataset_prefetch_state_name(m->pf_state));
	out_frac("finished_s", fin);
	if (!isnan(fin))
		out_text(" %.2f s after the first release", fin);
	out_frac("predicted_bytes", p->have ? p->res.pf.bytes : NAN);
	out_frac("predicted_end_s", p->have ? p->res.pf.end : NAN);
	if (p->have)
		out_text("; predicted %.0f pages loaded, through %s", p->res.pf.bytes / TANDEM_TRK_PAGE_SIZE,
			 isnan(p->res.pf.end) ? "after the jobs' end" : "at");
	if (p->have && !isnan(p->res.pf.end))
		out_text(" %.2f s", p->res.pf.end);
	out_text("\n");
	out_obj_close();
}

/* The learned read order: what this run recorded, compared, kept, used. */
static void print_learn(const struct rel_report *rep)
{
	const struct rel_learn *l = rep->learn;
	uint64_t total = 0;

	if (!l) {
		out_null("read_order", NULL);
		return;
	}
	for (int j = 0; j < l->rec.seqs.n; j++)
		total += l->rec.seqs.len[j];
	out_obj_open("read_order");
	out_str("file", "read order (%s)", l->file);
	out_bool("default_file", NULL, l->is_default);
	out_bool("recorded", NULL, l->rec.recording);
	if (!l->rec.recording)
		out_text(": not recorded (%s)", l->rec.why[0] ? l->rec.why : "?");
	out_u64("files_recorded", l->rec.recording ? ": %llu first opens" : NULL, total);
	out_u64("opens", l->rec.recording ? " of %llu opens" : NULL, l->rec.opens);
	out_bool("incomplete", l->rec.incomplete ? " (events lost)" : NULL, l->rec.incomplete);
	out_bool("stopped_early", l->rec.flushed ? " (stopped once every job had opened every file)" :
		 NULL, l->rec.flushed);
	out_bool("learned_before", NULL, !l->load_err);
	out_bool("used", l->used ? "; prefetched in the learned order" : NULL, l->used);
	if (l->unused_why)
		out_str("unused_why", "; the learned order not used: %s", l->unused_why);
	else
		out_null("unused_why", NULL);
	out_frac("displacement", l->displacement);
	out_frac("coverage", l->coverage);
	if (!isnan(l->displacement))
		out_text("; against it: displacement %.3f, %.0f%% of the files", l->displacement,
			 100 * l->coverage);
	out_bool("stable", NULL, l->stable);
	out_bool("saved", NULL, l->saved);
	if (l->saved)
		out_text("; kept%s", l->stable ? " as stable (the next run prefetches in it)" :
			 l->load_err ? " (a second run that repeats it makes it stable)" :
			 " (not stable: the jobs read in another order this time; a sampler "
			 "seeded the same each run, e.g. DataLoader(generator=torch.Generator()"
			 ".manual_seed(S)), lets the next runs prefetch in it)");
	else
		out_text("; not kept (%s)", l->not_saved_why ? l->not_saved_why : "?");
	out_obj_close();
	out_text("\n");
}

void rel_report_print(const struct rel_report *rep)
{
	const struct rel_run *r = rep->run;

	out_obj_open(NULL);
	out_s64("tandem_run", NULL, 1);
	print_registration(rep);
	print_release(rep);
	print_search(rep->plan, r->n);
	print_plan(rep->plan, r->n);
	print_model_input(rep->plan, r->n);
	print_nosteer(rep->plan);
	out_text("name     requested     start       end predicted\n");
	out_arr_open("instances");
	for (int i = 0; i < r->n; i++)
		print_inst(rep, i);
	out_arr_close();
	print_outcome(rep);
	print_residency(rep);
	print_prefetch(rep);
	print_learn(rep);
	out_obj_close();
}

int rel_report_save(const struct rel_report *rep, const char *path)
{
	struct out_printer saved;
	FILE *f = fopen(path, "w");
	int err;

	if (!f)
		return -errno;
	out_redirect(&saved, f, true, true);
	rel_report_print(rep);
	err = out_finish();
	out_restore(&saved);
	if (fclose(f) && !err)
		err = -errno;
	return err;
}
