// SPDX-License-Identifier: GPL-2.0
/*
 * Calibration: a warm run of an instance's command (calibrate.h). The
 * dataset is in the page cache; the command runs in its own process group,
 * and every 20 ms this reads how much of the dataset it has read so far
 * (the tracker's per-job page counts, else rchar of the group from the
 * first open of a dataset file by one of its processes: seen by fanotify,
 * or without CAP_SYS_ADMIN by a poll that finds one open in /proc) and,
 * every 200 ms, the group's CPU
 * and each member's rchar. What the samples mean is worked out afterwards
 * (warmfit.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "calibrate/calibrate.h"
#include "calibrate/warm_run.h"
#include "lib/files.h"
#include "lib/log.h"
#include "lib/openwatch.h"
#include "lib/procio.h"
#include "lib/util.h"

#define WARM_POLL_S		0.02
#define WARM_SCAN_EVERY		10	/* polls between group scans */
#define WARM_EXIT_POLL_S	0.005
#define WARM_EXIT_GROUP_S	1.0	/* then the whole group gets it */
#define WARM_EXIT_LIMIT_S	3.0	/* SIGINT to the leader's end, at most */

int cal_warm_dataset(const struct sample_set *ds, double bytes)
{
	uint64_t n = cal_sample_count(ds, bytes);
	unsigned char *buf = malloc(1 << 20);
	int err = buf ? 0 : -ENOMEM;

	for (uint64_t s = 0; s < n && !err; s++) {
		const struct sample *sm = &ds->samples[s];
		int fd = open(ds->files.paths[sm->file], O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			err = -errno;
			break;
		}
		for (uint64_t off = 0; off < sm->len;) {
			ssize_t got = pread(fd, buf, sm->len - off < (1 << 20) ? sm->len - off :
					    (1 << 20), sm->off + off);

			if (got <= 0)
				break;
			off += got;
		}
		close(fd);
	}
	free(buf);
	return err;
}

/*
 * The job's stderr and stdout go to an unlinked file in /tmp, opened
 * O_APPEND so the job's writes land at its end whatever we pread; -1
 * (inherited) if none can be made.
 */
static int err_file(void)
{
	char path[] = "/tmp/tandem-calibrate-XXXXXX";
	int fd = open("/tmp", O_TMPFILE | O_RDWR | O_APPEND | O_CLOEXEC, 0600);

	if (fd >= 0)
		return fd;
	fd = mkostemp(path, O_APPEND | O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
	return fd;
}

/* What the job wrote to stderr since the last call, to ours. */
static void err_relay(struct warm_run *w)
{
	char buf[4096];
	ssize_t got;

	while (w->err_fd >= 0 && (got = pread(w->err_fd, buf, sizeof(buf), w->err_off)) > 0) {
		w->err_off += got;
		for (ssize_t done = 0, k; done < got; done += k) {
			k = write(STDERR_FILENO, buf + done, got - done);
			if (k <= 0)
				break;
		}
	}
}

/* Fork argv into its own group, held on a pipe until released (gate). */
static pid_t spawn_held(char *const *argv, int err_fd, int *gate)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(126);	/* not released */
		if (err_fd >= 0 && dup2(err_fd, STDERR_FILENO) < 0)
			_exit(126);
		/* its output too: calibrate's stdout is the profile's summary (or -j's JSON) */
		if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		return -1;
	}
	setpgid(pid, pid);	/* also here: no race with kill(-pid) */
	*gate = p[1];
	return pid;
}

/*
 * The exit: SIGINT to the leader and the time until it has ended (a Python
 * job unwinds, its DataLoader shuts its workers down, the interpreter tears
 * down), which is what a job takes after its last step: validation.md has
 * both measured (SIGINT to the whole group, as a terminal's ^C, takes
 * longer: the workers unwind too). A leader still there after a second (a
 * wrapper that waits for its child) gets the group SIGINTed. Returns the
 * seconds until the leader was reaped, or < 0 when it outlived the limit.
 */
static double measure_exit(pid_t pid)
{
	double t0 = now_s(), t = 0;
	bool group = false;

	if (kill(pid, SIGINT))
		return -1;
	for (; t < WARM_EXIT_LIMIT_S; t = now_s() - t0) {
		if (!group && t >= WARM_EXIT_GROUP_S) {
			kill(-pid, SIGINT);
			group = true;
		}
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return now_s() - t0;
		usleep(WARM_EXIT_POLL_S * 1e6);
	}
	return -1;
}

static void kill_group(pid_t pid, bool reaped)
{
	kill(-pid, SIGTERM);
	for (int i = 0; !reaped && i < 20 && waitpid(pid, NULL, WNOHANG) == 0; i++)
		usleep(100000);
	kill(-pid, SIGKILL);
	if (!reaped)
		waitpid(pid, NULL, 0);
}

static int ids_match(void *ctx, dev_t dev, ino_t ino)
{
	return file_index_find(ctx, dev, ino) >= 0;
}

/* One scan of the group: CPU and every member's rchar. */
static void scan_group(struct warm_run *w, double t)
{
	struct warm_scan *sc;
	int n;

	if (w->nscans == WARM_MAX_SCANS)
		return;
	sc = &w->scans[w->nscans];
	sc->t = t;
	procio_group_procs(w->pgid, sc->proc, WARM_MAX_PROCS, &n);
	sc->n = n < WARM_MAX_PROCS ? n : WARM_MAX_PROCS;
	sc->cpu = 0;
	for (int i = 0; i < sc->n; i++)
		sc->cpu += sc->proc[i].cpu_s;
	/* a member reaped between reading it and its parent: never go back */
	if (w->nscans && sc->cpu < w->scans[w->nscans - 1].cpu)
		sc->cpu = w->scans[w->nscans - 1].cpu;
	w->nscans++;
}

/* rchar of the members of the last scan, now */
static uint64_t group_rchar(const struct warm_run *w)
{
	const struct warm_scan *sc = &w->scans[w->nscans - 1];
	uint64_t sum = 0;

	for (int i = 0; i < sc->n; i++) {
		struct procio io = { 0 };

		procio_pid(sc->proc[i].pid, &io);
		sum += io.rchar;
	}
	return sum;
}

/* proc method: has a member of the last scan a dataset file open? */
static bool group_reads(const struct warm_run *w, struct file_index *ids)
{
	const struct warm_scan *sc = &w->scans[w->nscans - 1];

	for (int i = 0; i < sc->n; i++)
		if (procio_open_match(sc->proc[i].pid, ids_match, ids) == 1)
			return true;
	return false;
}

/* rchar from base to now; a member gone unreaped takes its part along: 0 */
static double rchar_since(uint64_t now, uint64_t base)
{
	return now > base ? (double)(now - base) : 0;
}

/*
 * How much of the dataset the job has read: tracker pages, or rchar (+ 1,
 * so that the first read counts) from the poll before fanotify saw a
 * dataset file opened, or from a poll that finds one open.
 */
static double read_count(struct warm_run *w, struct file_index *ids, bool scanned)
{
	struct tandem_trk_counts c;
	uint64_t now, prev;

	if (w->trk) {
		if (tracker_job_counts(&w->trk->t, w->job, w->trk->dataset, &c))
			return w->count;
		return c.first_access + c.own_hit + c.shared_hit;
	}
	if (w->first >= 0)
		return rchar_since(group_rchar(w), w->rchar0) + 1;
	if (!scanned)
		return 0;
	now = group_rchar(w);
	prev = w->rchar_prev;	/* 0 at the release: a job's first reads come before our first poll */
	w->rchar_prev = now;
	if (w->opened) {
		w->rchar0 = prev;	/* it opened the file since the previous poll */
		return rchar_since(now, prev) + 1;
	}
	if (!group_reads(w, ids))
		return 0;
	w->rchar0 = now;
	return 1;
}

static int push_sample(struct warm_run *w, double t, double count)
{
	if (count < w->count)
		count = w->count;	/* monotone: a reaped member's rchar moves to its parent */
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 1024;
		struct warm_sample *s = realloc(w->s, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		w->s = s;
		w->cap = cap;
	}
	w->s[w->n++] = (struct warm_sample){ t, count };
	w->count = count;
	return 0;
}

/*
 * Whether the run has seen what it needs: the read stalls at the first two
 * epoch boundaries and the reads resuming after the second (+0.3 s), or
 * the window. A run whose second epoch is its last ends by itself.
 */
static bool warm_done(struct warm_run *w, double t)
{
	if (w->first < 0)
		return false;
	if (t - w->first >= w->opt.window)
		return true;
	warm_boundary_update(w, t);
	return w->resumed2 >= 0 && t - w->resumed2 >= 0.3;
}

/* One poll: sample, maybe scan; 1 when the run is over. */
static int warm_poll(struct warm_run *w, struct file_index *ids, double t)
{
	bool scan = w->first < 0 || w->polls++ % WARM_SCAN_EVERY == 0;
	double c;

	if (scan)
		scan_group(w, t);
	c = read_count(w, ids, scan);
	if (w->first < 0 && c > 0) {
		w->first = t;
		if (!scan)
			scan_group(w, t);
		w->first_scan = w->nscans - 1;
	}
	if (push_sample(w, t, c))
		return -ENOMEM;
	return warm_done(w, t);
}

/*
 * fanotify's opens of dataset files, for the runs counted in /proc: a run
 * whose group opened one since the last drain is marked opened.
 */
struct warm_watch {
	struct openwatch ow;
	struct file_index *ids;
	struct warm_run *w;
	int n;
};

static void watch_event(void *arg, long idx, pid_t pid)
{
	struct warm_watch *ww = arg;
	pid_t pgid = pid;
	int i;

	(void)idx;	/* any file of the dataset */
	/* the leader by its pid, even once reaped; another member by its group */
	for (i = 0; i < ww->n && ww->w[i].pgid != pid; i++)
		;
	if (i == ww->n)
		pgid = getpgid(pid);
	for (i = 0; i < ww->n; i++)
		if (pgid > 0 && ww->w[i].pgid == pgid)
			ww->w[i].opened = true;
}

/* A watch where a run has no tracker; none (the /proc poll alone) if it cannot be had. */
static void watch_init(struct warm_watch *ww, struct warm_run *w, int n, struct file_index *ids)
{
	static bool said;	/* once a calibrate, not once a warm run */
	int err = 0;

	*ww = (struct warm_watch){ .ow = { .fan = -1 }, .ids = ids, .w = w, .n = n };
	for (int i = 0; i < n; i++)
		if (!w[i].trk) {
			err = openwatch_init(&ww->ow, &w[i].ds->files, w[i].ds->dir);
			break;
		}
	if (err && !said) {
		ctl_err("calibrate: fanotify: %s%s: a job's first dataset read is seen only "
			"while a poll finds a dataset file open", strerror(-err),
			err == -EPERM ? " (needs CAP_SYS_ADMIN)" : "");
		said = true;
	}
}

/* Before each round of polls; closed once every run has read. */
static void watch_poll(struct warm_watch *ww)
{
	int waiting = 0;

	if (ww->ow.fan < 0)
		return;
	openwatch_drain(&ww->ow, ww->ids, watch_event, ww);
	for (int i = 0; i < ww->n; i++)
		waiting += ww->w[i].first < 0;
	if (!waiting)
		openwatch_close(&ww->ow);
}

static int warm_loop(struct warm_run *w, struct warm_watch *ww)
{
	int status, ret = 0;
	double t;

	for (;;) {
		usleep(WARM_POLL_S * 1e6);
		t = now_s() - w->t0;
		watch_poll(ww);
		/* sample before reaping: a reaped leader takes its counters along */
		ret = warm_poll(w, ww->ids, t);
		err_relay(w);
		if (waitpid(w->pgid, &status, WNOHANG) == w->pgid) {
			/* it ended between the previous poll and now */
			w->ended = (t + now_s() - w->t0) / 2 - WARM_POLL_S / 2;
			w->reaped = true;
			if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
				return -ENOEXEC;
			return ret < 0 ? ret : 0;
		}
		if (ret)
			return ret < 0 ? ret : 0;
		if (w->first < 0 && t > w->opt.first_read_limit)
			return -ETIMEDOUT;
	}
}

/* Fork argv held (*gate releases it), a tracker job when there is a tracker. */
static int warm_spawn(struct warm_run *w, char *const *argv, const char *name, int *gate)
{
	w->err_fd = err_file();
	w->pgid = spawn_held(argv, w->err_fd, gate);
	if (w->pgid < 0)
		return -errno;
	/* a tracker job before it execs, so the tracker sees its every read */
	if (w->trk && (tracker_job_new(&w->trk->t, name, w->trk->dataset, &w->job) ||
		       tracker_job_add_pid(&w->trk->t, w->job, w->pgid))) {
		ctl_err("calibrate: %s: not tracked; counting its reads in /proc", name);
		w->trk = NULL;
	}
	return 0;
}

static int warm_release(struct warm_run *w, int gate)
{
	int err = 0;

	w->t0 = now_s();
	if (write(gate, "x", 1) != 1)
		err = -errno;
	close(gate);
	return err;
}

static int warm_start(struct warm_run *w, char *const *argv, const char *name)
{
	int gate, err = warm_spawn(w, argv, name, &gate);

	return err ?: warm_release(w, gate);
}

/* t_s,count[,cpu_s]: every sample, the group's CPU where a scan was taken */
static void warm_trace(const struct warm_run *w, const char *path)
{
	FILE *f = fopen(path, "w");
	int k = 0;

	if (!f) {
		ctl_err("%s: %s", path, strerror(errno));
		return;
	}
	fprintf(f, "t_s,count,cpu_s\n");
	for (size_t i = 0; i < w->n; i++) {
		fprintf(f, "%.4f,%.0f,", w->s[i].t, w->s[i].count);
		while (k < w->nscans && w->scans[k].t < w->s[i].t - 1e-9)
			k++;
		if (k < w->nscans && w->scans[k].t <= w->s[i].t + 1e-9)
			fprintf(f, "%.3f", w->scans[k].cpu);
		fprintf(f, "\n");
	}
	fclose(f);
}

static void warm_init(struct warm_run *w, const struct cal_warm_opts *o,
		      struct cal_track *trk, const struct sample_set *ds)
{
	*w = (struct warm_run){ .opt = *o, .first = -1, .resumed = -1, .stall = -1,
				.stall2 = -1, .resumed2 = -1, .ended = -1, .pause_t = -1,
				.trk = trk && trk->ok ? trk : NULL, .ds = ds, .err_fd = -1 };
	w->scans = calloc(WARM_MAX_SCANS, sizeof(*w->scans));
}

static void warm_free(struct warm_run *w)
{
	if (w->err_fd >= 0)
		close(w->err_fd);
	free(w->s);
	free(w->scans);
}

int cal_warm_run(char *const *argv, const struct sample_set *ds,
		 const struct cal_warm_opts *o, struct cal_track *trk, const char *name,
		 struct cal_warm *out)
{
	struct warm_run w;
	struct file_index ids = { 0 };
	struct warm_watch ww = { .ow = { .fan = -1 } };
	double exit_s = -1;	/* < 0: not measured (it ended by itself, or outlived SIGINT) */
	int err;

	memset(out, 0, sizeof(*out));
	warm_init(&w, o, trk, ds);
	err = w.scans ? file_index_make(&ids, ds->files.devs, ds->files.inos, ds->files.n) : -ENOMEM;
	if (err)
		goto free_w;
	watch_init(&ww, &w, 1, &ids);
	err = warm_start(&w, argv, name);
	if (w.pgid > 0) {
		err = err ?: warm_loop(&w, &ww);
		out->seconds = now_s() - w.t0;
		err_relay(&w);	/* all of it, up to our SIGINT */
		if (!w.reaped) {
			exit_s = measure_exit(w.pgid);
			w.reaped = exit_s >= 0;
		}
		kill_group(w.pgid, w.reaped);
	}
	if (o->trace && w.n)
		warm_trace(&w, o->trace);
	warm_boundary_end(&w);
	err = err ?: warm_fit(&w, o->window_bytes, out);
	/*
	 * Its own end after its last epoch (warm_fit) or SIGINT's; a run that
	 * had read all its epochs was ending: SIGINT met its exit midway.
	 */
	if (!err && !out->exit_measured) {
		out->exit_measured = exit_s >= 0 &&
			!(o->epochs && w.count >= 0.99 * o->epochs * warm_units_expected(&w));
		out->exit = out->exit_measured ? exit_s : 0;
		if (out->exit_measured)
			strcpy(out->exit_from, "sigint");
	}
free_w:
	openwatch_close(&ww.ow);
	warm_free(&w);
	file_index_free(&ids);
	return err;
}

const char *cal_warm_err(int err)
{
	switch (err) {
	case -ENOEXEC: return "command not found";
	case -ETIMEDOUT: return "it read no file of the dataset within 120 s of its start "
				"(does it read --dataset?)";
	case -ENODATA: return "it read too little of the dataset to measure (ended or "
			      "killed early?)";
	default: return strerror(-err);
	}
}

/*
 * All of them, polled in turn every WARM_POLL_S, until the first is done
 * (warm_done), has read its stop_bytes, has ended, or fails; 0 then.
 */
static int together_loop(struct warm_run *w, int n, struct warm_watch *ww,
			 const double *stop_bytes)
{
	int status, ret;

	for (;;) {
		bool stop = false;

		usleep(WARM_POLL_S * 1e6);
		watch_poll(ww);
		for (int i = 0; i < n; i++) {
			double t = now_s() - w[i].t0;

			ret = warm_poll(&w[i], ww->ids, t);
			err_relay(&w[i]);
			if (ret < 0)
				return ret;
			stop |= ret;
			if (stop_bytes && stop_bytes[i] > 0 && warm_bytes_read(&w[i]) >= stop_bytes[i])
				stop = true;
			if (waitpid(w[i].pgid, &status, WNOHANG) == w[i].pgid) {
				w[i].ended = (t + now_s() - w[i].t0) / 2 - WARM_POLL_S / 2;
				w[i].reaped = true;
				if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
					return -ENOEXEC;
				stop = true;
			}
			if (w[i].first < 0 && t > w[i].opt.first_read_limit)
				return -ETIMEDOUT;
		}
		if (stop)
			return 0;
	}
}

/* The window in which all of them read (s after t0), from out's reads; -ENODATA: none. */
static int together_window(const struct cal_together *out, int n, double *ta, double *tb)
{
	*ta = 0;
	*tb = INFINITY;
	for (int i = 0; i < n; i++) {
		if (out->first[i] < 0)
			return -ENODATA;
		*ta = fmax(*ta, out->first[i]);
		*tb = fmin(*tb, out->last[i]);
	}
	return *tb - *ta >= CAL_TOGETHER_MIN_S ? 0 : -ENODATA;
}

/* All forked held, then released together at *t0; *started: how many were forked. */
static int together_start(struct warm_run *w, int n, char **const *argvs,
			  const char *const *names, int *started, double *t0)
{
	int gate[MODEL_MAX_INST], err = 0, i;

	for (i = 0; i < n && !err; i++) {
		err = warm_spawn(&w[i], argvs[i], names[i], &gate[i]);
		if (w[i].pgid > 0)
			*started = i + 1;
	}
	*t0 = now_s();
	for (i = 0; i < *started; i++) {
		if (w[i].pgid <= 0)
			continue;
		if (err)
			close(gate[i]);	/* not released: it exits */
		else
			err = warm_release(&w[i], gate[i]);
	}
	return err;
}

int cal_warm_together(char **const *argvs, int n, const struct sample_set *ds,
		      const struct cal_warm_opts *o, struct cal_track *trk,
		      const char *const *names, const double *stop_bytes,
		      struct cal_together *out)
{
	struct warm_run w[MODEL_MAX_INST];
	struct file_index ids = { 0 };
	struct warm_watch ww = { .ow = { .fan = -1 } };
	double ta, tb, t0;
	int i, started = 0, err;

	memset(out, 0, sizeof(*out));
	if (n < 2 || n > MODEL_MAX_INST)
		return -EINVAL;
	for (i = 0; i < n; i++)
		warm_init(&w[i], o, trk, ds);
	err = file_index_make(&ids, ds->files.devs, ds->files.inos, ds->files.n);
	for (i = 0; i < n && !err; i++)
		err = w[i].scans ? 0 : -ENOMEM;
	if (!err)
		watch_init(&ww, w, n, &ids);
	t0 = now_s();
	if (!err)
		err = together_start(w, n, argvs, names, &started, &t0);
	if (!err)
		err = together_loop(w, n, &ww, stop_bytes);
	out->seconds = now_s() - t0;
	for (i = 0; i < started; i++) {
		if (w[i].pgid <= 0)
			continue;
		err_relay(&w[i]);
		kill_group(w[i].pgid, w[i].reaped);
	}
	for (i = 0; i < n; i++) {
		out->first[i] = w[i].first >= 0 ? w[i].t0 + w[i].first - t0 : -1;
		out->last[i] = w[i].first >= 0 ? w[i].t0 + warm_last_read(&w[i]) - t0 : -1;
	}
	if (!err)
		err = together_window(out, n, &ta, &tb);
	/* each run's own clock: s after its release */
	for (i = 0; i < n && !err; i++)
		err = warm_span(&w[i], ta + t0 - w[i].t0, tb + t0 - w[i].t0, &out->cpu[i],
				&out->from[i], &out->to[i]);
	if (!err)
		out->span_s = tb - ta;
	openwatch_close(&ww.ow);
	for (i = 0; i < n; i++)
		warm_free(&w[i]);
	file_index_free(&ids);
	return err;
}

int cal_track_open(struct cal_track *k, const struct sample_set *ds, const char *name)
{
	struct tracker_add_result res;
	struct tracker_fit fit;
	int err;

	memset(k, 0, sizeof(*k));
	/* loaded sized for the dataset, or a loaded one grown (tracker_register()) */
	err = tracker_register(&k->t, name, ds->files.paths, ds->files.n, 0, &res, &fit);
	k->pages = fit.pages;
	k->loaded_here = fit.loaded;
	if (err) {
		/* not left loaded (with part of the dataset registered) */
		if (k->loaded_here)
			tracker_unload();
		return err;
	}
	/* its files registered by another command first: they count there */
	k->dataset = tracker_add_counts_in(&res);
	k->ok = true;
	return 0;
}

/*
 * A tracker calibrate loaded itself is unloaded again: left loaded, it would
 * keep the dataset's files registered under calibrate's dataset, and a later
 * run or agent registering them under its own name would count nothing.
 */
void cal_track_close(struct cal_track *k)
{
	if (k->ok)
		tracker_close(&k->t);
	if (k->ok && k->loaded_here)
		tracker_unload();
	k->ok = false;
}
