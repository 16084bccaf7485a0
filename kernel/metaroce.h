/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* soft-MetaRoCE: driver-wide types and the interfaces between its files. */
#ifndef METAROCE_H
#define METAROCE_H

#include <linux/atomic.h>
#include <linux/idr.h>
#include <linux/in6.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "../uapi/metaroce-abi.h"
#include "proto/cc.h"
#include "proto/mtu.h"
#include "proto/plane.h"
#include "proto/share.h"

#define MR_PORT 1		/* the single port, bound to the netdev */
#define MR_GID_TABLE_LEN 128	/* one RoCEv2 GID per IP address on the netdev */
#define MR_MAX_PD 0x10000
#define MR_MAX_MR 0x10000	/* MR key index is 24 bits; see mr.c */
#define MR_MAX_MR_SIZE BIT_ULL(32)
#define MR_MAX_CQ 0x4000
#define MR_MAX_CQE 0x7fff	/* bounds the kernel memory of one CQ ring */
#define MR_MAX_QP 0x4000
#define MR_MAX_QP_WR 0x4000	/* per queue; bounds the kernel memory of a ring */
#define MR_MAX_SGE 32
#define MR_MAX_SRQ 0x4000
#define MR_MAX_SRQ_WR 0x4000	/* bounds the kernel memory of one SRQ */
/* Receives a QP may have bound from its SRQ: the message window (srq.c). */
#define MR_SRQ_BOUND_WR 128
/* ... but at most this many, and half the SRQ (srq.c). */
#define MR_SRQ_HOLD_MAX 16
#define MR_MAX_INLINE 256
#define MR_MAX_MSG_SIZE BIT(31)	/* 2^31 bytes, as the IB spec allows */
#define MR_MAX_FAST_REG_PAGES 512	/* pages of one fast-registration MR */
#define MR_MAX_AH 0x10000
#define MR_MAX_RD_ATOMIC 16	/* outstanding RDMA READ/atomic per QP */
/*
 * Slice-map bytes all of a device's responders may hold (resp.c): 16 QPs
 * at their whole budget (1 MiB at MTU 1024, proto/bounds.h). A conforming
 * peer holds about 128 bytes per MiB of message in progress.
 */
#define MR_DEV_MAP_BYTES (16u << 20)
#define MR_QPN_MIN 16		/* QPNs below are reserved (QP0, QP1, ...) */
#define MR_QPN_GSI 1		/* the GSI QP, ib_mad's: one per device */
#define MR_QPN_MAX 0xffffff	/* 24 bits on the wire */

struct mr_mw_key;
struct mr_net;
struct mr_port;
struct mr_stats;
struct mr_xport;
struct mr_restrack_qp;
struct mr_plane_set;

/*
 * The device's ingress, shared among the connections sending to it
 * (share.c): the active ones sit in a table, each with its share.
 */
struct mr_share {
	spinlock_t lock;	/* the table; taken under a transport lock */
	struct mr_share_table table;	/* proto/share_table.c's, MR_MAX_QP */
	struct mr_xport **owner;	/* whose entry it is */
	u32 link_kbps;		/* the netdev's speed, 0: unknown */
	u32 ingress_kbps;	/* set by an admin (netlink.c); 0: not set */
};

/*
 * What a device's new QPs take, from the module parameters when the
 * device is created; DEV_SET (netlink.c) changes them.
 */
struct mr_dev_settings {
	u32 paths;		/* per connection, 1..MR_PATH_MAX */
	u32 fail_after;		/* RTOs in a row that fail a path */
	struct mr_cc_params cc;
	u32 cc_stamp;		/* cc.enabled's date: mr_congestion_cc_stamp() */
};

struct mr_dev {
	struct ib_device ib_dev;
	/* Held from creation to dealloc_driver, after ib_core lets go of it. */
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	/* Last port state reported through an async event. */
	int port_state;
	atomic_t num_pd;
	/* socket.c: our namespace and the UDP port whose sockets we use */
	struct mr_net __rcu *mrn;
	struct mr_port __rcu *port;
	struct list_head net_node;	/* in mrn's list of devices */
	struct mr_stats __percpu *stats;
	/*
	 * crypt.c: keys, when the device encrypts (set at creation, for its
	 * life; NULL: it does not), and what its trailer takes off the MTU.
	 */
	struct mr_crypt *crypt;
	u32 mtu_extra;
	/* mr.c: MRs (and MWs, mw.c) by key index; lookups and copies refused. */
	struct xarray mr_xa;
	struct mutex mw_lock;	/* binds against dereg_mr and dealloc_mw */
	u32 mr_next;
	atomic_t mr_variant;
	atomic_long_t mr_refused;
	/* resp.c: slice-map bytes its responders hold, of MR_DEV_MAP_BYTES */
	atomic_t rsp_map_bytes;
	/* req.c: packets in flight, all the device's QPs' (tx_inflight_cap) */
	atomic_t tx_inflight;
	/* cq.c */
	atomic_t num_cq;
	/* srq.c */
	atomic_t num_srq;
	/* ah.c */
	atomic_t num_ah;
	/* share.c */
	struct mr_share share;
	/* netlink.c writes them, xport.c copies them for a new QP */
	struct mutex settings_lock;
	struct mr_dev_settings settings;
	/* qp.c: QPs by QPN, for the receive path */
	struct xarray qp_xa;
	u32 qp_next;
	atomic_t num_qp;
	/*
	 * plane.c: the netdevs it sprays over (none: its own), and, under
	 * the lock, which serve, which are tried again and when
	 */
	struct mr_plane_set __rcu *planes;
	spinlock_t planes_lock;	/* the planes' service; BH and timers */
	struct mr_plane_masks planes_mask;
	u32 planes_gen;		/* moves on when a plane leaves service */
	/* restrack.c: QPs bound to counters, and the counters' ids */
	struct mutex restrack_lock;
	struct list_head restrack_bound;
	struct ida restrack_ids;
};

struct mr_ucontext {
	struct ib_ucontext ibuc;
};

struct mr_pd {
	struct ib_pd ibpd;
};

/* A completion queue: a ring of work completions (cq.c). */
struct mr_mmap;

/*
 * A CQ keeps its completions in one of two rings: struct ib_wc in kernel
 * memory, polled through commands (kernel CQs, older providers), or a ring
 * mapped by user space (uapi's struct metaroce_cq_ring), polled there.
 */
struct mr_cq {
	struct ib_cq ibcq;
	spinlock_t lock;	/* the ring and notify; taken from softirq */
	struct ib_wc *ring;	/* unmapped */
	struct mr_mmap *map;	/* mapped: the shared ring's memory */
	struct metaroce_cq_ring *uring;	/* mapped: map->buf */
	u32 producer;		/* mapped: ours; uring's copy is for reading */
	u32 size;		/* capacity: ibcq.cqe */
	u32 head;		/* unmapped: oldest completion */
	u32 count;		/* unmapped */
	u8 notify;		/* unmapped: 0, IB_CQ_SOLICITED or NEXT_COMP */
	bool overflow;		/* overrun: completions were lost */
};

/*
 * Where a packet goes. Addresses are in GID form: IPv4 ones v4-mapped
 * (::ffff:a.b.c.d), and both ends must be of the same family.
 */
struct mr_flow {
	struct in6_addr saddr;
	struct in6_addr daddr;
	__be16 sport;		/* the path's port; the device's is the other */
	int oif;		/* the plane's netdev; 0: the device's */
};

/* A scatter/gather element as posted: not resolved until it is used. */
struct mr_sge {
	u64 addr;
	u32 length;
	u32 lkey;
};

/*
 * A send work request, copied whole at post time so that the caller's
 * ib_send_wr (and, for inline data, its buffers) may go at once.
 */
struct mr_send_wqe {
	u64 wr_id;
	enum ib_wr_opcode opcode;
	u32 send_flags;		/* IB_SEND_* */
	u32 num_sge;		/* 0 with IB_SEND_INLINE: data[] holds it */
	u32 length;		/* total bytes: the SGEs' or the inline data's */
	union {
		__be32 imm_data;
		u32 invalidate_rkey;
	} ex;
	u32 rkey;		/* RDMA and atomics */
	u64 remote_addr;
	u64 compare_add;	/* atomics */
	u64 swap;
	u16 stream;		/* RC with streams; else 0 */
	struct {		/* UD: a copy of the AH, which may go first */
		struct mr_flow flow;
		u32 remote_qpn;
		u32 remote_qkey;
	} ud;
	union {
		DECLARE_FLEX_ARRAY(struct mr_sge, sge);
		DECLARE_FLEX_ARRAY(u8, inline_data);
	};
};

struct mr_recv_wqe {
	u64 wr_id;
	u32 num_sge;
	u32 length;
	bool done;		/* completed ahead of the head (streams) */
	struct mr_sge sge[];
};

/*
 * A ring of WQEs of @stride bytes. Its lock is taken from softirq (kernel
 * consumers post from there, and the transport will). @flushing: someone
 * is completing the ring's WQEs with flush errors; others leave theirs to
 * it, which keeps completions in post order.
 */
struct mr_wq {
	spinlock_t lock;	/* the ring, head, count, flushing */
	void *buf;
	u32 stride;
	u32 depth;		/* capacity in WQEs: the max_*_wr reported */
	u32 max_sge;
	u32 head;		/* oldest WQE */
	u32 count;
	bool flushing;
	/*
	 * A user RQ or SQ posts into a ring it maps (uapi's metaroce_wq_ring);
	 * its WQEs are copied into buf when the transport needs one. @ucons
	 * is ours; @ubad: the ring was hostile, nothing more is read from it;
	 * @udoorbell: what the ring's flags say. An SQ ring's WQEs are copied
	 * once into @ucopy (sq.c) before they are checked.
	 */
	struct mr_mmap *map;
	struct metaroce_wq_ring *uring;
	u32 uentries;
	u32 ustride;
	u32 ucons;
	bool ubad;
	bool udoorbell;
	void *ucopy;
};

/* A shared receive queue (srq.c). */
struct mr_srq {
	struct ib_srq ibsrq;
	struct mr_wq rq;	/* struct mr_recv_wqe; rq.lock covers limit */
	u32 limit;		/* armed limit, 0: disarmed */
	u32 ring_error;		/* enum mr_srq_ring_error */
};

/* A hostile mapped SRQ ring: found under rq.lock, reported once after. */
enum mr_srq_ring_error {
	MR_SRQ_RING_OK,
	MR_SRQ_RING_ERROR,
	MR_SRQ_RING_REPORTED,
};

/* A local WR's completion, waiting for the send WQEs posted before it. */
struct mr_local_wc {
	u64 wr_id;
	enum ib_wc_opcode opcode;
	enum ib_wc_status status;	/* of its execution */
	u32 after;		/* send WQEs posted before it */
};

/* Local WRs of an RC QP (local.c); under sq.lock. */
struct mr_local {
	struct mr_local_wc *ring;	/* sq.depth entries; NULL: not RC */
	u32 head;
	u32 count;
	u32 posted;		/* send WQEs queued since creation */
	u32 done;		/* ... and completed or flushed since */
	bool draining;
};

/* An address handle (ah.c): where the datagrams of a UD send WR go. */
struct mr_ah {
	struct ib_ah ibah;
	struct mr_flow flow;	/* sport 0: the sending QP chooses */
};

/*
 * A queue pair (qp.c): reliable or unreliable connected, with the
 * transport's state in @xp, or unreliable datagram (ud.c), without.
 */
struct mr_qp {
	struct ib_qp ibqp;
	refcount_t ref;		/* creation's, plus one per mr_qp_get() */
	struct completion released;
	/* Serialises modify_qp, query_qp and destroy_qp. */
	struct mutex state_lock;
	/* Written under state_lock and both queue locks; read under either. */
	enum ib_qp_state state;
	struct mr_wq sq;	/* struct mr_send_wqe */
	struct mr_wq rq;	/* struct mr_recv_wqe; with an SRQ, bound ones */
	struct mr_cq *scq;
	struct mr_cq *rcq;
	u32 max_inline;
	u32 nstreams;		/* RC: streams its sends may name; 0: one */
	enum ib_sig_type sq_sig_type;
	/* Attributes from modify_qp, as query_qp returns them. */
	struct ib_qp_attr attr;	/* ah_attr without its sgid_attr */
	/* From the AV: the addresses of the peer (sport: the transport's). */
	struct mr_flow flow;
	struct mr_xport *xp;	/* RC, UC: the transport (xport.h) */
	/* RC, UC: moves the QP to ERR after a fatal error (qp.c) */
	struct work_struct err_work;
	struct mr_local local;	/* RC: REG_MR and LOCAL_INV (local.c) */
	/* UD: sends that a caller with IRQs off posted; datagram numbers */
	struct work_struct ud_work;
	u32 ud_psn;
	/* restrack.c: while bound to a counter (ibqp.counter) */
	struct mr_restrack_qp *counted;
};

/* UD and GSI QPs: datagrams, sent and received by ud.c. */
static inline bool mr_qp_is_ud_type(enum ib_qp_type type)
{
	return type == IB_QPT_UD || type == IB_QPT_GSI;
}

static inline bool mr_qp_is_ud(const struct mr_qp *qp)
{
	return mr_qp_is_ud_type(qp->ibqp.qp_type);
}

static inline struct mr_ah *to_mr_ah(struct ib_ah *ibah)
{
	return container_of(ibah, struct mr_ah, ibah);
}

static inline struct mr_dev *to_mr_dev(struct ib_device *ib_dev)
{
	return container_of(ib_dev, struct mr_dev, ib_dev);
}

/* The RDMA MTU the port has now, for the netdev's MTU and our trailer. */
static inline enum mr_mtu mr_dev_active_mtu(const struct mr_dev *dev)
{
	return mr_mtu_fit(READ_ONCE(dev->ndev->mtu), dev->mtu_extra);
}

static inline struct mr_qp *to_mr_qp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct mr_qp, ibqp);
}

static inline struct mr_cq *to_mr_cq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct mr_cq, ibcq);
}

/* A memory window (mw.c); its xarray entry carries the tag MR_XA_MW. */
#define MR_XA_MW 1
struct mr_mw {
	struct ib_mw ibmw;
	struct mr_mw_key *key;
	u32 index;
};

#endif /* METAROCE_H */
