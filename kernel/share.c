// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The receiver's fair share. A device knows its ingress capacity (an
 * admin's setting over netlink, else the module parameter ingress_mbps,
 * else its netdev's speed, else the most it has received) and which
 * connections send to it: a connection joins the device's table with its
 * first data packet and drops out after
 * share_idle intervals without one. Every interval, at the first ACK
 * after it, proto/share.c's mr_share_split() splits the capacity max-min
 * fairly by demand, and each ACK carries its connection's share as a rate hint
 * (kbit/s), which the sender does not exceed. The table's decisions are
 * proto/share_table.c's, which the scale model runs too; this file gives
 * it the time, the capacity and the interval, and is its environment:
 * the entries' owners, their byte counters and the lock.
 *
 * Lock order: a transport lock, then the device's share lock. Each
 * connection counts its bytes in an atomic, so the hot path takes the
 * share lock only to join.
 */
#include <linux/module.h>
#include <linux/slab.h>

#include "congestion.h"
#include "proto/share.h"
#include "share.h"

static uint ingress_mbps;
module_param(ingress_mbps, uint, 0644);
MODULE_PARM_DESC(ingress_mbps, "ingress capacity of each device for the receiver's rate hints, Mbit/s (0: the netdev's speed, else measured)");

static bool ingress_learn;
module_param(ingress_learn, bool, 0644);
MODULE_PARM_DESC(ingress_learn, "learn an ingress capacity below the netdev's speed from the senders' congestion (default off)");

static uint share_interval_us = 4000;
module_param(share_interval_us, uint, 0644);
MODULE_PARM_DESC(share_interval_us, "how often the receiver recomputes its senders' shares, us (default 4000)");

int mr_share_dev_init(struct mr_dev *dev)
{
	struct mr_share *sh = &dev->share;

	struct mr_share_flow *flows;

	spin_lock_init(&sh->lock);
	sh->ingress_kbps = 0;
	flows = kvcalloc(MR_MAX_QP, sizeof(*flows), GFP_KERNEL);
	mr_share_table_init(&sh->table, flows, MR_MAX_QP);
	sh->owner = kvcalloc(MR_MAX_QP, sizeof(*sh->owner), GFP_KERNEL);
	if (!flows || !sh->owner) {
		mr_share_dev_fini(dev);
		return -ENOMEM;
	}
	return 0;
}

/* Every QP has left: ib_core destroys them before it lets the device go. */
void mr_share_dev_fini(struct mr_dev *dev)
{
	WARN_ON(dev->share.table.n);
	kvfree(dev->share.table.flows);
	kvfree(dev->share.owner);
	dev->share.table.flows = NULL;
	dev->share.owner = NULL;
}

/* The netdev's speed changed (link.c, device.c): 0 when it has none. */
void mr_share_link_speed(struct mr_dev *dev, u32 mbps)
{
	WRITE_ONCE(dev->share.link_kbps, mbps > U32_MAX / 1000 ? U32_MAX :
					 mbps * 1000);
}

/*
 * The table's environment (proto/share.h), called under the lock: entry
 * @i is owner[@i]'s.
 */
static struct mr_xport **mr_share_owner(struct mr_share_table *t)
{
	return container_of(t, struct mr_share, table)->owner;
}

u64 mr_share_table_env_bytes(struct mr_share_table *t, u32 i)
{
	return atomic64_xchg(&mr_share_owner(t)[i]->share.bytes, 0);
}

void mr_share_table_env_signals(struct mr_share_table *t, u32 i,
				struct mr_share_signals *sig)
{
	struct mr_conn_share *cs = &mr_share_owner(t)[i]->share;

	sig->packets += atomic64_xchg(&cs->packets, 0);
	sig->marks += atomic64_xchg(&cs->marks, 0);
	sig->gaps += atomic64_xchg(&cs->gaps, 0);
	sig->limited += atomic64_xchg(&cs->limited, 0);
}

void mr_share_table_env_hint(struct mr_share_table *t, u32 i, u32 hint_kbps)
{
	WRITE_ONCE(mr_share_owner(t)[i]->share.hint, hint_kbps);
}

void mr_share_table_env_gone(struct mr_share_table *t, u32 i)
{
	struct mr_xport *x = mr_share_owner(t)[i];

	WRITE_ONCE(x->share.slot, -1);
	WRITE_ONCE(x->share.hint, 0);
}

void mr_share_table_env_moved(struct mr_share_table *t, u32 from, u32 to)
{
	struct mr_xport **owner = mr_share_owner(t);

	owner[to] = owner[from];
	WRITE_ONCE(owner[to]->share.slot, to);
}

/*
 * The capacity to share, kbit/s, as both ends count bytes: UDP payloads.
 * A link's rate also carries Ethernet, IP and UDP headers, about 1/16 of
 * a packet of 1 KiB.
 */
/* The link rate in use: an admin's, the parameter's or the netdev's. */
static u32 mr_share_link_rate(struct mr_share *sh)
{
	u32 mbps = READ_ONCE(ingress_mbps), kbps = READ_ONCE(sh->ingress_kbps);

	if (kbps)
		return kbps;
	return mbps ? (mbps > U32_MAX / 1000 ? U32_MAX : mbps * 1000) :
		      READ_ONCE(sh->link_kbps);
}

/* The ingress capacity in use, kbit/s; 0: unknown (netlink.c). */
u32 mr_share_active_kbps(struct mr_dev *dev)
{
	return mr_share_link_rate(&dev->share);
}

/* The link's capacity for the table; 0: unknown (the table measures). */
static u32 mr_share_capacity(struct mr_share *sh)
{
	u32 link = mr_share_link_rate(sh);

	return link - link / 16;
}

/* A new interval: count it, share the capacity, forget the idle. */
static void mr_share_compute(struct mr_share *sh, u64 now)
{
	struct mr_cc_params prm;

	mr_cc_params_default(&prm);
	prm.share_learn = READ_ONCE(ingress_learn);
	mr_share_table_round(&sh->table, &prm, mr_share_capacity(sh), now);
}

/* A new connection: in no device's table until its handshake or data. */
void mr_share_init(struct mr_xport *x)
{
	x->share.slot = -1;
}

/* @x joins its device's table, if not in it (the transport is locked). */
static void mr_share_join(struct mr_xport *x)
{
	struct mr_share *sh = &to_mr_dev(x->qp->ibqp.device)->share;
	u32 hint;
	s32 slot;

	if (READ_ONCE(x->share.slot) >= 0)
		return;
	spin_lock(&sh->lock);
	if (x->share.slot < 0) {
		/* Until the next round, at most an even share (share.h). */
		slot = mr_share_table_join(&sh->table, mr_share_capacity(sh),
					   mr_xport_now(), &hint);
		if (slot >= 0) {
			sh->owner[slot] = x;
			WRITE_ONCE(x->share.slot, slot);
			WRITE_ONCE(x->share.hint, hint);
		}
	}
	spin_unlock(&sh->lock);
}

/*
 * A new data packet of @bytes for @x (the transport is locked); @limited:
 * it said MR_FLAG_WINDOW_LIMITED.
 */
void mr_share_rx(struct mr_xport *x, u32 bytes, bool limited)
{
	atomic64_add(bytes, &x->share.bytes);
	/* The signals cost atomics per packet: only for a table that learns. */
	if (READ_ONCE(ingress_learn)) {
		atomic64_inc(&x->share.packets);
		if (limited)
			atomic64_inc(&x->share.limited);
	}
	mr_share_join(x);
}

/*
 * The hint a HELLO of @x carries (the transport is locked): the peer's
 * first, before its first data packet. Sending it counts the peer among
 * the senders, so that the k-th of an incast's handshakes grants at most
 * the capacity over k; one that sends no data drops out idle.
 */
u32 mr_share_hello(struct mr_xport *x)
{
	if (x->snd.ccp.enabled)
		mr_share_join(x);
	return mr_share_hint(x);
}

/* The hint for an ACK of @x now (the transport is locked); 0: none. */
u32 mr_share_hint(struct mr_xport *x)
{
	struct mr_share *sh = &to_mr_dev(x->qp->ibqp.device)->share;
	u64 interval = (u64)READ_ONCE(share_interval_us) * NSEC_PER_USEC;
	u64 now = mr_xport_now();

	/* Hints go with the QP's congestion control (from its device). */
	if (!x->snd.ccp.enabled)
		return 0;
	/*
	 * One ACK computes for all; the others use what it found. The test
	 * without the lock only spares the others the trylock; the table's
	 * under it decides.
	 */
	if (READ_ONCE(sh->table.n) &&
	    now - READ_ONCE(sh->table.start_ns) >= interval &&
	    spin_trylock(&sh->lock)) {
		if (mr_share_table_due(&sh->table, now, interval))
			mr_share_compute(sh, now);
		spin_unlock(&sh->lock);
	}
	return mr_share_table_hint(READ_ONCE(sh->table.even_kbps),
				   READ_ONCE(x->share.hint));
}

/*
 * @x stops receiving (RESET, destroy): it leaves the table. Its receive
 * side is stopped, so nothing makes it join meanwhile, and one that is
 * not in the table needs no lock (the KUnit fixtures' QPs, on a device
 * without a table, rely on that).
 */
void mr_share_leave(struct mr_xport *x)
{
	struct mr_share *sh = &to_mr_dev(x->qp->ibqp.device)->share;

	if (READ_ONCE(x->share.slot) >= 0) {
		spin_lock_bh(&sh->lock);
		if (x->share.slot >= 0)
			mr_share_table_leave(&sh->table, x->share.slot);
		spin_unlock_bh(&sh->lock);
	}
	atomic64_set(&x->share.bytes, 0);
	atomic64_set(&x->share.packets, 0);
	atomic64_set(&x->share.marks, 0);
	atomic64_set(&x->share.gaps, 0);
	atomic64_set(&x->share.limited, 0);
}

/*
 * What a packet of @x met on its way, as the receiver engine reports it:
 * a CE mark, or a hole on its path before it. The share rounds learn from
 * them whether the device's capacity is the bottleneck's.
 */
void mr_share_signal(struct mr_xport *x, enum mr_receiver_event ev)
{
	if (!READ_ONCE(ingress_learn))
		return;
	if (ev == MR_REV_CE)
		atomic64_inc(&x->share.marks);
	else if (ev == MR_REV_OUT_OF_ORDER)
		atomic64_inc(&x->share.gaps);
}
