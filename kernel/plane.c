// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Planes: the netdevs of a multi-plane device. The set of planes changes
 * under RTNL (netlink.c adds and deletes, the netdev notifier removes) and
 * is replaced whole under RCU, so that the data path reads it without a
 * lock; a plane's service state changes under the device's planes_lock,
 * on carrier changes, on timeouts and on the packets that prove a plane
 * tried again carries traffic. The data path reads the planes in service
 * from a mask kept with that state.
 */
#include <linux/ethtool.h>
#include <linux/if_arp.h>
#include <linux/rtnetlink.h>
#include <net/ip6_route.h>
#include <net/ip_fib.h>

#include "notify.h"
#include "plane.h"
#include "share.h"
#include "socket.h"
#include "xport.h"

static_assert(MR_PLANES_MAX == METAROCE_PLANES_MAX);
static_assert((int)MR_PLANE_UP == (int)METAROCE_PLANE_STATE_UP &&
	      (int)MR_PLANE_NO_CARRIER == (int)METAROCE_PLANE_STATE_NO_CARRIER &&
	      (int)MR_PLANE_TIMED_OUT == (int)METAROCE_PLANE_STATE_TIMED_OUT);

static bool mr_plane_carrier_on(const struct net_device *ndev)
{
	return netif_running(ndev) && netif_carrier_ok(ndev);
}

/*
 * The planes in service, those tried again, and the earliest time a plane
 * out of service is tried again; under planes_lock. A plane that leaves
 * service, or fails again while tried, moves the generation on, for the
 * QPs' paths to see.
 */
static void mr_plane_update_mask(struct mr_dev *dev,
				 const struct mr_plane_set *set, u64 now)
{
	struct mr_plane_masks m;
	u32 i;

	mr_plane_masks_init(&m);
	for (i = 0; set && i < set->count; i++)
		mr_plane_masks_add(&m, &set->plane[i]->st, i, now);
	if (mr_plane_masks_lost(&dev->planes_mask, &m))
		WRITE_ONCE(dev->planes_gen, dev->planes_gen + 1);
	WRITE_ONCE(dev->planes_mask.usable, m.usable);
	WRITE_ONCE(dev->planes_mask.probing, m.probing);
	WRITE_ONCE(dev->planes_mask.retry, m.retry);
}

/* Under RCU: the masks of planes in service and tried again, now. */
static u32 mr_plane_usable_mask(struct mr_dev *dev,
				const struct mr_plane_set *set, u64 now,
				u32 *probing)
{
	unsigned long flags;

	if (now >= READ_ONCE(dev->planes_mask.retry)) {
		spin_lock_irqsave(&dev->planes_lock, flags);
		mr_plane_update_mask(dev, set, now);
		spin_unlock_irqrestore(&dev->planes_lock, flags);
	}
	*probing = READ_ONCE(dev->planes_mask.probing);
	return READ_ONCE(dev->planes_mask.usable);
}

static void mr_plane_changed(struct mr_dev *dev, struct mr_dev_plane *pl,
			     u32 id, enum mr_plane_change change, u8 reason)
{
	if (change == MR_PLANE_SAME)
		return;
	if (change == MR_PLANE_WENT_DOWN)
		atomic64_inc(&pl->downs);
	mr_notify_plane(dev, id, pl->ndev->name, change == MR_PLANE_CAME_UP,
			reason);
}

static u32 mr_plane_netdev_mbps(struct net_device *ndev)
{
	struct ethtool_link_ksettings ks;

	if (__ethtool_get_link_ksettings(ndev, &ks) ||
	    ks.base.speed == SPEED_UNKNOWN)
		return 0;
	return ks.base.speed;
}

/**
 * mr_plane_link_mbps() - the speed of the device's ingress, Mbit/s
 * @dev: the device
 *
 * Under RTNL. A device with planes receives on all of them: the sum of
 * the speeds of those with carrier (0 if one has no known speed); one
 * without, on its netdev.
 *
 * Return: the speed, 0 when unknown.
 */
u32 mr_plane_link_mbps(struct mr_dev *dev)
{
	const struct mr_plane_set *set = rtnl_dereference(dev->planes);
	u64 sum = 0;
	u32 i, mbps;

	ASSERT_RTNL();
	if (!set || !set->count)
		return mr_plane_netdev_mbps(dev->ndev);
	for (i = 0; i < set->count; i++) {
		if (!mr_plane_carrier_on(set->plane[i]->ndev))
			continue;
		mbps = mr_plane_netdev_mbps(set->plane[i]->ndev);
		if (!mbps)
			return 0;
		sum += mbps;
	}
	return min_t(u64, sum, U32_MAX);
}

void mr_plane_dev_init(struct mr_dev *dev)
{
	spin_lock_init(&dev->planes_lock);
	RCU_INIT_POINTER(dev->planes, NULL);
	mr_plane_masks_init(&dev->planes_mask);
	dev->planes_gen = 0;
}

static void mr_plane_free(struct mr_dev_plane *pl)
{
	netdev_put(pl->ndev, &pl->tracker);
	kfree(pl);
}

/*
 * Publish @set, without the plane @gone if one is going (freed here once
 * no reader sees it). Under RTNL.
 */
static void mr_plane_publish(struct mr_dev *dev, struct mr_plane_set *set,
			     struct mr_dev_plane *gone)
{
	struct mr_plane_set *old = rtnl_dereference(dev->planes);
	unsigned long flags;

	rcu_assign_pointer(dev->planes, set);
	spin_lock_irqsave(&dev->planes_lock, flags);
	mr_plane_update_mask(dev, set, mr_xport_now());
	/* Ids may have moved: the QPs look at their paths' planes again. */
	WRITE_ONCE(dev->planes_gen, dev->planes_gen + 1);
	spin_unlock_irqrestore(&dev->planes_lock, flags);
	mr_share_link_speed(dev, mr_plane_link_mbps(dev));
	if (gone) {
		synchronize_net();
		kfree(old);
		mr_plane_free(gone);
	} else if (old) {
		kfree_rcu(old, rcu);
	}
}

static int mr_plane_find(const struct mr_plane_set *set,
			 const struct net_device *ndev)
{
	u32 i;

	for (i = 0; set && i < set->count; i++)
		if (set->plane[i]->ndev == ndev)
			return i;
	return -1;
}

/* A copy of the set without plane @drop (-1: with all). */
static struct mr_plane_set *mr_plane_copy(const struct mr_plane_set *set,
					  int drop)
{
	struct mr_plane_set *copy;
	u32 i;

	copy = kzalloc(sizeof(*copy), GFP_KERNEL);
	if (!copy)
		return NULL;
	for (i = 0; set && i < set->count; i++)
		if (i != drop)
			copy->plane[copy->count++] = set->plane[i];
	return copy;
}

/* Take plane @id out of the set, whatever it carries. Under RTNL. */
static int mr_plane_remove(struct mr_dev *dev, int id)
{
	struct mr_plane_set *set = rtnl_dereference(dev->planes);
	struct mr_dev_plane *pl = set->plane[id];
	struct mr_plane_set *copy;

	copy = mr_plane_copy(set, id);
	if (!copy)
		return -ENOMEM;
	if (pl->st.state != MR_PLANE_NO_CARRIER)
		mr_notify_plane(dev, id, pl->ndev->name, false,
				METAROCE_PLANE_REASON_REMOVED);
	mr_plane_publish(dev, copy, pl);
	return 0;
}

/**
 * mr_plane_add() - make @ndev a plane of @dev
 * @dev: the device
 * @ndev: an Ethernet netdev of @dev's namespace
 * @extack: why not
 *
 * Under RTNL. The device's own netdev may be one of its planes; a netdev
 * that carries another metaroce device may not, as its packets are that
 * device's.
 *
 * Return: 0, or -EINVAL, -EEXIST, -ENOSPC, -EBUSY or -ENOMEM.
 */
int mr_plane_add(struct mr_dev *dev, struct net_device *ndev,
		 struct netlink_ext_ack *extack)
{
	struct mr_plane_set *set = rtnl_dereference(dev->planes);
	struct ib_device *other;
	struct mr_plane_set *copy;
	struct mr_dev_plane *pl;

	ASSERT_RTNL();
	if (!net_eq(dev_net(ndev), dev_net(dev->ndev))) {
		NL_SET_ERR_MSG(extack, "the netdev is in another namespace than the device's");
		return -EINVAL;
	}
	if (ndev->type != ARPHRD_ETHER || (ndev->flags & IFF_LOOPBACK)) {
		NL_SET_ERR_MSG(extack, "a plane's netdev must be an Ethernet device");
		return -EINVAL;
	}
	if (mr_plane_find(set, ndev) >= 0) {
		NL_SET_ERR_MSG(extack, "the netdev is a plane of the device already");
		return -EEXIST;
	}
	if (set && set->count >= MR_PLANES_MAX) {
		NL_SET_ERR_MSG(extack, "the device has the most planes it can have (8)");
		return -ENOSPC;
	}
	if (ndev->mtu < dev->ndev->mtu) {
		NL_SET_ERR_MSG(extack, "the netdev's MTU is below the device's netdev's");
		return -EINVAL;
	}
	other = ib_device_get_by_netdev(ndev, (enum rdma_driver_id)METAROCE_DRIVER_ID);
	if (other) {
		ib_device_put(other);
		if (other != &dev->ib_dev) {
			NL_SET_ERR_MSG(extack, "the netdev carries another metaroce device");
			return -EBUSY;
		}
	}

	pl = kzalloc(sizeof(*pl), GFP_KERNEL);
	copy = mr_plane_copy(set, -1);
	if (!pl || !copy) {
		kfree(pl);
		kfree(copy);
		return -ENOMEM;
	}
	pl->ndev = ndev;
	netdev_hold(ndev, &pl->tracker, GFP_KERNEL);
	pl->ifindex = ndev->ifindex;
	mr_plane_init(&pl->st, mr_plane_carrier_on(ndev), mr_xport_now());
	copy->plane[copy->count++] = pl;
	mr_plane_publish(dev, copy, NULL);
	return 0;
}

/**
 * mr_plane_del() - @ndev is no longer a plane of @dev
 * @dev: the device
 * @ndev: one of its planes
 * @connected: whether the device has connections
 * @extack: why not
 *
 * Under RTNL. A plane in service carries connections' paths: while the
 * device has connections, take the plane out of service first (its netdev
 * down); they move to the other planes at once.
 *
 * Return: 0, or -ENOENT, -EBUSY or -ENOMEM.
 */
int mr_plane_del(struct mr_dev *dev, struct net_device *ndev, bool connected,
		 struct netlink_ext_ack *extack)
{
	struct mr_plane_set *set = rtnl_dereference(dev->planes);
	int id = mr_plane_find(set, ndev);

	ASSERT_RTNL();
	if (id < 0) {
		NL_SET_ERR_MSG(extack, "the netdev is not a plane of the device");
		return -ENOENT;
	}
	if (set->plane[id]->st.state == MR_PLANE_UP && connected) {
		NL_SET_ERR_MSG(extack,
			       "the plane carries the device's QPs: set its netdev down first");
		return -EBUSY;
	}
	return mr_plane_remove(dev, id);
}

/* The device goes: every plane lets its netdev go. */
void mr_plane_dev_fini(struct mr_dev *dev)
{
	struct mr_plane_set *set;
	u32 i;

	rtnl_lock();
	set = rtnl_dereference(dev->planes);
	RCU_INIT_POINTER(dev->planes, NULL);
	rtnl_unlock();
	if (!set)
		return;
	synchronize_net();
	for (i = 0; i < set->count; i++)
		mr_plane_free(set->plane[i]);
	kfree(set);
}

/*
 * A netdev event (link.c's notifier, under RTNL): a plane's netdev that
 * goes away, or leaves the namespace, takes the plane with it; carrier
 * and up/down take a plane out of service and back.
 */
void mr_plane_netdev_event(struct net_device *ndev, unsigned long event)
{
	struct mr_plane_set *set;
	struct mr_dev_plane *pl;
	enum mr_plane_change change;
	unsigned long flags;
	struct mr_dev *dev;
	u32 index = 0;
	int id;

	if (event != NETDEV_UNREGISTER && event != NETDEV_UP &&
	    event != NETDEV_DOWN && event != NETDEV_CHANGE)
		return;
	while ((dev = mr_socket_dev_next(dev_net(ndev), index))) {
		index = dev->ib_dev.index + 1;
		set = rtnl_dereference(dev->planes);
		id = mr_plane_find(set, ndev);
		if (id < 0) {
			ib_device_put(&dev->ib_dev);
			continue;
		}
		if (event == NETDEV_UNREGISTER) {
			if (mr_plane_remove(dev, id))
				ibdev_warn(&dev->ib_dev, "plane %s: no memory to remove it\n",
					   ndev->name);
			ib_device_put(&dev->ib_dev);
			continue;
		}
		pl = set->plane[id];
		spin_lock_irqsave(&dev->planes_lock, flags);
		change = mr_plane_carrier(&pl->st, mr_plane_carrier_on(ndev),
					  mr_xport_now());
		mr_plane_update_mask(dev, set, mr_xport_now());
		spin_unlock_irqrestore(&dev->planes_lock, flags);
		mr_share_link_speed(dev, mr_plane_link_mbps(dev));
		mr_plane_changed(dev, pl, id, change,
				 METAROCE_PLANE_REASON_CARRIER);
		ib_device_put(&dev->ib_dev);
	}
}

/* Plane @id of @dev, for `metaroce plane show`. Return: 0 or -ENOENT. */
int mr_plane_info(struct mr_dev *dev, u32 id, struct mr_plane_info *info)
{
	const struct mr_plane_set *set;
	const struct mr_dev_plane *pl;
	u64 now = mr_xport_now();
	u32 usable, probing;

	rcu_read_lock();
	set = rcu_dereference(dev->planes);
	if (!set || id >= set->count) {
		rcu_read_unlock();
		return -ENOENT;
	}
	pl = set->plane[id];
	usable = mr_plane_usable_mask(dev, set, now, &probing);
	info->id = id;
	info->ifindex = pl->ifindex;
	strscpy(info->name, pl->ndev->name, sizeof(info->name));
	info->state = READ_ONCE(pl->st.state);
	info->retry_ns = 0;
	if (info->state == MR_PLANE_TIMED_OUT)
		info->retry_ns = READ_ONCE(pl->st.retry_at) > now ?
				 READ_ONCE(pl->st.retry_at) - now : 0;
	info->paths = mr_plane_paths(id, READ_ONCE(dev->settings.paths),
				     set->count, usable, probing);
	info->tx_packets = atomic64_read(&pl->tx_packets);
	info->tx_bytes = atomic64_read(&pl->tx_bytes);
	info->rx_packets = atomic64_read(&pl->rx_packets);
	info->rx_bytes = atomic64_read(&pl->rx_bytes);
	info->ce_marks = atomic64_read(&pl->ce_marks);
	info->downs = atomic64_read(&pl->downs);
	rcu_read_unlock();
	return 0;
}

/**
 * mr_plane_route() - the netdev a packet of path @path leaves through
 * @dev: the sending device
 * @arrived: the plane the packet answers arrived on (an ACK goes back
 *	     that way while it serves), or -1
 * @path: the path (or any number that spreads packets without one)
 * @reach: the planes with a route to the peer (mr_plane_reach())
 * @plane: set to the plane, or -1 when the device has none
 *
 * Return: the plane's ifindex, or 0 for the device's own netdev.
 */
int mr_plane_route(struct mr_dev *dev, int arrived, u32 path, u32 reach,
		   int *plane)
{
	const struct mr_plane_set *set;
	u32 usable, probing, id;
	int ifindex = 0;

	*plane = -1;
	rcu_read_lock();
	set = rcu_dereference(dev->planes);
	if (set && set->count) {
		usable = mr_plane_usable_mask(dev, set, mr_xport_now(),
					      &probing);
		/* With no plane to the peer, any is as good. */
		if (usable & reach) {
			usable &= reach;
			probing &= reach;
		}
		if (arrived >= 0 && arrived < set->count &&
		    (usable & BIT(arrived)))
			id = arrived;
		else
			id = mr_plane_pick(path, set->count, usable, probing);
		ifindex = set->plane[id]->ifindex;
		*plane = id;
	}
	rcu_read_unlock();
	return ifindex;
}

/* A packet of @len bytes left on @plane (mr_plane_route()'s). */
void mr_plane_sent(struct mr_dev *dev, int plane, unsigned int len)
{
	const struct mr_plane_set *set;

	if (plane < 0)
		return;
	rcu_read_lock();
	set = rcu_dereference(dev->planes);
	if (set && plane < set->count) {
		atomic64_inc(&set->plane[plane]->tx_packets);
		atomic64_add(len, &set->plane[plane]->tx_bytes);
	}
	rcu_read_unlock();
}

/**
 * mr_plane_arrived() - a packet of @dev's arrived on the netdev @ifindex
 * @dev: the device
 * @ifindex: its ingress netdev
 * @len: its UDP payload's length
 * @ce: whether it was CE-marked
 *
 * A plane tried again after its paths timed out is back in service when
 * a packet arrives on it.
 *
 * Return: the plane, or -1 if @ifindex is none of @dev's planes.
 */
int mr_plane_arrived(struct mr_dev *dev, int ifindex, unsigned int len,
		     bool ce)
{
	enum mr_plane_change change = MR_PLANE_SAME;
	const struct mr_plane_set *set;
	struct mr_dev_plane *pl;
	unsigned long flags;
	int id = -1;
	u32 i;

	rcu_read_lock();
	set = rcu_dereference(dev->planes);
	for (i = 0; set && i < set->count; i++)
		if (set->plane[i]->ifindex == ifindex)
			id = i;
	if (id < 0) {
		rcu_read_unlock();
		return -1;
	}
	pl = set->plane[id];
	atomic64_inc(&pl->rx_packets);
	atomic64_add(len, &pl->rx_bytes);
	if (ce)
		atomic64_inc(&pl->ce_marks);
	if (READ_ONCE(pl->st.state) == MR_PLANE_TIMED_OUT) {
		spin_lock_irqsave(&dev->planes_lock, flags);
		change = mr_plane_rx(&pl->st, mr_xport_now());
		mr_plane_update_mask(dev, set, mr_xport_now());
		spin_unlock_irqrestore(&dev->planes_lock, flags);
	}
	mr_plane_changed(dev, pl, id, change, METAROCE_PLANE_REASON_ANSWERED);
	rcu_read_unlock();
	return id;
}

/*
 * Path @id of a connection (paths @ps, each last sent on plane @sent_on[i],
 * over the planes @reach) timed out: when every path of the connection on
 * its plane has, the plane is out of service for a while.
 */
void mr_plane_path_timeout(struct mr_dev *dev, const struct mr_paths *ps,
			   const u8 *sent_on, u32 id, u32 reach)
{
	enum mr_plane_change change = MR_PLANE_SAME;
	const struct mr_plane_set *set;
	u64 now = mr_xport_now();
	u32 usable, probing, plane;
	struct mr_dev_plane *pl;
	unsigned long flags;

	rcu_read_lock();
	set = rcu_dereference(dev->planes);
	if (!set || set->count < 2) {
		rcu_read_unlock();
		return;
	}
	usable = mr_plane_usable_mask(dev, set, now, &probing);
	if (usable & reach) {
		usable &= reach;
		probing &= reach;
	}
	plane = mr_plane_pick(id, set->count, usable, probing);
	if (mr_plane_paths_timed_out(ps, sent_on, id, set->count, usable,
				     probing)) {
		pl = set->plane[plane];
		spin_lock_irqsave(&dev->planes_lock, flags);
		change = mr_plane_timed_out(&pl->st, now);
		mr_plane_update_mask(dev, set, now);
		spin_unlock_irqrestore(&dev->planes_lock, flags);
		mr_plane_changed(dev, pl, plane, change,
				 METAROCE_PLANE_REASON_TIMEOUT);
	}
	rcu_read_unlock();
}

/* Moves on each time a plane leaves service, or planes come or go. */
u32 mr_plane_gen(struct mr_dev *dev)
{
	return READ_ONCE(dev->planes_gen);
}

/* The planes in service (a path may also probe one that is not). */
u32 mr_plane_serving(struct mr_dev *dev)
{
	return READ_ONCE(dev->planes_mask.usable);
}

static bool mr_plane_reaches6(struct net *net, int ifindex,
			      const struct mr_flow *flow)
{
	struct flowi6 fl6 = {
		.flowi6_oif = ifindex,
		.flowi6_proto = IPPROTO_UDP,
		.daddr = flow->daddr,
		.saddr = flow->saddr,
	};
	struct dst_entry *dst;
	bool ok;

	dst = ip6_route_output(net, NULL, &fl6);
	ok = !dst->error;
	dst_release(dst);
	return ok;
}

/* Whether the peer of @flow has a route through the netdev @ifindex. */
static bool mr_plane_reaches(struct net *net, int ifindex,
			     const struct mr_flow *flow)
{
	struct flowi4 fl4 = {
		.flowi4_oif = ifindex,
		.flowi4_proto = IPPROTO_UDP,
		.daddr = flow->daddr.s6_addr32[3],
		.saddr = flow->saddr.s6_addr32[3],
	};
	struct fib_result res;
	bool ok;

	if (!ipv6_addr_v4mapped(&flow->daddr))
		return mr_plane_reaches6(net, ifindex, flow);
	rcu_read_lock();
	ok = !fib_lookup(net, &fl4, &res, 0);
	rcu_read_unlock();
	return ok;
}

/**
 * mr_plane_reach() - the planes through which @flow's peer has a route
 * @dev: the device
 * @flow: a connection's addresses
 *
 * A peer may be reachable over fewer planes than a host has: its paths
 * then spread over those that reach it. Looked up when the connection
 * starts and whenever the planes change (mr_plane_gen()).
 *
 * Return: a mask of plane ids; every bit when the device has no planes.
 */
u32 mr_plane_reach(struct mr_dev *dev, const struct mr_flow *flow)
{
	const struct mr_plane_set *set;
	u32 reach = 0, i;

	rcu_read_lock();
	set = rcu_dereference(dev->planes);
	if (!set || !set->count)
		reach = U32_MAX;
	for (i = 0; set && i < set->count; i++)
		if (mr_plane_reaches(dev_net(dev->ndev), set->plane[i]->ifindex,
				     flow))
			reach |= BIT(i);
	rcu_read_unlock();
	return reach;
}
