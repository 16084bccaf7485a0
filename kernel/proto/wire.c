// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Encoding and decoding of MetaRoCE headers. Both directions run the same
 * checks, so that whatever decodes re-encodes to the same bytes and nothing
 * is ever sent that a peer would drop as malformed.
 */
#include "wire.h"

/* Flags by kind of packet: sequenced ones may ask for an ACK. */
#define MR_SEQ_FLAGS MR_FLAG_ACK_REQ
#define MR_RECV_FLAGS (MR_FLAG_ACK_REQ | MR_FLAG_SOLICITED)

static const struct mr_op_info {
	u8 len;		/* opcode header length; 0: no such opcode */
	u8 flags;	/* the flags the opcode may carry */
	u8 data;	/* whether a payload may follow */
} mr_ops[MR_OP_MAX + 1] = {
	[MR_OP_SEND] = { MR_SEND_HDR_LEN, MR_RECV_FLAGS, 1 },
	[MR_OP_SEND_IMM] = { MR_SEND_IMM_HDR_LEN, MR_RECV_FLAGS, 1 },
	[MR_OP_SEND_INV] = { MR_SEND_IMM_HDR_LEN, MR_RECV_FLAGS, 1 },
	[MR_OP_WRITE] = { MR_WRITE_HDR_LEN, MR_SEQ_FLAGS, 1 },
	[MR_OP_WRITE_IMM] = { MR_WRITE_IMM_HDR_LEN, MR_RECV_FLAGS, 1 },
	[MR_OP_READ_REQ] = { MR_READ_REQ_HDR_LEN, MR_SEQ_FLAGS, 0 },
	[MR_OP_CMP_SWAP] = { MR_CMP_SWAP_HDR_LEN, MR_SEQ_FLAGS, 0 },
	[MR_OP_FETCH_ADD] = { MR_FETCH_ADD_HDR_LEN, MR_SEQ_FLAGS, 0 },
	[MR_OP_READ_RESP] = { MR_READ_RESP_HDR_LEN, MR_SEQ_FLAGS, 1 },
	[MR_OP_ATOMIC_RESP] = { MR_ATOMIC_RESP_HDR_LEN, MR_SEQ_FLAGS, 0 },
	[MR_OP_ACK] = { MR_ACK_HDR_LEN, 0, 0 },
	[MR_OP_NAK] = { MR_NAK_HDR_LEN, 0, 0 },
};

static const struct mr_op_info *mr_op_info(unsigned int opcode)
{
	if (opcode > MR_OP_MAX || !mr_ops[opcode].len)
		return NULL;
	return &mr_ops[opcode];
}

/* Base plus opcode header length, or 0 for an unknown opcode. */
unsigned int mr_wire_hdr_len(unsigned int opcode)
{
	const struct mr_op_info *op = mr_op_info(opcode);

	return op ? MR_BASE_HDR_LEN + op->len : 0;
}

/* A message slice: it lies inside the message, and only an empty one is 0. */
static int mr_check_slice(u32 length, u32 offset, u32 payload)
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
static int mr_check_range(u64 va, u64 length)
{
	if (length && va + (length - 1) < va)
		return -MR_EFIELD;
	return 0;
}

/* An ACK: SACK bit 0 is cum_psn, never received; psn names a packet it has. */
static int mr_check_ack(u32 psn, const struct mr_ack_hdr *ack)
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

static int mr_check_nak(const struct mr_nak_hdr *nak)
{
	if (nak->code < MR_NAK_REMOTE_ACCESS || nak->code > MR_NAK_RNR)
		return -MR_EFIELD;
	if (nak->rnr_delay && nak->code != MR_NAK_RNR)
		return -MR_EFIELD;
	return 0;
}

/* The checks on values that both encode and decode run. */
static int mr_check(const struct mr_pkt *pkt, const struct mr_op_info *op)
{
	const struct mr_base_hdr *b = &pkt->base;
	int err;

	if (b->flags & ~op->flags)
		return -MR_EFLAGS;
	if (b->path >= MR_WIRE_MAX_PATHS || b->qpn > MR_WIRE_QPN_MAX)
		return -MR_EFIELD;
	if (!op->data && pkt->payload_len)
		return -MR_ELENGTH;

	switch (b->opcode) {
	case MR_OP_SEND:
	case MR_OP_SEND_IMM:
	case MR_OP_SEND_INV:
		return mr_check_slice(pkt->send.length, pkt->send.offset,
				      pkt->payload_len);
	case MR_OP_WRITE:
	case MR_OP_WRITE_IMM:
		err = mr_check_slice(pkt->write.length, pkt->write.offset,
				     pkt->payload_len);
		return err ? err : mr_check_range(pkt->write.va,
						  pkt->write.length);
	case MR_OP_READ_REQ:
		if (pkt->read_req.length > MR_WIRE_MAX_MSG_LEN)
			return -MR_EFIELD;
		return mr_check_range(pkt->read_req.va, pkt->read_req.length);
	case MR_OP_CMP_SWAP:
	case MR_OP_FETCH_ADD:
		return mr_check_range(pkt->atomic.va, MR_WIRE_ATOMIC_LEN);
	case MR_OP_READ_RESP:
		return mr_check_slice(pkt->read_resp.length,
				      pkt->read_resp.offset, pkt->payload_len);
	case MR_OP_ACK:
		return mr_check_ack(b->psn, &pkt->ack);
	case MR_OP_NAK:
		return mr_check_nak(&pkt->nak);
	}
	return 0;
}

/* Reads the opcode header at p; the caller checked the length. */
static void mr_get_op(const u8 *p, struct mr_pkt *pkt)
{
	unsigned int i;

	switch (pkt->base.opcode) {
	case MR_OP_SEND:
	case MR_OP_SEND_IMM:
	case MR_OP_SEND_INV:
		pkt->send.msn = mr_get_be32(p);
		pkt->send.rsn = mr_get_be32(p + 4);
		pkt->send.length = mr_get_be32(p + 8);
		pkt->send.offset = mr_get_be32(p + 12);
		if (pkt->base.opcode == MR_OP_SEND_IMM)
			pkt->send.imm = mr_get_be32(p + 16);
		if (pkt->base.opcode == MR_OP_SEND_INV)
			pkt->send.inv_rkey = mr_get_be32(p + 16);
		break;
	case MR_OP_WRITE:
	case MR_OP_WRITE_IMM:
		pkt->write.msn = mr_get_be32(p);
		pkt->write.rkey = mr_get_be32(p + 4);
		pkt->write.va = mr_get_be64(p + 8);
		pkt->write.length = mr_get_be32(p + 16);
		pkt->write.offset = mr_get_be32(p + 20);
		if (pkt->base.opcode == MR_OP_WRITE_IMM) {
			pkt->write.rsn = mr_get_be32(p + 24);
			pkt->write.imm = mr_get_be32(p + 28);
		}
		break;
	case MR_OP_READ_REQ:
		pkt->read_req.msn = mr_get_be32(p);
		pkt->read_req.rkey = mr_get_be32(p + 4);
		pkt->read_req.va = mr_get_be64(p + 8);
		pkt->read_req.length = mr_get_be32(p + 16);
		break;
	case MR_OP_CMP_SWAP:
	case MR_OP_FETCH_ADD:
		pkt->atomic.msn = mr_get_be32(p);
		pkt->atomic.rkey = mr_get_be32(p + 4);
		pkt->atomic.va = mr_get_be64(p + 8);
		pkt->atomic.swap_add = mr_get_be64(p + 16);
		if (pkt->base.opcode == MR_OP_CMP_SWAP)
			pkt->atomic.compare = mr_get_be64(p + 24);
		break;
	case MR_OP_READ_RESP:
		pkt->read_resp.msn = mr_get_be32(p);
		pkt->read_resp.length = mr_get_be32(p + 4);
		pkt->read_resp.offset = mr_get_be32(p + 8);
		break;
	case MR_OP_ATOMIC_RESP:
		pkt->atomic_resp.msn = mr_get_be32(p);
		pkt->atomic_resp.orig = mr_get_be64(p + 4);
		break;
	case MR_OP_ACK:
		pkt->ack.cum_psn = mr_get_be32(p);
		for (i = 0; i < MR_WIRE_SACK_WORDS; i++)
			pkt->ack.sack[i] = mr_get_be64(p + 4 + 8 * i);
		pkt->ack.msn_done = mr_get_be32(p + 36);
		pkt->ack.ecn_count = mr_get_be32(p + 40);
		pkt->ack.rate_hint = mr_get_be32(p + 44);
		break;
	case MR_OP_NAK:
		pkt->nak.msn = mr_get_be32(p);
		pkt->nak.code = p[4];
		pkt->nak.rnr_delay = mr_get_be16(p + 6);
		break;
	}
}

/* Writes the opcode header at p, every byte of it. */
static void mr_put_op(const struct mr_pkt *pkt, u8 *p)
{
	unsigned int i;

	switch (pkt->base.opcode) {
	case MR_OP_SEND:
	case MR_OP_SEND_IMM:
	case MR_OP_SEND_INV:
		mr_put_be32(p, pkt->send.msn);
		mr_put_be32(p + 4, pkt->send.rsn);
		mr_put_be32(p + 8, pkt->send.length);
		mr_put_be32(p + 12, pkt->send.offset);
		if (pkt->base.opcode == MR_OP_SEND_IMM)
			mr_put_be32(p + 16, pkt->send.imm);
		if (pkt->base.opcode == MR_OP_SEND_INV)
			mr_put_be32(p + 16, pkt->send.inv_rkey);
		break;
	case MR_OP_WRITE:
	case MR_OP_WRITE_IMM:
		mr_put_be32(p, pkt->write.msn);
		mr_put_be32(p + 4, pkt->write.rkey);
		mr_put_be64(p + 8, pkt->write.va);
		mr_put_be32(p + 16, pkt->write.length);
		mr_put_be32(p + 20, pkt->write.offset);
		if (pkt->base.opcode == MR_OP_WRITE_IMM) {
			mr_put_be32(p + 24, pkt->write.rsn);
			mr_put_be32(p + 28, pkt->write.imm);
		}
		break;
	case MR_OP_READ_REQ:
		mr_put_be32(p, pkt->read_req.msn);
		mr_put_be32(p + 4, pkt->read_req.rkey);
		mr_put_be64(p + 8, pkt->read_req.va);
		mr_put_be32(p + 16, pkt->read_req.length);
		break;
	case MR_OP_CMP_SWAP:
	case MR_OP_FETCH_ADD:
		mr_put_be32(p, pkt->atomic.msn);
		mr_put_be32(p + 4, pkt->atomic.rkey);
		mr_put_be64(p + 8, pkt->atomic.va);
		mr_put_be64(p + 16, pkt->atomic.swap_add);
		if (pkt->base.opcode == MR_OP_CMP_SWAP)
			mr_put_be64(p + 24, pkt->atomic.compare);
		break;
	case MR_OP_READ_RESP:
		mr_put_be32(p, pkt->read_resp.msn);
		mr_put_be32(p + 4, pkt->read_resp.length);
		mr_put_be32(p + 8, pkt->read_resp.offset);
		break;
	case MR_OP_ATOMIC_RESP:
		mr_put_be32(p, pkt->atomic_resp.msn);
		mr_put_be64(p + 4, pkt->atomic_resp.orig);
		break;
	case MR_OP_ACK:
		mr_put_be32(p, pkt->ack.cum_psn);
		for (i = 0; i < MR_WIRE_SACK_WORDS; i++)
			mr_put_be64(p + 4 + 8 * i, pkt->ack.sack[i]);
		mr_put_be32(p + 36, pkt->ack.msn_done);
		mr_put_be32(p + 40, pkt->ack.ecn_count);
		mr_put_be32(p + 44, pkt->ack.rate_hint);
		break;
	case MR_OP_NAK:
		mr_put_be32(p, pkt->nak.msn);
		p[4] = pkt->nak.code;
		p[5] = 0;
		mr_put_be16(p + 6, pkt->nak.rnr_delay);
		break;
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
	op = mr_op_info(buf[1]);
	if (!op)
		return -MR_EOPCODE;
	if (len < MR_BASE_HDR_LEN + op->len)
		return -MR_ETRUNC;
	if (buf[4] || mr_get_be16(buf + 14))
		return -MR_ERESERVED;
	if (buf[1] == MR_OP_NAK && buf[MR_BASE_HDR_LEN + 5])
		return -MR_ERESERVED;

	pkt->base.opcode = buf[1];
	pkt->base.flags = buf[2];
	pkt->base.path = buf[3];
	pkt->base.qpn = mr_get_be24(buf + 5);
	pkt->base.psn = mr_get_be32(buf + 8);
	pkt->base.epoch = mr_get_be16(buf + 12);
	mr_get_op(buf + MR_BASE_HDR_LEN, pkt);
	pkt->hdr_len = MR_BASE_HDR_LEN + op->len;
	pkt->payload_len = len - pkt->hdr_len;
	return mr_check(pkt, op);
}

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
	const struct mr_op_info *op = mr_op_info(pkt->base.opcode);
	int err;

	if (!op)
		return -MR_EOPCODE;
	err = mr_check(pkt, op);
	if (err)
		return err;
	if (size < MR_BASE_HDR_LEN + op->len)
		return -MR_ENOSPC;

	buf[0] = MR_WIRE_VERSION;
	buf[1] = pkt->base.opcode;
	buf[2] = pkt->base.flags;
	buf[3] = pkt->base.path;
	buf[4] = 0;
	mr_put_be24(buf + 5, pkt->base.qpn);
	mr_put_be32(buf + 8, pkt->base.psn);
	mr_put_be16(buf + 12, pkt->base.epoch);
	mr_put_be16(buf + 14, 0);
	mr_put_op(pkt, buf + MR_BASE_HDR_LEN);
	return (int)(MR_BASE_HDR_LEN + op->len);
}
