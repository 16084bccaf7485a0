/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* soft-MetaRoCE: driver-wide types and the interfaces between its files. */
#ifndef METAROCE_H
#define METAROCE_H

#include <linux/atomic.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

#include "../uapi/metaroce-abi.h"
#include "proto/mtu.h"

#define MR_PORT 1		/* the single port, bound to the netdev */
#define MR_GID_TABLE_LEN 128	/* one RoCEv2 GID per IP address on the netdev */
#define MR_MAX_PD 0x10000

struct mr_dev {
	struct ib_device ib_dev;
	/* Held from creation to dealloc_driver, after ib_core lets go of it. */
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	/* Last port state reported through an async event. */
	int port_state;
	atomic_t num_pd;
};

struct mr_ucontext {
	struct ib_ucontext ibuc;
};

struct mr_pd {
	struct ib_pd ibpd;
};

/* Verbs objects that ib_core allocates for us; filled in by the transport. */
struct mr_cq {
	struct ib_cq ibcq;
};

struct mr_qp {
	struct ib_qp ibqp;
};

static inline struct mr_dev *to_mr_dev(struct ib_device *ib_dev)
{
	return container_of(ib_dev, struct mr_dev, ib_dev);
}

/* device.c: the ib_device and its port */
int mr_dev_add(const char *ibdev_name, struct net_device *ndev);
void mr_port_update(struct mr_dev *dev, struct net_device *ndev);
enum ib_port_state mr_port_state(struct net_device *ndev);

/* link.c: `rdma link` and netdev events */
int mr_link_init(void);
void mr_link_exit(void);

/* notsupp.c: mandatory verbs not offered yet */
extern const struct ib_device_ops mr_notsupp_ops;

#endif /* METAROCE_H */
