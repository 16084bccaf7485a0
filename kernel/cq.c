// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues, filled by the transport with mr_cq_post() from any
 * context. Kernel CQs, and those of providers that do not map them, are a
 * ring of struct ib_wc in kernel memory, polled and armed through
 * commands. A provider that asks for it gets the ring in memory it maps
 * (uapi's struct metaroce_cq_ring) and polls and arms it with no system
 * call. Its consumer index and notify word are user memory: read once,
 * checked, never trusted as an index.
 */
#include <kunit/visibility.h>
#include <linux/log2.h>
#include <linux/slab.h>

#include "cq.h"
#include "mmap.h"

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

/* A zeroed mapped ring of @entries (a power of 2), and its response. */
static struct mr_mmap *mr_cq_map_ring(struct ib_udata *udata, u32 entries,
				      struct metaroce_create_cq_resp *resp)
{
	size_t bytes = struct_size_t(struct metaroce_cq_ring, cqe, entries);
	struct mr_mmap *map;

	if (!udata || udata->outlen < sizeof(*resp))
		return ERR_PTR(-EINVAL);
	map = mr_mmap_create(udata, bytes);
	if (IS_ERR(map))
		return map;
	*resp = (struct metaroce_create_cq_resp) {
		.mmap_offset = mr_mmap_offset(map),
		.mmap_size = map->size,
		.flags = METAROCE_CQ_RING,
		.entries = entries,
	};
	return map;
}

int mr_cq_create(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		 struct ib_udata *udata)
{
	struct mr_dev *dev = to_mr_dev(ibcq->device);
	struct metaroce_create_cq_resp resp = {};
	struct mr_cq *cq = to_mr_cq(ibcq);
	u32 want;
	int err;

	if (attr->flags) {
		ibdev_dbg(&dev->ib_dev, "CQ flags %#x not supported\n",
			  attr->flags);
		return -EOPNOTSUPP;
	}
	err = mr_cq_check_size(&dev->ib_dev, attr->cqe);
	if (!err)
		err = mr_mmap_read_request(&dev->ib_dev, udata,
					   METAROCE_CQ_RING, &want, NULL);
	if (err)
		return err;
	if (atomic_inc_return(&dev->num_cq) > MR_MAX_CQ) {
		ibdev_dbg(&dev->ib_dev, "CQ limit of %u reached\n", MR_MAX_CQ);
		err = -ENOMEM;
		goto err_count;
	}
	spin_lock_init(&cq->lock);
	cq->size = attr->cqe;
	if (want & METAROCE_CQ_RING) {
		cq->size = roundup_pow_of_two(attr->cqe);
		cq->map = mr_cq_map_ring(udata, cq->size, &resp);
		if (IS_ERR(cq->map)) {
			err = PTR_ERR(cq->map);
			cq->map = NULL;
			goto err_count;
		}
		cq->uring = cq->map->buf;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_ring;
	} else {
		cq->ring = mr_cq_alloc_ring(attr->cqe);
		if (!cq->ring) {
			err = -ENOMEM;
			goto err_count;
		}
	}
	ibcq->cqe = cq->size;
	return 0;

err_ring:
	mr_mmap_remove(cq->map);
err_count:
	atomic_dec(&dev->num_cq);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(mr_cq_create);

int mr_cq_destroy(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct mr_cq *cq = to_mr_cq(ibcq);

	if (cq->map)
		mr_mmap_remove(cq->map);
	kvfree(cq->ring);
	atomic_dec(&to_mr_dev(ibcq->device)->num_cq);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_cq_destroy);

/*
 * Completions in the mapped ring, not yet consumed: at most the ring's
 * size, or -1 when user space wrote a consumer index out of range.
 */
static int mr_cq_mapped_count(const struct mr_cq *cq)
{
	u32 used = cq->producer - READ_ONCE(cq->uring->consumer);

	return used <= cq->size ? used : -1;
}

/* Under the lock: the unmapped ring's completions into @ring, in order. */
static void mr_cq_move_unmapped(struct mr_cq *cq, struct ib_wc *ring, u32 cqe)
{
	u32 i;

	for (i = 0; i < cq->count; i++)
		ring[i] = cq->ring[(cq->head + i) % cq->size];
	kvfree(cq->ring);
	cq->ring = ring;
	cq->head = 0;
	cq->size = cqe;
}

/*
 * Under the lock: the mapped ring's completions into @map's ring, in
 * order, from slot 0. User space maps the new ring after the command
 * returns; until then nothing polls (the provider holds its CQ lock).
 */
static void mr_cq_move_mapped(struct mr_cq *cq, struct mr_mmap *map,
			      u32 entries, u32 count)
{
	struct metaroce_cq_ring *to = map->buf;
	u32 cons = cq->producer - count, i;

	for (i = 0; i < count; i++)
		to->cqe[i] = cq->uring->cqe[(cons + i) & (cq->size - 1)];
	to->overflow = cq->uring->overflow;
	to->notify = READ_ONCE(cq->uring->notify);
	/* The slots before the index: user space reads with acquire. */
	smp_store_release(&to->producer, count);
	cq->map = map;
	cq->uring = to;
	cq->producer = count;
	cq->size = entries;
}

/* Grow or shrink the ring, keeping the completions it holds, in order. */
int mr_cq_resize(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct metaroce_create_cq_resp resp = {};
	struct mr_cq *cq = to_mr_cq(ibcq);
	struct mr_mmap *map = NULL, *old_map = NULL;
	struct ib_wc *ring = NULL;
	unsigned long flags;
	u32 entries = cqe;
	int err, count;

	err = mr_cq_check_size(ibcq->device, cqe);
	if (err)
		return err;
	if (cq->map) {
		entries = roundup_pow_of_two(cqe);
		map = mr_cq_map_ring(udata, entries, &resp);
		if (IS_ERR(map))
			return PTR_ERR(map);
		/* Before the swap: ignored by the caller if it fails. */
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_free;
	} else {
		ring = mr_cq_alloc_ring(cqe);
		if (!ring)
			return -ENOMEM;
	}

	spin_lock_irqsave(&cq->lock, flags);
	count = cq->map ? mr_cq_mapped_count(cq) : cq->count;
	if (count < 0 || count > entries) {
		spin_unlock_irqrestore(&cq->lock, flags);
		ibdev_dbg(ibcq->device,
			  "CQ resize to %d refused: it holds %d completions\n",
			  cqe, count);
		err = -EINVAL;
		goto err_free;
	}
	if (map) {
		old_map = cq->map;
		mr_cq_move_mapped(cq, map, entries, count);
	} else {
		mr_cq_move_unmapped(cq, ring, cqe);
	}
	ibcq->cqe = entries;
	spin_unlock_irqrestore(&cq->lock, flags);

	if (old_map)
		mr_mmap_remove(old_map);
	return 0;

err_free:
	if (map)
		mr_mmap_remove(map);
	kvfree(ring);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(mr_cq_resize);

int mr_cq_poll(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct mr_cq *cq = to_mr_cq(ibcq);
	unsigned long flags;
	int n;

	/* Its completions name QPs by number only: polled where mapped. */
	if (cq->map) {
		ibdev_dbg(ibcq->device, "POLL_CQ on a mapped CQ\n");
		return -EINVAL;
	}
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
 * freed the QP (mlx5 cleans its CQs of a destroyed QP likewise). A
 * mapped ring names QPs by number and is user space's to read.
 */
void mr_cq_clean(struct mr_cq *cq, const struct ib_qp *qp)
{
	unsigned long flags;
	u32 i, kept = 0;

	if (cq->map)
		return;
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

/* The REQ_NOTIFY_CQ command on a mapped CQ: as the provider arms it. */
static int mr_cq_req_notify_mapped(struct mr_cq *cq,
				   enum ib_cq_notify_flags flags)
{
	u32 want = (flags & IB_CQ_SOLICITED_MASK) == IB_CQ_NEXT_COMP ?
		   METAROCE_CQ_NOTIFY_NEXT : METAROCE_CQ_NOTIFY_SOLICITED;
	unsigned long irqflags;
	u32 *notify, was;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);	/* against a resize */
	notify = &cq->uring->notify;
	was = READ_ONCE(*notify);
	while (was != METAROCE_CQ_NOTIFY_NEXT) {
		u32 seen = cmpxchg(notify, was, want);

		if (seen == was)
			break;
		was = seen;
	}
	if (flags & IB_CQ_REPORT_MISSED_EVENTS)
		ret = mr_cq_mapped_count(cq) != 0;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

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

	if (cq->map)
		return mr_cq_req_notify_mapped(cq, flags);
	spin_lock_irqsave(&cq->lock, irqflags);
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && cq->count)
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(mr_cq_req_notify);

/* @wc as user space reads it, as uverbs' POLL_CQ would copy it out. */
static void mr_cq_to_user(struct ib_uverbs_wc *uwc, const struct ib_wc *wc)
{
	*uwc = (struct ib_uverbs_wc) {
		.wr_id = wc->wr_id,
		.status = wc->status,
		.opcode = wc->opcode,
		.vendor_err = wc->vendor_err,
		.byte_len = wc->byte_len,
		.ex.imm_data = wc->ex.imm_data,
		.qp_num = wc->qp->qp_num,
		.src_qp = wc->src_qp,
		.wc_flags = wc->wc_flags,
		.pkey_index = wc->pkey_index,
		.slid = ib_lid_cpu16(wc->slid),
		.sl = wc->sl,
		.dlid_path_bits = wc->dlid_path_bits,
		.port_num = wc->port_num,
	};
}

/*
 * Under the lock: @wc into the mapped ring. False when it does not fit:
 * the ring is full, in error already, or user space moved its consumer
 * index out of range (its own CQ's overrun, nobody else's).
 */
static bool mr_cq_post_mapped(struct mr_cq *cq, const struct ib_wc *wc)
{
	struct metaroce_cq_ring *ring = cq->uring;
	int used = mr_cq_mapped_count(cq);

	if (cq->overflow || used < 0 || used == cq->size) {
		WRITE_ONCE(ring->overflow, 1);
		return false;
	}
	mr_cq_to_user(&ring->cqe[cq->producer & (cq->size - 1)], wc);
	cq->producer++;
	/* The slot before the index: user space reads with acquire. */
	smp_store_release(&ring->producer, cq->producer);
	return true;
}

/*
 * Under the lock, after a completion went into the mapped ring: true if user space had
 * armed the CQ for it, which this call disarms. The barrier pairs with the
 * one the consumer issues between arming and reading producer, so one of
 * the two sees the other.
 */
static bool mr_cq_disarm_mapped(struct mr_cq *cq, bool solicited)
{
	u32 *notify = &cq->uring->notify;
	u32 armed;

	smp_mb();	/* producer stored before notify is read */
	armed = READ_ONCE(*notify);
	if (armed != METAROCE_CQ_NOTIFY_NEXT &&
	    !(armed == METAROCE_CQ_NOTIFY_SOLICITED && solicited))
		return false;
	return cmpxchg(notify, armed, METAROCE_CQ_NOTIFY_NONE) == armed;
}

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
	if (cq->map) {
		lost = !mr_cq_post_mapped(cq, wc);
		overrun = lost && !cq->overflow;
		cq->overflow |= lost;
		call = !lost && mr_cq_disarm_mapped(cq, solicited);
	} else if (cq->overflow || cq->count == cq->size) {
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
