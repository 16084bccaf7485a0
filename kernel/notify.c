// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Events for administrators, handed to whoever registered for them
 * (netlink.c); dropped while no one has.
 */
#include <linux/rcupdate.h>

#include "notify.h"

static const struct mr_notify_ops __rcu *mr_notify_handlers;

void mr_notify_register(const struct mr_notify_ops *ops)
{
	rcu_assign_pointer(mr_notify_handlers, ops);
}

/* Returns once no handler runs any more. */
void mr_notify_unregister(void)
{
	RCU_INIT_POINTER(mr_notify_handlers, NULL);
	synchronize_rcu();
}

void mr_notify_path_failover(struct mr_qp *qp,
			     const struct mr_notify_failover *f)
{
	const struct mr_notify_ops *ops;

	rcu_read_lock();
	ops = rcu_dereference(mr_notify_handlers);
	if (ops)
		ops->path_failover(qp, f);
	rcu_read_unlock();
}

void mr_notify_qp_error(struct mr_qp *qp, u8 reason)
{
	const struct mr_notify_ops *ops;

	rcu_read_lock();
	ops = rcu_dereference(mr_notify_handlers);
	if (ops)
		ops->qp_error(qp, reason);
	rcu_read_unlock();
}

/* Plane @id (netdev @netdev) went out of service, or came back (@up). */
void mr_notify_plane(struct mr_dev *dev, u32 id, const char *netdev, bool up,
		     u8 reason)
{
	const struct mr_notify_ops *ops;

	rcu_read_lock();
	ops = rcu_dereference(mr_notify_handlers);
	if (ops)
		ops->plane(dev, id, netdev, up, reason);
	rcu_read_unlock();
}
