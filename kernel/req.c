// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The requester: cuts send WQEs into MTU-sized packets, sprays them over
 * the paths (proto/path.c), numbers them with each path's PSNs and records
 * them in the path's scoreboard (proto/sack.c). A packet in flight is kept
 * as (MSN, offset): a resend rebuilds it from the WQE and the MRs, which
 * stay in the send ring until the responder reports the message complete.
 *
 * Also the transport's lifetime: creation with the QP, start on RTR/RTS,
 * stop on ERR/RESET, and the move to ERR after a fatal error.
 */
#include <linux/jhash.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "net.h"
#include "trace.h"
#include "transport.h"
#include "proto/mr_bounds.h"

unsigned int mr_paths_param = 16;
module_param_named(paths, mr_paths_param, uint, 0644);
MODULE_PARM_DESC(paths, "paths (UDP source ports) per connection, 1-64 (default 16)");

u64 mr_now_ns(void)
{
	return ktime_get_ns();
}

/* Whether a message of this WR opcode consumes a posted receive. */
static bool mr_wr_consumes(enum ib_wr_opcode op)
{
	return op == IB_WR_SEND || op == IB_WR_SEND_WITH_IMM ||
	       op == IB_WR_SEND_WITH_INV || op == IB_WR_RDMA_WRITE_WITH_IMM;
}

/* READ and atomics: one request packet, answered by a response. */
bool mr_wr_is_rd(enum ib_wr_opcode op)
{
	return op == IB_WR_RDMA_READ || op == IB_WR_ATOMIC_CMP_AND_SWP ||
	       op == IB_WR_ATOMIC_FETCH_AND_ADD;
}

/* Moves the QP to ERR from process context: modify_qp takes a mutex. */
static void mr_xport_err_work(struct work_struct *work)
{
	struct mr_xport *x = container_of(work, struct mr_xport, err_work);
	struct mr_qp *qp = x->qp;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = IB_EVENT_QP_FATAL,
	};

	/* A QP already reset or in ERR by its owner is left alone. */
	if (READ_ONCE(qp->state) != IB_QPS_RTS &&
	    READ_ONCE(qp->state) != IB_QPS_RTR)
		return;
	if (mr_modify_qp(&qp->ibqp, &attr, IB_QP_STATE, NULL))
		return;
	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

int mr_xport_create(struct mr_qp *qp)
{
	u32 npaths = clamp_t(u32, mr_paths_param, 1, MR_PATH_MAX);
	struct mr_xport *x;

	x = kvzalloc(sizeof(*x), GFP_KERNEL_ACCOUNT);
	if (!x)
		return -ENOMEM;
	x->path = kvcalloc(npaths, sizeof(*x->path), GFP_KERNEL_ACCOUNT);
	x->wtx = kvcalloc(qp->sq.depth, sizeof(*x->wtx), GFP_KERNEL_ACCOUNT);
	x->rq_size = npaths * MR_SACK_WINDOW;
	x->requeue = kvcalloc(x->rq_size, sizeof(*x->requeue),
			      GFP_KERNEL_ACCOUNT);
	if (!x->path || !x->wtx || !x->requeue) {
		kvfree(x->path);
		kvfree(x->wtx);
		kvfree(x->requeue);
		kvfree(x);
		return -ENOMEM;
	}
	x->npaths = npaths;
	x->qp = qp;
	spin_lock_init(&x->lock);
	timer_setup(&x->timer, mr_xport_timer, 0);
	INIT_WORK(&x->err_work, mr_xport_err_work);
	qp->xp = x;
	return 0;
}

static void mr_req_free_maps(struct mr_qp *qp)
{
	struct mr_xport *x = qp->xp;
	u32 i;

	for (i = 0; i < qp->sq.depth; i++) {
		struct mr_wqe_tx *wt = &x->wtx[i];

		if (wt->resp_map != (unsigned long *)&wt->resp_map1)
			bitmap_free(wt->resp_map);
		wt->resp_map = NULL;
	}
}

static void mr_resp_free_msgs(struct mr_xport *x)
{
	u32 i;

	for (i = 0; i < MR_MSG_WINDOW; i++) {
		struct mr_rx_msg *m = &x->msg[i];

		if (m->map != (unsigned long *)&m->map1)
			bitmap_free(m->map);
		memset(m, 0, sizeof(*m));
	}
}

static void mr_xport_stop(struct mr_xport *x)
{
	u32 i;

	spin_lock_bh(&x->lock);
	x->tx_on = false;
	x->rx_on = false;
	x->rnr_wait = false;
	for (i = 0; i < x->npaths; i++)
		x->path[i].deadline = 0;
	spin_unlock_bh(&x->lock);
	/* The timer re-arms only while tx_on. */
	del_timer_sync(&x->timer);
}

/* After every lookup reference is gone: nothing can reach @x any more. */
void mr_xport_destroy(struct mr_qp *qp)
{
	struct mr_xport *x = qp->xp;

	mr_xport_stop(x);
	cancel_work_sync(&x->err_work);
	mr_resp_free_msgs(x);
	mr_req_free_maps(qp);
	kvfree(x->path);
	kvfree(x->wtx);
	kvfree(x->requeue);
	kvfree(x);
	qp->xp = NULL;
}

/*
 * Start sending: on the way to RTS, or earlier, in RTR, when a response
 * is due (@early): the QP has no sq_psn then, so its paths start in
 * epoch 1, which begins at PSN 0 (see proto/sack.c).
 */
void mr_req_start(struct mr_xport *x, bool early)
{
	struct mr_qp *qp = x->qp;
	u32 seed = jhash_2words(qp->ibqp.qp_num, qp->attr.dest_qp_num, 0);
	u32 i;

	mr_paths_init(&x->ps, x->npaths, MR_PATH_DEFAULT_FAIL_AFTER, seed);
	for (i = 0; i < x->npaths; i++) {
		struct mr_tx_path *p = &x->path[i];

		mr_sack_tx_init(&p->sb, qp->attr.sq_psn);
		if (early) {
			mr_paths_restart(&x->ps, i);
			mr_sack_tx_reset(&p->sb, x->ps.path[i].epoch);
		}
		mr_paths_set_window(&x->ps, i, MR_PATH_WINDOW);
		mr_rto_init(&p->rto, MR_RTO_INIT_NS, MR_RTO_MIN_NS,
			    MR_RTO_MAX_NS);
		p->deadline = 0;
		p->probed = false;
	}
	x->mtu = mr_mtu_bytes((enum mr_mtu)qp->attr.path_mtu);
	x->tx_err = false;
	x->msn_head = 0;
	x->msn_send = 0;
	x->rd_out = 0;
	x->msn_hi = 0;
	x->peer_done = 0;
	x->send_off = 0;
	x->rsn_next = 0;
	x->rtos = 0;
	x->gen = 0;
	x->rnr_wait = false;
	x->rnr_left = qp->attr.rnr_retry;
	x->rq_head = 0;
	x->rq_count = 0;
	x->tx_on = true;
}

/*
 * modify_qp changed the state, under the QP's state mutex: start the
 * responder in RTR, the requester in RTS; stop both in ERR and RESET.
 */
void mr_xport_modify(struct mr_qp *qp, enum ib_qp_state old,
		     enum ib_qp_state state)
{
	struct mr_xport *x = qp->xp;

	if (state == IB_QPS_ERR || state == IB_QPS_RESET) {
		mr_xport_stop(x);
		if (state == IB_QPS_RESET) {
			spin_lock_bh(&x->lock);
			mr_resp_free_msgs(x);
			mr_resp_reset(x);
			x->fatal = 0;
			spin_unlock_bh(&x->lock);
		}
		return;
	}
	spin_lock_bh(&x->lock);
	if (state == IB_QPS_RTR && old == IB_QPS_INIT)
		mr_resp_init(x);
	if (state == IB_QPS_RTS && old == IB_QPS_RTR) {
		if (x->tx_on)	/* started in RTR to send responses */
			x->rnr_left = qp->attr.rnr_retry;
		else
			mr_req_start(x, false);
	}
	spin_unlock_bh(&x->lock);
}

/*
 * post_send, under sq.lock (any context): the WQE at @slot enters the
 * ring. A READ gets its map of response slices here, so that nothing
 * needs memory once it is under way.
 */
int mr_req_prepare(struct mr_qp *qp, u32 slot)
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

/* post_send, after the queue lock: send what the windows allow. */
void mr_req_kick(struct mr_qp *qp)
{
	struct mr_xport *x = qp->xp;

	spin_lock_bh(&x->lock);
	mr_req_push(x);
	spin_unlock_bh(&x->lock);
}

/* The WQE of message @msn, which must be in the ring. */
struct mr_send_wqe *mr_req_wqe(struct mr_xport *x, u32 msn)
{
	struct mr_wq *sq = &x->qp->sq;

	return mr_wq_slot(sq, sq->head + (msn - x->msn_head));
}

struct mr_wqe_tx *mr_req_wtx(struct mr_xport *x, u32 msn)
{
	struct mr_wq *sq = &x->qp->sq;

	return &x->wtx[(sq->head + (msn - x->msn_head)) % sq->depth];
}

/* Gather @len bytes at @off of the WQE's message into @dst. */
static int mr_req_gather(struct mr_qp *qp, const struct mr_send_wqe *wqe,
			 u32 off, u8 *dst, u32 len)
{
	if (wqe->send_flags & IB_SEND_INLINE) {
		memcpy(dst, wqe->inline_data + off, len);
		return 0;
	}
	return mr_sgl_copy(to_mr_dev(qp->ibqp.device), qp->ibqp.pd, wqe->sge,
			   wqe->num_sge, off, dst, len, false);
}

static u8 mr_req_opcode(enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_SEND_WITH_IMM:
		return MR_OP_SEND_IMM;
	case IB_WR_SEND_WITH_INV:
		return MR_OP_SEND_INV;
	case IB_WR_RDMA_WRITE:
		return MR_OP_WRITE;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return MR_OP_WRITE_IMM;
	case IB_WR_RDMA_READ:
		return MR_OP_READ_REQ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return MR_OP_CMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return MR_OP_FETCH_ADD;
	default:
		return MR_OP_SEND;
	}
}

/*
 * Arm path @p's timer: first for a tail probe, after about two round
 * trips without an ACK (a lost last packet has nothing behind it to show
 * the gap), then for the RTO proper.
 */
void mr_req_arm_path(struct mr_tx_path *p, u64 now)
{
	u64 rto = mr_rto_get(&p->rto), t = rto;

	if (!p->probed && p->rto.srtt)
		t = clamp_t(u64, max(2 * p->rto.srtt,
				     p->rto.srtt + 4 * p->rto.rttvar),
			    MR_PTO_MIN_NS, rto);
	p->deadline = now + t;
	p->armed_ns = now;
}

/* The RTO of a path that has packets in flight runs; arm the QP timer. */
void mr_xport_arm(struct mr_xport *x)
{
	u64 next = x->rnr_wait ? x->rnr_deadline : 0, now;
	u32 i;

	if (!x->tx_on)
		return;
	for (i = 0; i < x->npaths; i++) {
		u64 d = x->path[i].deadline;

		if (d && (!next || d < next))
			next = d;
	}
	if (!next)
		return;
	now = mr_now_ns();
	mod_timer(&x->timer, jiffies + 1 +
		  (next > now ? nsecs_to_jiffies(next - now) : 0));
}

/*
 * The opcode header of the request packet @tp of @wqe, into @pkt; returns
 * the packet's payload length.
 */
static u32 mr_req_header(struct mr_xport *x, const struct mr_send_wqe *wqe,
			 const struct mr_tx_pkt *tp, struct mr_pkt *pkt)
{
	const struct mr_wqe_tx *wt = mr_req_wtx(x, tp->msn);
	u8 op = mr_req_opcode(wqe->opcode);
	u32 imm = op == MR_OP_SEND_INV ? 0 : be32_to_cpu(wqe->ex.imm_data);

	pkt->base.opcode = op;
	if ((wqe->send_flags & IB_SEND_SOLICITED) &&
	    (op == MR_OP_SEND || op == MR_OP_SEND_IMM || op == MR_OP_SEND_INV ||
	     op == MR_OP_WRITE_IMM))
		pkt->base.flags |= MR_FLAG_SOLICITED;
	switch (op) {
	case MR_OP_READ_REQ:
		pkt->read_req = (struct mr_read_req_hdr){
			.msn = tp->msn, .rkey = wqe->rkey,
			.va = wqe->remote_addr, .length = wqe->length,
		};
		return 0;
	case MR_OP_CMP_SWAP:
	case MR_OP_FETCH_ADD:
		/* ib_atomic_wr: compare_add is the addend of a FETCH_ADD. */
		pkt->atomic = (struct mr_atomic_hdr){
			.msn = tp->msn, .rkey = wqe->rkey,
			.va = wqe->remote_addr,
			.swap_add = op == MR_OP_CMP_SWAP ? wqe->swap :
							   wqe->compare_add,
			.compare = op == MR_OP_CMP_SWAP ? wqe->compare_add : 0,
		};
		return 0;
	case MR_OP_WRITE:
	case MR_OP_WRITE_IMM:
		pkt->write = (struct mr_write_hdr){
			.msn = tp->msn, .rkey = wqe->rkey,
			.va = wqe->remote_addr, .length = wqe->length,
			.offset = tp->offset, .rsn = wt->rsn, .imm = imm,
		};
		break;
	default:
		pkt->send = (struct mr_send_hdr){
			.msn = tp->msn, .rsn = wt->rsn, .length = wqe->length,
			.offset = tp->offset, .imm = imm,
			.inv_rkey = op == MR_OP_SEND_INV ?
					    wqe->ex.invalidate_rkey : 0,
		};
		break;
	}
	return min(x->mtu, wqe->length - tp->offset);
}

/**
 * mr_req_send_pkt() - build and send one packet of a message
 * @x: the transport, locked
 * @id: the path
 * @psn: its PSN on the path, taken from the scoreboard
 * @tp: which message and offset
 * @resend: a retransmission (counted as such)
 *
 * A packet of a message already complete (its WQE is gone) goes out as an
 * empty SEND with its MSN: the responder only acknowledges it, and the
 * path's PSN hole closes.
 */
void mr_req_send_pkt(struct mr_xport *x, u32 id, u32 psn,
		     const struct mr_tx_pkt *tp, bool resend)
{
	struct mr_qp *qp = x->qp;
	struct mr_dev *dev = to_mr_dev(qp->ibqp.device);
	struct mr_tx_path *p = &x->path[id];
	struct mr_send_wqe *wqe = NULL;
	struct mr_pkt pkt = {};
	struct mr_flow flow;
	struct sk_buff *skb;
	u32 len = 0, hlen;
	u8 *buf;
	int n;

	p->pkt[psn % MR_SACK_WINDOW] = *tp;
	p->pkt[psn % MR_SACK_WINDOW].sent_ns = mr_now_ns();
	p->pkt[psn % MR_SACK_WINDOW].order = ++x->tx_order;
	pkt.base.path = id;
	pkt.base.epoch = p->sb.epoch;
	pkt.base.qpn = qp->attr.dest_qp_num;
	pkt.base.psn = psn;
	if (tp->resp) {
		len = mr_resp_build(x, tp, &pkt);
	} else if (mr_seq_before(tp->msn, x->msn_head)) {
		pkt.base.opcode = MR_OP_SEND;
		pkt.send.msn = tp->msn;
	} else {
		wqe = mr_req_wqe(x, tp->msn);
		len = mr_req_header(x, wqe, tp, &pkt);
	}
	pkt.payload_len = len;
	hlen = mr_wire_hdr_len(pkt.base.opcode);

	skb = mr_alloc_skb(dev, hlen + len, GFP_ATOMIC);
	if (!skb) {
		/* Lost like on the wire: the SACK or the RTO resends it. */
		mr_stats_inc(dev, MR_CNT_TX_DROP_ERROR);
		goto arm;
	}
	buf = skb_put(skb, hlen + len);
	n = mr_wire_encode(&pkt, buf, hlen);
	if (n < 0) {
		WARN_ON_ONCE(1);
		mr_stats_inc(dev, MR_CNT_TX_DROP_ERROR);
		kfree_skb(skb);
		goto arm;
	}
	if (len && tp->resp) {
		n = mr_resp_gather(x, tp, buf + hlen, len, resend);
		if (n == -ENODATA) {
			/* Its region is gone: the slice goes empty (resp.c). */
			pkt.payload_len = 0;
			skb_trim(skb, hlen);
			n = mr_wire_encode(&pkt, buf, hlen);
		}
		if (n < 0) {
			mr_stats_inc(dev, MR_CNT_TX_DROP_ERROR);
			kfree_skb(skb);
			return;
		}
	} else if (len && mr_req_gather(qp, wqe, tp->offset, buf + hlen, len)) {
		ibdev_dbg(&dev->ib_dev, "QP %u: MSN %u: local data unreadable\n",
			  qp->ibqp.qp_num, tp->msn);
		mr_stats_inc(dev, MR_CNT_TX_DROP_ERROR);
		kfree_skb(skb);
		mr_req_fail(x, tp->msn, IB_WC_LOC_PROT_ERR);
		return;
	}
	flow = qp->flow;
	flow.sport = htons(x->ps.path[id].sport);
	mr_xmit(dev, skb, &flow);
	if (resend)
		mr_stats_inc(dev, MR_CNT_RETRANSMITS);
arm:
	if (!p->deadline) {
		mr_req_arm_path(p, mr_now_ns());
		mr_xport_arm(x);
	}
}

/*
 * Take a new PSN on a path with room, within the connection's window, or
 * return a negative value. A path whose scoreboard is full (an old hole
 * waits for its probe or RTO while 256 later PSNs went out) is passed
 * over: the others still have room.
 */
int mr_req_take(struct mr_xport *x, u32 *psn)
{
	u32 tries;
	int id;

	if (x->ps.inflight >= MR_CONN_WINDOW)
		return -MR_ENOSPC;
	for (tries = 0; tries < x->npaths; tries++) {
		id = mr_paths_pick(&x->ps);
		if (id < 0)
			return id;
		if (!mr_sack_tx_send(&x->path[id].sb, psn))
			return id;
		mr_paths_unpick(&x->ps, id);
	}
	return -MR_ENOSPC;
}

/*
 * Recount x->rd_out: READs and atomics started whose response has not
 * fully arrived. One whose response is in, but which waits behind an
 * earlier message to complete, no longer occupies the responder: it does
 * not count. Kept as a running count (mr_req_push(), mr_req_resp_rcv(),
 * mr_req_pop()); recounted only when an RNR rewind moves msn_send back.
 */
void mr_req_rd_recount(struct mr_xport *x)
{
	u32 msn;

	x->rd_out = 0;
	for (msn = x->msn_head; msn != x->msn_send; msn++)
		x->rd_out += mr_wr_is_rd(mr_req_wqe(x, msn)->opcode) &&
			     !mr_req_wtx(x, msn)->resp_done;
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
	unsigned long flags;
	int id;

	if (!x->tx_on)
		return;
	while (x->rq_count) {
		struct mr_requeue *e = &x->requeue[x->rq_head];

		if (e->resp || !mr_seq_before(e->msn, x->msn_head)) {
			id = mr_req_take(x, &psn);
			if (id < 0)
				return;
			tp = (struct mr_tx_pkt){ .msn = e->msn,
						 .offset = e->offset,
						 .gen = e->gen,
						 .resp = e->resp };
			trace_metaroce_retransmit(x->qp->ibqp.qp_num, id,
						  x->path[id].sb.epoch, psn,
						  tp.msn, tp.offset, tp.resp,
						  "moved");
			mr_req_send_pkt(x, id, psn, &tp, true);
			if (!x->tx_on)
				return;
		}
		x->rq_head = (x->rq_head + 1) % x->rq_size;
		x->rq_count--;
	}
	mr_resp_push(x);
	if (!x->tx_on || x->tx_err || x->rnr_wait)
		return;

	spin_lock_irqsave(&sq->lock, flags);
	count = sq->count;
	spin_unlock_irqrestore(&sq->lock, flags);
	/* The responder executes this many READs and atomics at a time. */
	rd_max = max_t(u32, 1, x->qp->attr.max_rd_atomic);
	while (x->msn_send - x->msn_head < count &&
	       x->msn_send - x->msn_head < MR_MSG_WINDOW) {
		struct mr_send_wqe *wqe = mr_req_wqe(x, x->msn_send);
		struct mr_wqe_tx *wt = mr_req_wtx(x, x->msn_send);
		bool rd = mr_wr_is_rd(wqe->opcode);

		if (rd && x->rd_out >= rd_max)
			return;
		id = mr_req_take(x, &psn);
		if (id < 0)
			return;
		if (!wt->rsn_set && mr_wr_consumes(wqe->opcode)) {
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
		mr_req_send_pkt(x, id, psn, &tp, false);
		if (!x->tx_on || x->tx_err)
			return;
		/*
		 * A READ or atomic request goes twice, on two paths: if its
		 * only packet were lost, no later packet on that path might
		 * reveal the gap before the tail probe, and the responder
		 * executes nothing after it until it arrives. The responder
		 * executes it once (the second copy is a duplicate).
		 */
		if (rd && x->npaths > 1) {
			id = mr_req_take(x, &psn);
			if (id < 0)
				return;
			mr_req_send_pkt(x, id, psn, &tp, false);
			if (!x->tx_on || x->tx_err)
				return;
		}
	}
}

/*
 * Message @msn failed with @status: nothing new goes out, and the WQE
 * completes with the error once every WQE before it has completed.
 */
void mr_req_fail(struct mr_xport *x, u32 msn, enum ib_wc_status status)
{
	if (x->tx_err && !mr_seq_before(msn, x->err_msn))
		return;
	x->tx_err = true;
	x->err_msn = msn;
	x->err_status = status;
	mr_req_complete(x);
}

/* A fatal error: stop sending, and move the QP to ERR (which flushes). */
void mr_xport_fatal(struct mr_xport *x)
{
	x->tx_on = false;
	schedule_work(&x->err_work);
}
