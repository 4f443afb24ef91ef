/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Measurements behind a calibration profile (model/model.h): cold-read
 * bandwidth with k concurrent readers (bandwidth.c, on the samples of
 * cold.c), memory the page cache can use per NUMA node and which node is the
 * CXL one (memory.c), an instance's compute-bound rate from a short warm run
 * of its command (warm.c), and the storage and memory part of a profile from
 * all of them (profile.c).
 */
#ifndef TANDEM_CTL_CALIBRATE_H
#define TANDEM_CTL_CALIBRATE_H

#include <stdbool.h>
#include <stdint.h>

#include "loadgen/loadgen.h"
#include "model/model.h"

enum cal_cold {
	/*
	 * posix_fadvise(POSIX_FADV_DONTNEED) on the dataset's files: drops only
	 * their clean, unmapped pages; other workloads keep their cache.
	 */
	CAL_COLD_FADVISE,
	/* echo 1 > /proc/sys/vm/drop_caches: the whole page cache (root) */
	CAL_COLD_DROP_CACHES,
};

/* Evict the dataset's pages; resident (may be NULL) gets what is left, 0..1. */
int cal_make_cold(const struct lg_dataset *ds, uint64_t nsamples, enum cal_cold how,
		  double *resident);
/* Fraction of the pages of the first nsamples samples' files in the cache. */
int cal_resident(const struct lg_dataset *ds, uint64_t nsamples, double *frac);

struct cal_bw {
	double bps;		/* aggregate while all readers were active */
	double bytes;		/* read by all readers in that window */
	double seconds;
	double resident_before;	/* of the sample, after making it cold */
};

/*
 * Cold-read the first nsamples samples with k reader threads on disjoint
 * samples (round robin), stopping all when the first one runs out.
 */
int cal_bandwidth(const struct lg_dataset *ds, uint64_t nsamples, int k,
		  enum cal_cold how, struct cal_bw *out);
/* How many leading samples make up at least bytes (all if 0). */
uint64_t cal_sample_count(const struct lg_dataset *ds, double bytes);

/* Per-node memory, the CXL node and cache capacities into p. */
int cal_memory(struct profile *p);

/*
 * Compute-bound rate of a command: warm the dataset (as much as fits in
 * cache_bytes), run argv in its own process group for up to seconds, and
 * divide the bytes its processes read (rchar) by the time, skipping the
 * first second of start-up. The group is killed afterwards.
 */
int cal_warm_rate(char *const *argv, const struct lg_dataset *ds, double cache_bytes,
		  double seconds, double *bps);

struct cal_opts {
	double sample_bytes;	/* cold-read sample; 0 = the whole dataset */
	enum cal_cold cold;
	int max_readers;	/* measure B(1..max_readers), default 2 */
	bool verbose;		/* progress lines on stderr */
};

/*
 * Storage and memory part of a profile for dataset ds (no instances):
 * B(1..k), cache capacities, dataset size, CPUs. Warnings (a sample that
 * stayed resident) go to stderr.
 */
int cal_profile(const struct cal_opts *o, const char *dir, const struct lg_dataset *ds,
		struct profile *p);

#endif
