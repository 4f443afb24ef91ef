/* SPDX-License-Identifier: GPL-2.0 */
/*
 * I/O counters of a process group from /proc/PID/io. A process's counters
 * include its reaped children (the kernel adds them on reap), so summing
 * the live members of the group counts the whole tree that stayed in it.
 */
#ifndef TANDEM_CTL_PROCIO_H
#define TANDEM_CTL_PROCIO_H

#include <stdint.h>
#include <sys/types.h>

struct procio {
	uint64_t rchar;		/* bytes returned by read(2) and friends */
	uint64_t read_bytes;	/* bytes fetched from storage */
	int nproc;		/* live members found */
};

/* Sum over the processes whose process group is pgid. */
int procio_group(pid_t pgid, struct procio *io);
/* Counters of one process; -ENOENT when it is gone. */
int procio_pid(pid_t pid, struct procio *io);

#endif
