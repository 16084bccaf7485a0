// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Host tests of proto/wire.c: layouts, round trips, and every rejection.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "pkt_gen.hh"

using mrtest::Gen;
using Bytes = std::vector<uint8_t>;

namespace {

int Decode(const Bytes &b, mr_pkt *p)
{
	// A copy of exactly b.size() bytes: ASan flags any read past it.
	uint8_t *heap = new uint8_t[b.size() ? b.size() : 1];
	int rc;

	if (!b.empty())
		memcpy(heap, b.data(), b.size());
	rc = mr_wire_decode(heap, (uint32_t)b.size(), p);
	delete[] heap;
	return rc;
}

int Decode(const Bytes &b)
{
	mr_pkt p;

	return Decode(b, &p);
}

// A fixed valid packet; with a payload, 2000 bytes at 1000 of 3000.
mr_pkt Sample(uint8_t op)
{
	Gen g(op);
	mr_pkt p = g.Valid(op);

	if (mrtest::HasPayload(op)) {
		switch (op) {
		case MR_OP_WRITE:
		case MR_OP_WRITE_IMM:
			p.write.va = 0x1000;
			p.write.length = 3000;
			p.write.offset = 1000;
			break;
		case MR_OP_READ_RESP:
			p.read_resp.length = 3000;
			p.read_resp.offset = 1000;
			break;
		case MR_OP_UD_SEND:
		case MR_OP_UD_SEND_IMM:
			break;
		default:
			p.send.length = 3000;
			p.send.offset = 1000;
			break;
		}
		p.payload_len = 2000;
	}
	return p;
}

Bytes Encode(const mr_pkt &p)
{
	Bytes b(mr_wire_hdr_len(p.base.opcode) + p.payload_len, 0xee);
	int n = mr_wire_encode(&p, b.data(), (uint32_t)b.size());

	EXPECT_EQ(n, (int)mr_wire_hdr_len(p.base.opcode));
	return b;
}

// Encodes @p and its payload: the headers are @want, and decode back to @p.
void ExpectGolden(const mr_pkt &p, const Bytes &want)
{
	Bytes b = Encode(p);
	mr_pkt q;

	ASSERT_EQ(b.size(), want.size() + p.payload_len);
	EXPECT_EQ(Bytes(b.begin(), b.begin() + want.size()), want);
	ASSERT_EQ(Decode(b, &q), 0);
	EXPECT_TRUE(mrtest::PktEqual(p, q));
	EXPECT_EQ(q.hdr_len, want.size());
	EXPECT_EQ(q.payload_len, p.payload_len);
}

const std::vector<uint8_t> &kOps = mrtest::AllOpcodes();

bool IsKnown(unsigned op)
{
	for (uint8_t k : kOps)
		if (k == op)
			return true;
	return false;
}

} // namespace

TEST(Wire, HeaderLengths)
{
	EXPECT_EQ(MR_BASE_HDR_LEN, 24u);
	EXPECT_EQ(mr_wire_hdr_len(MR_OP_SEND), 40u);
	EXPECT_EQ(mr_wire_hdr_len(MR_OP_SEND_IMM), 44u);
	EXPECT_EQ(mr_wire_hdr_len(MR_OP_SEND_INV), 44u);
	EXPECT_EQ(mr_wire_hdr_len(MR_OP_WRITE), 48u);
	EXPECT_EQ(mr_wire_hdr_len(MR_OP_WRITE_IMM), 56u);
	EXPECT_EQ(mr_wire_hdr_len(MR_OP_READ_REQ), 44u);
	EXPECT_EQ(mr_wire_hdr_len(MR_OP_CMP_SWAP), 56u);
	EXPECT_EQ(mr_wire_hdr_len(MR_OP_FETCH_ADD), 48u);
	EXPECT_EQ(mr_wire_hdr_len(MR_OP_READ_RESP), 36u);
	EXPECT_EQ(mr_wire_hdr_len(MR_OP_ATOMIC_RESP), 36u);
	EXPECT_EQ(mr_wire_hdr_len(MR_OP_ACK), 72u);
	EXPECT_EQ(mr_wire_hdr_len(MR_OP_NAK), 32u);
	EXPECT_EQ(mr_wire_hdr_len(MR_OP_HELLO), 40u);
	// The longest header, the ACK, fills the reserve exactly.
	EXPECT_EQ(MR_MAX_HDR_LEN, MR_TRANSPORT_HDR_RESERVE);
	EXPECT_EQ(MR_WIRE_OVERHEAD, 120u);
	EXPECT_EQ(mr_mtu_min_netdev(), 376u);
	for (unsigned op = 0; op < 256; op++) {
		unsigned len = mr_wire_hdr_len(op);

		EXPECT_LE(len, MR_TRANSPORT_HDR_RESERVE) << op;
		EXPECT_LE(len, MR_MAX_HDR_LEN) << op;
		EXPECT_EQ(len % 4, 0u) << op; // payloads start 4-aligned
	}
	EXPECT_EQ(mr_wire_hdr_len(0), 0u);
	EXPECT_EQ(mr_wire_hdr_len(MR_OP_MAX + 1), 0u);
	EXPECT_EQ(mr_wire_hdr_len(0x1000), 0u);
}

// The byte layout, pinned: these are the tables of protocol.rst.
TEST(Wire, GoldenWriteImm)
{
	mr_pkt p{};

	p.base.opcode = MR_OP_WRITE_IMM;
	p.base.flags = MR_FLAG_ACK_REQ | MR_FLAG_SOLICITED;
	p.base.path = 7;
	p.base.qpn = 0x123456;
	p.base.psn = 0x89abcdef;
	p.base.epoch = 0x0102;
	p.base.tag = 0xfedcba9876543210;
	p.write.msn = 0x01020304;
	p.write.rkey = 0xa1a2a3a4;
	p.write.va = 0x1122334455667788;
	p.write.length = 0x1000;
	p.write.offset = 0x800;
	p.write.rsn = 0x0badf00d;
	p.write.imm = 0xdeadbeef;
	p.payload_len = 0x800;
	const Bytes want = {
		0x02, 0x05, 0x03, 0x07, 0x00, 0x12, 0x34, 0x56,
		0x89, 0xab, 0xcd, 0xef, 0x01, 0x02, 0x00, 0x00,
		0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10,
		0x01, 0x02, 0x03, 0x04, 0xa1, 0xa2, 0xa3, 0xa4,
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
		0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x08, 0x00,
		0x0b, 0xad, 0xf0, 0x0d, 0xde, 0xad, 0xbe, 0xef,
	};
	ASSERT_EQ(want.size(), 56u);
	ExpectGolden(p, want);
}

// A datagram: its header follows the base header, its payload is the message.
TEST(Wire, GoldenUdSendImm)
{
	mr_pkt p{};

	p.base.opcode = MR_OP_UD_SEND_IMM;
	p.base.flags = MR_FLAG_SOLICITED;
	p.base.qpn = 0x123456;
	p.base.psn = 0x89abcdef;
	p.ud.src_qpn = 0xabcdef;
	p.ud.qkey = 0x80010000;
	p.ud.imm = 0xdeadbeef;
	p.payload_len = 100;
	const Bytes want = {
		0x02, 0x0a, 0x02, 0x00, 0x00, 0x12, 0x34, 0x56,
		0x89, 0xab, 0xcd, 0xef, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0xab, 0xcd, 0xef, 0x80, 0x01, 0x00, 0x00,
		0xde, 0xad, 0xbe, 0xef,
	};
	ASSERT_EQ(want.size(), 36u);
	ExpectGolden(p, want);
}

// Datagrams ride no path, belong to no connection (tag 0), name a 24-bit
// QP, fit one packet, ask no ACK.
TEST(Wire, UdRejects)
{
	mr_pkt p = Sample(MR_OP_UD_SEND);
	Bytes ok = Encode(p);
	Bytes b = ok;

	b[3] = 1; // path
	EXPECT_EQ(Decode(b), -MR_EFIELD);
	b = ok;
	b[13] = 1; // epoch
	EXPECT_EQ(Decode(b), -MR_EFIELD);
	b = ok;
	b[MR_BASE_HDR_LEN] = 1; // the source QPN's top byte
	EXPECT_EQ(Decode(b), -MR_EFIELD);
	for (unsigned at = 16; at < MR_BASE_HDR_LEN; at++) {
		b = ok;
		b[at] = 0x01; // any tag bit
		EXPECT_EQ(Decode(b), -MR_EFIELD) << at;
	}
	b = ok;
	b = ok;
	b[2] = MR_FLAG_ACK_REQ;
	EXPECT_EQ(Decode(b), -MR_EFLAGS);
	b = ok;
	b.resize(MR_BASE_HDR_LEN + MR_UD_HDR_LEN + MR_WIRE_MAX_PAYLOAD + 1);
	EXPECT_EQ(Decode(b), -MR_ELENGTH);
	b.resize(b.size() - 1);
	EXPECT_EQ(Decode(b), 0);

	Bytes big(b.size() + 1);

	p.payload_len = MR_WIRE_MAX_PAYLOAD + 1;
	EXPECT_EQ(mr_wire_encode(&p, big.data(), (uint32_t)big.size()),
		  -MR_ELENGTH);
	p.payload_len = 0;
	p.base.tag = 1;
	EXPECT_EQ(mr_wire_encode(&p, big.data(), (uint32_t)big.size()),
		  -MR_EFIELD);
	p.base.tag = 0;
	p.ud.src_qpn = MR_WIRE_QPN_MAX + 1;
	EXPECT_EQ(mr_wire_encode(&p, big.data(), (uint32_t)big.size()),
		  -MR_EFIELD);
}

TEST(Wire, GoldenAck)
{
	mr_pkt p{};

	p.base.opcode = MR_OP_ACK;
	p.base.path = 63;
	p.base.qpn = 0xffffff;
	p.base.psn = 0x11; // bit 1: PSN 0x11 arrived
	p.base.epoch = 0xffff;
	p.base.tag = 0x8000000000000001;
	p.ack.cum_psn = 0x10;
	p.ack.sack[0] = 0x2;
	p.ack.sack[3] = 0x8000000000000000ull;
	p.ack.msn_done = 5;
	p.ack.ecn_count = 9;
	p.ack.rate_hint = 100;
	Bytes want(72, 0);
	const uint8_t base[] = { 0x02, 0x20, 0x00, 0x3f, 0x00, 0xff, 0xff, 0xff,
				 0x00, 0x00, 0x00, 0x11, 0xff, 0xff, 0x00, 0x00,
				 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
				 0x00, 0x00, 0x00, 0x10 };
	memcpy(want.data(), base, sizeof(base));
	want[35] = 0x02;
	want[52] = 0x80;
	want[63] = 5;
	want[67] = 9;
	want[71] = 100;
	EXPECT_EQ(Encode(p), want);

	mr_pkt q;

	ASSERT_EQ(Decode(want, &q), 0);
	EXPECT_TRUE(mrtest::PktEqual(p, q));
}

TEST(Wire, GoldenNakAndAtomic)
{
	mr_pkt p{};

	p.base.opcode = MR_OP_NAK;
	p.base.qpn = 1;
	p.base.tag = 1;
	p.nak.msn = 0xcafe;
	p.nak.code = MR_NAK_RNR;
	p.nak.rnr_delay = 0x1234;
	Bytes b = Encode(p);
	const Bytes nak = { 0x00, 0x00, 0xca, 0xfe, 0x03, 0x00, 0x12, 0x34 };

	EXPECT_EQ(Bytes(b.begin() + MR_BASE_HDR_LEN, b.end()), nak);

	p = mr_pkt{};
	p.base.opcode = MR_OP_CMP_SWAP;
	p.base.tag = 2;
	p.atomic.msn = 1;
	p.atomic.rkey = 2;
	p.atomic.va = 0x10;
	p.atomic.swap_add = 0x0102030405060708;
	p.atomic.compare = 0x1112131415161718;
	b = Encode(p);
	ASSERT_EQ(b.size(), 56u);
	EXPECT_EQ(b[23], 0x02);
	EXPECT_EQ(b[MR_BASE_HDR_LEN + 19], 0x04);
	EXPECT_EQ(b[MR_BASE_HDR_LEN + 23], 0x08);
	EXPECT_EQ(b[MR_BASE_HDR_LEN + 24], 0x11);
	EXPECT_EQ(b[MR_BASE_HDR_LEN + 31], 0x18);
}

TEST(Wire, RoundTripEveryOpcode)
{
	Gen g(1);

	for (uint8_t op : kOps) {
		for (int i = 0; i < 3000; i++) {
			mr_pkt p = g.Valid(op), q;
			Bytes b = g.Encode(p);

			ASSERT_FALSE(b.empty()) << "op " << int(op);
			ASSERT_EQ(Decode(b, &q), 0) << "op " << int(op);
			ASSERT_TRUE(mrtest::PktEqual(p, q)) << "op " << int(op);
			ASSERT_EQ(q.hdr_len, mr_wire_hdr_len(op));
			ASSERT_EQ(q.hdr_len + q.payload_len, b.size());
		}
	}
}

TEST(Wire, TruncatedAtEveryLength)
{
	for (uint8_t op : kOps) {
		Bytes b = Encode(Sample(op));
		unsigned hdr = mr_wire_hdr_len(op);

		for (unsigned len = 0; len < hdr; len++)
			EXPECT_EQ(Decode(Bytes(b.begin(), b.begin() + len)),
				  -MR_ETRUNC)
				<< "op " << int(op) << " len " << len;
	}
}

TEST(Wire, BadVersion)
{
	Bytes b = Encode(Sample(MR_OP_SEND));

	for (int v : { 0, 1, 3, 0x12, 0xff }) { // 1: the tagless first format
		b[0] = (uint8_t)v;
		EXPECT_EQ(Decode(b), -MR_EVERSION) << v;
	}
}

TEST(Wire, UnknownOpcodes)
{
	Bytes b(MR_MAX_HDR_LEN, 0);
	mr_pkt p{};

	b[0] = MR_WIRE_VERSION;
	for (int op = 0; op < 256; op++) {
		if (IsKnown(op))
			continue;
		b[1] = (uint8_t)op;
		EXPECT_EQ(Decode(b), -MR_EOPCODE) << op;
		p.base.opcode = (uint8_t)op;
		EXPECT_EQ(mr_wire_encode(&p, b.data(), (uint32_t)b.size()),
			  -MR_EOPCODE);
	}
}

TEST(Wire, FlagsPerOpcode)
{
	for (uint8_t op : kOps) {
		mr_pkt p = Sample(op);
		Bytes b = Encode(p);

		for (int bit = 0; bit < 8; bit++) {
			uint8_t f = (uint8_t)(1u << bit);
			bool ok = mrtest::AllowedFlags(op) & f;

			b[2] = f;
			EXPECT_EQ(Decode(b), ok ? 0 : -MR_EFLAGS)
				<< "op " << int(op) << " flag " << int(f);
			p.base.flags = f;
			EXPECT_EQ(mr_wire_encode(&p, b.data(),
						 (uint32_t)b.size()) < 0,
				  !ok);
		}
	}
}

// What each opcode is, as protocol.rst describes it: its payload (Opcodes),
// the receive it consumes (RSN; a datagram takes the oldest posted one),
// its immediate data and invalidated rkey (Opcode headers), and its class.
TEST(Wire, OpFlagsPerOpcode)
{
	const unsigned PAYLOAD = MR_WIRE_F_PAYLOAD;
	const unsigned RECV = MR_WIRE_F_CONSUMES;
	const unsigned IMM = MR_WIRE_F_IMM;
	const unsigned RD = MR_WIRE_F_READ_OR_ATOMIC | MR_WIRE_F_ORDERED;
	const unsigned SEND = PAYLOAD | RECV | MR_WIRE_F_ORDERED;
	const unsigned WRITE = PAYLOAD | MR_WIRE_F_WRITE | MR_WIRE_F_ORDERED;
	const struct {
		uint8_t op;
		unsigned flags;
	} want[] = {
		{ MR_OP_SEND, SEND },
		{ MR_OP_SEND_IMM, SEND | IMM },
		{ MR_OP_SEND_INV, SEND | MR_WIRE_F_INVALIDATES },
		{ MR_OP_WRITE, WRITE },
		{ MR_OP_WRITE_IMM, WRITE | RECV | IMM },
		{ MR_OP_READ_REQ, RD },
		{ MR_OP_CMP_SWAP, RD | MR_WIRE_F_ATOMIC },
		{ MR_OP_FETCH_ADD, RD | MR_WIRE_F_ATOMIC },
		{ MR_OP_UD_SEND, PAYLOAD | RECV | MR_WIRE_F_DATAGRAM },
		{ MR_OP_UD_SEND_IMM, PAYLOAD | RECV | IMM | MR_WIRE_F_DATAGRAM },
		{ MR_OP_READ_RESP, PAYLOAD | MR_WIRE_F_RESPONSE },
		{ MR_OP_ATOMIC_RESP, MR_WIRE_F_RESPONSE },
		{ MR_OP_ACK, MR_WIRE_F_CONTROL },
		{ MR_OP_NAK, MR_WIRE_F_CONTROL },
		{ MR_OP_HELLO, MR_WIRE_F_CONTROL },
	};

	ASSERT_EQ(sizeof(want) / sizeof(want[0]), kOps.size());
	for (const auto &w : want)
		EXPECT_EQ(mr_wire_op_flags(w.op), w.flags) << int(w.op);
}

// An opcode the wire format does not define is nothing at all.
TEST(Wire, OpFlagsOfUnknownOpcodes)
{
	for (unsigned op = 0; op < 256; op++) {
		if (IsKnown(op))
			continue;
		EXPECT_EQ(mr_wire_op_flags(op), 0u) << op;
	}
	EXPECT_EQ(mr_wire_op_flags(MR_OP_MAX + 1), 0u);
	EXPECT_EQ(mr_wire_op_flags(0x100 | MR_OP_SEND), 0u);
	EXPECT_EQ(mr_wire_op_flags(~0u), 0u);
}

// The flags agree with what the codec enforces and with the opcode ranges:
// only opcodes that take a receive may be solicited, only those with a
// payload carry one, only datagrams and HELLO go without a tag, and
// 0x1_ are responses, 0x2_ control.
TEST(Wire, OpFlagsAgreeWithTheCodec)
{
	for (uint8_t op : kOps) {
		unsigned f = mr_wire_op_flags(op);

		EXPECT_NE(f, 0u) << int(op);
		EXPECT_EQ(!!(f & MR_WIRE_F_CONSUMES),
			  !!(mrtest::AllowedFlags(op) & MR_FLAG_SOLICITED))
			<< int(op);
		EXPECT_EQ(!!(f & MR_WIRE_F_PAYLOAD), mrtest::HasPayload(op))
			<< int(op);
		EXPECT_EQ(!!(f & MR_WIRE_F_DATAGRAM), mrtest::IsUd(op))
			<< int(op);
		EXPECT_EQ(!!(f & MR_WIRE_F_RESPONSE), (op >> 4) == 1) << int(op);
		EXPECT_EQ(!!(f & MR_WIRE_F_CONTROL), (op >> 4) == 2) << int(op);
		// An atomic is answered by a response, as a READ is.
		EXPECT_TRUE(!(f & MR_WIRE_F_ATOMIC) ||
			    (f & MR_WIRE_F_READ_OR_ATOMIC))
			<< int(op);
	}
}

// Bytes 4 and 14-15 are a request's order and stream, reserved elsewhere.
TEST(Wire, ReservedBytes)
{
	for (uint8_t op : kOps) {
		bool ordered = mr_wire_op_flags(op) & MR_WIRE_F_ORDERED;

		for (int off : { 4, 14, 15 }) {
			Bytes b = Encode(Sample(op));

			b[off] = 0x80;
			EXPECT_EQ(Decode(b), ordered ? 0 : -MR_ERESERVED)
				<< "op " << int(op) << " byte " << off;
		}
	}
	Bytes b = Encode(Sample(MR_OP_NAK));

	b[MR_BASE_HDR_LEN + 5] = 1;
	EXPECT_EQ(Decode(b), -MR_ERESERVED);
}

// RC and UC requests, and only they, carry a stream and an order byte.
TEST(Wire, StreamAndOrderRoundTrip)
{
	for (uint8_t op : kOps) {
		unsigned int f = mr_wire_op_flags(op);
		mr_pkt p = Sample(op), q;

		EXPECT_EQ(!!(f & MR_WIRE_F_ORDERED),
			  (op >> 4) == 0 && !mrtest::IsUd(op))
			<< int(op);
		p.base.stream = 0xbeef;
		p.base.order = MR_ORDER_NONE;
		Bytes b(mr_wire_hdr_len(op) + p.payload_len, 0);
		int n = mr_wire_encode(&p, b.data(), (uint32_t)b.size());

		if (!(f & MR_WIRE_F_ORDERED)) {
			EXPECT_EQ(n, -MR_ERESERVED) << int(op);
			continue;
		}
		ASSERT_GT(n, 0) << int(op);
		EXPECT_EQ(b[4], MR_ORDER_NONE);
		EXPECT_EQ(b[14], 0xbe);
		EXPECT_EQ(b[15], 0xef);
		ASSERT_EQ(mr_wire_decode(b.data(), (uint32_t)b.size(), &q), 0);
		EXPECT_EQ(q.base.stream, 0xbeef);
		EXPECT_EQ(q.base.order, MR_ORDER_NONE);
	}
}

TEST(Wire, EncodeClearsReservedBytes)
{
	for (uint8_t op : kOps) {
		mr_pkt p = Sample(op);
		Bytes b(mr_wire_hdr_len(op), 0xff);

		ASSERT_GT(mr_wire_encode(&p, b.data(), (uint32_t)b.size()), 0);
		EXPECT_EQ(b[4], 0);
		EXPECT_EQ(b[14], 0);
		EXPECT_EQ(b[15], 0);
		if (op == MR_OP_NAK) {
			EXPECT_EQ(b[MR_BASE_HDR_LEN + 5], 0);
		}
	}
}

TEST(Wire, PathAndQpn)
{
	for (uint8_t op : kOps) {
		mr_pkt p = Sample(op);
		Bytes b = Encode(p);

		b[3] = MR_WIRE_MAX_PATHS - 1;
		// Datagrams ride no path: UdRejects checks them.
		EXPECT_EQ(Decode(b), mrtest::IsUd(op) ? -MR_EFIELD : 0);
		for (int path : { MR_WIRE_MAX_PATHS, 0x80, 0xff }) {
			b[3] = (uint8_t)path;
			EXPECT_EQ(Decode(b), -MR_EFIELD) << path;
		}
		p.base.path = MR_WIRE_MAX_PATHS;
		EXPECT_EQ(mr_wire_encode(&p, b.data(), (uint32_t)b.size()),
			  -MR_EFIELD);
		p.base.path = 0;
		p.base.qpn = MR_WIRE_QPN_MAX + 1;
		EXPECT_EQ(mr_wire_encode(&p, b.data(), (uint32_t)b.size()),
			  -MR_EFIELD);
	}
}

TEST(Wire, PayloadOnlyWhereAllowed)
{
	for (uint8_t op : kOps) {
		if (mrtest::HasPayload(op))
			continue;
		Bytes b = Encode(Sample(op));

		b.push_back(0);
		EXPECT_EQ(Decode(b), -MR_ELENGTH) << int(op);
		mr_pkt p = Sample(op);

		p.payload_len = 1;
		EXPECT_EQ(mr_wire_encode(&p, b.data(), (uint32_t)b.size()),
			  -MR_ELENGTH);
	}
}

// Slices of SEND, WRITE and READ_RESP: inside the message, never empty
// unless the message is; a READ_RESP slice inside its READ may be empty (a
// resent slice whose region the responder lost).
TEST(Wire, SliceRules)
{
	struct Case {
		uint32_t length, offset, payload;
		int rc;
	} cases[] = {
		{ 3000, 1000, 2000, 0 },
		{ 3000, 1001, 2000, -MR_ELENGTH },
		{ 3000, 0, 3000, 0 },
		{ 3000, 3000, 0, -MR_ELENGTH },
		{ 3000, 0, 0, -MR_ELENGTH },
		{ 0, 0, 0, 0 },
		{ 0, 0, 1, -MR_ELENGTH },
		{ 0, 1, 0, -MR_ELENGTH },
		{ 8192, 0, 4097, -MR_ELENGTH },
		{ 8192, 4096, 4096, 0 },
		{ 0xffffffff, 0xfffff000, 4096, -MR_EFIELD },
		{ MR_WIRE_MAX_MSG_LEN, MR_WIRE_MAX_MSG_LEN - 1, 1, 0 },
		{ MR_WIRE_MAX_MSG_LEN + 1, 0, 1, -MR_EFIELD },
		{ 100, 0xffffffff, 2, -MR_ELENGTH },
	};

	for (uint8_t op : { MR_OP_SEND, MR_OP_SEND_IMM, MR_OP_SEND_INV,
			    MR_OP_WRITE, MR_OP_WRITE_IMM, MR_OP_READ_RESP }) {
		for (const Case &c : cases) {
			mr_pkt p = Sample(op);

			if (op == MR_OP_WRITE || op == MR_OP_WRITE_IMM) {
				p.write.va = 0;
				p.write.length = c.length;
				p.write.offset = c.offset;
			} else if (op == MR_OP_READ_RESP) {
				p.read_resp.length = c.length;
				p.read_resp.offset = c.offset;
			} else {
				p.send.length = c.length;
				p.send.offset = c.offset;
			}
			p.payload_len = c.payload;

			Bytes b(mr_wire_hdr_len(op) + c.payload);

			int rc = mr_wire_encode(&p, b.data(),
						(uint32_t)b.size());

			bool lost_region = op == MR_OP_READ_RESP &&
					   !c.payload && c.offset < c.length &&
					   c.length <= MR_WIRE_MAX_MSG_LEN;

			EXPECT_EQ(rc < 0 ? rc : 0, lost_region ? 0 : c.rc)
				<< "op " << int(op) << " " << c.length << "/"
				<< c.offset << "/" << c.payload;
			if (!c.rc || lost_region) {
				EXPECT_EQ(Decode(b), 0);
			}
		}
	}
}

// The decoder applies the slice rules to raw bytes too.
TEST(Wire, SliceRulesDecoded)
{
	Bytes b = Encode(Sample(MR_OP_SEND));

	mr_put_be32(&b[MR_BASE_HDR_LEN + 12], 1001); // offset + 2000 > 3000
	EXPECT_EQ(Decode(b), -MR_ELENGTH);
	mr_put_be32(&b[MR_BASE_HDR_LEN + 12], 1000);
	EXPECT_EQ(Decode(b), 0);
	mr_put_be32(&b[MR_BASE_HDR_LEN + 8], MR_WIRE_MAX_MSG_LEN + 1);
	EXPECT_EQ(Decode(b), -MR_EFIELD);
	b = Encode(Sample(MR_OP_WRITE));
	b.resize(b.size() + 1); // 2001 bytes past offset 1000 of 3000
	EXPECT_EQ(Decode(b), -MR_ELENGTH);
	b.resize(MR_BASE_HDR_LEN + MR_WRITE_HDR_LEN); // no payload at all
	EXPECT_EQ(Decode(b), -MR_ELENGTH);
	b = Encode(Sample(MR_OP_READ_RESP));
	mr_put_be32(&b[MR_BASE_HDR_LEN + 4], 2999);
	EXPECT_EQ(Decode(b), -MR_ELENGTH);
}

TEST(Wire, RemoteRangeMustNotWrap)
{
	mr_pkt p = Sample(MR_OP_WRITE);
	Bytes b(4096);

	p.write.va = UINT64_MAX - 2999;
	EXPECT_EQ(mr_wire_encode(&p, b.data(), 4096), 48);
	p.write.va = UINT64_MAX - 2998;
	EXPECT_EQ(mr_wire_encode(&p, b.data(), 4096), -MR_EFIELD);

	b = Encode(Sample(MR_OP_WRITE));
	mr_put_be64(&b[MR_BASE_HDR_LEN + 8], UINT64_MAX);
	EXPECT_EQ(Decode(b), -MR_EFIELD);

	p = Sample(MR_OP_READ_REQ);
	p.read_req.length = 2;
	p.read_req.va = UINT64_MAX;
	EXPECT_EQ(mr_wire_encode(&p, b.data(), 4096), -MR_EFIELD);
	p.read_req.length = 1;
	EXPECT_EQ(mr_wire_encode(&p, b.data(), 4096), 44);
	p.read_req.length = 0; // an empty READ may name any address
	EXPECT_EQ(mr_wire_encode(&p, b.data(), 4096), 44);
	p.read_req.length = MR_WIRE_MAX_MSG_LEN + 1;
	p.read_req.va = 0;
	EXPECT_EQ(mr_wire_encode(&p, b.data(), 4096), -MR_EFIELD);

	for (uint8_t op : { MR_OP_CMP_SWAP, MR_OP_FETCH_ADD }) {
		p = Sample(op);
		p.atomic.va = UINT64_MAX - 7;
		EXPECT_GT(mr_wire_encode(&p, b.data(), 4096), 0);
		p.atomic.va = UINT64_MAX - 6;
		EXPECT_EQ(mr_wire_encode(&p, b.data(), 4096), -MR_EFIELD);
	}
}

TEST(Wire, AckRules)
{
	mr_pkt p{};
	Bytes b(72);

	p.base.opcode = MR_OP_ACK;
	p.base.tag = 3;
	p.ack.cum_psn = 0xfffffffe; // the map spans the wrap
	p.ack.sack[0] = 1ull << 5;
	p.base.psn = 0xfffffffd;
	EXPECT_EQ(mr_wire_encode(&p, b.data(), 72), 72);
	p.base.psn = 0xfffffffe + 5; // wraps to 3, and bit 5 is set
	EXPECT_EQ(mr_wire_encode(&p, b.data(), 72), 72);
	EXPECT_EQ(Decode(b), 0);
	p.base.psn = 0xfffffffe; // cum itself has not arrived
	EXPECT_EQ(mr_wire_encode(&p, b.data(), 72), -MR_EFIELD);
	p.base.psn = 0xfffffffe + 6; // bit 6 is clear
	EXPECT_EQ(mr_wire_encode(&p, b.data(), 72), -MR_EFIELD);
	p.base.psn = 0xfffffffe + 256; // beyond the map
	EXPECT_EQ(mr_wire_encode(&p, b.data(), 72), -MR_EFIELD);

	// Bit 0 would say the PSN the ACK waits for has arrived.
	p.base.psn = 0;
	p.ack.cum_psn = 1;
	p.ack.sack[0] = 1;
	EXPECT_EQ(mr_wire_encode(&p, b.data(), 72), -MR_EFIELD);
	b = Encode(Sample(MR_OP_ACK));
	b[MR_BASE_HDR_LEN + 11] |= 1; // bit 0 of word 0
	EXPECT_EQ(Decode(b), -MR_EFIELD);
}

TEST(Wire, NakRules)
{
	mr_pkt p = Sample(MR_OP_NAK);
	Bytes b(32);

	for (int code = 0; code < 256; code++) {
		p.nak.code = (uint8_t)code;
		p.nak.rnr_delay = 0;
		bool ok = code >= MR_NAK_REMOTE_ACCESS && code <= MR_NAK_RNR;

		EXPECT_EQ(mr_wire_encode(&p, b.data(), 32), ok ? 32 : -MR_EFIELD);
		b = Encode(Sample(MR_OP_NAK));
		b[MR_BASE_HDR_LEN + 4] = (uint8_t)code;
		b[MR_BASE_HDR_LEN + 6] = 0;
		b[MR_BASE_HDR_LEN + 7] = 0;
		EXPECT_EQ(Decode(b), ok ? 0 : -MR_EFIELD) << code;
	}
	p.nak.code = MR_NAK_RNR;
	p.nak.rnr_delay = 0xffff;
	EXPECT_EQ(mr_wire_encode(&p, b.data(), 32), 32);
	for (uint8_t code : { MR_NAK_REMOTE_ACCESS, MR_NAK_INVALID_REQUEST }) {
		p.nak.code = code;
		p.nak.rnr_delay = 1;
		EXPECT_EQ(mr_wire_encode(&p, b.data(), 32), -MR_EFIELD);
	}
}

TEST(Wire, EncodeNeedsRoomAndWritesNothingOnError)
{
	for (uint8_t op : kOps) {
		mr_pkt p = Sample(op);
		unsigned hdr = mr_wire_hdr_len(op);
		Bytes b(hdr, 0x5a);

		EXPECT_EQ(mr_wire_encode(&p, b.data(), hdr - 1), -MR_ENOSPC);
		EXPECT_EQ(b, Bytes(hdr, 0x5a));
		p.base.path = 0xff;
		EXPECT_EQ(mr_wire_encode(&p, b.data(), hdr), -MR_EFIELD);
		EXPECT_EQ(b, Bytes(hdr, 0x5a));
	}
}

// Decode clears what an opcode does not have, whatever was there before.
TEST(Wire, DecodeZeroesUnusedFields)
{
	mr_pkt p = Sample(MR_OP_SEND), q;
	Bytes b = Encode(p);

	memset(&q, 0xa5, sizeof(q));
	ASSERT_EQ(Decode(b, &q), 0);
	EXPECT_EQ(q.send.imm, 0u);
	EXPECT_EQ(q.send.inv_rkey, 0u);
	memset(&q, 0xa5, sizeof(q));
	EXPECT_EQ(Decode(Bytes(3), &q), -MR_ETRUNC);
	EXPECT_EQ(q.base.opcode, 0);
	EXPECT_EQ(q.payload_len, 0u);
}

// The tag sits in bytes 16-23 of every base header, big-endian.
TEST(Wire, TagOnTheWire)
{
	for (uint8_t op : kOps) {
		if (!mrtest::NeedsTag(op))
			continue;
		mr_pkt p = Sample(op), q;

		p.base.tag = 0x0102030405060708;
		Bytes b = Encode(p);

		EXPECT_EQ(Bytes(b.begin() + 16, b.begin() + 24),
			  Bytes({ 1, 2, 3, 4, 5, 6, 7, 8 }))
			<< int(op);
		mr_put_be64(&b[16], UINT64_MAX);
		ASSERT_EQ(Decode(b, &q), 0) << int(op);
		EXPECT_EQ(q.base.tag, UINT64_MAX);
	}
}

// A connection's packets name their receiver's tag; datagrams name none.
TEST(Wire, TagRules)
{
	for (uint8_t op : kOps) {
		mr_pkt p = Sample(op);
		Bytes b = Encode(p);
		Bytes out(b.size(), 0x5a);

		if (op == MR_OP_HELLO) // HelloRules has its own
			continue;
		p.base.tag = mrtest::NeedsTag(op) ? 0 : 1;
		EXPECT_EQ(mr_wire_encode(&p, out.data(), (uint32_t)out.size()),
			  -MR_EFIELD)
			<< int(op);
		EXPECT_EQ(out, Bytes(b.size(), 0x5a));
		mr_put_be64(&b[16], p.base.tag);
		EXPECT_EQ(Decode(b), -MR_EFIELD) << int(op);
	}
}

TEST(Wire, GoldenHello)
{
	mr_pkt p{};

	p.base.opcode = MR_OP_HELLO;
	p.base.path = 2;
	p.base.qpn = 0x000102;
	p.base.tag = 0x1111222233334444;
	p.hello.src_tag = 0xa1a2a3a4a5a6a7a8;
	p.hello.flags = MR_HELLO_KNOWN | MR_HELLO_REPLY;
	p.hello.rate_hint = 0x00989680; // 10 Gbit/s
	const Bytes want = {
		0x02, 0x22, 0x00, 0x02, 0x00, 0x00, 0x01, 0x02,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x11, 0x11, 0x22, 0x22, 0x33, 0x33, 0x44, 0x44,
		0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8,
		0x00, 0x00, 0x00, 0x03, 0x00, 0x98, 0x96, 0x80,
	};

	ASSERT_EQ(want.size(), 40u);
	ExpectGolden(p, want);
}

// A HELLO: no sequence, a sender's tag, two flags, and KNOWN only with a
// tag to know; base.tag 0 is what a first HELLO carries.
TEST(Wire, HelloRules)
{
	mr_pkt p{};
	Bytes b(MR_BASE_HDR_LEN + MR_HELLO_HDR_LEN);

	p.base.opcode = MR_OP_HELLO;
	p.hello.src_tag = 7;
	EXPECT_EQ(mr_wire_encode(&p, b.data(), (uint32_t)b.size()), 40);
	EXPECT_EQ(Decode(b), 0);
	p.hello.flags = MR_HELLO_REPLY;
	EXPECT_EQ(mr_wire_encode(&p, b.data(), (uint32_t)b.size()), 40);
	p.hello.flags = MR_HELLO_KNOWN; // knows a tag of 0
	EXPECT_EQ(mr_wire_encode(&p, b.data(), (uint32_t)b.size()),
		  -MR_EFIELD);
	p.base.tag = 9;
	EXPECT_EQ(mr_wire_encode(&p, b.data(), (uint32_t)b.size()), 40);
	for (int bit = 2; bit < 32; bit++) {
		p.hello.flags = MR_HELLO_KNOWN | 1u << bit;
		EXPECT_EQ(mr_wire_encode(&p, b.data(), (uint32_t)b.size()),
			  -MR_EFIELD)
			<< bit;
	}
	p.hello.flags = MR_HELLO_KNOWN;
	p.hello.src_tag = 0;
	EXPECT_EQ(mr_wire_encode(&p, b.data(), (uint32_t)b.size()),
		  -MR_EFIELD);
	p.hello.src_tag = 7;
	p.base.psn = 1;
	EXPECT_EQ(mr_wire_encode(&p, b.data(), (uint32_t)b.size()),
		  -MR_EFIELD);
	p.base.psn = 0;
	p.base.epoch = 1;
	EXPECT_EQ(mr_wire_encode(&p, b.data(), (uint32_t)b.size()),
		  -MR_EFIELD);
	p.base.epoch = 0;

	// The same rules on raw bytes.
	const Bytes ok = Encode(p);
	struct Case {
		unsigned at;
		uint8_t value;
	} cases[] = {
		{ 11, 1 },			// psn
		{ 13, 1 },			// epoch
		{ MR_BASE_HDR_LEN + 8, 0x80 },	// an undefined flag
		{ MR_BASE_HDR_LEN + 11, 0x07 }, // one more undefined
	};

	EXPECT_EQ(Decode(ok), 0);
	for (const Case &c : cases) {
		b = ok;
		b[c.at] = c.value;
		EXPECT_EQ(Decode(b), -MR_EFIELD) << c.at;
	}
	b = ok;
	mr_put_be64(&b[16], 0); // KNOWN, but of no tag
	EXPECT_EQ(Decode(b), -MR_EFIELD);
	b[MR_BASE_HDR_LEN + 11] = MR_HELLO_REPLY;
	EXPECT_EQ(Decode(b), 0);
	mr_put_be64(&b[MR_BASE_HDR_LEN], 0); // no sender's tag
	EXPECT_EQ(Decode(b), -MR_EFIELD);
}
