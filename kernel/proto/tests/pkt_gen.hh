// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Test helpers: valid random packets of every opcode, and field equality.
#ifndef METAROCE_PROTO_TESTS_PKT_GEN_H
#define METAROCE_PROTO_TESTS_PKT_GEN_H

#include <cstdint>
#include <random>
#include <vector>

extern "C" {
#include "wire.h"
}

namespace mrtest {

inline const std::vector<uint8_t> &AllOpcodes()
{
	static const std::vector<uint8_t> ops = {
		MR_OP_SEND,	 MR_OP_SEND_IMM,    MR_OP_SEND_INV,
		MR_OP_WRITE,	 MR_OP_WRITE_IMM,   MR_OP_READ_REQ,
		MR_OP_CMP_SWAP,	 MR_OP_FETCH_ADD,   MR_OP_READ_RESP,
		MR_OP_ATOMIC_RESP, MR_OP_ACK,	    MR_OP_NAK,
		MR_OP_UD_SEND,	 MR_OP_UD_SEND_IMM, MR_OP_HELLO,
	};
	return ops;
}

inline bool IsUd(uint8_t op)
{
	return op == MR_OP_UD_SEND || op == MR_OP_UD_SEND_IMM;
}

// Whether the opcode belongs to a connection: then base.tag is never 0.
inline bool NeedsTag(uint8_t op)
{
	return !IsUd(op) && op != MR_OP_HELLO;
}

inline bool HasPayload(uint8_t op)
{
	switch (op) {
	case MR_OP_SEND:
	case MR_OP_SEND_IMM:
	case MR_OP_SEND_INV:
	case MR_OP_WRITE:
	case MR_OP_WRITE_IMM:
	case MR_OP_READ_RESP:
	case MR_OP_UD_SEND:
	case MR_OP_UD_SEND_IMM:
		return true;
	default:
		return false;
	}
}

inline uint8_t AllowedFlags(uint8_t op)
{
	switch (op) {
	case MR_OP_ACK:
	case MR_OP_NAK:
	case MR_OP_HELLO:
		return 0;
	case MR_OP_SEND:
	case MR_OP_SEND_IMM:
	case MR_OP_SEND_INV:
	case MR_OP_WRITE_IMM:
		return MR_FLAG_ACK_REQ | MR_FLAG_WINDOW_LIMITED |
		       MR_FLAG_SOLICITED;
	case MR_OP_UD_SEND:
	case MR_OP_UD_SEND_IMM:
		return MR_FLAG_SOLICITED;
	default:
		return MR_FLAG_ACK_REQ | MR_FLAG_WINDOW_LIMITED;
	}
}

class Gen {
public:
	explicit Gen(uint64_t seed) : rng_(seed) {}

	uint64_t U64() { return rng_(); }
	uint32_t U32() { return (uint32_t)rng_(); }
	uint32_t Below(uint64_t n) { return (uint32_t)(rng_() % n); }
	bool Chance(unsigned pct) { return Below(100) < pct; }

	// A connection tag: never 0, now and then an edge value.
	uint64_t Tag()
	{
		uint64_t t = Chance(10) ? (Chance(50) ? 1 : UINT64_MAX) : U64();

		return t ? t : 1;
	}

	// A message length: empty, small, around the MTU, or huge.
	uint32_t Length()
	{
		switch (Below(5)) {
		case 0:
			return 0;
		case 1:
			return 1 + Below(64);
		case 2:
			return 1 + Below(3 * MR_WIRE_MAX_PAYLOAD);
		case 3:
			return MR_WIRE_MAX_MSG_LEN - Below(5000);
		default:
			return 1 + Below(MR_WIRE_MAX_MSG_LEN);
		}
	}

	// A slice of a message of @length bytes, as the decoder accepts.
	void Slice(uint32_t length, uint32_t *offset, uint32_t *payload)
	{
		if (!length) {
			*offset = 0;
			*payload = 0;
			return;
		}
		uint32_t max = length < MR_WIRE_MAX_PAYLOAD ?
			length : MR_WIRE_MAX_PAYLOAD;
		*payload = Chance(30) ? max : 1 + Below(max);
		*offset = Below((uint64_t)length - *payload + 1);
		if (Chance(20))
			*offset = length - *payload;
	}

	// An address such that [va, va + length) does not wrap.
	uint64_t Va(uint64_t length)
	{
		uint64_t last = UINT64_MAX - (length ? length - 1 : 0);

		if (Chance(10))
			return last;
		return U64() % last;
	}

	mr_pkt Valid(uint8_t op)
	{
		mr_pkt p{};

		p.base.opcode = op;
		p.base.flags = (uint8_t)(U32() & AllowedFlags(op));
		p.base.path = (uint8_t)Below(MR_WIRE_MAX_PATHS);
		p.base.epoch = (uint16_t)U32();
		p.base.qpn = U32() & MR_WIRE_QPN_MAX;
		p.base.psn = U32();
		p.base.tag = NeedsTag(op) ? Tag() : 0;
		switch (op) {
		case MR_OP_SEND:
		case MR_OP_SEND_IMM:
		case MR_OP_SEND_INV:
			p.send.msn = U32();
			p.send.rsn = U32();
			p.send.length = Length();
			Slice(p.send.length, &p.send.offset, &p.payload_len);
			if (op == MR_OP_SEND_IMM)
				p.send.imm = U32();
			if (op == MR_OP_SEND_INV)
				p.send.inv_rkey = U32();
			break;
		case MR_OP_WRITE:
		case MR_OP_WRITE_IMM:
			p.write.msn = U32();
			p.write.rkey = U32();
			p.write.length = Length();
			p.write.va = Va(p.write.length);
			Slice(p.write.length, &p.write.offset, &p.payload_len);
			if (op == MR_OP_WRITE_IMM) {
				p.write.rsn = U32();
				p.write.imm = U32();
			}
			break;
		case MR_OP_READ_REQ:
			p.read_req.msn = U32();
			p.read_req.rkey = U32();
			p.read_req.length = Length();
			p.read_req.va = Va(p.read_req.length);
			break;
		case MR_OP_CMP_SWAP:
		case MR_OP_FETCH_ADD:
			p.atomic.msn = U32();
			p.atomic.rkey = U32();
			p.atomic.va = Va(MR_WIRE_ATOMIC_LEN);
			p.atomic.swap_add = U64();
			if (op == MR_OP_CMP_SWAP)
				p.atomic.compare = U64();
			break;
		case MR_OP_READ_RESP:
			p.read_resp.msn = U32();
			p.read_resp.length = Length();
			Slice(p.read_resp.length, &p.read_resp.offset,
			      &p.payload_len);
			break;
		case MR_OP_ATOMIC_RESP:
			p.atomic_resp.msn = U32();
			p.atomic_resp.orig = U64();
			break;
		case MR_OP_ACK:
			p.ack.cum_psn = U32();
			for (auto &w : p.ack.sack)
				w = Chance(30) ? 0 : U64();
			p.ack.sack[0] &= ~1ull;
			p.ack.msn_done = U32();
			p.ack.ecn_count = U32();
			p.ack.rate_hint = U32();
			p.base.psn = p.ack.cum_psn - 1 - Below(1000);
			if (Chance(50)) {
				uint32_t i = 1 + Below(MR_WIRE_SACK_BITS - 1);

				p.ack.sack[i / 64] |= 1ull << (i % 64);
				p.base.psn = p.ack.cum_psn + i;
			}
			break;
		case MR_OP_NAK:
			p.nak.msn = U32();
			p.nak.code = (uint8_t)(1 + Below(3));
			if (p.nak.code == MR_NAK_RNR)
				p.nak.rnr_delay = (uint16_t)U32();
			break;
		case MR_OP_UD_SEND:
		case MR_OP_UD_SEND_IMM:
			p.base.path = 0;
			p.base.epoch = 0;
			p.ud.src_qpn = U32() & MR_WIRE_QPN_MAX;
			p.ud.qkey = U32();
			if (op == MR_OP_UD_SEND_IMM)
				p.ud.imm = U32();
			p.payload_len = Below(MR_WIRE_MAX_PAYLOAD + 1);
			break;
		case MR_OP_HELLO:
			p.base.psn = 0;
			p.base.epoch = 0;
			p.hello.src_tag = Tag();
			// Before the first answer the sender knows no tag of ours.
			if (Chance(70)) {
				p.base.tag = Tag();
				p.hello.flags = U32() &
						(MR_HELLO_KNOWN | MR_HELLO_REPLY);
			} else {
				p.hello.flags = U32() & MR_HELLO_REPLY;
			}
			break;
		}
		return p;
	}

	// Headers and payload, in a vector of exactly the packet's size.
	std::vector<uint8_t> Encode(const mr_pkt &p)
	{
		std::vector<uint8_t> buf(mr_wire_hdr_len(p.base.opcode) +
					 p.payload_len);

		for (auto &b : buf)
			b = (uint8_t)U32();
		if (mr_wire_encode(&p, buf.data(), (uint32_t)buf.size()) < 0)
			buf.clear();
		return buf;
	}

private:
	std::mt19937_64 rng_;
};

// Field equality of the members the opcode uses.
inline bool PktEqual(const mr_pkt &a, const mr_pkt &b)
{
	const mr_base_hdr &x = a.base, &y = b.base;

	if (x.opcode != y.opcode || x.flags != y.flags || x.path != y.path ||
	    x.epoch != y.epoch || x.qpn != y.qpn || x.psn != y.psn ||
	    x.tag != y.tag || a.payload_len != b.payload_len)
		return false;
	switch (x.opcode) {
	case MR_OP_SEND:
	case MR_OP_SEND_IMM:
	case MR_OP_SEND_INV:
		return a.send.msn == b.send.msn && a.send.rsn == b.send.rsn &&
		       a.send.length == b.send.length &&
		       a.send.offset == b.send.offset &&
		       a.send.imm == b.send.imm &&
		       a.send.inv_rkey == b.send.inv_rkey;
	case MR_OP_WRITE:
	case MR_OP_WRITE_IMM:
		return a.write.msn == b.write.msn &&
		       a.write.rkey == b.write.rkey &&
		       a.write.va == b.write.va &&
		       a.write.length == b.write.length &&
		       a.write.offset == b.write.offset &&
		       a.write.rsn == b.write.rsn &&
		       a.write.imm == b.write.imm;
	case MR_OP_READ_REQ:
		return a.read_req.msn == b.read_req.msn &&
		       a.read_req.rkey == b.read_req.rkey &&
		       a.read_req.va == b.read_req.va &&
		       a.read_req.length == b.read_req.length;
	case MR_OP_CMP_SWAP:
	case MR_OP_FETCH_ADD:
		return a.atomic.msn == b.atomic.msn &&
		       a.atomic.rkey == b.atomic.rkey &&
		       a.atomic.va == b.atomic.va &&
		       a.atomic.swap_add == b.atomic.swap_add &&
		       a.atomic.compare == b.atomic.compare;
	case MR_OP_READ_RESP:
		return a.read_resp.msn == b.read_resp.msn &&
		       a.read_resp.length == b.read_resp.length &&
		       a.read_resp.offset == b.read_resp.offset;
	case MR_OP_ATOMIC_RESP:
		return a.atomic_resp.msn == b.atomic_resp.msn &&
		       a.atomic_resp.orig == b.atomic_resp.orig;
	case MR_OP_ACK:
		for (int i = 0; i < MR_WIRE_SACK_WORDS; i++)
			if (a.ack.sack[i] != b.ack.sack[i])
				return false;
		return a.ack.cum_psn == b.ack.cum_psn &&
		       a.ack.msn_done == b.ack.msn_done &&
		       a.ack.ecn_count == b.ack.ecn_count &&
		       a.ack.rate_hint == b.ack.rate_hint;
	case MR_OP_NAK:
		return a.nak.msn == b.nak.msn && a.nak.code == b.nak.code &&
		       a.nak.rnr_delay == b.nak.rnr_delay;
	case MR_OP_UD_SEND:
	case MR_OP_UD_SEND_IMM:
		return a.ud.src_qpn == b.ud.src_qpn && a.ud.qkey == b.ud.qkey &&
		       a.ud.imm == b.ud.imm;
	case MR_OP_HELLO:
		return a.hello.src_tag == b.hello.src_tag &&
		       a.hello.flags == b.hello.flags;
	}
	return false;
}

} // namespace mrtest

#endif
