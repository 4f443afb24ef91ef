// SPDX-License-Identifier: GPL-2.0
/*
 * The schedule-aware merge of the jobs' read orders (ctl/model/order.c, declared in model.h):
 * each file at the time its first reader needs it (release + bytes before
 * it in its own sequence / its rate), against the position merge `run`
 * used before. The expected orders are worked out by hand in each test's
 * comment from the release times, rates and sizes.
 */
#include <errno.h>
#include <string.h>

#include "kselftest_harness.h"
#include "model/model.h"

#define MB 1000000ull

/*
 * A released at 0, B at 2.5 s, both at 1 MB/s over 1 MB files: A needs
 * 0,1,2,3 at 0,1,2,3 s; B needs 4,5,6,7 at 2.5,3.5,4.5,5.5 s. By need:
 * 0 1 2 4 3 5 6 7. By position (the old rule): 0 4 1 5 2 6 3 7, which
 * loads B's files while only A runs.
 */
TEST(staggered_release_puts_the_leaders_files_first)
{
	uint32_t a[] = { 0, 1, 2, 3 }, b[] = { 4, 5, 6, 7 }, out[8];
	uint64_t sizes[8] = { MB, MB, MB, MB, MB, MB, MB, MB };
	struct mo_seq s[2] = {
		{ .files = a, .len = 4, .first = 0, .rate = MB },
		{ .files = b, .len = 4, .first = 2.5, .rate = MB },
	};
	uint32_t want[] = { 0, 1, 2, 4, 3, 5, 6, 7 }, pos[] = { 0, 4, 1, 5, 2, 6, 3, 7 };
	double need[8], want_t[] = { 0, 1, 2, 2.5, 3, 3.5, 4.5, 5.5 };
	size_t n;

	ASSERT_EQ(0, mo_merge_by_need(s, 2, sizes, 8, out, need, &n));
	ASSERT_EQ(8, n);
	EXPECT_EQ(0, memcmp(out, want, sizeof(want)));
	for (int i = 0; i < 8; i++)
		EXPECT_TRUE(need[i] > want_t[i] - 1e-9 && need[i] < want_t[i] + 1e-9);
	ASSERT_EQ(0, mo_merge_by_position(s, 2, 8, out, &n));
	ASSERT_EQ(8, n);
	EXPECT_EQ(0, memcmp(out, pos, sizeof(pos)));
}

/*
 * Released together, A at 1 MB/s, B at 4 MB/s: B needs 4,5,6,7 at 0,
 * 0.25, 0.5, 0.75 s, A needs 0,1,2,3 at 0,1,2,3 s. By need: 0 4 5 6 7 1
 * 2 3 (the tie at 0 goes to the lower instance); by position 0 4 1 5 ...
 */
TEST(rates_decide_when_released_together)
{
	uint32_t a[] = { 0, 1, 2, 3 }, b[] = { 4, 5, 6, 7 }, out[8];
	uint64_t sizes[8] = { MB, MB, MB, MB, MB, MB, MB, MB };
	struct mo_seq s[2] = {
		{ .files = a, .len = 4, .first = 0, .rate = MB },
		{ .files = b, .len = 4, .first = 0, .rate = 4 * MB },
	};
	uint32_t want[] = { 0, 4, 5, 6, 7, 1, 2, 3 };
	size_t n;

	ASSERT_EQ(0, mo_merge_by_need(s, 2, sizes, 8, out, NULL, &n));
	ASSERT_EQ(8, n);
	EXPECT_EQ(0, memcmp(out, want, sizeof(want)));
}

/*
 * One dataset, two orders (A: 0 1 2 3 at 1 MB/s from 0; B: 3 2 1 0 at
 * 1 MB/s from 1.5 s): A needs 0,1,2,3 at 0,1,2,3; B needs 3,2,1,0 at
 * 1.5,2.5,3.5,4.5. Earliest need: 0@0 1@1 3@1.5 2@2 (B's 2@2.5 is later,
 * A's 3@3 too): 0 1 3 2, each once, at those times. Sizes differ: with
 * file 1 at 3 MB, A needs 2 at 4 s and 3 at 5 s, B needs 2 at 2.5: 0 1 3 2
 * still, at 0 1 1.5 2.5.
 */
TEST(a_file_read_by_several_comes_once_at_its_earliest_need)
{
	uint32_t a[] = { 0, 1, 2, 3 }, b[] = { 3, 2, 1, 0 }, out[4];
	uint64_t sizes[4] = { MB, MB, MB, MB };
	struct mo_seq s[2] = {
		{ .files = a, .len = 4, .first = 0, .rate = MB },
		{ .files = b, .len = 4, .first = 1.5, .rate = MB },
	};
	uint32_t want[] = { 0, 1, 3, 2 };
	double need[4];
	size_t n;

	ASSERT_EQ(0, mo_merge_by_need(s, 2, sizes, 4, out, need, &n));
	ASSERT_EQ(4, n);
	EXPECT_EQ(0, memcmp(out, want, sizeof(want)));
	EXPECT_TRUE(need[2] == 1.5 && need[3] == 2);
	sizes[1] = 3 * MB;
	ASSERT_EQ(0, mo_merge_by_need(s, 2, sizes, 4, out, need, &n));
	EXPECT_EQ(0, memcmp(out, want, sizeof(want)));
	EXPECT_TRUE(need[1] == 1 && need[2] == 1.5 && need[3] == 2.5);
}

/* Equal times everywhere: instance index, then position; the same twice. */
TEST(ties_are_deterministic)
{
	uint32_t a[] = { 5, 6 }, b[] = { 7, 5 }, c[] = { 8 }, out[9], again[9];
	uint64_t sizes[9] = { 0 };	/* empty files: every need is the release */
	struct mo_seq s[3] = {
		{ .files = b, .len = 2, .first = 0, .rate = MB },
		{ .files = a, .len = 2, .first = 0, .rate = MB },
		{ .files = c, .len = 1, .first = 0, .rate = MB },
	};
	uint32_t want[] = { 7, 5, 6, 8 };
	size_t n, n2;

	ASSERT_EQ(0, mo_merge_by_need(s, 3, sizes, 9, out, NULL, &n));
	ASSERT_EQ(4, n);
	EXPECT_EQ(0, memcmp(out, want, sizeof(want)));
	ASSERT_EQ(0, mo_merge_by_need(s, 3, sizes, 9, again, NULL, &n2));
	EXPECT_EQ(n, n2);
	EXPECT_EQ(0, memcmp(out, again, n * sizeof(*out)));
}

TEST(bad_input)
{
	uint32_t a[] = { 0, 9 }, out[10];
	uint64_t sizes[4] = { MB, MB, MB, MB };
	struct mo_seq s = { .files = a, .len = 2, .first = 0, .rate = MB };
	size_t n;

	EXPECT_EQ(-EINVAL, mo_merge_by_need(&s, 1, sizes, 4, out, NULL, &n));
	EXPECT_EQ(-EINVAL, mo_merge_by_position(&s, 1, 4, out, &n));
	a[1] = 1;
	s.rate = 0;
	EXPECT_EQ(-EINVAL, mo_merge_by_need(&s, 1, sizes, 4, out, NULL, &n));
}

/*
 * Files of 1, 3, 2, 2 MB laid out in index order over K = 4 extents of
 * 2 MB: file 0 is bytes [0,1) MB -> extent 0; file 1 [1,4) -> 0,1; file 2
 * [4,6) -> 2; file 3 [6,8) -> 3. The order 3 1 0 2 covers 3, 0, 1, 2.
 */
TEST(files_to_extents)
{
	uint64_t sizes[4] = { MB, 3 * MB, 2 * MB, 2 * MB };
	uint32_t files[] = { 3, 1, 0, 2 }, out[4], want[] = { 3, 0, 1, 2 }, n;
	uint32_t one[] = { 1 };

	ASSERT_EQ(0, mo_files_to_extents(files, 4, sizes, 4, 4, out, &n));
	ASSERT_EQ(4, n);
	EXPECT_EQ(0, memcmp(out, want, sizeof(want)));
	ASSERT_EQ(0, mo_files_to_extents(one, 1, sizes, 4, 4, out, &n));
	ASSERT_EQ(2, n);
	EXPECT_TRUE(out[0] == 0 && out[1] == 1);
	files[0] = 4;
	EXPECT_EQ(-EINVAL, mo_files_to_extents(files, 4, sizes, 4, 4, out, &n));
	EXPECT_EQ(-EINVAL, mo_files_to_extents(one, 1, sizes, 4, 0, out, &n));
}

TEST_HARNESS_MAIN
