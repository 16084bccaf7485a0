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
 * sends it (mr_req_respond(), through mr_resp_pending() and
 * mr_resp_take()); an atomic's result is kept with its response, so it
 * executes only once. READ_RESP and ATOMIC_RESP for our requests go to
 * the completer (mr_comp_resp_in()), which records them on their path
 * as this file does requests.
 *
 * A message of more than 64 slices has an allocated slice map; the maps
 * of a QP's messages in progress hold at most x->rsp.map_budget bits
 * (proto/bounds.h). A message whose map would pass it is refused at its
 * first packet, before anything is allocated: RC NAKs it INVALID_REQUEST
 * (a length beyond what the responder supports), UC drops it. After a
 * fatal NAK ack.c repeats it at most once per MR_FATAL_NAK_GAP_NS,
 * however many packets come.
 *
 * A packet goes through three phases (mr_resp_rcv()): admit (is the
 * connection receiving, which message is it of, is its receive posted),
 * record on the path (ack.c: new, or a duplicate), act (place it, or
 * hand a response to the completer), carried by a struct mr_resp_rx.
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
 */
#include <kunit/visibility.h>
#include <linux/slab.h>

#include "ack.h"
#include "counters.h"
#include "cq.h"
#include "mr.h"
#include "resp.h"
#include "srq.h"
#include "proto/bounds.h"

/*
 * RTR: a new connection's responder, its paths at the agreed PSN, its
 * slices of the MTU that xport.c has set.
 */
void mr_resp_init(struct mr_xport *x)
{
	mr_ack_init(x);
	x->rsp.msn_done = 0;
	x->rsp.rsn_head = 0;
	x->rsp.rsn_skipped = 0;
	x->rsp.uc_skips = 0;
	mr_resp_reset(x);
	x->rsp.map_budget = mr_bounds_map_budget(x->mtu);
}

/* Forget every response (RESET, or a new connection at RTR). */
void mr_resp_reset(struct mr_xport *x)
{
	memset(x->rsp.resp, 0, sizeof(x->rsp.resp));
	x->rsp.resp_send = 0;
}

/*
 * The requester's side of the responses, oldest first (mr_req_push()):
 * whether one has a packet left to send. None goes after a fatal NAK.
 */
bool mr_resp_pending(struct mr_xport *x)
{
	while (x->rsp.resp_send != x->rsp.msn_done && !x->ack.fatal) {
		const struct mr_resp *r;

		r = &x->rsp.resp[x->rsp.resp_send % MR_MSG_WINDOW];
		if (r->valid && r->msn == x->rsp.resp_send &&
		    r->sent != r->npkts)
			return true;
		x->rsp.resp_send++;
	}
	return false;
}

/*
 * The requester sends the next packet of the response mr_resp_pending()
 * found: into @tp, and counted as sent.
 */
void mr_resp_take(struct mr_xport *x, struct mr_tx_pkt *tp)
{
	struct mr_resp *r = &x->rsp.resp[x->rsp.resp_send % MR_MSG_WINDOW];

	tp->msn = r->msn;
	tp->offset = r->sent++ * x->mtu;
	tp->resp = true;
}

static void mr_resp_info(const struct mr_pkt *pkt, struct mr_resp_info *ri)
{
	memset(ri, 0, sizeof(*ri));
	switch (pkt->base.opcode) {
	case MR_OP_READ_REQ:
		/* One packet without payload: a message of one empty slice. */
		ri->msn = pkt->read_req.msn;
		break;
	case MR_OP_CMP_SWAP:
	case MR_OP_FETCH_ADD:
		ri->msn = pkt->atomic.msn;
		break;
	case MR_OP_WRITE:
	case MR_OP_WRITE_IMM:
		ri->msn = pkt->write.msn;
		ri->rsn = pkt->write.rsn;
		ri->imm = pkt->write.imm;
		ri->length = pkt->write.length;
		ri->offset = pkt->write.offset;
		ri->consume = mr_wire_op_flags(pkt->base.opcode) &
			      MR_WIRE_F_CONSUMES;
		break;
	default:
		ri->msn = pkt->send.msn;
		ri->rsn = pkt->send.rsn;
		/* A SEND_INV's rkey travels where a SEND_IMM's imm does. */
		ri->imm = (mr_wire_op_flags(pkt->base.opcode) &
			   MR_WIRE_F_INVALIDATES) ? pkt->send.inv_rkey :
						    pkt->send.imm;
		ri->length = pkt->send.length;
		ri->offset = pkt->send.offset;
		ri->consume = true;
		break;
	}
}

static bool mr_resp_is_uc(const struct mr_xport *x)
{
	return x->qp->ibqp.qp_type == IB_QPT_UC;
}

/*
 * The receive that the message numbered @rsn takes, counted like
 * rsn_head: its RSN less the RSNs that UC messages before it skipped. A
 * skip is always decided before any later message takes a receive (both
 * are decided against the receives posted, which only grow), so the
 * answer does not change once a message has its receive.
 */
VISIBLE_IF_KUNIT u32 mr_resp_recv(const struct mr_xport *x, u32 rsn)
{
	u32 skipped = x->rsp.rsn_skipped, i;

	for (i = 0; x->rsp.uc_skips && i < MR_MSG_WINDOW; i++) {
		const struct mr_rx_msg *m = &x->rsp.msg[i];

		if (m->used && m->skipped && mr_seq_before(m->rsn, rsn))
			skipped++;
	}
	return rsn - skipped;
}
EXPORT_SYMBOL_IF_KUNIT(mr_resp_recv);

/* Whether receive @recv is posted (with an SRQ: bound). */
static bool mr_resp_posted(struct mr_xport *x, u32 recv)
{
	struct mr_wq *rq = &x->qp->rq;
	unsigned long flags;
	bool ok;

	if (x->qp->ibqp.srq)
		return mr_srq_bind(x->qp, x->rsp.rsn_head, recv);
	spin_lock_irqsave(&rq->lock, flags);
	ok = recv - x->rsp.rsn_head < rq->count;
	spin_unlock_irqrestore(&rq->lock, flags);
	return ok;
}

/* The fields of slot @m for the message of @pkt, all but its map. */
static void mr_resp_msg_fill(struct mr_rx_msg *m, const struct mr_pkt *pkt,
			     const struct mr_resp_info *ri, u32 nslices)
{
	m->used = true;
	m->consume = ri->consume;
	m->opcode = pkt->base.opcode;
	m->msn = ri->msn;
	m->rsn = ri->rsn;
	m->recv = ri->rsn;
	m->imm = ri->imm;
	m->length = ri->length;
	m->nslices = nslices;
	m->path = pkt->base.path;
	if (pkt->base.opcode == MR_OP_READ_REQ) {
		m->rkey = pkt->read_req.rkey;
		m->va = pkt->read_req.va;
		m->rd_len = pkt->read_req.length;
	} else if (mr_wire_op_flags(pkt->base.opcode) & MR_WIRE_F_ATOMIC) {
		m->rkey = pkt->atomic.rkey;
		m->va = pkt->atomic.va;
		m->swap_add = pkt->atomic.swap_add;
		m->compare = pkt->atomic.compare;
	}
}

/*
 * Open the slot @m for the message of @pkt. Its slice map, if it needs
 * one allocated, is charged to the QP's budget: -ENOSPC when it would
 * pass it (nothing is allocated), -ENOMEM when the allocation fails.
 */
VISIBLE_IF_KUNIT int mr_resp_msg_init(struct mr_xport *x, struct mr_rx_msg *m,
				      const struct mr_pkt *pkt,
				      const struct mr_resp_info *ri)
{
	u32 nslices = mr_bounds_map_bits(ri->length, x->mtu);

	memset(m, 0, sizeof(*m));
	if (nslices > BITS_PER_TYPE(m->map1)) {
		if (!mr_bounds_map_admit(x->rsp.map_bits, nslices,
					 x->rsp.map_budget))
			return -ENOSPC;
		m->map = bitmap_zalloc(nslices, GFP_ATOMIC);
		if (!m->map)
			return -ENOMEM;
		x->rsp.map_bits += nslices;
	} else {
		m->map = (unsigned long *)&m->map1;
	}
	mr_resp_msg_fill(m, pkt, ri, nslices);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_resp_msg_init);

/* Close the slot @m, giving its map's bits back to the budget. */
VISIBLE_IF_KUNIT void mr_resp_msg_free(struct mr_xport *x, struct mr_rx_msg *m)
{
	if (m->map && m->map != (unsigned long *)&m->map1) {
		bitmap_free(m->map);
		x->rsp.map_bits -= m->nslices;
	}
	memset(m, 0, sizeof(*m));
}
EXPORT_SYMBOL_IF_KUNIT(mr_resp_msg_free);

/*
 * UC: a message whose slice map would pass the budget opens its slot
 * without one, dropped: its packets are only acknowledged.
 */
static void mr_resp_msg_init_dropped(struct mr_rx_msg *m,
				     const struct mr_pkt *pkt,
				     const struct mr_resp_info *ri)
{
	memset(m, 0, sizeof(*m));
	m->map = (unsigned long *)&m->map1;
	mr_resp_msg_fill(m, pkt, ri, 0);
	m->dropped = true;
	m->drop_counter = MR_CNT_RX_REFUSED_MAP_BUDGET;
	m->drop_status = IB_WC_REM_INV_REQ_ERR;
}

/* Free every message slot: RESET, and destroy. */
void mr_resp_free(struct mr_xport *x)
{
	u32 i;

	for (i = 0; i < MR_MSG_WINDOW; i++)
		mr_resp_msg_free(x, &x->rsp.msg[i]);
	WARN_ON_ONCE(x->rsp.map_bits);
	x->rsp.map_bits = 0;
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
	wqe = mr_wq_slot(rq, rq->head + (recv - x->rsp.rsn_head));
	if (msg_len > wqe->length)
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
 * Execute the READ or atomic @m, next in MSN order: record its response,
 * which the requester sends (mr_req_respond()). Returns 0 or a NAK code.
 */
static u8 mr_resp_execute(struct mr_xport *x, const struct mr_rx_msg *m)
{
	struct mr_qp *qp = x->qp;
	struct mr_resp *r = &x->rsp.resp[m->msn % MR_MSG_WINDOW];
	struct mr_mr *mr;
	int err;

	memset(r, 0, sizeof(*r));
	r->opcode = m->opcode;
	r->msn = m->msn;
	r->rkey = m->rkey;
	r->va = m->va;
	r->path = m->path;
	if (m->opcode == MR_OP_READ_REQ) {
		r->length = m->rd_len;
		r->npkts = max_t(u32, 1, DIV_ROUND_UP(m->rd_len, x->mtu));
	} else {
		r->npkts = 1;
		mr = mr_mr_get(to_mr_dev(qp->ibqp.device), qp->ibqp.pd,
			       m->rkey, qp);
		if (!mr)
			return MR_NAK_REMOTE_ACCESS;
		err = mr_mr_atomic(mr, m->va, m->opcode == MR_OP_CMP_SWAP,
				   m->swap_add, m->compare, &r->orig);
		mr_mr_put(mr);
		if (err)
			return MR_NAK_REMOTE_ACCESS;
	}
	r->valid = true;
	return 0;
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
static void mr_resp_complete_recv(struct mr_xport *x, struct mr_rx_msg *m,
				  enum ib_wc_status status)
{
	unsigned int op_flags = mr_wire_op_flags(m->opcode);
	struct mr_qp *qp = x->qp;
	struct mr_wq *rq = &qp->rq;
	struct mr_recv_wqe *wqe;
	struct ib_wc wc = {};
	unsigned long flags;

	spin_lock_irqsave(&rq->lock, flags);
	if (!rq->count) {
		spin_unlock_irqrestore(&rq->lock, flags);
		return;
	}
	wqe = mr_wq_slot(rq, rq->head);
	wc.wr_id = wqe->wr_id;
	rq->head = (rq->head + 1) % rq->depth;
	rq->count--;
	spin_unlock_irqrestore(&rq->lock, flags);
	x->rsp.rsn_head++;

	wc.status = status;
	wc.qp = &qp->ibqp;
	wc.port_num = MR_PORT;
	if (status != IB_WC_SUCCESS) {
		wc.opcode = IB_WC_RECV;
		mr_cq_post(qp->rcq, &wc, false);
		return;
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
}

/*
 * Advance "MSN done" over complete messages: complete the receives they
 * consumed, execute READs and atomics. Returns whether a response is due.
 */
static bool mr_resp_advance(struct mr_xport *x)
{
	bool respond = false;
	u8 nak;

	while (!x->ack.fatal) {
		u32 slot = x->rsp.msn_done % MR_MSG_WINDOW;
		struct mr_rx_msg *m = &x->rsp.msg[slot];

		if (!m->used || !m->done || m->msn != x->rsp.msn_done)
			break;
		if (m->dropped) {
			mr_stats_inc(to_mr_dev(x->qp->ibqp.device),
				     m->drop_counter);
			if (m->skipped) {
				x->rsp.uc_skips--;
				x->rsp.rsn_skipped++;
			} else if (m->consume) {
				mr_resp_complete_recv(x, m, m->drop_status);
			}
			mr_resp_msg_free(x, m);
			x->rsp.msn_done++;
			continue;
		}
		if (mr_wire_op_flags(m->opcode) & MR_WIRE_F_READ_OR_ATOMIC) {
			nak = mr_resp_execute(x, m);
			if (nak) {
				mr_ack_refuse_late(x, m->msn, nak, m->path);
				return false;
			}
			respond = true;
		} else if (m->consume) {
			/* A SEND, or a WRITE with immediate. */
			mr_resp_complete_recv(x, m, IB_WC_SUCCESS);
		}
		mr_resp_msg_free(x, m);
		x->rsp.msn_done++;
	}
	return respond;
}

/* UC: drop message @m for good, @counter says why (see the top). */
static void mr_resp_uc_drop(struct mr_rx_msg *m, enum mr_counter counter,
			    enum ib_wc_status status, bool *complete)
{
	if (!m->dropped) {
		m->dropped = true;
		m->drop_counter = counter;
		m->drop_status = status;
	}
	/* Complete as it stands: its other packets are only acknowledged. */
	if (!m->done) {
		m->done = true;
		*complete = true;
	}
}

/*
 * An error in message @m: RC refuses it with the NAK @nak (returned), UC
 * drops it and goes on (0).
 */
VISIBLE_IF_KUNIT u8 mr_resp_fail(struct mr_xport *x, struct mr_rx_msg *m, u8 nak,
				 enum mr_counter counter, enum ib_wc_status status,
		       bool *complete)
{
	if (!mr_resp_is_uc(x))
		return nak;
	mr_resp_uc_drop(m, counter, status, complete);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_resp_fail);

/*
 * Place a new packet of message @m. Returns 0 or a NAK code. Sets
 * *complete when the message has all its bytes, *dup when the slice had
 * landed before.
 */
static u8 mr_resp_place(struct mr_xport *x, struct mr_rx_msg *m,
			const struct mr_pkt *pkt, const struct mr_resp_info *ri,
			const u8 *data, bool *complete, bool *dup)
{
	struct mr_dev *dev = to_mr_dev(x->qp->ibqp.device);
	u32 slice = ri->offset / x->mtu;
	u32 want = min(x->mtu, ri->length - ri->offset);
	unsigned int op_flags = mr_wire_op_flags(pkt->base.opcode);
	bool rd = op_flags & MR_WIRE_F_READ_OR_ATOMIC;
	int err;

	/* UC: the rest of a dropped message only needs acknowledging. */
	if (m->dropped) {
		mr_resp_uc_drop(m, m->drop_counter, m->drop_status, complete);
		return 0;
	}
	/* Slices are the MTU both ends agreed on; anything else is refused. */
	if (ri->length != m->length || ri->offset % x->mtu ||
	    pkt->payload_len != want || pkt->base.opcode != m->opcode ||
	    (rd && mr_resp_is_uc(x)))
		return mr_resp_fail(x, m, MR_NAK_INVALID_REQUEST,
				    MR_CNT_UC_RX_DROP_INVALID,
				    IB_WC_REM_INV_REQ_ERR, complete);
	if (test_and_set_bit(slice, m->map)) {
		mr_stats_inc(dev, MR_CNT_DUPLICATE_PACKETS);
		*dup = true;
		return 0;
	}
	if (rd) {
		err = mr_resp_check_rd(x, m);
		if (err)
			return err;
	} else if (op_flags & MR_WIRE_F_WRITE) {
		err = mr_resp_write(x, pkt, data, pkt->payload_len);
		if (err)
			return mr_resp_fail(x, m, MR_NAK_REMOTE_ACCESS,
					    MR_CNT_UC_RX_DROP_REMOTE_ACCESS,
					    IB_WC_REM_ACCESS_ERR, complete);
	} else if (pkt->payload_len || ri->length) {
		err = mr_resp_scatter(x, m->recv, ri->length, ri->offset, data,
				      pkt->payload_len);
		if (err == -EMSGSIZE)
			return mr_resp_fail(x, m, MR_NAK_INVALID_REQUEST,
					    MR_CNT_UC_RX_DROP_TOO_LONG,
					    IB_WC_LOC_LEN_ERR, complete);
		if (err)
			return mr_resp_fail(x, m, MR_NAK_INVALID_REQUEST,
					    MR_CNT_UC_RX_DROP_RECV_FAULT,
					    IB_WC_LOC_PROT_ERR, complete);
	}
	if (pkt->base.flags & MR_FLAG_SOLICITED)
		m->solicited = true;
	if (++m->got == m->nslices) {
		m->done = true;
		*complete = true;
	}
	return 0;
}

/* What one arriving data packet is to the responder, through its phases. */
struct mr_resp_rx {
	const struct mr_pkt *pkt;
	const u8 *data;			/* its payload */
	__be16 sport;			/* its UDP source port */
	enum {
		MR_RESP_RX_DROP,	/* nothing more to do */
		MR_RESP_RX_MESSAGE,	/* of a message in the window: @m */
		MR_RESP_RX_OLD,		/* of a message already complete */
		MR_RESP_RX_RNR,		/* its receive is not posted */
		MR_RESP_RX_REFUSE,	/* RC: its slice map passes the budget */
	} kind;
	struct mr_resp_info ri;		/* its request fields */
	struct mr_rx_msg *m;
	bool fresh;			/* it opened its message's slot */
	bool ack_now;			/* its path is acknowledged at once */
};

/*
 * Admit: may the connection take @rx at all, and which message is it of?
 * A packet that opens a message takes its slot here, and learns whether
 * the receive it needs is posted (RC: else RNR; UC: dropped, its RSN
 * skipped).
 */
static void mr_resp_admit(struct mr_xport *x, struct mr_resp_rx *rx)
{
	struct mr_dev *dev = to_mr_dev(x->qp->ibqp.device);
	struct mr_resp_info *ri = &rx->ri;
	bool uc = mr_resp_is_uc(x);
	struct mr_rx_msg *m;
	int err;

	rx->kind = MR_RESP_RX_DROP;
	if (!mr_ack_admit(x, rx->pkt, rx->sport))
		return;
	mr_resp_info(rx->pkt, ri);
	if (mr_seq_before(ri->msn, x->rsp.msn_done)) {
		rx->kind = MR_RESP_RX_OLD;
		return;
	}
	/* A conforming requester stays within the message window. */
	if (!mr_window_in(ri->msn, x->rsp.msn_done)) {
		mr_stats_inc(dev, MR_CNT_RX_DROP_MALFORMED);
		return;
	}
	m = &x->rsp.msg[ri->msn % MR_MSG_WINDOW];
	if (!m->used) {
		u32 recv = uc ? mr_resp_recv(x, ri->rsn) : ri->rsn;
		bool posted = !ri->consume || mr_resp_posted(x, recv);

		if (!posted && !uc) {
			rx->kind = MR_RESP_RX_RNR;
			return;
		}
		err = mr_resp_msg_init(x, m, rx->pkt, ri);
		if (err == -ENOSPC && !uc) {
			rx->kind = MR_RESP_RX_REFUSE;
			return;
		}
		if (err == -ENOSPC) {
			mr_resp_msg_init_dropped(m, rx->pkt, ri);
		} else if (err) {
			/* Not recorded: the requester sends it again. */
			mr_stats_inc(dev, MR_CNT_RX_DROP_SHORT);
			return;
		}
		rx->fresh = true;
		m->recv = recv;
		if (!posted) {
			/* UC, no RNR: drop it, skip its RSN. */
			m->dropped = true;
			m->skipped = true;
			m->drop_counter = MR_CNT_UC_RX_DROP_NO_RECV;
			x->rsp.uc_skips++;
		}
	}
	rx->kind = MR_RESP_RX_MESSAGE;
	rx->m = m;
}

/*
 * Record @rx on its path (ack.c). Returns whether it is new there; a
 * packet the path drops must not define its message.
 */
static bool mr_resp_record(struct mr_xport *x, struct mr_resp_rx *rx, bool ce)
{
	enum mr_sack_rx_res res;

	res = mr_ack_arrival(x, rx->pkt, rx->sport, ce, &rx->ack_now);
	if (res == MR_SACK_NEW)
		return true;
	if (rx->fresh) {
		if (rx->m->skipped)
			x->rsp.uc_skips--;
		mr_resp_msg_free(x, rx->m);
	}
	if (res == MR_SACK_DUP && rx->kind == MR_RESP_RX_RNR)
		mr_ack_nak(x, rx->pkt, rx->sport, rx->ri.msn, MR_NAK_RNR);
	return false;
}

/*
 * Act on a new packet: place it; then NAK, acknowledge, and complete
 * what it completed.
 */
static enum mr_xport_next mr_resp_act(struct mr_xport *x,
				      struct mr_resp_rx *rx)
{
	struct mr_dev *dev = to_mr_dev(x->qp->ibqp.device);
	const struct mr_pkt *pkt = rx->pkt;
	bool complete = false, dup = false;
	u8 nak = 0;

	switch (rx->kind) {
	case MR_RESP_RX_RNR:
		nak = MR_NAK_RNR;
		break;
	case MR_RESP_RX_REFUSE:
		mr_stats_inc(dev, MR_CNT_RX_REFUSED_MAP_BUDGET);
		nak = MR_NAK_INVALID_REQUEST;
		break;
	case MR_RESP_RX_MESSAGE:
		nak = mr_resp_place(x, rx->m, pkt, &rx->ri, rx->data,
				    &complete, &dup);
		break;
	default:
		/* A message already complete: acknowledged, not executed. */
		mr_stats_inc(dev, MR_CNT_DUPLICATE_PACKETS);
		break;
	}
	if (nak && nak != MR_NAK_RNR)
		mr_ack_refuse(x, rx->ri.msn, nak);
	if (nak)
		mr_ack_nak(x, pkt, rx->sport, rx->ri.msn, nak);
	if (complete) {
		bool respond = mr_resp_advance(x);

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
			rx->ack_now || nak || rx->kind == MR_RESP_RX_OLD || dup);
	return MR_NEXT_NONE;
}

/**
 * mr_resp_rcv() - a data packet for this QP: a request, or a response to
 * one of ours
 * @x: the transport, locked (receive.c), of a QP the caller references
 * @skb: the packet, linear, data at the MetaRoCE base header
 * @pkt: its decoded headers
 *
 * Return: what the requester should do next: send responses now due
 * (MR_NEXT_RESPOND), send more as a READ or atomic completed
 * (MR_NEXT_PUSH), or nothing.
 */
enum mr_xport_next mr_resp_rcv(struct mr_xport *x, struct sk_buff *skb,
			       const struct mr_pkt *pkt)
{
	struct mr_resp_rx rx = {
		.pkt = pkt,
		.data = skb->data + pkt->hdr_len,
		.sport = udp_hdr(skb)->source,
	};

	mr_resp_admit(x, &rx);
	if (rx.kind == MR_RESP_RX_DROP ||
	    !mr_resp_record(x, &rx, mr_ack_ce(skb)))
		return MR_NEXT_NONE;
	return mr_resp_act(x, &rx);
}
