// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The requester: cuts send WQEs into MTU-sized packets and hands them to
 * the sender engine (proto/sender.c), which picks each one's path and PSN
 * and keeps it until acknowledged; tx.c builds and sends each one. The
 * send ring holds the WQEs until the responder reports their message
 * complete (comp.c). The same paths carry this end's responses to the
 * peer's READs and atomics, before new requests.
 */
#include <linux/jhash.h>
#include <linux/slab.h>

#include "ack.h"
#include "comp.h"
#include "opcode.h"
#include "req.h"
#include "resp.h"
#include "trace.h"
#include "tx.h"

/*
 * Start sending: on the way to RTS, or earlier, in RTR, when a response
 * is due (@early): the QP has no sq_psn then, so its paths start in
 * epoch 1, which begins at PSN 0 (see proto/sack.c).
 */
void mr_req_start(struct mr_xport *x, bool early)
{
	struct mr_qp *qp = x->qp;
	u32 seed = jhash_2words(qp->ibqp.qp_num, qp->attr.dest_qp_num, 0);

	x->tx_err = false;
	x->msn_head = 0;
	x->msn_send = 0;
	x->rd_out = 0;
	x->msn_hi = 0;
	x->peer_done = 0;
	x->send_off = 0;
	x->rsn_next = 0;
	x->gen = 0;
	x->rnr_wait = false;
	x->rnr_left = qp->attr.rnr_retry;
	/* Its path count was checked when the QP was created. */
	mr_sender_start(&x->snd, qp->attr.sq_psn, early, seed,
			x->mtu + MR_TRANSPORT_HDR_RESERVE);
	mr_hello_start(&x->hello, mr_xport_now());
}

/* Free the response slice maps: destroy. */
void mr_req_free(struct mr_xport *x)
{
	struct mr_qp *qp = x->qp;
	u32 i;

	for (i = 0; i < qp->sq.depth; i++) {
		struct mr_wqe_tx *wt = &x->wtx[i];

		if (wt->resp_map != (unsigned long *)&wt->resp_map1)
			bitmap_free(wt->resp_map);
		wt->resp_map = NULL;
	}
}

/*
 * post_send, under sq.lock (any context): the WQE at @slot enters the
 * ring. A READ gets its map of response slices here, so that nothing
 * needs memory once it is under way.
 */
static int mr_req_prepare(struct mr_qp *qp, u32 slot)
{
	const struct mr_send_wqe *wqe = mr_wq_slot(&qp->sq, slot);
	struct mr_wqe_tx *wt = &qp->xp->wtx[slot % qp->sq.depth];
	u32 mtu = mr_mtu_bytes((enum mr_mtu)qp->attr.path_mtu);
	u32 slices = max_t(u32, 1, DIV_ROUND_UP(wqe->length, mtu));

	if (wt->resp_map != (unsigned long *)&wt->resp_map1)
		bitmap_free(wt->resp_map);
	wt->resp_map = (unsigned long *)&wt->resp_map1;
	if (wqe->opcode == IB_WR_RDMA_READ &&
	    slices > BITS_PER_TYPE(wt->resp_map1)) {
		wt->resp_map = bitmap_zalloc(slices, GFP_ATOMIC);
		if (!wt->resp_map)
			return -ENOMEM;
	}
	wt->resp_map1 = 0;
	wt->resp_got = 0;
	wt->resp_done = false;
	wt->rsn_set = false;
	return 0;
}

/*
 * The requester's entry point: a send WQE that passed every check, on a
 * QP in RTS, under the send queue lock, with room in the ring. It is
 * queued at sq.head + sq.count; the caller kicks the transport once the
 * lock is dropped (sending with IRQs off is not allowed).
 */
int mr_req_submit(struct mr_qp *qp, const struct mr_send_wqe *wqe)
{
	struct mr_wq *sq = &qp->sq;
	u32 slot = sq->head + sq->count;
	int err;

	memcpy(mr_wq_slot(sq, slot), wqe, sq->stride);
	err = mr_req_prepare(qp, slot);
	if (err)
		return err;
	sq->count++;
	return 0;
}

/* Send a packet of our own message @tp->msn, or of a response. */
static void mr_req_send(struct mr_xport *x, u32 id, u32 psn,
			const struct mr_tx_pkt *tp)
{
	mr_sender_send(&x->snd, id, psn, tp, MR_SEND_FIRST, mr_xport_now());
}

static int mr_req_take(struct mr_xport *x, u32 *psn)
{
	return mr_sender_take(&x->snd, -1, psn);
}

/*
 * Recount x->rd_out: READs and atomics started whose response has not
 * fully arrived. One whose response is in, but which waits behind an
 * earlier message to complete, no longer occupies the responder: it does
 * not count. Kept as a running count (mr_req_push(), mr_comp_resp_rcv(),
 * mr_comp_pop()); recounted only when an RNR rewind moves msn_send back.
 */
static void mr_req_rd_recount(struct mr_xport *x)
{
	u32 msn;

	x->rd_out = 0;
	for (msn = x->msn_head; msn != x->msn_send; msn++)
		x->rd_out += mr_opcode_has(mr_xport_wqe(x, msn)->opcode, MR_OPC_RD) &&
			     !mr_xport_wtx(x, msn)->resp_done;
}

/*
 * Send the responses that are due, oldest first, as the paths allow: READ
 * and atomic responses ride this end's paths like its requests. The
 * responder keeps them, and which packets of them have gone.
 */
static void mr_req_push_responses(struct mr_xport *x)
{
	while (mr_resp_pending(x)) {
		struct mr_tx_pkt tp = {};
		u32 psn;
		int id;

		if (mr_sender_pace_wait(&x->snd, mr_xport_now()))
			return;
		id = mr_req_take(x, &psn);
		if (id < 0)
			return;
		mr_resp_take(x, &tp);
		mr_req_send(x, id, psn, &tp);
		if (!x->snd.on)
			return;
	}
}

/*
 * Send what the windows allow: packets moved off a failed path first,
 * then responses to the peer, then new requests.
 */
void mr_req_push(struct mr_xport *x)
{
	struct mr_wq *sq = &x->qp->sq;
	u32 psn, count, rd_max;
	struct mr_tx_pkt tp;
	int id;

	if (!x->snd.on)
		return;
	/*
	 * Nothing goes before the peer's tag is known: the handshake first,
	 * again if it gave up before work was posted.
	 */
	if (!mr_hello_ready(&x->hello)) {
		if (mr_wq_count(sq))
			mr_hello_start(&x->hello, mr_xport_now());
		return;
	}
	if (!mr_sender_push_moved(&x->snd, mr_xport_now()))
		return;
	mr_req_push_responses(x);
	if (!x->snd.on || x->tx_err || x->rnr_wait)
		return;

	count = mr_wq_count(sq);
	/* The responder executes this many READs and atomics at a time. */
	rd_max = max_t(u32, 1, x->qp->attr.max_rd_atomic);
	while (x->msn_send - x->msn_head < count &&
	       mr_window_in(x->msn_send, x->msn_head)) {
		struct mr_send_wqe *wqe = mr_xport_wqe(x, x->msn_send);
		struct mr_wqe_tx *wt = mr_xport_wtx(x, x->msn_send);
		const struct mr_opcode_info *o = mr_opcode_get(wqe->opcode);
		bool rd = o->flags & MR_OPC_RD;

		if (rd && x->rd_out >= rd_max)
			return;
		if (mr_sender_pace_wait(&x->snd, mr_xport_now()))
			return;
		id = mr_req_take(x, &psn);
		if (id < 0)
			return;
		if (!wt->rsn_set && (o->flags & MR_OPC_CONSUMES)) {
			wt->rsn = x->rsn_next++;
			wt->rsn_set = true;
		}
		tp = (struct mr_tx_pkt){ .msn = x->msn_send,
					 .offset = x->send_off,
					 .gen = x->gen };
		x->send_off += x->mtu;
		if (rd || x->send_off >= wqe->length) {
			x->rd_out += rd && !wt->resp_done;
			x->msn_send++;
			x->send_off = 0;
			if (mr_seq_before(x->msn_hi, x->msn_send))
				x->msn_hi = x->msn_send;
		}
		mr_req_send(x, id, psn, &tp);
		if (!x->snd.on || x->tx_err)
			return;
		/*
		 * A READ or atomic request goes twice, on two paths: if its
		 * only packet were lost, no later packet on that path might
		 * reveal the gap before the tail probe, and the responder
		 * executes nothing after it until it arrives. The responder
		 * executes it once (the second copy is a duplicate).
		 */
		if (rd && x->snd.npaths > 1) {
			id = mr_sender_take(&x->snd, id, &psn);
			if (id < 0)
				return;
			mr_req_send(x, id, psn, &tp);
			if (!x->snd.on || x->tx_err)
				return;
		}
	}
}

/*
 * The responder executed READs or atomics: their responses are due. A
 * READ target may stay in RTR, which has not started the requester: its
 * paths start now.
 */
void mr_req_respond(struct mr_xport *x)
{
	if (!x->snd.on)
		mr_req_start(x, true);
	mr_req_push(x);
}

/* The RNR wait is over: send the refused message again, and what followed. */
void mr_req_rnr_resume(struct mr_xport *x)
{
	x->rnr_wait = false;
	if (mr_seq_before(x->rnr_msn, x->msn_send) ||
	    (x->rnr_msn == x->msn_send && x->send_off)) {
		x->msn_send = x->rnr_msn;
		x->send_off = 0;
		mr_req_rd_recount(x);
	}
	x->gen++;
}
