// SPDX-License-Identifier: GPL-2.0
/*
 * The release engine in-process (under ASan): command splitting, stagger
 * parsing, and the hook interface the tracker and tandem.ko plug into:
 * every hook with its own state in the run's context, nothing kept between
 * runs (a second caller, such as a node agent, drives it the same way).
 * The kernel's view (/proc/PID/stat) checks that job_start sees the
 * instance in its own process group before it has exec'd.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "lib/util.h"
#include "cli/cmd.h"
#include "lib/stagger.h"
#include "release/release.h"

TEST(split_commands)
{
	char *argv[] = { "sh", "-c", "x", ":::", "true", ":::", "env", "A=1", NULL };
	char *bad1[] = { "a", ":::", ":::", "b" }, *bad2[] = { ":::", "b" };
	char ***cmds;
	int n;

	ASSERT_EQ(0, ctl_split_commands(8, argv, &cmds, &n));
	ASSERT_EQ(3, n);
	EXPECT_STREQ("sh", cmds[0][0]);
	EXPECT_STREQ("x", cmds[0][2]);
	EXPECT_EQ(NULL, cmds[0][3]);
	EXPECT_STREQ("true", cmds[1][0]);
	EXPECT_EQ(NULL, cmds[1][1]);
	EXPECT_STREQ("A=1", cmds[2][1]);
	ctl_free_commands(cmds, n);
	EXPECT_EQ(-EINVAL, ctl_split_commands(4, bad1, &cmds, &n));
	EXPECT_EQ(-EINVAL, ctl_split_commands(2, bad2, &cmds, &n));
	EXPECT_EQ(-EINVAL, ctl_split_commands(3, argv + 3, &cmds, &n));	/* trailing ::: */
}

TEST(parse_stagger)
{
	double d[4];

	ASSERT_EQ(0, tandem_stagger_parse_vector("2.5", 4, d));
	EXPECT_TRUE(d[0] == 0 && d[1] == 2.5 && d[2] == 5 && d[3] == 7.5);
	ASSERT_EQ(0, tandem_stagger_parse_vector("1,3s,4", 4, d));
	EXPECT_TRUE(d[0] == 0 && d[1] == 1 && d[2] == 3 && d[3] == 4);
	ASSERT_EQ(0, tandem_stagger_parse_vector("5,0,1,2", 4, d));
	EXPECT_TRUE(d[0] == 5 && d[1] == 0 && d[3] == 2);
	EXPECT_EQ(-EINVAL, tandem_stagger_parse_vector("1,2", 4, d));
	EXPECT_EQ(-EINVAL, tandem_stagger_parse_vector("-1", 4, d));
	EXPECT_EQ(-EINVAL, tandem_stagger_parse_vector("1x", 4, d));
}

struct hook_log {
	int registered, started, exited, progress_calls, stats, finished;
	int bad_pgrp, execd_early;
	int exit_status[4];
};

static int h_register(void *ctx, const struct rel_dataset *ds)
{
	struct hook_log *l = ctx;

	(void)ds;
	l->registered++;
	return 0;
}

/* The kernel's view of the new instance: own process group, not exec'd yet. */
static int h_start(void *ctx, int idx, const char *name, pid_t pgid)
{
	struct hook_log *l = ctx;
	char path[64], buf[512], comm[64] = "";
	int pgrp = -1;
	FILE *f;

	(void)idx;
	(void)name;
	l->started++;
	snprintf(path, sizeof(path), "/proc/%d/stat", pgid);
	f = fopen(path, "r");
	if (f && fgets(buf, sizeof(buf), f)) {
		char *close = strrchr(buf, ')'), *open = strchr(buf, '(');

		if (open && close) {
			snprintf(comm, sizeof(comm), "%.*s", (int)(close - open - 1), open + 1);
			sscanf(close + 1, " %*c %*d %d", &pgrp);
		}
	}
	if (f)
		fclose(f);
	l->bad_pgrp += pgrp != pgid;
	l->execd_early += !strcmp(comm, "true") || !strcmp(comm, "false") ||
			  !strcmp(comm, "sleep");
	return 0;
}

static void h_exit(void *ctx, int idx, int status)
{
	struct hook_log *l = ctx;

	l->exited++;
	if (idx < 4)
		l->exit_status[idx] = status;
}

/* progress: instance 0 reports half the dataset after its first poll */
static int h_progress(void *ctx, int idx, pid_t pgid, double *f)
{
	struct hook_log *l = ctx;

	(void)pgid;
	*f = idx == 0 && ++l->progress_calls > 1 ? 0.5 : 0;
	return 0;
}

static int h_stats(void *ctx, int idx, struct rel_job_stats *st)
{
	struct hook_log *l = ctx;

	l->stats++;
	st->misses = 100 + idx;
	return 0;
}

static void h_finish(void *ctx)
{
	((struct hook_log *)ctx)->finished++;
}

TEST(hooks_and_exit_status)
{
	char *t[] = { "true", NULL }, *f[] = { "false", NULL };
	struct rel_inst inst[2] = { { .argv = t }, { .argv = f, .delta = 0.05 } };
	struct rel_run r = { .n = 2, .inst = inst };
	struct hook_log log = { 0 };
	static const struct rel_ops h = { .name = "test", .dataset_register = h_register,
					  .job_start = h_start, .job_exit = h_exit,
					  .job_stats = h_stats, .finish = h_finish };

	ASSERT_EQ(0, rel_hook_add(&r, &h, &log));
	EXPECT_EQ(-ECHILD, rel_run(&r));
	EXPECT_EQ(1, log.registered);
	EXPECT_EQ(2, log.started);
	EXPECT_EQ(0, log.bad_pgrp);
	EXPECT_EQ(0, log.execd_early);
	EXPECT_EQ(2, log.exited);
	EXPECT_TRUE(WIFEXITED(log.exit_status[0]) && !WEXITSTATUS(log.exit_status[0]));
	EXPECT_TRUE(WIFEXITED(log.exit_status[1]) && WEXITSTATUS(log.exit_status[1]) == 1);
	EXPECT_EQ(2, log.stats);
	EXPECT_EQ(101, inst[1].stats.misses);
	EXPECT_EQ(1, log.finished);
	EXPECT_EQ(1, r.nfailed);
	EXPECT_TRUE(rel_inst_ok(&inst[0]));
	EXPECT_FALSE(rel_inst_ok(&inst[1]));
	EXPECT_GE(inst[1].start, 0.05);
	EXPECT_LT(inst[1].start, 0.1);
}

TEST(progress_hook_releases_the_next)
{
	char *s[] = { "sleep", "0.4", NULL }, *t[] = { "true", NULL };
	struct rel_inst inst[2] = { { .argv = s }, { .argv = t } };
	struct rel_run r = { .n = 2, .inst = inst, .mode = TANDEM_STAGGER_PROGRESS, .fraction = 0.5 };
	struct hook_log log = { 0 };
	static const struct rel_ops h = { .name = "test", .progress = h_progress };

	ASSERT_EQ(0, rel_hook_add(&r, &h, &log));
	EXPECT_EQ(0, rel_run(&r));
	EXPECT_GE(log.progress_calls, 2);
	/* released on the hook's word (second poll, ~20 ms), long before A ends */
	EXPECT_LT(inst[1].start, 0.2);
	EXPECT_GT(inst[0].end, 0.35);
	EXPECT_TRUE(inst[0].loaded >= 0.5);
}

static double start_at[3];

static int h_time(void *ctx, int idx, const char *name, pid_t pgid)
{
	(void)ctx;
	(void)name;
	(void)pgid;
	start_at[idx] = now_s();
	usleep(30000);		/* a slow hook (the tracker under an emulator) */
	return 0;
}

/*
 * Every instance is forked and registered before t0, so a slow job_start
 * hook delays nothing: the releases stay on time.
 */
TEST(instances_registered_before_t0)
{
	char *t[] = { "true", NULL };
	struct rel_inst inst[3] = { { .argv = t }, { .argv = t, .delta = 0.1 },
				    { .argv = t, .delta = 0.2 } };
	struct rel_run r = { .n = 3, .inst = inst };
	static const struct rel_ops h = { .name = "slow", .job_start = h_time };

	ASSERT_EQ(0, rel_hook_add(&r, &h, NULL));
	EXPECT_EQ(0, rel_run(&r));
	for (int i = 0; i < 3; i++) {
		EXPECT_LT(start_at[i], r.t0);
		EXPECT_LT(inst[i].start - inst[i].delta, 0.025);
		EXPECT_GE(inst[i].start, inst[i].delta);
	}
}

/* SIGTERM to ourselves mid-run: forwarded, pending instance never started. */
TEST(signal_is_forwarded)
{
	char *s[] = { "sleep", "5", NULL };
	struct rel_inst inst[2] = { { .argv = s }, { .argv = s, .delta = 3 } };
	struct rel_run r = { .n = 2, .inst = inst, .grace = 1 };
	pid_t killer = fork();

	ASSERT_GE(killer, 0);
	if (!killer) {
		usleep(200000);
		kill(getppid(), SIGTERM);
		_exit(0);
	}
	EXPECT_EQ(-EINTR, rel_run(&r));
	EXPECT_EQ(SIGTERM, r.interrupted);
	EXPECT_EQ(REL_SKIPPED, inst[1].state);
	EXPECT_TRUE(WIFSIGNALED(inst[0].status) && WTERMSIG(inst[0].status) == SIGTERM);
	EXPECT_LT(inst[0].end, 1.0);
	/* the killer was our child too and has been reaped by the cleanup */
	EXPECT_EQ(-1, waitpid(killer, NULL, WNOHANG));
}

static int h_refuse(void *ctx, const struct rel_dataset *ds)
{
	(void)ds;
	((struct hook_log *)ctx)->registered++;
	return -ENOENT;
}

static int h_no_stats(void *ctx, int idx, struct rel_job_stats *st)
{
	(void)idx;
	(void)st;
	((struct hook_log *)ctx)->stats++;
	return -ENOENT;
}

/*
 * Two hooks, each with its own state: one that refuses the dataset is left
 * out of the run (no job of it starts) but still finished; the first hook
 * that answers job_stats wins. A second run with the same hooks starts from
 * nothing: the counts come from these states only.
 */
TEST(hooks_keep_their_own_state)
{
	char *t[] = { "true", NULL };
	static const struct rel_ops refusing = { .name = "off", .dataset_register = h_refuse,
						 .job_start = h_start, .finish = h_finish };
	static const struct rel_ops none = { .name = "none", .job_stats = h_no_stats };
	static const struct rel_ops taking = { .name = "on", .dataset_register = h_register,
					       .job_start = h_start, .job_stats = h_stats,
					       .finish = h_finish };

	for (int round = 0; round < 2; round++) {
		struct rel_inst inst[2] = { { .argv = t }, { .argv = t } };
		struct rel_run r = { .n = 2, .inst = inst };
		struct hook_log a = { 0 }, b = { 0 }, c = { 0 };

		ASSERT_EQ(0, rel_hook_add(&r, &refusing, &a));
		ASSERT_EQ(0, rel_hook_add(&r, &none, &b));
		ASSERT_EQ(0, rel_hook_add(&r, &taking, &c));
		EXPECT_EQ(0, rel_run(&r));
		EXPECT_EQ(1, a.registered);
		EXPECT_EQ(0, a.started);
		EXPECT_EQ(1, a.finished);
		EXPECT_EQ(2, b.stats);
		EXPECT_EQ(2, c.started);
		EXPECT_EQ(2, c.stats);
		EXPECT_EQ(1, c.finished);
		EXPECT_TRUE(inst[0].have_stats && inst[1].stats.misses == 101);
		EXPECT_EQ(NULL, r.residency_source);	/* no hook, no dataset */
	}
}

TEST(hook_table_is_bounded)
{
	static const struct rel_ops h = { .name = "x" };
	struct rel_run r = { 0 };

	for (int i = 0; i < REL_MAX_HOOKS; i++)
		ASSERT_EQ(0, rel_hook_add(&r, &h, NULL));
	EXPECT_EQ(-E2BIG, rel_hook_add(&r, &h, NULL));
}

TEST_HARNESS_MAIN
