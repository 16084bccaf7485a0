/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * soft-MetaRoCE user/kernel ABI, shared by metaroce.ko and the rdma-core
 * provider (libmetaroce-rdmav34.so).
 */
#ifndef METAROCE_ABI_H
#define METAROCE_ABI_H

#include <linux/types.h>

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

#endif /* METAROCE_ABI_H */
