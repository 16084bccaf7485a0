// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: the connection tag handshake of proto/hello.c as the kernel
 * builds it, every HELLO through the codec: two ends settle, a lost HELLO
 * is sent again, and an off-path sender's HELLOs change nothing. The host
 * suite (proto/tests/hello_test.cc) covers the same code in more depth.
 */
#include <kunit/test.h>

#include "../proto/hello.h"

#define MS 1000000ull

/* A HELLO through encode and decode, as the peer would see it. */
static void hello_wire(struct kunit *test, const struct mr_pkt *out,
		       struct mr_pkt *in)
{
	u8 buf[MR_MAX_HDR_LEN];
	int n = mr_wire_encode(out, buf, sizeof(buf));

	KUNIT_ASSERT_GT(test, n, 0);
	KUNIT_ASSERT_EQ(test, mr_wire_decode(buf, n, in), 0);
}

/* Deliver @pkt to @to, then its answers back and forth; returns packets. */
static int hello_exchange(struct kunit *test, struct mr_hello *to,
			  struct mr_hello *from, const struct mr_pkt *pkt,
			  u64 now)
{
	struct mr_pkt in, reply;
	struct mr_hello *t;
	int n = 0;

	hello_wire(test, pkt, &in);
	while (mr_hello_rcv(to, &in, now, &reply) && n < 8) {
		hello_wire(test, &reply, &in);
		t = to;
		to = from;
		from = t;
		n++;
	}
	return n;
}

static void hello_settles(struct kunit *test)
{
	struct mr_hello a, b;
	struct mr_pkt out;

	mr_hello_init(&a, 0x1111);
	mr_hello_init(&b, 0x2222);
	KUNIT_EXPECT_FALSE(test, mr_hello_ready(&a));
	KUNIT_EXPECT_EQ(test, mr_hello_check(&a, 0x1111), MR_HELLO_EARLY);
	/* Times are above 0, as ktime_get_ns() is. */
	mr_hello_init(&a, 0x1111);
	mr_hello_start(&a, MS);
	KUNIT_ASSERT_TRUE(test, mr_hello_due(&a, MS, MS, 8 * MS, &out));
	KUNIT_EXPECT_EQ(test, out.base.tag, 0ull);
	/* B answers (no proof), A answers with proof, B needs nothing. */
	KUNIT_EXPECT_EQ(test, hello_exchange(test, &b, &a, &out, MS), 2);
	KUNIT_EXPECT_EQ(test, a.peer, 0x2222ull);
	KUNIT_EXPECT_EQ(test, b.peer, 0x1111ull);
	KUNIT_EXPECT_TRUE(test, b.known);
	KUNIT_EXPECT_EQ(test, mr_hello_check(&b, 0x2222), MR_HELLO_PASS);
	KUNIT_EXPECT_EQ(test, mr_hello_check(&b, 0x2223), MR_HELLO_BAD_TAG);
	/* A's first packet from B (an ACK) ends A's HELLOs. */
	KUNIT_EXPECT_FALSE(test, a.known);
	KUNIT_EXPECT_EQ(test, mr_hello_check(&a, 0x1111), MR_HELLO_PASS);
	KUNIT_EXPECT_TRUE(test, a.known);
	KUNIT_EXPECT_FALSE(test, mr_hello_due(&a, 100 * MS, MS, 8 * MS, &out));
}

/* Lost HELLOs go again, after 1, 2, 4, 8, 8 ms. */
static void hello_retries(struct kunit *test)
{
	static const u64 waits[] = { 1, 2, 4, 8, 8 };
	struct mr_hello a;
	struct mr_pkt out;
	u64 now = MS;
	unsigned int i;

	mr_hello_init(&a, 0x1111);
	mr_hello_start(&a, now);
	for (i = 0; i < ARRAY_SIZE(waits); i++) {
		KUNIT_ASSERT_TRUE(test, mr_hello_due(&a, now, MS, 8 * MS, &out));
		KUNIT_EXPECT_FALSE(test, mr_hello_due(&a, now + waits[i] * MS - 1,
						      MS, 8 * MS, &out));
		now += waits[i] * MS;
	}
	KUNIT_EXPECT_EQ(test, a.tries, 5u);
	mr_hello_stop(&a);
	KUNIT_EXPECT_FALSE(test, mr_hello_due(&a, now + 100 * MS, MS, 8 * MS,
					      &out));
}

/* HELLOs without our tag teach nothing, and draw answers at a bounded rate. */
static void hello_off_path(struct kunit *test)
{
	struct mr_hello b;
	struct mr_pkt forged = { 0 }, in, reply;
	unsigned int i, answers = 0;

	mr_hello_init(&b, 0x2222);
	forged.base.opcode = MR_OP_HELLO;
	forged.base.qpn = 17;
	for (i = 0; i < 100; i++) {
		forged.base.tag = i & 1 ? 0 : 0x2221 + 2 * i;
		forged.hello.src_tag = 0xbad0 + i;
		forged.hello.flags = i & 1 ? 0 : MR_HELLO_KNOWN;
		hello_wire(test, &forged, &in);
		/* 100 HELLOs in 1 ms: one answer per 100 us. */
		answers += mr_hello_rcv(&b, &in, 1 + i * 10000ull, &reply);
	}
	KUNIT_EXPECT_EQ(test, b.peer, 0ull);
	KUNIT_EXPECT_FALSE(test, b.known);
	KUNIT_EXPECT_EQ(test, answers, 10u);
	KUNIT_EXPECT_EQ(test, b.n_refused, 90u);
}

static struct kunit_case hello_cases[] = {
	KUNIT_CASE(hello_settles),
	KUNIT_CASE(hello_retries),
	KUNIT_CASE(hello_off_path),
	{}
};

static struct kunit_suite hello_suite = {
	.name = "metaroce_hello",
	.test_cases = hello_cases,
};

kunit_test_suite(hello_suite);
