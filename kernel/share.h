/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Congestion control, the receiver's side: the fair share of a device's
 * ingress that each connection sending to it gets, as a rate hint in its
 * ACKs.
 */
#ifndef METAROCE_SHARE_H
#define METAROCE_SHARE_H

#include "xport.h"

int mr_share_dev_init(struct mr_dev *dev);
void mr_share_dev_fini(struct mr_dev *dev);
void mr_share_link_speed(struct mr_dev *dev, u32 mbps);
u32 mr_share_active_kbps(struct mr_dev *dev);
void mr_share_init(struct mr_xport *x);
void mr_share_rx(struct mr_xport *x, u32 bytes, bool limited);
u32 mr_share_hint(struct mr_xport *x);
u32 mr_share_hello(struct mr_xport *x);
void mr_share_leave(struct mr_xport *x);
void mr_share_signal(struct mr_xport *x, enum mr_receiver_event ev);

#endif /* METAROCE_SHARE_H */
