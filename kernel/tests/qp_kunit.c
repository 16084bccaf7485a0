// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: kernel QPs of qp.c on a device that is allocated but never
 * registered: creation limits, QPN lookups, and the flush of queued WRs in
 * post order. Transitions that need a port and an AV (RTR, RTS) are
 * covered by selftests/tests/22-qp-states.sh.
 */
#include <kunit/test.h>

#include "../cq.h"
#include "../qp.h"
#include "../wq.h"
#include "verbs_fixture.h"

struct qp_fixture {
	struct mr_dev *dev;
	struct ib_pd pd;
	struct mr_cq *scq, *rcq;
};

static struct qp_fixture *qp_fixture(struct kunit *test)
{
	struct qp_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->dev = mr_test_dev(test);
	mr_qp_dev_init(f->dev);
	f->pd.device = &f->dev->ib_dev;
	f->scq = mr_test_cq(test, f->dev, 32, NULL, NULL, NULL);
	f->rcq = mr_test_cq(test, f->dev, 32, NULL, NULL, NULL);
	return f;
}

static void qp_fixture_fini(struct qp_fixture *f)
{
	mr_cq_destroy(&f->scq->ibcq, NULL);
	mr_cq_destroy(&f->rcq->ibcq, NULL);
	mr_qp_dev_fini(f->dev);
}

static struct ib_qp_init_attr rc_init(struct qp_fixture *f)
{
	return (struct ib_qp_init_attr){
		.send_cq = &f->scq->ibcq,
		.recv_cq = &f->rcq->ibcq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 16 },
		.qp_type = IB_QPT_RC,
	};
}

static int qp_create(struct kunit *test, struct qp_fixture *f,
		     struct ib_qp_init_attr *init, struct mr_qp **out)
{
	struct mr_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, qp);
	qp->ibqp.device = &f->dev->ib_dev;
	qp->ibqp.pd = &f->pd;
	qp->ibqp.qp_type = init->qp_type;
	*out = qp;
	return mr_qp_create(&qp->ibqp, init, NULL);
}

static void qp_create_limits(struct kunit *test)
{
	static const struct {
		enum ib_qp_type type;
		bool xport;	/* has transport state */
	} transport_by_type[] = {
		{ IB_QPT_UC, true },
		{ IB_QPT_UD, false },
	};
	struct qp_fixture *f = qp_fixture(test);
	struct ib_qp_init_attr init = rc_init(f);
	struct mr_qp *qp, *other;
	struct ib_srq srq = {};
	u32 qpn, i;

	init.qp_type = IB_QPT_XRC_INI;
	KUNIT_EXPECT_EQ(test, qp_create(test, f, &init, &qp), -EOPNOTSUPP);
	init = rc_init(f);
	init.qp_type = IB_QPT_UD;
	init.srq = &srq;	/* refused before anything looks at it */
	KUNIT_EXPECT_EQ(test, qp_create(test, f, &init, &qp), -EOPNOTSUPP);
	init = rc_init(f);
	init.cap.max_send_sge = MR_MAX_SGE + 1;
	KUNIT_EXPECT_EQ(test, qp_create(test, f, &init, &qp), -EINVAL);
	init = rc_init(f);
	init.cap.max_inline_data = MR_MAX_INLINE + 1;
	KUNIT_EXPECT_EQ(test, qp_create(test, f, &init, &qp), -EINVAL);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->dev->num_qp), 0);

	init = rc_init(f);
	init.cap.max_recv_wr = 0;
	KUNIT_ASSERT_EQ(test, qp_create(test, f, &init, &qp), 0);
	KUNIT_EXPECT_EQ(test, init.cap.max_recv_wr, 1u);
	qpn = qp->ibqp.qp_num;
	KUNIT_EXPECT_GE(test, qpn, (u32)MR_QPN_MIN);
	KUNIT_EXPECT_EQ(test, qp->state, IB_QPS_RESET);

	other = mr_qp_get(f->dev, qpn);
	KUNIT_EXPECT_PTR_EQ(test, other, qp);
	if (other)
		mr_qp_put(other);
	KUNIT_EXPECT_NULL(test, mr_qp_get(f->dev, qpn + 1));
	KUNIT_EXPECT_EQ(test, mr_qp_destroy(&qp->ibqp, NULL), 0);
	KUNIT_EXPECT_NULL(test, mr_qp_get(f->dev, qpn));
	KUNIT_EXPECT_EQ(test, atomic_read(&f->dev->num_qp), 0);

	/* UC has the transport, as RC has it; UD has no transport state. */
	for (i = 0; i < ARRAY_SIZE(transport_by_type); i++) {
		init = rc_init(f);
		init.qp_type = transport_by_type[i].type;
		KUNIT_ASSERT_EQ(test, qp_create(test, f, &init, &qp), 0);
		KUNIT_EXPECT_EQ(test, !!qp->xp, transport_by_type[i].xport);
		KUNIT_EXPECT_EQ(test, mr_qp_destroy(&qp->ibqp, NULL), 0);
		KUNIT_EXPECT_EQ(test, atomic_read(&f->dev->num_qp), 0);
	}

	/* The GSI QP: QPN 1, one per device, on our port only. */
	init = rc_init(f);
	init.qp_type = IB_QPT_GSI;
	init.port_num = MR_PORT + 1;
	KUNIT_EXPECT_EQ(test, qp_create(test, f, &init, &qp), -EINVAL);
	init.port_num = MR_PORT;
	KUNIT_ASSERT_EQ(test, qp_create(test, f, &init, &qp), 0);
	KUNIT_EXPECT_EQ(test, qp->ibqp.qp_num, (u32)MR_QPN_GSI);
	KUNIT_EXPECT_NULL(test, qp->xp);
	KUNIT_EXPECT_EQ(test, qp_create(test, f, &init, &other), -EBUSY);
	other = mr_qp_get(f->dev, MR_QPN_GSI);
	KUNIT_EXPECT_PTR_EQ(test, other, qp);
	if (other)
		mr_qp_put(other);
	KUNIT_EXPECT_EQ(test, mr_qp_destroy(&qp->ibqp, NULL), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->dev->num_qp), 0);
	qp_fixture_fini(f);
}

static int qp_to(struct mr_qp *qp, enum ib_qp_state state)
{
	struct ib_qp_attr attr = { .qp_state = state, .port_num = MR_PORT };
	int mask = IB_QP_STATE;

	if (state == IB_QPS_INIT)
		mask |= IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS;
	return mr_qp_modify(&qp->ibqp, &attr, mask, NULL);
}

static void expect_flushed(struct kunit *test, struct mr_cq *cq, u64 first,
			   int n, enum ib_wc_opcode opcode)
{
	struct ib_wc wc[MR_TEST_MAX_WC];
	int i;

	mr_test_poll_ids(test, cq, wc, first, n);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, wc[i].status, IB_WC_WR_FLUSH_ERR);
		KUNIT_EXPECT_EQ(test, wc[i].opcode, opcode);
	}
}

/* Kernel WRs: refused in RESET/INIT, flushed in order in ERR. */
static void qp_flush_in_order(struct kunit *test)
{
	struct qp_fixture *f = qp_fixture(test);
	struct ib_qp_init_attr init = rc_init(f);
	static const char text[] = "inline, memcpy";
	struct ib_sge sge = { .addr = (uintptr_t)text, .length = sizeof(text) };
	struct ib_recv_wr rwr[5] = {};
	struct ib_send_wr swr = { .wr_id = 100, .sg_list = &sge, .num_sge = 1,
				  .opcode = IB_WR_SEND,
				  .send_flags = IB_SEND_INLINE };
	const struct ib_recv_wr *rbad = NULL;
	const struct ib_send_wr *sbad = NULL;
	struct mr_send_wqe *wqe;
	struct mr_qp *qp;
	int i;

	KUNIT_ASSERT_EQ(test, qp_create(test, f, &init, &qp), 0);
	for (i = 0; i < ARRAY_SIZE(rwr); i++) {
		rwr[i].wr_id = i + 1;
		rwr[i].next = i + 1 < ARRAY_SIZE(rwr) ? &rwr[i + 1] : NULL;
	}
	KUNIT_EXPECT_EQ(test, mr_qp_post_recv(&qp->ibqp, rwr, &rbad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, rbad, &rwr[0]);

	KUNIT_ASSERT_EQ(test, qp_to(qp, IB_QPS_INIT), 0);
	/* Four fit, the fifth does not. */
	KUNIT_EXPECT_EQ(test, mr_qp_post_recv(&qp->ibqp, rwr, &rbad), -ENOMEM);
	KUNIT_EXPECT_PTR_EQ(test, rbad, &rwr[4]);
	KUNIT_EXPECT_EQ(test, mr_qp_post_send(&qp->ibqp, &swr, &sbad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, sbad, &swr);

	KUNIT_ASSERT_EQ(test, qp_to(qp, IB_QPS_ERR), 0);
	expect_flushed(test, f->rcq, 1, 4, IB_WC_RECV);
	/* Queued in ERR: the inline data was copied, then flushed. */
	spin_lock_irq(&qp->sq.lock);
	qp->sq.flushing = true;	/* hold the flush to look at the WQE */
	spin_unlock_irq(&qp->sq.lock);
	KUNIT_EXPECT_EQ(test, mr_qp_post_send(&qp->ibqp, &swr, &sbad), 0);
	KUNIT_ASSERT_EQ(test, qp->sq.count, 1u);
	wqe = mr_wq_slot(&qp->sq, qp->sq.head);
	KUNIT_EXPECT_EQ(test, wqe->length, (u32)sizeof(text));
	KUNIT_EXPECT_EQ(test, wqe->num_sge, 0u);
	KUNIT_EXPECT_EQ(test, memcmp(wqe->inline_data, text, sizeof(text)), 0);
	spin_lock_irq(&qp->sq.lock);
	qp->sq.flushing = false;
	spin_unlock_irq(&qp->sq.lock);
	mr_wq_flush(qp, MR_WQ_SQ);
	expect_flushed(test, f->scq, 100, 1, IB_WC_SEND);

	/* RESET drops without completions. */
	KUNIT_ASSERT_EQ(test, qp_to(qp, IB_QPS_RESET), 0);
	KUNIT_ASSERT_EQ(test, qp_to(qp, IB_QPS_INIT), 0);
	KUNIT_EXPECT_EQ(test, mr_qp_post_recv(&qp->ibqp, rwr, &rbad), -ENOMEM);
	KUNIT_ASSERT_EQ(test, qp_to(qp, IB_QPS_RESET), 0);
	KUNIT_EXPECT_EQ(test, qp->rq.count, 0u);
	KUNIT_EXPECT_EQ(test, mr_qp_destroy(&qp->ibqp, NULL), 0);
	expect_flushed(test, f->rcq, 1, 0, IB_WC_RECV);
	qp_fixture_fini(f);
}

/* UC: READ, atomics and SEND_WITH_INV refused at post; SEND taken. */
static void qp_uc_opcodes(struct kunit *test)
{
	static const enum ib_wr_opcode refused[] = {
		IB_WR_RDMA_READ, IB_WR_ATOMIC_CMP_AND_SWP,
		IB_WR_ATOMIC_FETCH_AND_ADD, IB_WR_SEND_WITH_INV,
	};
	struct qp_fixture *f = qp_fixture(test);
	struct ib_qp_init_attr init = rc_init(f);
	static const char text[] = "uc";
	struct ib_sge sge = { .addr = (uintptr_t)text, .length = sizeof(text) };
	struct ib_send_wr send = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				   .opcode = IB_WR_SEND,
				   .send_flags = IB_SEND_INLINE };
	struct ib_rdma_wr bad = { .wr = send };
	const struct ib_send_wr *sbad = NULL;
	struct mr_qp *qp;
	int i;

	init.qp_type = IB_QPT_UC;
	KUNIT_ASSERT_EQ(test, qp_create(test, f, &init, &qp), 0);
	/* In ERR every WR that passes its checks is queued and flushed. */
	KUNIT_ASSERT_EQ(test, qp_to(qp, IB_QPS_INIT), 0);
	KUNIT_ASSERT_EQ(test, qp_to(qp, IB_QPS_ERR), 0);
	send.next = &bad.wr;
	for (i = 0; i < ARRAY_SIZE(refused); i++) {
		bad.wr.wr_id = 2;
		bad.wr.opcode = refused[i];
		bad.wr.send_flags = 0;
		KUNIT_EXPECT_EQ(test, mr_qp_post_send(&qp->ibqp, &send, &sbad),
				-EINVAL);
		KUNIT_EXPECT_PTR_EQ(test, sbad, &bad.wr);
		/* The SEND before it went. */
		expect_flushed(test, f->scq, 1, 1, IB_WC_SEND);
	}
	KUNIT_EXPECT_EQ(test, mr_qp_destroy(&qp->ibqp, NULL), 0);
	qp_fixture_fini(f);
}

static struct kunit_case qp_cases[] = {
	KUNIT_CASE(qp_create_limits),
	KUNIT_CASE(qp_flush_in_order),
	KUNIT_CASE(qp_uc_opcodes),
	{}
};

static struct kunit_suite qp_suite = {
	.name = "metaroce_qp",
	.test_cases = qp_cases,
};

kunit_test_suite(qp_suite);
