// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Host tests of proto/rto.c against RFC 6298.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

extern "C" {
#include "rto.h"
}

namespace {

const uint64_t kUs = 1000, kMs = 1000 * kUs, kS = 1000 * kMs;

} // namespace

TEST(Rto, InitialAndBounds)
{
	mr_rto r;

	mr_rto_init(&r, 1 * kMs, 50 * kUs, 1 * kS);
	EXPECT_EQ(mr_rto_get(&r), 1 * kMs);
	EXPECT_EQ(r.samples, 0u);
	mr_rto_init(&r, 10 * kUs, 50 * kUs, 1 * kS); // below the floor
	EXPECT_EQ(mr_rto_get(&r), 50 * kUs);
	mr_rto_init(&r, 5 * kS, 50 * kUs, 1 * kS); // above the ceiling
	EXPECT_EQ(mr_rto_get(&r), 1 * kS);
	mr_rto_init(&r, 5, 10 * kS, 1 * kS); // floor above ceiling
	EXPECT_EQ(r.min, 1 * kS);
	EXPECT_EQ(mr_rto_get(&r), 1 * kS);
	mr_rto_init(&r, 0, 0, 0); // nothing sane given
	EXPECT_EQ(r.min, 1u);
	EXPECT_EQ(r.max, 1u);
	mr_rto_init(&r, UINT64_MAX, 1, UINT64_MAX);
	EXPECT_EQ(r.max, MR_RTO_LIMIT_NS);
}

// The first sample: SRTT = R, RTTVAR = R/2, RTO = SRTT + 4 RTTVAR.
TEST(Rto, FirstSample)
{
	mr_rto r;

	mr_rto_init(&r, 1 * kMs, 1 * kUs, 1 * kS);
	mr_rto_sample(&r, 20 * kUs);
	EXPECT_EQ(r.srtt, 20 * kUs);
	EXPECT_EQ(r.rttvar, 10 * kUs);
	EXPECT_EQ(mr_rto_get(&r), 60 * kUs);
}

// Against the RFC formulas in floating point, on a noisy RTT.
TEST(Rto, FollowsTheRfcFormulas)
{
	std::mt19937_64 rng(5);
	mr_rto r;
	double srtt = 0, rttvar = 0;

	mr_rto_init(&r, 1 * kMs, 1, 10 * kS);
	for (int i = 0; i < 10000; i++) {
		double rtt = 10 * kUs + (double)(rng() % (40 * kUs));

		if (!i) {
			srtt = rtt;
			rttvar = rtt / 2;
		} else {
			rttvar = 0.75 * rttvar + 0.25 * std::fabs(srtt - rtt);
			srtt = 0.875 * srtt + 0.125 * rtt;
		}
		mr_rto_sample(&r, (uint64_t)rtt);
		// Integer shifts lose at most a few ns per step.
		ASSERT_NEAR((double)r.srtt, srtt, 16) << i;
		ASSERT_NEAR((double)r.rttvar, rttvar, 16) << i;
		ASSERT_NEAR((double)mr_rto_get(&r), srtt + 4 * rttvar, 80);
	}
}

TEST(Rto, ConvergesOnAConstantRtt)
{
	mr_rto r;

	mr_rto_init(&r, 1 * kMs, 1, 1 * kS);
	mr_rto_sample(&r, 1 * kMs); // a slow first sample
	for (int i = 0; i < 200; i++)
		mr_rto_sample(&r, 12 * kUs);
	EXPECT_NEAR((double)r.srtt, 12.0 * kUs, 10);
	EXPECT_LT(r.rttvar, 10u);
	EXPECT_NEAR((double)mr_rto_get(&r), 12.0 * kUs, 50);
}

TEST(Rto, FloorAndCeilingHold)
{
	mr_rto r;

	mr_rto_init(&r, 1 * kMs, 200 * kUs, 100 * kMs);
	for (int i = 0; i < 100; i++)
		mr_rto_sample(&r, 10 * kUs);
	EXPECT_EQ(mr_rto_get(&r), 200 * kUs);
	mr_rto_sample(&r, UINT64_MAX); // clamped, no overflow
	EXPECT_EQ(mr_rto_get(&r), 100 * kMs);
	EXPECT_LE(r.srtt, 100 * kMs);
	mr_rto_sample(&r, 0);
	EXPECT_GE(mr_rto_get(&r), 200 * kUs);
}

TEST(Rto, BackoffDoublesToTheCeilingAndASampleEndsIt)
{
	mr_rto r;

	mr_rto_init(&r, 1 * kMs, 100 * kUs, 1 * kS);
	mr_rto_sample(&r, 100 * kUs); // RTO 300 us
	ASSERT_EQ(mr_rto_get(&r), 300 * kUs);
	uint64_t want = 300 * kUs;

	for (int i = 1; i <= 20; i++) {
		want = std::min(2 * want, 1 * kS);
		EXPECT_EQ(mr_rto_timeout(&r), want) << i;
		EXPECT_EQ(r.backoffs, (uint32_t)i);
	}
	EXPECT_EQ(mr_rto_get(&r), 1 * kS);
	mr_rto_sample(&r, 100 * kUs);
	EXPECT_EQ(r.backoffs, 0u);
	EXPECT_LT(mr_rto_get(&r), 300 * kUs);
	EXPECT_GE(mr_rto_get(&r), 100 * kUs);
}

TEST(Rto, BackoffCannotOverflow)
{
	mr_rto r;

	mr_rto_init(&r, MR_RTO_LIMIT_NS - 1, 1, UINT64_MAX);
	for (int i = 0; i < 200; i++)
		EXPECT_LE(mr_rto_timeout(&r), MR_RTO_LIMIT_NS);
	EXPECT_EQ(mr_rto_get(&r), MR_RTO_LIMIT_NS);
	mr_rto_sample(&r, UINT64_MAX);
	EXPECT_EQ(mr_rto_get(&r), MR_RTO_LIMIT_NS);
}

// A timer is early only while ACKs keep coming, since it was armed, and
// none for a packet sent more than the slack after the path's oldest one.
TEST(Rto, EarlyWhileOlderPacketsAreStillAcknowledged)
{
	const uint64_t oldest = 1000, slack = 64, armed = 101 * kMs;

	EXPECT_TRUE(mr_rto_early(oldest, 900, slack, armed, 102 * kMs, false));
	// Older packets still coming back: as often as it takes.
	EXPECT_TRUE(mr_rto_early(oldest, 900, slack, armed, 102 * kMs, true));
	// Later packets back, but within what ACK coalescing may hold back:
	// worth one wait, not a second.
	EXPECT_TRUE(mr_rto_early(oldest, oldest + slack - 1, slack, armed,
				 102 * kMs, false));
	EXPECT_FALSE(mr_rto_early(oldest, oldest + slack - 1, slack, armed,
				  102 * kMs, true));
	// No ACK since the timer was armed: a loss or a dead path.
	EXPECT_FALSE(mr_rto_early(oldest, 900, slack, armed, armed, false));
	EXPECT_FALSE(mr_rto_early(oldest, 900, slack, armed, 50 * kMs, false));
	// The front passed ours by the slack: ours is late, not queued.
	EXPECT_FALSE(mr_rto_early(oldest, oldest + slack, slack, armed,
				  102 * kMs, false));
	// Nothing ever acknowledged.
	EXPECT_FALSE(mr_rto_early(oldest, 0, slack, armed, 0, false));
}
