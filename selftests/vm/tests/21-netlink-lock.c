// SPDX-License-Identifier: GPL-2.0
/*
 * DATASET_GET walks every cached folio of the dataset's files (node-pages),
 * which takes tens of milliseconds for a large cached dataset; it must not
 * hold the registry's lock meanwhile, or every other request (the CLI
 * polls DATASET_GET every 10-50 ms) waits for it. One process repeats
 * DATASET_GET of a dataset with 32 MiB cached in two files; another times
 * STATS_GET, which takes the lock (processes: genl.h's buffers are static). With the walk under the lock the
 * STATS_GETs wait on average half a walk; the check is on their 90th
 * percentile against the walk's median.
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "dataset.h"
#include "genl.h"
#include "tandem.h"

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

TEST_F_TIMEOUT(lock, dataset_get_does_not_hold_the_lock_while_walking, 240)
{
	static struct genl_t_msg m;
	double stats_s[NSTATS], walk_med, stats_p90;
	struct genl_t_result r;
	struct walker *w;
	struct genl_t s;
	pid_t pid;

	if (geteuid())
		SKIP(return, "needs root");
	sh("rmmod tandem 2>/dev/null; rm -rf " DIR_ "; mkdir -p " DIR_);
	ASSERT_EQ(0, ds_write(DIR_ "/a", 1, 0, 16 << 20));
	ASSERT_EQ(0, ds_write(DIR_ "/b", 1, 1, 16 << 20));
	ASSERT_EQ(0, sh("insmod %s steer=0", ko()));
	ASSERT_EQ(0, sh("tandemctl dataset add nllock " DIR_ " >/dev/null"));
	ASSERT_EQ(0, sh("cat " DIR_ "/a " DIR_ "/b > /dev/null"));
	ASSERT_EQ(0, genl_t_open(&s, TANDEM_GENL_NAME));
	w = mmap(NULL, sizeof(*w), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, w);
	w->id = 1;
	pid = fork();
	if (!pid)
		walk_loop(w);
	usleep(100000);
	for (int i = 0; i < NSTATS; i++) {
		double t0 = mono_s();

		genl_t_init(&m, s.family, TANDEM_CMD_STATS_GET, 0);
		ASSERT_EQ(0, genl_t_xfer(&s, &m, &r, NULL, NULL));
		stats_s[i] = mono_s() - t0;
		usleep(1000 + (i * 7919) % 9000);	/* at scattered points of the walks */
	}
	w->stop = 1;
	waitpid(pid, NULL, 0);
	genl_t_close(&s);
	ASSERT_GE(w->nwalk, 10);
	qsort(w->walk_s, w->nwalk, sizeof(double), cmp_d);
	qsort(stats_s, NSTATS, sizeof(double), cmp_d);
	walk_med = w->walk_s[w->nwalk / 2];
	stats_p90 = stats_s[NSTATS * 9 / 10];
	TH_LOG("DATASET_GET (32 MiB cached): median %.1f ms over %d; STATS_GET meanwhile: "
	       "median %.2f ms, 90th percentile %.2f ms, max %.2f ms", walk_med * 1e3, w->nwalk,
	       stats_s[NSTATS / 2] * 1e3, stats_p90 * 1e3, stats_s[NSTATS - 1] * 1e3);
	if (walk_med < 0.005)
		SKIP(return, "a walk of %.1f ms is too short to tell", walk_med * 1e3);
	EXPECT_LT(stats_p90, walk_med / 3);
}

TEST_HARNESS_MAIN
