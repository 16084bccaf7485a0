// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* KUnit: the per-path RTT estimator and timeout of proto/rto.c. */
#include <kunit/test.h>

#include "../proto/rto.h"

#define RTO_US 1000ull

static void rto_first_sample(struct kunit *test)
{
	struct mr_rto r;

	mr_rto_init(&r, 1000 * RTO_US, RTO_US, 1000000 * RTO_US);
	KUNIT_EXPECT_EQ(test, mr_rto_get(&r), 1000 * RTO_US);
	mr_rto_sample(&r, 20 * RTO_US);
	KUNIT_EXPECT_EQ(test, r.srtt, 20 * RTO_US);
	KUNIT_EXPECT_EQ(test, r.rttvar, 10 * RTO_US);
	KUNIT_EXPECT_EQ(test, mr_rto_get(&r), 60 * RTO_US);
}

/* SRTT moves 1/8 of the error, RTTVAR 1/4 of its change (RFC 6298). */
static void rto_second_sample(struct kunit *test)
{
	struct mr_rto r;

	mr_rto_init(&r, 1000 * RTO_US, 1, 1000000 * RTO_US);
	mr_rto_sample(&r, 800);
	mr_rto_sample(&r, 1600);
	KUNIT_EXPECT_EQ(test, r.rttvar, 500ull);	/* 3/4 400 + 1/4 800 */
	KUNIT_EXPECT_EQ(test, r.srtt, 900ull);	/* 7/8 800 + 1/8 1600 */
	KUNIT_EXPECT_EQ(test, mr_rto_get(&r), 2900ull);
}

static void rto_converges(struct kunit *test)
{
	struct mr_rto r;
	int i;

	mr_rto_init(&r, 1000 * RTO_US, 1, 1000000 * RTO_US);
	mr_rto_sample(&r, 1000 * RTO_US);
	for (i = 0; i < 200; i++)
		mr_rto_sample(&r, 12 * RTO_US);
	KUNIT_EXPECT_LE(test, r.srtt, 12 * RTO_US + 8);
	KUNIT_EXPECT_GE(test, r.srtt, 12 * RTO_US);
	KUNIT_EXPECT_LT(test, r.rttvar, 10ull);
}

static void rto_clamps_and_backoff(struct kunit *test)
{
	struct mr_rto r;
	u64 want;
	int i;

	mr_rto_init(&r, 1000 * RTO_US, 100 * RTO_US, 1000 * RTO_US);
	mr_rto_sample(&r, RTO_US);
	KUNIT_EXPECT_EQ(test, mr_rto_get(&r), 100 * RTO_US);	/* floor */
	want = 100 * RTO_US;
	for (i = 0; i < 10; i++) {
		want = want * 2 > 1000 * RTO_US ? 1000 * RTO_US : want * 2;
		KUNIT_EXPECT_EQ(test, mr_rto_timeout(&r), want);
	}
	KUNIT_EXPECT_EQ(test, r.backoffs, 10u);
	KUNIT_EXPECT_EQ(test, mr_rto_get(&r), 1000 * RTO_US);	/* ceiling */
	mr_rto_sample(&r, RTO_US);
	KUNIT_EXPECT_EQ(test, r.backoffs, 0u);
	KUNIT_EXPECT_EQ(test, mr_rto_get(&r), 100 * RTO_US);
	mr_rto_sample(&r, U64_MAX);
	KUNIT_EXPECT_EQ(test, mr_rto_get(&r), 1000 * RTO_US);
}

static struct kunit_case rto_cases[] = {
	KUNIT_CASE(rto_first_sample),
	KUNIT_CASE(rto_second_sample),
	KUNIT_CASE(rto_converges),
	KUNIT_CASE(rto_clamps_and_backoff),
	{}
};

static struct kunit_suite rto_suite = {
	.name = "metaroce_rto",
	.test_cases = rto_cases,
};

kunit_test_suite(rto_suite);
