// SPDX-License-Identifier: GPL-2.0
/*
 * Object lifetimes under load: datasets are deleted, files added and
 * removed, prefetches started and the module unloaded, many times, while
 * readers (checking every byte), reclaim on the target node (its kswapd and
 * direct reclaim run the module's eviction probe) and pollers of every
 * sysfs file and netlink dump run on the same files. The rig boots with
 * slub_debug=FZP on the module's caches (a write after free or an overrun
 * is reported as "BUG tandem_..."), dmesg is checked after the test, and
 * the caches are validated before each unload. Checked here: the module's
 * live-object count returns to 0, steer_pending never reads negative or
 * above the files queued (sysfs and netlink), no byte read changes.
 *
 *   LIFETIME_ITER=N  iterations (default 30)
 */
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <dirent.h>
#include <linux/tandem.h>

#include "kselftest_harness.h"
#include "dataset.h"
#include "genl.h"

#define DIR_	"/mnt/data/life"
#define NFILES	12
#define FSIZE	(512 << 10)
#define SEED	0x11fe7113
#define S_	"/sys/kernel/tandem"
/* steer_pending counts files: of two datasets, at most all of them */
#define PENDING_MAX	(2 * NFILES + 2)

static const char *ko(void)
{
	return getenv("TANDEM_KO") ?: "/lib/tandem/tandem.ko";
}

static void path_of(char *p, size_t len, int k)
{
	snprintf(p, len, DIR_ "/f%d", k);
}

static pid_t spawn(void (*fn)(int), int arg)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	fn(arg);
	_exit(0);
}

/* read every file, every byte checked; drop its cache now and then */
static void reader(int k)
{
	char p[64];

	srandom(k + 1);
	for (;;) {
		for (int i = 0; i < NFILES; i++) {
			int fd;

			path_of(p, sizeof(p), (i + k) % NFILES);
			fd = open(p, O_RDONLY);
			if (fd < 0)
				_exit(2);
			if (random() % 3 == 0)
				posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
			if (ds_check_fd(fd, SEED, (i + k) % NFILES, 0, FSIZE, 0, 0, 0))
				_exit(1);
			close(fd);
		}
	}
}

/* pressure on node 1, where the pages are steered, and drop_caches */
static void reclaimer(int mib)
{
	unsigned long mask = 1UL << 1;
	size_t len = (size_t)mib << 20;

	if (syscall(SYS_set_mempolicy, 2 /* MPOL_BIND */, &mask, 8 * sizeof(mask)))
		_exit(3);
	for (int round = 0;; round++) {
		char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m != MAP_FAILED) {
			for (size_t off = 0; off < len; off += 4096)
				m[off] = 1;
			munmap(m, len);
		}
		if (round % 4 == 0)
			sh("echo 1 > /proc/sys/vm/drop_caches");
		usleep(20000);
	}
}

static int check_pending(long v)
{
	return v < 0 || v > PENDING_MAX;
}

/* every file of every dataset directory, read; steer_pending checked */
static int poll_sysfs(void)
{
	static const char *const files[] = {
		"name", "files", "pages_cached", "bytes", "node_pages", "target_node",
		"prefetch", "counters/steered", "counters/steered_large",
	};
	struct dirent *e;
	char p[320], buf[256];
	int bad = 0;
	DIR *d = opendir(S_ "/datasets");

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			snprintf(p, sizeof(p), S_ "/datasets/%s/%s", e->d_name, files[i]);
			int fd = open(p, O_RDONLY);

			if (fd >= 0) {
				if (read(fd, buf, sizeof(buf)) < 0 && errno != ENODEV && errno != ENOENT)
					bad++;
				close(fd);
			}
		}
		snprintf(p, sizeof(p), S_ "/datasets/%s/steer_pending", e->d_name);
		FILE *f = fopen(p, "r");
		long v;

		if (f && fscanf(f, "%ld", &v) == 1 && check_pending(v)) {
			fprintf(stderr, "# sysfs %s: %ld\n", p, v);
			bad++;
		}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return bad;
}

static int bad_pending;

static void pending_cb(struct nlattr **tb, void *arg)
{
	if (tb[TANDEM_A_STEER_PENDING] && check_pending(genl_t_u32(tb[TANDEM_A_STEER_PENDING]))) {
		fprintf(stderr, "# netlink steer-pending %u\n", genl_t_u32(tb[TANDEM_A_STEER_PENDING]));
		bad_pending++;
	}
	if (tb[TANDEM_A_DATASET_ID])
		*(uint32_t *)arg = genl_t_u32(tb[TANDEM_A_DATASET_ID]);
}

/* DATASET_GET dump, then one doit and a FILE_GET dump of the last dataset */
static void poll_netlink(struct genl_t *s, struct genl_t_msg *m, struct genl_t_result *r)
{
	uint32_t id = 0;

	if (s->fd < 0 && genl_t_open(s, TANDEM_GENL_NAME))
		return;
	genl_t_init(m, s->family, TANDEM_CMD_DATASET_GET, NLM_F_DUMP);
	if (genl_t_xfer(s, m, r, pending_cb, &id) == -ENOENT || r->error == -EOPNOTSUPP) {
		genl_t_close(s);	/* the module went: the family's id may change */
		return;
	}
	if (!id)
		return;
	genl_t_init(m, s->family, TANDEM_CMD_DATASET_GET, 0);
	genl_t_put_u32(m, TANDEM_A_DATASET_ID, id);
	genl_t_xfer(s, m, r, pending_cb, &id);
	genl_t_init(m, s->family, TANDEM_CMD_FILE_GET, NLM_F_DUMP);
	genl_t_put_u32(m, TANDEM_A_DATASET_ID, id);
	genl_t_xfer(s, m, r, NULL, NULL);
}

static void poller(int unused)
{
	static struct genl_t_msg m;
	struct genl_t_result r;
	struct genl_t s = { .fd = -1 };

	for (;;) {
		if (poll_sysfs())
			_exit(1);
		poll_netlink(&s, &m, &r);
		if (bad_pending)
			_exit(1);
	}
}

static long live_objects(void)
{
	return read_long(S_ "/live_objects");
}

/* the module's own count of live objects reaches 0 (a worker may hold one briefly) */
static int wait_no_objects(void)
{
	double t0 = mono_s();

	while (live_objects() != 0)
		if (mono_s() - t0 > 5)
			return -1;
		else
			usleep(10000);
	return 0;
}

/* rmmod, retried while a poller's netlink dump holds the module (EAGAIN) */
static int unload(void)
{
	for (int i = 0; i < 100; i++) {
		if (!sh("rmmod tandem 2>/dev/null"))
			return 0;
		usleep(20000);
	}
	return sh("rmmod tandem");
}

/* slub_debug's full check of the module's caches (reports go to dmesg) */
static void validate_caches(void)
{
	sh("for c in /sys/kernel/slab/tandem_*; do [ -w $c/validate ] && echo 1 > $c/validate; done 2>/dev/null");
}

FIXTURE(life) {
	pid_t kids[4];
};

FIXTURE_SETUP(life)
{
	char p[64];

	if (geteuid())
		SKIP(return, "needs root");
	sh("rmmod tandem 2>/dev/null; rm -rf " DIR_ "; mkdir -p " DIR_);
	for (int k = 0; k < NFILES; k++) {
		path_of(p, sizeof(p), k);
		ASSERT_EQ(0, ds_write(p, SEED, k, FSIZE));
	}
	self->kids[0] = spawn(reader, 0);
	self->kids[1] = spawn(reader, 5);
	self->kids[2] = spawn(reclaimer, 160);
	self->kids[3] = spawn(poller, 0);
}

FIXTURE_TEARDOWN(life)
{
	for (int i = 0; i < 4; i++)
		if (self->kids[i] > 0)
			kill(self->kids[i], SIGKILL);
	sh("rmmod tandem 2>/dev/null; rm -rf " DIR_);
}

struct nl {
	struct genl_t s;
	struct genl_t_msg m;
	struct genl_t_result r;
};

static void id_cb(struct nlattr **tb, void *arg)
{
	if (tb[TANDEM_A_DATASET_ID])
		*(uint32_t *)arg = genl_t_u32(tb[TANDEM_A_DATASET_ID]);
}

/* a dataset named name%d with files f[from], f[from+step], ...; its id or 0 */
static uint32_t ds_add(struct nl *c, const char *name, int i, int from, int step)
{
	char n[32], p[64];
	uint32_t id = 0;

	snprintf(n, sizeof(n), "%s%d", name, i);
	genl_t_init(&c->m, c->s.family, TANDEM_CMD_DATASET_ADD, 0);
	genl_t_put_str(&c->m, TANDEM_A_DATASET_NAME, n);
	if (genl_t_xfer(&c->s, &c->m, &c->r, id_cb, &id))
		return 0;
	genl_t_init(&c->m, c->s.family, TANDEM_CMD_FILE_ADD, 0);
	genl_t_put_u32(&c->m, TANDEM_A_DATASET_ID, id);
	for (int k = from; k < NFILES; k += step) {
		path_of(p, sizeof(p), k);
		genl_t_put_str(&c->m, TANDEM_A_FILE_PATH, p);
	}
	return genl_t_xfer(&c->s, &c->m, &c->r, NULL, NULL) ? 0 : id;
}

static int ds_cmd(struct nl *c, uint8_t cmd, uint32_t id, const char *path)
{
	genl_t_init(&c->m, c->s.family, cmd, 0);
	genl_t_put_u32(&c->m, TANDEM_A_DATASET_ID, id);
	if (path)
		genl_t_put_str(&c->m, TANDEM_A_FILE_PATH, path);
	return genl_t_xfer(&c->s, &c->m, &c->r, NULL, NULL);
}

/*
 * One iteration's registrations: two datasets sharing files, a file added
 * then unlinked (the dataset pins it), a prefetch and a steering pass.
 */
static int register_all(struct nl *c, int i, uint32_t ids[2])
{
	char extra[64];

	snprintf(extra, sizeof(extra), DIR_ "/extra%d", i);
	ids[0] = ds_add(c, "life", i, 0, 1);
	ids[1] = ds_add(c, "half", i, 1, 2);
	if (!ids[0] || !ids[1] || ds_write(extra, SEED, 99, 64 << 10) ||
	    ds_cmd(c, TANDEM_CMD_FILE_ADD, ids[1], extra))
		return -1;
	unlink(extra);
	if (ds_cmd(c, TANDEM_CMD_PREFETCH, ids[0], NULL) ||
	    ds_cmd(c, TANDEM_CMD_STEER, ids[1], NULL))
		return -1;
	return 0;
}

TEST_F_TIMEOUT(life, delete_and_unload_under_load, 600)
{
	int iters = getenv("LIFETIME_ITER") ? atoi(getenv("LIFETIME_ITER")) : 30;
	int unloads = 0, status;
	double t0 = mono_s();
	static struct nl c;
	uint32_t ids[2];

	for (int i = 0; i < iters; i++) {
		ASSERT_EQ(0, sh("grep -q '^tandem ' /proc/modules || insmod %s", ko()));
		ASSERT_EQ(0, genl_t_open(&c.s, TANDEM_GENL_NAME));
		ASSERT_EQ(0, register_all(&c, i, ids))
			TH_LOG("iteration %d: %d (%s)", i, c.r.error, c.r.extack);
		usleep((i % 5) * 30000);
		if (i % 3 == 2) {
			/* unload with both datasets registered, prefetch and steering busy */
			genl_t_close(&c.s);
			validate_caches();
			ASSERT_EQ(0, unload());
			unloads++;
			continue;
		}
		EXPECT_EQ(0, ds_cmd(&c, TANDEM_CMD_DATASET_DEL, ids[0], NULL));
		EXPECT_EQ(0, ds_cmd(&c, TANDEM_CMD_DATASET_DEL, ids[1], NULL));
		genl_t_close(&c.s);
		EXPECT_EQ(0, wait_no_objects())
			TH_LOG("iteration %d: %ld live objects with nothing registered", i,
			       live_objects());
	}
	validate_caches();
	EXPECT_EQ(0, sh("! grep -q '^tandem ' /proc/modules || rmmod tandem"));
	TH_LOG("%d iterations (%d unloads) in %.1f s", iters, unloads, mono_s() - t0);
	/* every child still running: none found a bad byte or a bad count */
	for (int k = 0; k < 4; k++) {
		EXPECT_EQ(0, waitpid(self->kids[k], &status, WNOHANG))
			TH_LOG("child %d exited with %d", k, WEXITSTATUS(status));
	}
}

TEST_HARNESS_MAIN
