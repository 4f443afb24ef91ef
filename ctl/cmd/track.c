// SPDX-License-Identifier: GPL-2.0
/*
 * tandemctl track [OPTIONS] -- CMD ARGS...   run CMD as a tracked job
 * tandemctl track [OPTIONS] --pid PID        track a running process tree
 *
 * The tracker is loaded on first use and stays loaded (pinned in bpffs)
 * until `tandemctl tracker unload` (cmd/tracker.c); `tandemctl stats`
 * (cmd/stats.c) reads it from any later process.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "lib/out.h"
#include "tracker/tracker.h"
#include "lib/util.h"

struct track_args {
	const char *name;
	const char *job;		/* join this existing job */
	const char *dataset;
	char **files;			/* --files PATH... */
	int nfiles;
	pid_t pid;			/* --pid */
	bool quiet;
	char **cmd;			/* after "--" */
};

static int parse_pid(const char *s, pid_t *pid)
{
	uint64_t v;

	if (!s)
		return 0;	/* the caller says the value is missing */
	if (parse_u64(s, 0x3fffffff, &v) || !v)
		return ctl_usage_err("track", NULL, "bad pid '%s'", s);
	*pid = v;
	return 0;
}

/* --name, --job, --dataset, --pid: the one value each takes */
static int track_value(struct track_args *a, const char *o, const char *v)
{
	if (!strcmp(o, "--name"))
		a->name = v;
	else if (!strcmp(o, "--job"))
		a->job = v;
	else if (!strcmp(o, "--dataset"))
		a->dataset = v;
	else if (!strcmp(o, "--pid"))
		return parse_pid(v, &a->pid);
	else
		return -ENOENT;
	return 0;
}

/* options take one value, except --files which takes all up to the next option */
static int track_parse(int argc, char **argv, struct track_args *a)
{
	int i, err;

	for (i = 1; i < argc; i++) {
		const char *o = argv[i];

		if (!strcmp(o, "--")) {
			i++;
			break;
		} else if (!strcmp(o, "--quiet") || !strcmp(o, "-q")) {
			a->quiet = true;
		} else if (!strcmp(o, "--files")) {
			a->files = &argv[i + 1];
			while (i + 1 < argc && strncmp(argv[i + 1], "--", 2)) {
				i++;
				a->nfiles++;
			}
		} else if (o[0] != '-') {
			return ctl_usage_err("track", NULL, "unexpected argument '%s' (the command "
					     "goes after '--')", o);
		} else if ((err = track_value(a, o, i + 1 < argc ? argv[i + 1] : NULL)) == -ENOENT) {
			return ctl_bad_option(o, "track", NULL);
		} else if (i + 1 == argc) {
			return ctl_usage_err("track", NULL, "option '%s' needs a value", o);
		} else if (err) {
			return err;
		} else {
			i++;
		}
	}
	a->cmd = i < argc ? &argv[i] : NULL;
	if (!a->cmd == !a->pid)
		return ctl_usage_err("track", NULL, "give either -- CMD ARGS... or --pid PID");
	if (a->nfiles && !a->dataset)
		return ctl_usage_err("track", NULL, "--files needs --dataset NAME");
	return 0;
}

/*
 * Open the tracker, loaded when it is not; with --files, sized for them (a
 * loaded one grown when too small: tracker_register()).
 */
static int open_for(struct tracker *t, const struct track_args *a, uint32_t *dataset)
{
	struct tracker_add_result res;
	struct tracker_fit fit;
	bool loaded = false;
	int err;

	*dataset = 0;
	if (a->nfiles) {
		err = tracker_register(t, a->dataset, a->files, a->nfiles, 0, &res, &fit);
		loaded = fit.loaded;
		*dataset = tracker_add_counts_in(&res);
	} else {
		err = tracker_ensure_loaded(&loaded) ?: tracker_open(t);
	}
	if (loaded && !a->quiet)
		fprintf(stderr, "tandemctl: tracker loaded at %s\n", tracker_dir());
	if (err || a->nfiles || !a->dataset)
		return err;
	err = tracker_dataset_find(t, a->dataset, dataset);
	if (err) {
		ctl_err("track: no dataset '%s' in the tracker (register it with --files or 'tandemctl tracker dataset')",
			a->dataset);
		tracker_close(t);
	}
	return err;
}

static int resolve_job(struct tracker *t, const struct track_args *a,
		       uint32_t dataset, uint32_t *job, bool *created)
{
	char buf[TANDEM_TRK_NAME_LEN];
	const char *name = a->name;
	int err;

	*created = false;
	if (a->job) {
		err = tracker_job_find(t, a->job, job);
		if (err)
			ctl_err("track: no job '%s'", a->job);
		return err;
	}
	if (!name && a->cmd) {
		snprintf(buf, sizeof(buf), "%s", a->cmd[0]);
		name = basename(buf);
	}
	err = tracker_job_new(t, name, dataset, job);
	*created = !err;
	return err;
}

/* the child: wait until registered, then become CMD */
static void __attribute__((noreturn)) child_exec(int rfd, char **cmd)
{
	char c;

	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	if (read(rfd, &c, 1) != 1)
		_exit(127);	/* the parent could not register us */
	close(rfd);
	execvp(cmd[0], cmd);
	fprintf(stderr, "tandemctl: track: cannot run %s: %s\n", cmd[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

static int wait_status(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 127;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + WTERMSIG(st);
}

/* fork CMD, register it before it execs, wait; returns its exit code */
static int run_job(struct tracker *t, uint32_t job, bool root, char **cmd,
		   int *code)
{
	int fds[2], err;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	/* like a shell: ^C goes to the job, tandemctl reports its end */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(fds[0]);
		close(fds[1]);
		return err;
	}
	if (!pid) {
		close(fds[1]);
		child_exec(fds[0], cmd);
	}
	close(fds[0]);
	err = tracker_job_add_pid(t, job, pid);
	if (!err && root)
		err = tracker_job_set_root(t, job, pid);
	if (!err && write(fds[1], "g", 1) != 1)
		err = -errno;
	close(fds[1]);	/* without the byte the child exits 127 */
	*code = wait_status(pid);
	if (root)
		tracker_job_set_exit(t, job, *code);
	return err;
}

static void print_summary(struct tracker *t, uint32_t job, int code, bool quiet)
{
	struct tracker_snapshot s;
	struct tandem_trk_counts sum = {};

	if (tracker_snapshot_read(t, &s))
		return;
	for (size_t i = 0; i < s.ncounts; i++) {
		if (s.counts[i].key.job != job)
			continue;
		sum.miss += s.counts[i].c.miss;
		sum.own_hit += s.counts[i].c.own_hit;
		sum.shared_hit += s.counts[i].c.shared_hit;
	}
	tracker_snapshot_free(&s);
	out_obj_open(NULL);
	out_u64("job", NULL, job);
	out_s64("exit_code", NULL, code);
	out_u64("miss_pages", NULL, sum.miss);
	out_u64("own_hit_pages", NULL, sum.own_hit);
	out_u64("shared_hit_pages", NULL, sum.shared_hit);
	out_obj_close();
	if (!quiet && !out_is_json())
		fprintf(stderr, "tandemctl: job %u exited %d: missed %llu pages, own hits %llu, shared hits %llu ('tandemctl stats --job %u')\n",
			job, code, (unsigned long long)sum.miss,
			(unsigned long long)sum.own_hit,
			(unsigned long long)sum.shared_hit, job);
}

static int track_pid(struct tracker *t, uint32_t job, bool created, pid_t pid)
{
	int n = 0, err;

	err = tracker_job_add_tree(t, job, pid, &n);
	if (!err && created)
		err = tracker_job_set_root(t, job, pid);
	if (err)
		return err;
	out_obj_open(NULL);
	out_u64("job", "job %llu", job);
	out_u64("processes", ": %llu processes registered\n", n);
	out_obj_close();
	return 0;
}

static int cmd_track(int argc, char **argv)
{
	struct track_args a = {};
	struct tracker t;
	uint32_t dataset, job;
	bool created;
	int err, code = 0;

	err = track_parse(argc, argv, &a);
	if (!err)
		err = open_for(&t, &a, &dataset);
	if (err)
		return err;
	err = resolve_job(&t, &a, dataset, &job, &created);
	if (err)
		goto out_close;
	if (a.pid) {
		err = track_pid(&t, job, created, a.pid);
		goto out_close;
	}
	err = run_job(&t, job, created, a.cmd, &code);
	if (err) {
		ctl_err("track: %s", strerror(-err));
		goto out_close;
	}
	print_summary(&t, job, code, a.quiet);
	tracker_close(&t);
	/* the command's own exit status is tandemctl's */
	return code;

out_close:
	tracker_close(&t);
	return err;
}

TANDEM_CMD(track, "track", NULL, cmd_track,
	   "[--name NAME | --job ID|NAME] [--dataset ID|NAME [--files PATH...]] [--quiet] (-- CMD ARGS... | --pid PID)",
	   "run CMD (or attach to PID's process tree) as a job of the page-cache sharing tracker");
