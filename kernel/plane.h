/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The planes of a device: netdevs, each an independent network, that its
 * connections spray over (proto/plane.c decides; this file keeps them).
 * A device without planes sends through its own netdev.
 */
#ifndef METAROCE_PLANE_H
#define METAROCE_PLANE_H

#include <linux/netlink.h>

#include "metaroce.h"
#include "proto/path.h"
#include "proto/plane.h"

/* One plane: its netdev, held while it is one, and its counters. */
struct mr_dev_plane {
	struct net_device *ndev;
	netdevice_tracker tracker;
	int ifindex;
	struct mr_plane st;	/* under the device's planes.lock */
	atomic64_t tx_packets;
	atomic64_t tx_bytes;
	atomic64_t rx_packets;
	atomic64_t rx_bytes;
	atomic64_t ce_marks;	/* CE-marked packets that arrived on it */
	atomic64_t downs;	/* times it went out of service */
};

/* The planes as the data path reads them: replaced whole, under RCU. */
struct mr_plane_set {
	struct rcu_head rcu;
	u32 count;
	struct mr_dev_plane *plane[MR_PLANES_MAX];
};

/* What `metaroce plane show` shows of one plane. */
struct mr_plane_info {
	u32 id;
	int ifindex;
	char name[IFNAMSIZ];
	u8 state;		/* enum mr_plane_state */
	u32 paths;		/* of a new connection's paths, on it now */
	u64 retry_ns;		/* timed out: in service again in this long */
	u64 tx_packets, tx_bytes, rx_packets, rx_bytes, ce_marks, downs;
};

/* Whether @dev has planes: the data path's shortcut for those without. */
static inline bool mr_plane_any(struct mr_dev *dev)
{
	return rcu_access_pointer(dev->planes);
}

void mr_plane_dev_init(struct mr_dev *dev);
void mr_plane_dev_fini(struct mr_dev *dev);
int mr_plane_add(struct mr_dev *dev, struct net_device *ndev,
		 struct netlink_ext_ack *extack);
int mr_plane_del(struct mr_dev *dev, struct net_device *ndev, bool connected,
		 struct netlink_ext_ack *extack);
void mr_plane_netdev_event(struct net_device *ndev, unsigned long event);
int mr_plane_info(struct mr_dev *dev, u32 id, struct mr_plane_info *info);
u32 mr_plane_link_mbps(struct mr_dev *dev);

u32 mr_plane_reach(struct mr_dev *dev, const struct mr_flow *flow);
int mr_plane_route(struct mr_dev *dev, int arrived, u32 path, u32 reach,
		   int *plane);
void mr_plane_sent(struct mr_dev *dev, int plane, unsigned int len);
int mr_plane_arrived(struct mr_dev *dev, int ifindex, unsigned int len,
		     bool ce);
u32 mr_plane_gen(struct mr_dev *dev);
u32 mr_plane_serving(struct mr_dev *dev);
void mr_plane_path_timeout(struct mr_dev *dev, const struct mr_paths *ps,
			   const u8 *sent_on, u32 id, u32 reach);

#endif /* METAROCE_PLANE_H */
