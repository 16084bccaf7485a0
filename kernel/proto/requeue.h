/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A path's packet records, and the requeue: the records of failed paths,
 * whose packets wait in order for a new PSN on another path.
 *
 * A path holds a ring of records (struct mr_tx_ring) only while it has
 * packets in flight: the host lends it (mr_sender_env_ring_get()) and
 * takes it back when the path is drained, so an idle connection keeps
 * none. A failed path's ring moves whole into the requeue; the requeue
 * allocates nothing.
 */
#ifndef METAROCE_PROTO_REQUEUE_H
#define METAROCE_PROTO_REQUEUE_H

#include "types.h"
#include "sack.h"

/*
 * What a packet in flight is, so that the host can rebuild it: a slice of
 * one of its requests, or of its response to the peer's READ or atomic.
 * Both ride the same paths.
 */
struct mr_tx_pkt {
	u32 msn;		/* ours, or for a response the peer's */
	u32 offset;
	u32 gen;		/* the host's RNR rewind generation */
	u8 sends;		/* times this PSN went out */
	u8 why;			/* enum mr_send_why of the last time */
	bool resp;
	u64 sent_ns;
	u64 order;		/* the connection's count of packets sent */
};

struct mr_tx_ring {
	struct mr_tx_pkt pkt[MR_SACK_WINDOW];	/* by PSN % 256 */
	u16 mark[MR_SACK_WINDOW];	/* the path scoreboard's (sack.h) */
	/* In the requeue: the packets still to move, oldest from @next_psn. */
	u64 moving[MR_SACK_WORDS];
	u32 next_psn;
	u32 left;		/* bits set in moving */
	struct mr_tx_ring *next;
};

struct mr_requeue {
	struct mr_tx_ring *head, *tail;
	u32 count;		/* packets to move, over every ring */
};

void mr_requeue_init(struct mr_requeue *q);
void mr_requeue_clear(struct mr_tx_ring *r);
void mr_requeue_mark(struct mr_tx_ring *r, u32 psn);
void mr_requeue_push(struct mr_requeue *q, struct mr_tx_ring *r);
const struct mr_tx_pkt *mr_requeue_front(struct mr_requeue *q);
struct mr_tx_ring *mr_requeue_pop(struct mr_requeue *q);
struct mr_tx_ring *mr_requeue_take(struct mr_requeue *q);

#endif /* METAROCE_PROTO_REQUEUE_H */
