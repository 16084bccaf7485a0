// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Host tests of proto/hello.c: two ends exchange HELLOs through a small
// in-test wire (every HELLO is encoded and decoded on the way), lose some,
// and meet an off-path sender that does not know their tags.
#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <vector>

#include "pkt_gen.hh"

extern "C" {
#include "hello.h"
}

using mrtest::Gen;

namespace {

constexpr uint64_t kTagA = 0xa11ce000000000a1;
constexpr uint64_t kTagB = 0xb0b00000000000b2;
constexpr uint64_t kFirst = 1000000; // the first retry wait, 1 ms
constexpr uint64_t kMax = 6 * kFirst; // not a power of 2 of kFirst: capped
constexpr uint64_t kGap = MR_HELLO_REPLY_GAP_NS;
// Not 0: a deadline of 0 means that no HELLO is due.
constexpr uint64_t kStart = 1000000000;

bool Done(const mr_hello &h)
{
	return h.peer && h.known;
}

// What goes over the wire is a HELLO the decoder accepts.
mr_pkt OverTheWire(const mr_pkt &p)
{
	uint8_t buf[MR_MAX_HDR_LEN];
	mr_pkt q;

	EXPECT_EQ(p.base.opcode, MR_OP_HELLO);
	EXPECT_EQ(mr_wire_encode(&p, buf, sizeof(buf)),
		  (int)(MR_BASE_HDR_LEN + MR_HELLO_HDR_LEN));
	EXPECT_EQ(mr_wire_decode(buf, MR_BASE_HDR_LEN + MR_HELLO_HDR_LEN, &q),
		  0);
	return q;
}

// Two ends, A (0) and B (1), and the HELLOs between them, delivered in
// order and at once; the clock moves only to the next deadline.
struct Net {
	mr_hello end[2];
	struct InFlight {
		int to;
		mr_pkt pkt;
	};
	std::deque<InFlight> wire;
	uint64_t now = kStart;
	unsigned sent = 0; // HELLOs put on the wire, lost ones too
	std::vector<uint64_t> due_at[2]; // when each end's due HELLOs went
	// Whether the HELLO numbered @n (from 0) is lost.
	std::function<bool(unsigned n)> lost = [](unsigned) { return false; };

	Net()
	{
		mr_hello_init(&end[0], kTagA);
		mr_hello_init(&end[1], kTagB);
	}

	mr_hello &a() { return end[0]; }
	mr_hello &b() { return end[1]; }

	void Send(int to, const mr_pkt &p)
	{
		if (!lost(sent++))
			wire.push_back({ to, OverTheWire(p) });
	}

	// Delivers the oldest HELLO in flight, and sends its answer.
	void Step()
	{
		InFlight f = wire.front();
		mr_pkt reply;

		wire.pop_front();
		if (mr_hello_rcv(&end[f.to], &f.pkt, now, &reply))
			Send(1 - f.to, reply);
	}

	// Delivers what is in flight, answers included; false if it never
	// stops.
	bool Drain()
	{
		for (unsigned n = 0; !wire.empty(); n++) {
			if (n == 100)
				return false;
			Step();
		}
		return true;
	}

	// The HELLOs both ends owe now.
	void Due()
	{
		for (int i = 0; i < 2; i++) {
			mr_pkt out;

			if (mr_hello_due(&end[i], now, kFirst, kMax, &out)) {
				due_at[i].push_back(now);
				Send(1 - i, out);
			}
		}
	}

	// Runs until both ends are done, or until @until; false if the
	// handshake did not finish.
	bool Run(uint64_t until)
	{
		for (;;) {
			Due();
			if (!Drain())
				return false;
			if (Done(a()) && Done(b()))
				return true;
			uint64_t next = 0;

			for (const mr_hello &h : end)
				if (h.deadline && (!next || h.deadline < next))
					next = h.deadline;
			if (!next || next > until)
				return false;
			now = next;
		}
	}

	void ExpectPaired()
	{
		EXPECT_TRUE(Done(a()));
		EXPECT_TRUE(Done(b()));
		EXPECT_EQ(a().peer, kTagB);
		EXPECT_EQ(b().peer, kTagA);
		EXPECT_EQ(a().n_conflicts + b().n_conflicts, 0u);
		// Done: nothing more is due, ever.
		mr_pkt out;

		for (mr_hello &h : end)
			EXPECT_FALSE(mr_hello_due(&h, now + 100 * kMax, kFirst,
						  kMax, &out));
	}
};

// A HELLO as a sender with tag @src sends it to the end with tag @dst.
mr_pkt Hello(uint64_t dst, uint64_t src, uint32_t flags)
{
	mr_pkt p{};

	p.base.opcode = MR_OP_HELLO;
	p.base.tag = dst;
	p.hello.src_tag = src;
	p.hello.flags = flags;
	return OverTheWire(p);
}

} // namespace

TEST(Hello, InitStartsWithNothing)
{
	mr_hello h;
	mr_pkt out;

	mr_hello_init(&h, kTagA);
	EXPECT_EQ(h.local, kTagA);
	EXPECT_EQ(h.peer, 0u);
	EXPECT_FALSE(h.known);
	EXPECT_FALSE(mr_hello_ready(&h));
	// Nothing goes before mr_hello_start().
	EXPECT_FALSE(mr_hello_due(&h, kStart, kFirst, kMax, &out));
	EXPECT_EQ(h.n_sent, 0u);
}

// Only A sends: B answers the first HELLO, A proves B's tag back, and A's
// next HELLO brings the proof that B holds A's.
TEST(Hello, OneSideStarts)
{
	Net n;

	mr_hello_start(&n.a(), n.now);
	ASSERT_TRUE(n.Run(kStart + kMax));
	n.ExpectPaired();
	EXPECT_TRUE(n.due_at[1].empty()); // B never sent on its own
	EXPECT_LE(n.now, kStart + kFirst);
	EXPECT_EQ(n.a().n_sent + n.b().n_sent, n.sent);
}

// B is done at once; A learns that B holds its tag from B's first packet.
TEST(Hello, OneSideStartsAndTheFirstPacketFinishes)
{
	Net n;

	mr_hello_start(&n.a(), n.now);
	n.Due();
	ASSERT_TRUE(n.Drain());
	EXPECT_TRUE(Done(n.b()));
	EXPECT_TRUE(mr_hello_ready(&n.a()));
	EXPECT_FALSE(n.a().known);
	EXPECT_EQ(n.sent, 3u); // HELLO, its answer, the proof of B's tag
	// B's data carries A's tag: A is done without another HELLO.
	EXPECT_EQ(mr_hello_check(&n.a(), n.b().peer), MR_HELLO_PASS);
	n.ExpectPaired();
}

TEST(Hello, BothStartAtOnce)
{
	Net n;

	mr_hello_start(&n.a(), n.now);
	mr_hello_start(&n.b(), n.now);
	ASSERT_TRUE(n.Run(kStart));
	n.ExpectPaired();
	EXPECT_EQ(n.now, kStart); // no retry was needed
	EXPECT_EQ(n.sent, 6u);
}

// B starts only when A's first HELLO is on the wire, or already answered:
// then B is done already, and the start changes nothing.
TEST(Hello, BothStartOneAfterTheOther)
{
	for (int late : { 0, 1 }) {
		Net n;

		mr_hello_start(&n.a(), n.now);
		n.Due();
		if (late) {
			ASSERT_TRUE(n.Drain());
			ASSERT_TRUE(Done(n.b()));
		}
		mr_hello_start(&n.b(), n.now);
		ASSERT_TRUE(n.Run(kStart + kMax)) << late;
		n.ExpectPaired();
		EXPECT_EQ(n.due_at[1].empty(), late == 1);
		// A's first retry brings B's proof of A's tag.
		EXPECT_EQ(n.now, late ? kStart + kFirst : kStart);
	}
}

// Whichever HELLO is lost, the retries of the started ends recover.
TEST(Hello, LostHelloInEveryPosition)
{
	for (int both : { 0, 1 }) {
		Net clean;

		mr_hello_start(&clean.a(), clean.now);
		if (both)
			mr_hello_start(&clean.b(), clean.now);
		ASSERT_TRUE(clean.Run(kStart + kMax));
		for (unsigned lost = 0; lost < clean.sent; lost++) {
			Net n;

			n.lost = [lost](unsigned i) { return i == lost; };
			mr_hello_start(&n.a(), n.now);
			if (both)
				mr_hello_start(&n.b(), n.now);
			ASSERT_TRUE(n.Run(kStart + kMax))
				<< "both " << both << " lost " << lost;
			n.ExpectPaired();
			// A loss costs at most the first two waits: a
			// proof resets tries, not the deadline set before.
			EXPECT_LE(n.now, kStart + 3 * kFirst) << lost;
		}
	}
}

// Two losses in a row (and a lossy tail) only take longer.
TEST(Hello, LostRunsRecover)
{
	for (unsigned first = 0; first < 6; first++) {
		Net n;

		n.lost = [first](unsigned i) {
			return i == first || i == first + 1 || i % 5 == 4;
		};
		mr_hello_start(&n.a(), n.now);
		ASSERT_TRUE(n.Run(kStart + 50 * kMax)) << first;
		n.ExpectPaired();
	}
}

// A silent peer: the waits double from the first one to the cap, and tries
// counts the HELLOs sent without an answer.
TEST(Hello, RetriesDoubleUpToTheCap)
{
	Net n;

	n.lost = [](unsigned) { return true; };
	mr_hello_start(&n.a(), n.now);
	EXPECT_FALSE(n.Run(kStart + 40 * kFirst));

	const std::vector<uint64_t> &at = n.due_at[0];
	const uint64_t want[] = { kFirst,     2 * kFirst, 4 * kFirst, kMax,
				  kMax,	      kMax,	  kMax };

	ASSERT_GE(at.size(), 8u);
	EXPECT_EQ(at[0], kStart);
	for (size_t i = 0; i < 7; i++)
		EXPECT_EQ(at[i + 1] - at[i], want[i]) << i;
	EXPECT_EQ(n.a().tries, at.size());
	EXPECT_EQ(n.a().n_sent, at.size());
	EXPECT_EQ(n.a().peer, 0u);
	EXPECT_FALSE(n.a().known);
	// With no doubling room at all, every wait is the cap.
	mr_hello h;
	mr_pkt out;

	mr_hello_init(&h, kTagA);
	mr_hello_start(&h, kStart);
	ASSERT_TRUE(mr_hello_due(&h, kStart, kMax, kMax, &out));
	EXPECT_EQ(h.deadline, kStart + kMax);
	ASSERT_TRUE(mr_hello_due(&h, h.deadline, kMax, kMax, &out));
	EXPECT_EQ(h.deadline, kStart + 2 * kMax);
	EXPECT_FALSE(mr_hello_due(&h, h.deadline - 1, kFirst, kMax, &out));
}

// A proof starts the count again: the next wait is the first one.
TEST(Hello, ProofResetsTries)
{
	Net n;
	mr_pkt out, reply;

	mr_hello_start(&n.a(), n.now);
	for (int i = 0; i < 4; i++) {
		ASSERT_TRUE(mr_hello_due(&n.a(), n.a().deadline, kFirst, kMax,
					 &out));
	}
	EXPECT_EQ(n.a().tries, 4u);
	mr_pkt answer = Hello(kTagA, kTagB, MR_HELLO_REPLY);

	n.now = n.a().deadline - 1;
	ASSERT_TRUE(mr_hello_rcv(&n.a(), &answer, n.now, &reply));
	EXPECT_EQ(n.a().tries, 0u);
	EXPECT_EQ(n.a().peer, kTagB);
	EXPECT_FALSE(n.a().known);
	uint64_t at = n.a().deadline;

	ASSERT_TRUE(mr_hello_due(&n.a(), at, kFirst, kMax, &out));
	EXPECT_EQ(n.a().deadline, at + kFirst);
	// That HELLO now names B's tag and says A holds it.
	EXPECT_EQ(out.base.tag, kTagB);
	EXPECT_EQ(out.hello.src_tag, kTagA);
	EXPECT_EQ(out.hello.flags, (uint32_t)MR_HELLO_KNOWN);
}

// HELLOs that do not carry A's tag prove nothing: whatever their sender
// claims, A's peer and its proof stay as they are, and A answers at most
// one per gap; once A holds B's tag, none (they are not B's).
TEST(Hello, OffPathSenderChangesNothing)
{
	Gen g(77);

	for (int phase = 0; phase < 3; phase++) {
		Net n;

		mr_hello_start(&n.a(), n.now);
		if (phase == 1) { // A holds B's tag, B's proof is still due
			mr_pkt r = Hello(kTagA, kTagB, MR_HELLO_REPLY), out;

			ASSERT_TRUE(mr_hello_rcv(&n.a(), &r, n.now, &out));
		} else if (phase == 2) { // done
			mr_hello_start(&n.b(), n.now);
			ASSERT_TRUE(n.Run(kStart));
		}
		const mr_hello before = n.a();
		unsigned answers = 0, tries = 400;
		uint64_t t = n.now + kGap; // past any earlier answer's gap

		for (unsigned i = 0; i < tries; i++, t += kGap / 4) {
			uint64_t wrong = g.Chance(30) ? 0 : g.U64();

			if (wrong == kTagA)
				wrong = 0;
			uint64_t src = g.U64() | 1;
			uint32_t flags = g.U32() & MR_HELLO_REPLY;

			if (wrong && g.Chance(50))
				flags |= MR_HELLO_KNOWN;
			mr_pkt p = Hello(wrong, src, flags), reply;

			if (!mr_hello_rcv(&n.a(), &p, t, &reply))
				continue;
			answers++;
			OverTheWire(reply);
			// To its claimed tag, with A's: it reaches the peer's
			// address only, where this sender is not.
			EXPECT_EQ(reply.base.tag, src);
			EXPECT_EQ(reply.hello.src_tag, kTagA);
			EXPECT_TRUE(reply.hello.flags & MR_HELLO_REPLY);
			EXPECT_FALSE(reply.hello.flags & MR_HELLO_KNOWN);
		}
		const mr_hello &h = n.a();

		EXPECT_EQ(h.peer, before.peer) << phase;
		EXPECT_EQ(h.known, before.known) << phase;
		EXPECT_EQ(h.n_proven, before.n_proven) << phase;
		EXPECT_EQ(h.n_conflicts, before.n_conflicts) << phase;
		EXPECT_EQ(h.deadline, before.deadline) << phase;
		EXPECT_EQ(h.tries, before.tries) << phase;
		// Four arrive per gap, one is answered; none once A holds B's.
		EXPECT_EQ(answers, phase ? 0 : tries / 4) << phase;
		EXPECT_EQ(h.n_refused - before.n_refused, tries - answers);
		EXPECT_EQ(h.n_sent - before.n_sent, answers);
	}
}

// The gap is measured from the last answer, not from the last refusal.
TEST(Hello, ReplyGapEdges)
{
	mr_hello h;
	mr_pkt p = Hello(0, kTagB, 0), reply;

	mr_hello_init(&h, kTagA);
	EXPECT_TRUE(mr_hello_rcv(&h, &p, kStart, &reply));
	EXPECT_FALSE(mr_hello_rcv(&h, &p, kStart, &reply));
	EXPECT_FALSE(mr_hello_rcv(&h, &p, kStart + kGap - 1, &reply));
	EXPECT_TRUE(mr_hello_rcv(&h, &p, kStart + kGap, &reply));
	EXPECT_EQ(h.n_refused, 2u);
	// An unproven answer tells the sender A's tag, and nothing more.
	EXPECT_EQ(reply.base.tag, kTagB);
	EXPECT_EQ(reply.hello.src_tag, kTagA);
	EXPECT_EQ(reply.hello.flags, (uint32_t)MR_HELLO_REPLY);
	EXPECT_EQ(h.peer, 0u);
	// The early HELLO shares the gap with those answers.
	mr_pkt early;

	EXPECT_FALSE(mr_hello_early(&h, kStart + kGap + 1, &early));
	EXPECT_EQ(h.n_refused, 3u);
}

// A proven HELLO that names another tag than the peer's, once A holds one:
// counted, unanswered, and nothing changes.
TEST(Hello, ConflictAfterCommit)
{
	for (int done : { 0, 1 }) {
		Net n;

		mr_hello_start(&n.a(), n.now);
		if (done) {
			ASSERT_TRUE(n.Run(kStart + kMax));
		} else { // A holds B's tag; B's proof of A's is still due
			mr_pkt r = Hello(kTagA, kTagB, MR_HELLO_REPLY), out;

			ASSERT_TRUE(mr_hello_rcv(&n.a(), &r, n.now, &out));
		}
		const mr_hello before = n.a();

		for (uint32_t flags = 0; flags < 4; flags++) {
			mr_pkt p = Hello(kTagA, 0xc0ffee, flags), reply;

			EXPECT_FALSE(mr_hello_rcv(&n.a(), &p, n.now + kMax,
						  &reply));
		}
		const mr_hello &h = n.a();

		EXPECT_EQ(h.n_conflicts, 4u);
		EXPECT_EQ(h.peer, kTagB);
		EXPECT_EQ(h.known, before.known) << done;
		EXPECT_EQ(h.n_proven, before.n_proven);
		EXPECT_EQ(h.n_sent, before.n_sent);
		EXPECT_EQ(h.deadline, before.deadline);
		EXPECT_EQ(h.tries, before.tries);
		EXPECT_EQ(h.reply_after, before.reply_after);
	}
}

TEST(Hello, CheckVerdicts)
{
	mr_hello h;

	mr_hello_init(&h, kTagA);
	// Not A's tag: dropped, and it proves nothing.
	for (uint64_t tag : { (uint64_t)0, kTagB, kTagA ^ 1, ~kTagA }) {
		EXPECT_EQ(mr_hello_check(&h, tag), MR_HELLO_BAD_TAG);
		EXPECT_FALSE(h.known);
	}
	// A's tag before A holds B's: the sender holds A's tag, but A cannot
	// answer yet.
	mr_hello_start(&h, kStart);
	mr_pkt out;

	ASSERT_TRUE(mr_hello_due(&h, kStart, kFirst, kMax, &out));
	EXPECT_EQ(mr_hello_check(&h, kTagA), MR_HELLO_EARLY);
	EXPECT_TRUE(h.known);
	EXPECT_EQ(h.tries, 0u);
	EXPECT_FALSE(mr_hello_ready(&h));
	EXPECT_EQ(mr_hello_check(&h, kTagA), MR_HELLO_EARLY);

	// The early HELLO asks again, as a first HELLO does.
	mr_pkt early;

	ASSERT_TRUE(mr_hello_early(&h, kStart, &early));
	OverTheWire(early);
	EXPECT_EQ(early.base.tag, 0u);
	EXPECT_EQ(early.hello.src_tag, kTagA);
	EXPECT_EQ(early.hello.flags, 0u);
	EXPECT_FALSE(mr_hello_early(&h, kStart + kGap - 1, &early));

	// B's proof arrives: from then on, A's tag passes.
	mr_pkt r = Hello(kTagA, kTagB, MR_HELLO_KNOWN | MR_HELLO_REPLY);

	EXPECT_FALSE(mr_hello_rcv(&h, &r, kStart + 1, &out));
	EXPECT_TRUE(Done(h));
	EXPECT_EQ(h.deadline, 0u);
	EXPECT_EQ(mr_hello_check(&h, kTagA), MR_HELLO_PASS);
	EXPECT_EQ(mr_hello_check(&h, kTagB), MR_HELLO_BAD_TAG);
	EXPECT_EQ(mr_hello_check(&h, 0), MR_HELLO_BAD_TAG);
}

// A lost the proof of B's tag that B already gave (B is ready and sends):
// A's early HELLO gets it again.
TEST(Hello, EarlyPacketRecovers)
{
	Net n;

	mr_hello_start(&n.a(), n.now);
	mr_hello_start(&n.b(), n.now);
	// B's answer to A's first HELLO, and B's proof of A's tag.
	n.lost = [](unsigned i) { return i == 2 || i == 4; };
	n.Due();
	ASSERT_TRUE(n.Drain());
	ASSERT_TRUE(mr_hello_ready(&n.b()));
	ASSERT_FALSE(mr_hello_ready(&n.a()));
	ASSERT_EQ(mr_hello_check(&n.a(), n.b().peer), MR_HELLO_EARLY);

	mr_pkt early;

	n.now += kGap;
	ASSERT_TRUE(mr_hello_early(&n.a(), n.now, &early));
	n.Send(1, early);
	ASSERT_TRUE(n.Drain());
	EXPECT_TRUE(Done(n.a()));
	// B learns that A holds its tag from A's first packet, an ACK.
	EXPECT_EQ(mr_hello_check(&n.b(), n.a().peer), MR_HELLO_PASS);
	n.ExpectPaired();
	EXPECT_LT(n.now, kStart + kFirst); // before any retry was due
}

// An answer that holds the receiver's tag is never answered: from any
// pair of states, one stray HELLO sets off a bounded exchange, even when
// the gap never holds an answer back.
TEST(Hello, NoPingPong)
{
	// A's state: fresh, started, holding B's tag, done, or bound to
	// another peer.
	auto set = [](mr_hello *h, uint64_t peer, int state) {
		if (state >= 1)
			mr_hello_start(h, kStart);
		if (state == 2 || state == 3)
			h->peer = peer;
		if (state == 3)
			h->known = true;
		if (state == 4)
			h->peer = 0xdead;
	};
	for (int sa = 0; sa < 5; sa++)
		for (int sb = 0; sb < 5; sb++)
			for (uint64_t tag : { (uint64_t)0, kTagB, (uint64_t)7 })
				for (uint32_t flags = 0; flags < 4; flags++) {
					if ((flags & MR_HELLO_KNOWN) && !tag)
						continue;
					Net n;
					unsigned steps = 0;

					set(&n.a(), kTagB, sa);
					set(&n.b(), kTagA, sb);
					n.Send(1, Hello(tag, kTagA, flags));
					while (!n.wire.empty() && steps < 50) {
						n.now += kGap; // never refused
						n.Step();
						steps++;
					}
					// The stray HELLO, an answer that
					// proves A's tag, one that proves B's.
					EXPECT_LE(n.sent, 3u)
						<< sa << sb << " " << tag << " "
						<< flags;
				}
	// Directly: a proven KNOWN|REPLY HELLO gets no answer in any state.
	for (int s = 0; s < 4; s++) {
		mr_hello h;
		mr_pkt p = Hello(kTagA, kTagB, MR_HELLO_KNOWN | MR_HELLO_REPLY),
		       reply;

		mr_hello_init(&h, kTagA);
		set(&h, kTagB, s);
		EXPECT_FALSE(mr_hello_rcv(&h, &p, kStart, &reply)) << s;
		EXPECT_TRUE(Done(h)) << s;
	}
}

TEST(Hello, StopAndStart)
{
	Net n;
	mr_pkt out;

	n.lost = [](unsigned) { return true; };
	mr_hello_start(&n.a(), n.now);
	uint64_t first = n.a().deadline;

	mr_hello_start(&n.a(), n.now + 5); // already started: no change
	EXPECT_EQ(n.a().deadline, first);
	EXPECT_FALSE(n.Run(kStart + 10 * kFirst));
	EXPECT_GT(n.a().tries, 2u);

	mr_hello_stop(&n.a());
	EXPECT_EQ(n.a().tries, 0u);
	for (uint64_t t : { n.now, n.now + kMax, n.now + 1000 * kMax })
		EXPECT_FALSE(mr_hello_due(&n.a(), t, kFirst, kMax, &out));

	// Started again, it begins at once and with the first wait.
	n.now += 1000 * kMax;
	mr_hello_start(&n.a(), n.now);
	ASSERT_TRUE(mr_hello_due(&n.a(), n.now, kFirst, kMax, &out));
	EXPECT_EQ(n.a().deadline, n.now + kFirst);
	EXPECT_EQ(n.a().tries, 1u);

	// A stopped end still answers, and the handshake ends from B's side.
	Net m;

	mr_hello_start(&m.a(), m.now);
	mr_hello_stop(&m.a());
	mr_hello_start(&m.b(), m.now);
	ASSERT_TRUE(m.Run(kStart + kMax));
	m.ExpectPaired();
	EXPECT_TRUE(m.due_at[0].empty());

	// Once done, start sends nothing.
	mr_hello_stop(&m.a());
	mr_hello_start(&m.a(), m.now);
	EXPECT_FALSE(mr_hello_due(&m.a(), m.now, kFirst, kMax, &out));
}

// The proven answer carries the receiver's first hint, and when it answers
// our only HELLO, the round trip: congestion control has both before the
// first data packet. After a retry the answer times no one HELLO (Karn).
TEST(Hello, TheAnswerCarriesTheFirstHintAndTheRoundTrip)
{
	for (bool retried : { false, true }) {
		mr_hello a, b;
		mr_pkt out, reply;
		uint64_t t = kStart;

		mr_hello_init(&a, kTagA);
		mr_hello_init(&b, kTagB);
		mr_hello_start(&a, t);
		ASSERT_TRUE(mr_hello_due(&a, t, kFirst, kMax, &out));
		if (retried) {
			t += kFirst;
			ASSERT_TRUE(mr_hello_due(&a, t, kFirst, kMax, &out));
		}
		ASSERT_TRUE(mr_hello_rcv(&b, &out, t + 40, &reply));
		reply.hello.rate_hint = 60000;
		EXPECT_FALSE(mr_hello_ready(&a));
		mr_hello_rcv(&a, &reply, t + 100, &out);
		ASSERT_TRUE(mr_hello_ready(&a));
		EXPECT_EQ(a.hint_kbps, 60000u);
		EXPECT_EQ(a.rtt_ns, retried ? 0u : 100u) << retried;
		// Only the first proven HELLO's hint: later ones are ACKs' news.
		reply.hello.rate_hint = 1;
		mr_hello_rcv(&a, &reply, t + 500, &out);
		EXPECT_EQ(a.hint_kbps, 60000u);
		EXPECT_EQ(a.rtt_ns, retried ? 0u : 100u);
	}
}

// An unproven HELLO's hint (tag 0: anyone may have sent it) is not taken.
TEST(Hello, AnUnprovenHintIsNotTaken)
{
	mr_hello a;
	mr_pkt p = Hello(0, kTagB, 0), reply;

	mr_hello_init(&a, kTagA);
	p.hello.rate_hint = 5;
	mr_hello_rcv(&a, &p, kStart, &reply);
	EXPECT_EQ(a.hint_kbps, 0u);
	EXPECT_FALSE(mr_hello_ready(&a));
}
