// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The connection tag handshake: the kernel side of proto/hello.c. A QP
 * draws its tag when it enters RTR; receive.c checks every RC and UC
 * packet against it and hands HELLOs here; the entry points call
 * mr_handshake_send() for the HELLOs the sending end owes, and timers.c
 * arms the timer for the next one.
 */
#include <linux/random.h>

#include "handshake.h"
#include "share.h"
#include "tx.h"

/*
 * Every HELLO carries the share of this end's ingress the peer may send
 * at: its first hint, a round trip before its first data packet.
 */
static void mr_handshake_xmit(struct mr_xport *x, struct mr_pkt *hello,
			      __be16 sport)
{
	hello->hello.rate_hint = mr_share_hello(x);
	mr_tx_control(x, hello, sport);
}

/* A new connection: a tag of its own, which no earlier one had. */
void mr_handshake_init(struct mr_xport *x)
{
	u64 tag;

	do
		tag = get_random_u64();
	while (!tag);
	mr_hello_init(&x->hello, tag);
}

/* RESET: no tag, so no packet passes mr_handshake_check(). */
void mr_handshake_clear(struct mr_xport *x)
{
	mr_hello_init(&x->hello, 0);
}

/**
 * mr_handshake_check() - whether a packet (not a HELLO) from the peer's
 * address is the peer's
 * @x: the transport, locked
 * @pkt: the packet
 * @sport: its UDP source port
 * @drop: set to the counter of the drop when this returns false
 *
 * A packet with our tag that comes before we hold the peer's (the HELLO
 * that proves it was lost or overtaken) cannot be answered: it is dropped,
 * to be resent, and a HELLO asks the peer for its proof again.
 *
 * Return: true when the engines may process the packet.
 */
bool mr_handshake_check(struct mr_xport *x, const struct mr_pkt *pkt,
			__be16 sport, enum mr_counter *drop)
{
	struct mr_pkt hello;

	switch (mr_hello_check(&x->hello, pkt->base.tag)) {
	case MR_HELLO_PASS:
		return true;
	case MR_HELLO_BAD_TAG:
		*drop = MR_CNT_RX_DROP_BAD_TAG;
		return false;
	case MR_HELLO_EARLY:
		break;
	}
	if (mr_hello_early(&x->hello, mr_xport_now(), &hello))
		mr_handshake_xmit(x, &hello, sport);
	*drop = MR_CNT_RX_DROP_EARLY;
	return false;
}

/* A HELLO from the peer's address: answered on the port it came from. */
void mr_handshake_rcv(struct mr_xport *x, const struct mr_pkt *pkt,
		      __be16 sport)
{
	bool ready = mr_hello_ready(&x->hello);
	struct mr_pkt reply;

	mr_stats_inc(to_mr_dev(x->qp->ibqp.device), MR_CNT_HELLO_RX);
	if (!x->hello.local)	/* not in RTR yet */
		return;
	if (mr_hello_rcv(&x->hello, pkt, mr_xport_now(), &reply))
		mr_handshake_xmit(x, &reply, sport);
	/* The peer's proof came: its hint goes before our first data. */
	if (!ready && mr_hello_ready(&x->hello))
		mr_sender_hello(&x->snd, x->hello.hint_kbps, x->hello.rtt_ns,
				mr_xport_now());
}

/*
 * The HELLO the sending end owes now, if one is due, on the path its
 * number picks (a dead path does not stop the handshake). A peer silent
 * for as many HELLOs as a path gets RTOs before the QP fails: the HELLOs
 * stop until work is posted and, if a WQE is queued, the entry point
 * fails the oldest (mr_comp_retry_exceeded()).
 *
 * Return: true when the oldest WQE must fail.
 */
bool mr_handshake_send(struct mr_xport *x)
{
	struct mr_pkt hello;
	u32 id;

	/* Called after every packet received: most often nothing is due. */
	if (!x->hello.deadline)
		return false;
	if (!x->snd.on || !x->snd.npaths ||
	    !mr_hello_due(&x->hello, mr_xport_now(), MR_RTO_MIN_NS,
			  MR_RTO_MAX_NS, &hello))
		return false;
	if (x->hello.tries > (mr_xport_retries(x) + 1) * x->snd.fail_after) {
		mr_hello_stop(&x->hello);
		return mr_wq_count(&x->qp->sq) != 0;
	}
	id = (x->hello.tries - 1) % x->snd.npaths;
	mr_handshake_xmit(x, &hello, htons(mr_sender_path_port(&x->snd, id)));
	return false;
}
