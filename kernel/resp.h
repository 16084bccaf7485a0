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

/* The fields of a request that the message layer uses. */
struct mr_resp_info {
	u32 msn;
	u32 rsn;
	u32 imm;
	u32 length;
	u32 offset;
	bool consume;	/* takes a posted receive */
};

void mr_resp_init(struct mr_xport *x);
void mr_resp_reset(struct mr_xport *x);
void mr_resp_free(struct mr_xport *x);
bool mr_resp_pending(struct mr_xport *x);
void mr_resp_take(struct mr_xport *x, struct mr_tx_pkt *tp);
enum mr_xport_next mr_resp_rcv(struct mr_xport *x, struct sk_buff *skb,
			       const struct mr_pkt *pkt);

#if IS_ENABLED(CONFIG_KUNIT)
u32 mr_resp_recv(const struct mr_xport *x, u32 rsn);
u8 mr_resp_fail(struct mr_xport *x, struct mr_rx_msg *m, u8 nak,
		enum mr_counter counter, enum ib_wc_status status,
		bool *complete);
int mr_resp_msg_init(struct mr_xport *x, struct mr_rx_msg *m,
		     const struct mr_pkt *pkt, const struct mr_resp_info *ri);
void mr_resp_msg_free(struct mr_xport *x, struct mr_rx_msg *m);
#endif

#endif /* METAROCE_RESP_H */
