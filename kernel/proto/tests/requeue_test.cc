// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Host tests of proto/requeue.c: failed paths' rings, whose packets wait
// in order for a new PSN on another path.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

extern "C" {
#include "requeue.h"
}

namespace {

// A ring as a failed path leaves it: packet psn carries msn psn * 2.
std::unique_ptr<mr_tx_ring> Ring(const std::vector<uint32_t> &psns)
{
	auto r = std::make_unique<mr_tx_ring>();

	mr_requeue_clear(r.get());
	for (uint32_t psn : psns) {
		mr_tx_pkt &tp = r->pkt[psn % MR_SACK_WINDOW];

		tp = {};
		tp.msn = psn * 2;
		tp.offset = psn * 4096;
		mr_requeue_mark(r.get(), psn);
	}
	return r;
}

} // namespace

TEST(Requeue, Empty)
{
	mr_requeue q;

	mr_requeue_init(&q);
	EXPECT_EQ(q.count, 0u);
	EXPECT_EQ(mr_requeue_front(&q), nullptr);
	EXPECT_EQ(mr_requeue_pop(&q), nullptr); // nothing to drop
	EXPECT_EQ(mr_requeue_take(&q), nullptr);
	EXPECT_EQ(q.count, 0u);
}

// Packets come out oldest first: ring by ring, each in PSN order from its
// first marked PSN, across the wrap of the PSN space and of the ring's
// slots. A ring is handed back with its last packet.
TEST(Requeue, RingByRingInPsnOrder)
{
	const std::vector<uint32_t> a = { 0xfffffffeu, 0xffffffffu, 0, 3 };
	const std::vector<uint32_t> b = { 250, 251, 255, 256, 300 };
	auto ra = Ring(a), rb = Ring(b);
	mr_tx_ring *pa = ra.get(), *pb = rb.get();
	mr_requeue q;

	mr_requeue_init(&q);
	mr_requeue_push(&q, ra.release());
	mr_requeue_push(&q, rb.release());
	EXPECT_EQ(q.count, 9u);
	std::vector<uint32_t> want = a;
	want.insert(want.end(), b.begin(), b.end());
	for (size_t i = 0; i < want.size(); i++) {
		const mr_tx_pkt *tp = mr_requeue_front(&q);

		ASSERT_NE(tp, nullptr);
		EXPECT_EQ(tp->msn, want[i] * 2) << i;
		EXPECT_EQ(tp->offset, want[i] * 4096) << i;
		mr_tx_ring *done = mr_requeue_pop(&q);
		if (i == a.size() - 1) {
			EXPECT_EQ(done, pa);
			ra.reset(done);
		} else if (i == want.size() - 1) {
			EXPECT_EQ(done, pb);
			rb.reset(done);
		} else {
			EXPECT_EQ(done, nullptr) << i;
		}
	}
	EXPECT_EQ(q.count, 0u);
	EXPECT_EQ(mr_requeue_front(&q), nullptr);
	EXPECT_EQ(q.head, nullptr);
	EXPECT_EQ(q.tail, nullptr);
}

// A PSN marked twice moves once.
TEST(Requeue, MarkedTwiceMovesOnce)
{
	auto r = Ring({ 7, 9 });
	mr_requeue q;

	mr_requeue_mark(r.get(), 9);
	EXPECT_EQ(r->left, 2u);
	mr_requeue_init(&q);
	mr_requeue_push(&q, r.release());
	EXPECT_EQ(q.count, 2u);
	EXPECT_EQ(mr_requeue_front(&q)->msn, 14u);
	EXPECT_EQ(mr_requeue_pop(&q), nullptr);
	EXPECT_EQ(mr_requeue_front(&q)->msn, 18u);
	std::unique_ptr<mr_tx_ring> back(mr_requeue_pop(&q));
	EXPECT_NE(back, nullptr);
	EXPECT_EQ(q.count, 0u);
}

// take() empties the requeue ring by ring, whatever they still held, and
// leaves each ring clear for a path to borrow again.
TEST(Requeue, TakeGivesEveryRingBack)
{
	mr_requeue q;

	mr_requeue_init(&q);
	mr_requeue_push(&q, Ring({ 1, 2, 3 }).release());
	mr_requeue_push(&q, Ring({ 40 }).release());
	mr_requeue_pop(&q);
	EXPECT_EQ(q.count, 3u);
	std::unique_ptr<mr_tx_ring> first(mr_requeue_take(&q));
	ASSERT_NE(first, nullptr);
	EXPECT_EQ(first->left, 0u);
	for (uint64_t w : first->moving)
		EXPECT_EQ(w, 0u);
	EXPECT_EQ(q.count, 1u);
	std::unique_ptr<mr_tx_ring> second(mr_requeue_take(&q));
	ASSERT_NE(second, nullptr);
	EXPECT_EQ(q.count, 0u);
	EXPECT_EQ(mr_requeue_take(&q), nullptr);
	EXPECT_EQ(q.tail, nullptr);
}
