// SPDX-License-Identifier: GPL-2.0
/*
 * Pure userspace pieces of tandemctl: number parsing, the text/JSON printer,
 * the dataset file walk, NUMA sysfs parsing (against a fake sysfs tree),
 * the residency count (cachestat or mincore) against mincore.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "lib/files.h"
#include "lib/numa.h"
#include "lib/out.h"
#include "lib/procio.h"
#include "lib/residency.h"
#include "lib/util.h"

TEST(parse_numbers)
{
	uint64_t u;
	int64_t s;
	uint32_t u32;

	EXPECT_EQ(0, parse_u64("42", 100, &u));
	EXPECT_EQ(42, u);
	EXPECT_EQ(0, parse_u64("0x10", 100, &u));
	EXPECT_EQ(16, u);
	EXPECT_EQ(-ERANGE, parse_u64("101", 100, &u));
	EXPECT_EQ(-EINVAL, parse_u64("-1", 100, &u));
	EXPECT_EQ(-EINVAL, parse_u64("12abc", 100, &u));
	EXPECT_EQ(-EINVAL, parse_u64("", 100, &u));
	EXPECT_EQ(-ERANGE, parse_u64("99999999999999999999999", UINT64_MAX, &u));
	EXPECT_EQ(0, parse_s64("-2", -2, 10, &s));
	EXPECT_EQ(-2, s);
	EXPECT_EQ(-ERANGE, parse_s64("-3", -2, 10, &s));
	EXPECT_EQ(-ERANGE, parse_u32("4294967296", &u32));
	EXPECT_EQ(0, parse_u32("4294967295", &u32));
}

TEST(fmt_bytes_units)
{
	char b[32];

	EXPECT_STREQ("512 B", fmt_bytes(b, sizeof(b), 512));
	EXPECT_STREQ("1.5 KiB", fmt_bytes(b, sizeof(b), 1536));
	EXPECT_STREQ("2.0 GiB", fmt_bytes(b, sizeof(b), 2ULL << 30));
}

/* run the printer into a memory buffer */
static char *capture(bool json, void (*emit)(void))
{
	static char buf[4096];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	out_init(f, json, false);
	emit();
	out_finish();
	fclose(f);
	return buf;
}

static void emit_sample(void)
{
	out_obj_open(NULL);
	out_u64("id", "id %llu", 7);
	out_str("name", " name %s\n", "a\"b\\c\n");
	out_arr_open("list");
	out_s64(NULL, NULL, -3);
	out_double(NULL, NULL, 0.5);
	out_bool(NULL, NULL, true);
	out_arr_close();
	out_arr_open("empty");
	out_arr_close();
	out_obj_close();
}

TEST(printer_json_and_text_from_one_path)
{
	EXPECT_STREQ("{\"id\":7,\"name\":\"a\\\"b\\\\c\\n\",\"list\":[-3,0.5,true],\"empty\":[]}\n",
		     capture(true, emit_sample));
	EXPECT_STREQ("id 7 name a\"b\\c\n\n", capture(false, emit_sample));
}

static void write_file_at(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY, 0644);

	if (fd >= 0)
		close(fd);
}

FIXTURE(tree) {
	char dir[64];
};

FIXTURE_SETUP(tree)
{
	char p[256];
	int fd;

	strcpy(self->dir, "/tmp/tandem-walk-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(p, sizeof(p), "%s/b", self->dir);
	ASSERT_EQ(0, mkdir(p, 0755));
	const char *files[] = { "z", "a", "b/y", "b/x" };
	for (size_t i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/%s", self->dir, files[i]);
		fd = open(p, O_CREAT | O_WRONLY, 0644);
		ASSERT_GE(fd, 0);
		close(fd);
	}
	snprintf(p, sizeof(p), "%s/link", self->dir);
	ASSERT_EQ(0, symlink("/etc/hostname", p));
	snprintf(p, sizeof(p), "%s/fifo", self->dir);
	ASSERT_EQ(0, mkfifo(p, 0644));
}

FIXTURE_TEARDOWN(tree)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", self->dir);
	system(cmd);
}

TEST_F(tree, walk_is_sorted_recursive_regular_only)
{
	struct file_list fl = { 0 };
	char *args[] = { self->dir };
	char want[256];

	ASSERT_EQ(0, file_list_collect(&fl, args, 1));
	/* a, b/x, b/y, link (followed: its target's real path), z; the fifo skipped */
	ASSERT_EQ(5, fl.n);
	snprintf(want, sizeof(want), "%s/a", self->dir);
	EXPECT_STREQ(want, fl.paths[0]);
	snprintf(want, sizeof(want), "%s/b/x", self->dir);
	EXPECT_STREQ(want, fl.paths[1]);
	snprintf(want, sizeof(want), "%s/b/y", self->dir);
	EXPECT_STREQ(want, fl.paths[2]);
	EXPECT_EQ(NULL, strstr(fl.paths[3], "link"));
	EXPECT_EQ('/', fl.paths[3][0]);
	snprintf(want, sizeof(want), "%s/z", self->dir);
	EXPECT_STREQ(want, fl.paths[4]);
	EXPECT_EQ(1, fl.skipped.special);
	EXPECT_EQ(0, fl.skipped.hidden);
	file_list_free(&fl);
}

/* hidden names, a second link to a file, a link to a directory and back */
TEST_F(tree, walk_skips_hidden_duplicates_and_loops)
{
	struct file_list fl = { 0 };
	char *args[] = { self->dir };
	char p[256], q[256], buf[160];

	snprintf(p, sizeof(p), "%s/.hidden", self->dir);
	ASSERT_EQ(0, mkdir(p, 0755));
	snprintf(p, sizeof(p), "%s/.hidden/f", self->dir);
	write_file_at(p);
	snprintf(p, sizeof(p), "%s/.dot", self->dir);
	write_file_at(p);
	snprintf(p, sizeof(p), "%s/a", self->dir);
	snprintf(q, sizeof(q), "%s/b/hard_a", self->dir);
	ASSERT_EQ(0, link(p, q));			/* same inode as a */
	snprintf(q, sizeof(q), "%s/b/sym_x", self->dir);
	ASSERT_EQ(0, symlink("x", q));			/* same inode as b/x */
	snprintf(q, sizeof(q), "%s/b/up", self->dir);
	ASSERT_EQ(0, symlink("..", q));			/* back to the top */
	snprintf(q, sizeof(q), "%s/c", self->dir);
	ASSERT_EQ(0, symlink("b", q));			/* b again */
	snprintf(q, sizeof(q), "%s/gone", self->dir);
	ASSERT_EQ(0, symlink("nowhere", q));
	ASSERT_EQ(0, file_list_collect(&fl, args, 1));
	EXPECT_EQ(5, fl.n);
	EXPECT_EQ(2, fl.skipped.hidden);
	EXPECT_EQ(2, fl.skipped.duplicates);
	EXPECT_EQ(2, fl.skipped.dirs_again);
	EXPECT_EQ(1, fl.skipped.dangling);
	EXPECT_EQ(1, fl.skipped.special);
	EXPECT_STREQ("2 hidden, 1 special, 1 dangling link, 2 duplicate, 2 directory again",
		     file_skips_fmt(&fl.skipped, buf, sizeof(buf)));
	/* a hidden file given by name is taken */
	snprintf(p, sizeof(p), "%s/.dot", self->dir);
	args[0] = p;
	ASSERT_EQ(0, file_list_collect(&fl, args, 1));
	EXPECT_EQ(6, fl.n);
	file_list_free(&fl);
}

TEST_F(tree, explicit_paths_are_resolved_and_missing_ones_fail)
{
	struct file_list fl = { 0 };
	char link[128], missing[128];
	char *args[] = { link };
	char *bad[] = { missing };

	snprintf(link, sizeof(link), "%s/link", self->dir);
	ASSERT_EQ(0, file_list_collect(&fl, args, 1));
	ASSERT_EQ(1, fl.n);
	EXPECT_EQ('/', fl.paths[0][0]);
	EXPECT_EQ(NULL, strstr(fl.paths[0], "link"));	/* the target, not the link */
	file_list_free(&fl);
	snprintf(missing, sizeof(missing), "%s/nope", self->dir);
	EXPECT_EQ(-ENOENT, file_list_collect(&fl, bad, 1));
	file_list_free(&fl);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

TEST_F(tree, numa_nodes_from_sysfs)
{
	struct numa_node nodes[8];
	char p[256];
	int n;

	for (int i = 0; i < 3; i++) {
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "mkdir -p %s/sys/devices/system/node/node%d",
			 self->dir, i);
		ASSERT_EQ(0, system(cmd));
	}
#define NODE(i, f) (snprintf(p, sizeof(p), "%s/sys/devices/system/node/node%d/%s", self->dir, i, f), p)
	write_file(NODE(0, "cpulist"), "0-1\n");
	write_file(NODE(0, "meminfo"), "Node 0 MemTotal:  393216 kB\nNode 0 MemFree: 1000 kB\nNode 0 FilePages: 20 kB\n");
	write_file(NODE(1, "cpulist"), "\n");
	write_file(NODE(1, "meminfo"), "Node 1 MemTotal:  262144 kB\nNode 1 FilePages: 8 kB\nNode 1 AnonPages: 4 kB\n");
	write_file(NODE(2, "cpulist"), "\n");
	write_file(NODE(2, "meminfo"), "Node 2 MemTotal:  524288 kB\n");
	n = numa_read_nodes(self->dir, nodes, 8);
	ASSERT_EQ(3, n);
	EXPECT_TRUE(nodes[0].has_cpus);
	EXPECT_FALSE(nodes[1].has_cpus);
	EXPECT_EQ(262144, nodes[1].mem_total_kb);
	EXPECT_EQ(8, nodes[1].file_pages_kb);
	EXPECT_EQ(4, nodes[1].anon_pages_kb);
	/* the largest CPU-less node, as the module's auto-detection picks */
	EXPECT_EQ(2, numa_cpuless_node(nodes, n));
}

/* the one /proc/PID/stat parser: ours, a zombie child's, a name with ") " in it, a gone pid */
TEST(proc_stat_fields)
{
	struct proc_stat ps;
	int status;
	pid_t child;

	ASSERT_EQ(0, procio_stat(getpid(), &ps));
	EXPECT_EQ('R', ps.state);
	EXPECT_EQ(getppid(), ps.ppid);
	EXPECT_EQ(getpgrp(), ps.pgrp);
	EXPECT_GE(ps.cpu_s, 0.0);

	child = fork();
	ASSERT_GE(child, 0);
	if (!child) {
		/* a command name that fools a parser reading up to the first ')' */
		if (prctl(PR_SET_NAME, "a) Z 1 1 (b", 0, 0, 0))
			_exit(2);
		_exit(0);
	}
	for (int i = 0; i < 500; i++) {	/* until it has exited, unreaped */
		ASSERT_EQ(0, procio_stat(child, &ps));
		if (ps.state == 'Z')
			break;
		usleep(10000);
	}
	EXPECT_EQ('Z', ps.state);
	EXPECT_EQ(getpid(), ps.ppid);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(-ENOENT, procio_stat(child, &ps));
}

/* the pages of FD's first N that mincore says are cached */
static long mincore_count(int fd, long n, long pg)
{
	unsigned char vec[64];
	void *map = mmap(NULL, n * pg, PROT_READ, MAP_SHARED, fd, 0);
	long c = 0;

	if (map == MAP_FAILED || n > 64 || mincore(map, n * pg, vec))
		return -1;
	for (long k = 0; k < n; k++)
		c += vec[k] & 1;
	munmap(map, n * pg);
	return c;
}

/*
 * residency_file's count (cachestat where the kernel has it, mincore
 * otherwise) is mincore's, for a file with some of its pages cached; with
 * the nodes asked for, the nodes' pages add up to it.
 */
TEST(residency_counts_cached_pages)
{
	char path[] = "/var/tmp/tandem-residency-XXXXXX", buf[4096] = { 1 };
	long pg = sysconf(_SC_PAGESIZE), want;
	struct residency cached = { 0 }, nodes = { 0 };
	long sum = 0;
	int fd = mkstemp(path);

	ASSERT_LE(0, fd);
	ASSERT_EQ(4096, pg);
	for (int k = 0; k < 32; k++)
		ASSERT_EQ(4096, write(fd, buf, sizeof(buf)));
	ASSERT_EQ(0, fsync(fd));
	ASSERT_EQ(0, posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED));
	ASSERT_EQ(0, posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM));
	for (int k = 0; k < 10; k++)
		ASSERT_EQ(4096, pread(fd, buf, sizeof(buf), (off_t)k * 8192 % (32 * 4096)));
	want = mincore_count(fd, 32, pg);
	EXPECT_LE(5, want);
	EXPECT_GT(32, want);
	EXPECT_EQ(0, residency_file(path, RESIDENCY_CACHED, -1, &cached));
	EXPECT_EQ(0, residency_file(path, RESIDENCY_NODES, -1, &nodes));
	EXPECT_EQ(32, cached.pages);
	EXPECT_EQ(want, cached.cached);
	EXPECT_EQ(want, nodes.cached);
	for (int k = 0; k < nodes.nnodes; k++)
		sum += nodes.nodes[k];
	EXPECT_EQ(want, sum + nodes.failed);
	unlink(path);
	close(fd);
}

TEST_HARNESS_MAIN
