// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Receive: the sockets' one entry point. A datagram is matched to the
 * device of its ingress netdev (or of the plane it came by), checked, decoded by proto/wire.c and
 * dispatched by opcode: to the responder (requests, and responses to our
 * own requests, which ride the peer's paths alike), to the completer
 * (ACKs and NAKs), or to ud.c (datagrams). Every drop is counted.
 *
 * For RC and UC QPs this is one of the transport's three entry points
 * (with timers.c and xport.c): it takes the transport lock around the
 * engine, then lets the requester send what the packet made possible and
 * brings the timer up to date, so that no engine calls another sideways.
 */
#include <linux/inetdevice.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <net/udp.h>

#include "ack.h"
#include "comp.h"
#include "counters.h"
#include "crypt.h"
#include "handshake.h"
#include "plane.h"
#include "qp.h"
#include "receive.h"
#include "req.h"
#include "resp.h"
#include "socket.h"
#include "timers.h"
#include "trace.h"
#include "ud.h"
#include "xport.h"

/* Whether @skb comes from the address @qp is connected to. */
static bool mr_receive_from_peer(const struct mr_qp *qp,
				 const struct sk_buff *skb)
{
	const struct in6_addr *peer = &qp->flow.daddr;

	if (skb->protocol == htons(ETH_P_IP))
		return ipv6_addr_v4mapped(peer) &&
		       peer->s6_addr32[3] == ip_hdr(skb)->saddr;
	return ipv6_addr_equal(peer, &ipv6_hdr(skb)->saddr);
}

/*
 * A packet of an RC or UC connection, in softirq. Requests go to the
 * responder, our READ and atomic responses, ACKs and NAKs to the
 * completer (each records a data packet on its path); HELLOs to the
 * handshake. Only the
 * connected peer may change the connection's state: packets from another
 * address, or without the connection's tag, are dropped first.
 */
static void mr_receive_xport(struct mr_qp *qp, struct sk_buff *skb,
			     const struct mr_pkt *pkt, int plane)
{
	struct mr_dev *dev = to_mr_dev(qp->ibqp.device);
	struct mr_xport *x = qp->xp;
	enum mr_xport_next next = MR_NEXT_NONE;
	__be16 sport = udp_hdr(skb)->source;
	enum mr_counter drop = MR_CNT_RX_DROP_NOT_PEER;

	/* Placement reads the payload at skb->data + hdr_len. */
	if (!(mr_wire_op_flags(pkt->base.opcode) & MR_WIRE_F_CONTROL) &&
	    skb_linearize(skb)) {
		mr_stats_inc(dev, MR_CNT_RX_DROP_SHORT);
		return;
	}
	spin_lock_bh(&x->lock);
	/* The AV is set in RTR, before the transport takes packets. */
	if (!mr_receive_from_peer(qp, skb) ||
	    (pkt->base.opcode != MR_OP_HELLO &&
	     !mr_handshake_check(x, pkt, sport, &drop))) {
		mr_timers_sync(x);
		spin_unlock_bh(&x->lock);
		mr_stats_inc(dev, drop);
		trace_metaroce_rx(dev, skb->len, pkt, mr_counters_name(drop));
		return;
	}
	/* Its path's ACKs go back on the plane it came by. */
	if (plane >= 0 && pkt->base.path < MR_PATH_MAX)
		x->ack.plane_arrived[pkt->base.path] = plane;
	switch (pkt->base.opcode) {
	case MR_OP_HELLO:
		/* The peer's tag, now proven, lets queued work go. */
		mr_handshake_rcv(x, pkt, sport);
		next = MR_NEXT_PUSH;
		break;
	case MR_OP_ACK:
		next = mr_comp_ack_rcv(x, pkt);
		break;
	case MR_OP_NAK:
		mr_comp_nak_rcv(x, pkt);
		break;
	default:
		if (mr_wire_op_flags(pkt->base.opcode) & MR_WIRE_F_RESPONSE)
			next = mr_comp_resp_in(x, skb, pkt);
		else
			next = mr_resp_rcv(x, skb, pkt);
		break;
	}
	if (next == MR_NEXT_RESPOND)
		mr_req_respond(x);
	else if (next == MR_NEXT_PUSH)
		mr_req_push(x);
	if (mr_handshake_send(x))
		mr_comp_retry_exceeded(x);
	mr_req_account(x);
	mr_timers_sync(x);
	spin_unlock_bh(&x->lock);
}

/* A valid packet for @dev: to the QP it names, or counted as no such QP. */
static void mr_receive_packet(struct mr_dev *dev, struct sk_buff *skb,
			      const struct mr_pkt *pkt, int plane)
{
	struct mr_qp *qp = mr_qp_get(dev, pkt->base.qpn);
	bool ud = mr_wire_op_flags(pkt->base.opcode) & MR_WIRE_F_DATAGRAM;

	/* Datagrams go to UD QPs only, and the RC protocol to RC QPs. */
	if (qp && ud != mr_qp_is_ud(qp)) {
		mr_qp_put(qp);
		qp = NULL;
	}
	if (!qp) {
		mr_stats_inc(dev, MR_CNT_RX_DROP_NO_QP);
		trace_metaroce_rx(dev, skb->len, pkt,
				  mr_counters_name(MR_CNT_RX_DROP_NO_QP));
		kfree_skb(skb);
		return;
	}
	trace_metaroce_rx(dev, skb->len, pkt, "ok");
	if (ud)
		mr_ud_rcv(qp, skb, pkt);
	else
		mr_receive_xport(qp, skb, pkt, plane);
	mr_qp_put(qp);
	consume_skb(skb);
}

static enum mr_counter mr_receive_decode_drop(int err)
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

/* The netdev that owns @skb's destination address, under RCU. */
static struct net_device *mr_receive_addr_dev(struct sk_buff *skb)
{
	struct net *net = dev_net(skb->dev);

	if (skb->protocol == htons(ETH_P_IP))
		return __ip_dev_find(net, ip_hdr(skb)->daddr, false);
	if (skb->protocol == htons(ETH_P_IPV6))
		return ipv6_dev_find(net, &ipv6_hdr(skb)->daddr, NULL);
	return NULL;
}

static struct mr_dev *mr_receive_dev_on(struct net_device *ndev)
{
	struct ib_device *ib_dev;

	ib_dev = ib_device_get_by_netdev(ndev,
					 (enum rdma_driver_id)METAROCE_DRIVER_ID);
	return ib_dev ? to_mr_dev(ib_dev) : NULL;
}

/*
 * The device a datagram is for, with a reference, and the plane it came
 * by (@plane, -1: none): the device on its ingress netdev; or, when it
 * came back over loopback (two QPs of one host), the one on the netdev
 * that owns its destination address; or, when it came by a plane, that
 * device if the plane is one of its own. Under RCU (the UDP receive path).
 */
static struct mr_dev *mr_receive_dev(struct sk_buff *skb, unsigned int len,
				     int *plane)
{
	struct net_device *ndev = skb->dev;
	struct mr_dev *dev;

	*plane = -1;
	if (ndev->flags & IFF_LOOPBACK) {
		ndev = mr_receive_addr_dev(skb);
		return ndev ? mr_receive_dev_on(ndev) : NULL;
	}
	dev = mr_receive_dev_on(ndev);
	if (dev) {
		if (mr_plane_any(dev))
			*plane = mr_plane_arrived(dev, ndev->ifindex, len,
						  mr_ack_ce(skb));
		return dev;
	}
	ndev = mr_receive_addr_dev(skb);
	dev = ndev ? mr_receive_dev_on(ndev) : NULL;
	if (!dev)
		return NULL;
	*plane = mr_plane_arrived(dev, skb->dev->ifindex, len, mr_ack_ce(skb));
	if (*plane < 0) {
		ib_device_put(&dev->ib_dev);
		return NULL;
	}
	return dev;
}

/**
 * mr_receive_udp() - a datagram to the MetaRoCE port
 * @sk: the namespace's socket
 * @skb: the datagram, with its UDP checksum verified and skb->data at the
 *	 UDP header
 *
 * udp_tunnel's encap_rcv hook, in softirq. Every datagram is consumed.
 *
 * Return: 0.
 */
int mr_receive_udp(struct sock *sk, struct sk_buff *skb)
{
	unsigned int len = skb->len - sizeof(struct udphdr);
	enum mr_counter drop;
	struct mr_pkt pkt;
	struct mr_dev *dev;
	int plane, err;

	dev = mr_receive_dev(skb, len, &plane);
	/* The netdev's device may listen on another port of the namespace. */
	if (dev && !mr_socket_dev_owns(dev, sk)) {
		ib_device_put(&dev->ib_dev);
		dev = NULL;
	}
	if (!dev) {
		mr_socket_count_no_dev(sk);
		goto free;
	}
	mr_stats_inc(dev, MR_CNT_RX_PACKETS);
	mr_stats_add(dev, MR_CNT_RX_BYTES, len);
	memset(&pkt, 0, sizeof(pkt));

	/*
	 * Without a key we have no integrity check but UDP's: no "no
	 * checksum", which IPv4 allows and an IPv6 tunnel socket may accept
	 * (RFC 6935).
	 */
	if (!udp_hdr(skb)->check) {
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
	/* Before anything reads the opcode header: it may be ciphertext. */
	if (mr_crypt_rx(dev, skb, &drop))
		goto drop;
	len = skb->len - sizeof(struct udphdr);
	err = mr_wire_decode(skb->data + sizeof(struct udphdr), len, &pkt);
	if (err) {
		drop = mr_receive_decode_drop(err);
		goto drop;
	}
	__skb_pull(skb, sizeof(struct udphdr));
	mr_receive_packet(dev, skb, &pkt, plane);
	ib_device_put(&dev->ib_dev);
	return 0;

drop:
	mr_stats_inc(dev, drop);
	trace_metaroce_rx(dev, len, &pkt, mr_counters_name(drop));
	ib_device_put(&dev->ib_dev);
free:
	kfree_skb(skb);
	return 0;
}
