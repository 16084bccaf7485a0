// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Per-path selective acknowledgment: the receiver's window and the
 * sender's scoreboard. Windows are 256 PSNs, so PSN differences stay far
 * below 2^31 and plain u32 subtraction orders them across wraparound.
 */
#include "sack.h"

static bool mr_sack_ring_test(const u64 *ring, u32 psn)
{
	u32 s = psn % MR_SACK_WINDOW;

	return ring[s / 64] >> (s % 64) & 1;
}

static void mr_sack_ring_set(u64 *ring, u32 psn)
{
	u32 s = psn % MR_SACK_WINDOW;

	ring[s / 64] |= (u64)1 << (s % 64);
}

static void mr_sack_ring_clear(u64 *ring, u32 psn)
{
	u32 s = psn % MR_SACK_WINDOW;

	ring[s / 64] &= ~((u64)1 << (s % 64));
}

/* 64 ring bits from bit position @from on, wrapping at 256. */
static u64 mr_sack_ring_word(const u64 *ring, u32 from)
{
	u32 b = from % MR_SACK_WINDOW;
	u32 q = b / 64, s = b % 64;
	u64 v = ring[q] >> s;

	if (s)
		v |= ring[(q + 1) % MR_SACK_WORDS] << (64 - s);
	return v;
}

/* Whether a 256-bit map has any bit at or above @from. */
static bool mr_sack_map_any_from(const u64 *map, u32 from)
{
	u32 w;

	for (w = 0; w < MR_SACK_WORDS; w++) {
		if (from <= 64 * w) {
			if (map[w])
				return true;
		} else if (from < 64 * (w + 1) && map[w] >> (from % 64)) {
			return true;
		}
	}
	return false;
}

static void mr_sack_map_set(u64 *map, u32 i)
{
	map[i / 64] |= (u64)1 << (i % 64);
}

static void mr_zero(u64 *map)
{
	u32 w;

	for (w = 0; w < MR_SACK_WORDS; w++)
		map[w] = 0;
}

/*
 * Epoch 0 of a path starts at the PSN both ends agreed on; later epochs
 * start at 0, which a sender knows even before it has an agreed PSN (a
 * responder in RTR answering READs restarts its paths to send).
 */
static u32 mr_sack_epoch_start(u32 start_psn, u16 epoch)
{
	return epoch ? 0 : start_psn;
}

void mr_sack_rx_init(struct mr_sack_rx *rx, u32 start_psn)
{
	rx->start = start_psn;
	mr_sack_rx_reset(rx, 0);
}
EXPORT_SYMBOL_IF_KUNIT(mr_sack_rx_init);

/* The sender restarted the path: forget the old epoch's window. */
void mr_sack_rx_reset(struct mr_sack_rx *rx, u16 epoch)
{
	mr_zero(rx->ring);
	rx->cum = mr_sack_epoch_start(rx->start, epoch);
	rx->epoch = epoch;
}
EXPORT_SYMBOL_IF_KUNIT(mr_sack_rx_reset);

/**
 * mr_sack_rx_record() - note the arrival of a packet on this path
 * @rx: the path's receive window
 * @epoch: the packet's path epoch; a newer one restarts the window
 * @psn: the packet's PSN
 *
 * Return: whether the packet is new, a duplicate, beyond the window or from
 * an old epoch. Only a new packet changes the window.
 */
enum mr_sack_rx_res mr_sack_rx_record(struct mr_sack_rx *rx, u16 epoch,
				      u32 psn)
{
	s16 age = (s16)(epoch - rx->epoch);

	if (age < 0)
		return MR_SACK_STALE;
	if (age > 0)
		mr_sack_rx_reset(rx, epoch);
	if (mr_seq_before(psn, rx->cum))
		return MR_SACK_DUP;
	if (psn - rx->cum >= MR_SACK_WINDOW)
		return MR_SACK_BEYOND;
	if (mr_sack_ring_test(rx->ring, psn))
		return MR_SACK_DUP;

	mr_sack_ring_set(rx->ring, psn);
	while (mr_sack_ring_test(rx->ring, rx->cum)) {
		mr_sack_ring_clear(rx->ring, rx->cum);
		rx->cum++;
	}
	return MR_SACK_NEW;
}
EXPORT_SYMBOL_IF_KUNIT(mr_sack_rx_record);

/*
 * Whether mr_sack_rx_record() would find the packet new, without
 * recording it: a host allocates for a packet only once it knows.
 */
bool mr_sack_rx_fresh(const struct mr_sack_rx *rx, u16 epoch, u32 psn)
{
	s16 age = (s16)(epoch - rx->epoch);

	if (age < 0)
		return false;
	if (age > 0)	/* restarts the window, empty */
		return psn - mr_sack_epoch_start(rx->start, epoch) <
		       MR_SACK_WINDOW;
	return psn - rx->cum < MR_SACK_WINDOW &&
	       !mr_sack_ring_test(rx->ring, psn);
}

/* The ACK fields for this window: bit i of the SACK map is PSN cum + i. */
void mr_sack_rx_fill_ack(const struct mr_sack_rx *rx, struct mr_ack_hdr *ack)
{
	u32 w;

	ack->cum_psn = rx->cum;
	for (w = 0; w < MR_SACK_WORDS; w++)
		ack->sack[w] = mr_sack_ring_word(rx->ring, rx->cum + 64 * w);
}
EXPORT_SYMBOL_IF_KUNIT(mr_sack_rx_fill_ack);

/*
 * A scoreboard from @start_psn; @mark: its MR_SACK_WINDOW marks, or NULL
 * until the owner gives them (before the first mr_sack_tx_send()).
 */
void mr_sack_tx_init(struct mr_sack_tx *tx, u32 start_psn, u16 *mark)
{
	tx->mark = mark;
	tx->start = start_psn;
	tx->reorder = 1;
	mr_sack_tx_reset(tx, 0);
}
EXPORT_SYMBOL_IF_KUNIT(mr_sack_tx_init);

/*
 * A new path epoch: the caller has moved every unacknowledged packet of
 * the old one to other paths (see mr_sack_tx_next_unacked()).
 */
void mr_sack_tx_reset(struct mr_sack_tx *tx, u16 epoch)
{
	mr_zero(tx->sacked);
	mr_zero(tx->lost);
	mr_zero(tx->resent);
	tx->una = mr_sack_epoch_start(tx->start, epoch);
	tx->nxt = tx->una;
	tx->high = tx->una;
	tx->n_sacked = 0;
	tx->n_lost = 0;
	tx->epoch = epoch;
}
EXPORT_SYMBOL_IF_KUNIT(mr_sack_tx_reset);

/* How many new PSNs the scoreboard can still take. */
u32 mr_sack_tx_room(const struct mr_sack_tx *tx)
{
	return MR_SACK_WINDOW - (tx->nxt - tx->una);
}
EXPORT_SYMBOL_IF_KUNIT(mr_sack_tx_room);

/* Packets presumed in the network: sent, neither acknowledged nor lost. */
u32 mr_sack_tx_pipe(const struct mr_sack_tx *tx)
{
	return tx->nxt - tx->una - tx->n_sacked - tx->n_lost;
}
EXPORT_SYMBOL_IF_KUNIT(mr_sack_tx_pipe);

/* Take the next PSN for a new packet; -MR_ENOSPC when 256 are in flight. */
int mr_sack_tx_send(struct mr_sack_tx *tx, u32 *psn)
{
	if (!mr_sack_tx_room(tx))
		return -MR_ENOSPC;
	*psn = tx->nxt++;
	tx->mark[*psn % MR_SACK_WINDOW] = tx->reorder;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_sack_tx_send);

/**
 * mr_sack_tx_resend() - note that a packet goes out again with its PSN
 * @tx: the path's scoreboard
 * @psn: a PSN in flight and not acknowledged
 *
 * It may be reported lost again once the path's reorder tolerance of PSNs
 * sent after this call has arrived.
 *
 * Return: 0, -MR_EFIELD if @psn is not in flight, -MR_ESTALE if the
 * receiver already has it.
 */
int mr_sack_tx_resend(struct mr_sack_tx *tx, u32 psn)
{
	if (psn - tx->una >= tx->nxt - tx->una)
		return -MR_EFIELD;
	if (mr_sack_ring_test(tx->sacked, psn))
		return -MR_ESTALE;
	if (mr_sack_ring_test(tx->lost, psn)) {
		mr_sack_ring_clear(tx->lost, psn);
		tx->n_lost--;
	}
	mr_sack_ring_set(tx->resent, psn);
	tx->mark[psn % MR_SACK_WINDOW] = (u16)(tx->nxt - psn + tx->reorder - 1);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_sack_tx_resend);

/*
 * A resend of a reported gap proved needless, its first copy arrived
 * late: the path reorders (a host that sends from two CPUs into per-CPU
 * queues does). Wait for twice as many later arrivals before calling a
 * loss, up to MR_SACK_REORDER_MAX. A new epoch keeps it: the hosts do
 * not change with it.
 */
void mr_sack_tx_reordered(struct mr_sack_tx *tx)
{
	if (tx->reorder < MR_SACK_REORDER_MAX)
		tx->reorder *= 2;
}
EXPORT_SYMBOL_IF_KUNIT(mr_sack_tx_reordered);

/* PSN @psn is acknowledged for the first time. */
static void mr_sack_tx_acked(struct mr_sack_tx *tx, u32 psn,
			     struct mr_sack_res *res)
{
	u32 i = psn - res->base;

	mr_sack_map_set(res->acked, i);
	res->n_acked++;
	if (mr_sack_ring_test(tx->resent, psn))
		mr_sack_map_set(res->ambiguous, i);
	if (mr_sack_ring_test(tx->lost, psn)) {
		mr_sack_ring_clear(tx->lost, psn);
		tx->n_lost--;
	}
}

/*
 * A PSN is lost when the path's reorder tolerance of PSNs sent after its
 * last transmission has arrived: one path in the network does not
 * reorder, the hosts at its ends may. Each loss is reported once;
 * mr_sack_tx_resend() re-arms it.
 */
static void mr_sack_tx_detect(struct mr_sack_tx *tx, struct mr_sack_res *res)
{
	u32 psn;

	for (psn = tx->una; psn != tx->high; psn++) {
		if (mr_sack_ring_test(tx->sacked, psn) ||
		    mr_sack_ring_test(tx->lost, psn))
			continue;
		if (tx->high - 1 - psn < tx->mark[psn % MR_SACK_WINDOW])
			continue;
		mr_sack_ring_set(tx->lost, psn);
		tx->n_lost++;
		mr_sack_map_set(res->lost, psn - res->base);
		res->n_lost++;
	}
}

static void mr_sack_res_init(const struct mr_sack_tx *tx,
			     struct mr_sack_res *res)
{
	*res = (struct mr_sack_res){ .base = tx->una };
}

/**
 * mr_sack_tx_ack() - apply an ACK for this path to the scoreboard
 * @tx: the path's scoreboard
 * @epoch: the ACK's path epoch
 * @cum_psn: the ACK's cumulative PSN
 * @sack: the ACK's SACK map, MR_SACK_WORDS words, bit i is cum_psn + i
 * @res: what changed
 *
 * An ACK is applied whole or not at all.
 *
 * Return: 0; -MR_ESTALE for an ACK of another epoch or older than what is
 * known (ACKs may be reordered too); -MR_EFIELD for one that acknowledges
 * PSNs never sent.
 */
int mr_sack_tx_ack(struct mr_sack_tx *tx, u16 epoch, u32 cum_psn,
		   const u64 *sack, struct mr_sack_res *res)
{
	u32 psn, i, top = 0, sent_after;

	mr_sack_res_init(tx, res);
	if (epoch != tx->epoch || mr_seq_before(cum_psn, tx->una))
		return -MR_ESTALE;
	if (cum_psn - tx->una > tx->nxt - tx->una)
		return -MR_EFIELD;
	sent_after = tx->nxt - cum_psn;
	if ((sack[0] & 1) || mr_sack_map_any_from(sack, sent_after))
		return -MR_EFIELD;

	for (psn = tx->una; psn != cum_psn; psn++) {
		if (mr_sack_ring_test(tx->sacked, psn)) {
			mr_sack_ring_clear(tx->sacked, psn);
			tx->n_sacked--;
		} else {
			mr_sack_tx_acked(tx, psn, res);
		}
		mr_sack_ring_clear(tx->resent, psn);
	}
	tx->una = cum_psn;

	for (i = 1; i < sent_after && i < MR_SACK_WINDOW; i++) {
		if (!(sack[i / 64] >> (i % 64) & 1))
			continue;
		top = i;
		psn = cum_psn + i;
		if (mr_sack_ring_test(tx->sacked, psn))
			continue;
		mr_sack_ring_set(tx->sacked, psn);
		tx->n_sacked++;
		mr_sack_tx_acked(tx, psn, res);
	}

	if (top && mr_seq_before(tx->high, cum_psn + top + 1))
		tx->high = cum_psn + top + 1;
	if (mr_seq_before(tx->high, tx->una))
		tx->high = tx->una;
	mr_sack_tx_detect(tx, res);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_sack_tx_ack);

/*
 * The path's retransmission timer fired: nothing in flight is coming back,
 * so every packet neither acknowledged nor already reported is lost.
 */
void mr_sack_tx_timeout(struct mr_sack_tx *tx, struct mr_sack_res *res)
{
	u32 psn;

	mr_sack_res_init(tx, res);
	for (psn = tx->una; psn != tx->nxt; psn++) {
		if (mr_sack_ring_test(tx->sacked, psn) ||
		    mr_sack_ring_test(tx->lost, psn))
			continue;
		mr_sack_ring_set(tx->lost, psn);
		tx->n_lost++;
		mr_sack_map_set(res->lost, psn - res->base);
		res->n_lost++;
	}
}
EXPORT_SYMBOL_IF_KUNIT(mr_sack_tx_timeout);

/**
 * mr_sack_tx_arrived() - whether the sender knows that a packet arrived
 * @tx: the scoreboard
 * @epoch: the epoch the PSN belongs to
 * @psn: the packet
 *
 * True for a PSN of the current epoch that was sent and is acknowledged:
 * before una (and no more than a window back), or SACKed.
 */
bool mr_sack_tx_arrived(const struct mr_sack_tx *tx, u16 epoch, u32 psn)
{
	if (epoch != tx->epoch || !mr_seq_before(psn, tx->nxt) ||
	    tx->nxt - psn > MR_SACK_WINDOW)
		return false;
	return mr_seq_before(psn, tx->una) ||
	       mr_sack_ring_test(tx->sacked, psn);
}
EXPORT_SYMBOL_IF_KUNIT(mr_sack_tx_arrived);

/**
 * mr_sack_tx_next_unacked() - find the next packet the receiver lacks
 * @tx: the path's scoreboard
 * @psn: where to start; set to the PSN found
 *
 * For moving a failed path's packets elsewhere, walk from una:
 * for (psn = tx->una; mr_sack_tx_next_unacked(tx, &psn); psn++).
 *
 * Return: false when no PSN at or after @psn is unacknowledged.
 */

bool mr_sack_tx_next_unacked(const struct mr_sack_tx *tx, u32 *psn)
{
	u32 p = *psn;

	if (mr_seq_before(p, tx->una))
		p = tx->una;
	for (; p - tx->una < tx->nxt - tx->una; p++) {
		if (!mr_sack_ring_test(tx->sacked, p)) {
			*psn = p;
			return true;
		}
	}
	return false;
}
EXPORT_SYMBOL_IF_KUNIT(mr_sack_tx_next_unacked);
