/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The connection tag handshake (HELLO), as a state machine of one end.
 * Each end of an RC or UC connection draws a random 64-bit tag; the peer
 * learns it from a HELLO and puts it in every packet it sends, so a
 * packet without it is not the peer's. A tag is believed only when it
 * comes with proof: a HELLO that carries our own tag, which we sent only
 * to the peer's address. protocol.rst has the rules. Times are passed in,
 * in ns and above 0 (0 is "none"); the unit reads no clock and sends
 * nothing: it says what to send.
 */
#ifndef METAROCE_PROTO_HELLO_H
#define METAROCE_PROTO_HELLO_H

#include "types.h"
#include "wire.h"

/* An answer to a HELLO that proves nothing goes at most this often. */
#define MR_HELLO_REPLY_GAP_NS 100000ull	/* 100 us */

struct mr_hello {
	u64 local;	/* our tag, never 0; the peer's packets carry it */
	u64 peer;	/* the peer's tag once proven; 0: not yet */
	bool known;	/* the peer proved it holds ours: the handshake is over */
	bool started;	/* we send HELLOs until it is (mr_hello_due()) */
	u32 tries;	/* HELLOs sent since the last proof */
	u64 deadline;	/* when the next HELLO goes; 0: none is due */
	u64 reply_after;	/* no answer to an unproven HELLO before this */
	/*
	 * What the handshake tells congestion control before any data: the
	 * round trip from our only HELLO to its proven answer (0: unknown,
	 * or we sent more than one), and the rate hint that answer carried.
	 */
	u64 asked_ns;		/* when our first HELLO went; 0: retried */
	u64 rtt_ns;
	u32 hint_kbps;
	/* Counts, wrapping: HELLOs, what they proved, what was refused. */
	u32 n_sent;
	u32 n_proven;
	u32 n_refused;	/* unproven answers held back by the gap */
	u32 n_conflicts;	/* proven HELLOs naming another peer tag */
};

/* What mr_hello_check() says of a packet that is not a HELLO. */
enum mr_hello_verdict {
	MR_HELLO_PASS,		/* our tag, and we can answer: process it */
	MR_HELLO_BAD_TAG,	/* not our tag: drop it */
	/* Our tag, before the peer's is proven: drop it, ask again. */
	MR_HELLO_EARLY,
};

void mr_hello_init(struct mr_hello *h, u64 local_tag);
void mr_hello_start(struct mr_hello *h, u64 now);
void mr_hello_stop(struct mr_hello *h);
enum mr_hello_verdict mr_hello_check(struct mr_hello *h, u64 tag);
bool mr_hello_rcv(struct mr_hello *h, const struct mr_pkt *pkt, u64 now,
		  struct mr_pkt *reply);
bool mr_hello_early(struct mr_hello *h, u64 now, struct mr_pkt *out);
bool mr_hello_due(struct mr_hello *h, u64 now, u64 first_ns, u64 max_ns,
		  struct mr_pkt *out);

/* Whether packets other than HELLOs may go: the peer's tag is proven. */
static inline bool mr_hello_ready(const struct mr_hello *h)
{
	return h->peer != 0;
}

#endif /* METAROCE_PROTO_HELLO_H */
