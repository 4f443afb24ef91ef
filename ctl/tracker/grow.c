// SPDX-License-Identifier: GPL-2.0
/*
 * The tracker sized for a dataset: tracker_register() loads it sized from
 * the dataset's files and pages, or, when a loaded one is too small,
 * reloads it larger (tracker_grow()) with the content of every map copied,
 * so datasets, jobs, counters and page states carry over.
 *
 * A reload cannot be atomic: BPF maps do not grow, so the new programs and
 * maps are loaded beside the old ones, the maps tandemctl writes (datasets,
 * jobs) are copied and its tables (the file table, the filter) rebuilt for
 * their new size, the old programs detached, the maps the programs write (pages, fileinfo, tasks,
 * counts, matrix, global) copied, and the new programs attached. Page-cache
 * events between the detach and the attach (the time the second copy
 * takes, measured in Documentation/tracker.md) are not seen. That is why a
 * reload is refused while a tracked job runs: its counts would miss them.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/files.h"
#include "lib/log.h"
#include "lib/util.h"
#include "tracker/tracker.h"
#include "tracker/internal.h"

#define COPY_CHUNK	4096

/* value bytes one lookup returns: per-CPU maps return one per possible CPU */
static size_t value_bytes(const struct bpf_map_info *info, int ncpus)
{
	bool percpu = info->type == BPF_MAP_TYPE_PERCPU_HASH ||
		      info->type == BPF_MAP_TYPE_PERCPU_ARRAY ||
		      info->type == BPF_MAP_TYPE_LRU_PERCPU_HASH;

	return percpu ? ((info->value_size + 7) & ~7U) * (size_t)ncpus : info->value_size;
}

/* copy every element of FROM into TO (same key and value types), in batches */
static int map_copy(int from, int to, int ncpus)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), n;
	char tok_in[64], tok_out[64];
	bool first = true, done = false;
	void *keys = NULL, *vals = NULL;
	int err = 0;

	if (bpf_obj_get_info_by_fd(from, &info, &len))
		return -errno;
	keys = calloc(COPY_CHUNK, info.key_size);
	vals = calloc(COPY_CHUNK, value_bytes(&info, ncpus));
	if (!keys || !vals)
		err = -ENOMEM;
	while (!err && !done) {
		n = COPY_CHUNK;
		if (bpf_map_lookup_batch(from, first ? NULL : tok_in, tok_out, keys, vals, &n, &opts)) {
			err = errno == ENOENT ? 0 : -errno;
			done = true;	/* ENOENT: this batch is the last */
		}
		if (!err && n && bpf_map_update_batch(to, keys, vals, &n, &opts))
			err = -errno;
		memcpy(tok_in, tok_out, sizeof(tok_in));
		first = false;
	}
	free(keys);
	free(vals);
	return err;
}

static int open_in(const char *dir, const char *name)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		ctl_err("tracker: cannot open %s: %s", path, strerror(errno));
	return fd < 0 ? -errno : fd;
}

/* copy map NAME from the pins in OLD to those in NEW */
static int copy_named(const char *old, const char *new, const char *name, int ncpus)
{
	int from = open_in(old, name), to = from < 0 ? from : open_in(new, name), err;

	if (from < 0 || to < 0)
		err = from < 0 ? from : to;
	else
		err = map_copy(from, to, ncpus);
	if (err && from >= 0 && to >= 0)
		ctl_err("tracker: cannot copy map %s to the larger tracker: %s", name, strerror(-err));
	if (from >= 0)
		close(from);
	if (to >= 0)
		close(to);
	return err;
}

/* the filter of STAGE set from every file of OLD (tracker.h): its size changed */
static int filter_rebuild(const struct ftable *old, const char *stage)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), n;
	__u64 *words = NULL;
	__u32 *idx = NULL;
	int fd = open_in(stage, "filter"), err = 0;

	if (fd < 0)
		return fd;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		err = -errno;
	words = err ? NULL : calloc(info.max_entries, sizeof(*words));
	idx = err ? NULL : calloc(info.max_entries, sizeof(*idx));
	if (!err && (!words || !idx))
		err = -ENOMEM;
	for (__u32 i = 0; !err && i < old->nslots; i++) {
		const struct tandem_trk_slot *s = &old->slot[i];
		__u64 h = tandem_trk_filter_hash(s->dev, s->ino);

		if (s->file_id)
			words[TANDEM_TRK_FILTER_WORD(h, info.max_entries)] |=
				1ULL << TANDEM_TRK_FILTER_BIT(h);
	}
	for (__u32 i = 0; !err && i < info.max_entries; i++)
		idx[i] = i;
	n = info.max_entries;
	if (!err && bpf_map_update_batch(fd, idx, words, &n, NULL))
		err = -errno;
	free(words);
	free(idx);
	close(fd);
	return err;
}

/*
 * The file table of STAGE: every file of OLD at its place in the new size
 * (ids kept; their datasets come with fileinfo, copied at the switch)
 */
static int files_rebuild(const struct ftable *old, const char *stage)
{
	struct ftable new;
	int fd = open_in(stage, "files"), err;

	if (fd < 0)
		return fd;
	err = ftable_map(&new, fd, -1);
	for (__u32 i = 0; !err && i < old->nslots; i++) {
		const struct tandem_trk_slot *s = &old->slot[i];

		if (s->file_id)
			err = ftable_add(&new, s->dev, s->ino, s->file_id, 0, 0, 0);
	}
	if (err)
		ctl_err("tracker: cannot rebuild the file table: %s", strerror(-err));
	ftable_unmap(&new);
	close(fd);
	return err;
}

/* the tables tandemctl builds for the new size: the file table and the filter */
static int tables_rebuild(struct tracker *t, const char *stage)
{
	struct ftable old;
	int err = ftable_map(&old, t->files_fd, -1);

	if (!err)
		err = files_rebuild(&old, stage) ?: filter_rebuild(&old, stage);
	ftable_unmap(&old);
	return err;
}

/* live processes of tracked jobs (the tasks map); *job: one of their jobs */
static int jobs_running(struct tracker *t, uint32_t *job)
{
	uint32_t key, next, v, *prev = NULL;
	int n = 0;

	while (!bpf_map_get_next_key(t->tasks_fd, prev, &next)) {
		if (!bpf_map_lookup_elem(t->tasks_fd, &next, &v) && v) {
			*job = v;
			n++;
		}
		key = next;
		prev = &key;
	}
	return n;
}

/* unlink DIR/link_*: the old programs detach (the pins hold the only references) */
static int detach_old(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);
	int err = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "link_", 5))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path) && !err)
			err = -errno;
	}
	closedir(d);
	return err;
}

static int copy_maps(struct tracker *t, const char *old, const char *stage,
		     const char *const *names, size_t n)
{
	int err = 0;

	for (size_t i = 0; i < n && !err; i++)
		err = copy_named(old, stage, names[i], t->ncpus);
	return err;
}

/* the old pages_tracked into META, then the new programs attached */
static int switch_over(struct tracker *t, struct tracker_bpf *skel, const char *stage,
		       struct tandem_trk_meta *meta, double *gap_s)
{
	static const char *const live[] = {
		"pages", "fileinfo", "tasks", "counts", "matrix", "global",
	};
	const char *dir = tracker_dir();
	struct tandem_trk_meta old;
	__u32 zero = 0;
	double t0 = now_s();
	int err;

	err = detach_old(dir);
	if (!err)
		err = copy_maps(t, dir, stage, live, sizeof(live) / sizeof(live[0]));
	if (!err && bpf_map_lookup_elem(t->meta_fd, &zero, &old))
		err = -errno;
	if (err)
		return err;
	meta->pages_tracked = old.pages_tracked;
	err = tracker_load_attach(skel, stage, meta);
	*gap_s = now_s() - t0;
	return err;
}

static int grow_opts(struct tracker *t, const struct tracker_need *n,
		     struct tracker_load_opts *o)
{
	char path[PATH_MAX];
	uint32_t job = 0;
	int running = jobs_running(t, &job);

	if (running) {
		ctl_err("tracker: it cannot be reloaded larger while tracked jobs run (job %u, "
			"%d processes in all; their counts would miss the reload): rerun when they "
			"have ended, or end them, 'tandemctl tracker unload' (drops every count) "
			"and rerun", job, running);
		return -EBUSY;
	}
	snprintf(path, sizeof(path), "%s/fileinfo", tracker_dir());
	if (access(path, F_OK)) {
		ctl_err("tracker: loaded by an older tandemctl (no %s), it cannot be reloaded "
			"with its state: 'tandemctl tracker unload' and rerun", path);
		return -EBUSY;
	}
	tracker_size_for(n->files, n->pages, o);
	if (o->max_files < n->max_files)
		o->max_files = n->max_files;
	/* crowded where the new files go: a table twice the size */
	if (n->probes_over && o->max_files < 2ULL * n->max_files)
		o->max_files = 2ULL * n->max_files < TRACKER_MAX_FILES ? 2 * n->max_files :
			       TRACKER_MAX_FILES;
	/* a page count asked for stays what it was */
	if (o->max_pages < n->max_pages || n->pages_set)
		o->max_pages = n->max_pages;
	o->pages_set = n->pages_set;
	return 0;
}

int tracker_grow(struct tracker *t, const struct tracker_need *n, double *gap_s)
{
	static const char *const still[] = { "datasets", "jobs" };
	struct tracker_load_opts o = {};
	struct tandem_trk_meta meta = {};
	const char *dir = tracker_dir();
	struct tracker_bpf *skel;
	char stage[PATH_MAX];
	int err;

	err = grow_opts(t, n, &o);
	if (!err)
		err = tracker_load_objects(&o, &skel, &meta);
	if (err)
		return err;
	tracker_staging_dir(dir, stage, sizeof(stage));
	err = tracker_load_pin_maps(skel, stage);
	if (!err)
		err = copy_maps(t, dir, stage, still, sizeof(still) / sizeof(still[0]));
	if (!err)
		err = tables_rebuild(t, stage);
	if (err) {
		tracker_unpin_all(stage);
		goto out;
	}
	err = switch_over(t, skel, stage, &meta, gap_s);
	if (!err)
		err = tracker_unpin_all(dir);
	if (!err && rename(stage, dir))
		err = -errno;
	if (err)
		ctl_err("tracker: the reload failed after the old programs were detached (%s): "
			"'tandemctl tracker unload' and rerun", strerror(-err));
	else
		err = tracker_refresh(t);
out:
	tracker_load_destroy(skel);
	return err;
}

/* registered under the lock; the tracker grown first when it is too small */
static int register_locked(struct tracker *t, const char *name, const struct file_list *fl,
			   struct tracker_add_result *res, struct tracker_fit *fit)
{
	struct tracker_need need;
	double t0 = now_s(), gap = 0;
	int err;

	err = tracker_need(t, fl, &need);
	if (need.pages_set && need.pages > need.max_pages)
		ctl_err("tracker: with dataset %s the registered files have %llu pages, above the "
			"%u page words the tracker was loaded with (--max-pages): pages without a "
			"word count as overflow", name, (unsigned long long)need.pages,
			need.max_pages);
	if (err == -E2BIG) {
		tracker_need_print(&need, name);
		err = tracker_grow(t, &need, &gap);
		fit->grown = !err;
		if (!err)
			ctl_err("tracker: reloaded larger, its state copied, in %.2f s (programs "
				"detached for %.3f s)", now_s() - t0, gap);
	}
	return err ?: tracker_dataset_add_list(t, name, fl, res);
}

/* loaded sized for FIT's dataset unless one is (or IF_LOADED); 1: nothing to do */
static int load_sized(unsigned int flags, struct tracker_fit *fit)
{
	struct tracker_load_opts o = {};
	int err;

	if (tracker_is_loaded())
		return 0;
	if (flags & TRACKER_REG_IF_LOADED)
		return 1;
	tracker_size_for(fit->files, fit->pages, &o);
	err = tracker_load(&o);
	fit->loaded = !err;
	/* another command loaded it meanwhile: use that one */
	return err == -EEXIST && tracker_is_loaded() ? 0 : err;
}

int tracker_register(struct tracker *t, const char *name, char *const *paths, int npaths,
		     unsigned int flags, struct tracker_add_result *res,
		     struct tracker_fit *fit)
{
	struct file_list fl = { 0 };
	int err;

	memset(res, 0, sizeof(*res));
	memset(fit, 0, sizeof(*fit));
	err = file_list_collect(&fl, (char **)paths, npaths);
	for (size_t i = 0; !err && i < fl.n; i++)
		fit->pages += (fl.sizes[i] + 4095) / 4096;
	fit->files = fl.n;
	if (!err)
		err = load_sized(flags, fit);
	if (!err)
		err = tracker_open(t);
	if (!err) {
		err = tracker_lock(t);
		/* another command may have grown it while this one waited for the lock */
		if (!err)
			err = tracker_refresh(t);
		if (!err)
			err = register_locked(t, name, &fl, res, fit);
		tracker_unlock(t);
		if (err)
			tracker_close(t);
	}
	fit->tracked = !err;
	file_list_free(&fl);
	return err > 0 ? 0 : err;
}
