// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Host tests of proto/requeue.c: the FIFO of packets moved off failed paths.
#include <gtest/gtest.h>

#include <vector>

extern "C" {
#include "requeue.h"
}

namespace {

mr_requeue Entry(uint32_t msn, uint32_t offset = 0)
{
	mr_requeue e{};

	e.msn = msn;
	e.offset = offset;
	e.gen = msn * 3;
	e.resp = msn & 1;
	return e;
}

} // namespace

TEST(Requeue, Slots)
{
	EXPECT_EQ(mr_requeue_slots(1), (uint32_t)MR_SACK_WINDOW);
	EXPECT_EQ(mr_requeue_slots(16), 16u * MR_SACK_WINDOW);
}

TEST(Requeue, Empty)
{
	mr_requeue slot[4];
	mr_requeue_ring q;

	mr_requeue_init(&q, slot, 4);
	EXPECT_EQ(q.count, 0u);
	EXPECT_EQ(mr_requeue_front(&q), nullptr);
	mr_requeue_pop(&q); // nothing to drop
	EXPECT_EQ(q.count, 0u);
	EXPECT_EQ(mr_requeue_front(&q), nullptr);
}

TEST(Requeue, FullThenFifo)
{
	mr_requeue slot[4];
	mr_requeue_ring q;

	mr_requeue_init(&q, slot, 4);
	for (uint32_t i = 0; i < 4; i++) {
		mr_requeue e = Entry(i, 4096 * i);

		EXPECT_EQ(mr_requeue_push(&q, &e), 0);
	}
	mr_requeue extra = Entry(99);
	EXPECT_EQ(mr_requeue_push(&q, &extra), -MR_ENOSPC);
	EXPECT_EQ(q.count, 4u);
	for (uint32_t i = 0; i < 4; i++) {
		const mr_requeue *e = mr_requeue_front(&q);

		ASSERT_NE(e, nullptr);
		EXPECT_EQ(e->msn, i);
		EXPECT_EQ(e->offset, 4096 * i);
		EXPECT_EQ(e->gen, i * 3);
		EXPECT_EQ(e->resp, (bool)(i & 1));
		mr_requeue_pop(&q);
	}
	EXPECT_EQ(mr_requeue_front(&q), nullptr);
}

// Pushes and pops that wrap the ring many times keep the order, and a
// reset empties it from any position.
TEST(Requeue, Wraparound)
{
	mr_requeue slot[5];
	mr_requeue_ring q;
	uint32_t next = 0xfffffff0u, want = next;

	mr_requeue_init(&q, slot, 5);
	for (int round = 0; round < 40; round++) {
		for (int i = 0; i < 3; i++) {
			mr_requeue e = Entry(next++);

			ASSERT_EQ(mr_requeue_push(&q, &e), 0);
		}
		for (int i = 0; i < 3; i++) {
			ASSERT_NE(mr_requeue_front(&q), nullptr);
			EXPECT_EQ(mr_requeue_front(&q)->msn, want++);
			mr_requeue_pop(&q);
		}
	}
	EXPECT_EQ(q.count, 0u);
	mr_requeue a = Entry(1), b = Entry(2);
	ASSERT_EQ(mr_requeue_push(&q, &a), 0);
	mr_requeue_reset(&q);
	EXPECT_EQ(mr_requeue_front(&q), nullptr);
	ASSERT_EQ(mr_requeue_push(&q, &b), 0);
	EXPECT_EQ(mr_requeue_front(&q)->msn, 2u);
}
