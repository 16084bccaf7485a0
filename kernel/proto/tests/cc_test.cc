// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Host tests of proto/cc.c: the sender's windows, rounds and signals,
// pacing and the hint's unit (share_test.cc has the receiver's shares);
// and a round-based model of one connection through a bottleneck, driving
// cc.c and path.c together, for random loss, tail drop and ECN marking.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

extern "C" {
#include "cc.h"
#include "path.h"
#include "share.h" // the rate in the hint's unit
}

namespace {

constexpr uint64_t kUs = 1000, kMs = 1000000;

double Pkts(uint32_t fixed)
{
	return fixed / (double)MR_CC_ONE;
}

// One connection and its paths, driven ACK by ACK.
struct Conn {
	mr_cc_params prm;
	mr_cc_conn c;
	std::vector<mr_cc_path> p;
	std::vector<uint32_t> ecn; // the receiver's CE count per path
	uint64_t sent = 0;	   // the connection's send order
	uint64_t now = 0;

	explicit Conn(uint32_t npaths, uint32_t mtu = 4096,
		      std::function<void(mr_cc_params &)> tweak = nullptr)
		: p(npaths), ecn(npaths)
	{
		mr_cc_params_default(&prm);
		if (tweak)
			tweak(prm);
		EXPECT_EQ(mr_cc_params_check(&prm), 0);
		mr_cc_conn_init(&c, &prm, mtu);
		for (auto &x : p)
			mr_cc_path_init(&x, &c, &prm);
	}

	// Sends n packets; returns the send order of the first.
	uint64_t Send(uint32_t n)
	{
		uint64_t first = sent + 1;

		sent += n;
		return first;
	}

	// An ACK of path @id for @acked packets up to send order @upto.
	mr_cc_verdict Ack(uint32_t id, uint32_t acked, uint64_t upto,
			  uint32_t marks = 0, uint32_t lost = 0,
			  uint64_t rtt = 0, uint64_t srtt = 0,
			  uint32_t hint = 0)
	{
		mr_cc_ack_info a{};

		ecn[id] += marks;
		a.acked = acked;
		a.lost = lost;
		a.ecn_count = ecn[id];
		a.rtt_ns = rtt;
		a.srtt_ns = srtt ? srtt : rtt;
		a.acked_order = acked ? upto : 0;
		a.sent_order = sent;
		a.now_ns = now;
		a.hint_kbps = hint;
		return mr_cc_ack(&prm, &c, &p[id], &a);
	}

	// One round trip of path @id: @w packets sent, then acknowledged in
	// ACKs of 4, each with @marks of its 4 CE-marked.
	void Round(uint32_t id, uint32_t w, uint32_t marks = 0,
		   uint64_t rtt = 0)
	{
		uint64_t first = Send(w);

		for (uint32_t i = 0; i < w; i += 4) {
			uint32_t n = std::min(4u, w - i);

			Ack(id, n, first + i + n - 1, std::min(marks, n), 0,
			    rtt);
		}
	}

	uint32_t SumPaths() const
	{
		uint32_t s = 0;

		for (auto &x : p)
			s += x.w.cwnd;
		return s;
	}
};

} // namespace

TEST(CcParams, DefaultsAndChecks)
{
	mr_cc_params prm, bad;

	mr_cc_params_default(&prm);
	EXPECT_EQ(mr_cc_params_check(&prm), 0);
	EXPECT_EQ(prm.init_path_window, 16u);
	EXPECT_EQ(prm.init_conn_window, 2u);
	EXPECT_EQ(prm.max_path_window, 64u);
	EXPECT_EQ(prm.max_conn_window, 256u);
	EXPECT_EQ(prm.g_shift, 4);
	// Each limit refuses its own bad value.
	const std::vector<std::function<void(mr_cc_params &)>> breaks = {
		[](mr_cc_params &x) { x.g_shift = 0; },
		[](mr_cc_params &x) { x.g_shift = 17; },
		[](mr_cc_params &x) { x.max_path_window = 0; },
		[](mr_cc_params &x) { x.max_path_window = 257; },
		[](mr_cc_params &x) { x.init_path_window = 65; },
		[](mr_cc_params &x) { x.init_path_window = 0; },
		[](mr_cc_params &x) { x.max_conn_window = 65537; },
		[](mr_cc_params &x) { x.init_conn_window = 257; },
		[](mr_cc_params &x) { x.min_window = 0; },
		[](mr_cc_params &x) { x.min_window = MR_CC_ONE + 1; },
		[](mr_cc_params &x) { x.ai = 0; },
		[](mr_cc_params &x) { x.ai_conn = MR_CC_MAX_AI + 1; },
		[](mr_cc_params &x) { x.target_floor_ns = 2 * kMs * 1000; },
		[](mr_cc_params &x) { x.target_shift = 17; },
		[](mr_cc_params &x) { x.target_scale_ns = 2 * kMs * 1000; },
		[](mr_cc_params &x) { x.base_window_ns = kUs; },
		[](mr_cc_params &x) { x.loss_burst = 0; },
		[](mr_cc_params &x) { x.loss_frac_shift = 17; },
		[](mr_cc_params &x) { x.share_idle = 0; },
	};
	for (size_t i = 0; i < breaks.size(); i++) {
		bad = prm;
		breaks[i](bad);
		EXPECT_EQ(mr_cc_params_check(&bad), -MR_EFIELD) << "break " << i;
	}
}

TEST(CcDiv, MatchesNativeDivision)
{
	std::mt19937_64 rng(5);

	EXPECT_EQ(mr_cc_div64(7, 0), ~0ull);
	EXPECT_EQ(mr_cc_div64(0, 7), 0u);
	EXPECT_EQ(mr_cc_div64(~0ull, 1), ~0ull);
	EXPECT_EQ(mr_cc_div64(~0ull, ~0ull), 1u);
	EXPECT_EQ(mr_cc_div64(1ull << 63, 3), (1ull << 63) / 3);
	for (int i = 0; i < 200000; i++) {
		uint64_t n = rng() >> (rng() % 64), d = rng() >> (rng() % 64);

		if (!d)
			d = 1;
		ASSERT_EQ(mr_cc_div64(n, d), n / d) << n << " / " << d;
	}
}

TEST(CcInit, WindowsAndCcOff)
{
	Conn x(16);

	EXPECT_EQ(mr_cc_path_window(&x.prm, &x.p[0]), 16u);
	// A new connection's first flight is small: N of them into one port
	// must not overfill it before the receiver's first hint.
	EXPECT_EQ(mr_cc_conn_window(&x.prm, &x.c), 2u);
	EXPECT_EQ(x.c.npaths, 16u);
	EXPECT_EQ(x.c.paths_cwnd, 16u * 16 * MR_CC_ONE);
	EXPECT_EQ(x.p[3].w.alpha, MR_CC_ALPHA_ONE);
	EXPECT_EQ(mr_cc_pace_delay(&x.prm, &x.c, 0), 0u); // no SRTT yet
	mr_cc_path_exit(&x.p[3], &x.c, &x.prm);
	mr_cc_path_exit(&x.p[3], &x.c, &x.prm); // twice: nothing more
	EXPECT_EQ(x.c.npaths, 15u);
	EXPECT_EQ(x.c.paths_cwnd, 15u * 16 * MR_CC_ONE);
	EXPECT_EQ(x.SumPaths(), x.c.paths_cwnd);

	// CC off: the fixed windows of before, whatever the ACKs say.
	Conn off(4, 4096, [](mr_cc_params &prm) { prm.enabled = 0; });
	uint64_t first = off.Send(64);

	EXPECT_EQ(off.Ack(0, 8, first + 7, 8, 8, 5 * kMs), MR_CC_HOLD);
	mr_cc_timeout(&off.prm, &off.c, &off.p[0], off.sent);
	EXPECT_EQ(mr_cc_path_window(&off.prm, &off.p[0]), 64u);
	EXPECT_EQ(mr_cc_conn_window(&off.prm, &off.c), 256u);
	mr_cc_pace_sent(&off.prm, &off.c, 4096, 0);
	EXPECT_EQ(mr_cc_pace_delay(&off.prm, &off.c, 0), 0u);
}

// alpha <- (1 - 1/16) alpha + F / 16 once per round, F the marked share.
TEST(CcAlpha, EwmaPerRound)
{
	Conn x(1, 4096, [](mr_cc_params &prm) {
		prm.ecn = 1;
		prm.delay = 0;
	});

	// Round 1 opens with the first ACK; the first ACK of each later
	// round closes the one before. Half of every ACK is marked.
	for (int r = 0; r <= 40; r++) {
		x.Round(0, 16, 2);
		if (r >= 1) {
			double expect = 0.5 + 0.5 * std::pow(15.0 / 16, r);

			EXPECT_NEAR(x.p[0].w.alpha / 65536.0, expect, 2e-3)
				<< "round " << r;
			EXPECT_NEAR(x.c.w.alpha / 65536.0, expect, 2e-3);
		}
	}
	// No marks: alpha decays by 15/16 per round towards 0 (the first
	// unmarked round's first ACK closes the last marked round).
	x.Round(0, 16);
	uint32_t a0 = x.p[0].w.alpha;

	for (int r = 1; r <= 16; r++)
		x.Round(0, 16);
	EXPECT_NEAR(x.p[0].w.alpha / (double)a0, std::pow(15.0 / 16, 16),
		    0.02);
	EXPECT_EQ(x.c.marks, 41u * 16 / 2);
	EXPECT_EQ(x.c.w.alpha, x.p[0].w.alpha); // one path: the same rounds
}

// A marked round trip decreases by alpha / 2 once; later marks of the
// same round trip do nothing until a packet sent after it is acknowledged.
TEST(CcDecrease, OncePerRound)
{
	Conn x(2, 4096, [](mr_cc_params &prm) {
		prm.delay = 0;
		prm.init_conn_window = 16;
	});
	uint64_t first = x.Send(16);

	// alpha starts at 1: the first mark halves both windows.
	EXPECT_EQ(x.Ack(0, 4, first + 3, 1), MR_CC_DECREASE_ECN);
	EXPECT_EQ(x.p[0].w.cwnd, 8u * MR_CC_ONE);
	EXPECT_EQ(x.c.w.cwnd, 8u * MR_CC_ONE);
	EXPECT_EQ(x.c.decreases, 2u);
	for (uint32_t i = 4; i < 16; i += 4)
		EXPECT_EQ(x.Ack(0, 4, first + i + 3, 4), MR_CC_HOLD);
	EXPECT_EQ(x.p[0].w.cwnd, 8u * MR_CC_ONE);
	EXPECT_EQ(x.c.w.cwnd, 8u * MR_CC_ONE);
	// Path 1's window is its own; it did not shrink.
	EXPECT_EQ(x.p[1].w.cwnd, 16u * MR_CC_ONE);
	EXPECT_EQ(x.SumPaths(), x.c.paths_cwnd);
	// A packet sent after the decrease comes back marked: its ACK ends
	// the round (13 of 16 marked) and the hold, and decreases again by
	// the new alpha / 2.
	first = x.Send(8);
	EXPECT_EQ(x.Ack(0, 4, first + 3, 1), MR_CC_DECREASE_ECN);
	uint32_t alpha = x.p[0].w.alpha;

	EXPECT_NEAR(alpha / 65536.0, 1 - 1 / 16.0 + 13 / 256.0, 1e-3);
	EXPECT_NEAR(Pkts(x.p[0].w.cwnd), 8 * (1 - alpha / 131072.0), 0.01);
	EXPECT_EQ(x.c.decreases, 4u);
}

// Additive increase: the paths together grow by ai per round trip
// (coupled: each by its share of their sum), the connection by ai_conn.
TEST(CcIncrease, AdditivePerRound)
{
	Conn x(4, 4096, [](mr_cc_params &prm) {
		prm.init_conn_window = 64;
		prm.max_conn_window = 1024;
	});

	// One round trip of every path: 4 * 16 packets acknowledged.
	uint32_t sum = x.c.paths_cwnd;

	for (uint32_t id = 0; id < 4; id++)
		x.Round(id, 16);
	// (A little less: each ACK divides by the sum as it has grown.)
	EXPECT_NEAR(Pkts(x.c.paths_cwnd) - Pkts(sum), 4.0, 0.15);
	EXPECT_NEAR(Pkts(x.p[2].w.cwnd), 17.0, 0.05);
	EXPECT_NEAR(Pkts(x.c.w.cwnd), 68.0, 0.15);
	// A path alone grows by ai: 16 -> 64 in 12 round trips, or 13.
	Conn one(1);
	int rounds = 0;

	while (one.p[0].w.cwnd < 64 * MR_CC_ONE && rounds < 1000) {
		one.Round(0, mr_cc_path_window(&one.prm, &one.p[0]));
		rounds++;
	}
	EXPECT_GE(rounds, 12);
	EXPECT_LE(rounds, 13);
	one.Round(0, 64);
	EXPECT_EQ(one.p[0].w.cwnd, 64u * MR_CC_ONE); // and stays
	EXPECT_EQ(mr_cc_path_window(&one.prm, &one.p[0]), 64u);
}

// ECN x delay against a path whose base RTT is 100 us. A path reacts to
// marks as DCTCP does; the connection in the four cases.
TEST(CcDelay, FourCases)
{
	Conn x(2, 4096, [](mr_cc_params &prm) { prm.init_conn_window = 64; });
	uint64_t first = x.Send(256), base = 100 * kUs;

	x.Ack(0, 4, first + 3, 0, 0, base); // sets the base RTT
	x.Ack(1, 4, first + 7, 0, 0, base);
	// Target: 100 us + max(2 ms, 50 us) + 500 us * (sqrt(64 / w) - 1)
	// / (sqrt(64) - 1): 71 us at 16 packets of 64.
	uint64_t target = mr_cc_path_target(&x.prm, &x.p[0]);
	double pw = Pkts(x.p[0].w.cwnd);

	EXPECT_NEAR(pw, 16.5, 0.01);
	EXPECT_NEAR((double)target,
		    100e3 + 2e6 + 500e3 * (std::sqrt(64 / pw) - 1) / 7, 100);
	uint64_t low = target - 50 * kUs, high = target + 2 * kMs;
	double w = Pkts(x.p[0].w.cwnd), cw = Pkts(x.c.w.cwnd);
	double sum = Pkts(x.c.paths_cwnd);

	// No ECN, low delay: the path + ai * 4 / sum, the connection
	// + ai_conn * 4 / cwnd.
	EXPECT_EQ(x.Ack(0, 4, first + 11, 0, 0, low, low), MR_CC_INCREASE);
	EXPECT_NEAR(Pkts(x.p[0].w.cwnd) - w, 4 * 4 / sum, 0.002);
	EXPECT_NEAR(Pkts(x.c.w.cwnd) - cw, 4 * 4 / cw, 0.002);
	// No ECN, high delay: a quarter of that.
	w = Pkts(x.p[0].w.cwnd);
	cw = Pkts(x.c.w.cwnd);
	sum = Pkts(x.c.paths_cwnd);
	EXPECT_EQ(x.Ack(0, 4, first + 15, 0, 0, high, high), MR_CC_INCREASE);
	EXPECT_NEAR(Pkts(x.p[0].w.cwnd) - w, 4 / sum, 0.002);
	EXPECT_NEAR(Pkts(x.c.w.cwnd) - cw, 4 / cw, 0.002);
	// One high sample with a low SRTT is a stall, not a queue.
	w = Pkts(x.p[0].w.cwnd);
	sum = Pkts(x.c.paths_cwnd);
	EXPECT_EQ(x.Ack(0, 4, first + 19, 0, 0, high, low), MR_CC_INCREASE);
	EXPECT_NEAR(Pkts(x.p[0].w.cwnd) - w, 4 * 4 / sum, 0.002);
	// ECN, low delay: the connection holds, left to load balancing; the
	// marked path shrinks by alpha / 2 (alpha is still 1), so spraying
	// moves packets to the other path.
	w = Pkts(x.p[0].w.cwnd);
	cw = Pkts(x.c.w.cwnd);
	EXPECT_EQ(x.Ack(0, 4, first + 23, 2, 0, low, low), MR_CC_DECREASE_ECN);
	EXPECT_NEAR(Pkts(x.p[0].w.cwnd), w / 2, 0.01);
	EXPECT_EQ(Pkts(x.c.w.cwnd), cw);
	// ECN, high delay, on the other path: both decrease.
	w = Pkts(x.p[1].w.cwnd);
	EXPECT_EQ(x.Ack(1, 4, first + 27, 2, 0, high, high),
		  MR_CC_DECREASE_ECN);
	EXPECT_NEAR(Pkts(x.p[1].w.cwnd), w / 2, 0.01);
	EXPECT_NEAR(Pkts(x.c.w.cwnd), cw / 2, 0.01);
	// With the delay signal off, ECN alone decides (DCTCP), also for the
	// connection.
	Conn d(1, 4096, [](mr_cc_params &prm) { prm.delay = 0; });

	first = d.Send(16);
	d.Ack(0, 4, first + 3, 0, 0, base);
	cw = Pkts(d.c.w.cwnd);
	EXPECT_EQ(d.Ack(0, 4, first + 7, 1, 0, base, base),
		  MR_CC_DECREASE_ECN);
	EXPECT_NEAR(Pkts(d.c.w.cwnd), cw / 2, 0.01);
}

// The base RTT is a windowed minimum: a lucky sample ages out.
TEST(CcDelay, BaseRttAges)
{
	Conn x(1);
	uint64_t first = x.Send(1000);

	x.now = 0;
	x.Ack(0, 1, first, 0, 0, 20 * kUs); // lucky
	for (int i = 1; i < 500; i++) {
		x.now = i * 10 * kMs; // 5 s of samples at 300 us
		x.Ack(0, 1, first + i, 0, 0, 300 * kUs);
		if (x.now < 2000 * kMs) {
			EXPECT_EQ(x.p[0].base_cur, 20 * kUs);
		}
	}
	EXPECT_EQ(x.p[0].base_cur, 300 * kUs);
	EXPECT_EQ(x.p[0].base_prev, 300 * kUs);
	EXPECT_GT(mr_cc_path_target(&x.prm, &x.p[0]), 800 * kUs);
}

// Losses: isolated ones are not congestion, a burst in a round is.
TEST(CcLoss, IsolatedVersusBurst)
{
	Conn x(1, 4096, [](mr_cc_params &prm) { prm.init_conn_window = 64; });
	uint64_t base = 100 * kUs, first = x.Send(16);

	x.Ack(0, 4, first + 3, 0, 0, base);
	// One loss at low delay: the window still grows.
	EXPECT_EQ(x.Ack(0, 3, first + 7, 0, 1, base), MR_CC_INCREASE);
	EXPECT_EQ(x.Ack(0, 3, first + 11, 0, 1, base), MR_CC_INCREASE);
	EXPECT_GT(x.p[0].w.cwnd, 16u * MR_CC_ONE);
	// A third and fourth in the same round: 4 >= loss_burst and
	// 4 * 8 >= 16 packets: halve, once.
	uint32_t w = x.p[0].w.cwnd;

	EXPECT_EQ(x.Ack(0, 2, first + 15, 0, 2, base), MR_CC_DECREASE_LOSS);
	EXPECT_EQ(x.p[0].w.cwnd, w - w / 2);
	first = x.Send(16);
	EXPECT_EQ(x.Ack(0, 0, 0, 0, 4, base), MR_CC_HOLD); // holding
	// A loss at high delay is a drop at a full queue: decrease by
	// (delay - target) / delay.
	Conn q(1);

	first = q.Send(32);
	q.Ack(0, 4, first + 3, 0, 0, base);
	uint64_t t = mr_cc_path_target(&q.prm, &q.p[0]), d = 2 * t;

	w = q.p[0].w.cwnd;
	EXPECT_EQ(q.Ack(0, 3, first + 7, 0, 1, d, d), MR_CC_DECREASE_LOSS);
	EXPECT_NEAR(Pkts(q.p[0].w.cwnd), Pkts(w) * 0.5, 0.01);
	// Losses with the loss signal off: nothing.
	Conn off(1, 4096, [](mr_cc_params &prm) { prm.loss = 0; });

	first = off.Send(16);
	off.Ack(0, 4, first + 3, 0, 0, base);
	w = off.p[0].w.cwnd;
	EXPECT_EQ(off.Ack(0, 0, 0, 0, 8, 10 * kMs, 10 * kMs), MR_CC_HOLD);
	EXPECT_EQ(off.p[0].w.cwnd, w);
}

TEST(CcBounds, MinMaxAndBelowOnePacket)
{
	Conn x(1, 4096, [](mr_cc_params &prm) { prm.delay = 0; });

	// Marked round after marked round: down to min_window, 1/64.
	for (int r = 0; r < 60; r++)
		x.Round(0, 4, 4);
	EXPECT_EQ(x.p[0].w.cwnd, x.prm.min_window);
	EXPECT_EQ(x.c.w.cwnd, x.prm.min_window);
	EXPECT_EQ(mr_cc_path_window(&x.prm, &x.p[0]), 1u);
	EXPECT_EQ(mr_cc_conn_window(&x.prm, &x.c), 1u);
	// Below one packet the window at most doubles per packet acked:
	// 1/64 to 1 in 6 ACKs, then + ai / cwnd per packet (ai = 4).
	x.Round(0, 1);
	EXPECT_EQ(x.p[0].w.cwnd, 2 * x.prm.min_window);
	for (int r = 0; r < 5; r++)
		x.Round(0, 1);
	EXPECT_EQ(x.p[0].w.cwnd, MR_CC_ONE);
	x.Round(0, 1);
	EXPECT_EQ(x.p[0].w.cwnd, 5 * MR_CC_ONE);
	// Up to the maximum and no further.
	for (int r = 0; r < 400; r++)
		x.Round(0, mr_cc_path_window(&x.prm, &x.p[0]));
	EXPECT_EQ(x.p[0].w.cwnd, 64u * MR_CC_ONE);
	EXPECT_EQ(mr_cc_path_window(&x.prm, &x.p[0]), 64u);
	// Rounded up: 2.25 packets allow 3 in flight.
	x.p[0].w.cwnd = 2 * MR_CC_ONE + MR_CC_ONE / 4;
	EXPECT_EQ(mr_cc_path_window(&x.prm, &x.p[0]), 3u);
}

// A timeout halves the path's window (to min_window at most), holds it,
// and leaves the connection's alone.
TEST(CcTimeout, HalvesThePath)
{
	Conn x(2);
	uint32_t cw = x.c.w.cwnd;

	mr_cc_timeout(&x.prm, &x.c, &x.p[0], x.sent);
	EXPECT_EQ(x.p[0].w.cwnd, 8u * MR_CC_ONE);
	EXPECT_EQ(x.c.w.cwnd, cw);
	EXPECT_EQ(x.c.paths_cwnd, 24u * MR_CC_ONE);
	EXPECT_EQ(x.c.decreases, 1u);
	uint64_t first = x.Send(4);

	EXPECT_EQ(x.Ack(0, 0, 0, 0, 0, 0), MR_CC_HOLD);
	x.Ack(0, 4, first + 3); // sent after the timeout: the hold ends
	EXPECT_GT(x.p[0].w.cwnd, 8u * MR_CC_ONE);
	for (int i = 0; i < 20; i++)
		mr_cc_timeout(&x.prm, &x.c, &x.p[0], x.sent);
	EXPECT_EQ(x.p[0].w.cwnd, x.prm.min_window);
	EXPECT_EQ(x.SumPaths(), x.c.paths_cwnd);
}

// Pacing at the window's rate: SRTT / (window * 1.25) per packet, in
// bursts of what that rate sends in MR_CC_QUANTUM_NS (at least
// MR_CC_BURST, at most MR_CC_BURST_MAX).
TEST(CcPace, WindowRateInBursts)
{
	Conn x(4, 1000);
	uint64_t first = x.Send(4);

	x.Ack(0, 4, first + 3, 0, 0, 1 * kMs); // SRTT 1 ms, window ~32
	double w = Pkts(std::min(x.c.w.cwnd, x.c.paths_cwnd));
	uint64_t gap = (uint64_t)(1e6 / (w * 1.25));

	EXPECT_NEAR((double)x.c.gap_ns, (double)gap, 2);
	// A gap of ~25 us: 1 ms holds about 40 of them.
	const uint32_t burst = (uint32_t)(MR_CC_QUANTUM_NS / x.c.gap_ns);

	ASSERT_GT(burst, MR_CC_BURST);
	ASSERT_LT(burst, MR_CC_BURST_MAX);
	uint64_t t = 5 * kMs, start = t;
	uint32_t sent = 0, waits = 0;

	for (int b = 0; b < 25; b++) {
		for (uint32_t i = 0; i < burst; i++) {
			ASSERT_EQ(mr_cc_pace_delay(&x.prm, &x.c, t), 0u);
			mr_cc_pace_sent(&x.prm, &x.c, 1000, t);
			sent++;
		}
		uint64_t d = mr_cc_pace_delay(&x.prm, &x.c, t);

		ASSERT_GT(d, 0u);
		ASSERT_LE(d, burst * x.c.gap_ns);
		waits++;
		t += d; // the timer fires on time
	}
	EXPECT_EQ(x.c.paced, waits);
	// ~1000 packets in as many gaps (the first burst starts a gap early).
	EXPECT_NEAR((double)(t - start), sent * (double)x.c.gap_ns,
		    x.c.gap_ns * 1.0);
	EXPECT_EQ(x.c.hint_limited, 0u);
	// A late timer (half a gap) loses no time: the next burst counts
	// from when it was due.
	uint64_t due = x.c.next_ns;

	t = due + x.c.gap_ns / 2;
	mr_cc_pace_sent(&x.prm, &x.c, 1000, t);
	EXPECT_EQ(x.c.next_ns, due + x.c.gap_ns);
	// Sending less than a burst then pausing: the next goes at once.
	t += 10 * kMs;
	EXPECT_EQ(mr_cc_pace_delay(&x.prm, &x.c, t), 0u);
}

// A window's gap of a quarter of MR_CC_QUANTUM_NS or more: bursts of
// MR_CC_BURST; one of 250 ns: MR_CC_BURST_MAX.
TEST(CcPace, WindowBurstLimits)
{
	for (uint64_t srtt : {40 * kMs, 10 * kUs}) {
		Conn x(4, 1000);
		uint64_t first = x.Send(4);

		x.Ack(0, 4, first + 3, 0, 0, srtt);
		const bool slow = x.c.gap_ns * MR_CC_BURST >= MR_CC_QUANTUM_NS;

		ASSERT_EQ(slow, srtt > kMs) << x.c.gap_ns;
		uint64_t t = 100 * kMs;
		uint32_t n = 0;

		while (mr_cc_pace_delay(&x.prm, &x.c, t) == 0 && n < 1000) {
			mr_cc_pace_sent(&x.prm, &x.c, 1000, t);
			n++;
		}
		EXPECT_EQ(n, slow ? MR_CC_BURST : MR_CC_BURST_MAX) << srtt;
	}
}

// The hint paces when it is slower than the window.
TEST(CcPace, HintLimits)
{
	Conn x(4, 1000);
	uint64_t first = x.Send(4);

	// 8 Mbit/s: 1000 bytes every 1 ms; the window allows far more.
	x.Ack(0, 4, first + 3, 0, 0, 1 * kMs, 1 * kMs, 8000);
	EXPECT_EQ(x.c.hint_limits, 1);
	uint64_t t = 10 * kMs, start = t;

	for (int i = 0; i < 400; i++) {
		t += mr_cc_pace_delay(&x.prm, &x.c, t);
		mr_cc_pace_sent(&x.prm, &x.c, 1000, t);
	}
	t += mr_cc_pace_delay(&x.prm, &x.c, t);
	EXPECT_NEAR((double)(t - start), 400 * 1e6, 1e6);
	EXPECT_EQ(x.c.hint_limited, 400u);
	// The first hint sized the window to the hint's BDP +25 %, so the
	// window's gap is 1 ms / 1.5625: it binds half-size packets, which
	// the hint alone would let go every 0.5 ms.
	EXPECT_NEAR((double)x.c.gap_ns, 1e6 / 1.5625, 1e3);
	start = t;
	for (int i = 0; i < 400; i++) {
		t += mr_cc_pace_delay(&x.prm, &x.c, t);
		mr_cc_pace_sent(&x.prm, &x.c, 500, t);
	}
	t += mr_cc_pace_delay(&x.prm, &x.c, t);
	EXPECT_NEAR((double)(t - start), 400 * 1e6 / 1.5625, 1e6);
	EXPECT_EQ(x.c.hint_limited, 400u);
	// A tiny hint: the gap stops at MR_CC_GAP_MAX_NS, and so the wait.
	x.Ack(0, 0, 0, 0, 0, 0, 0, 1);
	t += 10 * MR_CC_GAP_MAX_NS;
	for (int i = 0; i < MR_CC_BURST; i++)
		mr_cc_pace_sent(&x.prm, &x.c, 65535, t);
	EXPECT_EQ(mr_cc_pace_delay(&x.prm, &x.c, t),
		  MR_CC_BURST * MR_CC_GAP_MAX_NS - (MR_CC_GAP_MAX_NS - 1));
	// No hint any more: the window's rate again.
	x.Ack(0, 0, 0, 0, 0, 0, 0, 0);
	EXPECT_EQ(x.c.hint_limits, 0);
	EXPECT_GT(x.c.gap_ns, 0u);
}

// Nothing limits: windows at their maximum and no slower hint.
TEST(CcPace, NoPacingWhenNothingLimits)
{
	Conn x(4, 4096, [](mr_cc_params &prm) { prm.init_conn_window = 256; });

	x.Round(0, 4, 0, 1 * kMs);
	// 4 paths * 16 = 64 < 256: the paths' windows limit, so it paces.
	EXPECT_GT(x.c.gap_ns, 0u);
	for (int r = 0; r < 60; r++)
		for (uint32_t id = 0; id < 4; id++)
			x.Round(id, mr_cc_path_window(&x.prm, &x.p[id]), 0,
				1 * kMs);
	EXPECT_EQ(x.c.paths_cwnd, 256u * MR_CC_ONE);
	EXPECT_EQ(x.c.w.cwnd, 256u * MR_CC_ONE);
	EXPECT_EQ(x.c.gap_ns, 0u);
	for (int i = 0; i < 100; i++) {
		mr_cc_pace_sent(&x.prm, &x.c, 4096, 0);
		ASSERT_EQ(mr_cc_pace_delay(&x.prm, &x.c, 0), 0u);
	}
	// 20 Gbit/s is faster than 256 packets of 4 KiB per ms (+25 %):
	// the hint does not limit either. 1 Gbit/s does.
	uint64_t first = x.Send(4);

	x.Ack(1, 4, first + 3, 0, 0, 1 * kMs, 0, 20000000);
	EXPECT_EQ(x.c.hint_limits, 0);
	EXPECT_EQ(mr_cc_pace_delay(&x.prm, &x.c, 0), 0u);
	first = x.Send(4);
	x.Ack(1, 4, first + 3, 0, 0, 1 * kMs, 0, 1000000);
	EXPECT_EQ(x.c.hint_limits, 1);
	for (int i = 0; i < MR_CC_BURST; i++)
		mr_cc_pace_sent(&x.prm, &x.c, 4096, 0);
	EXPECT_NEAR((double)mr_cc_pace_delay(&x.prm, &x.c, 0),
		    MR_CC_BURST * 4096 * 8.0, 4);
}

// The first hint sizes a new connection's window to the hint's BDP
// (hint * SRTT / MTU, +25 %): down from the bounded initial window for a
// small share, up for a large one, within the limits.
TEST(CcHint, FirstHintSizesTheWindow)
{
	// 100 Mbit/s * 100 us / 1000 bytes = 1.25 packets, +25 %: 1.5625.
	Conn x(16, 1000, [](mr_cc_params &prm) { prm.init_conn_window = 16; });
	uint64_t first = x.Send(32);

	EXPECT_EQ(mr_cc_conn_window(&x.prm, &x.c), 16u);
	x.Ack(0, 1, first, 0, 0, 0, 0, 100000); // no RTT yet: no sizing
	EXPECT_EQ(x.c.hinted, 0);
	EXPECT_EQ(x.c.hint_kbps, 100000u);
	x.Ack(0, 1, first + 1, 0, 0, 100 * kUs, 0, 100000);
	EXPECT_EQ(x.c.hinted, 1);
	EXPECT_NEAR(Pkts(x.c.w.cwnd), 1.5625, 0.01);
	EXPECT_EQ(mr_cc_conn_window(&x.prm, &x.c), 2u);
	// A smaller hint cuts the window at once to what it fills (and
	// pacing follows it): half the rate, half the window.
	uint32_t w = x.c.w.cwnd;

	x.Ack(0, 0, 0, 0, 0, 0, 0, 50000);
	EXPECT_NEAR(x.c.w.cwnd, w / 2.0, 1);
	// A larger one (by 1/8 or more) raises it to the new BDP: 400 Mbit/s
	// over the SRTT (100 us): 5 packets, +25 %.
	x.Ack(0, 0, 0, 0, 0, 0, 0, 400000);
	EXPECT_NEAR(Pkts(x.c.w.cwnd), 6.25, 0.01);
	// ... but not by less than 1/8.
	w = x.c.w.cwnd;
	x.Ack(0, 0, 0, 0, 0, 0, 0, 440000);
	EXPECT_EQ(x.c.w.cwnd, w);

	// 10 Gbit/s * 1 ms / 4 KiB = 305 packets: the default initial window
	// (2) ramps to the maximum, by what each ACK acknowledges (doubling
	// per round trip) on top of the additive increase, not at once: a
	// hint from a link's speed need not be the bottleneck's.
	Conn big(16, 4096);

	EXPECT_EQ(mr_cc_conn_window(&big.prm, &big.c), 2u);

	first = big.Send(32);
	big.Ack(0, 4, first + 3, 0, 0, 1 * kMs, 0, 10000000);
	EXPECT_EQ(big.c.ramp_to, 256u << MR_CC_SHIFT);
	EXPECT_LT(mr_cc_conn_window(&big.prm, &big.c), 32u);
	for (int i = 0; i < 64 && big.c.ramp_to; i++) {
		first = big.Send(4);
		big.Ack(i % 16, 4, first + 3, 0, 0, 1 * kMs, 0, 10000000);
	}
	EXPECT_EQ(big.c.ramp_to, 0u);
	EXPECT_EQ(mr_cc_conn_window(&big.prm, &big.c), 256u);
	// A mark (even at low delay, where the connection holds) or a loss
	// burst ends the ramp where it is; an isolated loss does not.
	for (int sign = 0; sign < 3; sign++) {
		Conn r(16, 4096);

		first = r.Send(32);
		r.Ack(0, 4, first + 3, 0, 0, 1 * kMs, 0, 10000000);
		first = r.Send(12);
		r.Ack(1, 4, first + 11, sign == 0 ? 1 : 0,
		      sign == 1 ? 8 : sign == 2 ? 1 : 0, 1 * kMs, 0, 10000000);
		EXPECT_EQ(r.c.ramp_to == 0, sign < 2) << sign;
		EXPECT_LT(mr_cc_conn_window(&r.prm, &r.c), 32u) << sign;
	}
	// A tiny share: down to min_window, paced below one packet per RTT.
	Conn tiny(16, 4096);

	first = tiny.Send(32);
	tiny.Ack(0, 4, first + 3, 0, 0, 100 * kUs, 0, 1);
	EXPECT_EQ(tiny.c.w.cwnd, tiny.prm.min_window);
	EXPECT_EQ(mr_cc_conn_window(&tiny.prm, &tiny.c), 1u);
}

// The handshake's hint is the first hint, a round trip early: with the
// HELLO's round trip it bounds the first flight (the k-th sender of an
// incast gets the capacity over k), or it ramps the window up; it paces
// at once. The ACKs' hints then cap and raise the window as always.
TEST(CcHint, TheHandshakesHintBoundsTheFirstFlight)
{
	// 100 Mbit/s * 100 us / 1000 bytes = 1.25 packets, +25 %: 1.5625.
	Conn x(16, 1000, [](mr_cc_params &prm) { prm.init_conn_window = 16; });

	mr_cc_hello(&x.prm, &x.c, 100000, 100 * kUs, 0, 1 * kMs);
	EXPECT_EQ(x.c.hinted, 1);
	EXPECT_EQ(x.c.hint_kbps, 100000u);
	EXPECT_NEAR(Pkts(x.c.w.cwnd), 1.5625, 0.01);
	EXPECT_EQ(mr_cc_conn_window(&x.prm, &x.c), 2u);
	EXPECT_EQ(x.c.srtt, 0u); // the data's samples make the SRTT
	// The first packet waits one gap: 1000 bytes at 100 Mbit/s, 80 us
	// (the sender with C / k waits k packet times: N senders' first
	// packets reach the port one after the other).
	EXPECT_NEAR(mr_cc_pace_delay(&x.prm, &x.c, 1 * kMs), 80 * kUs, 1 * kUs);
	// A second handshake hint changes nothing.
	mr_cc_hello(&x.prm, &x.c, 1, 100 * kUs, 0, 1 * kMs);
	EXPECT_EQ(x.c.hint_kbps, 100000u);

	// 10 Gbit/s over 1 ms: the initial window ramps to the maximum.
	Conn big(16, 4096);

	mr_cc_hello(&big.prm, &big.c, 10000000, 1 * kMs, 0, 1 * kMs);
	EXPECT_EQ(big.c.ramp_to, 256u << MR_CC_SHIFT);
	EXPECT_EQ(mr_cc_conn_window(&big.prm, &big.c), 2u);

	// Without a round trip (the HELLO was resent) it only paces; the
	// first ACK's hint sizes the window.
	Conn paced(16, 4096);

	mr_cc_hello(&paced.prm, &paced.c, 1000, 0, 0, 1 * kMs);
	EXPECT_EQ(paced.c.hinted, 0);
	EXPECT_EQ(paced.c.hint_kbps, 1000u);
	EXPECT_NE(paced.c.hint_q24, 0u);
	EXPECT_EQ(mr_cc_conn_window(&paced.prm, &paced.c), 2u);

	// No hint, or CC off: nothing.
	Conn none(16, 4096);

	mr_cc_hello(&none.prm, &none.c, 0, 1 * kMs, 0, 1 * kMs);
	EXPECT_EQ(none.c.hint_kbps, 0u);
	Conn off(16, 4096, [](mr_cc_params &prm) { prm.enabled = 0; });

	mr_cc_hello(&off.prm, &off.c, 1000, 1 * kMs, 0, 1 * kMs);
	EXPECT_EQ(off.c.hint_kbps, 0u);
}

// The start of an incast: the receiver's first ACK grants the whole
// capacity (it has seen this sender only), the next one 1/32 of it. Each
// hint caps the window at once, not only the pacing, so that a window an
// early, generous hint raised does not keep a queue; growth stops there;
// a larger hint raises it again.
TEST(CcHint, EveryHintCapsTheWindow)
{
	const uint32_t cap = 10000000; // 10 Gbit/s
	// 10 Gbit/s * 10 us / 4 KiB = 3.05 packets, +25 %.
	const double full = 1e10 * 10e-6 / 8 / 4096 * 1.25;
	Conn x(16, 4096);
	uint64_t first = x.Send(2);

	x.Ack(0, 1, first, 0, 0, 10 * kUs, 0, cap);
	EXPECT_NEAR(Pkts(x.c.w.cwnd), full, 0.01);
	EXPECT_EQ(mr_cc_conn_window(&x.prm, &x.c), 4u);
	x.Ack(1, 1, first + 1, 0, 0, 10 * kUs, 0, cap / 32);
	EXPECT_NEAR(Pkts(x.c.w.cwnd), full / 32, 0.01);
	EXPECT_EQ(mr_cc_conn_window(&x.prm, &x.c), 1u);
	EXPECT_EQ(x.c.hint_limits, 1);
	// Unmarked ACKs at the hint do not grow it past what the hint fills.
	for (int i = 0; i < 50; i++) {
		first = x.Send(1);
		x.Ack(i % 16, 1, first, 0, 0, 10 * kUs, 0, cap / 32);
		ASSERT_LE(Pkts(x.c.w.cwnd), full / 32 + 0.01) << i;
	}
	// A hint twice as large raises it to twice the window.
	x.Ack(0, 0, 0, 0, 0, 0, 0, cap / 16);
	EXPECT_NEAR(Pkts(x.c.w.cwnd), full / 16, 0.01);
	// CC off: no hint moves the window.
	Conn off(1, 4096, [](mr_cc_params &prm) { prm.enabled = 0; });

	first = off.Send(2);
	off.Ack(0, 1, first, 0, 0, 10 * kUs, 0, cap / 32);
	EXPECT_EQ(mr_cc_conn_window(&off.prm, &off.c), 256u);
}

// MR_FLAG_WINDOW_LIMITED: a packet that fills the connection's windows
// while they hold under half of what the hint fills. Not without a hint,
// not with room left (an application's pace), not with the windows at
// the hint's (the hint binds), not with CC off.
TEST(CcHint, WindowLimitedBelowHalfTheHint)
{
	const uint32_t cap = 10000000; // 10 Gbit/s, 1 ms: 256 packets
	Conn x(16, 4096);
	uint64_t first = x.Send(2);

	EXPECT_FALSE(mr_cc_window_limited(&x.prm, &x.c, 2)); // no hint
	x.Ack(0, 1, first, 0, 0, 1 * kMs, 0, cap);
	for (int i = 0; i < 64 && x.c.ramp_to; i++) {
		first = x.Send(4);
		x.Ack(i % 16, 4, first + 3, 0, 0, 1 * kMs, 0, cap);
	}
	ASSERT_EQ(mr_cc_conn_window(&x.prm, &x.c), 256u);
	EXPECT_FALSE(mr_cc_window_limited(&x.prm, &x.c, 256));
	// Marks at high delay cut the window by up to a half a round.
	for (int i = 0; i < 40 && mr_cc_conn_window(&x.prm, &x.c) >= 128;
	     i++) {
		first = x.Send(8);
		x.Ack(i % 16, 8, first + 7, 8, 0, 20 * kMs, 20 * kMs, cap);
	}
	const uint32_t w = mr_cc_conn_window(&x.prm, &x.c);

	ASSERT_LT(w, 128u);
	EXPECT_TRUE(mr_cc_window_limited(&x.prm, &x.c, w));
	EXPECT_TRUE(mr_cc_window_limited(&x.prm, &x.c, w + 1));
	EXPECT_FALSE(mr_cc_window_limited(&x.prm, &x.c, w - 1));
	// A hint the window fills: it binds, the sender is not held.
	x.Ack(0, 0, 0, 0, 0, 0, 0, cap * w / 256 / 2);
	EXPECT_FALSE(mr_cc_window_limited(&x.prm, &x.c, w));

	Conn off(1, 4096, [](mr_cc_params &prm) { prm.enabled = 0; });

	first = off.Send(2);
	off.Ack(0, 1, first, 0, 0, 1 * kMs, 0, 1000);
	EXPECT_FALSE(mr_cc_window_limited(&off.prm, &off.c, 256));
}

// Pacing's RTT is the SRTT but at most twice the connection's base RTT,
// the lowest sample of any of its paths: a path whose first samples
// waited in a queue does not make the connection take that queue for
// the fabric. Each path keeps its own base for its delay target.
TEST(CcBase, ConnectionBaseIsTheLowestOfItsPaths)
{
	Conn x(2, 4096);
	uint64_t first = x.Send(1);

	x.Ack(1, 1, first, 0, 0, 10 * kUs);
	EXPECT_EQ(x.c.pace_rtt, 10 * kUs);
	for (int i = 0; i < 30; i++) {
		first = x.Send(1);
		x.Ack(0, 1, first, 0, 0, 50 * kUs);
	}
	EXPECT_GT(x.c.srtt, 45 * kUs);
	EXPECT_EQ(x.p[0].base_cur, 50 * kUs);
	EXPECT_EQ(x.p[1].base_cur, 10 * kUs);
	EXPECT_EQ(x.c.base_cur, 10 * kUs);
	EXPECT_EQ(x.c.pace_rtt, 20 * kUs);
	EXPECT_GE(mr_cc_path_target(&x.prm, &x.p[0]),
		  50 * kUs + x.prm.target_floor_ns);
	// The hint's window is sized over that RTT: 1 Gbit/s * 20 us.
	x.Ack(0, 0, 0, 0, 0, 0, 0, 1000000);
	EXPECT_NEAR(Pkts(x.c.w.cwnd), 1e9 * 20e-6 / 8 / 4096 * 1.25, 0.01);
}

TEST(CcHint, Encoding)
{
	EXPECT_EQ(mr_cc_hint_from_bps(0), 0u);
	EXPECT_EQ(mr_cc_hint_from_bps(1), 1u); // non-zero is never "none"
	EXPECT_EQ(mr_cc_hint_from_bps(999), 1u);
	EXPECT_EQ(mr_cc_hint_from_bps(100000000), 100000u);
	EXPECT_EQ(mr_cc_hint_from_bps(400000000000ull), 400000000u);
	EXPECT_EQ(mr_cc_hint_from_bps(4294967295000ull), 0xffffffffu);
	EXPECT_EQ(mr_cc_hint_from_bps(~0ull), 0xffffffffu); // saturates
	EXPECT_EQ(mr_cc_hint_to_bps(0xffffffffu), 4294967295000ull);
	EXPECT_EQ(mr_cc_hint_to_bps(100000), 100000000u);
	for (uint64_t bps : { 12345678ull, 1ull << 40, 999999ull })
		EXPECT_EQ(mr_cc_hint_to_bps(mr_cc_hint_from_bps(bps)),
			  bps / 1000 * 1000);
	// 125000 bytes in 10 ms is 100 Mbit/s.
	EXPECT_EQ(mr_share_rate_kbps(125000, 10 * kMs), 100000u);
	EXPECT_EQ(mr_share_rate_kbps(1, 1000 * kMs), 0u);
	EXPECT_EQ(mr_share_rate_kbps(~0ull, 1), 0xffffffffu);
	EXPECT_NEAR(mr_share_rate_kbps(4096 * 1000, 1 * kMs), 32768000, 1);
}

// The ACK's ECN count is cumulative and wraps; a reordered older ACK
// adds nothing; a counter we did not follow becomes the baseline.
TEST(CcEcn, CountWrapsAndResyncs)
{
	Conn x(1, 4096, [](mr_cc_params &prm) { prm.delay = 0; });
	uint64_t first = x.Send(64);

	x.ecn[0] = 0xfffffffeu;
	x.p[0].ecn_seen = 0xfffffffeu;
	x.Ack(0, 4, first + 3, 3); // wraps to 1: 3 new marks
	EXPECT_EQ(x.c.marks, 3u);
	EXPECT_EQ(x.p[0].ecn_seen, 1u);
	x.ecn[0] -= 2; // an older ACK
	x.Ack(0, 4, first + 7);
	EXPECT_EQ(x.c.marks, 3u);
	EXPECT_EQ(x.p[0].ecn_seen, 1u);
	x.ecn[0] = 100000; // a receiver counter we never saw from its start
	x.Ack(0, 4, first + 11);
	EXPECT_EQ(x.c.marks, 3u);
	EXPECT_EQ(x.p[0].ecn_seen, 100000u);
	x.Ack(0, 4, first + 15, 2);
	EXPECT_EQ(x.c.marks, 5u);
	// ECN off: marks are followed, not counted or acted on.
	Conn off(1, 4096, [](mr_cc_params &prm) { prm.ecn = 0; });

	first = off.Send(8);
	EXPECT_NE(off.Ack(0, 4, first + 3, 4), MR_CC_DECREASE_ECN);
	EXPECT_EQ(off.c.marks, 0u);
}

namespace {

// A round-based model of one connection: each round the sender sends
// what the windows allow (path.c picks the paths), the packets cross
// links, random loss strikes, and the receiver acknowledges every 4
// packets of a path; cc.c gets each ACK as the kernel will give it. A
// round is one base RTT. A link carries cap packets per round; as for any
// window-clocked sender, what its paths send beyond that waits in its
// queue (packet j of the round waits behind j + 1 - cap), which adds to
// the RTT, marks CE above mark_k and drops beyond buffer (tail drop).
struct Model {
	struct Link {
		double cap = 0; // packets per round; 0: no queue
		double buffer = 1e9;
		double mark_k = 0; // 0: no ECN
		double q = 0;	   // the largest queue of the last round
	};
	struct Pkt {
		uint32_t path;
		uint64_t order;
		bool lost, marked;
		uint64_t rtt;
	};

	Conn x;
	mr_paths ps;
	std::vector<Link> link;
	std::vector<uint32_t> link_of; // path -> link
	std::vector<uint64_t> srtt;
	std::mt19937_64 rng{ 11 };
	double loss = 0;
	uint64_t base = 1 * kMs, jitter = 0;
	double stall = 0; // chance that a round's samples include a stall
	uint64_t stall_ns = 0;
	// Measured. Goodput: what the links carried, at most cap a round.
	uint64_t rounds = 0, offered = 0, delivered = 0, dropped = 0;
	uint64_t decreases = 0;
	double weff = 0, queue = 0, goodput = 0;
	std::vector<double> link_sent;

	Model(uint32_t npaths, std::vector<Link> links,
	      std::function<void(mr_cc_params &)> tweak = nullptr)
		: x(npaths, 4096, tweak), link(std::move(links)),
		  link_of(npaths), srtt(npaths), link_sent(link.size())
	{
		EXPECT_EQ(mr_paths_init(&ps, npaths, 3, 1), 0);
		for (uint32_t i = 0; i < npaths; i++) {
			link_of[i] = i % link.size();
			mr_paths_set_window(&ps, i,
					    mr_cc_path_window(&x.prm, &x.p[i]));
		}
	}

	double Uniform()
	{
		return (rng() >> 11) * (1.0 / 9007199254740992.0);
	}

	void Run(int n, bool measure)
	{
		for (int i = 0; i < n; i++)
			Round(measure);
	}

	void Round(bool measure)
	{
		std::vector<Pkt> pk;
		uint32_t cw = mr_cc_conn_window(&x.prm, &x.c);

		if (measure) {
			rounds++;
			weff += Pkts(std::min(x.c.w.cwnd, x.c.paths_cwnd));
		}
		while (ps.inflight < cw) {
			int id = mr_paths_pick(&ps);

			if (id < 0)
				break;
			pk.push_back({ (uint32_t)id, ++x.sent, false, false,
				       0 });
		}
		// The links, each with its packets in send order.
		bool stalled = Uniform() < stall;
		std::vector<double> seen(link.size());

		for (auto &k : link)
			k.q = 0;
		for (size_t j = 0; j < pk.size(); j++) {
			Link &l = link[link_of[pk[j].path]];
			double q = l.cap ? std::max(0.0,
						    ++seen[&l - &link[0]] - l.cap) :
					   0;

			if (l.cap && q > l.buffer) {
				pk[j].lost = true;
				dropped += measure;
				q = l.buffer;
			} else {
				pk[j].marked = l.mark_k && q > l.mark_k;
				pk[j].lost = Uniform() < loss;
			}
			l.q = std::max(l.q, q);
			double qdelay = l.cap ? q / l.cap * base : 0;

			pk[j].rtt = base + (uint64_t)qdelay +
				    (jitter ? rng() % jitter : 0) +
				    (stalled ? stall_ns : 0);
		}
		if (measure) {
			offered += pk.size();
			for (size_t k = 0; k < link.size(); k++) {
				queue += link[k].q;
				link_sent[k] += seen[k];
				goodput += link[k].cap ?
						   std::min(seen[k], link[k].cap) :
						   seen[k];
			}
		}
		Acks(pk, measure);
		rounds_done++;
	}

	struct Ev {
		uint64_t at; // send order of the packet that triggers it
		uint32_t path, acked, lost, marks;
		uint64_t upto, rtt;
	};

	void Acks(const std::vector<Pkt> &pk, bool measure)
	{
		std::vector<Ev> ev;
		std::vector<std::vector<const Pkt *>> by(x.p.size());

		for (auto &p : pk)
			by[p.path].push_back(&p);
		for (uint32_t id = 0; id < by.size(); id++) {
			Ev e{ 0, id, 0, 0, 0, 0, 0 };

			for (const Pkt *p : by[id]) {
				if (p->lost) {
					e.lost++;
					continue;
				}
				if (!e.acked)
					e.rtt = p->rtt; // the oldest it acks
				e.acked++;
				e.marks += p->marked;
				e.upto = p->order;
				e.at = p->order;
				if (e.acked == 4) {
					ev.push_back(e);
					e = Ev{ 0, id, 0, 0, 0, 0, 0 };
				}
			}
			if (e.acked || e.lost) { // the last, or a probe's
				if (!e.acked)
					e.at = by[id].back()->order;
				ev.push_back(e);
			}
		}
		std::sort(ev.begin(), ev.end(),
			  [](const Ev &a, const Ev &b) { return a.at < b.at; });
		for (const Ev &e : ev) {
			x.now = rounds_done * base + e.at % 1000;
			if (e.rtt)
				srtt[e.path] = srtt[e.path] ?
						       (7 * srtt[e.path] + e.rtt) / 8 :
						       e.rtt;
			mr_cc_verdict v = x.Ack(e.path, e.acked, e.upto,
						e.marks, e.lost, e.rtt,
						srtt[e.path]);

			decreases += measure && v >= MR_CC_DECREASE_ECN;
			delivered += measure ? e.acked : 0;
			mr_paths_ack(&ps, e.path, e.acked, e.lost);
			mr_paths_set_window(&ps, e.path,
					    mr_cc_path_window(&x.prm,
							      &x.p[e.path]));
		}
		EXPECT_EQ(ps.inflight, 0u);
	}

	double Weff() const
	{
		return weff / rounds;
	}

	double Goodput() const
	{
		return goodput / rounds;
	}

	uint64_t rounds_done = 0;
};

} // namespace

// The requirement: at 1 % random loss the transport keeps >= 0.9 of its
// loss-free throughput. The window the connection can use (the smaller
// of its window and its paths' sum) is its throughput per RTT here. With
// 16 paths the connection's window binds; with 4 (4 * 64 = 256) the
// paths' do, so their reactions count too.
TEST(CcModel, RandomLossKeepsThroughput)
{
	for (uint32_t paths : { 16u, 4u }) {
		Model clean(paths, { Model::Link{} });
		Model lossy(paths, { Model::Link{} });
		Model guest(paths, { Model::Link{} });

		lossy.loss = 0.01;
		// Guest-like: RTT samples of 0.5-2 ms and host stalls of
		// 3.5 ms in 2 % of the rounds; losses at such delays are not
		// taken for a full queue often enough to matter.
		guest.base = 500 * kUs;
		guest.jitter = 1500 * kUs;
		guest.stall = 0.02;
		guest.stall_ns = 3500 * kUs;
		guest.loss = 0.01;
		for (Model *m : { &clean, &lossy, &guest }) {
			m->Run(300, false);
			m->Run(3000, true);
		}
		EXPECT_NEAR(clean.Weff(), 256.0, 0.5) << paths;
		EXPECT_GE(lossy.Weff(), 0.9 * clean.Weff()) << paths;
		EXPECT_GE((double)lossy.delivered / lossy.rounds,
			  0.9 * clean.delivered / clean.rounds);
		EXPECT_NEAR((double)(lossy.offered - lossy.delivered) /
				    lossy.offered,
			    0.01, 0.002);
		EXPECT_GE(guest.Weff(), 0.9 * clean.Weff()) << paths;
	}
}

// Tail drop with no ECN: the connection overflows the buffer, sees the
// losses at a full queue (high delay) and backs off, so the link stays
// busy with few drops.
TEST(CcModel, TailDropDecreases)
{
	Model::Link l;

	l.cap = 50;
	l.buffer = 150; // 3 ms at a 1 ms base RTT: a full queue is high delay
	Model m(16, { l });

	m.Run(300, false);
	m.Run(3000, true);
	EXPECT_GT(m.decreases, 50u);
	EXPECT_LT(m.Weff(), l.cap + l.buffer);
	EXPECT_GE(m.Goodput(), 0.9 * l.cap);
	EXPECT_LE((double)m.dropped / m.offered, 0.05);
	// Without CC the fixed windows (256) keep overflowing the 200 the
	// link and its buffer hold.
	Model off(16, { l }, [](mr_cc_params &prm) { prm.enabled = 0; });

	off.Run(300, false);
	off.Run(2000, true);
	EXPECT_NEAR((double)off.dropped / off.offered, 56.0 / 256, 0.01);
}

// ECN marking above 20 packets: DCTCP keeps the queue short and the link
// busy, without a drop.
TEST(CcModel, EcnKeepsQueueShort)
{
	Model::Link l;

	l.cap = 100;
	l.buffer = 1000;
	l.mark_k = 20;
	Model m(16, { l });

	m.Run(300, false);
	m.Run(3000, true);
	EXPECT_EQ(m.dropped, 0u);
	EXPECT_GE(m.Goodput(), 0.95 * l.cap);
	EXPECT_LT(m.queue / m.rounds, 3 * l.mark_k);
	EXPECT_GT(m.x.c.marks, 0u);
	EXPECT_GT(m.decreases, 0u);
}

// ECMP: 16 paths over 4 links, one of them 4 times slower, with shallow
// buffers. The slow link's paths get small windows and the scheduler
// gives them packets in proportion: the connection gets close to the
// links' sum, without a drop. With CC off, round robin gives the slow
// link a quarter of the packets, and it drops.
TEST(CcModel, WeightedSprayingAroundSlowLink)
{
	std::vector<Model::Link> links(4);

	for (auto &l : links) {
		l.cap = 40;
		l.buffer = 40;
		l.mark_k = 10;
	}
	links[0].cap = 10;
	Model m(16, links);

	m.Run(500, false);
	m.Run(3000, true);
	EXPECT_GE(m.Goodput(), 0.9 * 130);
	EXPECT_EQ(m.dropped, 0u);
	// DCTCP holds each link near cap + K, so the slow link carries about
	// (10 + 10) / (130 + 40) of the packets, not 1/4.
	EXPECT_NEAR(m.link_sent[0] / m.offered, 20.0 / 170, 0.02);
	EXPECT_LT(m.queue / m.rounds, 4 * 3 * 10.0);
	// The slow link's paths (0, 4, 8, 12) have the smaller windows.
	double slow = 0, fast = 0;

	for (uint32_t id = 0; id < 16; id++)
		(id % 4 ? fast : slow) += m.x.p[id].w.cwnd;
	EXPECT_LT(slow / 4, fast / 12);
	Model off(16, links, [](mr_cc_params &prm) { prm.enabled = 0; });

	off.Run(500, false);
	off.Run(2000, true);
	EXPECT_NEAR(off.link_sent[0] / off.offered, 0.25, 0.001);
	// 64 a round into 10 + 40: 14 of 256 dropped.
	EXPECT_NEAR((double)off.dropped / off.offered, 14.0 / 256, 0.005);
}

extern "C" {
#include "fuzz_cc.h"
}

// The fuzz body of fuzz_cc.c on deterministic random inputs, so that
// every test run drives random ACK, loss, timeout, hint, pacing and share
// sequences and checks the invariants after each step.
TEST(CcFuzz, RandomSequences)
{
	std::mt19937 rng(21);

	for (int i = 0; i < 20000; i++) {
		std::vector<uint8_t> b(16 + rng() % 1200);

		for (auto &x : b)
			x = (uint8_t)rng();
		if (i & 1)
			b[0] |= 0x80; // random parameters, else the defaults
		ASSERT_EQ(mr_fuzz_cc(b.data(), b.size()), 0) << "input " << i;
	}
	// Any prefix of an input is an input too.
	std::vector<uint8_t> b(600);

	for (auto &x : b)
		x = (uint8_t)rng();
	for (size_t n = 0; n <= b.size(); n++)
		ASSERT_EQ(mr_fuzz_cc(b.data(), n), 0) << n;
}
