/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A QP as the rdma tool shows it (restrack.c): the transport's details in
 * `rdma resource show qp -dd`, and the per-QP counters of `rdma statistic
 * qp` for QPs bound to a counter.
 */
#ifndef METAROCE_RESTRACK_H
#define METAROCE_RESTRACK_H

#include "counters.h"

void mr_restrack_dev_init(struct mr_dev *dev);
void mr_restrack_dev_fini(struct mr_dev *dev);
int mr_restrack_fill_qp(struct sk_buff *msg, struct ib_qp *ibqp);
struct rdma_hw_stats *
mr_restrack_counter_alloc_stats(struct rdma_counter *counter);
int mr_restrack_counter_bind_qp(struct rdma_counter *counter,
				struct ib_qp *ibqp);
int mr_restrack_counter_unbind_qp(struct ib_qp *ibqp);
int mr_restrack_counter_update_stats(struct rdma_counter *counter);
int mr_restrack_counter_dealloc(struct rdma_counter *counter);

#endif /* METAROCE_RESTRACK_H */
