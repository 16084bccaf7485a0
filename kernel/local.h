/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Local work requests: REG_MR and LOCAL_INV of kernel QPs, MW binds
 * and LOCAL_INV of user QPs, with completions in post order.
 */
#ifndef METAROCE_LOCAL_H
#define METAROCE_LOCAL_H

#include "metaroce.h"

extern const struct uapi_definition mr_local_uapi_defs[];

int mr_local_init(struct mr_qp *qp, bool rc);
void mr_local_fini(struct mr_qp *qp);
int mr_local_post(struct mr_qp *qp, const struct ib_send_wr *wr);
void mr_local_sq_done(struct mr_qp *qp);

#endif /* METAROCE_LOCAL_H */
