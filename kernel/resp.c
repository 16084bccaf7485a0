// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The responder: every SEND or WRITE packet is placed the moment it
 * arrives (WRITE at va + offset under its rkey, SEND into the receive its
 * RSN names, at offset across that receive's SGEs). Per message it tracks
 * which MTU slices have landed, so a packet that arrives twice (on two
 * paths, after a failover) counts once. Messages complete in MSN order:
 * "MSN done" advances over complete messages, and each one that consumed
 * a receive completes it to the CQ then.
 *
 * READ and atomic requests are checked on arrival and executed in MSN
 * order, after every earlier message has landed, as IB orders them. Their
 * responses are our own packets on our own paths, SACKed and resent like
 * requests: executing one records it (x->rsp.resp), and the requester
 * sends it (mr_req_respond(), through mr_responder_response_due() and
 * mr_responder_response_take()); an atomic's result is kept with its response, so it
 * executes only once. READ_RESP and ATOMIC_RESP for our requests go to
 * the completer (mr_comp_resp_in()), which records them on their path
 * as this file does requests.
 *
 * A message of more than 64 slices has an allocated slice map; the maps
 * of a QP's messages in progress hold at most x->rsp.map_budget bits
 * (proto/bounds.h). A message whose map would pass it is refused at its
 * first packet, before anything is allocated: RC NAKs it INVALID_REQUEST
 * (a length beyond what the responder supports), UC drops it. A map is
 * allocated only for a packet its path takes as new (mr_ack_fresh()),
 * and charged to the device too (MR_DEV_MAP_BYTES): one the device cannot
 * hold drops its packet unrecorded, and the requester resends it. After a
 * fatal NAK ack.c repeats it at most once per MR_FATAL_NAK_GAP_NS,
 * however many packets come.
 *
 * The responder holds at most max_dest_rd_atomic READs and atomics (not
 * executed, or with a response packet not yet sent); one beyond is
 * dropped unrecorded, counted as rx_drop_rd_excess (proto/responder.c,
 * mr_responder_rd_busy()).
 *
 * The decisions are the responder engine's (proto/responder.c: admission,
 * slices, duplicates, completion order, UC drops, the responses and their
 * slicing); this file is its kernel side: the memory, the receive queue,
 * the counters, and the engine's environment. A packet goes through three
 * phases (mr_resp_rcv()): admit (is the connection receiving, which
 * message is it of, is its receive posted), record on the path (ack.c:
 * new, or a duplicate), act (place it, then NAK, acknowledge, complete).
 * ack.c sends the ACKs and NAKs.
 *
 * UC QPs use all of the above but refuse nothing: a message that fails
 * at the responder (no receive posted, bad rkey or bounds, longer than
 * its receive, READ or atomic, malformed) is dropped, counted in a
 * uc_rx_drop_* counter, and treated as complete: its packets are still
 * acknowledged and "MSN done" moves past it, no NAK goes out, and neither
 * QP leaves RTS. A message that found no receive posted skips its RSN:
 * the receives of the messages after it move up by one (mr_resp_recv()).
 * A message that had taken its receive before it failed completes that
 * receive in error, since later messages may already be placed in the
 * receives after it.
 *
 * A lying peer cannot make two messages share a receive: the engine
 * drops a message whose RSN is out of order with the others (counted
 * rx_drop_malformed), and refuses one whose receive is not the next when
 * it completes. A message takes its receive (with an SRQ, binds it) only
 * once its first packet is new on its path, and a SEND is placed only
 * into a receive still posted.
 */
#include <linux/slab.h>

#include "ack.h"
#include "counters.h"
#include "cq.h"
#include "mr.h"
#include "qp.h"
#include "resp.h"
#include "srq.h"
#include "wq.h"
#include "proto/bounds.h"

/*
 * What a UC drop is to the administrator (its counter) and to the
 * receive it owned (its status), by enum mr_rx_error.
 */
static const struct {
	u8 counter;		/* enum mr_counter */
	u8 status;		/* enum ib_wc_status */
} mr_resp_drops[] = {
	[MR_RXE_NO_RECV] = { MR_CNT_UC_RX_DROP_NO_RECV, IB_WC_SUCCESS },
	[MR_RXE_MAP_BUDGET] = { MR_CNT_RX_REFUSED_MAP_BUDGET,
				IB_WC_REM_INV_REQ_ERR },
	[MR_RXE_INVALID] = { MR_CNT_UC_RX_DROP_INVALID, IB_WC_REM_INV_REQ_ERR },
	[MR_RXE_REMOTE_ACCESS] = { MR_CNT_UC_RX_DROP_REMOTE_ACCESS,
				   IB_WC_REM_ACCESS_ERR },
	[MR_RXE_TOO_LONG] = { MR_CNT_UC_RX_DROP_TOO_LONG, IB_WC_LOC_LEN_ERR },
	[MR_RXE_RECV_FAULT] = { MR_CNT_UC_RX_DROP_RECV_FAULT,
				IB_WC_LOC_PROT_ERR },
};

static struct mr_xport *mr_resp_of(struct mr_responder *r)
{
	return container_of(r, struct mr_xport, rsp);
}

static struct mr_dev *mr_resp_dev(struct mr_responder *r)
{
	return to_mr_dev(mr_resp_of(r)->qp->ibqp.device);
}

/*
 * RTR: a new connection's responder, its paths at the agreed PSN, its
 * slices of the MTU that xport.c has set.
 */
void mr_resp_init(struct mr_xport *x)
{
	mr_ack_init(x);
	mr_responder_init(&x->rsp, x->mtu, x->qp->ibqp.qp_type == IB_QPT_UC);
	mr_responder_set_rd_max(&x->rsp, x->qp->attr.max_dest_rd_atomic);
}

/* Forget every response (RESET, or a new connection at RTR). */
void mr_resp_reset(struct mr_xport *x)
{
	mr_responder_reset(&x->rsp);
}

/* Free every message slot: RESET, and destroy. */
void mr_resp_free(struct mr_xport *x)
{
	WARN_ON_ONCE(mr_responder_free(&x->rsp));
}

/* SEND: scatter @len bytes at message offset @off into receive @recv. */
static int mr_resp_scatter(struct mr_xport *x, u32 recv, u32 msg_len,
			   u32 off, const u8 *src, u32 len)
{
	struct mr_qp *qp = x->qp;
	struct mr_wq *rq = &qp->rq;
	struct mr_recv_wqe *wqe;
	unsigned long flags;
	int err;

	spin_lock_irqsave(&rq->lock, flags);
	/* Only a receive still posted (not completed, not flushed). */
	if (recv - x->rsp.rsn_head >= rq->count) {
		spin_unlock_irqrestore(&rq->lock, flags);
		return -EFAULT;
	}
	wqe = mr_wq_slot(rq, rq->head + (recv - x->rsp.rsn_head));
	if (wqe->done)
		err = -EFAULT;
	else if (msg_len > wqe->length)
		err = -EMSGSIZE;
	else
		err = mr_mr_sgl_copy(to_mr_dev(qp->ibqp.device), qp->ibqp.pd,
				     wqe->sge, wqe->num_sge, off, (void *)src,
				  len, MR_COPY_TO_SGL);
	spin_unlock_irqrestore(&rq->lock, flags);
	return err;
}

/* WRITE: place under the rkey, with the QP's and the MR's write right. */
static int mr_resp_write(struct mr_xport *x, const struct mr_pkt *pkt,
			 const u8 *src, u32 len)
{
	struct mr_qp *qp = x->qp;
	struct mr_dev *dev = to_mr_dev(qp->ibqp.device);
	struct mr_mr *mr;
	int err;

	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_WRITE))
		return -EACCES;
	if (!len)
		return 0;
	mr = mr_mr_get(dev, qp->ibqp.pd, pkt->write.rkey, qp);
	if (!mr)
		return -EACCES;
	err = mr_mr_copy_to(mr, pkt->write.va + pkt->write.offset, src, len,
			    MR_ACC_REMOTE_WRITE);
	mr_mr_put(mr);
	return err;
}

/*
 * A READ or atomic request as it arrives: 0, or the NAK that refuses it.
 * It executes later, in order; mr_resp_execute() checks the MR again.
 */
static u8 mr_resp_check_rd(struct mr_xport *x, const struct mr_rx_msg *m)
{
	struct mr_qp *qp = x->qp;
	struct mr_dev *dev = to_mr_dev(qp->ibqp.device);
	bool read = m->opcode == MR_OP_READ_REQ;
	u32 len = read ? m->rd_len : sizeof(u64);
	int right = read ? IB_ACCESS_REMOTE_READ : IB_ACCESS_REMOTE_ATOMIC;
	struct mr_mr *mr;
	int err;

	if (!(qp->attr.qp_access_flags & right))
		return MR_NAK_INVALID_REQUEST;
	if (!read && !IS_ALIGNED(m->va, sizeof(u64)))
		return MR_NAK_INVALID_REQUEST;
	if (!len)
		return 0;	/* an empty READ names no memory */
	mr = mr_mr_get(dev, qp->ibqp.pd, m->rkey, qp);
	if (!mr)
		return MR_NAK_REMOTE_ACCESS;
	err = mr_mr_check(mr, m->va, len, read ? MR_ACC_REMOTE_READ :
						  MR_ACC_REMOTE_ATOMIC);
	mr_mr_put(mr);
	return err ? MR_NAK_REMOTE_ACCESS : 0;
}

/*
 * A SEND with invalidate landed: the fast-reg MR that its rkey names loses
 * its keys, and the receive says so. An rkey that names no such MR of the
 * QP's PD with remote rights fails the receive (mr.c counts it as a
 * refused key).
 */
static void mr_resp_invalidate(struct mr_xport *x, u32 rkey, struct ib_wc *wc)
{
	struct mr_qp *qp = x->qp;

	if (mr_mr_invalidate(to_mr_dev(qp->ibqp.device), qp->ibqp.pd, rkey,
			     qp)) {
		wc->status = IB_WC_LOC_PROT_ERR;
		return;
	}
	wc->wc_flags = IB_WC_WITH_INVALIDATE;
	wc->ex.invalidate_rkey = rkey;
}

/*
 * Complete the receive at the head of the ring for message @m: with
 * IB_WC_SUCCESS, or the error that made UC drop @m.
 */
static bool mr_resp_complete_recv(struct mr_xport *x,
				  const struct mr_rx_msg *m,
				  enum ib_wc_status status)
{
	unsigned int op_flags = mr_wire_op_flags(m->opcode);
	struct mr_qp *qp = x->qp;
	struct mr_wq *rq = &qp->rq;
	struct mr_recv_wqe *wqe;
	struct ib_wc wc = {};
	unsigned long flags;

	spin_lock_irqsave(&rq->lock, flags);
	if (m->recv - x->rsp.rsn_head >= rq->count) {
		spin_unlock_irqrestore(&rq->lock, flags);
		return false;
	}
	wqe = mr_wq_slot(rq, rq->head + (m->recv - x->rsp.rsn_head));
	wc.wr_id = wqe->wr_id;
	wqe->done = true;
	spin_unlock_irqrestore(&rq->lock, flags);

	wc.status = status;
	wc.qp = &qp->ibqp;
	wc.port_num = MR_PORT;
	/* mrcdv.h: a completion's stream travels where a LID would. */
	wc.slid = m->stream;
	if (status != IB_WC_SUCCESS) {
		wc.opcode = IB_WC_RECV;
		mr_cq_post(qp->rcq, &wc, false);
		return true;
	}
	wc.byte_len = m->length;
	wc.opcode = m->opcode == MR_OP_WRITE_IMM ? IB_WC_RECV_RDMA_WITH_IMM :
						   IB_WC_RECV;
	if (op_flags & MR_WIRE_F_IMM) {
		wc.wc_flags = IB_WC_WITH_IMM;
		wc.ex.imm_data = cpu_to_be32(m->imm);
	} else if (op_flags & MR_WIRE_F_INVALIDATES) {
		mr_resp_invalidate(x, m->imm, &wc);
	}
	mr_cq_post(qp->rcq, &wc, m->solicited);
	return true;
}

/*
 * Act on a new packet @rx from port @sport: place it; then NAK,
 * acknowledge, and complete what it completed.
 */
static enum mr_xport_next mr_resp_act(struct mr_xport *x, struct mr_rx *rx,
				      __be16 sport, bool ack_now)
{
	struct mr_dev *dev = to_mr_dev(x->qp->ibqp.device);
	const struct mr_pkt *pkt = rx->pkt;
	bool complete = false, dup = false;
	u8 nak = 0;

	switch (rx->kind) {
	case MR_RX_RNR:
		nak = MR_NAK_RNR;
		break;
	case MR_RX_REFUSE:
		mr_stats_inc(dev, MR_CNT_RX_REFUSED_MAP_BUDGET);
		nak = MR_NAK_INVALID_REQUEST;
		break;
	case MR_RX_MESSAGE:
		nak = mr_responder_place(&x->rsp, rx, &complete, &dup);
		break;
	default:
		/* A message already complete: acknowledged, not executed. */
		mr_stats_inc(dev, MR_CNT_DUPLICATE_PACKETS);
		break;
	}
	if (nak && nak != MR_NAK_RNR)
		mr_ack_refuse(x, rx->ri.msn, nak);
	if (nak)
		mr_ack_nak(x, pkt, sport, rx->ri.msn, nak);
	if (complete) {
		bool respond = mr_responder_advance(&x->rsp, x->ack.fatal);

		mr_ack_all(x);
		return respond ? MR_NEXT_RESPOND : MR_NEXT_NONE;
	}
	/*
	 * A packet that no completion will acknowledge (refused, of a message
	 * already complete, or a slice that landed before: the copy of a READ
	 * request, a packet moved off a failed path) is acknowledged now, or
	 * its sender would wait for its timer.
	 */
	mr_ack_coalesce(x, pkt->base.path, pkt->base.psn,
			ack_now || nak || rx->kind == MR_RX_OLD || dup);
	return MR_NEXT_NONE;
}

/**
 * mr_resp_rcv() - a data packet for this QP: a request, or a response to
 * one of ours
 * @x: the transport, locked (receive.c), of a QP the caller references
 * @skb: the packet, linear, data at the MetaRoCE base header
 * @pkt: its decoded headers
 *
 * Admit it (ack.c: is the connection receiving; the engine: which message
 * is it of), record it on its path (ack.c: a packet the path does not
 * take as new must not define its message), then act.
 *
 * Return: what the requester should do next: send responses now due
 * (MR_NEXT_RESPOND), send more as a READ or atomic completed
 * (MR_NEXT_PUSH), or nothing.
 */
enum mr_xport_next mr_resp_rcv(struct mr_xport *x, struct sk_buff *skb,
			       const struct mr_pkt *pkt)
{
	struct mr_rx rx = { .pkt = pkt, .data = skb->data + pkt->hdr_len };
	__be16 sport = udp_hdr(skb)->source;
	enum mr_sack_rx_res res;
	bool ack_now = false;

	if (!mr_ack_admit(x, pkt, sport))
		return MR_NEXT_NONE;
	/* A slice map only for a packet its path takes as new. */
	rx.new_pkt = mr_ack_fresh(x, pkt);
	mr_responder_admit(&x->rsp, &rx);
	if (rx.kind == MR_RX_DROP)
		return MR_NEXT_NONE;
	res = mr_ack_arrival(x, pkt, sport, mr_ack_ce(skb), &ack_now);
	if (res != MR_SACK_NEW) {
		mr_responder_unadmit(&x->rsp, &rx);
		if (res == MR_SACK_DUP && rx.kind == MR_RX_RNR)
			mr_ack_nak(x, pkt, sport, rx.ri.msn, MR_NAK_RNR);
		return MR_NEXT_NONE;
	}
	return mr_resp_act(x, &rx, sport, ack_now);
}

/*
 * The responder engine's environment (proto/responder.h), the kernel's
 * side: it runs with the transport locked, inside the engine's calls
 * above and in req.c.
 */
bool mr_responder_env_posted(struct mr_responder *r, u32 recv)
{
	struct mr_xport *x = mr_resp_of(r);
	struct mr_wq *rq = &x->qp->rq;
	unsigned long flags;
	bool ok;

	/* With an SRQ: bound to one of its receives. */
	if (x->qp->ibqp.srq)
		return mr_srq_bind(x->qp, r->rsn_head, recv);
	spin_lock_irqsave(&rq->lock, flags);
	ok = recv - r->rsn_head < rq->count;
	if (!ok && !mr_wq_pull(to_mr_dev(x->qp->ibqp.device), rq))
		mr_qp_fatal(x->qp);
	else if (!ok)
		ok = recv - r->rsn_head < rq->count;
	spin_unlock_irqrestore(&rq->lock, flags);
	return ok;
}

void *mr_responder_env_alloc(struct mr_responder *r, u32 bytes)
{
	return kzalloc(bytes, GFP_ATOMIC | __GFP_NOWARN);
}

void mr_responder_env_free(struct mr_responder *r, void *p)
{
	kfree(p);
}

/*
 * Slice maps are charged to the device too (MR_DEV_MAP_BYTES), so that
 * many QPs at their budget cannot take all memory the GFP_ATOMIC pools
 * have. A map refused here drops its packet before its path records it:
 * the requester sends it again.
 */
void *mr_responder_env_map_alloc(struct mr_responder *r, u32 bytes)
{
	struct mr_dev *dev = mr_resp_dev(r);
	void *p;

	if (atomic_add_return(bytes, &dev->rsp_map_bytes) > MR_DEV_MAP_BYTES) {
		atomic_sub(bytes, &dev->rsp_map_bytes);
		mr_stats_inc(dev, MR_CNT_RX_DROP_DEV_MAP_BUDGET);
		return NULL;
	}
	p = kzalloc(bytes, GFP_ATOMIC | __GFP_NOWARN);
	if (!p) {
		atomic_sub(bytes, &dev->rsp_map_bytes);
		mr_stats_inc(dev, MR_CNT_RX_DROP_SHORT);
	}
	return p;
}

void mr_responder_env_map_free(struct mr_responder *r, void *p, u32 bytes)
{
	kfree(p);
	atomic_sub(bytes, &mr_resp_dev(r)->rsp_map_bytes);
}

int mr_responder_env_write(struct mr_responder *r, const struct mr_rx *rx)
{
	return mr_resp_write(mr_resp_of(r), rx->pkt, rx->data,
			     rx->pkt->payload_len) ? -MR_EACCESS : 0;
}

int mr_responder_env_scatter(struct mr_responder *r, const struct mr_rx *rx,
			     u32 recv)
{
	int err = mr_resp_scatter(mr_resp_of(r), recv, rx->ri.length,
				  rx->ri.offset, rx->data,
				  rx->pkt->payload_len);

	if (err == -EMSGSIZE)
		return -MR_ELENGTH;
	return err ? -MR_EACCESS : 0;
}

u8 mr_responder_env_check_rd(struct mr_responder *r, const struct mr_rx_msg *m)
{
	return mr_resp_check_rd(mr_resp_of(r), m);
}

u8 mr_responder_env_atomic(struct mr_responder *r, const struct mr_rx_msg *m,
			   u64 *orig)
{
	struct mr_qp *qp = mr_resp_of(r)->qp;
	struct mr_mr *mr;
	int err;

	mr = mr_mr_get(to_mr_dev(qp->ibqp.device), qp->ibqp.pd, m->rkey, qp);
	if (!mr)
		return MR_NAK_REMOTE_ACCESS;
	err = mr_mr_atomic(mr, m->va, m->opcode == MR_OP_CMP_SWAP,
			   m->swap_add, m->compare, orig);
	mr_mr_put(mr);
	return err ? MR_NAK_REMOTE_ACCESS : 0;
}

bool mr_responder_env_complete_recv(struct mr_responder *r,
				    const struct mr_rx_msg *m, u8 error)
{
	return mr_resp_complete_recv(mr_resp_of(r), m,
				     mr_resp_drops[error].status);
}

void mr_responder_env_retire_recv(struct mr_responder *r)
{
	struct mr_wq *rq = &mr_resp_of(r)->qp->rq;
	unsigned long flags;

	spin_lock_irqsave(&rq->lock, flags);
	if (rq->count)
		mr_wq_pop(rq);
	spin_unlock_irqrestore(&rq->lock, flags);
}

void mr_responder_env_refuse_late(struct mr_responder *r, u32 msn, u8 nak,
				  u8 path)
{
	mr_ack_refuse_late(mr_resp_of(r), msn, nak, path);
}

void mr_responder_env_event(struct mr_responder *r,
			    enum mr_responder_event ev, u32 arg)
{
	static const u8 counter[] = {
		[MR_RSE_MALFORMED] = MR_CNT_RX_DROP_MALFORMED,
		[MR_RSE_SHORT] = MR_CNT_RX_DROP_SHORT,
		[MR_RSE_DUPLICATE] = MR_CNT_DUPLICATE_PACKETS,
		[MR_RSE_RD_EXCESS] = MR_CNT_RX_DROP_RD_EXCESS,
	};

	mr_stats_inc(mr_resp_dev(r), ev == MR_RSE_DROPPED ?
		     mr_resp_drops[arg].counter : counter[ev]);
}
