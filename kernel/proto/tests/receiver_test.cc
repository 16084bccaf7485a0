// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The receiver engine (receiver.c) alone: which packet draws an ACK and
// when, what the ACK carries, the CE count's rule and the NAKs. Each test
// names the rule of protocol.rst ("Acknowledgments", "Signals") it checks.
// The engine's environment is defined here, once for the engine tests.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <vector>

#include "receiver_host.hh"
#include "sender.h"

namespace
{

constexpr uint16_t kPort = 50000;
constexpr uint64_t kDelay = 200000;

class Receiver : public ReceiverSink
{
public:
	Receiver()
	{
		host.sink = this;
		mr_receiver_start(R(), 100);
	}

	mr_receiver *R() { return &host.r; }

	// A data packet of path @id arrives; the host's coalescing call
	// follows, as the responder makes it, unless the packet completes a
	// message (then every path is acknowledged).
	mr_sack_rx_res Data(uint32_t id, uint32_t psn, uint16_t epoch = 0,
			    bool ce = false, bool completes = false,
			    uint8_t flags = 0)
	{
		mr_pkt pkt{};
		pkt.base.opcode = MR_OP_WRITE;
		pkt.base.flags = flags;
		pkt.base.path = static_cast<u8>(id);
		pkt.base.epoch = epoch;
		pkt.base.psn = psn;
		bool at_once = false;
		mr_sack_rx_res res = mr_receiver_arrival(
		    R(), &pkt, static_cast<u16>(kPort + id), ce, &at_once);
		if (res != MR_SACK_NEW)
			return res;
		if (completes)
			mr_receiver_ack_all(R(), now);
		else
			mr_receiver_coalesce(R(), id, psn, at_once, now);
		return res;
	}

	void ReceiverSend(const mr_pkt &pkt, uint16_t sport) override
	{
		sent.push_back(pkt);
		ports.push_back(sport);
	}
	uint32_t ReceiverMsnDone() override { return msn_done; }
	uint32_t ReceiverHint() override { return hint; }
	uint64_t ReceiverAckDelay() override { return kDelay; }
	void ReceiverEvent(mr_receiver_event ev, uint32_t arg) override
	{
		events[ev] += arg ? arg : 1;
	}

	ReceiverHost host{};
	std::vector<mr_pkt> sent;
	std::vector<uint16_t> ports;
	std::map<int, uint64_t> events;
	uint64_t now = 1000;
	uint32_t msn_done = 7, hint = 0;
};

// A path's first packet is acknowledged at once; in-order packets after
// it every MR_ACK_EVERY; the ACK goes to the packet's source port and
// carries the window, MSN done and the hint.
TEST(ReceiverEngine, FirstAtOnceThenEveryFour)
{
	Receiver rx;
	rx.hint = 12345;
	rx.Data(3, 100);
	ASSERT_EQ(rx.sent.size(), 1u);
	const mr_pkt &a = rx.sent[0];
	EXPECT_EQ(a.base.opcode, MR_OP_ACK);
	EXPECT_EQ(a.base.path, 3);
	EXPECT_EQ(a.base.psn, 100u);
	EXPECT_EQ(a.ack.cum_psn, 101u);
	EXPECT_EQ(a.ack.msn_done, 7u);
	EXPECT_EQ(a.ack.rate_hint, 12345u);
	EXPECT_EQ(rx.ports[0], kPort + 3);
	for (uint32_t psn = 101; psn < 101 + MR_ACK_EVERY - 1; psn++)
		rx.Data(3, psn);
	EXPECT_EQ(rx.sent.size(), 1u) << "held below MR_ACK_EVERY";
	rx.Data(3, 101 + MR_ACK_EVERY - 1);
	ASSERT_EQ(rx.sent.size(), 2u);
	EXPECT_EQ(rx.sent[1].ack.cum_psn, 101u + MR_ACK_EVERY);
}

// A held ACK goes when the delay runs out, not before; nothing else is
// held after it.
TEST(ReceiverEngine, HeldAckGoesAtTheDelay)
{
	Receiver rx;
	rx.Data(0, 100);
	rx.Data(0, 101);
	ASSERT_EQ(rx.sent.size(), 1u);
	EXPECT_EQ(mr_receiver_expiry(rx.R()), rx.now + kDelay);
	mr_receiver_timeout(rx.R(), rx.now + kDelay - 1);
	EXPECT_EQ(rx.sent.size(), 1u);
	mr_receiver_timeout(rx.R(), rx.now + kDelay);
	ASSERT_EQ(rx.sent.size(), 2u);
	EXPECT_EQ(rx.sent[1].base.psn, 101u);
	EXPECT_EQ(rx.sent[1].ack.cum_psn, 102u);
	EXPECT_EQ(mr_receiver_expiry(rx.R()), 0u);
}

// ACK_REQ, a packet that leaves a new hole and one that fills it go at
// once; one that follows the previous arrival past a known hole waits.
TEST(ReceiverEngine, HolesAndAckReqGoAtOnce)
{
	Receiver rx;
	rx.Data(1, 100);
	rx.Data(1, 102); // leaves 101 missing
	ASSERT_EQ(rx.sent.size(), 2u);
	EXPECT_EQ(rx.sent[1].ack.cum_psn, 101u);
	EXPECT_EQ(rx.sent[1].ack.sack[0] & 1, 0u);
	EXPECT_EQ(rx.sent[1].ack.sack[0] & 2, 2u) << "bit 1: PSN 102";
	EXPECT_EQ(rx.events[MR_REV_OUT_OF_ORDER], 1u);
	rx.Data(1, 103); // follows 102, the hole is known
	EXPECT_EQ(rx.sent.size(), 2u);
	rx.Data(1, 101); // fills it
	ASSERT_EQ(rx.sent.size(), 3u);
	EXPECT_EQ(rx.sent[2].ack.cum_psn, 104u);
	rx.Data(1, 104, 0, false, false, MR_FLAG_ACK_REQ);
	EXPECT_EQ(rx.sent.size(), 4u);
}

// A duplicate is acknowledged at once and names its own PSN (the sender
// missed an ACK); a packet of an abandoned epoch is dropped unanswered.
TEST(ReceiverEngine, DuplicateAckedStaleNot)
{
	Receiver rx;
	const uint32_t e1 = 0; // later epochs start at PSN 0
	rx.Data(2, e1, 1);
	rx.Data(2, e1 + 1, 1);
	size_t n = rx.sent.size();
	EXPECT_EQ(rx.Data(2, e1, 1), MR_SACK_DUP);
	ASSERT_EQ(rx.sent.size(), n + 1);
	EXPECT_EQ(rx.sent.back().base.psn, e1);
	EXPECT_EQ(rx.sent.back().ack.cum_psn, e1 + 2);
	EXPECT_EQ(rx.Data(2, 100, 0), MR_SACK_STALE);
	EXPECT_EQ(rx.sent.size(), n + 1);
	EXPECT_EQ(rx.events[MR_REV_DUPLICATE], 2u);
	EXPECT_EQ(rx.Data(64, 0), MR_SACK_BEYOND) << "no such path";
}

// "Signals": CE marks count per path epoch, duplicates included, stale
// packets not; a new epoch counts from zero.
TEST(ReceiverEngine, CeCountsPerEpoch)
{
	Receiver rx;
	const uint32_t e1 = 0; // later epochs start at PSN 0
	rx.Data(0, 100, 0, true);
	rx.Data(0, 100, 0, true); // duplicate, counted
	rx.Data(0, 101, 0, true, false, MR_FLAG_ACK_REQ);
	EXPECT_EQ(rx.sent.back().ack.ecn_count, 3u);
	rx.Data(0, e1, 1, true); // new epoch: its first packet
	EXPECT_EQ(rx.sent.back().base.epoch, 1);
	EXPECT_EQ(rx.sent.back().ack.ecn_count, 1u);
	size_t n = rx.sent.size();
	rx.Data(0, 102, 0, true); // stale
	EXPECT_EQ(rx.sent.size(), n);
	rx.Data(0, e1 + 1, 1, false, false, MR_FLAG_ACK_REQ);
	EXPECT_EQ(rx.sent.back().ack.ecn_count, 1u);
	EXPECT_EQ(rx.events[MR_REV_CE], 4u);
}

// A completion acknowledges every path with packets unacknowledged, at
// most MR_ACK_BURST at once; the rest are held and counted.
TEST(ReceiverEngine, CompletionAcksAllPathsInBursts)
{
	Receiver rx;
	const uint32_t paths = MR_ACK_BURST + 4;
	for (uint32_t id = 0; id < paths; id++) {
		rx.Data(id, 100);
		rx.Data(id, 101); // held
	}
	rx.sent.clear();
	rx.Data(paths, 100, 0, false, true);
	EXPECT_EQ(rx.sent.size(), static_cast<size_t>(MR_ACK_BURST));
	EXPECT_EQ(rx.events[MR_REV_ACKS_HELD], paths + 1 - MR_ACK_BURST);
	EXPECT_NE(mr_receiver_expiry(rx.R()), 0u);
	mr_receiver_timeout(rx.R(), mr_receiver_expiry(rx.R()));
	EXPECT_EQ(rx.sent.size(), static_cast<size_t>(paths + 1));
}

// A completion drawing a single ACK sends a second on another path, so
// that one lost ACK cannot leave the peer's last message unanswered: the
// ACK delay later, unless another lone ACK goes first, and at once when
// the QP stops.
TEST(ReceiverEngine, LoneCompletionAckHasASpare)
{
	Receiver rx;
	rx.Data(0, 100);
	rx.Data(1, 100);
	rx.sent.clear();
	rx.Data(1, 101, 0, false, true);
	ASSERT_EQ(rx.sent.size(), 1u);
	EXPECT_EQ(rx.sent[0].base.path, 1);
	EXPECT_EQ(rx.sent[0].base.psn, 101u);
	const u64 due = mr_receiver_expiry(rx.R());
	ASSERT_EQ(due, rx.now + MR_ACK_SPARE_NS) << "the spare waits, less than a tail probe";
	static_assert(MR_ACK_SPARE_NS < MR_PTO_MIN_NS);
	mr_receiver_timeout(rx.R(), due - 1);
	EXPECT_EQ(rx.sent.size(), 1u);
	mr_receiver_timeout(rx.R(), due);
	ASSERT_EQ(rx.sent.size(), 2u);
	EXPECT_EQ(rx.sent[1].base.path, 0) << "the spare";
	EXPECT_EQ(rx.sent[1].ack.msn_done, 7u);
	EXPECT_EQ(mr_receiver_expiry(rx.R()), 0u);

	// A later lone ACK moves the spare when it is due: one ACK per
	// message in a ping-pong, and one timer per ACK delay.
	rx.sent.clear();
	rx.Data(1, 102, 0, false, true);
	const u64 first = mr_receiver_expiry(rx.R());
	rx.now += 50;
	rx.Data(1, 103, 0, false, true);
	EXPECT_EQ(rx.sent.size(), 2u);
	EXPECT_EQ(mr_receiver_expiry(rx.R()), first) << "not re-armed per ACK";
	mr_receiver_timeout(rx.R(), first);
	EXPECT_EQ(rx.sent.size(), 2u) << "the last lone ACK is 50 ns younger";
	EXPECT_EQ(mr_receiver_expiry(rx.R()), first + 50);
	mr_receiver_flush(rx.R());
	ASSERT_EQ(rx.sent.size(), 3u) << "stopping sends the spare at once";
	EXPECT_EQ(rx.sent[2].base.path, 0);
	EXPECT_EQ(mr_receiver_expiry(rx.R()), 0u);
}

// NAKs: sent to the refused packet's port, naming it; RNR carries the
// delay of the QP's timer code (IB's table, in 10 us units).
TEST(ReceiverEngine, NaksAndTheRnrTable)
{
	Receiver rx;
	mr_pkt pkt{};
	pkt.base.path = 5;
	pkt.base.epoch = 2;
	pkt.base.psn = 300;
	mr_receiver_nak(rx.R(), &pkt, 4242, 9, MR_NAK_RNR, 13);
	ASSERT_EQ(rx.sent.size(), 1u);
	EXPECT_EQ(rx.sent[0].base.opcode, MR_OP_NAK);
	EXPECT_EQ(rx.sent[0].base.psn, 300u);
	EXPECT_EQ(rx.sent[0].nak.msn, 9u);
	EXPECT_EQ(rx.sent[0].nak.rnr_delay, 96); // 0.96 ms
	EXPECT_EQ(rx.ports[0], 4242);
	EXPECT_EQ(mr_receiver_rnr_delay(0), 65535);
	EXPECT_EQ(mr_receiver_rnr_delay(1), 1);
	EXPECT_EQ(mr_receiver_rnr_delay(31), 49152);
	rx.Data(5, 100);
	mr_receiver_nak_late(rx.R(), 5, 11, MR_NAK_REMOTE_ACCESS);
	EXPECT_EQ(rx.sent.back().base.psn, 100u);
	EXPECT_EQ(rx.sent.back().nak.code, MR_NAK_REMOTE_ACCESS);
	EXPECT_EQ(rx.ports.back(), kPort + 5);
}

} // namespace

// The environment (receiver.h), forwarded to the engine's sink.
void mr_receiver_env_send(struct mr_receiver *r, struct mr_pkt *pkt, u16 sport)
{
	ReceiverHost::Of(r).ReceiverSend(*pkt, sport);
}

u32 mr_receiver_env_msn_done(struct mr_receiver *r)
{
	return ReceiverHost::Of(r).ReceiverMsnDone();
}

u32 mr_receiver_env_hint(struct mr_receiver *r)
{
	return ReceiverHost::Of(r).ReceiverHint();
}

u64 mr_receiver_env_ack_delay(struct mr_receiver *r)
{
	return ReceiverHost::Of(r).ReceiverAckDelay();
}

void mr_receiver_env_event(struct mr_receiver *r, enum mr_receiver_event ev,
			   u32 arg)
{
	ReceiverHost::Of(r).ReceiverEvent(ev, arg);
}
