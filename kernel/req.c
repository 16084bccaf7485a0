// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The requester's kernel side: the send ring's WQEs are the messages the
 * requester engine (proto/requester.c) cuts into packets and hands to the
 * sender engine (proto/sender.c), which picks each one's path and PSN and
 * keeps it until acknowledged; tx.c builds and sends each one. The ring
 * holds the WQEs until the responder reports their message complete
 * (comp.c). The same paths carry this end's responses to the peer's
 * READs and atomics, before new requests. The requester engine's
 * environment, the kernel's side of it, is here too.
 */
#include <linux/jhash.h>
#include <linux/slab.h>

#include "ack.h"
#include "opcode.h"
#include "plane.h"
#include "req.h"
#include "resp.h"
#include "sq.h"
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

	mr_requester_start(&x->req, x->mtu, qp->attr.rnr_retry);
	/* Its path count was checked when the QP was created. */
	mr_sender_start(&x->snd, qp->attr.sq_psn, early, seed,
			x->mtu + MR_TRANSPORT_HDR_RESERVE);
	mr_hello_start(&x->hello, mr_xport_now());
	/* No path has sent on a plane yet (tx.c). */
	mr_plane_track_init(&x->planes);
	x->plane_gen = mr_plane_gen(to_mr_dev(x->qp->ibqp.device));
	x->plane_reach = mr_plane_reach(to_mr_dev(x->qp->ibqp.device),
					&x->qp->flow);
}

/*
 * RTS: start the requester, or, if it started in RTR to send responses,
 * give it the RNR retries of RTS.
 */
void mr_req_rts(struct mr_xport *x)
{
	if (x->snd.on)
		mr_requester_rts(&x->req, x->qp->attr.rnr_retry);
	else
		mr_req_start(x, false);
}

/* ERR, RESET, destroy: send nothing more; no RNR wait holds the timer. */
void mr_req_stop(struct mr_xport *x)
{
	mr_sender_stop(&x->snd);
	mr_requester_stop(&x->req);
}

/* The per-WQE state of a send ring of @depth entries: create. */
int mr_req_create(struct mr_xport *x, u32 depth)
{
	x->wtx = kvcalloc(depth, sizeof(*x->wtx), GFP_KERNEL_ACCOUNT);
	return x->wtx ? 0 : -ENOMEM;
}

/* Free the response slice maps and the per-WQE state: destroy. */
void mr_req_free(struct mr_xport *x)
{
	struct mr_wqe_tx *wtx = x->wtx;
	struct mr_qp *qp = x->qp;
	u32 i;

	for (i = 0; wtx && i < qp->sq.depth; i++) {
		struct mr_wqe_tx *wt = &wtx[i];

		if (wt->resp.map != &wt->resp.map1)
			bitmap_free((unsigned long *)wt->resp.map);
		wt->resp.map = NULL;
	}
	kvfree(wtx);
	x->wtx = NULL;
	kfree(x->stream_last);
	x->stream_last = NULL;
}

/* create_qp: a QP of @n streams, in RESET; each needs its last MSN. */
int mr_req_streams(struct mr_xport *x, u32 n)
{
	x->stream_last = kcalloc(n, sizeof(*x->stream_last),
				 GFP_KERNEL_ACCOUNT);
	if (!x->stream_last)
		return -ENOMEM;
	mr_requester_streams(&x->req, x->stream_last, n);
	return 0;
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

	if (wt->resp.map != &wt->resp.map1)
		bitmap_free((unsigned long *)wt->resp.map);
	wt->resp = (struct mr_req_slices){ .map = &wt->resp.map1 };
	if (wqe->opcode == IB_WR_RDMA_READ &&
	    slices > BITS_PER_TYPE(wt->resp.map1)) {
		wt->resp.map = (u64 *)bitmap_zalloc(slices, GFP_ATOMIC);
		if (!wt->resp.map)
			return -ENOMEM;
	}
	wt->started = false;
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

/*
 * Send what the windows allow: packets moved off a failed path first,
 * then responses to the peer, then new requests. Nothing goes before the
 * peer's tag is known: the handshake first, again if it gave up before
 * work was posted.
 */
/*
 * The planes changed since this QP last looked: which reach the peer is
 * looked up again, and what its paths sent on a plane that left service
 * (or does not reach the peer) is lost with it and goes to the other
 * paths now.
 */
static void mr_req_planes(struct mr_xport *x)
{
	struct mr_dev *dev = to_mr_dev(x->qp->ibqp.device);
	u32 gen = mr_plane_gen(dev), serving, id;

	if (gen == x->plane_gen)
		return;
	x->plane_gen = gen;
	x->plane_reach = mr_plane_reach(dev, &x->qp->flow);
	serving = mr_plane_serving(dev) & x->plane_reach;
	for (id = 0; id < x->snd.npaths; id++)
		if (mr_plane_track_lost(&x->planes, id,
					mr_sender_path_una(&x->snd, id), serving))
			mr_sender_abandon(&x->snd, id);
}

/*
 * Packets in flight a device's QPs may have together before one that has
 * its own in flight waits for their ACKs: many QPs, each within its
 * windows, could together overflow the hosts' receive backlogs (seen: 256
 * QPs between two namespaces lost a quarter of their packets there).
 */
static unsigned int tx_inflight_cap = 256;
module_param(tx_inflight_cap, uint, 0644);
MODULE_PARM_DESC(tx_inflight_cap,
		 "packets in flight of all a device's QPs before one with its own in flight waits for their ACKs (0: no cap)");

/*
 * Count this QP's packets in flight into its device's sum. Every entry to
 * the transport calls it before it lets go of the lock, so the sum is
 * never stale; a stopped QP counts none.
 */
void mr_req_account(struct mr_xport *x)
{
	struct mr_dev *dev = to_mr_dev(x->qp->ibqp.device);
	u32 now = x->snd.on ? x->snd.ps.inflight : 0;

	if (now != x->tx_counted) {
		atomic_add((int)(now - x->tx_counted), &dev->tx_inflight);
		x->tx_counted = now;
	}
}

/*
 * Whether the device has its cap of packets in flight and this QP some of
 * them: it sends again when its ACKs come, so a QP with none always may.
 */
static bool mr_req_device_full(struct mr_xport *x)
{
	unsigned int cap = READ_ONCE(tx_inflight_cap);

	return cap && x->snd.ps.inflight &&
	       atomic_read(&to_mr_dev(x->qp->ibqp.device)->tx_inflight) >=
	       (int)cap;
}

void mr_req_push(struct mr_xport *x)
{
	if (!x->snd.on)
		return;
	/* What a user QP posted in its send ring since (sq.c). */
	mr_sq_pull(x->qp);
	mr_req_planes(x);
	if (!mr_hello_ready(&x->hello)) {
		if (mr_wq_count(&x->qp->sq))
			mr_hello_start(&x->hello, mr_xport_now());
		return;
	}
	mr_req_account(x);
	if (mr_req_device_full(x))
		return;
	/* The responder executes this many READs and atomics at a time. */
	mr_requester_push(&x->req, &x->snd, x->qp->attr.max_rd_atomic,
			  mr_xport_now());
	mr_req_account(x);
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
 * The requester engine's environment (proto/requester.h), the kernel's
 * side: it runs with the transport locked, inside mr_requester_push().
 */
static struct mr_xport *mr_req_of(struct mr_requester *r)
{
	return container_of(r, struct mr_xport, req);
}

u32 mr_requester_env_posted(struct mr_requester *r)
{
	return mr_wq_count(&mr_req_of(r)->qp->sq);
}

void mr_requester_env_msg(struct mr_requester *r, u32 msn,
			  struct mr_req_msg *m)
{
	struct mr_xport *x = mr_req_of(r);
	const struct mr_send_wqe *wqe = mr_xport_wqe(x, msn);
	const struct mr_wqe_tx *wt = mr_xport_wtx(x, msn);
	const struct mr_opcode_info *o = mr_opcode_get(wqe->opcode);

	*m = (struct mr_req_msg){
		.length = wqe->length,
		.rd = o->flags & MR_OPC_RD,
		.consumes = o->flags & MR_OPC_CONSUMES,
		.started = wt->started,
		.stream = wqe->stream,
		.answered = wt->resp.done,
	};
}

void mr_requester_env_start(struct mr_requester *r, u32 msn, u32 rsn,
			    u8 order)
{
	struct mr_wqe_tx *wt = mr_xport_wtx(mr_req_of(r), msn);

	wt->rsn = rsn;
	wt->order = order;
	wt->started = true;
}

bool mr_requester_env_response_due(struct mr_requester *r)
{
	struct mr_xport *x = mr_req_of(r);

	return mr_responder_response_due(&x->rsp, x->ack.fatal);
}

void mr_requester_env_response(struct mr_requester *r, struct mr_tx_pkt *tp)
{
	mr_responder_response_take(&mr_req_of(r)->rsp, tp);
}
