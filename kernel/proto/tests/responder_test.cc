// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The responder engine (responder.c) on the host, rule by rule: which
// message a packet is of, slices and duplicates, completion in MSN order,
// READ and atomic execution and their responses, RNR, UC drops, and the
// slice-map budget. Each test names the rule of protocol.rst it checks.
#include <gtest/gtest.h>

#include <algorithm>

#include "responder_host.hh"

extern "C" {
#include "bounds.h"
}

namespace
{

constexpr uint32_t kMtu = 1024;

struct Result {
	mr_rx_kind kind;
	uint8_t nak = 0;
	bool complete = false, dup = false, respond = false;
};

class Responder : public ResponderSink
{
public:
	explicit Responder(bool uc = false)
	{
		host.sink = this;
		mr_responder_init(&host.r, kMtu, uc);
	}
	~Responder() override
	{
		mr_responder_free(&host.r);
		EXPECT_EQ(allocs, 0);
	}
	mr_responder *R() { return &host.r; }
	// Slot @i of the window; an empty one while the window is given back.
	mr_rx_msg Msg(uint32_t i) const
	{
		return host.r.msg ? host.r.msg[i % MR_MSG_WINDOW] : mr_rx_msg{};
	}

	// One packet as the kernel's mr_resp_rcv() takes it, every packet
	// new on its path.
	Result Rx(const mr_pkt &pkt)
	{
		mr_rx rx{};
		rx.pkt = &pkt;
		rx.new_pkt = true;
		Result res{};
		mr_responder_admit(&host.r, &rx);
		if (rx.kind == MR_RX_MESSAGE)
			res.nak = mr_responder_place(&host.r, &rx, &res.complete,
						     &res.dup);
		res.kind = rx.kind;
		if (res.complete)
			res.respond = mr_responder_advance(&host.r, false);
		return res;
	}

	ResponderHost host{};
};

mr_pkt Write(uint32_t msn, uint32_t length, uint32_t offset)
{
	mr_pkt p{};
	p.base.opcode = MR_OP_WRITE;
	p.write.msn = msn;
	p.write.length = length;
	p.write.offset = offset;
	p.payload_len = std::min(kMtu, length - offset);
	return p;
}

mr_pkt Send(uint32_t msn, uint32_t rsn, uint32_t length, uint32_t offset)
{
	mr_pkt p{};
	p.base.opcode = MR_OP_SEND;
	p.send.msn = msn;
	p.send.rsn = rsn;
	p.send.length = length;
	p.send.offset = offset;
	p.payload_len = length ? std::min(kMtu, length - offset) : 0;
	return p;
}

mr_pkt ReadReq(uint32_t msn, uint64_t va, uint32_t length)
{
	mr_pkt p{};
	p.base.opcode = MR_OP_READ_REQ;
	p.read_req.msn = msn;
	p.read_req.va = va;
	p.read_req.length = length;
	return p;
}

mr_pkt FetchAdd(uint32_t msn, uint64_t va, uint64_t add)
{
	mr_pkt p{};
	p.base.opcode = MR_OP_FETCH_ADD;
	p.atomic.msn = msn;
	p.atomic.va = va;
	p.atomic.swap_add = add;
	return p;
}

// "MSN done" moves over complete messages only, in order: a later
// message that lands first waits for the earlier one.
TEST(ResponderEngine, MessagesCompleteInMsnOrder)
{
	Responder t;
	EXPECT_TRUE(t.Rx(Write(1, 100, 0)).complete);
	EXPECT_EQ(t.R()->msn_done, 0u);
	EXPECT_FALSE(t.Rx(Write(0, 2048, 1024)).complete);
	EXPECT_EQ(t.R()->msn_done, 0u);
	EXPECT_TRUE(t.Rx(Write(0, 2048, 0)).complete);
	EXPECT_EQ(t.R()->msn_done, 2u);
	// Of a message already complete: old, acknowledged, not placed.
	EXPECT_EQ(t.Rx(Write(1, 100, 0)).kind, MR_RX_OLD);
	// Beyond the message window: dropped, counted.
	EXPECT_EQ(t.Rx(Write(2 + MR_MSG_WINDOW, 100, 0)).kind, MR_RX_DROP);
	EXPECT_EQ(t.events[MR_RSE_MALFORMED], 1u);
}

// A slice counts once however often it lands (two paths, a failover):
// the second is a duplicate, acknowledged at once.
TEST(ResponderEngine, ADuplicateSliceCountsOnce)
{
	Responder t;
	EXPECT_FALSE(t.Rx(Write(0, 3000, 1024)).dup);
	Result r = t.Rx(Write(0, 3000, 1024));
	EXPECT_TRUE(r.dup);
	EXPECT_FALSE(r.complete);
	EXPECT_EQ(t.Msg(0).got, 1u);
	EXPECT_EQ(t.events[MR_RSE_DUPLICATE], 1u);
	EXPECT_FALSE(t.Rx(Write(0, 3000, 0)).complete);
	EXPECT_TRUE(t.Rx(Write(0, 3000, 2048)).complete);
}

// Slices are the MTU both ends agreed on: a packet whose length, offset,
// payload or opcode disagrees with its message is refused (RC: NAK
// INVALID_REQUEST); UC drops the message, which completes as it stands,
// and its receive fails.
TEST(ResponderEngine, SlicesThatDisagreeAreRefused)
{
	Responder rc;
	EXPECT_EQ(rc.Rx(Write(0, 3000, 0)).nak, 0);
	EXPECT_EQ(rc.Rx(Write(0, 4000, 1024)).nak, MR_NAK_INVALID_REQUEST);
	mr_pkt odd = Write(0, 3000, 1024);
	odd.write.offset = 1000;
	EXPECT_EQ(rc.Rx(odd).nak, MR_NAK_INVALID_REQUEST);
	mr_pkt short_payload = Write(0, 3000, 1024);
	short_payload.payload_len = 10;
	EXPECT_EQ(rc.Rx(short_payload).nak, MR_NAK_INVALID_REQUEST);
	EXPECT_EQ(rc.R()->msn_done, 0u);

	Responder uc(true);
	EXPECT_EQ(uc.Rx(Send(0, 0, 3000, 0)).nak, 0);
	Result r = uc.Rx(Send(0, 0, 4000, 1024));
	EXPECT_EQ(r.nak, 0);
	EXPECT_TRUE(r.complete);
	EXPECT_EQ(uc.R()->msn_done, 1u);
	ASSERT_EQ(uc.completions.size(), 1u);
	EXPECT_EQ(uc.completions[0].error, MR_RXE_INVALID);
	EXPECT_EQ(uc.drops[MR_RXE_INVALID], 1u);
	// A READ on UC is invalid too.
	EXPECT_TRUE(uc.Rx(ReadReq(1, 0, 10)).complete);
	EXPECT_EQ(uc.drops[MR_RXE_INVALID], 2u);
}

// A SEND whose receive is not posted: RC answers RNR and keeps nothing
// (the requester sends it again); UC drops it and skips its RSN, so that
// the receives of the messages after it move up by one.
TEST(ResponderEngine, NoReceivePostedIsRnrOrASkip)
{
	Responder rc;
	rc.posted = 0;
	EXPECT_EQ(rc.Rx(Send(0, 0, 10, 0)).kind, MR_RX_RNR);
	EXPECT_FALSE(rc.Msg(0).used);
	rc.posted = 1;
	EXPECT_TRUE(rc.Rx(Send(0, 0, 10, 0)).complete);
	EXPECT_EQ(rc.R()->rsn_head, 1u);

	Responder uc(true);
	uc.posted = 0;
	EXPECT_TRUE(uc.Rx(Send(0, 0, 10, 0)).complete);
	EXPECT_EQ(uc.drops[MR_RXE_NO_RECV], 1u);
	EXPECT_EQ(uc.R()->rsn_skipped, 1u);
	uc.posted = 1;
	// RSN 1 takes receive 0: the skipped RSN 0 had none.
	EXPECT_EQ(mr_responder_recv(uc.R(), 1), 0u);
	EXPECT_TRUE(uc.Rx(Send(1, 1, 10, 0)).complete);
	ASSERT_EQ(uc.completions.size(), 1u);
	EXPECT_EQ(uc.completions[0].msn, 1u);
	EXPECT_EQ(uc.R()->rsn_head, 1u);
}

// RSNs count the consuming messages in MSN order (protocol.rst, "RSN
// checks"): a first packet whose RSN names a receive that another open
// message names, one already completed, or one out of order with the
// messages around it, is dropped unrecorded and counted as malformed.
// Nothing is placed, and no receive is taken for it.
TEST(ResponderEngine, TwoMessagesCannotNameOneReceive)
{
	for (bool uc : {false, true}) {
		Responder t(uc);
		// Message 0 open, RSN 0: message 1 cannot take RSN 0 too.
		EXPECT_FALSE(t.Rx(Send(0, 0, 3000, 0)).complete);
		EXPECT_EQ(t.Rx(Send(1, 0, 10, 0)).kind, MR_RX_DROP);
		EXPECT_EQ(t.events[MR_RSE_MALFORMED], 1u);
		EXPECT_FALSE(t.Msg(1).used);
		// Nor one before it, nor two RSNs past one message.
		EXPECT_EQ(t.Rx(Send(2, 0, 10, 0)).kind, MR_RX_DROP);
		EXPECT_EQ(t.Rx(Send(1, 2, 10, 0)).kind, MR_RX_DROP);
		// Nor, before message 0, the RSN after it.
		EXPECT_TRUE(t.Rx(Send(2, 2, 10, 0)).complete);
		EXPECT_EQ(t.Rx(Send(1, 2, 10, 0)).kind, MR_RX_DROP);
		EXPECT_EQ(t.events[MR_RSE_MALFORMED], 4u);
		// The conforming one fits between them.
		EXPECT_TRUE(t.Rx(Send(1, 1, 10, 0)).complete);
		EXPECT_FALSE(t.Rx(Send(0, 0, 3000, 1024)).complete);
		EXPECT_TRUE(t.Rx(Send(0, 0, 3000, 2048)).complete);
		EXPECT_EQ(t.R()->msn_done, 3u);
		ASSERT_EQ(t.completions.size(), 3u);
		for (uint32_t i = 0; i < 3; i++) {
			EXPECT_EQ(t.completions[i].msn, i);
			EXPECT_EQ(t.completions[i].rsn, i);
		}
		// Completed: RSN 0 cannot be taken again.
		EXPECT_EQ(t.Rx(Send(3, 0, 10, 0)).kind, MR_RX_DROP);
		EXPECT_EQ(t.Rx(Send(3, MR_MSG_WINDOW, 10, 0)).kind,
			  MR_RX_DROP);
		EXPECT_EQ(t.events[MR_RSE_MALFORMED], 6u);
		EXPECT_EQ(t.completions.size(), 3u);
		EXPECT_TRUE(t.refused.empty());
	}
}

// A later packet of a message whose RSN differs from its first's does
// not fit its message: refused (RC) or dropped (UC), like any other.
TEST(ResponderEngine, AMessageKeepsItsRsn)
{
	Responder rc;
	EXPECT_EQ(rc.Rx(Send(0, 0, 3000, 0)).nak, 0);
	EXPECT_EQ(rc.Rx(Send(0, 1, 3000, 1024)).nak, MR_NAK_INVALID_REQUEST);
}

// A message whose RSN counted a consuming message before it that never
// came names a receive after the next one: when it is next to complete
// it is refused, RC with INVALID_REQUEST (fatal), UC dropped without
// completing a receive that is not its own.
TEST(ResponderEngine, AGapInTheRsnsIsRefusedAtCompletion)
{
	Responder rc;
	EXPECT_TRUE(rc.Rx(Send(1, 1, 10, 0)).complete);
	EXPECT_TRUE(rc.Rx(Write(0, 10, 0)).complete);
	EXPECT_EQ(rc.refused[1], MR_NAK_INVALID_REQUEST);
	EXPECT_EQ(rc.R()->msn_done, 1u);
	EXPECT_TRUE(rc.completions.empty());

	Responder uc(true);
	EXPECT_TRUE(uc.Rx(Send(1, 1, 10, 0)).complete);
	EXPECT_TRUE(uc.Rx(Write(0, 10, 0)).complete);
	EXPECT_EQ(uc.R()->msn_done, 2u);
	EXPECT_EQ(uc.drops[MR_RXE_INVALID], 1u);
	EXPECT_TRUE(uc.completions.empty());
	EXPECT_EQ(uc.R()->rsn_head, 0u);
}

// A message's receive is taken when its first packet is new on its path,
// not at admission: a packet the path drops binds none (an SRQ's receive
// stays in the SRQ); a copy of a packet refused for want of a receive
// draws the RNR again.
TEST(ResponderEngine, AReceiveIsTakenOnlyByANewPacket)
{
	Responder t;
	mr_pkt p = Send(0, 0, 10, 0);
	mr_rx rx{};
	rx.pkt = &p;
	mr_responder_admit(t.R(), &rx);
	EXPECT_EQ(rx.kind, MR_RX_MESSAGE);
	EXPECT_TRUE(t.asked.empty());
	mr_responder_unadmit(t.R(), &rx);
	EXPECT_TRUE(t.asked.empty());
	EXPECT_EQ(rx.kind, MR_RX_RNR);
	EXPECT_FALSE(t.Msg(0).used);
	EXPECT_TRUE(t.Rx(p).complete);
	EXPECT_EQ(t.asked, (std::vector<uint32_t>{0}));
}

// A packet of @stream whose message completes after the one @order + 1
// before it (MR_ORDER_NONE: after none).
mr_pkt On(mr_pkt p, uint16_t stream, uint8_t order)
{
	p.base.stream = stream;
	p.base.order = order;
	return p;
}

// Streams: a message completes once the one its order byte names has;
// a stream that lost a packet holds only itself. Receives complete out of
// the queue's order and leave it in order; "MSN done" still moves only
// over the head.
TEST(ResponderEngine, StreamsCompleteInTheirOwnOrder)
{
	Responder t;
	// 0 on stream 1 (two slices, the first lost), 1 on stream 2, 2 on
	// stream 1 after 0, 3 on stream 2 after 1.
	EXPECT_FALSE(t.Rx(On(Send(0, 0, 2048, 1024), 1, MR_ORDER_NONE)).complete);
	EXPECT_TRUE(t.Rx(On(Send(1, 1, 10, 0), 2, MR_ORDER_NONE)).complete);
	EXPECT_TRUE(t.Rx(On(Send(2, 2, 10, 0), 1, 1)).complete);
	EXPECT_TRUE(t.Rx(On(Send(3, 3, 10, 0), 2, 1)).complete);
	ASSERT_EQ(t.completions.size(), 2u);
	EXPECT_EQ(t.completions[0].msn, 1u);
	EXPECT_EQ(t.completions[1].msn, 3u);
	EXPECT_EQ(t.R()->msn_done, 0u);
	EXPECT_EQ(t.retired, 0u); // receive 0 holds the queue's head
	EXPECT_EQ(t.R()->rsn_head, 0u);
	EXPECT_EQ(t.Msg(2).stream, 1u);
	EXPECT_FALSE(t.Msg(2).delivered);

	EXPECT_TRUE(t.Rx(On(Send(0, 0, 2048, 0), 1, MR_ORDER_NONE)).complete);
	ASSERT_EQ(t.completions.size(), 4u);
	EXPECT_EQ(t.completions[2].msn, 0u);
	EXPECT_EQ(t.completions[3].msn, 2u);
	EXPECT_EQ(t.R()->msn_done, 4u);
	EXPECT_EQ(t.R()->rsn_head, 4u);
	EXPECT_EQ(t.R()->rsn_order, 4u);
	EXPECT_EQ(t.retired, 4u);
	EXPECT_TRUE(t.refused.empty());
}

// Order 0 is the message before: one stream, MSN order, as without
// streams; and UC completes in MSN order whatever the byte says.
TEST(ResponderEngine, OrderPrevAndUcKeepMsnOrder)
{
	for (bool uc : { false, true }) {
		Responder t(uc);
		EXPECT_FALSE(t.Rx(On(Write(0, 2048, 1024), 0, 0)).complete);
		uint8_t order = uc ? MR_ORDER_NONE : MR_ORDER_PREV;
		EXPECT_TRUE(t.Rx(On(Send(1, 0, 10, 0), 0, order)).complete);
		EXPECT_TRUE(t.completions.empty()) << uc;
		EXPECT_TRUE(t.Rx(On(Write(0, 2048, 0), 0, 0)).complete);
		EXPECT_EQ(t.completions.size(), 1u) << uc;
		EXPECT_EQ(t.R()->msn_done, 2u) << uc;
	}
}

// A READ on a stream executes once its own stream allows, ahead of a
// stalled message of another, and its response goes at once.
TEST(ResponderEngine, AStreamsReadRespondsAheadOfAnotherStream)
{
	Responder t;
	EXPECT_FALSE(t.Rx(On(Write(0, 2048, 1024), 1, MR_ORDER_NONE)).complete);
	Result r = t.Rx(On(ReadReq(1, 0x1000, 3000), 2, MR_ORDER_NONE));
	EXPECT_TRUE(r.complete);
	EXPECT_TRUE(r.respond);
	EXPECT_EQ(t.R()->msn_done, 0u);
	ASSERT_TRUE(mr_responder_response_due(t.R(), false));
	mr_tx_pkt tp{};
	for (uint32_t i = 0; i < 3; i++) {
		ASSERT_TRUE(mr_responder_response_due(t.R(), false));
		mr_responder_response_take(t.R(), &tp);
		EXPECT_EQ(tp.msn, 1u);
		EXPECT_EQ(tp.offset, i * kMtu);
	}
	EXPECT_FALSE(mr_responder_response_due(t.R(), false));
	EXPECT_TRUE(t.Rx(On(Write(0, 2048, 0), 1, MR_ORDER_NONE)).complete);
	EXPECT_EQ(t.R()->msn_done, 2u);
	EXPECT_FALSE(mr_responder_response_due(t.R(), false));
}

// Every packet of a message names its stream and order as the first did.
TEST(ResponderEngine, AMessageKeepsItsStreamAndOrder)
{
	Responder t;
	EXPECT_FALSE(t.Rx(On(Send(0, 0, 3000, 0), 1, MR_ORDER_NONE)).complete);
	EXPECT_EQ(t.Rx(On(Send(0, 0, 3000, 1024), 2, MR_ORDER_NONE)).nak,
		  MR_NAK_INVALID_REQUEST);
	EXPECT_EQ(t.Rx(On(Send(0, 0, 3000, 2048), 1, 5)).nak,
		  MR_NAK_INVALID_REQUEST);
}

// A message that completed ahead of the head, whose receive turns out not
// to be the next in MSN order when the head reaches it, is refused then:
// the RSNs lied.
TEST(ResponderEngine, AStreamsReceiveIsCheckedWhenTheHeadComesBy)
{
	Responder t;
	// 0 (stream 1, RSN 0) waits; 2 (stream 2) names RSN 2 and completes
	// ahead; then 1 is a plain WRITE, so 2's RSN should have been 1.
	EXPECT_FALSE(t.Rx(On(Send(0, 0, 2048, 1024), 1, MR_ORDER_NONE)).complete);
	EXPECT_TRUE(t.Rx(On(Send(2, 2, 10, 0), 2, MR_ORDER_NONE)).complete);
	EXPECT_TRUE(t.Rx(On(Write(1, 10, 0), 1, 0)).complete);
	EXPECT_TRUE(t.refused.empty());
	EXPECT_TRUE(t.Rx(On(Send(0, 0, 2048, 0), 1, MR_ORDER_NONE)).complete);
	EXPECT_EQ(t.refused.count(2), 1u);
	EXPECT_EQ(t.R()->msn_done, 2u);
}

// Skips in the window and gone by, and RSNs that wrap (the kernel's
// KUnit case before the engine).
TEST(ResponderEngine, UcReceivesMoveUpPastSkippedRsns)
{
	Responder uc(true);
	EXPECT_EQ(mr_responder_recv(uc.R(), 7), 7u);
	uc.posted = 0;
	// Message 6 (RSN 5) finds no receive while message 0 is open.
	EXPECT_FALSE(uc.Rx(Write(0, 3000, 0)).complete);
	mr_pkt s = Send(6, 5, 10, 0);
	uc.Rx(s);
	EXPECT_EQ(mr_responder_recv(uc.R(), 4), 4u);
	EXPECT_EQ(mr_responder_recv(uc.R(), 6), 5u);
	uc.Rx(Send(12, 10, 10, 0));
	EXPECT_EQ(uc.R()->uc_skips, 2u);
	EXPECT_EQ(mr_responder_recv(uc.R(), 6), 5u);
	EXPECT_EQ(mr_responder_recv(uc.R(), 11), 9u);

	// RSN UINT32_MAX skipped: the RSNs after it wrap.
	Responder wrap(true);
	wrap.posted = 0;
	wrap.R()->rsn_head = wrap.R()->rsn_order = UINT32_MAX;
	wrap.Rx(Write(0, 3000, 0));
	wrap.Rx(Send(1, UINT32_MAX, 10, 0));
	EXPECT_EQ(wrap.R()->uc_skips, 1u);
	EXPECT_EQ(mr_responder_recv(wrap.R(), 1), 0u);
	EXPECT_EQ(mr_responder_recv(wrap.R(), UINT32_MAX - 1), UINT32_MAX - 1);
}

// READs execute in MSN order, after every earlier message has landed;
// the response is cut into MTU-sized packets, taken one at a time.
TEST(ResponderEngine, ReadExecutesInOrderAndIsSlicedByTheMtu)
{
	Responder t;
	EXPECT_TRUE(t.Rx(ReadReq(1, 0x1000, 2500)).complete);
	EXPECT_FALSE(mr_responder_response_due(t.R(), false));
	Result r = t.Rx(Write(0, 10, 0));
	EXPECT_TRUE(r.respond);
	EXPECT_EQ(t.R()->msn_done, 2u);
	std::vector<uint32_t> offsets;
	while (mr_responder_response_due(t.R(), false)) {
		mr_tx_pkt tp{};
		mr_responder_response_take(t.R(), &tp);
		EXPECT_TRUE(tp.resp);
		EXPECT_EQ(tp.msn, 1u);
		offsets.push_back(tp.offset);
	}
	EXPECT_EQ(offsets, (std::vector<uint32_t>{0, 1024, 2048}));
	const mr_resp *rs = mr_responder_resp(t.R(), 1);
	ASSERT_NE(rs, nullptr);
	EXPECT_EQ(rs->length, 2500u);
	EXPECT_EQ(mr_responder_resp(t.R(), 0), nullptr);
	// None goes after a fatal NAK.
	Responder f;
	f.Rx(ReadReq(0, 0, 10));
	EXPECT_FALSE(mr_responder_response_due(f.R(), true));
	EXPECT_TRUE(mr_responder_response_due(f.R(), false));
}

// The window's messages are borrowed at the first request; the
// responses, at the first READ. The host's trim gives them back once a
// whole period between two trims went without a request, with no message
// open and every response sent (and, the host knows, acknowledged). With
// no memory, a packet is not recorded, and its resend opens the message
// then.
TEST(ResponderEngine, AnIdleResponderHoldsNoMemory)
{
	Responder t;
	EXPECT_EQ(t.allocs, 0);
	EXPECT_FALSE(mr_responder_holds(t.R()));
	EXPECT_FALSE(t.Rx(Write(0, 2 * kMtu, 0)).complete);
	EXPECT_NE(t.R()->msg, nullptr);
	EXPECT_EQ(t.R()->open, 1u);
	EXPECT_TRUE(mr_responder_trim(t.R())); // used this period
	EXPECT_TRUE(mr_responder_trim(t.R())); // a message is open
	EXPECT_TRUE(t.Rx(Write(0, 2 * kMtu, kMtu)).complete);
	EXPECT_EQ(t.R()->open, 0u);
	// Kept while messages come: one per period is enough.
	for (int i = 0; i < 3; i++) {
		EXPECT_TRUE(mr_responder_trim(t.R()));
		EXPECT_NE(t.R()->msg, nullptr);
		// An old duplicate is a request too.
		EXPECT_EQ(t.Rx(Write(0, 2 * kMtu, 0)).kind, MR_RX_OLD);
	}
	EXPECT_TRUE(mr_responder_trim(t.R()));
	EXPECT_FALSE(mr_responder_trim(t.R()));
	EXPECT_EQ(t.R()->msg, nullptr);
	EXPECT_EQ(t.allocs, 0);

	EXPECT_TRUE(t.Rx(ReadReq(1, 0x1000, 10)).respond);
	ASSERT_NE(t.R()->resp, nullptr);
	EXPECT_TRUE(mr_responder_trim(t.R()));
	EXPECT_TRUE(mr_responder_trim(t.R())); // its response not sent yet
	ASSERT_NE(mr_responder_resp(t.R(), 1), nullptr);
	EXPECT_EQ(t.R()->msg, nullptr);
	ASSERT_TRUE(mr_responder_response_due(t.R(), false));
	mr_tx_pkt tp{};
	mr_responder_response_take(t.R(), &tp);
	EXPECT_FALSE(mr_responder_response_due(t.R(), false));
	EXPECT_FALSE(mr_responder_trim(t.R()));
	EXPECT_EQ(t.R()->resp, nullptr);
	EXPECT_EQ(mr_responder_resp(t.R(), 1), nullptr);
	EXPECT_EQ(t.allocs, 0);

	t.no_memory = true;
	EXPECT_EQ(t.Rx(Send(2, 0, 10, 0)).kind, MR_RX_DROP);
	EXPECT_EQ(t.events[MR_RSE_SHORT], 1u);
	t.no_memory = false;
	EXPECT_TRUE(t.Rx(Send(2, 0, 10, 0)).complete);
	EXPECT_EQ(t.R()->msn_done, 3u);
	EXPECT_TRUE(mr_responder_trim(t.R()));
	EXPECT_FALSE(mr_responder_trim(t.R()));
	EXPECT_EQ(t.allocs, 0);
}

// An atomic executes once: its copy is a duplicate, a late resend of it
// is old, and its response (the value before) is kept for resends.
TEST(ResponderEngine, AnAtomicExecutesOnce)
{
	Responder t;
	t.memory[0x40] = 5;
	EXPECT_TRUE(t.Rx(FetchAdd(0, 0x40, 3)).respond);
	EXPECT_TRUE(t.Rx(FetchAdd(0, 0x40, 3)).kind == MR_RX_OLD);
	EXPECT_EQ(t.atomics, 1u);
	EXPECT_EQ(t.memory[0x40], 8u);
	const mr_resp *rs = mr_responder_resp(t.R(), 0);
	ASSERT_NE(rs, nullptr);
	EXPECT_EQ(rs->orig, 5u);
	EXPECT_EQ(rs->npkts, 1u);
	// Both copies before it executes: the second is a duplicate slice.
	Responder d;
	d.Rx(Write(0, 3000, 0));
	EXPECT_FALSE(d.Rx(FetchAdd(1, 0x40, 1)).dup);
	EXPECT_TRUE(d.Rx(FetchAdd(1, 0x40, 1)).dup);
	d.Rx(Write(0, 3000, 1024));
	d.Rx(Write(0, 3000, 2048));
	EXPECT_EQ(d.atomics, 1u);
}

// An atomic that cannot execute is refused late, and nothing after it
// completes.
TEST(ResponderEngine, AFailedExecutionIsRefusedAndStops)
{
	struct Failing : Responder {
		uint8_t ResponderAtomic(const mr_rx_msg &, uint64_t *) override
		{
			return MR_NAK_REMOTE_ACCESS;
		}
	} t;
	t.Rx(Write(1, 10, 0));
	EXPECT_FALSE(t.Rx(FetchAdd(0, 0x40, 1)).respond);
	EXPECT_EQ(t.refused[0], MR_NAK_REMOTE_ACCESS);
	EXPECT_EQ(t.R()->msn_done, 0u);
}

// A packet its path did not take as new must not define its message.
TEST(ResponderEngine, UnadmitForgetsTheSlotItOpened)
{
	Responder t;
	mr_pkt p = Write(0, 300000, 0);
	mr_rx rx{};
	rx.pkt = &p;
	rx.new_pkt = true;	// as the host found it, before its path did
	mr_responder_admit(t.R(), &rx);
	ASSERT_TRUE(rx.fresh);
	EXPECT_GT(t.R()->map_bits, 0u);
	mr_responder_unadmit(t.R(), &rx);
	EXPECT_FALSE(t.Msg(0).used);
	EXPECT_EQ(t.R()->map_bits, 0u);
}

// Slice maps are charged to the connection's budget while their messages
// are in the window: MR_BOUNDS_MAP_MSGS messages of 2 GiB fit, the next
// large one is refused (RC) or dropped (UC) without an allocation, small
// ones (64 slices or fewer) cost nothing, and completing gives the bits
// back.
TEST(ResponderEngine, SliceMapsHaveABudget)
{
	Responder t;
	const uint32_t big = MR_WIRE_MAX_MSG_LEN / kMtu;
	EXPECT_EQ(t.R()->map_budget, MR_BOUNDS_MAP_MSGS * big);
	uint32_t i;
	for (i = 0; i < MR_BOUNDS_MAP_MSGS; i++) {
		EXPECT_EQ(t.Rx(Write(i, MR_WIRE_MAX_MSG_LEN, 0)).kind,
			  MR_RX_MESSAGE);
		EXPECT_EQ(t.R()->map_bits, (i + 1) * big);
	}
	EXPECT_EQ(t.Rx(Write(i, 65 * kMtu, 0)).kind, MR_RX_REFUSE);
	EXPECT_FALSE(t.Msg(i).used);
	EXPECT_EQ(t.Rx(Write(i, 64 * kMtu, 0)).kind, MR_RX_MESSAGE);
	EXPECT_EQ(t.R()->map_bits, t.R()->map_budget);

	Responder uc(true);
	for (i = 0; i < MR_BOUNDS_MAP_MSGS; i++)
		uc.Rx(Write(i, MR_WIRE_MAX_MSG_LEN, 0));
	EXPECT_EQ(uc.Rx(Write(i, 65 * kMtu, 0)).kind, MR_RX_MESSAGE);
	EXPECT_TRUE(uc.Msg(i).dropped);
	EXPECT_EQ(uc.Msg(i).drop, MR_RXE_MAP_BUDGET);
	EXPECT_EQ(mr_responder_free(uc.R()), 0u);
}

// A slice map is allocated only for a packet new on its path (the host
// asks the receiver first): a copy its path drops opens its slot without
// one, and unadmit closes it. A map the host refuses (its device's budget)
// drops the packet unrecorded, counted; its resend opens the message.
TEST(ResponderEngine, SliceMapsOnlyForNewPacketsAndHostBudget)
{
	Responder t;
	mr_pkt p = Write(0, 65 * kMtu, 0);
	mr_rx rx{};
	rx.pkt = &p;
	mr_responder_admit(t.R(), &rx);
	EXPECT_EQ(rx.kind, MR_RX_MESSAGE);
	EXPECT_EQ(t.maps, 0);
	EXPECT_EQ(t.R()->map_bits, 0u);
	mr_responder_unadmit(t.R(), &rx);
	EXPECT_FALSE(t.Msg(0).used);
	EXPECT_EQ(t.Rx(p).kind, MR_RX_MESSAGE);
	EXPECT_EQ(t.maps, 1);
	EXPECT_EQ(t.R()->map_bits, 65u);
	t.map_refuse = true;
	EXPECT_EQ(t.Rx(Write(1, 65 * kMtu, 0)).kind, MR_RX_DROP);
	EXPECT_EQ(t.maps_refused, 1);	// the host counts it, once
	EXPECT_EQ(t.events[MR_RSE_SHORT], 0u);
	EXPECT_FALSE(t.Msg(1).used);
	EXPECT_EQ(t.R()->map_bits, 65u);
	// Small messages need none.
	EXPECT_EQ(t.Rx(Write(1, 64 * kMtu, 0)).kind, MR_RX_MESSAGE);
	t.map_refuse = false;
	EXPECT_EQ(t.Rx(Write(2, 65 * kMtu, 0)).kind, MR_RX_MESSAGE);
	EXPECT_EQ(t.maps, 2);
	mr_responder_free(t.R());
	EXPECT_EQ(t.maps, 0);
}

// Responder bounds: READs and atomics the responder holds (open in the
// window, or executed with a response packet not sent yet) stay within
// max_dest_rd_atomic. One beyond is dropped before its path records it
// (no ACK: the requester's resend brings it back), counted. A response
// sent whole no longer counts, acknowledged or not: a conforming
// requester's next READ may overtake the ACK of the last response.
TEST(ResponderEngine, ReadsBeyondMaxDestRdAtomicAreDropped)
{
	Responder t;
	mr_responder_set_rd_max(t.R(), 2);
	// A READ waiting behind message 0 counts, as does an atomic.
	EXPECT_EQ(t.Rx(ReadReq(1, 0x1000, 3 * kMtu)).kind, MR_RX_MESSAGE);
	EXPECT_EQ(t.Rx(FetchAdd(2, 0x2000, 1)).kind, MR_RX_MESSAGE);
	EXPECT_EQ(mr_responder_rd_busy(t.R()), 2u);
	EXPECT_EQ(t.Rx(ReadReq(3, 0x1000, 10)).kind, MR_RX_DROP);
	EXPECT_EQ(t.events[MR_RSE_RD_EXCESS], 1u);
	EXPECT_FALSE(t.Msg(3).used);
	// A copy of one it holds is no new READ: a duplicate, not dropped.
	EXPECT_TRUE(t.Rx(ReadReq(1, 0x1000, 3 * kMtu)).dup);
	// Executed, the two still count until their responses are sent.
	EXPECT_TRUE(t.Rx(Write(0, 10, 0)).respond);
	EXPECT_EQ(t.R()->msn_done, 3u);
	EXPECT_EQ(mr_responder_rd_busy(t.R()), 2u);
	EXPECT_EQ(t.Rx(ReadReq(3, 0x1000, 10)).kind, MR_RX_DROP);
	mr_tx_pkt tp{};
	ASSERT_TRUE(mr_responder_response_due(t.R(), false));
	mr_responder_response_take(t.R(), &tp);
	mr_responder_response_take(t.R(), &tp);
	EXPECT_EQ(mr_responder_rd_busy(t.R()), 2u);
	mr_responder_response_take(t.R(), &tp);
	// Sent whole, not acknowledged: room for the resend.
	EXPECT_EQ(mr_responder_rd_busy(t.R()), 1u);
	EXPECT_EQ(t.Rx(ReadReq(3, 0x1000, 10)).kind, MR_RX_MESSAGE);
	EXPECT_EQ(t.Rx(ReadReq(4, 0x1000, 10)).kind, MR_RX_DROP);
	EXPECT_EQ(t.events[MR_RSE_RD_EXCESS], 3u);
	// SENDs and WRITEs are not bounded by it.
	EXPECT_EQ(t.Rx(Write(4, 10, 0)).kind, MR_RX_MESSAGE);
	// Streams: a READ executed early counts once (its response, not
	// also its slot), and not at all once its response is sent, though
	// its slot waits for a stalled message of another stream.
	Responder st;
	mr_responder_set_rd_max(st.R(), 1);
	EXPECT_FALSE(st.Rx(On(Write(0, 2048, 1024), 1, MR_ORDER_NONE)).complete);
	EXPECT_TRUE(st.Rx(On(ReadReq(1, 0x1000, 10), 2, MR_ORDER_NONE)).respond);
	EXPECT_EQ(mr_responder_rd_busy(st.R()), 1u);
	EXPECT_EQ(st.Rx(On(ReadReq(2, 0x1000, 10), 2, 0)).kind, MR_RX_DROP);
	ASSERT_TRUE(mr_responder_response_due(st.R(), false));
	mr_responder_response_take(st.R(), &tp);
	EXPECT_EQ(st.R()->msn_done, 0u);
	EXPECT_EQ(mr_responder_rd_busy(st.R()), 0u);
	EXPECT_EQ(st.Rx(On(ReadReq(2, 0x1000, 10), 2, 0)).kind, MR_RX_MESSAGE);
	// 0 is taken as 1, as the requester takes its max_rd_atomic.
	Responder one;
	mr_responder_set_rd_max(one.R(), 0);
	EXPECT_EQ(one.Rx(ReadReq(0, 0x1000, 10)).kind, MR_RX_MESSAGE);
	EXPECT_EQ(one.Rx(ReadReq(1, 0x1000, 10)).kind, MR_RX_DROP);
	// UC refuses READs otherwise (an invalid request, dropped).
	Responder uc(true);
	mr_responder_set_rd_max(uc.R(), 1);
	uc.Rx(ReadReq(0, 0x1000, 10));
	uc.Rx(ReadReq(1, 0x1000, 10));
	EXPECT_EQ(uc.events[MR_RSE_RD_EXCESS], 0u);
}

} // namespace

// The responder engine's environment (responder.h), bound to the sink.
bool mr_responder_env_posted(struct mr_responder *r, u32 recv)
{
	return ResponderHost::Of(r).ResponderPosted(recv, r->rsn_head);
}

void *mr_responder_env_alloc(struct mr_responder *r, u32 bytes)
{
	ResponderSink &s = ResponderHost::Of(r);
	if (s.no_memory)
		return nullptr;
	s.allocs++;
	return calloc(1, bytes);
}

void mr_responder_env_free(struct mr_responder *r, void *p)
{
	ResponderHost::Of(r).allocs--;
	free(p);
}

void *mr_responder_env_map_alloc(struct mr_responder *r, u32 bytes)
{
	ResponderSink &s = ResponderHost::Of(r);
	void *p = s.map_refuse ? nullptr : mr_responder_env_alloc(r, bytes);
	s.maps += p != nullptr;
	s.maps_refused += p == nullptr;
	return p;
}

void mr_responder_env_map_free(struct mr_responder *r, void *p, u32)
{
	ResponderHost::Of(r).maps--;
	mr_responder_env_free(r, p);
}

int mr_responder_env_write(struct mr_responder *r, const struct mr_rx *rx)
{
	return ResponderHost::Of(r).ResponderWrite(*rx);
}

int mr_responder_env_scatter(struct mr_responder *r, const struct mr_rx *rx,
			     u32 recv)
{
	return ResponderHost::Of(r).ResponderScatter(*rx, recv);
}

u8 mr_responder_env_check_rd(struct mr_responder *r, const struct mr_rx_msg *m)
{
	return ResponderHost::Of(r).ResponderCheckRd(*m);
}

u8 mr_responder_env_atomic(struct mr_responder *r, const struct mr_rx_msg *m,
			   u64 *orig)
{
	uint64_t o = 0;
	u8 nak = ResponderHost::Of(r).ResponderAtomic(*m, &o);
	*orig = o;
	return nak;
}

bool mr_responder_env_complete_recv(struct mr_responder *r,
				    const struct mr_rx_msg *m, u8 error)
{
	return ResponderHost::Of(r).ResponderCompleteRecv(*m, error);
}

void mr_responder_env_retire_recv(struct mr_responder *r)
{
	ResponderHost::Of(r).ResponderRetireRecv();
}

void mr_responder_env_refuse_late(struct mr_responder *r, u32 msn, u8 nak, u8)
{
	ResponderHost::Of(r).ResponderRefuseLate(msn, nak);
}

void mr_responder_env_event(struct mr_responder *r, enum mr_responder_event ev,
			    u32 arg)
{
	ResponderHost::Of(r).ResponderEvent(ev, arg);
}
