// SPDX-License-Identifier: GPL-2.0
/*
 * Joint training of encoder and regressor on measured runs: mean squared
 * error of log seconds per iteration, AdamW, mini-batches of whole
 * architectures (one encoder pass serves all of an architecture's runs).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runs.h"
#include "ghn.h"

void tp_train_opts_default(struct tp_train_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->epochs = 200;
	o->archs_per_step = 8;
	o->lr = 3e-3;
	o->weight_decay = 1e-4;
	o->seed = 1;
}

static void run_raw(const struct tp_model *m, const struct tp_dataset *d, int i, double *raw)
{
	const struct tp_run *r = &d->runs[i];

	/* training runs come from the device the dataset describes */
	tp_raw_features(m, d->archs[r->arch].g, r->batch, r->gpus, r->nodes, &m->train_dev, raw);
}

/*
 * Normalisation from the training runs. A feature that never varies (GPUs
 * and nodes on one machine, the device) gets std 1 and a zero column in
 * W1: its input is then 0 in training, so the column's gradient is 0 and
 * it stays 0 - the model ignores what the data cannot teach it.
 */
static void fit_normalisation(struct tp_model *m, const struct tp_dataset *d, const bool *mask)
{
	double raw[TP_MAX_FEATS], s[TP_MAX_FEATS] = { 0 }, s2[TP_MAX_FEATS] = { 0 };
	double ysum = 0;
	int n = 0;

	for (int i = 0; i < d->nruns; i++) {
		if (mask && !mask[d->runs[i].arch])
			continue;
		run_raw(m, d, i, raw);
		for (int k = 0; k < m->nfeat; k++) {
			s[k] += raw[k];
			s2[k] += raw[k] * raw[k];
		}
		ysum += log(d->runs[i].t) - tp_base_log(m, d->archs[d->runs[i].arch].g,
							 d->runs[i].batch);
		n++;
	}
	for (int k = 0; k < m->nfeat && n; k++) {
		double mean = s[k] / n, var = s2[k] / n - mean * mean;

		m->feat_mean[k] = (float)mean;
		m->feat_std[k] = var > 1e-10 ? (float)sqrt(var) : 1.0f;
		if (var <= 1e-10)
			for (int o = 0; o < m->cfg.reg_hidden; o++)
				m->p[P_R_W1][(size_t)o * m->in + m->cfg.hid + k] = 0.0f;
	}
	m->p[P_R_B3][0] = n ? (float)(ysum / n) : 0.0f;
}

struct adam {
	float *mom, *vel;
	long t;
};

static void adam_step(struct tp_model *m, struct adam *a, double lr, double wd)
{
	const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
	double c1, c2;

	a->t++;
	c1 = 1.0 - pow(b1, (double)a->t);
	c2 = 1.0 - pow(b2, (double)a->t);
	for (size_t i = 0; i < m->nparams; i++) {
		float g = m->grads[i];

		a->mom[i] = (float)(b1 * a->mom[i] + (1 - b1) * g);
		a->vel[i] = (float)(b2 * a->vel[i] + (1 - b2) * g * g);
		m->params[i] -= (float)(lr * (a->mom[i] / c1 / (sqrt(a->vel[i] / c2) + eps) +
					      wd * m->params[i]));
	}
}

/* Loss of one architecture's runs; gradients accumulate scaled by 1/nrows. */
static int arch_step(struct tp_model *m, const struct tp_dataset *d, int arch, double nrows,
		     bool backward, double *sse, struct tp_reg_acts *ra)
{
	const struct tp_arch *a = &d->archs[arch];
	float dg[256] = { 0 }, dx[256 + TP_MAX_FEATS];
	bool ghn = m->cfg.use_ghn && tp_model_regresses(m);
	struct tp_acts acts;
	int err;

	err = tp_acts_alloc(a->g->n, m->cfg.hid, &acts);
	if (err)
		return err;
	if (ghn)
		tp_ghn_forward(m, a->g, &acts);
	for (int k = 0; k < a->nruns; k++) {
		const struct tp_run *r = &d->runs[d->by_arch[a->run0 + k]];
		double e = tp_log_time(m, acts.gvec, a->g, r->batch, r->gpus, r->nodes,
				       &m->train_dev, ra) - log(r->t);

		*sse += e * e;
		if (!backward)
			continue;
		memset(dx, 0, m->in * sizeof(float));
		tp_reg_backward(m, ra, (float)(2.0 * e / nrows), dx);
		for (int j = 0; j < m->cfg.hid; j++)
			dg[j] += dx[j];
	}
	if (backward && ghn)
		err = tp_ghn_backward(m, a->g, &acts, dg);
	tp_acts_free(&acts);
	return err;
}

static void shuffle(int *v, int n, struct tp_rng *r)
{
	for (int i = n - 1; i > 0; i--) {
		int j = (int)(tp_rng_u64(r) % (uint64_t)(i + 1)), t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
}

static int epoch(struct tp_model *m, const struct tp_dataset *d, int *archs, int n,
		 const struct tp_train_opts *o, struct adam *ad, double lr, struct tp_reg_acts *ra,
		 double *sse)
{
	int err = 0;

	*sse = 0;
	for (int s = 0; s < n && !err; s += o->archs_per_step) {
		int e = s + o->archs_per_step < n ? s + o->archs_per_step : n;
		double rows = 0;

		for (int k = s; k < e; k++)
			rows += d->archs[archs[k]].nruns;
		tp_model_zero_grads(m);
		for (int k = s; k < e && !err; k++)
			err = arch_step(m, d, archs[k], rows, true, sse, ra);
		if (!err)
			adam_step(m, ad, lr, o->weight_decay);
	}
	return err;
}

static int collect(const struct tp_dataset *d, const bool *mask, int **archs, int *n, int *rows)
{
	*archs = malloc(d->narchs * sizeof(**archs));
	if (!*archs)
		return tp_fail(-ENOMEM, "out of memory");
	*n = *rows = 0;
	for (int a = 0; a < d->narchs; a++)
		if (!mask || mask[a]) {
			(*archs)[(*n)++] = a;
			*rows += d->archs[a].nruns;
		}
	if (!*n) {
		free(*archs);
		return tp_fail(-EINVAL, "no architectures to train on");
	}
	return 0;
}

/*
 * "R runs of N architectures on WHERE": the machine's line, or for runs on
 * a device that is not the machine's CPU (a GPU) that device, then the host.
 */
static void describe_data(struct tp_model *m, const struct tp_dataset *d, int rows, int n)
{
	const char *dev = d->dev.name, *host = d->machine;
	char where[96];

	if (d->mixed_devices)
		snprintf(where, sizeof(where), "several devices");
	else if (!host[0])
		snprintf(where, sizeof(where), "an unnamed machine");
	else if (dev[0] && strncmp(host, dev, strlen(dev)))
		snprintf(where, sizeof(where), "%.36s (host %.34s)", dev, host);
	else
		snprintf(where, sizeof(where), "%.60s", host);
	snprintf(m->trained_on, sizeof(m->trained_on), "%d runs of %d architectures on %.78s",
		 rows, n, where);
}

int tp_train(struct tp_model *m, const struct tp_dataset *d, const bool *mask,
	     const struct tp_train_opts *o, double *rmse)
{
	struct tp_reg_acts *ra = calloc(1, sizeof(*ra));
	struct adam ad = { calloc(m->nparams, sizeof(float)), calloc(m->nparams, sizeof(float)), 0 };
	int *archs = NULL, n = 0, rows = 0, err = 0;
	struct tp_rng rng;
	double sse = 0;

	tp_clear_error();
	if (!ra || !ad.mom || !ad.vel) {
		err = tp_fail(-ENOMEM, "out of memory for training");
		goto out;
	}
	err = collect(d, mask, &archs, &n, &rows);
	if (err)
		goto out;
	/* several devices: their features vary and are learned; no device check */
	m->train_dev = d->dev;
	if (d->mixed_devices)
		m->train_dev.name[0] = '\0';
	describe_data(m, d, rows, n);
	if (m->cfg.features & TP_FEAT_BASE)
		err = tp_base_fit(m, d, mask);
	if (err)
		goto out;
	fit_normalisation(m, d, mask);
	tp_ood_fit(m, d, mask);
	tp_rng_seed(&rng, o->seed);
	/* the baseline alone: no epoch, the regressor stays as initialised, unused */
	for (int ep = 0; ep < o->epochs && tp_model_regresses(m) && !err; ep++) {
		/* cosine decay to a tenth of the rate */
		double lr = o->lr * (0.1 + 0.45 * (1 + cos(M_PI * ep / o->epochs)));

		shuffle(archs, n, &rng);
		err = epoch(m, d, archs, n, o, &ad, lr, ra, &sse);
		if (o->verbose && (ep % 20 == 0 || ep == o->epochs - 1))
			fprintf(stderr, "epoch %d: train rmse(log t) %.4f\n", ep, sqrt(sse / rows));
	}
	sse = 0;
	for (int k = 0; k < n && !err; k++)
		err = arch_step(m, d, archs[k], rows, false, &sse, ra);
	if (!err && rmse)
		*rmse = sqrt(sse / rows);
out:
	free(archs);
	free(ra);
	free(ad.mom);
	free(ad.vel);
	return err;
}
