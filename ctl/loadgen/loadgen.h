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

#include "lib/samples.h"

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
	const char *ckpt_dir;	/* write checkpoints here, or NULL */
	uint64_t ckpt_size;	/* bytes per checkpoint */
	uint32_t ckpt_every;	/* steps between checkpoints */
};

struct lg_epoch {
	double start, end;	/* seconds from the start of the run */
	double wait;		/* time the step waited for data */
	uint64_t bytes, samples;
};

/* One checkpoint: its step and the two times measured at it. */
struct lg_ckpt {
	uint64_t step;		/* steps done when it was written (1-based) */
	double at;		/* seconds from the start of the run, when done */
	double stall;		/* open + write + close + rename: the step waited */
	double copy;		/* the same bytes copied in memory (memcpy) */
	double copy_new;	/* copied into freshly mapped memory, faults included */
	double measure;		/* wall time of the two copies: not a checkpoint's cost */
};

struct lg_result {
	uint32_t epochs;
	struct lg_epoch *ep;
	double total;
	uint64_t bytes, samples;
	double wait;
	uint64_t verify_errors;
	uint32_t nckpt;
	struct lg_ckpt *ckpt;	/* nckpt of them, in order */
};

void lg_opts_default(struct lg_opts *o);
int lg_run(const struct sample_set *ds, const struct lg_opts *o, struct lg_result *res);
void lg_result_free(struct lg_result *res);
/*
 * Checkpoints (ckpt.c), as a training job writes them with torch.save: every
 * ckpt_every steps the state (ckpt_size bytes, kept in memory for the run) is
 * written to DIR/.ckpt-NNNNNN.bin.tmp, closed (no fsync) and renamed to
 * DIR/ckpt-NNNNNN.bin (N = the step). The stall is that, timed; the same
 * bytes are also copied in memory, timed, as the floor a checkpoint costs:
 * into a buffer touched before, and into memory just mapped (page faults).
 */
struct lg_ckpt_state;
int lg_ckpt_open(const struct lg_opts *o, struct lg_ckpt_state **st);
int lg_ckpt_step(struct lg_ckpt_state *st, uint64_t step, double t_run, struct lg_result *res);
void lg_ckpt_close(struct lg_ckpt_state *st);
/* Median and largest stall, median copy times of res's checkpoints. */
void lg_ckpt_stats(const struct lg_result *res, double *stall_med, double *stall_max,
		   double *copy_med, double *copy_new_med);

/* The order of epoch e: a permutation of 0..n-1 (identity if !shuffle). */
void lg_order(uint64_t n, uint64_t seed, uint32_t epoch, bool shuffle, uint32_t *out);

/*
 * The files of ds in the order jobs with these seeds first need them in
 * epoch epoch: position by position (each job's i-th sample, in the order
 * of seeds), each file once, at its first need. Jobs that progress at the
 * same pace reach the store in this order. files: room for ds->files.n.
 */
int lg_first_needs(const struct sample_set *ds, const uint64_t *seeds, unsigned int nseeds,
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
