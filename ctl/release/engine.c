// SPDX-License-Identifier: GPL-2.0
/*
 * Release engine (see release.h). One thread: every signal it cares about
 * is blocked and taken with sigtimedwait(), whose timeout is the next
 * release time or the progress poll, so there is no handler and no race
 * between a signal and the state it changes. All state is in struct rel_run.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/procio.h"
#include "lib/residency.h"
#include "lib/util.h"
#include "release/release.h"

#define REL_POLL_S	0.02	/* progress polling period */

int rel_hook_add(struct rel_run *r, const struct rel_ops *ops, void *state)
{
	if (r->nhooks == REL_MAX_HOOKS)
		return -E2BIG;
	r->hooks[r->nhooks++] = (struct rel_hook){ .ops = ops, .state = state };
	return 0;
}

const char *rel_state_name(enum rel_state s)
{
	static const char *const names[] = { "pending", "running", "exited", "skipped" };

	return s <= REL_SKIPPED ? names[s] : "?";
}

bool rel_inst_ok(const struct rel_inst *in)
{
	return in->state == REL_EXITED && WIFEXITED(in->status) && !WEXITSTATUS(in->status);
}

/* ---- processes ---- */

static sigset_t rel_sigs(void)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGCHLD);
	sigaddset(&s, SIGINT);
	sigaddset(&s, SIGTERM);
	sigaddset(&s, SIGHUP);
	return s;
}

int rel_scratch_dirs(struct rel_run *r, const char *mnt, const char *given)
{
	char dir[PATH_MAX];
	int err;

	for (int i = 0; i < r->n; i++) {
		if (strchr(r->inst[i].name, '/') || r->inst[i].name[0] == '.' ||
		    snprintf(dir, sizeof(dir), "%s/%s", mnt, r->inst[i].name) >= (int)sizeof(dir)) {
			ctl_err("--scratch: instance name '%s' cannot name a folder", r->inst[i].name);
			return -EINVAL;
		}
		if (mkdir(dir, 0700) && errno != EEXIST) {
			err = -errno;
			ctl_err("--scratch %s: %s: %s", given, dir, strerror(-err));
			return err;
		}
	}
	r->scratch = mnt;
	return 0;
}

/*
 * The child waits on a pipe before exec, so that the job_start hook (the
 * tracker) knows the process before it reads anything, and so that the
 * release itself is one write(): fork, the hooks and their map updates
 * (tens of ms under an emulator) all happen before t0.
 */
static void child_exec(struct rel_run *r, int idx, int gate, const sigset_t *old)
{
	struct rel_inst *in = &r->inst[idx];
	char c;

	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);	/* ignored dispositions survive exec */
	sigprocmask(SIG_SETMASK, old, NULL);
	for (int j = 0; j < idx; j++)	/* the others' gates: theirs to see closed */
		if (r->inst[j].gate >= 0)
			close(r->inst[j].gate);
	if (read(gate, &c, 1) != 1)
		_exit(126);	/* tandemctl went away or dropped it before the release */
	close(gate);
	if (r->scratch) {
		char dir[PATH_MAX];

		snprintf(dir, sizeof(dir), "%s/%s", r->scratch, in->name);
		setenv("TANDEM_SCRATCH", dir, 1);
	}
	execvp(in->argv[0], in->argv);
	fprintf(stderr, "tandemctl: %s: %s\n", in->argv[0], strerror(errno));
	_exit(127);
}

/* Fork instance idx, gated; it is a pending job of the hooks from now on. */
static int spawn(struct rel_run *r, int idx, const sigset_t *old)
{
	struct rel_inst *in = &r->inst[idx];
	int gate[2], err;
	pid_t pid;

	if (pipe2(gate, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(gate[0]);
		close(gate[1]);
		return err;
	}
	if (!pid) {
		close(gate[1]);
		child_exec(r, idx, gate[0], old);
	}
	close(gate[0]);
	setpgid(pid, pid);	/* as in the child: whichever runs first */
	in->pgid = pid;
	in->gate = gate[1];
	for (struct rel_hook *h = r->hooks; h < r->hooks + r->nhooks; h++) {
		if (!h->active || !h->ops->job_start)
			continue;
		err = h->ops->job_start(h->state, idx, in->name, pid);
		if (err)
			ctl_err("%s: registering the job with %s failed (%s); running it without",
				in->name, h->ops->name, strerror(-err));
	}
	return 0;
}

static void close_gate(struct rel_inst *in)
{
	if (in->gate >= 0)
		close(in->gate);
	in->gate = -1;
}

static int release(struct rel_run *r, int idx)
{
	struct rel_inst *in = &r->inst[idx];
	int err;

	in->start = now_s() - r->t0;
	err = write(in->gate, "g", 1) == 1 ? 0 : -errno;
	close_gate(in);
	in->state = REL_RUNNING;
	return err;
}

static void signal_running(struct rel_run *r, int sig)
{
	for (int i = 0; i < r->n; i++)
		if (r->inst[i].state == REL_RUNNING)
			kill(-r->inst[i].pgid, sig);
}

static void skip_pending(struct rel_run *r)
{
	for (int i = 0; i < r->n; i++) {
		if (r->inst[i].state == REL_PENDING) {
			r->inst[i].state = REL_SKIPPED;
			r->nskipped++;
			close_gate(&r->inst[i]);	/* it exits without exec */
		}
	}
}

static void leader_exited(struct rel_run *r, struct rel_inst *in, int idx, int status)
{
	in->state = REL_EXITED;
	in->status = status;
	in->end = now_s() - r->t0;
	/* what the leader left in its group is not part of a finished job */
	kill(-in->pgid, SIGTERM);
	for (struct rel_hook *h = r->hooks; h < r->hooks + r->nhooks; h++)
		if (h->active && h->ops->job_exit)
			h->ops->job_exit(h->state, idx, status);
	if (rel_inst_ok(in))
		return;
	r->nfailed++;
	if (r->fail_fast && !r->interrupted) {
		skip_pending(r);
		signal_running(r, SIGTERM);
	}
}

/* Reap everything; orphans we inherited as subreaper are reaped too. */
static void reap(struct rel_run *r)
{
	struct rusage ru;
	int status;
	pid_t pid;

	while ((pid = wait4(-1, &status, WNOHANG, &ru)) > 0) {
		for (int i = 0; i < r->n; i++) {
			struct rel_inst *in = &r->inst[i];

			if (in->pgid != pid)
				continue;
			/* the leader's CPU and its waited-for descendants' (workers) */
			in->cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
				    ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
			if (in->state == REL_PENDING) {	/* killed while it waited */
				in->start = now_s() - r->t0;
				close_gate(in);
			}
			if (in->state == REL_RUNNING || in->state == REL_PENDING)
				leader_exited(r, in, i, status);
		}
	}
}

/* ---- the loop ---- */

static double inst_progress(struct rel_run *r, int idx)
{
	struct rel_inst *in = &r->inst[idx];
	double bytes = r->ds.set ? (double)r->ds.set->files.bytes : 0, f = 0;
	struct procio io;

	for (struct rel_hook *h = r->hooks; h < r->hooks + r->nhooks; h++)
		if (h->active && h->ops->progress &&
		    !h->ops->progress(h->state, idx, in->pgid, &f))
			return f;
	if (procio_group(in->pgid, &io) || !(bytes > 0))
		return 0;
	return io.read_bytes / bytes;
}

/* Is instance idx due now? Sets *wait to how long until it may be. */
static bool due(struct rel_run *r, int idx, double now, double *wait)
{
	struct rel_inst *prev = idx ? &r->inst[idx - 1] : NULL;

	if (r->mode != TANDEM_STAGGER_PROGRESS) {
		*wait = fmin(*wait, r->inst[idx].delta - now);
		return r->inst[idx].delta <= now + 1e-4;
	}
	if (!prev)
		return true;
	if (prev->state != REL_RUNNING)		/* ended (or skipped): go */
		return prev->state != REL_PENDING;
	prev->loaded = inst_progress(r, idx - 1);
	*wait = fmin(*wait, REL_POLL_S);
	return prev->loaded >= r->fraction;
}

static int release_due(struct rel_run *r, double *wait)
{
	int err;

	for (int i = 0; i < r->n; i++) {
		if (r->inst[i].state != REL_PENDING)
			continue;
		if (!due(r, i, now_s() - r->t0, wait))
			continue;
		err = release(r, i);
		if (err)
			return err;
	}
	return 0;
}

static bool active(const struct rel_run *r)
{
	for (int i = 0; i < r->n; i++)
		if (r->inst[i].state == REL_PENDING || r->inst[i].state == REL_RUNNING)
			return true;
	return false;
}

static void on_signal(struct rel_run *r, int sig, double *kill_at)
{
	if (sig == SIGCHLD) {
		reap(r);
		return;
	}
	/* first signal: pass it on; second: no more patience */
	if (r->interrupted) {
		signal_running(r, SIGKILL);
		return;
	}
	r->interrupted = sig;
	skip_pending(r);
	signal_running(r, sig);
	*kill_at = now_s() + r->grace;
}

static int supervise(struct rel_run *r, const sigset_t *set)
{
	double kill_at = INFINITY;
	int err = 0;

	while (active(r)) {
		double wait = 1.0, now;
		struct timespec ts;
		int sig;

		if (!err && !r->interrupted)
			err = release_due(r, &wait);
		if (err) {	/* cannot start an instance: stop the others */
			skip_pending(r);
			signal_running(r, SIGTERM);
			kill_at = fmin(kill_at, now_s() + r->grace);
		}
		now = now_s();
		if (now >= kill_at) {
			signal_running(r, SIGKILL);
			kill_at = INFINITY;
		}
		wait = fmax(0, fmin(wait, kill_at - now));
		ts.tv_sec = (time_t)wait;
		ts.tv_nsec = (long)((wait - ts.tv_sec) * 1e9);
		sig = sigtimedwait(set, NULL, &ts);
		if (sig > 0)
			on_signal(r, sig, &kill_at);
		if (r->fail_fast && r->nfailed && kill_at == INFINITY)
			kill_at = now_s() + r->grace;
	}
	return err;
}

static int parent_of(int pid)
{
	struct proc_stat ps;

	return procio_stat(pid, &ps) ? -1 : ps.ppid;
}

/* SIGKILL every child of ours; true if there was one. */
static bool kill_children(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	bool any = false;

	while (d && (e = readdir(d))) {
		int pid = atoi(e->d_name);

		if (pid > 0 && parent_of(pid) == getpid()) {
			kill(pid, SIGKILL);
			any = true;
		}
	}
	if (d)
		closedir(d);
	return any;
}

/* Kill and reap what is left: every instance group, then inherited orphans. */
static void cleanup(struct rel_run *r)
{
	for (int i = 0; i < r->n; i++)
		if (r->inst[i].pgid > 0)
			kill(-r->inst[i].pgid, SIGKILL);
	/* orphans reparented to us may have children of their own: repeat */
	for (int round = 0; round < 100; round++) {
		bool any = kill_children();

		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (!any)
			break;
		usleep(10000);
	}
}

/* Without a hook that knows: cached pages per node by mincore and move_pages. */
static int residency_scan(struct rel_run *r)
{
	long psz = sysconf(_SC_PAGESIZE);
	struct residency res = { 0 };
	int err = 0;

	for (uint32_t f = 0; f < r->ds.set->files.n && !err; f++)
		err = residency_file(r->ds.set->files.paths[f], RESIDENCY_NODES, -1, &res);
	if (err)
		return err;
	r->nres_nodes = res.nnodes < REL_MAX_NODES ? res.nnodes : REL_MAX_NODES;
	for (int k = 0; k < r->nres_nodes; k++)
		r->residency[k] = (double)res.nodes[k] * psz;
	return 0;
}

/* The first hook that knows gives each instance's counters, and the residency. */
static void collect_stats(struct rel_run *r)
{
	struct rel_hook *h, *end = r->hooks + r->nhooks;

	for (int i = 0; i < r->n; i++) {
		r->inst[i].have_stats = false;
		for (h = r->hooks; h < end && !r->inst[i].have_stats; h++)
			r->inst[i].have_stats = h->active && h->ops->job_stats &&
				!h->ops->job_stats(h->state, i, &r->inst[i].stats);
	}
	r->residency_source = NULL;
	for (h = r->hooks; h < end && !r->residency_source; h++) {
		r->nres_nodes = 0;
		if (h->active && h->ops->residency &&
		    !h->ops->residency(h->state, r->residency, REL_MAX_NODES, &r->nres_nodes))
			r->residency_source = h->ops->name;
	}
	if (!r->residency_source) {
		r->nres_nodes = 0;
		if (r->ds.set && !residency_scan(r))
			r->residency_source = "mincore";
	}
}

/* Each hook gets the dataset; the ones that take it are in the run. */
static int register_dataset(struct rel_run *r)
{
	int err = 0;

	for (struct rel_hook *h = r->hooks; h < r->hooks + r->nhooks; h++) {
		int e = h->ops->dataset_register ? h->ops->dataset_register(h->state, &r->ds) : 0;

		h->active = !e;
		if (e == REL_EREFUSED)
			err = e;
	}
	return err;
}

static void finish_hooks(struct rel_run *r)
{
	for (struct rel_hook *h = r->hooks; h < r->hooks + r->nhooks; h++) {
		if (h->ops->finish)
			h->ops->finish(h->state);
		h->active = false;
	}
}

int rel_run(struct rel_run *r)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_pipe;
	sigset_t set = rel_sigs(), old;
	int err, ret;

	if (!r->grace)
		r->grace = 5;
	err = register_dataset(r);
	/* orphans of the instances come to us, so none can outlive the run */
	if (err || prctl(PR_SET_CHILD_SUBREAPER, 1)) {
		err = err ?: -errno;
		finish_hooks(r);
		return err;
	}
	/* an instance killed before its release must not take us along (EPIPE) */
	sigaction(SIGPIPE, &ign, &old_pipe);
	sigprocmask(SIG_BLOCK, &set, &old);
	for (int i = 0; i < r->n; i++)
		r->inst[i].gate = -1;
	err = 0;
	for (int i = 0; i < r->n && !err; i++)
		err = spawn(r, i, &old);
	r->t0 = now_s();
	if (err) {
		ctl_err("cannot fork an instance: %s", strerror(-err));
		skip_pending(r);
	}
	ret = supervise(r, &set);
	err = err ?: ret;
	cleanup(r);
	sigprocmask(SIG_SETMASK, &old, NULL);
	sigaction(SIGPIPE, &old_pipe, NULL);
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	for (int i = 0; i < r->n; i++)
		if (r->inst[i].state == REL_EXITED)
			r->makespan = fmax(r->makespan, r->inst[i].end);
	collect_stats(r);
	finish_hooks(r);
	if (err)
		return err;
	if (r->interrupted)
		return -EINTR;
	return r->nfailed || r->nskipped ? -ECHILD : 0;
}
