/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Unreliable datagram QPs (and QP1): datagrams sent and received.
 */
#ifndef METAROCE_UD_H
#define METAROCE_UD_H

#include <linux/skbuff.h>

#include "metaroce.h"

#include "proto/wire.h"

void mr_ud_qp_init(struct mr_qp *qp);
void mr_ud_qp_fini(struct mr_qp *qp);
void mr_ud_kick(struct mr_qp *qp);
void mr_ud_rcv(struct mr_qp *qp, struct sk_buff *skb,
	       const struct mr_pkt *pkt);

#if IS_ENABLED(CONFIG_KUNIT)
enum rdma_network_type mr_ud_grh(struct sk_buff *skb,
				 union rdma_network_hdr *grh);
#endif

#endif /* METAROCE_UD_H */
