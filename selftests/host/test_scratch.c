// SPDX-License-Identifier: GPL-2.0
/*
 * ctl/scratch/ without a mount (a plain folder stands in the tmpfs), under
 * ASan/UBSan: names and config files; what drained.log says is durable,
 * against the files' stat(2) (a torn last line, a rewritten file, an escaped
 * name); the drainer itself copying files, a folder made after it started
 * included, byte for byte, with no temporary left, stopped by
 * scratch_drainer_stop(), its stderr (sanitizer reports too) empty; the
 * durable record's journal of a scratch lost at a reboot.
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

/*
 * A scratch lost at a reboot: its record's journal, written here, says which
 * files were queued and not durable (a D line before a Q of the same file
 * unchanged counts, a G line forgets, a newer Q is lost, a torn last line is
 * skipped); the scratch is lost only once its state folder is gone.
 */
TEST_F(scr, lost_at_reboot)
{
	char path[3 * PATH_MAX], rec[2 * PATH_MAX];
	struct scratch_cfg c;
	struct scratch_lost l;
	char **names;
	size_t n;
	FILE *f;

	snprintf(rec, sizeof(rec), "%s/record", self->root);
	ASSERT_EQ(0, mkdir(rec, 0755));
	snprintf(rec, sizeof(rec), "%s/record/s", self->root);
	ASSERT_EQ(0, mkdir(rec, 0755));
	snprintf(path, sizeof(path), "%s/config", rec);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "name=s\nsize=1048576\nnode=0\ndrain_to=%s\nuid=0\ngid=0\n", self->dst);
	fclose(f);
	snprintf(path, sizeof(path), "%s/journal", rec);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "Q 4 1.500000000 a\nD 10.5 4 1.500000000 a\n"	/* durable */
		   "Q 6 2.000000000 b\n"				/* lost */
		   "D 11 3 3.000000000 c\nQ 3 3.000000000 c\n"	/* closed again, unchanged */
		   "Q 5 4.000000000 d\nG d\n"			/* removed before its turn */
		   "Q 7 5.000000000 x%%0Ay%%25\n"			/* lost, an escaped name */
		   "Q 1 6.0 e\nD 12 1 6.0 e\nQ 2 7.0 e\n"		/* its newer version lost */
		   "Q 9 8.0 f");					/* torn */
	fclose(f);
	snprintf(path, sizeof(path), "%s/b", self->dst);
	put(path, "bb", 2);	/* b's previous copy */

	/* its state folder is there: not lost */
	ASSERT_EQ(0, scratch_lost_names(&names, &n));
	EXPECT_EQ(0, n);
	scratch_names_free(names, n);
	snprintf(path, sizeof(path), "%s/s/config", self->root);
	ASSERT_EQ(0, unlink(path));
	EXPECT_EQ(-ESTALE, scratch_cfg_load("s", &c));
	ASSERT_EQ(0, scratch_cfg_load_any("s", &c));
	EXPECT_TRUE(c.lost);
	EXPECT_STREQ(self->dst, c.drain_to);
	ASSERT_EQ(0, scratch_lost_names(&names, &n));
	ASSERT_EQ(1, n);
	EXPECT_STREQ("s", names[0]);
	scratch_names_free(names, n);

	ASSERT_EQ(0, scratch_lost_get(&c, &l));
	ASSERT_EQ(3, l.nfiles);
	EXPECT_EQ(15, l.bytes);
	EXPECT_EQ(3, l.durable_files);
	EXPECT_EQ(12, l.last_durable);
	EXPECT_STREQ("b", l.files[0].path);
	EXPECT_EQ(6, l.files[0].bytes);
	EXPECT_EQ(2.0, l.files[0].mtime);
	EXPECT_EQ(2, l.files[0].dest_bytes);
	EXPECT_STREQ("e", l.files[1].path);
	EXPECT_EQ(2, l.files[1].bytes);
	EXPECT_EQ(-1, l.files[1].dest_bytes);
	EXPECT_STREQ("x\ny%", l.files[2].path);
	scratch_lost_free(&l);
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

	/* a durable record with an empty journal: the drainer journals into it */
	snprintf(path, sizeof(path), "%s/record", self->root);
	ASSERT_EQ(0, mkdir(path, 0755));
	ASSERT_EQ(0, mkdir(self->c.record, 0755));
	snprintf(path, sizeof(path), "%s/journal", self->c.record);
	put(path, "", 0);
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
	/* the journal: each file queued (Q) before its copy was durable (D) */
	snprintf(path, sizeof(path), "%s/journal", self->c.record);
	char *j = get(path, &len), line[64];

	for (int i = 0; i < 3; i++) {
		char *q = strstr(j, "Q "), *d = strstr(j, "D ");

		EXPECT_TRUE(q && d && q < d) TH_LOG("journal: %.*s", (int)len, j);
		snprintf(line, sizeof(line), " %s\n", rel[i]);
		q = strstr(j, line);
		EXPECT_NE(NULL, q);
		EXPECT_NE(NULL, q ? strstr(q + 1, line) : NULL);	/* its Q and its D */
	}
	free(j);
	struct scratch_lost l;

	ASSERT_EQ(0, scratch_lost_get(&self->c, &l));
	EXPECT_EQ(0, l.nfiles);
	EXPECT_EQ(3, l.durable_files);
	scratch_lost_free(&l);
	/* the drainer's stderr: nothing, no sanitizer report either */
	snprintf(path, sizeof(path), "%s/s/drainer.err", self->root);
	char *log = get(path, &len);

	EXPECT_EQ(0, len) TH_LOG("drainer.err: %.*s", (int)len, log);
	free(log);
}

TEST_HARNESS_MAIN
