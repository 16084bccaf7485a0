// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Transmit: every packet of the transport is built here, and only here,
 * from its source of truth. A packet in flight is kept as (MSN, offset),
 * so a resend is rebuilt from the send WQE and the MRs (looked up again
 * by lkey), or for a response from its record, never kept as an skb.
 * Errors go back to the caller, which knows what they mean: tx.c calls
 * nothing of the transport above it.
 */
#include "counters.h"
#include "mr.h"
#include "opcode.h"
#include "plane.h"
#include "socket.h"
#include "tx.h"
#include "proto/bounds.h"

/* Gather @len bytes at @off of the WQE's message into @dst. */
static int mr_tx_gather_request(struct mr_qp *qp,
				const struct mr_send_wqe *wqe, u32 off,
				u8 *dst, u32 len)
{
	if (wqe->send_flags & IB_SEND_INLINE) {
		memcpy(dst, wqe->inline_data + off, len);
		return 0;
	}
	return mr_mr_sgl_copy(to_mr_dev(qp->ibqp.device), qp->ibqp.pd,
			      wqe->sge, wqe->num_sge, off, dst, len,
			      MR_COPY_FROM_SGL);
}

/*
 * The opcode header of the request packet @tp of @wqe, into @pkt, which
 * the requester engine writes from the WQE in the wire's terms; returns
 * the packet's payload length.
 */
static u32 mr_tx_request_header(struct mr_xport *x,
				const struct mr_send_wqe *wqe,
				const struct mr_tx_pkt *tp, struct mr_pkt *pkt)
{
	const struct mr_opcode_info *o = mr_opcode_get(wqe->opcode);
	u8 op = mr_opcode_wire(o, x->qp->ibqp.qp_type);
	const struct mr_wqe_tx *wt = mr_xport_wtx(x, tp->msn);
	struct mr_req_wire w = {
		.opcode = op,
		.solicited = (wqe->send_flags & IB_SEND_SOLICITED) &&
			     (o->flags & MR_OPC_CONSUMES),
		.rkey = wqe->rkey, .va = wqe->remote_addr,
		.length = wqe->length, .rsn = wt->rsn,
		.stream = wqe->stream, .order = wt->order,
		.imm = be32_to_cpu(wqe->ex.imm_data),
		.inv_rkey = wqe->ex.invalidate_rkey,
		/* ib_atomic_wr: compare_add is the addend of a FETCH_ADD. */
		.swap_add = op == MR_OP_CMP_SWAP ? wqe->swap :
						   wqe->compare_add,
		.compare = op == MR_OP_CMP_SWAP ? wqe->compare_add : 0,
	};

	return mr_requester_header(&x->req, tp, &w, pkt);
}

/*
 * The header of response packet @tp, into @pkt; returns its payload
 * length. A response already forgotten (the requester has it: it moved
 * its window past) goes as an empty READ_RESP, only to close the PSN hole.
 */
static u32 mr_tx_response_header(struct mr_xport *x,
				 const struct mr_tx_pkt *tp,
				 struct mr_pkt *pkt)
{
	const struct mr_resp *r = mr_responder_resp(&x->rsp, tp->msn);

	if (!r) {
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
 * request was checked: -EACCES on a first send, which refuses the READ. A
 * resend may be of a slice the requester has already (its ACK was lost),
 * and the requester may have let the peer invalidate the region since:
 * -ENODATA, and the slice goes without payload, which fails the READ only
 * at a requester that still lacks it (see mr_comp_resp_in()).
 */
static int mr_tx_gather_response(struct mr_xport *x,
				 const struct mr_tx_pkt *tp, u8 *dst, u32 len,
				 enum mr_tx_kind kind)
{
	struct mr_qp *qp = x->qp;
	const struct mr_resp *r = mr_responder_resp(&x->rsp, tp->msn);
	struct mr_mr *mr = NULL;
	int err = -EACCES;

	if (r)
		mr = mr_mr_get(to_mr_dev(qp->ibqp.device), qp->ibqp.pd,
			       r->rkey, qp);
	if (mr) {
		err = mr_mr_copy_from(mr, r->va + tp->offset, dst, len,
				      MR_ACC_REMOTE_READ);
		mr_mr_put(mr);
	}
	if (err && kind == MR_TX_RESEND)
		return -ENODATA;
	return err ? -EACCES : 0;
}

/*
 * Build the headers of packet @tp, @psn of path @id, into @pkt; returns
 * its payload length, and in @wqe the send WQE it reads from, if any.
 */
static u32 mr_tx_header(struct mr_xport *x, u32 id, u32 psn,
			const struct mr_tx_pkt *tp, u8 flags,
			struct mr_pkt *pkt, struct mr_send_wqe **wqe)
{
	pkt->base.path = id;
	pkt->base.epoch = mr_sender_path_epoch(&x->snd, id);
	pkt->base.qpn = x->qp->attr.dest_qp_num;
	pkt->base.psn = psn;
	pkt->base.tag = x->hello.peer;
	pkt->base.flags |= flags;
	if (tp->resp)
		return mr_tx_response_header(x, tp, pkt);
	if (mr_requester_stale(&x->req, tp))
		return mr_requester_header(&x->req, tp, NULL, pkt);
	*wqe = mr_xport_wqe(x, tp->msn);
	return mr_tx_request_header(x, *wqe, tp, pkt);
}

/*
 * Put the @pkt->payload_len bytes of packet @tp after its @hlen bytes of
 * headers in @skb. On an error, the packet is dropped (and @skb freed):
 * -EACCES or -EFAULT, as mr_tx_send() returns them.
 */
static int mr_tx_payload(struct mr_xport *x, const struct mr_tx_pkt *tp,
			 const struct mr_send_wqe *wqe, enum mr_tx_kind kind,
			 struct mr_pkt *pkt, struct sk_buff *skb, u32 hlen)
{
	struct mr_qp *qp = x->qp;
	struct mr_dev *dev = to_mr_dev(qp->ibqp.device);
	u32 len = pkt->payload_len;
	u8 *payload = skb->data + hlen;
	int err;

	if (len && tp->resp) {
		err = mr_tx_gather_response(x, tp, payload, len, kind);
		if (err == -ENODATA) {
			/* Its region is gone: the slice goes empty. */
			pkt->payload_len = 0;
			skb_trim(skb, hlen);
			err = mr_wire_encode(pkt, skb->data, hlen);
		}
		if (err < 0) {
			mr_stats_inc(dev, MR_CNT_TX_DROP_ERROR);
			kfree_skb(skb);
			return -EACCES;
		}
	} else if (len && mr_tx_gather_request(qp, wqe, tp->offset, payload,
					       len)) {
		ibdev_dbg(&dev->ib_dev, "QP %u: MSN %u: local data unreadable\n",
			  qp->ibqp.qp_num, tp->msn);
		mr_stats_inc(dev, MR_CNT_TX_DROP_ERROR);
		kfree_skb(skb);
		return -EFAULT;
	}
	return 0;
}

/**
 * mr_tx_send() - build and send one packet of a message on a path
 * @x: the transport, locked
 * @id: the path
 * @psn: its PSN on the path, which the sender engine gave
 * @tp: which message and offset, and whether a request or a response
 * @flags: base header flags the engine sets (MR_FLAG_ACK_REQ, ...)
 * @kind: %MR_TX_FIRST_SEND, or %MR_TX_RESEND for a retransmission
 *
 * A packet of a message already complete (its WQE is gone) goes out as an
 * empty SEND with its MSN: the responder only acknowledges it, and the
 * path's PSN hole closes.
 *
 * Return: the bytes it put on the wire (the UDP payload), 0 if none (lost
 * before the wire: no memory, or an error below); -EFAULT when the
 * request's local data cannot be read (the caller fails message
 * @tp->msn); -EACCES when the first send of a READ response cannot read
 * the region (the caller refuses the READ).
 */
int mr_tx_send(struct mr_xport *x, u32 id, u32 psn, const struct mr_tx_pkt *tp,
	       u8 flags, enum mr_tx_kind kind)
{
	struct mr_qp *qp = x->qp;
	struct mr_dev *dev = to_mr_dev(qp->ibqp.device);
	struct mr_send_wqe *wqe = NULL;
	struct mr_pkt pkt = {};
	struct mr_flow flow;
	struct sk_buff *skb;
	int plane, err;

	pkt.payload_len = mr_tx_header(x, id, psn, tp, flags, &pkt, &wqe);
	skb = mr_socket_new_pkt(dev, &pkt, GFP_ATOMIC);
	if (!skb)
		return 0;
	err = mr_tx_payload(x, tp, wqe, kind, &pkt, skb,
			    mr_wire_hdr_len(pkt.base.opcode));
	if (err)
		return err;
	flow = qp->flow;
	flow.sport = htons(mr_sender_path_port(&x->snd, id));
	flow.oif = mr_plane_route(dev, -1, id, x->plane_reach, &plane);
	if (plane >= 0)
		mr_plane_track_sent(&x->planes, id, plane, psn,
				    kind != MR_TX_FIRST_SEND,
				    mr_sender_path_nxt(&x->snd, id));
	err = skb->len;
	if (!mr_socket_xmit(dev, skb, &flow, &x->routes[id]))
		mr_plane_sent(dev, plane, err);
	return err;
}

/*
 * Send the ACK, NAK or HELLO @pkt (no payload) to the peer's port @sport.
 * An ACK or NAK gets the peer's tag here; a HELLO has the tag it names.
 */
void mr_tx_control(struct mr_xport *x, struct mr_pkt *pkt, __be16 sport)
{
	struct mr_qp *qp = x->qp;
	struct mr_dev *dev = to_mr_dev(qp->ibqp.device);
	u32 path = pkt->base.path, len;
	struct mr_route *route = NULL;
	int arrived = -1, plane;
	struct mr_flow flow;
	struct sk_buff *skb;

	pkt->base.qpn = qp->attr.dest_qp_num;
	if (pkt->base.opcode == MR_OP_HELLO)
		mr_stats_inc(dev, MR_CNT_HELLO_TX);
	else
		pkt->base.tag = x->hello.peer;
	skb = mr_socket_new_pkt(dev, pkt, GFP_ATOMIC);
	if (!skb)
		return;
	flow = qp->flow;
	flow.sport = sport;
	/*
	 * An ACK or NAK goes back on the plane its path's data came by; a
	 * HELLO tries the planes in turn.
	 */
	if (pkt->base.opcode == MR_OP_HELLO)
		path = x->hello.n_sent;
	else if (pkt->base.path < MR_PATH_MAX)
		arrived = x->ack.plane_arrived[pkt->base.path];
	/* A HELLO goes now and then: its route is looked up each time. */
	if (pkt->base.opcode != MR_OP_HELLO)
		route = &x->routes[x->snd.npaths + pkt->base.path % x->snd.npaths];
	flow.oif = mr_plane_route(dev, arrived, path, x->plane_reach, &plane);
	len = skb->len;
	if (!mr_socket_xmit(dev, skb, &flow, route))
		mr_plane_sent(dev, plane, len);
}
