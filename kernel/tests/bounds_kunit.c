// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* KUnit: the memory region checks of proto/bounds.c. */
#include <kunit/test.h>

#include "../proto/bounds.h"

#define LW MR_ACC_LOCAL_WRITE
#define RW MR_ACC_REMOTE_WRITE
#define RR MR_ACC_REMOTE_READ
#define RA MR_ACC_REMOTE_ATOMIC
#define LR MR_ACC_LOCAL_READ

static void mr_access_flags(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, mr_bounds_check_access(0), 0);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_access(LW), 0);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_access(RR), 0);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_access(LW | RW), 0);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_access(LW | RA), 0);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_access(LW | RW | RR | RA), 0);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_access(RW), -MR_EFLAGS);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_access(RA), -MR_EFLAGS);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_access(RR | RW), -MR_EFLAGS);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_access(LW | MR_ACC_MW_BIND), 0);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_access(LW | 0x20), -MR_EFLAGS);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_access(LR), -MR_EFLAGS);
}

static void mr_region(struct kunit *test)
{
	const u64 max = ~0ull;

	KUNIT_EXPECT_EQ(test, mr_bounds_check_region(0x1000, 1, 0), 0);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_region(0x1001, 1 << 20, LW), 0);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_region(0x1000, 0, 0), -MR_ELENGTH);
	/* The last byte may be at 2^64 - 1, not beyond. */
	KUNIT_EXPECT_EQ(test, mr_bounds_check_region(max, 1, 0), 0);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_region(max, 2, 0), -MR_ERANGE);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_region(0, max, 0), 0);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_region(1, max, 0), 0);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_region(2, max, 0), -MR_ERANGE);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_region(0x1000, 4096, RW), -MR_EFLAGS);
}

static void mr_range_bounds(struct kunit *test)
{
	const u64 base = 0x10000, len = 0x3000;

	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(base, len, 0, base, len, LR), 0);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(base, len, 0, base, 1, LR), 0);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(base, len, 0, base + len - 1, 1,
						    LR), 0);
	/* Empty accesses anywhere inside, including the end, are fine. */
	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(base, len, 0, base + len, 0, LR),
			0);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(base, len, 0, base + len, 1, LR),
			-MR_ERANGE);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(base, len, 0, base - 1, 1, LR),
			-MR_ERANGE);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(base, len, 0, base, len + 1, LR),
			-MR_ERANGE);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(base, len, 0, base + 1, len, LR),
			-MR_ERANGE);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(base, len, 0, base + len + 1, 0,
						    LR), -MR_ERANGE);
}

/* Lengths and addresses chosen so that iova + len wraps to inside. */
static void mr_range_overflow(struct kunit *test)
{
	const u64 max = ~0ull, base = 0x10000, len = 0x3000;

	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(base, len, 0, base + 8, max, LR),
			-MR_ERANGE);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(base, len, 0, max, 2, LR),
			-MR_ERANGE);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(base, len, 0, base + 8,
						    max - 7, LR), -MR_ERANGE);
	/* A region that ends at 2^64. */
	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(max - 15, 16, 0, max, 1, LR), 0);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(max - 15, 16, 0, max, 2, LR),
			-MR_ERANGE);
	/* The DMA region: everything below 2^64 - 1. */
	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(0, max, LW, 0x1234, 4096,
						    LR | LW), 0);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(0, max, LW, max, 1, LW),
			-MR_ERANGE);
}

static void mr_range_rights(struct kunit *test)
{
	const u64 b = 0x10000, l = 0x1000;

	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(b, l, 0, b, 1, LW), -MR_EACCESS);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(b, l, LW, b, 1, LW), 0);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(b, l, LW, b, 1, RR), -MR_EACCESS);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(b, l, RR, b, 1, RR), 0);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(b, l, LW | RR, b, 1, RW),
			-MR_EACCESS);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(b, l, LW | RW, b, 1, RW), 0);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(b, l, LW | RW, b, 1, RA),
			-MR_EACCESS);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(b, l, LW | RA, b, 8, RA), 0);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(b, l, LW | RR, b, 1, RR | LW), 0);
	/* Rights before bounds: no rights, out of bounds -> access error. */
	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(b, l, 0, 0, 1, RW), -MR_EACCESS);
	/* Unknown needs are refused, not ignored. */
	KUNIT_EXPECT_EQ(test, mr_bounds_check_range(b, l, LW, b, 1, 0x20), -MR_EFLAGS);
}

static void mr_window(struct kunit *test)
{
	const u64 b = 0x10000, l = 0x2000;
	const u32 mw = MR_ACC_MW_BIND;

	KUNIT_EXPECT_EQ(test, mr_bounds_check_window(b, l, LW | mw, b, l, RW | RR), 0);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_window(b, l, LW | mw, b + l, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_window(b, l, LW | RW, b, l, RW),
			-MR_EACCESS);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_window(b, l, mw | RR, b, l, RW),
			-MR_EACCESS);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_window(b, l, LW | mw, b, l + 1, RR),
			-MR_ERANGE);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_window(b, l, LW | mw, b + 8, U64_MAX, RR),
			-MR_ERANGE);
	KUNIT_EXPECT_EQ(test, mr_bounds_check_window(b, l, LW | mw, b, l, mw),
			-MR_EFLAGS);
}

static struct kunit_case mr_bounds_cases[] = {
	KUNIT_CASE(mr_access_flags),
	KUNIT_CASE(mr_region),
	KUNIT_CASE(mr_range_bounds),
	KUNIT_CASE(mr_range_overflow),
	KUNIT_CASE(mr_range_rights),
	KUNIT_CASE(mr_window),
	{}
};

static struct kunit_suite mr_bounds_suite = {
	.name = "metaroce_mr_bounds",
	.test_cases = mr_bounds_cases,
};

kunit_test_suite(mr_bounds_suite);
