// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The receiver's table of its senders (contracts in share.h, rules in
 * protocol.rst and design.rst's "Congestion control"), which the kernel's
 * share.c and the scale model run. It calls the environment its host
 * defines, so it is an object of its own: units that only split shares
 * (share.c's tests and fuzzer) link without one.
 */
#include "cc.h"
#include "share.h"

void mr_share_table_init(struct mr_share_table *t, struct mr_share_flow *flows,
			 u32 max)
{
	*t = (struct mr_share_table){ .flows = flows, .max = max };
}

/* The capacity to share: the host's as learnt, else the measured one. */
static u32 mr_share_table_capacity(const struct mr_share_table *t,
				   u32 capacity_kbps)
{
	if (capacity_kbps)
		return t->learnt_kbps && t->learnt_kbps < capacity_kbps ?
		       t->learnt_kbps : capacity_kbps;
	/* Measured: the most received so far, with headroom to find more. */
	return t->peak_kbps ? t->peak_kbps + t->peak_kbps / 8 : 0;
}

s32 mr_share_table_join(struct mr_share_table *t, u32 capacity_kbps, u64 now,
			u32 *hint_kbps)
{
	u32 i = t->n, even;

	if (i >= t->max)
		return -1;
	t->flows[i] = (struct mr_share_flow){ 0 };
	*hint_kbps = t->newcomer_kbps;
	t->n++;
	even = mr_share_table_capacity(t, capacity_kbps) / t->n;
	t->even_kbps = even ? even : 1;
	if (!t->start_ns)
		t->start_ns = now;
	return (s32)i;
}

/* Remove entry @i: the last one takes its place. */
static void mr_share_table_remove(struct mr_share_table *t, u32 i)
{
	mr_share_table_env_gone(t, i);
	t->n--;
	if (i != t->n) {
		t->flows[i] = t->flows[t->n];
		mr_share_table_env_moved(t, t->n, i);
	}
}

/*
 * Learn the host's @capacity_kbps from a round that received @rate_kbps
 * and met @sig (see share.h): congestion while far below it, with senders
 * that want more, means the bottleneck is before this end, and slower.
 */
static void mr_share_table_learn(struct mr_share_table *t, u32 capacity_kbps,
				 u32 rate_kbps,
				 const struct mr_share_signals *sig)
{
	u32 cap = mr_share_table_capacity(t, capacity_kbps);
	bool congested = sig->marks || sig->gaps * 16 > sig->packets;
	bool held = sig->limited * 2 > sig->packets;

	if (!capacity_kbps)
		return;
	/*
	 * Senders held far below it make a round suspect; congestion makes
	 * it count. A tail-drop queue loses packets in bursts, not in every
	 * round, so a suspect round without congestion only waits.
	 */
	if (!held || !rate_kbps || rate_kbps >= cap / 2) {
		t->over_rounds = 0;
		t->over_kbps = 0;
	} else if (congested) {
		t->over_rounds++;
		if (rate_kbps > t->over_kbps)
			t->over_kbps = rate_kbps;
	}
	/* The most they received: a stall in one of them is no bottleneck. */
	if (t->over_rounds >= MR_SHARE_OVER_ROUNDS) {
		cap = t->over_kbps - t->over_kbps / 16;
		if (cap < t->peak_kbps / 2)
			cap = t->peak_kbps / 2;
		t->over_rounds = 0;
		t->over_kbps = 0;
	} else if (cap < capacity_kbps && !sig->marks &&
		   rate_kbps > cap - cap / 8) {
		/*
		 * Learnt, used and unmarked: it may be below the bottleneck.
		 * Holes do not stop it: a guest's CPUs reorder packets
		 * without any loss at the port.
		 */
		cap += cap / 16 + 1;
	}
	t->learnt_kbps = cap;
}

void mr_share_table_round(struct mr_share_table *t,
			  const struct mr_cc_params *prm, u32 capacity_kbps,
			  u64 now)
{
	u64 interval = now - t->start_ns, total = 0;
	struct mr_share_signals sig = { 0 };
	u32 i, rate, decayed;

	for (i = 0; i < t->n; i++) {
		t->flows[i].bytes = mr_share_table_env_bytes(t, i);
		total += t->flows[i].bytes;
		mr_share_table_env_signals(t, i, &sig);
	}
	rate = mr_share_rate_kbps(total, interval);
	decayed = t->peak_kbps - t->peak_kbps / 64;
	t->peak_kbps = rate > decayed ? rate : decayed;
	if (prm->share_learn)
		mr_share_table_learn(t, capacity_kbps, rate, &sig);
	else
		t->learnt_kbps = 0;
	t->newcomer_kbps = mr_share_split(prm, t->flows, t->n,
					  mr_share_table_capacity(t,
								  capacity_kbps),
					  interval, &t->stats);
	t->even_kbps = 0;
	/* Downwards: an entry that fills a removed one has its share. */
	for (i = t->n; i-- > 0;) {
		if (!t->flows[i].demand_kbps) {
			mr_share_table_remove(t, i);
			continue;
		}
		mr_share_table_env_hint(t, i, t->flows[i].hint_kbps);
	}
	t->start_ns = now;
}

void mr_share_table_leave(struct mr_share_table *t, u32 i)
{
	if (i < t->n)
		mr_share_table_remove(t, i);
}
