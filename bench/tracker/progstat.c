// SPDX-License-Identifier: GPL-2.0
/*
 * progstat links DIR | progstat pid PID: the run-time statistics of some
 * BPF programs, one line each: "name run_cnt run_time_ns". The programs
 * are those of the bpf_link objects pinned in DIR as link_* (a loaded
 * tracker), or those whose program or link fds process PID holds (the
 * cachestat peer). run_time_ns and run_cnt count only while
 * kernel.bpf_stats_enabled is 1. Built statically so that it runs in the
 * VM rig's busybox image as on the host; bench/tracker/run.sh uses it
 * instead of bpftool, which the image lacks.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#define MAX_PROGS 64

static int print_prog(__u32 id)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id);

	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		close(fd);
		return -errno;
	}
	close(fd);
	printf("%s %llu %llu\n", info.name, (unsigned long long)info.run_cnt,
	       (unsigned long long)info.run_time_ns);
	return 0;
}

/* add ID to IDS (N of them) unless it is there */
static void add_id(__u32 *ids, int *n, __u32 id)
{
	for (int i = 0; i < *n; i++)
		if (ids[i] == id)
			return;
	if (*n < MAX_PROGS)
		ids[(*n)++] = id;
}

static int links_in(const char *dir, __u32 *ids, int *n)
{
	char path[4096];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct bpf_link_info info = {};
		__u32 len = sizeof(info);
		int fd;

		if (strncmp(de->d_name, "link_", 5))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len))
			add_id(ids, n, info.prog_id);
		close(fd);
	}
	closedir(d);
	return 0;
}

/* the prog_id lines of /proc/PID/fdinfo/N: program fds and link fds alike */
static int fds_of(const char *pid, __u32 *ids, int *n)
{
	char path[4096], line[256];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%s/fdinfo", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		FILE *f;
		unsigned int id;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s", pid, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "prog_id: %u", &id) == 1)
				add_id(ids, n, id);
		fclose(f);
	}
	closedir(d);
	return 0;
}

int main(int argc, char **argv)
{
	__u32 ids[MAX_PROGS];
	int n = 0, err;

	if (argc != 3 || (strcmp(argv[1], "links") && strcmp(argv[1], "pid"))) {
		fprintf(stderr, "usage: progstat links DIR | progstat pid PID\n");
		return 2;
	}
	err = !strcmp(argv[1], "links") ? links_in(argv[2], ids, &n) : fds_of(argv[2], ids, &n);
	if (err) {
		fprintf(stderr, "progstat: %s: %s\n", argv[2], strerror(-err));
		return 1;
	}
	for (int i = 0; i < n; i++)
		print_prog(ids[i]);
	return 0;
}
