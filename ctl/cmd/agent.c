// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl [-j] agent status [--socket PATH]
 *
 * The node agent's tasks and datasets: its STATUS answer (the protocol of
 * lib/agent_proto.h, Documentation/slurm.md), with each held task's release
 * time and reason, the predicted makespan of each dataset's group of tasks,
 * and the last group's measured and predicted makespans. Anyone may ask;
 * command lines are shown for the caller's own tasks (root: all).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "lib/agent_client.h"
#include "lib/agent_proto.h"
#include "lib/log.h"
#include "lib/out.h"

#define AGENT_TIMEOUT_S 5	/* connect, send, and each line of the answer */

static uint64_t agent_deadline(void)
{
	return tandem_agent_mono_ms() + AGENT_TIMEOUT_S * 1000;
}

/* the agent's next answer line, parsed; -ECONNRESET when it closed */
static int read_line(struct tandem_agent_client *cl, struct tandem_agent_msg *m)
{
	char err[256];
	const char *code;
	int ret, signo;
	size_t l;

	ret = tandem_agent_client_line(cl, agent_deadline(), &l, &signo);
	if (ret <= 0)
		return ret ? ret : -ECONNRESET;
	ret = tandem_agent_parse(cl->buf, l, 1, m, err, sizeof(err), &code);
	if (ret)
		ctl_err("agent: cannot read its answer: %s", err);
	tandem_agent_client_consume(cl, l);
	return ret;
}

static void print_time(const char *key, const char *label, uint64_t ms)
{
	char b[32], fmt[64];
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(b, sizeof(b), "%H:%M:%S", &tm);
	snprintf(fmt, sizeof(fmt), "%s %s.%03u", label, b, (unsigned int)(ms % 1000));
	out_double(key, NULL, ms / 1000.0);
	out_text("%s", fmt);
}

static void print_task(const struct tandem_agent_msg *m, uint64_t now)
{
	char s[24];
	bool held = !strcmp(m->state, "held");

	out_obj_open(NULL);
	out_u64("id", "  id %llu", m->id);
	out_u64("job", " job %llu", m->job);
	if (TANDEM_HAS(m, TANDEM_F_ARRAY_JOB)) {
		out_u64("array_job", " (array %llu", m->array_job);
		out_u64("array_task", "_%llu)", m->array_task);
	}
	out_str("step", " step %s", tandem_step_str(m->step, s, sizeof(s)));
	out_u64("task", " task %llu", m->task);
	out_u64("uid", " uid %llu", m->uid);
	if (TANDEM_HAS(m, TANDEM_F_PID))
		out_u64("pid", " pid %llu", m->pid);
	out_str("state", ": %s", m->state);
	out_str("stagger", " (stagger %s)", tandem_stagger_str(&m->stagger, s, sizeof(s)));
	print_time("since_unix_s", held ? ", registered" : ", released", m->since_ms);
	if (held && TANDEM_HAS(m, TANDEM_F_UNTIL) && m->until_ms)
		print_time("until_unix_s", ", until", m->until_ms);
	else if (held)
		out_null("until_unix_s", ", until an event");
	if (held)
		out_double("held_s", " (held %.1f s)", (now - m->since_ms) / 1000.0);
	if (TANDEM_HAS(m, TANDEM_F_REASON))
		out_str("reason", ", reason %s", m->reason);
	if (TANDEM_HAS(m, TANDEM_F_PRED))
		out_double("predicted_makespan_s", ", predicted makespan %.1f s", m->pred_ms / 1000.0);
	if (!held)
		out_double("progress", ", progress %.3f", m->frac_permille / 1000.0);
	out_str("dataset", "\n    dataset %s", m->dataset);
	if (TANDEM_HAS(m, TANDEM_F_CMD))
		out_str("cmd", m->cmd[0] ? "\n    cmd %s" : NULL, m->cmd);
	out_text("\n");
	out_obj_close();
}

static void print_dataset(const struct tandem_agent_msg *m)
{
	out_obj_open(NULL);
	out_str("dataset", "  %s:", m->dataset);
	out_u64("held", " held %llu", m->held);
	out_u64("running", ", running %llu", m->running);
	if (m->since_ms) {
		out_u64("group_tasks", ", group of %llu", m->n);
		print_time("group_since_unix_s", " since", m->since_ms);
	} else {
		out_null("group_since_unix_s", ", idle");
	}
	if (TANDEM_HAS(m, TANDEM_F_PRED))
		out_double("predicted_makespan_s", ", predicted makespan %.1f s", m->pred_ms / 1000.0);
	else
		out_null("predicted_makespan_s", NULL);
	out_str("model", TANDEM_HAS(m, TANDEM_F_MODEL) ? " (%s)" : NULL,
		TANDEM_HAS(m, TANDEM_F_MODEL) ? m->model : "none");
	if (TANDEM_HAS(m, TANDEM_F_MEASURED))
		out_double("last_measured_makespan_s", "\n    last group: measured %.1f s",
			   m->measured_ms / 1000.0);
	else
		out_null("last_measured_makespan_s", NULL);
	if (TANDEM_HAS(m, TANDEM_F_LASTPRED))
		out_double("last_predicted_makespan_s", ", predicted %.1f s", m->lastpred_ms / 1000.0);
	else
		out_null("last_predicted_makespan_s", NULL);
	out_text("\n");
	out_obj_close();
}

struct status_doc {
	struct tandem_agent_msg ok;
	struct tandem_agent_msg *lines;	/* TASK and DATASET, in order */
	size_t n;
};

static int status_read(struct tandem_agent_client *r, struct status_doc *d)
{
	struct tandem_agent_msg *m;
	int err;

	err = read_line(r, &d->ok);
	if (!err && d->ok.verb == TANDEM_REP_ERR) {
		ctl_err("agent reports: %s (%s)", d->ok.msg, d->ok.code);
		err = -EPROTO;
	} else if (!err && d->ok.verb != TANDEM_REP_OK) {
		ctl_err("agent: answered %s to STATUS", tandem_agent_verb_name(d->ok.verb));
		err = -EPROTO;
	}
	while (!err) {
		m = realloc(d->lines, (d->n + 1) * sizeof(*m));
		if (!m) {
			err = -ENOMEM;
			break;
		}
		d->lines = m;
		err = read_line(r, &d->lines[d->n]);
		if (err || d->lines[d->n].verb == TANDEM_REP_END)
			break;
		d->n++;
	}
	return err;
}

static void status_print(const char *path, const struct status_doc *d)
{
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_REALTIME, &ts);
	now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	out_obj_open(NULL);
	out_str("socket", "agent %s:", path);
	out_u64("tasks", " %llu tasks", d->ok.n);
	out_u64("held", " (%llu held", d->ok.held);
	out_u64("running", ", %llu running)\n", d->ok.running);
	out_arr_open("task_list");
	for (size_t i = 0; i < d->n; i++)
		if (d->lines[i].verb == TANDEM_REP_TASK)
			print_task(&d->lines[i], now);
	out_arr_close();
	out_text("datasets:\n");
	out_arr_open("datasets");
	for (size_t i = 0; i < d->n; i++)
		if (d->lines[i].verb == TANDEM_REP_DATASET)
			print_dataset(&d->lines[i]);
	out_arr_close();
	out_obj_close();
}

static int cmd_agent_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ 0 }
	};
	const char *path = TANDEM_AGENT_SOCKET;
	struct tandem_agent_msg req = { .verb = TANDEM_REQ_STATUS };
	struct tandem_agent_client *cl;
	struct status_doc d = { 0 };
	char line[64];
	int opt, n, err;

	optind = 0;
	while ((opt = ctl_getopt(argc, argv, "", opts, "agent", "status")) != -1) {
		if (opt != 's')
			return opt;	/* CTL_EUSAGE, printed */
		path = optarg;
	}
	if (optind < argc)
		return ctl_usage_err("agent", "status", "unexpected argument '%s'", argv[optind]);
	cl = malloc(sizeof(*cl));
	if (!cl)
		return -ENOMEM;
	tandem_agent_client_init(cl, -1);
	err = tandem_agent_client_connect(cl, path, agent_deadline());
	if (err) {
		ctl_err("agent not reachable at %s: %s", path, strerror(-err));
		tandem_agent_client_close(cl);
		free(cl);
		return err;
	}
	n = tandem_agent_format(&req, line, sizeof(line));
	err = n < 0 ? n : tandem_agent_client_send(cl, line, (size_t)n, agent_deadline());
	if (!err)
		err = status_read(cl, &d);
	tandem_agent_client_close(cl);
	free(cl);
	if (err == -ETIMEDOUT || err == -ECONNRESET)
		ctl_err("agent at %s: %s", path, err == -ETIMEDOUT ?
			"no answer within 5 s" : "closed the connection");
	if (!err)
		status_print(path, &d);
	free(d.lines);
	return err;
}

TANDEM_CMD(agent_status, "agent", "status", cmd_agent_status, "[--socket PATH]",
	   "the node agent's held and running tasks, its decisions and predicted makespans");
