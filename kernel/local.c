// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Local work requests of kernel QPs: IB_WR_REG_MR and IB_WR_LOCAL_INV.
 * Nothing goes on the wire, so they run when posted (mr.c does the work).
 * Their completions still keep post order: each waits in a small ring
 * until every send WQE posted before it has completed (or been flushed).
 */
#include "metaroce.h"

/* @kernel_rc: a kernel RC QP; others get no ring and refuse local WRs. */
int mr_local_init(struct mr_qp *qp, bool kernel_rc)
{
	struct mr_local *l = &qp->local;

	l->head = 0;
	l->count = 0;
	l->posted = 0;
	l->done = 0;
	l->draining = false;
	l->ring = NULL;
	if (!kernel_rc)
		return 0;
	l->ring = kvcalloc(qp->sq.depth, sizeof(*l->ring), GFP_KERNEL);
	return l->ring ? 0 : -ENOMEM;
}

void mr_local_fini(struct mr_qp *qp)
{
	kvfree(qp->local.ring);
	qp->local.ring = NULL;
}

/*
 * Post the completions whose send WQEs before them have all completed,
 * oldest first. Called and returns with sq.lock held (@flags); drops it
 * around mr_cq_post(), whose handler may post. One context drains at a
 * time, and the others leave their entries to it, so the order holds.
 */
static void mr_local_drain(struct mr_qp *qp, unsigned long *flags)
{
	struct mr_local *l = &qp->local;

	if (l->draining)
		return;
	l->draining = true;
	while (l->count && l->ring[l->head].after == l->done) {
		struct mr_local_wc e = l->ring[l->head];
		struct ib_wc wc = {
			.wr_id = e.wr_id,
			.opcode = e.opcode,
			.qp = &qp->ibqp,
			.port_num = MR_PORT,
			.status = qp->state == IB_QPS_ERR ||
						  qp->state == IB_QPS_SQE ?
					  IB_WC_WR_FLUSH_ERR :
					  IB_WC_SUCCESS,
		};

		l->head = (l->head + 1) % qp->sq.depth;
		l->count--;
		spin_unlock_irqrestore(&qp->sq.lock, *flags);
		mr_cq_post(qp->scq, &wc, false);
		spin_lock_irqsave(&qp->sq.lock, *flags);
	}
	l->draining = false;
}

/* A send WQE has been completed (its completion, if any, is posted). */
void mr_local_sq_done(struct mr_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq.lock, flags);
	qp->local.done++;
	mr_local_drain(qp, &flags);
	spin_unlock_irqrestore(&qp->sq.lock, flags);
}

/* Run REG_MR or LOCAL_INV @wr; 0 or -EINVAL with the reason logged. */
static int mr_local_run(struct mr_qp *qp, const struct ib_send_wr *wr)
{
	struct mr_dev *dev = to_mr_dev(qp->ibqp.device);

	if (wr->opcode == IB_WR_REG_MR)
		return mr_mr_fast_reg(dev, qp->ibqp.pd, reg_wr(wr));
	return mr_mr_invalidate(dev, qp->ibqp.pd, wr->ex.invalidate_rkey);
}

/**
 * mr_local_post() - post a local WR on a kernel QP
 * @qp: the QP
 * @wr: IB_WR_REG_MR or IB_WR_LOCAL_INV
 *
 * Refused before RTS. In ERR or SQE it only completes, as flushed.
 * Returns 0, -EINVAL (bad WR, wrong state, user QP) or -ENOMEM (too many
 * completions waiting).
 */
int mr_local_post(struct mr_qp *qp, const struct ib_send_wr *wr)
{
	struct mr_local *l = &qp->local;
	bool flushing, signal;
	unsigned long flags;
	int err = 0;

	if (!l->ring) {
		ibdev_dbg(qp->ibqp.device, "QP %u: opcode %d is for kernel RC QPs\n",
			  qp->ibqp.qp_num, wr->opcode);
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->sq.lock, flags);
	flushing = qp->state == IB_QPS_ERR || qp->state == IB_QPS_SQE;
	if (qp->state != IB_QPS_RTS && !flushing) {
		ibdev_dbg(qp->ibqp.device, "QP %u: post_send in state %d\n",
			  qp->ibqp.qp_num, qp->state);
		err = -EINVAL;
	} else if (l->count == qp->sq.depth) {
		ibdev_dbg(qp->ibqp.device, "QP %u: %u local completions waiting\n",
			  qp->ibqp.qp_num, l->count);
		err = -ENOMEM;
	} else if (!flushing) {
		err = mr_local_run(qp, wr);
	}
	signal = flushing || (wr->send_flags & IB_SEND_SIGNALED) ||
		 qp->sq_sig_type == IB_SIGNAL_ALL_WR;
	if (!err && signal) {
		l->ring[(l->head + l->count) % qp->sq.depth] =
			(struct mr_local_wc){
				.wr_id = wr->wr_id,
				.opcode = wr->opcode == IB_WR_REG_MR ?
						  IB_WC_REG_MR :
						  IB_WC_LOCAL_INV,
				.after = l->posted,
			};
		l->count++;
		mr_local_drain(qp, &flags);
	}
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	return err;
}
