// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's default policy: the makespan model decides from where the
 * node is now (Documentation/slurm.md, "How the agent decides").
 *
 * For a held task with --tandem-stagger=auto on a dataset that has a stored
 * profile (tandemctl calibrate -o DIR/NAME.json, matched by the dataset's
 * path), the online model (ctl/model/online.c) is given the group's origin
 * (its first registration), every task running on the dataset with its
 * start and the bytes it read so far (the tracker), the planned ones, the
 * bytes of the dataset in the page cache, and the newcomer; its release is
 * the one that minimises the predicted makespan, unless that gains less
 * than --min-gain over starting now. Asked again after every change and
 * every --recheck while something is held, so a decision follows the
 * node's progress. SECONDS and progress:F keep their fixed meaning
 * (policy_fixed.c), with the model's prediction logged next to them; a
 * dataset without a profile gets the fixed rule for auto (--auto-stagger,
 * default 0: start now).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "agent.h"
#include "model/model.h"
#include "policy_model.h"

/* decisions: log again when the release moves this much or the prediction this fraction */
#define LOG_MOVE_MS 250
#define LOG_PRED_FRAC 0.02

struct mp_ds {
	struct node_ds nds;
	bool have_profile;
	struct profile prof;
	char prof_file[PATH_MAX];
	bool warned;			/* the model failed once: said so */
};

struct mp_inst {
	bool tracked;
	uint32_t trk_job;
	bool logged;
	uint64_t logged_until, logged_pred;
};

static double now_wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char *esc(const char *s, char *buf, size_t len)
{
	if (tandem_agent_escape(s, strlen(s), buf, len) < 0)
		snprintf(buf, len, "(long)");
	return buf;
}

/* ---- profiles: the JSON files in DIR whose dataset.path is the dataset ---- */

static bool profile_for(const char *dir, const char *path, struct profile *p, char *file,
			size_t len)
{
	struct dirent **ents;
	char err[160], f[PATH_MAX];
	bool found = false;
	int n;

	if (!dir || (n = scandir(dir, &ents, NULL, alphasort)) < 0)
		return false;
	for (int i = 0; i < n; i++) {
		size_t l = strlen(ents[i]->d_name);

		if (!found && l > 5 && !strcmp(ents[i]->d_name + l - 5, ".json") &&
		    snprintf(f, sizeof(f), "%s/%s", dir, ents[i]->d_name) < (int)sizeof(f) &&
		    !profile_load(f, p, err, sizeof(err))) {
			if (p->dataset_path && !strcmp(p->dataset_path, path) && p->ninst > 0) {
				found = true;
				snprintf(file, len, "%s", f);
			} else {
				profile_free(p);
			}
		}
		free(ents[i]);
	}
	free(ents);
	return found;
}

static struct mp_ds *mp_ds_of(struct tandem_agent_dataset *ds)
{
	if (!ds->priv)
		ds->priv = calloc(1, sizeof(struct mp_ds));
	return ds->priv;
}

/* a group starts: find its profile again, register the dataset again */
static void group_start(struct model_policy *mp, struct tandem_agent *a,
			struct tandem_agent_dataset *ds)
{
	struct mp_ds *d = mp_ds_of(ds);
	char e[TANDEM_AGENT_LINE_MAX], e2[TANDEM_AGENT_LINE_MAX];
	int err;

	if (!d)
		return;
	if (d->have_profile)
		profile_free(&d->prof);
	d->have_profile = profile_for(mp->o.profile_dir, ds->path, &d->prof, d->prof_file,
				      sizeof(d->prof_file));
	d->warned = false;
	if (d->have_profile)
		tandem_agent_log(a, "profile", "ds=%s file=%s instances=%d bytes=%.0f",
				 esc(ds->path, e, sizeof(e)), esc(d->prof_file, e2, sizeof(e2)),
				 d->prof.ninst, d->prof.dataset_bytes);
	else
		tandem_agent_log(a, "profile", "ds=%s file=none dir=%s", esc(ds->path, e, sizeof(e)),
				 mp->o.profile_dir ? esc(mp->o.profile_dir, e2, sizeof(e2)) : "none");
	err = agent_node_scan(&mp->node, &d->nds, ds->path);
	if (err)
		tandem_agent_log(a, "internal", "what=scan ds=%s err=%s", esc(ds->path, e, sizeof(e)),
				 strerror(-err));
}

static void mp_registered(void *priv, struct tandem_agent *a, struct tandem_agent_inst *in)
{
	struct model_policy *mp = priv;

	in->priv = calloc(1, sizeof(struct mp_inst));
	if (in->ds->group_n == 1)
		group_start(mp, a, in->ds);
}

/* ---- the model's input from the node's state ---- */

/* the profile's instance for a task: its command, or the only one, or the first */
static const struct model_inst *inst_for(const struct profile *p, const char *cmd)
{
	for (int i = 0; i < p->ninst; i++)
		if (p->inst[i].cmd && cmd && !strcmp(p->inst[i].cmd, cmd))
			return &p->inst[i].m;
	return &p->inst[0].m;
}

static int model_input(const struct mp_ds *d, struct model_sys *sys, char *err, size_t len)
{
	struct model_inst inst[MODEL_MAX_INST];
	struct model_args args;
	int n;

	model_args_init(&args);
	/* what is on disk now, when the walk has seen it */
	if (d->nds.state == NODE_DS_READY && d->nds.bytes > 0)
		args.dataset = d->nds.bytes;
	return model_args_build(&args, &d->prof, sys, inst, &n, err, len);
}

/* bytes a running instance read: the tracker; else elapsed time at its rate */
static double inst_read(struct model_policy *mp, const struct mp_ds *d,
			const struct tandem_agent_inst *o, const struct model_inst *m,
			const struct model_sys *sys, double elapsed)
{
	const struct mp_inst *pi = o->priv;
	double b;

	if (pi && pi->tracked && !agent_node_job_read(&mp->node, &d->nds, pi->trk_job, &b))
		return b;
	return fmin(elapsed * fmin(m->rate, model_bw(sys, 1)), m->epochs * sys->dataset);
}

struct mp_view {
	struct mo_online o;
	int running, planned;
	double read;		/* bytes the running ones read, summed */
	double resident;	/* measured, or -1 */
};

static int view_make(struct model_policy *mp, struct tandem_agent *a,
		     const struct tandem_agent_inst *in, uint64_t now, struct mp_view *v,
		     char *err, size_t len)
{
	struct mp_ds *d = in->ds->priv;
	uint64_t origin = in->ds->group_start_ms;
	int ret;

	memset(v, 0, sizeof(*v));
	ret = model_input(d, &v->o.sys, err, len);
	if (ret)
		return ret;
	v->o.now = (double)(now - origin) / 1000.0;
	v->o.newcomer = *inst_for(&d->prof, in->cmd);
	v->o.newcomer.seed = in->id;	/* independent shuffles: one seed each */
	for (const struct tandem_agent_inst *o = a->insts; o; o = o->next) {
		struct mo_online_inst *x = &v->o.inst[v->o.n];

		if (o == in || o->ds != in->ds || o->leader || o->job == in->job ||
		    v->o.n == MODEL_MAX_INST - 1)
			continue;
		if (o->state == TANDEM_INST_HELD && o->until == TANDEM_AGENT_UNTIL_EVENT)
			continue;	/* waits for progress: when is not known */
		x->m = *inst_for(&d->prof, o->cmd);
		x->m.seed = o->id;
		x->running = o->state == TANDEM_INST_RUNNING;
		x->start = (double)((x->running ? o->t_release : o->until) - origin) / 1000.0;
		if (x->running) {
			x->consumed = inst_read(mp, d, o, &x->m, &v->o.sys, v->o.now - x->start);
			v->read += x->consumed;
		}
		v->running += x->running;
		v->planned += !x->running;
		v->o.n++;
	}
	v->resident = -1;
	if (d->nds.state == NODE_DS_READY &&
	    agent_node_resident(&mp->node, &d->nds, &v->resident))
		v->resident = -1;
	v->o.resident = v->resident;
	v->o.latest = (double)(tandem_agent_inst_cap(in) - now) / 1000.0;
	return 0;
}

static void log_decision(struct tandem_agent *a, struct tandem_agent_inst *in, const char *mode,
			 const struct mp_view *v, const struct mo_online_result *r,
			 uint64_t until, uint64_t now, double took)
{
	struct mp_inst *pi = in->priv;
	char e[TANDEM_AGENT_LINE_MAX];
	uint64_t pred = in->pred_ms;

	if (pi && pi->logged && llabs((long long)until - (long long)pi->logged_until) < LOG_MOVE_MS &&
	    fabs((double)pred - (double)pi->logged_pred) < LOG_PRED_FRAC * (double)pi->logged_pred)
		return;
	if (pi) {
		pi->logged = true;
		pi->logged_until = until;
		pi->logged_pred = pred;
	}
	tandem_agent_log(a, "decide", "id=%" PRIu64 " job=%u ds=%s mode=%s model=profile "
			 "running=%d planned=%d read=%.0f resident=%.0f release_in_ms=%" PRId64
			 " pred_ms=%" PRIu64 " pred_now_ms=%.0f gain=%.3f evals=%u took_ms=%.1f",
			 in->id, in->job, esc(in->ds->path, e, sizeof(e)), mode, v->running,
			 v->planned, v->read, v->resident, (int64_t)until - (int64_t)now, pred,
			 r->makespan_now * 1000, r->gain, r->evals, took * 1000);
}

static void model_failed(struct tandem_agent *a, struct tandem_agent_inst *in, const char *why)
{
	struct mp_ds *d = in->ds->priv;
	char e[TANDEM_AGENT_LINE_MAX], e2[512];

	if (d->warned)
		return;
	d->warned = true;
	tandem_agent_log(a, "model_error", "ds=%s msg=%s", esc(in->ds->path, e, sizeof(e)),
			 esc(why, e2, sizeof(e2)));
}

static uint64_t mp_decide(void *priv, struct tandem_agent *a, struct tandem_agent_inst *in,
			  uint64_t now, const char **reason)
{
	struct model_policy *mp = priv;
	struct mp_ds *d = in->ds->priv;
	uint64_t until = tandem_agent_fixed_decide(NULL, a, in, now, reason);
	struct mo_online_result r;
	struct mp_view v;
	double t0 = now_wall();
	char err[256];
	int ret;

	if (!d || !d->have_profile)
		return until;
	ret = view_make(mp, a, in, now, &v, err, sizeof(err));
	if (!ret && in->stagger.mode == TANDEM_STAGGER_AUTO && v.o.n) {
		ret = mo_online_best(&v.o, NULL, mp->o.min_gain, &r, err, sizeof(err));
		if (!ret) {
			until = now + (uint64_t)llround(r.release * 1000);
			*reason = "auto";
		}
	} else if (!ret && until != TANDEM_AGENT_UNTIL_EVENT) {
		/* the fixed rule decides; the model predicts what it gives */
		ret = mo_online_eval(&v.o, until > now ? (double)(until - now) / 1000.0 : 0,
				     &r, err, sizeof(err));
	} else if (!ret) {
		return until;	/* progress:F: no time to predict for yet */
	}
	if (ret) {
		model_failed(a, in, err);
		return until;
	}
	in->pred_ms = (uint64_t)llround(r.makespan * 1000);
	in->ds->pred_ms = in->pred_ms;
	snprintf(in->ds->model, sizeof(in->ds->model), "profile");
	log_decision(a, in, in->stagger.mode == TANDEM_STAGGER_AUTO ? "auto" :
		     in->stagger.mode == TANDEM_STAGGER_SECONDS ? "seconds" : "progress",
		     &v, &r, until, now, now_wall() - t0);
	return until;
}

/* ---- what happens to instances ---- */

static void mp_released(void *priv, struct tandem_agent *a, struct tandem_agent_inst *in)
{
	struct model_policy *mp = priv;
	struct mp_inst *pi = in->priv;
	char name[48], arr[24] = "", s[16];
	int err;

	if (!pi || !mp->node.trk_open)
		return;
	if (in->has_array)
		snprintf(arr, sizeof(arr), "_%u", in->array_task);
	snprintf(name, sizeof(name), "slurm-%u%s.%s.%u", in->has_array ? in->array_job : in->job,
		 arr, tandem_step_str(in->step, s, sizeof(s)), in->task);
	err = agent_node_job_start(&mp->node, name, (pid_t)in->pid, &pi->trk_job);
	pi->tracked = !err;
	if (err)
		tandem_agent_log(a, "internal", "what=tracker_job id=%" PRIu64 " err=%s", in->id,
				 strerror(-err));
	else
		tandem_agent_log(a, "track", "id=%" PRIu64 " job=%u pid=%u tracker_job=%u name=%s",
				 in->id, in->job, in->pid, pi->trk_job, name);
}

static void mp_ended(void *priv, struct tandem_agent *a, struct tandem_agent_inst *in)
{
	struct model_policy *mp = priv;
	struct mp_inst *pi = in->priv;
	struct mp_ds *d = in->ds->priv;
	char e[TANDEM_AGENT_LINE_MAX];
	double b = -1;

	(void)a;
	if (pi && pi->tracked) {
		int st = in->status;

		if (d && agent_node_job_read(&mp->node, &d->nds, pi->trk_job, &b))
			b = -1;
		if (b >= 0)
			tandem_agent_log(a, "read", "id=%" PRIu64 " job=%u ds=%s bytes=%.0f",
					 in->id, in->job, esc(in->ds->path, e, sizeof(e)), b);
		agent_node_job_exit(&mp->node, pi->trk_job, !in->has_status ? -1 :
				    (st & 0x7f) ? 128 + (st & 0x7f) : (st >> 8) & 0xff);
	}
	free(pi);
	in->priv = NULL;
}

static void mp_dataset_free(void *priv, struct tandem_agent_dataset *ds)
{
	struct mp_ds *d = ds->priv;

	(void)priv;
	if (!d)
		return;
	if (d->have_profile)
		profile_free(&d->prof);
	agent_node_ds_fini(&d->nds);
	free(d);
	ds->priv = NULL;
}

static void mp_metrics(void *priv, struct tandem_agent *a, struct tandem_prom *p)
{
	struct model_policy *mp = priv;

	if (agent_node_metrics(&mp->node, p, a->node))
		tandem_agent_log(a, "internal", "what=node_metrics");
}

/* registrations that ended: their datasets get decided again with what they found */
static void scans_done(struct model_policy *mp, struct tandem_agent *a)
{
	char e[TANDEM_AGENT_LINE_MAX], e2[512];

	agent_node_ack(&mp->node);
	for (struct tandem_agent_dataset *ds = a->datasets; ds; ds = ds->next) {
		struct mp_ds *d = ds->priv;
		const struct node_scan *s;

		if (!d || !agent_node_scan_done(&mp->node, &d->nds, &s))
			continue;
		tandem_agent_log(a, "dataset", "ds=%s name=%s files=%" PRIu64 " bytes=%.0f "
				 "cached=%.0f tracker=%s tandem_ko=%s took_ms=%.0f%s%s",
				 esc(ds->path, e, sizeof(e)), s->name, s->files, s->bytes,
				 s->resident, s->trk_ok ? "yes" : "no", s->mod_ok ? "yes" : "no",
				 s->took_s * 1000, s->msg[0] ? " msg=" : "",
				 s->msg[0] ? esc(s->msg, e2, sizeof(e2)) : "");
		agent_node_scan_free((struct node_scan *)s);
		tandem_agent_reevaluate(a, ds);
	}
}

static int mp_poll(void *priv, struct tandem_agent *a, uint64_t now)
{
	struct model_policy *mp = priv;
	int held = 0, running = 0;

	scans_done(mp, a);
	for (const struct tandem_agent_inst *in = a->insts; in; in = in->next) {
		held += in->state == TANDEM_INST_HELD;
		running += in->state == TANDEM_INST_RUNNING;
	}
	if (held && now >= mp->next_check) {
		/* progress moved on: decide again with it */
		for (struct tandem_agent_dataset *ds = a->datasets; ds; ds = ds->next)
			if (ds->held)
				tandem_agent_reevaluate(a, ds);
		mp->next_check = now + mp->o.recheck_ms;
	}
	if (now >= mp->next_metrics) {
		/* the tracker's counters move while tasks run; a scratch drains */
		if (running || agent_node_scratch_any(&mp->node))
			a->metrics_dirty = 1;
		mp->next_metrics = now + 2000;
	}
	/* idle too: a scratch made meanwhile shows within 2 s (a readdir each time) */
	if (!held)
		return (int)(mp->next_metrics > now ? mp->next_metrics - now : 0);
	return (int)(mp->next_check > now ? mp->next_check - now : 0);
}

void model_policy_opts_default(struct model_policy_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->profile_dir = MODEL_POLICY_PROFILE_DIR;
	o->min_gain = MO_MIN_GAIN;
	o->recheck_ms = 1000;
	o->node.tracker = true;
	o->node.module = true;
}

int model_policy_init(struct model_policy *mp, const struct model_policy_opts *o)
{
	int err;

	memset(mp, 0, sizeof(*mp));
	mp->o = *o;
	err = agent_node_init(&mp->node, &o->node);
	if (err)
		return err;
	mp->policy = (struct tandem_agent_policy){
		.name = "model",
		.decide = mp_decide,
		.registered = mp_registered,
		.released = mp_released,
		.ended = mp_ended,
		.dataset_free = mp_dataset_free,
		.metrics = mp_metrics,
		.poll = mp_poll,
		.poll_fd = mp->node.efd,
		.priv = mp,
	};
	return 0;
}

void model_policy_fini(struct model_policy *mp)
{
	agent_node_fini(&mp->node);
}
