/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Transmit for the transport: builds each packet from what it carries (a
 * request from its send WQE, a response from its record, an ACK or NAK
 * from the responder) and sends it on its path.
 */
#ifndef METAROCE_TX_H
#define METAROCE_TX_H

#include "xport.h"

/* Whether mr_tx_send() sends a packet the first time, or again. */
enum mr_tx_kind {
	MR_TX_FIRST_SEND,
	MR_TX_RESEND,
};

int mr_tx_send(struct mr_xport *x, u32 id, u32 psn, const struct mr_tx_pkt *tp,
	       u8 flags, enum mr_tx_kind kind);
void mr_tx_control(struct mr_xport *x, struct mr_pkt *pkt, __be16 sport);

#endif /* METAROCE_TX_H */
