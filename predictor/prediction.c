// SPDX-License-Identifier: GPL-2.0
/*
 * A prediction (tp_predict()): the graph's embedding and the regressor on
 * the model's backend, over the cost baseline (base.c), the gradients'
 * all-reduce, and the mapping to this host's device probe (probe_map.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ghn.h"

void tp_job_default(struct tp_job *job)
{
	memset(job, 0, sizeof(*job));
	job->batch = 32;
	job->gpus = 1;
	job->nodes = 1;
	job->bw_intra = 50e9;	/* NVLink-class peer links */
	job->bw_inter = 12.5e9;	/* 100 Gb/s per node */
	job->lat_intra = 5e-6;
	job->lat_inter = 20e-6;
}

double tp_allreduce_seconds(double bytes, const struct tp_job *job)
{
	double p = (double)job->gpus * job->nodes;
	double bw = job->nodes > 1 ? job->bw_inter : job->bw_intra;
	double lat = job->nodes > 1 ? job->lat_inter : job->lat_intra;

	if (p <= 1 || bw <= 0)
		return 0;
	return 2.0 * (p - 1) / p * bytes / bw + 2.0 * (p - 1) * lat;
}

static int check_job(const struct tp_job *job)
{
	if (!(job->batch >= 1 && job->batch <= 1e7))
		return tp_fail(-EINVAL, "batch size %g out of range 1..1e7", job->batch);
	if (job->gpus < 1 || job->nodes < 1 || job->gpus > 65536 || job->nodes > 65536)
		return tp_fail(-EINVAL, "need 1..65536 GPUs per node and nodes");
	return 0;
}

int tp_predict(struct tp_model *m, const struct tp_graph *g, const struct tp_job *job,
	       struct tp_prediction *out)
{
	struct tp_reg_acts *ra;
	double raw[TP_MAX_FEATS], logt;
	float gvec[256];
	int err;

	tp_clear_error();
	err = check_job(job);
	if (!err && tp_model_regresses(m))
		err = tp_embed(m, g, gvec);
	if (err)
		return err;
	ra = calloc(1, sizeof(*ra));
	if (!ra)
		return tp_fail(-ENOMEM, "out of memory");
	if (m->backend == TP_BACKEND_CUDA && tp_model_regresses(m)) {
		tp_raw_features(m, g, job->batch, job->gpus, job->nodes, job->dev, raw);
		tp_reg_input(m, gvec, raw, ra->x);
		ra->out = tp_cuda_regress(m, ra->x, &err);
		logt = tp_base_log(m, g, job->batch) + ra->out;
	} else {
		logt = tp_log_time(m, gvec, g, job->batch, job->gpus, job->nodes, job->dev, ra);
	}
	if (!err) {
		out->compute_s = exp(logt);
		out->grad_bytes = 4.0 * g->stats.params;
		out->allreduce_s = tp_allreduce_seconds(out->grad_bytes, job);
		tp_probe_map(m, g, job, out);
		out->total_s = out->compute_s + out->allreduce_s;
	}
	free(ra);
	return err;
}
