// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/procio.h"

int procio_pid(pid_t pid, struct procio *io)
{
	char path[64], key[32];
	unsigned long long v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/io", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fscanf(f, "%31[^:]: %llu\n", key, &v) == 2) {
		if (!strcmp(key, "rchar"))
			io->rchar += v;
		else if (!strcmp(key, "read_bytes"))
			io->read_bytes += v;
	}
	fclose(f);
	io->nproc++;
	return 0;
}

/* Field 5 of /proc/PID/stat, after the parenthesised command name. */
static pid_t pid_pgrp(const char *pid)
{
	char path[64], buf[512], *p;
	int pgrp = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		if (sscanf(p + 1, " %*c %*d %d", &pgrp) != 1)
			pgrp = -1;
	fclose(f);
	return pgrp;
}

int procio_group(pid_t pgid, struct procio *io)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	memset(io, 0, sizeof(*io));
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		if (pid_pgrp(e->d_name) == pgid)
			procio_pid(atoi(e->d_name), io);	/* gone meanwhile: skip */
	}
	closedir(d);
	return 0;
}

/* pgrp and utime + stime + cutime + cstime (fields 5, 14-17) of /proc/PID/stat */
static int pid_stat(const char *pid, pid_t *pgrp, double *cpu_s)
{
	unsigned long long ut, st, cut, cst;
	char path[64], buf[1024], *p;
	int ok = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		ok = sscanf(p + 1, " %*c %*d %d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
			    pgrp, &ut, &st, &cut, &cst) == 5;
	fclose(f);
	if (!ok)
		return -EIO;
	*cpu_s = (double)(ut + st + cut + cst) / sysconf(_SC_CLK_TCK);
	return 0;
}

int procio_group_procs(pid_t pgid, struct procio_proc *out, int max, int *n)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	*n = 0;
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		struct procio io = { 0 };
		pid_t pgrp;
		double cpu;

		if (!isdigit((unsigned char)e->d_name[0]) ||
		    pid_stat(e->d_name, &pgrp, &cpu) || pgrp != pgid)
			continue;
		if (*n < max) {
			procio_pid(atoi(e->d_name), &io);	/* gone meanwhile: 0 */
			out[*n] = (struct procio_proc){ .pid = atoi(e->d_name),
							.rchar = io.rchar, .cpu_s = cpu };
		}
		(*n)++;
	}
	closedir(d);
	return 0;
}

int procio_open_match(pid_t pid, int (*match)(void *ctx, dev_t dev, ino_t ino), void *ctx)
{
	char path[64], fd_path[340];
	struct dirent *e;
	struct stat st;
	int found = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while (!found && (e = readdir(d))) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(fd_path, sizeof(fd_path), "%s/%s", path, e->d_name);
		if (!stat(fd_path, &st) && S_ISREG(st.st_mode))
			found = match(ctx, st.st_dev, st.st_ino);
	}
	closedir(d);
	return found;
}
