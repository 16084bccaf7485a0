// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: the SRQ ring of srq.c without a device: WQEs leave in post
 * order, an armed limit fires once, when the count drops below it, and a
 * QP binds at most its share. The device verbs and the binding to RSNs
 * are covered by selftests/tests/33-srq.sh.
 */
#include <kunit/test.h>

#include "../srq.h"
#include "../wq.h"
#include "verbs_fixture.h"

/* An SRQ of @depth WQEs of one SGE, all posted: wr_ids 100, 101, ... */
static struct mr_srq *mr_test_srq(struct kunit *test, struct mr_dev *dev,
				  u32 depth)
{
	struct mr_srq *srq = kunit_kzalloc(test, sizeof(*srq), GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, srq);
	srq->ibsrq.device = &dev->ib_dev;
	srq->ibsrq.srq_type = IB_SRQT_BASIC;
	KUNIT_ASSERT_EQ(test, mr_wq_init(&srq->rq, depth, 1, mr_srq_stride(1)),
			0);
	spin_lock_init(&srq->rq.lock);
	for (i = 0; i < depth; i++) {
		struct mr_recv_wqe *wqe = mr_wq_slot(&srq->rq, i);

		wqe->wr_id = 100 + i;
		srq->rq.count++;
	}
	return srq;
}

static void srq_take_order_and_limit(struct kunit *test)
{
	struct mr_srq *srq = mr_test_srq(test, mr_test_dev(test), 4);
	struct mr_recv_wqe *out = kunit_kzalloc(test, mr_srq_stride(1),
						GFP_KERNEL);
	bool hit, fired = false;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, out);
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

/* A QP on @srq, with its ring of bound receives. */
static struct mr_qp *mr_test_srq_qp(struct kunit *test, struct mr_srq *srq)
{
	struct mr_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, qp);
	qp->ibqp.device = srq->ibsrq.device;
	qp->ibqp.srq = &srq->ibsrq;
	KUNIT_ASSERT_EQ(test, mr_srq_qp_init(qp, &srq->ibsrq), 0);
	spin_lock_init(&qp->rq.lock);
	return qp;
}

/*
 * One QP binds at most half of an SRQ of 8 (4 receives): a message past
 * that is refused and counted, and takes nothing; another QP still binds
 * the rest.
 */
static void srq_bind_holds_a_share(struct kunit *test)
{
	struct mr_dev *dev = mr_test_dev(test);
	struct mr_recv_wqe *wqe;
	struct mr_srq *srq;
	struct mr_qp *a, *b;

	KUNIT_ASSERT_EQ(test, mr_counters_init(dev), 0);
	srq = mr_test_srq(test, dev, 8);
	a = mr_test_srq_qp(test, srq);
	b = mr_test_srq_qp(test, srq);

	KUNIT_EXPECT_TRUE(test, mr_srq_bind(a, 10, 13));	/* RSNs 10..13 */
	KUNIT_EXPECT_EQ(test, a->rq.count, 4U);
	KUNIT_EXPECT_EQ(test, srq->rq.count, 4U);
	KUNIT_EXPECT_FALSE(test, mr_srq_bind(a, 10, 14));
	KUNIT_EXPECT_EQ(test, a->rq.count, 4U);
	KUNIT_EXPECT_EQ(test, srq->rq.count, 4U);
	KUNIT_EXPECT_EQ(test, mr_test_stat(dev, MR_CNT_SRQ_RNR_HOLD_LIMIT),
			1ULL);
	/* Past the hold: refused, nothing taken; the next from the head may */
	KUNIT_EXPECT_FALSE(test, mr_srq_bind(b, 0, 4));
	KUNIT_EXPECT_EQ(test, b->rq.count, 0U);
	KUNIT_EXPECT_TRUE(test, mr_srq_bind(b, 0, 3));
	wqe = mr_wq_slot(&b->rq, 0);
	KUNIT_EXPECT_EQ(test, wqe->wr_id, 104ULL);
	KUNIT_EXPECT_EQ(test, srq->rq.count, 0U);
	KUNIT_EXPECT_EQ(test, mr_test_stat(dev, MR_CNT_SRQ_RNR_HOLD_LIMIT),
			2ULL);

	kvfree(a->rq.buf);
	kvfree(b->rq.buf);
	kvfree(srq->rq.buf);
	mr_counters_free(dev);
}

static struct kunit_case srq_cases[] = {
	KUNIT_CASE(srq_take_order_and_limit),
	KUNIT_CASE(srq_bind_holds_a_share),
	{}
};

static struct kunit_suite srq_suite = {
	.name = "metaroce-srq",
	.test_cases = srq_cases,
};

kunit_test_suite(srq_suite);
