// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* KUnit: the path scheduler of proto/path.c. */
#include <kunit/test.h>
#include <linux/bitops.h>

#include "../proto/path.h"

static struct mr_paths *path_new(struct kunit *test, u32 n, u32 fail_after)
{
	struct mr_paths *ps = kunit_kzalloc(test, sizeof(*ps), GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ps);
	KUNIT_ASSERT_EQ(test, mr_paths_init(ps, n, fail_after, 42), 0);
	return ps;
}

static void path_ports(struct kunit *test)
{
	unsigned long *seen = kunit_kzalloc(test,
					    BITS_TO_LONGS(1 << MR_PATH_PORT_BITS) *
					    sizeof(long), GFP_KERNEL);
	u32 c, distinct = 0;
	u16 port;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, seen);
	for (c = 0; c < (1 << MR_PATH_PORT_BITS); c++) {
		port = mr_path_port(0xabcd, c + 5);
		KUNIT_ASSERT_GE(test, port, MR_PATH_PORT_MIN);
		KUNIT_ASSERT_LE(test, port, MR_PATH_PORT_MAX);
		if (!__test_and_set_bit(port - MR_PATH_PORT_MIN, seen))
			distinct++;
	}
	KUNIT_EXPECT_EQ(test, distinct, 1u << MR_PATH_PORT_BITS);
}

static void path_init_limits(struct kunit *test)
{
	struct mr_paths *ps = path_new(test, MR_PATH_DEFAULT, 3);
	u32 i, j;

	KUNIT_EXPECT_EQ(test, mr_paths_init(ps, 0, 3, 1), -MR_EFIELD);
	KUNIT_EXPECT_EQ(test, mr_paths_init(ps, MR_PATH_MAX + 1, 3, 1),
			-MR_EFIELD);
	KUNIT_EXPECT_EQ(test, mr_paths_init(ps, 4, 0, 1), -MR_EFIELD);
	KUNIT_ASSERT_EQ(test, mr_paths_init(ps, MR_PATH_MAX, 3, 1), 0);
	for (i = 0; i < MR_PATH_MAX; i++)
		for (j = i + 1; j < MR_PATH_MAX; j++)
			KUNIT_EXPECT_NE(test, ps->path[i].sport,
					ps->path[j].sport);
}

/*
 * One packet in flight on each of the first @n paths: as many in flight as
 * there are paths, so that picks go one at a time, not in runs.
 */
static void path_charge_each(struct kunit *test, struct mr_paths *ps, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		KUNIT_ASSERT_EQ(test, mr_paths_charge(ps, i), 0);
}

static void path_round_robin(struct kunit *test)
{
	struct mr_paths *ps = path_new(test, 3, 2);
	u32 seen;
	int i;

	path_charge_each(test, ps, 3);
	/* Equal windows and fill: each path once in every round. */
	for (seen = 0, i = 0; i < 6; i++) {
		seen |= 1u << mr_paths_pick(ps);
		if (i % 3 == 2) {
			KUNIT_EXPECT_EQ(test, seen, 7u);
			seen = 0;
		}
	}
	mr_paths_set_window(ps, 1, 3);
	seen = 1u << mr_paths_pick(ps);
	seen |= 1u << mr_paths_pick(ps);
	KUNIT_EXPECT_EQ(test, seen, 5u);	/* 0 and 2: 1 is full */
	mr_paths_ack(ps, 1, 1, 0);
	/* The emptiest relative to its window: 4/16 beats 2/3. */
	seen = 1u << mr_paths_pick(ps);
	seen |= 1u << mr_paths_pick(ps);
	KUNIT_EXPECT_EQ(test, seen, 5u);
	for (i = 0; i < 3; i++)
		mr_paths_set_window(ps, i, 1);
	KUNIT_EXPECT_EQ(test, mr_paths_pick(ps), -MR_EAGAIN);
}

static void path_failover(struct kunit *test)
{
	struct mr_paths *ps = path_new(test, 2, 3);
	u16 old = ps->path[1].sport;

	KUNIT_EXPECT_FALSE(test, mr_paths_timeout(ps, 1, 0));
	KUNIT_EXPECT_FALSE(test, mr_paths_timeout(ps, 1, 0));
	mr_paths_ack(ps, 1, 1, 0);	/* alive: the count starts over */
	KUNIT_EXPECT_FALSE(test, mr_paths_timeout(ps, 1, 0));
	KUNIT_EXPECT_FALSE(test, mr_paths_timeout(ps, 1, 0));
	KUNIT_EXPECT_TRUE(test, mr_paths_timeout(ps, 1, 0));
	KUNIT_EXPECT_EQ(test, ps->path[1].state, MR_PATH_FAILED);
	KUNIT_EXPECT_EQ(test, mr_paths_pick(ps), 0);
	KUNIT_EXPECT_EQ(test, mr_paths_pick(ps), 0);
	KUNIT_EXPECT_EQ(test, mr_paths_charge(ps, 1), -MR_ENOPATH);
	KUNIT_EXPECT_TRUE(test, mr_paths_timeout(ps, 0, 0) ||
			  mr_paths_timeout(ps, 0, 0) ||
			  mr_paths_timeout(ps, 0, 0));
	KUNIT_EXPECT_EQ(test, mr_paths_pick(ps), -MR_ENOPATH);
	KUNIT_ASSERT_EQ(test, mr_paths_restart(ps, 1), 0);
	KUNIT_EXPECT_NE(test, ps->path[1].sport, old);
	KUNIT_EXPECT_NE(test, ps->path[1].sport, ps->path[0].sport);
	KUNIT_EXPECT_EQ(test, ps->path[1].epoch, 1);
	KUNIT_EXPECT_EQ(test, mr_paths_pick(ps), 1);
}

static void path_set_count(struct kunit *test)
{
	struct mr_paths *ps = path_new(test, 4, 1);

	path_charge_each(test, ps, 4);
	KUNIT_EXPECT_EQ(test, mr_paths_pick(ps), 0);
	KUNIT_EXPECT_EQ(test, mr_paths_pick(ps), 1);
	KUNIT_EXPECT_EQ(test, mr_paths_set_count(ps, 1), -MR_EBUSY);
	mr_paths_ack(ps, 1, 2, 0);
	mr_paths_ack(ps, 2, 1, 0);
	mr_paths_ack(ps, 3, 1, 0);
	KUNIT_EXPECT_EQ(test, mr_paths_set_count(ps, 1), 0);
	KUNIT_EXPECT_EQ(test, mr_paths_pick(ps), 0);
	KUNIT_EXPECT_EQ(test, mr_paths_set_count(ps, 3), 0);
	KUNIT_EXPECT_EQ(test, ps->path[1].epoch, 1);
	KUNIT_EXPECT_EQ(test, ps->path[2].epoch, 1);
}

static struct kunit_case path_cases[] = {
	KUNIT_CASE(path_ports),
	KUNIT_CASE(path_init_limits),
	KUNIT_CASE(path_round_robin),
	KUNIT_CASE(path_failover),
	KUNIT_CASE(path_set_count),
	{}
};

static struct kunit_suite path_suite = {
	.name = "metaroce_path",
	.test_cases = path_cases,
};

kunit_test_suite(path_suite);
