// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* KUnit: the path MTU arithmetic of proto/mtu.c. */
#include <kunit/test.h>

#include "../proto/mtu.h"

static void mtu_bytes_of_each_code(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, mr_mtu_bytes(MR_MTU_256), 256u);
	KUNIT_EXPECT_EQ(test, mr_mtu_bytes(MR_MTU_512), 512u);
	KUNIT_EXPECT_EQ(test, mr_mtu_bytes(MR_MTU_1024), 1024u);
	KUNIT_EXPECT_EQ(test, mr_mtu_bytes(MR_MTU_2048), 2048u);
	KUNIT_EXPECT_EQ(test, mr_mtu_bytes(MR_MTU_4096), 4096u);
	KUNIT_EXPECT_EQ(test, mr_mtu_bytes(MR_MTU_NONE), 0u);
	KUNIT_EXPECT_EQ(test, mr_mtu_bytes((enum mr_mtu)6), 0u);
}

static void mtu_common_netdev_mtus(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, mr_mtu_from_netdev_mtu(1500), MR_MTU_1024);
	KUNIT_EXPECT_EQ(test, mr_mtu_from_netdev_mtu(9000), MR_MTU_4096);
	KUNIT_EXPECT_EQ(test, mr_mtu_from_netdev_mtu(65535), MR_MTU_4096);
	KUNIT_EXPECT_EQ(test, mr_mtu_from_netdev_mtu(1280), MR_MTU_1024);
	KUNIT_EXPECT_EQ(test, mr_mtu_from_netdev_mtu(576), MR_MTU_256);
	KUNIT_EXPECT_EQ(test, mr_mtu_from_netdev_mtu(0), MR_MTU_NONE);
}

/* Each RDMA MTU fits exactly at its boundary and not one byte below it. */
static void mtu_boundaries(struct kunit *test)
{
	enum mr_mtu mtu;

	for (mtu = MR_MTU_256; mtu <= MR_MTU_MAX; mtu++) {
		unsigned int edge = mr_mtu_bytes(mtu) + MR_WIRE_OVERHEAD;

		KUNIT_EXPECT_EQ(test, mr_mtu_from_netdev_mtu(edge), mtu);
		KUNIT_EXPECT_EQ(test, mr_mtu_from_netdev_mtu(edge - 1),
				mtu - 1);
	}
	KUNIT_EXPECT_EQ(test, mr_mtu_min_netdev(), 256u + MR_WIRE_OVERHEAD);
}

/* For every netdev MTU: the answer fits, and the next larger one does not. */
static void mtu_largest_that_fits(struct kunit *test)
{
	unsigned int netdev_mtu;

	for (netdev_mtu = 0; netdev_mtu <= 10000; netdev_mtu++) {
		enum mr_mtu mtu = mr_mtu_from_netdev_mtu(netdev_mtu);

		if (mtu != MR_MTU_NONE)
			KUNIT_ASSERT_LE(test, mr_mtu_bytes(mtu) + MR_WIRE_OVERHEAD,
					netdev_mtu);
		if (mtu < MR_MTU_MAX)
			KUNIT_ASSERT_GT(test,
					mr_mtu_bytes(mtu + 1) + MR_WIRE_OVERHEAD,
					netdev_mtu);
	}
}

static struct kunit_case mtu_cases[] = {
	KUNIT_CASE(mtu_bytes_of_each_code),
	KUNIT_CASE(mtu_common_netdev_mtus),
	KUNIT_CASE(mtu_boundaries),
	KUNIT_CASE(mtu_largest_that_fits),
	{}
};

static struct kunit_suite mtu_suite = {
	.name = "metaroce_mtu",
	.test_cases = mtu_cases,
};

kunit_test_suite(mtu_suite);
