/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Address handles, and a RoCE v2 address vector as a flow.
 */
#ifndef METAROCE_AH_H
#define METAROCE_AH_H

#include "metaroce.h"

int mr_ah_av_to_flow(struct mr_dev *dev, const struct rdma_ah_attr *ah,
		     struct mr_flow *flow);
int mr_ah_create(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		 struct ib_udata *udata);
int mr_ah_destroy(struct ib_ah *ibah, u32 flags);

#endif /* METAROCE_AH_H */
