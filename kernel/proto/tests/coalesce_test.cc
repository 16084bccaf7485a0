// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Host tests of proto/coalesce.c: when a new packet is acknowledged at once.
#include <gtest/gtest.h>

extern "C" {
#include "coalesce.h"
}

namespace {

mr_pkt Pkt(uint32_t psn, uint16_t epoch, bool ack_req = false)
{
	mr_pkt p{};

	p.base.opcode = MR_OP_WRITE;
	p.base.psn = psn;
	p.base.epoch = epoch;
	p.base.flags = ack_req ? MR_FLAG_ACK_REQ : 0;
	return p;
}

} // namespace

// In order, no hole: the ACK waits.
TEST(Coalesce, InOrderWaits)
{
	mr_pkt p = Pkt(11, 3);

	EXPECT_FALSE(mr_coalesce_at_once(&p, true, 10, 3, 11, 12));
}

TEST(Coalesce, AtOnce)
{
	mr_pkt req = Pkt(11, 3, true), p = Pkt(11, 3);

	EXPECT_TRUE(mr_coalesce_at_once(&req, true, 10, 3, 11, 12));
	EXPECT_TRUE(mr_coalesce_at_once(&p, false, 10, 3, 11, 12)); // first
	EXPECT_TRUE(mr_coalesce_at_once(&p, true, 10, 2, 11, 12)); // new epoch
	EXPECT_TRUE(mr_coalesce_at_once(&p, true, 9, 3, 9, 9)); // new hole
}

// A packet that fills a hole: at once when more was behind it, so that the
// cumulative PSN moves past it; a late packet that follows the previous
// arrival past an older hole waits.
TEST(Coalesce, Holes)
{
	mr_pkt fill = Pkt(20, 1), after = Pkt(31, 1);

	EXPECT_TRUE(mr_coalesce_at_once(&fill, true, 30, 1, 20, 31));
	EXPECT_TRUE(mr_coalesce_at_once(&fill, true, 19, 1, 20, 31));
	EXPECT_FALSE(mr_coalesce_at_once(&fill, true, 19, 1, 20, 21));
	EXPECT_FALSE(mr_coalesce_at_once(&after, true, 30, 1, 20, 20));
}

// The PSN that follows 0xffffffff is 0.
TEST(Coalesce, Wraparound)
{
	mr_pkt zero = Pkt(0, 5), max = Pkt(0xffffffffu, 5);

	EXPECT_FALSE(mr_coalesce_at_once(&zero, true, 0xffffffffu, 5, 0, 1));
	EXPECT_FALSE(mr_coalesce_at_once(&max, true, 0xfffffffeu, 5,
					 0xffffffffu, 0));
	EXPECT_TRUE(mr_coalesce_at_once(&zero, true, 0xfffffffeu, 5,
					0xffffffffu, 0xffffffffu));
	// Filling the hole at 0xffffffff with 0 and on already in.
	EXPECT_TRUE(mr_coalesce_at_once(&max, true, 5, 5, 0xffffffffu, 6));
}

TEST(Coalesce, Due)
{
	EXPECT_FALSE(mr_coalesce_due(0));
	EXPECT_FALSE(mr_coalesce_due(MR_ACK_EVERY - 1));
	EXPECT_TRUE(mr_coalesce_due(MR_ACK_EVERY));
	EXPECT_TRUE(mr_coalesce_due(0xffffffffu));
}
