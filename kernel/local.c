// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Local work requests: IB_WR_REG_MR and IB_WR_LOCAL_INV of kernel QPs, MW
 * binds and LOCAL_INV of user QPs (a driver method, since the POST_SEND
 * command takes neither). Nothing goes on the wire, so they run when
 * posted (mr.c and mw.c do the work). Their completions still keep post
 * order: each waits in a small ring until every send WQE posted before it
 * has completed (or been flushed).
 */
#define UVERBS_MODULE_NAME mr_local
#include <rdma/uverbs_named_ioctl.h>

#include "cq.h"
#include "local.h"
#include "mr.h"
#include "mw.h"

/* A local WR as posted, by a kernel consumer (@wr) or the provider (@uwr). */
struct mr_local_req {
	const struct ib_send_wr *wr;
	const struct metaroce_local_wr *uwr;
	u64 wr_id;
	enum ib_wc_opcode opcode;
	bool signaled;
};

/* @rc: an RC QP; others get no ring and refuse local WRs. */
int mr_local_init(struct mr_qp *qp, bool rc)
{
	struct mr_local *l = &qp->local;

	l->head = 0;
	l->count = 0;
	l->posted = 0;
	l->done = 0;
	l->draining = false;
	l->ring = NULL;
	if (!rc)
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
			.status = e.status,
		};

		if (qp->state == IB_QPS_ERR || qp->state == IB_QPS_SQE)
			wc.status = IB_WC_WR_FLUSH_ERR;
		else if (e.status != IB_WC_SUCCESS)
			wc.vendor_err = 1;

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

/* Run @req; 0 or -EINVAL / -ENOMEM with the reason logged. */
static int mr_local_run(struct mr_qp *qp, const struct mr_local_req *req)
{
	struct mr_dev *dev = to_mr_dev(qp->ibqp.device);
	const struct ib_send_wr *wr = req->wr;

	if (req->uwr && req->opcode == IB_WC_BIND_MW)
		return mr_mw_bind(qp, req->uwr);
	if (req->uwr)
		return mr_mr_invalidate(dev, qp->ibqp.pd, req->uwr->rkey, NULL);
	if (wr->opcode == IB_WR_REG_MR)
		return mr_mr_fast_reg(dev, qp->ibqp.pd, reg_wr(wr));
	return mr_mr_invalidate(dev, qp->ibqp.pd, wr->ex.invalidate_rkey,
				NULL);
}

/*
 * Post @req. Refused before RTS. In ERR or SQE it only completes, as
 * flushed. A kernel consumer's WR that fails is refused; a user QP's
 * completes with an error (as rxe: MW_BIND_ERR, or LOC_QP_OP_ERR for an
 * invalidation), signaled or not. Returns 0, -EINVAL (bad WR, wrong
 * state, not RC) or -ENOMEM (too many completions waiting).
 */
static int mr_local_queue(struct mr_qp *qp, const struct mr_local_req *req)
{
	enum ib_wc_status status = IB_WC_SUCCESS;
	struct mr_local *l = &qp->local;
	bool flushing, signal, ran = false;
	unsigned long flags;
	int err = 0;

	if (!l->ring) {
		ibdev_dbg(qp->ibqp.device, "QP %u: local WRs are for RC QPs\n",
			  qp->ibqp.qp_num);
		return -EINVAL;
	}
	/*
	 * A user QP's runs first, unlocked: a bind sleeps (user QPs post in
	 * process context). If the QP leaves RTS meanwhile, it completes as
	 * flushed all the same. With the ring full it does not run, and is
	 * refused below.
	 */
	if (req->uwr && READ_ONCE(qp->state) == IB_QPS_RTS &&
	    READ_ONCE(l->count) < qp->sq.depth) {
		ran = true;
		if (mr_local_run(qp, req))
			status = req->opcode == IB_WC_BIND_MW ?
					 IB_WC_MW_BIND_ERR :
					 IB_WC_LOC_QP_OP_ERR;
	}
	spin_lock_irqsave(&qp->sq.lock, flags);
	flushing = qp->state == IB_QPS_ERR || qp->state == IB_QPS_SQE;
	if (qp->state != IB_QPS_RTS && !flushing && !ran) {
		ibdev_dbg(qp->ibqp.device, "QP %u: post_send in state %d\n",
			  qp->ibqp.qp_num, qp->state);
		err = -EINVAL;
	} else if (l->count == qp->sq.depth) {
		ibdev_dbg(qp->ibqp.device, "QP %u: %u local completions waiting\n",
			  qp->ibqp.qp_num, l->count);
		err = -ENOMEM;
	} else if (!flushing && !req->uwr) {
		err = mr_local_run(qp, req);
	}
	signal = flushing || req->signaled || status != IB_WC_SUCCESS ||
		 qp->sq_sig_type == IB_SIGNAL_ALL_WR;
	if (!err && signal) {
		l->ring[(l->head + l->count) % qp->sq.depth] =
			(struct mr_local_wc){
				.wr_id = req->wr_id,
				.opcode = req->opcode,
				.status = status,
				.after = l->posted,
			};
		l->count++;
		mr_local_drain(qp, &flags);
	}
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	return err;
}

/**
 * mr_local_post() - post a local WR on a kernel QP
 * @qp: the QP
 * @wr: IB_WR_REG_MR or IB_WR_LOCAL_INV
 *
 * Returns 0, or the error that refuses it (see mr_local_queue()).
 */
int mr_local_post(struct mr_qp *qp, const struct ib_send_wr *wr)
{
	struct mr_local_req req = {
		.wr = wr,
		.wr_id = wr->wr_id,
		.opcode = wr->opcode == IB_WR_REG_MR ? IB_WC_REG_MR :
						       IB_WC_LOCAL_INV,
		.signaled = wr->send_flags & IB_SEND_SIGNALED,
	};

	return mr_local_queue(qp, &req);
}

/* METAROCE_METHOD_QP_LOCAL_WR: one bind or LOCAL_INV of a user QP. */
static int UVERBS_HANDLER(METAROCE_METHOD_QP_LOCAL_WR)(struct uverbs_attr_bundle *attrs)
{
	struct ib_qp *ibqp = uverbs_attr_get_obj(attrs,
						 METAROCE_ATTR_LOCAL_WR_QP);
	struct metaroce_local_wr uwr;
	struct mr_local_req req = { .uwr = &uwr };
	int err;

	if (IS_ERR(ibqp))
		return PTR_ERR(ibqp);
	err = uverbs_copy_from(&uwr, attrs, METAROCE_ATTR_LOCAL_WR_REQ);
	if (err)
		return err;
	if (uwr.opcode != METAROCE_LOCAL_WR_BIND_MW &&
	    uwr.opcode != METAROCE_LOCAL_WR_LOCAL_INV)
		return -EINVAL;
	req.wr_id = uwr.wr_id;
	req.opcode = uwr.opcode == METAROCE_LOCAL_WR_BIND_MW ? IB_WC_BIND_MW :
							       IB_WC_LOCAL_INV;
	req.signaled = uwr.send_flags & IB_SEND_SIGNALED;
	return mr_local_queue(container_of(ibqp, struct mr_qp, ibqp), &req);
}

DECLARE_UVERBS_NAMED_METHOD(METAROCE_METHOD_QP_LOCAL_WR,
			    UVERBS_ATTR_IDR(METAROCE_ATTR_LOCAL_WR_QP,
					    UVERBS_OBJECT_QP,
					    UVERBS_ACCESS_READ, UA_MANDATORY),
			    UVERBS_ATTR_PTR_IN(METAROCE_ATTR_LOCAL_WR_REQ,
					       UVERBS_ATTR_TYPE(struct metaroce_local_wr),
					       UA_MANDATORY));

ADD_UVERBS_METHODS(mr_qp_local_methods, UVERBS_OBJECT_QP,
		   &UVERBS_METHOD(METAROCE_METHOD_QP_LOCAL_WR));

const struct uapi_definition mr_local_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_QP, &mr_qp_local_methods),
	{}
};
