// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Acknowledgments: the receiving side of the peer's paths. Each path id
 * has a receive window (proto/sack.c); an ACK carries the path's whole
 * window, "MSN done", the path's CE count and the peer's share of this
 * device's ingress (share.c), and goes back to the UDP source port of the
 * packets it acknowledges. ACKs go at once for ACK_REQ,
 * a packet that leaves a new hole or fills one, a duplicate, or a new
 * epoch; else every MR_ACK_EVERY packets of the path; and on every path
 * with unacknowledged packets whenever a message completes, at most
 * MR_ACK_BURST of them at once (the rest wait for the held ACKs' timer).
 *
 * NAKs refuse a message. After a fatal one (REMOTE_ACCESS,
 * INVALID_REQUEST) the packets of the connection are answered with it,
 * at most once per MR_FATAL_NAK_GAP_NS (resp.c), and the QP moves to ERR.
 */
#include <linux/module.h>

#include "ack.h"
#include "counters.h"
#include "qp.h"
#include "share.h"
#include "tx.h"

static uint ack_delay_us = 200;
module_param(ack_delay_us, uint, 0644);
MODULE_PARM_DESC(ack_delay_us, "the longest a coalesced ACK waits, us (default 200)");

/* The IB RNR timer codes in units of 10 us (code 0: 655.36 ms, saturated). */
static const u16 mr_ack_rnr_delay[32] = {
	65535, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
	256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192,
	12288, 16384, 24576, 32768, 49152,
};

/* RTR: every path of the peer starts at the PSN it agreed to send from. */
void mr_ack_init(struct mr_xport *x)
{
	u32 i;

	for (i = 0; i < MR_WIRE_MAX_PATHS; i++) {
		memset(&x->rx[i], 0, sizeof(x->rx[i]));
		mr_sack_rx_init(&x->rx[i].win, x->qp->attr.rq_psn);
	}
	x->ack_ns = 0;
}

/* Acknowledge path @id: its whole window, naming packet @psn. */
void mr_ack_path(struct mr_xport *x, u32 id, u32 psn)
{
	struct mr_rx_path *r = &x->rx[id];
	struct mr_pkt pkt = {};

	pkt.base.opcode = MR_OP_ACK;
	pkt.base.path = id;
	pkt.base.epoch = r->win.epoch;
	pkt.base.qpn = x->qp->attr.dest_qp_num;
	pkt.base.psn = psn;
	mr_sack_rx_fill_ack(&r->win, &pkt.ack);
	pkt.ack.msn_done = x->rsp.msn_done;
	pkt.ack.ecn_count = r->ecn;
	pkt.ack.rate_hint = mr_share_hint(x);
	r->unacked = 0;
	mr_tx_control(x, &pkt, r->sport);
}

/**
 * mr_ack_arrival() - record a packet on its path
 * @x: the transport, locked
 * @pkt: a data packet (request or response) of the peer
 * @sport: its UDP source port, where the path's ACKs go
 * @ce: it arrived marked Congestion Experienced
 * @ack_now: set when a new packet must be acknowledged at once
 *
 * A duplicate is acknowledged here (the sender missed an ACK); packets of
 * an abandoned epoch or beyond the window are dropped. All three count as
 * duplicates.
 *
 * Return: the window's verdict; only MR_SACK_NEW goes on to be placed.
 */
enum mr_sack_rx_res mr_ack_arrival(struct mr_xport *x, const struct mr_pkt *pkt,
				   __be16 sport, bool ce, bool *ack_now)
{
	struct mr_dev *dev = to_mr_dev(x->qp->ibqp.device);
	u32 id = pkt->base.path, psn = pkt->base.psn;
	struct mr_rx_path *r = &x->rx[id];
	u16 prev_epoch = r->win.epoch;
	u32 prev_cum = r->win.cum;
	enum mr_sack_rx_res res;

	res = mr_sack_rx_record(&r->win, pkt->base.epoch, psn);
	if (res != MR_SACK_NEW) {
		mr_stats_inc(dev, MR_CNT_DUPLICATE_PACKETS);
		if (res == MR_SACK_DUP) {
			r->sport = sport;
			if (r->seen && r->win.epoch == r->epoch)
				mr_ack_path(x, id, psn);
		}
		return res;
	}
	*ack_now = mr_coalesce_at_once(pkt, r->seen, r->last_psn, prev_epoch,
				       prev_cum, r->win.cum);
	if (psn != prev_cum && prev_epoch == pkt->base.epoch)
		mr_stats_inc(dev, MR_CNT_OUT_OF_ORDER);
	r->sport = sport;
	/* The CE count is per path epoch, as the sender's is. */
	if (r->seen && r->epoch != r->win.epoch)
		r->ecn = 0;
	r->seen = true;
	r->epoch = r->win.epoch;
	r->last_psn = psn;
	r->unacked++;
	if (ce) {
		r->ecn++;
		mr_stats_inc(dev, MR_CNT_CE_MARKS);
	}
	mr_share_rx(x, pkt->hdr_len + pkt->payload_len);
	return res;
}

/* Held ACKs go at the latest ack_delay_us from now (timers.c). */
static void mr_ack_hold(struct mr_xport *x)
{
	if (!x->ack_ns)
		x->ack_ns = mr_xport_now() +
			    (u64)READ_ONCE(ack_delay_us) * NSEC_PER_USEC;
}

/*
 * After a new packet on path @id: its ACK now, or once enough are in, or
 * at the latest ack_delay_us later, so that an ACK held while the path has
 * nothing more to send (its message waits for a repair elsewhere) does not
 * make the sender's RTT samples, and so its timers and its view of the
 * queue, as long as that repair.
 */
void mr_ack_coalesce(struct mr_xport *x, u32 id, u32 psn, bool now)
{
	if (now || mr_coalesce_due(x->rx[id].unacked)) {
		mr_ack_path(x, id, psn);
		return;
	}
	mr_ack_hold(x);
}

/* The held ACKs are due (timers.c): every path with packets unacknowledged. */
void mr_ack_flush(struct mr_xport *x)
{
	u32 i;

	x->ack_ns = 0;
	for (i = 0; i < MR_WIRE_MAX_PATHS; i++) {
		struct mr_rx_path *r = &x->rx[i];

		if (r->seen && r->epoch == r->win.epoch && r->unacked)
			mr_ack_path(x, i, r->last_psn);
	}
}

/*
 * Acknowledge every path with packets not yet acknowledged, after a
 * completion. When that is one ACK (a one-packet message), another path
 * carries its "MSN done" too: a peer that leaves as soon as it has our
 * reply (ibv_rc_pingpong's last pong) would never answer a resend, so a
 * lost lone ACK would fail the QP with a retry error. At most
 * MR_ACK_BURST go now, so that one packet cannot draw an ACK on each of
 * 64 paths; the others are held (and counted).
 */
void mr_ack_all(struct mr_xport *x)
{
	u32 i, acks = 0, held = 0, spare = MR_WIRE_MAX_PATHS;

	for (i = 0; i < MR_WIRE_MAX_PATHS; i++) {
		struct mr_rx_path *r = &x->rx[i];

		if (!r->seen || r->epoch != r->win.epoch)
			continue;
		if (r->unacked && acks < MR_ACK_BURST) {
			mr_ack_path(x, i, r->last_psn);
			acks++;
		} else if (r->unacked) {
			held++;
		} else if (spare == MR_WIRE_MAX_PATHS) {
			spare = i;
		}
	}
	if (acks == 1 && spare < MR_WIRE_MAX_PATHS)
		mr_ack_path(x, spare, x->rx[spare].last_psn);
	if (held) {
		mr_stats_add(to_mr_dev(x->qp->ibqp.device), MR_CNT_ACKS_HELD,
			     held);
		mr_ack_hold(x);
	}
}

/* NAK @msn, naming the packet path @path, @epoch, @psn that caused it. */
static void mr_ack_send_nak(struct mr_xport *x, u32 path, u16 epoch, u32 psn,
			    __be16 sport, u32 msn, u8 code)
{
	struct mr_pkt pkt = {};

	pkt.base.opcode = MR_OP_NAK;
	pkt.base.path = path;
	pkt.base.epoch = epoch;
	pkt.base.qpn = x->qp->attr.dest_qp_num;
	pkt.base.psn = psn;
	pkt.nak.msn = msn;
	pkt.nak.code = code;
	if (code == MR_NAK_RNR) {
		pkt.nak.rnr_delay =
			mr_ack_rnr_delay[x->qp->attr.min_rnr_timer & 31];
		mr_stats_inc(to_mr_dev(x->qp->ibqp.device), MR_CNT_RNR_NAKS);
		x->n_rnr_naks++;
	}
	mr_tx_control(x, &pkt, sport);
}

/* A NAK of @msn answering packet @pkt, to its source port @sport. */
void mr_ack_nak(struct mr_xport *x, const struct mr_pkt *pkt, __be16 sport,
		u32 msn, u8 code)
{
	mr_ack_send_nak(x, pkt->base.path, pkt->base.epoch, pkt->base.psn,
			sport, msn, code);
}

/*
 * Refuse message @msn for good: from now on everything is answered with
 * the NAK @code, and the QP moves to ERR.
 */
void mr_ack_refuse(struct mr_xport *x, u32 msn, u8 code)
{
	ibdev_dbg(x->qp->ibqp.device, "QP %u: MSN %u refused, NAK %u\n",
		  x->qp->ibqp.qp_num, msn, code);
	x->fatal = code;
	x->fatal_msn = msn;
	/* Its NAK goes now: the repeats count their gap from it. */
	x->fatal_nak_ns = mr_xport_now();
	x->rx_on = false;
	mr_qp_fatal(x->qp);
}

/* Refuse a request late, when it executes: NAK it on its arrival path. */
void mr_ack_refuse_late(struct mr_xport *x, u32 msn, u8 code, u8 path)
{
	const struct mr_rx_path *r = &x->rx[path];

	mr_ack_refuse(x, msn, code);
	mr_ack_send_nak(x, path, r->win.epoch, r->last_psn, r->sport, msn,
			code);
}
