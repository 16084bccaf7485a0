// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * MetaRoCE over UDP. Each network namespace that has a metaroce device gets
 * one kernel UDP socket per address family, bound to the MetaRoCE port; the
 * first device on a netdev of that namespace opens them and the last one
 * closes them. Routes are looked up in the netdev's namespace.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

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

#include "net.h"
#include "transport.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

static ushort udp_port = METAROCE_DEFAULT_UDP_PORT;
module_param(udp_port, ushort, 0444);
MODULE_PARM_DESC(udp_port, "UDP port of MetaRoCE, listened on and sent to (default 4792)");

/* What a namespace holds, in its net_generic slot. */
struct mr_net {
	struct socket __rcu *sock4;
	struct socket __rcu *sock6;	/* NULL when IPv6 is disabled */
	struct list_head devs;		/* attached devices, under mr_net_mutex */
	atomic64_t rx_no_dev;		/* datagrams on a netdev without device */
};

static unsigned int mr_net_id __read_mostly;

/* Serialises opening and closing the sockets, and device (de)attachment. */
static DEFINE_MUTEX(mr_net_mutex);

__be16 mr_udp_dport(void)
{
	return htons(udp_port);
}

/*
 * The transport's entry point, in softirq: data packets (requests, and
 * responses, which ride the paths alike) go to resp.c, ACKs and NAKs to
 * the requester, of the QP the packet names; datagrams to ud.c.
 */
void mr_rcv_packet(struct mr_dev *dev, struct sk_buff *skb,
		   const struct mr_pkt *pkt)
{
	struct mr_qp *qp = mr_qp_get(dev, pkt->base.qpn);
	bool ud = pkt->base.opcode == MR_OP_UD_SEND ||
		  pkt->base.opcode == MR_OP_UD_SEND_IMM;
	bool ud_qp = qp && mr_qp_is_ud(qp);

	/* Datagrams go to UD QPs only, and the RC protocol to RC QPs. */
	if (qp && ud != ud_qp) {
		mr_qp_put(qp);
		qp = NULL;
	}
	if (!qp) {
		mr_stats_inc(dev, MR_CNT_RX_DROP_NO_QP);
		trace_metaroce_rx(dev, skb->len, pkt,
				  mr_counter_name(MR_CNT_RX_DROP_NO_QP));
		kfree_skb(skb);
		return;
	}
	trace_metaroce_rx(dev, skb->len, pkt, "ok");
	switch (pkt->base.opcode) {
	case MR_OP_SEND:
	case MR_OP_SEND_IMM:
	case MR_OP_SEND_INV:
	case MR_OP_WRITE:
	case MR_OP_WRITE_IMM:
	case MR_OP_READ_REQ:
	case MR_OP_CMP_SWAP:
	case MR_OP_FETCH_ADD:
	case MR_OP_READ_RESP:
	case MR_OP_ATOMIC_RESP:
		mr_resp_rcv(qp, skb, pkt);
		break;
	case MR_OP_ACK:
		mr_ack_rcv(qp, pkt);
		break;
	case MR_OP_NAK:
		mr_nak_rcv(qp, pkt);
		break;
	case MR_OP_UD_SEND:
	case MR_OP_UD_SEND_IMM:
		mr_ud_rcv(qp, skb, pkt);
		break;
	default:
		/* Decoding accepts only the opcodes above. */
		mr_stats_inc(dev, MR_CNT_RX_DROP_MALFORMED);
		break;
	}
	mr_qp_put(qp);
	consume_skb(skb);
}

static enum mr_counter mr_decode_drop(int err)
{
	switch (err) {
	case -MR_ETRUNC:
		return MR_CNT_RX_DROP_SHORT;
	case -MR_EVERSION:
		return MR_CNT_RX_DROP_VERSION;
	default:
		return MR_CNT_RX_DROP_MALFORMED;
	}
}

/*
 * The device a datagram is for: the one on its ingress netdev, or, when it
 * came back over loopback (two QPs of one host), the one on the netdev that
 * owns its destination address. Under RCU (the UDP receive path).
 */
static struct mr_dev *mr_rx_dev(struct sk_buff *skb)
{
	struct net_device *ndev = skb->dev;
	struct ib_device *ib_dev;

	if (ndev->flags & IFF_LOOPBACK) {
		if (skb->protocol == htons(ETH_P_IP))
			ndev = __ip_dev_find(dev_net(ndev), ip_hdr(skb)->daddr,
					     false);
		else if (skb->protocol == htons(ETH_P_IPV6))
			ndev = ipv6_dev_find(dev_net(ndev),
					     &ipv6_hdr(skb)->daddr, NULL);
		if (!ndev)
			return NULL;
	}
	ib_dev = ib_device_get_by_netdev(ndev,
					 (enum rdma_driver_id)METAROCE_DRIVER_ID);
	return ib_dev ? to_mr_dev(ib_dev) : NULL;
}

/*
 * udp_tunnel's receive hook, in softirq with the UDP checksum verified and
 * skb->data at the UDP header. Every datagram is consumed: return 0.
 */
static int mr_udp_encap_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct mr_net *mrn = rcu_dereference_sk_user_data(sk);
	unsigned int len = skb->len - sizeof(struct udphdr);
	enum mr_counter drop;
	struct mr_pkt pkt;
	struct mr_dev *dev;
	int err;

	dev = mr_rx_dev(skb);
	if (!dev) {
		if (mrn)
			atomic64_inc(&mrn->rx_no_dev);
		goto free;
	}
	mr_stats_inc(dev, MR_CNT_RX_PACKETS);
	mr_stats_add(dev, MR_CNT_RX_BYTES, len);
	memset(&pkt, 0, sizeof(pkt));

	/* IPv4 allows "no checksum"; we have no integrity check but UDP's. */
	if (sk->sk_family == AF_INET && !udp_hdr(skb)->check) {
		drop = MR_CNT_RX_DROP_NO_CSUM;
		goto drop;
	}
	if (len < MR_BASE_HDR_LEN) {
		drop = MR_CNT_RX_DROP_SHORT;
		goto drop;
	}
	/* The codec wants the headers linear; it reads no further. */
	if (!pskb_may_pull(skb, sizeof(struct udphdr) +
				min_t(unsigned int, len, MR_MAX_HDR_LEN))) {
		drop = MR_CNT_RX_DROP_SHORT;
		goto drop;
	}
	err = mr_wire_decode(skb->data + sizeof(struct udphdr), len, &pkt);
	if (err) {
		drop = mr_decode_drop(err);
		goto drop;
	}
	__skb_pull(skb, sizeof(struct udphdr));
	mr_rcv_packet(dev, skb, &pkt);
	ib_device_put(&dev->ib_dev);
	return 0;

drop:
	mr_stats_inc(dev, drop);
	trace_metaroce_rx(dev, len, &pkt, mr_counter_name(drop));
	ib_device_put(&dev->ib_dev);
free:
	kfree_skb(skb);
	return 0;
}

static struct socket *mr_sock_open(struct net *net, struct mr_net *mrn,
				   bool ipv6)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.sk_user_data = mrn,
		.encap_type = 1,
		.encap_rcv = mr_udp_encap_rcv,
	};
	struct udp_port_cfg cfg = {
		.local_udp_port = htons(udp_port),
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

static void mr_sock_close(struct socket __rcu **slot)
{
	struct socket *sock;

	sock = rcu_dereference_protected(*slot,
					 lockdep_is_held(&mr_net_mutex));
	if (!sock)
		return;
	RCU_INIT_POINTER(*slot, NULL);
	/* Waits for the readers of the socket (rx and tx) to finish. */
	udp_tunnel_sock_release(sock);
}

static void mr_net_close(struct mr_net *mrn)
{
	mr_sock_close(&mrn->sock4);
	mr_sock_close(&mrn->sock6);
}

static int mr_net_open(struct net *net, struct mr_net *mrn)
{
	struct socket *sock;

	sock = mr_sock_open(net, mrn, false);
	if (IS_ERR(sock))
		return PTR_ERR(sock);
	rcu_assign_pointer(mrn->sock4, sock);

	sock = mr_sock_open(net, mrn, true);
	/* Booted with ipv6.disable=1: IPv4 only. */
	if (PTR_ERR_OR_ZERO(sock) == -EAFNOSUPPORT)
		return 0;
	if (IS_ERR(sock)) {
		mr_net_close(mrn);
		return PTR_ERR(sock);
	}
	rcu_assign_pointer(mrn->sock6, sock);
	return 0;
}

/*
 * Attaches a new device to its netdev's namespace, opening the sockets if
 * it is the first one there. Called before registration.
 */
int mr_net_dev_init(struct mr_dev *dev)
{
	struct net *net = dev_net(dev->ndev);
	struct mr_net *mrn = net_generic(net, mr_net_id);
	int err;

	err = mr_counters_init(dev);
	if (err)
		return err;

	mutex_lock(&mr_net_mutex);
	if (list_empty(&mrn->devs)) {
		err = mr_net_open(net, mrn);
		if (err) {
			mutex_unlock(&mr_net_mutex);
			pr_err("netdev %s: cannot open UDP port %u (%d)\n",
			       dev->ndev->name, udp_port, err);
			return err;
		}
	}
	list_add(&dev->net_node, &mrn->devs);
	rcu_assign_pointer(dev->mrn, mrn);
	mutex_unlock(&mr_net_mutex);
	return 0;
}

/*
 * Detaches a device from its namespace. Runs when its netdev unregisters or
 * leaves the namespace (so the namespace's teardown finds no user left), and
 * again from dealloc_driver for devices deleted with `rdma link delete`.
 */
void mr_net_dev_release(struct mr_dev *dev)
{
	struct mr_net *mrn;

	mutex_lock(&mr_net_mutex);
	mrn = rcu_dereference_protected(dev->mrn,
					lockdep_is_held(&mr_net_mutex));
	if (mrn) {
		RCU_INIT_POINTER(dev->mrn, NULL);
		list_del(&dev->net_node);
		if (list_empty(&mrn->devs))
			mr_net_close(mrn);
	}
	mutex_unlock(&mr_net_mutex);
}

/* From dealloc_driver: nothing reads the device any more. */
void mr_net_dev_fini(struct mr_dev *dev)
{
	mr_net_dev_release(dev);
	mr_counters_free(dev);
}

/* Datagrams to our port on netdevs without a device, in dev's namespace. */
u64 mr_net_rx_no_dev(struct mr_dev *dev)
{
	struct mr_net *mrn;
	u64 n = 0;

	/* The mutex keeps the namespace, whose teardown detaches us first. */
	mutex_lock(&mr_net_mutex);
	mrn = rcu_dereference_protected(dev->mrn,
					lockdep_is_held(&mr_net_mutex));
	if (mrn)
		n = atomic64_read(&mrn->rx_no_dev);
	mutex_unlock(&mr_net_mutex);
	return n;
}

/*
 * An skb for @len bytes of MetaRoCE headers and payload, with headroom for
 * the link layer, IPv6 (the larger IP header) and UDP.
 */
struct sk_buff *mr_alloc_skb(struct mr_dev *dev, unsigned int len, gfp_t gfp)
{
	unsigned int hr = LL_RESERVED_SPACE(dev->ndev) +
			  sizeof(struct ipv6hdr) + sizeof(struct udphdr);
	struct sk_buff *skb;

	skb = alloc_skb(hr + len, gfp);
	if (skb)
		skb_reserve(skb, hr);
	return skb;
}

static int mr_xmit4(struct mr_dev *dev, struct socket *sock,
		    struct sk_buff *skb, const struct mr_flow *flow)
{
	struct flowi4 fl4 = {
		.flowi4_oif = dev->ndev->ifindex,
		.flowi4_proto = IPPROTO_UDP,
		.daddr = flow->daddr.s6_addr32[3],
		.saddr = flow->saddr.s6_addr32[3],
		.fl4_sport = flow->sport,
		.fl4_dport = flow->dport,
	};
	struct rtable *rt;

	rt = ip_route_output_key(sock_net(sock->sk), &fl4);
	if (IS_ERR(rt))
		return PTR_ERR(rt);
	/* ECT(0): ECN-capable, for congestion control. DF: we size packets. */
	udp_tunnel_xmit_skb(rt, sock->sk, skb, fl4.saddr, fl4.daddr,
			    INET_ECN_ECT_0, ip4_dst_hoplimit(&rt->dst),
			    htons(IP_DF), flow->sport, flow->dport, false,
			    false);
	return 0;
}

static int mr_xmit6(struct mr_dev *dev, struct socket *sock,
		    struct sk_buff *skb, const struct mr_flow *flow)
{
	struct flowi6 fl6 = {
		.flowi6_oif = dev->ndev->ifindex,
		.flowi6_proto = IPPROTO_UDP,
		.daddr = flow->daddr,
		.saddr = flow->saddr,
		.fl6_sport = flow->sport,
		.fl6_dport = flow->dport,
	};
	struct dst_entry *dst;

	dst = ipv6_stub->ipv6_dst_lookup_flow(sock_net(sock->sk), sock->sk,
					      &fl6, NULL);
	if (IS_ERR(dst))
		return PTR_ERR(dst);
	udp_tunnel6_xmit_skb(dst, sock->sk, skb, NULL, &fl6.saddr, &fl6.daddr,
			     INET_ECN_ECT_0, ip6_dst_hoplimit(dst), 0,
			     flow->sport, flow->dport, false);
	return 0;
}

/**
 * mr_xmit() - send one MetaRoCE packet
 * @dev: the sending device
 * @skb: MetaRoCE headers and payload, from mr_alloc_skb(); always consumed
 * @flow: addresses and ports
 *
 * Builds UDP (checksum always on) and IP (ECT(0)) headers and routes in
 * the netdev's namespace, out of the device's netdev.
 *
 * Return: 0 when the packet went to the IP layer, else a negative errno.
 */
int mr_xmit(struct mr_dev *dev, struct sk_buff *skb,
	    const struct mr_flow *flow)
{
	bool v4 = ipv6_addr_v4mapped(&flow->daddr);
	unsigned int len = skb->len;
	struct socket *sock = NULL;
	struct mr_net *mrn;
	int err = -ENOTCONN;

	/* The IP layer must not charge tunnel stats to a netdev of ours. */
	skb->dev = NULL;
	rcu_read_lock();
	mrn = rcu_dereference(dev->mrn);
	if (mrn)
		sock = v4 ? rcu_dereference(mrn->sock4) :
			    rcu_dereference(mrn->sock6);
	if (v4 != ipv6_addr_v4mapped(&flow->saddr))
		err = -EAFNOSUPPORT;
	else if (sock)
		err = v4 ? mr_xmit4(dev, sock, skb, flow) :
			   mr_xmit6(dev, sock, skb, flow);
	rcu_read_unlock();

	trace_metaroce_tx(dev, flow, len, err);
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

static int __net_init mr_net_init_net(struct net *net)
{
	struct mr_net *mrn = net_generic(net, mr_net_id);

	INIT_LIST_HEAD(&mrn->devs);
	return 0;
}

/*
 * Devices are normally detached on NETDEV_UNREGISTER, before a namespace
 * dies. One whose netdev left while it was still being registered is
 * detached only by dealloc_driver, possibly later: cut it loose here.
 */
static void __net_exit mr_net_exit_net(struct net *net)
{
	struct mr_net *mrn = net_generic(net, mr_net_id);
	struct mr_dev *dev, *tmp;

	mutex_lock(&mr_net_mutex);
	list_for_each_entry_safe(dev, tmp, &mrn->devs, net_node) {
		RCU_INIT_POINTER(dev->mrn, NULL);
		list_del(&dev->net_node);
	}
	mr_net_close(mrn);
	mutex_unlock(&mr_net_mutex);
}

/* A subsystem, so that it exits after the namespace's netdevs are gone. */
static struct pernet_operations mr_net_ops = {
	.init = mr_net_init_net,
	.exit = mr_net_exit_net,
	.id = &mr_net_id,
	.size = sizeof(struct mr_net),
};

int mr_net_init(void)
{
	if (!udp_port) {
		pr_err("udp_port must not be 0\n");
		return -EINVAL;
	}
	return register_pernet_subsys(&mr_net_ops);
}

void mr_net_exit(void)
{
	unregister_pernet_subsys(&mr_net_ops);
}
