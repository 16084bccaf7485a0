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
#define MR_MAX_MR 0x10000	/* MR key index is 24 bits; see mr.c */
#define MR_MAX_MR_SIZE BIT_ULL(32)
#define MR_MAX_CQ 0x4000
#define MR_MAX_CQE 0x7fff	/* bounds the kernel memory of one CQ ring */

struct mr_net;
struct mr_stats;

struct mr_dev {
	struct ib_device ib_dev;
	/* Held from creation to dealloc_driver, after ib_core lets go of it. */
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	/* Last port state reported through an async event. */
	int port_state;
	atomic_t num_pd;
	/* net.c: the namespace whose UDP sockets we use; counters. */
	struct mr_net __rcu *mrn;
	struct list_head net_node;	/* in mrn's list of devices */
	struct mr_stats __percpu *stats;
	/* mr.c: MRs by key index; lookups and copies refused. */
	struct xarray mr_xa;
	u32 mr_next;
	atomic_t mr_variant;
	atomic_long_t mr_refused;
	/* cq.c */
	atomic_t num_cq;
};

struct mr_ucontext {
	struct ib_ucontext ibuc;
};

struct mr_pd {
	struct ib_pd ibpd;
};

/* A completion queue: a ring of work completions (cq.c). */
struct mr_cq {
	struct ib_cq ibcq;
	spinlock_t lock;	/* the ring and notify; taken from softirq */
	struct ib_wc *ring;
	u32 size;		/* capacity: ibcq.cqe */
	u32 head;		/* oldest completion */
	u32 count;
	u8 notify;		/* 0, IB_CQ_SOLICITED or IB_CQ_NEXT_COMP */
	bool overflow;		/* overrun: completions were lost */
};

/* A queue pair; filled in by the transport. */
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

/* mr.c: memory regions */
struct mr_mr;
void mr_mr_dev_init(struct mr_dev *dev);
void mr_mr_dev_fini(struct mr_dev *dev);
struct ib_mr *mr_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *mr_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			     u64 iova, int access, struct ib_udata *udata);
int mr_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct mr_mr *mr_mr_get(struct mr_dev *dev, struct ib_pd *pd, u32 key,
			bool remote);
void mr_mr_put(struct mr_mr *mr);
int mr_mr_copy_to(struct mr_mr *mr, u64 iova, const void *src, u64 len,
		  u32 need);
int mr_mr_copy_from(struct mr_mr *mr, u64 iova, void *dst, u64 len, u32 need);

/* cq.c: completion queues */
int mr_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		 struct ib_udata *udata);
int mr_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int mr_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int mr_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int mr_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int mr_cq_post(struct mr_cq *cq, const struct ib_wc *wc, bool solicited);

/* notsupp.c: mandatory verbs not offered yet */
extern const struct ib_device_ops mr_notsupp_ops;

#endif /* METAROCE_H */
