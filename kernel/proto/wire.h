/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The MetaRoCE wire format (provisional, version 2), and nothing else.
 *
 * A packet is the payload of one UDP datagram: a 24-byte base header, one
 * header for its opcode, then the data, if the opcode carries any. Every
 * multi-byte field is big-endian. Documentation/metaroce/protocol.rst has
 * the byte layouts and the rules behind each field; this header and
 * wire.c are the code form of that document, and scripts/spec-check
 * checks that its tables agree with wire.c's.
 */
#ifndef METAROCE_PROTO_WIRE_H
#define METAROCE_PROTO_WIRE_H

#include "types.h"
#include "mtu.h"

#define MR_WIRE_VERSION 2

/* Limits that the wire format itself sets. */
#define MR_WIRE_MAX_PATHS 64		/* path ids 0..63 */
#define MR_WIRE_QPN_MAX 0xffffffu	/* QPNs have 24 bits */
#define MR_WIRE_MAX_MSG_LEN 0x80000000u	/* 2 GiB, as RDMA allows */
#define MR_WIRE_MAX_PAYLOAD 4096u	/* the largest RDMA MTU */
#define MR_WIRE_SACK_BITS 256
#define MR_WIRE_SACK_WORDS (MR_WIRE_SACK_BITS / 64)
#define MR_WIRE_ATOMIC_LEN 8u		/* atomics work on 64-bit words */

/* Opcodes: 0x0_ requests, 0x1_ responses, 0x2_ control. */
enum mr_opcode {
	MR_OP_SEND = 0x01,
	MR_OP_SEND_IMM = 0x02,		/* SEND with immediate data */
	MR_OP_SEND_INV = 0x03,		/* SEND that invalidates an rkey */
	MR_OP_WRITE = 0x04,
	MR_OP_WRITE_IMM = 0x05,		/* WRITE that consumes a receive */
	MR_OP_READ_REQ = 0x06,
	MR_OP_CMP_SWAP = 0x07,
	MR_OP_FETCH_ADD = 0x08,
	MR_OP_UD_SEND = 0x09,		/* a datagram to a UD QP */
	MR_OP_UD_SEND_IMM = 0x0a,	/* a datagram with immediate data */
	MR_OP_READ_RESP = 0x10,
	MR_OP_ATOMIC_RESP = 0x11,
	MR_OP_ACK = 0x20,
	MR_OP_NAK = 0x21,
	MR_OP_HELLO = 0x22,		/* the connection tag handshake */
};

#define MR_OP_MAX MR_OP_HELLO

/*
 * A request's order byte: the message it completes after is the one
 * order + 1 MSNs before it in the same stream. MR_ORDER_PREV (0), the
 * message just before, is a connection of one stream; MR_ORDER_NONE
 * (or any value from MR_ORDER_MAX on): none in the message window.
 */
#define MR_ORDER_PREV 0
#define MR_ORDER_MAX 127		/* MR_MSG_WINDOW - 1 */
#define MR_ORDER_NONE 0xff

/*
 * What an opcode is, so that receivers ask a property instead of listing
 * opcodes: mr_wire_op_flags(), 0 for an unknown opcode.
 */
#define MR_WIRE_F_PAYLOAD 0x001		/* a payload may follow the headers */
#define MR_WIRE_F_CONSUMES 0x002	/* takes a receive posted at the receiver */
#define MR_WIRE_F_IMM 0x004		/* carries immediate data */
#define MR_WIRE_F_INVALIDATES 0x008	/* names an rkey to invalidate */
#define MR_WIRE_F_WRITE 0x010		/* lands at va + offset under its rkey */
#define MR_WIRE_F_READ_OR_ATOMIC 0x020	/* a request answered by a response */
#define MR_WIRE_F_ATOMIC 0x040		/* CMP_SWAP, FETCH_ADD */
#define MR_WIRE_F_RESPONSE 0x080	/* answers a READ or atomic request */
#define MR_WIRE_F_DATAGRAM 0x100	/* UD: of no connection, one packet */
#define MR_WIRE_F_CONTROL 0x200		/* ACK, NAK, HELLO: no data, no message */
/* A request of a connection: carries a stream and an order byte. */
#define MR_WIRE_F_ORDERED 0x400

/* Base header flags; the bits not named here are reserved and zero. */
#define MR_FLAG_ACK_REQ 0x01	/* acknowledge this path without delay */
#define MR_FLAG_SOLICITED 0x02	/* raise a solicited completion event */
/*
 * Opcode header and payload are encrypted (proto/aead.h), on any opcode.
 * The codec never sees it: decryption removes it before decoding, and
 * encryption sets it after encoding, so mr_wire_decode() refuses it.
 */
#define MR_FLAG_ENCRYPTED 0x04
/*
 * On data packets: the sender's congestion windows are full with this
 * packet and hold less than half of what the receiver's last rate hint
 * fills. Congestion, not the application, keeps it below its share; the
 * receiver learns from it that its capacity overstates the bottleneck.
 */
#define MR_FLAG_WINDOW_LIMITED 0x08

/* HELLO flags. */
#define MR_HELLO_KNOWN 0x1	/* the sender holds the receiver's tag */
#define MR_HELLO_REPLY 0x2	/* an answer to a HELLO: not answered */

/* NAK codes: why the responder refused the message named in the NAK. */
enum mr_nak_code {
	MR_NAK_REMOTE_ACCESS = 1,	/* bad rkey, bounds or access rights */
	MR_NAK_INVALID_REQUEST = 2,	/* well-formed but not executable */
	MR_NAK_RNR = 3,			/* no receive posted: retry later */
};

/* Header lengths in bytes: the base header, then each opcode's header. */
#define MR_BASE_HDR_LEN 24u
#define MR_SEND_HDR_LEN 16u
#define MR_SEND_IMM_HDR_LEN 20u		/* also SEND_INV */
#define MR_WRITE_HDR_LEN 24u
#define MR_WRITE_IMM_HDR_LEN 32u
#define MR_READ_REQ_HDR_LEN 20u
#define MR_CMP_SWAP_HDR_LEN 32u
#define MR_FETCH_ADD_HDR_LEN 24u
#define MR_READ_RESP_HDR_LEN 12u
#define MR_ATOMIC_RESP_HDR_LEN 12u
#define MR_ACK_HDR_LEN 48u
#define MR_NAK_HDR_LEN 8u
#define MR_UD_HDR_LEN 8u
#define MR_UD_IMM_HDR_LEN 12u
#define MR_HELLO_HDR_LEN 16u

/* The longest opcode header: the most any packet carries in front. */
#define MR_MAX_OP_HDR_LEN MR_ACK_HDR_LEN
#define MR_MAX_HDR_LEN (MR_BASE_HDR_LEN + MR_MAX_OP_HDR_LEN)

/* All headers, data packets and acknowledgments alike, fit the reserve. */
static_assert(MR_MAX_HDR_LEN <= MR_TRANSPORT_HDR_RESERVE,
	      "MetaRoCE headers exceed the MTU reserve");
static_assert(MR_BASE_HDR_LEN + MR_WRITE_IMM_HDR_LEN <=
	      MR_TRANSPORT_HDR_RESERVE, "WRITE_IMM headers too long");
static_assert(MR_BASE_HDR_LEN + MR_CMP_SWAP_HDR_LEN <=
	      MR_TRANSPORT_HDR_RESERVE, "CMP_SWAP headers too long");
static_assert(MR_WIRE_MAX_PAYLOAD == 128u << MR_MTU_MAX,
	      "the payload limit is the largest RDMA MTU");

/*
 * Decoded headers in host order. The version is not kept: decoding accepts
 * only MR_WIRE_VERSION and encoding always writes it.
 */
struct mr_base_hdr {
	u8 opcode;
	u8 flags;
	u8 path;	/* path id, below MR_WIRE_MAX_PATHS */
	u16 epoch;	/* path epoch: bumped when the path restarts */
	u32 qpn;	/* destination QP, 24 bits */
	u32 psn;	/* path sequence number; in ACK/NAK, see .rst */
	/*
	 * Requests only (zero in the rest): the message's stream, and how
	 * far back the message it completes after is (MR_ORDER_*).
	 */
	u16 stream;
	u8 order;
	/*
	 * The receiving QP's connection tag: RC and UC packets carry it, so
	 * only the peer that learned it in the HELLO handshake is heard.
	 * Never 0, but in HELLOs sent before the tag is known and in UD.
	 */
	u64 tag;
};

/* SEND, SEND_IMM, SEND_INV. */
struct mr_send_hdr {
	u32 msn;	/* message sequence number of the request */
	u32 rsn;	/* receive sequence number: which posted receive */
	u32 length;	/* total message length */
	u32 offset;	/* where this payload starts in the message */
	u32 imm;	/* SEND_IMM only */
	u32 inv_rkey;	/* SEND_INV only */
};

/* WRITE, WRITE_IMM. */
struct mr_write_hdr {
	u32 msn;
	u32 rkey;
	u64 va;		/* remote address of message byte 0 */
	u32 length;
	u32 offset;	/* this payload lands at va + offset */
	u32 rsn;	/* WRITE_IMM only */
	u32 imm;	/* WRITE_IMM only */
};

struct mr_read_req_hdr {
	u32 msn;
	u32 rkey;
	u64 va;
	u32 length;
};

struct mr_read_resp_hdr {
	u32 msn;	/* the READ request this answers */
	u32 length;	/* the READ's total length */
	u32 offset;	/* where this payload starts in the READ's data */
};

/* CMP_SWAP and FETCH_ADD. */
struct mr_atomic_hdr {
	u32 msn;
	u32 rkey;
	u64 va;		/* 8-byte aligned, or the responder NAKs */
	u64 swap_add;	/* the swap value, or the addend */
	u64 compare;	/* CMP_SWAP only */
};

struct mr_atomic_resp_hdr {
	u32 msn;	/* the atomic request this answers */
	u64 orig;	/* the value at va before the operation */
};

struct mr_ack_hdr {
	u32 cum_psn;	/* every PSN before this one has arrived */
	/* Word w bit b (value 1 << b): PSN cum_psn + 64 * w + b arrived. */
	u64 sack[MR_WIRE_SACK_WORDS];
	u32 msn_done;	/* every request before this MSN has completed */
	u32 ecn_count;	/* CE-marked packets on this path epoch, wrapping */
	u32 rate_hint;	/* reserved for congestion control; 0: no hint */
};

struct mr_nak_hdr {
	u32 msn;	/* the refused request */
	u8 code;	/* enum mr_nak_code */
	u16 rnr_delay;	/* RNR only: retry after this many 10 us units */
};

/*
 * UD_SEND, UD_SEND_IMM: the whole message in one packet, so the payload
 * is the message. The base header has path 0, epoch 0 and a PSN that
 * only numbers the sender's datagrams.
 */
struct mr_ud_hdr {
	u32 src_qpn;	/* the sending QP, 24 bits */
	u32 qkey;	/* must match the destination QP's Q_Key */
	u32 imm;	/* UD_SEND_IMM only */
};

/*
 * HELLO: the sender's own tag, which the receiver puts in what it sends
 * back; base.tag is the receiver's tag as the sender knows it, or 0.
 */
struct mr_hello_hdr {
	u64 src_tag;	/* never 0 */
	u32 flags;	/* MR_HELLO_KNOWN, MR_HELLO_REPLY */
	u32 rate_hint;	/* the sender's first hint to the receiver, kbit/s */
};

struct mr_pkt {
	struct mr_base_hdr base;
	union {
		struct mr_send_hdr send;
		struct mr_write_hdr write;
		struct mr_read_req_hdr read_req;
		struct mr_read_resp_hdr read_resp;
		struct mr_atomic_hdr atomic;
		struct mr_atomic_resp_hdr atomic_resp;
		struct mr_ack_hdr ack;
		struct mr_nak_hdr nak;
		struct mr_ud_hdr ud;
		struct mr_hello_hdr hello;
	};
	u32 hdr_len;		/* set by decode: the payload starts here */
	u32 payload_len;	/* bytes after the headers */
};

unsigned int mr_wire_hdr_len(unsigned int opcode);
unsigned int mr_wire_op_flags(unsigned int opcode);
int mr_wire_decode(const u8 *buf, u32 len, struct mr_pkt *pkt);
int mr_wire_encode(const struct mr_pkt *pkt, u8 *buf, u32 size);

#endif /* METAROCE_PROTO_WIRE_H */
