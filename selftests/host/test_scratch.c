// SPDX-License-Identifier: GPL-2.0
/*
 * ctl/scratch/ without a mount (a plain folder stands in the tmpfs), under
 * ASan/UBSan: names and config files; what drained.log says is durable,
 * against the files' stat(2) (a torn last line, a rewritten file, an escaped
 * name); the drainer itself copying files, a folder made after it started
 * included, byte for byte, with no temporary left, stopped by
 * scratch_drainer_stop(), its stderr (sanitizer reports too) empty.
 * selftests/host/scratch.sh runs the real tmpfs as root.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "scratch/scratch.h"

static void put(const char *path, const char *data, size_t len)
{
	FILE *f = fopen(path, "w");

	if (!f || fwrite(data, 1, len, f) != len || fclose(f))
		abort();
}

static char *get(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 20);

	*len = f ? fread(buf, 1, 1 << 20, f) : 0;
	if (f)
		fclose(f);
	return buf;
}

FIXTURE(scr)
{
	char root[64], dst[96];
	struct scratch_cfg c;
};

FIXTURE_SETUP(scr)
{
	char path[2 * PATH_MAX];

	strcpy(self->root, "/tmp/tandem-test-scratch-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->root));
	setenv("TANDEM_SCRATCH_DIR", self->root, 1);
	/* no durable record there: the drainer journals nothing */
	snprintf(path, sizeof(path), "%s/record", self->root);
	setenv("TANDEM_SCRATCH_RECORD_DIR", path, 1);
	snprintf(self->dst, sizeof(self->dst), "%s/dst", self->root);
	ASSERT_EQ(0, mkdir(self->dst, 0755));
	snprintf(path, sizeof(path), "%s/s", self->root);
	ASSERT_EQ(0, mkdir(path, 0755));
	snprintf(path, sizeof(path), "%s/s/mnt", self->root);
	ASSERT_EQ(0, mkdir(path, 0700));
	snprintf(path, sizeof(path), "%s/s/config", self->root);
	FILE *f = fopen(path, "w");

	ASSERT_NE(NULL, f);
	fprintf(f, "name=s\nsize=1048576\nnode=0\ndrain_to=%s\nrate_bps=0\nuid=%u\ngid=%u\n"
		"evict=0\nfuture_key=ignored\n", self->dst, getuid(), getgid());
	fclose(f);
	ASSERT_EQ(0, scratch_cfg_load("s", &self->c));
}

FIXTURE_TEARDOWN(scr)
{
	char cmd[160];

	scratch_drainer_stop(&self->c);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", self->root);
	if (system(cmd))
		TH_LOG("could not remove %s", self->root);
}

TEST(names)
{
	EXPECT_EQ(0, scratch_name_check("ckpt-1.a_b"));
	EXPECT_EQ(-EINVAL, scratch_name_check(""));
	EXPECT_EQ(-EINVAL, scratch_name_check(".hidden"));
	EXPECT_EQ(-EINVAL, scratch_name_check("a/b"));
	EXPECT_EQ(-EINVAL, scratch_name_check("a b"));
	EXPECT_EQ(-EINVAL, scratch_name_check(
		"0123456789012345678901234567890123456789012345678901234567890123"));
}

TEST_F(scr, config)
{
	struct scratch_cfg c;
	char path[2 * PATH_MAX];

	EXPECT_EQ(1048576, self->c.size);
	EXPECT_STREQ(self->dst, self->c.drain_to);
	EXPECT_EQ(getuid(), self->c.uid);
	EXPECT_EQ(-ENOENT, scratch_cfg_load("none", &c));
	snprintf(path, sizeof(path), "%s/s/config", self->root);
	put(path, "size=12\n", 8);	/* no drain_to */
	EXPECT_EQ(-EINVAL, scratch_cfg_load("s", &c));
}

/* a drained.log line for path as stat(2) has it now, mtime shifted by dns */
static void log_line(FILE *f, double t, const char *mnt, const char *path, const char *logged,
		     long dns)
{
	char p[2 * PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", mnt, path);
	if (stat(p, &st))
		abort();
	fprintf(f, "%.6f %lld %lld.%09ld %s\n", t, (long long)st.st_size,
		(long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec + dns, logged);
}

TEST_F(scr, log_says_what_is_durable)
{
	char path[2 * PATH_MAX], name[16] = "x\ny%";
	struct scratch_status st;
	FILE *f;

	snprintf(path, sizeof(path), "%s/a", self->c.mnt);
	put(path, "aaaa", 4);
	snprintf(path, sizeof(path), "%s/b", self->c.mnt);
	put(path, "bbbbbb", 6);
	snprintf(path, sizeof(path), "%s/%s", self->c.mnt, name);
	put(path, "x", 1);
	snprintf(path, sizeof(path), "%s/.tmp", self->c.mnt);
	put(path, "hidden", 6);
	snprintf(path, sizeof(path), "%s/s/drained.log", self->root);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	log_line(f, 100.5, self->c.mnt, "a", "a", 1);	/* an older a ... */
	log_line(f, 200.25, self->c.mnt, "a", "a", 0);	/* ... then a as it is */
	log_line(f, 150, self->c.mnt, "b", "b", 0);
	log_line(f, 160, self->c.mnt, "b", "b", 7);	/* b's last line: another b */
	log_line(f, 170, self->c.mnt, name, "x%0Ay%25", 0);
	fprintf(f, "300 4 1.0 a");	/* torn: no newline */
	fclose(f);
	ASSERT_EQ(0, scratch_status_get(&self->c, &st));
	EXPECT_EQ(3, st.nfiles);	/* .tmp is not a file of the scratch */
	EXPECT_EQ(2, st.drained_files);
	EXPECT_EQ(5, st.drained_bytes);
	EXPECT_EQ(1, st.pending_files);
	EXPECT_EQ(6, st.pending_bytes);
	EXPECT_EQ(5, st.durable_files);
	EXPECT_EQ(200.25, st.last_durable);
	ASSERT_EQ(3, st.nfiles);
	EXPECT_STREQ("a", st.files[0].path);
	EXPECT_EQ(200.25, st.files[0].durable);
	EXPECT_FALSE(st.files[1].drained);	/* b */
	EXPECT_STREQ(name, st.files[2].path);
	EXPECT_TRUE(st.files[2].drained);
	scratch_status_free(&st);
}

static int wait_drained(const struct scratch_cfg *c, int files)
{
	struct timespec t = { .tv_nsec = 20 * 1000 * 1000 };
	struct scratch_status st;

	for (int i = 0; i < 250; i++) {
		if (scratch_status_get(c, &st))
			return -1;
		bool done = st.nfiles == (size_t)files && !st.pending_files;

		scratch_status_free(&st);
		if (done)
			return 0;
		nanosleep(&t, NULL);
	}
	return -1;
}

TEST_F(scr, drainer_copies)
{
	static const char *const rel[] = { "one", "sub/two", "sub/deeper/three" };
	char path[2 * PATH_MAX], data[3][5000];
	pid_t pid;
	size_t len;
	int err;

	snprintf(path, sizeof(path), "%s/s/drainer.err", self->root);
	err = scratch_drainer_start(&self->c, &pid);
	if (err) {
		char *log = get(path, &len);

		TH_LOG("drainer.err: %.*s", (int)len, log);
		free(log);
	}
	ASSERT_EQ(0, err);
	EXPECT_EQ(pid, scratch_drainer_pid(&self->c));
	EXPECT_EQ(-EALREADY, scratch_drainer_start(&self->c, &pid));
	snprintf(path, sizeof(path), "%s/sub", self->c.mnt);
	ASSERT_EQ(0, mkdir(path, 0755));
	snprintf(path, sizeof(path), "%s/sub/deeper", self->c.mnt);
	ASSERT_EQ(0, mkdir(path, 0755));
	for (int i = 0; i < 3; i++) {
		for (size_t j = 0; j < sizeof(data[i]); j++)
			data[i][j] = (char)(j * 31 + i * 7);
		snprintf(path, sizeof(path), "%s/%s", self->c.mnt, rel[i]);
		put(path, data[i], sizeof(data[i]) - i);
	}
	ASSERT_EQ(0, wait_drained(&self->c, 3));
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", self->dst, rel[i]);
		char *got = get(path, &len);

		EXPECT_EQ(sizeof(data[i]) - i, len);
		EXPECT_EQ(0, memcmp(got, data[i], len));
		free(got);
	}
	snprintf(path, sizeof(path), "%s/.one.tandem-drain", self->dst);
	EXPECT_NE(0, access(path, F_OK));
	EXPECT_EQ(0, scratch_drainer_stop(&self->c));
	EXPECT_EQ(0, scratch_drainer_pid(&self->c));
	/* the drainer's stderr: nothing, no sanitizer report either */
	snprintf(path, sizeof(path), "%s/s/drainer.err", self->root);
	char *log = get(path, &len);

	EXPECT_EQ(0, len) TH_LOG("drainer.err: %.*s", (int)len, log);
	free(log);
}

TEST_HARNESS_MAIN
