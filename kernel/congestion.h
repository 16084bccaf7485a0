/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Congestion control of a connection, the sender's side: windows per path
 * and per connection, and pacing, around the arithmetic of proto/cc.c.
 */
#ifndef METAROCE_CONGESTION_H
#define METAROCE_CONGESTION_H

#include "xport.h"

u32 mr_congestion_cc_stamp(void);
bool mr_congestion_dev_enabled(const struct mr_dev_settings *set);
void mr_congestion_defaults(struct mr_cc_params *prm);
void mr_congestion_start(struct mr_xport *x);
void mr_congestion_path_restart(struct mr_xport *x, u32 id);
void mr_congestion_ack(struct mr_xport *x, u32 id,
		       const struct mr_sack_res *res, bool spurious,
		       u64 rtt_ns, u64 acked_order,
		       const struct mr_ack_hdr *ack);
void mr_congestion_timeout(struct mr_xport *x, u32 id);
bool mr_congestion_room(const struct mr_xport *x);
bool mr_congestion_wait(struct mr_xport *x);
void mr_congestion_sent(struct mr_xport *x, u32 bytes);

#endif /* METAROCE_CONGESTION_H */
