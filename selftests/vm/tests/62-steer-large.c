// SPDX-License-Identifier: GPL-2.0
/*
 * Large folios (XFS puts file data in them): a full steering pass moves
 * them whole to node 1. Ground truth from the kernel: where each page is
 * (move_pages(2)), which pages belong to large folios (/proc/kpageflags,
 * through /proc/self/pagemap), node meminfo, and the bytes themselves.
 * Skipped where the page cache holds no large folio (ext4 before 6.16).
 */
#include "kselftest_harness.h"
#include "dataset.h"

#define DIR_	"/mnt/data/large"
#define NFILES	8
#define FSIZE	(4 << 20)
#define SEED	0x1a76e
#define DS_	"/sys/kernel/tandem/datasets/1"
#define PAGES_ALL	((long)NFILES * FSIZE / 4096)
#define KPF_COMPOUND_HEAD	15
#define KPF_COMPOUND_TAIL	16

static const char *ko(void)
{
	return getenv("TANDEM_KO") ?: "/lib/tandem/tandem.ko";
}

static void path_of(char *p, size_t len, int k)
{
	snprintf(p, len, DIR_ "/f%d", k);
}

struct folios {
	long pages;		/* pages of the files found in the page cache */
	long large_pages;	/* of them, in large folios */
	long heads;		/* large folios */
	long nodes[4];		/* pages per node */
};

/* kpageflags of each page of an open mapping of n pages */
static void count_large(const volatile char *map, long n, struct folios *fo)
{
	int pm = open("/proc/self/pagemap", O_RDONLY), kf = open("/proc/kpageflags", O_RDONLY);
	uint64_t ent, flags;

	for (long i = 0; pm >= 0 && kf >= 0 && i < n; i++) {
		if (pread(pm, &ent, 8, ((uintptr_t)map / 4096 + i) * 8) != 8 || !(ent >> 63))
			continue;
		if (pread(kf, &flags, 8, (ent & ((1ULL << 55) - 1)) * 8) != 8)
			continue;
		if (flags & (1ULL << KPF_COMPOUND_HEAD))
			fo->heads++;
		if (flags & ((1ULL << KPF_COMPOUND_HEAD) | (1ULL << KPF_COMPOUND_TAIL)))
			fo->large_pages++;
	}
	if (pm >= 0)
		close(pm);
	if (kf >= 0)
		close(kf);
}

/* a shared read-only mapping of the whole file (its pages for pagemap) */
static const volatile char *map_file(const char *path, long *npages)
{
	struct stat st;
	void *map;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return MAP_FAILED;
	if (fstat(fd, &st)) {
		close(fd);
		return MAP_FAILED;
	}
	*npages = (st.st_size + 4095) / 4096;
	map = *npages ? mmap(NULL, *npages * 4096, PROT_READ, MAP_SHARED, fd, 0) : NULL;
	close(fd);
	return map;
}

/* every file: large folios by kpageflags, then pages per node by move_pages */
static void survey(struct folios *fo)
{
	long nodes[4], n;
	char p[64];

	memset(fo, 0, sizeof(*fo));
	for (int k = 0; k < NFILES; k++) {
		const volatile char *map;

		path_of(p, sizeof(p), k);
		map = map_file(p, &n);
		if (map == MAP_FAILED || !map)
			continue;
		for (long i = 0; i < n; i++)
			(void)map[i * 4096];
		count_large(map, n, fo);
		munmap((void *)map, n * 4096);
		fo->pages += ds_page_nodes(p, nodes, 4);
		for (int i = 0; i < 4; i++)
			fo->nodes[i] += nodes[i];
	}
}

static long check_all(void)
{
	long bad = 0;
	char p[64];

	for (int k = 0; k < NFILES; k++) {
		path_of(p, sizeof(p), k);
		bad += ds_check(p, SEED, k, FSIZE);
	}
	return bad;
}

TEST(large_folios_are_steered_whole)
{
	struct folios before, after;
	long file1_kb;
	char p[64];

	sh("rmmod tandem 2>/dev/null; rm -rf " DIR_ "; mkdir -p " DIR_);
	for (int k = 0; k < NFILES; k++) {
		path_of(p, sizeof(p), k);
		ASSERT_EQ(0, ds_write(p, SEED, k, FSIZE));
	}
	ASSERT_EQ(0, sh("insmod %s steer=0", ko()));
	drop_caches();
	ASSERT_EQ(0, sh("tandemctl dataset add large " DIR_ " >/dev/null"));
	ASSERT_EQ(0, sh("cat " DIR_ "/f* > /dev/null"));
	survey(&before);
	TH_LOG("%s: %ld pages cached, %ld in %ld large folios; node 0 %ld, node 1 %ld",
	       getenv("DATA_FS") ?: "?", before.pages, before.large_pages, before.heads,
	       before.nodes[0], before.nodes[1]);
	if (!before.heads)
		SKIP(return, "no large folios in the page cache on %s", getenv("DATA_FS") ?: "?");
	ASSERT_EQ(PAGES_ALL, before.pages);
	file1_kb = node_meminfo_kb(1, "FilePages");
	sh("echo 1 > /sys/kernel/tandem/steer");
	ASSERT_EQ(0, sh("tandemctl steer large > /dev/null"));
	survey(&after);
	TH_LOG("after a full pass: node 0 %ld, node 1 %ld pages (%.1f%% moved); %ld in %ld large folios; "
	       "steered %ld pages, %ld large folios, skip_large %ld, migrate_failed %ld",
	       after.nodes[0], after.nodes[1], 100.0 * after.nodes[1] / PAGES_ALL,
	       after.large_pages, after.heads, read_long(DS_ "/counters/steered"),
	       read_long(DS_ "/counters/steered_large"), read_long(DS_ "/counters/skip_large"),
	       read_long(DS_ "/counters/migrate_failed"));
	/* every page moved, none dropped from the cache */
	EXPECT_EQ(PAGES_ALL, after.pages);
	EXPECT_EQ(PAGES_ALL, after.nodes[1]);
	EXPECT_GE(node_meminfo_kb(1, "FilePages") - file1_kb, PAGES_ALL * 4 * 95 / 100);
	/* whole: the same large folios, none split, and the count says so */
	EXPECT_EQ(before.heads, after.heads);
	EXPECT_EQ(before.large_pages, after.large_pages);
	EXPECT_EQ(before.heads, read_long(DS_ "/counters/steered_large"));
	EXPECT_EQ(0, read_long(DS_ "/counters/skip_large"));
	EXPECT_EQ(0, check_all());
	drop_caches();
	EXPECT_EQ(0, check_all());
	sh("rmmod tandem");
}

TEST_HARNESS_MAIN
