/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-path selective acknowledgment. Each path numbers its packets with
 * its own PSNs; the receiver keeps a 256-PSN window starting at its
 * cumulative PSN and reports it whole in every ACK, and the sender keeps a
 * scoreboard of at most 256 PSNs in flight. A PSN missing below one the
 * receiver has is lost: a path delivers in order unless it drops.
 *
 * Both sides index their bitmaps by PSN modulo 256 (a ring), so moving the
 * window is clearing bits, not shifting them.
 */
#ifndef METAROCE_PROTO_SACK_H
#define METAROCE_PROTO_SACK_H

#include "types.h"
#include "wire.h"

#define MR_SACK_WINDOW MR_WIRE_SACK_BITS
#define MR_SACK_WORDS MR_WIRE_SACK_WORDS
/*
 * The most later arrivals a path may need before it calls a packet lost:
 * a host that sends one path's packets from two CPUs reorders them.
 */
#define MR_SACK_REORDER_MAX 16

/* Receiver: one path epoch's window. */
struct mr_sack_rx {
	u64 ring[MR_SACK_WORDS];	/* arrived PSNs in [cum, cum + 256) */
	u32 cum;			/* the oldest PSN not yet arrived */
	u32 start;			/* where every epoch's PSNs begin */
	u16 epoch;
};

enum mr_sack_rx_res {
	MR_SACK_NEW,		/* first arrival: deliver it */
	MR_SACK_DUP,		/* seen before: drop it, but acknowledge */
	MR_SACK_BEYOND,		/* past the window: drop it silently */
	MR_SACK_STALE,		/* from an abandoned path epoch: drop it */
};

void mr_sack_rx_init(struct mr_sack_rx *rx, u32 start_psn);
void mr_sack_rx_reset(struct mr_sack_rx *rx, u16 epoch);
enum mr_sack_rx_res mr_sack_rx_record(struct mr_sack_rx *rx, u16 epoch,
				      u32 psn);
bool mr_sack_rx_fresh(const struct mr_sack_rx *rx, u16 epoch, u32 psn);
void mr_sack_rx_fill_ack(const struct mr_sack_rx *rx, struct mr_ack_hdr *ack);

/* Sender: the scoreboard of one path epoch. */
struct mr_sack_tx {
	u64 sacked[MR_SACK_WORDS];	/* the receiver has it */
	u64 lost[MR_SACK_WORDS];	/* reported lost, not yet resent */
	u64 resent[MR_SACK_WORDS];	/* resent at least once */
	/*
	 * nxt - psn when psn was last sent: later sends prove it lost; by PSN
	 * modulo 256, MR_SACK_WINDOW entries the owner gives while PSNs are in
	 * flight (mr_sack_tx_send() needs them)
	 */
	u16 *mark;
	u32 una;		/* oldest PSN not acknowledged */
	u32 nxt;		/* next new PSN */
	u32 high;		/* one past the newest PSN known to have arrived */
	u32 start;		/* where every epoch's PSNs begin */
	u32 n_sacked;		/* bits set in sacked */
	u32 n_lost;		/* bits set in lost */
	u16 epoch;
	/* later PSNs that must arrive to prove a loss; doubles when one
	 * proves spurious (mr_sack_tx_reordered())
	 */
	u16 reorder;
};

/*
 * What an ACK or a timeout changed. Bit i of a map is PSN base + i; base is
 * the una before the ACK, so every PSN it can name fits in 256 bits.
 */
struct mr_sack_res {
	u32 base;
	u32 n_acked;
	u32 n_lost;
	u64 acked[MR_SACK_WORDS];	/* newly acknowledged */
	u64 lost[MR_SACK_WORDS];	/* newly lost: resend or move these */
	u64 ambiguous[MR_SACK_WORDS];	/* acked but resent: no RTT sample */
};

void mr_sack_tx_init(struct mr_sack_tx *tx, u32 start_psn, u16 *mark);
void mr_sack_tx_reset(struct mr_sack_tx *tx, u16 epoch);
u32 mr_sack_tx_room(const struct mr_sack_tx *tx);
u32 mr_sack_tx_pipe(const struct mr_sack_tx *tx);
int mr_sack_tx_send(struct mr_sack_tx *tx, u32 *psn);
int mr_sack_tx_resend(struct mr_sack_tx *tx, u32 psn);
void mr_sack_tx_reordered(struct mr_sack_tx *tx);
int mr_sack_tx_ack(struct mr_sack_tx *tx, u16 epoch, u32 cum_psn,
		   const u64 *sack, struct mr_sack_res *res);
void mr_sack_tx_timeout(struct mr_sack_tx *tx, struct mr_sack_res *res);
bool mr_sack_tx_next_unacked(const struct mr_sack_tx *tx, u32 *psn);
bool mr_sack_tx_arrived(const struct mr_sack_tx *tx, u16 epoch, u32 psn);

/* Whether PSN base + i is set in a result map. */
static inline bool mr_sack_res_test(const u64 *map, u32 i)
{
	return i < MR_SACK_WINDOW && (map[i / 64] >> (i % 64) & 1);
}

#endif /* METAROCE_PROTO_SACK_H */
