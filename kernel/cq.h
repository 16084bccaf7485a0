/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Completion queues: the verbs, and mr_cq_post() for every producer.
 */
#ifndef METAROCE_CQ_H
#define METAROCE_CQ_H

#include "metaroce.h"

int mr_cq_create(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		 struct ib_udata *udata);
int mr_cq_destroy(struct ib_cq *ibcq, struct ib_udata *udata);
int mr_cq_resize(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int mr_cq_poll(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int mr_cq_req_notify(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int mr_cq_post(struct mr_cq *cq, const struct ib_wc *wc, bool solicited);
void mr_cq_clean(struct mr_cq *cq, const struct ib_qp *qp);

#endif /* METAROCE_CQ_H */
