/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Congestion control of one connection: pure arithmetic, no clock, no
 * timer, no allocation. The caller (the kernel transport, a host test, the
 * ns-3 scale model) passes times in nanoseconds and packet counts in.
 *
 * Sender: a window per path and one per connection. ECN drives AIMD on
 * each (DCTCP's alpha, RFC 8257), delay above a target derived from the
 * path's base RTT is a second signal, and a burst of losses on one path
 * within one RTT a third; isolated losses are not congestion. A window may
 * go below one packet: pacing then spaces the packets.
 *
 * Pacing: a connection sends at most at its rate, the smaller of its
 * window's rate (window / SRTT, with headroom) and the receiver's hint,
 * in bursts of at most MR_CC_BURST packets.
 *
 * Receiver: the fair share of its ingress capacity, max-min over the
 * senders active towards it and aware of their demand, which it returns
 * to each one in every ACK as a rate hint.
 *
 * Windows are fixed point: packets << MR_CC_SHIFT.
 */
#ifndef METAROCE_PROTO_CC_H
#define METAROCE_PROTO_CC_H

#include "types.h"

#define MR_CC_SHIFT 10
#define MR_CC_ONE (1u << MR_CC_SHIFT)	/* one packet */
#define MR_CC_ALPHA_ONE 65536u		/* alpha = 1.0, Q16 */
#define MR_CC_BURST 4			/* packets that may leave back to back */

/* Knobs; mr_cc_params_default() fills the defaults. */
struct mr_cc_params {
	u8 enabled;		/* 0: fixed windows, no pacing (as before) */
	u8 ecn;			/* react to CE marks */
	u8 delay;		/* react to delay above the target */
	u8 loss;		/* react to loss bursts */
	u8 g_shift;		/* DCTCP gain g = 2^-g_shift; 4: 1/16 */
	u32 init_path_window;	/* packets */
	u32 init_conn_window;	/* packets */
	u32 max_path_window;	/* packets, at most 256 (the scoreboard) */
	u32 max_conn_window;	/* packets */
	u32 min_window;		/* fixed point; below MR_CC_ONE paces */
	u32 ai;			/* additive increase per RTT, fixed point */
	u64 target_ns;		/* delay target above the base RTT */
	u32 loss_burst;		/* losses in one RTT that mean congestion */
};

/* One path's congestion state. */
struct mr_cc_path {
	u32 cwnd;		/* fixed point */
	u32 alpha;		/* Q16 */
	u64 base_rtt;		/* lowest RTT seen, ns; 0: none yet */
	u64 srtt;		/* the caller's smoothed RTT, ns */
	u64 round_end;		/* send order that closes this RTT's round */
	u32 round_acked;	/* packets acknowledged in the round */
	u32 round_marked;	/* ... of them CE-marked */
	u32 round_lost;		/* losses reported in the round */
	u32 ecn_seen;		/* the last ECN count of the ACKs (wraps) */
	u8 ecn_valid;
	u8 decreased;		/* a decrease happened this round */
};

/* The connection's congestion and pacing state. */
struct mr_cc_conn {
	u32 cwnd;		/* fixed point; caps the sum of the paths' */
	u32 alpha;
	u64 round_end;
	u32 round_acked, round_marked, round_lost;
	u8 decreased;
	u64 srtt;		/* the connection's smallest path SRTT, ns */
	u32 hint_kbps;		/* the receiver's last hint, 0: none */
	u64 rate_bps;		/* pacing rate, 0: unpaced */
	u64 next_ns;		/* earliest time the next burst may leave */
	u32 burst;		/* packets left in the current burst */
	/* Counters the caller reads for telemetry (wrap). */
	u32 decreases;
	u32 hint_limited;
	u32 paced;
};

/* What one ACK of one path told the sender. */
struct mr_cc_ack {
	u32 acked;		/* packets newly acknowledged */
	u32 lost;		/* packets newly reported lost */
	u32 ecn_count;		/* the ACK's cumulative CE count */
	u64 rtt_ns;		/* RTT sample, 0: none */
	u64 srtt_ns;		/* the path's SRTT after the sample */
	u64 acked_order;	/* newest send order acknowledged */
	u64 sent_order;		/* the connection's send order now */
	u32 hint_kbps;		/* the ACK's rate hint, 0: none */
};

/* What mr_cc_ack() did, for counters and trace events. */
enum mr_cc_verdict {
	MR_CC_HOLD = 0,		/* window unchanged */
	MR_CC_INCREASE = 1,
	MR_CC_DECREASE_ECN = 2,
	MR_CC_DECREASE_DELAY = 3,
	MR_CC_DECREASE_LOSS = 4,
};

void mr_cc_params_default(struct mr_cc_params *prm);
void mr_cc_conn_init(struct mr_cc_conn *c, const struct mr_cc_params *prm);
void mr_cc_path_init(struct mr_cc_path *p, const struct mr_cc_params *prm);
enum mr_cc_verdict mr_cc_ack(const struct mr_cc_params *prm,
			     struct mr_cc_conn *c, struct mr_cc_path *p,
			     const struct mr_cc_ack *a);
void mr_cc_timeout(const struct mr_cc_params *prm, struct mr_cc_conn *c,
		   struct mr_cc_path *p);
/* Windows in whole packets (at least 1) for the scheduler. */
u32 mr_cc_path_window(const struct mr_cc_path *p);
u32 mr_cc_conn_window(const struct mr_cc_conn *c);

/* Pacing: when the next packet of @bytes may leave; 0 if it may now. */
u64 mr_cc_pace_delay(const struct mr_cc_params *prm, struct mr_cc_conn *c,
		     u64 now_ns);
void mr_cc_pace_sent(const struct mr_cc_params *prm, struct mr_cc_conn *c,
		     u32 bytes, u64 now_ns);

/* Receiver: fair shares of an ingress capacity. */
struct mr_cc_flow {
	u64 bytes;		/* in: bytes received in the interval */
	u32 hint_kbps;		/* in: the share last given; out: the new one */
	u32 demand_kbps;	/* out: the demand estimated */
};

void mr_cc_share(struct mr_cc_flow *flows, u32 n, u32 capacity_kbps,
		 u64 interval_ns);

#endif /* METAROCE_PROTO_CC_H */
