// SPDX-License-Identifier: GPL-2.0
/* Dataset opens by process, from fanotify (openwatch.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/openwatch.h"

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* each file's directory, sorted; *n of them (with repeats) */
static char **file_dirs(const struct file_list *files, size_t *n)
{
	char **dirs = calloc(files->n ? files->n : 1, sizeof(*dirs));

	*n = 0;
	if (!dirs)
		return NULL;
	for (size_t f = 0; f < files->n; f++) {
		char *slash;

		dirs[*n] = strdup(files->paths[f]);
		if (!dirs[*n])
			break;
		slash = strrchr(dirs[*n], '/');
		if (slash == dirs[*n])
			slash[1] = 0;		/* a file in / */
		else if (slash)
			*slash = 0;
		(*n)++;
	}
	if (*n < files->n) {
		for (size_t i = 0; i < *n; i++)
			free(dirs[i]);
		free(dirs);
		return NULL;
	}
	qsort(dirs, *n, sizeof(*dirs), str_cmp);
	return dirs;
}

/* FAN_OPEN on each directory holding a file, or on dir's mount. */
static int openwatch_marks(struct openwatch *w, const struct file_list *files, const char *dir)
{
	size_t n, uniq = 0;
	char **dirs = file_dirs(files, &n);
	int err = 0;

	if (!dirs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (!i || strcmp(dirs[i], dirs[i - 1]))
			uniq++;
	if (uniq > OPENWATCH_MAX_DIR_MARKS) {
		if (fanotify_mark(w->fan, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_OPEN, AT_FDCWD, dir))
			err = -errno;
		w->mount_mark = true;
	}
	for (size_t i = 0; !err && !w->mount_mark && i < n; i++)
		if ((!i || strcmp(dirs[i], dirs[i - 1])) &&
		    fanotify_mark(w->fan, FAN_MARK_ADD, FAN_OPEN | FAN_EVENT_ON_CHILD, AT_FDCWD,
				  dirs[i]))
			err = -errno;
	for (size_t i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
	return err;
}

int openwatch_init(struct openwatch *w, const struct file_list *files, const char *dir)
{
	int err;

	*w = (struct openwatch){ .fan = -1 };
	w->fan = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK,
			       O_RDONLY | O_LARGEFILE | O_CLOEXEC);
	if (w->fan < 0)
		return -errno;
	err = openwatch_marks(w, files, dir);
	if (err)
		openwatch_close(w);
	return err;
}

/* fn for the event's file when it is one of ids' */
static void openwatch_event(const struct fanotify_event_metadata *m, const struct file_index *ids,
			    void (*fn)(void *arg, long idx, pid_t pid), void *arg)
{
	struct stat st;
	long idx;

	if (fstat(m->fd, &st) || !S_ISREG(st.st_mode))
		return;
	idx = file_index_find(ids, st.st_dev, st.st_ino);
	if (idx >= 0)
		fn(arg, idx, m->pid);
}

int openwatch_drain(struct openwatch *w, const struct file_index *ids,
		    void (*fn)(void *arg, long idx, pid_t pid), void *arg)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
	struct fanotify_event_metadata *m;
	ssize_t len;
	int events = 0;

	if (w->fan < 0)
		return 0;
	while ((len = read(w->fan, buf, sizeof(buf))) > 0) {
		for (m = (void *)buf; FAN_EVENT_OK(m, len); m = FAN_EVENT_NEXT(m, len)) {
			if (m->vers != FANOTIFY_METADATA_VERSION) {
				w->lost = true;
				return events;
			}
			if (m->mask & FAN_Q_OVERFLOW)
				w->lost = true;
			if (m->fd >= 0) {
				openwatch_event(m, ids, fn, arg);
				close(m->fd);
			}
			events++;
		}
	}
	return events;
}

int openwatch_flush(struct openwatch *w)
{
	if (w->fan < 0)
		return 0;
	return fanotify_mark(w->fan, FAN_MARK_FLUSH | (w->mount_mark ? FAN_MARK_MOUNT : 0), 0,
			     AT_FDCWD, NULL) ? -errno : 0;
}

void openwatch_close(struct openwatch *w)
{
	if (w->fan >= 0)
		close(w->fan);
	w->fan = -1;
}
