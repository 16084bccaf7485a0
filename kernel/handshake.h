/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The connection tag handshake of an RC or UC transport (handshake.c),
 * around proto/hello.c: the tag drawn in RTR, the check of every packet
 * the peer's address sends, HELLOs received and the ones due. Called by
 * the transport's entry points, with the transport locked; when the peer
 * stays silent, the entry point fails the oldest WQE through the
 * completer.
 */
#ifndef METAROCE_HANDSHAKE_H
#define METAROCE_HANDSHAKE_H

#include "counters.h"
#include "xport.h"

void mr_handshake_init(struct mr_xport *x);
void mr_handshake_clear(struct mr_xport *x);
bool mr_handshake_check(struct mr_xport *x, const struct mr_pkt *pkt,
			__be16 sport, enum mr_counter *drop);
void mr_handshake_rcv(struct mr_xport *x, const struct mr_pkt *pkt,
		      __be16 sport);
bool mr_handshake_send(struct mr_xport *x);

#endif /* METAROCE_HANDSHAKE_H */
