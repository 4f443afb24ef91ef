// SPDX-License-Identifier: GPL-2.0
/*
 * Page-cache residency of files by mincore(2) and move_pages(2), or cachestat(2)
 * where only the count is needed (residency.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/residency.h"

#define MPOL_MF_MOVE_	(1 << 1)	/* <numaif.h> without libnuma */

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Touch the cached pages of map (vec from mincore) and collect their addresses. */
static long cached_pages(volatile const char *map, const unsigned char *vec, long n,
			 long pg, void **pages)
{
	long m = 0;

	for (long k = 0; k < n; k++) {
		if (!(vec[k] & 1))
			continue;	/* not cached: touching it would read it */
		(void)map[k * pg];	/* map the cached page so move_pages sees it */
		pages[m++] = (void *)(map + k * pg);
	}
	return m;
}

static void tally(struct residency *r, const int *status, long m)
{
	for (long k = 0; k < m; k++) {
		if (status[k] < 0) {
			r->failed++;
		} else if (status[k] >= RESIDENCY_MAX_NODES) {
			r->other++;
		} else {
			r->nodes[status[k]]++;
			if (status[k] + 1 > r->nnodes)
				r->nnodes = status[k] + 1;
		}
	}
}

static int place(volatile const char *map, const unsigned char *vec, long n, long pg,
		 enum residency_what what, int node, struct residency *r)
{
	void **pages = malloc(sizeof(*pages) * n);
	int *status = malloc(sizeof(*status) * n), *nodes = NULL, err = 0;
	long m;
	double t0;

	if (what == RESIDENCY_MOVE)
		nodes = malloc(sizeof(*nodes) * n);
	if (!pages || !status || (what == RESIDENCY_MOVE && !nodes)) {
		err = -ENOMEM;
		goto free_all;
	}
	m = cached_pages(map, vec, n, pg, pages);
	for (long k = 0; nodes && k < m; k++)
		nodes[k] = node;
	t0 = mono_now();
	if (m && syscall(SYS_move_pages, 0, m, pages, nodes, status,
			 nodes ? MPOL_MF_MOVE_ : 0)) {
		err = -errno;
		goto free_all;
	}
	r->move_s += mono_now() - t0;
	tally(r, status, m);
free_all:
	free(nodes);
	free(status);
	free(pages);
	return err;
}

/*
 * The one node with memory, when there is one: every cached page is on it,
 * so its pages need not be looked up one by one. -1 otherwise (or unknown).
 */
static int only_memory_node(void)
{
	static int only = -2;
	char buf[32], *end;
	ssize_t n;
	long v;
	int fd;

	if (only != -2)
		return only;
	only = -1;
	fd = open("/sys/devices/system/node/has_memory", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return only;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return only;
	buf[n] = 0;
	v = strtol(buf, &end, 10);
	if (end != buf && (*end == '\n' || !*end) && v >= 0 && v < RESIDENCY_MAX_NODES)
		only = (int)v;
	return only;
}

#ifndef SYS_cachestat
#define SYS_cachestat 451	/* the same number on every architecture (6.5+) */
#endif

/* cachestat(2): the file's cached pages without mapping it. 0 or -errno. */
static int cached_by_cachestat(int fd, long *cached)
{
	static bool missing;
	struct { uint64_t off, len; } range = { 0, 0 };	/* len 0: to the end */
	struct { uint64_t cache, dirty, writeback, evicted, recently_evicted; } cs;

	if (missing)
		return -ENOSYS;
	if (syscall(SYS_cachestat, fd, &range, &cs, 0)) {
		if (errno == ENOSYS)
			missing = true;
		return -errno;
	}
	*cached = (long)cs.cache;
	return 0;
}

static void node_add(struct residency *r, int node, long pages)
{
	r->nodes[node] += pages;
	if (pages && node + 1 > r->nnodes)
		r->nnodes = node + 1;
}

/* mincore(2) on a mapping of the file's N pages, then, past CACHED, place() */
static int residency_mapped(int fd, long n, enum residency_what what, int node,
			    struct residency *r)
{
	long pg = sysconf(_SC_PAGESIZE), c = 0;
	unsigned char *vec = NULL;
	int err = 0;
	void *map = mmap(NULL, n * pg, PROT_READ, MAP_SHARED, fd, 0);

	if (map == MAP_FAILED)
		return -errno;
	vec = malloc(n);
	if (!vec)
		err = -ENOMEM;
	else if (mincore(map, n * pg, vec))
		err = -errno;
	for (long k = 0; !err && k < n; k++)
		c += vec[k] & 1;
	if (!err) {
		r->cached += c;
		r->pages += n;
	}
	if (!err && what == RESIDENCY_NODES && only_memory_node() >= 0)
		node_add(r, only_memory_node(), c);
	else if (!err && what != RESIDENCY_CACHED)
		err = place(map, vec, n, pg, what, node, r);
	free(vec);
	munmap(map, n * pg);
	return err;
}

/*
 * Counting only (CACHED, or NODES with one memory node): cachestat(2) where
 * the kernel has it (6.5+), which needs no mapping: at a million files the
 * mapping, mincore and unmapping were most of a scan's time.
 */
int residency_file(const char *path, enum residency_what what, int node,
		   struct residency *r)
{
	long pg = sysconf(_SC_PAGESIZE), n, c = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto close_fd;
	}
	n = (st.st_size + pg - 1) / pg;
	if (!n)
		goto close_fd;
	if ((what == RESIDENCY_CACHED || (what == RESIDENCY_NODES && only_memory_node() >= 0)) &&
	    !cached_by_cachestat(fd, &c)) {
		c = c < n ? c : n;
		r->cached += c;
		r->pages += n;
		if (what == RESIDENCY_NODES)
			node_add(r, only_memory_node(), c);
		goto close_fd;
	}
	err = residency_mapped(fd, n, what, node, r);
close_fd:
	close(fd);
	return err;
}
