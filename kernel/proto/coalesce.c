// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ACK coalescing: the decisions only; the caller keeps the path's state
 * and sends.
 */
#include "coalesce.h"

/**
 * mr_coalesce_at_once() - whether a new packet is acknowledged at once
 * @pkt: the packet, which the path's window recorded as new
 * @seen: a packet of the path arrived before it
 * @last_psn: the PSN of that previous arrival
 * @prev_epoch: the window's epoch before @pkt
 * @prev_cum: the window's cumulative PSN before @pkt
 * @cum: the window's cumulative PSN after it
 *
 * At once for ACK_REQ, the path's first packet or a new epoch, and a
 * packet that leaves a new hole behind it (it does not follow the
 * previous arrival) or fills one; one that follows the previous arrival
 * past an older hole, which the sender has been told of, waits for the
 * coalesced ACK.
 *
 * Return: true when the ACK goes now.
 */
bool mr_coalesce_at_once(const struct mr_pkt *pkt, bool seen, u32 last_psn,
			 u16 prev_epoch, u32 prev_cum, u32 cum)
{
	u32 psn = pkt->base.psn;

	return (pkt->base.flags & MR_FLAG_ACK_REQ) || !seen ||
	       prev_epoch != pkt->base.epoch || psn != last_psn + 1 ||
	       (psn == prev_cum && cum != psn + 1);
}
