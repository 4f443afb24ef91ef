/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libtandem-predict: training-time prediction from a model's computational
 * graph (PredictDDL-style). An ONNX graph becomes a GHN-2 graph, a graph
 * hypernetwork encoder turns it into a vector, and a small MLP regressor
 * maps [vector, job features] to log seconds per training iteration. An
 * analytic ring all-reduce term covers data-parallel runs. Ernest is the
 * baseline.
 *
 * Every function that can fail returns 0 or a negative errno and leaves a
 * one-line explanation in tp_errmsg(). Nothing here exits the process.
 */
#ifndef TANDEM_PREDICT_H
#define TANDEM_PREDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The last error of the calling thread, "" when none. */
const char *tp_errmsg(void);

/* GHN-2's 15 primitives, in the order of PRIMITIVES_DEEPNETS1M. */
enum tp_prim {
	TP_MAX_POOL, TP_AVG_POOL, TP_SEP_CONV, TP_DIL_CONV, TP_CONV, TP_MSA,
	TP_CSE, TP_SUM, TP_CONCAT, TP_INPUT, TP_BIAS, TP_BN, TP_LN, TP_POS_ENC,
	TP_GLOB_AVG, TP_NUM_PRIMS
};
const char *tp_prim_name(int prim);
/* -1 when the name is not a primitive */
int tp_prim_from_name(const char *name);

#define TP_S_MAX 50	/* longest shortest path that makes a virtual edge */

/* The FLOPs of `flops` by kind of product: their speed differs by up to an
 * order of magnitude on one CPU (a BLAS path for 1x1 convolutions, im2col
 * for kxk, memory-bound depthwise and batch-1 linear layers). */
enum tp_flop_class {
	TP_FLOPS_CONV1,		/* Conv, 1x1 kernel, one group */
	TP_FLOPS_CONVK,		/* Conv, larger kernel, one group (dilated included) */
	TP_FLOPS_GROUP,		/* Conv with groups > 1 (depthwise, grouped) */
	TP_FLOPS_LINEAR,	/* Gemm, MatMul with a parameter */
	TP_FLOPS_MATMUL,	/* MatMul of two activations (attention) */
	TP_FLOP_CLASSES
};

/* Cost statistics of a graph, per sample (divided by the data input's batch
 * dimension). Shapes come from the importer's own inference (static shapes
 * from the graph inputs, shape arithmetic folded); the file's value_info is
 * a fallback only. */
struct tp_graph_stats {
	double params;		/* trainable parameter elements */
	double flops;		/* forward multiply-adds x 2 of weighted ops and matmuls */
	double act_elems;	/* output elements of all ops on the activation path */
	double flops_by[TP_FLOP_CLASSES];	/* flops split by enum tp_flop_class */
	double input_res;	/* sqrt(H x W) of an image data input [N, C, H, W]; 0 otherwise */
	uint32_t onnx_nodes;	/* NodeProtos in the file (0 for text graphs) */
	bool shapes_known;	/* every activation shape resolved, FLOPs complete */
	uint32_t unresolved;	/* activation tensors whose shape stayed unknown */
	char unresolved_at[64];	/* op type and output name of the first of them */
	uint32_t eval_bn;	/* BatchNormalization nodes in inference mode */
	uint32_t folded_bn;	/* convolutions with weights the exporter folded BatchNorm into */
};

struct tp_graph;

/* ONNX ModelProto file or buffer -> GHN-2 graph. */
int tp_graph_load_onnx(const char *path, struct tp_graph **out);
int tp_graph_from_onnx(const void *buf, size_t len, struct tp_graph **out);
/* The plain text graph format (see Documentation/predictor.md). */
int tp_graph_load_text(const char *path, struct tp_graph **out);
int tp_graph_parse_text(const char *text, struct tp_graph **out);
int tp_graph_write_text(const struct tp_graph *g, FILE *f);
void tp_graph_free(struct tp_graph *g);

int tp_graph_num_nodes(const struct tp_graph *g);
int tp_graph_num_edges(const struct tp_graph *g);
/* virtual edges: node pairs at shortest-path distance 2..TP_S_MAX */
long tp_graph_num_virtual(const struct tp_graph *g);
void tp_graph_get_stats(const struct tp_graph *g, struct tp_graph_stats *st);
void tp_graph_prim_hist(const struct tp_graph *g, int hist[TP_NUM_PRIMS]);

/* ---- backends ---- */

enum tp_backend { TP_BACKEND_AUTO, TP_BACKEND_CPU, TP_BACKEND_CUDA };
const char *tp_backend_name(enum tp_backend b);
/* true when the library was built with nvcc and a GPU answers */
bool tp_cuda_available(void);

#define TP_DEV_FEATS 3
/* Device features of the device a backend runs on: compute units (CPU
 * cores or SMs), clock in GHz, memory bandwidth in GB/s (0 = unknown),
 * and a name. */
struct tp_device {
	double feat[TP_DEV_FEATS];
	char name[96];
};
int tp_device_query(enum tp_backend b, struct tp_device *dev);

/* ---- device probe (probe.c, probe_cache.c) ----
 *
 * A few seconds of single-threaded kernels measuring this host's speed on
 * the kinds of work the cost model prices (Documentation/predictor.md,
 * "Device probe"). A model records the probe of its training host; a
 * prediction on a host whose probe differs scales each cost term by the
 * ratio of the two hosts' rates of its kind. */
enum tp_probe_kind {
	TP_PROBE_CONV,		/* dense 3x3 convolution, GFLOP/s */
	TP_PROBE_DWCONV,	/* depthwise 3x3 convolution, GFLOP/s */
	TP_PROBE_GEMM,		/* matrix product (1x1 convolutions, linear, attention), GFLOP/s */
	TP_PROBE_MEM,		/* normalisation over a tensor beyond the caches, GB/s */
	TP_PROBE_OP,		/* small operators (allocate, touch, reduce, free), Mop/s */
	TP_PROBE_KINDS
};
const char *tp_probe_kind_name(int kind);	/* "conv", "dwconv", "gemm", "mem", "op" */
const char *tp_probe_kind_unit(int kind);	/* "GFLOP/s", "GB/s", "Mop/s" */

#define TP_PROBE_VERSION 1
struct tp_probe {
	uint32_t version;	/* TP_PROBE_VERSION of the code that measured it */
	char cpu[96];		/* CPU model string (the cache key, with ncpu and version) */
	uint32_t ncpu;		/* online CPUs */
	int64_t when;		/* Unix time of the measurement */
	double seconds;		/* wall time the probe took */
	double rate[TP_PROBE_KINDS];	/* best of the repetitions, units above */
	double spread[TP_PROBE_KINDS];	/* median / best - 1 over the repetitions */
};
/* This host's CPU model string ($TANDEM_CPUINFO, else /proc/cpuinfo) and
 * online CPU count: the cache key. */
void tp_probe_host_key(char cpu[96], uint32_t *ncpu);
/* Measure now (a few seconds of one thread); fills every field. */
int tp_probe_run(struct tp_probe *p);
/* The text form (also the cache file) and its reader. */
int tp_probe_save(const struct tp_probe *p, const char *path);
int tp_probe_load(const char *path, struct tp_probe *p);
/* The cache file: $TANDEM_PROBE_DIR, else /var/lib/tandem as root, else
 * $XDG_CACHE_HOME/tandem or ~/.cache/tandem; then /probe-v<VERSION>.txt */
int tp_probe_cache_path(char *buf, size_t len);
/* This host's probe: the cache when it holds this host's key and version
 * (and !rerun), else measured now and cached (a cache that cannot be
 * written is not an error). *cached: whether it came from the cache. */
int tp_probe_host(bool rerun, struct tp_probe *p, bool *cached);
/* Rates of `from` over rates of `to`, per kind: the factor by which a cost
 * of each kind measured on `from`'s host grows on `to`'s. */
void tp_probe_ratios(const struct tp_probe *from, const struct tp_probe *to,
		     double ratio[TP_PROBE_KINDS]);

/* ---- model ---- */

/* Feature sets of the regressor input after the graph vector. */
#define TP_FEAT_JOB	0x1	/* log batch, log GPUs, log nodes, device features */
#define TP_FEAT_STATS	0x2	/* log params, log FLOPs, log activations, log graph nodes */
#define TP_FEAT_RES	0x4	/* log input resolution (model files from version 2) */
#define TP_FEAT_COST	0x8	/* log FLOPs of each enum tp_flop_class (version 2) */
#define TP_FEAT_BASE	0x10	/* the regressor predicts log(t / analytic cost), version 3 */
#define TP_FEAT_BASE_ONLY 0x20	/* the analytic cost alone, no regressor (needs BASE) */

struct tp_model_config {
	int hid;		/* encoder width d (multiple of 4, <= 256) */
	int reg_hidden;		/* regressor hidden width */
	uint32_t features;	/* TP_FEAT_* */
	bool use_ghn;		/* false: the graph vector is zeroed (ablation) */
};
void tp_model_config_default(struct tp_model_config *cfg);

struct tp_model;
int tp_model_new(const struct tp_model_config *cfg, uint64_t seed, struct tp_model **out);
int tp_model_load(const char *path, struct tp_model **out);
int tp_model_load_mem(const void *buf, size_t len, struct tp_model **out);
/* The built-in model for a graph's input resolution (tp_graph_stats'
 * input_res): the 224x224 one from TP_BUILTIN_RES_SPLIT up, else the 32x32
 * one (also for inputs that are not images). *name: which, for the record. */
#define TP_BUILTIN_RES_SPLIT 128.0
int tp_model_load_builtin(const struct tp_graph *g, struct tp_model **out, const char **name);
/*
 * The model every prediction of g uses (tandemctl predict, calibrate's
 * graph=): PATH when not NULL, else the file $TANDEM_PREDICT_MODEL names,
 * else the built-in model for g's input resolution. *name: the file, or
 * the built-in model's name; set whether or not the load succeeds.
 */
int tp_model_choose(const char *path, const struct tp_graph *g, struct tp_model **out,
		    const char **name);
int tp_model_save(const struct tp_model *m, const char *path);
void tp_model_free(struct tp_model *m);
void tp_model_get_config(const struct tp_model *m, struct tp_model_config *cfg);
/* what the model was trained on ("" for an untrained model) */
const char *tp_model_trained_on(const struct tp_model *m);
size_t tp_model_num_params(const struct tp_model *m);
/* the model file's format version (1: no resolution feature, no record of
 * the training data's range) */
int tp_model_file_version(const struct tp_model *m);
/* The probe of the host the model's training runs came from: recorded in
 * the file (version 4, tandemctl predict train --probe), or for the
 * built-in models the library's reference probe; NULL when none. */
const struct tp_probe *tp_model_probe(const struct tp_model *m);
/* record (or, p NULL, forget) the training host's probe */
void tp_model_set_probe(struct tp_model *m, const struct tp_probe *p);
/* AUTO (default): CUDA when available, else CPU */
int tp_model_set_backend(struct tp_model *m, enum tp_backend b);
enum tp_backend tp_model_backend(const struct tp_model *m);

/* Graph vector, out: [hid]. */
int tp_embed(struct tp_model *m, const struct tp_graph *g, float *out);

/* One data-parallel training job. */
struct tp_job {
	double batch;		/* per-worker batch size */
	int gpus;		/* workers per node */
	int nodes;		/* machines */
	double bw_intra;	/* bytes/s of the slowest intra-node ring link */
	double bw_inter;	/* bytes/s per node of the network */
	double lat_intra;	/* seconds per ring step inside a node */
	double lat_inter;	/* seconds per ring step across nodes */
	const struct tp_device *dev;	/* device features; NULL = the model's training device */
	/* this host's probe: with the model's training-host probe, the CPU
	 * backend's compute time is mapped to this host; NULL = not mapped */
	const struct tp_probe *probe;
};
void tp_job_default(struct tp_job *job);

struct tp_prediction {
	double compute_s;	/* regressor: forward+backward+step of one worker */
	double allreduce_s;	/* analytic ring all-reduce of the gradients */
	double total_s;		/* compute_s + allreduce_s (no overlap assumed) */
	double grad_bytes;
	/* the probe mapping: compute_s is the training host's time x probe_ratio
	 * (a cost-weighted mean of kind_ratio); probe_mapped false: ratio 1 */
	bool probe_mapped;
	double probe_ratio;
	double kind_ratio[TP_PROBE_KINDS];
};
int tp_predict(struct tp_model *m, const struct tp_graph *g, const struct tp_job *job,
	       struct tp_prediction *out);
/* 2(p-1)/p * bytes / bw + 2(p-1) * latency, p = gpus * nodes */
double tp_allreduce_seconds(double bytes, const struct tp_job *job);

/*
 * Warnings that belong to a prediction, one line each, up to max:
 * the graph's (shapes left unknown, an eval-mode export) and, for a job,
 * where it lies outside what the model was trained on (input resolution,
 * FLOPs or parameter range, op types never seen, GPUs/nodes beyond the
 * training runs', another device than the profiled one). Returns the count.
 */
#define TP_WARN_LEN 200
int tp_graph_warnings(const struct tp_graph *g, char (*warn)[TP_WARN_LEN], int max);
int tp_ood_warnings(const struct tp_model *m, const struct tp_graph *g, const struct tp_job *job,
		    char (*warn)[TP_WARN_LEN], int max);

/* ---- data, training, evaluation ---- */

struct tp_dataset;
/* runs.csv of bench/predictor/profile.py; ONNX paths relative to the CSV.
 * Several CSVs make one data set (e.g. the 32x32 and 224x224 sets); runs
 * of one architecture name in several CSVs are one architecture for
 * cross-validation. */
int tp_dataset_load(const char *csv, struct tp_dataset **out);
int tp_dataset_load_many(const char *const *csv, int n, struct tp_dataset **out);
void tp_dataset_free(struct tp_dataset *d);
int tp_dataset_num_archs(const struct tp_dataset *d);
int tp_dataset_num_runs(const struct tp_dataset *d);

struct tp_train_opts {
	int epochs;
	int archs_per_step;	/* architectures per Adam step */
	double lr;
	double weight_decay;	/* decoupled (AdamW) */
	uint64_t seed;
	bool verbose;		/* loss per epoch to stderr */
};
void tp_train_opts_default(struct tp_train_opts *o);

/* Fit normalisation and train on the architectures with mask[a] true
 * (mask NULL: all). Returns the final training RMSE of log time. */
int tp_train(struct tp_model *m, const struct tp_dataset *d, const bool *mask,
	     const struct tp_train_opts *o, double *rmse);

/* Ernest: T = th0 + th1*scale/m + th2*m + th3*log(m), th >= 0 */
int tp_ernest_fit(const double *scale, const double *machines, const double *t, int n,
		  double theta[4]);
double tp_ernest_predict(const double theta[4], double scale, double machines);
/* min ||A x - b|| s.t. x >= 0; A: [m][n] row-major; Lawson-Hanson */
int tp_nnls(const double *a, const double *b, int m, int n, double *x);

#define TP_EVAL_MAX_RES 4
struct tp_eval_res {		/* the same scores for the runs at one input resolution */
	double res;
	int runs, eval_runs;
	double mape_ours_all, mape_ours, mape_ernest;
};

struct tp_eval_result {
	int folds, archs, runs;
	int nres;
	struct tp_eval_res by_res[TP_EVAL_MAX_RES];
	int ernest_fit_points;	/* smallest batch sizes Ernest is fitted on */
	int eval_runs;		/* runs both methods are scored on */
	double mape_ours_all;	/* over every run of every held-out architecture */
	double mape_ours;	/* over the eval runs */
	double mape_ernest;	/* over the eval runs */
	double mape_ernest_loo;	/* every run from all the architecture's others */
	double train_seconds;	/* wall time of all fold trainings */
};
/* Leave-architecture-out cross-validation with `folds` groups of whole
 * architectures (folds <= 0: one per architecture). per_arch (may be NULL)
 * receives one line per architecture. */
int tp_eval_cv(const struct tp_dataset *d, const struct tp_model_config *cfg,
	       const struct tp_train_opts *o, int folds, int ernest_points,
	       struct tp_eval_result *res, FILE *per_arch);

#ifdef __cplusplus
}
#endif
#endif
