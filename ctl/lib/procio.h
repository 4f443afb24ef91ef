/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A process's /proc/PID/stat (the one parser of it), and the I/O counters
 * of a process group from /proc/PID/io. A process's counters
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

/* One process's /proc/PID/stat: the fields Tandem reads. */
struct proc_stat {
	char state;		/* R, S, D, Z (zombie), X (dead), ... */
	pid_t ppid, pgrp;
	double cpu_s;		/* utime + stime + cutime + cstime, seconds */
};

/* 0, -errno when it cannot be read (-ENOENT: gone), -EIO when malformed */
int procio_stat(pid_t pid, struct proc_stat *ps);

/* Sum over the processes whose process group is pgid. */
int procio_group(pid_t pgid, struct procio *io);
/* Counters of one process; -ENOENT when it is gone. */
int procio_pid(pid_t pid, struct procio *io);

/*
 * One process of a group: its I/O counters and its CPU time, user + system,
 * its own and its reaped children's (/proc/PID/stat utime, stime, cutime,
 * cstime): summed over the live members, the CPU of the whole tree.
 */
struct procio_proc {
	pid_t pid;
	uint64_t rchar;
	double cpu_s;
};

/* The members of group pgid, up to max of them in out; *n found (may exceed max). */
int procio_group_procs(pid_t pgid, struct procio_proc *out, int max, int *n);
/*
 * Whether process pid has a file open that match() accepts (by st_dev,
 * st_ino of /proc/PID/fd/N): 1 yes, 0 no, -errno when it cannot be read.
 */
int procio_open_match(pid_t pid, int (*match)(void *ctx, dev_t dev, ino_t ino), void *ctx);

#endif
