// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: the CQ ring of cq.c and the keys, references and copies of mr.c,
 * on a device that is allocated but never registered. The user MR path
 * needs a process and is covered by selftests/tests/20-verbs-objects.sh.
 */
#include <kunit/test.h>
#include <linux/kthread.h>

#include "../cq.h"
#include "../mr.h"
#include "../proto/bounds.h"
#include "verbs_fixture.h"

struct verbs_fixture {
	struct mr_dev *dev;
	struct ib_pd pd, other_pd;
	struct ib_qp qp;
	int completions;
	int cq_errors;
};

/* The QP of remote lookups: only type 2 windows look at it. */
static struct mr_qp any_qp;

static void count_completion(struct ib_cq *ibcq, void *ctx)
{
	((struct verbs_fixture *)ctx)->completions++;
}

static void count_event(struct ib_event *ev, void *ctx)
{
	if (ev->event == IB_EVENT_CQ_ERR)
		((struct verbs_fixture *)ctx)->cq_errors++;
}

static struct verbs_fixture *fixture(struct kunit *test)
{
	struct verbs_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->dev = mr_test_dev(test);
	mr_mr_dev_init(f->dev);
	f->pd.device = &f->dev->ib_dev;
	f->other_pd.device = &f->dev->ib_dev;
	f->qp.device = &f->dev->ib_dev;
	f->qp.qp_num = 17;
	return f;
}

static struct mr_cq *new_cq(struct kunit *test, struct verbs_fixture *f,
			    int cqe)
{
	return mr_test_cq(test, f->dev, cqe, count_completion, count_event, f);
}

static int post(struct verbs_fixture *f, struct mr_cq *cq, u64 id,
		bool solicited)
{
	struct ib_wc wc = { .wr_id = id, .qp = &f->qp,
			    .status = IB_WC_SUCCESS };

	return mr_cq_post(cq, &wc, solicited);
}

static void expect_ids(struct kunit *test, struct mr_cq *cq, u64 first,
		       int n)
{
	struct ib_wc wc[MR_TEST_MAX_WC];
	int i;

	mr_test_poll_ids(test, cq, wc, first, n);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ(test, wc[i].qp->qp_num, 17u);
}

static void cq_create_limits(struct kunit *test)
{
	struct verbs_fixture *f = fixture(test);
	struct mr_cq *cq = kunit_kzalloc(test, sizeof(*cq), GFP_KERNEL);
	struct ib_cq_init_attr attr = {};

	KUNIT_ASSERT_NOT_NULL(test, cq);
	cq->ibcq.device = &f->dev->ib_dev;
	attr.cqe = 0;
	KUNIT_EXPECT_EQ(test, mr_cq_create(&cq->ibcq, &attr, NULL), -EINVAL);
	attr.cqe = MR_MAX_CQE + 1;
	KUNIT_EXPECT_EQ(test, mr_cq_create(&cq->ibcq, &attr, NULL), -EINVAL);
	attr.cqe = 4;
	attr.flags = IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION;
	KUNIT_EXPECT_EQ(test, mr_cq_create(&cq->ibcq, &attr, NULL),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->dev->num_cq), 0);
	attr.flags = 0;
	attr.cqe = MR_MAX_CQE;
	KUNIT_ASSERT_EQ(test, mr_cq_create(&cq->ibcq, &attr, NULL), 0);
	KUNIT_EXPECT_EQ(test, cq->ibcq.cqe, MR_MAX_CQE);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->dev->num_cq), 1);
	mr_cq_destroy(&cq->ibcq, NULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->dev->num_cq), 0);
}

/* FIFO order across the wrap; overrun loses the entry, sticks, one event. */
static void cq_ring_and_overrun(struct kunit *test)
{
	struct verbs_fixture *f = fixture(test);
	struct mr_cq *cq = new_cq(test, f, 4);
	struct ib_wc wc;
	u64 id;

	KUNIT_EXPECT_EQ(test, mr_cq_poll(&cq->ibcq, 1, &wc), 0);
	for (id = 1; id <= 3; id++)
		KUNIT_EXPECT_EQ(test, post(f, cq, id, false), 0);
	KUNIT_ASSERT_EQ(test, mr_cq_poll(&cq->ibcq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 1ull);
	KUNIT_ASSERT_EQ(test, mr_cq_poll(&cq->ibcq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 2ull);
	for (id = 4; id <= 6; id++)
		KUNIT_EXPECT_EQ(test, post(f, cq, id, false), 0);
	KUNIT_EXPECT_EQ(test, f->cq_errors, 0);
	KUNIT_EXPECT_EQ(test, post(f, cq, 7, false), -ENOSPC);
	KUNIT_EXPECT_EQ(test, post(f, cq, 8, false), -ENOSPC);
	KUNIT_EXPECT_EQ(test, f->cq_errors, 1);
	expect_ids(test, cq, 3, 4);
	/* Still in error once drained: an overrun CQ is not reusable. */
	KUNIT_EXPECT_EQ(test, post(f, cq, 9, false), -ENOSPC);
	KUNIT_EXPECT_EQ(test, f->cq_errors, 1);
	mr_cq_destroy(&cq->ibcq, NULL);
}

static void cq_notify(struct kunit *test)
{
	struct verbs_fixture *f = fixture(test);
	struct mr_cq *cq = new_cq(test, f, 16);
	struct ib_cq *ibcq = &cq->ibcq;

	KUNIT_EXPECT_EQ(test, post(f, cq, 1, true), 0);
	KUNIT_EXPECT_EQ(test, f->completions, 0);	/* not armed */
	KUNIT_EXPECT_EQ(test, mr_cq_req_notify(ibcq, IB_CQ_NEXT_COMP), 0);
	KUNIT_EXPECT_EQ(test, post(f, cq, 2, false), 0);
	KUNIT_EXPECT_EQ(test, f->completions, 1);
	KUNIT_EXPECT_EQ(test, post(f, cq, 3, false), 0);
	KUNIT_EXPECT_EQ(test, f->completions, 1);	/* one shot */

	KUNIT_EXPECT_EQ(test, mr_cq_req_notify(ibcq, IB_CQ_SOLICITED), 0);
	KUNIT_EXPECT_EQ(test, post(f, cq, 4, false), 0);
	KUNIT_EXPECT_EQ(test, f->completions, 1);
	KUNIT_EXPECT_EQ(test, post(f, cq, 5, true), 0);
	KUNIT_EXPECT_EQ(test, f->completions, 2);

	/* SOLICITED widened to NEXT_COMP, but never narrowed back. */
	mr_cq_req_notify(ibcq, IB_CQ_SOLICITED);
	mr_cq_req_notify(ibcq, IB_CQ_NEXT_COMP);
	KUNIT_EXPECT_EQ(test, post(f, cq, 6, false), 0);
	KUNIT_EXPECT_EQ(test, f->completions, 3);
	mr_cq_req_notify(ibcq, IB_CQ_NEXT_COMP);
	mr_cq_req_notify(ibcq, IB_CQ_SOLICITED);
	KUNIT_EXPECT_EQ(test, post(f, cq, 7, false), 0);
	KUNIT_EXPECT_EQ(test, f->completions, 4);

	/* Missed events: 1 while completions wait, 0 once drained. */
	KUNIT_EXPECT_EQ(test, mr_cq_req_notify(ibcq, IB_CQ_NEXT_COMP |
					       IB_CQ_REPORT_MISSED_EVENTS), 1);
	expect_ids(test, cq, 1, 7);
	KUNIT_EXPECT_EQ(test, mr_cq_req_notify(ibcq, IB_CQ_NEXT_COMP |
					       IB_CQ_REPORT_MISSED_EVENTS), 0);
	mr_cq_destroy(ibcq, NULL);
}

static void cq_resize(struct kunit *test)
{
	struct verbs_fixture *f = fixture(test);
	struct mr_cq *cq = new_cq(test, f, 4);
	struct ib_wc wc;
	u64 id;

	/* Put the head in the middle so the copy has to unwrap the ring. */
	KUNIT_EXPECT_EQ(test, post(f, cq, 100, false), 0);
	KUNIT_EXPECT_EQ(test, post(f, cq, 101, false), 0);
	KUNIT_EXPECT_EQ(test, mr_cq_poll(&cq->ibcq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, mr_cq_poll(&cq->ibcq, 1, &wc), 1);
	for (id = 1; id <= 3; id++)
		KUNIT_EXPECT_EQ(test, post(f, cq, id, false), 0);
	KUNIT_EXPECT_EQ(test, mr_cq_resize(&cq->ibcq, 2, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, mr_cq_resize(&cq->ibcq, 0, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, mr_cq_resize(&cq->ibcq, MR_MAX_CQE + 1, NULL),
			-EINVAL);
	KUNIT_ASSERT_EQ(test, mr_cq_resize(&cq->ibcq, 8, NULL), 0);
	KUNIT_EXPECT_EQ(test, cq->ibcq.cqe, 8);
	for (id = 4; id <= 8; id++)
		KUNIT_EXPECT_EQ(test, post(f, cq, id, false), 0);
	expect_ids(test, cq, 1, 8);
	KUNIT_EXPECT_EQ(test, mr_cq_resize(&cq->ibcq, 1, NULL), 0);
	mr_cq_destroy(&cq->ibcq, NULL);
}

/* A destroyed QP's completions leave the CQ; the others stay, in order. */
static void cq_clean(struct kunit *test)
{
	struct verbs_fixture *f = fixture(test);
	struct mr_cq *cq = new_cq(test, f, 4);
	struct ib_qp gone = { .device = &f->dev->ib_dev, .qp_num = 18 };
	struct ib_wc wc = { .wr_id = 50, .qp = &gone };

	/* Across the wrap: the head in the middle of the ring. */
	KUNIT_EXPECT_EQ(test, post(f, cq, 100, false), 0);
	KUNIT_EXPECT_EQ(test, post(f, cq, 101, false), 0);
	expect_ids(test, cq, 100, 2);
	KUNIT_EXPECT_EQ(test, post(f, cq, 1, false), 0);
	KUNIT_EXPECT_EQ(test, mr_cq_post(cq, &wc, false), 0);
	KUNIT_EXPECT_EQ(test, post(f, cq, 2, false), 0);
	KUNIT_EXPECT_EQ(test, mr_cq_post(cq, &wc, false), 0);
	mr_cq_clean(cq, &gone);
	expect_ids(test, cq, 1, 2);
	KUNIT_EXPECT_EQ(test, mr_cq_poll(&cq->ibcq, 1, &wc), 0);
	mr_cq_destroy(&cq->ibcq, NULL);
}

/* The DMA MR: keys, lookups, rights and bounds, copies, stale keys. */
static void mr_dma(struct kunit *test)
{
	struct verbs_fixture *f = fixture(test);
	u8 *buf = kunit_kzalloc(test, 64, GFP_KERNEL);
	u8 out[8] = {};
	struct mr_mr *mr;
	struct ib_mr *ibmr;
	u32 key;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mr_mr_get_dma(&f->pd,
						    IB_ACCESS_LOCAL_WRITE |
						    IB_ACCESS_REMOTE_READ)),
			-EOPNOTSUPP);
	ibmr = mr_mr_get_dma(&f->pd, IB_ACCESS_LOCAL_WRITE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ibmr));
	key = ibmr->lkey;
	KUNIT_EXPECT_NE(test, key >> 8, 0u);
	KUNIT_EXPECT_EQ(test, ibmr->rkey, 0u);

	KUNIT_EXPECT_NULL(test, mr_mr_get(f->dev, &f->pd, key, &any_qp));
	KUNIT_EXPECT_NULL(test, mr_mr_get(f->dev, &f->other_pd, key, NULL));
	KUNIT_EXPECT_NULL(test, mr_mr_get(f->dev, &f->pd, key ^ 1, NULL));
	KUNIT_EXPECT_EQ(test, atomic_long_read(&f->dev->mr_refused), 3);
	mr = mr_mr_get(f->dev, &f->pd, key, NULL);
	KUNIT_ASSERT_NOT_NULL(test, mr);

	KUNIT_EXPECT_EQ(test, mr_mr_copy_to(mr, (uintptr_t)buf + 5, "metaroce",
					    8, MR_ACC_LOCAL_WRITE), 0);
	KUNIT_EXPECT_EQ(test, memcmp(buf + 5, "metaroce", 8), 0);
	KUNIT_EXPECT_EQ(test, mr_mr_copy_from(mr, (uintptr_t)buf + 5, out, 8,
					      MR_ACC_LOCAL_READ), 0);
	KUNIT_EXPECT_EQ(test, memcmp(out, "metaroce", 8), 0);
	KUNIT_EXPECT_EQ(test, mr_mr_copy_from(mr, (uintptr_t)buf, out, 8,
					      MR_ACC_REMOTE_READ), -EACCES);
	KUNIT_EXPECT_EQ(test, mr_mr_copy_to(mr, U64_MAX, "x", 1,
					    MR_ACC_LOCAL_WRITE), -ERANGE);
	mr_mr_put(mr);

	KUNIT_EXPECT_EQ(test, mr_mr_dereg(ibmr, NULL), 0);
	KUNIT_EXPECT_NULL(test, mr_mr_get(f->dev, &f->pd, key, NULL));

	/* The index may come back, the key may not. */
	ibmr = mr_mr_get_dma(&f->pd, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ibmr));
	KUNIT_EXPECT_NE(test, ibmr->lkey, key);
	KUNIT_EXPECT_NULL(test, mr_mr_get(f->dev, &f->pd, key, NULL));
	KUNIT_EXPECT_EQ(test, mr_mr_dereg(ibmr, NULL), 0);
	mr_mr_dev_fini(f->dev);
}

/*
 * A fast-registration MR over two pages of a buffer: unusable until
 * REG_MR; then its key, rights and range hold, bytes land at the right
 * place across the page boundary; invalidation takes the keys away.
 */
static void mr_fast_reg(struct kunit *test)
{
	struct verbs_fixture *f = fixture(test);
	u8 *buf = kunit_kzalloc(test, 3 * PAGE_SIZE, GFP_KERNEL);
	struct scatterlist sg;
	struct ib_reg_wr wr = {};
	u8 *start, out[8] = {};
	struct ib_mr *ibmr;
	struct mr_mr *mr;
	u32 key;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mr_mr_alloc_fast(&f->pd, IB_MR_TYPE_SG_GAPS,
						       4)), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mr_mr_alloc_fast(&f->pd, IB_MR_TYPE_MEM_REG,
						       MR_MAX_FAST_REG_PAGES + 1)),
			-EINVAL);
	ibmr = mr_mr_alloc_fast(&f->pd, IB_MR_TYPE_MEM_REG, 2);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ibmr));
	key = ibmr->rkey;
	KUNIT_EXPECT_EQ(test, ibmr->lkey, key);
	KUNIT_EXPECT_NULL(test, mr_mr_get(f->dev, &f->pd, key, NULL));

	/* 100 bytes before a page boundary to 100 after it. */
	start = PTR_ALIGN(buf, PAGE_SIZE) + PAGE_SIZE - 100;
	sg_init_one(&sg, start, 200);
	sg_dma_address(&sg) = (uintptr_t)start;
	sg_dma_len(&sg) = 200;
	ibmr->page_size = PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, mr_mr_map_sg(ibmr, &sg, 1, NULL), 1);
	KUNIT_EXPECT_EQ(test, ibmr->iova, (u64)(uintptr_t)start);
	KUNIT_EXPECT_EQ(test, ibmr->length, 200ull);

	key = (key & ~0xffu) | ((key + 1) & 0xff);	/* a new variant */
	wr.mr = ibmr;
	wr.key = key;
	wr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	KUNIT_EXPECT_EQ(test, mr_mr_fast_reg(f->dev, &f->other_pd, &wr),
			-EINVAL);
	wr.key = key + 0x100;
	KUNIT_EXPECT_EQ(test, mr_mr_fast_reg(f->dev, &f->pd, &wr), -EINVAL);
	wr.key = key;
	wr.access = IB_ACCESS_REMOTE_WRITE;	/* needs local write */
	KUNIT_EXPECT_EQ(test, mr_mr_fast_reg(f->dev, &f->pd, &wr), -EINVAL);
	wr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	KUNIT_ASSERT_EQ(test, mr_mr_fast_reg(f->dev, &f->pd, &wr), 0);

	mr = mr_mr_get(f->dev, &f->pd, key, &any_qp);
	KUNIT_ASSERT_NOT_NULL(test, mr);
	KUNIT_EXPECT_EQ(test, mr_mr_copy_to(mr, ibmr->iova + 96, "metaroce",
					    8, MR_ACC_REMOTE_WRITE), 0);
	KUNIT_EXPECT_EQ(test, memcmp(start + 96, "metaroce", 8), 0);
	KUNIT_EXPECT_EQ(test, mr_mr_copy_from(mr, ibmr->iova + 96, out, 8,
					      MR_ACC_LOCAL_READ), 0);
	KUNIT_EXPECT_EQ(test, memcmp(out, "metaroce", 8), 0);
	KUNIT_EXPECT_EQ(test, mr_mr_copy_from(mr, ibmr->iova, out, 8,
					      MR_ACC_REMOTE_READ), -EACCES);
	KUNIT_EXPECT_EQ(test, mr_mr_copy_to(mr, ibmr->iova + 193, "metaroce",
					    8, MR_ACC_REMOTE_WRITE), -ERANGE);
	KUNIT_EXPECT_EQ(test, start[200], 0);
	mr_mr_put(mr);

	KUNIT_EXPECT_EQ(test, mr_mr_invalidate(f->dev, &f->other_pd, key,
					       NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, mr_mr_invalidate(f->dev, &f->pd, key, &any_qp),
			0);
	KUNIT_EXPECT_NULL(test, mr_mr_get(f->dev, &f->pd, key, &any_qp));
	KUNIT_EXPECT_NULL(test, mr_mr_get(f->dev, &f->pd, key, NULL));
	KUNIT_EXPECT_EQ(test, mr_mr_invalidate(f->dev, &f->pd, key, NULL),
			-EINVAL);

	/* Local rights only: a peer's SEND_INV cannot name it, LOCAL_INV can. */
	key = (key & ~0xffu) | ((key + 1) & 0xff);
	wr.key = key;
	wr.access = IB_ACCESS_LOCAL_WRITE;
	KUNIT_ASSERT_EQ(test, mr_mr_fast_reg(f->dev, &f->pd, &wr), 0);
	KUNIT_EXPECT_EQ(test, mr_mr_invalidate(f->dev, &f->pd, key, &any_qp),
			-EINVAL);
	mr = mr_mr_get(f->dev, &f->pd, key, NULL);
	KUNIT_EXPECT_NOT_NULL(test, mr);
	if (mr)
		mr_mr_put(mr);
	KUNIT_EXPECT_EQ(test, mr_mr_invalidate(f->dev, &f->pd, key, NULL), 0);
	KUNIT_EXPECT_EQ(test, mr_mr_dereg(ibmr, NULL), 0);
	mr_mr_dev_fini(f->dev);
}

struct invalidate_ctx {
	struct mr_dev *dev;
	struct ib_pd *pd;
	u32 key;
	int err;
	struct completion done;
};

static int invalidate_thread(void *data)
{
	struct invalidate_ctx *c = data;

	c->err = mr_mr_invalidate(c->dev, c->pd, c->key, NULL);
	complete(&c->done);
	return 0;
}

/*
 * LOCAL_INV of a fast-reg MR that a lookup holds (a packet's copy in
 * flight) completes only once that lookup is done: after it, nothing
 * reaches the pages. New lookups fail meanwhile.
 */
static void mr_fast_reg_invalidate_waits(struct kunit *test)
{
	struct verbs_fixture *f = fixture(test);
	u8 *buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	struct invalidate_ctx c = { .dev = f->dev, .pd = &f->pd };
	struct task_struct *t;
	struct scatterlist sg;
	struct ib_reg_wr wr = {};
	struct ib_mr *ibmr;
	struct mr_mr *mr;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	ibmr = mr_mr_alloc_fast(&f->pd, IB_MR_TYPE_MEM_REG, 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ibmr));
	sg_init_one(&sg, buf, 64);
	sg_dma_address(&sg) = (uintptr_t)buf;
	sg_dma_len(&sg) = 64;
	ibmr->page_size = PAGE_SIZE;
	KUNIT_ASSERT_EQ(test, mr_mr_map_sg(ibmr, &sg, 1, NULL), 1);
	c.key = (ibmr->rkey & ~0xffu) | ((ibmr->rkey + 1) & 0xff);
	wr.mr = ibmr;
	wr.key = c.key;
	wr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	KUNIT_ASSERT_EQ(test, mr_mr_fast_reg(f->dev, &f->pd, &wr), 0);

	mr = mr_mr_get(f->dev, &f->pd, c.key, &any_qp);
	KUNIT_ASSERT_NOT_NULL(test, mr);
	init_completion(&c.done);
	t = kthread_create(invalidate_thread, &c, "mr_inv_test");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	/* Elsewhere than us, as a packet's copy on another CPU would be. */
	if (num_online_cpus() > 1)
		kthread_bind(t, cpumask_any_but(cpu_online_mask,
						raw_smp_processor_id()));
	wake_up_process(t);
	KUNIT_EXPECT_FALSE(test, wait_for_completion_timeout(&c.done,
							     HZ / 5));
	KUNIT_EXPECT_NULL(test, mr_mr_get(f->dev, &f->pd, c.key, &any_qp));
	mr_mr_put(mr);
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&c.done, 5 * HZ));
	KUNIT_EXPECT_EQ(test, c.err, 0);
	KUNIT_EXPECT_EQ(test, mr_mr_dereg(ibmr, NULL), 0);
	mr_mr_dev_fini(f->dev);
}

static struct kunit_case verbs_cases[] = {
	KUNIT_CASE(cq_create_limits),
	KUNIT_CASE(cq_ring_and_overrun),
	KUNIT_CASE(cq_notify),
	KUNIT_CASE(cq_resize),
	KUNIT_CASE(cq_clean),
	KUNIT_CASE(mr_dma),
	KUNIT_CASE(mr_fast_reg),
	KUNIT_CASE(mr_fast_reg_invalidate_waits),
	{}
};

static struct kunit_suite verbs_suite = {
	.name = "metaroce_verbs",
	.test_cases = verbs_cases,
};

kunit_test_suite(verbs_suite);
