/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared receive queues, and the binding of their WQEs to a QP's RSNs.
 */
#ifndef METAROCE_SRQ_H
#define METAROCE_SRQ_H

#include "metaroce.h"

int mr_srq_create(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		  struct ib_udata *udata);
int mr_srq_modify(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		  enum ib_srq_attr_mask mask, struct ib_udata *udata);
int mr_srq_query(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int mr_srq_destroy(struct ib_srq *ibsrq, struct ib_udata *udata);
int mr_srq_post_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		     const struct ib_recv_wr **bad_wr);
bool mr_srq_bind(struct mr_qp *qp, u32 rsn_head, u32 rsn);
int mr_srq_qp_init(struct mr_qp *qp, struct ib_srq *ibsrq);
void mr_srq_qp_error(struct mr_qp *qp);

#if IS_ENABLED(CONFIG_KUNIT)
size_t mr_srq_stride(u32 max_sge);
bool mr_srq_take(struct mr_srq *srq, struct mr_recv_wqe *dst,
		 bool *limit_hit);
#endif

#endif /* METAROCE_SRQ_H */
