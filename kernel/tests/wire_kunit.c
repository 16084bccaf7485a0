// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* KUnit: the MetaRoCE wire format of proto/wire.c. */
#include <kunit/test.h>
#include <linux/string.h>

#include "../proto/wire.h"

static const u8 wire_ops[] = {
	MR_OP_SEND, MR_OP_SEND_IMM, MR_OP_SEND_INV, MR_OP_WRITE,
	MR_OP_WRITE_IMM, MR_OP_READ_REQ, MR_OP_CMP_SWAP, MR_OP_FETCH_ADD,
	MR_OP_READ_RESP, MR_OP_ATOMIC_RESP, MR_OP_ACK, MR_OP_NAK,
	MR_OP_UD_SEND, MR_OP_UD_SEND_IMM, MR_OP_HELLO,
};

/* A valid packet of each opcode; data ones carry 2000 of 3000 bytes. */
static void wire_sample(struct mr_pkt *p, u8 op)
{
	memset(p, 0, sizeof(*p));
	p->base.opcode = op;
	p->base.path = 5;
	p->base.epoch = 0x1234;
	p->base.qpn = 0xabcdef;
	p->base.psn = 0xfffffff0;
	p->base.tag = 0x0123456789abcdefull;
	switch (op) {
	case MR_OP_SEND:
	case MR_OP_SEND_IMM:
	case MR_OP_SEND_INV:
		p->base.flags = MR_FLAG_SOLICITED;
		p->send.msn = 7;
		p->send.rsn = 3;
		p->send.length = 3000;
		p->send.offset = 1000;
		p->send.imm = op == MR_OP_SEND_IMM ? 0x11223344 : 0;
		p->send.inv_rkey = op == MR_OP_SEND_INV ? 0x55667788 : 0;
		p->payload_len = 2000;
		break;
	case MR_OP_WRITE:
	case MR_OP_WRITE_IMM:
		p->write.msn = 8;
		p->write.rkey = 0x1000;
		p->write.va = 0xffff888000000000ull;
		p->write.length = 3000;
		p->write.offset = 1000;
		p->write.rsn = op == MR_OP_WRITE_IMM ? 4 : 0;
		p->write.imm = op == MR_OP_WRITE_IMM ? 0x99 : 0;
		p->payload_len = 2000;
		break;
	case MR_OP_READ_REQ:
		p->read_req.msn = 9;
		p->read_req.rkey = 0x2000;
		p->read_req.va = 0x7f0000000000ull;
		p->read_req.length = 1 << 20;
		break;
	case MR_OP_CMP_SWAP:
	case MR_OP_FETCH_ADD:
		p->atomic.msn = 10;
		p->atomic.rkey = 0x3000;
		p->atomic.va = 0x1008;
		p->atomic.swap_add = 0x0102030405060708ull;
		p->atomic.compare = op == MR_OP_CMP_SWAP ? 42 : 0;
		break;
	case MR_OP_READ_RESP:
		p->base.flags = MR_FLAG_ACK_REQ;
		p->read_resp.msn = 9;
		p->read_resp.length = 3000;
		p->read_resp.offset = 1000;
		p->payload_len = 2000;
		break;
	case MR_OP_ATOMIC_RESP:
		p->atomic_resp.msn = 10;
		p->atomic_resp.orig = 0xfedcba9876543210ull;
		break;
	case MR_OP_ACK:
		p->ack.cum_psn = 0xfffffffe;
		p->ack.sack[0] = 0x6;	/* PSNs 0xffffffff and 0 */
		p->ack.sack[3] = 1ull << 63;
		p->base.psn = 0;
		p->ack.msn_done = 11;
		p->ack.ecn_count = 2;
		break;
	case MR_OP_NAK:
		p->nak.msn = 12;
		p->nak.code = MR_NAK_RNR;
		p->nak.rnr_delay = 100;
		break;
	case MR_OP_UD_SEND:
	case MR_OP_UD_SEND_IMM:
		p->base.flags = MR_FLAG_SOLICITED;
		p->base.path = 0;
		p->base.epoch = 0;
		p->ud.src_qpn = 0x123456;
		p->ud.qkey = 0x11111111;
		p->ud.imm = op == MR_OP_UD_SEND_IMM ? 0x2222 : 0;
		p->base.tag = 0;
		p->payload_len = 2000;
		break;
	case MR_OP_HELLO:
		p->base.psn = 0;
		p->base.epoch = 0;
		p->hello.src_tag = 0xfedcba9876543210ull;
		p->hello.flags = MR_HELLO_KNOWN | MR_HELLO_REPLY;
		break;
	}
}

/* Shortens a data packet to its last 8 bytes; others keep no payload. */
static void wire_shrink(struct mr_pkt *p)
{
	if (!p->payload_len)
		return;
	p->payload_len = 8;
	if (p->base.opcode == MR_OP_UD_SEND ||
	    p->base.opcode == MR_OP_UD_SEND_IMM)
		return;
	if (p->base.opcode == MR_OP_WRITE || p->base.opcode == MR_OP_WRITE_IMM)
		p->write.offset = p->write.length - 8;
	else if (p->base.opcode == MR_OP_READ_RESP)
		p->read_resp.offset = p->read_resp.length - 8;
	else
		p->send.offset = p->send.length - 8;
}

/* Field equality of what the opcode carries. */
static bool wire_equal(const struct mr_pkt *a, const struct mr_pkt *b)
{
	if (a->base.opcode != b->base.opcode ||
	    a->base.flags != b->base.flags || a->base.path != b->base.path ||
	    a->base.epoch != b->base.epoch || a->base.qpn != b->base.qpn ||
	    a->base.psn != b->base.psn || a->base.tag != b->base.tag ||
	    a->payload_len != b->payload_len)
		return false;
	switch (a->base.opcode) {
	case MR_OP_SEND:
	case MR_OP_SEND_IMM:
	case MR_OP_SEND_INV:
		return a->send.msn == b->send.msn &&
		       a->send.rsn == b->send.rsn &&
		       a->send.length == b->send.length &&
		       a->send.offset == b->send.offset &&
		       a->send.imm == b->send.imm &&
		       a->send.inv_rkey == b->send.inv_rkey;
	case MR_OP_WRITE:
	case MR_OP_WRITE_IMM:
		return a->write.msn == b->write.msn &&
		       a->write.rkey == b->write.rkey &&
		       a->write.va == b->write.va &&
		       a->write.length == b->write.length &&
		       a->write.offset == b->write.offset &&
		       a->write.rsn == b->write.rsn &&
		       a->write.imm == b->write.imm;
	case MR_OP_READ_REQ:
		return a->read_req.msn == b->read_req.msn &&
		       a->read_req.rkey == b->read_req.rkey &&
		       a->read_req.va == b->read_req.va &&
		       a->read_req.length == b->read_req.length;
	case MR_OP_CMP_SWAP:
	case MR_OP_FETCH_ADD:
		return a->atomic.msn == b->atomic.msn &&
		       a->atomic.rkey == b->atomic.rkey &&
		       a->atomic.va == b->atomic.va &&
		       a->atomic.swap_add == b->atomic.swap_add &&
		       a->atomic.compare == b->atomic.compare;
	case MR_OP_READ_RESP:
		return a->read_resp.msn == b->read_resp.msn &&
		       a->read_resp.length == b->read_resp.length &&
		       a->read_resp.offset == b->read_resp.offset;
	case MR_OP_ATOMIC_RESP:
		return a->atomic_resp.msn == b->atomic_resp.msn &&
		       a->atomic_resp.orig == b->atomic_resp.orig;
	case MR_OP_ACK:
		return a->ack.cum_psn == b->ack.cum_psn &&
		       !memcmp(a->ack.sack, b->ack.sack, sizeof(a->ack.sack)) &&
		       a->ack.msn_done == b->ack.msn_done &&
		       a->ack.ecn_count == b->ack.ecn_count &&
		       a->ack.rate_hint == b->ack.rate_hint;
	case MR_OP_NAK:
		return a->nak.msn == b->nak.msn && a->nak.code == b->nak.code &&
		       a->nak.rnr_delay == b->nak.rnr_delay;
	case MR_OP_UD_SEND:
	case MR_OP_UD_SEND_IMM:
		return a->ud.src_qpn == b->ud.src_qpn &&
		       a->ud.qkey == b->ud.qkey && a->ud.imm == b->ud.imm;
	case MR_OP_HELLO:
		return a->hello.src_tag == b->hello.src_tag &&
		       a->hello.flags == b->hello.flags;
	}
	return false;
}

/* Encodes @p into a kunit buffer of exactly headers + payload bytes. */
static u8 *wire_encode(struct kunit *test, const struct mr_pkt *p, u32 *len)
{
	u32 hdr = mr_wire_hdr_len(p->base.opcode);
	u8 *buf;

	*len = hdr + p->payload_len;
	buf = kunit_kzalloc(test, *len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	KUNIT_ASSERT_EQ(test, mr_wire_encode(p, buf, *len), (int)hdr);
	return buf;
}

static void wire_header_lengths(struct kunit *test)
{
	unsigned int op;

	KUNIT_EXPECT_EQ(test, mr_wire_hdr_len(MR_OP_SEND), 40u);
	KUNIT_EXPECT_EQ(test, mr_wire_hdr_len(MR_OP_WRITE_IMM), 56u);
	KUNIT_EXPECT_EQ(test, mr_wire_hdr_len(MR_OP_CMP_SWAP), 56u);
	KUNIT_EXPECT_EQ(test, mr_wire_hdr_len(MR_OP_READ_RESP), 36u);
	KUNIT_EXPECT_EQ(test, mr_wire_hdr_len(MR_OP_ACK), 72u);
	KUNIT_EXPECT_EQ(test, mr_wire_hdr_len(MR_OP_NAK), 32u);
	KUNIT_EXPECT_EQ(test, mr_wire_hdr_len(MR_OP_HELLO), 40u);
	for (op = 0; op < 256; op++)
		KUNIT_EXPECT_LE(test, mr_wire_hdr_len(op),
				MR_TRANSPORT_HDR_RESERVE);
}

static void wire_golden_write_imm(struct kunit *test)
{
	static const u8 want[56] = {
		0x02, 0x05, 0x03, 0x07, 0x00, 0x12, 0x34, 0x56,
		0x89, 0xab, 0xcd, 0xef, 0x01, 0x02, 0x00, 0x00,
		0xc0, 0xff, 0xee, 0x00, 0x12, 0x34, 0x56, 0x78,
		0x01, 0x02, 0x03, 0x04, 0xa1, 0xa2, 0xa3, 0xa4,
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
		0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x08, 0x00,
		0x0b, 0xad, 0xf0, 0x0d, 0xde, 0xad, 0xbe, 0xef,
	};
	struct mr_pkt p = { 0 };
	u8 buf[56];

	p.base.opcode = MR_OP_WRITE_IMM;
	p.base.flags = MR_FLAG_ACK_REQ | MR_FLAG_SOLICITED;
	p.base.path = 7;
	p.base.qpn = 0x123456;
	p.base.psn = 0x89abcdef;
	p.base.epoch = 0x0102;
	p.base.tag = 0xc0ffee0012345678ull;
	p.write.msn = 0x01020304;
	p.write.rkey = 0xa1a2a3a4;
	p.write.va = 0x1122334455667788ull;
	p.write.length = 0x1000;
	p.write.offset = 0x800;
	p.write.rsn = 0x0badf00d;
	p.write.imm = 0xdeadbeef;
	p.payload_len = 0x800;
	KUNIT_ASSERT_EQ(test, mr_wire_encode(&p, buf, sizeof(buf)), 56);
	KUNIT_EXPECT_EQ(test, memcmp(buf, want, sizeof(want)), 0);
	/* A connection's packet always names its receiver's tag. */
	p.base.tag = 0;
	KUNIT_EXPECT_EQ(test, mr_wire_encode(&p, buf, sizeof(buf)),
			-MR_EFIELD);
	memset(buf + 16, 0, 8);
	KUNIT_EXPECT_EQ(test, mr_wire_decode(buf, sizeof(buf), &p),
			-MR_EFIELD);
}

/* protocol.rst's HELLO layout, and the values a HELLO may not carry. */
static void wire_hello(struct kunit *test)
{
	static const u8 want[40] = {
		0x02, 0x22, 0x00, 0x09, 0x00, 0x12, 0x34, 0x56,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
		0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0xea, 0x60,
	};
	struct mr_pkt p = { 0 }, q;
	u8 buf[40];

	p.base.opcode = MR_OP_HELLO;
	p.base.path = 9;
	p.base.qpn = 0x123456;
	p.hello.src_tag = 0x1122334455667788ull;
	p.hello.flags = MR_HELLO_REPLY;
	p.hello.rate_hint = 60000;	/* 60 Mbit/s */
	KUNIT_ASSERT_EQ(test, mr_wire_encode(&p, buf, sizeof(buf)), 40);
	KUNIT_EXPECT_EQ(test, memcmp(buf, want, sizeof(want)), 0);
	KUNIT_EXPECT_EQ(test, mr_wire_decode(buf, sizeof(buf), &q), 0);
	KUNIT_EXPECT_TRUE(test, wire_equal(&p, &q));

	/* KNOWN says the sender holds our tag: it must name one. */
	p.hello.flags = MR_HELLO_KNOWN;
	KUNIT_EXPECT_EQ(test, mr_wire_encode(&p, buf, sizeof(buf)),
			-MR_EFIELD);
	p.base.tag = 1;
	KUNIT_EXPECT_EQ(test, mr_wire_encode(&p, buf, sizeof(buf)), 40);
	p.hello.flags = 4;
	KUNIT_EXPECT_EQ(test, mr_wire_encode(&p, buf, sizeof(buf)),
			-MR_EFIELD);
	p.hello.flags = 0;
	p.hello.src_tag = 0;
	KUNIT_EXPECT_EQ(test, mr_wire_encode(&p, buf, sizeof(buf)),
			-MR_EFIELD);
	p.hello.src_tag = 1;
	p.base.psn = 1;
	KUNIT_EXPECT_EQ(test, mr_wire_encode(&p, buf, sizeof(buf)),
			-MR_EFIELD);
	p.base.psn = 0;
	p.base.epoch = 1;
	KUNIT_EXPECT_EQ(test, mr_wire_encode(&p, buf, sizeof(buf)),
			-MR_EFIELD);
	p.base.epoch = 0;
	p.base.flags = MR_FLAG_ACK_REQ;
	KUNIT_EXPECT_EQ(test, mr_wire_encode(&p, buf, sizeof(buf)),
			-MR_EFLAGS);
}

/* protocol.rst's datagram layout, and what a datagram may not carry. */
static void wire_ud(struct kunit *test)
{
	static const u8 want[36] = {
		0x02, 0x0a, 0x02, 0x00, 0x00, 0x12, 0x34, 0x56,
		0x89, 0xab, 0xcd, 0xef, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0xab, 0xcd, 0xef, 0x80, 0x01, 0x00, 0x00,
		0xde, 0xad, 0xbe, 0xef,
	};
	struct mr_pkt p = { 0 }, q;
	u8 *buf;

	p.base.opcode = MR_OP_UD_SEND_IMM;
	p.base.flags = MR_FLAG_SOLICITED;
	p.base.qpn = 0x123456;
	p.base.psn = 0x89abcdef;
	p.ud.src_qpn = 0xabcdef;
	p.ud.qkey = 0x80010000;
	p.ud.imm = 0xdeadbeef;
	buf = kunit_kzalloc(test, MR_BASE_HDR_LEN + MR_UD_HDR_LEN +
			    MR_WIRE_MAX_PAYLOAD + 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	KUNIT_ASSERT_EQ(test, mr_wire_encode(&p, buf, sizeof(want)), 36);
	KUNIT_EXPECT_EQ(test, memcmp(buf, want, sizeof(want)), 0);
	KUNIT_EXPECT_EQ(test, mr_wire_decode(buf, sizeof(want), &q), 0);
	KUNIT_EXPECT_TRUE(test, wire_equal(&p, &q));

	buf[3] = 1;	/* a path */
	KUNIT_EXPECT_EQ(test, mr_wire_decode(buf, 36, &q), -MR_EFIELD);
	buf[3] = 0;
	buf[23] = 1;	/* a connection tag */
	KUNIT_EXPECT_EQ(test, mr_wire_decode(buf, 36, &q), -MR_EFIELD);
	buf[23] = 0;
	buf[24] = 1;	/* a source QPN above 24 bits */
	KUNIT_EXPECT_EQ(test, mr_wire_decode(buf, 36, &q), -MR_EFIELD);
	buf[24] = 0;
	buf[1] = MR_OP_UD_SEND;	/* one byte more than the largest MTU */
	KUNIT_EXPECT_EQ(test, mr_wire_decode(buf, MR_BASE_HDR_LEN +
					     MR_UD_HDR_LEN +
					     MR_WIRE_MAX_PAYLOAD + 1, &q),
			-MR_ELENGTH);
	KUNIT_EXPECT_EQ(test, mr_wire_decode(buf, MR_BASE_HDR_LEN +
					     MR_UD_HDR_LEN +
					     MR_WIRE_MAX_PAYLOAD, &q), 0);
}

static void wire_round_trip(struct kunit *test)
{
	struct mr_pkt p, q;
	unsigned int i;
	u8 *buf;
	u32 len;

	for (i = 0; i < ARRAY_SIZE(wire_ops); i++) {
		wire_sample(&p, wire_ops[i]);
		buf = wire_encode(test, &p, &len);
		KUNIT_ASSERT_EQ(test, mr_wire_decode(buf, len, &q), 0);
		KUNIT_EXPECT_EQ(test, q.hdr_len, mr_wire_hdr_len(wire_ops[i]));
		KUNIT_EXPECT_TRUE(test, wire_equal(&p, &q));
	}
}

/* Every prefix shorter than the headers, in an exact-size buffer. */
static void wire_truncated(struct kunit *test)
{
	struct mr_pkt p, q;
	unsigned int i;
	u32 len, cut;
	u8 *buf, *part;

	for (i = 0; i < ARRAY_SIZE(wire_ops); i++) {
		wire_sample(&p, wire_ops[i]);
		buf = wire_encode(test, &p, &len);
		for (cut = 0; cut < mr_wire_hdr_len(wire_ops[i]); cut++) {
			part = kunit_kmalloc(test, cut ? cut : 1, GFP_KERNEL);
			KUNIT_ASSERT_NOT_ERR_OR_NULL(test, part);
			memcpy(part, buf, cut);
			KUNIT_EXPECT_EQ(test, mr_wire_decode(part, cut, &q),
					-MR_ETRUNC);
			kunit_kfree(test, part);
		}
	}
}

static void wire_bad_base(struct kunit *test)
{
	struct mr_pkt p, q;
	unsigned int op, bit;
	u8 *buf;
	u32 len;

	wire_sample(&p, MR_OP_SEND);
	buf = wire_encode(test, &p, &len);
	buf[0] = 1;	/* version 1 had no tags */
	KUNIT_EXPECT_EQ(test, mr_wire_decode(buf, len, &q), -MR_EVERSION);
	buf[0] = MR_WIRE_VERSION;
	for (op = 0; op < 256; op++) {
		buf[1] = op;
		if (!mr_wire_hdr_len(op))
			KUNIT_EXPECT_EQ(test, mr_wire_decode(buf, len, &q),
					-MR_EOPCODE);
	}
	buf[1] = MR_OP_SEND;
	for (bit = 0; bit < 8; bit++) {
		buf[2] = 1 << bit;
		KUNIT_EXPECT_EQ(test, mr_wire_decode(buf, len, &q),
				(1 << bit) & (MR_FLAG_ACK_REQ |
					      MR_FLAG_SOLICITED |
					      MR_FLAG_WINDOW_LIMITED) ?
				0 : -MR_EFLAGS);
	}
	buf[2] = 0;
	buf[3] = MR_WIRE_MAX_PATHS;
	KUNIT_EXPECT_EQ(test, mr_wire_decode(buf, len, &q), -MR_EFIELD);
	buf[3] = 0;
	/* A request's bytes 4 and 14-15: its order and stream. */
	buf[4] = MR_ORDER_NONE;
	buf[15] = 7;
	KUNIT_EXPECT_EQ(test, mr_wire_decode(buf, len, &q), 0);
	KUNIT_EXPECT_EQ(test, q.base.order, MR_ORDER_NONE);
	KUNIT_EXPECT_EQ(test, q.base.stream, 7);
	buf[4] = 0;
	buf[15] = 0;
	KUNIT_EXPECT_EQ(test, mr_wire_decode(buf, len, &q), 0);
	/* A shorter slice is fine; a longer one runs past the message. */
	KUNIT_EXPECT_EQ(test, mr_wire_decode(buf, len - 1, &q), 0);
	p.payload_len++;
	KUNIT_EXPECT_EQ(test, mr_wire_encode(&p, buf, len), -MR_ELENGTH);
}

static void wire_ack_and_nak(struct kunit *test)
{
	struct mr_pkt p, q;
	u8 *buf;
	u32 len;

	wire_sample(&p, MR_OP_ACK);
	buf = wire_encode(test, &p, &len);
	/* Not a request: bytes 4 and 14-15 are reserved. */
	buf[4] = 1;
	KUNIT_EXPECT_EQ(test, mr_wire_decode(buf, len, &q), -MR_ERESERVED);
	buf[4] = 0;
	buf[15] = 1;
	KUNIT_EXPECT_EQ(test, mr_wire_decode(buf, len, &q), -MR_ERESERVED);
	buf[15] = 0;
	buf[MR_BASE_HDR_LEN + 11] |= 1;	/* SACK bit 0: cum itself */
	KUNIT_EXPECT_EQ(test, mr_wire_decode(buf, len, &q), -MR_EFIELD);
	p.base.psn = 1;			/* a PSN the ACK lacks */
	KUNIT_EXPECT_EQ(test, mr_wire_encode(&p, buf, len), -MR_EFIELD);
	p.base.psn = 0xfffffffd;	/* one before cum */
	KUNIT_EXPECT_EQ(test, mr_wire_encode(&p, buf, len), (int)len);
	p.base.flags = MR_FLAG_ACK_REQ;
	KUNIT_EXPECT_EQ(test, mr_wire_encode(&p, buf, len), -MR_EFLAGS);

	wire_sample(&p, MR_OP_NAK);
	buf = wire_encode(test, &p, &len);
	buf[MR_BASE_HDR_LEN + 5] = 1;
	KUNIT_EXPECT_EQ(test, mr_wire_decode(buf, len, &q), -MR_ERESERVED);
	p.nak.code = MR_NAK_REMOTE_ACCESS;
	KUNIT_EXPECT_EQ(test, mr_wire_encode(&p, buf, len), -MR_EFIELD);
	p.nak.rnr_delay = 0;
	KUNIT_EXPECT_EQ(test, mr_wire_encode(&p, buf, len), (int)len);
	p.nak.code = 4;
	KUNIT_EXPECT_EQ(test, mr_wire_encode(&p, buf, len), -MR_EFIELD);
}

static void wire_ranges(struct kunit *test)
{
	struct mr_pkt p;
	u8 buf[MR_MAX_HDR_LEN];

	wire_sample(&p, MR_OP_WRITE);
	p.write.va = U64_MAX - 2999;
	KUNIT_EXPECT_EQ(test, mr_wire_encode(&p, buf, sizeof(buf)), 48);
	p.write.va++;
	KUNIT_EXPECT_EQ(test, mr_wire_encode(&p, buf, sizeof(buf)),
			-MR_EFIELD);
	wire_sample(&p, MR_OP_FETCH_ADD);
	p.atomic.va = U64_MAX - 6;
	KUNIT_EXPECT_EQ(test, mr_wire_encode(&p, buf, sizeof(buf)),
			-MR_EFIELD);
	wire_sample(&p, MR_OP_SEND);
	p.send.length = MR_WIRE_MAX_MSG_LEN + 1;
	KUNIT_EXPECT_EQ(test, mr_wire_encode(&p, buf, sizeof(buf)),
			-MR_EFIELD);
	KUNIT_EXPECT_EQ(test, mr_wire_encode(&p, buf, 10), -MR_EFIELD);
	wire_sample(&p, MR_OP_SEND);
	KUNIT_EXPECT_EQ(test, mr_wire_encode(&p, buf, 39), -MR_ENOSPC);
}

/*
 * A READ_RESP slice without payload inside its READ (the responder lost
 * the region) encodes and decodes; an empty slice at or past the end does
 * not, nor does an empty SEND slice of a non-empty message.
 */
static void wire_read_resp_lost_region(struct kunit *test)
{
	struct mr_pkt p, q;
	u8 buf[MR_MAX_HDR_LEN];
	int n;

	wire_sample(&p, MR_OP_READ_RESP);
	p.read_resp.length = 8192;
	p.read_resp.offset = 4096;
	p.payload_len = 0;
	n = mr_wire_encode(&p, buf, sizeof(buf));
	KUNIT_ASSERT_EQ(test, n, (int)mr_wire_hdr_len(MR_OP_READ_RESP));
	KUNIT_EXPECT_EQ(test, mr_wire_decode(buf, n, &q), 0);
	KUNIT_EXPECT_EQ(test, q.payload_len, 0u);
	KUNIT_EXPECT_EQ(test, q.read_resp.offset, 4096u);
	p.read_resp.offset = 8192;
	KUNIT_EXPECT_EQ(test, mr_wire_encode(&p, buf, sizeof(buf)),
			-MR_ELENGTH);
	wire_sample(&p, MR_OP_SEND);
	p.payload_len = 0;
	KUNIT_EXPECT_EQ(test, mr_wire_encode(&p, buf, sizeof(buf)),
			-MR_ELENGTH);
}

/* xorshift32: a fixed sequence, so a failure replays. */
static u32 wire_rand(u32 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/*
 * Mutated packets in exact-size buffers (KASAN sees any overread): the
 * decoder returns 0 or an error, and what decodes re-encodes identically.
 */
static void wire_random_mutations(struct kunit *test)
{
	u8 *buf, hdr[MR_MAX_HDR_LEN];
	struct mr_pkt p, q;
	u32 s = 1, len, i, n;
	int rc;

	for (i = 0; i < 20000; i++) {
		wire_sample(&p, wire_ops[wire_rand(&s) % ARRAY_SIZE(wire_ops)]);
		wire_shrink(&p);
		len = mr_wire_hdr_len(p.base.opcode) + p.payload_len;
		buf = kunit_kzalloc(test, len, GFP_KERNEL);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
		KUNIT_ASSERT_EQ(test, mr_wire_encode(&p, buf, len),
				(int)mr_wire_hdr_len(p.base.opcode));
		for (n = 1 + wire_rand(&s) % 3; n; n--)
			buf[wire_rand(&s) % len] ^= 1 << (wire_rand(&s) % 8);
		len -= wire_rand(&s) % 4 ? 0 : wire_rand(&s) % len;
		rc = mr_wire_decode(buf, len, &q);
		KUNIT_ASSERT_LE(test, rc, 0);
		KUNIT_ASSERT_GE(test, rc, -MR_ELENGTH);
		if (!rc) {
			KUNIT_ASSERT_EQ(test,
					mr_wire_encode(&q, hdr, sizeof(hdr)),
					(int)q.hdr_len);
			KUNIT_ASSERT_EQ(test, memcmp(hdr, buf, q.hdr_len), 0);
		}
		kunit_kfree(test, buf);
	}
}

static struct kunit_case wire_cases[] = {
	KUNIT_CASE(wire_header_lengths),
	KUNIT_CASE(wire_golden_write_imm),
	KUNIT_CASE(wire_hello),
	KUNIT_CASE(wire_ud),
	KUNIT_CASE(wire_round_trip),
	KUNIT_CASE(wire_truncated),
	KUNIT_CASE(wire_bad_base),
	KUNIT_CASE(wire_ack_and_nak),
	KUNIT_CASE(wire_ranges),
	KUNIT_CASE(wire_read_resp_lost_region),
	KUNIT_CASE(wire_random_mutations),
	{}
};

static struct kunit_suite wire_suite = {
	.name = "metaroce_wire",
	.test_cases = wire_cases,
};

kunit_test_suite(wire_suite);
