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
	struct mr_requester *r = &x->req;
	struct mr_qp *qp = x->qp;
	u32 seed = jhash_2words(qp->ibqp.qp_num, qp->attr.dest_qp_num, 0);

	r->tx_err = false;
	r->msn_head = 0;
	r->msn_send = 0;
	r->rd_out = 0;
	r->msn_hi = 0;
	r->peer_done = 0;
	r->send_off = 0;
	r->rsn_next = 0;
	r->gen = 0;
	r->rnr_wait = false;
	r->rnr_left = qp->attr.rnr_retry;
	/* Its path count was checked when the QP was created. */
	mr_sender_start(&x->snd, qp->attr.sq_psn, early, seed,
			x->mtu + MR_TRANSPORT_HDR_RESERVE);
	mr_hello_start(&x->hello, mr_xport_now());
}

/*
 * RTS: start the requester, or, if it started in RTR to send responses,
 * give it the RNR retries of RTS.
 */
void mr_req_rts(struct mr_xport *x)
{
	if (x->snd.on)
		x->req.rnr_left = x->qp->attr.rnr_retry;
	else
		mr_req_start(x, false);
}

/* ERR, RESET, destroy: send nothing more; no RNR wait holds the timer. */
void mr_req_stop(struct mr_xport *x)
{
	mr_sender_stop(&x->snd);
	x->req.rnr_wait = false;
}

/* The per-WQE state of a send ring of @depth entries: create. */
int mr_req_create(struct mr_xport *x, u32 depth)
{
	x->req.wtx = kvcalloc(depth, sizeof(*x->req.wtx), GFP_KERNEL_ACCOUNT);
	return x->req.wtx ? 0 : -ENOMEM;
}

/* Free the response slice maps and the per-WQE state: destroy. */
void mr_req_free(struct mr_xport *x)
{
	struct mr_wqe_tx *wtx = x->req.wtx;
	struct mr_qp *qp = x->qp;
	u32 i;

	for (i = 0; i < qp->sq.depth; i++) {
		struct mr_wqe_tx *wt = &wtx[i];

		if (wt->resp_map != (unsigned long *)&wt->resp_map1)
			bitmap_free(wt->resp_map);
		wt->resp_map = NULL;
	}
	kvfree(wtx);
	x->req.wtx = NULL;
}

/*
 * post_send, under sq.lock (any context): the WQE at @slot enters the
 * ring. A READ gets its map of response slices here, so that nothing
 * needs memory once it is under way.
 */
static int mr_req_prepare(struct mr_qp *qp, u32 slot)
{
	const struct mr_send_wqe *wqe = mr_wq_slot(&qp->sq, slot);
	struct mr_wqe_tx *wt = &qp->xp->req.wtx[slot % qp->sq.depth];
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
 * Recount rd_out: READs and atomics started whose response has not fully
 * arrived. One whose response is in, but which waits behind an earlier
 * message to complete, no longer occupies the responder: it does not
 * count. Kept as a running count (mr_req_push(), mr_req_rd_answered(),
 * mr_req_retire()); recounted only when an RNR rewind moves msn_send
 * back.
 */
static void mr_req_rd_recount(struct mr_xport *x)
{
	struct mr_requester *r = &x->req;
	u32 msn;

	r->rd_out = 0;
	for (msn = r->msn_head; msn != r->msn_send; msn++)
		r->rd_out += mr_opcode_has(mr_xport_wqe(x, msn)->opcode, MR_OPC_RD) &&
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
	struct mr_requester *r = &x->req;
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
	if (!x->snd.on || r->tx_err || r->rnr_wait)
		return;

	count = mr_wq_count(sq);
	/* The responder executes this many READs and atomics at a time. */
	rd_max = max_t(u32, 1, x->qp->attr.max_rd_atomic);
	while (r->msn_send - r->msn_head < count &&
	       mr_window_in(r->msn_send, r->msn_head)) {
		struct mr_send_wqe *wqe = mr_xport_wqe(x, r->msn_send);
		struct mr_wqe_tx *wt = mr_xport_wtx(x, r->msn_send);
		const struct mr_opcode_info *o = mr_opcode_get(wqe->opcode);
		bool rd = o->flags & MR_OPC_RD;

		if (rd && r->rd_out >= rd_max)
			return;
		if (mr_sender_pace_wait(&x->snd, mr_xport_now()))
			return;
		id = mr_req_take(x, &psn);
		if (id < 0)
			return;
		if (!wt->rsn_set && (o->flags & MR_OPC_CONSUMES)) {
			wt->rsn = r->rsn_next++;
			wt->rsn_set = true;
		}
		tp = (struct mr_tx_pkt){ .msn = r->msn_send,
					 .offset = r->send_off,
					 .gen = r->gen };
		r->send_off += x->mtu;
		if (rd || r->send_off >= wqe->length) {
			r->rd_out += rd && !wt->resp_done;
			r->msn_send++;
			r->send_off = 0;
			if (mr_seq_before(r->msn_hi, r->msn_send))
				r->msn_hi = r->msn_send;
		}
		mr_req_send(x, id, psn, &tp);
		if (!x->snd.on || r->tx_err)
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
			if (!x->snd.on || r->tx_err)
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

/*
 * What the completer learnt, for the requester's bookkeeping: the WQE at
 * the head of the send ring completed (@rd_open: a READ or atomic whose
 * response never came in whole, still counted in rd_out).
 */
void mr_req_retire(struct mr_xport *x, bool rd_open)
{
	x->req.rd_out -= rd_open;
	x->req.msn_head++;
}

/* The whole response to the READ or atomic of message @msn is in. */
void mr_req_rd_answered(struct mr_xport *x, u32 msn)
{
	/* Counted while started: see mr_req_rd_recount(). */
	if (mr_seq_before(msn, x->req.msn_send))
		x->req.rd_out--;
}

/* The peer reported the messages before @msn_done complete. */
void mr_req_peer_done(struct mr_xport *x, u32 msn_done)
{
	struct mr_requester *r = &x->req;

	/* Nothing not yet sent can be done: a bogus value changes nothing. */
	if (mr_seq_before(r->peer_done, msn_done) &&
	    !mr_seq_before(r->msn_hi, msn_done))
		r->peer_done = msn_done;
}

/*
 * Message @msn failed with @status: send nothing new. False if an earlier
 * message failed already: the error it holds stands.
 */
bool mr_req_fail(struct mr_xport *x, u32 msn, enum ib_wc_status status)
{
	struct mr_requester *r = &x->req;

	if (r->tx_err && !mr_seq_before(msn, r->err_msn))
		return false;
	r->tx_err = true;
	r->err_msn = msn;
	r->err_status = status;
	return true;
}

/*
 * The peer refused message @msn for want of a receive: send no new data
 * for @delay_ns, then again from @msn. False when the RNR retries are
 * spent.
 */
bool mr_req_rnr_wait(struct mr_xport *x, u32 msn, u64 delay_ns)
{
	struct mr_requester *r = &x->req;

	if (x->qp->attr.rnr_retry != 7) {
		if (!r->rnr_left)
			return false;
		r->rnr_left--;
	}
	r->rnr_wait = true;
	r->rnr_msn = msn;
	r->rnr_deadline = mr_xport_now() + delay_ns;
	return true;
}

/* The RNR wait is over: send the refused message again, and what followed. */
void mr_req_rnr_resume(struct mr_xport *x)
{
	struct mr_requester *r = &x->req;

	r->rnr_wait = false;
	if (mr_seq_before(r->rnr_msn, r->msn_send) ||
	    (r->rnr_msn == r->msn_send && r->send_off)) {
		r->msn_send = r->rnr_msn;
		r->send_off = 0;
		mr_req_rd_recount(x);
	}
	r->gen++;
}
