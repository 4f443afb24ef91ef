// SPDX-License-Identifier: GPL-2.0
/*
 * The drainer as a daemon: forked from tandemctl (no exec), in a session of
 * its own, running as the scratch's owner so that it reads only what the
 * owner can and writes only where the owner may. Its pid is kept in
 * drainer.pid; a pid is taken as the drainer's only while that process is
 * named SCRATCH_DRAINER_COMM.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/procio.h"
#include "lib/util.h"
#include "scratch/internal.h"

/* exited and not yet reaped (by its parent, or init), or gone */
static bool is_zombie(pid_t pid)
{
	struct proc_stat ps;

	return procio_stat(pid, &ps) || ps.state == 'Z' || ps.state == 'X';
}

static bool is_drainer(pid_t pid)
{
	char path[64], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = 0;
	fclose(f);
	comm[strcspn(comm, "\n")] = 0;
	return !strcmp(comm, SCRATCH_DRAINER_COMM) && !is_zombie(pid);
}

pid_t scratch_drainer_pid(const struct scratch_cfg *c)
{
	char path[PATH_MAX + 16];
	int pid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/drainer.pid", c->dir);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	return pid > 0 && is_drainer(pid) ? pid : 0;
}

/* a file of the state folder the owner writes: made here, as root, and given to them */
static int owned_file(const struct scratch_cfg *c, const char *name, int flags)
{
	char path[PATH_MAX + 16];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", c->dir, name);
	fd = open(path, flags | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (!geteuid() && fchown(fd, c->uid, c->gid)) {
		close(fd);
		return -errno;
	}
	return fd;
}

/* in the child: the daemon's setup, then the owner's identity */
static int child_setup(const struct scratch_cfg *c)
{
	int fd, null;

	setsid();
	prctl(PR_SET_NAME, SCRATCH_DRAINER_COMM);
	umask(022);
	if (chdir("/"))
		return -errno;
	fd = owned_file(c, "drained.log", O_WRONLY | O_APPEND);
	if (fd < 0)
		return fd;
	close(fd);
	fd = owned_file(c, "drainer.err", O_WRONLY | O_APPEND);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd < 0 || null < 0)
		return fd < 0 ? fd : -errno;
	dup2(null, 0);
	dup2(null, 1);
	dup2(fd, 2);
	close(fd);
	close(null);
	signal(SIGPIPE, SIG_IGN);
	if (!geteuid() && c->uid && (setgroups(0, NULL) || setgid(c->gid) || setuid(c->uid)))
		return -errno;
	return 0;
}

static __attribute__((noreturn)) void child_run(const struct scratch_cfg *c, int ready)
{
	int err;

	/* only the pipe is kept: the daemon holds nothing of tandemctl's */
	if (dup2(ready, 3) < 0)
		_exit(1);
	close_range(4, ~0U, 0);
	err = child_setup(c);
	if (err) {
		if (write(3, &err, sizeof(err)) < 0)
			_exit(1);
		_exit(1);
	}
	_exit(scratch_drain_main(c, 3) ? 1 : 0);
}

static int write_pid(const struct scratch_cfg *c, pid_t pid)
{
	char path[PATH_MAX + 16];
	FILE *f;

	snprintf(path, sizeof(path), "%s/drainer.pid", c->dir);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "%d\n", (int)pid);
	return fclose(f) ? -errno : 0;
}

int scratch_drainer_start(const struct scratch_cfg *c, pid_t *pid)
{
	int ready[2], err = 0;
	ssize_t n;

	*pid = scratch_drainer_pid(c);
	if (*pid) {
		ctl_err("scratch %s: its drainer runs already (pid %d)", c->name, (int)*pid);
		return -EALREADY;
	}
	if (pipe2(ready, O_CLOEXEC))
		return -errno;
	fflush(stdout);
	fflush(stderr);
	*pid = fork();
	if (*pid < 0) {
		err = -errno;
		goto close_pipe;
	}
	if (!*pid)
		child_run(c, ready[1]);
	close(ready[1]);
	ready[1] = -1;
	n = read(ready[0], &err, sizeof(err));
	if (n != sizeof(err))
		err = -ECHILD;	/* it died before it could say */
	if (!err)
		err = write_pid(c, *pid);
	if (err) {
		kill(*pid, SIGKILL);
		waitpid(*pid, NULL, 0);
		ctl_err("scratch %s: the drainer did not start: %s", c->name,
			err == -EACCES ? "its owner cannot write to the drain folder or read the scratch"
				       : strerror(-err));
	}
close_pipe:
	close(ready[0]);
	if (ready[1] >= 0)
		close(ready[1]);
	return err;
}

int scratch_drainer_stop(const struct scratch_cfg *c)
{
	char path[PATH_MAX + 16];
	pid_t pid = scratch_drainer_pid(c);
	struct timespec tick = { .tv_nsec = 50 * 1000 * 1000 };

	if (pid) {
		kill(pid, SIGTERM);
		/* it stops between two chunks of a copy */
		for (int i = 0; i < 100 && !kill(pid, 0) && is_drainer(pid); i++)
			nanosleep(&tick, NULL);
		if (is_drainer(pid))
			kill(pid, SIGKILL);
		for (int i = 0; i < 20 && is_drainer(pid); i++)
			nanosleep(&tick, NULL);
	}
	snprintf(path, sizeof(path), "%s/drainer.pid", c->dir);
	unlink(path);
	return 0;
}
