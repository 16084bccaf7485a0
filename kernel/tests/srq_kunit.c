// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: the SRQ ring of srq.c without a device: WQEs leave in post
 * order, and an armed limit fires once, when the count drops below it.
 * The device verbs and the binding to RSNs are covered by
 * selftests/tests/33-srq.sh.
 */
#include <kunit/test.h>

#include "../srq.h"
#include "../wq.h"

static void srq_take_order_and_limit(struct kunit *test)
{
	struct mr_srq *srq = kunit_kzalloc(test, sizeof(*srq), GFP_KERNEL);
	size_t stride = mr_srq_stride(1);
	struct mr_recv_wqe *out = kunit_kzalloc(test, stride, GFP_KERNEL);
	bool hit, fired = false;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, srq);
	KUNIT_ASSERT_NOT_NULL(test, out);
	KUNIT_ASSERT_EQ(test, mr_wq_init(&srq->rq, 4, 1, stride), 0);
	spin_lock_init(&srq->rq.lock);
	for (i = 0; i < 4; i++) {
		struct mr_recv_wqe *wqe = mr_wq_slot(&srq->rq, i);

		wqe->wr_id = 100 + i;
		srq->rq.count++;
	}
	srq->limit = 2;
	for (i = 0; i < 4; i++) {
		hit = false;
		KUNIT_EXPECT_TRUE(test, mr_srq_take(srq, out, &hit));
		KUNIT_EXPECT_EQ(test, out->wr_id, 100ULL + i);
		/* 3 and 2 left: not below 2; 1 left: fires; then disarmed */
		KUNIT_EXPECT_EQ(test, hit, i == 2);
		fired |= hit;
	}
	KUNIT_EXPECT_TRUE(test, fired);
	KUNIT_EXPECT_EQ(test, srq->limit, 0U);
	hit = false;
	KUNIT_EXPECT_FALSE(test, mr_srq_take(srq, out, &hit));
	KUNIT_EXPECT_FALSE(test, hit);
	kvfree(srq->rq.buf);
}

static struct kunit_case srq_cases[] = {
	KUNIT_CASE(srq_take_order_and_limit),
	{}
};

static struct kunit_suite srq_suite = {
	.name = "metaroce-srq",
	.test_cases = srq_cases,
};

kunit_test_suite(srq_suite);
