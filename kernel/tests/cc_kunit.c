// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: the congestion control arithmetic of proto/cc.c and
 * proto/share.c as the kernel builds it: alpha, one decrease per round
 * trip, window bounds, pacing intervals, the receiver's shares and the
 * hint's wire field. The host suites (proto/tests/cc_test.cc,
 * share_test.cc) cover the same code in more depth.
 */
#include <kunit/test.h>

#include "../proto/cc.h"
#include "../proto/share.h"
#include "../proto/wire.h"

#define MS 1000000ull

struct cc_fixture {
	struct mr_cc_params prm;
	struct mr_cc_conn c;
	struct mr_cc_path p;
	u32 ecn;		/* the receiver's CE count */
	u64 sent;		/* the connection's send order */
};

static struct cc_fixture *cc_new(struct kunit *test, u32 mtu, bool delay)
{
	struct cc_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	mr_cc_params_default(&f->prm);
	f->prm.delay = delay;
	KUNIT_ASSERT_EQ(test, mr_cc_params_check(&f->prm), 0);
	mr_cc_conn_init(&f->c, &f->prm, mtu);
	mr_cc_path_init(&f->p, &f->c, &f->prm);
	return f;
}

/* An ACK of @acked packets, the newest of order @upto, @marks marked. */
static enum mr_cc_verdict cc_ack(struct cc_fixture *f, u32 acked, u64 upto,
				 u32 marks, u64 rtt, u32 hint)
{
	struct mr_cc_ack_info a = {
		.acked = acked,
		.acked_order = acked ? upto : 0,
		.rtt_ns = rtt,
		.srtt_ns = rtt,
		.hint_kbps = hint,
	};

	f->ecn += marks;
	a.ecn_count = f->ecn;
	a.sent_order = f->sent;
	return mr_cc_ack(&f->prm, &f->c, &f->p, &a);
}

/* One round trip: @w packets out, back in ACKs of 4 with @marks each. */
static void cc_round(struct cc_fixture *f, u32 w, u32 marks)
{
	u64 first = f->sent + 1;
	u32 i;

	f->sent += w;
	for (i = 0; i < w; i += 4)
		cc_ack(f, min(4u, w - i), first + i + min(4u, w - i) - 1,
		       min(marks, min(4u, w - i)), 0, 0);
}

/* alpha moves by g = 1/16 of the marked fraction per round trip. */
static void cc_alpha_per_round(struct kunit *test)
{
	struct cc_fixture *f = cc_new(test, 4096, false);
	u32 a;
	int r;

	/* Every packet marked: alpha, which starts at 1, stays at 1. */
	for (r = 0; r < 4; r++)
		cc_round(f, 16, 4);
	KUNIT_EXPECT_EQ(test, f->p.w.alpha, MR_CC_ALPHA_ONE);
	/* No marks: it decays by 15/16 per round, 0.47 after 12. */
	for (r = 0; r < 12; r++)
		cc_round(f, 16, 0);
	a = f->p.w.alpha;
	KUNIT_EXPECT_GT(test, a, MR_CC_ALPHA_ONE * 44 / 100);
	KUNIT_EXPECT_LT(test, a, MR_CC_ALPHA_ONE * 52 / 100);
}

/* The first mark halves the window once; the rest of the round holds. */
static void cc_decrease_once_per_round(struct kunit *test)
{
	struct cc_fixture *f = cc_new(test, 4096, false);
	u64 first = f->sent + 1;
	u32 i;

	f->sent += 16;
	KUNIT_EXPECT_EQ(test, cc_ack(f, 4, first + 3, 1, 0, 0),
			MR_CC_DECREASE_ECN);
	KUNIT_EXPECT_EQ(test, f->p.w.cwnd, 8u * MR_CC_ONE);
	for (i = 4; i < 16; i += 4)
		KUNIT_EXPECT_EQ(test, cc_ack(f, 4, first + i + 3, 4, 0, 0),
				MR_CC_HOLD);
	KUNIT_EXPECT_EQ(test, f->p.w.cwnd, 8u * MR_CC_ONE);
	/* A packet sent after the decrease, marked: the next decrease. */
	first = f->sent + 1;
	f->sent += 4;
	KUNIT_EXPECT_EQ(test, cc_ack(f, 4, first + 3, 1, 0, 0),
			MR_CC_DECREASE_ECN);
	KUNIT_EXPECT_LT(test, f->p.w.cwnd, 8u * MR_CC_ONE);
}

/* Windows stay within 1/64 packet and their maximum. */
static void cc_window_bounds(struct kunit *test)
{
	struct cc_fixture *f = cc_new(test, 4096, false);
	int r;

	for (r = 0; r < 60; r++)
		cc_round(f, 4, 4);
	KUNIT_EXPECT_EQ(test, f->p.w.cwnd, f->prm.min_window);
	KUNIT_EXPECT_EQ(test, mr_cc_path_window(&f->prm, &f->p), 1u);
	KUNIT_EXPECT_EQ(test, mr_cc_conn_window(&f->prm, &f->c), 1u);
	for (r = 0; r < 400; r++)
		cc_round(f, mr_cc_path_window(&f->prm, &f->p), 0);
	KUNIT_EXPECT_EQ(test, mr_cc_path_window(&f->prm, &f->p),
			f->prm.max_path_window);
	/* A timeout halves the path and holds it. */
	mr_cc_timeout(&f->prm, &f->c, &f->p, f->sent);
	KUNIT_EXPECT_EQ(test, f->p.w.cwnd,
			f->prm.max_path_window * MR_CC_ONE / 2);
}

/* A hint of 8 Mbit/s paces packets of 1000 bytes 1 ms apart. */
static void cc_pacing_interval(struct kunit *test)
{
	struct cc_fixture *f = cc_new(test, 1000, true);
	u64 t = 10 * MS, start;
	int i;

	f->sent = 4;
	cc_ack(f, 4, 4, 0, MS, 8000);
	KUNIT_EXPECT_EQ(test, f->c.hint_kbps, 8000u);
	start = t;
	for (i = 0; i < 100; i++) {
		t += mr_cc_pace_delay(&f->prm, &f->c, t);
		mr_cc_pace_sent(&f->prm, &f->c, 1000, t);
	}
	t += mr_cc_pace_delay(&f->prm, &f->c, t);
	KUNIT_EXPECT_GE(test, t - start, 99 * MS);
	KUNIT_EXPECT_LE(test, t - start, 101 * MS);
	KUNIT_EXPECT_EQ(test, f->c.hint_limited, 100u);
}

/* Eight senders that all want more share the capacity at once. */
static void cc_receiver_shares(struct kunit *test)
{
	struct mr_share_flow *fl = kunit_kcalloc(test, 8, sizeof(*fl),
						 GFP_KERNEL);
	struct mr_cc_params prm;
	u32 i, fresh;

	KUNIT_ASSERT_NOT_NULL(test, fl);
	mr_cc_params_default(&prm);
	for (i = 0; i < 8; i++)
		fl[i].bytes = 1000000;
	fresh = mr_share_split(&prm, fl, 8, 100000, MS, NULL);
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ(test, fl[i].hint_kbps, 100000u / 8);
	KUNIT_EXPECT_EQ(test, fresh, 100000u / 9);
	/*
	 * One uses a tenth of its share for two intervals (demand looks back
	 * one): it gets what it uses, + 25 %, and the others the rest.
	 */
	for (i = 0; i < 8; i++)
		fl[i].bytes = i ? 1000000 : 156;
	mr_share_split(&prm, fl, 8, 100000, MS, NULL);
	for (i = 0; i < 8; i++)
		fl[i].bytes = i ? 1000000 : 156;
	mr_share_split(&prm, fl, 8, 100000, MS, NULL);
	KUNIT_EXPECT_LT(test, fl[0].hint_kbps, 100000u / 8);
	KUNIT_EXPECT_GT(test, fl[1].hint_kbps, 100000u / 8);
	KUNIT_EXPECT_EQ(test, fl[1].hint_kbps, fl[7].hint_kbps);
}

/* The hint travels in kbit/s in the ACK, 0 meaning none. */
static void cc_hint_on_the_wire(struct kunit *test)
{
	struct mr_pkt in = {}, out = {};
	u8 buf[MR_MAX_HDR_LEN];
	int n;

	KUNIT_EXPECT_EQ(test, mr_cc_hint_from_bps(0), 0u);
	KUNIT_EXPECT_EQ(test, mr_cc_hint_from_bps(1), 1u);
	KUNIT_EXPECT_EQ(test, mr_cc_hint_from_bps(100000000ull), 100000u);
	KUNIT_EXPECT_EQ(test, mr_cc_hint_to_bps(100000), 100000000ull);
	in.base.opcode = MR_OP_ACK;
	in.base.psn = 5;
	in.base.tag = 0x5eed;	/* a connection's packets name their tag */
	in.ack.cum_psn = 6;
	in.ack.rate_hint = mr_cc_hint_from_bps(12500000ull);
	n = mr_wire_encode(&in, buf, sizeof(buf));
	KUNIT_ASSERT_GT(test, n, 0);
	KUNIT_ASSERT_EQ(test, mr_wire_decode(buf, n, &out), 0);
	KUNIT_EXPECT_EQ(test, out.ack.rate_hint, 12500u);
}

static struct kunit_case cc_cases[] = {
	KUNIT_CASE(cc_alpha_per_round),
	KUNIT_CASE(cc_decrease_once_per_round),
	KUNIT_CASE(cc_window_bounds),
	KUNIT_CASE(cc_pacing_interval),
	KUNIT_CASE(cc_receiver_shares),
	KUNIT_CASE(cc_hint_on_the_wire),
	{}
};

static struct kunit_suite cc_suite = {
	.name = "metaroce_cc",
	.test_cases = cc_cases,
};

kunit_test_suite(cc_suite);
