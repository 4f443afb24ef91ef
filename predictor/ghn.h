/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Model internals: parameter layout, activations of the encoder and the
 * regressor, and the CPU forward/backward passes.
 *
 * Linear layers follow PyTorch: W is [out][in], y = W x + b. The GRU cell
 * is torch.nn.GRUCell with gates stacked (r, z, n) in W_ih [3d][d].
 */
#ifndef TANDEM_PREDICT_MODEL_H
#define TANDEM_PREDICT_MODEL_H

#include <stddef.h>

#include "internal.h"

/* Parameter tensors, in arena (and file) order. */
enum tp_param {
	P_OP_EMB,	/* [TP_NUM_PRIMS][d] */
	P_SHAPE_EMB,	/* [4][TP_SHAPE_BUCKETS][d/4] */
	P_MSG_W1, P_MSG_B1, P_MSG_W2, P_MSG_B2,	/* real-edge message MLP, [d][d], [d] */
	P_SP_W1, P_SP_B1, P_SP_W2, P_SP_B2,	/* virtual-edge message MLP */
	P_GRU_WIH, P_GRU_WHH,	/* [3d][d] */
	P_GRU_BIH, P_GRU_BHH,	/* [3d] */
	P_LN_G, P_LN_B,		/* [d] */
	P_R_W1, P_R_B1,		/* [h][in], [h] */
	P_R_W2, P_R_B2,		/* [h][h], [h] */
	P_R_W3, P_R_B3,		/* [1][h], [1] */
	P_NUM
};
#define P_FIRST_REG P_R_W1

#define TP_NUM_JOB_FEATS (3 + TP_DEV_FEATS)
#define TP_NUM_STAT_FEATS 4
#define TP_NUM_RES_FEATS 1
#define TP_NUM_COST_FEATS TP_FLOP_CLASSES
#define TP_MAX_FEATS (TP_NUM_JOB_FEATS + TP_NUM_STAT_FEATS + TP_NUM_RES_FEATS + \
		      TP_NUM_COST_FEATS)

/* Analytic cost baseline (base.c): terms and their fitted weights. */
#define TP_BASE_TERMS (6 + TP_FLOP_CLASSES)

/* What the training runs covered (model file version 2), for warnings. */
#define TP_OOD_MAX_RES 8
#define TP_OOD_MAX_OPS 256
struct tp_ood {
	bool known;		/* false: a version 1 file, nothing recorded */
	int nres;
	double res[TP_OOD_MAX_RES];	/* distinct input resolutions */
	double flops_lo, flops_hi, params_lo, params_hi;
	int max_gpus, max_nodes;
	int nops;
	char ops[TP_OOD_MAX_OPS][32];	/* ONNX op types of the training graphs */
};

struct tp_cuda_ctx;

struct tp_model {
	struct tp_model_config cfg;
	int nfeat;		/* job/stat features after the graph vector */
	int in;			/* regressor input width = hid + nfeat */
	size_t size[P_NUM];	/* elements per tensor */
	size_t nparams;
	float *params;		/* arena of all parameters */
	float *grads;		/* same layout */
	float *p[P_NUM], *g[P_NUM];
	/* input normalisation: x' = (x - mean) / std, fitted on training data */
	float feat_mean[TP_MAX_FEATS], feat_std[TP_MAX_FEATS];
	char trained_on[128];
	struct tp_device train_dev;	/* the device the training runs came from */
	struct tp_ood ood;
	double base_w[TP_BASE_TERMS];	/* TP_FEAT_BASE: seconds per unit of each term */
	bool has_probe;		/* probe: the training host's device probe (version 4) */
	struct tp_probe probe;
	int version;		/* of the file it was read from (current when new) */
	enum tp_backend backend;	/* resolved: CPU or CUDA */
	struct tp_cuda_ctx *cuda;
};

struct tp_dataset;
/* ood.c: record the training runs' range (architectures with mask[a]) */
void tp_ood_fit(struct tp_model *m, const struct tp_dataset *d, const bool *mask);

/* base.c: the terms of a job, log of the baseline (0 without TP_FEAT_BASE),
 * and the fit of the weights on the training runs (architectures with mask[a]) */
void tp_base_terms(const struct tp_graph *g, double batch, double *x);
double tp_base_log(const struct tp_model *m, const struct tp_graph *g, double batch);
int tp_base_fit(struct tp_model *m, const struct tp_dataset *d, const bool *mask);
/* probe_map.c: the probe mapping of a prediction (compute_s scaled, out's
 * probe fields set) */
/* whether a prediction of job is mapped (both probes, the CPU backend) */
bool tp_probe_maps(const struct tp_model *m, const struct tp_job *job);
void tp_probe_map(const struct tp_model *m, const struct tp_graph *g, const struct tp_job *job,
		  struct tp_prediction *out);
/* model_file.c: the 224x224 built-in model's baseline weights (the cost
 * shares of a model without its own baseline) */
int tp_builtin224_base_w(double w[TP_BASE_TERMS]);
/* false when the baseline alone predicts (TP_FEAT_BASE_ONLY) */
static inline bool tp_model_regresses(const struct tp_model *m)
{
	return !(m->cfg.features & TP_FEAT_BASE_ONLY);
}

const char *tp_param_name(int p);
/* allocate arenas for a config; parameters zeroed */
int tp_model_alloc(const struct tp_model_config *cfg, struct tp_model **out);
void tp_model_init_params(struct tp_model *m, uint64_t seed);
void tp_model_zero_grads(struct tp_model *m);

/* Encoder activations for one graph, in one arena. */
struct tp_sweep_acts {
	float *m;	/* [n][d] aggregated message */
	float *h;	/* [n][d] GRU output */
	float *r, *z, *nn, *hn;	/* [n][d] GRU gates and W_hn h + b_hn */
	float *a1, *a;	/* [n][d] real-edge MLP hidden pre-activation, output */
	float *b1, *b;	/* [n][d] virtual-edge MLP */
};

struct tp_acts {
	int n, d;
	float *mem;
	float *h0;	/* [n][d] node embeddings */
	struct tp_sweep_acts sw[2];	/* forward, backward sweep */
	float *y;	/* [n][d] LayerNorm output */
	float *mu, *rstd;	/* [n] */
	float *gvec;	/* [d] graph vector */
};

int tp_acts_alloc(int n, int d, struct tp_acts *a);
void tp_acts_free(struct tp_acts *a);

/* CPU encoder. forward fills a; backward adds parameter gradients to m->g
 * given dgvec [d] = dL/dgraph-vector. */
void tp_ghn_forward(const struct tp_model *m, const struct tp_graph *g, struct tp_acts *a);
int tp_ghn_backward(struct tp_model *m, const struct tp_graph *g, const struct tp_acts *a,
		    const float *dgvec);

/* Regressor activations for one input row. */
struct tp_reg_acts {
	float x[256 + TP_MAX_FEATS];	/* [in] */
	float z1[512], h1[512], z2[512], h2[512];	/* [h] */
	float out;
};
#define TP_MAX_REG_HIDDEN 512

float tp_reg_forward(const struct tp_model *m, struct tp_reg_acts *a);
/* dx [in] receives dL/dx (may be NULL); dout = dL/dout */
void tp_reg_backward(struct tp_model *m, const struct tp_reg_acts *a, float dout, float *dx);

/* Raw (unnormalised) features of a job into x [nfeat]. */
void tp_raw_features(const struct tp_model *m, const struct tp_graph *g, double batch,
		     int gpus, int nodes, const struct tp_device *dev, double *x);
/* Regressor input row: graph vector then normalised features. */
void tp_reg_input(const struct tp_model *m, const float *gvec, const double *raw, float *x);
/* Predicted log seconds of one worker's iteration on the CPU: the baseline's
 * log plus the regressor's output (gvec unused, ra->out 0 without a
 * regressor); ra keeps the regressor's activations for a backward pass. */
double tp_log_time(const struct tp_model *m, const float *gvec, const struct tp_graph *g,
		   double batch, int gpus, int nodes, const struct tp_device *dev,
		   struct tp_reg_acts *ra);

/* primitives (nn.c) */
/* (restrict in the definitions: the arguments never overlap) */
void tp_linear_fwd(float *y, const float *x, const float *w, const float *b, int in, int out);
void tp_linear_bwd(float *dx, float *dw, float *db, const float *dy, const float *x,
		   const float *w, int in, int out);

/* CUDA backend (cuda.cu, or cuda_none.c without nvcc) */
int tp_cuda_probe(void);	/* number of GPUs, 0 when none */
int tp_cuda_device(struct tp_device *dev);
int tp_cuda_embed(struct tp_model *m, const struct tp_graph *g, float *gvec);
float tp_cuda_regress(struct tp_model *m, const float *x, int *err);
void tp_cuda_release(struct tp_model *m);

#endif
