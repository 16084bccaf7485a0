/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Path MTU arithmetic: which RDMA MTU fits in a netdev MTU. */
#ifndef METAROCE_PROTO_MTU_H
#define METAROCE_PROTO_MTU_H

#include "types.h"

/* RDMA MTU codes, numbered as the InfiniBand spec (and enum ib_mtu) does. */
enum mr_mtu {
	MR_MTU_NONE = 0, /* the netdev cannot carry even the smallest MTU */
	MR_MTU_256 = 1,
	MR_MTU_512 = 2,
	MR_MTU_1024 = 3,
	MR_MTU_2048 = 4,
	MR_MTU_4096 = 5,
};

#define MR_MTU_MAX MR_MTU_4096

/*
 * Bytes in front of the RDMA payload inside the netdev MTU: the IPv6 header
 * (the larger family, so one answer serves both), UDP, and the room the
 * MetaRoCE headers and integrity trailer may take.
 */
#define MR_IPV6_HDR_LEN 40u
#define MR_UDP_HDR_LEN 8u
#define MR_TRANSPORT_HDR_RESERVE 72u
#define MR_WIRE_OVERHEAD \
	(MR_IPV6_HDR_LEN + MR_UDP_HDR_LEN + MR_TRANSPORT_HDR_RESERVE)

unsigned int mr_mtu_bytes(enum mr_mtu mtu);
enum mr_mtu mr_mtu_fit(unsigned int netdev_mtu, unsigned int extra);
enum mr_mtu mr_mtu_from_netdev_mtu(unsigned int netdev_mtu);
unsigned int mr_mtu_min_netdev(void);

#endif /* METAROCE_PROTO_MTU_H */
