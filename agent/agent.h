/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The node agent's protocol server: the UNIX socket, the registered
 * instances (one per Slurm task that asked to start), their datasets, the
 * per-node log and the metrics file. When an instance starts is not decided
 * here but by a policy (struct tandem_agent_policy): the makespan model
 * (policy_model.c, on node.c's tracker and tandem.ko) in tandem-agent, the
 * fixed rules of policy_fixed.c (SECONDS, progress:F) inside it and alone
 * in tests. This part is libc only.
 *
 * All state lives in struct tandem_agent; nothing is kept in file statics,
 * so a test (or tandemctl) can run several agents in one process.
 */
#ifndef TANDEM_AGENT_H
#define TANDEM_AGENT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "lib/agent_proto.h"

/* a policy answer: wait for the next change on the instance's dataset */
#define TANDEM_AGENT_UNTIL_EVENT UINT64_MAX

struct tandem_agent;
struct tandem_agent_conn;
struct tandem_prom;

enum tandem_inst_state {
	TANDEM_INST_HELD,	/* registered, its task waits in the plugin */
	TANDEM_INST_RUNNING,	/* released; its pid is watched */
};

struct tandem_agent_dataset {
	struct tandem_agent_dataset *next;
	char *path;			/* canonical (realpath) */
	unsigned int held, running;
	uint64_t group_start_ms;	/* first registration since it was idle */
	unsigned int group_n;		/* instances in that group */
	/* counters, for the log and the metrics */
	uint64_t registrations, hold_ms_total, cancelled, left, done;
	uint64_t last_makespan_ms;	/* measured: group start to last exit */
	/* the policy's prediction of the group's makespan (0: none) and its source */
	uint64_t pred_ms, last_pred_ms;
	uint64_t groups;		/* groups that ended */
	char model[TANDEM_AGENT_WORD_MAX + 1];
	void *priv;			/* the policy's */
};

struct tandem_agent_inst {
	struct tandem_agent_inst *next;	/* registration order */
	uint64_t id;
	struct tandem_agent_dataset *ds;
	struct tandem_agent_inst *leader;	/* first task of the same step, or NULL */
	uint32_t job, step, task, uid, pid;
	uint32_t array_job, array_task;
	int has_array;
	struct tandem_stagger stagger;
	uint32_t maxhold_s;			/* what the plugin asked, capped */
	char *cmd;
	enum tandem_inst_state state;
	uint64_t t_register, t_release, t_exit;	/* Unix ms; 0 = not yet */
	uint64_t until;			/* held: policy's time, or UNTIL_EVENT */
	char reason[TANDEM_AGENT_WORD_MAX + 1];
	uint16_t progress;		/* permille, from PROGRESS */
	struct tandem_agent_conn *conn;	/* held: the plugin's connection */
	int pidfd;			/* running: readable when the task exits */
	void *watch;			/* conn.c's epoll source for pidfd */
	int32_t status;			/* from DONE */
	int has_status;
	uint64_t pred_ms;		/* group makespan predicted at its decision, 0: none */
	void *priv;			/* the policy's */
};

/*
 * decide() is asked for every held leader, in registration order, when it
 * registers and after every change on its dataset (a release, an exit, a
 * progress report, an instance that left, tandem_agent_reevaluate()). It
 * returns the release time in Unix ms (<= now: release now) or
 * TANDEM_AGENT_UNTIL_EVENT, and names the reason (a word of a-z and _) for
 * the log and the reply. It may set in->pred_ms and in->ds->pred_ms/model.
 *
 * The rest is optional: what happens to instances, for a policy that keeps
 * state of its own (in->priv, ds->priv), and its periodic work: poll() runs
 * in the event loop after every event, when its fd (if any) is readable and
 * when the time it asked for has come; it returns ms until it wants to run
 * again, or -1.
 */
struct tandem_agent_policy {
	const char *name;
	uint64_t (*decide)(void *priv, struct tandem_agent *a,
			   struct tandem_agent_inst *in, uint64_t now_ms,
			   const char **reason);
	/* registered (before decide) */
	void (*registered)(void *priv, struct tandem_agent *a, struct tandem_agent_inst *in);
	/* released: its task has not exec'd yet (the RELEASE is not sent yet) */
	void (*released)(void *priv, struct tandem_agent *a, struct tandem_agent_inst *in);
	/* exited, left, cancelled or dropped at shutdown: just before it is freed */
	void (*ended)(void *priv, struct tandem_agent *a, struct tandem_agent_inst *in);
	void (*dataset_free)(void *priv, struct tandem_agent_dataset *ds);
	/* more families for the metrics file */
	void (*metrics)(void *priv, struct tandem_agent *a, struct tandem_prom *p);
	int (*poll)(void *priv, struct tandem_agent *a, uint64_t now_ms);
	int poll_fd;			/* -1: none */
	void *priv;
};

struct tandem_agent_opts {
	const char *socket_path;	/* TANDEM_AGENT_SOCKET */
	const char *log_path;		/* NULL: none; "-": stderr */
	const char *metrics_dir;	/* NULL: none */
	const char *node;		/* metrics label; NULL: the host name */
	uint32_t max_hold_s;		/* cap on every hold, 1 .. 86400 */
	uint32_t auto_ms;		/* fixed rules: what "auto" staggers by */
	unsigned int max_conns;		/* open connections, held ones included */
	/* a non-root uid's open connections; all non-root ones together get max_conns / 2 */
	unsigned int max_user_conns;
	unsigned int request_timeout_ms;
};

struct tandem_agent {
	struct tandem_agent_opts o;
	const struct tandem_agent_policy *policy;
	char node[256];
	int lfd, epfd, sigfd;
	FILE *log;
	struct tandem_agent_conn *conns;
	unsigned int nconns;
	unsigned int nconns_user;	/* of them, from non-root peers */
	uint64_t accept_paused_until;	/* out of fds: accept again then (Unix ms), 0: not paused */
	uint64_t accept_refused;	/* connections refused (busy) or not accepted (no fd) */
	struct tandem_agent_inst *insts;
	struct tandem_agent_dataset *datasets;
	uint64_t next_id;
	uint64_t proto_errors[8];	/* by ERR code, see agent_err_codes */
	uint64_t releases[16];		/* by reason index */
	int stop;			/* SHUTDOWN or SIGTERM seen */
	int metrics_dirty;
	uint64_t metrics_at;		/* last write, Unix ms */
};

void tandem_agent_opts_default(struct tandem_agent_opts *o);
/* bind and listen (fails when another agent answers on the path) */
int tandem_agent_init(struct tandem_agent *a, const struct tandem_agent_opts *o,
		      const struct tandem_agent_policy *policy);
/* serve until SHUTDOWN, SIGTERM or SIGINT; held tasks are released first */
int tandem_agent_run(struct tandem_agent *a);
void tandem_agent_fini(struct tandem_agent *a);

/* the fixed rules (policy_fixed.c): SECONDS, progress:F, and auto without a model */
uint64_t tandem_agent_fixed_decide(void *priv, struct tandem_agent *a,
				   struct tandem_agent_inst *in, uint64_t now_ms,
				   const char **reason);
/* decide again for ds's held instances now (a policy's poll, after new data) */
void tandem_agent_reevaluate(struct tandem_agent *a, struct tandem_agent_dataset *ds);
/* the latest time in->maxhold allows, Unix ms */
uint64_t tandem_agent_inst_cap(const struct tandem_agent_inst *in);

/* base.c: the clock and the log, shared by every file (not for policies but the log) */
uint64_t tandem_agent_now_ms(void);
void tandem_agent_log(struct tandem_agent *a, const char *ev, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* conn.c: replies to a connection, queued for server.c's event loop */
int tandem_agent_send(struct tandem_agent *a, struct tandem_agent_conn *c,
		      const struct tandem_agent_msg *m, int final);
void tandem_agent_send_err(struct tandem_agent *a, struct tandem_agent_conn *c,
			   const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void tandem_agent_conn_close(struct tandem_agent *a, struct tandem_agent_conn *c);
/* the held instance a connection belongs to (its EOF means the task is gone) */
void tandem_agent_conn_attach(struct tandem_agent_conn *c, struct tandem_agent_inst *in);
void tandem_agent_conn_detach(struct tandem_agent_conn *c);
/* conn.c: watch a running instance's pid; -ESRCH when it is gone already */
int tandem_agent_watch_pid(struct tandem_agent *a, struct tandem_agent_inst *in);
void tandem_agent_unwatch_pid(struct tandem_agent *a, struct tandem_agent_inst *in);

/* state.c: one request from a peer (SO_PEERCRED), after parsing */
void tandem_agent_request(struct tandem_agent *a, struct tandem_agent_conn *c,
			  const struct tandem_agent_msg *m, uid_t uid, pid_t pid);
/* state.c: the held instance's connection closed (the task is gone) */
void tandem_agent_inst_left(struct tandem_agent *a, struct tandem_agent_inst *in);
/* state.c: the pidfd of a running instance became readable */
void tandem_agent_inst_exited(struct tandem_agent *a, struct tandem_agent_inst *in);
/* state.c: release what is due; returns ms until the next deadline or -1 */
int tandem_agent_tick(struct tandem_agent *a, uint64_t now_ms);
/* state.c: release every held instance (shutdown) */
void tandem_agent_release_all(struct tandem_agent *a, const char *reason);
void tandem_agent_state_free(struct tandem_agent *a);

/* prom_file.c: write <metrics_dir>/tandem_agent.prom now */
int tandem_agent_write_metrics(struct tandem_agent *a);
/* base.c: the reasons a release can have, as counted in a->releases[] */
extern const char *const tandem_agent_release_reasons[16];
int tandem_agent_reason_index(const char *reason);
extern const char *const tandem_agent_err_codes[8];

#endif
