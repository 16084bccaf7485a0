// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `rdma link add NAME type metaroce netdev DEV` and `rdma link delete`, and
 * the netdev events that drive the device's life: carrier and MTU changes
 * move the port state, and an unregistering netdev takes its device along.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_arp.h>
#include <linux/mutex.h>
#include <rdma/rdma_netlink.h>

#include "device.h"
#include "link.h"
#include "plane.h"
#include "socket.h"

/* Serialises "is there a device on this netdev?" with creating one. */
static DEFINE_MUTEX(mr_link_mutex);

static struct mr_dev *mr_link_dev_get(struct net_device *ndev)
{
	struct ib_device *ib_dev;

	ib_dev = ib_device_get_by_netdev(ndev,
					 (enum rdma_driver_id)METAROCE_DRIVER_ID);
	return ib_dev ? to_mr_dev(ib_dev) : NULL;
}

static int mr_link_check(const char *ibdev_name, struct net_device *ndev)
{
	struct ib_device *other;
	struct mr_dev *exists;

	if (ndev->type != ARPHRD_ETHER || (ndev->flags & IFF_LOOPBACK)) {
		pr_err("%s: netdev %s is not an Ethernet device (type %u)\n",
		       ibdev_name, ndev->name, ndev->type);
		return -EOPNOTSUPP;
	}
	if (ndev->mtu < mr_mtu_min_netdev()) {
		pr_err("%s: netdev %s has mtu %u, metaroce needs at least %u\n",
		       ibdev_name, ndev->name, ndev->mtu, mr_mtu_min_netdev());
		return -EINVAL;
	}
	exists = mr_link_dev_get(ndev);
	if (exists) {
		pr_err("%s: netdev %s already has metaroce device %s\n",
		       ibdev_name, ndev->name, dev_name(&exists->ib_dev.dev));
		ib_device_put(&exists->ib_dev);
		return -EEXIST;
	}
	other = ib_device_get_by_name(ibdev_name, RDMA_DRIVER_UNKNOWN);
	if (other) {
		pr_err("%s: an RDMA device of that name exists already\n",
		       ibdev_name);
		ib_device_put(other);
		return -EEXIST;
	}
	return 0;
}

static int mr_link_newlink(const char *ibdev_name, struct net_device *ndev)
{
	int err;

	mutex_lock(&mr_link_mutex);
	err = mr_link_check(ibdev_name, ndev);
	if (!err)
		err = mr_device_add(ibdev_name, ndev);
	mutex_unlock(&mr_link_mutex);
	return err;
}

static struct rdma_link_ops mr_link_ops = {
	.type = METAROCE_LINK_TYPE,
	.newlink = mr_link_newlink,
};

static int mr_link_netdev_event(struct notifier_block *nb, unsigned long event,
				void *arg)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(arg);
	struct mr_dev *dev;

	mr_plane_netdev_event(ndev, event);
	dev = mr_link_dev_get(ndev);
	if (!dev)
		return NOTIFY_DONE;

	switch (event) {
	case NETDEV_UNREGISTER:
		ibdev_info(&dev->ib_dev, "netdev %s is going away, removing\n",
			   ndev->name);
		ib_unregister_device_queued(&dev->ib_dev);
		/* Now, so that the namespace can close its socket if it dies. */
		mr_socket_dev_detach(dev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
		mr_device_port_update(dev, ndev);
		break;
	default:
		break;
	}
	ib_device_put(&dev->ib_dev);
	return NOTIFY_DONE;
}

static struct notifier_block mr_link_netdev_notifier = {
	.notifier_call = mr_link_netdev_event,
};

int mr_link_init(void)
{
	int err;

	err = register_netdevice_notifier(&mr_link_netdev_notifier);
	if (err)
		return err;
	rdma_link_register(&mr_link_ops);
	return 0;
}

void mr_link_exit(void)
{
	rdma_link_unregister(&mr_link_ops);
	/* Every device goes, whatever netns or state it is in. */
	ib_unregister_driver((enum rdma_driver_id)METAROCE_DRIVER_ID);
	unregister_netdevice_notifier(&mr_link_netdev_notifier);
}

MODULE_ALIAS_RDMA_LINK(METAROCE_LINK_TYPE);
