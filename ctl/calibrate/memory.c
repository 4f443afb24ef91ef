// SPDX-License-Identifier: GPL-2.0
/* Calibration: memory per NUMA node, and the warm-run compute rate. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "calibrate/calibrate.h"
#include "lib/procio.h"
#include "lib/util.h"

#define NODE_SYS	"/sys/devices/system/node"
#define MAX_NODE_ID	1024

static int read_meminfo_kb(const char *path, const char *want, double *out)
{
	char line[256], key[64];
	unsigned long long v;
	FILE *f = fopen(path, "r");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		/* "Node 0 MemFree:  123 kB" or "MemAvailable:  123 kB" */
		const char *p = strncmp(line, "Node ", 5) ? line : strchr(line + 5, ' ');

		if (p && sscanf(p, " %63[^:]: %llu", key, &v) == 2 && !strcmp(key, want)) {
			*out = v * 1024.0;
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

static bool node_has_cpus(int id)
{
	char path[96], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), NODE_SYS "/node%d/cpulist", id);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return buf[0] >= '0' && buf[0] <= '9';
}

/* High watermark of each node (kswapd reclaims up to it), bytes. */
static void zone_high(double *high, int max)
{
	long psz = sysconf(_SC_PAGESIZE);
	FILE *f = fopen("/proc/zoneinfo", "r");
	unsigned long long v;
	char line[256];
	int node = -1;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Node %d, zone", &node) == 1)
			continue;
		if (node >= 0 && node < max && sscanf(line, " high %llu", &v) == 1)
			high[node] += (double)v * psz;
	}
	fclose(f);
}

static int read_node(int id, const double *high, struct profile_node *n)
{
	char path[96];
	double act = 0, inact = 0;
	int err;

	snprintf(path, sizeof(path), NODE_SYS "/node%d/meminfo", id);
	memset(n, 0, sizeof(*n));
	n->id = id;
	n->has_cpus = node_has_cpus(id);
	err = read_meminfo_kb(path, "MemTotal", &n->total);
	err = err ?: read_meminfo_kb(path, "MemFree", &n->free);
	err = err ?: read_meminfo_kb(path, "Active(file)", &act);
	err = err ?: read_meminfo_kb(path, "Inactive(file)", &inact);
	n->file = act + inact;
	/* free memory plus page cache that can be reclaimed for the dataset */
	n->avail = n->free + n->file - high[id];
	if (n->avail < 0)
		n->avail = 0;
	return err;
}

static int tandem_cxl_node(void)
{
	FILE *f = fopen("/sys/kernel/tandem/cxl_node", "r");
	int node = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &node) != 1)
		node = -1;
	fclose(f);
	return node;
}

static int read_nodes(struct profile *p)
{
	static double high[MAX_NODE_ID];
	DIR *d = opendir(NODE_SYS);
	struct dirent *e;
	int id, err = 0;

	memset(high, 0, sizeof(high));
	zone_high(high, MAX_NODE_ID);
	p->nnodes = 0;
	if (!d)
		return -errno;
	while ((e = readdir(d)) && !err && p->nnodes < PROFILE_MAX_NODES) {
		if (sscanf(e->d_name, "node%d", &id) != 1 || id < 0 || id >= MAX_NODE_ID)
			continue;
		err = read_node(id, high, &p->nodes[p->nnodes++]);
	}
	closedir(d);
	return err;
}

int cal_memory(struct profile *p)
{
	int err = read_nodes(p);

	if (err)
		return err;
	read_meminfo_kb("/proc/meminfo", "MemAvailable", &p->mem_available);
	/* tandem.ko's choice wins; else the first CPU-less node with memory */
	p->cxl_node = tandem_cxl_node();
	for (int i = 0; i < p->nnodes && p->cxl_node < 0; i++)
		if (!p->nodes[i].has_cpus && p->nodes[i].total > 0)
			p->cxl_node = p->nodes[i].id;
	p->cache_dram = p->cache_cxl = 0;
	for (int i = 0; i < p->nnodes; i++) {
		if (p->nodes[i].id == p->cxl_node)
			p->cache_cxl += p->nodes[i].avail;
		else
			p->cache_dram += p->nodes[i].avail;
	}
	return 0;
}

/* ---- warm-run rate ---- */

static int warm_dataset(const struct lg_dataset *ds, double bytes)
{
	uint64_t n = cal_sample_count(ds, bytes);
	unsigned char *buf = malloc(1 << 20);
	int err = buf ? 0 : -ENOMEM;

	for (uint64_t s = 0; s < n && !err; s++) {
		const struct lg_sample *sm = &ds->samples[s];
		int fd = open(ds->paths[sm->file], O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			err = -errno;
			break;
		}
		for (uint64_t off = 0; off < sm->len;) {
			ssize_t got = pread(fd, buf, sm->len - off < (1 << 20) ? sm->len - off :
					    (1 << 20), sm->off + off);

			if (got <= 0)
				break;
			off += got;
		}
		close(fd);
	}
	free(buf);
	return err;
}

static pid_t spawn_group(char *const *argv)
{
	pid_t pid = fork();

	if (pid == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid > 0)
		setpgid(pid, pid);	/* also here: no race with kill(-pid) */
	return pid;
}

static void kill_group(pid_t pid)
{
	kill(-pid, SIGTERM);
	for (int i = 0; i < 20 && waitpid(pid, NULL, WNOHANG) == 0; i++)
		usleep(100000);
	kill(-pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int cal_warm_rate(char *const *argv, const struct lg_dataset *ds, double cache_bytes,
		  double seconds, double *bps)
{
	double t0, t, t1 = -1, tl = 0, rc1 = 0, rcl = 0;
	struct procio io;
	int status, err;
	pid_t pid;

	err = warm_dataset(ds, cache_bytes * 0.9);
	if (err)
		return err;
	pid = spawn_group(argv);
	if (pid < 0)
		return -errno;
	t0 = now_s();
	while ((t = now_s() - t0) < seconds) {
		usleep(50000);
		/* sample before reaping: a reaped leader takes its counters along */
		procio_group(pid, &io);
		if (waitpid(pid, &status, WNOHANG) == pid) {
			if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
				return -ENOEXEC;
			break;
		}
		tl = now_s() - t0;
		rcl = io.rchar;
		if (t1 < 0 && tl >= 1.0) {	/* skip start-up */
			t1 = tl;
			rc1 = rcl;
		}
	}
	kill_group(pid);
	if (t1 >= 0 && tl - t1 >= 0.5)
		*bps = (rcl - rc1) / (tl - t1);
	else
		*bps = tl > 0 ? rcl / tl : 0;
	return *bps > 0 ? 0 : -ENODATA;
}
