// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
