/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Congestion control, the receiver's side: the max-min fair share of its
 * ingress capacity among its active senders, aware of their demand, which
 * it returns to each sender in every ACK as a rate hint (kbit/s, the
 * hint's unit in cc.h). Pure arithmetic, as cc.h's sender side; the kernel's
 * glue is kernel/share.c. Documentation/metaroce/protocol.rst ("Congestion
 * control") has the rules with their numbers.
 */
#ifndef METAROCE_PROTO_SHARE_H
#define METAROCE_PROTO_SHARE_H

#include "types.h"

struct mr_cc_params;

/* mr_share_flow.demand_kbps of a sender that uses its whole share. */
#define MR_SHARE_UNBOUNDED 0xffffffffu

/* Fair shares of an ingress capacity, one entry per sender. */
struct mr_share_flow {
	u64 bytes;		/* in: bytes received in the interval */
	u32 hint_kbps;		/* in: the share given last, 0: none; out: new */
	u32 rate_kbps;		/* state: the rate of the last interval */
	u32 demand_kbps;	/* out: the demand, MR_SHARE_UNBOUNDED, 0: idle */
	u8 idle;		/* state: intervals in a row without data */
};

/* What one mr_share_split() call found, for tests and telemetry. */
struct mr_share_stats {
	u32 active;		/* senders that have not dropped out */
	u32 unbounded;		/* ... of them using their whole share */
	u32 passes;		/* passes over the senders to find the level */
};

/*
 * mr_share_split() - the receiver's share for each of its senders
 * @prm: checked congestion control parameters (share_idle)
 * @flows: one per sender, zeroed when the sender appears; the caller
 *	fills .bytes (counted as the sender's mr_cc_pace_sent() counts them)
 *	and reads .hint_kbps, which it puts in every ACK to that sender until
 *	the next call. Order does not matter and is kept.
 * @n: number of entries (4096 and more are fine)
 * @capacity_kbps: the ingress capacity to share; 0: no hints (all 0)
 * @interval_ns: the time .bytes were counted over; 0: no hints. It should
 *	let a sender at its share send several packets (1 ms, or a few RTTs).
 * @st: what it found, or NULL
 *
 * Demand: a sender with no data for share_idle intervals drops out; a new
 * one (no share yet), or one that used at least 7/8 of its share, is
 * unbounded; any other gets what it used (the larger of this and the
 * last interval's rate) + 25 %. Shares are max-min fair: the water level
 * L with sum(min(demand, L)) = capacity; an unbounded sender gets L, a
 * bounded one its demand; if every demand fits, the rest is split evenly.
 * A dropped-out sender gets the return value. Shares are at least
 * 1 kbit/s. O(n) per pass; 1 pass for equal senders, 2 for two classes,
 * at most about 67 whatever the demands.
 *
 * Return: the share a newcomer would get (a lower bound): for ACKs to a
 * sender that is not in @flows yet.
 */
u32 mr_share_split(const struct mr_cc_params *prm, struct mr_share_flow *flows,
		   u32 n, u32 capacity_kbps, u64 interval_ns,
		   struct mr_share_stats *st);

/* The rate of @bytes over @interval_ns, in the hint's unit (saturates). */
u32 mr_share_rate_kbps(u64 bytes, u64 interval_ns);

#endif /* METAROCE_PROTO_SHARE_H */
