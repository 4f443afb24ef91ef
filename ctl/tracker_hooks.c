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
#include <string.h>
#include <sys/wait.h>

#include "cmd.h"
#include "dataset.h"
#include "release.h"
#include "tracker.h"

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

static struct {
	struct tracker t;
	bool open;
	uint32_t dataset;
	uint32_t job[HOOK_MAX_JOBS];
} hk;

static int hk_dataset_register(void *ctx, const char *dir, const struct lg_dataset *ds)
{
	struct tracker_add_result res;
	char *paths[] = { (char *)dir };
	char name[TANDEM_TRK_NAME_LEN];
	const char *base = strrchr(dir, '/');
	bool loaded;
	int err;

	(void)ctx;
	(void)ds;
	/* the directory's last component names the dataset */
	snprintf(name, sizeof(name), "%s", base && base[1] ? base + 1 : dir);
	err = tracker_ensure_loaded(&loaded);
	if (!err)
		err = tracker_open(&hk.t);
	if (err)
		return err;
	hk.open = true;
	err = tracker_dataset_add(&hk.t, name, paths, 1, &res);
	hk.dataset = res.dataset;
	return err;
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
		.job_stats = hk_job_stats,
		.finish = hk_finish,
	};

	return &hooks;
}
