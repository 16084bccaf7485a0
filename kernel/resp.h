/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The responder: places what arrives, completes receives in MSN order,
 * executes READs and atomics, and records their responses.
 */
#ifndef METAROCE_RESP_H
#define METAROCE_RESP_H

#include <linux/skbuff.h>

#include "counters.h"
#include "xport.h"

void mr_resp_init(struct mr_xport *x);
void mr_resp_reset(struct mr_xport *x);
void mr_resp_free(struct mr_xport *x);
enum mr_xport_next mr_resp_rcv(struct mr_xport *x, struct sk_buff *skb,
			       const struct mr_pkt *pkt);

#endif /* METAROCE_RESP_H */
