// SPDX-License-Identifier: GPL-2.0
/*
 * tandem_spank.so: holds each task of a job given --tandem-dataset=DIR until
 * the node's agent releases it (Documentation/slurm.md).
 *
 * Where: slurm_spank_task_init_privileged, in the task's own process after
 * fork and before exec, still root, so the agent can check SO_PEERCRED (uid
 * 0, and the pid the task will exec as). Signals are blocked there by
 * slurmstepd; the wait reads them through a signalfd, so scancel ends it.
 * The process is still named "slurmstepd" there, and proctrack/linuxproc
 * (and cgroup) never signal a process of that name: it is renamed for the
 * wait, or scancel would reach it only as SIGKILL from the step's cleanup.
 *
 * Never a held job: the agent absent, silent, dead or refusing, or the
 * cap reached, the task starts; a signal or the agent's CANCEL ends it
 * unstarted. Either way the task gets one log line. Tasks without the
 * option are untouched. Nothing is kept between callbacks or contexts:
 * each callback reads the options (spank_option_getopt) and the plugstack
 * arguments itself.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "lib/agent_client.h"
#include "lib/agent_proto.h"

SPANK_PLUGIN(tandem, 1);

_Static_assert(sizeof(((struct tandem_agent_msg *)0)->dataset) >= PATH_MAX,
	       "realpath() writes up to PATH_MAX bytes");

#define REPLY_TIMEOUT_MS 2000	/* connect and the answer to REGISTER */
/* past maxhold the agent releases the task itself; this is for a wedged agent */
#define HOLD_GRACE_MS 2000
#define DONE_TIMEOUT_MS 1000
#define DEFAULT_MAX_HOLD_S 3600

enum { OPT_DATASET, OPT_STAGGER, OPT_MAXHOLD };

static int opt_check(int val, const char *optarg, int remote);

/* registered with spank_option_register: a table named spank_options is not read by sbatch */
static struct spank_option tandem_options[] = {
	{ "tandem-dataset", "DIR",
	  "Stagger this job's start against other jobs reading DIR (an absolute path) on the node",
	  1, OPT_DATASET, opt_check },
	{ "tandem-stagger", "auto|SECONDS|progress:F",
	  "How to stagger (default auto: the node agent decides)", 1, OPT_STAGGER, opt_check },
	{ "tandem-max-hold", "SECONDS",
	  "Never hold this job's tasks longer (default 3600)", 1, OPT_MAXHOLD, opt_check },
	SPANK_OPTIONS_TABLE_END
};

struct conf {
	char socket[sizeof(((struct sockaddr_un *)0)->sun_path)];
	uint32_t max_hold_s;
};

static int parse_seconds(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (!*s || *end || errno || *s == '-' || *s == '+' || v < 1 || v > TANDEM_AGENT_HOLD_MAX_S)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int dataset_ok(const char *s)
{
	size_t n = strlen(s);

	if (s[0] != '/' || n > TANDEM_AGENT_DATASET_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

/* called where the option is given (remote == 0) and again in slurmstepd */
static int opt_check(int val, const char *optarg, int remote)
{
	struct tandem_stagger st;
	uint32_t s;
	int ok;

	if (!optarg)
		optarg = "";
	switch (val) {
	case OPT_DATASET:
		ok = dataset_ok(optarg);
		break;
	case OPT_STAGGER:
		ok = !tandem_stagger_parse(optarg, &st);
		break;
	default:
		ok = !parse_seconds(optarg, &s);
	}
	if (ok)
		return 0;
	slurm_error("tandem: --%s=%s: must be %s", tandem_options[val].name, optarg,
		    val == OPT_DATASET ? "an absolute path without control characters" :
		    val == OPT_STAGGER ? "auto, SECONDS (0 to 86400) or progress:F (0 < F <= 1)" :
		    "a number of seconds from 1 to 86400");
	/* on the node, a bad value only means "not staggered" */
	return remote ? 0 : -1;
}

static void conf_read(int ac, char **av, struct conf *c, int verbose)
{
	snprintf(c->socket, sizeof(c->socket), "%s", TANDEM_AGENT_SOCKET);
	c->max_hold_s = DEFAULT_MAX_HOLD_S;
	for (int i = 0; i < ac; i++) {
		if (!strncmp(av[i], "socket=", 7) && strlen(av[i] + 7) < sizeof(c->socket) &&
		    av[i][7] == '/')
			snprintf(c->socket, sizeof(c->socket), "%s", av[i] + 7);
		else if (!strncmp(av[i], "max_hold=", 9) && !parse_seconds(av[i] + 9, &c->max_hold_s))
			;
		else if (verbose)
			slurm_error("tandem: plugstack.conf: ignoring \"%s\" (socket=/PATH, max_hold=1..86400)",
				    av[i]);
	}
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();
	struct conf c;

	if (ctx != S_CTX_LOCAL && ctx != S_CTX_REMOTE && ctx != S_CTX_ALLOCATOR)
		return 0;
	for (int i = 0; tandem_options[i].name; i++)
		if (spank_option_register(sp, &tandem_options[i]) != ESPANK_SUCCESS)
			slurm_error("tandem: cannot register --%s", tandem_options[i].name);
	conf_read(ac, av, &c, ctx == S_CTX_REMOTE);
	return 0;
}

static int opt_get(spank_t sp, int which, char **val)
{
	*val = NULL;
	return spank_option_getopt(sp, &tandem_options[which], val) == ESPANK_SUCCESS && *val;
}

/* the task as the agent sees it */
struct task {
	char tag[64];			/* "job 12.batch task 0" for log lines */
	struct tandem_agent_msg m;	/* REGISTER */
};

static int task_describe(spank_t sp, struct task *t, const struct conf *c)
{
	struct tandem_agent_msg *m = &t->m;
	uint32_t array_job = 0, array_task = 0;
	char *val, step[16];
	char **argv = NULL;
	int argc = 0;
	uid_t uid;

	memset(m, 0, sizeof(*m));
	m->verb = TANDEM_REQ_REGISTER;
	if (spank_get_item(sp, S_JOB_ID, &m->job) || spank_get_item(sp, S_JOB_STEPID, &m->step) ||
	    spank_get_item(sp, S_TASK_GLOBAL_ID, &m->task) || spank_get_item(sp, S_JOB_UID, &uid))
		return -1;
	m->uid = (uint32_t)uid;
	m->pid = (uint32_t)getpid();
	snprintf(t->tag, sizeof(t->tag), "job %u.%s task %u", m->job,
		 tandem_step_str(m->step, step, sizeof(step)), m->task);
	m->have = 1u << TANDEM_F_JOB | 1u << TANDEM_F_STEP | 1u << TANDEM_F_TASK |
		  1u << TANDEM_F_UID | 1u << TANDEM_F_PID | 1u << TANDEM_F_STAGGER |
		  1u << TANDEM_F_MAXHOLD | 1u << TANDEM_F_DATASET | 1u << TANDEM_F_CMD;
	/* not an array: 0, or NO_VAL in some steps */
	if (!spank_get_item(sp, S_JOB_ARRAY_ID, &array_job) && array_job &&
	    array_job <= TANDEM_AGENT_ID_MAX &&
	    !spank_get_item(sp, S_JOB_ARRAY_TASK_ID, &array_task) &&
	    array_task <= TANDEM_AGENT_ID_MAX) {
		m->array_job = array_job;
		m->array_task = array_task;
		m->have |= 1u << TANDEM_F_ARRAY_JOB | 1u << TANDEM_F_ARRAY_TASK;
	}
	m->stagger.mode = TANDEM_STAGGER_AUTO;
	if (opt_get(sp, OPT_STAGGER, &val) && tandem_stagger_parse(val, &m->stagger))
		return -1;
	m->maxhold_s = c->max_hold_s;
	if (opt_get(sp, OPT_MAXHOLD, &val) && parse_seconds(val, &m->maxhold_s))
		return -1;
	if (m->maxhold_s > c->max_hold_s)
		m->maxhold_s = c->max_hold_s;
	if (!spank_get_item(sp, S_JOB_ARGV, &argc, &argv)) {
		size_t o = 0;

		for (int i = 0; i < argc && o < sizeof(m->cmd) - 1; i++)
			o += (size_t)snprintf(m->cmd + o, sizeof(m->cmd) - o, "%s%s", i ? " " : "",
					      argv[i]);
	}
	return 0;
}

static double since(uint64_t t0)
{
	return (double)(tandem_agent_mono_ms() - t0) / 1000.0;
}

/*
 * A task that must not start ends here, after its one log line: Slurm
 * ignores an optional plugin's error, so returning -1 would not stop it.
 * A signal ends it the way the signal would have; the agent's CANCEL with
 * exit code 1, as slurmstepd ends a task it cannot set up.
 */
static void __attribute__((noreturn)) task_end(int signo)
{
	sigset_t set;

	if (signo > 0) {
		signal(signo, SIG_DFL);
		sigemptyset(&set);
		sigaddset(&set, signo);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		raise(signo);
	}
	_exit(1);
}

/* after HOLD: returns when the task may start; one log line either way */
static void wait_release(struct tandem_agent_client *l, const struct task *t, uint64_t t0)
{
	uint64_t deadline = t0 + (uint64_t)t->m.maxhold_s * 1000 + HOLD_GRACE_MS;
	struct tandem_agent_msg *r = malloc(sizeof(*r));
	int ret, signo = 0;
	size_t n;

	if (!r) {
		slurm_error("tandem: %s: out of memory while held; started", t->tag);
		return;
	}
	ret = tandem_agent_client_line(l, deadline, &n, &signo);
	if (ret == -EINTR) {
		slurm_error("tandem: %s: signal %d while held %.3f s; not started", t->tag, signo,
			    since(t0));
		task_end(signo);
	} else if (ret == -ETIMEDOUT) {
		slurm_error("tandem: %s: held %.3f s, past the cap of %u s and no release from the agent; started",
			    t->tag, since(t0), t->m.maxhold_s);
	} else if (ret <= 0 || tandem_agent_parse(l->buf, n, 1, r, NULL, 0, NULL) ||
		   (r->verb != TANDEM_REP_RELEASE && r->verb != TANDEM_REP_CANCEL)) {
		slurm_error("tandem: %s: agent went away after %.3f s held; started", t->tag, since(t0));
	} else if (r->verb == TANDEM_REP_CANCEL) {
		slurm_error("tandem: %s: cancelled by the agent (%s) after %.3f s held; not started",
			    t->tag, r->reason, since(t0));
		task_end(0);
	} else {
		slurm_info("tandem: %s: held %.3f s, released by the agent (%s)", t->tag, since(t0),
			   r->reason);
	}
	free(r);
}

/* the answer to REGISTER, acted on */
static void answer(struct tandem_agent_client *l, const struct task *t, const struct tandem_agent_msg *r,
		   uint64_t t0)
{
	switch (r->verb) {
	case TANDEM_REP_HOLD:
		wait_release(l, t, t0);
		break;
	case TANDEM_REP_RELEASE:
		slurm_info("tandem: %s: released at once by the agent (%s)", t->tag, r->reason);
		break;
	case TANDEM_REP_CANCEL:
		slurm_error("tandem: %s: cancelled by the agent (%s); not started", t->tag, r->reason);
		task_end(0);
	case TANDEM_REP_ERR:
		slurm_error("tandem: %s: agent refused (%s: %s); started without stagger", t->tag,
			    r->code, r->msg);
		break;
	default:
		slurm_error("tandem: %s: agent sent %s; started without stagger", t->tag,
			    tandem_agent_verb_name(r->verb));
	}
}

/* REGISTER; returns when the task may start (or ends it); one log line */
static void hold(struct tandem_agent_client *l, const struct task *t, const struct conf *c)
{
	uint64_t t0 = tandem_agent_mono_ms();
	struct tandem_agent_msg *r;
	int ret, signo = 0, n;
	size_t len;

	n = tandem_agent_format(&t->m, l->buf, sizeof(l->buf));
	if (n < 0) {
		slurm_error("tandem: %s: cannot describe the task to the agent (%s); started", t->tag,
			    strerror(-n));
		return;
	}
	ret = tandem_agent_client_connect(l, c->socket, t0 + REPLY_TIMEOUT_MS);
	if (!ret)
		ret = tandem_agent_client_send(l, l->buf, (size_t)n, t0 + REPLY_TIMEOUT_MS);
	/* a busy agent answers before reading and closes: its ERR is still there */
	if (ret == -EPIPE || ret == -ECONNRESET)
		ret = 0;
	if (ret) {
		slurm_error("tandem: %s: agent not reachable at %s (%s); started without stagger",
			    t->tag, c->socket, strerror(-ret));
		return;
	}
	ret = tandem_agent_client_line(l, t0 + REPLY_TIMEOUT_MS, &len, &signo);
	if (ret == -EINTR) {
		slurm_error("tandem: %s: signal %d while registering; not started", t->tag, signo);
		task_end(signo);
	}
	if (ret != 1) {
		slurm_error("tandem: %s: agent did not answer (%s); started without stagger", t->tag,
			    ret == -ETIMEDOUT ? "2 s timeout" : ret ? strerror(-ret) : "closed");
		return;
	}
	r = malloc(sizeof(*r));
	if (!r || tandem_agent_parse(l->buf, len, 1, r, NULL, 0, NULL)) {
		slurm_error("tandem: %s: agent sent a malformed answer; started without stagger", t->tag);
		free(r);
		return;
	}
	tandem_agent_client_consume(l, len);
	answer(l, t, r, t0);
	free(r);
}

/* the signals whose default action would end the task: scancel sends SIGTERM */
static int block_signals(sigset_t *old)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM };
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&set, sigs[i]);
	if (sigprocmask(SIG_BLOCK, &set, old))
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
	struct task *t;
	struct tandem_agent_client *l;
	struct conf c;
	sigset_t old;
	char *ds, name[17] = "";

	if (!spank_remote(sp) || !opt_get(sp, OPT_DATASET, &ds))
		return 0;
	conf_read(ac, av, &c, 0);
	t = calloc(1, sizeof(*t));
	l = calloc(1, sizeof(*l));
	if (!t || !l) {
		slurm_error("tandem: out of memory; task started without stagger");
		goto out_free;
	}
	if (!dataset_ok(ds) || task_describe(sp, t, &c)) {
		slurm_error("tandem: %s: bad --tandem-* values or Slurm items; started without stagger",
			    t->tag[0] ? t->tag : "task");
		goto out_free;
	}
	/* the agent keys datasets by this and never resolves a path itself */
	if (!realpath(ds, t->m.dataset)) {
		slurm_error("tandem: %s: --tandem-dataset=%s: %s; started without stagger", t->tag, ds,
			    strerror(errno));
		goto out_free;
	}
	if (t->m.step == TANDEM_STEP_EXTERN)
		goto out_free;	/* the extern step runs no user work */
	tandem_agent_client_init(l, block_signals(&old));
	if (prctl(PR_GET_NAME, name) || prctl(PR_SET_NAME, "tandem-held"))
		name[0] = '\0';
	hold(l, t, &c);
	if (name[0])
		prctl(PR_SET_NAME, name);
	tandem_agent_client_close(l);
	if (l->sfd >= 0) {
		close(l->sfd);
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
out_free:
	free(l);
	free(t);
	return 0;
}

/* best effort: the agent also sees the exit through a pidfd */
int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	struct tandem_agent_msg m = { .verb = TANDEM_REQ_DONE,
				      .have = 1u << TANDEM_F_JOB | 1u << TANDEM_F_STEP |
					      1u << TANDEM_F_TASK | 1u << TANDEM_F_STATUS };
	uint64_t deadline = tandem_agent_mono_ms() + DONE_TIMEOUT_MS;
	struct tandem_agent_client *l;
	struct conf c;
	char *ds;
	int status = 0, signo, n;
	size_t len;

	if (!spank_remote(sp) || !opt_get(sp, OPT_DATASET, &ds))
		return 0;
	conf_read(ac, av, &c, 0);
	if (spank_get_item(sp, S_JOB_ID, &m.job) || spank_get_item(sp, S_JOB_STEPID, &m.step) ||
	    spank_get_item(sp, S_TASK_GLOBAL_ID, &m.task) ||
	    spank_get_item(sp, S_TASK_EXIT_STATUS, &status) || m.step == TANDEM_STEP_EXTERN)
		return 0;
	m.status = status;
	l = calloc(1, sizeof(*l));
	if (!l)
		return 0;
	tandem_agent_client_init(l, -1);
	n = tandem_agent_format(&m, l->buf, sizeof(l->buf));
	if (n < 0 || tandem_agent_client_connect(l, c.socket, deadline) ||
	    tandem_agent_client_send(l, l->buf, (size_t)n, deadline) || tandem_agent_client_line(l, deadline, &len, &signo) != 1)
		slurm_debug("tandem: job %u task %u: agent did not take DONE", m.job, m.task);
	tandem_agent_client_close(l);
	free(l);
	return 0;
}
