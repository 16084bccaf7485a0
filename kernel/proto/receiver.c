// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The receiver engine (receiver.h): receive windows, CE counts, ACK
 * coalescing and the NAKs. protocol.rst gives the rules: an ACK carries
 * the path's whole window, "MSN done", the path epoch's CE count and the
 * receiver's hint, and goes back to the source port of the packets it
 * acknowledges. It goes at once for ACK_REQ, a packet that leaves a new
 * hole or fills one, a duplicate, or a new epoch; else every
 * MR_ACK_EVERY packets of the path; and on every path with packets
 * unacknowledged when a message completes, at most MR_ACK_BURST of them
 * at once (the rest wait for the held ACKs' delay).
 */
#include "receiver.h"

/* The IB RNR timer codes in units of 10 us (code 0: 655.36 ms, saturated). */
static const u16 mr_receiver_rnr_delays[32] = {
	65535, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
	256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192,
	12288, 16384, 24576, 32768, 49152,
};

/* The RNR NAK's delay field for the QP's min_rnr_timer code. */
u16 mr_receiver_rnr_delay(u8 rnr_timer)
{
	return mr_receiver_rnr_delays[rnr_timer & 31];
}

/* RTR: every path of the peer starts at the PSN it agreed to send from. */
void mr_receiver_start(struct mr_receiver *r, u32 psn)
{
	u32 i;

	for (i = 0; i < MR_WIRE_MAX_PATHS; i++) {
		r->path[i] = (struct mr_rx_path){};
		mr_sack_rx_init(&r->path[i].win, psn);
	}
	r->ack_due = 0;
	r->spare_due = 0;
}

/* Acknowledge path @id: its whole window, naming packet @psn. */
void mr_receiver_ack(struct mr_receiver *r, u32 id, u32 psn)
{
	struct mr_rx_path *p = &r->path[id];
	struct mr_pkt pkt = {};

	pkt.base.opcode = MR_OP_ACK;
	pkt.base.path = id;
	pkt.base.epoch = p->win.epoch;
	pkt.base.psn = psn;
	mr_sack_rx_fill_ack(&p->win, &pkt.ack);
	pkt.ack.msn_done = mr_receiver_env_msn_done(r);
	pkt.ack.ecn_count = p->ecn;
	pkt.ack.rate_hint = mr_receiver_env_hint(r);
	p->unacked = 0;
	mr_receiver_env_send(r, &pkt, p->sport);
}

/* Whether path @id has a window in the epoch of its last new packet. */
static bool mr_receiver_live(const struct mr_rx_path *p)
{
	return p->seen && p->epoch == p->win.epoch;
}

/*
 * CE marks count per path epoch, duplicates included, packets of an
 * abandoned epoch not (protocol.rst, "Signals"); a new epoch counts from 0.
 */
static void mr_receiver_count_ce(struct mr_receiver *r, struct mr_rx_path *p,
				 u16 prev_epoch, enum mr_sack_rx_res res,
				 bool ce)
{
	if (p->win.epoch != prev_epoch)
		p->ecn = 0;
	if (ce && res != MR_SACK_STALE) {
		p->ecn++;
		mr_receiver_env_event(r, MR_REV_CE, 0);
	}
}

/**
 * mr_receiver_arrival() - record a data packet on its path
 * @r: the receiver
 * @pkt: a decoded data packet (request or response) of the peer
 * @sport: its UDP source port, where the path's ACKs go
 * @ce: it arrived marked Congestion Experienced
 * @ack_now: set when a new packet must be acknowledged at once
 *
 * A duplicate is acknowledged here (the sender missed an ACK); packets of
 * an abandoned epoch or beyond the window are dropped. All three count as
 * duplicates.
 *
 * Return: the window's verdict; only MR_SACK_NEW goes on to be placed.
 */
enum mr_sack_rx_res mr_receiver_arrival(struct mr_receiver *r,
					const struct mr_pkt *pkt, u16 sport,
					bool ce, bool *ack_now)
{
	u32 id = pkt->base.path, psn = pkt->base.psn;
	enum mr_sack_rx_res res;
	struct mr_rx_path *p;
	u16 prev_epoch;
	u32 prev_cum;

	if (id >= MR_WIRE_MAX_PATHS) {
		mr_receiver_env_event(r, MR_REV_DUPLICATE, 0);
		return MR_SACK_BEYOND;
	}
	p = &r->path[id];
	prev_epoch = p->win.epoch;
	prev_cum = p->win.cum;
	res = mr_sack_rx_record(&p->win, pkt->base.epoch, psn);
	mr_receiver_count_ce(r, p, prev_epoch, res, ce);
	if (res != MR_SACK_NEW) {
		mr_receiver_env_event(r, MR_REV_DUPLICATE, 0);
		if (res == MR_SACK_DUP) {
			p->sport = sport;
			if (mr_receiver_live(p))
				mr_receiver_ack(r, id, psn);
		}
		return res;
	}
	*ack_now = mr_coalesce_at_once(pkt, p->seen, p->last_psn, prev_epoch,
				       prev_cum, p->win.cum);
	if (psn != prev_cum && prev_epoch == pkt->base.epoch)
		mr_receiver_env_event(r, MR_REV_OUT_OF_ORDER, 0);
	p->sport = sport;
	p->seen = true;
	p->epoch = p->win.epoch;
	p->last_psn = psn;
	p->unacked++;
	return res;
}

/*
 * Whether mr_receiver_arrival() would take @pkt as new on its path, which
 * it does not change.
 */
bool mr_receiver_fresh(const struct mr_receiver *r, const struct mr_pkt *pkt)
{
	if (pkt->base.path >= MR_WIRE_MAX_PATHS)
		return false;
	return mr_sack_rx_fresh(&r->path[pkt->base.path].win, pkt->base.epoch,
				pkt->base.psn);
}

/* Held ACKs go at the latest the host's ACK delay after @now. */
static void mr_receiver_hold(struct mr_receiver *r, u64 now)
{
	if (!r->ack_due)
		r->ack_due = now + mr_receiver_env_ack_delay(r) ?: 1;
}

/*
 * After a new packet on path @id: its ACK now (@at_once), or once enough
 * are in, or at the latest the ACK delay later, so that an ACK held while
 * the path has nothing more to send (its message waits for a repair
 * elsewhere) does not make the sender's RTT samples, and so its timers
 * and its view of the queue, as long as that repair.
 */
void mr_receiver_coalesce(struct mr_receiver *r, u32 id, u32 psn,
			  bool at_once, u64 now)
{
	if (at_once || mr_coalesce_due(r->path[id].unacked)) {
		mr_receiver_ack(r, id, psn);
		return;
	}
	mr_receiver_hold(r, now);
}

/*
 * The held ACKs, when due: every path with packets unacknowledged; and
 * the spare ACK, when due.
 */
void mr_receiver_timeout(struct mr_receiver *r, u64 now)
{
	u32 i;

	if (r->ack_due && now >= r->ack_due) {
		r->ack_due = 0;
		for (i = 0; i < MR_WIRE_MAX_PATHS; i++) {
			struct mr_rx_path *p = &r->path[i];

			if (mr_receiver_live(p) && p->unacked)
				mr_receiver_ack(r, i, p->last_psn);
		}
	}
	if (r->spare_due && now >= r->spare_due) {
		u64 due = r->lone_ns + MR_ACK_SPARE_NS;

		/* A lone ACK went since: its spare waits the delay from it. */
		if (now < due) {
			r->spare_due = due;
			return;
		}
		r->spare_due = 0;
		if (mr_receiver_live(&r->path[r->spare]))
			mr_receiver_ack(r, r->spare, r->path[r->spare].last_psn);
	}
}

/*
 * The QP stops (ERR, RESET, destroy): what is held goes now, since a
 * peer may wait for it and nothing will send it later.
 */
void mr_receiver_flush(struct mr_receiver *r)
{
	mr_receiver_timeout(r, ~(u64)0);
}

/*
 * Acknowledge every path with packets not yet acknowledged, after a
 * completion. When that is one ACK (a one-packet message), another path
 * carries its "MSN done" too, MR_ACK_SPARE_NS after the last lone ACK
 * (its timer moves only when it fires, not with each lone ACK): a peer that leaves as
 * soon as it has our reply (ibv_rc_pingpong's last pong) would never
 * answer a resend, so a lost lone ACK would fail the QP with a retry
 * error; a ping-pong sends one ACK per message, not two. At most
 * MR_ACK_BURST go now, so that one packet cannot draw an ACK on each of
 * 64 paths; the others are held (and counted).
 */
void mr_receiver_ack_all(struct mr_receiver *r, u64 now)
{
	u32 i, acks = 0, held = 0, spare = MR_WIRE_MAX_PATHS;

	for (i = 0; i < MR_WIRE_MAX_PATHS; i++) {
		struct mr_rx_path *p = &r->path[i];

		if (!mr_receiver_live(p))
			continue;
		if (p->unacked && acks < MR_ACK_BURST) {
			mr_receiver_ack(r, i, p->last_psn);
			acks++;
		} else if (p->unacked) {
			held++;
		} else if (spare == MR_WIRE_MAX_PATHS) {
			spare = i;
		}
	}
	if (acks == 1 && spare < MR_WIRE_MAX_PATHS) {
		/* A spare that waits already moves when due, not now. */
		r->spare = spare;
		r->lone_ns = now;
		if (!r->spare_due)
			r->spare_due = now + MR_ACK_SPARE_NS;
	} else if (acks > 1) {
		r->spare_due = 0;	/* several paths carry it now */
	}
	if (held) {
		mr_receiver_env_event(r, MR_REV_ACKS_HELD, held);
		mr_receiver_hold(r, now);
	}
}

static void mr_receiver_send_nak(struct mr_receiver *r, u32 id, u16 epoch,
				 u32 psn, u16 sport, u32 msn, u8 code,
				 u8 rnr_timer)
{
	struct mr_pkt pkt = {};

	pkt.base.opcode = MR_OP_NAK;
	pkt.base.path = id;
	pkt.base.epoch = epoch;
	pkt.base.psn = psn;
	pkt.nak.msn = msn;
	pkt.nak.code = code;
	if (code == MR_NAK_RNR)
		pkt.nak.rnr_delay = mr_receiver_rnr_delay(rnr_timer);
	mr_receiver_env_send(r, &pkt, sport);
}

/*
 * NAK message @msn with @code, naming packet @pkt that caused it, to its
 * source port @sport. An RNR NAK asks for the wait of code @rnr_timer.
 */
void mr_receiver_nak(struct mr_receiver *r, const struct mr_pkt *pkt,
		     u16 sport, u32 msn, u8 code, u8 rnr_timer)
{
	mr_receiver_send_nak(r, pkt->base.path, pkt->base.epoch, pkt->base.psn,
			     sport, msn, code, rnr_timer);
}

/*
 * Refuse a request late, when it executes: NAK @msn on path @id, its
 * arrival path, naming the path's last new packet.
 */
void mr_receiver_nak_late(struct mr_receiver *r, u32 id, u32 msn, u8 code)
{
	const struct mr_rx_path *p = &r->path[id % MR_WIRE_MAX_PATHS];

	mr_receiver_send_nak(r, id % MR_WIRE_MAX_PATHS, p->win.epoch,
			     p->last_psn, p->sport, msn, code, 0);
}
