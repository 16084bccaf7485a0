/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The requester: new requests out of the send ring, and the responses this
 * end owes, over the connection's paths. proto/requester.c alone writes
 * struct mr_requester; the completer and the entry points report to it
 * through its functions (proto/requester.h).
 */
#ifndef METAROCE_REQ_H
#define METAROCE_REQ_H

#include "xport.h"

void mr_req_start(struct mr_xport *x, bool early);
void mr_req_rts(struct mr_xport *x);
void mr_req_stop(struct mr_xport *x);
int mr_req_create(struct mr_xport *x, u32 depth);
void mr_req_free(struct mr_xport *x);
int mr_req_streams(struct mr_xport *x, u32 n);
void mr_req_account(struct mr_xport *x);
int mr_req_submit(struct mr_qp *qp, const struct mr_send_wqe *wqe);
void mr_req_push(struct mr_xport *x);
void mr_req_respond(struct mr_xport *x);

#endif /* METAROCE_REQ_H */
