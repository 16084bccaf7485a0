/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the KUnit suites of the verbs (verbs_kunit.c, qp_kunit.c) share: a
 * device that is allocated but never registered, CQs on it, and polling a
 * CQ for completions in post order. Everything is freed with the test.
 */
#ifndef METAROCE_TESTS_VERBS_FIXTURE_H
#define METAROCE_TESTS_VERBS_FIXTURE_H

#include <kunit/test.h>

#include "../counters.h"
#include "../cq.h"

/* The most completions mr_test_poll_ids() polls at once. */
#define MR_TEST_MAX_WC 8

static inline struct mr_dev *mr_test_dev(struct kunit *test)
{
	struct mr_dev *dev = kunit_kzalloc(test, sizeof(*dev), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, dev);
	return dev;
}

/* The summed counter @i of @dev (its stats from mr_counters_init()). */
static inline u64 mr_test_stat(struct mr_dev *dev, enum mr_counter i)
{
	u64 v[MR_NUM_COUNTERS];

	mr_counters_sum(dev, v);
	return v[i];
}

/* A CQ of @cqe entries on @dev; @comp and @event, if set, get @ctx. */
static inline struct mr_cq *
mr_test_cq(struct kunit *test, struct mr_dev *dev, int cqe,
	   ib_comp_handler comp, void (*event)(struct ib_event *, void *),
	   void *ctx)
{
	struct ib_cq_init_attr attr = { .cqe = cqe };
	struct mr_cq *cq = kunit_kzalloc(test, sizeof(*cq), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, cq);
	cq->ibcq.device = &dev->ib_dev;
	cq->ibcq.comp_handler = comp;
	cq->ibcq.event_handler = event;
	cq->ibcq.cq_context = ctx;
	KUNIT_ASSERT_EQ(test, mr_cq_create(&cq->ibcq, &attr, NULL), 0);
	return cq;
}

/*
 * Polls @cq into @wc (MR_TEST_MAX_WC entries): exactly @n completions,
 * with wr_ids @first, @first + 1, ... in that order.
 */
static inline void mr_test_poll_ids(struct kunit *test, struct mr_cq *cq,
				    struct ib_wc *wc, u64 first, int n)
{
	int i;

	KUNIT_ASSERT_EQ(test, mr_cq_poll(&cq->ibcq, MR_TEST_MAX_WC, wc), n);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ(test, wc[i].wr_id, first + i);
}

#endif /* METAROCE_TESTS_VERBS_FIXTURE_H */
