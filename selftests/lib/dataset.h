/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test datasets whose every byte is known: word w of file k holds
 * mix(seed, k, w), so any process can check any range it reads without a
 * reference copy, and a corrupted, stale or misplaced page shows at once.
 * Also: pages' NUMA nodes by move_pages(2), node meminfo, module helpers.
 * Header-only, for the VM tests (static) and host tests; the residency
 * scans are ctl/lib/residency.c's, which every user links (selftests.mk).
 */
#ifndef TANDEM_SELFTEST_DATASET_H
#define TANDEM_SELFTEST_DATASET_H

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/residency.h"

static inline uint64_t ds_mix(uint64_t seed, uint64_t file, uint64_t word)
{
	uint64_t z = seed ^ (file << 40) ^ word;

	z += 0x9e3779b97f4a7c15ULL;	/* splitmix64 */
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline void ds_fill(uint64_t *buf, size_t words, uint64_t seed, uint64_t file, uint64_t w0)
{
	for (size_t i = 0; i < words; i++)
		buf[i] = ds_mix(seed, file, w0 + i);
}

/* Write `bytes` (a multiple of 8) of file k's pattern to path; 0 or -errno. */
static inline int ds_write(const char *path, uint64_t seed, uint64_t file, size_t bytes)
{
	static uint64_t buf[1 << 15];
	size_t done = 0, n;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return -errno;
	while (done < bytes) {
		n = bytes - done < sizeof(buf) ? bytes - done : sizeof(buf);
		ds_fill(buf, n / 8, seed, file, done / 8);
		if (write(fd, buf, n) != (ssize_t)n) {
			close(fd);
			return -EIO;
		}
		done += n;
	}
	fsync(fd);
	close(fd);
	return 0;
}

/*
 * Check [off, off+len) of an open file against file k's pattern (or, inside
 * [alt_from, alt_to), against pattern alt_seed). Returns the number of
 * mismatching words; -errno on a read error.
 */
static inline long ds_check_fd(int fd, uint64_t seed, uint64_t file, off_t off, size_t len,
			       uint64_t alt_seed, off_t alt_from, off_t alt_to)
{
	static uint64_t buf[1 << 15];
	long bad = 0;
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		size_t want = len - done < sizeof(buf) ? len - done : sizeof(buf);

		n = pread(fd, buf, want, off + done);
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		for (size_t i = 0; i < (size_t)n / 8; i++) {
			off_t at = off + done + i * 8;
			uint64_t s = at >= alt_from && at < alt_to ? alt_seed : seed;

			bad += buf[i] != ds_mix(s, file, at / 8);
		}
		done += n;
	}
	return bad;
}

static inline long ds_check(const char *path, uint64_t seed, uint64_t file, size_t bytes)
{
	int fd = open(path, O_RDONLY);
	long bad;

	if (fd < 0)
		return -errno;
	bad = ds_check_fd(fd, seed, file, 0, bytes, 0, 0, 0);
	close(fd);
	return bad;
}

/*
 * The file's cached pages per node (move_pages(2) with nodes = NULL on the
 * pages mincore(2) says are cached: no I/O) by ctl/lib/residency.c, the one
 * implementation tandemctl and bench/steer use too. nodes[] gets counts for
 * nodes 0..maxnode-1; returns the pages counted there, or -errno.
 */
static inline long ds_page_nodes(const char *path, long *nodes, int maxnode)
{
	struct residency r = { 0 };
	long count = 0;
	int err = residency_file(path, RESIDENCY_NODES, -1, &r);

	memset(nodes, 0, sizeof(*nodes) * maxnode);
	if (err)
		return err;
	for (int i = 0; i < maxnode && i < RESIDENCY_MAX_NODES; i++) {
		nodes[i] = r.nodes[i];
		count += r.nodes[i];
	}
	return count;
}

/* pages of path in the page cache, by mincore(2): nothing is faulted in */
static inline long ds_resident_pages(const char *path)
{
	struct residency r = { 0 };
	int err = residency_file(path, RESIDENCY_CACHED, -1, &r);

	return err ? err : r.cached;
}

/* "Node N FilePages:" of /sys/devices/system/node/nodeN/meminfo, in kB */
static inline long node_meminfo_kb(int node, const char *key)
{
	char path[96], line[160], k[64];
	long v, found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", node);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Node %*d %63[^:]: %ld", k, &v) == 2 && !strcmp(k, key))
			found = v;
	fclose(f);
	return found;
}

static inline int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* first line of a file as a long (sysfs counters); LONG_MIN on error */
static inline long read_long(const char *fmt, ...)
{
	char path[256], buf[64];
	va_list ap;
	long v;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	f = fopen(path, "r");
	if (!f)
		return LONG_MIN;
	v = fgets(buf, sizeof(buf), f) ? strtol(buf, NULL, 0) : LONG_MIN;
	fclose(f);
	return v;
}

static inline double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline void drop_caches(void)
{
	sync();
	sh("echo 3 > /proc/sys/vm/drop_caches");
}

#endif
