// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Encoding and decoding of MetaRoCE headers. Both directions run the same
 * checks, so that whatever decodes re-encodes to the same bytes and nothing
 * is ever sent that a peer would drop as malformed.
 */
#include "wire.h"

/*
 * Flags by kind of packet: sequenced ones may ask for an ACK and say that
 * their windows held them back.
 */
#define MR_SEQ_FLAGS (MR_FLAG_ACK_REQ | MR_FLAG_WINDOW_LIMITED)
#define MR_RECV_FLAGS (MR_SEQ_FLAGS | MR_FLAG_SOLICITED)

/* A field of an opcode header: where it is on the wire and in struct mr_pkt. */
struct mr_field {
	u8 at;		/* byte offset in the opcode header */
	u8 size;	/* 1, 2, 4 or 8 bytes, big-endian, as the member; 0 ends */
	u16 member;	/* offset of the value in struct mr_pkt */
};

#define MR_FIELD(at, size, m) { at, size, offsetof(struct mr_pkt, m) }

/*
 * The opcode headers, field by field in wire order. An opcode has the
 * fields of its table that fit in its header length: SEND stops before
 * imm, WRITE before rsn, FETCH_ADD before compare.
 */
static const struct mr_field mr_send_fields[] = {
	MR_FIELD(0, 4, send.msn),
	MR_FIELD(4, 4, send.rsn),
	MR_FIELD(8, 4, send.length),
	MR_FIELD(12, 4, send.offset),
	MR_FIELD(16, 4, send.imm),
	{}
};

static const struct mr_field mr_send_inv_fields[] = {
	MR_FIELD(0, 4, send.msn),
	MR_FIELD(4, 4, send.rsn),
	MR_FIELD(8, 4, send.length),
	MR_FIELD(12, 4, send.offset),
	MR_FIELD(16, 4, send.inv_rkey),
	{}
};

static const struct mr_field mr_write_fields[] = {
	MR_FIELD(0, 4, write.msn),
	MR_FIELD(4, 4, write.rkey),
	MR_FIELD(8, 8, write.va),
	MR_FIELD(16, 4, write.length),
	MR_FIELD(20, 4, write.offset),
	MR_FIELD(24, 4, write.rsn),
	MR_FIELD(28, 4, write.imm),
	{}
};

static const struct mr_field mr_read_req_fields[] = {
	MR_FIELD(0, 4, read_req.msn),
	MR_FIELD(4, 4, read_req.rkey),
	MR_FIELD(8, 8, read_req.va),
	MR_FIELD(16, 4, read_req.length),
	{}
};

static const struct mr_field mr_atomic_fields[] = {
	MR_FIELD(0, 4, atomic.msn),
	MR_FIELD(4, 4, atomic.rkey),
	MR_FIELD(8, 8, atomic.va),
	MR_FIELD(16, 8, atomic.swap_add),
	MR_FIELD(24, 8, atomic.compare),
	{}
};

static const struct mr_field mr_read_resp_fields[] = {
	MR_FIELD(0, 4, read_resp.msn),
	MR_FIELD(4, 4, read_resp.length),
	MR_FIELD(8, 4, read_resp.offset),
	{}
};

static const struct mr_field mr_atomic_resp_fields[] = {
	MR_FIELD(0, 4, atomic_resp.msn),
	MR_FIELD(4, 8, atomic_resp.orig),
	{}
};

static_assert(MR_WIRE_SACK_WORDS == 4, "the ACK table lists 4 SACK words");
static const struct mr_field mr_ack_fields[] = {
	MR_FIELD(0, 4, ack.cum_psn),
	MR_FIELD(4, 8, ack.sack[0]),
	MR_FIELD(12, 8, ack.sack[1]),
	MR_FIELD(20, 8, ack.sack[2]),
	MR_FIELD(28, 8, ack.sack[3]),
	MR_FIELD(36, 4, ack.msn_done),
	MR_FIELD(40, 4, ack.ecn_count),
	MR_FIELD(44, 4, ack.rate_hint),
	{}
};

/* Byte 5 is reserved. */
static const struct mr_field mr_nak_fields[] = {
	MR_FIELD(0, 4, nak.msn),
	MR_FIELD(4, 1, nak.code),
	MR_FIELD(6, 2, nak.rnr_delay),
	{}
};

static const struct mr_field mr_ud_fields[] = {
	MR_FIELD(0, 4, ud.src_qpn),
	MR_FIELD(4, 4, ud.qkey),
	MR_FIELD(8, 4, ud.imm),
	{}
};

static const struct mr_field mr_hello_fields[] = {
	MR_FIELD(0, 8, hello.src_tag),
	MR_FIELD(8, 4, hello.flags),
	MR_FIELD(12, 4, hello.rate_hint),
	{}
};

/* The MR_WIRE_F_* that a family of opcodes shares. */
#define MR_F_SEND (MR_WIRE_F_PAYLOAD | MR_WIRE_F_CONSUMES)
#define MR_F_RC_SEND (MR_F_SEND | MR_WIRE_F_ORDERED)
#define MR_F_WRITE (MR_WIRE_F_PAYLOAD | MR_WIRE_F_WRITE | MR_WIRE_F_ORDERED)
#define MR_F_UD (MR_F_SEND | MR_WIRE_F_DATAGRAM)
#define MR_F_READ (MR_WIRE_F_READ_OR_ATOMIC | MR_WIRE_F_ORDERED)
#define MR_F_ATOMIC (MR_F_READ | MR_WIRE_F_ATOMIC)

static const struct mr_op_info {
	u8 len;		/* opcode header length; 0: no such opcode */
	u8 base_flags;	/* the base header flags the opcode may carry */
	u16 flags;	/* MR_WIRE_F_*: what the opcode is */
	const struct mr_field *fields;
} mr_ops[MR_OP_MAX + 1] = {
	[MR_OP_SEND] = { MR_SEND_HDR_LEN, MR_RECV_FLAGS, MR_F_RC_SEND,
			 mr_send_fields },
	[MR_OP_SEND_IMM] = { MR_SEND_IMM_HDR_LEN, MR_RECV_FLAGS,
			     MR_F_RC_SEND | MR_WIRE_F_IMM, mr_send_fields },
	[MR_OP_SEND_INV] = { MR_SEND_IMM_HDR_LEN, MR_RECV_FLAGS,
			     MR_F_RC_SEND | MR_WIRE_F_INVALIDATES,
			     mr_send_inv_fields },
	[MR_OP_WRITE] = { MR_WRITE_HDR_LEN, MR_SEQ_FLAGS, MR_F_WRITE,
			  mr_write_fields },
	[MR_OP_WRITE_IMM] = { MR_WRITE_IMM_HDR_LEN, MR_RECV_FLAGS,
			      MR_F_WRITE | MR_WIRE_F_CONSUMES | MR_WIRE_F_IMM,
			      mr_write_fields },
	[MR_OP_READ_REQ] = { MR_READ_REQ_HDR_LEN, MR_SEQ_FLAGS,
			     MR_F_READ, mr_read_req_fields },
	[MR_OP_CMP_SWAP] = { MR_CMP_SWAP_HDR_LEN, MR_SEQ_FLAGS, MR_F_ATOMIC,
			     mr_atomic_fields },
	[MR_OP_FETCH_ADD] = { MR_FETCH_ADD_HDR_LEN, MR_SEQ_FLAGS, MR_F_ATOMIC,
			      mr_atomic_fields },
	[MR_OP_UD_SEND] = { MR_UD_HDR_LEN, MR_FLAG_SOLICITED, MR_F_UD,
			    mr_ud_fields },
	[MR_OP_UD_SEND_IMM] = { MR_UD_IMM_HDR_LEN, MR_FLAG_SOLICITED,
				MR_F_UD | MR_WIRE_F_IMM, mr_ud_fields },
	[MR_OP_READ_RESP] = { MR_READ_RESP_HDR_LEN, MR_SEQ_FLAGS,
			      MR_WIRE_F_RESPONSE | MR_WIRE_F_PAYLOAD,
			      mr_read_resp_fields },
	[MR_OP_ATOMIC_RESP] = { MR_ATOMIC_RESP_HDR_LEN, MR_SEQ_FLAGS,
				MR_WIRE_F_RESPONSE, mr_atomic_resp_fields },
	[MR_OP_ACK] = { MR_ACK_HDR_LEN, 0, MR_WIRE_F_CONTROL, mr_ack_fields },
	[MR_OP_NAK] = { MR_NAK_HDR_LEN, 0, MR_WIRE_F_CONTROL, mr_nak_fields },
	[MR_OP_HELLO] = { MR_HELLO_HDR_LEN, 0, MR_WIRE_F_CONTROL,
			  mr_hello_fields },
};

static const struct mr_op_info *mr_wire_op_info(unsigned int opcode)
{
	if (opcode > MR_OP_MAX || !mr_ops[opcode].len)
		return NULL;
	return &mr_ops[opcode];
}

/* Base plus opcode header length, or 0 for an unknown opcode. */
unsigned int mr_wire_hdr_len(unsigned int opcode)
{
	const struct mr_op_info *op = mr_wire_op_info(opcode);

	return op ? MR_BASE_HDR_LEN + op->len : 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_wire_hdr_len);

/* What @opcode is (MR_WIRE_F_*), or 0 for an unknown opcode. */
unsigned int mr_wire_op_flags(unsigned int opcode)
{
	const struct mr_op_info *op = mr_wire_op_info(opcode);

	return op ? op->flags : 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_wire_op_flags);

/* A message slice: it lies inside the message, and only an empty one is 0. */
static int mr_wire_check_slice(u32 length, u32 offset, u32 payload)
{
	if (length > MR_WIRE_MAX_MSG_LEN)
		return -MR_EFIELD;
	if (payload > MR_WIRE_MAX_PAYLOAD || (u64)offset + payload > length)
		return -MR_ELENGTH;
	if (!payload && length)
		return -MR_ELENGTH;
	return 0;
}

/* A remote range must not wrap around the end of the address space. */
static int mr_wire_check_range(u64 va, u64 length)
{
	if (length && va + (length - 1) < va)
		return -MR_EFIELD;
	return 0;
}

/* An ACK: SACK bit 0 is cum_psn, never received; psn names a packet it has. */
static int mr_wire_check_ack(u32 psn, const struct mr_ack_hdr *ack)
{
	u32 d = psn - ack->cum_psn;

	if (ack->sack[0] & 1)
		return -MR_EFIELD;
	if (mr_seq_before(psn, ack->cum_psn))
		return 0;
	if (d < MR_WIRE_SACK_BITS && (ack->sack[d / 64] >> (d % 64) & 1))
		return 0;
	return -MR_EFIELD;
}

/* A datagram rides no path, belongs to no connection and fits one packet. */
static int mr_wire_check_ud(const struct mr_pkt *pkt)
{
	if (pkt->base.path || pkt->base.epoch || pkt->base.tag ||
	    pkt->ud.src_qpn > MR_WIRE_QPN_MAX)
		return -MR_EFIELD;
	if (pkt->payload_len > MR_WIRE_MAX_PAYLOAD)
		return -MR_ELENGTH;
	return 0;
}

static int mr_wire_check_nak(const struct mr_nak_hdr *nak)
{
	if (nak->code < MR_NAK_REMOTE_ACCESS || nak->code > MR_NAK_RNR)
		return -MR_EFIELD;
	if (nak->rnr_delay && nak->code != MR_NAK_RNR)
		return -MR_EFIELD;
	return 0;
}

/* A HELLO has no sequence; its sender has a tag, and may know ours. */
static int mr_wire_check_hello(const struct mr_pkt *pkt)
{
	if (pkt->base.psn || pkt->base.epoch || !pkt->hello.src_tag ||
	    pkt->hello.flags & ~(MR_HELLO_KNOWN | MR_HELLO_REPLY))
		return -MR_EFIELD;
	if ((pkt->hello.flags & MR_HELLO_KNOWN) && !pkt->base.tag)
		return -MR_EFIELD;
	return 0;
}

/* The checks on values that both encode and decode run. */
static int mr_wire_check(const struct mr_pkt *pkt, const struct mr_op_info *op)
{
	const struct mr_base_hdr *b = &pkt->base;
	int err;

	if (b->flags & ~op->base_flags)
		return -MR_EFLAGS;
	if (!(op->flags & MR_WIRE_F_ORDERED) && (b->order || b->stream))
		return -MR_ERESERVED;
	if (b->path >= MR_WIRE_MAX_PATHS || b->qpn > MR_WIRE_QPN_MAX)
		return -MR_EFIELD;
	if (!(op->flags & MR_WIRE_F_PAYLOAD) && pkt->payload_len)
		return -MR_ELENGTH;
	/* A connection's packets name their receiver's tag, datagrams none. */
	if (!b->tag && b->opcode != MR_OP_HELLO &&
	    !(op->flags & MR_WIRE_F_DATAGRAM))
		return -MR_EFIELD;

	switch (b->opcode) {
	case MR_OP_SEND:
	case MR_OP_SEND_IMM:
	case MR_OP_SEND_INV:
		return mr_wire_check_slice(pkt->send.length, pkt->send.offset,
				      pkt->payload_len);
	case MR_OP_WRITE:
	case MR_OP_WRITE_IMM:
		err = mr_wire_check_slice(pkt->write.length, pkt->write.offset,
					  pkt->payload_len);
		return err ? err : mr_wire_check_range(pkt->write.va,
						  pkt->write.length);
	case MR_OP_READ_REQ:
		if (pkt->read_req.length > MR_WIRE_MAX_MSG_LEN)
			return -MR_EFIELD;
		return mr_wire_check_range(pkt->read_req.va, pkt->read_req.length);
	case MR_OP_CMP_SWAP:
	case MR_OP_FETCH_ADD:
		return mr_wire_check_range(pkt->atomic.va, MR_WIRE_ATOMIC_LEN);
	case MR_OP_READ_RESP:
		/* Empty inside the READ: a resent slice whose region is gone. */
		if (!pkt->payload_len &&
		    pkt->read_resp.offset < pkt->read_resp.length &&
		    pkt->read_resp.length <= MR_WIRE_MAX_MSG_LEN)
			return 0;
		return mr_wire_check_slice(pkt->read_resp.length,
				      pkt->read_resp.offset, pkt->payload_len);
	case MR_OP_ACK:
		return mr_wire_check_ack(b->psn, &pkt->ack);
	case MR_OP_NAK:
		return mr_wire_check_nak(&pkt->nak);
	case MR_OP_UD_SEND:
	case MR_OP_UD_SEND_IMM:
		return mr_wire_check_ud(pkt);
	case MR_OP_HELLO:
		return mr_wire_check_hello(pkt);
	}
	return 0;
}

/* Whether @f is part of the header of @op: see the field tables. */
static bool mr_wire_has_field(const struct mr_op_info *op, const struct mr_field *f)
{
	return f->size && f->at + f->size <= op->len;
}

/* Reads the opcode header at p; the caller checked the length. */
static void mr_wire_get_op(const u8 *p, struct mr_pkt *pkt,
			   const struct mr_op_info *op)
{
	const struct mr_field *f;

	for (f = op->fields; mr_wire_has_field(op, f); f++) {
		u8 *v = (u8 *)pkt + f->member;

		if (f->size == 1)
			*v = p[f->at];
		else if (f->size == 2)
			*(u16 *)v = mr_get_be16(p + f->at);
		else if (f->size == 4)
			*(u32 *)v = mr_get_be32(p + f->at);
		else
			*(u64 *)v = mr_get_be64(p + f->at);
	}
}

/* Writes the opcode header at p, every byte of it: reserved ones are 0. */
static void mr_wire_put_op(const struct mr_pkt *pkt, u8 *p,
			   const struct mr_op_info *op)
{
	const struct mr_field *f;

	__builtin_memset(p, 0, op->len);
	for (f = op->fields; mr_wire_has_field(op, f); f++) {
		const u8 *v = (const u8 *)pkt + f->member;

		if (f->size == 1)
			p[f->at] = *v;
		else if (f->size == 2)
			mr_put_be16(p + f->at, *(const u16 *)v);
		else if (f->size == 4)
			mr_put_be32(p + f->at, *(const u32 *)v);
		else
			mr_put_be64(p + f->at, *(const u64 *)v);
	}
}

/**
 * mr_wire_decode() - parse and validate the headers of a received packet
 * @buf: the UDP payload
 * @len: its length; nothing at or beyond buf + len is read
 * @pkt: filled in on success, fields an opcode does not have are zero
 *
 * Return: 0, or a negated enum mr_err naming the first check that failed.
 * A packet that fails is garbage and is dropped without an answer.
 */
int mr_wire_decode(const u8 *buf, u32 len, struct mr_pkt *pkt)
{
	const struct mr_op_info *op;

	*pkt = (struct mr_pkt){ 0 };
	if (len < MR_BASE_HDR_LEN)
		return -MR_ETRUNC;
	if (buf[0] != MR_WIRE_VERSION)
		return -MR_EVERSION;
	op = mr_wire_op_info(buf[1]);
	if (!op)
		return -MR_EOPCODE;
	if (len < MR_BASE_HDR_LEN + op->len)
		return -MR_ETRUNC;
	if (buf[1] == MR_OP_NAK && buf[MR_BASE_HDR_LEN + 5])
		return -MR_ERESERVED;

	pkt->base.opcode = buf[1];
	pkt->base.flags = buf[2];
	pkt->base.path = buf[3];
	pkt->base.qpn = mr_get_be24(buf + 5);
	pkt->base.psn = mr_get_be32(buf + 8);
	pkt->base.epoch = mr_get_be16(buf + 12);
	pkt->base.order = buf[4];
	pkt->base.stream = mr_get_be16(buf + 14);
	pkt->base.tag = mr_get_be64(buf + 16);
	mr_wire_get_op(buf + MR_BASE_HDR_LEN, pkt, op);
	pkt->hdr_len = MR_BASE_HDR_LEN + op->len;
	pkt->payload_len = len - pkt->hdr_len;
	return mr_wire_check(pkt, op);
}
EXPORT_SYMBOL_IF_KUNIT(mr_wire_decode);

/**
 * mr_wire_encode() - write the headers of a packet to send
 * @pkt: the headers, and in payload_len the length of the payload that
 *	 the caller puts right after them
 * @buf: where the headers go
 * @size: room at buf
 *
 * Return: the header length written, or a negated enum mr_err when @pkt
 * would not pass mr_wire_decode() at the peer or @buf is too small.
 */
int mr_wire_encode(const struct mr_pkt *pkt, u8 *buf, u32 size)
{
	const struct mr_op_info *op = mr_wire_op_info(pkt->base.opcode);
	int err;

	if (!op)
		return -MR_EOPCODE;
	err = mr_wire_check(pkt, op);
	if (err)
		return err;
	if (size < MR_BASE_HDR_LEN + op->len)
		return -MR_ENOSPC;

	buf[0] = MR_WIRE_VERSION;
	buf[1] = pkt->base.opcode;
	buf[2] = pkt->base.flags;
	buf[3] = pkt->base.path;
	buf[4] = pkt->base.order;
	mr_put_be24(buf + 5, pkt->base.qpn);
	mr_put_be32(buf + 8, pkt->base.psn);
	mr_put_be16(buf + 12, pkt->base.epoch);
	mr_put_be16(buf + 14, pkt->base.stream);
	mr_put_be64(buf + 16, pkt->base.tag);
	mr_wire_put_op(pkt, buf + MR_BASE_HDR_LEN, op);
	return (int)(MR_BASE_HDR_LEN + op->len);
}
EXPORT_SYMBOL_IF_KUNIT(mr_wire_encode);
