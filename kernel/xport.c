// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The transport's lifetime: created with an RC or UC QP, its responder
 * started on RTR and its requester on RTS, both stopped on ERR and RESET,
 * and destroyed with the QP. A fatal error (mr_xport_fatal(), or a fatal
 * NAK from ack.c) asks qp.c to move the QP to ERR (mr_qp_fatal()). Also
 * the transport's entry point for post_send.
 */
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "../uapi/metaroce-netlink.h"

#include "ack.h"
#include "comp.h"
#include "congestion.h"
#include "handshake.h"
#include "req.h"
#include "resp.h"
#include "share.h"
#include "socket.h"
#include "timers.h"
#include "xport.h"

static unsigned int mr_xport_paths = 16;
module_param_named(paths, mr_xport_paths, uint, 0644);
MODULE_PARM_DESC(paths, "paths (UDP source ports) per connection of a new device, 1-64 (default 16)");

/* The settings a new device starts with (mr_qp_dev_init()). */
void mr_xport_default_settings(struct mr_dev_settings *set)
{
	set->paths = clamp_t(u32, READ_ONCE(mr_xport_paths), 1, MR_PATH_MAX);
	set->fail_after = MR_PATH_DEFAULT_FAIL_AFTER;
	mr_congestion_defaults(&set->cc);
	set->cc_stamp = mr_congestion_cc_stamp();
}

/* What mr_xport_create() allocates for @npaths paths. */
static size_t mr_xport_bytes(u32 npaths)
{
	return sizeof(struct mr_xport) +
	       npaths * (sizeof(struct mr_tx_path) + 2 * sizeof(struct mr_route));
}

/*
 * The transport's state now, in bytes, its queues' per-WQE records aside:
 * what every connection holds, and what it borrows while it has packets
 * in flight or messages open. Under the lock.
 */
static u32 mr_xport_state_bytes(const struct mr_xport *x)
{
	const struct mr_sender *s = &x->snd;
	const struct mr_tx_ring *r;
	size_t n = mr_xport_bytes(s->npaths);
	u32 i;

	for (i = 0; i < s->npaths; i++)
		n += s->path[i].ring ? sizeof(*r) : 0;
	for (r = s->requeue.head; r; r = r->next)
		n += sizeof(*r);
	if (x->rsp.msg)
		n += MR_MSG_WINDOW * sizeof(*x->rsp.msg);
	if (x->rsp.resp)
		n += MR_MSG_WINDOW * sizeof(*x->rsp.resp);
	n += DIV_ROUND_UP(x->rsp.map_bits, 64) * sizeof(u64);
	return (u32)min_t(size_t, n, U32_MAX);
}

int mr_xport_create(struct mr_qp *qp)
{
	struct mr_dev *dev = to_mr_dev(qp->ibqp.device);
	struct mr_dev_settings set;
	struct mr_sender_timing tm;
	struct mr_tx_path *path;
	struct mr_xport *x;
	u32 npaths;

	mutex_lock(&dev->settings_lock);
	set = dev->settings;
	mutex_unlock(&dev->settings_lock);
	npaths = set.paths;

	/* One allocation: the transport, its paths, then their routes. */
	x = kvzalloc(mr_xport_bytes(npaths), GFP_KERNEL_ACCOUNT);
	if (!x)
		return -ENOMEM;
	path = (struct mr_tx_path *)(x + 1);
	x->routes = (struct mr_route *)(path + npaths);
	set.cc.enabled = mr_congestion_dev_enabled(&set);
	x->qp = qp;
	if (mr_req_create(x, qp->sq.depth) ||
	    (qp->nstreams && mr_req_streams(x, qp->nstreams))) {
		mr_req_free(x);
		kvfree(x);
		return -ENOMEM;
	}
	mr_sender_timing_default(&tm);
	mr_sender_setup(&x->snd, path, npaths, set.fail_after, &tm,
			&set.cc);
	x->qp = qp;
	spin_lock_init(&x->lock);
	mr_timers_init(x);
	mr_share_init(x);
	qp->xp = x;
	return 0;
}

/* ERR, RESET, destroy: nothing runs or re-arms after it. */
void mr_xport_stop(struct mr_qp *qp)
{
	struct mr_xport *x = qp->xp;

	spin_lock_bh(&x->lock);
	mr_req_stop(x);
	mr_ack_stop(x);
	mr_req_account(x);
	spin_unlock_bh(&x->lock);
	/* The timers re-arm only while the sender is on (rx_on for held ACKs). */
	mr_timers_stop(x);
}

/*
 * After every lookup reference is gone and mr_xport_stop(): nothing can
 * reach @x any more.
 */
void mr_xport_destroy(struct mr_qp *qp)
{
	struct mr_xport *x = qp->xp;

	u32 i;

	mr_share_leave(x);
	mr_resp_free(x);
	mr_req_free(x);
	for (i = 0; i < 2 * x->snd.npaths; i++)
		mr_socket_route_put(&x->routes[i]);
	mr_sender_release(&x->snd);
	kvfree(x);
	qp->xp = NULL;
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
		mr_xport_stop(qp);
		if (state == IB_QPS_RESET) {
			spin_lock_bh(&x->lock);
			mr_resp_free(x);
			mr_resp_reset(x);
			mr_sender_release(&x->snd);
			mr_share_leave(x);
			mr_handshake_clear(x);
			mr_ack_reset(x);
			spin_unlock_bh(&x->lock);
		}
		return;
	}
	spin_lock_bh(&x->lock);
	if (state == IB_QPS_RTR && old == IB_QPS_INIT) {
		/* RTR brings path_mtu; the requester slices by it too. */
		x->mtu = mr_mtu_bytes((enum mr_mtu)qp->attr.path_mtu);
		mr_handshake_init(x);
		mr_resp_init(x);
	}
	if (state == IB_QPS_RTS && old == IB_QPS_RTR) {
		mr_req_rts(x);
		if (mr_handshake_send(x))
			mr_comp_retry_exceeded(x);
		mr_timers_sync(x);
	}
	spin_unlock_bh(&x->lock);
}

/* post_send queued WQEs, and dropped the queue lock: send what fits. */
void mr_xport_kick(struct mr_qp *qp)
{
	struct mr_xport *x = qp->xp;

	spin_lock_bh(&x->lock);
	mr_req_push(x);
	if (mr_handshake_send(x))
		mr_comp_retry_exceeded(x);
	mr_timers_sync(x);
	spin_unlock_bh(&x->lock);
}

static void mr_xport_path_telemetry(struct mr_xport *x, u32 id,
				    struct mr_xport_path_info *pi)
{
	const struct mr_path *ps = &x->snd.ps.path[id];
	const struct mr_tx_path *p = &x->snd.path[id];
	u64 base = p->cc.base_cur;

	if (p->cc.base_prev && (!base || p->cc.base_prev < base))
		base = p->cc.base_prev;
	*pi = (struct mr_xport_path_info){
		.sport = ps->sport,
		.epoch = ps->epoch,
		.state = ps->state,
		.srtt_ns = p->rto.srtt,
		.rttvar_ns = p->rto.rttvar,
		.rto_ns = mr_rto_get(&p->rto),
		.base_rtt_ns = base,
		.window = x->snd.ccp.enabled ? p->cc.w.cwnd :
					   ps->window * MR_CC_ONE,
		.inflight = ps->inflight,
		.alpha = p->cc.w.alpha,
		.consec_rtos = ps->rtos,
		.n_sent = p->n_sent,
		.n_resent = p->n_resent,
		.n_sack_gaps = p->n_sack_gaps,
		.n_rtos = p->n_rtos,
		.n_probes = p->n_probes,
	};
}

/**
 * mr_xport_telemetry() - a snapshot of the connection of @qp (RC, UC)
 * @qp: the QP, held by the caller
 * @info: filled
 * @paths: MR_PATH_MAX entries, filled for [0, info->npaths); or NULL
 *
 * netlink.c's one view of the transport: a copy, taken under its lock.
 */
void mr_xport_telemetry(struct mr_qp *qp, struct mr_xport_info *info,
			struct mr_xport_path_info *paths)
{
	struct mr_xport *x = qp->xp;
	const struct mr_sender *s = &x->snd;
	u64 srtt = 0;
	u32 i;

	spin_lock_bh(&x->lock);
	info->npaths = s->ps.count;
	info->mtu = x->mtu;
	info->conn_window = s->ccp.enabled ? s->cc.w.cwnd :
				s->ccp.max_conn_window * MR_CC_ONE;
	info->inflight = s->ps.inflight;
	/* The gap is per full packet: its bytes over the gap, in kbit/s. */
	info->pacing_kbps = s->cc.gap_ns ?
		(u32)min_t(u64, div64_u64((u64)s->cc.mtu * 8 * USEC_PER_SEC,
					  s->cc.gap_ns), U32_MAX) : 0;
	info->hint_kbps = s->cc.hint_kbps;
	info->alpha = s->cc.w.alpha;
	info->tx_packets = s->tx_order;
	info->ce_marks = s->cc.marks;
	info->cc_decreases = s->cc.decreases;
	info->hint_limited = s->cc.hint_limited;
	info->path_failovers = s->n_failovers;
	info->rnr_naks = x->n_rnr_naks;
	info->map_bits = x->rsp.map_bits;
	info->map_budget = x->rsp.map_budget;
	info->state_bytes = mr_xport_state_bytes(x);
	info->retransmits = 0;
	info->sack_gaps = 0;
	info->rto_events = 0;
	info->tail_probes = 0;
	for (i = 0; i < s->ps.count; i++) {
		const struct mr_tx_path *p = &s->path[i];
		u64 rtt = p->rto.srtt;

		info->retransmits += p->n_resent;
		info->sack_gaps += p->n_sack_gaps;
		info->rto_events += p->n_rtos;
		info->tail_probes += p->n_probes;

		if (rtt && (!srtt || rtt < srtt))
			srtt = rtt;
		if (paths)
			mr_xport_path_telemetry(x, i, &paths[i]);
	}
	info->srtt_ns = srtt;
	info->local_tag = x->hello.local;
	info->peer_tag = x->hello.peer;
	if (!x->hello.local)
		info->handshake = METAROCE_QP_HANDSHAKE_NONE;
	else if (!x->hello.peer)
		info->handshake = METAROCE_QP_HANDSHAKE_WAITING;
	else if (!x->hello.known)
		info->handshake = METAROCE_QP_HANDSHAKE_PEER_KNOWN;
	else
		info->handshake = METAROCE_QP_HANDSHAKE_DONE;
	spin_unlock_bh(&x->lock);
}

/* Why the QP of @qp went to ERR, as enum metaroce_qp_error_reason. */
u8 mr_xport_error_reason(struct mr_qp *qp)
{
	struct mr_xport *x = qp->xp;
	u8 reason = METAROCE_QP_ERROR_USER;

	spin_lock_bh(&x->lock);
	if (x->req.tx_err) {
		switch (x->req.err_status) {
		case IB_WC_RETRY_EXC_ERR:
			reason = METAROCE_QP_ERROR_RETRY_EXCEEDED;
			break;
		case IB_WC_RNR_RETRY_EXC_ERR:
			reason = METAROCE_QP_ERROR_RNR_RETRY_EXCEEDED;
			break;
		case IB_WC_REM_ACCESS_ERR:
			reason = METAROCE_QP_ERROR_REMOTE_ACCESS;
			break;
		case IB_WC_REM_OP_ERR:
			reason = METAROCE_QP_ERROR_REMOTE_OP;
			break;
		case IB_WC_REM_INV_REQ_ERR:
			reason = METAROCE_QP_ERROR_REMOTE_INVALID;
			break;
		case IB_WC_LOC_PROT_ERR:
		case IB_WC_LOC_LEN_ERR:
			reason = METAROCE_QP_ERROR_LOCAL;
			break;
		default:
			reason = METAROCE_QP_ERROR_OTHER;
			break;
		}
	} else if (x->ack.fatal) {
		reason = METAROCE_QP_ERROR_PEER_FATAL;
	}
	spin_unlock_bh(&x->lock);
	return reason;
}
