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
 * requests (mr_resp_push() feeds them to the requester's scheduler); an
 * atomic's result is kept with its response, so it executes only once.
 * READ_RESP and ATOMIC_RESP for our requests arrive here as well, are
 * recorded on their path, and go to mr_req_resp_rcv().
 *
 * ACKs, per path, carry the path's whole window: at once for ACK_REQ, a
 * packet that leaves a new hole or fills one, a duplicate, or a new
 * epoch; else every MR_ACK_EVERY packets; and on every path with
 * unacknowledged packets whenever a message completes (at least two
 * paths), so that the requester learns of completions without waiting
 * for its RTO.
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
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <linux/slab.h>

#include "net.h"
#include "transport.h"
#include "proto/mr_bounds.h"

/* The IB RNR timer codes in units of 10 us (code 0: 655.36 ms, saturated). */
static const u16 mr_rnr_delay[32] = {
	65535, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
	256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192,
	12288, 16384, 24576, 32768, 49152,
};

/* RTR: every path of the peer starts at the PSN it agreed to send from. */
void mr_resp_init(struct mr_xport *x)
{
	struct mr_qp *qp = x->qp;
	u32 i;

	for (i = 0; i < MR_WIRE_MAX_PATHS; i++) {
		memset(&x->rx[i], 0, sizeof(x->rx[i]));
		mr_sack_rx_init(&x->rx[i].win, qp->attr.rq_psn);
	}
	x->msn_done = 0;
	x->rsn_head = 0;
	x->rsn_skipped = 0;
	x->uc_skips = 0;
	x->fatal = 0;
	mr_resp_reset(x);
	x->mtu = mr_mtu_bytes((enum mr_mtu)qp->attr.path_mtu);
	x->rx_on = true;
}

/* Forget every response (RESET, or a new connection at RTR). */
void mr_resp_reset(struct mr_xport *x)
{
	memset(x->resp, 0, sizeof(x->resp));
	x->resp_send = 0;
}

static void mr_resp_xmit(struct mr_xport *x, struct mr_pkt *pkt, __be16 sport)
{
	struct mr_qp *qp = x->qp;
	struct mr_dev *dev = to_mr_dev(qp->ibqp.device);
	unsigned int hlen = mr_wire_hdr_len(pkt->base.opcode);
	struct mr_flow flow;
	struct sk_buff *skb;

	skb = mr_alloc_skb(dev, hlen, GFP_ATOMIC);
	if (!skb) {
		mr_stats_inc(dev, MR_CNT_TX_DROP_ERROR);
		return;
	}
	if (mr_wire_encode(pkt, skb_put(skb, hlen), hlen) < 0) {
		WARN_ON_ONCE(1);
		mr_stats_inc(dev, MR_CNT_TX_DROP_ERROR);
		kfree_skb(skb);
		return;
	}
	flow = qp->flow;
	flow.sport = sport;
	mr_xmit(dev, skb, &flow);
}

/* Acknowledge path @id: its whole window, naming packet @psn. */
static void mr_resp_ack(struct mr_xport *x, u32 id, u32 psn)
{
	struct mr_rx_path *r = &x->rx[id];
	struct mr_pkt pkt = {};

	pkt.base.opcode = MR_OP_ACK;
	pkt.base.path = id;
	pkt.base.epoch = r->win.epoch;
	pkt.base.qpn = x->qp->attr.dest_qp_num;
	pkt.base.psn = psn;
	mr_sack_rx_fill_ack(&r->win, &pkt.ack);
	pkt.ack.msn_done = x->msn_done;
	pkt.ack.ecn_count = r->ecn;
	r->unacked = 0;
	mr_resp_xmit(x, &pkt, r->sport);
}

/*
 * Acknowledge every path with packets not yet acknowledged, after a
 * completion. When that is one ACK (a one-packet message), another path
 * carries its "MSN done" too: a peer that leaves as soon as it has our
 * reply (ibv_rc_pingpong's last pong) would never answer a resend, so a
 * lost lone ACK would fail the QP with a retry error.
 */
static void mr_resp_ack_all(struct mr_xport *x)
{
	u32 i, acks = 0, spare = MR_WIRE_MAX_PATHS;

	for (i = 0; i < MR_WIRE_MAX_PATHS; i++) {
		struct mr_rx_path *r = &x->rx[i];

		if (!r->seen || r->epoch != r->win.epoch)
			continue;
		if (r->unacked) {
			mr_resp_ack(x, i, r->last_psn);
			acks++;
		} else if (spare == MR_WIRE_MAX_PATHS) {
			spare = i;
		}
	}
	if (acks == 1 && spare < MR_WIRE_MAX_PATHS)
		mr_resp_ack(x, spare, x->rx[spare].last_psn);
}

/* NAK @msn, naming the packet path @path, @epoch, @psn that caused it. */
static void mr_resp_nak(struct mr_xport *x, u32 path, u16 epoch, u32 psn,
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
			mr_rnr_delay[x->qp->attr.min_rnr_timer & 31];
		mr_stats_inc(to_mr_dev(x->qp->ibqp.device), MR_CNT_RNR_NAKS);
	}
	mr_resp_xmit(x, &pkt, sport);
}

/*
 * Refuse message @msn for good: answer it, and from now on everything,
 * with the NAK, and move the QP to ERR.
 */
static void mr_resp_refuse(struct mr_xport *x, u32 msn, u8 code)
{
	ibdev_dbg(x->qp->ibqp.device, "QP %u: MSN %u refused, NAK %u\n",
		  x->qp->ibqp.qp_num, msn, code);
	x->fatal = code;
	x->fatal_msn = msn;
	x->rx_on = false;
	schedule_work(&x->err_work);
}

/* Refuse a request late, when it executes: NAK it on its arrival path. */
static void mr_resp_refuse_late(struct mr_xport *x, u32 msn, u8 code, u8 path)
{
	const struct mr_rx_path *r = &x->rx[path];

	mr_resp_refuse(x, msn, code);
	mr_resp_nak(x, path, r->win.epoch, r->last_psn, r->sport, msn, code);
}

/* The fields of a request that the message layer uses. */
struct mr_req_info {
	u32 msn;
	u32 rsn;
	u32 imm;
	u32 length;
	u32 offset;
	bool consume;	/* takes a posted receive */
};

static void mr_req_info(const struct mr_pkt *pkt, struct mr_req_info *ri)
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
		ri->consume = pkt->base.opcode == MR_OP_WRITE_IMM;
		break;
	default:
		ri->msn = pkt->send.msn;
		ri->rsn = pkt->send.rsn;
		/* A SEND_INV's rkey travels where a SEND_IMM's imm does. */
		ri->imm = pkt->base.opcode == MR_OP_SEND_INV ?
				  pkt->send.inv_rkey : pkt->send.imm;
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
static u32 mr_resp_recv(const struct mr_xport *x, u32 rsn)
{
	u32 skipped = x->rsn_skipped, i;

	for (i = 0; x->uc_skips && i < MR_MSG_WINDOW; i++) {
		const struct mr_rx_msg *m = &x->msg[i];

		if (m->used && m->skipped && mr_seq_before(m->rsn, rsn))
			skipped++;
	}
	return rsn - skipped;
}

/* Whether receive @recv is posted (with an SRQ: bound). */
static bool mr_resp_posted(struct mr_xport *x, u32 recv)
{
	struct mr_wq *rq = &x->qp->rq;
	unsigned long flags;
	bool ok;

	if (x->qp->ibqp.srq)
		return mr_srq_bind(x->qp, x->rsn_head, recv);
	spin_lock_irqsave(&rq->lock, flags);
	ok = recv - x->rsn_head < rq->count;
	spin_unlock_irqrestore(&rq->lock, flags);
	return ok;
}

static int mr_resp_msg_init(struct mr_xport *x, struct mr_rx_msg *m,
			    const struct mr_pkt *pkt,
			    const struct mr_req_info *ri)
{
	u32 nslices = max_t(u32, 1, DIV_ROUND_UP(ri->length, x->mtu));

	memset(m, 0, sizeof(*m));
	if (nslices > BITS_PER_TYPE(m->map1)) {
		m->map = bitmap_zalloc(nslices, GFP_ATOMIC);
		if (!m->map)
			return -ENOMEM;
	} else {
		m->map = (unsigned long *)&m->map1;
	}
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
	} else if (pkt->base.opcode == MR_OP_CMP_SWAP ||
		   pkt->base.opcode == MR_OP_FETCH_ADD) {
		m->rkey = pkt->atomic.rkey;
		m->va = pkt->atomic.va;
		m->swap_add = pkt->atomic.swap_add;
		m->compare = pkt->atomic.compare;
	}
	return 0;
}

static void mr_resp_msg_free(struct mr_rx_msg *m)
{
	if (m->map != (unsigned long *)&m->map1)
		bitmap_free(m->map);
	memset(m, 0, sizeof(*m));
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
	wqe = mr_wq_slot(rq, rq->head + (recv - x->rsn_head));
	if (msg_len > wqe->length)
		err = -EMSGSIZE;
	else
		err = mr_sgl_copy(to_mr_dev(qp->ibqp.device), qp->ibqp.pd,
				  wqe->sge, wqe->num_sge, off, (void *)src,
				  len, true);
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
 * which mr_resp_push() sends. Returns 0 or a NAK code.
 */
static u8 mr_resp_execute(struct mr_xport *x, const struct mr_rx_msg *m)
{
	struct mr_qp *qp = x->qp;
	struct mr_resp *r = &x->resp[m->msn % MR_MSG_WINDOW];
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
 * The packet header of response packet @tp, into @pkt; returns its payload
 * length. A response already forgotten (the requester has it: it moved
 * its window past) goes as an empty READ_RESP, only to close the PSN hole.
 */
u32 mr_resp_build(struct mr_xport *x, const struct mr_tx_pkt *tp,
		  struct mr_pkt *pkt)
{
	const struct mr_resp *r = &x->resp[tp->msn % MR_MSG_WINDOW];

	if (!r->valid || r->msn != tp->msn) {
		pkt->base.opcode = MR_OP_READ_RESP;
		pkt->read_resp.msn = tp->msn;
		return 0;
	}
	if (r->opcode != MR_OP_READ_REQ) {
		pkt->base.opcode = MR_OP_ATOMIC_RESP;
		pkt->atomic_resp.msn = r->msn;
		pkt->atomic_resp.orig = r->orig;
		return 0;
	}
	pkt->base.opcode = MR_OP_READ_RESP;
	pkt->read_resp.msn = r->msn;
	pkt->read_resp.length = r->length;
	pkt->read_resp.offset = tp->offset;
	return min(x->mtu, r->length - tp->offset);
}

/*
 * Read the payload of READ response packet @tp: at send time, so a resent
 * packet carries the memory as it is then. The MR may have gone since the
 * request was checked. On a first send that refuses the READ. A resend may
 * be of a slice the requester has already (its ACK was lost), and the
 * requester may have let the peer invalidate the region since: the slice
 * then goes without payload, which fails the READ only at a requester
 * that still lacks it (see mr_req_resp_rcv()).
 */
int mr_resp_gather(struct mr_xport *x, const struct mr_tx_pkt *tp, u8 *dst,
		   u32 len, bool resend)
{
	struct mr_qp *qp = x->qp;
	const struct mr_resp *r = &x->resp[tp->msn % MR_MSG_WINDOW];
	struct mr_mr *mr;
	int err = -EACCES;

	mr = mr_mr_get(to_mr_dev(qp->ibqp.device), qp->ibqp.pd, r->rkey, qp);
	if (mr) {
		err = mr_mr_copy_from(mr, r->va + tp->offset, dst, len,
				      MR_ACC_REMOTE_READ);
		mr_mr_put(mr);
	}
	if (err && resend)
		return -ENODATA;
	if (err && !x->fatal)
		mr_resp_refuse_late(x, r->msn, MR_NAK_REMOTE_ACCESS, r->path);
	return err;
}

/* Send the responses that are due, oldest first, as the paths allow. */
void mr_resp_push(struct mr_xport *x)
{
	while (x->resp_send != x->msn_done && !x->fatal) {
		struct mr_resp *r = &x->resp[x->resp_send % MR_MSG_WINDOW];
		struct mr_tx_pkt tp = {};
		u32 psn;
		int id;

		if (!r->valid || r->msn != x->resp_send || r->sent == r->npkts) {
			x->resp_send++;
			continue;
		}
		id = mr_req_take(x, &psn);
		if (id < 0)
			return;
		tp.msn = r->msn;
		tp.offset = r->sent++ * x->mtu;
		tp.resp = true;
		mr_req_send_pkt(x, id, psn, &tp, false);
		if (!x->tx_on)
			return;
	}
}

/*
 * A SEND with invalidate landed: the fast-reg MR that its rkey names loses
 * its keys, and the receive says so. An rkey that names no such MR of the
 * QP's PD fails the receive (mr.c counts it as a refused key).
 */
static void mr_resp_invalidate(struct mr_xport *x, u32 rkey, struct ib_wc *wc)
{
	struct mr_qp *qp = x->qp;

	if (mr_mr_invalidate(to_mr_dev(qp->ibqp.device), qp->ibqp.pd, rkey)) {
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
	x->rsn_head++;

	wc.status = status;
	wc.qp = &qp->ibqp;
	wc.port_num = MR_PORT;
	if (status != IB_WC_SUCCESS) {
		wc.opcode = IB_WC_RECV;
		mr_cq_post(qp->rcq, &wc, false);
		return;
	}
	wc.byte_len = m->length;
	if (m->opcode == MR_OP_WRITE_IMM) {
		wc.opcode = IB_WC_RECV_RDMA_WITH_IMM;
		wc.wc_flags = IB_WC_WITH_IMM;
		wc.ex.imm_data = cpu_to_be32(m->imm);
	} else {
		wc.opcode = IB_WC_RECV;
		if (m->opcode == MR_OP_SEND_IMM) {
			wc.wc_flags = IB_WC_WITH_IMM;
			wc.ex.imm_data = cpu_to_be32(m->imm);
		} else if (m->opcode == MR_OP_SEND_INV) {
			mr_resp_invalidate(x, m->imm, &wc);
		}
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

	while (!x->fatal) {
		struct mr_rx_msg *m = &x->msg[x->msn_done % MR_MSG_WINDOW];

		if (!m->used || !m->done || m->msn != x->msn_done)
			break;
		if (m->dropped) {
			mr_stats_inc(to_mr_dev(x->qp->ibqp.device),
				     m->drop_counter);
			if (m->skipped) {
				x->uc_skips--;
				x->rsn_skipped++;
			} else if (m->consume) {
				mr_resp_complete_recv(x, m, m->drop_status);
			}
			mr_resp_msg_free(m);
			x->msn_done++;
			continue;
		}
		switch (m->opcode) {
		case MR_OP_WRITE:
			break;
		case MR_OP_READ_REQ:
		case MR_OP_CMP_SWAP:
		case MR_OP_FETCH_ADD:
			nak = mr_resp_execute(x, m);
			if (nak) {
				mr_resp_refuse_late(x, m->msn, nak, m->path);
				return false;
			}
			respond = true;
			break;
		default:
			mr_resp_complete_recv(x, m, IB_WC_SUCCESS);
			break;
		}
		mr_resp_msg_free(m);
		x->msn_done++;
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
static u8 mr_resp_fail(struct mr_xport *x, struct mr_rx_msg *m, u8 nak,
		       enum mr_counter counter, enum ib_wc_status status,
		       bool *complete)
{
	if (!mr_resp_is_uc(x))
		return nak;
	mr_resp_uc_drop(m, counter, status, complete);
	return 0;
}

/*
 * Place a new packet of message @m. Returns 0 or a NAK code. Sets
 * *complete when the message has all its bytes, *dup when the slice had
 * landed before.
 */
static u8 mr_resp_place(struct mr_xport *x, struct mr_rx_msg *m,
			const struct mr_pkt *pkt, const struct mr_req_info *ri,
			const u8 *data, bool *complete, bool *dup)
{
	struct mr_dev *dev = to_mr_dev(x->qp->ibqp.device);
	u32 slice = ri->offset / x->mtu;
	u32 want = min(x->mtu, ri->length - ri->offset);
	bool rd = pkt->base.opcode == MR_OP_READ_REQ ||
		  pkt->base.opcode == MR_OP_CMP_SWAP ||
		  pkt->base.opcode == MR_OP_FETCH_ADD;
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
	} else if (pkt->base.opcode == MR_OP_WRITE ||
		   pkt->base.opcode == MR_OP_WRITE_IMM) {
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

static bool mr_rx_ce(struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IP))
		return INET_ECN_is_ce(ip_hdr(skb)->tos);
	if (skb->protocol == htons(ETH_P_IPV6))
		return INET_ECN_is_ce(ipv6_get_dsfield(ipv6_hdr(skb)));
	return false;
}

/* A NAK answering packet @pkt. */
static void mr_resp_nak_pkt(struct mr_xport *x, const struct mr_pkt *pkt,
			    __be16 sport, u32 msn, u8 code)
{
	mr_resp_nak(x, pkt->base.path, pkt->base.epoch, pkt->base.psn, sport,
		    msn, code);
}

static bool mr_op_is_resp(u8 opcode)
{
	return opcode == MR_OP_READ_RESP || opcode == MR_OP_ATOMIC_RESP;
}

/**
 * mr_resp_rcv() - a data packet for this QP, in softirq: a request, or a
 * response to one of ours
 * @qp: the destination QP, referenced
 * @skb: data at the MetaRoCE base header; the caller frees it
 * @pkt: its decoded headers
 */
void mr_resp_rcv(struct mr_qp *qp, struct sk_buff *skb,
		 const struct mr_pkt *pkt)
{
	struct mr_dev *dev = to_mr_dev(qp->ibqp.device);
	struct mr_xport *x = qp->xp;
	__be16 sport = udp_hdr(skb)->source;
	u32 id = pkt->base.path, psn = pkt->base.psn, prev_cum;
	struct mr_rx_msg *m = NULL;
	bool resp = mr_op_is_resp(pkt->base.opcode);
	bool rnr = false, ack_now, complete = false, respond = false;
	bool fresh = false;	/* this packet opened its message's slot */
	bool uc = mr_resp_is_uc(x);
	bool dup = false;	/* its slice had landed (on another path) */
	enum mr_sack_rx_res res;
	struct mr_req_info ri;
	struct mr_rx_path *r;
	u16 prev_epoch;
	u8 nak = 0;

	if (skb_linearize(skb)) {
		mr_stats_inc(dev, MR_CNT_RX_DROP_SHORT);
		return;
	}
	mr_req_info(pkt, &ri);

	spin_lock_bh(&x->lock);
	if (x->fatal) {
		/* After a fatal NAK everything is answered with it. */
		mr_resp_nak_pkt(x, pkt, sport, x->fatal_msn, x->fatal);
		mr_stats_inc(dev, MR_CNT_RX_DROP_NO_QP);
		goto out;
	}
	if (!x->rx_on) {
		mr_stats_inc(dev, MR_CNT_RX_DROP_NO_QP);
		goto out;
	}
	if (!resp && !mr_seq_before(ri.msn, x->msn_done)) {
		/* A conforming requester stays within the message window. */
		if (ri.msn - x->msn_done >= MR_MSG_WINDOW) {
			mr_stats_inc(dev, MR_CNT_RX_DROP_MALFORMED);
			goto out;
		}
		m = &x->msg[ri.msn % MR_MSG_WINDOW];
		if (!m->used) {
			u32 recv = uc ? mr_resp_recv(x, ri.rsn) : ri.rsn;
			bool posted = !ri.consume || mr_resp_posted(x, recv);

			if (!posted && !uc) {
				rnr = true;
				m = NULL;
			} else if (mr_resp_msg_init(x, m, pkt, &ri)) {
				/* Not recorded: the requester sends it again. */
				mr_stats_inc(dev, MR_CNT_RX_DROP_SHORT);
				goto out;
			} else {
				fresh = true;
				m->recv = recv;
				if (!posted) {
					/* UC, no RNR: drop it, skip its RSN. */
					m->dropped = true;
					m->skipped = true;
					m->drop_counter = MR_CNT_UC_RX_DROP_NO_RECV;
					x->uc_skips++;
				}
			}
		}
	}

	r = &x->rx[id];
	prev_epoch = r->win.epoch;
	prev_cum = r->win.cum;
	res = mr_sack_rx_record(&r->win, pkt->base.epoch, psn);
	/* A packet the path drops must not define its message. */
	if (res != MR_SACK_NEW && fresh) {
		if (m->skipped)
			x->uc_skips--;
		mr_resp_msg_free(m);
	}
	switch (res) {
	case MR_SACK_STALE:
	case MR_SACK_BEYOND:
		mr_stats_inc(dev, MR_CNT_DUPLICATE_PACKETS);
		goto out;
	case MR_SACK_DUP:
		mr_stats_inc(dev, MR_CNT_DUPLICATE_PACKETS);
		r->sport = sport;
		if (r->seen && r->win.epoch == r->epoch)
			mr_resp_ack(x, id, psn);
		if (rnr)
			mr_resp_nak_pkt(x, pkt, sport, ri.msn, MR_NAK_RNR);
		goto out;
	case MR_SACK_NEW:
		break;
	}
	/*
	 * At once for a packet that leaves a new hole behind it (it does not
	 * follow the previous arrival) or fills one; one that follows the
	 * previous arrival past an older hole, which the sender has been
	 * told of, waits for the coalesced ACK.
	 */
	ack_now = (pkt->base.flags & MR_FLAG_ACK_REQ) || !r->seen ||
		  prev_epoch != pkt->base.epoch || psn != r->last_psn + 1 ||
		  (psn == prev_cum && r->win.cum != psn + 1);
	if (psn != prev_cum && prev_epoch == pkt->base.epoch)
		mr_stats_inc(dev, MR_CNT_OUT_OF_ORDER);
	r->sport = sport;
	r->seen = true;
	r->epoch = r->win.epoch;
	r->last_psn = psn;
	r->unacked++;
	if (mr_rx_ce(skb))
		r->ecn++;

	if (resp) {
		/* Completing a READ or atomic: tell the responder at once. */
		if (mr_req_resp_rcv(x, pkt, skb->data + pkt->hdr_len)) {
			mr_resp_ack_all(x);
			goto out;
		}
	} else if (rnr) {
		nak = MR_NAK_RNR;
	} else if (m && !nak) {
		nak = mr_resp_place(x, m, pkt, &ri, skb->data + pkt->hdr_len,
				    &complete, &dup);
	} else if (!nak) {
		/* A message already complete: acknowledged, not executed. */
		mr_stats_inc(dev, MR_CNT_DUPLICATE_PACKETS);
	}
	if (nak && nak != MR_NAK_RNR)
		mr_resp_refuse(x, ri.msn, nak);
	/*
	 * A packet that no completion will acknowledge (refused, of a message
	 * already complete, or a slice that landed before: the copy of a READ
	 * request, a packet moved off a failed path) is acknowledged now, or
	 * its sender would wait for its timer.
	 */
	if (!resp && (nak || !m || dup))
		ack_now = true;
	if (nak)
		mr_resp_nak_pkt(x, pkt, sport, ri.msn, nak);
	if (complete) {
		respond = mr_resp_advance(x);
		mr_resp_ack_all(x);
		if (respond) {
			/* A READ target may stay in RTR: it still answers. */
			if (!x->tx_on)
				mr_req_start(x, true);
			mr_req_push(x);
		}
	} else if (ack_now || r->unacked >= MR_ACK_EVERY) {
		mr_resp_ack(x, id, psn);
	}
out:
	spin_unlock_bh(&x->lock);
}
