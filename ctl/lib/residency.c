// SPDX-License-Identifier: GPL-2.0
/* Page-cache residency of files by mincore(2) and move_pages(2) (residency.h). */
#include <errno.h>
#include <fcntl.h>
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

int residency_file(const char *path, enum residency_what what, int node,
		   struct residency *r)
{
	long pg = sysconf(_SC_PAGESIZE), n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	unsigned char *vec = NULL;
	struct stat st;
	void *map;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto close_fd;
	}
	n = (st.st_size + pg - 1) / pg;
	if (!n)
		goto close_fd;
	map = mmap(NULL, n * pg, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		err = -errno;
		goto close_fd;
	}
	vec = malloc(n);
	if (!vec)
		err = -ENOMEM;
	else if (mincore(map, n * pg, vec))
		err = -errno;
	for (long k = 0; !err && k < n; k++)
		r->cached += vec[k] & 1;
	if (!err)
		r->pages += n;
	if (!err && what != RESIDENCY_CACHED)
		err = place(map, vec, n, pg, what, node, r);
	free(vec);
	munmap(map, n * pg);
close_fd:
	close(fd);
	return err;
}
