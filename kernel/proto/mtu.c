// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "mtu.h"

/* Payload bytes of an RDMA MTU code; 0 for anything that is not one. */
unsigned int mr_mtu_bytes(enum mr_mtu mtu)
{
	if (mtu < MR_MTU_256 || mtu > MR_MTU_MAX)
		return 0;
	return 128u << mtu;
}
EXPORT_SYMBOL_IF_KUNIT(mr_mtu_bytes);

/*
 * The largest RDMA MTU whose packets, with all headers and @extra bytes
 * more (an encrypting device's trailer beyond the reserve), fit the
 * netdev MTU.
 */
enum mr_mtu mr_mtu_fit(unsigned int netdev_mtu, unsigned int extra)
{
	unsigned int overhead = MR_WIRE_OVERHEAD + extra;
	enum mr_mtu mtu;

	if (netdev_mtu < overhead)
		return MR_MTU_NONE;
	for (mtu = MR_MTU_MAX; mtu >= MR_MTU_256; mtu--)
		if (mr_mtu_bytes(mtu) <= netdev_mtu - overhead)
			return mtu;
	return MR_MTU_NONE;
}
EXPORT_SYMBOL_IF_KUNIT(mr_mtu_fit);

/* The largest RDMA MTU whose packets, with all headers, fit the netdev MTU. */
enum mr_mtu mr_mtu_from_netdev_mtu(unsigned int netdev_mtu)
{
	return mr_mtu_fit(netdev_mtu, 0);
}
EXPORT_SYMBOL_IF_KUNIT(mr_mtu_from_netdev_mtu);

/* The smallest netdev MTU that a metaroce port can use. */
unsigned int mr_mtu_min_netdev(void)
{
	return mr_mtu_bytes(MR_MTU_256) + MR_WIRE_OVERHEAD;
}
EXPORT_SYMBOL_IF_KUNIT(mr_mtu_min_netdev);
