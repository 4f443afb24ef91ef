// SPDX-License-Identifier: GPL-2.0
/*
 * Page-cache sharing tracker: work on its pinned maps. Ids (datasets, files,
 * jobs) are allocated by tandemctl under an flock, so concurrent
 * `tandemctl track` runs never share an id.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/files.h"
#include "lib/log.h"
#include "tracker/tracker.h"
#include "tracker/internal.h"
#include "lib/util.h"

const char *tracker_dir(void)
{
	const char *d = getenv("TANDEM_TRACKER_DIR");

	return d && *d ? d : TRACKER_DEFAULT_DIR;
}

static int open_pinned(const char *name, int *fd)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", tracker_dir(), name);
	*fd = bpf_obj_get(path);
	if (*fd < 0) {
		int err = -errno;

		ctl_err("tracker: cannot open %s: %s%s", path, strerror(-err),
			err == -ENOENT ? " (is the tracker loaded? 'tandemctl tracker load')" : "");
		return err;
	}
	return 0;
}

static int check_version(struct tracker *t)
{
	struct tandem_trk_meta meta;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(t->meta_fd, &zero, &meta))
		return -errno;
	if (meta.version != TANDEM_TRK_VERSION) {
		ctl_err("tracker: loaded tracker has layout %u, this tandemctl %u: reload it",
			meta.version, TANDEM_TRK_VERSION);
		return -EPROTO;
	}
	return 0;
}

static int map_info(int fd, struct bpf_map_info *info)
{
	__u32 len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	return bpf_obj_get_info_by_fd(fd, info, &len) ? -errno : 0;
}

static int filter_size(struct tracker *t)
{
	struct bpf_map_info info;
	int err = map_info(t->filter_fd, &info);

	t->filter_words = info.max_entries;
	if (!err)
		err = map_info(t->meta_fd, &info);
	t->meta_id = info.id;
	return err;
}

int tracker_open(struct tracker *t)
{
	struct { const char *name; int *fd; } maps[] = {
		{ "files", &t->files_fd }, { "pages", &t->pages_fd },
		{ "tasks", &t->tasks_fd }, { "jobs", &t->jobs_fd },
		{ "datasets", &t->datasets_fd }, { "counts", &t->counts_fd },
		{ "matrix", &t->matrix_fd }, { "global", &t->global_fd },
		{ "meta", &t->meta_fd }, { "filter", &t->filter_fd },
		{ "fileinfo", &t->fileinfo_fd },
	};
	size_t i;
	int err = 0;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		*maps[i].fd = -1;
	t->lock_fd = -1;
	t->taskgen_fd = -1;
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]) && !err; i++)
		err = open_pinned(maps[i].name, maps[i].fd);
	if (!err)
		err = check_version(t);
	/* layout 10's: after the check, which names an older layout */
	if (!err)
		err = open_pinned("taskgen", &t->taskgen_fd);
	if (!err)
		err = filter_size(t);
	t->ncpus = libbpf_num_possible_cpus();
	if (!err && t->ncpus <= 0)
		err = t->ncpus ? t->ncpus : -EINVAL;
	if (err)
		tracker_close(t);
	return err;
}

int tracker_refresh(struct tracker *t)
{
	struct bpf_map_info info;
	char path[PATH_MAX];
	int fd, lock_fd = t->lock_fd, err;

	snprintf(path, sizeof(path), "%s/meta", tracker_dir());
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	err = map_info(fd, &info);
	close(fd);
	if (err || info.id == t->meta_id)
		return err;
	/* reloaded (grown) by tracker_grow(): the same state in new maps */
	t->lock_fd = -1;
	tracker_close(t);
	err = tracker_open(t);
	t->lock_fd = lock_fd;
	return err;
}

void tracker_close(struct tracker *t)
{
	int *fds[] = {
		&t->files_fd, &t->pages_fd, &t->tasks_fd, &t->jobs_fd,
		&t->datasets_fd, &t->counts_fd, &t->matrix_fd, &t->global_fd,
		&t->meta_fd, &t->filter_fd, &t->fileinfo_fd, &t->taskgen_fd, &t->lock_fd,
	};

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

/* bpffs holds no regular files: the lock lives in /run (or /tmp) */
static void lock_path(char *buf, size_t len)
{
	const char *base = access("/run", W_OK) ? "/tmp" : "/run";
	size_t off = snprintf(buf, len, "%s/tandem-tracker", base);

	for (const char *p = tracker_dir(); *p && off + 2 < len; p++)
		buf[off++] = *p == '/' ? '-' : *p;
	snprintf(buf + off, len - off, ".lock");
}

int tracker_lock(struct tracker *t)
{
	char path[PATH_MAX];

	lock_path(path, sizeof(path));
	t->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (t->lock_fd < 0 || flock(t->lock_fd, LOCK_EX)) {
		int err = -errno;

		ctl_err("tracker: cannot lock %s: %s", path, strerror(-err));
		return err;
	}
	return 0;
}

void tracker_unlock(struct tracker *t)
{
	if (t->lock_fd >= 0)
		close(t->lock_fd);
	t->lock_fd = -1;
}

/* largest u32 key of a hash map keyed by u32 (0 when empty) */
uint32_t tracker_max_u32_key(int fd)
{
	uint32_t key, next, max = 0;
	uint32_t *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (next > max)
			max = next;
		key = next;
		prev = &key;
	}
	return max;
}

/* ---------------- datasets ---------------- */

static int find_by_name(int fd, size_t value_size, size_t name_off,
			const char *name, uint32_t *id)
{
	uint32_t key, next, *prev = NULL;
	char value[256];
	int err = -ENOENT;

	if (value_size > sizeof(value))
		return -EINVAL;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (!bpf_map_lookup_elem(fd, &next, value) &&
		    !strncmp(value + name_off, name, TANDEM_TRK_NAME_LEN)) {
			*id = next;
			err = 0;
			break;
		}
		key = next;
		prev = &key;
	}
	return err;
}

static int find_id_or_name(int fd, size_t value_size, size_t name_off,
			   const char *s, uint32_t *id)
{
	char value[256];
	uint32_t v;

	if (!parse_u32(s, &v) && !bpf_map_lookup_elem(fd, &v, value)) {
		*id = v;
		return 0;
	}
	return find_by_name(fd, value_size, name_off, s, id);
}

int tracker_dataset_find(struct tracker *t, const char *s, uint32_t *id)
{
	return find_id_or_name(t->datasets_fd, sizeof(struct tandem_trk_dataset),
			       offsetof(struct tandem_trk_dataset, name), s, id);
}

uint32_t tracker_add_counts_in(const struct tracker_add_result *res)
{
	if (!res->added && res->present && res->owner && res->owner != TRACKER_OWNER_MIXED)
		return res->owner;
	return res->dataset;
}

/* ---------------- jobs ---------------- */

int tracker_job_find(struct tracker *t, const char *s, uint32_t *id)
{
	return find_id_or_name(t->jobs_fd, sizeof(struct tandem_trk_job),
			       offsetof(struct tandem_trk_job, name), s, id);
}

int tracker_job_new(struct tracker *t, const char *name, uint32_t dataset,
		    uint32_t *id)
{
	struct tandem_trk_job j = { .dataset = dataset, .start_time = time(NULL) };
	int err;

	if (name && strlen(name) >= TANDEM_TRK_NAME_LEN) {
		ctl_err("tracker: job name longer than %d characters", TANDEM_TRK_NAME_LEN - 1);
		return -EINVAL;
	}
	if (name)
		strncpy(j.name, name, sizeof(j.name) - 1);
	/* the maps in use: a reload (tracker_grow()) holds the lock */
	err = tracker_lock(t) ?: tracker_refresh(t);
	if (err) {
		tracker_unlock(t);
		return err;
	}
	*id = tracker_max_u32_key(t->jobs_fd) + 1;
	if (!name)
		snprintf(j.name, sizeof(j.name), "job%u", *id);
	if (bpf_map_update_elem(t->jobs_fd, id, &j, BPF_NOEXIST)) {
		err = -errno;
		ctl_err("tracker: cannot create job: %s", strerror(-err));
	}
	tracker_unlock(t);
	return err;
}

static int job_update(struct tracker *t, uint32_t job,
		      void (*fn)(struct tandem_trk_job *j, long arg), long arg)
{
	struct tandem_trk_job j;
	int err;

	err = tracker_lock(t) ?: tracker_refresh(t);
	if (err) {
		tracker_unlock(t);
		return err;
	}
	if (bpf_map_lookup_elem(t->jobs_fd, &job, &j)) {
		err = -errno;
	} else {
		fn(&j, arg);
		/* nproc is the BPF side's: only the fields set here change */
		if (bpf_map_update_elem(t->jobs_fd, &job, &j, BPF_EXIST))
			err = -errno;
	}
	tracker_unlock(t);
	return err;
}

static void set_root(struct tandem_trk_job *j, long pid)
{
	j->root_pid = pid;
}

static void set_exit(struct tandem_trk_job *j, long code)
{
	j->exit_code = code;
	j->flags |= TANDEM_TRK_JOB_EXITED;
}

int tracker_job_set_root(struct tracker *t, uint32_t job, pid_t pid)
{
	return job_update(t, job, set_root, pid);
}

int tracker_job_set_exit(struct tracker *t, uint32_t job, int code)
{
	return job_update(t, job, set_exit, code);
}

int tracker_job_counts(struct tracker *t, uint32_t job, uint32_t dataset,
		       struct tandem_trk_counts *sum)
{
	struct tandem_trk_ckey key = { .job = job, .dataset = dataset };
	struct tandem_trk_counts *v = calloc(t->ncpus, sizeof(*v));
	int err = 0;

	memset(sum, 0, sizeof(*sum));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(t->counts_fd, &key, v))
		err = errno == ENOENT ? 0 : -errno;	/* no event yet */
	for (int c = 0; !err && c < t->ncpus; c++) {
		sum->miss += v[c].miss;
		sum->first_access += v[c].first_access;
		sum->own_hit += v[c].own_hit;
		sum->shared_hit += v[c].shared_hit;
		sum->evict += v[c].evict;
	}
	free(v);
	return err;
}

/*
 * The generation the programs check a thread's kept job against (taskgen in
 * bpf/tracker.bpf.c): moved under the tracker's lock, so no move is lost.
 */
static int taskgen_move(struct tracker *t)
{
	__u32 zero = 0;
	__u64 gen;
	int err = 0;

	if (bpf_map_lookup_elem(t->taskgen_fd, &zero, &gen) ||
	    (gen++, bpf_map_update_elem(t->taskgen_fd, &zero, &gen, BPF_ANY))) {
		err = -errno;
		ctl_err("tracker: cannot move the task generation: %s", strerror(-err));
	}
	return err;
}

int tracker_job_add_pid(struct tracker *t, uint32_t job, pid_t pid)
{
	uint32_t key = pid;
	int err;

	/* under the lock, in the maps in use: not lost to a reload meanwhile */
	err = tracker_lock(t) ?: tracker_refresh(t);
	/* a process belongs to one job: the latest registration wins */
	if (!err && bpf_map_update_elem(t->tasks_fd, &key, &job, BPF_ANY)) {
		err = -errno;
		ctl_err("tracker: cannot register pid %d: %s", pid, strerror(-err));
	}
	/* after tasks: a thread that sees the new generation finds the new entry */
	if (!err)
		err = taskgen_move(t);
	tracker_unlock(t);
	return err;
}

/* children of PID, from /proc/PID/task/TID/children of every thread */
static int for_each_child(pid_t pid, int (*fn)(void *ctx, pid_t child), void *ctx)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		FILE *f;
		int child;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/children", pid, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;	/* the thread exited */
		while (!err && fscanf(f, "%d", &child) == 1)
			err = fn(ctx, child);
		fclose(f);
	}
	closedir(d);
	return err;
}

struct tree_ctx {
	struct tracker *t;
	uint32_t job;
	int n;
	int depth;
};

static int add_tree_rec(void *data, pid_t pid)
{
	struct tree_ctx *c = data;
	int err;

	/* register before descending: later forks are the tracepoint's */
	err = tracker_job_add_pid(c->t, c->job, pid);
	if (err)
		return err;
	c->n++;
	if (++c->depth > 64)
		return -ELOOP;
	err = for_each_child(pid, add_tree_rec, c);
	c->depth--;
	/* a process that exited meanwhile is not an error */
	return err == -ENOENT ? 0 : err;
}

int tracker_job_add_tree(struct tracker *t, uint32_t job, pid_t pid, int *nadded)
{
	struct tree_ctx c = { .t = t, .job = job };
	char path[64];
	int err;

	snprintf(path, sizeof(path), "/proc/%d", pid);
	if (access(path, F_OK)) {
		ctl_err("tracker: no process %d", pid);
		return -ESRCH;
	}
	err = add_tree_rec(&c, pid);
	*nadded = c.n;
	return err;
}
