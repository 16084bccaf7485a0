/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What this end answers on the peer's paths: the kernel's side of the
 * receiver engine (proto/receiver.h), and the NAKs that refuse a message.
 */
#ifndef METAROCE_ACK_H
#define METAROCE_ACK_H

#include "xport.h"

void mr_ack_init(struct mr_xport *x);
void mr_ack_stop(struct mr_xport *x);
void mr_ack_reset(struct mr_xport *x);
bool mr_ack_fresh(struct mr_xport *x, const struct mr_pkt *pkt);
enum mr_sack_rx_res mr_ack_arrival(struct mr_xport *x, const struct mr_pkt *pkt,
				   __be16 sport, bool ce, bool *ack_now);
void mr_ack_coalesce(struct mr_xport *x, u32 id, u32 psn, bool now);
void mr_ack_all(struct mr_xport *x);
void mr_ack_nak(struct mr_xport *x, const struct mr_pkt *pkt, __be16 sport,
		u32 msn, u8 code);
void mr_ack_refuse(struct mr_xport *x, u32 msn, u8 code);
void mr_ack_refuse_late(struct mr_xport *x, u32 msn, u8 code, u8 path);
bool mr_ack_ce(const struct sk_buff *skb);
bool mr_ack_admit(struct mr_xport *x, const struct mr_pkt *pkt, __be16 sport);
void mr_ack_refuse_again(struct mr_xport *x, const struct mr_pkt *pkt,
			 __be16 sport);

#endif /* METAROCE_ACK_H */
