// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Work queues: rings of WQEs of @stride bytes in kernel memory, under a
 * spin lock usable from softirq. QPs have a send and a receive ring, SRQs
 * a receive ring, and a QP on an SRQ a ring of the receives it has bound
 * (srq.c). Moving a QP to ERR completes every queued WQE with
 * IB_WC_WR_FLUSH_ERR, in post order. The QP state is written under both
 * queue locks of the QP, so that either guards it for readers.
 */
#include <kunit/visibility.h>
#include <linux/slab.h>

#include "cq.h"
#include "local.h"
#include "opcode.h"
#include "wq.h"

int mr_wq_init(struct mr_wq *wq, u32 depth, u32 max_sge, size_t stride)
{
	wq->buf = kvcalloc(depth, stride, GFP_KERNEL_ACCOUNT);
	if (!wq->buf)
		return -ENOMEM;
	wq->stride = stride;
	wq->depth = depth;
	wq->max_sge = max_sge;
	wq->head = 0;
	wq->count = 0;
	wq->flushing = false;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_wq_init);

/*
 * Check @wr and append it to the receive ring @rq, under its lock. Shared
 * by QPs and SRQs: @owner and @num name the queue in debug messages.
 */
int mr_wq_recv_add(struct ib_device *ibdev, struct mr_wq *rq,
		   const struct ib_recv_wr *wr, const char *owner, u32 num)
{
	struct mr_recv_wqe *wqe;
	u64 len = 0;
	int i;

	if (wr->num_sge < 0 || wr->num_sge > rq->max_sge) {
		ibdev_dbg(ibdev, "%s %u: %d SGEs, max_recv_sge is %u\n", owner,
			  num, wr->num_sge, rq->max_sge);
		return -EINVAL;
	}
	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	if (len > MR_MAX_MSG_SIZE) {
		ibdev_dbg(ibdev, "%s %u: receive of %llu bytes exceeds %lu\n",
			  owner, num, len, MR_MAX_MSG_SIZE);
		return -EINVAL;
	}
	if (rq->count == rq->depth) {
		ibdev_dbg(ibdev, "%s %u: receive queue full (%u)\n", owner, num,
			  rq->depth);
		return -ENOMEM;
	}
	wqe = mr_wq_slot(rq, rq->head + rq->count);
	wqe->wr_id = wr->wr_id;
	wqe->num_sge = wr->num_sge;
	wqe->length = len;
	for (i = 0; i < wr->num_sge; i++) {
		wqe->sge[i].addr = wr->sg_list[i].addr;
		wqe->sge[i].length = wr->sg_list[i].length;
		wqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
	rq->count++;
	return 0;
}

/*
 * Complete every WQE of the QP's queue @kind (MR_WQ_SQ or MR_WQ_RQ) with
 * IB_WC_WR_FLUSH_ERR while the QP is in a flushing state, oldest first,
 * whatever the WR's signalling. One context flushes a queue at a time and
 * the others leave their WQEs to it, so completions stay in post order.
 * The queue lock is dropped around mr_cq_post(), whose handler may post.
 */
void mr_wq_flush(struct mr_qp *qp, enum mr_wq_kind kind)
{
	bool send = kind == MR_WQ_SQ;
	struct mr_wq *wq = send ? &qp->sq : &qp->rq;
	struct mr_cq *cq = send ? qp->scq : qp->rcq;
	unsigned long flags;
	struct ib_wc wc;

	spin_lock_irqsave(&wq->lock, flags);
	if (wq->flushing)
		goto out;
	wq->flushing = true;
	while (wq->count && mr_wq_flushes(qp->state, kind)) {
		memset(&wc, 0, sizeof(wc));
		wc.qp = &qp->ibqp;
		wc.status = IB_WC_WR_FLUSH_ERR;
		if (send) {
			struct mr_send_wqe *wqe = mr_wq_slot(wq, wq->head);

			wc.wr_id = wqe->wr_id;
			wc.opcode = mr_opcode_get(wqe->opcode)->wc;
		} else {
			struct mr_recv_wqe *wqe = mr_wq_slot(wq, wq->head);

			wc.wr_id = wqe->wr_id;
			wc.opcode = IB_WC_RECV;
		}
		wq->head = (wq->head + 1) % wq->depth;
		wq->count--;
		spin_unlock_irqrestore(&wq->lock, flags);
		mr_cq_post(cq, &wc, false);
		if (send)
			mr_local_sq_done(qp);
		spin_lock_irqsave(&wq->lock, flags);
	}
	wq->flushing = false;
out:
	spin_unlock_irqrestore(&wq->lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(mr_wq_flush);

/*
 * Set the QP state, with sq.lock held; rq.lock is taken too, as either
 * lock guards it for readers. RESET empties both rings.
 */
void mr_wq_set_state(struct mr_qp *qp, enum ib_qp_state state)
{
	lockdep_assert_held(&qp->sq.lock);
	spin_lock(&qp->rq.lock);
	qp->state = state;
	if (state == IB_QPS_RESET) {
		qp->sq.head = 0;
		qp->sq.count = 0;
		qp->rq.head = 0;
		qp->rq.count = 0;
	}
	spin_unlock(&qp->rq.lock);
}
