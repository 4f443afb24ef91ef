/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a file's pages are in the page cache, found from userspace without
 * reading it: mincore(2) on a shared read-only mapping says which pages are
 * cached; only those are touched (mapped in from the cache, no I/O), so
 * move_pages(2) can say which node each one is on, or move them.
 *
 * libc only: tandemctl, the static VM tests (selftests/lib/dataset.h) and
 * bench/steer/steerbench.c all compile this one file.
 */
#ifndef TANDEM_CTL_RESIDENCY_H
#define TANDEM_CTL_RESIDENCY_H

#include <stdbool.h>

#define RESIDENCY_MAX_NODES 64

enum residency_what {
	RESIDENCY_CACHED,	/* mincore only: nothing is touched */
	RESIDENCY_NODES,	/* and the node of every cached page */
	RESIDENCY_MOVE,		/* and move the cached pages to a node */
};

/* Sums over the files scanned into it (zero it first). */
struct residency {
	long pages;		/* of the files */
	long cached;		/* in the page cache, by mincore */
	long nodes[RESIDENCY_MAX_NODES];	/* cached pages per node (NODES, MOVE) */
	long other;		/* on a node >= RESIDENCY_MAX_NODES */
	long failed;		/* move_pages status < 0: evicted meanwhile, or not moved */
	int nnodes;		/* highest node with a page, + 1 */
	double move_s;		/* time spent in move_pages(2) */
};

/* Add path to r; node is the target of RESIDENCY_MOVE. 0 or -errno. */
int residency_file(const char *path, enum residency_what what, int node,
		   struct residency *r);

#endif
