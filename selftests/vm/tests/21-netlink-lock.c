// SPDX-License-Identifier: GPL-2.0
/*
 * DATASET_GET walks every cached folio of the dataset's files (node-pages),
 * which takes milliseconds for a large cached dataset; it must not hold the
 * registry's lock meanwhile, or every other request (the CLI polls
 * DATASET_GET every 10-50 ms) waits for it. One process repeats DATASET_GET
 * of a dataset; another times STATS_GET, which takes the lock (processes:
 * genl.h's buffers are static); once with 4 MiB cached, once with 160 MiB.
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <linux/tandem.h>

#include "kselftest_harness.h"
#include "dataset.h"
#include "genl.h"

#define DIR_	"/mnt/data/nllock"
#define SAMPLES	200	/* walks kept */
#define NSTATS	100

static const char *ko(void)
{
	return getenv("TANDEM_KO") ?: "/lib/tandem/tandem.ko";
}

struct walker {
	uint32_t id;
	volatile int stop;
	double walk_s[SAMPLES];
	int nwalk;
};

static void walk_loop(struct walker *w)
{
	static struct genl_t_msg m;
	struct genl_t_result r;
	struct genl_t s;

	if (genl_t_open(&s, TANDEM_GENL_NAME))
		_exit(1);
	while (!w->stop) {
		double t0 = mono_s();

		genl_t_init(&m, s.family, TANDEM_CMD_DATASET_GET, 0);
		genl_t_put_u32(&m, TANDEM_A_DATASET_ID, w->id);
		if (genl_t_xfer(&s, &m, &r, NULL, NULL))
			break;
		if (w->nwalk < SAMPLES)
			w->walk_s[w->nwalk++] = mono_s() - t0;
	}
	genl_t_close(&s);
	_exit(0);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct lat {
	double walk_med;	/* DATASET_GET of the dataset */
	double stats_med;	/* STATS_GET meanwhile */
	double stats_p90;
	int nwalk;
};

/* STATS_GET latency while another process repeats DATASET_GET of dataset id */
static int measure(uint32_t id, struct lat *l)
{
	static struct genl_t_msg m;
	double stats_s[NSTATS];
	struct genl_t_result r;
	struct walker *w;
	struct genl_t s;
	pid_t pid;
	int err = 0;

	if (genl_t_open(&s, TANDEM_GENL_NAME))
		return -1;
	w = mmap(NULL, sizeof(*w), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (w == MAP_FAILED) {
		genl_t_close(&s);
		return -1;
	}
	w->id = id;
	pid = fork();
	if (!pid)
		walk_loop(w);
	usleep(100000);
	for (int i = 0; i < NSTATS && !err; i++) {
		double t0 = mono_s();

		genl_t_init(&m, s.family, TANDEM_CMD_STATS_GET, 0);
		err = genl_t_xfer(&s, &m, &r, NULL, NULL);
		stats_s[i] = mono_s() - t0;
		usleep(1000 + (i * 7919) % 9000);	/* at scattered points of the walks */
	}
	w->stop = 1;
	waitpid(pid, NULL, 0);
	genl_t_close(&s);
	l->nwalk = w->nwalk;
	if (!err && w->nwalk >= 10) {
		qsort(w->walk_s, w->nwalk, sizeof(double), cmp_d);
		qsort(stats_s, NSTATS, sizeof(double), cmp_d);
		l->walk_med = w->walk_s[w->nwalk / 2];
		l->stats_med = stats_s[NSTATS / 2];
		l->stats_p90 = stats_s[NSTATS * 9 / 10];
	}
	munmap(w, sizeof(*w));
	return err || l->nwalk < 10 ? -1 : 0;
}

FIXTURE(lock) {
	int unused;
};

FIXTURE_SETUP(lock)
{
}

FIXTURE_TEARDOWN(lock)
{
	sh("rmmod tandem 2>/dev/null; rm -rf " DIR_);
}

/*
 * Under TCG a STATS_GET takes about as long as a short walk, so one size
 * says nothing: the same measurement on a small and a large dataset does.
 * With the walk under the lock a STATS_GET waits on average half a walk,
 * so its median grows by half the walks' difference; without, it does not
 * grow with the dataset. The check: less than a quarter of the difference.
 */
TEST_F_TIMEOUT(lock, dataset_get_does_not_hold_the_lock_while_walking, 240)
{
	struct lat small, large;
	double dwalk, dstats;

	if (geteuid())
		SKIP(return, "needs root");
	sh("rmmod tandem 2>/dev/null; rm -rf " DIR_ "; mkdir -p " DIR_ "/s " DIR_ "/l");
	ASSERT_EQ(0, ds_write(DIR_ "/s/a", 1, 0, 2 << 20));
	ASSERT_EQ(0, ds_write(DIR_ "/s/b", 1, 1, 2 << 20));
	ASSERT_EQ(0, ds_write(DIR_ "/l/a", 1, 2, 80 << 20));
	ASSERT_EQ(0, ds_write(DIR_ "/l/b", 1, 3, 80 << 20));
	ASSERT_EQ(0, sh("insmod %s steer=0", ko()));
	ASSERT_EQ(0, sh("tandemctl dataset add nls " DIR_ "/s >/dev/null"));
	ASSERT_EQ(0, sh("tandemctl dataset add nll " DIR_ "/l >/dev/null"));
	ASSERT_EQ(0, sh("cat " DIR_ "/s/* " DIR_ "/l/* > /dev/null"));
	ASSERT_EQ(0, measure(1, &small));
	ASSERT_EQ(0, measure(2, &large));
	TH_LOG("DATASET_GET, 4 MiB cached: median %.1f ms over %d; STATS_GET meanwhile: "
	       "median %.2f ms, 90th percentile %.2f ms", small.walk_med * 1e3, small.nwalk,
	       small.stats_med * 1e3, small.stats_p90 * 1e3);
	TH_LOG("DATASET_GET, 160 MiB cached: median %.1f ms over %d; STATS_GET meanwhile: "
	       "median %.2f ms, 90th percentile %.2f ms", large.walk_med * 1e3, large.nwalk,
	       large.stats_med * 1e3, large.stats_p90 * 1e3);
	dwalk = large.walk_med - small.walk_med;
	dstats = large.stats_med - small.stats_med;
	/*
	 * The dataset's size must show in the walk, well above what a STATS_GET
	 * takes, or the test tells nothing (the walk's own time depends on the
	 * host that runs the emulator: 3-10 ms here).
	 */
	ASSERT_GT(dwalk, 0.001);
	ASSERT_GT(dwalk, 8 * small.stats_p90);
	EXPECT_LT(dstats, dwalk / 4);
}

TEST_HARNESS_MAIN
