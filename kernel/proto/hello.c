// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The HELLO handshake. Each end sends HELLO{its tag, ours or 0} until it
 * has the peer's tag and the peer has shown it holds ours. A HELLO that
 * carries our tag is proof: we gave our tag only to the peer's address,
 * so its sender is the peer, and its own tag is the peer's. A HELLO that
 * proves nothing (tag 0, or wrong) changes nothing; it is answered, at a
 * bounded rate, with our tag, to the peer's address only, where an
 * off-path sender never sees it.
 */
#include "hello.h"
#include "rto.h"

/**
 * mr_hello_init() - a new end of a connection
 * @h: the state
 * @local_tag: our tag, random and not 0; a new one for every connection;
 *	0 clears the state (RESET): then no packet is the peer's
 */
void mr_hello_init(struct mr_hello *h, u64 local_tag)
{
	*h = (struct mr_hello){ .local = local_tag };
}
EXPORT_SYMBOL_IF_KUNIT(mr_hello_init);

/* The end may send: its HELLOs go from @now until the handshake is over. */
void mr_hello_start(struct mr_hello *h, u64 now)
{
	if (h->started || (h->peer && h->known))
		return;
	h->started = true;
	h->deadline = now;
}
EXPORT_SYMBOL_IF_KUNIT(mr_hello_start);

/* The sending end gave up: no HELLO is due until mr_hello_start(). */
void mr_hello_stop(struct mr_hello *h)
{
	h->started = false;
	h->deadline = 0;
	h->tries = 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_hello_stop);

/*
 * A HELLO from us to @dst_tag (0: not known), saying whether we hold it
 * and whether it answers one; answers are never answered, so two ends
 * cannot keep each other talking.
 */
static void mr_hello_make(struct mr_hello *h, u64 dst_tag, bool reply,
			  struct mr_pkt *out)
{
	*out = (struct mr_pkt){ 0 };
	out->base.opcode = MR_OP_HELLO;
	out->base.tag = dst_tag;
	out->hello.src_tag = h->local;
	if (dst_tag && dst_tag == h->peer)
		out->hello.flags = MR_HELLO_KNOWN;
	if (reply)
		out->hello.flags |= MR_HELLO_REPLY;
	h->n_sent++;
}

/*
 * The peer proved it holds our tag (a packet carried it): once we hold
 * its tag too, the handshake is over.
 */
static void mr_hello_proven(struct mr_hello *h)
{
	h->tries = 0;
	if (h->peer && h->known)
		h->deadline = 0;
}

/**
 * mr_hello_check() - whether to process a packet other than a HELLO
 * @h: the state
 * @tag: the packet's base.tag
 *
 * A packet with our tag shows that its sender holds the peer's tag... and
 * ours: it sends such packets only once the handshake gave it ours.
 *
 * Return: what to do with the packet.
 */
enum mr_hello_verdict mr_hello_check(struct mr_hello *h, u64 tag)
{
	if (tag != h->local)
		return MR_HELLO_BAD_TAG;
	if (!h->known) {
		h->known = true;
		mr_hello_proven(h);
	}
	return h->peer ? MR_HELLO_PASS : MR_HELLO_EARLY;
}
EXPORT_SYMBOL_IF_KUNIT(mr_hello_check);

/*
 * An answer to a HELLO that proves nothing, if the gap allows one now.
 * Once we hold the peer's tag, only the peer asking again (it lost our
 * proven answer) gets one: another QP at its address gets no tag of ours.
 */
static bool mr_hello_unproven(struct mr_hello *h, u64 src_tag, u64 now,
			      struct mr_pkt *reply)
{
	if ((h->peer && src_tag != h->peer) || now < h->reply_after) {
		h->n_refused++;
		return false;
	}
	h->reply_after = now + MR_HELLO_REPLY_GAP_NS;
	mr_hello_make(h, src_tag, src_tag != 0, reply);
	return true;
}

/**
 * mr_hello_rcv() - a HELLO arrived
 * @h: the state
 * @pkt: the HELLO, decoded (so its src_tag is not 0)
 * @now: the time, ns
 * @reply: filled with the HELLO to send back when this returns true; the
 *	caller sets its rate hint
 *
 * The first proven HELLO leaves its rate hint in h->hint_kbps and, when
 * it answers our only HELLO, the round trip in h->rtt_ns.
 *
 * Return: whether to send @reply, to the HELLO's source port.
 */
bool mr_hello_rcv(struct mr_hello *h, const struct mr_pkt *pkt, u64 now,
		  struct mr_pkt *reply)
{
	u64 src = pkt->hello.src_tag;

	if (pkt->base.tag != h->local)
		return mr_hello_unproven(h, src, now, reply);
	/* Proof: its sender is the peer. A peer has one tag per connection. */
	if (h->peer && h->peer != src) {
		h->n_conflicts++;
		return false;
	}
	h->n_proven++;
	if (!h->peer) {
		h->hint_kbps = pkt->hello.rate_hint;
		if (h->asked_ns && now > h->asked_ns)
			h->rtt_ns = now - h->asked_ns;
	}
	h->peer = src;
	if (pkt->hello.flags & MR_HELLO_KNOWN)
		h->known = true;
	mr_hello_proven(h);
	/*
	 * An answer that holds our tag needs nothing. Anything else asks: the
	 * peer lacks ours, or the proof that it is ours, or (a HELLO that is
	 * no answer) the proof that we hold its tag.
	 */
	if ((pkt->hello.flags & MR_HELLO_KNOWN) &&
	    (pkt->hello.flags & MR_HELLO_REPLY))
		return false;
	mr_hello_make(h, src, true, reply);
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(mr_hello_rcv);

/**
 * mr_hello_early() - the HELLO that answers a packet mr_hello_check()
 * found early: it asks the peer for the proof of its tag again
 * @h: the state
 * @now: the time, ns
 * @out: filled when this returns true
 *
 * Return: whether to send @out; at most one per MR_HELLO_REPLY_GAP_NS.
 */
bool mr_hello_early(struct mr_hello *h, u64 now, struct mr_pkt *out)
{
	return mr_hello_unproven(h, 0, now, out);
}
EXPORT_SYMBOL_IF_KUNIT(mr_hello_early);

/**
 * mr_hello_due() - the HELLO the sending end owes at @now, if any
 * @h: the state
 * @now: the time, ns
 * @first_ns: the wait after the first HELLO; each next one doubles it
 * @max_ns: the longest wait
 * @out: filled when this returns true
 *
 * The caller sends @out and counts h->tries against its retry budget:
 * tries is the number of HELLOs sent since the peer last proved anything.
 *
 * Return: whether a HELLO is due now.
 */
bool mr_hello_due(struct mr_hello *h, u64 now, u64 first_ns, u64 max_ns,
		  struct mr_pkt *out)
{
	u64 wait = first_ns < max_ns ? first_ns : max_ns;
	u32 i;

	if (!h->deadline || now < h->deadline)
		return false;
	/* Backed off as a path's RTO is, once per HELLO already sent. */
	for (i = 0; i < h->tries && wait < max_ns; i++)
		wait = mr_rto_doubled(wait, max_ns);
	/* An answer after a retry times no one HELLO (Karn). */
	h->asked_ns = h->n_sent || h->tries ? 0 : now;
	h->tries++;
	h->deadline = now + wait;
	mr_hello_make(h, h->peer, false, out);
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(mr_hello_due);
