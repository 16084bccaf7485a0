// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Host tests of proto/sack.c: receiver window, sender scoreboard, and the
// two together over a lossy path.
#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <vector>

extern "C" {
#include "sack.h"
}

namespace {

const uint32_t kStarts[] = { 0, 1000, 0xffffff00, 0xfffffff0, 0x7fffff80 };

bool Bit(const u64 *map, uint32_t i)
{
	return mr_sack_res_test(map, i);
}

void SetBit(u64 *map, uint32_t i)
{
	map[i / 64] |= 1ull << (i % 64);
}

mr_ack_hdr Ack(const mr_sack_rx &rx)
{
	mr_ack_hdr a{};

	mr_sack_rx_fill_ack(&rx, &a);
	return a;
}

std::vector<uint32_t> Members(const u64 *map, uint32_t base)
{
	std::vector<uint32_t> v;

	for (uint32_t i = 0; i < MR_SACK_WINDOW; i++)
		if (Bit(map, i))
			v.push_back(base + i);
	return v;
}

} // namespace

TEST(SackRx, InOrder)
{
	for (uint32_t s : kStarts) {
		mr_sack_rx rx;

		mr_sack_rx_init(&rx, s);
		for (uint32_t i = 0; i < 1000; i++)
			ASSERT_EQ(mr_sack_rx_record(&rx, 0, s + i), MR_SACK_NEW);
		mr_ack_hdr a = Ack(rx);

		EXPECT_EQ(a.cum_psn, s + 1000);
		for (auto w : a.sack)
			EXPECT_EQ(w, 0u);
	}
}

TEST(SackRx, DuplicatesAndOld)
{
	for (uint32_t s : kStarts) {
		mr_sack_rx rx;

		mr_sack_rx_init(&rx, s);
		EXPECT_EQ(mr_sack_rx_record(&rx, 0, s), MR_SACK_NEW);
		EXPECT_EQ(mr_sack_rx_record(&rx, 0, s), MR_SACK_DUP);
		EXPECT_EQ(mr_sack_rx_record(&rx, 0, s - 1), MR_SACK_DUP);
		EXPECT_EQ(mr_sack_rx_record(&rx, 0, s + 5), MR_SACK_NEW);
		EXPECT_EQ(mr_sack_rx_record(&rx, 0, s + 5), MR_SACK_DUP);
		EXPECT_EQ(mr_sack_rx_record(&rx, 0, s - 0x7fffffff),
			  MR_SACK_DUP);
		EXPECT_EQ(Ack(rx).cum_psn, s + 1);
	}
}

TEST(SackRx, ReorderFillsTheMap)
{
	for (uint32_t s : kStarts) {
		mr_sack_rx rx;

		mr_sack_rx_init(&rx, s);
		EXPECT_EQ(mr_sack_rx_record(&rx, 0, s + 1), MR_SACK_NEW);
		EXPECT_EQ(mr_sack_rx_record(&rx, 0, s + 3), MR_SACK_NEW);
		mr_ack_hdr a = Ack(rx);

		EXPECT_EQ(a.cum_psn, s);
		EXPECT_EQ(a.sack[0], 0xaull); // bits 1 and 3
		EXPECT_EQ(mr_sack_rx_record(&rx, 0, s), MR_SACK_NEW);
		a = Ack(rx);
		EXPECT_EQ(a.cum_psn, s + 2);
		EXPECT_EQ(a.sack[0], 0x2ull); // s + 3 is now bit 1
		EXPECT_EQ(mr_sack_rx_record(&rx, 0, s + 2), MR_SACK_NEW);
		a = Ack(rx);
		EXPECT_EQ(a.cum_psn, s + 4);
		EXPECT_EQ(a.sack[0], 0u);
	}
}

TEST(SackRx, WindowEdge)
{
	for (uint32_t s : kStarts) {
		mr_sack_rx rx;

		mr_sack_rx_init(&rx, s);
		EXPECT_EQ(mr_sack_rx_record(&rx, 0, s + 256), MR_SACK_BEYOND);
		EXPECT_EQ(mr_sack_rx_record(&rx, 0, s + 0x7fffffff),
			  MR_SACK_BEYOND);
		for (uint32_t i = 255; i >= 1; i--)
			ASSERT_EQ(mr_sack_rx_record(&rx, 0, s + i), MR_SACK_NEW);
		mr_ack_hdr a = Ack(rx);

		EXPECT_EQ(a.cum_psn, s);
		EXPECT_EQ(a.sack[0], ~1ull);
		EXPECT_EQ(a.sack[1], ~0ull);
		EXPECT_EQ(a.sack[2], ~0ull);
		EXPECT_EQ(a.sack[3], ~0ull);
		EXPECT_EQ(mr_sack_rx_record(&rx, 0, s + 256), MR_SACK_BEYOND);
		EXPECT_EQ(mr_sack_rx_record(&rx, 0, s), MR_SACK_NEW);
		a = Ack(rx);
		EXPECT_EQ(a.cum_psn, s + 256);
		for (auto w : a.sack)
			EXPECT_EQ(w, 0u);
		// The slots just freed belong to the next 256 PSNs now.
		EXPECT_EQ(mr_sack_rx_record(&rx, 0, s + 511), MR_SACK_NEW);
		EXPECT_EQ(mr_sack_rx_record(&rx, 0, s + 512), MR_SACK_BEYOND);
		EXPECT_EQ(Ack(rx).sack[3], 1ull << 63);
	}
}

// mr_sack_rx_fresh() says what mr_sack_rx_record() will, and changes
// nothing: over random arrivals, epochs and PSNs near and far.
TEST(SackRx, FreshPredictsRecord)
{
	std::mt19937 rng(7);
	for (uint32_t s : kStarts) {
		mr_sack_rx rx;

		mr_sack_rx_init(&rx, s);
		for (int i = 0; i < 20000; i++) {
			u16 epoch = static_cast<u16>(rx.epoch + (rng() % 50 == 0) -
						     (rng() % 50 == 0));
			u32 psn = rx.cum + rng() % 300 - 20;
			if (epoch != rx.epoch && rng() % 2)
				psn = rng() % 300;
			mr_sack_rx before = rx;
			bool fresh = mr_sack_rx_fresh(&rx, epoch, psn);
			ASSERT_EQ(std::memcmp(&before, &rx, sizeof(rx)), 0);
			ASSERT_EQ(fresh, mr_sack_rx_record(&rx, epoch, psn) ==
						 MR_SACK_NEW)
			    << "epoch " << epoch << " psn " << psn;
		}
	}
}

TEST(SackRx, EpochsRestartTheWindow)
{
	mr_sack_rx rx;

	mr_sack_rx_init(&rx, 100);
	for (uint32_t i = 0; i < 50; i++)
		mr_sack_rx_record(&rx, 0, 100 + i);
	EXPECT_EQ(mr_sack_rx_record(&rx, 0, 200), MR_SACK_NEW);
	// Epoch 1 starts at 0, whatever epoch 0 had.
	EXPECT_EQ(mr_sack_rx_record(&rx, 1, 1), MR_SACK_NEW);
	mr_ack_hdr a = Ack(rx);

	EXPECT_EQ(rx.epoch, 1);
	EXPECT_EQ(a.cum_psn, 0u);
	EXPECT_EQ(a.sack[0], 0x2u);
	EXPECT_EQ(mr_sack_rx_record(&rx, 0, 100), MR_SACK_STALE);
	EXPECT_EQ(mr_sack_rx_record(&rx, 1, 0), MR_SACK_NEW);
	EXPECT_EQ(Ack(rx).cum_psn, 2u);
	EXPECT_EQ(mr_sack_rx_record(&rx, 1, 300), MR_SACK_BEYOND);

	// Epochs wrap: 0 follows 0xffff.
	mr_sack_rx_reset(&rx, 0xffff);
	EXPECT_EQ(mr_sack_rx_record(&rx, 0xfffe, 100), MR_SACK_STALE);
	EXPECT_EQ(mr_sack_rx_record(&rx, 0, 100), MR_SACK_NEW);
	EXPECT_EQ(rx.epoch, 0);
	EXPECT_EQ(mr_sack_rx_record(&rx, 0xffff, 101), MR_SACK_STALE);
	EXPECT_EQ(mr_sack_rx_record(&rx, 0x7fff, 100), MR_SACK_NEW);
	EXPECT_EQ(mr_sack_rx_record(&rx, 0, 100), MR_SACK_STALE);
}

// The ACK map against a plain set, for every rotation of the ring.
TEST(SackRx, MapMatchesModel)
{
	std::mt19937 rng(3);

	for (int round = 0; round < 300; round++) {
		uint32_t s = rng();
		mr_sack_rx rx;
		std::set<uint32_t> got; // offsets from s
		uint32_t cum = 0;

		mr_sack_rx_init(&rx, s);
		for (int i = 0; i < 2000; i++) {
			uint32_t off = cum + rng() % 300;
			auto res = mr_sack_rx_record(&rx, 0, s + off);

			if (off - cum >= 256) {
				ASSERT_EQ(res, MR_SACK_BEYOND);
				continue;
			}
			ASSERT_EQ(res, got.count(off) ? MR_SACK_DUP :
							MR_SACK_NEW);
			got.insert(off);
			while (got.count(cum))
				cum++;
			mr_ack_hdr a = Ack(rx);

			ASSERT_EQ(a.cum_psn, s + cum);
			for (uint32_t b = 0; b < 256; b++)
				ASSERT_EQ(Bit(a.sack, b), got.count(cum + b) > 0)
					<< "bit " << b;
		}
	}
}

class SackTx : public ::testing::TestWithParam<uint32_t> {
protected:
	void SetUp() override
	{
		s_ = GetParam();
		mr_sack_tx_init(&tx_, s_, mark_);
	}

	void Send(uint32_t n)
	{
		for (uint32_t i = 0; i < n; i++) {
			uint32_t psn;

			ASSERT_EQ(mr_sack_tx_send(&tx_, &psn), 0);
		}
	}

	// An ACK with cumulative PSN s + cum and SACK bits at s + each of
	// @have (offsets from s).
	int AckOf(uint32_t cum, std::vector<uint32_t> have, uint16_t epoch = 0)
	{
		u64 map[MR_SACK_WORDS] = {};

		for (uint32_t h : have)
			SetBit(map, h - cum);
		return mr_sack_tx_ack(&tx_, epoch, s_ + cum, map, &res_);
	}

	std::vector<uint32_t> Lost() { return Offsets(res_.lost); }
	std::vector<uint32_t> Acked() { return Offsets(res_.acked); }

	std::vector<uint32_t> Offsets(const u64 *map)
	{
		std::vector<uint32_t> v;

		for (uint32_t p : Members(map, res_.base))
			v.push_back(p - s_);
		return v;
	}

	uint32_t s_;
	uint16_t mark_[MR_SACK_WINDOW];
	mr_sack_tx tx_;
	mr_sack_res res_;
};

using V = std::vector<uint32_t>;

TEST_P(SackTx, SendUntilFull)
{
	uint32_t psn;

	for (uint32_t i = 0; i < MR_SACK_WINDOW; i++) {
		ASSERT_EQ(mr_sack_tx_room(&tx_), MR_SACK_WINDOW - i);
		ASSERT_EQ(mr_sack_tx_send(&tx_, &psn), 0);
		ASSERT_EQ(psn, s_ + i);
	}
	EXPECT_EQ(mr_sack_tx_send(&tx_, &psn), -MR_ENOSPC);
	EXPECT_EQ(mr_sack_tx_pipe(&tx_), 256u);
	EXPECT_EQ(AckOf(10, {}), 0);
	EXPECT_EQ(res_.n_acked, 10u);
	EXPECT_EQ(Acked(), V({ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 }));
	EXPECT_EQ(mr_sack_tx_room(&tx_), 10u);
	EXPECT_EQ(mr_sack_tx_send(&tx_, &psn), 0);
	EXPECT_EQ(psn, s_ + 256);
	EXPECT_EQ(AckOf(10, { 255, 256 }), 0); // the last bit of the map
	EXPECT_EQ(Acked(), V({ 255, 256 }));
	EXPECT_EQ(res_.n_lost, 245u);
}

TEST_P(SackTx, GapIsLossReportedOnce)
{
	Send(10);
	EXPECT_EQ(AckOf(0, { 2 }), 0);
	EXPECT_EQ(Acked(), V({ 2 }));
	EXPECT_EQ(Lost(), V({ 0, 1 }));
	EXPECT_EQ(mr_sack_tx_pipe(&tx_), 7u);
	EXPECT_EQ(AckOf(0, { 2 }), 0); // the same ACK again
	EXPECT_EQ(res_.n_acked, 0u);
	EXPECT_EQ(res_.n_lost, 0u);
	EXPECT_EQ(AckOf(0, { 2, 3, 5 }), 0);
	EXPECT_EQ(Acked(), V({ 3, 5 }));
	EXPECT_EQ(Lost(), V({ 4 }));
	EXPECT_EQ(tx_.n_lost, 3u);
	EXPECT_EQ(mr_sack_tx_pipe(&tx_), 10u - 3 - 3);
}

TEST_P(SackTx, ResendReArmsLoss)
{
	Send(10);
	ASSERT_EQ(AckOf(0, { 2 }), 0);
	ASSERT_EQ(Lost(), V({ 0, 1 }));
	ASSERT_EQ(mr_sack_tx_resend(&tx_, s_ + 0), 0);
	EXPECT_EQ(tx_.n_lost, 1u);
	// PSNs sent before the resend arriving say nothing about it.
	EXPECT_EQ(AckOf(0, { 2, 3, 9 }), 0);
	EXPECT_EQ(Lost(), V({ 4, 5, 6, 7, 8 }));
	// One sent after it does: the resend is lost too. 1 was reported
	// already and not resent, so it is not reported again.
	Send(1);
	EXPECT_EQ(AckOf(0, { 2, 3, 9, 10 }), 0);
	EXPECT_EQ(Lost(), V({ 0 }));
	ASSERT_EQ(mr_sack_tx_resend(&tx_, s_ + 0), 0);
	ASSERT_EQ(mr_sack_tx_resend(&tx_, s_ + 1), 0);
	EXPECT_EQ(AckOf(2, { 3, 9, 10 }), 0);
	EXPECT_EQ(Acked(), V({ 0, 1 }));
	// Both were resent: their RTT is ambiguous.
	EXPECT_EQ(Offsets(res_.ambiguous), V({ 0, 1 }));
	EXPECT_EQ(res_.n_lost, 0u);
}

TEST_P(SackTx, LateArrivalOfALostPacket)
{
	Send(4);
	ASSERT_EQ(AckOf(0, { 1, 2, 3 }), 0);
	ASSERT_EQ(Lost(), V({ 0 }));
	// It was only late: it arrives before being resent.
	EXPECT_EQ(AckOf(4, {}), 0);
	EXPECT_EQ(Acked(), V({ 0 }));
	EXPECT_EQ(Offsets(res_.ambiguous), V());
	EXPECT_EQ(tx_.n_lost, 0u);
	EXPECT_EQ(tx_.n_sacked, 0u);
	EXPECT_EQ(mr_sack_tx_pipe(&tx_), 0u);
	EXPECT_EQ(mr_sack_tx_resend(&tx_, s_ + 0), -MR_EFIELD);
}

// A host that reorders one path's packets (two CPUs sending into per-CPU
// queues) makes a gap resend needless: after that, a loss takes twice as
// many later arrivals, new packets and resends alike, up to the cap.
TEST_P(SackTx, ReorderingRaisesTheArrivalsALossTakes)
{
	EXPECT_EQ(tx_.reorder, 1u);
	mr_sack_tx_reordered(&tx_);
	ASSERT_EQ(tx_.reorder, 2u);
	Send(6);
	ASSERT_EQ(AckOf(0, { 1 }), 0);
	EXPECT_EQ(Lost(), V()); // one later arrival: maybe late
	ASSERT_EQ(AckOf(0, { 1, 2 }), 0);
	EXPECT_EQ(Lost(), V({ 0 }));
	// Resent: two PSNs sent after it must arrive, not one.
	ASSERT_EQ(mr_sack_tx_resend(&tx_, s_ + 0), 0);
	Send(2);
	ASSERT_EQ(AckOf(0, { 1, 2, 3, 4, 5, 6 }), 0);
	EXPECT_EQ(Lost(), V());
	ASSERT_EQ(AckOf(0, { 1, 2, 3, 4, 5, 6, 7 }), 0);
	EXPECT_EQ(Lost(), V({ 0 }));
	for (int i = 0; i < 10; i++)
		mr_sack_tx_reordered(&tx_);
	EXPECT_EQ(tx_.reorder, MR_SACK_REORDER_MAX);
	// A new epoch keeps it.
	mr_sack_tx_reset(&tx_, 1);
	EXPECT_EQ(tx_.reorder, MR_SACK_REORDER_MAX);
}

// Ring slots are reused 256 PSNs later: nothing of the old PSN remains.
TEST_P(SackTx, SlotReuseStartsClean)
{
	Send(4);
	ASSERT_EQ(AckOf(0, { 1, 2, 3 }), 0);
	ASSERT_EQ(Lost(), V({ 0 }));
	ASSERT_EQ(mr_sack_tx_resend(&tx_, s_ + 0), 0);
	ASSERT_EQ(AckOf(4, {}), 0);
	ASSERT_EQ(Offsets(res_.ambiguous), V({ 0 }));
	Send(256); // PSNs 4..259: 256 reuses slot 0
	ASSERT_EQ(AckOf(4, { 6, 256 }), 0);
	EXPECT_EQ(Acked(), V({ 6, 256 }));
	EXPECT_EQ(Offsets(res_.ambiguous), V());
	EXPECT_EQ(res_.n_lost, 251u); // 4..255 but 6
	ASSERT_EQ(AckOf(260, {}), 0);
	EXPECT_EQ(Offsets(res_.ambiguous), V());
	EXPECT_EQ(tx_.n_lost, 0u);
	EXPECT_EQ(tx_.n_sacked, 0u);
}

TEST_P(SackTx, TimeoutLosesTheRestOnce)
{
	Send(6);
	ASSERT_EQ(AckOf(1, { 3 }), 0);
	ASSERT_EQ(Lost(), V({ 1, 2 }));
	mr_sack_tx_timeout(&tx_, &res_);
	EXPECT_EQ(res_.base, s_ + 1);
	EXPECT_EQ(Lost(), V({ 4, 5 }));
	EXPECT_EQ(mr_sack_tx_pipe(&tx_), 0u);
	mr_sack_tx_timeout(&tx_, &res_);
	EXPECT_EQ(res_.n_lost, 0u);
	ASSERT_EQ(mr_sack_tx_resend(&tx_, s_ + 5), 0);
	EXPECT_EQ(mr_sack_tx_pipe(&tx_), 1u);
	mr_sack_tx_timeout(&tx_, &res_);
	EXPECT_EQ(Lost(), V({ 5 }));
}

TEST_P(SackTx, BadAndStaleAcksChangeNothing)
{
	u64 map[MR_SACK_WORDS] = {};

	Send(10);
	ASSERT_EQ(AckOf(3, { 5 }), 0);
	mr_sack_tx before = tx_;
	auto same = [&]() {
		return tx_.una == before.una && tx_.nxt == before.nxt &&
		       tx_.high == before.high &&
		       tx_.n_sacked == before.n_sacked &&
		       tx_.n_lost == before.n_lost &&
		       !memcmp(tx_.sacked, before.sacked, sizeof(map)) &&
		       !memcmp(tx_.lost, before.lost, sizeof(map));
	};

	EXPECT_EQ(AckOf(3, { 5 }, 1), -MR_ESTALE); // another epoch
	EXPECT_TRUE(same());
	EXPECT_EQ(AckOf(2, { 5 }), -MR_ESTALE); // older than una
	EXPECT_TRUE(same());
	EXPECT_EQ(AckOf(11, {}), -MR_EFIELD); // acks what was never sent
	EXPECT_TRUE(same());
	EXPECT_EQ(AckOf(3, { 10 }), -MR_EFIELD); // SACKs the unsent
	EXPECT_TRUE(same());
	map[0] = 1; // bit 0: cum arrived, which contradicts cum
	EXPECT_EQ(mr_sack_tx_ack(&tx_, 0, s_ + 3, map, &res_), -MR_EFIELD);
	EXPECT_TRUE(same());
	EXPECT_EQ(res_.n_acked + res_.n_lost, 0u);
	EXPECT_EQ(AckOf(10, {}), 0); // everything: fine
	EXPECT_EQ(Acked(), V({ 3, 4, 6, 7, 8, 9 }));
}

TEST_P(SackTx, ResendChecks)
{
	Send(3);
	ASSERT_EQ(AckOf(0, { 1 }), 0);
	EXPECT_EQ(mr_sack_tx_resend(&tx_, s_ + 1), -MR_ESTALE);
	EXPECT_EQ(mr_sack_tx_resend(&tx_, s_ + 3), -MR_EFIELD);
	EXPECT_EQ(mr_sack_tx_resend(&tx_, s_ - 1), -MR_EFIELD);
	EXPECT_EQ(mr_sack_tx_resend(&tx_, s_ + 2), 0); // not lost: allowed
}

// Failover: walk what the receiver lacks, then start a new epoch.
TEST_P(SackTx, MoveUnackedThenReset)
{
	V moved;

	Send(8);
	ASSERT_EQ(AckOf(2, { 4, 6 }), 0);
	for (uint32_t psn = tx_.una; mr_sack_tx_next_unacked(&tx_, &psn);
	     psn++)
		moved.push_back(psn - s_);
	EXPECT_EQ(moved, V({ 2, 3, 5, 7 }));
	uint32_t psn = s_ + 6;

	ASSERT_TRUE(mr_sack_tx_next_unacked(&tx_, &psn));
	EXPECT_EQ(psn, s_ + 7);
	psn = s_; // before una: starts at una
	ASSERT_TRUE(mr_sack_tx_next_unacked(&tx_, &psn));
	EXPECT_EQ(psn, s_ + 2);
	psn = s_ + 8;
	EXPECT_FALSE(mr_sack_tx_next_unacked(&tx_, &psn));

	// Epoch 1 starts at PSN 0, whatever the agreed start was.
	mr_sack_tx_reset(&tx_, 1);
	psn = tx_.una;
	EXPECT_FALSE(mr_sack_tx_next_unacked(&tx_, &psn));
	EXPECT_EQ(tx_.una, 0u);
	EXPECT_EQ(mr_sack_tx_room(&tx_), 256u);
	EXPECT_EQ(AckOf(0, {}, 0), -MR_ESTALE); // the old epoch's ACKs
	uint32_t sent;
	ASSERT_EQ(mr_sack_tx_send(&tx_, &sent), 0);
	EXPECT_EQ(sent, 0u);
	u64 none[MR_SACK_WORDS] = {};
	EXPECT_EQ(mr_sack_tx_ack(&tx_, 1, 1, none, &res_), 0);
	EXPECT_EQ(Members(res_.acked, res_.base), V({ 0 }));
}

INSTANTIATE_TEST_SUITE_P(Starts, SackTx, ::testing::ValuesIn(kStarts));

// Sender and receiver over one path that drops data and ACKs but never
// reorders. Every loss reported must be real, and reported once per
// transmission; everything arrives exactly once.
TEST(SackPath, LossyLinkDeliversEverything)
{
	for (uint32_t s : kStarts) {
		for (int pct : { 0, 1, 10, 30 }) {
			std::mt19937 rng(s ^ pct);
			const uint32_t total = 20000;
			uint16_t mark[MR_SACK_WINDOW];
			mr_sack_tx tx;
			mr_sack_rx rx;
			std::map<uint32_t, bool> dropped; // last send dropped
			std::set<uint32_t> reported, delivered;
			std::deque<uint32_t> to_resend;
			uint32_t sent = 0;
			int rounds = 0;

			mr_sack_tx_init(&tx, s, mark);
			mr_sack_rx_init(&rx, s);
			while (tx.una != s + total) {
				ASSERT_LT(++rounds, 100000);
				std::vector<uint32_t> wire;
				std::vector<mr_ack_hdr> acks;

				while (!to_resend.empty()) {
					uint32_t p = to_resend.front();

					to_resend.pop_front();
					if (mr_sack_tx_resend(&tx, p))
						continue; // acked meanwhile
					reported.erase(p);
					wire.push_back(p);
				}
				for (int n = 0; n < 32 && sent < total; n++) {
					uint32_t p;

					if (mr_sack_tx_send(&tx, &p))
						break;
					ASSERT_EQ(p, s + sent);
					sent++;
					wire.push_back(p);
				}
				for (uint32_t p : wire) {
					dropped[p] = rng() % 100 < (unsigned)pct;
					if (dropped[p])
						continue;
					auto r = mr_sack_rx_record(&rx, 0, p);

					if (r == MR_SACK_NEW) {
						ASSERT_TRUE(delivered.insert(p)
								    .second);
					}
					ASSERT_NE(r, MR_SACK_BEYOND);
					if (rng() % 100 >= (unsigned)pct)
						acks.push_back(Ack(rx));
				}
				bool progress = false;

				for (const mr_ack_hdr &a : acks) {
					mr_sack_res res;

					ASSERT_EQ(mr_sack_tx_ack(&tx, 0, a.cum_psn,
								 a.sack, &res),
						  0);
					progress |= res.n_acked > 0;
					for (uint32_t p :
					     Members(res.lost, res.base)) {
						ASSERT_TRUE(dropped[p]) << p;
						ASSERT_TRUE(reported.insert(p)
								    .second);
						to_resend.push_back(p);
					}
				}
				if (!progress && to_resend.empty() &&
				    tx.una != tx.nxt) {
					mr_sack_res res;

					mr_sack_tx_timeout(&tx, &res);
					for (uint32_t p :
					     Members(res.lost, res.base)) {
						ASSERT_TRUE(reported.insert(p)
								    .second);
						to_resend.push_back(p);
					}
				}
				ASSERT_EQ(tx.n_lost, reported.size());
			}
			EXPECT_EQ(delivered.size(), total);
			EXPECT_EQ(Ack(rx).cum_psn, s + total);
		}
	}
}
