/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The bottom of the driver: MetaRoCE over UDP. One kernel socket pair per
 * UDP port in use in a network namespace, and the transmit of every packet.
 */
#ifndef METAROCE_SOCKET_H
#define METAROCE_SOCKET_H

#include <linux/skbuff.h>
#include <net/sock.h>

#include "metaroce.h"
#include "proto/wire.h"

/* What a namespace's sockets hand every datagram to (receive.c). */
typedef int (*mr_socket_rcv_fn)(struct sock *sk, struct sk_buff *skb);

int mr_socket_init(mr_socket_rcv_fn rcv);
void mr_socket_exit(void);
int mr_socket_dev_attach(struct mr_dev *dev);
void mr_socket_dev_detach(struct mr_dev *dev);
u64 mr_socket_rx_no_dev(struct mr_dev *dev);
struct mr_dev *mr_socket_dev_next(struct net *net, u32 index);
void mr_socket_count_no_dev(struct sock *sk);
bool mr_socket_dev_owns(struct mr_dev *dev, struct sock *sk);
u16 mr_socket_dev_port(struct mr_dev *dev);
int mr_socket_dev_set_port(struct mr_dev *dev, u16 n);
struct sk_buff *mr_socket_new_pkt(struct mr_dev *dev, const struct mr_pkt *pkt,
				  gfp_t gfp);
/*
 * A route kept for one flow, a path of a connection, and what it was
 * looked up for: its user serializes its use (the transport lock) and
 * frees it with mr_socket_route_put().
 */
struct mr_route {
	struct dst_entry *dst;
	u32 cookie;		/* IPv6: the fib serial dst_check() wants */
	int oif;
	__be16 sport;
	struct in6_addr saddr;
	struct in6_addr daddr;
};

int mr_socket_xmit(struct mr_dev *dev, struct sk_buff *skb,
		   const struct mr_flow *flow, struct mr_route *route);
void mr_socket_route_put(struct mr_route *route);

#endif /* METAROCE_SOCKET_H */
