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
#include <queue>
#include <random>
#include <set>
#include <vector>

#include "receiver_host.hh"

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
	bool cc = true;
};

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

class Harness : public ReceiverSink
{
public:
	explicit Harness(const LinkConfig &c)
	    : cfg(c), rng(c.seed), path(c.paths),
	      slots(mr_requeue_slots(c.paths)),
	      landed(c.msgs, std::vector<bool>(c.pkts_per_msg))
	{
		mr_sender_timing tm;
		mr_cc_params ccp;
		mr_sender_timing_default(&tm);
		mr_cc_params_default(&ccp);
		ccp.enabled = c.cc;
		host.h = this;
		mr_sender_setup(&host.s, path.data(), c.paths, slots.data(),
				MR_PATH_DEFAULT_FAIL_AFTER, &tm, &ccp);
		EXPECT_EQ(mr_sender_start(&host.s, 0, false,
					  static_cast<u32>(c.seed), kPktBytes),
			  0);
		rx.sink = this;
		mr_receiver_start(&rx.r, 0);
	}

	static Harness &Of(mr_sender *s)
	{
		return *reinterpret_cast<Host *>(s)->h;
	}
	mr_sender *S() { return &host.s; }

	// Run until every message is acknowledged complete, the engine stops,
	// or nothing is left to happen; returns whether everything arrived.
	bool Run(uint64_t limit_ns = 600ull * 1000 * 1000 * 1000)
	{
		while (host.s.on && peer_done < cfg.msgs && now < limit_ns) {
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
		return peer_done == cfg.msgs && AllLanded();
	}

	bool AllLanded() const
	{
		for (const auto &m : landed)
			for (bool b : m)
				if (!b)
					return false;
		return true;
	}

	// The application: new packets, in message order, as the engine lets.
	void Push()
	{
		if (!mr_sender_push_moved(&host.s, now))
			return;
		while (msn_send < cfg.msgs &&
		       mr_window_in(msn_send, peer_done) && host.s.on) {
			if (mr_sender_pace_wait(&host.s, now))
				return;
			uint32_t psn;
			int id = mr_sender_take(&host.s, -1, &psn);
			if (id < 0)
				return;
			mr_tx_pkt tp{};
			tp.msn = msn_send;
			tp.offset = slice_send;
			if (++slice_send == cfg.pkts_per_msg) {
				slice_send = 0;
				msn_send++;
			}
			mr_sender_send(&host.s, static_cast<u32>(id), psn, &tp,
				       MR_SEND_FIRST, now);
		}
	}

	// The environment's xmit: a WRITE of slice tp.offset on the wire.
	int Xmit(uint32_t id, uint32_t psn, const mr_tx_pkt &tp, uint8_t flags)
	{
		mr_pkt pkt{};
		pkt.base.opcode = MR_OP_WRITE;
		pkt.base.flags = flags;
		pkt.base.path = static_cast<u8>(id);
		pkt.base.epoch = mr_sender_path_epoch(&host.s, id);
		pkt.base.qpn = kQpn;
		pkt.base.psn = psn;
		pkt.base.tag = kTag;
		pkt.write.msn = tp.msn;
		pkt.write.rkey = 1;
		pkt.write.length = cfg.pkts_per_msg * kSlice;
		pkt.write.offset = tp.offset * kSlice;
		pkt.payload_len = kSlice;
		sent_log.push_back({id, psn, flags});
		xmits++;
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
		link_free = std::max(link_free, now) + cfg.gap_ns;
		for (int i = 0; i < copies; i++) {
			uint64_t jitter =
			    cfg.jitter_ns ? rng() % cfg.jitter_ns : 0;
			wire.push(Wire{link_free + cfg.delay_ns + jitter, seq++,
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
		if (mr_seq_before(peer_done, pkt.ack.msn_done) &&
		    !mr_seq_before(msn_send, pkt.ack.msn_done))
			peer_done = pkt.ack.msn_done;
	}

	// The receiver's side of a data packet (resp.c, reduced).
	void Receive(const mr_pkt &pkt, uint16_t sport)
	{
		const uint32_t id = pkt.base.path;
		ASSERT_LT(id, cfg.paths);
		bool at_once = false;
		if (mr_receiver_arrival(&rx.r, &pkt, sport, false, &at_once) !=
		    MR_SACK_NEW)
			return;
		bool complete = false;
		ASSERT_EQ(pkt.payload_len, kSlice);
		const uint32_t msn = pkt.write.msn,
			       slice = pkt.write.offset / kSlice;
		ASSERT_LT(msn, cfg.msgs);
		ASSERT_LT(slice, cfg.pkts_per_msg);
		if (!mr_seq_before(msn, msn_done) && !landed[msn][slice]) {
			landed[msn][slice] = true;
			placed++;
			while (msn_done < cfg.msgs &&
			       std::all_of(landed[msn_done].begin(),
					   landed[msn_done].end(),
					   [](bool b) { return b; })) {
				msn_done++;
				complete = true;
			}
		} else {
			at_once = true; // a slice no completion will acknowledge
		}
		if (complete)
			mr_receiver_ack_all(&rx.r, now);
		else
			mr_receiver_coalesce(&rx.r, id, pkt.base.psn, at_once, now);
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
	uint32_t ReceiverMsnDone() override { return msn_done; }
	uint64_t ReceiverAckDelay() override { return cfg.ack_delay_ns; }

	struct Sent {
		uint32_t id, psn;
		uint8_t flags;
	};

	LinkConfig cfg;
	std::mt19937_64 rng;
	Host host{};
	std::vector<mr_tx_path> path;
	std::vector<mr_requeue> slots;
	ReceiverHost rx{};
	std::vector<std::vector<bool>> landed;
	std::priority_queue<Wire, std::vector<Wire>, std::greater<Wire>> wire;
	std::set<uint16_t> blackholed;      // data from these ports is lost
	std::set<uint16_t> acks_blackholed; // and ACKs to these
	std::vector<Sent> sent_log;
	std::map<int, uint64_t> events;
	std::map<int, uint64_t> resent_why;
	uint64_t now = 0, link_free = 0, seq = 0;
	uint32_t msn_send = 0, slice_send = 0, peer_done = 0, msn_done = 0;
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

// A path whose ACKs are lost fails over, but what it carried arrived:
// packets of messages the peer completed are not moved to other paths
// (protocol.rst, "Failover": only what is still owed is sent again).
TEST(SenderEngine, PathWithLostAcksFailsOverWithoutMovingWhatArrived)
{
	LinkConfig c;
	c.seed = 5;
	c.msgs = 4096; // long enough for the path's RTOs in a row
	Harness h(c);
	h.acks_blackholed.insert(mr_sender_path_port(h.S(), 0));
	ASSERT_TRUE(h.Run());
	EXPECT_GE(h.failovers, 1u);
	EXPECT_EQ(h.moved, 0u);
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

bool mr_sender_env_stale(struct mr_sender *s, const struct mr_tx_pkt *tp)
{
	return mr_seq_before(tp->msn, Harness::Of(s).peer_done);
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
