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
