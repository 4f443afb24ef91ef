/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Calibration profile: what `tandemctl calibrate` measured, stored as a
 * versioned JSON document (Documentation/model.md lists the fields), and
 * turned into model input by profile_to_model(). Also the instance
 * description syntax shared by `model`, `calibrate` and `run`:
 *   name=A,rate=50M,epochs=2,order=indep|same|seq,seed=1,window=8M,cpu=0,mem=0
 * where rate is bytes/s of cached data consumed (or step=15ms,sample=1M).
 */
#ifndef TANDEM_CTL_PROFILE_H
#define TANDEM_CTL_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

#define PROFILE_VERSION		1
#define PROFILE_MAX_NODES	16

struct profile_node {
	int id;
	bool has_cpus;
	double total, free, file;	/* bytes, from nodeN/meminfo */
	double avail;			/* free + file - high watermark */
};

struct profile_inst {
	struct model_inst m;
	char rate_source[16];		/* "user", "warm-run", "loadgen" */
	char *cmd;			/* the command line, or NULL */
};

struct profile {
	int version;
	char created[32];		/* UTC, ISO 8601 */
	double calib_seconds;
	/* dataset */
	char *dataset_path;
	double dataset_bytes;
	uint64_t files;
	double record_size;
	/* storage */
	double bw[MODEL_MAX_BW];	/* B(1), B(2), ... bytes/s */
	int nbw;
	char cold_method[16];		/* "fadvise" or "drop-caches" */
	double sample_bytes;
	/* memory */
	int cxl_node;			/* -1: none */
	double cache_dram, cache_cxl;	/* bytes the page cache can use */
	double mem_available;		/* /proc/meminfo MemAvailable */
	int nnodes;
	struct profile_node nodes[PROFILE_MAX_NODES];
	double ncpu;
	int ninst;
	struct profile_inst inst[MODEL_MAX_INST];
};

void profile_init(struct profile *p);
void profile_free(struct profile *p);
int profile_load(const char *path, struct profile *p, char *err, size_t errlen);
int profile_save(const char *path, const struct profile *p);

/*
 * Cache capacity the model gets. Without steering: DRAM plus the fraction
 * frac of the CXL node (the page allocator spills there by itself: 1,
 * measured). With steering: the CXL node plus the fraction frac of DRAM
 * (tandem.ko fills the CXL node and leaves the rest where the kernel put
 * it: 1; Documentation/validation.md, nodram-steer).
 */
double profile_cache(const struct profile *p, bool steer, double frac);

/* Model input from a profile (may be empty) and command-line overrides. */
struct model_args {
	double dataset;			/* D; 0: from the profile */
	double cache;			/* C; < 0: from the profile */
	double cxl_cache;		/* CXL part of C; < 0: from the profile */
	double nosteer_frac;		/* see profile_cache() */
	double steer_dram_frac;		/* see profile_cache() */
	double bw[MODEL_MAX_BW];	/* B(k); nbw = 0: from the profile */
	int nbw;
	double eta;			/* B(2) = eta * B(1) when > 0 */
	double ncpu;			/* < 0: from the profile */
	int steer;			/* -1: on when there is a CXL node */
	int evict;			/* -1: default */
	bool warm;
	uint32_t extents;		/* 0: from the file count */
	int nspec;			/* instances given on the command line */
	struct model_inst spec[MODEL_MAX_INST];
	/* the same as text: applied on top of the profile's instance i */
	const char *spec_str[MODEL_MAX_INST];
	int ninstances;			/* replicate the last one up to this */
};

void model_args_init(struct model_args *a);
int model_args_build(const struct model_args *a, const struct profile *p,
		     struct model_sys *sys, struct model_inst *inst, int *n,
		     char *err, size_t errlen);
/* Parse B(1)[,B(2)...] ("50M,25M") into a->bw. */
int model_args_parse_bw(struct model_args *a, const char *list);

/* Parse one instance description into in (defaults for missing keys). */
int profile_inst_parse(const char *spec, struct model_inst *in, char *err, size_t errlen);
void profile_inst_default(struct model_inst *in, int idx);

#endif
