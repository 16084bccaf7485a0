// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The completer, the requester's side of reliability: ACKs go to the
 * sender engine (proto/sender.c), which keeps the paths' scoreboards and
 * resends what they report lost, and send WQEs complete in MSN order as
 * the responder's "MSN done" passes them and their packets are all
 * acknowledged; a READ or atomic once its whole
 * response has landed (placed here as it arrives). NAKs fail a WR or, for
 * RNR, stop new data until the delay is over. What it learns goes to the
 * requester's bookkeeping through proto/requester.c, its only writer. The sender
 * engine's environment, the kernel's side of it, is here too.
 */
#include "ack.h"
#include "comp.h"
#include "counters.h"
#include "cq.h"
#include "local.h"
#include "mr.h"
#include "notify.h"
#include "opcode.h"
#include "plane.h"
#include "resp.h"
#include "trace.h"
#include "tx.h"
#include "wq.h"

/* Pop the WQE at the head of the send ring and complete it. */
static bool mr_comp_pop(struct mr_xport *x, enum ib_wc_status status)
{
	struct mr_qp *qp = x->qp;
	struct mr_wq *sq = &qp->sq;
	struct mr_send_wqe *wqe;
	unsigned long flags;
	struct ib_wc wc = {};
	bool signal, rd_open;

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
	/* mrcdv.h: a completion's stream travels where a LID would. */
	wc.slid = wqe->stream;
	/* A READ or atomic failed before its response was in. */
	rd_open = x->req.msn_head != x->req.msn_send &&
		  mr_opcode_has(wqe->opcode, MR_OPC_RD) &&
		  !x->wtx[sq->head].resp.done;
	mr_wq_pop(sq);
	spin_unlock_irqrestore(&sq->lock, flags);
	mr_requester_retire(&x->req, rd_open);
	if (signal) {
		wc.status = status;
		wc.qp = &qp->ibqp;
		wc.port_num = MR_PORT;
		mr_cq_post(qp->scq, &wc, false);
	}
	mr_local_sq_done(qp);
	return true;
}

/*
 * Complete the WQEs at the head of the send ring, in order, as far as the
 * requester engine finds them complete, and a failed one once it reaches
 * the head.
 */
void mr_comp_complete(struct mr_xport *x)
{
	while (x->snd.on) {
		switch (mr_requester_head(&x->req)) {
		case MR_REQ_HEAD_DONE:
			if (!mr_comp_pop(x, IB_WC_SUCCESS))
				return;
			break;
		case MR_REQ_HEAD_FAILED:
			mr_comp_pop(x, x->req.err_status);
			mr_xport_fatal(x);
			return;
		default:
			return;
		}
	}
}

/*
 * Message @msn failed with @status: nothing new goes out, and the WQE
 * completes with the error once every WQE before it has completed.
 */
void mr_comp_fail(struct mr_xport *x, u32 msn, enum ib_wc_status status)
{
	if (mr_requester_fail(&x->req, msn, status))
		mr_comp_complete(x);
}

/*
 * The retry budget is spent, a path's RTOs or the handshake's HELLOs
 * (mr_handshake_send()): the oldest WQE fails.
 */
void mr_comp_retry_exceeded(struct mr_xport *x)
{
	mr_comp_fail(x, x->req.msn_head, IB_WC_RETRY_EXC_ERR);
}

/*
 * A READ_RESP or ATOMIC_RESP for us, new on its path (@pkt, payload
 * @data): place it in the local buffer of the WR it answers, and complete
 * what that makes complete. True when it completed a response.
 */
static bool mr_comp_resp_rcv(struct mr_xport *x, const struct mr_pkt *pkt,
			     const u8 *data)
{
	struct mr_qp *qp = x->qp;
	struct mr_dev *dev = to_mr_dev(qp->ibqp.device);
	bool read = pkt->base.opcode == MR_OP_READ_RESP;
	u32 msn = read ? pkt->read_resp.msn : pkt->atomic_resp.msn;
	struct mr_send_wqe *wqe;
	struct mr_wqe_tx *wt;
	bool wqe_read;
	int err;

	/*
	 * Of a WR already complete (an answer to a resent request): done.
	 * One sent before an RNR rewind is still placed: its request will
	 * not be answered again.
	 */
	if (!x->snd.on || mr_seq_before(msn, x->req.msn_head) ||
	    !mr_seq_before(msn, x->req.msn_hi)) {
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
	if (read) {
		switch (mr_requester_read_slice(&x->req, wqe->length, &wt->resp,
						pkt)) {
		case MR_REQ_SLICE_MALFORMED:
			mr_stats_inc(dev, MR_CNT_RX_DROP_MALFORMED);
			return false;
		case MR_REQ_SLICE_DUP:
			mr_stats_inc(dev, MR_CNT_DUPLICATE_PACKETS);
			return false;
		case MR_REQ_SLICE_EMPTY:
			/* A resent slice whose region the responder lost. */
			mr_comp_fail(x, msn, IB_WC_REM_ACCESS_ERR);
			return false;
		case MR_REQ_SLICE_NEW:
			break;
		}
		err = mr_mr_sgl_copy(dev, qp->ibqp.pd, wqe->sge, wqe->num_sge,
				     pkt->read_resp.offset, (void *)data,
				     pkt->payload_len, MR_COPY_TO_SGL);
	} else {
		u64 orig = pkt->atomic_resp.orig;

		if (wt->resp.done) {
			mr_stats_inc(dev, MR_CNT_DUPLICATE_PACKETS);
			return false;
		}
		err = mr_mr_sgl_copy(dev, qp->ibqp.pd, wqe->sge, wqe->num_sge, 0,
				     &orig, sizeof(orig), MR_COPY_TO_SGL);
	}
	mr_requester_answered(&x->req, msn, &wt->resp, read ? wqe->length : 0);
	if (err) {
		ibdev_dbg(&dev->ib_dev, "QP %u: MSN %u: response not placed: %d\n",
			  qp->ibqp.qp_num, msn, err);
		mr_comp_fail(x, msn, IB_WC_LOC_PROT_ERR);
		return false;
	}
	if (!wt->resp.done)
		return false;
	mr_comp_complete(x);
	return true;
}

/**
 * mr_comp_resp_in() - a READ or atomic response for us arrived
 * @x: the transport, locked
 * @skb: the packet, linear
 * @pkt: its headers
 *
 * Responses ride the peer's paths: recorded on their path as requests
 * are (ack.c), then placed. A completed one is acknowledged at once, so
 * that the responder forgets it.
 *
 * Return: MR_NEXT_PUSH when it completed a response (the requester may
 * then send more), else MR_NEXT_NONE.
 */
enum mr_xport_next mr_comp_resp_in(struct mr_xport *x, struct sk_buff *skb,
				   const struct mr_pkt *pkt)
{
	__be16 sport = udp_hdr(skb)->source;
	bool ack_now = false;

	if (!mr_ack_admit(x, pkt, sport) ||
	    mr_ack_arrival(x, pkt, sport, mr_ack_ce(skb), &ack_now) !=
	    MR_SACK_NEW)
		return MR_NEXT_NONE;
	if (mr_comp_resp_rcv(x, pkt, skb->data + pkt->hdr_len)) {
		mr_ack_all(x);
		return MR_NEXT_PUSH;
	}
	mr_ack_coalesce(x, pkt->base.path, pkt->base.psn, ack_now);
	return MR_NEXT_NONE;
}

/**
 * mr_comp_ack_rcv() - an ACK from the responder
 * @x: the transport, locked
 * @pkt: the ACK
 *
 * The sender engine takes it; the WQEs it reports done complete.
 *
 * Return: MR_NEXT_PUSH when it was taken: it may have opened the windows.
 */
enum mr_xport_next mr_comp_ack_rcv(struct mr_xport *x, const struct mr_pkt *pkt)
{
	struct mr_dev *dev = to_mr_dev(x->qp->ibqp.device);
	int err;

	if (!x->snd.on) {
		mr_stats_inc(dev, MR_CNT_RX_DROP_NO_QP);
		return MR_NEXT_NONE;
	}
	err = mr_sender_ack(&x->snd, pkt, mr_xport_now());
	if (err) {
		/* Reordered or of an abandoned epoch: it says nothing new. */
		mr_stats_inc(dev, err == -MR_ESTALE ?
				  MR_CNT_DUPLICATE_PACKETS :
				  MR_CNT_RX_DROP_MALFORMED);
		return MR_NEXT_NONE;
	}
	if (!x->snd.on)
		return MR_NEXT_NONE;
	if (!mr_requester_peer_done(&x->req, &x->snd, pkt->ack.msn_done))
		mr_stats_inc(dev, MR_CNT_RX_BOGUS_MSN_DONE);
	mr_comp_complete(x);
	return MR_NEXT_PUSH;
}

/* A NAK from the responder; the transport is locked. */
void mr_comp_nak_rcv(struct mr_xport *x, const struct mr_pkt *pkt)
{
	struct mr_dev *dev = to_mr_dev(x->qp->ibqp.device);
	u32 msn = pkt->nak.msn;

	if (!x->snd.on) {
		mr_stats_inc(dev, MR_CNT_RX_DROP_NO_QP);
		return;
	}
	/* A UC responder drops what it cannot take: it never NAKs. */
	if (x->qp->ibqp.qp_type == IB_QPT_UC) {
		mr_stats_inc(dev, MR_CNT_RX_DROP_MALFORMED);
		return;
	}
	switch (mr_requester_nak(&x->req, &x->snd, pkt, x->qp->attr.rnr_retry,
				 mr_xport_now())) {
	case MR_REQ_NAK_OLD:
		mr_stats_inc(dev, MR_CNT_DUPLICATE_PACKETS);
		break;
	case MR_REQ_NAK_BOGUS:
		mr_stats_inc(dev, MR_CNT_RX_DROP_BOGUS_NAK);
		break;
	case MR_REQ_NAK_FAIL:
		mr_comp_fail(x, msn, pkt->nak.code == MR_NAK_REMOTE_ACCESS ?
				     IB_WC_REM_ACCESS_ERR :
				     IB_WC_REM_INV_REQ_ERR);
		break;
	case MR_REQ_NAK_RNR_SPENT:
		mr_comp_fail(x, msn, IB_WC_RNR_RETRY_EXC_ERR);
		break;
	default:
		break;
	}
}

/*
 * The sender engine's environment (proto/sender.h), the kernel's side: it
 * runs with the transport locked, inside the engine's calls above and in
 * req.c and timers.c.
 */
static struct mr_xport *mr_comp_of(struct mr_sender *s)
{
	return container_of(s, struct mr_xport, snd);
}

static const char *const mr_comp_why[] = {
	[MR_SEND_FIRST] = "first",
	[MR_SEND_SACK] = "sack",
	[MR_SEND_PROBE] = "probe",
	[MR_SEND_RTO] = "rto",
	[MR_SEND_MOVED] = "moved",
};

int mr_sender_env_xmit(struct mr_sender *s, u32 id, u32 psn,
		       const struct mr_tx_pkt *tp, u8 flags,
		       enum mr_send_why why)
{
	struct mr_xport *x = mr_comp_of(s);
	int n;

	if (why != MR_SEND_FIRST)
		trace_metaroce_retransmit(x->qp->ibqp.qp_num, id,
					  mr_sender_path_epoch(s, id), psn,
					  tp->msn, tp->offset, tp->resp,
					  mr_comp_why[why]);
	n = mr_tx_send(x, id, psn, tp, flags,
		       why == MR_SEND_FIRST ? MR_TX_FIRST_SEND : MR_TX_RESEND);
	if (n == -EFAULT) {
		mr_comp_fail(x, tp->msn, IB_WC_LOC_PROT_ERR);
		return 0;
	}
	/* The region went since the READ was checked: refuse it. */
	if (n == -EACCES) {
		const struct mr_resp *r = mr_responder_resp(&x->rsp, tp->msn);

		if (!x->ack.fatal)
			mr_ack_refuse_late(x, tp->msn, MR_NAK_REMOTE_ACCESS,
					   r ? r->path : 0);
		return 0;
	}
	return n;
}

/*
 * The rings of packet records the paths borrow while they have packets in
 * flight: an idle QP holds none.
 */
static struct kmem_cache *mr_comp_rings;

int mr_comp_init(void)
{
	mr_comp_rings = KMEM_CACHE(mr_tx_ring, 0);
	return mr_comp_rings ? 0 : -ENOMEM;
}

void mr_comp_exit(void)
{
	kmem_cache_destroy(mr_comp_rings);
}

/* In softirq or under the QP's lock: no sleeping, no warning. */
struct mr_tx_ring *mr_sender_env_ring_get(struct mr_sender *s)
{
	struct mr_tx_ring *r;

	r = kmem_cache_alloc(mr_comp_rings, GFP_ATOMIC | __GFP_NOWARN);
	if (!r)
		mr_stats_inc(to_mr_dev(mr_comp_of(s)->qp->ibqp.device),
			     MR_CNT_TX_RING_WAITS);
	return r;
}

void mr_sender_env_ring_put(struct mr_sender *s, struct mr_tx_ring *r)
{
	kmem_cache_free(mr_comp_rings, r);
}

/* A request of a WR complete meanwhile need not move. */
bool mr_sender_env_stale(struct mr_sender *s, const struct mr_tx_pkt *tp)
{
	return mr_requester_stale(&mr_comp_of(s)->req, tp);
}

/* A READ request whose response is arriving. */
bool mr_sender_env_answered(struct mr_sender *s, const struct mr_tx_pkt *tp)
{
	struct mr_xport *x = mr_comp_of(s);
	const struct mr_wqe_tx *wt;

	if (tp->resp || mr_seq_before(tp->msn, x->req.msn_head) ||
	    !mr_seq_before(tp->msn, x->req.msn_hi))
		return false;
	wt = mr_xport_wtx(x, tp->msn);
	return mr_xport_wqe(x, tp->msn)->opcode == IB_WR_RDMA_READ &&
	       wt->resp.got && !wt->resp.done;
}

u32 mr_sender_env_retries(struct mr_sender *s)
{
	return mr_xport_retries(mr_comp_of(s));
}

void mr_sender_env_retry_exceeded(struct mr_sender *s)
{
	mr_comp_retry_exceeded(mr_comp_of(s));
}

void mr_sender_env_failover(struct mr_sender *s, u32 id, u16 old_epoch,
			    u16 old_sport, u32 moved)
{
	struct mr_xport *x = mr_comp_of(s);
	struct mr_notify_failover ev = {
		.path_id = id,
		.old_epoch = old_epoch,
		.old_sport = old_sport,
		.new_epoch = s->ps.path[id].epoch,
		.new_sport = s->ps.path[id].sport,
		.moved = moved,
	};

	/* A new PSN space: no plane holds its packets. */
	mr_plane_track_restart(&x->planes, id);

	mr_stats_inc(to_mr_dev(x->qp->ibqp.device), MR_CNT_PATH_FAILOVERS);
	trace_metaroce_path_failover(x->qp->ibqp.qp_num, id, old_epoch,
				     old_sport, ev.new_epoch, ev.new_sport,
				     moved);
	mr_notify_path_failover(x->qp, &ev);
}

static const u8 mr_comp_event_counter[] = {
	[MR_SEV_RESENT] = MR_CNT_RETRANSMITS,
	[MR_SEV_SACK_GAP] = MR_CNT_SACK_GAPS,
	[MR_SEV_PROBE] = MR_CNT_TAIL_PROBES,
	[MR_SEV_RTO] = MR_CNT_RTO_EVENTS,
	[MR_SEV_DEFERRED] = MR_CNT_RTO_DEFERRED,
	[MR_SEV_PACED] = MR_CNT_CC_PACED,
	[MR_SEV_HINT_LIMITED] = MR_CNT_CC_HINT_LIMITED,
	[MR_SEV_CC_DECREASE] = MR_CNT_CC_DECREASES,
	[MR_SEV_SPURIOUS] = MR_CNT_SPURIOUS_RESENDS,
};

void mr_sender_env_event(struct mr_sender *s, enum mr_sender_event ev,
			 u32 id, u32 arg)
{
	struct mr_xport *x = mr_comp_of(s);
	const struct mr_tx_path *p = &s->path[id];

	mr_stats_inc(to_mr_dev(x->qp->ibqp.device), mr_comp_event_counter[ev]);
	/* A packet lost on a plane the path has left blames no plane. */
	if (ev == MR_SEV_RTO && mr_plane_track_blames(&x->planes, id, arg))
		mr_plane_path_timeout(to_mr_dev(x->qp->ibqp.device), &s->ps,
				      x->planes.sent, id, x->plane_reach);
	if (ev == MR_SEV_CC_DECREASE)
		trace_metaroce_cc(x->qp->ibqp.qp_num, id, arg, p->cc.w.cwnd,
				  p->cc.w.alpha, s->cc.w.cwnd, p->rto.srtt,
				  s->cc.hint_kbps);
}
