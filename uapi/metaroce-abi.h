/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * soft-MetaRoCE user/kernel ABI, shared by metaroce.ko and the rdma-core
 * provider (libmetaroce-rdmav34.so).
 */
#ifndef METAROCE_ABI_H
#define METAROCE_ABI_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_cmds.h>

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

#endif /* METAROCE_ABI_H */
