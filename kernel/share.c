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
 * (kbit/s), which the sender does not exceed.
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

static uint share_interval_us = 4000;
module_param(share_interval_us, uint, 0644);
MODULE_PARM_DESC(share_interval_us, "how often the receiver recomputes its senders' shares, us (default 4000)");

int mr_share_dev_init(struct mr_dev *dev)
{
	struct mr_share *sh = &dev->share;

	spin_lock_init(&sh->lock);
	sh->n = 0;
	sh->start_ns = 0;
	sh->newcomer_kbps = 0;
	sh->peak_kbps = 0;
	sh->ingress_kbps = 0;
	sh->flows = kvcalloc(MR_MAX_QP, sizeof(*sh->flows), GFP_KERNEL);
	sh->owner = kvcalloc(MR_MAX_QP, sizeof(*sh->owner), GFP_KERNEL);
	if (!sh->flows || !sh->owner) {
		mr_share_dev_fini(dev);
		return -ENOMEM;
	}
	return 0;
}

/* Every QP has left: ib_core destroys them before it lets the device go. */
void mr_share_dev_fini(struct mr_dev *dev)
{
	WARN_ON(dev->share.n);
	kvfree(dev->share.flows);
	kvfree(dev->share.owner);
	dev->share.flows = NULL;
	dev->share.owner = NULL;
}

/* The netdev's speed changed (link.c, device.c): 0 when it has none. */
void mr_share_link_speed(struct mr_dev *dev, u32 mbps)
{
	WRITE_ONCE(dev->share.link_kbps, mbps > U32_MAX / 1000 ? U32_MAX :
					 mbps * 1000);
}

/* Remove entry @i, under the lock: the last one takes its place. */
static void mr_share_remove(struct mr_share *sh, u32 i)
{
	WRITE_ONCE(sh->owner[i]->share.slot, -1);
	WRITE_ONCE(sh->owner[i]->share.hint, 0);
	sh->n--;
	if (i != sh->n) {
		sh->flows[i] = sh->flows[sh->n];
		sh->owner[i] = sh->owner[sh->n];
		WRITE_ONCE(sh->owner[i]->share.slot, i);
	}
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

static u32 mr_share_capacity(struct mr_share *sh)
{
	u32 link = mr_share_link_rate(sh);

	if (link)
		return link - link / 16;
	/* Measured: the most received so far, with headroom to find more. */
	return sh->peak_kbps ? sh->peak_kbps + sh->peak_kbps / 8 : 0;
}

/* A new interval: count it, share the capacity, forget the idle. */
static void mr_share_compute(struct mr_share *sh, u64 now)
{
	u64 interval = now - sh->start_ns, total = 0;
	struct mr_cc_params prm;
	u32 i, rate;

	mr_cc_params_default(&prm);
	for (i = 0; i < sh->n; i++) {
		sh->flows[i].bytes = atomic64_xchg(&sh->owner[i]->share.bytes,
						   0);
		total += sh->flows[i].bytes;
	}
	rate = mr_share_rate_kbps(total, interval);
	sh->peak_kbps = max(rate, sh->peak_kbps - sh->peak_kbps / 64);
	sh->newcomer_kbps = mr_share_split(&prm, sh->flows, sh->n,
					   mr_share_capacity(sh), interval,
					   NULL);
	sh->even_kbps = 0;
	for (i = sh->n; i-- > 0;) {
		if (!sh->flows[i].demand_kbps) {
			mr_share_remove(sh, i);
			continue;
		}
		WRITE_ONCE(sh->owner[i]->share.hint, sh->flows[i].hint_kbps);
	}
	sh->start_ns = now;
}

/* A new connection: in no device's table until its first data packet. */
void mr_share_init(struct mr_xport *x)
{
	x->share.slot = -1;
}

/* A new data packet of @bytes for @x (the transport is locked). */
void mr_share_rx(struct mr_xport *x, u32 bytes)
{
	struct mr_share *sh = &to_mr_dev(x->qp->ibqp.device)->share;

	atomic64_add(bytes, &x->share.bytes);
	if (READ_ONCE(x->share.slot) >= 0)
		return;
	spin_lock(&sh->lock);
	if (x->share.slot < 0 && sh->n < MR_MAX_QP) {
		memset(&sh->flows[sh->n], 0, sizeof(sh->flows[sh->n]));
		sh->owner[sh->n] = x;
		WRITE_ONCE(x->share.slot, sh->n);
		WRITE_ONCE(x->share.hint, sh->newcomer_kbps);
		sh->n++;
		/*
		 * Until the next computation everyone it joined gets at most
		 * an even share: at the start of an incast the first ACKs
		 * then cap every sender, not only the next interval's.
		 */
		WRITE_ONCE(sh->even_kbps, max(mr_share_capacity(sh) / sh->n, 1u));
		if (!sh->start_ns)
			sh->start_ns = mr_xport_now();
	}
	spin_unlock(&sh->lock);
}

/* The hint for an ACK of @x now (the transport is locked); 0: none. */
u32 mr_share_hint(struct mr_xport *x)
{
	struct mr_share *sh = &to_mr_dev(x->qp->ibqp.device)->share;
	u64 interval = (u64)READ_ONCE(share_interval_us) * NSEC_PER_USEC;
	u64 now = mr_xport_now();
	u32 hint, even;

	/* Hints go with the QP's congestion control (from its device). */
	if (!x->snd.ccp.enabled)
		return 0;
	/* One ACK computes for all; the others use what it found. */
	if (sh->n && now - READ_ONCE(sh->start_ns) >= interval &&
	    spin_trylock(&sh->lock)) {
		if (sh->n && now - sh->start_ns >= interval)
			mr_share_compute(sh, now);
		spin_unlock(&sh->lock);
	}
	hint = READ_ONCE(x->share.hint);
	even = READ_ONCE(sh->even_kbps);
	return even && (!hint || even < hint) ? even : hint;
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
			mr_share_remove(sh, x->share.slot);
		spin_unlock_bh(&sh->lock);
	}
	atomic64_set(&x->share.bytes, 0);
}
