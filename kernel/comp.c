// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The completer, the requester's side of reliability: ACKs update a
 * path's scoreboard, the packets they report lost go again at once, and
 * send WQEs complete in MSN order as the responder's "MSN done" passes
 * them; a READ or atomic once its whole response has landed (placed here
 * as it arrives). NAKs fail a WR or, for RNR, stop new data until the
 * delay is over (req.c resumes). When a path's timer fires (timers.c),
 * the completer decides what it was: too early, a tail probe, an RTO, or
 * the failure of the path.
 */
#include "ack.h"
#include "comp.h"
#include "congestion.h"
#include "counters.h"
#include "cq.h"
#include "local.h"
#include "mr.h"
#include "notify.h"
#include "opcode.h"
#include "trace.h"
#include "tx.h"

/* Pop the WQE at the head of the send ring and complete it. */
static bool mr_comp_pop(struct mr_xport *x, enum ib_wc_status status)
{
	struct mr_qp *qp = x->qp;
	struct mr_wq *sq = &qp->sq;
	struct mr_send_wqe *wqe;
	unsigned long flags;
	struct ib_wc wc = {};
	bool signal;

	spin_lock_irqsave(&sq->lock, flags);
	if (!sq->count) {
		spin_unlock_irqrestore(&sq->lock, flags);
		return false;
	}
	wqe = mr_wq_slot(sq, sq->head);
	wc.wr_id = wqe->wr_id;
	wc.opcode = mr_opcode_get(wqe->opcode)->wc;
	signal = status != IB_WC_SUCCESS ||
		 (wqe->send_flags & IB_SEND_SIGNALED) ||
		 qp->sq_sig_type == IB_SIGNAL_ALL_WR;
	wc.byte_len = wqe->length;
	/* A READ or atomic failed before its response was in. */
	if (x->msn_head != x->msn_send && mr_opcode_has(wqe->opcode, MR_OPC_RD) &&
	    !x->wtx[sq->head].resp_done)
		x->rd_out--;
	sq->head = (sq->head + 1) % sq->depth;
	sq->count--;
	spin_unlock_irqrestore(&sq->lock, flags);
	x->msn_head++;
	if (signal) {
		wc.status = status;
		wc.qp = &qp->ibqp;
		wc.port_num = MR_PORT;
		mr_cq_post(qp->scq, &wc, false);
	}
	mr_local_sq_done(qp);
	return true;
}

/* Whether the WQE at the head of the send ring is complete. */
static bool mr_comp_head_done(struct mr_xport *x)
{
	struct mr_wq *sq = &x->qp->sq;

	if (x->msn_head == x->msn_send)
		return false;
	if (mr_opcode_has(((struct mr_send_wqe *)mr_wq_slot(sq, sq->head))->opcode,
			  MR_OPC_RD))
		return x->wtx[sq->head].resp_done;
	return mr_seq_before(x->msn_head, x->peer_done);
}

/*
 * Complete the WQEs at the head of the send ring, in order, as far as the
 * responder has completed them (and their responses have landed), and a
 * failed one once it reaches the head.
 */
void mr_comp_complete(struct mr_xport *x)
{
	while (x->tx_on && mr_comp_head_done(x)) {
		if (x->tx_err && x->msn_head == x->err_msn)
			break;
		if (!mr_comp_pop(x, IB_WC_SUCCESS))
			return;
	}
	if (x->tx_on && x->tx_err && x->msn_head == x->err_msn) {
		mr_comp_pop(x, x->err_status);
		mr_xport_fatal(x);
	}
}

/*
 * Message @msn failed with @status: nothing new goes out, and the WQE
 * completes with the error once every WQE before it has completed.
 */
void mr_comp_fail(struct mr_xport *x, u32 msn, enum ib_wc_status status)
{
	if (x->tx_err && !mr_seq_before(msn, x->err_msn))
		return;
	x->tx_err = true;
	x->err_msn = msn;
	x->err_status = status;
	mr_comp_complete(x);
}

/*
 * The retry budget is spent, a path's RTOs or the handshake's HELLOs
 * (mr_handshake_send()): the oldest WQE fails.
 */
void mr_comp_retry_exceeded(struct mr_xport *x)
{
	mr_comp_fail(x, x->msn_head, IB_WC_RETRY_EXC_ERR);
}

/*
 * Send PSN @psn of path @id again, for reason @why; @charge: it had been
 * reported lost.
 */
static void mr_comp_resend(struct mr_xport *x, u32 id, u32 psn, bool charge,
			   const char *why)
{
	struct mr_tx_path *p = &x->path[id];
	struct mr_tx_pkt tp;
	int n;

	if (mr_sack_tx_resend(&p->sb, psn))
		return;
	if (charge)
		mr_paths_recharge(&x->ps, id);	/* in flight again */
	tp = p->pkt[psn % MR_SACK_WINDOW];
	trace_metaroce_retransmit(x->qp->ibqp.qp_num, id, p->sb.epoch, psn,
				  tp.msn, tp.offset, tp.resp, why);
	n = mr_tx_send(x, id, psn, &tp, MR_TX_RESEND);
	if (n == -EFAULT)
		mr_comp_fail(x, tp.msn, IB_WC_LOC_PROT_ERR);
	else if (n > 0)
		mr_congestion_sent(x, n);
}

/**
 * mr_comp_resp_rcv() - a READ_RESP or ATOMIC_RESP for us, new on its path
 * @x: the transport, locked
 * @pkt: its headers
 * @data: its payload
 *
 * Place it in the local buffer of the WR it answers, and complete what
 * that makes complete. The responder's one call into the requester's
 * side: responses ride the peer's paths, so resp.c records them first.
 *
 * Return: true when it completed a response (the requester may then send
 * more).
 */
bool mr_comp_resp_rcv(struct mr_xport *x, const struct mr_pkt *pkt,
		      const u8 *data)
{
	struct mr_qp *qp = x->qp;
	struct mr_dev *dev = to_mr_dev(qp->ibqp.device);
	bool read = pkt->base.opcode == MR_OP_READ_RESP;
	u32 msn = read ? pkt->read_resp.msn : pkt->atomic_resp.msn;
	struct mr_send_wqe *wqe;
	struct mr_wqe_tx *wt;
	bool wqe_read;
	u32 off, want;
	int err;

	/*
	 * Of a WR already complete (an answer to a resent request): done.
	 * One sent before an RNR rewind is still placed: its request will
	 * not be answered again.
	 */
	if (!x->tx_on || mr_seq_before(msn, x->msn_head) ||
	    !mr_seq_before(msn, x->msn_hi)) {
		mr_stats_inc(dev, MR_CNT_DUPLICATE_PACKETS);
		return false;
	}
	wqe = mr_xport_wqe(x, msn);
	wt = mr_xport_wtx(x, msn);
	wqe_read = wqe->opcode == IB_WR_RDMA_READ;
	if (!mr_opcode_has(wqe->opcode, MR_OPC_RD) || read != wqe_read) {
		mr_stats_inc(dev, MR_CNT_RX_DROP_MALFORMED);
		return false;
	}
	if (wt->resp_done) {
		mr_stats_inc(dev, MR_CNT_DUPLICATE_PACKETS);
		return false;
	}
	if (read) {
		off = pkt->read_resp.offset;
		want = min(x->mtu, wqe->length - min(off, wqe->length));
		if (pkt->read_resp.length != wqe->length || off % x->mtu ||
		    (off && off >= wqe->length) ||
		    (pkt->payload_len != want && pkt->payload_len)) {
			mr_stats_inc(dev, MR_CNT_RX_DROP_MALFORMED);
			return false;
		}
		if (test_bit(off / x->mtu, wt->resp_map)) {
			mr_stats_inc(dev, MR_CNT_DUPLICATE_PACKETS);
			return false;
		}
		if (pkt->payload_len != want) {
			/* A resent slice whose region the responder lost. */
			mr_comp_fail(x, msn, IB_WC_REM_ACCESS_ERR);
			return false;
		}
		set_bit(off / x->mtu, wt->resp_map);
		err = mr_mr_sgl_copy(dev, qp->ibqp.pd, wqe->sge, wqe->num_sge,
				     off, (void *)data, want, MR_COPY_TO_SGL);
		wt->resp_done = ++wt->resp_got ==
				max_t(u32, 1, DIV_ROUND_UP(wqe->length, x->mtu));
	} else {
		u64 orig = pkt->atomic_resp.orig;

		err = mr_mr_sgl_copy(dev, qp->ibqp.pd, wqe->sge, wqe->num_sge, 0,
				     &orig, sizeof(orig), MR_COPY_TO_SGL);
		wt->resp_done = true;
	}
	/* Counted while started: see mr_req_rd_recount(). */
	if (wt->resp_done && mr_seq_before(msn, x->msn_send))
		x->rd_out--;
	if (err) {
		ibdev_dbg(&dev->ib_dev, "QP %u: MSN %u: response not placed: %d\n",
			  qp->ibqp.qp_num, msn, err);
		mr_comp_fail(x, msn, IB_WC_LOC_PROT_ERR);
		return false;
	}
	if (!wt->resp_done)
		return false;
	mr_comp_complete(x);
	return true;
}

/*
 * The RTT sample of an ACK: from the oldest packet it newly acknowledges
 * that went only once (Karn). That packet waited for the receiver's ACK
 * coalescing (every MR_ACK_EVERY packets of the path, or a completion),
 * so the estimate, and the tail probe and RTO built on it, cover the time
 * an ACK really takes, as RFC 7323 timestamps do; the packet that
 * triggered the ACK would measure only the wire.
 */
static u64 mr_comp_rtt_sample(struct mr_tx_path *p,
			      const struct mr_sack_res *res)
{
	u64 rtt;
	u32 w;

	for (w = 0; w < MR_SACK_WORDS; w++) {
		u64 once = res->acked[w] & ~res->ambiguous[w];
		u32 psn;

		if (!once)
			continue;
		psn = res->base + 64 * w + __ffs64(once);
		rtt = mr_xport_now() - p->pkt[psn % MR_SACK_WINDOW].sent_ns;
		mr_rto_sample(&p->rto, rtt);
		return rtt;
	}
	return 0;
}

/*
 * Note the connection's delivery progress for mr_rto_early(); returns the
 * newest send order this ACK acknowledged.
 */
static u64 mr_comp_progress(struct mr_xport *x, const struct mr_tx_path *p,
			    const struct mr_sack_res *res)
{
	u64 newest = 0;
	u32 w, i;

	x->acked_ns = mr_xport_now();
	for (w = 0; w < MR_SACK_WORDS; w++) {
		u64 bits = res->acked[w];

		while (bits) {
			i = __ffs64(bits);
			bits &= bits - 1;
			i = (res->base + 64 * w + i) % MR_SACK_WINDOW;
			newest = max(newest, p->pkt[i].order);
		}
	}
	x->acked_front = max(x->acked_front, newest);
	return newest;
}

/*
 * Whether the ACK answers a needless resend: the receiver acknowledges a
 * duplicate at once, naming it, so an ACK that names a packet we already
 * knew had arrived, and resent, means the original arrived as well (the
 * path reordered it, or delayed it), not that it was lost.
 */
static bool mr_comp_spurious(const struct mr_tx_path *p,
			     const struct mr_base_hdr *ack)
{
	return mr_sack_tx_arrived(&p->sb, ack->epoch, ack->psn) &&
	       p->pkt[ack->psn % MR_SACK_WINDOW].sends > 1;
}

/**
 * mr_comp_ack_rcv() - an ACK from the responder
 * @x: the transport, locked
 * @pkt: the ACK
 *
 * Return: MR_NEXT_PUSH when it was taken: it may have opened the windows.
 */
enum mr_xport_next mr_comp_ack_rcv(struct mr_xport *x, const struct mr_pkt *pkt)
{
	struct mr_dev *dev = to_mr_dev(x->qp->ibqp.device);
	u32 id = pkt->base.path, i, psn;
	u64 rtt, acked_order = 0;
	struct mr_sack_res res;
	bool spurious;
	struct mr_tx_path *p;
	int err;

	if (!x->tx_on) {
		mr_stats_inc(dev, MR_CNT_RX_DROP_NO_QP);
		return MR_NEXT_NONE;
	}
	if (id >= x->npaths) {
		mr_stats_inc(dev, MR_CNT_RX_DROP_MALFORMED);
		return MR_NEXT_NONE;
	}
	p = &x->path[id];
	spurious = mr_comp_spurious(p, &pkt->base);
	err = mr_sack_tx_ack(&p->sb, pkt->base.epoch, pkt->ack.cum_psn,
			     pkt->ack.sack, &res);
	if (err) {
		/* Reordered or of an abandoned epoch: it says nothing new. */
		mr_stats_inc(dev, err == -MR_ESTALE ?
				  MR_CNT_DUPLICATE_PACKETS :
				  MR_CNT_RX_DROP_MALFORMED);
		return MR_NEXT_NONE;
	}
	rtt = mr_comp_rtt_sample(p, &res);
	mr_paths_ack(&x->ps, id, res.n_acked, res.n_lost);
	if (res.n_acked) {
		acked_order = mr_comp_progress(x, p, &res);
		x->rtos = 0;
		p->deadline = 0;
		p->probed = false;
		p->deferred = false;
	}
	mr_congestion_ack(x, id, &res, spurious, rtt, acked_order, &pkt->ack);
	for (i = 0; i < MR_SACK_WINDOW && res.n_lost; i++) {
		if (!mr_sack_res_test(res.lost, i))
			continue;
		psn = res.base + i;
		mr_stats_inc(dev, MR_CNT_SACK_GAPS);
		p->n_sack_gaps++;
		mr_comp_resend(x, id, psn, true, "sack");
		if (!x->tx_on)
			return MR_NEXT_NONE;
	}
	/* Restart the RTO from this progress while packets remain out. */
	if (p->sb.una != p->sb.nxt && !p->deadline)
		mr_xport_arm_path(p, mr_xport_now());
	/* Nothing not yet sent can be done: a bogus value changes nothing. */
	if (mr_seq_before(x->peer_done, pkt->ack.msn_done) &&
	    !mr_seq_before(x->msn_hi, pkt->ack.msn_done))
		x->peer_done = pkt->ack.msn_done;
	mr_comp_complete(x);
	return MR_NEXT_PUSH;
}

/* A NAK from the responder; the transport is locked. */
void mr_comp_nak_rcv(struct mr_xport *x, const struct mr_pkt *pkt)
{
	struct mr_dev *dev = to_mr_dev(x->qp->ibqp.device);
	u32 msn = pkt->nak.msn, id = pkt->base.path;
	const struct mr_tx_pkt *tp;
	struct mr_tx_path *p;

	if (!x->tx_on) {
		mr_stats_inc(dev, MR_CNT_RX_DROP_NO_QP);
		return;
	}
	/* A UC responder drops what it cannot take: it never NAKs. */
	if (x->qp->ibqp.qp_type == IB_QPT_UC) {
		mr_stats_inc(dev, MR_CNT_RX_DROP_MALFORMED);
		return;
	}
	/* Only a message sent and not complete can be refused. */
	if (mr_seq_before(msn, x->msn_head) ||
	    !mr_seq_before(msn, x->msn_send + !!x->send_off)) {
		mr_stats_inc(dev, MR_CNT_DUPLICATE_PACKETS);
		return;
	}
	switch (pkt->nak.code) {
	case MR_NAK_REMOTE_ACCESS:
		mr_comp_fail(x, msn, IB_WC_REM_ACCESS_ERR);
		break;
	case MR_NAK_INVALID_REQUEST:
		mr_comp_fail(x, msn, IB_WC_REM_INV_REQ_ERR);
		break;
	case MR_NAK_RNR:
		if (x->rnr_wait || id >= x->npaths)
			break;
		/* NAKs of packets sent before the last rewind are old news. */
		p = &x->path[id];
		tp = &p->pkt[pkt->base.psn % MR_SACK_WINDOW];
		if (pkt->base.epoch != p->sb.epoch ||
		    p->sb.nxt - pkt->base.psn > MR_SACK_WINDOW ||
		    tp->msn != msn || tp->gen != x->gen)
			break;
		if (x->qp->attr.rnr_retry != 7) {
			if (!x->rnr_left) {
				mr_comp_fail(x, msn, IB_WC_RNR_RETRY_EXC_ERR);
				break;
			}
			x->rnr_left--;
		}
		x->rnr_wait = true;
		x->rnr_msn = msn;
		x->rnr_deadline = mr_xport_now() +
				  max_t(u64, pkt->nak.rnr_delay, 1) * 10000;
		break;
	}
}

/* A path failed: its unacknowledged packets go to the others. */
static void mr_comp_failover(struct mr_xport *x, u32 id)
{
	struct mr_dev *dev = to_mr_dev(x->qp->ibqp.device);
	struct mr_tx_path *p = &x->path[id];
	u16 old_epoch = p->sb.epoch, old_sport = x->ps.path[id].sport;
	struct mr_notify_failover ev = {
		.path_id = id,
		.old_epoch = old_epoch,
		.old_sport = old_sport,
	};
	u64 rto = mr_rto_get(&p->rto);
	u32 psn, moved = 0;

	for (psn = p->sb.una; mr_sack_tx_next_unacked(&p->sb, &psn); psn++) {
		const struct mr_tx_pkt *tp = &p->pkt[psn % MR_SACK_WINDOW];
		struct mr_requeue e;

		if (!tp->resp && mr_seq_before(tp->msn, x->msn_head))
			continue;
		e = (struct mr_requeue){ .msn = tp->msn, .offset = tp->offset,
					 .gen = tp->gen, .resp = tp->resp };
		/* It holds every scoreboard's worth: cannot fill up. */
		if (WARN_ON_ONCE(mr_requeue_push(&x->requeue, &e)))
			break;
		moved++;
	}
	mr_paths_restart(&x->ps, id);
	mr_congestion_path_restart(x, id);
	mr_sack_tx_reset(&p->sb, x->ps.path[id].epoch);
	/*
	 * A fresh estimator, but it starts from the backed-off timeout: if
	 * the peer, not the route, is silent, the retry budget must still
	 * span seconds rather than a few initial timeouts.
	 */
	mr_rto_init(&p->rto, rto, MR_RTO_MIN_NS, MR_RTO_MAX_NS);
	p->deadline = 0;
	p->probed = false;
	p->deferred = false;
	mr_stats_inc(dev, MR_CNT_PATH_FAILOVERS);
	x->n_failovers++;
	trace_metaroce_path_failover(x->qp->ibqp.qp_num, id, old_epoch,
				     old_sport, x->ps.path[id].epoch,
				     x->ps.path[id].sport, moved);
	ev.new_epoch = x->ps.path[id].epoch;
	ev.new_sport = x->ps.path[id].sport;
	ev.moved = moved;
	mr_notify_path_failover(x->qp, &ev);
}

/*
 * Whether the timer of path @p fired too early for its oldest packet, PSN
 * @psn: older packets of the connection are still coming back
 * (mr_rto_early()), or it is a READ request whose response is arriving.
 */
static bool mr_comp_timer_early(struct mr_xport *x, struct mr_tx_path *p,
				u32 psn)
{
	const struct mr_tx_pkt *tp = &p->pkt[psn % MR_SACK_WINDOW];
	const struct mr_wqe_tx *wt;

	if (mr_rto_early(tp->order, x->acked_front, MR_ACK_EVERY * x->npaths,
			 p->armed_ns, x->acked_ns, p->deferred)) {
		p->deferred |= x->acked_front >= tp->order;
		return true;
	}
	if (tp->resp || mr_seq_before(tp->msn, x->msn_head) ||
	    !mr_seq_before(tp->msn, x->msn_hi))
		return false;
	wt = mr_xport_wtx(x, tp->msn);
	return mr_xport_wqe(x, tp->msn)->opcode == IB_WR_RDMA_READ &&
	       wt->resp_got && !wt->resp_done;
}

/**
 * mr_comp_path_timeout() - the timer of path @id is due
 * @x: the transport, locked
 * @id: the path
 * @now: the time, ns
 *
 * Too early (older packets still coming back): wait again. Else the tail
 * probe, the first time; then the RTO, which backs off, fails the path
 * after three in a row and the QP after the retry budget.
 */
void mr_comp_path_timeout(struct mr_xport *x, u32 id, u64 now)
{
	struct mr_dev *dev = to_mr_dev(x->qp->ibqp.device);
	struct mr_tx_path *p = &x->path[id];
	/* Every path gets retries + 1 timeouts in a row, spread as may be. */
	u32 budget = (mr_xport_retries(x) + 1) * x->npaths * x->fail_after;
	u32 psn = p->sb.una;

	p->deadline = 0;
	if (!mr_sack_tx_next_unacked(&p->sb, &psn))
		return;
	if (mr_comp_timer_early(x, p, psn)) {
		mr_stats_inc(dev, MR_CNT_RTO_DEFERRED);
		mr_xport_arm_path(p, now);
		return;
	}
	if (!p->probed) {
		/* The tail probe: the oldest packet again, no backoff. */
		p->probed = true;
		mr_stats_inc(dev, MR_CNT_TAIL_PROBES);
		p->n_probes++;
		mr_comp_resend(x, id, psn, false, "probe");
		if (!p->deadline && p->sb.una != p->sb.nxt)
			mr_xport_arm_path(p, now);
		return;
	}
	mr_stats_inc(dev, MR_CNT_RTO_EVENTS);
	p->n_rtos++;
	mr_rto_timeout(&p->rto);
	mr_congestion_timeout(x, id);
	if (++x->rtos > budget) {
		mr_comp_retry_exceeded(x);
		return;
	}
	if (mr_paths_timeout(&x->ps, id, 0)) {
		mr_comp_failover(x, id);
		return;
	}
	/*
	 * Only the oldest packet goes again: a late ACK then costs one
	 * packet, and a real tail loss is repaired one packet per RTO
	 * (losses before a later arrival the SACK reports at once).
	 */
	mr_comp_resend(x, id, psn, false, "rto");
	/* Nothing was sent (it had just been reported): still watch it. */
	if (!p->deadline && p->sb.una != p->sb.nxt)
		mr_xport_arm_path(p, now);
}
