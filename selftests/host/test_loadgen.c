// SPDX-License-Identifier: GPL-2.0
/*
 * Training-job emulator on the host, in a temporary directory. Ground
 * truth comes from outside loadgen: the order of file opens from inotify,
 * file sizes from stat(), elapsed time from the test's own clock, CPU time
 * from getrusage().
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "loadgen/loadgen.h"
#include "release/release.h"

#define NFILES 24

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

FIXTURE(ds) {
	char dir[64];
	struct sample_set ds;
};

FIXTURE_SETUP(ds)
{
	struct lg_gen_opts g = { .files = NFILES, .size = 64 * 1024,
				 .dist = LG_DIST_UNIFORM, .seed = 3 };
	uint64_t total;

	snprintf(self->dir, sizeof(self->dir), "/tmp/tandem-lg-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	ASSERT_EQ(0, lg_gen(self->dir, &g, &total));
	ASSERT_EQ(0, sample_set_scan(self->dir, 0, &self->ds));
	ASSERT_EQ(total, self->ds.files.bytes);
}

FIXTURE_TEARDOWN(ds)
{
	char cmd[128];

	sample_set_free(&self->ds);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", self->dir);
	if (system(cmd))
		TH_LOG("could not remove %s", self->dir);
}

/* Sizes on disk (stat) and content (read(2)) match what gen promised. */
TEST_F(ds, gen_writes_verifiable_files)
{
	uint64_t sum = 0;
	unsigned char *buf = malloc(256 * 1024);

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(NFILES, self->ds.files.n);
	for (int i = 0; i < NFILES; i++) {
		char path[128];
		struct stat st;
		ssize_t n;
		int fd;

		snprintf(path, sizeof(path), "%s/sample-%06d.bin", self->dir, i);
		ASSERT_EQ(0, stat(path, &st));
		/* uniform: between size/2 and 3*size/2 */
		EXPECT_GE(st.st_size, 32 * 1024);
		EXPECT_LE(st.st_size, 96 * 1024);
		sum += st.st_size;
		fd = open(path, O_RDONLY);
		ASSERT_GE(fd, 0);
		n = read(fd, buf, 256 * 1024);
		close(fd);
		ASSERT_EQ(st.st_size, n);
		EXPECT_EQ(0, memcmp(buf, "TNDMLG01", 8));
		EXPECT_TRUE(lg_check(buf, 0, n, 3, i, n));
		EXPECT_TRUE(lg_check(buf + 1000, 1000, n - 1000, 3, i, n));
		buf[n / 2] ^= 1;
		EXPECT_FALSE(lg_check(buf, 0, n, 3, i, n));
		EXPECT_FALSE(lg_check(buf, 0, n, 4, i, n));	/* other seed */
	}
	EXPECT_EQ(sum, self->ds.files.bytes);
	free(buf);
}

/* Names of files opened in dir, in order, while loadgen runs. */
static int opens_during_run(const char *dir, const struct sample_set *ds,
			    const struct lg_opts *o, char (*names)[32], int max)
{
	char ev[64 * 1024] __attribute__((aligned(8)));
	struct lg_result res;
	int fd = inotify_init1(IN_NONBLOCK), n = 0;
	ssize_t len;

	/* watch closes too: inotify merges identical consecutive events */
	if (fd < 0 || inotify_add_watch(fd, dir, IN_OPEN | IN_CLOSE_NOWRITE) < 0)
		return -1;
	if (lg_run(ds, o, &res))
		return -1;
	lg_result_free(&res);
	while ((len = read(fd, ev, sizeof(ev))) > 0) {
		for (char *p = ev; p < ev + len;) {
			struct inotify_event *e = (struct inotify_event *)p;

			if (e->len && (e->mask & IN_OPEN) && n < max)
				snprintf(names[n++], 32, "%s", e->name);
			p += sizeof(*e) + e->len;
		}
	}
	close(fd);
	return n;
}

TEST_F(ds, seeded_shuffle_order)
{
	static char a[2 * NFILES][32], b[2 * NFILES][32], c[2 * NFILES][32];
	struct lg_opts o;
	int na, nb, nc;

	lg_opts_default(&o);
	o.epochs = 2;
	o.seed = 5;
	na = opens_during_run(self->dir, &self->ds, &o, a, 2 * NFILES);
	nb = opens_during_run(self->dir, &self->ds, &o, b, 2 * NFILES);
	o.seed = 6;
	nc = opens_during_run(self->dir, &self->ds, &o, c, 2 * NFILES);
	ASSERT_EQ(2 * NFILES, na);
	ASSERT_EQ(2 * NFILES, nb);
	ASSERT_EQ(2 * NFILES, nc);
	EXPECT_EQ(0, memcmp(a, b, sizeof(a)));		/* same seed, same order */
	EXPECT_NE(0, memcmp(a, c, sizeof(a)));		/* other seed, other order */
	EXPECT_NE(0, memcmp(a, a + NFILES, NFILES * 32));	/* epochs differ */
	/* each epoch reads every file exactly once */
	for (int e = 0; e < 2; e++) {
		for (int i = 0; i < NFILES; i++) {
			int seen = 0;
			char want[32];

			snprintf(want, sizeof(want), "sample-%06d.bin", i);
			for (int k = 0; k < NFILES; k++)
				seen += !strcmp(a[e * NFILES + k], want);
			EXPECT_EQ(1, seen);
		}
	}
}

TEST_F(ds, sequential_order_is_name_order)
{
	static char a[NFILES][32];
	struct lg_opts o;

	lg_opts_default(&o);
	o.shuffle = false;
	o.threads = 1;
	ASSERT_EQ(NFILES, opens_during_run(self->dir, &self->ds, &o, a, NFILES));
	for (int i = 0; i < NFILES; i++) {
		char want[32];

		snprintf(want, sizeof(want), "sample-%06d.bin", i);
		EXPECT_STREQ(want, a[i]);
	}
}

/*
 * lg_first_needs() (tandemctl loadgen order) against the files the jobs
 * really open: one seed, the job's own order; seeds 5 and 6, the two jobs'
 * orders taken position by position, each file at its first need.
 */
TEST_F(ds, first_needs_is_the_order_jobs_open)
{
	static char a[NFILES][32], b[NFILES][32], want[NFILES][32];
	uint64_t seeds[2] = { 5, 6 };
	uint32_t files[NFILES], n;
	struct lg_opts o;
	int nw = 0;

	lg_opts_default(&o);
	o.seed = 5;
	ASSERT_EQ(NFILES, opens_during_run(self->dir, &self->ds, &o, a, NFILES));
	o.seed = 6;
	ASSERT_EQ(NFILES, opens_during_run(self->dir, &self->ds, &o, b, NFILES));

	ASSERT_EQ(0, lg_first_needs(&self->ds, seeds, 1, 0, true, files, &n));
	ASSERT_EQ(NFILES, n);
	for (int i = 0; i < NFILES; i++)
		EXPECT_STREQ(a[i], strrchr(self->ds.files.paths[files[i]], '/') + 1);

	for (int i = 0; i < NFILES; i++)
		for (int j = 0; j < 2; j++) {
			const char *f = j ? b[i] : a[i];
			bool dup = false;

			for (int k = 0; k < nw; k++)
				dup |= !strcmp(want[k], f);
			if (!dup)
				snprintf(want[nw++], 32, "%s", f);
		}
	ASSERT_EQ(NFILES, nw);
	ASSERT_EQ(0, lg_first_needs(&self->ds, seeds, 2, 0, true, files, &n));
	ASSERT_EQ(NFILES, n);
	for (int i = 0; i < NFILES; i++)
		EXPECT_STREQ(want[i], strrchr(self->ds.files.paths[files[i]], '/') + 1);
	/* two seeds do not give seed 5's order: the second job's files come early */
	EXPECT_NE(0, memcmp(want, a, sizeof(a)));
}

/*
 * The learned read order (release/hook_order.c): each job's own sequence
 * (lg_first_needs with one seed: what the jobs open, above), merged, is
 * `loadgen order` of both seeds; it survives a save and a load; the same
 * order against itself has displacement 0, another seed's much more.
 */
TEST_F(ds, learned_order_merge_save_load)
{
	uint64_t seeds[2] = { 5, 6 }, other = 9;
	uint32_t files[NFILES], n;
	struct rel_seqs s = { .n = 2 }, t = { .n = 2 };
	struct rel_learned l;
	struct file_list fl;
	char path[96];
	double cov, d;

	for (int j = 0; j < 2; j++) {
		ASSERT_EQ(0, lg_first_needs(&self->ds, &seeds[j], 1, 0, true, files, &n));
		s.seq[j] = malloc(n * sizeof(uint32_t));
		memcpy(s.seq[j], files, n * sizeof(uint32_t));
		s.len[j] = s.cap[j] = n;
	}
	ASSERT_EQ(0, rel_order_merge(&s, &self->ds, NULL, NULL, &fl));
	ASSERT_EQ(0, lg_first_needs(&self->ds, seeds, 2, 0, true, files, &n));
	ASSERT_EQ(n, fl.n);
	for (uint32_t i = 0; i < n; i++)
		EXPECT_STREQ(self->ds.files.paths[files[i]], fl.paths[i]);
	file_list_free(&fl);
	/*
	 * By need, the second job released long after the first has read
	 * everything: the first job's own sequence (it opens every file).
	 */
	ASSERT_EQ(0, rel_order_merge(&s, &self->ds, (double[]){ 0, 1e9 }, (double[]){ 1, 1 },
				     &fl));
	ASSERT_EQ(s.len[0], fl.n);
	for (size_t i = 0; i < fl.n; i++)
		EXPECT_STREQ(self->ds.files.paths[s.seq[0][i]], fl.paths[i]);
	file_list_free(&fl);

	snprintf(path, sizeof(path), "%s.learned", self->dir);
	ASSERT_EQ(0, rel_order_save(path, &s, &self->ds, true, 0.01));
	ASSERT_EQ(0, rel_order_load(path, &self->ds, &l));
	EXPECT_TRUE(l.stable);
	EXPECT_EQ(0.01, l.displacement);
	ASSERT_EQ(2, l.seqs.n);
	for (int j = 0; j < 2; j++) {
		ASSERT_EQ(s.len[j], l.seqs.len[j]);
		EXPECT_EQ(0, memcmp(s.seq[j], l.seqs.seq[j], s.len[j] * sizeof(uint32_t)));
	}
	EXPECT_EQ(0, rel_order_displacement(&s, &l.seqs, self->ds.files.n, &cov));
	EXPECT_EQ(1, cov);
	rel_seqs_free(&l.seqs);

	/* job 1 with another seed: job 0 agrees, job 1 does not */
	ASSERT_EQ(0, lg_first_needs(&self->ds, &other, 1, 0, true, files, &n));
	for (int j = 0; j < 2; j++) {
		t.seq[j] = malloc(n * sizeof(uint32_t));
		memcpy(t.seq[j], j ? files : s.seq[0], n * sizeof(uint32_t));
		t.len[j] = t.cap[j] = n;
	}
	d = rel_order_displacement(&s, &t, self->ds.files.n, &cov);
	EXPECT_GT(d, 0.05);
	EXPECT_LT(d, 0.5);
	EXPECT_EQ(1, cov);
	t.n = 1;	/* another number of instances: not comparable */
	EXPECT_TRUE(isnan(rel_order_displacement(&s, &t, self->ds.files.n, &cov)));
	t.n = 2;

	/* not a learned-order file: refused */
	FILE *f = fopen(path, "w");

	ASSERT_NE(NULL, f);
	fputs("/some/path\n", f);
	fclose(f);
	EXPECT_EQ(-EINVAL, rel_order_load(path, &self->ds, &l));
	unlink(path);
	EXPECT_EQ(-ENOENT, rel_order_load(path, &self->ds, &l));
	rel_seqs_free(&s);
	rel_seqs_free(&t);
}

/*
 * 2 epochs x 12 batches x 15 ms of compute = 360 ms at least; the data is
 * cached after a warm-up, so little more. The timeline has one row per
 * iteration with its compute time.
 */
TEST_F(ds, compute_sleep_and_timeline)
{
	char tl[96], line[256];
	struct lg_result res;
	struct lg_opts o;
	double t0, wall;
	int rows = 0;
	FILE *f;

	lg_opts_default(&o);
	ASSERT_EQ(0, lg_run(&self->ds, &o, &res));	/* warm the page cache */
	lg_result_free(&res);
	snprintf(tl, sizeof(tl), "%s.timeline.csv", self->dir);
	o.epochs = 2;
	o.batch = 2;
	o.compute = 0.015;
	o.timeline = tl;
	t0 = mono();
	ASSERT_EQ(0, lg_run(&self->ds, &o, &res));
	wall = mono() - t0;
	EXPECT_GE(wall, 0.36);
	EXPECT_LT(wall, 0.36 + 0.25);
	EXPECT_LE(res.total, wall);
	EXPECT_EQ(2, res.epochs);
	EXPECT_EQ(2 * self->ds.files.bytes, res.bytes);
	lg_result_free(&res);
	f = fopen(tl, "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(line, sizeof(line), f));
	EXPECT_EQ(0, strncmp(line, "iter,epoch,batch,t_s,wait_s,compute_s", 37));
	while (fgets(line, sizeof(line), f)) {
		unsigned it, ep, b;
		double t, w, c;

		ASSERT_EQ(6, sscanf(line, "%u,%u,%u,%lf,%lf,%lf", &it, &ep, &b, &t, &w, &c));
		EXPECT_EQ(rows, it);
		EXPECT_EQ(rows / 12, ep);
		EXPECT_GE(c, 0.015);
		rows++;
	}
	fclose(f);
	unlink(tl);
	EXPECT_EQ(24, rows);
}

/* Decoding burns CPU time (getrusage), not just wall time. */
TEST_F(ds, decode_uses_cpu)
{
	struct rusage a, b;
	struct lg_result res;
	struct lg_opts o;
	double cpu;

	lg_opts_default(&o);
	o.limit = 10;
	o.decode = 0.01;
	getrusage(RUSAGE_SELF, &a);
	ASSERT_EQ(0, lg_run(&self->ds, &o, &res));
	getrusage(RUSAGE_SELF, &b);
	cpu = (b.ru_utime.tv_sec - a.ru_utime.tv_sec) + (b.ru_utime.tv_usec - a.ru_utime.tv_usec) / 1e6 +
	      (b.ru_stime.tv_sec - a.ru_stime.tv_sec) + (b.ru_stime.tv_usec - a.ru_stime.tv_usec) / 1e6;
	EXPECT_GE(cpu, 0.1);
	EXPECT_EQ(10, res.samples);
	lg_result_free(&res);
}

/* Large files read as records: every byte once per epoch, content intact. */
TEST_F(ds, records_cover_the_files)
{
	struct sample_set rec;
	struct lg_result res;
	struct lg_opts o;
	uint64_t want = 0;

	ASSERT_EQ(0, sample_set_scan(self->dir, 10000, &rec));
	for (uint32_t f = 0; f < rec.files.n; f++)
		want += (rec.files.sizes[f] + 9999) / 10000;
	EXPECT_EQ(want, rec.nsamples);
	lg_opts_default(&o);
	o.threads = 3;
	o.batch = 5;
	o.verify = true;
	ASSERT_EQ(0, lg_run(&rec, &o, &res));
	EXPECT_EQ(self->ds.files.bytes, res.bytes);
	EXPECT_EQ(0, res.verify_errors);
	lg_result_free(&res);
	sample_set_free(&rec);
}

/*
 * Checkpoints every 10 of 48 steps: the files on disk (readdir, stat, their
 * first 8 bytes) are the 4 reported, none left under its temporary name;
 * inotify sees each closed under the temporary name, then renamed to the
 * final one (the torch.save + os.replace pattern).
 */
TEST_F(ds, checkpoints_written_then_renamed)
{
	char ck[64], path[128], evbuf[8192], tmpname[64] = "";
	struct lg_result res;
	struct lg_opts o;
	uint32_t files = 0, closes = 0, renames = 0;
	struct dirent *de;
	DIR *d;
	int in;
	ssize_t n;

	snprintf(ck, sizeof(ck), "/tmp/tandem-lgck-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(ck));
	in = inotify_init1(IN_NONBLOCK);
	ASSERT_LE(0, in);
	ASSERT_LE(0, inotify_add_watch(in, ck, IN_CLOSE_WRITE | IN_MOVED_TO));
	lg_opts_default(&o);
	o.epochs = 2;
	o.ckpt_dir = ck;
	o.ckpt_size = 256 * 1024;
	o.ckpt_every = 10;
	ASSERT_EQ(0, lg_run(&self->ds, &o, &res));
	ASSERT_EQ(4, res.nckpt);
	for (uint32_t i = 0; i < res.nckpt; i++) {
		struct stat sb;
		uint64_t stamp = 0;
		int fd;

		EXPECT_EQ(10 * (i + 1), res.ckpt[i].step);
		EXPECT_GT(res.ckpt[i].stall, 0);
		EXPECT_GT(res.ckpt[i].copy, 0);
		EXPECT_GT(res.ckpt[i].copy_new, 0);
		EXPECT_LE(res.ckpt[i].at, res.total);
		snprintf(path, sizeof(path), "%s/ckpt-%06u.bin", ck, 10 * (i + 1));
		ASSERT_EQ(0, stat(path, &sb));
		EXPECT_EQ(256 * 1024, sb.st_size);
		fd = open(path, O_RDONLY);
		ASSERT_LE(0, fd);
		EXPECT_EQ(8, pread(fd, &stamp, 8, 0));
		close(fd);
		EXPECT_EQ(10 * (i + 1), stamp);
	}
	d = opendir(ck);
	ASSERT_NE(NULL, d);
	while ((de = readdir(d)))
		files += de->d_name[0] != '.';
	closedir(d);
	EXPECT_EQ(4, files);
	n = read(in, evbuf, sizeof(evbuf));
	for (char *p = evbuf; n > 0 && p < evbuf + n;) {
		struct inotify_event *ev = (struct inotify_event *)p;

		if (ev->mask & IN_CLOSE_WRITE) {
			closes += ev->name[0] == '.';
			snprintf(tmpname, sizeof(tmpname), "%s", ev->name);
		} else if (ev->mask & IN_MOVED_TO) {
			/* the rename follows the close of its own temporary */
			renames += !strncmp(tmpname + 1, ev->name, strlen(ev->name));
		}
		p += sizeof(*ev) + ev->len;
	}
	close(in);
	EXPECT_EQ(4, closes);
	EXPECT_EQ(4, renames);
	lg_result_free(&res);
	snprintf(path, sizeof(path), "rm -rf %s", ck);
	EXPECT_EQ(0, system(path));
}

/* A checkpoint that cannot be written ends the run with an error. */
TEST_F(ds, checkpoint_error_ends_the_run)
{
	struct lg_result res;
	struct lg_opts o;

	lg_opts_default(&o);
	o.ckpt_dir = "/nonexistent/tandem-lgck";
	o.ckpt_size = 4096;
	o.ckpt_every = 5;
	EXPECT_EQ(-ECANCELED, lg_run(&self->ds, &o, &res));
	EXPECT_EQ(0, res.nckpt);
	EXPECT_GT(24, res.samples);
	lg_result_free(&res);
}

TEST_HARNESS_MAIN
