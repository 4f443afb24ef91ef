// SPDX-License-Identifier: GPL-2.0
/*
 * Steering keeps what the kernel knows about a page-cache folio: its
 * readahead marker (without it, reading on from a steered folio would not
 * start async readahead) and its place on the active list. Ground truth
 * from the kernel: fincore (what readahead brought in) and node meminfo
 * (Active(file) of node 1). Mapping the pages to ask move_pages would start
 * mmap readahead, so the readahead test takes the steered count as given.
 */
#include "kselftest_harness.h"
#include "dataset.h"

#define DIR_	"/mnt/data/flags"
#define SEED	0xf1a9
#define DS_	"/sys/kernel/tandem/datasets/1"
#define LRU_GEN	"/sys/kernel/mm/lru_gen/enabled"

static const char *ko(void)
{
	return getenv("TANDEM_KO") ?: "/lib/tandem/tandem.ko";
}

static int setup(const char *file, size_t bytes)
{
	sh("rmmod tandem 2>/dev/null; rm -rf " DIR_ "; mkdir -p " DIR_);
	if (ds_write(file, SEED, 0, bytes) || sh("insmod %s", ko()))
		return -1;
	drop_caches();
	return sh("tandemctl dataset add flags " DIR_ " >/dev/null");
}

static int wait_steered(void)
{
	double t0 = mono_s();

	usleep(50000);
	while (read_long(DS_ "/steer_pending") != 0)
		if (mono_s() - t0 > 60)
			return -1;
		else
			usleep(20000);
	return 0;
}

static long cached_pages(const char *file)
{
	char cmd[160];
	long n = -1;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "/usr/bin/fincore -n -b -o PAGES %s", file);
	p = popen(cmd, "r");
	if (p && fscanf(p, "%ld", &n) != 1)
		n = -1;
	if (p)
		pclose(p);
	return n;
}

/*
 * A 1-page read of a cold file starts a readahead window of a few pages
 * with a marker on a folio inside it (ext4: the second page; XFS: one of
 * its large folios). Steer the window, then read the rest of it, all
 * cached: the marker must start the next (async) window, so more pages get
 * cached than the window had.
 */
TEST(readahead_marker_survives_steering)
{
	const char *file = DIR_ "/ra";
	long window, after;
	char page[4096];
	int fd;

	ASSERT_EQ(0, setup(file, 8 << 20));
	fd = open(file, O_RDONLY);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, posix_fadvise(fd, 0, 0, POSIX_FADV_NORMAL));
	ASSERT_EQ(sizeof(page), pread(fd, page, sizeof(page), 0));
	ASSERT_EQ(0, wait_steered());
	window = cached_pages(file);
	ASSERT_GE(window, 2);
	ASSERT_LT(window, 64);
	/* precondition: the window was steered (placement: 60-steer, by move_pages) */
	ASSERT_EQ(window, read_long(DS_ "/counters/steered"));
	for (long pg = 1; pg < window; pg++)
		ASSERT_EQ(sizeof(page), pread(fd, page, sizeof(page), pg * 4096));
	usleep(200000);
	after = cached_pages(file);
	TH_LOG("initial window %ld pages; after reading the rest of it: %ld", window, after);
	EXPECT_GT(after, window);
	close(fd);
	EXPECT_EQ(0, ds_check(file, SEED, 0, 8 << 20));
}

/*
 * Pages read twice are on the active list; steered, they must stay active
 * on node 1. On MGLRU the lists are generations that a fresh node keeps
 * all "active", so the classic LRU is switched on for this test.
 */
TEST(active_pages_stay_active)
{
	const char *file = DIR_ "/hot";
	long act0, act1, bytes_kb = 16 << 10;
	char lru_gen[32] = "";
	FILE *f = fopen(LRU_GEN, "r");

	if (f) {
		if (!fgets(lru_gen, sizeof(lru_gen), f))
			lru_gen[0] = 0;
		fclose(f);
		ASSERT_EQ(0, sh("echo n > " LRU_GEN));
	}
	ASSERT_EQ(0, setup(file, bytes_kb << 10));
	sh("echo 0 > /sys/kernel/tandem/steer");
	sh("cat %s > /dev/null; cat %s > /dev/null", file, file);
	act0 = node_meminfo_kb(0, "Active(file)");
	ASSERT_GE(act0, bytes_kb * 9 / 10) TH_LOG("node 0 Active(file) %ld kB", act0);
	act1 = node_meminfo_kb(1, "Active(file)");
	sh("echo 1 > /sys/kernel/tandem/steer");
	ASSERT_EQ(0, sh("tandemctl steer flags > /dev/null"));
	TH_LOG("node 1 Active(file) %ld kB before steering, %ld after", act1,
	       node_meminfo_kb(1, "Active(file)"));
	EXPECT_GE(node_meminfo_kb(1, "Active(file)") - act1, bytes_kb * 9 / 10);
	EXPECT_EQ(0, ds_check(file, SEED, 0, bytes_kb << 10));
	if (lru_gen[0])
		sh("echo %s > " LRU_GEN, lru_gen);
}

TEST_HARNESS_MAIN
