// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl [-j] stats [--job ID|NAME] [--dataset ID|NAME] [--interval S [--count N]]
 * tandemctl stats --prometheus [--textfile DIR] [--node NAME]
 *
 * Per job and dataset: pages (and bytes) missed, own hits, shared hits and
 * from which job, evictions, hit ratio. Job 0 stands for processes in no
 * tracked job, and as a loader also for pages cached before tracking began.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "cmd/stats.h"
#include "lib/log.h"
#include "lib/out.h"
#include "lib/prom.h"
#include "lib/units.h"
#include "lib/util.h"
#include "metrics/metrics.h"
#include "module/module.h"
#include "tracker/tracker.h"

static void print_pages(const char *key, const char *label, uint64_t pages)
{
	char bkey[64];

	snprintf(bkey, sizeof(bkey), "%s_bytes", key);
	if (!out_is_json()) {
		out_text("%s %llu pages (%.1f MiB)", label, (unsigned long long)pages,
			 pages * TANDEM_TRK_PAGE_SIZE / 1048576.0);
		return;
	}
	snprintf(bkey, sizeof(bkey), "%s_pages", key);
	out_u64(bkey, NULL, pages);
	snprintf(bkey, sizeof(bkey), "%s_bytes", key);
	out_u64(bkey, NULL, pages * TANDEM_TRK_PAGE_SIZE);
}

static void print_shared_from(const struct tracker_snapshot *s, uint32_t job,
			      uint32_t dataset)
{
	bool any = false;

	out_arr_open("shared_from");
	for (size_t i = 0; i < s->nmatrix; i++) {
		const struct tracker_matrix_row *m = &s->matrix[i];

		if (m->key.reader != job || m->key.dataset != dataset || !m->pages)
			continue;
		out_text("%s", any ? ", " : " [from ");
		any = true;
		out_obj_open(NULL);
		out_u64("job", "job %llu", m->key.loader);
		out_str("name", " %s", tracker_snapshot_job_name(s, m->key.loader));
		out_u64("pages", ": %llu", m->pages);
		out_obj_close();
	}
	out_text("%s", any ? "]" : "");
	out_arr_close();
}

static void print_row(const struct tracker_snapshot *s,
		      const struct tracker_count_row *r)
{
	const struct tandem_trk_counts *c = &r->c;
	uint64_t hits = c->own_hit + c->shared_hit;
	double ratio = hits + c->miss ? (double)hits / (hits + c->miss) : 0.0;

	out_obj_open(NULL);
	out_u64("dataset", "  dataset %llu", r->key.dataset);
	out_str("name", " %s:", tracker_snapshot_dataset_name(s, r->key.dataset));
	print_pages("miss", "\n    missed", c->miss);
	out_u64("first_access_pages", NULL, c->first_access);
	print_pages("own_hit", "\n    own hits", c->own_hit);
	print_pages("shared_hit", "\n    shared hits", c->shared_hit);
	print_shared_from(s, r->key.job, r->key.dataset);
	print_pages("evicted", "\n    evicted (loaded by this job)", c->evict);
	out_double("hit_ratio", "\n    hit ratio %.3f\n", ratio);
	out_obj_close();
}

static bool row_selected(const struct tracker_count_row *r, const struct stats_filter *f)
{
	return (!f->has_job || r->key.job == f->job) &&
	       (!f->has_dataset || r->key.dataset == f->dataset);
}

static void print_job(const struct tracker_snapshot *s, uint32_t id,
		      const struct tracker_job_row *j, const struct stats_filter *f)
{
	out_obj_open(NULL);
	out_u64("job", "job %llu", id);
	out_str("name", " %s", tracker_snapshot_job_name(s, id));
	if (j) {
		out_u64("root_pid", " (pid %llu", j->job.root_pid);
		out_u64("procs", ", %llu running", j->nproc);
		if (j->job.flags & TANDEM_TRK_JOB_EXITED)
			out_s64("exit_code", ", exited %lld)", j->job.exit_code);
		else
			out_null("exit_code", ")");
	}
	out_text("\n");
	out_arr_open("datasets");
	for (size_t i = 0; i < s->ncounts; i++)
		if (s->counts[i].key.job == id && row_selected(&s->counts[i], f))
			print_row(s, &s->counts[i]);
	out_arr_close();
	out_obj_close();
}

static bool job_has_rows(const struct tracker_snapshot *s, uint32_t id,
			 const struct stats_filter *f)
{
	for (size_t i = 0; i < s->ncounts; i++)
		if (s->counts[i].key.job == id && row_selected(&s->counts[i], f))
			return true;
	return false;
}

static void print_jobs(const struct tracker_snapshot *s, const struct stats_filter *f)
{
	out_arr_open("jobs");
	for (size_t i = 0; i < s->njobs; i++)
		if (!f->has_job || s->jobs[i].id == f->job)
			print_job(s, s->jobs[i].id, &s->jobs[i], f);
	/* job 0 has no jobs entry: shown when it has counts */
	if ((!f->has_job || !f->job) && job_has_rows(s, 0, f))
		print_job(s, 0, NULL, f);
	out_arr_close();
}

void stats_print_dataset_totals(const struct tracker_snapshot *s, const struct stats_filter *f)
{
	out_arr_open("datasets");
	for (size_t i = 0; i < s->ndatasets; i++) {
		const struct tracker_dataset_row *d = &s->datasets[i];
		struct tandem_trk_counts t = {};

		if (f->has_dataset && d->id != f->dataset)
			continue;
		for (size_t k = 0; k < s->ncounts; k++) {
			if (s->counts[k].key.dataset != d->id)
				continue;
			t.miss += s->counts[k].c.miss;
			t.shared_hit += s->counts[k].c.shared_hit;
			t.own_hit += s->counts[k].c.own_hit;
			t.evict += s->counts[k].c.evict;
		}
		out_obj_open(NULL);
		out_u64("dataset", "dataset %llu", d->id);
		out_str("name", " %s:", d->ds.name);
		out_u64("files", " %llu files", d->ds.files);
		print_pages("size", ",", d->ds.pages);
		print_pages("miss", "; all jobs: missed", t.miss);
		print_pages("hit", ", hits", t.own_hit + t.shared_hit);
		print_pages("evicted", ", evicted", t.evict);
		out_text("\n");
		out_obj_close();
	}
	out_arr_close();
}

void stats_print_tracker(const struct tracker_snapshot *s)
{
	static const char *const hook_names[TANDEM_TRK_NR_HOOKS] = {
		"insert", "evict", "fork", "exit", "read", "mmap",
	};
	const struct tandem_trk_global *g = &s->global;
	uint64_t files = 0;

	for (size_t i = 0; i < s->ndatasets; i++)
		files += s->datasets[i].ds.files;
	out_obj_open("tracker");
	out_str("dir", "tracker %s", tracker_dir());
	out_u64("pages_tracked", ": page states %llu", s->pages_tracked);
	out_u64("max_pages", " of %llu", s->meta.max_pages);
	out_u64("overflow_pages", ", overflow %llu", s->overflow);
	out_u64("files", "; files %llu", files);
	out_u64("max_files", " of %llu\n", s->meta.max_files);
	out_obj_open("attach");
	for (int h = 0; h < TANDEM_TRK_NR_HOOKS; h++) {
		char fmt[64];

		snprintf(fmt, sizeof(fmt), "  %s: %%s\n", hook_names[h]);
		out_str(hook_names[h], fmt, s->meta.attach[h]);
	}
	out_obj_close();
	out_u64("inserted", "  states inserted %llu", g->inserted);
	out_u64("removed", ", removed %llu", g->removed);
	out_u64("insert_failed", ", insert failed %llu", g->insert_failed);
	out_u64("evict_unknown", ", evicted without state %llu", g->evict_unknown);
	out_u64("access_unknown", ", read without state %llu\n", g->access_unknown);
	out_u64("counter_full", "  counter map full %llu", g->counter_full);
	out_u64("task_full", ", task map full %llu", g->task_full);
	out_u64("range_capped", ", range capped %llu", g->range_capped);
	out_u64("index_too_big", ", index too big %llu", g->index_too_big);
	out_u64("pending_alloc_failed", ", pending alloc failed %llu\n",
		g->pending_alloc_failed);
	out_u64("fault_vma_cached", "  faults in a cached VMA %llu", g->fault_vma_cached);
	out_u64("faults_pending", ", threads with a fault pending %llu\n", s->meta.faults_pending);
	out_obj_close();
}

/* With tandem.ko loaded: where each dataset's pages are, steered, prefetched, skips. */
static int print_residency(void)
{
	struct tnl *nl;
	int err;

	if (tnl_open(&nl, true))
		return 0;
	out_text("\nresidency (tandem.ko):\n");
	out_obj_open("residency");
	err = dataset_state_print_all(nl);
	out_obj_close();
	tnl_close(nl);
	return err;
}

static bool module_loaded(void)
{
	struct tnl *nl;

	if (tnl_open(&nl, true))
		return false;
	tnl_close(nl);
	return true;
}

static int stats_once(struct tracker *t, const struct stats_filter *f)
{
	struct tracker_snapshot s;
	int err = tracker_snapshot_read(t, &s);

	if (err) {
		ctl_err("stats: cannot read the tracker: %s", strerror(-err));
		return err;
	}
	out_obj_open(NULL);
	stats_print_tracker(&s);
	print_jobs(&s, f);
	stats_print_dataset_totals(&s, f);
	print_residency();
	out_obj_close();
	out_finish();
	tracker_snapshot_free(&s);
	return 0;
}

struct stats_opts {
	const char *job, *dataset;	/* ID|NAME, resolved in the tracker */
	double interval;
	uint64_t count;
	bool prometheus;
	const char *textfile;		/* --textfile DIR: DIR/tandem_stats.prom */
	const char *node;		/* the node label; NULL: the host name */
};

static int stats_parse(int argc, char **argv, struct stats_opts *o)
{
	static const struct option opts[] = {
		{ "job", required_argument, NULL, 'J' },
		{ "dataset", required_argument, NULL, 'D' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'c' },
		{ "prometheus", no_argument, NULL, 'P' },
		{ "textfile", required_argument, NULL, 'T' },
		{ "node", required_argument, NULL, 'N' },
		{ 0 }
	};
	int opt;

	optind = 0;
	while ((opt = ctl_getopt(argc, argv, "", opts, "stats", NULL)) != -1) {
		if (opt == 'J') {
			o->job = optarg;
		} else if (opt == 'D') {
			o->dataset = optarg;
		} else if (opt == 'i') {
			if (units_parse_duration(optarg, &o->interval) || !(o->interval > 0))
				return ctl_usage_err("stats", NULL, "--interval: a duration > 0");
		} else if (opt == 'c') {
			if (parse_u64(optarg, UINT64_MAX, &o->count))
				return ctl_usage_err("stats", NULL, "--count: a number");
		} else if (opt == 'P') {
			o->prometheus = true;
		} else if (opt == 'T') {
			o->textfile = optarg;
		} else if (opt == 'N') {
			o->node = optarg;
		} else {
			return opt;	/* CTL_EUSAGE, printed */
		}
	}
	if (optind < argc)
		return ctl_usage_err("stats", NULL, "unexpected argument '%s'", argv[optind]);
	if ((o->textfile || o->node) && !o->prometheus)
		return ctl_usage_err("stats", NULL, "--textfile and --node go with --prometheus");
	if (o->prometheus && (o->job || o->dataset || o->interval > 0 || opt_json))
		return ctl_usage_err("stats", NULL, "--prometheus writes every job and dataset "
				     "once, in its own format (no --job, --dataset, --interval, -j)");
	return 0;
}

/*
 * The tracker's and tandem.ko's counters in Prometheus' text format, on
 * stdout or into DIR/tandem_stats.prom for node_exporter's textfile
 * collector (replaced whole). What is not loaded has no samples.
 */
static int stats_prometheus(const struct stats_opts *o)
{
	struct metrics_src src = { .node = o->node };
	struct tracker t;
	struct tandem_prom p;
	char host[256];
	int err;

	if (!src.node) {
		if (gethostname(host, sizeof(host) - 1))
			snprintf(host, sizeof(host), "localhost");
		host[sizeof(host) - 1] = '\0';
		src.node = host;
	}
	if (tracker_is_loaded() && !tracker_open(&t))
		src.trk = &t;
	if (tnl_open(&src.nl, true))
		src.nl = NULL;
	err = o->textfile ? tandem_prom_open(&p, o->textfile, "tandem_stats.prom")
			  : tandem_prom_open_stream(&p, stdout);
	if (!err) {
		err = metrics_node_write(&p, &src);
		if (err)
			tandem_prom_abort(&p);
		else
			err = tandem_prom_commit(&p);
	}
	if (err)
		ctl_err("stats --prometheus: %s%s%s", o->textfile ? o->textfile : "",
			o->textfile ? ": " : "", strerror(-err));
	else if (o->textfile)
		printf("wrote %s/tandem_stats.prom (tracker %s, tandem.ko %s)\n", o->textfile,
		       src.trk ? "loaded" : "not loaded", src.nl ? "loaded" : "not loaded");
	if (src.nl)
		tnl_close(src.nl);
	if (src.trk)
		tracker_close(src.trk);
	return err;
}

static int stats_filter_make(struct tracker *t, const struct stats_opts *o,
			     struct stats_filter *f)
{
	if (o->job) {
		f->has_job = true;
		/* job 0: untracked processes */
		if (tracker_job_find(t, o->job, &f->job) && strcmp(o->job, "0"))
			return ctl_err("stats: no job '%s'", o->job), -ENOENT;
	}
	if (o->dataset) {
		f->has_dataset = true;
		if (tracker_dataset_find(t, o->dataset, &f->dataset))
			return ctl_err("stats: no dataset '%s'", o->dataset), -ENOENT;
	}
	return 0;
}

static int cmd_stats(int argc, char **argv)
{
	struct stats_filter f = {};
	struct stats_opts o = {};
	struct tracker t;
	int err;

	err = stats_parse(argc, argv, &o);
	if (err)
		return err;
	if (o.prometheus)
		return stats_prometheus(&o);
	err = tracker_open(&t);
	if (err && module_loaded()) {
		/* no tracker, but the module: its residency is still worth showing */
		out_obj_open(NULL);
		err = print_residency();
		out_obj_close();
		return err;
	}
	if (err)
		return err;
	err = stats_filter_make(&t, &o, &f);
	for (uint64_t n = 1; !err; n++) {
		/* a live view: redraw in place on a terminal */
		if (o.interval > 0 && !out_is_json() && isatty(STDOUT_FILENO))
			fputs("\033[H\033[2J", stdout);
		/* with -j, one JSON document per line and interval */
		out_init(stdout, opt_json, opt_pretty);
		err = stats_once(&t, &f);
		if (err || o.interval <= 0 || (o.count && n >= o.count))
			break;
		fflush(stdout);
		usleep(o.interval * 1e6);
	}
	tracker_close(&t);
	return err;
}

TANDEM_CMD(stats, "stats", NULL, cmd_stats,
	   "[--job ID|NAME] [--dataset ID|NAME] [--interval DUR [--count N]] | "
	   "--prometheus [--textfile DIR] [--node NAME]",
	   "page-cache sharing per job and dataset: missed, own hits, shared hits (from whom), "
	   "evicted, hit ratio; --prometheus: as metrics for node_exporter");
