// SPDX-License-Identifier: GPL-2.0
/* Calibration: an instance's compute-bound rate from a short warm run (calibrate.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "calibrate/calibrate.h"
#include "lib/procio.h"
#include "lib/util.h"

static int warm_dataset(const struct lg_dataset *ds, double bytes)
{
	uint64_t n = cal_sample_count(ds, bytes);
	unsigned char *buf = malloc(1 << 20);
	int err = buf ? 0 : -ENOMEM;

	for (uint64_t s = 0; s < n && !err; s++) {
		const struct lg_sample *sm = &ds->samples[s];
		int fd = open(ds->paths[sm->file], O_RDONLY | O_CLOEXEC);

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

static pid_t spawn_group(char *const *argv)
{
	pid_t pid = fork();

	if (pid == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid > 0)
		setpgid(pid, pid);	/* also here: no race with kill(-pid) */
	return pid;
}

static void kill_group(pid_t pid)
{
	kill(-pid, SIGTERM);
	for (int i = 0; i < 20 && waitpid(pid, NULL, WNOHANG) == 0; i++)
		usleep(100000);
	kill(-pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int cal_warm_rate(char *const *argv, const struct lg_dataset *ds, double cache_bytes,
		  double seconds, double *bps)
{
	double t0, t, t1 = -1, tl = 0, rc1 = 0, rcl = 0;
	struct procio io;
	int status, err;
	pid_t pid;

	err = warm_dataset(ds, cache_bytes * 0.9);
	if (err)
		return err;
	pid = spawn_group(argv);
	if (pid < 0)
		return -errno;
	t0 = now_s();
	while ((t = now_s() - t0) < seconds) {
		usleep(50000);
		/* sample before reaping: a reaped leader takes its counters along */
		procio_group(pid, &io);
		if (waitpid(pid, &status, WNOHANG) == pid) {
			if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
				return -ENOEXEC;
			break;
		}
		tl = now_s() - t0;
		rcl = io.rchar;
		if (t1 < 0 && tl >= 1.0) {	/* skip start-up */
			t1 = tl;
			rc1 = rcl;
		}
	}
	kill_group(pid);
	if (t1 >= 0 && tl - t1 >= 0.5)
		*bps = (rcl - rc1) / (tl - t1);
	else
		*bps = tl > 0 ? rcl / tl : 0;
	return *bps > 0 ? 0 : -ENODATA;
}
