/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-path retransmission timeout: the RFC 6298 estimator, with clamps and
 * exponential backoff. Times are nanoseconds, passed in by the caller; the
 * unit reads no clock and keeps no timer.
 */
#ifndef METAROCE_PROTO_RTO_H
#define METAROCE_PROTO_RTO_H

#include "types.h"

/* Largest accepted time, so that 4 * RTTVAR and doubling cannot overflow. */
#define MR_RTO_LIMIT_NS 0x1000000000000000ull	/* 2^60 ns: 36 years */

struct mr_rto {
	u64 srtt;	/* smoothed RTT; 0 until the first sample */
	u64 rttvar;	/* RTT variation */
	u64 rto;	/* the timeout to arm now, backoff included */
	u64 min;	/* floor of the timeout */
	u64 max;	/* ceiling of the timeout, and of backoff */
	u32 backoffs;	/* timeouts since the last sample */
	u32 samples;	/* samples taken, saturating */
};

void mr_rto_init(struct mr_rto *r, u64 initial_ns, u64 min_ns, u64 max_ns);
void mr_rto_sample(struct mr_rto *r, u64 rtt_ns);
u64 mr_rto_timeout(struct mr_rto *r);
u64 mr_rto_wait(const struct mr_rto *r, bool probed, u64 pto_min_ns);

/**
 * mr_rto_early() - whether a path's timer fired while older packets of the
 * connection are still coming back
 * @oldest: send order of the path's oldest unacknowledged packet (the
 *	connection's count of packets sent, when it went)
 * @acked_front: the newest send order of any packet acknowledged so far
 * @slack: packets sent after ours that may arrive before our ACK leaves,
 *	since the receiver acknowledges each path every few packets
 * @armed_ns: when the timer was armed
 * @acked_ns: when an ACK last acknowledged something new
 * @deferred: the timer has waited once already for the slack
 *
 * A queue delivers in order: a packet comes back after every packet sent
 * before it. While ACKs keep arriving since the timer was armed for
 * packets sent before ours, our packet is queued behind them (a slow
 * receiver, not a loss): the caller re-arms instead of resending. ACKs of
 * packets sent after ours, by less than @slack, may have overtaken ours
 * held back by coalescing: that is worth one wait, not more, since with
 * nothing more to send the coalescing that holds ours may never end. Once
 * the acknowledged front passes ours by @slack, the timer counts (the
 * loss rule of RACK, RFC 8985, in packets instead of time).
 */
static inline bool mr_rto_early(u64 oldest, u64 acked_front, u64 slack,
				u64 armed_ns, u64 acked_ns, bool deferred)
{
	if (acked_ns <= armed_ns)
		return false;
	return acked_front < oldest ||
	       (!deferred && acked_front < oldest + slack);
}

/* @t doubled, at most @max: a timeout backed off once. */
static inline u64 mr_rto_doubled(u64 t, u64 max)
{
	return t > max / 2 ? max : 2 * t;
}

/* The timeout to arm for the path now. */
static inline u64 mr_rto_get(const struct mr_rto *r)
{
	return r->rto;
}

#endif /* METAROCE_PROTO_RTO_H */
