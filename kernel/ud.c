// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unreliable datagram QPs. A send WR is one UD_SEND(_IMM) packet to the
 * QPN and address its AH named: no paths, no ACKs, no retries. It goes
 * out as soon as it is posted and completes once it reached the IP layer;
 * a message longer than the path MTU completes with a local length error
 * instead. An arriving datagram fills the oldest posted receive, behind a
 * 40-byte GRH area that holds the IP header it came in (RoCE v2: an IPv6
 * header whole, an IPv4 one in the last 20 bytes). A datagram with the
 * wrong Q_Key, or with no receive posted, is dropped and counted.
 *
 * The GSI QP that ib_mad creates is one of these too, numbered 1 (qp.c):
 * MADs (ib_cm's REQ/REP/RTU, SIDR) are datagrams between QP1s with the
 * Q_Key IB_QP1_QKEY, and the GRH area and the network header type in the
 * work completion let ib_init_ah_attr_from_wc() answer the sender.
 */
#include <kunit/visibility.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <rdma/ib_verbs.h>

#include "counters.h"
#include "cq.h"
#include "mr.h"
#include "plane.h"
#include "qp.h"
#include "socket.h"
#include "ud.h"
#include "wq.h"

/* IB: a Q_Key with this bit set in a send WR means "use the QP's". */
#define MR_QKEY_USE_QP BIT(31)

/* The largest datagram: the path MTU the port has now. */
static u32 mr_ud_mtu(struct mr_dev *dev)
{
	return mr_mtu_bytes(mr_dev_active_mtu(dev));
}

/* One UDP source port per QP, in the dynamic range: flows stay apart. */
static __be16 mr_ud_sport(struct mr_qp *qp)
{
	return htons(0xc000 | (qp->ibqp.qp_num & 0x3fff));
}

/* Send the datagram of @wqe; how its WR completes. */
static enum ib_wc_status mr_ud_xmit(struct mr_qp *qp,
				    const struct mr_send_wqe *wqe)
{
	struct mr_dev *dev = to_mr_dev(qp->ibqp.device);
	struct mr_pkt pkt = {};
	struct mr_flow flow;
	struct sk_buff *skb;
	u32 hlen, len;
	int plane, err;
	u8 *buf;

	if (wqe->length > mr_ud_mtu(dev)) {
		ibdev_dbg(&dev->ib_dev, "QP %u: datagram of %u bytes exceeds the path MTU %u\n",
			  qp->ibqp.qp_num, wqe->length, mr_ud_mtu(dev));
		mr_stats_inc(dev, MR_CNT_UD_TX_TOO_LONG);
		return IB_WC_LOC_LEN_ERR;
	}
	pkt.base.opcode = wqe->opcode == IB_WR_SEND_WITH_IMM ?
			  MR_OP_UD_SEND_IMM : MR_OP_UD_SEND;
	if (wqe->send_flags & IB_SEND_SOLICITED)
		pkt.base.flags = MR_FLAG_SOLICITED;
	pkt.base.qpn = wqe->ud.remote_qpn;
	pkt.base.psn = qp->ud_psn++;
	pkt.ud.src_qpn = qp->ibqp.qp_num;
	pkt.ud.qkey = wqe->ud.remote_qkey & MR_QKEY_USE_QP ?
		      READ_ONCE(qp->attr.qkey) : wqe->ud.remote_qkey;
	pkt.ud.imm = be32_to_cpu(wqe->ex.imm_data);
	pkt.payload_len = wqe->length;
	hlen = mr_wire_hdr_len(pkt.base.opcode);

	skb = mr_socket_new_pkt(dev, &pkt, GFP_ATOMIC);
	if (!skb)
		return IB_WC_LOC_QP_OP_ERR;
	buf = skb->data + hlen;
	if (wqe->send_flags & IB_SEND_INLINE) {
		memcpy(buf, wqe->inline_data, wqe->length);
		err = 0;
	} else {
		err = mr_mr_sgl_copy(dev, qp->ibqp.pd, wqe->sge, wqe->num_sge,
				     0, buf, wqe->length, MR_COPY_FROM_SGL);
	}
	if (err < 0) {
		ibdev_dbg(&dev->ib_dev, "QP %u: send WR %#llx: local data unreadable (%d)\n",
			  qp->ibqp.qp_num, wqe->wr_id, err);
		kfree_skb(skb);
		return IB_WC_LOC_PROT_ERR;
	}
	flow = wqe->ud.flow;
	flow.sport = mr_ud_sport(qp);
	/* Datagrams take the planes in turn. */
	flow.oif = mr_plane_route(dev, -1, pkt.base.psn, U32_MAX, &plane);
	len = skb->len;
	/* A datagram that finds no route is lost, as on the wire: counted. */
	if (!mr_socket_xmit(dev, skb, &flow, NULL))
		mr_plane_sent(dev, plane, len);
	if (qp->ibqp.qp_type == IB_QPT_GSI)
		mr_stats_inc(dev, MR_CNT_GSI_TX_PACKETS);
	return IB_WC_SUCCESS;
}

/*
 * Send the queued WRs in post order and complete them. One context does
 * it at a time: the one that set sq.flushing, which also keeps
 * mr_wq_flush() away; if the QP went to ERR meanwhile, it flushes after.
 */
static void mr_ud_drain(struct mr_qp *qp)
{
	struct mr_wq *sq = &qp->sq;
	unsigned long flags;
	bool flush;

	spin_lock_irqsave(&sq->lock, flags);
	if (sq->flushing) {
		spin_unlock_irqrestore(&sq->lock, flags);
		return;
	}
	sq->flushing = true;
	while (sq->count && qp->state == IB_QPS_RTS) {
		struct mr_send_wqe *wqe = mr_wq_slot(sq, sq->head);
		struct ib_wc wc = {};
		bool signaled;

		/* The slot is ours until head moves past it. */
		spin_unlock_irqrestore(&sq->lock, flags);
		wc.status = mr_ud_xmit(qp, wqe);
		wc.wr_id = wqe->wr_id;
		wc.opcode = IB_WC_SEND;
		wc.qp = &qp->ibqp;
		wc.byte_len = wqe->length;
		signaled = wc.status != IB_WC_SUCCESS ||
			   (wqe->send_flags & IB_SEND_SIGNALED) ||
			   qp->sq_sig_type == IB_SIGNAL_ALL_WR;
		spin_lock_irqsave(&sq->lock, flags);
		/* A reset emptied the ring already. */
		if (qp->state == IB_QPS_RESET)
			break;
		sq->head = (sq->head + 1) % sq->depth;
		sq->count--;
		/* A failed send stops the send queue: SQE flushes the rest. */
		if (wc.status != IB_WC_SUCCESS && qp->state == IB_QPS_RTS)
			mr_wq_set_state(qp, IB_QPS_SQE);
		spin_unlock_irqrestore(&sq->lock, flags);
		if (signaled)
			mr_cq_post(qp->scq, &wc, false);
		spin_lock_irqsave(&sq->lock, flags);
	}
	sq->flushing = false;
	flush = sq->count && mr_wq_flushes(qp->state, MR_WQ_SQ);
	spin_unlock_irqrestore(&sq->lock, flags);
	if (flush)
		mr_wq_flush(qp, MR_WQ_SQ);
}

static void mr_ud_work(struct work_struct *work)
{
	mr_ud_drain(container_of(work, struct mr_qp, ud_work));
}

/* After post_send queued WRs: sending wants IRQs on, else a worker does. */
void mr_ud_kick(struct mr_qp *qp)
{
	if (irqs_disabled())
		queue_work(system_wq, &qp->ud_work);
	else
		mr_ud_drain(qp);
}

void mr_ud_qp_init(struct mr_qp *qp)
{
	INIT_WORK(&qp->ud_work, mr_ud_work);
	qp->ud_psn = 0;
}

/* From destroy_qp: no post_send runs any more. */
void mr_ud_qp_fini(struct mr_qp *qp)
{
	cancel_work_sync(&qp->ud_work);
}

/* The GRH area of a receive: the IP header of the datagram, RoCE v2 style. */
VISIBLE_IF_KUNIT enum rdma_network_type mr_ud_grh(struct sk_buff *skb,
						  union rdma_network_hdr *grh)
{
	memset(grh, 0, sizeof(*grh));
	if (skb->protocol == htons(ETH_P_IP)) {
		memcpy(&grh->roce4grh, ip_hdr(skb), sizeof(grh->roce4grh));
		return RDMA_NETWORK_IPV4;
	}
	memcpy(&grh->ibgrh, ipv6_hdr(skb), sizeof(grh->ibgrh));
	return RDMA_NETWORK_IPV6;
}
EXPORT_SYMBOL_IF_KUNIT(mr_ud_grh);

static void mr_ud_drop(struct mr_dev *dev, struct mr_qp *qp,
		       enum mr_counter why)
{
	mr_stats_inc(dev, why);
	ibdev_dbg_ratelimited(&dev->ib_dev, "QP %u: datagram dropped: %s\n",
			      qp->ibqp.qp_num, mr_counters_name(why));
}

/**
 * mr_ud_rcv() - deliver a datagram to a UD QP, in softirq
 * @qp: the destination, referenced
 * @skb: data at the MetaRoCE base header; the caller frees it
 * @pkt: its decoded headers
 */
void mr_ud_rcv(struct mr_qp *qp, struct sk_buff *skb,
	       const struct mr_pkt *pkt)
{
	struct mr_dev *dev = to_mr_dev(qp->ibqp.device);
	u32 len = pkt->payload_len, need = sizeof(union rdma_network_hdr);
	union rdma_network_hdr grh;
	struct mr_wq *rq = &qp->rq;
	struct mr_recv_wqe *wqe;
	struct ib_wc wc = {};
	unsigned long flags;
	int err;

	if (pkt->ud.qkey != READ_ONCE(qp->attr.qkey)) {
		mr_ud_drop(dev, qp, MR_CNT_UD_RX_DROP_QKEY);
		return;
	}
	/* No memory to make the payload linear: lost, like a full queue. */
	if (skb_linearize(skb)) {
		mr_ud_drop(dev, qp, MR_CNT_UD_RX_DROP_NO_RECV);
		return;
	}
	wc.network_hdr_type = mr_ud_grh(skb, &grh);

	spin_lock_irqsave(&rq->lock, flags);
	if (!rq->count && !mr_wq_pull(dev, rq))
		mr_qp_fatal(qp);
	if (!rq->count || (qp->state != IB_QPS_RTR &&
			   qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQE)) {
		spin_unlock_irqrestore(&rq->lock, flags);
		mr_ud_drop(dev, qp, MR_CNT_UD_RX_DROP_NO_RECV);
		return;
	}
	wqe = mr_wq_slot(rq, rq->head);
	if (need + len > wqe->length) {
		/* The receive is consumed with the error, as IB has it. */
		wc.status = IB_WC_LOC_LEN_ERR;
		mr_stats_inc(dev, MR_CNT_UD_RX_TOO_LONG);
	} else {
		err = mr_mr_sgl_copy(dev, qp->ibqp.pd, wqe->sge, wqe->num_sge, 0,
				     &grh, need, MR_COPY_TO_SGL);
		if (!err && len)
			err = mr_mr_sgl_copy(dev, qp->ibqp.pd, wqe->sge,
					     wqe->num_sge, need,
					  skb->data + pkt->hdr_len, len,
					  MR_COPY_TO_SGL);
		wc.status = err ? IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
	}
	wc.wr_id = wqe->wr_id;
	mr_wq_pop(rq);
	spin_unlock_irqrestore(&rq->lock, flags);

	if (qp->ibqp.qp_type == IB_QPT_GSI)
		mr_stats_inc(dev, MR_CNT_GSI_RX_PACKETS);
	wc.opcode = IB_WC_RECV;
	wc.qp = &qp->ibqp;
	wc.byte_len = need + len;
	wc.src_qp = pkt->ud.src_qpn;
	wc.port_num = MR_PORT;
	wc.wc_flags = IB_WC_GRH;
	/* uverbs passes wc_flags through, where this bit means another thing. */
	if (!qp->ibqp.uobject)
		wc.wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
	if (mr_wire_op_flags(pkt->base.opcode) & MR_WIRE_F_IMM) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = cpu_to_be32(pkt->ud.imm);
	}
	mr_cq_post(qp->rcq, &wc, pkt->base.flags & MR_FLAG_SOLICITED);
}
