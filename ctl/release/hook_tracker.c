// SPDX-License-Identifier: GPL-2.0
/*
 * Where the tracker meets the rest of tandemctl:
 * - dataset_registered_hook(): `tandemctl dataset add` registered a dataset
 *   with tandem.ko; a loaded tracker gets the same files under the same name.
 * - tracker_rel_hooks(): the release engine's hooks (ctl/release.h) for
 *   `tandemctl run`, offered here, registered by whoever wires `run` up.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <bpf/bpf.h>

#include "cli/cmd.h"
#include "module/module.h"
#include "release/release.h"
#include "tracker/tracker.h"

int dataset_registered_hook(uint32_t id, const char *name, const struct file_list *fl)
{
	struct tracker_add_result res;
	struct tracker t;
	int err;

	(void)id;	/* the tracker numbers its datasets itself */
	if (!tracker_is_loaded())
		return 0;
	err = tracker_open(&t);
	if (err)
		return err;
	err = tracker_dataset_add(&t, name, fl->paths, fl->n, &res);
	tracker_close(&t);
	if (err)
		ctl_err("dataset %s: registered with tandem.ko but not with the tracker", name);
	return err;
}

#define HOOK_MAX_JOBS 256
#define PAGE_4K 4096ULL

static struct {
	struct tracker t;
	bool open;
	bool loaded_here;	/* this run loaded the tracker */
	uint32_t dataset;
	uint64_t pages;		/* of the run's dataset, 4 KiB pages */
	uint32_t job[HOOK_MAX_JOBS];
} hk;

/*
 * A tracker loaded for a run gets a page-state map that holds the whole
 * dataset (plus a quarter), so a dataset larger than the default 512 MiB
 * is not counted through overflow; one already loaded is used as it is.
 */
static int hk_ensure_loaded(uint64_t pages)
{
	struct tracker_load_opts o = { 0 };
	uint64_t want = pages + pages / 4;

	hk.loaded_here = false;
	if (tracker_is_loaded())
		return 0;
	if (want > TRACKER_DEFAULT_MAX_PAGES)
		o.max_pages = want > UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)want;
	hk.loaded_here = true;
	return tracker_load(&o);
}

static int hk_dataset_register(void *ctx, const char *dir, const struct lg_dataset *ds)
{
	struct tracker_add_result res;
	char name[TANDEM_TRK_NAME_LEN];
	const char *base = strrchr(dir, '/');
	int err;

	/* ctx: the dataset's name, or NULL for the directory's last component */
	snprintf(name, sizeof(name), "%s", ctx ? (const char *)ctx :
		 base && base[1] ? base + 1 : dir);
	memset(hk.job, 0, sizeof(hk.job));	/* ids of an earlier run in this process */
	hk.pages = 0;
	for (uint32_t i = 0; i < ds->nfiles; i++)
		hk.pages += (ds->sizes[i] + PAGE_4K - 1) / PAGE_4K;
	err = hk_ensure_loaded(hk.pages);
	if (!err)
		err = tracker_open(&hk.t);
	if (err)
		return err;
	hk.open = true;
	/* the dataset's own files, not what else lives under the directory */
	err = tracker_dataset_add(&hk.t, name, ds->paths, ds->nfiles, &res);
	hk.dataset = res.dataset;
	return err;
}

bool tracker_rel_info(uint32_t *dataset, bool *loaded_here)
{
	*dataset = hk.dataset;
	*loaded_here = hk.loaded_here;
	return hk.open;
}

static int hk_job_start(void *ctx, int idx, const char *name, pid_t pgid)
{
	int err;

	(void)ctx;
	if (!hk.open || idx < 0 || idx >= HOOK_MAX_JOBS)
		return 0;
	err = tracker_job_new(&hk.t, name, hk.dataset, &hk.job[idx]);
	if (!err)
		err = tracker_job_add_pid(&hk.t, hk.job[idx], pgid);
	if (!err)
		err = tracker_job_set_root(&hk.t, hk.job[idx], pgid);
	return err;
}

static void hk_job_exit(void *ctx, int idx, int status)
{
	(void)ctx;
	if (!hk.open || idx < 0 || idx >= HOOK_MAX_JOBS || !hk.job[idx])
		return;
	tracker_job_set_exit(&hk.t, hk.job[idx], WIFEXITED(status) ? WEXITSTATUS(status) :
			     128 + WTERMSIG(status));
}

/*
 * The fraction of the dataset instance idx has in memory for itself: pages
 * it loaded (misses) plus pages it found loaded by others (shared hits),
 * over the dataset's pages. For the leader that is what it loaded; for a
 * follower, how far it got through what the leader left. One per-CPU
 * lookup, not a snapshot: it is polled every 20 ms.
 */
static int hk_progress(void *ctx, int idx, pid_t pgid, double *fraction)
{
	struct tandem_trk_ckey key;
	struct tandem_trk_counts *v;
	uint64_t pages = 0;
	int err = 0;

	(void)ctx;
	(void)pgid;
	if (!hk.open || idx < 0 || idx >= HOOK_MAX_JOBS || !hk.job[idx] || !hk.pages)
		return -ENOENT;
	key = (struct tandem_trk_ckey){ .job = hk.job[idx], .dataset = hk.dataset };
	v = calloc(hk.t.ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(hk.t.counts_fd, &key, v))
		err = errno == ENOENT ? 0 : -errno;	/* no event yet: nothing loaded */
	for (int c = 0; !err && c < hk.t.ncpus; c++)
		pages += v[c].miss + v[c].shared_hit;
	free(v);
	*fraction = (double)pages / hk.pages;
	return err;
}

static int hk_job_stats(void *ctx, int idx, struct rel_job_stats *st)
{
	struct tracker_snapshot s;
	struct tandem_trk_counts c;
	int err;

	(void)ctx;
	if (!hk.open || idx < 0 || idx >= HOOK_MAX_JOBS || !hk.job[idx])
		return -ENOENT;
	err = tracker_snapshot_read(&hk.t, &s);
	if (err)
		return err;
	c = tracker_snapshot_counts(&s, hk.job[idx], hk.dataset);
	tracker_snapshot_free(&s);
	st->misses = c.miss;
	st->own_hits = c.own_hit;
	st->shared_hits = c.shared_hit;
	return 0;
}

static void hk_finish(void *ctx)
{
	(void)ctx;
	if (hk.open)
		tracker_close(&hk.t);
	hk.open = false;
}

const struct rel_hooks *tracker_rel_hooks(void)
{
	static const struct rel_hooks hooks = {
		.name = "tracker",
		.dataset_register = hk_dataset_register,
		.job_start = hk_job_start,
		.job_exit = hk_job_exit,
		.progress = hk_progress,
		.job_stats = hk_job_stats,
		.finish = hk_finish,
	};

	return &hooks;
}
