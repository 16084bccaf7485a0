/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Queue pairs: numbers, the state machine, posting, and the lookup by
 * QPN that the receive path uses.
 */
#ifndef METAROCE_QP_H
#define METAROCE_QP_H

#include "metaroce.h"

void mr_qp_dev_init(struct mr_dev *dev);
void mr_qp_dev_fini(struct mr_dev *dev);
unsigned int mr_qp_count_non_gsi(struct mr_dev *dev);
int mr_qp_create(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		 struct ib_udata *udata);
int mr_qp_modify(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		 struct ib_udata *udata);
int mr_qp_query(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		struct ib_qp_init_attr *init);
int mr_qp_destroy(struct ib_qp *ibqp, struct ib_udata *udata);
int mr_qp_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int mr_qp_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);
struct mr_qp *mr_qp_get(struct mr_dev *dev, u32 qpn);
struct mr_qp *mr_qp_get_next(struct mr_dev *dev, u32 *qpn);
void mr_qp_put(struct mr_qp *qp);

/*
 * A fatal error of the transport of @qp (RC, UC): qp.c's error work moves
 * the QP to ERR from process context, since modify_qp sleeps. Any context.
 */
static inline void mr_qp_fatal(struct mr_qp *qp)
{
	schedule_work(&qp->err_work);
}

#endif /* METAROCE_QP_H */
