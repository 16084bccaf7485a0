/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The RC and UC transport of a QP, struct mr_xport, and its lifetime
 * (xport.c). Its engines: the sender engine (proto/sender.c, its kernel
 * side in comp.c) owns the paths, their scoreboards, windows and timers,
 * and resends; the requester (req.c) cuts new requests and the responses
 * it owes into packets for it; the completer (comp.c) completes send WQEs
 * from ACKs, NAKs and responses; the responder (resp.c) places what
 * arrives and answers it through the receiver engine (proto/receiver.c,
 * its kernel side in ack.c), which keeps the peer's paths' receive
 * windows and decides the ACKs; tx.c builds and sends every
 * packet, timers.c owns the timers. Design.rst draws the layers.
 *
 * One spin lock per QP, mr_xport.lock, covers all of it; it is taken with
 * BHs off, by the entry points only (receive.c, timers.c, xport.c),
 * because the receive path and the timer run in softirq. Lock order:
 * xport lock, then sq.lock or rq.lock, then a CQ lock (mr_cq_post()).
 */
#ifndef METAROCE_XPORT_H
#define METAROCE_XPORT_H

#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/timer.h>
#include <linux/workqueue.h>

#include "metaroce.h"
#include "qp.h"
#include "wq.h"
#include "proto/cc.h"
#include "proto/coalesce.h"
#include "proto/hello.h"
#include "proto/path.h"
#include "proto/plane.h"
#include "proto/requeue.h"
#include "proto/rto.h"
#include "proto/receiver.h"
#include "proto/requester.h"
#include "proto/responder.h"
#include "proto/sack.h"
#include "proto/sender.h"
#include "proto/window.h"

/*
 * After a fatal NAK, the responder repeats it at most once per this time,
 * however many packets come: less than the RTO floor, so that every
 * packet the requester resends on a timeout draws one.
 */
#define MR_FATAL_NAK_GAP_NS (MR_RTO_MIN_NS / 2)
/* Per send WQE, parallel to the send ring. */
struct mr_wqe_tx {
	u32 rsn;
	u8 order;		/* MR_ORDER_*, of its stream */
	bool started;		/* RSN and order are taken once, at first send */
	/* READ and atomics: which response slices have landed. */
	struct mr_req_slices resp;
};

/*
 * Whether the responder takes packets, and the fatal NAK that answers
 * them once a message is refused for good: ack.c's alone (resp.c,
 * comp.c, timers.c and xport.c read it).
 */
struct mr_ack_state {
	bool rx_on;
	/* the plane the peer's last packet on each path came by; -1: none */
	s8 plane_arrived[MR_PATH_MAX];
	u8 fatal;		/* NAK code answering everything, or 0 */
	u32 fatal_msn;
	u64 fatal_nak_ns;	/* when the fatal NAK last went */
};

/* The share of the device's ingress the peer gets, which share.c owns. */
struct mr_conn_share {
	atomic64_t bytes;	/* received since the shares were computed */
	/* ... in packets, CE-marked ones, ones beyond a hole, held ones */
	atomic64_t packets;
	atomic64_t marks;
	atomic64_t gaps;
	atomic64_t limited;	/* MR_FLAG_WINDOW_LIMITED */
	u32 hint;		/* kbit/s, in every ACK; 0: no hint */
	s32 slot;		/* in the device's table; -1: not in it */
};

/* The transport's timers, which only timers.c touches. */
struct mr_timers {
	struct timer_list timer;	/* RTOs, tail probes, RNR wait, HELLOs */
	u64 timer_ns;		/* the deadline it is armed for */
	struct hrtimer pacer;	/* the pacing wait */
	u64 pacer_ns;		/* the time the pacer is armed for */
	struct hrtimer acker;	/* the longest an ACK waits */
	u64 acker_ns;		/* the time the acker is armed for */
	u64 trim_ns;		/* when the engines next give memory back */
};

struct mr_xport {
	spinlock_t lock;	/* everything below; BH-safe */
	struct mr_qp *qp;
	struct mr_timers timers;
	u32 mtu;		/* set from path_mtu on RTR (xport.c) */
	/* the connection tags (handshake.c): ours from RTR, the peer's */
	struct mr_hello hello;

	/* requester */
	struct mr_sender snd;	/* paths, windows, timers: proto/sender.c */
	struct mr_requester req;	/* its messages: proto/requester.c */
	/*
	 * Per send WQE, parallel to the send ring: req.c fills it as the
	 * requester posts and starts each; the completer places the
	 * responses it records there.
	 */
	struct mr_wqe_tx *wtx;
	u32 *stream_last;	/* the requester's, of qp->nstreams streams */
	u32 tx_counted;		/* its packets in flight in dev->tx_inflight */
	u64 n_rnr_naks;		/* RNR NAKs sent (telemetry) */
	/* the planes each path's packets left on (tx.c records them) */
	struct mr_plane_track planes;
	u32 plane_gen;		/* the device's planes_gen req.c last saw */
	u32 plane_reach;	/* the planes with a route to the peer */
	/*
	 * The routes kept (socket.c): a data path's at its id, then the
	 * ACKs' and NAKs' for the peer's path at npaths + its id % npaths.
	 */
	struct mr_route *routes;

	/* responder */
	struct mr_ack_state ack;
	struct mr_responder rsp;	/* the peer's messages: proto/responder.c */
	struct mr_receiver rcv;	/* the peer's paths: proto/receiver.c */
	struct mr_conn_share share;
};

/* What an engine's receive left for the entry point to do (receive.c). */
enum mr_xport_next {
	MR_NEXT_NONE,
	MR_NEXT_PUSH,		/* the requester may have something to send */
	MR_NEXT_RESPOND,	/* responses are due: start sending if need be */
};

/* A path as administrators see it (mr_xport_telemetry()). */
struct mr_xport_path_info {
	u16 sport;
	u16 epoch;
	u8 state;		/* enum mr_path_state */
	u64 srtt_ns;		/* 0: no sample yet */
	u64 rttvar_ns;
	u64 rto_ns;
	u64 base_rtt_ns;	/* 0: none */
	u32 window;		/* 1/1024 packet */
	u32 inflight;
	u32 alpha;		/* Q16 */
	u32 consec_rtos;
	u64 n_sent;
	u64 n_resent;
	u64 n_sack_gaps;
	u64 n_rtos;
	u64 n_probes;
};

/* A connection as administrators see it; counters wrap as the cc's do. */
struct mr_xport_info {
	u32 npaths;		/* paths started: 0 before the requester is */
	u32 mtu;
	u32 conn_window;	/* 1/1024 packet */
	u32 inflight;
	u32 pacing_kbps;	/* 0: not paced */
	u32 hint_kbps;
	u32 alpha;		/* Q16 */
	u64 srtt_ns;		/* the smallest of the paths'; 0: none */
	u64 tx_packets;		/* resends included */
	u64 retransmits;	/* the paths' counts, summed */
	u64 sack_gaps;
	u64 rto_events;
	u64 tail_probes;
	u64 path_failovers;
	u64 rnr_naks;
	u32 ce_marks;
	u32 cc_decreases;
	u32 hint_limited;
	u8 handshake;		/* enum metaroce_qp_handshake */
	u64 local_tag;
	u64 peer_tag;
	u32 map_bits;		/* slice-map bits held by the responder */
	u32 map_budget;		/* ... and the most it may hold */
	u32 state_bytes;	/* the transport's memory now */
};

void mr_xport_default_settings(struct mr_dev_settings *set);
void mr_xport_telemetry(struct mr_qp *qp, struct mr_xport_info *info,
			struct mr_xport_path_info *paths);
u8 mr_xport_error_reason(struct mr_qp *qp);
int mr_xport_create(struct mr_qp *qp);
void mr_xport_stop(struct mr_qp *qp);
void mr_xport_destroy(struct mr_qp *qp);
void mr_xport_modify(struct mr_qp *qp, enum ib_qp_state old,
		     enum ib_qp_state state);
void mr_xport_kick(struct mr_qp *qp);

static inline u64 mr_xport_now(void)
{
	return ktime_get_ns();
}

/*
 * How many timeouts in a row a path, or HELLOs the handshake, get beyond
 * the first before the QP fails. UC has no retry_cnt: it gets the most RC
 * may ask for.
 */
static inline u32 mr_xport_retries(const struct mr_xport *x)
{
	return x->qp->ibqp.qp_type == IB_QPT_UC ? 7 : x->qp->attr.retry_cnt;
}

/* The send WQE of message @msn, which must be in the ring. */
static inline struct mr_send_wqe *mr_xport_wqe(struct mr_xport *x, u32 msn)
{
	struct mr_wq *sq = &x->qp->sq;

	return mr_wq_slot(sq, sq->head + (msn - x->req.msn_head));
}

static inline struct mr_wqe_tx *mr_xport_wtx(struct mr_xport *x, u32 msn)
{
	struct mr_wq *sq = &x->qp->sq;

	return &x->wtx[(sq->head + (msn - x->req.msn_head)) % sq->depth];
}

/*
 * A fatal error of the requester: send nothing more, and move the QP to
 * ERR (which flushes its queues) from process context.
 */
static inline void mr_xport_fatal(struct mr_xport *x)
{
	mr_sender_stop(&x->snd);
	mr_qp_fatal(x->qp);
}

#endif /* METAROCE_XPORT_H */
