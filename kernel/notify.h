/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Events for administrators: the transport and the QP state machine
 * report them here, and netlink.c, which registers its handlers at module
 * init, multicasts them. The indirection keeps the layers acyclic:
 * netlink.c looks QPs up and reads the transport, so those may not call
 * it directly.
 */
#ifndef METAROCE_NOTIFY_H
#define METAROCE_NOTIFY_H

#include "metaroce.h"
#include "../uapi/metaroce-netlink.h"

/* A path failed and restarted in a new epoch on a new source port. */
struct mr_notify_failover {
	u32 path_id;
	u16 old_epoch;
	u16 new_epoch;
	u16 old_sport;
	u16 new_sport;
	u32 moved;		/* packets requeued to the other paths */
};

/* The handlers; each may be called in atomic context. */
struct mr_notify_ops {
	void (*path_failover)(struct mr_qp *qp,
			      const struct mr_notify_failover *f);
	void (*qp_error)(struct mr_qp *qp, u8 reason);
	void (*plane)(struct mr_dev *dev, u32 id, const char *netdev, bool up,
		      u8 reason);
};

void mr_notify_register(const struct mr_notify_ops *ops);
void mr_notify_unregister(void);
void mr_notify_path_failover(struct mr_qp *qp,
			     const struct mr_notify_failover *f);
void mr_notify_qp_error(struct mr_qp *qp, u8 reason);
void mr_notify_plane(struct mr_dev *dev, u32 id, const char *netdev, bool up,
		     u8 reason);

#endif /* METAROCE_NOTIFY_H */
