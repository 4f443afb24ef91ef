// SPDX-License-Identifier: GPL-2.0
/*
 * The makespan model's prefetch term (model_set_prefetch(),
 * model_set_order()): the prefetch `run` starts is one more reader in the
 * share of the store's bandwidth (up to its cap), and what it loads raises
 * the jobs' hits. Each expectation is worked out by hand in the comment
 * from the sizes and rates; none comes from running the model.
 *
 * Every case: D = 100 MB in K = 200 extents of 0.5 MB, a cache that holds
 * it all, B(k) = 10 MB/s for every k (flat: the share is what changes),
 * one job of one epoch in dataset order with the model's minimum window.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "kselftest_harness.h"
#include "model/model.h"

#define MB	1e6
#define K	200

static struct model *mk(double rate)
{
	struct model_sys sys = { .dataset = 100 * MB, .extents = K, .cache = 1e9,
				 .bw = { 10 * MB }, .nbw = 1 };
	struct model_inst in = { .name = "A", .rate = rate, .epochs = 1,
				 .order = MODEL_ORDER_SEQ };
	struct model *m = NULL;
	char err[160];

	if (model_new(&sys, &in, 1, &m, err, sizeof(err)))
		fprintf(stderr, "model_new: %s\n", err);
	return m;
}

static int set_pf(struct model *m, uint32_t *order, uint32_t n, double start, double cap)
{
	struct model_prefetch p = { .order = order, .n = n, .start = start, .cap = cap };

	return model_set_prefetch(m, &p);
}

static void fill(uint32_t *o, bool reverse)
{
	for (uint32_t k = 0; k < K; k++)
		o[k] = reverse ? K - 1 - k : k;
}

#define NEAR(got, want, rel) EXPECT_TRUE(fabs((got) - (want)) <= (rel) * (want))

/*
 * The job (1000 MB/s, storage-bound alone: 100 MB at 10 MB/s = 10 s) is
 * released at 20 s; the prefetch reads the whole dataset from 0, alone on
 * the store: done at 100 / 10 = 10 s, before the job needs anything. The
 * job then hits all 100 MB and takes 100 / 1000 = 0.1 s: it ends at
 * 20.1 s (without the prefetch: after 30 s).
 */
TEST(prefetch_done_before_the_job_turns_its_reads_into_hits)
{
	struct model *m = mk(1000 * MB);
	double d[1] = { 20 };
	struct model_result r;
	uint32_t o[K];

	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, model_eval(m, d, &r));
	EXPECT_TRUE(r.inst[0].end >= 30);
	EXPECT_FALSE(r.pf.ran);
	fill(o, false);
	ASSERT_EQ(0, set_pf(m, o, K, 0, 0));
	ASSERT_EQ(0, model_eval(m, d, &r));
	EXPECT_TRUE(r.pf.ran);
	NEAR(r.pf.end, 10, 1e-6);
	NEAR(r.pf.bytes, 100 * MB, 1e-9);
	NEAR(r.inst[0].hit_bytes, 100 * MB, 1e-9);
	EXPECT_EQ(0, r.inst[0].miss_bytes);
	NEAR(r.inst[0].end, 20.1, 1e-6);
	model_free(m);
}

/*
 * The job consumes 8 MB/s; alone it gets B = 10 MB/s and ends at
 * 100 / 8 = 12.5 s. With a prefetch from the other end of the dataset
 * from 0, two readers split B: 5 MB/s each, so the job runs at 5 MB/s
 * until they meet in the middle at 50 / 5 = 10 s, then hits the other
 * 50 MB at its own 8 MB/s: 10 + 50 / 8 = 16.25 s. The prefetch loaded
 * 50 MB and was through its order when they met (10 s).
 */
TEST(prefetch_while_the_leader_reads_takes_its_share_of_the_store)
{
	struct model *m = mk(8 * MB);
	double d[1] = { 0 };
	struct model_result r;
	uint32_t o[K];

	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, model_eval(m, d, &r));
	NEAR(r.inst[0].end, 12.5, 0.01);
	fill(o, true);
	ASSERT_EQ(0, set_pf(m, o, K, 0, 0));
	ASSERT_EQ(0, model_eval(m, d, &r));
	TH_LOG("uncapped: end %.4f s, prefetch %.2f MB, through at %.3f s", r.inst[0].end,
	       r.pf.bytes / MB, r.pf.end);
	NEAR(r.inst[0].end, 16.25, 0.02);
	NEAR(r.pf.bytes, 50 * MB, 0.02);
	NEAR(r.pf.end, 10, 0.02);
	NEAR(r.storage_bytes, 100 * MB, 1e-9);	/* each extent read once */
	model_free(m);
}

/*
 * The same with the prefetch capped at 1 MB/s: its share (5 MB/s) is above
 * the cap, so it gets 1 MB/s and the job the other 9 MB/s, more than its
 * 8 MB/s: the job is not slowed, 12.5 s (plus the first extent, 0.5 / 9 s).
 * Started at 30 s, after the job's end, the prefetch never runs.
 */
TEST(a_capped_or_late_prefetch_leaves_the_leader_its_rate)
{
	struct model *m = mk(8 * MB);
	double d[1] = { 0 };
	struct model_result r;
	uint32_t o[K];

	ASSERT_NE(NULL, m);
	fill(o, true);
	ASSERT_EQ(0, set_pf(m, o, K, 0, 1 * MB));
	ASSERT_EQ(0, model_eval(m, d, &r));
	TH_LOG("capped: end %.4f s, prefetch %.2f MB", r.inst[0].end, r.pf.bytes / MB);
	NEAR(r.inst[0].end, 12.5 + 0.5 / 9, 0.005);
	EXPECT_TRUE(r.pf.bytes > 0 && r.pf.bytes <= 13 * MB);
	ASSERT_EQ(0, set_pf(m, o, K, 30, 0));
	ASSERT_EQ(0, model_eval(m, d, &r));
	NEAR(r.inst[0].end, 12.5 + 0.5 / 10, 0.005);
	EXPECT_FALSE(r.pf.ran);
	EXPECT_TRUE(isnan(r.pf.end));
	EXPECT_EQ(0, r.pf.bytes);
	model_free(m);
}

/*
 * A given first-epoch order: the job reads the dataset backwards
 * (model_set_order()), the prefetch forwards: they meet in the middle as in
 * the second case, 16.25 s. With the job's own (forward) order the prefetch
 * reads just what the job reads: each extent once, whoever starts it, and
 * the job is never slower than alone (12.5 s).
 */
TEST(a_given_order_is_what_the_prefetch_meets)
{
	struct model *m = mk(8 * MB);
	double d[1] = { 0 };
	struct model_result r;
	uint32_t fwd[K], back[K];

	ASSERT_NE(NULL, m);
	fill(fwd, false);
	fill(back, true);
	ASSERT_EQ(0, set_pf(m, fwd, K, 0, 0));
	ASSERT_EQ(0, model_eval(m, d, &r));
	EXPECT_TRUE(r.inst[0].end <= 12.5 * 1.01);
	NEAR(r.storage_bytes, 100 * MB, 1e-9);
	ASSERT_EQ(0, model_set_order(m, 0, back, K));
	ASSERT_EQ(0, model_eval(m, d, &r));
	NEAR(r.inst[0].end, 16.25, 0.02);
	ASSERT_EQ(0, model_set_order(m, 0, NULL, 0));
	ASSERT_EQ(0, model_eval(m, d, &r));
	EXPECT_TRUE(r.inst[0].end <= 12.5 * 1.01);
	model_free(m);
}

TEST(bad_prefetch_input)
{
	struct model *m = mk(8 * MB);
	uint32_t o[2] = { 0, K };

	ASSERT_NE(NULL, m);
	EXPECT_EQ(-EINVAL, set_pf(m, o, 2, 0, 0));
	o[1] = 1;
	EXPECT_EQ(-EINVAL, set_pf(m, o, 2, -1, 0));
	EXPECT_EQ(-EINVAL, set_pf(m, o, 2, NAN, 0));
	EXPECT_EQ(-EINVAL, set_pf(m, o, 2, 0, -1));
	EXPECT_EQ(-EINVAL, model_set_order(m, 0, (uint32_t[]){ K }, 1));
	EXPECT_EQ(-EINVAL, model_set_order(m, 1, o, 2));
	EXPECT_EQ(0, model_set_prefetch(m, NULL));
	model_free(m);
}

TEST_HARNESS_MAIN
