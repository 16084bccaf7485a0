// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues. An SRQ is a ring of receive WQEs (struct
 * mr_recv_wqe, as in a QP's RQ) that any number of QPs draw from.
 *
 * A SEND names its receive by RSN, and the packets of different messages
 * arrive in any order, so a QP cannot simply take "the next" SRQ WQE when
 * a packet arrives: it binds SRQ WQEs to its RSNs in RSN order. The QP's
 * own qp->rq is then a small ring of bound receives (bound ring), indexed
 * from the responder's rsn_head exactly like a plain RQ, so placement and
 * completion (resp.c) do not know about SRQs. WQEs still in the SRQ belong
 * to it: a QP that fails flushes only the WQEs it has bound.
 *
 * The limit event: modify_srq(IB_SRQ_LIMIT) arms it; the first time the
 * WQE count drops below the limit, IB_EVENT_SRQ_LIMIT_REACHED fires and
 * the limit goes back to 0 (disarmed).
 *
 * One QP binds at most mr_srq_hold_max() WQEs: a message binds every RSN
 * before its own, and a peer that never finishes its oldest message keeps
 * them bound while its QP lives. In-order IB RC lets a peer hold one; we
 * allow the reordering of many paths, but never more than half the SRQ,
 * so that one QP's peer cannot drain it for the others. A message beyond
 * is refused with an RNR NAK and comes back after the RNR timer.
 *
 * Lock order: the QP's rq.lock, then the SRQ's lock (mr_srq_bind()).
 * ib_core refuses to destroy an SRQ while a QP uses it (usecnt).
 */
#include <kunit/visibility.h>
#include <linux/log2.h>
#include <linux/slab.h>

#include "counters.h"
#include "mmap.h"
#include "srq.h"
#include "wq.h"
#include "xport.h"

static inline struct mr_srq *to_mr_srq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct mr_srq, ibsrq);
}

VISIBLE_IF_KUNIT size_t mr_srq_stride(u32 max_sge)
{
	return struct_size((struct mr_recv_wqe *)NULL, sge, max_sge);
}
EXPORT_SYMBOL_IF_KUNIT(mr_srq_stride);

static int mr_srq_check_size(struct ib_device *ibdev, u32 max_wr)
{
	if (max_wr < 1 || max_wr > MR_MAX_SRQ_WR) {
		ibdev_dbg(ibdev, "SRQ size %u outside 1..%u\n", max_wr,
			  MR_MAX_SRQ_WR);
		return -EINVAL;
	}
	return 0;
}

/*
 * A user SRQ's ring, if its provider asks for it (an older one sends no
 * request and posts by command). Its slots are fixed for the SRQ's life;
 * grown past them, the SRQ takes receives by command.
 */
static int mr_srq_map_ring(struct mr_srq *srq, struct ib_udata *udata)
{
	struct metaroce_create_srq_resp resp = {};
	struct mr_wq *rq = &srq->rq;
	u32 want;
	int err;

	if (!udata || !udata->inlen)
		return 0;
	err = mr_mmap_read_request(srq->ibsrq.device, udata, METAROCE_SRQ_RING,
				   &want, NULL);
	if (err)
		return err;
	if (want) {
		if (udata->outlen < sizeof(resp))
			return -EINVAL;
		err = mr_wq_map_recv(rq, udata, roundup_pow_of_two(rq->depth));
		if (err)
			return err;
		resp = (struct metaroce_create_srq_resp) {
			.mmap_offset = mr_mmap_offset(rq->map),
			.mmap_size = rq->map->size,
			.flags = METAROCE_SRQ_RING,
			.entries = rq->uentries,
			.stride = rq->ustride,
			.max_sge = rq->max_sge,
		};
	}
	err = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
	if (err)
		mr_wq_unmap(rq);
	return err;
}

int mr_srq_create(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		  struct ib_udata *udata)
{
	struct mr_dev *dev = to_mr_dev(ibsrq->device);
	struct mr_srq *srq = to_mr_srq(ibsrq);
	struct ib_srq_attr *attr = &init->attr;
	u32 max_sge;
	int err;

	if (init->srq_type != IB_SRQT_BASIC) {
		ibdev_dbg(&dev->ib_dev, "SRQ type %d not supported (basic only)\n",
			  init->srq_type);
		return -EOPNOTSUPP;
	}
	err = mr_srq_check_size(&dev->ib_dev, attr->max_wr);
	if (err)
		return err;
	if (attr->max_sge > MR_MAX_SGE) {
		ibdev_dbg(&dev->ib_dev, "SRQ with %u SGEs, max_srq_sge is %u\n",
			  attr->max_sge, MR_MAX_SGE);
		return -EINVAL;
	}
	if (atomic_inc_return(&dev->num_srq) > MR_MAX_SRQ) {
		ibdev_dbg(&dev->ib_dev, "SRQ limit of %u reached\n",
			  MR_MAX_SRQ);
		err = -ENOMEM;
		goto err_count;
	}
	max_sge = max(attr->max_sge, 1U);
	err = mr_wq_init(&srq->rq, attr->max_wr, max_sge,
			 mr_srq_stride(max_sge));
	if (err)
		goto err_count;
	err = mr_srq_map_ring(srq, udata);
	if (err)
		goto err_ring;
	spin_lock_init(&srq->rq.lock);
	/* The limit is armed by modify_srq only: create ignores it. */
	srq->limit = 0;
	attr->max_sge = max_sge;
	attr->srq_limit = 0;
	return 0;

err_ring:
	kvfree(srq->rq.buf);
err_count:
	atomic_dec(&dev->num_srq);
	return err;
}

int mr_srq_destroy(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct mr_srq *srq = to_mr_srq(ibsrq);

	mr_wq_unmap(&srq->rq);
	kvfree(srq->rq.buf);
	atomic_dec(&to_mr_dev(ibsrq->device)->num_srq);
	return 0;
}

/* Change the ring's capacity, keeping its WQEs in order (like resize_cq). */
static int mr_srq_resize(struct mr_srq *srq, u32 max_wr)
{
	struct ib_device *ibdev = srq->ibsrq.device;
	struct mr_wq *rq = &srq->rq;
	unsigned long flags;
	void *buf, *old;
	u32 i;
	int err;

	err = mr_srq_check_size(ibdev, max_wr);
	if (err)
		return err;
	buf = kvcalloc(max_wr, rq->stride, GFP_KERNEL_ACCOUNT);
	if (!buf)
		return -ENOMEM;

	spin_lock_irqsave(&rq->lock, flags);
	/*
	 * Every WQE outstanding into count, in order: a provider that grows
	 * the SRQ past its ring's slots posts by command from now on.
	 */
	mr_wq_pull(to_mr_dev(ibdev), rq);
	if (rq->count > max_wr || srq->limit > max_wr) {
		spin_unlock_irqrestore(&rq->lock, flags);
		kvfree(buf);
		ibdev_dbg(ibdev, "SRQ resize to %u refused: it holds %u WQEs, limit %u\n",
			  max_wr, rq->count, srq->limit);
		return -EINVAL;
	}
	for (i = 0; i < rq->count; i++)
		memcpy(buf + (size_t)i * rq->stride,
		       mr_wq_slot(rq, rq->head + i), rq->stride);
	old = rq->buf;
	rq->buf = buf;
	rq->depth = max_wr;
	rq->head = 0;
	spin_unlock_irqrestore(&rq->lock, flags);

	kvfree(old);
	return 0;
}

int mr_srq_modify(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		  enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct mr_srq *srq = to_mr_srq(ibsrq);
	unsigned long flags;
	int err = 0;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT)) {
		ibdev_dbg(ibsrq->device, "SRQ attribute mask %#x not supported\n",
			  mask);
		return -EINVAL;
	}
	if (mask & IB_SRQ_MAX_WR) {
		err = mr_srq_resize(srq, attr->max_wr);
		if (err)
			return err;
	}
	if (mask & IB_SRQ_LIMIT) {
		spin_lock_irqsave(&srq->rq.lock, flags);
		if (attr->srq_limit > srq->rq.depth) {
			ibdev_dbg(ibsrq->device, "SRQ limit %u above its size %u\n",
				  attr->srq_limit, srq->rq.depth);
			err = -EINVAL;
		} else {
			srq->limit = attr->srq_limit;
		}
		spin_unlock_irqrestore(&srq->rq.lock, flags);
	}
	return err;
}

int mr_srq_query(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct mr_srq *srq = to_mr_srq(ibsrq);
	unsigned long flags;

	spin_lock_irqsave(&srq->rq.lock, flags);
	attr->max_wr = srq->rq.depth;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = srq->limit;
	spin_unlock_irqrestore(&srq->rq.lock, flags);
	return 0;
}

/* Queue receive WRs; any context. */
int mr_srq_post_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		     const struct ib_recv_wr **bad_wr)
{
	struct mr_srq *srq = to_mr_srq(ibsrq);
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&srq->rq.lock, flags);
	for (; wr; wr = wr->next) {
		err = mr_wq_recv_add(ibsrq->device, &srq->rq, wr, "SRQ", 0);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	spin_unlock_irqrestore(&srq->rq.lock, flags);
	return err;
}

static void mr_srq_event(struct mr_srq *srq, enum ib_event_type type)
{
	struct ib_srq *ibsrq = &srq->ibsrq;
	struct ib_event ev = {
		.device = ibsrq->device,
		.element.srq = ibsrq,
		.event = type,
	};

	if (ibsrq->event_handler)
		ibsrq->event_handler(&ev, ibsrq->srq_context);
}

/*
 * Move the oldest WQE of @srq to @dst (a slot of a bound ring of the same
 * max_sge). Returns false if the SRQ is empty. Sets *limit_hit when this
 * take crossed the armed limit, which disarms it.
 */
VISIBLE_IF_KUNIT bool mr_srq_take(struct mr_srq *srq, struct mr_recv_wqe *dst,
				  bool *limit_hit)
{
	struct mr_wq *rq = &srq->rq;
	struct mr_recv_wqe *wqe;
	unsigned long flags;

	spin_lock_irqsave(&rq->lock, flags);
	/* Every time, so that count, which the limit reads, is exact. */
	if (!mr_wq_pull(to_mr_dev(srq->ibsrq.device), rq) && !srq->ring_error)
		srq->ring_error = MR_SRQ_RING_ERROR;
	if (!rq->count) {
		spin_unlock_irqrestore(&rq->lock, flags);
		return false;
	}
	wqe = mr_wq_slot(rq, rq->head);
	memcpy(dst, wqe, mr_srq_stride(wqe->num_sge));
	mr_wq_pop(rq);
	if (srq->limit && rq->count < srq->limit) {
		srq->limit = 0;
		*limit_hit = true;
	}
	spin_unlock_irqrestore(&rq->lock, flags);
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(mr_srq_take);

/* The most of @srq's WQEs one QP may have bound (see the top). */
static u32 mr_srq_hold_max(const struct mr_srq *srq)
{
	return clamp_t(u32, READ_ONCE(srq->rq.depth) / 2, 1, MR_SRQ_HOLD_MAX);
}

/**
 * mr_srq_bind() - bind SRQ WQEs to a QP's RSNs, in RSN order, up to @rsn
 * @qp: a QP created with an SRQ; its rq is the ring of bound receives
 * @rsn_head: the RSN of the oldest bound receive (the responder's)
 * @rsn: the RSN a newly arrived message consumes
 *
 * Every RSN from the next unbound one up to @rsn gets the SRQ's oldest
 * WQE. If the SRQ runs dry, those bound so far stay bound. Returns
 * whether receive @rsn is bound (false: RNR). Softirq, under the xport lock.
 * @rsn past the QP's share of the SRQ is refused (srq_rnr_hold_limit).
 */
bool mr_srq_bind(struct mr_qp *qp, u32 rsn_head, u32 rsn)
{
	struct mr_srq *srq = to_mr_srq(qp->ibqp.srq);
	struct mr_wq *bound = &qp->rq;
	bool limit_hit = false, ok;
	unsigned long flags;

	spin_lock_irqsave(&bound->lock, flags);
	/* Beyond the message window: no conforming requester sends that. */
	if (rsn - rsn_head >= bound->depth) {
		spin_unlock_irqrestore(&bound->lock, flags);
		return false;
	}
	if (rsn - rsn_head >= mr_srq_hold_max(srq)) {
		spin_unlock_irqrestore(&bound->lock, flags);
		mr_stats_inc(to_mr_dev(qp->ibqp.device), MR_CNT_SRQ_RNR_HOLD_LIMIT);
		return false;
	}
	while (bound->count <= rsn - rsn_head &&
	       mr_srq_take(srq, mr_wq_slot(bound, bound->head + bound->count),
			   &limit_hit))
		bound->count++;
	ok = rsn - rsn_head < bound->count;
	spin_unlock_irqrestore(&bound->lock, flags);

	if (limit_hit)
		mr_srq_event(srq, IB_EVENT_SRQ_LIMIT_REACHED);
	if (READ_ONCE(srq->ring_error) == MR_SRQ_RING_ERROR &&
	    cmpxchg(&srq->ring_error, MR_SRQ_RING_ERROR,
		    MR_SRQ_RING_REPORTED) == MR_SRQ_RING_ERROR)
		mr_srq_event(srq, IB_EVENT_SRQ_ERR);
	return ok;
}
EXPORT_SYMBOL_IF_KUNIT(mr_srq_bind);

/*
 * create_qp with an SRQ: the QP's rq becomes its ring of bound receives,
 * one per message the responder may have open, of the SRQ's max_sge.
 */
int mr_srq_qp_init(struct mr_qp *qp, struct ib_srq *ibsrq)
{
	struct mr_srq *srq = to_mr_srq(ibsrq);

	BUILD_BUG_ON(MR_SRQ_BOUND_WR < MR_MSG_WINDOW);
	if (ibsrq->srq_type != IB_SRQT_BASIC) {
		ibdev_dbg(ibsrq->device, "QP with an SRQ of type %d\n",
			  ibsrq->srq_type);
		return -EOPNOTSUPP;
	}
	return mr_wq_init(&qp->rq, MR_SRQ_BOUND_WR, srq->rq.max_sge,
			  srq->rq.stride);
}
EXPORT_SYMBOL_IF_KUNIT(mr_srq_qp_init);

/*
 * A QP with an SRQ entered ERR and flushed its bound receives: tell the
 * consumer that no more WQEs of the SRQ will complete on it (IB spec's
 * Last WQE Reached), so that it may destroy the QP.
 */
void mr_srq_qp_error(struct mr_qp *qp)
{
	struct ib_qp *ibqp = &qp->ibqp;
	struct ib_event ev = {
		.device = ibqp->device,
		.element.qp = ibqp,
		.event = IB_EVENT_QP_LAST_WQE_REACHED,
	};

	if (ibqp->srq && ibqp->event_handler)
		ibqp->event_handler(&ev, ibqp->qp_context);
}
