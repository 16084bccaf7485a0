/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The top of the receive path: every datagram the sockets get is checked,
 * decoded and handed to the engine that owns it.
 */
#ifndef METAROCE_RECEIVE_H
#define METAROCE_RECEIVE_H

#include <linux/skbuff.h>
#include <net/sock.h>

int mr_receive_udp(struct sock *sk, struct sk_buff *skb);

#endif /* METAROCE_RECEIVE_H */
