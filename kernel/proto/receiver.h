/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The receiver engine: the peer's paths as this end receives them. It
 * records every data packet (request or response) in its path's receive
 * window, counts the path's CE marks, and decides when each path is
 * acknowledged: at once, after MR_ACK_EVERY packets, on a completion, or
 * when the held ACKs' delay runs out. It builds the ACKs and the NAKs
 * that refuse a message; the host sends them. Like the sender engine it
 * does no I/O and reads no clock: it is handed packets and the time, and
 * it calls the environment functions below, which each host (the kernel's
 * ack.c, the scale model, the host tests) defines once, at link time.
 *
 * What a packet places and whether it completes a message is the host's
 * (the responder's); only this file writes struct mr_receiver.
 */
#ifndef METAROCE_PROTO_RECEIVER_H
#define METAROCE_PROTO_RECEIVER_H

#include "coalesce.h"
#include "sack.h"
#include "types.h"
#include "wire.h"

/* The longest a held ACK waits by default (the kernel's ack_delay_us). */
#define MR_ACK_DELAY_NS 200000ull
/*
 * When a lone ACK's spare goes: before the peer's tail probe (at least
 * MR_PTO_MIN_NS, 2 ms) would resend, and rarely enough that a ping-pong's
 * timer fires once a millisecond, not once per ACK delay (which doubled
 * ib_write_lat's p99 in the guest).
 */
#define MR_ACK_SPARE_NS 1000000ull

struct mr_rx_path {
	struct mr_sack_rx win;
	u32 last_psn;		/* the last new packet: ACKs name it */
	u32 unacked;		/* new packets since the last ACK */
	u32 ecn;		/* CE marks of the window's epoch */
	u16 sport;		/* the sender's port: ACKs go back to it */
	u16 epoch;		/* of last_psn */
	bool seen;		/* a new packet arrived in some epoch */
};

struct mr_receiver {
	struct mr_rx_path path[MR_WIRE_MAX_PATHS];
	u64 ack_due;		/* when the held ACKs go; 0: none held */
	u64 spare_due;		/* when the spare ACK goes; 0: none waits */
	u64 lone_ns;		/* when the last lone ACK went */
	u32 spare;		/* the path it goes on */
};

/* What the engine reports for the host's counters. */
enum mr_receiver_event {
	MR_REV_DUPLICATE,	/* a packet its window did not take as new */
	MR_REV_OUT_OF_ORDER,	/* a new packet not at the window's front */
	MR_REV_CE,		/* a packet marked CE that the epoch counts */
	MR_REV_ACKS_HELD,	/* @arg ACKs a completion left to the timer */
};

/*
 * The environment, one definition per host.
 *
 * Send ACK or NAK @pkt (no payload) to the peer's UDP port @sport; the
 * host sets the QPN and the tag.
 */
void mr_receiver_env_send(struct mr_receiver *r, struct mr_pkt *pkt,
			  u16 sport);
/* The responder's "MSN done", which every ACK carries. */
u32 mr_receiver_env_msn_done(struct mr_receiver *r);
/* The peer's share of this end's ingress, kbit/s; 0: no hint. */
u32 mr_receiver_env_hint(struct mr_receiver *r);
/* The longest a held ACK waits now, ns (a setting that may change). */
u64 mr_receiver_env_ack_delay(struct mr_receiver *r);
void mr_receiver_env_event(struct mr_receiver *r, enum mr_receiver_event ev,
			   u32 arg);

void mr_receiver_start(struct mr_receiver *r, u32 psn);
void mr_receiver_flush(struct mr_receiver *r);
bool mr_receiver_fresh(const struct mr_receiver *r, const struct mr_pkt *pkt);
enum mr_sack_rx_res mr_receiver_arrival(struct mr_receiver *r,
					const struct mr_pkt *pkt, u16 sport,
					bool ce, bool *ack_now);
void mr_receiver_ack(struct mr_receiver *r, u32 id, u32 psn);
void mr_receiver_coalesce(struct mr_receiver *r, u32 id, u32 psn,
			  bool at_once, u64 now);
void mr_receiver_ack_all(struct mr_receiver *r, u64 now);
void mr_receiver_timeout(struct mr_receiver *r, u64 now);
void mr_receiver_nak(struct mr_receiver *r, const struct mr_pkt *pkt,
		     u16 sport, u32 msn, u8 code, u8 rnr_timer);
void mr_receiver_nak_late(struct mr_receiver *r, u32 id, u32 msn, u8 code);
u16 mr_receiver_rnr_delay(u8 rnr_timer);

/* When mr_receiver_timeout() is next due; 0: nothing held. */
static inline u64 mr_receiver_expiry(const struct mr_receiver *r)
{
	if (!r->spare_due || (r->ack_due && r->ack_due < r->spare_due))
		return r->ack_due;
	return r->spare_due;
}

#endif /* METAROCE_PROTO_RECEIVER_H */
