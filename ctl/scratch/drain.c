// SPDX-License-Identifier: GPL-2.0
/*
 * The drainer: watches every folder of the scratch with inotify and copies
 * each file closed there (IN_CLOSE_WRITE, or renamed in: IN_MOVED_TO) to
 * the same relative path under drain_to, first in, first out. At start it
 * watches first and then scans, so a file closed while no drainer ran is
 * queued (those by modification time, the order they were closed in) and
 * one closed during the scan is queued by its event.
 *
 * A file some process still has open for writing is left for its close.
 * A copy goes to ".NAME" SCRATCH_TMP_SUFFIX in the destination folder, is
 * fsync'ed, renamed over NAME, and the folder fsync'ed: NAME is at every
 * moment the previous complete file or the new complete one. Only then is
 * the file logged as durable (drained.log). A copy during which the source
 * changed is thrown away; the source's next close queues it again. The
 * copy's pages, clean once fsync'ed, are dropped from the page cache
 * (POSIX_FADV_DONTNEED): a checkpoint on the store is read back rarely, and
 * cached it would take memory from the dataset and the jobs (on the CXL
 * node the dataset is steered to, where the drainer's allocations fall back
 * when the CPU node is full: Documentation/results/scratch.md).
 *
 * The rate cap is a token bucket of c->rate bytes/s filled in chunks of an
 * eighth of a second's worth (64 KiB .. 1 MiB).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"
#include "scratch/internal.h"

#define WATCH_MASK	(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_ONLYDIR | IN_DONT_FOLLOW)
#define CHUNK_MAX	(1 << 20)
#define CHUNK_MIN	(64 << 10)
#define RETRY_S		1.0

struct drainer {
	const struct scratch_cfg *c;
	struct drain_log log;	/* as loaded at the last scan */
	int ino, sfd;
	char **wdir;		/* wd -> folder relative to the mount */
	int nwd;
	char **q;		/* the queue: q[head..n) */
	size_t head, n, cap;
	double tokens, last, chunk;
	char *buf;
};

static bool term_pending(void)
{
	sigset_t s;

	return !sigpending(&s) && (sigismember(&s, SIGTERM) || sigismember(&s, SIGINT) ||
				   sigismember(&s, SIGHUP));
}

static void sleep_s(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (time_t)s) * 1e9) };

	nanosleep(&ts, NULL);
}

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int read_events(struct drainer *d);

/*
 * Wait s seconds, reading the scratch's events as they come, so that a file
 * closed while a copy waits for its tokens is journaled as queued within
 * the time of its journal line's fdatasync, not after the copy.
 */
static int wait_events(struct drainer *d, double s)
{
	struct pollfd pfd = { .fd = d->ino, .events = POLLIN };
	double end = now_s() + s, left;
	int err = 0;

	while (!err && (left = end - now_s()) > 0) {
		if (poll(&pfd, 1, (int)(left * 1000) + 1) > 0)
			err = read_events(d);
	}
	return err;
}

/* take n bytes from the bucket, waiting for them (and reading events meanwhile) */
static int throttle(struct drainer *d, size_t n)
{
	double now = now_s();
	int err = 0;

	if (d->c->rate <= 0)
		return read_events(d);
	d->tokens += (now - d->last) * d->c->rate;
	if (d->tokens > d->chunk)
		d->tokens = d->chunk;	/* the burst: one chunk */
	d->last = now;
	if (d->tokens < (double)n) {
		err = wait_events(d, ((double)n - d->tokens) / d->c->rate);
		now = now_s();
		d->tokens += (now - d->last) * d->c->rate;
		d->last = now;
	} else {
		err = read_events(d);
	}
	d->tokens -= (double)n;
	return err;
}

static int enqueue(struct drainer *d, const char *rel)
{
	char **nq;

	scratch_journal_queued(d->c, rel);	/* durable before its copy begins */
	for (size_t i = d->head; i < d->n; i++)
		if (!strcmp(d->q[i], rel))
			return 0;	/* queued: it is copied as it is then */
	if (d->head && d->n == d->cap) {
		memmove(d->q, d->q + d->head, (d->n - d->head) * sizeof(*d->q));
		d->n -= d->head;
		d->head = 0;
	}
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 64;
		nq = realloc(d->q, d->cap * sizeof(*nq));
		if (!nq)
			return -ENOMEM;
		d->q = nq;
	}
	d->q[d->n] = strdup(rel);
	if (!d->q[d->n])
		return -ENOMEM;
	d->n++;
	return 0;
}

/* watch folder rel and every folder below it */
static int watch_tree(struct drainer *d, const char *rel)
{
	char path[PATH_MAX], sub[PATH_MAX];
	struct dirent *de;
	int wd, err = 0;
	DIR *dir;

	if (snprintf(path, sizeof(path), "%s%s%s", d->c->mnt, *rel ? "/" : "", rel) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	wd = inotify_add_watch(d->ino, path, WATCH_MASK);
	if (wd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (wd >= d->nwd) {
		char **nw = realloc(d->wdir, (wd + 1) * sizeof(*nw));

		if (!nw)
			return -ENOMEM;
		memset(nw + d->nwd, 0, (wd + 1 - d->nwd) * sizeof(*nw));
		d->wdir = nw;
		d->nwd = wd + 1;
	}
	free(d->wdir[wd]);
	d->wdir[wd] = strdup(rel);
	if (!d->wdir[wd])
		return -ENOMEM;
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while (!err && (de = readdir(dir))) {
		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		if (snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "", de->d_name) >=
		    (int)sizeof(sub))
			continue;	/* too deep for a path: its files fail to drain, said */
		err = watch_tree(d, sub);
	}
	closedir(dir);
	return err;
}

struct pend {
	char *path;
	int64_t mtime;
};

struct scan {
	struct drainer *d;
	struct pend *v;
	size_t n, cap;
};

static int scan_file(void *arg, const char *rel, const struct stat *st)
{
	struct scan *s = arg;
	struct pend *nv;

	if (drain_log_find(&s->d->log, rel, st))
		return 0;	/* durable as it is */
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		nv = realloc(s->v, s->cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		s->v = nv;
	}
	s->v[s->n].path = strdup(rel);
	s->v[s->n].mtime = stat_mtime_ns(st);
	return s->v[s->n++].path ? 0 : -ENOMEM;
}

static int cmp_pend(const void *a, const void *b)
{
	const struct pend *x = a, *y = b;

	return x->mtime != y->mtime ? (x->mtime > y->mtime) - (x->mtime < y->mtime)
				    : strcmp(x->path, y->path);
}

/* queue the files under rel that the log does not have as durable, oldest first */
static int scan_tree(struct drainer *d, const char *rel)
{
	struct scan s = { .d = d };
	int err;

	err = scratch_walk(d->c->mnt, rel, scan_file, &s);
	if (err == -ENOENT)
		err = 0;
	if (s.n)
		qsort(s.v, s.n, sizeof(*s.v), cmp_pend);
	for (size_t i = 0; i < s.n; i++) {
		if (!err)
			err = enqueue(d, s.v[i].path);
		free(s.v[i].path);
	}
	free(s.v);
	return err;
}

static int rescan(struct drainer *d)
{
	int err;

	drain_log_free(&d->log);
	err = drain_log_load(d->c, &d->log);
	return err ?: scan_tree(d, "");
}

/* mkdir -p of the destination folder dir, as the owner (mode 0755 less the umask) */
static int mkdirs(char *dir)
{
	char *p = dir + 1;

	for (;; p++) {
		if (*p && *p != '/')
			continue;
		char save = *p;

		*p = 0;
		if (mkdir(dir, 0755) && errno != EEXIST) {
			*p = save;
			return -errno;
		}
		*p = save;
		if (!save)
			return 0;
	}
}

/*
 * the source's bytes into fd, at the rate; -EINTR when asked to stop. The
 * events are read between chunks and while the rate cap waits (throttle).
 */
static int copy_data(struct drainer *d, int src, int dst)
{
	ssize_t r, w;
	size_t want;
	int err;

	for (;;) {
		if (term_pending())
			return -EINTR;
		want = (size_t)d->chunk;
		r = read(src, d->buf, want);
		if (r < 0)
			return -errno;
		if (!r)
			return 0;
		err = throttle(d, r);
		if (err)
			return err;
		for (ssize_t off = 0; off < r; off += w) {
			w = write(dst, d->buf + off, r - off);
			if (w < 0)
				return -errno;
		}
	}
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       stat_mtime_ns(a) == stat_mtime_ns(b);
}

/*
 * tmp -> final, then the folder's fsync: durable from here. -EAGAIN when
 * the source changed while it was read (the copy is not its content).
 */
static int publish(int src, const struct stat *before, int dst, const char *tmp,
		   const char *final, const char *dir)
{
	struct stat after;

	if (fsync(dst))
		return -errno;
	/* advice only: its failure leaves the copy cached, nothing else */
	(void)posix_fadvise(dst, 0, 0, POSIX_FADV_DONTNEED);
	if (fstat(src, &after))
		return -errno;
	if (!same_file(before, &after))
		return -EAGAIN;
	if (rename(tmp, final))
		return -errno;
	return fsync_dir(dir);
}

struct dest {
	char dir[PATH_MAX], final[PATH_MAX], tmp[PATH_MAX + 32];
};

static int dest_paths(const struct drainer *d, const char *rel, struct dest *p)
{
	const char *slash = strrchr(rel, '/');
	const char *base = slash ? slash + 1 : rel;

	if (snprintf(p->final, sizeof(p->final), "%s/%s", d->c->drain_to, rel) >=
	    (int)sizeof(p->final))
		return -ENAMETOOLONG;
	snprintf(p->dir, sizeof(p->dir), "%s", p->final);
	p->dir[strlen(p->final) - strlen(base) - 1] = 0;
	if (snprintf(p->tmp, sizeof(p->tmp), "%s/.%s" SCRATCH_TMP_SUFFIX, p->dir, base) >=
	    (int)sizeof(p->tmp))
		return -ENAMETOOLONG;
	return 0;
}

/* with --evict-drained: the durable file leaves scratch, unless written since */
static void evict(const struct drainer *d, const char *src, const struct stat *st)
{
	struct stat now;

	if (d->c->evict && !lstat(src, &now) && same_file(st, &now) && unlink(src))
		ctl_err("%s: not evicted: %s", src, strerror(errno));
}

/* fd of process pid opened for writing: its fdinfo "flags:" */
static bool fd_writes(const char *pid, const char *fd)
{
	char path[600], line[64];
	unsigned int flags = 0;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s", pid, fd);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "flags: %o", &flags) == 1;
	fclose(f);
	return found && (flags & O_ACCMODE) != O_RDONLY;
}

static bool pid_writes(const char *pid, const char *src)
{
	char dir[300], path[600], target[PATH_MAX];
	struct dirent *de;
	bool found = false;
	ssize_t n;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%s/fd", pid);
	d = opendir(dir);
	if (!d)
		return false;	/* gone, or another user's */
	while (!found && (de = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		found = !strcmp(target, src) && fd_writes(pid, de->d_name);
	}
	closedir(d);
	return found;
}

/*
 * Whether a process this drainer can see (the owner's; every one for root)
 * has src open for writing: then its content is not final, and its close
 * queues it again. A scan of /proc per file, as lsof does it.
 */
static bool open_for_write(const char *src)
{
	char self[16];
	struct dirent *de;
	bool found = false;
	DIR *d = opendir("/proc");

	if (!d)
		return false;
	snprintf(self, sizeof(self), "%d", (int)getpid());
	while (!found && (de = readdir(d)))
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9' && strcmp(de->d_name, self))
			found = pid_writes(de->d_name, src);
	closedir(d);
	return found;
}

/* copy one file to its destination and log it durable */
static int drain_one(struct drainer *d, const char *rel)
{
	char src[PATH_MAX];
	struct stat st;
	struct dest p;
	int sfd, dfd, err;

	if (snprintf(src, sizeof(src), "%s/%s", d->c->mnt, rel) >= (int)sizeof(src))
		return -ENAMETOOLONG;
	sfd = open(src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0) {
		if (errno != ENOENT)
			return -errno;
		scratch_journal_gone(d->c, rel);
		return 0;	/* removed: nothing to keep */
	}
	err = fstat(sfd, &st) ? -errno : 0;
	if (err || !S_ISREG(st.st_mode) || drain_log_find(&d->log, rel, &st) ||
	    open_for_write(src))
		goto close_src;
	err = dest_paths(d, rel, &p) ?: mkdirs(p.dir);
	if (err)
		goto close_src;
	dfd = open(p.tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, st.st_mode & 0777);
	if (dfd < 0) {
		err = -errno;
		goto close_src;
	}
	err = copy_data(d, sfd, dfd) ?: publish(sfd, &st, dfd, p.tmp, p.final, p.dir);
	close(dfd);
	if (err) {
		unlink(p.tmp);
		goto close_src;
	}
	scratch_journal_durable(d->c, rel, &st);
	err = drain_log_append(d->c, rel, &st, wall_s());
	if (!err)
		evict(d, src, &st);
close_src:
	close(sfd);
	return err;
}

/* one inotify event: a file to queue, or a new folder to watch and scan */
static int on_event(struct drainer *d, const struct inotify_event *ev)
{
	char rel[PATH_MAX];
	const char *dir;

	if (ev->mask & IN_Q_OVERFLOW)
		return rescan(d);	/* events were lost: the log and the tree say what is left */
	if (ev->mask & IN_IGNORED) {
		if (ev->wd >= 0 && ev->wd < d->nwd) {
			free(d->wdir[ev->wd]);
			d->wdir[ev->wd] = NULL;
		}
		return 0;
	}
	if (ev->wd < 0 || ev->wd >= d->nwd || !d->wdir[ev->wd] || !ev->len || ev->name[0] == '.')
		return 0;
	dir = d->wdir[ev->wd];
	if (snprintf(rel, sizeof(rel), "%s%s%s", dir, *dir ? "/" : "", ev->name) >= (int)sizeof(rel))
		return 0;
	if (ev->mask & IN_ISDIR) {
		if (!(ev->mask & (IN_CREATE | IN_MOVED_TO)))
			return 0;
		return watch_tree(d, rel) ?: scan_tree(d, rel);
	}
	if (ev->mask & (IN_CLOSE_WRITE | IN_MOVED_TO))
		return enqueue(d, rel);
	return 0;
}

/* read the pending events (the fd is non-blocking) */
static int read_events(struct drainer *d)
{
	char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t len;
	int err = 0;

	while ((len = read(d->ino, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + len && !err;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			err = on_event(d, ev);
			p += sizeof(*ev) + ev->len;
		}
		if (err)
			return err;
	}
	return len < 0 && errno != EAGAIN ? -errno : 0;
}

/* the head of the queue, copied; a failed copy goes to the back after a pause */
static int drain_head(struct drainer *d)
{
	char *rel = d->q[d->head++];
	int err = drain_one(d, rel);

	if (err == -EINTR) {
		free(rel);
		return err;
	}
	if (err && err != -EAGAIN) {
		ctl_err("%s: not drained yet: %s (tried again in %.0f s)", rel, strerror(-err),
			RETRY_S);
		sleep_s(RETRY_S);
	}
	/* -EAGAIN: written during the copy; its close queued it again */
	if (err && err != -EAGAIN)
		err = enqueue(d, rel);
	else
		err = 0;
	free(rel);
	return err;
}

static int drain_loop(struct drainer *d)
{
	struct pollfd pfd[2] = { { .fd = d->ino, .events = POLLIN }, { .fd = d->sfd, .events = POLLIN } };
	int err = 0;

	while (!err && !term_pending()) {
		err = read_events(d);
		if (err)
			break;
		if (d->head < d->n) {
			err = drain_head(d);
			continue;
		}
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			err = -errno;
	}
	return err == -EINTR ? 0 : err;
}

static int drainer_init(struct drainer *d, const struct scratch_cfg *c)
{
	sigset_t term;

	memset(d, 0, sizeof(*d));
	d->c = c;
	d->sfd = d->ino = -1;
	d->chunk = c->rate > 0 ? c->rate / 8 : CHUNK_MAX;
	d->chunk = d->chunk > CHUNK_MAX ? CHUNK_MAX : d->chunk < CHUNK_MIN ? CHUNK_MIN : d->chunk;
	d->last = now_s();
	d->buf = malloc(CHUNK_MAX);
	if (!d->buf)
		return -ENOMEM;
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigaddset(&term, SIGINT);
	sigaddset(&term, SIGHUP);
	sigprocmask(SIG_BLOCK, &term, NULL);
	d->sfd = signalfd(-1, &term, SFD_CLOEXEC | SFD_NONBLOCK);
	d->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (d->sfd < 0 || d->ino < 0)
		return -errno;
	if (access(c->drain_to, W_OK | X_OK))
		return -errno;
	return watch_tree(d, "") ?: rescan(d);
}

static void drainer_free(struct drainer *d)
{
	for (size_t i = d->head; i < d->n; i++)
		free(d->q[i]);
	free(d->q);
	for (int i = 0; i < d->nwd; i++)
		free(d->wdir[i]);
	free(d->wdir);
	drain_log_free(&d->log);
	free(d->buf);
	if (d->ino >= 0)
		close(d->ino);
	if (d->sfd >= 0)
		close(d->sfd);
}

int scratch_drain_main(const struct scratch_cfg *c, int ready)
{
	struct drainer d;
	int err;

	err = drainer_init(&d, c);
	if (ready >= 0) {
		if (write(ready, &err, sizeof(err)) != sizeof(err) && !err)
			err = -EPIPE;
		close(ready);
	}
	if (!err)
		err = drain_loop(&d);
	if (err)
		ctl_err("drainer of %s stopped: %s", c->name, strerror(-err));
	drainer_free(&d);
	return err;
}
