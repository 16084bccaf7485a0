// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues: a ring of struct ib_wc in kernel memory under a spin
 * lock. Userspace polls and arms it through uverbs commands (no mmap), the
 * transport fills it with mr_cq_post() from any context.
 */
#include <kunit/visibility.h>
#include <linux/slab.h>

#include "cq.h"

static int mr_cq_check_size(struct ib_device *ib_dev, int cqe)
{
	if (cqe < 1 || cqe > MR_MAX_CQE) {
		ibdev_dbg(ib_dev, "CQ size %d outside 1..%d\n", cqe,
			  MR_MAX_CQE);
		return -EINVAL;
	}
	return 0;
}

static struct ib_wc *mr_cq_alloc_ring(int cqe)
{
	return kvcalloc(cqe, sizeof(struct ib_wc), GFP_KERNEL_ACCOUNT);
}

int mr_cq_create(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		 struct ib_udata *udata)
{
	struct mr_dev *dev = to_mr_dev(ibcq->device);
	struct mr_cq *cq = to_mr_cq(ibcq);
	int err;

	if (attr->flags) {
		ibdev_dbg(&dev->ib_dev, "CQ flags %#x not supported\n",
			  attr->flags);
		return -EOPNOTSUPP;
	}
	err = mr_cq_check_size(&dev->ib_dev, attr->cqe);
	if (err)
		return err;
	if (atomic_inc_return(&dev->num_cq) > MR_MAX_CQ) {
		ibdev_dbg(&dev->ib_dev, "CQ limit of %u reached\n", MR_MAX_CQ);
		err = -ENOMEM;
		goto err_count;
	}
	cq->ring = mr_cq_alloc_ring(attr->cqe);
	if (!cq->ring) {
		err = -ENOMEM;
		goto err_count;
	}
	spin_lock_init(&cq->lock);
	cq->size = attr->cqe;
	cq->head = 0;
	cq->count = 0;
	cq->notify = 0;
	cq->overflow = false;
	ibcq->cqe = attr->cqe;
	return 0;

err_count:
	atomic_dec(&dev->num_cq);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(mr_cq_create);

int mr_cq_destroy(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct mr_cq *cq = to_mr_cq(ibcq);

	kvfree(cq->ring);
	atomic_dec(&to_mr_dev(ibcq->device)->num_cq);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_cq_destroy);

/* Grow or shrink the ring, keeping the completions it holds, in order. */
int mr_cq_resize(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct mr_cq *cq = to_mr_cq(ibcq);
	struct ib_wc *ring, *old;
	unsigned long flags;
	u32 i;
	int err;

	err = mr_cq_check_size(ibcq->device, cqe);
	if (err)
		return err;
	ring = mr_cq_alloc_ring(cqe);
	if (!ring)
		return -ENOMEM;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->count > cqe) {
		spin_unlock_irqrestore(&cq->lock, flags);
		kvfree(ring);
		ibdev_dbg(ibcq->device,
			  "CQ resize to %d refused: it holds %u completions\n",
			  cqe, cq->count);
		return -EINVAL;
	}
	for (i = 0; i < cq->count; i++)
		ring[i] = cq->ring[(cq->head + i) % cq->size];
	old = cq->ring;
	cq->ring = ring;
	cq->size = cqe;
	cq->head = 0;
	ibcq->cqe = cqe;
	spin_unlock_irqrestore(&cq->lock, flags);

	kvfree(old);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_cq_resize);

int mr_cq_poll(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct mr_cq *cq = to_mr_cq(ibcq);
	unsigned long flags;
	int n;

	spin_lock_irqsave(&cq->lock, flags);
	for (n = 0; n < num_entries && cq->count; n++) {
		wc[n] = cq->ring[cq->head];
		cq->head = (cq->head + 1) % cq->size;
		cq->count--;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(mr_cq_poll);

/*
 * @qp is being destroyed and posts no more: drop its completions, keeping
 * the others in order. They point at it, and uverbs reads the QP number
 * through that pointer when it copies a completion out after ib_core has
 * freed the QP (mlx5 cleans its CQs of a destroyed QP likewise).
 */
void mr_cq_clean(struct mr_cq *cq, const struct ib_qp *qp)
{
	unsigned long flags;
	u32 i, kept = 0;

	spin_lock_irqsave(&cq->lock, flags);
	for (i = 0; i < cq->count; i++) {
		const struct ib_wc *wc = &cq->ring[(cq->head + i) % cq->size];

		if (wc->qp != qp)
			cq->ring[(cq->head + kept++) % cq->size] = *wc;
	}
	cq->count = kept;
	spin_unlock_irqrestore(&cq->lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(mr_cq_clean);

/*
 * Arm for the next completion, or the next solicited one; an armed
 * NEXT_COMP is not narrowed to SOLICITED. With REPORT_MISSED_EVENTS, 1 says
 * that completions are already there, so the caller polls again.
 */
int mr_cq_req_notify(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct mr_cq *cq = to_mr_cq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && cq->count)
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(mr_cq_req_notify);

/*
 * Add a completion; @wc->qp must be set (uverbs reads the QP number from
 * it). Any context. Calls the completion handler if the CQ was armed for
 * it, after dropping the lock, since handlers poll and re-arm. The caller
 * must not hold locks that the handler may take (e.g. by posting).
 *
 * A full CQ is an error the IB spec calls CQ overrun: the completion is
 * lost, the CQ stays in error and IB_EVENT_CQ_ERR is raised once.
 * Returns 0 or -ENOSPC.
 */
int mr_cq_post(struct mr_cq *cq, const struct ib_wc *wc, bool solicited)
{
	struct ib_cq *ibcq = &cq->ibcq;
	bool call = false, lost = false, overrun = false;
	unsigned long flags;

	if (WARN_ON_ONCE(!wc->qp))
		return -EINVAL;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->overflow || cq->count == cq->size) {
		lost = true;
		overrun = !cq->overflow;
		cq->overflow = true;
	} else {
		cq->ring[(cq->head + cq->count) % cq->size] = *wc;
		cq->count++;
		if (cq->notify == IB_CQ_NEXT_COMP ||
		    (cq->notify == IB_CQ_SOLICITED && solicited)) {
			cq->notify = 0;
			call = true;
		}
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	if (call && ibcq->comp_handler)
		ibcq->comp_handler(ibcq, ibcq->cq_context);
	if (overrun) {
		ibdev_warn_ratelimited(ibcq->device,
				       "CQ overrun (%u entries), completion lost\n",
				       cq->size);
		if (ibcq->event_handler) {
			struct ib_event ev = {
				.device = ibcq->device,
				.element.cq = ibcq,
				.event = IB_EVENT_CQ_ERR,
			};

			ibcq->event_handler(&ev, ibcq->cq_context);
		}
	}
	return lost ? -ENOSPC : 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_cq_post);
