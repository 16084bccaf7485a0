// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: the UC responder's bookkeeping of its drops, and the budget of
 * slice-map memory (resp.c), through the functions resp.h declares for
 * KUnit. Nothing here sends. The
 * transport itself is covered by selftests/tests/30-rc-pingpong.sh and
 * the other transport selftests.
 */
#include <kunit/test.h>

#include "../resp.h"
#include "../proto/bounds.h"

/* A transport with only what the UC drop bookkeeping reads. */
static struct mr_xport *uc_xport(struct kunit *test, enum ib_qp_type type)
{
	struct mr_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	struct mr_xport *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, qp);
	KUNIT_ASSERT_NOT_NULL(test, x);
	qp->ibqp.qp_type = type;
	x->qp = qp;
	return x;
}

/* Skip the RSN of message @msn, as a UC drop for want of a receive does. */
static void uc_skip(struct mr_xport *x, u32 msn, u32 rsn)
{
	struct mr_rx_msg *m = &x->rsp.msg[msn % MR_MSG_WINDOW];

	m->used = true;
	m->skipped = true;
	m->msn = msn;
	m->rsn = rsn;
	x->rsp.uc_skips++;
}

/* Receives move up past skipped RSNs: in the window and gone by. */
static void uc_recv_after_skips(struct kunit *test)
{
	struct mr_xport *x = uc_xport(test, IB_QPT_UC);

	KUNIT_EXPECT_EQ(test, mr_resp_recv(x, 7), 7u);
	uc_skip(x, 3, 5);
	KUNIT_EXPECT_EQ(test, mr_resp_recv(x, 4), 4u);
	KUNIT_EXPECT_EQ(test, mr_resp_recv(x, 6), 5u);
	/* A skip decided later, of a later RSN, moves only those after it. */
	uc_skip(x, 9, 10);
	KUNIT_EXPECT_EQ(test, mr_resp_recv(x, 6), 5u);
	KUNIT_EXPECT_EQ(test, mr_resp_recv(x, 11), 9u);
	/* The first one gone by: counted in rsn_skipped instead. */
	x->rsp.msg[3].used = false;
	x->rsp.uc_skips--;
	x->rsp.rsn_skipped++;
	KUNIT_EXPECT_EQ(test, mr_resp_recv(x, 11), 9u);
	KUNIT_EXPECT_EQ(test, mr_resp_recv(x, 8), 7u);

	/* RSNs wrap: before and after are modulo 2^32. */
	x = uc_xport(test, IB_QPT_UC);
	uc_skip(x, 0, U32_MAX);
	KUNIT_EXPECT_EQ(test, mr_resp_recv(x, 1), 0u);
	KUNIT_EXPECT_EQ(test, mr_resp_recv(x, U32_MAX - 1), U32_MAX - 1);
}

/* An error fails an RC message with its NAK; UC drops it once, quietly. */
static void uc_fail_drops(struct kunit *test)
{
	struct mr_xport *rc = uc_xport(test, IB_QPT_RC);
	struct mr_xport *uc = uc_xport(test, IB_QPT_UC);
	struct mr_rx_msg m = {};
	bool complete = false;

	KUNIT_EXPECT_EQ(test, mr_resp_fail(rc, &m, MR_NAK_REMOTE_ACCESS,
					   MR_CNT_UC_RX_DROP_REMOTE_ACCESS,
					   IB_WC_REM_ACCESS_ERR, &complete),
			(u8)MR_NAK_REMOTE_ACCESS);
	KUNIT_EXPECT_FALSE(test, m.dropped);
	KUNIT_EXPECT_FALSE(test, complete);

	KUNIT_EXPECT_EQ(test, mr_resp_fail(uc, &m, MR_NAK_INVALID_REQUEST,
					   MR_CNT_UC_RX_DROP_TOO_LONG,
					   IB_WC_LOC_LEN_ERR, &complete), 0);
	KUNIT_EXPECT_TRUE(test, m.dropped);
	KUNIT_EXPECT_TRUE(test, m.done);
	KUNIT_EXPECT_TRUE(test, complete);
	KUNIT_EXPECT_EQ(test, m.drop_counter, (u8)MR_CNT_UC_RX_DROP_TOO_LONG);
	KUNIT_EXPECT_EQ(test, m.drop_status, IB_WC_LOC_LEN_ERR);
	/* A second error in the same message changes nothing. */
	complete = false;
	KUNIT_EXPECT_EQ(test, mr_resp_fail(uc, &m, MR_NAK_REMOTE_ACCESS,
					   MR_CNT_UC_RX_DROP_REMOTE_ACCESS,
					   IB_WC_REM_ACCESS_ERR, &complete), 0);
	KUNIT_EXPECT_FALSE(test, complete);
	KUNIT_EXPECT_EQ(test, m.drop_counter, (u8)MR_CNT_UC_RX_DROP_TOO_LONG);
}

/* The first packet of a WRITE of @length bytes, message @msn. */
static void map_write(struct mr_pkt *pkt, struct mr_resp_info *ri, u32 msn,
		      u32 length)
{
	memset(pkt, 0, sizeof(*pkt));
	pkt->base.opcode = MR_OP_WRITE;
	memset(ri, 0, sizeof(*ri));
	ri->msn = msn;
	ri->length = length;
}

/*
 * Slice maps are charged to the QP's budget while their messages are in
 * the window: MR_BOUNDS_MAP_MSGS messages of 2 GiB fit, the next large
 * one is refused without an allocation, small ones (64 slices or fewer)
 * cost nothing, and freeing gives the bits back.
 */
static void map_budget(struct kunit *test)
{
	struct mr_xport *x = uc_xport(test, IB_QPT_RC);
	u32 big = MR_WIRE_MAX_MSG_LEN / 1024, i;
	struct mr_resp_info ri;
	struct mr_pkt pkt;

	x->mtu = 1024;
	x->rsp.map_budget = mr_bounds_map_budget(x->mtu);
	KUNIT_EXPECT_EQ(test, x->rsp.map_budget, MR_BOUNDS_MAP_MSGS * big);
	for (i = 0; i < MR_BOUNDS_MAP_MSGS; i++) {
		map_write(&pkt, &ri, i, MR_WIRE_MAX_MSG_LEN);
		KUNIT_ASSERT_EQ(test, mr_resp_msg_init(x, &x->rsp.msg[i], &pkt, &ri),
				0);
		KUNIT_EXPECT_EQ(test, x->rsp.map_bits, (i + 1) * big);
		KUNIT_EXPECT_EQ(test, x->rsp.msg[i].nslices, big);
	}
	/* Full: the next message of 65 slices is refused, one of 64 is not. */
	map_write(&pkt, &ri, i, 65 * 1024);
	KUNIT_EXPECT_EQ(test, mr_resp_msg_init(x, &x->rsp.msg[i], &pkt, &ri),
			-ENOSPC);
	KUNIT_EXPECT_FALSE(test, x->rsp.msg[i].used);
	KUNIT_EXPECT_NULL(test, x->rsp.msg[i].map);
	KUNIT_EXPECT_EQ(test, x->rsp.map_bits, x->rsp.map_budget);
	map_write(&pkt, &ri, i, 64 * 1024);
	KUNIT_EXPECT_EQ(test, mr_resp_msg_init(x, &x->rsp.msg[i], &pkt, &ri), 0);
	KUNIT_EXPECT_PTR_EQ(test, x->rsp.msg[i].map,
			    (unsigned long *)&x->rsp.msg[i].map1);
	KUNIT_EXPECT_EQ(test, x->rsp.map_bits, x->rsp.map_budget);
	mr_resp_msg_free(x, &x->rsp.msg[i]);
	/* One freed: room for one more of 2 GiB, not two. */
	mr_resp_msg_free(x, &x->rsp.msg[0]);
	KUNIT_EXPECT_EQ(test, x->rsp.map_bits, x->rsp.map_budget - big);
	map_write(&pkt, &ri, i, MR_WIRE_MAX_MSG_LEN);
	KUNIT_EXPECT_EQ(test, mr_resp_msg_init(x, &x->rsp.msg[i], &pkt, &ri), 0);
	map_write(&pkt, &ri, i + 1, MR_WIRE_MAX_MSG_LEN);
	KUNIT_EXPECT_EQ(test, mr_resp_msg_init(x, &x->rsp.msg[i + 1], &pkt, &ri),
			-ENOSPC);
	for (i = 0; i < MR_MSG_WINDOW; i++)
		mr_resp_msg_free(x, &x->rsp.msg[i]);
	KUNIT_EXPECT_EQ(test, x->rsp.map_bits, 0u);
}

static struct kunit_case uc_cases[] = {
	KUNIT_CASE(uc_recv_after_skips),
	KUNIT_CASE(uc_fail_drops),
	KUNIT_CASE(map_budget),
	{}
};

static struct kunit_suite uc_suite = {
	.name = "metaroce_uc",
	.test_cases = uc_cases,
};

kunit_test_suite(uc_suite);
