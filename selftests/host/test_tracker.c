// SPDX-License-Identifier: GPL-2.0
/*
 * Page-cache sharing tracker on this machine's kernel. Needs root and BPF;
 * skips cleanly without them. Files live on the root filesystem (a real
 * block device: /var/tmp), never tmpfs, whose pages are not page cache
 * that readahead fills. See test_tracker.h for the ground truth and the
 * tolerance.
 */
#include "test_tracker.h"

#define TIMEOUT_S	120

TEST_F_TIMEOUT(tracker, read_shared_own, TIMEOUT_S)
{
	SKIP_IF_NO_BPF();
	shared_sequence(_metadata, self, "read");
}

TEST_F_TIMEOUT(tracker, mmap_shared_own, TIMEOUT_S)
{
	SKIP_IF_NO_BPF();
	shared_sequence(_metadata, self, "mmap");
}

/* a process the job forks, and a thread, are the job */
TEST_F_TIMEOUT(tracker, child_and_thread, TIMEOUT_S)
{
	struct row r;

	SKIP_IF_NO_BPF();
	ASSERT_EQ(0, track_reader("--name F", "fork-read", self->a));
	ASSERT_EQ(0, stats_row("F", "d1", NULL, &r));
	EXPECT_NEAR(FILE_PAGES, r.miss, TOL(FILE_PAGES));
	EXPECT_NEAR(FILE_PAGES, r.first, TOL(FILE_PAGES));
	/* nothing went to "untracked" */
	ASSERT_EQ(0, stats_row("0", "d1", NULL, &r));
	EXPECT_TRUE(r.miss <= 0) TH_LOG("untracked misses %lld", r.miss);

	ASSERT_EQ(0, track_reader("--name T", "thread-read", self->b));
	ASSERT_EQ(0, stats_row("T", "d2", NULL, &r));
	EXPECT_NEAR(FILE_PAGES, r.miss, TOL(FILE_PAGES));
	EXPECT_NEAR(FILE_PAGES, r.first, TOL(FILE_PAGES));
}

/* an unregistered file counts nowhere; a 2nd dataset counts on its own */
TEST_F_TIMEOUT(tracker, unregistered_and_second_dataset, TIMEOUT_S)
{
	char files[2 * PATH_MAX + 40];
	long x_pages;
	struct row r;

	SKIP_IF_NO_BPF();
	snprintf(files, sizeof(files), "%s %s", self->x, self->b);
	ASSERT_EQ(0, track_reader("--name U", "read", files));
	x_pages = fincore_pages(self->x);
	ASSERT_EQ(16 * 256, x_pages);
	ASSERT_EQ(0, stats_row("U", "d1", NULL, &r));
	EXPECT_EQ(-1, r.miss) TH_LOG("dataset d1 was never read, has %lld misses", r.miss);
	ASSERT_EQ(0, stats_row("U", "d2", NULL, &r));
	EXPECT_NEAR(FILE_PAGES, r.miss, TOL(FILE_PAGES));
	/* only d2's pages got a state: x.bin's 4096 did not */
	EXPECT_NEAR(FILE_PAGES, tracker_num("inserted"), TOL(FILE_PAGES));
	EXPECT_EQ(0, dataset_total("d1", "miss_pages"));
}

/* drop_caches: every cached page of the dataset is an eviction */
TEST_F_TIMEOUT(tracker, evictions_drop_caches, TIMEOUT_S)
{
	long before, after;
	long long evicted;

	SKIP_IF_NO_BPF();
	ASSERT_EQ(0, track_reader("--name E", "read", self->a));
	before = fincore_pages(self->a);
	ASSERT_LT(0, before);
	ASSERT_EQ(0, drop_caches());
	after = fincore_pages(self->a);
	evicted = dataset_total("d1", "evicted_pages");
	EXPECT_EQ(before - after, evicted);
	EXPECT_EQ(0, after);
}

/* the job's exit status is tandemctl's; a missing command is 127 */
TEST_F_TIMEOUT(tracker, exit_status, TIMEOUT_S)
{
	SKIP_IF_NO_BPF();
	EXPECT_EQ(7, ctl(NULL, 0, "track -q -- %s --reader exit 7", self_exe));
	EXPECT_EQ(0, ctl(NULL, 0, "track -q -- %s --reader exit 0", self_exe));
	EXPECT_EQ(127, ctl(NULL, 0, "track -q -- /nonexistent/cmd"));
}

/* --pid: a running process registered from outside */
TEST_F_TIMEOUT(tracker, track_pid, TIMEOUT_S)
{
	char *argv[] = { self_exe, "--reader", "wait-read", self->a, NULL };
	int go[2], st;
	struct row r;
	pid_t pid;

	SKIP_IF_NO_BPF();
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		dup2(go[0], 0);
		close(go[1]);
		execv(self_exe, argv);
		_exit(127);
	}
	close(go[0]);
	EXPECT_EQ(0, ctl(NULL, 0, "track -q --name P --pid %d", pid));
	ASSERT_EQ(1, write(go[1], "g", 1));
	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_EQ(0, st);
	ASSERT_EQ(0, stats_row("P", "d1", NULL, &r));
	EXPECT_NEAR(FILE_PAGES, r.miss, TOL(FILE_PAGES));
}

/* a page-state map smaller than the file: overflow reported, counts intact */
FIXTURE(small) {
	FIXTURE_DATA(tracker) t;
};

FIXTURE_SETUP(small)
{
	tracker_fixture_setup(_metadata, &self->t, "--max-pages 2048");
}

FIXTURE_TEARDOWN(small)
{
	if (!self->t.skip)
		EXPECT_EQ(0, ctl(NULL, 0, "tracker unload"));
}

TEST_F_TIMEOUT(small, bounded_map_overflow, TIMEOUT_S)
{
	long long overflow, tracked, before;
	struct row r;

	if (self->t.skip)
		SKIP(return, "needs root, bpf() and /sys/kernel/btf/vmlinux");
	ASSERT_EQ(0, track_reader("--name S", "read", self->t.a));
	tracked = tracker_num("pages_tracked");
	overflow = tracker_num("overflow_pages");
	EXPECT_LE(tracked, 2048);
	EXPECT_GE(overflow, FILE_PAGES - 2048);
	EXPECT_LE(overflow, FILE_PAGES);
	ASSERT_EQ(0, stats_row("S", "d1", NULL, &r));
	EXPECT_NEAR(FILE_PAGES, r.miss, TOL(FILE_PAGES));
	/*
	 * A second pass is counted in full: pages whose state survived as own
	 * hits (or the first access), the others as hits of unknown loader.
	 */
	before = r.own + r.shared + r.first;
	ASSERT_EQ(0, track_reader("--job S", "read", self->t.a));
	ASSERT_EQ(0, stats_row("S", "d1", NULL, &r));
	EXPECT_NEAR(FILE_PAGES, r.own + r.shared + r.first - before, TOL(FILE_PAGES));
	EXPECT_LE(2048 - TOL(FILE_PAGES), r.own + r.first);
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "--reader"))
		return reader_main(argc, argv);
	tracker_test_init("/var/tmp");
	return test_harness_run(argc, argv);
}
