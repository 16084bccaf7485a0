/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The completer: the requester's side of reliability. ACKs and NAKs, the
 * resends they call for, the completion of send WQEs in order, READ and
 * atomic responses, and what a path's timer means when it fires.
 */
#ifndef METAROCE_COMP_H
#define METAROCE_COMP_H

#include "xport.h"

enum mr_xport_next mr_comp_ack_rcv(struct mr_xport *x,
				   const struct mr_pkt *pkt);
void mr_comp_nak_rcv(struct mr_xport *x, const struct mr_pkt *pkt);
enum mr_xport_next mr_comp_resp_in(struct mr_xport *x, struct sk_buff *skb,
				   const struct mr_pkt *pkt);
void mr_comp_complete(struct mr_xport *x);
void mr_comp_fail(struct mr_xport *x, u32 msn, enum ib_wc_status status);
void mr_comp_retry_exceeded(struct mr_xport *x);
int mr_comp_init(void);
void mr_comp_exit(void);

#endif /* METAROCE_COMP_H */
