/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Training-job emulator (after Argonne's DLIO): reads a dataset epoch by
 * epoch through a pool of reader threads and a prefetch queue, and stands
 * for the GPU step with a sleep per batch. Also writes synthetic datasets
 * whose content can be verified.
 */
#ifndef TANDEM_CTL_LOADGEN_H
#define TANDEM_CTL_LOADGEN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/files.h"

/* One training sample: a whole file, or one record of a large file. */
struct lg_sample {
	uint32_t file;
	uint64_t off, len;
};

struct lg_dataset {
	char *dir;
	uint32_t nfiles;
	char **paths;		/* in walk order (lib/files.h) */
	uint64_t *sizes;
	dev_t *devs;		/* st_dev, st_ino of each file */
	ino_t *inos;
	uint64_t nsamples;
	struct lg_sample *samples;
	uint64_t bytes;
	uint64_t record_size;	/* 0: one sample per file */
	struct file_skips skipped;	/* what the walk left out */
};

/*
 * The files of dir by the dataset walk (lib/files.h: recursive, in name
 * order, hidden names, special files and second links to a file skipped;
 * symbolic links followed), as samples. -ENODATA: no files; other errors
 * printed by the walk.
 */
int lg_dataset_scan(const char *dir, uint64_t record_size, struct lg_dataset *ds);
void lg_dataset_free(struct lg_dataset *ds);

struct lg_opts {
	uint32_t epochs;
	bool shuffle;		/* else dataset order */
	uint64_t seed;		/* same seed, same order per epoch */
	uint32_t threads;	/* reader threads */
	uint32_t queue;		/* prefetch depth in batches */
	uint32_t batch;		/* samples per batch */
	double compute;		/* seconds of "GPU step" per batch (a sleep) */
	double decode;		/* CPU-seconds of work per sample (busy loop) */
	uint64_t limit;		/* samples per epoch, 0 = all */
	bool verify;		/* check content written by lg_gen() */
	const char *timeline;	/* per-iteration CSV, or NULL */
};

struct lg_epoch {
	double start, end;	/* seconds from the start of the run */
	double wait;		/* time the step waited for data */
	uint64_t bytes, samples;
};

struct lg_result {
	uint32_t epochs;
	struct lg_epoch *ep;
	double total;
	uint64_t bytes, samples;
	double wait;
	uint64_t verify_errors;
};

void lg_opts_default(struct lg_opts *o);
int lg_run(const struct lg_dataset *ds, const struct lg_opts *o, struct lg_result *res);
void lg_result_free(struct lg_result *res);
/* The order of epoch e: a permutation of 0..n-1 (identity if !shuffle). */
void lg_order(uint64_t n, uint64_t seed, uint32_t epoch, bool shuffle, uint32_t *out);

/*
 * The files of ds in the order jobs with these seeds first need them in
 * epoch epoch: position by position (each job's i-th sample, in the order
 * of seeds), each file once, at its first need. Jobs that progress at the
 * same pace reach the store in this order. files: room for ds->nfiles.
 */
int lg_first_needs(const struct lg_dataset *ds, const uint64_t *seeds, unsigned int nseeds,
		   uint32_t epoch, bool shuffle, uint32_t *files, uint32_t *nfiles);

enum lg_dist { LG_DIST_FIXED, LG_DIST_UNIFORM, LG_DIST_LOGNORMAL };

struct lg_gen_opts {
	uint32_t files;
	uint64_t size;		/* mean size */
	enum lg_dist dist;
	uint64_t seed;
};

/*
 * Write files sample-NNNNNN.bin into dir (created if missing), each fsync'd.
 * Content: a 32-byte header (magic, seed, index, size) then a stream that
 * depends only on (seed, index, offset), so any record can be verified.
 */
int lg_gen(const char *dir, const struct lg_gen_opts *o, uint64_t *total);
int lg_dist_parse(const char *s, enum lg_dist *d);
/* Check buf = bytes [off, off+len) of a generated file; false on mismatch. */
bool lg_check(const unsigned char *buf, uint64_t off, uint64_t len,
	      uint64_t seed, uint32_t index, uint64_t size);

#endif
