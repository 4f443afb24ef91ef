/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which process opens a file of a dataset, as it happens: fanotify FAN_OPEN
 * on each directory that holds one of the files, or on the mount of the
 * dataset's directory when there are more than OPENWATCH_MAX_DIR_MARKS of
 * them. Needs CAP_SYS_ADMIN. Used by run's read-order hook
 * (release/hook_order.c) and by calibrate's warm runs without the tracker
 * (calibrate/warm.c), which learn there when a job first opens the dataset.
 */
#ifndef TANDEM_CTL_OPENWATCH_H
#define TANDEM_CTL_OPENWATCH_H

#include <stdbool.h>
#include <sys/types.h>

#include "lib/files.h"

#define OPENWATCH_MAX_DIR_MARKS	1024	/* more directories: one mark on the mount */

struct openwatch {
	int fan;		/* the fanotify fd, non-blocking; < 0: none */
	bool mount_mark;	/* the mark is on the dataset's mount */
	bool lost;		/* events lost: the queue overflowed, or a version unknown */
};

/*
 * Watch the opens of files' files, dir being the dataset's directory (the
 * mount to mark when there are many directories). 0, or -errno with
 * w->fan < 0: -EPERM without CAP_SYS_ADMIN.
 */
int openwatch_init(struct openwatch *w, const struct file_list *files, const char *dir);
/*
 * Read what is queued: fn(arg, idx, pid) for each open of a regular file
 * that ids holds (idx its index there; pid the process that opened it).
 * Returns the events read, dataset files or not.
 */
int openwatch_drain(struct openwatch *w, const struct file_index *ids,
		    void (*fn)(void *arg, long idx, pid_t pid), void *arg);
/* Remove the marks (later opens cost nothing); 0 or -errno. */
int openwatch_flush(struct openwatch *w);
void openwatch_close(struct openwatch *w);

#endif
