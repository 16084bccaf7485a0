/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Work queues: the rings of WQEs that QPs (send and receive queues), SRQs
 * and the responder's bound receives share, their flush with
 * IB_WC_WR_FLUSH_ERR, and the QP state, which their locks guard.
 */
#ifndef METAROCE_WQ_H
#define METAROCE_WQ_H

#include "metaroce.h"

static inline void *mr_wq_slot(struct mr_wq *wq, u32 i)
{
	return wq->buf + (size_t)(i % wq->depth) * wq->stride;
}

/* Which of a QP's two queues a call is about. */
enum mr_wq_kind {
	MR_WQ_SQ,
	MR_WQ_RQ,
};

/* Whether WQEs of the QP's queue @kind complete as flushed in @state. */
static inline bool mr_wq_flushes(enum ib_qp_state state, enum mr_wq_kind kind)
{
	return state == IB_QPS_ERR || (kind == MR_WQ_SQ && state == IB_QPS_SQE);
}

/*
 * Under @wq's lock: its oldest WQE is done with. A mapped ring gets its
 * slot back: consumer counts the WQEs retired, so that producer minus
 * consumer is what user space has outstanding.
 */
static inline void mr_wq_pop(struct mr_wq *wq)
{
	wq->head = (wq->head + 1) % wq->depth;
	wq->count--;
	if (wq->uring)	/* the slot was read: the provider may reuse it */
		smp_store_release(&wq->uring->consumer, wq->ucons - wq->count);
}

/* How many WQEs @wq holds now, read under its lock. */
static inline u32 mr_wq_count(struct mr_wq *wq)
{
	unsigned long flags;
	u32 count;

	spin_lock_irqsave(&wq->lock, flags);
	count = wq->count;
	spin_unlock_irqrestore(&wq->lock, flags);
	return count;
}

int mr_wq_init(struct mr_wq *wq, u32 depth, u32 max_sge, size_t stride);
int mr_wq_recv_add(struct ib_device *ibdev, struct mr_wq *rq,
		   const struct ib_recv_wr *wr, const char *owner, u32 num);
int mr_wq_map(struct mr_wq *wq, struct ib_udata *udata, u32 entries,
	      size_t stride);
int mr_wq_map_recv(struct mr_wq *rq, struct ib_udata *udata, u32 entries);
void mr_wq_unmap(struct mr_wq *wq);
bool mr_wq_pull(struct mr_dev *dev, struct mr_wq *rq);
void mr_wq_flush(struct mr_qp *qp, enum mr_wq_kind kind);
void mr_wq_set_state(struct mr_qp *qp, enum ib_qp_state state);

#endif /* METAROCE_WQ_H */
