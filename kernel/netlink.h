/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The generic netlink family "metaroce" (uapi/metaroce-netlink.h), for
 * the `metaroce` admin tool.
 */
#ifndef METAROCE_NETLINK_H_KERNEL
#define METAROCE_NETLINK_H_KERNEL

int mr_netlink_init(void);
void mr_netlink_exit(void);

#endif /* METAROCE_NETLINK_H_KERNEL */
