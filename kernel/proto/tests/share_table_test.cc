// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Host tests of proto/share_table.c: the receiver's table of its senders,
// run as kernel/share.c runs it (join on the first data packet, a round at
// the first ACK after the interval, the hint capped by the even share,
// leave), with an environment that keeps owners and byte counters the way
// share.c does: joins and the even share, a round, idle senders dropping
// out while the last entry fills their place, leaving, a measured capacity.
#include <gtest/gtest.h>

#include <vector>

extern "C" {
#include "cc.h"
#include "share.h"
}

namespace {

constexpr uint64_t kMs = 1000000;
constexpr uint32_t kCap = 1000000; // kbit/s

// A connection, as struct mr_conn_share.
struct Conn {
	uint64_t bytes = 0; // since the last round
	mr_share_signals sig{}; // and what its packets met
	uint32_t hint = 0;
	int32_t slot = -1;
};

// share.c's device: the table first, so that the environment finds it.
struct Host {
	mr_share_table t;
	std::vector<mr_share_flow> flows;
	std::vector<Conn *> owner;
	mr_cc_params prm;
	uint32_t cap = kCap; // 0: unknown, the table measures
	uint64_t interval = 4 * kMs;

	explicit Host(uint32_t max) : flows(max), owner(max)
	{
		mr_share_table_init(&t, flows.data(), max);
		mr_cc_params_default(&prm);
	}

	static Host &Of(mr_share_table *t)
	{
		return *reinterpret_cast<Host *>(t);
	}

	// share.c: mr_share_rx().
	void Rx(Conn &c, uint64_t bytes, uint64_t now)
	{
		uint32_t hint = 0;
		int32_t slot;

		c.bytes += bytes;
		if (c.slot >= 0)
			return;
		slot = mr_share_table_join(&t, cap, now, &hint);
		if (slot >= 0) {
			owner[slot] = &c;
			c.slot = slot;
			c.hint = hint;
		}
	}

	// share.c: mr_share_hint(), CC on.
	uint32_t Hint(Conn &c, uint64_t now)
	{
		if (mr_share_table_due(&t, now, interval))
			mr_share_table_round(&t, &prm, cap, now);
		return mr_share_table_hint(t.even_kbps, c.hint);
	}

	// share.c: mr_share_leave().
	void Leave(Conn &c)
	{
		if (c.slot >= 0)
			mr_share_table_leave(&t, c.slot);
		c.bytes = 0;
	}

	// Every entry's owner points back at it.
	void ExpectConsistent() const
	{
		for (uint32_t i = 0; i < t.n; i++)
			EXPECT_EQ(owner[i]->slot, (int32_t)i);
	}
};

// Bytes at @kbps over @ns.
uint64_t Bytes(uint32_t kbps, uint64_t ns)
{
	return (uint64_t)kbps * 1000 / 8 * ns / 1000000000;
}

TEST(ShareTable, JoinsGetAnEvenShare)
{
	Host h(4);
	Conn c[5];

	EXPECT_FALSE(mr_share_table_due(&h.t, 10 * kMs, h.interval));
	h.Rx(c[0], 1000, 1 * kMs);
	EXPECT_EQ(h.t.n, 1u);
	EXPECT_EQ(h.t.start_ns, 1 * kMs);
	EXPECT_EQ(h.t.even_kbps, kCap);
	EXPECT_EQ(c[0].hint, 0u); // no round yet: no newcomer's share
	EXPECT_EQ(h.Hint(c[0], 1 * kMs), kCap);
	for (int i = 1; i < 4; i++)
		h.Rx(c[i], 1000, 2 * kMs);
	EXPECT_EQ(h.t.start_ns, 1 * kMs); // the first join's
	EXPECT_EQ(h.t.even_kbps, kCap / 4);
	for (int i = 0; i < 4; i++) {
		EXPECT_EQ(c[i].slot, i);
		EXPECT_EQ(h.Hint(c[i], 2 * kMs), kCap / 4);
	}
	// Full: no entry, but the even share still caps its ACKs.
	h.Rx(c[4], 1000, 2 * kMs);
	EXPECT_EQ(c[4].slot, -1);
	EXPECT_EQ(h.t.n, 4u);
	EXPECT_EQ(h.Hint(c[4], 2 * kMs), kCap / 4);
	EXPECT_EQ(mr_share_table_hint(0, 7), 7u);
	EXPECT_EQ(mr_share_table_hint(5, 7), 5u);
	EXPECT_EQ(mr_share_table_hint(9, 7), 7u);
	EXPECT_EQ(mr_share_table_hint(9, 0), 9u);
	h.ExpectConsistent();
}

TEST(ShareTable, ARoundSharesAndEndsTheEvenShare)
{
	Host h(8);
	Conn c[5];

	for (int i = 0; i < 4; i++)
		h.Rx(c[i], 0, 1 * kMs);
	for (int i = 0; i < 4; i++)
		c[i].bytes = Bytes(kCap / 4, 4 * kMs);
	EXPECT_FALSE(mr_share_table_due(&h.t, 5 * kMs - 1, h.interval));
	EXPECT_EQ(h.Hint(c[0], 5 * kMs - 1), kCap / 4);
	EXPECT_EQ(h.t.stats.active, 0u); // no round yet
	EXPECT_TRUE(mr_share_table_due(&h.t, 5 * kMs, h.interval));
	// The first ACK after the interval computes for all.
	EXPECT_EQ(h.Hint(c[2], 5 * kMs), kCap / 4);
	EXPECT_EQ(h.t.start_ns, 5 * kMs);
	EXPECT_EQ(h.t.even_kbps, 0u);
	EXPECT_EQ(h.t.stats.active, 4u);
	EXPECT_EQ(h.t.stats.unbounded, 4u);
	EXPECT_EQ(h.t.peak_kbps, kCap);
	EXPECT_EQ(h.t.newcomer_kbps, kCap / 5);
	for (int i = 0; i < 4; i++) {
		EXPECT_EQ(c[i].bytes, 0u); // taken
		EXPECT_EQ(c[i].hint, kCap / 4);
		EXPECT_EQ(h.flows[i].hint_kbps, kCap / 4);
	}
	EXPECT_FALSE(mr_share_table_due(&h.t, 5 * kMs + 1, h.interval));
	// A newcomer gets the newcomer's share, and caps everyone until the
	// next round.
	h.Rx(c[4], 1000, 6 * kMs);
	EXPECT_EQ(c[4].slot, 4);
	EXPECT_EQ(c[4].hint, kCap / 5);
	EXPECT_EQ(h.t.even_kbps, kCap / 5);
	for (int i = 0; i < 5; i++)
		EXPECT_EQ(h.Hint(c[i], 6 * kMs), kCap / 5);
	h.ExpectConsistent();
}

TEST(ShareTable, IdleSendersDropOutAndTheLastFillsTheirPlace)
{
	Host h(8);
	Conn c[4]; // a, b, c, d: b and d fall silent

	ASSERT_EQ(h.prm.share_idle, 2);
	for (int i = 0; i < 4; i++)
		h.Rx(c[i], 0, 1 * kMs);
	uint64_t now = 1 * kMs;
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 4; i++)
			if (round == 0 || i % 2 == 0)
				c[i].bytes += Bytes(kCap / 4, 4 * kMs);
		now += 4 * kMs;
		h.Hint(c[0], now);
		if (round < 2) {
			EXPECT_EQ(h.t.n, 4u) << round;
		}
	}
	// After share_idle rounds without data: d, the last, just leaves; b's
	// place goes to c, which keeps its share.
	EXPECT_EQ(h.t.n, 2u);
	EXPECT_EQ(c[0].slot, 0);
	EXPECT_EQ(c[2].slot, 1);
	EXPECT_EQ(c[1].slot, -1);
	EXPECT_EQ(c[3].slot, -1);
	EXPECT_EQ(c[1].hint, 0u);
	EXPECT_EQ(c[3].hint, 0u);
	EXPECT_EQ(h.owner[1], &c[2]);
	EXPECT_EQ(c[2].hint, h.flows[1].hint_kbps);
	EXPECT_EQ(c[0].hint, c[2].hint);
	EXPECT_GE(c[2].hint, kCap / 2);
	EXPECT_EQ(h.t.stats.active, 2u);
	// b comes back: a newcomer again, at the end.
	h.Rx(c[1], 1000, now + 1);
	EXPECT_EQ(c[1].slot, 2);
	EXPECT_EQ(c[1].hint, h.t.newcomer_kbps);
	EXPECT_EQ(h.t.even_kbps, kCap / 3);
	EXPECT_EQ(h.flows[2].idle, 0);
	EXPECT_EQ(h.flows[2].hint_kbps, 0u);
	h.ExpectConsistent();
	// Everyone silent (b's 1000 bytes count in the first round): the
	// table empties and rounds stop.
	for (int round = 0; round < 3; round++) {
		now += 4 * kMs;
		h.Hint(c[0], now);
	}
	EXPECT_EQ(h.t.n, 0u);
	EXPECT_FALSE(mr_share_table_due(&h.t, now + 100 * kMs, h.interval));
}

TEST(ShareTable, Leave)
{
	Host h(8);
	Conn c[4];

	for (int i = 0; i < 4; i++)
		h.Rx(c[i], 0, 1 * kMs);
	h.flows[3].rate_kbps = 1234; // state that moves with its entry
	h.Leave(c[1]);
	EXPECT_EQ(h.t.n, 3u);
	EXPECT_EQ(c[1].slot, -1);
	EXPECT_EQ(c[1].hint, 0u);
	EXPECT_EQ(c[3].slot, 1);
	EXPECT_EQ(h.flows[1].rate_kbps, 1234u);
	h.ExpectConsistent();
	h.Leave(c[3]); // now in the middle
	EXPECT_EQ(c[2].slot, 1);
	h.Leave(c[2]); // the last: nothing moves
	EXPECT_EQ(h.t.n, 1u);
	EXPECT_EQ(c[0].slot, 0);
	h.Leave(c[2]); // not in it: nothing
	EXPECT_EQ(h.t.n, 1u);
	mr_share_table_leave(&h.t, 5); // out of range: nothing
	EXPECT_EQ(h.t.n, 1u);
	h.Leave(c[0]);
	EXPECT_EQ(h.t.n, 0u);
	h.ExpectConsistent();
	// Rejoining starts over at entry 0, and the table keeps its time.
	h.Rx(c[2], 10, 9 * kMs);
	EXPECT_EQ(c[2].slot, 0);
	EXPECT_EQ(h.t.start_ns, 1 * kMs);
}

// A capacity far above the bottleneck before this end (a link's speed):
// four congested rounds in a row that receive under half of it, from
// senders whose windows held them (MR_FLAG_WINDOW_LIMITED), lower it to
// what they received, less 1/16; an uncongested one, or random loss (a
// hole for 1 packet in 100), changes nothing; clean rounds near it raise
// it by 1/16, never above the host's.
TEST(ShareTable, ACapacityFarAboveTheBottleneckIsLearnt)
{
	Host h(4);
	Conn c;
	const uint32_t bottleneck = kCap / 100;
	uint64_t now = 1 * kMs;

	h.prm.share_learn = 1;
	h.Rx(c, 0, now);
	auto round = [&](uint32_t kbps, uint64_t marks, uint64_t gaps) {
		c.bytes = Bytes(kbps, 4 * kMs);
		c.sig = {100, marks, gaps, 100};
		now += 4 * kMs;
		h.Hint(c, now);
	};
	round(bottleneck, 0, 1);
	round(bottleneck, 0, 1);
	for (int i = 0; i < MR_SHARE_OVER_ROUNDS - 1; i++) {
		round(bottleneck, 5, 0);
		EXPECT_EQ(c.hint, kCap) << i;
	}
	// Marks in the fourth round in a row: learnt.
	round(bottleneck, 5, 0);
	EXPECT_EQ(h.t.learnt_kbps, bottleneck - bottleneck / 16);
	EXPECT_EQ(c.hint, bottleneck - bottleneck / 16);
	// Tail drop: holes in more than 1/16 of the packets count as well.
	Host tail(4);
	Conn d;
	tail.prm.share_learn = 1;
	tail.Rx(d, 0, 1 * kMs);
	for (int i = 0; i < MR_SHARE_OVER_ROUNDS; i++) {
		d.bytes = Bytes(bottleneck, 4 * kMs);
		d.sig = {100, 0, 7, 60};
		tail.Hint(d, (1 + 4 * ((uint64_t)i + 1)) * kMs);
	}
	EXPECT_EQ(tail.t.learnt_kbps, bottleneck - bottleneck / 16);
	// Clean rounds that use it raise it by 1/16 at a time.
	const uint32_t learnt = h.t.learnt_kbps;
	round(learnt, 0, 0);
	EXPECT_EQ(h.t.learnt_kbps, learnt + learnt / 16 + 1);
	// Marks hold it where it is; holes do not (a guest's CPUs reorder).
	const uint32_t raised = h.t.learnt_kbps;

	round(raised, 3, 0);
	EXPECT_EQ(h.t.learnt_kbps, raised);
	round(raised, 0, 7);
	EXPECT_EQ(h.t.learnt_kbps, raised + raised / 16 + 1);
	// A round that did not use it (a stall) changes nothing.
	round(raised / 2, 0, 0);
	EXPECT_EQ(h.t.learnt_kbps, raised + raised / 16 + 1);
	for (int i = 0; i < 200; i++)
		round(h.t.learnt_kbps, 0, 0);
	EXPECT_EQ(h.t.learnt_kbps, kCap);
}

// Learning is the receiver's choice (share_learn), off by default: the
// same rounds then leave the host's capacity as it is.
TEST(ShareTable, NoLearningByDefault)
{
	Host h(4);
	Conn c;
	uint64_t now = 1 * kMs;

	ASSERT_EQ(h.prm.share_learn, 0);
	h.Rx(c, 0, now);
	for (int i = 0; i < 4 * MR_SHARE_OVER_ROUNDS; i++) {
		c.bytes = Bytes(kCap / 100, 4 * kMs);
		c.sig = {100, 5, 7, 100};
		now += 4 * kMs;
		h.Hint(c, now);
	}
	EXPECT_EQ(h.t.learnt_kbps, 0u);
	EXPECT_EQ(c.hint, kCap);
}

// What is not a slower bottleneck changes nothing, however long it lasts:
// a sender that its application paces, its packets reordered (holes in a
// quarter of them) or marked, says nothing of its windows; nor does one
// whose windows hold it in only a few of its packets.
TEST(ShareTable, AppLimitedOrReorderedSendersTeachNothing)
{
	const mr_share_signals cases[] = {
		{100, 0, 25, 0},	// reordering, application-limited
		{100, 5, 0, 0},		// marks, application-limited
		{100, 0, 25, 50},	// held in half of the packets only
	};

	for (const auto &sig : cases) {
		Host h(4);
		Conn c;
		uint64_t now = 1 * kMs;

		h.prm.share_learn = 1;
		h.Rx(c, 0, now);
		for (int i = 0; i < 10 * MR_SHARE_OVER_ROUNDS; i++) {
			c.bytes = Bytes(kCap / 300, 4 * kMs);
			c.sig = sig;
			now += 4 * kMs;
			h.Hint(c, now);
		}
		EXPECT_EQ(h.t.learnt_kbps, kCap) << sig.gaps << " " << sig.limited;
		EXPECT_EQ(c.hint, kCap);
	}
}

// Capacity 0: the table shares the most it received in a round + 1/8.
TEST(ShareTable, MeasuredCapacity)
{
	Host h(4);
	Conn c[2];

	h.cap = 0;
	h.Rx(c[0], 0, 1 * kMs);
	EXPECT_EQ(h.t.even_kbps, 1u); // nothing known yet: the least share
	c[0].bytes = Bytes(80000, 4 * kMs);
	h.Hint(c[0], 5 * kMs);
	EXPECT_EQ(h.t.peak_kbps, 80000u);
	EXPECT_EQ(c[0].hint, 80000u + 10000u);
	h.Rx(c[1], 0, 6 * kMs);
	EXPECT_EQ(h.t.even_kbps, 90000u / 2);
	// Less received: the peak decays by 1/64 a round.
	c[0].bytes = Bytes(40000, 4 * kMs);
	h.Hint(c[0], 9 * kMs);
	EXPECT_EQ(h.t.peak_kbps, 80000u - 80000u / 64);
}

} // namespace

// The environment (share.h), as kernel/share.c keeps it.
u64 mr_share_table_env_bytes(struct mr_share_table *t, u32 i)
{
	Conn *c = Host::Of(t).owner[i];
	uint64_t b = c->bytes;

	c->bytes = 0;
	return b;
}

void mr_share_table_env_signals(struct mr_share_table *t, u32 i,
				struct mr_share_signals *sig)
{
	Conn *c = Host::Of(t).owner[i];

	sig->packets += c->sig.packets;
	sig->marks += c->sig.marks;
	sig->gaps += c->sig.gaps;
	sig->limited += c->sig.limited;
	c->sig = {};
}

void mr_share_table_env_hint(struct mr_share_table *t, u32 i, u32 hint_kbps)
{
	Host::Of(t).owner[i]->hint = hint_kbps;
}

void mr_share_table_env_gone(struct mr_share_table *t, u32 i)
{
	Conn *c = Host::Of(t).owner[i];

	c->slot = -1;
	c->hint = 0;
}

void mr_share_table_env_moved(struct mr_share_table *t, u32 from, u32 to)
{
	Host &h = Host::Of(t);

	h.owner[to] = h.owner[from];
	h.owner[to]->slot = (int32_t)to;
}
