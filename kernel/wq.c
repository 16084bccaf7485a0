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
#include <linux/log2.h>
#include <linux/slab.h>

#include "counters.h"
#include "cq.h"
#include "local.h"
#include "mmap.h"
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
	wq->map = NULL;
	wq->uring = NULL;
	wq->ucopy = NULL;
	wq->udoorbell = false;
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
	wqe->done = false;
	for (i = 0; i < wr->num_sge; i++) {
		wqe->sge[i].addr = wr->sg_list[i].addr;
		wqe->sge[i].length = wr->sg_list[i].length;
		wqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
	rq->count++;
	return 0;
}

/*
 * Give @wq a ring user space posts into, of @entries slots (a power of 2,
 * at least its depth) of @stride bytes. Process context, before the queue
 * is published. Its offset is mr_mmap_offset().
 */
int mr_wq_map(struct mr_wq *wq, struct ib_udata *udata, u32 entries,
	      size_t stride)
{
	struct mr_mmap *map;

	map = mr_mmap_create(udata, sizeof(struct metaroce_wq_ring) +
				    (size_t)entries * stride);
	if (IS_ERR(map))
		return PTR_ERR(map);
	wq->map = map;
	wq->uring = map->buf;
	wq->uentries = entries;
	wq->ustride = stride;
	wq->ucons = 0;
	wq->ubad = false;
	return 0;
}

/* A receive ring (a QP's or an SRQ's): slots of metaroce_recv_wqe. */
int mr_wq_map_recv(struct mr_wq *rq, struct ib_udata *udata, u32 entries)
{
	return mr_wq_map(rq, udata, entries,
			 struct_size_t(struct metaroce_recv_wqe, sge,
				       rq->max_sge));
}

void mr_wq_unmap(struct mr_wq *wq)
{
	if (wq->map)
		mr_mmap_remove(wq->map);
	wq->map = NULL;
	wq->uring = NULL;
}

/* Slot @i of the user ring: read only through mr_wq_pull_one(). */
static const u8 *mr_wq_user_slot(const struct mr_wq *rq, u32 i)
{
	return rq->uring->wqe + (size_t)(i & (rq->uentries - 1)) * rq->ustride;
}

/* Copy the user's slot @i once into the kernel ring; false if invalid. */
static bool mr_wq_pull_one(struct mr_wq *rq, u32 i)
{
	const u8 *slot = mr_wq_user_slot(rq, i);
	struct metaroce_recv_wqe hdr;
	struct mr_recv_wqe *wqe;
	u64 len = 0;
	u32 s;

	memcpy(&hdr, slot, sizeof(hdr));
	if (hdr.num_sge > rq->max_sge)
		return false;
	wqe = mr_wq_slot(rq, rq->head + rq->count);
	wqe->wr_id = hdr.wr_id;
	wqe->num_sge = hdr.num_sge;
	wqe->done = false;
	for (s = 0; s < hdr.num_sge; s++) {
		struct ib_uverbs_sge sge;

		memcpy(&sge, slot + sizeof(hdr) + s * sizeof(sge), sizeof(sge));
		wqe->sge[s].addr = sge.addr;
		wqe->sge[s].length = sge.length;
		wqe->sge[s].lkey = sge.lkey;
		len += sge.length;
	}
	if (len > MR_MAX_MSG_SIZE)
		return false;
	wqe->length = len;
	return true;
}

/*
 * Under @rq's lock: the receives user space has posted in its ring since
 * the last call, copied once and checked, into the kernel ring. A slot
 * goes back to user space when its WQE is retired (mr_wq_pop()), so an
 * honest producer is at most depth (max_recv_wr) ahead of the retired
 * ones, and the kernel ring has room for all it posted. False when the
 * ring is hostile (an index out of range or an invalid WQE): counted, and
 * nothing more is read from it; the caller moves the QP to ERR. True for
 * a ring-less queue.
 */
bool mr_wq_pull(struct mr_dev *dev, struct mr_wq *rq)
{
	u32 producer, retired;

	lockdep_assert_held(&rq->lock);
	if (!rq->uring)
		return true;
	if (rq->ubad)
		return false;
	/* Slots before the index: user space writes them first. */
	producer = smp_load_acquire(&rq->uring->producer);
	retired = rq->ucons - rq->count;
	if (producer - retired > rq->depth)
		goto bad;
	while (rq->ucons != producer) {
		if (!mr_wq_pull_one(rq, rq->ucons))
			goto bad;
		rq->count++;
		rq->ucons++;
	}
	return true;

bad:
	rq->ubad = true;
	mr_stats_inc(dev, MR_CNT_RING_ERRORS);
	ibdev_dbg(&dev->ib_dev,
		  "mapped receive ring: WQE %u or an index out of range\n",
		  rq->ucons);
	return false;
}

/*
 * In a flushing state the transport needs no WQE, so user space rings the
 * doorbell after posting; set or clear the flag that tells it so.
 */
static void mr_wq_set_doorbell(struct mr_wq *rq, bool need)
{
	if (!rq->uring)
		return;
	WRITE_ONCE(rq->uring->flags, need ? METAROCE_WQ_NEED_DOORBELL : 0);
	smp_mb();	/* the flag before the flush reads producer */
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
	for (;;) {
		if (!send && !wq->count)
			mr_wq_pull(to_mr_dev(qp->ibqp.device), wq);
		if (!wq->count || !mr_wq_flushes(qp->state, kind))
			break;
		memset(&wc, 0, sizeof(wc));
		wc.qp = &qp->ibqp;
		wc.status = IB_WC_WR_FLUSH_ERR;
		if (send) {
			struct mr_send_wqe *wqe = mr_wq_slot(wq, wq->head);

			wc.wr_id = wqe->wr_id;
			wc.opcode = mr_opcode_get(wqe->opcode)->wc;
		} else {
			struct mr_recv_wqe *wqe = mr_wq_slot(wq, wq->head);

			/* A stream's receive completed ahead of the head. */
			if (wqe->done) {
				mr_wq_pop(wq);
				continue;
			}
			wc.wr_id = wqe->wr_id;
			wc.opcode = IB_WC_RECV;
		}
		mr_wq_pop(wq);
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
 * RESET: the queue is empty, and what user space posted in its ring
 * before is dropped.
 */
static void mr_wq_reset(struct mr_wq *wq)
{
	wq->head = 0;
	wq->count = 0;
	if (!wq->uring)
		return;
	wq->ucons = READ_ONCE(wq->uring->producer);
	wq->ubad = false;
	/* Pairs with the provider's acquire of consumer. */
	smp_store_release(&wq->uring->consumer, wq->ucons);
}

/*
 * Set the QP state, with sq.lock held; rq.lock is taken too, as either
 * lock guards it for readers. RESET empties both rings.
 */
void mr_wq_set_state(struct mr_qp *qp, enum ib_qp_state state)
{
	lockdep_assert_held(&qp->sq.lock);
	spin_lock(&qp->rq.lock);
	qp->state = state;
	mr_wq_set_doorbell(&qp->rq, mr_wq_flushes(state, MR_WQ_RQ));
	/* In RTS the send ring's reads set it (sq.c); elsewhere nothing reads. */
	if (state != IB_QPS_RTS && !qp->sq.udoorbell) {
		qp->sq.udoorbell = true;
		mr_wq_set_doorbell(&qp->sq, true);
	}
	if (state == IB_QPS_RESET) {
		mr_wq_reset(&qp->sq);
		mr_wq_reset(&qp->rq);
	}
	spin_unlock(&qp->rq.lock);
}
