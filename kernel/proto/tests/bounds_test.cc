// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Host tests of proto/bounds.c: registration flags, bounds, rights.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

extern "C" {
#include "bounds.h"
}

namespace {

const uint64_t kMax = UINT64_MAX;
const uint32_t LW = MR_ACC_LOCAL_WRITE, RW = MR_ACC_REMOTE_WRITE, RR = MR_ACC_REMOTE_READ,
	       RA = MR_ACC_REMOTE_ATOMIC, LR = MR_ACC_LOCAL_READ;

// The reference: the same question asked with 128-bit arithmetic.
int reference(uint64_t mr_iova, uint64_t mr_len, uint32_t mr_access, uint64_t iova,
	      uint64_t len, uint32_t need)
{
	if (need & ~(MR_ACC_MASK | MR_ACC_LOCAL_READ))
		return -MR_EFLAGS;
	if (need & ~(mr_access | LR))
		return -MR_EACCESS;
	unsigned __int128 lo = mr_iova, hi = lo + mr_len, a = iova, b = a + len;
	return a >= lo && b <= hi ? 0 : -MR_ERANGE;
}

} // namespace

TEST(MrBounds, AccessFlags)
{
	// All 16 combinations of the four rights.
	for (uint32_t f = 0; f <= MR_ACC_MASK; f++) {
		bool bad = (f & (RW | RA)) && !(f & LW);
		EXPECT_EQ(mr_bounds_check_access(f), bad ? -MR_EFLAGS : 0) << f;
	}
	EXPECT_EQ(mr_bounds_check_access(MR_ACC_MW_BIND), 0);
	EXPECT_EQ(mr_bounds_check_access(MR_ACC_MW_BIND | RW), -MR_EFLAGS);
	EXPECT_EQ(mr_bounds_check_access(0x20), -MR_EFLAGS);
	EXPECT_EQ(mr_bounds_check_access(LR), -MR_EFLAGS);
	EXPECT_EQ(mr_bounds_check_access(0x80000000u | LW), -MR_EFLAGS);
}

TEST(MrBounds, Region)
{
	EXPECT_EQ(mr_bounds_check_region(0x1000, 1, 0), 0);
	EXPECT_EQ(mr_bounds_check_region(0x1001, 1 << 20, LW | RW), 0);
	EXPECT_EQ(mr_bounds_check_region(0x1000, 0, 0), -MR_ELENGTH);
	EXPECT_EQ(mr_bounds_check_region(kMax, 1, 0), 0);
	EXPECT_EQ(mr_bounds_check_region(kMax, 2, 0), -MR_ERANGE);
	EXPECT_EQ(mr_bounds_check_region(0, kMax, 0), 0);
	EXPECT_EQ(mr_bounds_check_region(1, kMax, 0), 0);
	EXPECT_EQ(mr_bounds_check_region(2, kMax, 0), -MR_ERANGE);
	EXPECT_EQ(mr_bounds_check_region(0x1000, 4096, RA), -MR_EFLAGS);
}

TEST(MrBounds, RangeEdges)
{
	const uint64_t b = 0x10000, l = 0x3000;

	EXPECT_EQ(mr_bounds_check_range(b, l, 0, b, l, LR), 0);
	EXPECT_EQ(mr_bounds_check_range(b, l, 0, b + l - 1, 1, LR), 0);
	EXPECT_EQ(mr_bounds_check_range(b, l, 0, b + l, 0, LR), 0);
	EXPECT_EQ(mr_bounds_check_range(b, l, 0, b + l, 1, LR), -MR_ERANGE);
	EXPECT_EQ(mr_bounds_check_range(b, l, 0, b - 1, 1, LR), -MR_ERANGE);
	EXPECT_EQ(mr_bounds_check_range(b, l, 0, b - 1, 0, LR), -MR_ERANGE);
	EXPECT_EQ(mr_bounds_check_range(b, l, 0, b, l + 1, LR), -MR_ERANGE);
	EXPECT_EQ(mr_bounds_check_range(b, l, 0, b + 8, kMax, LR), -MR_ERANGE);
	EXPECT_EQ(mr_bounds_check_range(b, l, 0, b + 8, kMax - 7, LR), -MR_ERANGE);
	EXPECT_EQ(mr_bounds_check_range(b, l, 0, kMax, 2, LR), -MR_ERANGE);
	EXPECT_EQ(mr_bounds_check_range(kMax - 15, 16, 0, kMax, 1, LR), 0);
	EXPECT_EQ(mr_bounds_check_range(kMax - 15, 16, 0, kMax, 2, LR), -MR_ERANGE);
	EXPECT_EQ(mr_bounds_check_range(0, kMax, LW, 0x1234, 4096, LR | LW), 0);
}

TEST(MrBounds, Rights)
{
	const uint64_t b = 0x10000, l = 0x1000;

	EXPECT_EQ(mr_bounds_check_range(b, l, 0, b, 1, LR), 0);
	EXPECT_EQ(mr_bounds_check_range(b, l, 0, b, 1, LW), -MR_EACCESS);
	EXPECT_EQ(mr_bounds_check_range(b, l, LW, b, 1, RR), -MR_EACCESS);
	EXPECT_EQ(mr_bounds_check_range(b, l, LW | RR, b, 1, RW), -MR_EACCESS);
	EXPECT_EQ(mr_bounds_check_range(b, l, LW | RW, b, 1, RA), -MR_EACCESS);
	EXPECT_EQ(mr_bounds_check_range(b, l, LW | RW | RR | RA, b, 8, RW | RR | RA), 0);
	EXPECT_EQ(mr_bounds_check_range(b, l, 0, 0, 1, RW), -MR_EACCESS);
	EXPECT_EQ(mr_bounds_check_range(b, l, LW, b, 1, 0x20), -MR_EFLAGS);
}

TEST(MrBounds, Window)
{
	const uint64_t b = 0x10000, l = 0x2000;
	const uint32_t MW = MR_ACC_MW_BIND;

	EXPECT_EQ(mr_bounds_check_window(b, l, LW | MW, b, l, LW | RW | RR | RA), 0);
	EXPECT_EQ(mr_bounds_check_window(b, l, LW | MW, b + 8, 16, RR), 0);
	EXPECT_EQ(mr_bounds_check_window(b, l, LW | MW, b + l, 0, 0), 0);
	// The region must allow binding.
	EXPECT_EQ(mr_bounds_check_window(b, l, LW | RW, b, l, RW), -MR_EACCESS);
	EXPECT_EQ(mr_bounds_check_window(b, l, LW, b, 0, 0), -MR_EACCESS);
	// Writable windows only on regions the owner may write.
	EXPECT_EQ(mr_bounds_check_window(b, l, MW | RR, b, l, RW), -MR_EACCESS);
	EXPECT_EQ(mr_bounds_check_window(b, l, MW | RR, b, l, RA), -MR_EACCESS);
	EXPECT_EQ(mr_bounds_check_window(b, l, MW, b, l, RR), 0);
	// The whole window inside the region, without wrapping.
	EXPECT_EQ(mr_bounds_check_window(b, l, LW | MW, b - 1, 1, RR), -MR_ERANGE);
	EXPECT_EQ(mr_bounds_check_window(b, l, LW | MW, b, l + 1, RR), -MR_ERANGE);
	EXPECT_EQ(mr_bounds_check_window(b, l, LW | MW, b + l, 1, RR), -MR_ERANGE);
	EXPECT_EQ(mr_bounds_check_window(b, l, LW | MW, b + 8, kMax, RR), -MR_ERANGE);
	// Window rights are rights of access, nothing else.
	EXPECT_EQ(mr_bounds_check_window(b, l, LW | MW, b, l, MW), -MR_EFLAGS);
	EXPECT_EQ(mr_bounds_check_window(b, l, LW | MW, b, l, LR), -MR_EFLAGS);
}

// Random regions and accesses near the edges and near 2^64, against the
// 128-bit reference.
TEST(MrBounds, RandomAgainstReference)
{
	std::mt19937_64 rng(1);
	auto pick = [&](uint64_t around) {
		switch (rng() % 4) {
		case 0:
			return around + rng() % 16 - 8;
		case 1:
			return kMax - rng() % 16;
		case 2:
			return rng() % 32;
		default:
			return static_cast<uint64_t>(rng());
		}
	};
	for (int i = 0; i < 1000000; i++) {
		uint64_t mr_iova = pick(0), mr_len = pick(0x1000);
		uint64_t iova = pick(mr_iova), len = pick(mr_len);
		uint32_t acc = rng() & MR_ACC_MASK, need = rng() & (MR_ACC_MASK | LR);
		ASSERT_EQ(mr_bounds_check_range(mr_iova, mr_len, acc, iova, len, need),
			  reference(mr_iova, mr_len, acc, iova, len, need))
			<< mr_iova << " " << mr_len << " " << iova << " " << len;
	}
}

TEST(MrBounds, MapBits)
{
	EXPECT_EQ(mr_bounds_map_bits(0, 1024), 1u); // an empty message: one slice
	EXPECT_EQ(mr_bounds_map_bits(1, 1024), 1u);
	EXPECT_EQ(mr_bounds_map_bits(1024, 1024), 1u);
	EXPECT_EQ(mr_bounds_map_bits(1025, 1024), 2u);
	EXPECT_EQ(mr_bounds_map_bits(0x80000000u, 256), 1u << 23);
	EXPECT_EQ(mr_bounds_map_bits(0x80000000u, 4096), 1u << 19);
	EXPECT_EQ(mr_bounds_map_bits(UINT32_MAX, 4096), (1u << 20));
	EXPECT_EQ(mr_bounds_map_bits(5000, 0), 0u);
	// Against the reference, for every MTU.
	std::mt19937 rng(16);
	for (uint32_t mtu : {256u, 512u, 1024u, 2048u, 4096u})
		for (int i = 0; i < 10000; i++) {
			uint32_t len = rng() >> (rng() % 32);
			uint64_t want = (static_cast<uint64_t>(len) + mtu - 1) / mtu;
			EXPECT_EQ(mr_bounds_map_bits(len, mtu), want ? want : 1) << len << " " << mtu;
		}
}

TEST(MrBounds, MapBudget)
{
	// Four messages of 2^31 bytes at the MTU, and never less than one.
	for (uint32_t mtu : {256u, 512u, 1024u, 2048u, 4096u}) {
		uint32_t max_msg = mr_bounds_map_bits(0x80000000u, mtu);
		uint32_t budget = mr_bounds_map_budget(mtu);
		EXPECT_EQ(budget, MR_BOUNDS_MAP_MSGS * max_msg) << mtu;
		// MR_BOUNDS_MAP_MSGS of the largest fit, one more does not.
		uint32_t held = 0;
		for (uint32_t i = 0; i < MR_BOUNDS_MAP_MSGS; i++) {
			EXPECT_TRUE(mr_bounds_map_admit(held, max_msg, budget)) << mtu << " " << i;
			held += max_msg;
		}
		EXPECT_FALSE(mr_bounds_map_admit(held, max_msg, budget)) << mtu;
		EXPECT_FALSE(mr_bounds_map_admit(held, 65, budget)) << mtu;
		EXPECT_TRUE(mr_bounds_map_admit(held - 65, 65, budget)) << mtu;
	}
	EXPECT_EQ(mr_bounds_map_budget(1024), 1u << 23); // 1 MiB of map at MTU 1024
}

TEST(MrBounds, MapAdmitNoWrap)
{
	// held + bits would wrap a u32: still refused.
	EXPECT_FALSE(mr_bounds_map_admit(100, UINT32_MAX, 1000));
	EXPECT_FALSE(mr_bounds_map_admit(UINT32_MAX, 1, UINT32_MAX));
	EXPECT_TRUE(mr_bounds_map_admit(UINT32_MAX - 1, 1, UINT32_MAX));
	// A charge above the budget (it cannot happen, but) admits nothing.
	EXPECT_FALSE(mr_bounds_map_admit(2000, 0, 1000));
	EXPECT_TRUE(mr_bounds_map_admit(1000, 0, 1000));
}

TEST(MrBounds, NakGap)
{
	const uint64_t gap = 5000000;
	EXPECT_TRUE(mr_bounds_nak_due(0, 1, gap)); // the first always goes
	EXPECT_FALSE(mr_bounds_nak_due(1000, 1000, gap));
	EXPECT_FALSE(mr_bounds_nak_due(1000, 1000 + gap - 1, gap));
	EXPECT_TRUE(mr_bounds_nak_due(1000, 1000 + gap, gap));
	// A flood of one packet per microsecond for a second: 200 NAKs, not 10^6.
	uint64_t last = 0, naks = 0;
	for (uint64_t t = 1000000000ull; t < 2000000000ull; t += 1000)
		if (mr_bounds_nak_due(last, t, gap)) {
			last = t;
			naks++;
		}
	EXPECT_EQ(naks, 200u);
}
