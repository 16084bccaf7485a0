// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Acknowledgments: the kernel's side of the receiver engine
 * (proto/receiver.c), which keeps the peer's paths' receive windows and
 * decides every ACK and NAK. Here the engine's environment is bound to
 * tx.c's control packets, the responder's "MSN done", share.c's hint and
 * the device's counters, and the responder's calls get the time.
 *
 * NAKs refuse a message. After a fatal one (REMOTE_ACCESS,
 * INVALID_REQUEST) the packets of the connection are answered with it,
 * at most once per MR_FATAL_NAK_GAP_NS, and the QP moves to ERR. That
 * state, and whether the responder takes packets at all, is x->ack,
 * which only this file writes.
 */
#include <linux/module.h>
#include <net/inet_ecn.h>
#include <net/ip.h>
#include <net/ipv6.h>

#include "ack.h"
#include "counters.h"
#include "qp.h"
#include "share.h"
#include "tx.h"
#include "proto/bounds.h"

static uint ack_delay_us = MR_ACK_DELAY_NS / NSEC_PER_USEC;
module_param(ack_delay_us, uint, 0644);
MODULE_PARM_DESC(ack_delay_us, "the longest a coalesced ACK waits, us (default 200)");

static struct mr_xport *mr_ack_of(struct mr_receiver *r)
{
	return container_of(r, struct mr_xport, rcv);
}

void mr_receiver_env_send(struct mr_receiver *r, struct mr_pkt *pkt,
			  u16 sport)
{
	mr_tx_control(mr_ack_of(r), pkt, htons(sport));
}

u32 mr_receiver_env_msn_done(struct mr_receiver *r)
{
	return mr_ack_of(r)->rsp.msn_done;
}

u32 mr_receiver_env_hint(struct mr_receiver *r)
{
	return mr_share_hint(mr_ack_of(r));
}

u64 mr_receiver_env_ack_delay(struct mr_receiver *r)
{
	return (u64)READ_ONCE(ack_delay_us) * NSEC_PER_USEC;
}

static const u8 mr_ack_event_counter[] = {
	[MR_REV_DUPLICATE] = MR_CNT_DUPLICATE_PACKETS,
	[MR_REV_OUT_OF_ORDER] = MR_CNT_OUT_OF_ORDER,
	[MR_REV_CE] = MR_CNT_CE_MARKS,
	[MR_REV_ACKS_HELD] = MR_CNT_ACKS_HELD,
};

void mr_receiver_env_event(struct mr_receiver *r, enum mr_receiver_event ev,
			   u32 arg)
{
	struct mr_xport *x = mr_ack_of(r);

	mr_stats_add(to_mr_dev(x->qp->ibqp.device), mr_ack_event_counter[ev],
		     ev == MR_REV_ACKS_HELD ? arg : 1);
	mr_share_signal(x, ev);
}

/*
 * RTR: every path of the peer starts at the PSN it agreed to send from;
 * nothing is refused, and the responder takes packets.
 */
void mr_ack_init(struct mr_xport *x)
{
	mr_receiver_start(&x->rcv, x->qp->attr.rq_psn);
	memset(x->ack.plane_arrived, -1, sizeof(x->ack.plane_arrived));
	x->ack.fatal = 0;
	x->ack.fatal_nak_ns = 0;
	x->ack.rx_on = true;
}

/* ERR, RESET, destroy: the responder takes no more packets. */
void mr_ack_stop(struct mr_xport *x)
{
	/* The peer may wait for a held ACK, or for the spare. */
	if (x->ack.rx_on)
		mr_receiver_flush(&x->rcv);
	x->ack.rx_on = false;
}

/* RESET: the fatal NAK is forgotten, as mr_xport_error_reason() too. */
void mr_ack_reset(struct mr_xport *x)
{
	x->ack.fatal = 0;
}

/*
 * Record @pkt, from UDP source port @sport, on its path
 * (mr_receiver_arrival()); a new packet counts towards the peer's share.
 */
enum mr_sack_rx_res mr_ack_arrival(struct mr_xport *x, const struct mr_pkt *pkt,
				   __be16 sport, bool ce, bool *ack_now)
{
	enum mr_sack_rx_res res;

	res = mr_receiver_arrival(&x->rcv, pkt, ntohs(sport), ce, ack_now);
	if (res == MR_SACK_NEW)
		mr_share_rx(x, pkt->hdr_len + pkt->payload_len,
			    pkt->base.flags & MR_FLAG_WINDOW_LIMITED);
	return res;
}

/* Whether mr_ack_arrival() would take @pkt as new; changes nothing. */
bool mr_ack_fresh(struct mr_xport *x, const struct mr_pkt *pkt)
{
	return mr_receiver_fresh(&x->rcv, pkt);
}

void mr_ack_coalesce(struct mr_xport *x, u32 id, u32 psn, bool now)
{
	mr_receiver_coalesce(&x->rcv, id, psn, now, mr_xport_now());
}

void mr_ack_all(struct mr_xport *x)
{
	mr_receiver_ack_all(&x->rcv, mr_xport_now());
}

/* A NAK of @msn answering packet @pkt, to its source port @sport. */
void mr_ack_nak(struct mr_xport *x, const struct mr_pkt *pkt, __be16 sport,
		u32 msn, u8 code)
{
	if (code == MR_NAK_RNR) {
		mr_stats_inc(to_mr_dev(x->qp->ibqp.device), MR_CNT_RNR_NAKS);
		x->n_rnr_naks++;
	}
	mr_receiver_nak(&x->rcv, pkt, ntohs(sport), msn, code,
			x->qp->attr.min_rnr_timer);
}

/*
 * Refuse message @msn for good: from now on everything is answered with
 * the NAK @code, and the QP moves to ERR.
 */
void mr_ack_refuse(struct mr_xport *x, u32 msn, u8 code)
{
	ibdev_dbg(x->qp->ibqp.device, "QP %u: MSN %u refused, NAK %u\n",
		  x->qp->ibqp.qp_num, msn, code);
	x->ack.fatal = code;
	x->ack.fatal_msn = msn;
	/* Its NAK goes now: the repeats count their gap from it. */
	x->ack.fatal_nak_ns = mr_xport_now();
	x->ack.rx_on = false;
	mr_qp_fatal(x->qp);
}

/*
 * A packet @pkt, from @sport, after the fatal NAK: answer it with that NAK
 * again, in case it was lost, but not more often than the gap allows.
 */
void mr_ack_refuse_again(struct mr_xport *x, const struct mr_pkt *pkt,
			 __be16 sport)
{
	struct mr_dev *dev = to_mr_dev(x->qp->ibqp.device);
	u64 now = mr_xport_now();

	if (!mr_bounds_nak_due(x->ack.fatal_nak_ns, now,
			       MR_FATAL_NAK_GAP_NS)) {
		mr_stats_inc(dev, MR_CNT_FATAL_NAKS_SUPPRESSED);
		return;
	}
	x->ack.fatal_nak_ns = now;
	mr_ack_nak(x, pkt, sport, x->ack.fatal_msn, x->ack.fatal);
	mr_stats_inc(dev, MR_CNT_FATAL_NAKS);
}

/* Whether @skb arrived marked Congestion Experienced. */
bool mr_ack_ce(const struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IP))
		return INET_ECN_is_ce(ip_hdr(skb)->tos);
	if (skb->protocol == htons(ETH_P_IPV6))
		return INET_ECN_is_ce(ipv6_get_dsfield(ipv6_hdr(skb)));
	return false;
}

/*
 * Whether this end takes data packet @pkt, from @sport, at all: not while
 * it is not receiving, nor after the fatal NAK, which answers it again.
 * Requests (resp.c) and responses (comp.c) both ask.
 */
bool mr_ack_admit(struct mr_xport *x, const struct mr_pkt *pkt, __be16 sport)
{
	struct mr_dev *dev = to_mr_dev(x->qp->ibqp.device);

	if (x->ack.fatal)
		mr_ack_refuse_again(x, pkt, sport);
	if (x->ack.fatal || !x->ack.rx_on) {
		mr_stats_inc(dev, MR_CNT_RX_DROP_NO_QP);
		return false;
	}
	return true;
}

/* Refuse a request late, when it executes: NAK it on its arrival path. */
void mr_ack_refuse_late(struct mr_xport *x, u32 msn, u8 code, u8 path)
{
	mr_ack_refuse(x, msn, code);
	mr_receiver_nak_late(&x->rcv, path, msn, code);
}
