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
/* Rounds in a row that must find the host's capacity too high to lower it. */
#define MR_SHARE_OVER_ROUNDS 4

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

/*
 * The receiver's table of the senders sending to it (share_table.c): a
 * sender joins with its first data packet and is an entry, [0, n), until it
 * leaves or drops out idle; every round splits the capacity among the
 * entries with mr_share_split(). The table decides; the host owns the
 * entries' storage, the time and the capacity, and keeps what is its own
 * (the entries' owners, their byte counters, its locks) behind the
 * environment functions below, one definition per host at link time.
 * Only share_table.c writes it; hosts read its fields.
 */
struct mr_share_table {
	struct mr_share_flow *flows;	/* the host's storage, @max entries */
	u32 max;
	u32 n;			/* entries in use: [0, n) */
	u64 start_ns;		/* when the current round began; 0: none yet */
	u32 newcomer_kbps;	/* the share of one that joins now */
	/* After a join, until the next round: the capacity over all. */
	u32 even_kbps;		/* 0: none */
	u32 peak_kbps;		/* the most received in a round, decaying */
	/*
	 * The host's capacity as the rounds learn it: lower when it is
	 * plainly more than the bottleneck before this end (see
	 * mr_share_table_round()); 0: none learnt.
	 */
	u32 learnt_kbps;
	u32 over_rounds;	/* rounds in a row that found it too high */
	u32 over_kbps;		/* the most one of them received */
	struct mr_share_stats stats;	/* what the last round found */
};

/* The congestion an entry's packets met on the way since the last round. */
struct mr_share_signals {
	u64 packets;		/* new packets */
	u64 marks;		/* of them CE-marked */
	u64 gaps;		/* that arrived beyond a hole on their path */
	u64 limited;		/* that said MR_FLAG_WINDOW_LIMITED */
};

/*
 * The environment, one definition per host. @i is an entry's index.
 *
 * The bytes entry @i's sender sent since it was last asked (it counts them
 * as its own; the host zeroes its counter).
 */
u64 mr_share_table_env_bytes(struct mr_share_table *t, u32 i);
/* Add entry @i's signals since it was last asked to @sig (and zero them). */
void mr_share_table_env_signals(struct mr_share_table *t, u32 i,
				struct mr_share_signals *sig);
/* Entry @i's share is now @hint_kbps: its ACKs carry it (see _hint()). */
void mr_share_table_env_hint(struct mr_share_table *t, u32 i, u32 hint_kbps);
/* Entry @i's sender leaves the table: no share any more (hint 0). */
void mr_share_table_env_gone(struct mr_share_table *t, u32 i);
/* The sender of entry @from is now entry @to (it filled a removed one). */
void mr_share_table_env_moved(struct mr_share_table *t, u32 from, u32 to);

/* An empty table over @flows, @max entries. */
void mr_share_table_init(struct mr_share_table *t, struct mr_share_flow *flows,
			 u32 max);

/*
 * mr_share_table_join() - a sender's first data packet at @now
 * @capacity_kbps: the capacity the host knows (as for _round())
 *
 * Return: its entry, whose share until the next round is *@hint_kbps (the
 * newcomer's), or -1 when the table is full (no share). Until the next
 * round everyone gets at most the capacity over all (even_kbps): at the
 * start of an incast the first ACKs then cap every sender, not only the
 * next round's.
 */
s32 mr_share_table_join(struct mr_share_table *t, u32 capacity_kbps, u64 now,
			u32 *hint_kbps);

/* Whether a round is due at @now, @interval_ns after the last one. */
static inline bool mr_share_table_due(const struct mr_share_table *t, u64 now,
				      u64 interval_ns)
{
	return t->n && now - t->start_ns >= interval_ns;
}

/*
 * mr_share_table_round() - a new round at @now: count, share, drop the idle
 * @prm: checked congestion control parameters (share_idle, share_learn)
 * @capacity_kbps: the ingress capacity to share, as both ends count bytes;
 *	0: unknown, the most received in a round (decaying by 1/64 a round)
 *	+ 1/8, to find more. A capacity the host gives may be more than the
 *	bottleneck before this end (a link's speed); with share_learn, four
 *	rounds that met congestion (a CE mark, or more than 1/16 of the
 *	packets beyond a hole), in a row of rounds whose packets mostly said
 *	their senders' windows held them well below the hint
 *	(MR_FLAG_WINDOW_LIMITED: not an application's pace, not reordering)
 *	and that received under half of it, lower it to the most one
 *	received, less 1/16 (at least half the peak); a round without CE
 *	marks that received more than 7/8 of it raises it by 1/16, up to
 *	the host's.
 *
 * Takes every entry's bytes (env_bytes), splits the capacity with
 * mr_share_split() over the time since the last round, ends the even
 * share, and gives each entry its share (env_hint) or, idle for
 * share_idle rounds, removes it (env_gone; the last entry fills its place:
 * env_moved).
 */
void mr_share_table_round(struct mr_share_table *t,
			  const struct mr_cc_params *prm, u32 capacity_kbps,
			  u64 now);

/*
 * The hint an ACK carries: the sender's share @hint_kbps (0: none), at most
 * the table's @even_kbps (0: none). Values, so that a host may read them
 * without the table's lock.
 */
static inline u32 mr_share_table_hint(u32 even_kbps, u32 hint_kbps)
{
	return even_kbps && (!hint_kbps || even_kbps < hint_kbps) ? even_kbps :
								    hint_kbps;
}

/* Entry @i's sender leaves (its connection stops receiving). */
void mr_share_table_leave(struct mr_share_table *t, u32 i);

#endif /* METAROCE_PROTO_SHARE_H */
