/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * soft-MetaRoCE user/kernel ABI, shared by metaroce.ko and the rdma-core
 * provider (libmetaroce-rdmav34.so).
 */
#ifndef METAROCE_ABI_H
#define METAROCE_ABI_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>

/*
 * ib_device_ops.driver_id. metaroce is out of tree, so it has no entry in
 * enum rdma_driver_id; this private value sits far above upstream ids
 * (20 in 2023) and fits in 16 bits. libibverbs offers a device to the
 * provider whose match table names the same id, before any name match, and
 * writes it into every ioctl header, where the kernel checks it.
 */
#define METAROCE_DRIVER_ID 0x4d52 /* "MR" */

/* ib_device_ops.uverbs_abi_ver; the provider accepts exactly this range. */
#define METAROCE_UVERBS_ABI_VERSION 1

/* `rdma link add NAME type metaroce netdev DEV` */
#define METAROCE_LINK_TYPE "metaroce"

/* Default UDP destination port of the (provisional) MetaRoCE wire protocol. */
#define METAROCE_DEFAULT_UDP_PORT 4792

/*
 * Vendor id reported by query_device: no IEEE OUI is assigned to us, so the
 * all-ones 24-bit value; 0 reads as "no device" to some tools.
 */
#define METAROCE_VENDOR_ID 0xffffff
#define METAROCE_VENDOR_PART_ID 0x4d52

/*
 * Memory window binds and local invalidations of user QPs. The POST_SEND
 * write command takes neither, so the provider issues this driver method
 * on the QP object (RDMA_VERBS_IOCTL) for each, in post order with the
 * other send WRs. The kernel executes it at once; its completion, if any,
 * follows the completions of the send WRs posted before it.
 */
enum metaroce_qp_methods {
	METAROCE_METHOD_QP_LOCAL_WR = (1U << UVERBS_ID_NS_SHIFT),
};

enum metaroce_attr_local_wr {
	METAROCE_ATTR_LOCAL_WR_QP = (1U << UVERBS_ID_NS_SHIFT),	/* handle */
	METAROCE_ATTR_LOCAL_WR_REQ,	/* struct metaroce_local_wr, in */
};

enum metaroce_local_wr_opcode {
	METAROCE_LOCAL_WR_BIND_MW = 1,
	METAROCE_LOCAL_WR_LOCAL_INV = 2,
};

struct metaroce_local_wr {
	__aligned_u64 wr_id;
	__aligned_u64 addr;	/* bind: the window's first byte */
	__aligned_u64 length;	/* bind: its length; 0 unbinds a type 1 MW */
	__u32 opcode;		/* enum metaroce_local_wr_opcode */
	__u32 send_flags;	/* 0 or IBV_SEND_SIGNALED (IB_SEND_SIGNALED) */
	__u32 rkey;		/* bind: the MW's key; local inv: the key */
	__u32 new_rkey;		/* bind: the key it takes (same index) */
	__u32 mr_lkey;		/* bind: the MR the window lies in */
	__u32 access;		/* bind: IB_UVERBS_ACCESS_REMOTE_* */
};

/*
 * Rings shared through mmap() (the data path without system calls).
 *
 * Each is negotiated per object: the provider asks with a flag in the
 * create command's driver data, the kernel answers with the flag and the
 * mapping in the response. A provider that asks for nothing (older ones)
 * gets the command-based queues; a provider that gets no answer (an older
 * module writes none, the response stays zeroed) uses the commands. The
 * layouts below change only with METAROCE_UVERBS_ABI_VERSION.
 *
 * Indices are free-running u32 counters; a slot is index & (entries - 1),
 * entries a power of two. The producer writes its index with a release
 * store after the slot, the consumer reads it with an acquire load. The
 * kernel keeps its own copy of every index it produces and treats what
 * user space writes as hostile: it is read once and checked.
 */
#define METAROCE_RING_INDEX_ALIGN 64	/* each index on its own cache line */

/* create_cq / resize_cq request and response flags */
enum metaroce_cq_flags {
	METAROCE_CQ_RING = 1 << 0,	/* completions in a mapped ring */
};

struct metaroce_create_cq_cmd {
	__u32 flags;			/* enum metaroce_cq_flags asked for */
	__u32 reserved;			/* 0 */
};

struct metaroce_create_cq_resp {
	__aligned_u64 mmap_offset;	/* mmap() offset on the uverbs fd */
	__u32 mmap_size;		/* bytes to map */
	__u32 flags;			/* enum metaroce_cq_flags granted */
	__u32 entries;			/* slots of the ring, a power of 2 */
	__u32 reserved;
};

/* Values of metaroce_cq_ring.notify, written by the consumer to arm. */
enum metaroce_cq_notify {
	METAROCE_CQ_NOTIFY_NONE = 0,
	METAROCE_CQ_NOTIFY_SOLICITED = 1,
	METAROCE_CQ_NOTIFY_NEXT = 2,
};

/*
 * The mapped CQ. The kernel produces: it writes a completion, then
 * producer. User space consumes: it reads slots below producer, then
 * writes consumer. To arm for an event, user space writes notify and then,
 * after a full barrier, reads producer again (a completion that raced the
 * arming is seen there); the kernel, after writing producer and a full
 * barrier, reads notify and clears it with a compare-and-swap before it
 * signals the completion channel. overflow is set by the kernel when a
 * completion found the ring full (or consumer out of range): the CQ is
 * in error, as after a CQ overrun.
 */
struct metaroce_cq_ring {
	__u32 producer;
	__u32 overflow;
	__u8 pad0[METAROCE_RING_INDEX_ALIGN - 8];
	__u32 consumer;
	__u8 pad1[METAROCE_RING_INDEX_ALIGN - 4];
	__u32 notify;			/* enum metaroce_cq_notify */
	__u8 pad2[METAROCE_RING_INDEX_ALIGN - 4];
	struct ib_uverbs_wc cqe[];	/* fields as POLL_CQ returns them */
};

/* create_qp request and response flags */
enum metaroce_qp_flags {
	METAROCE_QP_RQ_RING = 1 << 0,	/* receives posted in a mapped ring */
	METAROCE_QP_SQ_RING = 1 << 1,	/* sends posted in a mapped ring (RC, UC) */
};

/* Streams an RC QP may carry (mrcdv.h); 0 or 1 asks for one. */
#define METAROCE_MAX_STREAMS 256

struct metaroce_create_qp_cmd {
	__u32 flags;			/* enum metaroce_qp_flags asked for */
	__u32 streams;			/* RC with a send ring; else 0 */
};

struct metaroce_create_qp_resp {
	__aligned_u64 rq_mmap_offset;	/* the receive ring's mmap() offset */
	__u32 rq_mmap_size;
	__u32 flags;			/* enum metaroce_qp_flags granted */
	__u32 rq_entries;		/* slots, a power of 2 */
	__u32 rq_stride;		/* bytes per slot */
	__u32 rq_max_sge;		/* SGEs a slot holds */
	__u32 reserved;
	/* Since the send ring: a response this long, or none is granted. */
	__aligned_u64 sq_mmap_offset;	/* the send ring's mmap() offset */
	__u32 sq_mmap_size;
	__u32 sq_entries;		/* slots, a power of 2 */
	__u32 sq_stride;		/* bytes per slot */
	__u32 sq_max_sge;		/* SGEs a slot holds */
	__u32 sq_max_inline;		/* inline bytes a slot holds */
	__u32 streams;			/* granted: those asked, or 0 */
};

/* create_srq request and response flags */
enum metaroce_srq_flags {
	METAROCE_SRQ_RING = 1 << 0,	/* receives posted in a mapped ring */
};

struct metaroce_create_srq_cmd {
	__u32 flags;			/* enum metaroce_srq_flags asked for */
	__u32 reserved;			/* 0 */
};

/*
 * An SRQ's ring is a receive ring as a QP's. Its entries are fixed: after
 * modify_srq grows max_wr past them, the provider posts by command (the
 * kernel has taken every WQE of the ring by then).
 */
struct metaroce_create_srq_resp {
	__aligned_u64 mmap_offset;
	__u32 mmap_size;
	__u32 flags;			/* enum metaroce_srq_flags granted */
	__u32 entries;
	__u32 stride;
	__u32 max_sge;
	__u32 reserved;
};

/* metaroce_wq_ring.flags, written by the kernel */
enum metaroce_wq_ring_flags {
	/*
	 * The kernel reads the ring only when it needs a WQE; in a flushing
	 * state (ERR) nothing needs one, so after posting, user space rings
	 * the doorbell (a POST_RECV command with no WR), and the kernel
	 * completes the new WQEs as flushed.
	 */
	METAROCE_WQ_NEED_DOORBELL = 1 << 0,
};

/*
 * A send ring's flags use the same bit: the kernel reads a send ring
 * while it has sends in flight, as their acknowledgements come in; when
 * it has none, or the QP is in a flushing state, it sets
 * METAROCE_WQ_NEED_DOORBELL, and user space then rings the doorbell after
 * posting: a POST_SEND command with no WR.
 */

/*
 * A ring of work requests user space posts: it writes a slot, then
 * producer (release); the kernel copies each slot once, checks it, and
 * writes consumer. After producer, and a full barrier, user space reads
 * flags. A slot that is not a valid WQE, or a producer more than the
 * ring's entries ahead of consumer, moves the QP to ERR.
 */
struct metaroce_wq_ring {
	__u32 producer;
	__u8 pad0[METAROCE_RING_INDEX_ALIGN - 4];
	__u32 consumer;
	__u8 pad1[METAROCE_RING_INDEX_ALIGN - 4];
	__u32 flags;			/* enum metaroce_wq_ring_flags */
	__u8 pad2[METAROCE_RING_INDEX_ALIGN - 4];
	__u8 wqe[];			/* entries slots of stride bytes */
};

/* A slot of a receive ring. */
struct metaroce_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;			/* at most rq_max_sge */
	__u32 reserved;
	struct ib_uverbs_sge sge[];
};

/*
 * A slot of a send ring: the fields of an ib_uverbs_send_wr that RC and UC
 * use, then data[]: num_sge ib_uverbs_sge, or with IB_UVERBS_SEND_INLINE
 * inline_len bytes of data. opcode and send_flags take the values of
 * enum ib_uverbs_wr_opcode and enum ib_uverbs_send_flags. Binds and local
 * invalidations are not posted here (METAROCE_METHOD_QP_LOCAL_WR).
 */
struct metaroce_send_wqe {
	__aligned_u64 wr_id;
	__u32 opcode;
	__u32 send_flags;
	__u32 num_sge;			/* at most sq_max_sge; 0 when inline */
	__u32 inline_len;		/* at most sq_max_inline */
	__u32 ex;			/* imm_data (as posted) or invalidate_rkey */
	__u32 rkey;			/* RDMA and atomics */
	__aligned_u64 remote_addr;
	__aligned_u64 compare_add;	/* atomics */
	__aligned_u64 swap;
	__u32 stream;			/* below the QP's streams; else 0 */
	__u32 reserved;			/* 0 */
	__u8 data[];
};

#endif /* METAROCE_ABI_H */
