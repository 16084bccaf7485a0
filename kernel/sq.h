/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The send queue's way in: send WRs checked and built into WQEs, whether a
 * kernel consumer or the POST_SEND command posts them (qp.c) or a user
 * QP's provider writes them into the send ring it maps.
 */
#ifndef METAROCE_SQ_H
#define METAROCE_SQ_H

#include "metaroce.h"

int mr_sq_build(struct mr_qp *qp, const struct ib_send_wr *wr, bool user,
		struct mr_send_wqe *wqe);
int mr_sq_check_sges(struct mr_qp *qp, const struct mr_send_wqe *wqe);
int mr_sq_map(struct mr_qp *qp, struct ib_udata *udata);
void mr_sq_unmap(struct mr_qp *qp);
void mr_sq_pull(struct mr_qp *qp);

#endif /* METAROCE_SQ_H */
