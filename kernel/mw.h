/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Memory windows, types 1 and 2B, in the MRs' key space.
 */
#ifndef METAROCE_MW_H
#define METAROCE_MW_H

#include "metaroce.h"

int mr_mw_alloc(struct ib_mw *ibmw, struct ib_udata *udata);
int mr_mw_dealloc(struct ib_mw *ibmw);
struct mr_mr *mr_mw_window(struct mr_mw_key *k);
int mr_mw_bind(struct mr_qp *qp, const struct metaroce_local_wr *req);
int mr_mw_invalidate(struct mr_dev *dev, struct mr_mw_key *k,
		     struct ib_pd *pd, u32 key, const struct mr_qp *rqp);

#endif /* METAROCE_MW_H */
