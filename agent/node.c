// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's node side (node.h): the tracker, tandem.ko, and each
 * dataset's registration in a thread of its own.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/files.h"
#include "lib/log.h"
#include "lib/residency.h"
#include "lib/util.h"
#include "metrics/metrics.h"
#include "scratch/scratch.h"
#include "node.h"

int agent_node_init(struct agent_node *n, const struct agent_node_opts *o)
{
	/* --tracker-pages is kept; without it the budget grows with the datasets */
	struct tracker_load_opts lo = { .max_pages = o->tracker_pages,
					.pages_set = o->tracker_pages != 0 };
	int err = 0;

	memset(n, 0, sizeof(*n));
	n->o = *o;
	n->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (n->efd < 0)
		return -errno;
	if (o->tracker) {
		if (!tracker_is_loaded()) {
			err = tracker_load(&lo);
			n->trk_loaded_here = !err;
		}
		if (!err)
			err = tracker_open(&n->trk);
		n->trk_open = !err;
		if (err)
			ctl_err("tracker: not available (%s): progress from elapsed time only",
				strerror(-err));
	}
	if (o->module && tnl_open(&n->nl, true))
		n->nl = NULL;
	return 0;
}

void agent_node_fini(struct agent_node *n)
{
	if (n->nl)
		tnl_close(n->nl);
	n->nl = NULL;
	if (n->trk_open)
		tracker_close(&n->trk);
	n->trk_open = false;
	/* what the agent loaded goes with it; a tracker someone else loaded stays */
	if (n->trk_loaded_here)
		tracker_unload();
	n->trk_loaded_here = false;
	if (n->efd >= 0)
		close(n->efd);
	n->efd = -1;
}

void agent_node_ds_name(const char *path, char *name, size_t len)
{
	const char *base = strrchr(path, '/');
	uint32_t h = 2166136261u;
	char clean[32];
	size_t k = 0;

	/* FNV-1a: two datasets called "train" in different places differ */
	for (const char *p = path; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	base = base && base[1] ? base + 1 : "root";
	for (; *base && k < sizeof(clean) - 1; base++) {
		char c = *base;

		clean[k++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' ? c : '_';
	}
	clean[k] = '\0';
	snprintf(name, len, "%s-%08x", clean, h);
}

static void scan_stat(struct node_scan *s, const struct file_list *fl)
{
	long psz = sysconf(_SC_PAGESIZE);
	struct residency r = { 0 };
	struct stat st;

	for (size_t i = 0; i < fl->n; i++) {
		if (stat(fl->paths[i], &st))
			continue;
		s->bytes += (double)st.st_size;
		s->files++;
		/* mincore only: nothing is read */
		residency_file(fl->paths[i], RESIDENCY_CACHED, 0, &r);
	}
	s->resident = (double)r.cached * (double)psz;
}

static void scan_register(struct node_scan *s, const struct file_list *fl)
{
	struct tracker_add_result res;
	struct tracker_fit fit;
	struct tracker t;
	struct tnl *nl;
	bool created;
	uint32_t added, dups;
	int err;

	if (s->want_trk) {
		/* the tracker the agent opened, grown when too small for this dataset */
		err = tracker_register(&t, s->name, fl->paths, (int)fl->n, TRACKER_REG_IF_LOADED,
				       &res, &fit);
		s->trk_ok = !err && fit.tracked;
		s->trk_id = res.dataset;
		s->added = res.added;
		s->present = res.present;
		if (err || !fit.tracked)
			snprintf(s->msg, sizeof(s->msg), "tracker: %s",
				 err ? strerror(-err) : "unloaded meanwhile");
		if (fit.tracked)
			tracker_close(&t);
	}
	if (!s->want_mod || tnl_open(&nl, true))
		return;
	err = dataset_find_or_create(nl, s->name, &s->mod_id, &created);
	if (!err)
		err = dataset_add_files(nl, s->mod_id, fl, &added, &dups);
	if (err && created)
		dataset_del(nl, s->mod_id);	/* half registered is worse than not */
	s->mod_ok = !err;
	if (err)
		snprintf(s->msg, sizeof(s->msg), "tandem.ko: %s", strerror(-err));
	tnl_close(nl);
}

static void *scan_main(void *arg)
{
	struct node_scan *s = arg;
	struct file_list fl = { 0 };
	char *args[1] = { s->path };
	double t0 = now_s();
	uint64_t one = 1;
	int efd = s->efd;

	s->err = file_list_collect(&fl, args, 1);
	if (s->err)
		snprintf(s->msg, sizeof(s->msg), "walk: %s", strerror(-s->err));
	if (!s->err) {
		scan_stat(s, &fl);
		scan_register(s, &fl);
	}
	file_list_free(&fl);
	s->took_s = now_s() - t0;
	/* after this the event loop owns s: touch nothing of it */
	atomic_store(&s->done, 1);
	/* a full counter is still readable: nothing to do on error */
	(void)!write(efd, &one, sizeof(one));
	return NULL;
}

void agent_node_scan_free(struct node_scan *s)
{
	if (!s)
		return;
	free(s->path);
	free(s);
}

int agent_node_scan(struct agent_node *n, struct node_ds *d, const char *path)
{
	struct node_scan *s;
	pthread_attr_t at;
	pthread_t thr;
	int err;

	if (d->scan)
		return 0;	/* one at a time: the running one will do */
	s = calloc(1, sizeof(*s));
	if (!s || !(s->path = strdup(path))) {
		free(s);
		return -ENOMEM;
	}
	agent_node_ds_name(path, s->name, sizeof(s->name));
	snprintf(d->name, sizeof(d->name), "%s", s->name);
	s->want_trk = n->trk_open;
	s->want_mod = n->o.module;
	s->efd = n->efd;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	err = -pthread_create(&thr, &at, scan_main, s);
	pthread_attr_destroy(&at);
	if (err) {
		agent_node_scan_free(s);
		return err;
	}
	d->scan = s;
	if (d->state != NODE_DS_READY)
		d->state = NODE_DS_SCANNING;
	return 0;
}

void agent_node_ack(struct agent_node *n)
{
	uint64_t v;

	/* EAGAIN: nothing pending */
	(void)!read(n->efd, &v, sizeof(v));
}

int agent_node_scan_done(struct agent_node *n, struct node_ds *d, const struct node_scan **out)
{
	struct node_scan *s = d->scan;

	if (!s || !atomic_load(&s->done))
		return 0;
	d->scan = NULL;
	*out = s;
	if (s->err) {
		if (d->state != NODE_DS_READY)
			d->state = NODE_DS_FAILED;
		return 1;
	}
	d->state = NODE_DS_READY;
	d->files = s->files;
	d->bytes = s->bytes;
	d->trk_ok = s->trk_ok;
	d->trk_id = s->trk_id;
	d->mod_ok = s->mod_ok;
	d->mod_id = s->mod_id;
	d->resident0 = s->resident;
	memset(&d->base, 0, sizeof(d->base));
	/* the scan may have grown the tracker: the agent's maps follow */
	if (n->trk_open)
		tracker_refresh(&n->trk);
	if (d->trk_ok && n->trk_open)
		tracker_dataset_counts(&n->trk, d->trk_id, &d->base);
	/* the module may have been loaded since the agent started */
	if (d->mod_ok && !n->nl && n->o.module && tnl_open(&n->nl, true))
		n->nl = NULL;
	return 1;
}

void agent_node_ds_fini(struct node_ds *d)
{
	/* a walk still running writes into its scan: leave it to the thread */
	if (d->scan && atomic_load(&d->scan->done))
		agent_node_scan_free(d->scan);
	d->scan = NULL;
}

int agent_node_job_start(struct agent_node *n, const char *name, pid_t pid, uint32_t *job)
{
	int err;

	if (!n->trk_open)
		return -ENOENT;
	/* grown by another command since: new jobs go to the maps in use */
	err = tracker_refresh(&n->trk);
	if (!err)
		err = tracker_job_new(&n->trk, name, 0, job);
	if (!err)
		err = tracker_job_add_pid(&n->trk, *job, pid);
	if (!err)
		err = tracker_job_set_root(&n->trk, *job, pid);
	return err;
}

void agent_node_job_exit(struct agent_node *n, uint32_t job, int code)
{
	if (n->trk_open)
		tracker_job_set_exit(&n->trk, job, code);
}

int agent_node_job_read(struct agent_node *n, const struct node_ds *d, uint32_t job,
			double *bytes)
{
	struct tandem_trk_counts c;
	int err;

	if (!n->trk_open || !d->trk_ok)
		return -ENOENT;
	err = tracker_counts_get(&n->trk, job, d->trk_id, &c);
	if (!err)
		*bytes = (double)(c.first_access + c.own_hit + c.shared_hit) * TANDEM_TRK_PAGE_SIZE;
	return err;
}

int agent_node_resident(struct agent_node *n, const struct node_ds *d, double *bytes)
{
	struct tandem_trk_counts c;
	struct dataset_state st;
	double delta;
	int err;

	if (d->mod_ok && n->nl && !dataset_state_get(n->nl, d->mod_id, &st)) {
		*bytes = (double)st.pages_cached * (double)sysconf(_SC_PAGESIZE);
		return 0;
	}
	if (!n->trk_open || !d->trk_ok)
		return -ENOENT;
	err = tracker_dataset_counts(&n->trk, d->trk_id, &c);
	if (err)
		return err;
	/* loads minus evictions of every job since the walk, on what it found */
	delta = ((double)c.miss - (double)c.evict) - ((double)d->base.miss - (double)d->base.evict);
	*bytes = d->resident0 + delta * TANDEM_TRK_PAGE_SIZE;
	if (*bytes < 0)
		*bytes = 0;
	if (*bytes > d->bytes)
		*bytes = d->bytes;
	return 0;
}

int agent_node_metrics(struct agent_node *n, struct tandem_prom *p, const char *node)
{
	struct metrics_src src = { .node = node, .trk = n->trk_open ? &n->trk : NULL, .nl = n->nl,
				   .nscratch = &n->nscratch };

	return metrics_node_write(p, &src);
}

bool agent_node_scratch_any(struct agent_node *n)
{
	char **names;
	size_t cnt;

	if (n->nscratch)
		return true;	/* shown: keep them current, and show one going away */
	if (scratch_names(&names, &cnt))
		return false;
	scratch_names_free(names, cnt);
	return cnt > 0;
}
