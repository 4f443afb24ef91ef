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

#include "lib/log.h"
#include "release/release.h"

static int trk_register(void *state, const struct rel_dataset *d)
{
	struct rel_tracker *k = state;
	struct tracker_add_result res;
	struct tracker_fit fit;
	int err;

	memset(k, 0, sizeof(*k));	/* ids of an earlier run with this state */
	/*
	 * Loaded sized for the dataset's files and pages, a loaded one grown
	 * when too small; the dataset's own files, not what else lives under
	 * the directory.
	 */
	err = tracker_register(&k->t, d->name, d->set->files.paths, d->set->files.n, 0, &res, &fit);
	k->pages = fit.pages;
	k->loaded_here = fit.loaded;
	k->open = fit.tracked;
	/* registered by another command first: its jobs count there */
	k->dataset = tracker_add_counts_in(&res);
	k->files_added = res.added;
	k->files_present = res.present;
	if (err == -EBUSY || err == -E2BIG) {
		/* the tracker is there but too small: run nothing rather than untracked */
		ctl_err("tracker: dataset %s not registered; the run stops", d->name);
		return REL_EREFUSED;
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
	struct tandem_trk_counts c;
	int err;

	(void)pgid;
	if (!has_job(k, idx) || !k->pages)
		return -ENOENT;
	err = tracker_job_counts(&k->t, k->job[idx], k->dataset, &c);
	*fraction = (double)(c.miss + c.shared_hit) / k->pages;
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
	st->evicted = c.evict;
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
