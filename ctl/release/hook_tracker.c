// SPDX-License-Identifier: GPL-2.0
/*
 * The release engine's tracker hook (release.h, struct rel_tracker): the
 * tracker is loaded when it is not, the run's files become a tracker
 * dataset, every instance a job before it execs; progress:F reads a job's
 * counters, and the report gets each job's misses and hits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <bpf/bpf.h>

#include "lib/log.h"
#include "release/release.h"

#define PAGE_4K 4096ULL

/*
 * A tracker loaded for a run gets a page-state map that holds the whole
 * dataset (plus a quarter), so a dataset larger than the default 512 MiB
 * is not counted through overflow; one already loaded is used as it is.
 */
static int ensure_loaded(struct rel_tracker *k)
{
	struct tracker_load_opts o = { 0 };
	uint64_t want = k->pages + k->pages / 4;

	k->loaded_here = false;
	if (tracker_is_loaded())
		return 0;
	if (want > TRACKER_DEFAULT_MAX_PAGES)
		o.max_pages = want > UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)want;
	k->loaded_here = true;
	return tracker_load(&o);
}

static int trk_register(void *state, const struct rel_dataset *d)
{
	struct rel_tracker *k = state;
	struct tracker_add_result res;
	int err;

	memset(k, 0, sizeof(*k));	/* ids of an earlier run with this state */
	for (uint32_t i = 0; i < d->files->nfiles; i++)
		k->pages += (d->files->sizes[i] + PAGE_4K - 1) / PAGE_4K;
	err = ensure_loaded(k);
	if (!err)
		err = tracker_open(&k->t);
	if (!err) {
		k->open = true;
		/* the dataset's own files, not what else lives under the directory */
		err = tracker_dataset_add(&k->t, d->name, d->files->paths, d->files->nfiles,
					  &res);
		k->dataset = res.dataset;
	}
	if (err)
		ctl_err("tracker: not available (%s); instances run untracked, progress:F "
			"uses read_bytes", strerror(-err));
	k->registered = !err;
	return err;
}

static bool has_job(const struct rel_tracker *k, int idx)
{
	return k->open && idx >= 0 && idx < REL_TRACKER_MAX_JOBS && k->job[idx];
}

static int trk_job_start(void *state, int idx, const char *name, pid_t pgid)
{
	struct rel_tracker *k = state;
	int err;

	if (!k->open || idx < 0 || idx >= REL_TRACKER_MAX_JOBS)
		return 0;
	err = tracker_job_new(&k->t, name, k->dataset, &k->job[idx]);
	if (!err)
		err = tracker_job_add_pid(&k->t, k->job[idx], pgid);
	if (!err)
		err = tracker_job_set_root(&k->t, k->job[idx], pgid);
	return err;
}

static void trk_job_exit(void *state, int idx, int status)
{
	struct rel_tracker *k = state;

	if (has_job(k, idx))
		tracker_job_set_exit(&k->t, k->job[idx], WIFEXITED(status) ?
				     WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

/*
 * The fraction of the dataset instance idx has in memory for itself: pages
 * it loaded (misses) plus pages it found loaded by others (shared hits),
 * over the dataset's pages. For the leader that is what it loaded; for a
 * follower, how far it got through what the leader left. One per-CPU
 * lookup, not a snapshot: it is polled every 20 ms.
 */
static int trk_progress(void *state, int idx, pid_t pgid, double *fraction)
{
	struct rel_tracker *k = state;
	struct tandem_trk_ckey key;
	struct tandem_trk_counts *v;
	uint64_t pages = 0;
	int err = 0;

	(void)pgid;
	if (!has_job(k, idx) || !k->pages)
		return -ENOENT;
	key = (struct tandem_trk_ckey){ .job = k->job[idx], .dataset = k->dataset };
	v = calloc(k->t.ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(k->t.counts_fd, &key, v))
		err = errno == ENOENT ? 0 : -errno;	/* no event yet: nothing loaded */
	for (int c = 0; !err && c < k->t.ncpus; c++)
		pages += v[c].miss + v[c].shared_hit;
	free(v);
	*fraction = (double)pages / k->pages;
	return err;
}

static int trk_job_stats(void *state, int idx, struct rel_job_stats *st)
{
	struct rel_tracker *k = state;
	struct tracker_snapshot s;
	struct tandem_trk_counts c;
	int err;

	if (!has_job(k, idx))
		return -ENOENT;
	err = tracker_snapshot_read(&k->t, &s);
	if (err)
		return err;
	c = tracker_snapshot_counts(&s, k->job[idx], k->dataset);
	tracker_snapshot_free(&s);
	st->misses = c.miss;
	st->own_hits = c.own_hit;
	st->shared_hits = c.shared_hit;
	return 0;
}

static void trk_finish(void *state)
{
	struct rel_tracker *k = state;

	if (k->open)
		tracker_close(&k->t);
	k->open = false;
}

const struct rel_ops rel_tracker_ops = {
	.name = "tracker",
	.dataset_register = trk_register,
	.job_start = trk_job_start,
	.job_exit = trk_job_exit,
	.progress = trk_progress,
	.job_stats = trk_job_stats,
	.finish = trk_finish,
};
