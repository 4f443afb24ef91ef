// SPDX-License-Identifier: GPL-2.0
/*
 * What the agent knows: the instances (registered tasks) and their datasets,
 * and what each request does to them. Who may do what is decided here from
 * the peer's SO_PEERCRED: REGISTER, DONE, RELEASE, CANCEL and SHUTDOWN are
 * root's (the SPANK plugin runs as root in slurmstepd), STATUS is anyone's,
 * PROGRESS is root's or the job owner's.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"

/* a field value for the log: percent-encoded like on the wire */
static const char *esc(const char *s, char *buf, size_t len)
{
	if (tandem_agent_escape(s, strlen(s), buf, len) < 0)
		snprintf(buf, len, "(long)");
	return buf;
}

static struct tandem_agent_dataset *dataset_get(struct tandem_agent *a, const char *path)
{
	struct tandem_agent_dataset *ds;

	for (ds = a->datasets; ds; ds = ds->next)
		if (!strcmp(ds->path, path))
			return ds;
	ds = calloc(1, sizeof(*ds));
	if (!ds || !(ds->path = strdup(path))) {
		free(ds);
		return NULL;
	}
	ds->next = a->datasets;
	a->datasets = ds;
	return ds;
}

uint64_t tandem_agent_inst_cap(const struct tandem_agent_inst *in)
{
	return in->t_register + (uint64_t)in->maxhold_s * 1000;
}

static uint64_t cap_of(const struct tandem_agent_inst *in)
{
	return tandem_agent_inst_cap(in);
}

static void count_release(struct tandem_agent *a, const char *reason)
{
	a->releases[tandem_agent_reason_index(reason)]++;
	a->metrics_dirty = 1;
}

static void inst_unlink(struct tandem_agent *a, struct tandem_agent_inst *in)
{
	struct tandem_agent_inst **pp, *o;

	for (pp = &a->insts; *pp; pp = &(*pp)->next) {
		if (*pp == in) {
			*pp = in->next;
			break;
		}
	}
	/* the next task of the same step leads it now */
	for (o = a->insts; o; o = o->next) {
		if (o->leader != in)
			continue;
		o->leader = NULL;
		for (struct tandem_agent_inst *f = o->next; f; f = f->next)
			if (f->leader == in)
				f->leader = o;
		break;
	}
	if (a->policy->ended)
		a->policy->ended(a->policy->priv, a, in);
	if (in->conn)
		tandem_agent_conn_detach(in->conn);
	tandem_agent_unwatch_pid(a, in);
	if (in->state == TANDEM_INST_HELD)
		in->ds->held--;
	else
		in->ds->running--;
	a->metrics_dirty = 1;
	free(in->cmd);
	free(in);
}

static void reevaluate(struct tandem_agent *a, struct tandem_agent_dataset *ds);

/* the dataset went idle: the group that used it is done */
static void group_end(struct tandem_agent *a, struct tandem_agent_dataset *ds, uint64_t end)
{
	char e[TANDEM_AGENT_LINE_MAX], pred[96] = "";

	if (ds->held || ds->running || !ds->group_start_ms)
		return;
	ds->last_makespan_ms = end - ds->group_start_ms;
	/* what the policy predicted at its last decision for the group */
	if (ds->pred_ms && ds->last_makespan_ms)
		snprintf(pred, sizeof(pred), " predicted_ms=%" PRIu64 " error=%.3f model=%s",
			 ds->pred_ms, ((double)ds->pred_ms - (double)ds->last_makespan_ms) /
			 (double)ds->last_makespan_ms, ds->model[0] ? ds->model : "none");
	tandem_agent_log(a, "makespan", "ds=%s n=%u start=%" PRIu64 " end=%" PRIu64
			 " measured_ms=%" PRIu64 "%s", esc(ds->path, e, sizeof(e)), ds->group_n,
			 ds->group_start_ms, end, ds->last_makespan_ms, pred);
	ds->last_pred_ms = ds->pred_ms;
	ds->pred_ms = 0;
	ds->groups++;
	ds->group_start_ms = 0;
	ds->group_n = 0;
	a->metrics_dirty = 1;
}

static void inst_release(struct tandem_agent *a, struct tandem_agent_inst *in,
			 const char *reason, uint64_t now)
{
	struct tandem_agent_msg m = { .verb = TANDEM_REP_RELEASE, .id = in->id,
				      .have = 1u << TANDEM_F_ID | 1u << TANDEM_F_REASON };
	char s[16];

	/* reason may be in->reason itself */
	snprintf(m.reason, sizeof(m.reason), "%s", reason);
	reason = m.reason;
	snprintf(in->reason, sizeof(in->reason), "%s", reason);
	in->state = TANDEM_INST_RUNNING;
	in->t_release = now;
	in->ds->held--;
	in->ds->running++;
	in->ds->hold_ms_total += now - in->t_register;
	count_release(a, reason);
	/* before the task can exec: a tracker sees everything it reads */
	if (a->policy->released)
		a->policy->released(a->policy->priv, a, in);
	if (in->conn) {
		struct tandem_agent_conn *c = in->conn;

		tandem_agent_conn_detach(c);
		tandem_agent_send(a, c, &m, 1);
	}
	/* at: the release time the staggers count from; ts: when it was logged */
	tandem_agent_log(a, "release", "id=%" PRIu64 " job=%u step=%s task=%u reason=%s held_ms=%"
			 PRIu64 " at=%" PRIu64 ".%03" PRIu64, in->id, in->job,
			 tandem_step_str(in->step, s, sizeof(s)), in->task, reason,
			 now - in->t_register, now / 1000, now % 1000);
	if (tandem_agent_watch_pid(a, in) == -ESRCH)
		in->t_exit = now;
	for (struct tandem_agent_inst *f = a->insts; f; f = f->next)
		if (f->leader == in && f->state == TANDEM_INST_HELD)
			inst_release(a, f, reason, now);
}

static void inst_cancel(struct tandem_agent *a, struct tandem_agent_inst *in, const char *reason)
{
	struct tandem_agent_msg m = { .verb = TANDEM_REP_CANCEL, .id = in->id,
				      .have = 1u << TANDEM_F_ID | 1u << TANDEM_F_REASON };

	snprintf(m.reason, sizeof(m.reason), "%s", reason);
	if (in->conn) {
		struct tandem_agent_conn *c = in->conn;

		tandem_agent_conn_detach(c);
		tandem_agent_send(a, c, &m, 1);
	}
	in->ds->cancelled++;
	tandem_agent_log(a, "cancel", "id=%" PRIu64 " job=%u task=%u reason=%s held_ms=%" PRIu64,
			 in->id, in->job, in->task, reason, tandem_agent_now_ms() - in->t_register);
	inst_unlink(a, in);
}

/* the policy's answer for a held leader, capped by its maxhold */
static uint64_t decide(struct tandem_agent *a, struct tandem_agent_inst *in, uint64_t now,
		       const char **reason)
{
	uint64_t until = a->policy->decide(a->policy->priv, a, in, now, reason);


	if (until == TANDEM_AGENT_UNTIL_EVENT)
		return until;	/* tick() applies the cap */
	if (until <= now)
		return now;
	if (until >= cap_of(in)) {
		*reason = "maxhold";
		return cap_of(in);
	}
	return until;
}

static void reevaluate(struct tandem_agent *a, struct tandem_agent_dataset *ds)
{
	tandem_agent_reevaluate(a, ds);
}

/* after a change on ds: held leaders that are due now go, the others get a new time */
void tandem_agent_reevaluate(struct tandem_agent *a, struct tandem_agent_dataset *ds)
{
	uint64_t now = tandem_agent_now_ms();
	int changed = 1;

	/* each round releases one or ends: it terminates */
	while (changed) {
		changed = 0;
		for (struct tandem_agent_inst *in = a->insts; in; in = in->next) {
			const char *reason = "due";
			uint64_t until;

			if (in->ds != ds || in->state != TANDEM_INST_HELD || in->leader)
				continue;
			until = decide(a, in, now, &reason);
			if (until <= now) {
				inst_release(a, in, reason, now);
				changed = 1;
				break;	/* the list may have changed under us */
			}
			in->until = until;
			snprintf(in->reason, sizeof(in->reason), "%s", reason);
		}
	}
}

static struct tandem_agent_inst *find_step_leader(struct tandem_agent *a, uint32_t job,
						  uint32_t step)
{
	for (struct tandem_agent_inst *o = a->insts; o; o = o->next)
		if (o->job == job && o->step == step && !o->leader)
			return o;
	return NULL;
}

static int job_started(struct tandem_agent *a, uint32_t job)
{
	for (struct tandem_agent_inst *o = a->insts; o; o = o->next)
		if (o->job == job && o->state == TANDEM_INST_RUNNING)
			return 1;
	return 0;
}

static void reply_hold(struct tandem_agent *a, struct tandem_agent_conn *c,
		       struct tandem_agent_inst *in)
{
	struct tandem_agent_msg m = { .verb = TANDEM_REP_HOLD, .id = in->id,
				      .until_ms = in->until == TANDEM_AGENT_UNTIL_EVENT ? 0 : in->until,
				      .have = 1u << TANDEM_F_ID | 1u << TANDEM_F_UNTIL |
					      1u << TANDEM_F_REASON };

	snprintf(m.reason, sizeof(m.reason), "%s", in->reason);
	in->conn = c;
	tandem_agent_conn_attach(c, in);
	tandem_agent_send(a, c, &m, 0);
	if (in->until == TANDEM_AGENT_UNTIL_EVENT)
		tandem_agent_log(a, "hold", "id=%" PRIu64 " job=%u task=%u until=event reason=%s",
				 in->id, in->job, in->task, in->reason);
	else
		tandem_agent_log(a, "hold", "id=%" PRIu64 " job=%u task=%u until=%" PRIu64
				 ".%03" PRIu64 " reason=%s", in->id, in->job, in->task,
				 in->until / 1000, in->until % 1000, in->reason);
}

/* the RELEASE answer of a REGISTER goes out through inst_release, like a pushed one */
static void release_now(struct tandem_agent *a, struct tandem_agent_conn *c,
			struct tandem_agent_inst *in, const char *reason, uint64_t now)
{
	in->conn = c;
	tandem_agent_conn_attach(c, in);
	inst_release(a, in, reason, now);
}

static struct tandem_agent_inst *inst_new(struct tandem_agent *a, const struct tandem_agent_msg *m,
					  struct tandem_agent_dataset *ds, uint64_t now)
{
	struct tandem_agent_inst *in = calloc(1, sizeof(*in)), **pp;

	if (!in || !(in->cmd = strdup(TANDEM_HAS(m, TANDEM_F_CMD) ? m->cmd : ""))) {
		free(in);
		return NULL;
	}
	in->id = a->next_id++;
	in->ds = ds;
	in->job = m->job;
	in->step = m->step;
	in->task = m->task;
	in->uid = m->uid;
	in->pid = m->pid;
	in->has_array = TANDEM_HAS(m, TANDEM_F_ARRAY_JOB);
	in->array_job = m->array_job;
	in->array_task = m->array_task;
	in->stagger = m->stagger;
	in->maxhold_s = m->maxhold_s < a->o.max_hold_s ? m->maxhold_s : a->o.max_hold_s;
	in->state = TANDEM_INST_HELD;
	in->t_register = now;
	in->pidfd = -1;
	for (pp = &a->insts; *pp; pp = &(*pp)->next)
		;
	*pp = in;
	if (!ds->held && !ds->running) {
		ds->group_start_ms = now;
		ds->group_n = 0;
	}
	ds->group_n++;
	ds->held++;
	ds->registrations++;
	a->metrics_dirty = 1;
	return in;
}

static void log_register(struct tandem_agent *a, const struct tandem_agent_inst *in)
{
	char e1[TANDEM_AGENT_LINE_MAX], e2[TANDEM_AGENT_LINE_MAX], s[16], st[24], arr[32] = "";

	if (in->has_array)
		snprintf(arr, sizeof(arr), " array=%u_%u", in->array_job, in->array_task);
	tandem_agent_log(a, "register", "id=%" PRIu64 " job=%u step=%s task=%u%s uid=%u pid=%u"
			 " ds=%s stagger=%s maxhold=%u cmd=%s", in->id, in->job,
			 tandem_step_str(in->step, s, sizeof(s)), in->task, arr, in->uid, in->pid,
			 esc(in->ds->path, e1, sizeof(e1)), tandem_stagger_str(&in->stagger, st, sizeof(st)),
			 in->maxhold_s, esc(in->cmd, e2, sizeof(e2)));
}

static void req_register(struct tandem_agent *a, struct tandem_agent_conn *c,
			 const struct tandem_agent_msg *m, pid_t peer_pid)
{
	struct tandem_agent_dataset *ds;
	struct tandem_agent_inst *in, *lead;
	const char *reason = "due";
	uint64_t now = tandem_agent_now_ms();

	if (m->pid != (uint32_t)peer_pid) {
		tandem_agent_send_err(a, c, "arg", "pid=%u is not the caller (SO_PEERCRED pid %d)",
				      m->pid, (int)peer_pid);
		return;
	}
	/*
	 * The plugin sends the canonical path (realpath in the task's process):
	 * the agent never touches a user's path, so a hung mount cannot stall it.
	 */
	ds = dataset_get(a, m->dataset);
	in = ds ? inst_new(a, m, ds, now) : NULL;
	if (!in) {
		tandem_agent_send_err(a, c, "busy", "out of memory");
		return;
	}
	log_register(a, in);
	if (a->policy->registered)
		a->policy->registered(a->policy->priv, a, in);
	lead = find_step_leader(a, m->job, m->step);
	if (lead != in) {
		/* the other tasks of a step start with its first one */
		in->leader = lead;
		if (lead->state == TANDEM_INST_RUNNING) {
			release_now(a, c, in, "same_step", now);
			return;
		}
		in->until = lead->until;
		snprintf(in->reason, sizeof(in->reason), "same_step");
		reply_hold(a, c, in);
		return;
	}
	if (job_started(a, m->job)) {
		/* a later step of a job that already started is not staggered again */
		release_now(a, c, in, "same_job", now);
		return;
	}
	in->until = decide(a, in, now, &reason);
	snprintf(in->reason, sizeof(in->reason), "%s", reason);
	if (in->until <= now) {
		release_now(a, c, in, reason, now);
		return;
	}
	reply_hold(a, c, in);
}

static struct tandem_agent_inst *find_task(struct tandem_agent *a, uint32_t job, uint32_t step,
					   uint32_t task)
{
	for (struct tandem_agent_inst *o = a->insts; o; o = o->next)
		if (o->job == job && o->step == step && o->task == task)
			return o;
	return NULL;
}

static void inst_finish(struct tandem_agent *a, struct tandem_agent_inst *in, uint64_t end)
{
	struct tandem_agent_dataset *ds = in->ds;
	char st[24] = "";

	if (in->has_status)
		snprintf(st, sizeof(st), " status=%d", in->status);
	tandem_agent_log(a, "exit", "id=%" PRIu64 " job=%u task=%u run_ms=%" PRIu64 "%s",
			 in->id, in->job, in->task, end - in->t_release, st);
	ds->done++;
	inst_unlink(a, in);
	group_end(a, ds, end);
	reevaluate(a, ds);
}

static void reply_ok(struct tandem_agent *a, struct tandem_agent_conn *c, uint32_t n)
{
	struct tandem_agent_msg m = { .verb = TANDEM_REP_OK, .n = n, .have = 1u << TANDEM_F_N };

	tandem_agent_send(a, c, &m, 1);
}

static void req_done(struct tandem_agent *a, struct tandem_agent_conn *c,
		     const struct tandem_agent_msg *m)
{
	struct tandem_agent_inst *in = find_task(a, m->job, m->step, m->task);

	/* idempotent: the pidfd may have seen the exit first and finished it */
	if (!in || in->state != TANDEM_INST_RUNNING) {
		reply_ok(a, c, 0);
		return;
	}
	in->status = m->status;
	in->has_status = 1;
	inst_finish(a, in, in->t_exit ? in->t_exit : tandem_agent_now_ms());
	reply_ok(a, c, 1);
}

static void status_line(struct tandem_agent *a, struct tandem_agent_conn *c,
			const struct tandem_agent_inst *in, int show_cmd)
{
	struct tandem_agent_msg *m = calloc(1, sizeof(*m));

	if (!m)
		return;
	m->verb = TANDEM_REP_TASK;
	m->have = 1u << TANDEM_F_ID | 1u << TANDEM_F_JOB | 1u << TANDEM_F_STEP |
		  1u << TANDEM_F_TASK | 1u << TANDEM_F_UID | 1u << TANDEM_F_STATE |
		  1u << TANDEM_F_DATASET | 1u << TANDEM_F_STAGGER | 1u << TANDEM_F_SINCE |
		  1u << TANDEM_F_PID | 1u << TANDEM_F_FRAC;
	m->id = in->id;
	m->job = in->job;
	m->step = in->step;
	m->task = in->task;
	m->uid = in->uid;
	m->pid = in->pid;
	m->frac_permille = in->progress;
	m->stagger = in->stagger;
	if (in->reason[0]) {
		m->have |= 1u << TANDEM_F_REASON;
		snprintf(m->reason, sizeof(m->reason), "%s", in->reason);
	}
	if (in->pred_ms) {
		m->have |= 1u << TANDEM_F_PRED;
		m->pred_ms = in->pred_ms;
	}
	m->since_ms = in->state == TANDEM_INST_HELD ? in->t_register : in->t_release;
	snprintf(m->state, sizeof(m->state), "%s", in->state == TANDEM_INST_HELD ? "held" : "running");
	snprintf(m->dataset, sizeof(m->dataset), "%s", in->ds->path);
	if (in->has_array) {
		m->have |= 1u << TANDEM_F_ARRAY_JOB | 1u << TANDEM_F_ARRAY_TASK;
		m->array_job = in->array_job;
		m->array_task = in->array_task;
	}
	if (in->state == TANDEM_INST_HELD) {
		m->have |= 1u << TANDEM_F_UNTIL;
		m->until_ms = in->until == TANDEM_AGENT_UNTIL_EVENT ? 0 : in->until;
	}
	if (show_cmd) {
		m->have |= 1u << TANDEM_F_CMD;
		snprintf(m->cmd, sizeof(m->cmd), "%s", in->cmd);
	}
	tandem_agent_send(a, c, m, 0);
	free(m);
}

/* a dataset's group now, and the last group's predicted and measured makespan */
static void status_dataset(struct tandem_agent *a, struct tandem_agent_conn *c,
			   const struct tandem_agent_dataset *ds)
{
	struct tandem_agent_msg *m = calloc(1, sizeof(*m));

	if (!m)
		return;
	m->verb = TANDEM_REP_DATASET;
	m->have = 1u << TANDEM_F_DATASET | 1u << TANDEM_F_HELD | 1u << TANDEM_F_RUNNING |
		  1u << TANDEM_F_SINCE | 1u << TANDEM_F_N;
	snprintf(m->dataset, sizeof(m->dataset), "%s", ds->path);
	m->held = ds->held;
	m->running = ds->running;
	m->since_ms = ds->group_start_ms;
	m->n = ds->group_n;
	if (ds->pred_ms) {
		m->have |= 1u << TANDEM_F_PRED;
		m->pred_ms = ds->pred_ms;
	}
	if (ds->groups) {
		m->have |= 1u << TANDEM_F_MEASURED;
		m->measured_ms = ds->last_makespan_ms;
	}
	if (ds->last_pred_ms) {
		m->have |= 1u << TANDEM_F_LASTPRED;
		m->lastpred_ms = ds->last_pred_ms;
	}
	if (ds->model[0]) {
		m->have |= 1u << TANDEM_F_MODEL;
		snprintf(m->model, sizeof(m->model), "%s", ds->model);
	}
	tandem_agent_send(a, c, m, 0);
	free(m);
}

static void req_status(struct tandem_agent *a, struct tandem_agent_conn *c, uid_t uid)
{
	struct tandem_agent_msg m = { .verb = TANDEM_REP_OK,
				      .have = 1u << TANDEM_F_N | 1u << TANDEM_F_HELD |
					      1u << TANDEM_F_RUNNING };

	for (struct tandem_agent_inst *in = a->insts; in; in = in->next) {
		m.n++;
		if (in->state == TANDEM_INST_HELD)
			m.held++;
		else
			m.running++;
	}
	tandem_agent_send(a, c, &m, 0);
	/* command lines are the owner's and root's to see */
	for (struct tandem_agent_inst *in = a->insts; in; in = in->next)
		status_line(a, c, in, uid == 0 || uid == in->uid);
	for (struct tandem_agent_dataset *ds = a->datasets; ds; ds = ds->next)
		status_dataset(a, c, ds);
	m = (struct tandem_agent_msg){ .verb = TANDEM_REP_END };
	tandem_agent_send(a, c, &m, 1);
}

/* RELEASE or CANCEL of a job's held tasks */
static void req_control(struct tandem_agent *a, struct tandem_agent_conn *c,
			const struct tandem_agent_msg *m)
{
	struct tandem_agent_dataset *touched = NULL;
	uint32_t n = 0;
	int again = 1;

	while (again) {
		again = 0;
		for (struct tandem_agent_inst *in = a->insts; in; in = in->next) {
			if (in->job != m->job || in->state != TANDEM_INST_HELD)
				continue;
			touched = in->ds;
			n++;
			if (m->verb == TANDEM_REQ_RELEASE)
				inst_release(a, in, "control", tandem_agent_now_ms());
			else
				inst_cancel(a, in, "control");
			again = 1;
			break;
		}
	}
	if (!n) {
		tandem_agent_send_err(a, c, "notfound", "no held task of job %u", m->job);
		return;
	}
	reply_ok(a, c, n);
	reevaluate(a, touched);
}

static void req_progress(struct tandem_agent *a, struct tandem_agent_conn *c,
			 const struct tandem_agent_msg *m, uid_t uid)
{
	struct tandem_agent_dataset *touched = NULL;
	uint32_t n = 0;

	for (struct tandem_agent_inst *in = a->insts; in; in = in->next) {
		if (in->job != m->job || in->state != TANDEM_INST_RUNNING)
			continue;
		if (uid != 0 && uid != in->uid) {
			tandem_agent_send_err(a, c, "perm", "job %u is not yours", m->job);
			return;
		}
		in->progress = m->frac_permille;
		touched = in->ds;
		n++;
	}
	if (!n) {
		tandem_agent_send_err(a, c, "notfound", "no running task of job %u", m->job);
		return;
	}
	tandem_agent_log(a, "progress", "job=%u frac=%u.%03u", m->job,
			 m->frac_permille / 1000, m->frac_permille % 1000);
	reply_ok(a, c, n);
	reevaluate(a, touched);
}

void tandem_agent_request(struct tandem_agent *a, struct tandem_agent_conn *c,
			  const struct tandem_agent_msg *m, uid_t uid, pid_t pid)
{
	/* everything but STATUS and PROGRESS is root's */
	if (uid != 0 && m->verb != TANDEM_REQ_STATUS && m->verb != TANDEM_REQ_PROGRESS) {
		tandem_agent_send_err(a, c, "perm", "%s is root's (you are uid %u)",
				      tandem_agent_verb_name(m->verb), (unsigned int)uid);
		return;
	}
	switch (m->verb) {
	case TANDEM_REQ_REGISTER:
		req_register(a, c, m, pid);
		break;
	case TANDEM_REQ_DONE:
		req_done(a, c, m);
		break;
	case TANDEM_REQ_STATUS:
		req_status(a, c, uid);
		break;
	case TANDEM_REQ_RELEASE:
	case TANDEM_REQ_CANCEL:
		req_control(a, c, m);
		break;
	case TANDEM_REQ_PROGRESS:
		req_progress(a, c, m, uid);
		break;
	case TANDEM_REQ_SHUTDOWN:
		reply_ok(a, c, 0);
		a->stop = 1;
		break;
	default:
		tandem_agent_send_err(a, c, "verb", "not a request");
	}
}

void tandem_agent_inst_left(struct tandem_agent *a, struct tandem_agent_inst *in)
{
	struct tandem_agent_dataset *ds = in->ds;

	ds->left++;
	tandem_agent_log(a, "left", "id=%" PRIu64 " job=%u task=%u held_ms=%" PRIu64,
			 in->id, in->job, in->task, tandem_agent_now_ms() - in->t_register);
	inst_unlink(a, in);
	group_end(a, ds, tandem_agent_now_ms());
	reevaluate(a, ds);
}

void tandem_agent_inst_exited(struct tandem_agent *a, struct tandem_agent_inst *in)
{
	/* wait a moment for DONE and its exit status; tick() finishes it */
	(void)a;
	if (!in->t_exit)
		in->t_exit = tandem_agent_now_ms();
}

#define DONE_GRACE_MS 1000

int tandem_agent_tick(struct tandem_agent *a, uint64_t now)
{
	struct tandem_agent_inst *in;
	int64_t wait = -1;

restart:
	for (in = a->insts; in; in = in->next) {
		uint64_t due;

		if (in->state == TANDEM_INST_RUNNING) {
			if (!in->t_exit && in->pidfd < 0 && kill((pid_t)in->pid, 0) && errno == ESRCH)
				in->t_exit = now;	/* no pidfd: polled */
			if (in->t_exit && now >= in->t_exit + DONE_GRACE_MS) {
				inst_finish(a, in, in->t_exit);
				goto restart;
			}
			due = in->t_exit ? in->t_exit + DONE_GRACE_MS : in->pidfd < 0 ? now + 1000 : 0;
		} else if (in->leader) {
			continue;
		} else {
			due = in->until == TANDEM_AGENT_UNTIL_EVENT ? cap_of(in) : in->until;
			if (due > cap_of(in))
				due = cap_of(in);
			if (due <= now) {
				inst_release(a, in, due == cap_of(in) &&
					     in->until != due ? "maxhold" : in->reason, now);
				reevaluate(a, in->ds);
				goto restart;
			}
		}
		if (due && (wait < 0 || (int64_t)(due - now) < wait))
			wait = (int64_t)(due - now);
	}
	return wait > INT_MAX ? INT_MAX : (int)wait;
}

void tandem_agent_release_all(struct tandem_agent *a, const char *reason)
{
	uint64_t now = tandem_agent_now_ms();
	struct tandem_agent_inst *in;

restart:
	for (in = a->insts; in; in = in->next) {
		if (in->state == TANDEM_INST_HELD) {
			inst_release(a, in, reason, now);
			goto restart;
		}
	}
}

void tandem_agent_state_free(struct tandem_agent *a)
{
	struct tandem_agent_dataset *ds;

	while (a->insts)
		inst_unlink(a, a->insts);
	while ((ds = a->datasets)) {
		a->datasets = ds->next;
		if (a->policy->dataset_free)
			a->policy->dataset_free(a->policy->priv, ds);
		free(ds->path);
		free(ds);
	}
}
