/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Memory regions: registration, keys, lookups, and the copies the
 * transport and the datagrams make into and out of them.
 */
#ifndef METAROCE_MR_H
#define METAROCE_MR_H

#include "metaroce.h"

struct mr_mr;

void mr_mr_dev_init(struct mr_dev *dev);
void mr_mr_dev_fini(struct mr_dev *dev);
struct ib_mr *mr_mr_get_dma(struct ib_pd *ibpd, int access);
struct ib_mr *mr_mr_reg_user(struct ib_pd *ibpd, u64 start, u64 length,
			     u64 iova, int access, struct ib_udata *udata);
int mr_mr_dereg(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *mr_mr_alloc_fast(struct ib_pd *ibpd, enum ib_mr_type type,
			       u32 max_num_sg);
int mr_mr_map_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		 unsigned int *sg_offset);
int mr_mr_fast_reg(struct mr_dev *dev, struct ib_pd *pd,
		   const struct ib_reg_wr *wr);
int mr_mr_invalidate(struct mr_dev *dev, struct ib_pd *pd, u32 key,
		     const struct mr_qp *rqp);
struct mr_mr *mr_mr_get(struct mr_dev *dev, struct ib_pd *pd, u32 key,
			const struct mr_qp *rqp);
void mr_mr_put(struct mr_mr *mr);
struct mr_mr *mr_mr_bind_window(struct mr_dev *dev, struct ib_pd *pd,
				u32 lkey, u64 iova, u64 len, u32 access,
				u32 rkey, u32 qpn);
void mr_mr_unbind_window(struct mr_mr *view);
int mr_mr_copy_to(struct mr_mr *mr, u64 iova, const void *src, u64 len,
		  u32 need);
int mr_mr_copy_from(struct mr_mr *mr, u64 iova, void *dst, u64 len, u32 need);
int mr_mr_check(struct mr_mr *mr, u64 iova, u64 len, u32 need);
int mr_mr_atomic(struct mr_mr *mr, u64 iova, bool cmp_swap, u64 swap_add,
		 u64 compare, u64 *orig);
/* Which way mr_mr_sgl_copy() copies: into the SGE list's memory, or out. */
enum mr_mr_copy_dir {
	MR_COPY_TO_SGL,
	MR_COPY_FROM_SGL,
};

int mr_mr_sgl_copy(struct mr_dev *dev, struct ib_pd *pd,
		   const struct mr_sge *sge, u32 num_sge, u32 off, void *buf,
		   u32 len, enum mr_mr_copy_dir dir);

#endif /* METAROCE_MR_H */
