// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The fuzz body: decode arbitrary bytes, and check what must hold for any
 * input. The caller passes a buffer of exactly @size bytes, so ASan sees
 * any read past the packet.
 */
#include <string.h>

#include "fuzz_one.h"
#include "hello.h"
#include "sack.h"
#include "wire.h"

static int popcount_map(const u64 *map)
{
	int n = 0, w;

	for (w = 0; w < MR_SACK_WORDS; w++)
		n += __builtin_popcountll(map[w]);
	return n;
}

/* An ACK the decoder let through, applied to a scoreboard with 200 sent. */
static int fuzz_ack(const struct mr_pkt *pkt)
{
	static u16 mark[MR_SACK_WINDOW];
	static struct mr_sack_tx tx;
	struct mr_sack_res res;
	u32 i, psn, flight;
	int rc;

	mr_sack_tx_init(&tx, pkt->ack.cum_psn - (pkt->ack.msn_done & 0xff),
			mark);
	for (i = 0; i < 200; i++)
		if (mr_sack_tx_send(&tx, &psn))
			return 20;
	rc = mr_sack_tx_ack(&tx, pkt->base.epoch & 1, pkt->ack.cum_psn,
			    pkt->ack.sack, &res);
	if (rc && rc != -MR_ESTALE && rc != -MR_EFIELD)
		return 21;
	flight = tx.nxt - tx.una;
	if (flight > MR_SACK_WINDOW || tx.n_sacked + tx.n_lost > flight)
		return 22;
	if (popcount_map(res.acked) != (int)res.n_acked ||
	    popcount_map(res.lost) != (int)res.n_lost)
		return 23;
	if (rc && (res.n_acked || res.n_lost || tx.una != tx.start))
		return 24;
	if (mr_sack_tx_pipe(&tx) > flight)
		return 25;
	return 0;
}

/*
 * A HELLO the decoder let through, at an end whose tag it does not carry:
 * it proves nothing, so it changes neither the peer's tag nor whether the
 * peer holds ours, and any answer names the HELLO's sender, as a reply.
 */
static int fuzz_hello(const struct mr_pkt *pkt)
{
	static const u64 peer = 0x5eed5eed5eed5eedull;
	struct mr_hello h;
	struct mr_pkt reply;
	u8 hdr[MR_MAX_HDR_LEN];

	/* Any tag but the HELLO's, and never 0. */
	mr_hello_init(&h, pkt->base.tag + 1 ? pkt->base.tag + 1 : 1);
	if (pkt->hello.src_tag == peer)
		return 0;
	h.peer = peer;
	if (mr_hello_rcv(&h, pkt, 1, &reply)) {
		if (reply.base.tag != pkt->hello.src_tag ||
		    reply.hello.src_tag != h.local ||
		    reply.hello.flags != MR_HELLO_REPLY)
			return 30;
		if (mr_wire_encode(&reply, hdr, sizeof(hdr)) <= 0)
			return 31;
	}
	if (h.peer != peer || h.known || h.n_proven)
		return 32;
	return 0;
}

int mr_fuzz_one(const unsigned char *data, size_t size)
{
	static struct mr_sack_rx rx;
	u8 hdr[MR_MAX_HDR_LEN];
	struct mr_pkt pkt, ack;
	int rc, n;

	if (size > 0xffff)
		return 0;
	rc = mr_wire_decode(data, (u32)size, &pkt);
	if (rc > 0 || rc < -MR_ELENGTH)
		return 1;
	if (rc)
		return 0;
	if (pkt.hdr_len != mr_wire_hdr_len(pkt.base.opcode) ||
	    pkt.hdr_len + pkt.payload_len != size)
		return 2;
	/* Whatever decodes re-encodes to the very same header bytes. */
	n = mr_wire_encode(&pkt, hdr, sizeof(hdr));
	if (n != (int)pkt.hdr_len || memcmp(hdr, data, (size_t)n))
		return 3;
	if (mr_wire_encode(&pkt, hdr, (u32)n - 1) != -MR_ENOSPC)
		return 4;
	if (pkt.base.opcode == MR_OP_ACK) {
		rc = fuzz_ack(&pkt);
		if (rc)
			return rc;
	}
	if (pkt.base.opcode == MR_OP_HELLO) {
		rc = fuzz_hello(&pkt);
		if (rc)
			return rc;
	}

	/* Any packet recorded, the ACK of the window is valid on the wire. */
	mr_sack_rx_record(&rx, pkt.base.epoch, pkt.base.psn);
	memset(&ack, 0, sizeof(ack));
	ack.base.opcode = MR_OP_ACK;
	ack.base.path = pkt.base.path;
	ack.base.epoch = rx.epoch;
	ack.base.tag = pkt.base.tag | 1;
	mr_sack_rx_fill_ack(&rx, &ack.ack);
	ack.base.psn = ack.ack.cum_psn - 1;
	if (mr_wire_encode(&ack, hdr, sizeof(hdr)) != (int)MR_MAX_HDR_LEN)
		return 5;
	return 0;
}
