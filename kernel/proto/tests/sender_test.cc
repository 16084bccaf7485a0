// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The sender engine (sender.c) on the host: this file is its third host,
// beside the kernel and the scale model. It binds the engine's environment
// to an in-memory link that loses, reorders, duplicates, delays and
// black-holes packets, seeded and deterministic, and to the receiver
// engine (receiver.c) at the far end, with placement by (MSN, slice) as
// the responder does it. Each test names the rule of protocol.rst it checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <queue>
#include <random>
#include <set>
#include <vector>

#include "receiver_host.hh"
#include "requester_host.hh"
#include "responder_host.hh"

extern "C" {
#include "sender.h"
#include "window.h"
#include "wire.h"
}

namespace
{

constexpr uint32_t kQpn = 0x1234;
constexpr uint64_t kTag = 0x5eed;
constexpr uint32_t kPktBytes = 1000;
constexpr uint32_t kSlice = 64; // payload bytes of a packet
constexpr uint64_t kUs = 1000;

struct LinkConfig {
	uint32_t paths = 4;
	uint32_t msgs = 64;
	uint32_t pkts_per_msg = 16;
	uint64_t seed = 1;
	double loss = 0;	       // of data packets, at random
	double dup = 0;		       // data packets that arrive twice
	double ack_loss = 0;	       // of ACKs
	uint64_t delay_ns = 100 * kUs; // one way
	uint64_t jitter_ns = 0;	       // uniform extra delay: reorders
	uint64_t gap_ns = 2 * kUs;     // the link's time per packet
	uint64_t ack_delay_ns = 200 * kUs;
	uint32_t retries = 7;
	uint32_t rd_max = 1;		// READs and atomics at the responder
	uint32_t rnr_retry = MR_RNR_RETRY_INFINITE;
	bool cc = true;
	uint32_t hint_kbps = 0; // in every ACK; 0: none
	// Equal-cost links: path i's data goes on link_of[i], each link with
	// its own gap_ns; the ACKs come back without a queue. Empty: one
	// link for everything.
	std::vector<uint32_t> link_of;
};

// @msgs messages of one packet each, on one path, without congestion
// control: every step of the requester is one packet.
static LinkConfig OnePacketMessages(uint32_t msgs)
{
	LinkConfig c;

	c.msgs = msgs;
	c.pkts_per_msg = 1;
	c.paths = 1;
	c.cc = false;
	return c;
}

// @msgs messages of 4 packets over 2 paths, every message on both.
static LinkConfig TwoPathMessages(uint32_t msgs)
{
	LinkConfig c = OnePacketMessages(msgs);

	c.pkts_per_msg = 4;
	c.paths = 2;
	return c;
}

class Harness;

// The engine and the way back to its host: standard layout, so a pointer
// to `s` is one to the Host.
struct Host {
	mr_sender s;
	Harness *h;
};

struct Wire {
	uint64_t at;  // arrival time
	uint64_t seq; // ties keep send order
	bool to_receiver;
	uint16_t sport;
	std::vector<uint8_t> bytes;
	bool operator>(const Wire &o) const
	{
		return at != o.at ? at > o.at : seq > o.seq;
	}
};

class Harness : public ReceiverSink, public RequesterSink, public ResponderSink
{
public:
	explicit Harness(const LinkConfig &c)
	    : cfg(c), rng(c.seed), path(c.paths),
	      landed(c.msgs, std::vector<bool>(c.pkts_per_msg))
	{
		mr_sender_timing tm;
		mr_cc_params ccp;
		mr_sender_timing_default(&tm);
		mr_cc_params_default(&ccp);
		ccp.enabled = c.cc;
		host.h = this;
		mr_sender_setup(&host.s, path.data(), c.paths,
				MR_PATH_DEFAULT_FAIL_AFTER, &tm, &ccp);
		EXPECT_EQ(mr_sender_start(&host.s, 0, false,
					  static_cast<u32>(c.seed), kPktBytes),
			  0);
		rx.sink = this;
		mr_receiver_start(&rx.r, 0);
		req.sink = this;
		mr_requester_start(&req.r, kSlice, c.rnr_retry);
		resp.sink = this;
		mr_responder_init(&resp.r, kSlice, false);
	}
	~Harness() override
	{
		mr_sender_release(S());
		mr_responder_free(&resp.r);
	}

	// The rings the paths borrow (mr_sender_env_ring_get()); the next
	// ring_fails requests find no memory.
	mr_tx_ring *RingGet()
	{
		if (ring_fails) {
			ring_fails--;
			return nullptr;
		}
		if (free_rings.empty())
			free_rings.push_back(std::make_unique<mr_tx_ring>());
		rings_out++;
		ring_gets++;
		rings_peak = std::max(rings_peak, rings_out);
		mr_tx_ring *r = free_rings.back().release();
		free_rings.pop_back();
		return r;
	}
	void RingPut(mr_tx_ring *r)
	{
		rings_out--;
		free_rings.emplace_back(r);
	}

	static Harness &Of(mr_sender *s)
	{
		return *reinterpret_cast<Host *>(s)->h;
	}
	mr_sender *S() { return &host.s; }
	mr_requester *R() { return &req.r; }

	// Run until every message is acknowledged complete, the engine stops,
	// or nothing is left to happen; returns whether everything arrived.
	bool Run(uint64_t limit_ns = 600ull * 1000 * 1000 * 1000)
	{
		while (host.s.on && req.r.msn_head < cfg.msgs && now < limit_ns) {
			Push();
			uint64_t next = 0;
			auto consider = [&](uint64_t t) {
				if (t && (!next || t < next))
					next = t;
			};
			if (!wire.empty())
				consider(wire.top().at);
			consider(mr_sender_expiry(&host.s));
			consider(host.s.pace_ns);
			consider(mr_receiver_expiry(&rx.r));
			if (!next)
				break; // stalled: nothing in flight, no timer
			now = std::max(now, next);
			while (!wire.empty() && wire.top().at <= now) {
				Wire w = wire.top();
				wire.pop();
				Deliver(w);
			}
			if (host.s.pace_ns && host.s.pace_ns <= now)
				mr_sender_pace_over(&host.s);
			mr_receiver_timeout(&rx.r, now);
			mr_sender_timeout(&host.s, now);
		}
		return req.r.peer_done == cfg.msgs &&
		       req.r.msn_head == cfg.msgs && AllLanded();
	}

	// Deliver what is still on the wire (the ACKs that follow the one
	// that completed the last message).
	void Drain()
	{
		while (!wire.empty()) {
			Wire w = wire.top();
			wire.pop();
			now = std::max(now, w.at);
			Deliver(w);
		}
	}

	bool AllLanded() const
	{
		for (const auto &m : landed)
			for (bool b : m)
				if (!b)
					return false;
		return true;
	}

	// The application's messages go as the requester engine lets them.
	void Push() { mr_requester_push(&req.r, &host.s, cfg.rd_max, now); }

	// The requester engine's environment (requester_host.hh): all
	// messages are posted at once; WRITEs of pkts_per_msg slices unless
	// a test says otherwise in `kind`.
	uint32_t RequesterPosted() override { return cfg.msgs - req.r.msn_head; }
	mr_req_msg RequesterMsg(uint32_t msn) override
	{
		mr_req_msg m{};
		if (msn < kind.size())
			m = kind[msn];
		else
			m.length = cfg.pkts_per_msg * kSlice;
		m.started = order.count(msn);
		return m;
	}
	void RequesterStart(uint32_t msn, uint32_t n, uint8_t ord) override
	{
		ASSERT_FALSE(order.count(msn));
		order[msn] = ord;
		if (RequesterMsg(msn).consumes)
			rsn[msn] = n;
	}

	// The environment's xmit: a WRITE of the slice at tp.offset on the
	// wire, or a READ request.
	int Xmit(uint32_t id, uint32_t psn, const mr_tx_pkt &tp, uint8_t flags)
	{
		mr_pkt pkt{};
		sent_log.push_back({id, psn, flags, tp.msn, tp.offset, tp.gen});
		xmits++;
		pkt.base.flags = flags;
		const mr_req_msg m = RequesterMsg(tp.msn);
		mr_req_wire w{};
		w.opcode = m.rd ? MR_OP_READ_REQ : MR_OP_WRITE;
		w.rkey = 1;
		w.length = m.length;
		pkt.payload_len = mr_requester_header(
		    &req.r, &tp, mr_requester_stale(&req.r, &tp) ? nullptr : &w,
		    &pkt);
		pkt.base.path = static_cast<u8>(id);
		pkt.base.epoch = mr_sender_path_epoch(&host.s, id);
		pkt.base.qpn = kQpn;
		pkt.base.psn = psn;
		pkt.base.tag = kTag;
		Send(pkt, true, mr_sender_path_port(&host.s, id));
		return kPktBytes;
	}

	void Send(const mr_pkt &pkt, bool to_receiver, uint16_t sport)
	{
		uint8_t buf[MR_MAX_HDR_LEN + kSlice] = {};
		int n = mr_wire_encode(&pkt, buf, sizeof(buf));
		ASSERT_GT(n, 0);
		n += static_cast<int>(pkt.payload_len);
		std::uniform_real_distribution<double> u(0, 1);
		if (to_receiver) {
			if (blackholed.count(sport) || u(rng) < cfg.loss) {
				dropped++;
				return;
			}
		} else if (peer_silent || acks_blackholed.count(sport) ||
			   u(rng) < cfg.ack_loss) {
			return;
		}
		int copies = to_receiver && u(rng) < cfg.dup ? 2 : 1;
		uint64_t *free_at = &link_free;
		if (!cfg.link_of.empty()) {
			free_at = &ack_link_free;
			if (to_receiver) {
				const uint32_t l =
				    cfg.link_of.at(pkt.base.path);
				if (links_free.size() <= l)
					links_free.resize(l + 1);
				free_at = &links_free[l];
				link_sent[l]++;
			}
		}
		*free_at = std::max(*free_at, now) +
			   (free_at == &ack_link_free ? 0 : cfg.gap_ns);
		for (int i = 0; i < copies; i++) {
			uint64_t jitter =
			    cfg.jitter_ns ? rng() % cfg.jitter_ns : 0;
			wire.push(Wire{*free_at + cfg.delay_ns + jitter, seq++,
				       to_receiver, sport,
				       std::vector<uint8_t>(buf, buf + n)});
		}
	}

	void Deliver(const Wire &w)
	{
		mr_pkt pkt;
		ASSERT_EQ(mr_wire_decode(w.bytes.data(),
					 static_cast<u32>(w.bytes.size()),
					 &pkt),
			  0);
		if (w.to_receiver)
			Receive(pkt, w.sport);
		else
			Ack(pkt);
	}

	void Ack(const mr_pkt &pkt)
	{
		if (!host.s.on)
			return;
		int err = mr_sender_ack(&host.s, &pkt, now);
		if (err) {
			stale_acks++;
			return;
		}
		// The completer's part: report, then retire what completed.
		mr_requester_peer_done(&req.r, &host.s, pkt.ack.msn_done);
		while (mr_requester_head(&req.r) == MR_REQ_HEAD_DONE)
			mr_requester_retire(&req.r, false);
	}

	// The receiver's side of a data packet, as resp.c takes it: the
	// responder engine admits it, the receiver engine records it on its
	// path, the responder places it; then the ACKs.
	void Receive(const mr_pkt &pkt, uint16_t sport)
	{
		const uint32_t id = pkt.base.path;
		ASSERT_LT(id, cfg.paths);
		mr_rx in{};
		in.pkt = &pkt;
		mr_responder_admit(&resp.r, &in);
		ASSERT_NE(in.kind, MR_RX_DROP);
		bool at_once = false;
		if (mr_receiver_arrival(&rx.r, &pkt, sport, false, &at_once) !=
		    MR_SACK_NEW) {
			mr_responder_unadmit(&resp.r, &in);
			return;
		}
		bool complete = false, dup = false;
		if (in.kind == MR_RX_MESSAGE) {
			ASSERT_EQ(mr_responder_place(&resp.r, &in, &complete,
						     &dup),
				  0);
		}
		if (complete) {
			mr_responder_advance(&resp.r, false);
			mr_receiver_ack_all(&rx.r, now);
		} else {
			// A slice no completion will acknowledge goes at once.
			mr_receiver_coalesce(&rx.r, id, pkt.base.psn,
					     at_once || dup ||
						 in.kind == MR_RX_OLD,
					     now);
		}
	}

	// The responder engine's memory: each slice lands once.
	int ResponderWrite(const mr_rx &w) override
	{
		const uint32_t msn = w.pkt->write.msn,
			       slice = w.pkt->write.offset / kSlice;
		EXPECT_EQ(w.pkt->payload_len, kSlice);
		EXPECT_LT(msn, cfg.msgs);
		EXPECT_LT(slice, cfg.pkts_per_msg);
		if (msn >= cfg.msgs || slice >= cfg.pkts_per_msg)
			return -MR_EACCESS;
		EXPECT_FALSE(landed[msn][slice]) << "placed twice";
		landed[msn][slice] = true;
		placed++;
		return 0;
	}

	// The receiver engine's environment (receiver_host.hh).
	void ReceiverSend(const mr_pkt &ack, uint16_t sport) override
	{
		mr_pkt pkt = ack;
		pkt.base.qpn = kQpn;
		pkt.base.tag = kTag;
		acks++;
		Send(pkt, false, sport);
	}
	uint32_t ReceiverMsnDone() override { return resp.r.msn_done; }
	uint32_t ReceiverHint() override { return cfg.hint_kbps; }
	uint64_t ReceiverAckDelay() override { return cfg.ack_delay_ns; }

	struct Sent {
		uint32_t id, psn;
		uint8_t flags;
		uint32_t msn, offset, gen;
	};

	LinkConfig cfg;
	std::mt19937_64 rng;
	Host host{};
	RequesterHost req{};
	ResponderHost resp{};
	std::vector<mr_req_msg> kind;	    // messages that are not WRITEs
	std::map<uint32_t, uint32_t> rsn;   // RSNs the requester gave
	std::map<uint32_t, uint8_t> order;  // order bytes, of every message
	std::vector<mr_tx_path> path;
	std::vector<std::unique_ptr<mr_tx_ring>> free_rings;
	uint32_t rings_out = 0, rings_peak = 0, ring_fails = 0, ring_gets = 0;
	ReceiverHost rx{};
	std::vector<std::vector<bool>> landed;
	std::priority_queue<Wire, std::vector<Wire>, std::greater<Wire>> wire;
	std::set<uint16_t> blackholed;      // data from these ports is lost
	std::set<uint16_t> acks_blackholed; // and ACKs to these
	std::vector<Sent> sent_log;
	std::map<int, uint64_t> events;
	std::map<int, uint64_t> resent_why;
	uint64_t now = 0, link_free = 0, seq = 0;
	uint64_t ack_link_free = 0;		// ACKs: no queue
	std::vector<uint64_t> links_free;	// cfg.link_of's links
	std::map<uint32_t, uint64_t> link_sent; // data packets per link
	uint64_t xmits = 0, acks = 0, dropped = 0, placed = 0, stale_acks = 0,
		 failovers = 0;
	uint64_t moved = 0;
	bool peer_silent = false, retry_exceeded = false;
};

// Everything a run did, to compare two runs of one seed.
std::vector<uint64_t> Summary(const Harness &h)
{
	std::vector<uint64_t> v{h.now, h.xmits, h.acks, h.dropped, h.failovers};
	for (const auto &[k, n] : h.events)
		v.push_back(static_cast<uint64_t>(k) << 32 | n);
	return v;
}

// One connection sprayed over 4 equal-cost links that its 16 paths hash
// to unevenly (6/4/4/2, as ECMP hashing does): the connection's window
// binds before the paths', and spraying by the paths' windows alone
// gives the link of 6 paths 6/16 of the packets: 0.71 of the links' sum.
// Spraying by the room the windows have moves the packets to the paths
// whose ACKs come back.
TEST(SenderEngine, UnevenlyHashedLinksAllFill)
{
	LinkConfig c;
	c.paths = 16;
	c.msgs = 256;
	c.gap_ns = 10 * kUs;
	c.link_of = { 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3 };
	c.hint_kbps = 4 * kPktBytes * 8 * 100; // the links' sum: 320 Mbit/s
	Harness h(c);

	ASSERT_TRUE(h.Run());
	const uint64_t pkts = (uint64_t)c.msgs * c.pkts_per_msg;
	const double ideal = (double)pkts * c.gap_ns / 4 + 2 * c.delay_ns;

	EXPECT_GE(ideal / (double)h.now, 0.8)
	    << "goodput over the 4 links' sum; per link " << h.link_sent[0]
	    << "/" << h.link_sent[1] << "/" << h.link_sent[2] << "/"
	    << h.link_sent[3];
	EXPECT_EQ(h.dropped, 0u);
}

TEST(SenderEngine, CleanLinkDeliversWithoutResends)
{
	Harness h(LinkConfig{});
	ASSERT_TRUE(h.Run());
	EXPECT_EQ(h.xmits, 64u * 16u);
	EXPECT_EQ(h.events[MR_SEV_RESENT], 0u);
	EXPECT_EQ(h.events[MR_SEV_RTO], 0u);
	EXPECT_EQ(h.failovers, 0u);
	// The sender sprays: every path carried packets.
	for (uint32_t i = 0; i < h.cfg.paths; i++)
		EXPECT_GT(h.path[i].n_sent, 0u) << "path " << i;
	// The ACKs still on the wire when the last message completed.
	h.Drain();
	EXPECT_TRUE(mr_sender_idle(h.S()));
}

// "A gap is a loss, resent at once": random loss is repaired by the
// SACKs, same path and PSN, with few timeouts.
TEST(SenderEngine, RandomLossIsRepairedBySack)
{
	LinkConfig c;
	c.loss = 0.05;
	c.seed = 7;
	Harness h(c);
	ASSERT_TRUE(h.Run());
	EXPECT_GT(h.dropped, 20u);
	EXPECT_GT(h.events[MR_SEV_SACK_GAP], h.events[MR_SEV_RTO]);
	EXPECT_GE(h.resent_why[MR_SEND_SACK], h.dropped / 2);
	EXPECT_EQ(h.failovers, 0u);
}

TEST(SenderEngine, ReorderingDuplicatesAndAckLossDeliverEverything)
{
	LinkConfig c;
	c.seed = 11;
	c.jitter_ns = 150 * kUs;
	c.dup = 0.05;
	c.ack_loss = 0.05;
	c.loss = 0.01;
	Harness h(c);
	ASSERT_TRUE(h.Run());
	EXPECT_EQ(h.failovers, 0u);
}

// Hosts that reorder a path's packets a little (two CPUs sending into
// per-CPU queues) cost a few needless resends, not one per reordering:
// each needless gap resend doubles the arrivals the path's next loss
// takes. Real losses are still repaired by the SACKs.
TEST(SenderEngine, ReorderingHostsRaiseThePathsTolerance)
{
	LinkConfig c;
	c.seed = 5;
	c.jitter_ns = 40 * kUs; // up to 20 packets out of order, 5 a path
	Harness h(c);
	ASSERT_TRUE(h.Run());
	EXPECT_EQ(h.dropped, 0u);
	// 98 with the tolerance held at one
	EXPECT_LE(h.resent_why[MR_SEND_SACK], 5u * c.paths);
	for (uint32_t i = 0; i < c.paths; i++)
		EXPECT_GT(h.path[i].sb.reorder, 1u) << "path " << i;

	c.loss = 0.02;
	Harness lossy(c);
	ASSERT_TRUE(lossy.Run());
	EXPECT_GT(lossy.dropped, 10u);
	EXPECT_GE(lossy.resent_why[MR_SEND_SACK], lossy.dropped / 2);
}

// A lost last packet has nothing behind it to reveal the gap: the tail
// probe resends it, before any RTO.
TEST(SenderEngine, TailLossIsRepairedByTheProbe)
{
	LinkConfig c;
	c.paths = 1;
	c.msgs = 1;
	c.pkts_per_msg = 4;
	c.cc = false; // the path's whole window at once
	Harness h(c);
	// Send all four, lose the last on the wire.
	h.Push();
	ASSERT_EQ(h.xmits, 4u);
	std::vector<Wire> keep;
	while (!h.wire.empty()) {
		keep.push_back(h.wire.top());
		h.wire.pop();
	}
	keep.pop_back();
	for (auto &w : keep)
		h.wire.push(w);
	ASSERT_TRUE(h.Run());
	EXPECT_EQ(h.events[MR_SEV_PROBE], 1u);
	EXPECT_EQ(h.events[MR_SEV_RTO], 0u);
	EXPECT_EQ(h.resent_why[MR_SEND_PROBE], 1u);
}

// A path whose port is black-holed fails over after MR_PATH_DEFAULT_FAIL_AFTER
// RTOs: its packets move to the others, it restarts on a new port and
// epoch, and the transfer completes.
TEST(SenderEngine, BlackHoledPathFailsOverAndTheTransferCompletes)
{
	LinkConfig c;
	c.seed = 3;
	Harness h(c);
	const uint16_t port = mr_sender_path_port(h.S(), 0);
	const uint16_t epoch = mr_sender_path_epoch(h.S(), 0);
	h.blackholed.insert(port);
	ASSERT_TRUE(h.Run());
	EXPECT_GE(h.failovers, 1u);
	EXPECT_GT(h.moved, 0u);
	EXPECT_NE(mr_sender_path_port(h.S(), 0), port);
	EXPECT_NE(mr_sender_path_epoch(h.S(), 0), epoch);
	EXPECT_GE(h.events[MR_SEV_RTO],
		  static_cast<uint64_t>(MR_PATH_DEFAULT_FAIL_AFTER));
}

// A path borrows the records of its packets for its first packet out and
// keeps them while it sends, one ring per path at most; once everything
// is acknowledged, the host's trim gives them back after a whole period
// without a packet, and the connection holds none.
TEST(SenderEngine, IdlePathsHoldNoRings)
{
	Harness h(LinkConfig{});
	EXPECT_EQ(h.rings_out, 0u);
	EXPECT_FALSE(mr_sender_holds(h.S()));
	ASSERT_TRUE(h.Run());
	h.Drain();
	EXPECT_GE(h.rings_peak, 1u);
	EXPECT_LE(h.rings_peak, h.cfg.paths);
	EXPECT_EQ(h.ring_gets, h.rings_peak) << "borrowed once per path";
	EXPECT_EQ(h.S()->rings, h.rings_out);
	EXPECT_TRUE(mr_sender_trim(h.S()));
	EXPECT_FALSE(mr_sender_trim(h.S()));
	EXPECT_EQ(h.rings_out, 0u);
	for (uint32_t i = 0; i < h.cfg.paths; i++)
		EXPECT_EQ(h.path[i].ring, nullptr) << "path " << i;
}

// A failed path's ring moves whole into the requeue, and is given back
// once its last packet has moved.
TEST(SenderEngine, AFailedPathsRingMovesWholeAndIsGivenBack)
{
	LinkConfig c;
	c.seed = 3;
	Harness h(c);
	h.blackholed.insert(mr_sender_path_port(h.S(), 0));
	ASSERT_TRUE(h.Run());
	h.Drain();
	EXPECT_GT(h.moved, 0u);
	EXPECT_EQ(h.S()->requeue.count, 0u);
	EXPECT_EQ(h.S()->requeue.head, nullptr);
	mr_sender_trim(h.S());
	mr_sender_trim(h.S());
	EXPECT_EQ(h.rings_out, 0u);
}

// No memory for a ring: nothing goes, the pacer's wait says when to try
// again, and the transfer completes.
TEST(SenderEngine, NoMemoryForARingWaitsThenCompletes)
{
	LinkConfig c;
	Harness h(c);
	h.ring_fails = 3 * c.paths;
	h.Push();
	EXPECT_EQ(h.xmits, 0u);
	EXPECT_EQ(h.S()->pace_ns, h.now + MR_RING_WAIT_NS);
	ASSERT_TRUE(h.Run());
	EXPECT_EQ(h.ring_fails, 0u);
	EXPECT_GE(h.now, 2 * MR_RING_WAIT_NS);
	h.Drain();
	mr_sender_trim(h.S());
	mr_sender_trim(h.S());
	EXPECT_EQ(h.rings_out, 0u);
}

// A path whose ACKs are lost fails over. What it carried arrived, but no
// ACK confirmed it: its messages do not complete on "MSN done" alone
// (protocol.rst, "Completion"), so its packets move to other paths, where
// they are acknowledged as duplicates and placed once; every message
// then completes.
TEST(SenderEngine, PathWithLostAcksFailsOverAndMovesWhatNoAckConfirmed)
{
	LinkConfig c;
	c.seed = 5;
	c.msgs = 4096; // long enough for the path's RTOs in a row
	Harness h(c);
	h.acks_blackholed.insert(mr_sender_path_port(h.S(), 0));
	ASSERT_TRUE(h.Run());
	h.Drain();
	EXPECT_GE(h.failovers, 1u);
	EXPECT_GE(h.moved, 1u);
	EXPECT_EQ(h.placed, static_cast<uint64_t>(c.msgs) * c.pkts_per_msg);
	EXPECT_EQ(h.R()->msn_head, c.msgs);
}

// A peer that stops answering fails the connection once every path had
// retries + 1 timeouts in a row (x fail_after), not before.
TEST(SenderEngine, SilentPeerSpendsTheRetryBudgetThenStops)
{
	LinkConfig c;
	c.paths = 2;
	c.retries = 2;
	Harness h(c);
	h.peer_silent = true;
	EXPECT_FALSE(h.Run());
	EXPECT_TRUE(h.retry_exceeded);
	EXPECT_FALSE(h.S()->on);
	EXPECT_EQ(mr_sender_expiry(h.S()), 0u);
	const uint64_t budget =
	    (c.retries + 1) * c.paths * MR_PATH_DEFAULT_FAIL_AFTER;
	EXPECT_EQ(h.events[MR_SEV_RTO], budget + 1);
	// The timeouts back off: it took seconds of silence, not milliseconds.
	EXPECT_GT(h.now, 1000ull * 1000 * 1000);
}

// The packet that fills its path's window asks for an ACK at once, and
// only it: the receiver holds ACKs over packets the path may not send.
TEST(SenderEngine, ThePacketThatFillsThePathWindowAsksForAnAck)
{
	LinkConfig c;
	c.paths = 1;
	c.cc = false;
	c.msgs = 32;
	Harness h(c);
	h.Push();
	const uint32_t window = h.S()->ps.path[0].window;
	ASSERT_GT(window, 1u);
	ASSERT_GE(h.sent_log.size(), window);
	for (uint32_t i = 0; i < window; i++)
		EXPECT_EQ(h.sent_log[i].flags & MR_FLAG_ACK_REQ,
			  i + 1 == window ? MR_FLAG_ACK_REQ : 0)
		    << "packet " << i;
	ASSERT_TRUE(h.Run());
}

// MR_FLAG_WINDOW_LIMITED: a sender whose windows loss bursts cut far below
// what the receiver's hint fills says so on the packets that fill them;
// with no hint to be below, never.
TEST(SenderEngine, WindowsFarBelowTheHintSaySo)
{
	for (uint32_t hint : {100000000u, 0u}) {
		LinkConfig c;
		c.loss = 0.2;
		c.hint_kbps = hint;
		Harness h(c);
		ASSERT_TRUE(h.Run()) << hint;
		const auto flagged = std::count_if(
			h.sent_log.begin(), h.sent_log.end(), [](const auto &s) {
				return s.flags & MR_FLAG_WINDOW_LIMITED;
			});
		if (hint)
			EXPECT_GT(flagged, 0) << hint;
		else
			EXPECT_EQ(flagged, 0) << hint;
	}
}

// Every ACK is hostile until checked: a path the connection does not
// have, an abandoned epoch, a PSN never sent change nothing.
TEST(SenderEngine, BogusAcksChangeNothing)
{
	LinkConfig c;
	c.paths = 2;
	Harness h(c);
	h.Push();
	const uint32_t inflight = h.S()->ps.inflight;
	mr_pkt ack{};
	ack.base.opcode = MR_OP_ACK;
	ack.base.path = 5;
	EXPECT_EQ(mr_sender_ack(h.S(), &ack, 1), -MR_EFIELD);
	ack.base.path = 0;
	ack.base.epoch = static_cast<u16>(mr_sender_path_epoch(h.S(), 0) + 7);
	ack.ack.cum_psn = 3;
	EXPECT_NE(mr_sender_ack(h.S(), &ack, 1), 0);
	ack.base.epoch = mr_sender_path_epoch(h.S(), 0);
	ack.ack.cum_psn = 100000; // beyond what was sent
	EXPECT_NE(mr_sender_ack(h.S(), &ack, 1), 0);
	EXPECT_EQ(h.S()->ps.inflight, inflight);
	EXPECT_EQ(h.events[MR_SEV_RESENT], 0u);
	ASSERT_TRUE(h.Run());
}

// The engine reads no clock and draws no randomness of its own: one seed,
// one run.
TEST(SenderEngine, OneSeedOneRun)
{
	LinkConfig c;
	c.seed = 5;
	c.loss = 0.03;
	c.jitter_ns = 50 * kUs;
	Harness a(c), b(c);
	ASSERT_TRUE(a.Run());
	ASSERT_TRUE(b.Run());
	EXPECT_EQ(Summary(a), Summary(b));
}

// Seeds across the lossy link: every one delivers every slice, once
// placed, and ends with nothing in flight.
TEST(SenderEngine, ManySeedsOverAHostileLink)
{
	for (uint64_t seed = 100; seed < 120; seed++) {
		LinkConfig c;
		c.seed = seed;
		c.loss = 0.02 + 0.01 * static_cast<double>(seed % 5);
		c.dup = 0.02;
		c.ack_loss = 0.02;
		c.jitter_ns = 80 * kUs;
		c.paths = 1 + static_cast<uint32_t>(seed % 8);
		c.msgs = 16;
		Harness h(c);
		ASSERT_TRUE(h.Run()) << "seed " << seed;
		EXPECT_EQ(h.placed, c.msgs * c.pkts_per_msg) << "seed " << seed;
		EXPECT_TRUE(h.S()->on) << "seed " << seed;
	}
}

// The requester engine (requester.c) over the same harness: what goes
// next, and the messages' bookkeeping.

mr_req_msg Read(uint32_t length)
{
	mr_req_msg m{};
	m.length = length;
	m.rd = true;
	return m;
}

// A READ is one packet, sent twice on two paths (a lone packet's loss
// has nothing behind it to reveal it); the responder executes rd_max at
// a time, so the next READ waits until an answer is in.
TEST(RequesterEngine, ReadGoesTwiceAndRdMaxHoldsTheNext)
{
	LinkConfig c;
	c.msgs = 3;
	c.cc = false;
	Harness h(c);
	h.kind = {Read(4096), Read(64)};
	h.Push();
	ASSERT_EQ(h.sent_log.size(), 2u);
	EXPECT_EQ(h.sent_log[0].msn, 0u);
	EXPECT_EQ(h.sent_log[1].msn, 0u);
	EXPECT_NE(h.sent_log[0].id, h.sent_log[1].id);
	EXPECT_EQ(h.R()->rd_out, 1u);
	EXPECT_EQ(h.R()->msn_send, 1u);
	// Its whole response is in: the next READ goes, then the WRITE.
	h.kind[0].answered = true;
	mr_requester_rd_answered(h.R(), 0);
	h.Push();
	ASSERT_EQ(h.sent_log.size(), 4u + c.pkts_per_msg);
	EXPECT_EQ(h.sent_log[2].msn, 1u);
	EXPECT_EQ(h.sent_log[3].msn, 1u);
	EXPECT_EQ(h.sent_log[4].msn, 2u);
	EXPECT_EQ(h.R()->rd_out, 1u);
	// With one path the READ goes once.
	c.paths = 1;
	Harness one(c);
	one.kind = {Read(64)};
	one.Push();
	EXPECT_EQ(one.sent_log.size(), 1u + 2 * c.pkts_per_msg);
}

// RNR: nothing new goes during the wait; then the refused message goes
// again from its start, and what followed it, in a new generation (so
// that NAKs of the old packets are old news). Without infinite retries,
// each wait spends one.
TEST(RequesterEngine, RnrWaitsThenRewindsToTheRefusedMessage)
{
	LinkConfig c;
	c.msgs = 3;
	c.pkts_per_msg = 4;
	c.cc = false;
	c.rnr_retry = 1;
	Harness h(c);
	h.kind = {mr_req_msg{}, mr_req_msg{}, mr_req_msg{}};
	for (auto &m : h.kind) {
		m.length = 4 * kSlice;
		m.consumes = true;
	}
	h.Push();
	ASSERT_EQ(h.sent_log.size(), 12u);
	EXPECT_EQ(h.rsn, (std::map<uint32_t, uint32_t>{{0, 0}, {1, 1}, {2, 2}}));
	ASSERT_TRUE(mr_requester_rnr_wait(h.R(), 1, c.rnr_retry, 5000));
	EXPECT_EQ(mr_requester_expiry(h.R()), 5000u);
	h.Push();
	EXPECT_EQ(h.sent_log.size(), 12u);
	mr_requester_rnr_resume(h.R());
	EXPECT_EQ(mr_requester_expiry(h.R()), 0u);
	EXPECT_EQ(h.R()->msn_send, 1u);
	EXPECT_EQ(h.R()->msn_hi, 3u);
	h.Push();
	ASSERT_EQ(h.sent_log.size(), 20u);
	for (size_t i = 12; i < 20; i++) {
		EXPECT_EQ(h.sent_log[i].msn, 1 + (i - 12) / 4) << i;
		EXPECT_EQ(h.sent_log[i].offset, (i - 12) % 4 * kSlice) << i;
		EXPECT_EQ(h.sent_log[i].gen, 1u) << i;
	}
	// Each message kept the RSN of its first send.
	EXPECT_EQ(h.rsn.size(), 3u);
	// The one retry is spent: the next RNR fails the message.
	EXPECT_FALSE(mr_requester_rnr_wait(h.R(), 1, c.rnr_retry, 9000));
	// Retry count 7 is infinite.
	EXPECT_TRUE(mr_requester_rnr_wait(h.R(), 1, MR_RNR_RETRY_INFINITE,
					  9000));
}

// Streams: each message's order byte names its stream's message before
// it, counted back from it less one; a stream's first names none. An RNR
// rewind keeps the bytes the first send gave.
TEST(RequesterEngine, OrderBytesNameTheStreamsPreviousMessage)
{
	LinkConfig c = OnePacketMessages(6);
	c.rnr_retry = MR_RNR_RETRY_INFINITE;
	Harness h(c);
	std::vector<uint32_t> last(3);
	const uint16_t streams[] = { 0, 1, 0, 2, 1, 0 };

	mr_requester_streams(h.R(), last.data(), 3);
	h.kind.resize(6);
	for (uint32_t i = 0; i < 6; i++) {
		h.kind[i].length = kSlice;
		h.kind[i].stream = streams[i];
	}
	h.Push();
	ASSERT_EQ(h.sent_log.size(), 6u);
	const std::map<uint32_t, uint8_t> want = {
		{0, MR_ORDER_NONE}, {1, MR_ORDER_NONE}, {2, 1},
		{3, MR_ORDER_NONE}, {4, 2}, {5, 2},
	};
	EXPECT_EQ(h.order, want);
	ASSERT_TRUE(mr_requester_rnr_wait(h.R(), 2, c.rnr_retry, 100));
	mr_requester_rnr_resume(h.R());
	h.Push();
	EXPECT_EQ(h.order, want);

	// Without streams every message completes after the one before it.
	Harness one(OnePacketMessages(3));
	one.Push();
	EXPECT_EQ(one.order, (std::map<uint32_t, uint8_t>{
		{0, MR_ORDER_PREV}, {1, MR_ORDER_PREV}, {2, MR_ORDER_PREV}}));
}

// "MSN done" beyond anything sent is bogus and changes nothing; an older
// one is old news.
TEST(RequesterEngine, PeerDoneBeyondWhatWentIsIgnored)
{
	LinkConfig c = OnePacketMessages(8);
	Harness h(c);
	h.Push();
	ASSERT_EQ(h.R()->msn_hi, 8u);
	EXPECT_FALSE(mr_requester_peer_done(h.R(), h.S(), 9));
	EXPECT_EQ(h.R()->peer_done, 0u);
	EXPECT_TRUE(mr_requester_peer_done(h.R(), h.S(), 5));
	EXPECT_EQ(h.R()->peer_done, 5u);
	EXPECT_TRUE(mr_requester_peer_done(h.R(), h.S(), 3));
	EXPECT_EQ(h.R()->peer_done, 5u);
	EXPECT_TRUE(mr_requester_peer_done(h.R(), h.S(), 8));
	EXPECT_EQ(h.R()->peer_done, 8u);
}

// An ACK of path @id: every PSN before @cum arrived, and the messages
// before @msn_done are done; the completer's part as comp.c takes it.
void AckPath(Harness &h, uint32_t id, uint32_t cum, uint32_t msn_done)
{
	mr_pkt a{};
	a.base.opcode = MR_OP_ACK;
	a.base.path = static_cast<u8>(id);
	a.base.epoch = mr_sender_path_epoch(h.S(), id);
	a.base.psn = cum - 1;
	a.ack.cum_psn = cum;
	a.ack.msn_done = msn_done;
	h.Ack(a);
}

// A message completes only once the peer reports it done and has
// acknowledged every packet of it: a peer that says later messages are
// done, whose packets it never acknowledged, completes nothing beyond
// what it acknowledged (issue 31).
TEST(RequesterEngine, PeerDoneCompletesOnlyWhatWasAcknowledged)
{
	LinkConfig c = OnePacketMessages(4);
	Harness h(c);
	h.Push();
	ASSERT_EQ(h.sent_log.size(), 4u);
	// Messages 0 and 1 acknowledged, all four claimed done.
	AckPath(h, 0, h.sent_log[2].psn, 4);
	EXPECT_EQ(h.R()->peer_done, 4u);
	EXPECT_EQ(h.R()->msn_head, 2u);
	EXPECT_EQ(mr_requester_head(h.R()), MR_REQ_HEAD_WAITS);
	// No resend of them goes as a stale (empty) SEND.
	mr_tx_pkt tp{};
	tp.msn = 2;
	EXPECT_FALSE(mr_requester_stale(h.R(), &tp));
	// The rest acknowledged: an ACK with no new "MSN done" completes them.
	AckPath(h, 0, h.sent_log[3].psn + 1, 0);
	EXPECT_EQ(h.R()->msn_head, 4u);
}

// During an RNR wait the refused message is not done, though its packets
// were acknowledged: an "MSN done" past it is bogus. After the wait its
// new packets must be acknowledged before it completes.
TEST(RequesterEngine, PeerDoneCannotCompleteAMessageAnRnrWaitHolds)
{
	LinkConfig c = OnePacketMessages(2);
	Harness h(c);
	h.Push();
	ASSERT_EQ(h.sent_log.size(), 2u);
	AckPath(h, 0, h.sent_log[1].psn, 1);
	ASSERT_EQ(h.R()->msn_head, 1u);
	ASSERT_TRUE(mr_requester_rnr_wait(h.R(), 1, c.rnr_retry, 5000));
	AckPath(h, 0, h.sent_log[1].psn + 1, 0);
	EXPECT_FALSE(mr_requester_peer_done(h.R(), h.S(), 2));
	EXPECT_EQ(mr_requester_head(h.R()), MR_REQ_HEAD_WAITS);
	mr_requester_rnr_resume(h.R());
	h.Push();
	ASSERT_EQ(h.sent_log.size(), 3u);
	EXPECT_TRUE(mr_requester_peer_done(h.R(), h.S(), 2));
	EXPECT_EQ(mr_requester_head(h.R()), MR_REQ_HEAD_WAITS);
	AckPath(h, 0, h.sent_log[2].psn + 1, 2);
	EXPECT_EQ(h.R()->msn_head, 2u);
}

// Should the refused message retire during its RNR wait all the same,
// the rewind starts at the oldest message not retired, never before it.
TEST(RequesterEngine, RnrResumeNeverRewindsBeforeTheHead)
{
	LinkConfig c = OnePacketMessages(3);
	Harness h(c);
	h.Push();
	ASSERT_TRUE(mr_requester_rnr_wait(h.R(), 0, c.rnr_retry, 5000));
	mr_requester_retire(h.R(), false);
	mr_requester_retire(h.R(), false);
	mr_requester_rnr_resume(h.R());
	EXPECT_EQ(h.R()->msn_send, 2u);
	EXPECT_EQ(h.R()->rd_out, 0u);
}

// Over several paths: a message whose packets went on two waits for the
// ACKs of both, in whichever order they come.
TEST(RequesterEngine, PeerDoneWaitsForEveryPathOfTheMessage)
{
	Harness h(TwoPathMessages(2));
	h.Push();
	ASSERT_EQ(h.sent_log.size(), 8u);
	std::set<uint32_t> on;
	for (const auto &e : h.sent_log)
		if (e.msn == 0)
			on.insert(e.id);
	ASSERT_EQ(on.size(), 2u);
	// Path 0 acknowledged in full, reporting both messages done.
	AckPath(h, 0, mr_sender_path_nxt(h.S(), 0), 2);
	EXPECT_EQ(h.R()->msn_head, 0u);
	// Path 1's ACK, with an older "MSN done", completes both.
	AckPath(h, 1, mr_sender_path_nxt(h.S(), 1), 1);
	EXPECT_EQ(h.R()->msn_head, 2u);
}

// What the peer reported done, its last ACK lost on one path with a peer
// that then went away, counts as acknowledged MR_SETTLE_NS later, and
// not before.
TEST(RequesterEngine, WhatThePeerReportedDoneSettles)
{
	Harness h(TwoPathMessages(3));
	h.Push();
	ASSERT_EQ(h.sent_log.size(), 12u);
	EXPECT_FALSE(mr_requester_settle(h.R(), 1000, MR_SETTLE_NS));
	// Path 0 acknowledged in full, messages 0 and 1 reported done; path
	// 1's ACKs never come.
	AckPath(h, 0, mr_sender_path_nxt(h.S(), 0), 2);
	ASSERT_EQ(h.R()->msn_head, 0u);
	const uint64_t t = 5ull * 1000 * 1000;
	EXPECT_FALSE(mr_requester_settle(h.R(), t, MR_SETTLE_NS));
	EXPECT_FALSE(mr_requester_settle(h.R(), t + MR_SETTLE_NS - 1,
					 MR_SETTLE_NS));
	EXPECT_EQ(mr_requester_head(h.R()), MR_REQ_HEAD_WAITS);
	EXPECT_TRUE(mr_requester_settle(h.R(), t + MR_SETTLE_NS,
					MR_SETTLE_NS));
	while (mr_requester_head(h.R()) == MR_REQ_HEAD_DONE)
		mr_requester_retire(h.R(), false);
	// Message 2, not reported done, still waits.
	EXPECT_EQ(h.R()->msn_head, 2u);
	EXPECT_FALSE(mr_requester_settle(h.R(), t + 10 * MR_SETTLE_NS,
					 MR_SETTLE_NS));
	EXPECT_EQ(h.R()->msn_head, 2u);
}

// The first failure stands: a later message's error does not replace
// it, an earlier one's does; nothing new goes after it.
TEST(RequesterEngine, TheEarliestErrorStandsAndStopsNewRequests)
{
	LinkConfig c = OnePacketMessages(8);
	Harness h(c);
	EXPECT_TRUE(mr_requester_fail(h.R(), 5, 11));
	EXPECT_FALSE(mr_requester_fail(h.R(), 7, 12));
	EXPECT_TRUE(mr_requester_fail(h.R(), 3, 13));
	EXPECT_EQ(h.R()->err_msn, 3u);
	EXPECT_EQ(h.R()->err_status, 13u);
	h.Push();
	EXPECT_TRUE(h.sent_log.empty());
}

// A message window: no new message beyond MR_MSG_WINDOW of the oldest
// one not retired.
TEST(RequesterEngine, NothingBeyondTheMessageWindow)
{
	LinkConfig c;
	c.msgs = MR_MSG_WINDOW + 8;
	c.pkts_per_msg = 1;
	c.paths = 16;
	c.cc = false;
	Harness h(c);
	h.Push();
	EXPECT_EQ(h.R()->msn_send, static_cast<uint32_t>(MR_MSG_WINDOW));
	ASSERT_TRUE(h.Run());
}

// What a NAK means: only a message started and not complete can be
// refused; RNR starts a wait, unless one runs or the NAK is of a packet
// sent before the last rewind; spent retries fail the message.
TEST(RequesterEngine, NaksAreJudgedAgainstWhatWent)
{
	LinkConfig c = OnePacketMessages(4);
	c.rnr_retry = 1;
	Harness h(c);
	h.Push();
	ASSERT_EQ(h.sent_log.size(), 4u);
	auto nak = [&](uint32_t msn, uint8_t code, uint32_t psn) {
		mr_pkt p{};
		p.base.opcode = MR_OP_NAK;
		p.base.path = 0;
		p.base.epoch = mr_sender_path_epoch(h.S(), 0);
		p.base.psn = psn;
		p.nak.msn = msn;
		p.nak.code = code;
		p.nak.rnr_delay = 3;
		return mr_requester_nak(h.R(), h.S(), &p, c.rnr_retry, 1000);
	};
	EXPECT_EQ(nak(7, MR_NAK_REMOTE_ACCESS, 0), MR_REQ_NAK_OLD);
	EXPECT_EQ(nak(1, MR_NAK_INVALID_REQUEST, h.sent_log[1].psn),
		  MR_REQ_NAK_FAIL);
	EXPECT_EQ(nak(1, 0x7f, h.sent_log[1].psn), MR_REQ_NAK_IGNORED);
	// The NAK names a PSN that carried another message: old news.
	EXPECT_EQ(nak(2, MR_NAK_RNR, h.sent_log[1].psn), MR_REQ_NAK_IGNORED);
	EXPECT_EQ(nak(2, MR_NAK_RNR, h.sent_log[2].psn), MR_REQ_NAK_RNR_WAIT);
	EXPECT_EQ(mr_requester_expiry(h.R()), 1000u + 30000u);
	EXPECT_EQ(nak(2, MR_NAK_RNR, h.sent_log[2].psn), MR_REQ_NAK_IGNORED);
	mr_requester_rnr_resume(h.R());
	// Rewound: message 2 is not started again yet.
	EXPECT_EQ(nak(2, MR_NAK_RNR, h.sent_log[2].psn), MR_REQ_NAK_OLD);
	h.Push();
	ASSERT_EQ(h.sent_log.size(), 6u);
	// Of the generation before the rewind: ignored.
	EXPECT_EQ(nak(2, MR_NAK_RNR, h.sent_log[2].psn), MR_REQ_NAK_IGNORED);
	EXPECT_EQ(nak(2, MR_NAK_RNR, h.sent_log[4].psn), MR_REQ_NAK_RNR_SPENT);
}

// A fatal NAK must name a packet in flight, of the message it refuses or
// a later one (the responder refuses every packet after it): one of
// another path, epoch or PSN, one not sent, or an earlier message's is
// bogus and fails nothing (issue 31).
TEST(RequesterEngine, FatalNaksMustNameAPacketInFlight)
{
	LinkConfig c;
	c.msgs = 4;
	c.pkts_per_msg = 1;
	c.paths = 2;
	c.cc = false;
	Harness h(c);
	h.Push();
	ASSERT_EQ(h.sent_log.size(), 4u);
	auto nak = [&](uint32_t msn, uint8_t code, uint32_t id, int depoch,
		       uint32_t psn) {
		mr_pkt p{};
		p.base.opcode = MR_OP_NAK;
		p.base.path = static_cast<u8>(id);
		p.base.epoch = static_cast<u16>(
		    mr_sender_path_epoch(h.S(), id % 2) + depoch);
		p.base.psn = psn;
		p.nak.msn = msn;
		p.nak.code = code;
		return mr_requester_nak(h.R(), h.S(), &p, c.rnr_retry, 1000);
	};
	const auto &m1 = h.sent_log[1], &m0 = h.sent_log[0];
	const auto &m3 = h.sent_log[3];
	for (uint8_t code : {MR_NAK_REMOTE_ACCESS, MR_NAK_INVALID_REQUEST}) {
		// Another path, epoch, a PSN not sent, a path it lacks.
		EXPECT_EQ(nak(1, code, 1 - m1.id, 0, m1.psn + 100),
			  MR_REQ_NAK_BOGUS);
		EXPECT_EQ(nak(1, code, m1.id, 1, m1.psn), MR_REQ_NAK_BOGUS);
		EXPECT_EQ(nak(1, code, m1.id, 0,
			      mr_sender_path_nxt(h.S(), m1.id)),
			  MR_REQ_NAK_BOGUS);
		EXPECT_EQ(nak(1, code, m1.id, 0, m1.psn - 5), MR_REQ_NAK_BOGUS);
		EXPECT_EQ(nak(1, code, 7, 0, m1.psn), MR_REQ_NAK_BOGUS);
		// A packet of an earlier message.
		EXPECT_EQ(nak(1, code, m0.id, 0, m0.psn), MR_REQ_NAK_BOGUS);
	}
	// Its own packet, or a later message's (a repeat): it fails.
	EXPECT_EQ(nak(1, MR_NAK_INVALID_REQUEST, m3.id, 0, m3.psn),
		  MR_REQ_NAK_FAIL);
	EXPECT_EQ(nak(1, MR_NAK_REMOTE_ACCESS, m1.id, 0, m1.psn),
		  MR_REQ_NAK_FAIL);
}

// Messages retire in order: a failed one once it is the oldest, a READ
// once its whole response is in, others once the peer reports them done.
TEST(RequesterEngine, TheOldestRetiresFirstAFailedOneWithItsError)
{
	LinkConfig c = OnePacketMessages(3);
	Harness h(c);
	h.kind = {mr_req_msg{}, Read(64), mr_req_msg{}};
	h.kind[0].length = kSlice;
	h.kind[2].length = kSlice;
	EXPECT_EQ(mr_requester_head(h.R()), MR_REQ_HEAD_WAITS);
	h.Push();
	// Everything acknowledged, all reported done; the completer's loop
	// is this test's.
	mr_pkt a{};
	a.base.opcode = MR_OP_ACK;
	a.base.epoch = mr_sender_path_epoch(h.S(), 0);
	a.ack.cum_psn = mr_sender_path_nxt(h.S(), 0);
	a.base.psn = a.ack.cum_psn - 1;
	ASSERT_EQ(mr_sender_ack(h.S(), &a, h.now), 0);
	EXPECT_TRUE(mr_requester_peer_done(h.R(), h.S(), 3));
	EXPECT_EQ(mr_requester_head(h.R()), MR_REQ_HEAD_DONE);
	mr_requester_retire(h.R(), false);
	// The READ waits for its response, whatever MSN done says.
	EXPECT_EQ(mr_requester_head(h.R()), MR_REQ_HEAD_WAITS);
	EXPECT_TRUE(mr_requester_fail(h.R(), 2, 9));
	EXPECT_EQ(mr_requester_head(h.R()), MR_REQ_HEAD_WAITS);
	h.kind[1].answered = true;
	EXPECT_EQ(mr_requester_head(h.R()), MR_REQ_HEAD_DONE);
	mr_requester_retire(h.R(), false);
	EXPECT_EQ(mr_requester_head(h.R()), MR_REQ_HEAD_FAILED);
}

// A READ's response lands slice by slice, each once, each the MTU of the
// READ's length; an empty resend fails the READ only if still missing.
TEST(RequesterEngine, ReadResponseSlicesLandOnce)
{
	LinkConfig c;
	Harness h(c);
	const uint32_t len = 2 * kSlice + 10;
	mr_req_slices sl{};
	sl.map = &sl.map1;
	auto slice = [&](uint32_t off, uint32_t payload, uint32_t length) {
		mr_pkt p{};
		p.base.opcode = MR_OP_READ_RESP;
		p.read_resp.length = length;
		p.read_resp.offset = off;
		p.payload_len = payload;
		return mr_requester_read_slice(h.R(), len, &sl, &p);
	};
	EXPECT_EQ(slice(0, kSlice, len + 1), MR_REQ_SLICE_MALFORMED);
	EXPECT_EQ(slice(5, kSlice, len), MR_REQ_SLICE_MALFORMED);
	EXPECT_EQ(slice(3 * kSlice, 10, len), MR_REQ_SLICE_MALFORMED);
	EXPECT_EQ(slice(2 * kSlice, 9, len), MR_REQ_SLICE_MALFORMED);
	EXPECT_EQ(slice(2 * kSlice, 10, len), MR_REQ_SLICE_NEW);
	mr_requester_answered(h.R(), 0, &sl, len);
	EXPECT_EQ(slice(2 * kSlice, 10, len), MR_REQ_SLICE_DUP);
	EXPECT_EQ(slice(2 * kSlice, 0, len), MR_REQ_SLICE_DUP);
	EXPECT_EQ(slice(0, 0, len), MR_REQ_SLICE_EMPTY);
	EXPECT_EQ(slice(0, kSlice, len), MR_REQ_SLICE_NEW);
	mr_requester_answered(h.R(), 0, &sl, len);
	EXPECT_FALSE(sl.done);
	EXPECT_EQ(slice(kSlice, kSlice, len), MR_REQ_SLICE_NEW);
	mr_requester_answered(h.R(), 0, &sl, len);
	EXPECT_TRUE(sl.done);
	EXPECT_EQ(slice(kSlice, kSlice, len), MR_REQ_SLICE_DUP);
}

} // namespace

// The environment (sender.h), bound to the harness.
int mr_sender_env_xmit(struct mr_sender *s, u32 id, u32 psn,
		       const struct mr_tx_pkt *tp, u8 flags,
		       enum mr_send_why why)
{
	Harness &h = Harness::Of(s);
	h.resent_why[why] += why != MR_SEND_FIRST;
	return h.Xmit(id, psn, *tp, flags);
}

struct mr_tx_ring *mr_sender_env_ring_get(struct mr_sender *s)
{
	return Harness::Of(s).RingGet();
}

void mr_sender_env_ring_put(struct mr_sender *s, struct mr_tx_ring *r)
{
	Harness::Of(s).RingPut(r);
}

bool mr_sender_env_stale(struct mr_sender *s, const struct mr_tx_pkt *tp)
{
	return mr_requester_stale(Harness::Of(s).R(), tp);
}

bool mr_sender_env_answered(struct mr_sender *, const struct mr_tx_pkt *)
{
	return false;
}

u32 mr_sender_env_retries(struct mr_sender *s)
{
	return Harness::Of(s).cfg.retries;
}

void mr_sender_env_retry_exceeded(struct mr_sender *s)
{
	Harness::Of(s).retry_exceeded = true;
	mr_sender_stop(s);
}

void mr_sender_env_failover(struct mr_sender *s, u32, u16, u16, u32 moved)
{
	Harness &h = Harness::Of(s);
	h.failovers++;
	h.moved += moved;
}

void mr_sender_env_event(struct mr_sender *s, enum mr_sender_event ev, u32, u32)
{
	Harness::Of(s).events[ev]++;
}

// The requester engine's environment (requester.h), bound to the sink.
u32 mr_requester_env_posted(struct mr_requester *r)
{
	return RequesterHost::Of(r).RequesterPosted();
}

void mr_requester_env_msg(struct mr_requester *r, u32 msn, struct mr_req_msg *m)
{
	*m = RequesterHost::Of(r).RequesterMsg(msn);
}

void mr_requester_env_start(struct mr_requester *r, u32 msn, u32 rsn,
			    u8 order)
{
	RequesterHost::Of(r).RequesterStart(msn, rsn, order);
}

bool mr_requester_env_response_due(struct mr_requester *r)
{
	return RequesterHost::Of(r).RequesterResponseDue();
}

void mr_requester_env_response(struct mr_requester *r, struct mr_tx_pkt *tp)
{
	*tp = RequesterHost::Of(r).RequesterResponse();
}
