// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

int procio_stat(pid_t pid, struct proc_stat *ps)
{
	unsigned long long ut, st, cut, cst;
	char path[64], buf[1024], *p;
	int fd, err, ppid, pgrp;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	err = n < 0 ? -errno : -EIO;
	close(fd);
	if (n <= 0)
		return err;
	buf[n] = 0;
	/* the command name is in parentheses and may hold anything: after the last ')' */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %d %d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
			 &ps->state, &ppid, &pgrp, &ut, &st, &cut, &cst) != 7)
		return -EIO;
	ps->ppid = ppid;
	ps->pgrp = pgrp;
	ps->cpu_s = (double)(ut + st + cut + cst) / sysconf(_SC_CLK_TCK);
	return 0;
}

int procio_group(pid_t pgid, struct procio *io)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	memset(io, 0, sizeof(*io));
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		struct proc_stat ps;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		if (!procio_stat(atoi(e->d_name), &ps) && ps.pgrp == pgid)
			procio_pid(atoi(e->d_name), io);	/* gone meanwhile: skip */
	}
	closedir(d);
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
		struct proc_stat ps;

		if (!isdigit((unsigned char)e->d_name[0]) ||
		    procio_stat(atoi(e->d_name), &ps) || ps.pgrp != pgid)
			continue;
		if (*n < max) {
			procio_pid(atoi(e->d_name), &io);	/* gone meanwhile: 0 */
			out[*n] = (struct procio_proc){ .pid = atoi(e->d_name),
							.rchar = io.rchar, .cpu_s = ps.cpu_s };
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
