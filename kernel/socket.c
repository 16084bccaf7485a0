// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * MetaRoCE over UDP. Each device has a UDP port (the module's udp_port
 * unless set over netlink); each port in use in a network namespace has one
 * kernel UDP socket per address family, opened by the first device on it and
 * closed by the last. Routes are looked up in the netdev's namespace.
 *
 * This is the bottom layer but for crypt.c, which encrypts what it sends:
 * it calls nothing of ours above it. What the sockets receive goes to the
 * one function given to mr_socket_init(), receive.c's entry point, as
 * their UDP tunnel encap_rcv hook.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <kunit/visibility.h>
#include <linux/inetdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <net/addrconf.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/ipv6_stubs.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/route.h>
#include <net/udp.h>
#include <net/udp_tunnel.h>

#include "counters.h"
#include "crypt.h"
#include "socket.h"
#include "trace.h"

static ushort udp_port = METAROCE_DEFAULT_UDP_PORT;
module_param(udp_port, ushort, 0444);
MODULE_PARM_DESC(udp_port, "UDP port of new devices, listened on and sent to (default 4792)");

/* What a namespace holds, in its net_generic slot. */
struct mr_net {
	struct list_head ports;		/* open ports, under mr_socket_mutex */
	struct list_head devs;		/* attached devices, under mr_socket_mutex */
	atomic64_t rx_no_dev;		/* datagrams no device of ours listens to */
};

/* A UDP port open in a namespace: the sockets of the devices using it. */
struct mr_port {
	struct socket __rcu *sock4;
	struct socket __rcu *sock6;	/* NULL when IPv6 is disabled */
	struct mr_net *mrn;
	struct list_head node;		/* in mrn->ports */
	unsigned int users;		/* devices, under mr_socket_mutex */
	u16 port;
	struct rcu_head rcu;
};

static unsigned int mr_socket_net_id __read_mostly;

/* Serialises opening and closing the sockets, and device (de)attachment. */
static DEFINE_MUTEX(mr_socket_mutex);

/* Where the sockets' datagrams go: set once, before any socket opens. */
static mr_socket_rcv_fn mr_socket_rcv __read_mostly;

/* The device's UDP port, in host order; 0 once it is detached. */
u16 mr_socket_dev_port(struct mr_dev *dev)
{
	struct mr_port *port;
	u16 n = 0;

	rcu_read_lock();
	port = rcu_dereference(dev->port);
	if (port)
		n = port->port;
	rcu_read_unlock();
	return n;
}

/* Whether @sk, which received a datagram for @dev's netdev, is @dev's. */
bool mr_socket_dev_owns(struct mr_dev *dev, struct sock *sk)
{
	return rcu_access_pointer(dev->port) == rcu_dereference_sk_user_data(sk);
}

/* A datagram no device listens to, in @sk's namespace (softirq). */
void mr_socket_count_no_dev(struct sock *sk)
{
	struct mr_port *port = rcu_dereference_sk_user_data(sk);

	if (port)
		atomic64_inc(&port->mrn->rx_no_dev);
}

static struct socket *mr_socket_open_one(struct net *net, struct mr_port *port,
					 bool ipv6)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.sk_user_data = port,
		.encap_type = 1,
		.encap_rcv = mr_socket_rcv,
	};
	struct udp_port_cfg cfg = {
		.local_udp_port = htons(port->port),
	};
	struct socket *sock;
	int err;

	if (ipv6) {
		cfg.family = AF_INET6;
		cfg.local_ip6 = in6addr_any;
		/* IPv4 has its own socket, as with the kernel's tunnels. */
		cfg.ipv6_v6only = 1;
	} else {
		cfg.family = AF_INET;
		cfg.local_ip.s_addr = htonl(INADDR_ANY);
	}
	err = udp_sock_create(net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);
	setup_udp_tunnel_sock(net, sock, &tcfg);
	return sock;
}

static void mr_socket_close_one(struct socket __rcu **slot)
{
	struct socket *sock;

	sock = rcu_dereference_protected(*slot,
					 lockdep_is_held(&mr_socket_mutex));
	if (!sock)
		return;
	RCU_INIT_POINTER(*slot, NULL);
	/* Waits for the readers of the socket (rx and tx) to finish. */
	udp_tunnel_sock_release(sock);
}

/* Closes a port's sockets; its readers are gone when this returns. */
static void mr_socket_close(struct mr_port *port)
{
	mr_socket_close_one(&port->sock4);
	mr_socket_close_one(&port->sock6);
}

static int mr_socket_open(struct net *net, struct mr_port *port)
{
	struct socket *sock;

	sock = mr_socket_open_one(net, port, false);
	if (IS_ERR(sock))
		return PTR_ERR(sock);
	rcu_assign_pointer(port->sock4, sock);

	sock = mr_socket_open_one(net, port, true);
	/* Booted with ipv6.disable=1: IPv4 only. */
	if (PTR_ERR_OR_ZERO(sock) == -EAFNOSUPPORT)
		return 0;
	if (IS_ERR(sock)) {
		mr_socket_close(port);
		return PTR_ERR(sock);
	}
	rcu_assign_pointer(port->sock6, sock);
	return 0;
}

/* A new user of port @n in @net, opening it if needed; under the mutex. */
static struct mr_port *mr_socket_port_get(struct net *net, struct mr_net *mrn,
					  u16 n)
{
	struct mr_port *port;
	int err;

	list_for_each_entry(port, &mrn->ports, node) {
		if (port->port == n) {
			port->users++;
			return port;
		}
	}
	port = kzalloc(sizeof(*port), GFP_KERNEL);
	if (!port)
		return ERR_PTR(-ENOMEM);
	port->mrn = mrn;
	port->port = n;
	port->users = 1;
	err = mr_socket_open(net, port);
	if (err) {
		kfree(port);
		return ERR_PTR(err);
	}
	list_add(&port->node, &mrn->ports);
	return port;
}

/* Drops a user of @port, closing it after the last; under the mutex. */
static void mr_socket_port_put(struct mr_port *port)
{
	if (--port->users)
		return;
	list_del(&port->node);
	mr_socket_close(port);
	/* The devices' senders may still hold it under RCU. */
	kfree_rcu(port, rcu);
}

/*
 * Attaches a new device to its netdev's namespace, on the module's port,
 * opening its sockets if it is the first device there. Called before
 * registration.
 */
int mr_socket_dev_attach(struct mr_dev *dev)
{
	struct net *net = dev_net(dev->ndev);
	struct mr_net *mrn = net_generic(net, mr_socket_net_id);
	struct mr_port *port;

	mutex_lock(&mr_socket_mutex);
	port = mr_socket_port_get(net, mrn, udp_port);
	if (IS_ERR(port)) {
		mutex_unlock(&mr_socket_mutex);
		pr_err("netdev %s: cannot open UDP port %u (%ld)\n",
		       dev->ndev->name, udp_port, PTR_ERR(port));
		return PTR_ERR(port);
	}
	list_add(&dev->net_node, &mrn->devs);
	rcu_assign_pointer(dev->port, port);
	rcu_assign_pointer(dev->mrn, mrn);
	mutex_unlock(&mr_socket_mutex);
	return 0;
}

/**
 * mr_socket_dev_set_port() - move a device to another UDP port
 * @dev: the device, attached
 * @n: the port, 1-65535
 *
 * The caller makes sure no connection depends on the old port. Datagrams
 * to the old port are no longer the device's from here on.
 *
 * Return: 0, -ENODEV if the device is detached, or the errno of opening
 * the port (-EADDRINUSE when something else holds it).
 */
int mr_socket_dev_set_port(struct mr_dev *dev, u16 n)
{
	struct mr_port *old, *port;
	struct mr_net *mrn;
	int err = 0;

	mutex_lock(&mr_socket_mutex);
	mrn = rcu_dereference_protected(dev->mrn,
					lockdep_is_held(&mr_socket_mutex));
	old = rcu_dereference_protected(dev->port,
					lockdep_is_held(&mr_socket_mutex));
	if (!mrn || !old) {
		err = -ENODEV;
	} else if (old->port != n) {
		port = mr_socket_port_get(dev_net(dev->ndev), mrn, n);
		if (IS_ERR(port)) {
			err = PTR_ERR(port);
		} else {
			rcu_assign_pointer(dev->port, port);
			mr_socket_port_put(old);
		}
	}
	mutex_unlock(&mr_socket_mutex);
	return err;
}

/*
 * Detaches a device from its namespace. Runs when its netdev unregisters or
 * leaves the namespace (so the namespace's teardown finds no user left), and
 * again from dealloc_driver for devices deleted with `rdma link delete`.
 */
void mr_socket_dev_detach(struct mr_dev *dev)
{
	struct mr_port *port;
	struct mr_net *mrn;

	mutex_lock(&mr_socket_mutex);
	mrn = rcu_dereference_protected(dev->mrn,
					lockdep_is_held(&mr_socket_mutex));
	port = rcu_dereference_protected(dev->port,
					 lockdep_is_held(&mr_socket_mutex));
	if (mrn) {
		RCU_INIT_POINTER(dev->mrn, NULL);
		list_del(&dev->net_node);
	}
	if (port) {
		RCU_INIT_POINTER(dev->port, NULL);
		mr_socket_port_put(port);
	}
	mutex_unlock(&mr_socket_mutex);
}

/*
 * The registered device of @net with the lowest index at or above @index,
 * with a reference (ib_device_put()); NULL if there is none. The mutex
 * keeps the list, the reference the device once it is dropped.
 */
struct mr_dev *mr_socket_dev_next(struct net *net, u32 index)
{
	struct mr_net *mrn = net_generic(net, mr_socket_net_id);
	struct mr_dev *dev, *best = NULL;

	mutex_lock(&mr_socket_mutex);
	list_for_each_entry(dev, &mrn->devs, net_node) {
		if (dev->ib_dev.index < index ||
		    (best && dev->ib_dev.index >= best->ib_dev.index))
			continue;
		if (!ib_device_try_get(&dev->ib_dev))
			continue;
		if (best)
			ib_device_put(&best->ib_dev);
		best = dev;
	}
	mutex_unlock(&mr_socket_mutex);
	return best;
}

/* Datagrams to our port on netdevs without a device, in dev's namespace. */
u64 mr_socket_rx_no_dev(struct mr_dev *dev)
{
	struct mr_net *mrn;
	u64 n = 0;

	/* The mutex keeps the namespace, whose teardown detaches us first. */
	mutex_lock(&mr_socket_mutex);
	mrn = rcu_dereference_protected(dev->mrn,
					lockdep_is_held(&mr_socket_mutex));
	if (mrn)
		n = atomic64_read(&mrn->rx_no_dev);
	mutex_unlock(&mr_socket_mutex);
	return n;
}

/**
 * mr_socket_new_pkt() - an skb holding a packet's encoded headers
 * @dev: the sending device
 * @pkt: the headers, and in @pkt->payload_len the payload that follows
 * @gfp: allocation flags
 *
 * The skb has headroom for the link layer, IPv6 (the larger IP header) and
 * UDP, and room for the payload right after the headers, which the caller
 * fills (at skb->data + mr_wire_hdr_len()), and, when the device encrypts,
 * tailroom for the trailer. A packet that cannot be built is lost like one
 * on the wire, and counted.
 *
 * Return: the skb, or NULL.
 */
struct sk_buff *mr_socket_new_pkt(struct mr_dev *dev, const struct mr_pkt *pkt,
				  gfp_t gfp)
{
	unsigned int hr = LL_RESERVED_SPACE(dev->ndev) +
			  sizeof(struct ipv6hdr) + sizeof(struct udphdr);
	unsigned int hlen = mr_wire_hdr_len(pkt->base.opcode);
	/* An encrypting device appends its trailer in mr_socket_xmit(). */
	unsigned int tr = dev->crypt ? MR_AEAD_TRAILER_LEN : 0;
	struct sk_buff *skb;

	skb = alloc_skb(hr + hlen + pkt->payload_len + tr, gfp);
	if (!skb) {
		mr_stats_inc(dev, MR_CNT_TX_DROP_ERROR);
		return NULL;
	}
	skb_reserve(skb, hr);
	if (mr_wire_encode(pkt, skb_put(skb, hlen + pkt->payload_len),
			   hlen) < 0) {
		/* We never build a packet the codec refuses. */
		WARN_ON_ONCE(1);
		mr_stats_inc(dev, MR_CNT_TX_DROP_ERROR);
		kfree_skb(skb);
		return NULL;
	}
	return skb;
}

/* Drop the route @route keeps, if any. */
void mr_socket_route_put(struct mr_route *route)
{
	dst_release(route->dst);
	route->dst = NULL;
}

/*
 * The route @route keeps for @flow out of @oif, with a reference for the
 * packet, if it still holds: the same flow, and not obsoleted since (a
 * route, address or device change). NULL otherwise, and it is dropped.
 */
static struct dst_entry *mr_socket_route_get(struct mr_route *route,
					     const struct mr_flow *flow, int oif)
{
	struct dst_entry *dst;

	if (!route || !route->dst)
		return NULL;
	if (route->oif == oif && route->sport == flow->sport &&
	    ipv6_addr_equal(&route->daddr, &flow->daddr) &&
	    ipv6_addr_equal(&route->saddr, &flow->saddr)) {
		dst = dst_check(route->dst, route->cookie);
		if (dst) {
			dst_hold(dst);
			return dst;
		}
	}
	mr_socket_route_put(route);
	return NULL;
}

/* Keep @dst, just looked up for @flow out of @oif, in @route. */
static void mr_socket_route_set(struct mr_route *route, struct dst_entry *dst,
				u32 cookie, const struct mr_flow *flow, int oif)
{
	if (!route)
		return;
	dst_hold(dst);
	*route = (struct mr_route){
		.dst = dst,
		.cookie = cookie,
		.oif = oif,
		.sport = flow->sport,
		.saddr = flow->saddr,
		.daddr = flow->daddr,
	};
}

static int mr_socket_xmit4(struct mr_dev *dev, struct socket *sock,
			   struct sk_buff *skb, const struct mr_flow *flow,
			   __be16 dport, struct mr_route *route)
{
	int oif = flow->oif ?: dev->ndev->ifindex;
	struct dst_entry *dst = mr_socket_route_get(route, flow, oif);
	struct rtable *rt;

	if (dst) {
		rt = container_of(dst, struct rtable, dst);
	} else {
		struct flowi4 fl4 = {
			.flowi4_oif = oif,
			.flowi4_proto = IPPROTO_UDP,
			.daddr = flow->daddr.s6_addr32[3],
			.saddr = flow->saddr.s6_addr32[3],
			.fl4_sport = flow->sport,
			.fl4_dport = dport,
		};

		rt = ip_route_output_key(sock_net(sock->sk), &fl4);
		if (IS_ERR(rt))
			return PTR_ERR(rt);
		mr_socket_route_set(route, &rt->dst, 0, flow, oif);
	}
	/* ECT(0): ECN-capable, for congestion control. DF: we size packets. */
	udp_tunnel_xmit_skb(rt, sock->sk, skb, flow->saddr.s6_addr32[3],
			    flow->daddr.s6_addr32[3], INET_ECN_ECT_0,
			    ip4_dst_hoplimit(&rt->dst), htons(IP_DF),
			    flow->sport, dport, false, false);
	return 0;
}

static int mr_socket_xmit6(struct mr_dev *dev, struct socket *sock,
			   struct sk_buff *skb, const struct mr_flow *flow,
			   __be16 dport, struct mr_route *route)
{
	int oif = flow->oif ?: dev->ndev->ifindex;
	struct dst_entry *dst = mr_socket_route_get(route, flow, oif);
	struct in6_addr saddr = flow->saddr, daddr = flow->daddr;

	if (!dst) {
		struct flowi6 fl6 = {
			.flowi6_oif = oif,
			.flowi6_proto = IPPROTO_UDP,
			.daddr = flow->daddr,
			.saddr = flow->saddr,
			.fl6_sport = flow->sport,
			.fl6_dport = dport,
		};

		dst = ipv6_stub->ipv6_dst_lookup_flow(sock_net(sock->sk),
						      sock->sk, &fl6, NULL);
		if (IS_ERR(dst))
			return PTR_ERR(dst);
		mr_socket_route_set(route, dst,
				    rt6_get_cookie((struct rt6_info *)dst),
				    flow, oif);
	}
	udp_tunnel6_xmit_skb(dst, sock->sk, skb, NULL, &saddr, &daddr,
			     INET_ECN_ECT_0, ip6_dst_hoplimit(dst), 0,
			     flow->sport, dport, false);
	return 0;
}

/**
 * mr_socket_xmit() - send one MetaRoCE packet
 * @dev: the sending device
 * @skb: MetaRoCE headers and payload, from mr_socket_new_pkt(); always
 *	 consumed
 * @flow: addresses and ports
 * @route: the route kept for @flow, looked up and kept again when it no
 *	   longer holds; or NULL, to look it up for this packet only
 *
 * Encrypts the packet if the device does (crypt.c; a packet it cannot
 * encrypt is dropped and counted there), then builds UDP (checksum always
 * on) and IP (ECT(0)) headers and routes in the netdev's namespace, out of
 * the flow's plane's netdev, or the device's. The destination port is the device's own: both
 * ends of a connection use the same port.
 *
 * Return: 0 when the packet went to the IP layer, else a negative errno.
 */
int mr_socket_xmit(struct mr_dev *dev, struct sk_buff *skb,
		   const struct mr_flow *flow, struct mr_route *route)
{
	bool v4 = ipv6_addr_v4mapped(&flow->daddr);
	struct socket *sock = NULL;
	struct mr_port *port;
	unsigned int len;
	__be16 dport = 0;
	int err;

	err = mr_crypt_tx(dev, skb, flow);
	if (err) {
		kfree_skb(skb);
		return err;
	}
	len = skb->len;
	err = -ENOTCONN;

	/* The IP layer must not charge tunnel stats to a netdev of ours. */
	skb->dev = NULL;
	rcu_read_lock();
	port = rcu_dereference(dev->port);
	if (port) {
		sock = v4 ? rcu_dereference(port->sock4) :
			    rcu_dereference(port->sock6);
		dport = htons(port->port);
	}
	if (v4 != ipv6_addr_v4mapped(&flow->saddr))
		err = -EAFNOSUPPORT;
	else if (sock)
		err = v4 ? mr_socket_xmit4(dev, sock, skb, flow, dport, route) :
			   mr_socket_xmit6(dev, sock, skb, flow, dport, route);
	rcu_read_unlock();

	trace_metaroce_tx(dev, flow, dport, len, err);
	if (err) {
		mr_stats_inc(dev, err == -ENOTCONN || err == -EAFNOSUPPORT ?
				  MR_CNT_TX_DROP_ERROR :
				  MR_CNT_TX_DROP_NO_ROUTE);
		kfree_skb(skb);
		return err;
	}
	mr_stats_inc(dev, MR_CNT_TX_PACKETS);
	mr_stats_add(dev, MR_CNT_TX_BYTES, len);
	return 0;
}

static int __net_init mr_socket_init_net(struct net *net)
{
	struct mr_net *mrn = net_generic(net, mr_socket_net_id);

	INIT_LIST_HEAD(&mrn->ports);
	INIT_LIST_HEAD(&mrn->devs);
	return 0;
}

/*
 * Devices are normally detached on NETDEV_UNREGISTER, before a namespace
 * dies. One whose netdev left while it was still being registered is
 * detached only by dealloc_driver, possibly later: cut it loose here.
 */
static void __net_exit mr_socket_exit_net(struct net *net)
{
	struct mr_net *mrn = net_generic(net, mr_socket_net_id);
	struct mr_dev *dev, *tmp;
	struct mr_port *port;

	mutex_lock(&mr_socket_mutex);
	list_for_each_entry_safe(dev, tmp, &mrn->devs, net_node) {
		RCU_INIT_POINTER(dev->mrn, NULL);
		list_del(&dev->net_node);
		port = rcu_dereference_protected(dev->port,
						 lockdep_is_held(&mr_socket_mutex));
		RCU_INIT_POINTER(dev->port, NULL);
		if (port)
			mr_socket_port_put(port);
	}
	mutex_unlock(&mr_socket_mutex);
}

/* A subsystem, so that it exits after the namespace's netdevs are gone. */
static struct pernet_operations mr_socket_net_ops = {
	.init = mr_socket_init_net,
	.exit = mr_socket_exit_net,
	.id = &mr_socket_net_id,
	.size = sizeof(struct mr_net),
};

/* Module init: @rcv gets every datagram the sockets receive. */
int mr_socket_init(mr_socket_rcv_fn rcv)
{
	if (!udp_port) {
		pr_err("udp_port must not be 0\n");
		return -EINVAL;
	}
	mr_socket_rcv = rcv;
	return register_pernet_subsys(&mr_socket_net_ops);
}

void mr_socket_exit(void)
{
	unregister_pernet_subsys(&mr_socket_net_ops);
}
