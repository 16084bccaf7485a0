/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The requeue ring: packets of a failed path, waiting in order for a new
 * PSN on another path. The caller gives the slots (mr_requeue_slots() of
 * them); the ring allocates nothing.
 */
#ifndef METAROCE_PROTO_REQUEUE_H
#define METAROCE_PROTO_REQUEUE_H

#include "types.h"
#include "sack.h"

/* A packet of a failed path: what rebuilds it. */
struct mr_requeue {
	u32 msn;
	u32 offset;
	u32 gen;
	bool resp;
};

struct mr_requeue_ring {
	struct mr_requeue *slot;
	u32 head, count, size;
};

/*
 * Slots for a connection of @npaths paths: every scoreboard's worth, so
 * that it cannot fill up (only packets in flight move, and new data waits
 * until the ring is empty).
 */
static inline u32 mr_requeue_slots(u32 npaths)
{
	return npaths * MR_SACK_WINDOW;
}

void mr_requeue_init(struct mr_requeue_ring *q, struct mr_requeue *slot,
		     u32 size);
void mr_requeue_reset(struct mr_requeue_ring *q);
int mr_requeue_push(struct mr_requeue_ring *q, const struct mr_requeue *e);
const struct mr_requeue *mr_requeue_front(const struct mr_requeue_ring *q);
void mr_requeue_pop(struct mr_requeue_ring *q);

#endif /* METAROCE_PROTO_REQUEUE_H */
