// SPDX-License-Identifier: GPL-2.0
/*
 * An instance's compute rate from its graph, with no run of the job
 * (Documentation/model.md, "calibrate"): libtandem-predict's time of one
 * training iteration of the graph at the instance's batch, on the device
 * the model was profiled on (the built-in model for the graph's input
 * resolution, or $TANDEM_PREDICT_MODEL),
 * and the dataset bytes one iteration eats: the batch times the bytes per
 * sample. The predictor's time is CPU time on one thread, so the job is
 * taken to use one core while it computes: CPU per byte = time / bytes.
 * A model that records its training host's device probe is mapped to this
 * host: this host's probe is read from its cache or measured (a few
 * seconds, once per host; Documentation/predictor.md, "Device probe").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/calibrate.h"
#include "lib/log.h"
#include "tandem_predict.h"

_Static_assert(CAL_PRED_WARN_LEN == TP_WARN_LEN, "a warning's length");

/* This host's probe for job, when the model can be mapped; out->probe says
 * which probes or why none. */
static void pred_probe(const struct tp_model *m, struct tp_job *job, struct tp_probe *hp,
		       struct cal_pred *out)
{
	const struct tp_probe *tr = tp_model_probe(m);
	const char *env = getenv("TANDEM_PROBE");
	bool cached;

	if (env && !strcmp(env, "off"))
		snprintf(out->probe, sizeof(out->probe), "not mapped: TANDEM_PROBE=off");
	else if (!tr || tp_model_backend(m) != TP_BACKEND_CPU)
		snprintf(out->probe, sizeof(out->probe), "not mapped: %s",
			 tr ? "the backend is not the CPU" : "the model records no probe");
	else if (tp_probe_host(false, hp, &cached))
		snprintf(out->probe, sizeof(out->probe), "not mapped: %.120s", tp_errmsg());
	else
		job->probe = hp;
	if (job->probe)
		snprintf(out->probe, sizeof(out->probe), "%.60s (%u CPUs) -> %.60s (%u CPUs%s)",
			 tr->cpu, tr->ncpu, hp->cpu, hp->ncpu, cached ? ", cached" : "");
}

static int pred_err(struct cal_pred *out, int err, const char *what)
{
	snprintf(out->err, sizeof(out->err), "%s: %s", what,
		 tp_errmsg()[0] ? tp_errmsg() : strerror(-err));
	return err;
}

/* The job: the batch, the model's device, this host's probe where it maps. */
static void pred_job(const struct tp_model *m, double batch, struct tp_job *job,
		     struct tp_device *dev, struct tp_probe *hp, struct cal_pred *out)
{
	tp_job_default(job);
	job->batch = batch;
	if (!tp_device_query(tp_model_backend(m), dev))
		job->dev = dev;
	else
		ctl_err("calibrate: the device is not checked: %s", tp_errmsg());
	pred_probe(m, job, hp, out);
}

/* What prediction p says, into out: its warnings, the model's record, the rate. */
static void pred_fill(const struct tp_model *m, const struct tp_graph *g,
		      const struct tp_job *job, const struct tp_prediction *p,
		      double sample_bytes, struct cal_pred *out)
{
	char warn[CAL_PRED_WARN][TP_WARN_LEN];
	int n;

	n = tp_graph_warnings(g, warn, CAL_PRED_WARN);
	n += tp_ood_warnings(m, g, job, warn + n, CAL_PRED_WARN - n);
	for (int i = 0; i < n && i < CAL_PRED_WARN; i++) {
		memcpy(out->warn[i], warn[i], CAL_PRED_WARN_LEN - 1);
		out->warn[i][CAL_PRED_WARN_LEN - 1] = '\0';
		out->nwarn++;
	}
	snprintf(out->trained_on, sizeof(out->trained_on), "%s", tp_model_trained_on(m));
	out->probe_ratio = p->probe_mapped ? p->probe_ratio : 0;
	out->iter_s = p->total_s;
	out->bytes_per_iter = job->batch * sample_bytes;
	out->rate = out->bytes_per_iter / p->total_s;
	out->cpu_per_byte = p->total_s / out->bytes_per_iter;
}

int cal_predict_rate(const char *graph, double batch, double sample_bytes,
		     struct cal_pred *out)
{
	struct tp_graph *g = NULL;
	struct tp_model *m = NULL;
	struct tp_prediction p;
	struct tp_device dev;
	struct tp_probe hp;
	struct tp_job job;
	const char *name;
	int err;

	memset(out, 0, sizeof(*out));
	if (!(batch >= 1) || !(sample_bytes > 0)) {
		snprintf(out->err, sizeof(out->err), "batch= (>= 1) and the bytes per sample (> 0) are needed");
		return -EINVAL;
	}
	err = tp_graph_load_onnx(graph, &g);
	if (err)
		return pred_err(out, err, "cannot import the graph");
	err = tp_model_choose(NULL, g, &m, &name);
	snprintf(out->model, sizeof(out->model), "%s", name);
	if (err) {
		pred_err(out, err, "cannot load the predictor model");
		goto free_g;
	}
	err = tp_model_set_backend(m, TP_BACKEND_AUTO);
	if (err) {
		pred_err(out, err, "backend");
		goto free_m;
	}
	pred_job(m, batch, &job, &dev, &hp, out);
	err = tp_predict(m, g, &job, &p);
	if (err) {
		pred_err(out, err, "prediction failed");
		goto free_m;
	}
	if (!(p.total_s > 0)) {
		snprintf(out->err, sizeof(out->err), "the predicted iteration time is %g s", p.total_s);
		err = -EDOM;
		goto free_m;
	}
	pred_fill(m, g, &job, &p, sample_bytes, out);
free_m:
	tp_model_free(m);
free_g:
	tp_graph_free(g);
	return err;
}
