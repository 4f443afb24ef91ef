// SPDX-License-Identifier: GPL-2.0
/*
 * The prefetch without tandem.ko (release.h, struct rel_uprefetch): what
 * `run` uses for a learned order's prefetch when the module is not loaded.
 * One thread of tandemctl reads the files of the order, in it, with 1 MiB
 * pread()s into one buffer, from just before the first release: a single
 * stream, one request in flight, as tandem.ko's prefetch loads one extent at
 * a time. What is cached costs a copy and no I/O (a read of a cached range
 * is how it skips it); a range a job is loading is waited for. With a cap
 * (bytes/s) it paces its requests: it starts no read before cap says it may.
 * The pages stay in the page cache where the kernel puts them (no
 * steering). Still running when the jobs have ended, it stops. Its figures
 * go to the struct rel_module the report reads, as tandem.ko's would.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"
#include "release/release.h"

#define UPF_CHUNK	(1 << 20)
#define UPF_PAGE	4096

/* wait until the cap lets `sent` bytes have been requested; false: told to stop */
static bool upf_pace(struct rel_uprefetch *u, double sent)
{
	double due;

	if (u->cap_bps <= 0)
		return !atomic_load(&u->stop);
	due = u->t_start + sent / u->cap_bps;
	while (!atomic_load(&u->stop) && now_s() < due) {
		double w = due - now_s();
		struct timespec ts = { .tv_sec = (time_t)w, .tv_nsec = (long)((w - (time_t)w) * 1e9) };

		if (w > 0.01)	/* short steps: the end of the jobs is seen within 10 ms */
			ts = (struct timespec){ .tv_nsec = 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return !atomic_load(&u->stop);
}

/* one file of the order: 0, or -errno (u->stop: 1) */
static int upf_file(struct rel_uprefetch *u, const char *path, char *buf, double *sent)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOATIME);
	int err = 0;

	if (fd < 0 && errno == EPERM)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (off_t off = 0;; off += UPF_CHUNK) {
		ssize_t got;

		if (!upf_pace(u, *sent)) {
			err = 1;
			break;
		}
		got = pread(fd, buf, UPF_CHUNK, off);
		if (got < 0 && errno == EINTR)
			got = pread(fd, buf, UPF_CHUNK, off);
		if (got <= 0) {
			err = got < 0 ? -errno : 0;
			break;
		}
		*sent += got;
		atomic_fetch_add(&u->pages, ((uint64_t)got + UPF_PAGE - 1) / UPF_PAGE);
	}
	close(fd);
	return err;
}

static void *upf_thread(void *arg)
{
	struct rel_uprefetch *u = arg;
	char *buf = malloc(UPF_CHUNK);
	double sent = 0;
	int err = buf ? 0 : -ENOMEM;

	for (size_t i = 0; i < u->files->n && !err; i++)
		err = upf_file(u, u->files->paths[i], buf, &sent);
	u->seconds = now_s() - u->t_start;
	u->state = err == 1 ? TANDEM_PREFETCH_CANCELLED :
		   err ? TANDEM_PREFETCH_FAILED : TANDEM_PREFETCH_DONE;
	u->err = err < 0 ? err : 0;
	free(buf);
	return NULL;
}

/* the order's pages, for the report's pages_total */
static uint64_t upf_total(const struct file_list *fl)
{
	uint64_t pages = 0;
	struct stat st;

	for (size_t i = 0; i < fl->n; i++)
		if (!stat(fl->paths[i], &st))
			pages += ((uint64_t)st.st_size + UPF_PAGE - 1) / UPF_PAGE;
	return pages;
}

static int upf_register(void *state, const struct rel_dataset *d)
{
	struct rel_uprefetch *u = state;
	sigset_t all, old;
	int err;

	u->started = false;
	if (!u->files || !u->files->n)
		return -ENOENT;
	atomic_store(&u->stop, false);
	atomic_store(&u->pages, 0);
	u->total = upf_total(u->files);
	u->state = TANDEM_PREFETCH_RUNNING;
	u->t_start = now_s();
	/* every signal blocked in the thread: the engine takes them with sigtimedwait() */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&u->tid, NULL, upf_thread, u);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		ctl_err("prefetch of dataset %s not started (%s); running without it", d->name,
			strerror(-err));
		return err;
	}
	u->started = true;
	return 0;
}

/* the jobs have ended: stop it, and its figures to the report's module part */
static void upf_finish(void *state)
{
	struct rel_uprefetch *u = state;
	struct rel_module *m = u->report;

	if (!u->started)
		return;
	atomic_store(&u->stop, true);
	pthread_join(u->tid, NULL);
	u->started = false;
	if (u->err)
		ctl_err("prefetch stopped: %s", strerror(-u->err));
	if (!m)
		return;
	m->prefetch_started = true;
	m->prefetch_by = "tandemctl";
	m->pf_have = true;
	m->pf_state = u->state;
	m->pf_done = atomic_load(&u->pages);
	m->pf_total = u->total;
	m->pf_seconds = u->seconds;
	m->pf_request = u->t_start;
}

const struct rel_ops rel_uprefetch_ops = {
	.name = "prefetch",
	.dataset_register = upf_register,
	.finish = upf_finish,
};
