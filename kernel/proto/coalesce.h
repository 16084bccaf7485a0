/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ACK coalescing: when the responder acknowledges a path at once and when
 * its ACK may wait for more packets (ack.c sends them and keeps the
 * timer of the held ones).
 */
#ifndef METAROCE_PROTO_COALESCE_H
#define METAROCE_PROTO_COALESCE_H

#include "types.h"
#include "wire.h"

/* The responder acknowledges a path at least every this many packets. */
#define MR_ACK_EVERY 4
/*
 * The most ACKs one packet sends at once (a completion acknowledges every
 * path): the others wait for the held ACKs' timer. As many as the
 * default paths, so that only connections of more paths wait.
 */
#define MR_ACK_BURST 16

bool mr_coalesce_at_once(const struct mr_pkt *pkt, bool seen, u32 last_psn,
			 u16 prev_epoch, u32 prev_cum, u32 cum);

/* Whether @unacked new packets of a path are enough for an ACK. */
static inline bool mr_coalesce_due(u32 unacked)
{
	return unacked >= MR_ACK_EVERY;
}

#endif /* METAROCE_PROTO_COALESCE_H */
