// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The send queue's way in. A send WR is checked against the QP's type and
 * limits and built into a WQE (struct mr_send_wqe) here, whoever posts it:
 * a kernel consumer or the POST_SEND command (qp.c), or the provider of a
 * user RC or UC QP, which writes it into a send ring it maps. That ring
 * is hostile memory: each slot is copied once and then checked as a WR
 * is, and one that post_send would refuse, or an index out of range,
 * moves the QP to ERR with ring_errors counted.
 *
 * The ring is read when the transport runs (mr_req_push(), as each ACK
 * comes in) and when the provider rings the doorbell. While the QP has
 * sends in flight their ACKs bring the next read; with none, the ring's
 * METAROCE_WQ_NEED_DOORBELL flag asks the provider for the doorbell.
 */
#include <linux/log2.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "counters.h"
#include "mr.h"
#include "opcode.h"
#include "qp.h"
#include "req.h"
#include "sq.h"
#include "wq.h"
#include "proto/bounds.h"

#define MR_SEND_FLAGS \
	(IB_SEND_FENCE | IB_SEND_SIGNALED | IB_SEND_SOLICITED | IB_SEND_INLINE)

/* Gather the inline data of @wr into @dst: @user or kernel addresses. */
static int mr_sq_copy_inline(struct mr_qp *qp, const struct ib_send_wr *wr,
			     bool user, u8 *dst)
{
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		const struct ib_sge *sge = &wr->sg_list[i];

		if (user) {
			if (copy_from_user(dst, u64_to_user_ptr(sge->addr),
					   sge->length)) {
				ibdev_dbg(qp->ibqp.device,
					  "QP %u: inline data at %#llx unreadable\n",
					  qp->ibqp.qp_num, sge->addr);
				return -EFAULT;
			}
		} else {
			memcpy(dst, (void *)(uintptr_t)sge->addr, sge->length);
		}
		dst += sge->length;
	}
	return 0;
}

/* The checks every send WR passes, whatever its opcode; its length in *@len. */
static int mr_sq_check(struct mr_qp *qp, const struct ib_send_wr *wr,
		       const struct mr_opcode_info *o, u64 *len)
{
	static const char *const qpt_name[MR_OPC_NQPT] = {
		[MR_OPC_RC] = "RC", [MR_OPC_UC] = "UC", [MR_OPC_UD] = "UD",
	};
	struct ib_device *ibdev = qp->ibqp.device;
	u32 qpn = qp->ibqp.qp_num;
	int i;

	if (wr->num_sge < 0 || wr->num_sge > qp->sq.max_sge) {
		ibdev_dbg(ibdev, "QP %u: %d SGEs, max_send_sge is %u\n", qpn,
			  wr->num_sge, qp->sq.max_sge);
		return -EINVAL;
	}
	if (wr->send_flags & ~MR_SEND_FLAGS) {
		ibdev_dbg(ibdev, "QP %u: send flags %#x not supported\n", qpn,
			  wr->send_flags & ~MR_SEND_FLAGS);
		return -EINVAL;
	}
	*len = 0;
	for (i = 0; i < wr->num_sge; i++)
		*len += wr->sg_list[i].length;
	if (*len > MR_MAX_MSG_SIZE) {
		ibdev_dbg(ibdev, "QP %u: message of %llu bytes exceeds %lu\n",
			  qpn, *len, MR_MAX_MSG_SIZE);
		return -EINVAL;
	}
	if (!mr_opcode_wire(o, qp->ibqp.qp_type)) {
		ibdev_dbg(ibdev, "QP %u: opcode %d not supported on %s\n", qpn,
			  wr->opcode, qpt_name[mr_opcode_qpt(qp->ibqp.qp_type)]);
		return -EINVAL;
	}
	return 0;
}

/* A UD send WR's destination, copied: the AH may go before the WQE does. */
static int mr_sq_build_ud(struct mr_qp *qp, const struct ib_send_wr *wr,
			  struct mr_send_wqe *wqe)
{
	struct ib_device *ibdev = qp->ibqp.device;
	u32 qpn = qp->ibqp.qp_num;

	if (!ud_wr(wr)->ah || ud_wr(wr)->remote_qpn > MR_QPN_MAX) {
		ibdev_dbg(ibdev, "QP %u: UD send WR without an AH or with QPN %#x\n",
			  qpn, ud_wr(wr)->remote_qpn);
		return -EINVAL;
	}
	/* One P_Key, at index 0: ib_mad passes the index it has. */
	if (qp->ibqp.qp_type == IB_QPT_GSI && ud_wr(wr)->pkey_index) {
		ibdev_dbg(ibdev, "QP %u: no P_Key index %u\n", qpn,
			  ud_wr(wr)->pkey_index);
		return -EINVAL;
	}
	wqe->ud.flow = to_mr_ah(ud_wr(wr)->ah)->flow;
	wqe->ud.remote_qpn = ud_wr(wr)->remote_qpn;
	wqe->ud.remote_qkey = ud_wr(wr)->remote_qkey;
	return 0;
}

/* The fields of @wr that its opcode has: immediate, rkey, remote address. */
static int mr_sq_build_opcode(struct mr_qp *qp, const struct ib_send_wr *wr,
			      const struct mr_opcode_info *o, u64 len,
			      struct mr_send_wqe *wqe)
{
	if (o->flags & MR_OPC_IMM)
		wqe->ex.imm_data = wr->ex.imm_data;
	if (o->flags & MR_OPC_INV)
		wqe->ex.invalidate_rkey = wr->ex.invalidate_rkey;
	if (o->flags & MR_OPC_ATOMIC) {
		wqe->remote_addr = atomic_wr(wr)->remote_addr;
		wqe->rkey = atomic_wr(wr)->rkey;
		wqe->compare_add = atomic_wr(wr)->compare_add;
		wqe->swap = atomic_wr(wr)->swap;
		if (wr->num_sge != 1 || len != sizeof(u64) ||
		    !IS_ALIGNED(wqe->remote_addr, sizeof(u64))) {
			ibdev_dbg(qp->ibqp.device, "QP %u: atomic needs one 8-byte SGE and an aligned address\n",
				  qp->ibqp.qp_num);
			return -EINVAL;
		}
	} else if (o->flags & MR_OPC_REMOTE) {
		wqe->remote_addr = rdma_wr(wr)->remote_addr;
		wqe->rkey = rdma_wr(wr)->rkey;
	}
	return 0;
}

/* The data of @wr: its SGEs, or with IB_SEND_INLINE a copy of the bytes. */
static int mr_sq_build_data(struct mr_qp *qp, const struct ib_send_wr *wr,
			    const struct mr_opcode_info *o, u64 len, bool user,
			    struct mr_send_wqe *wqe)
{
	struct ib_device *ibdev = qp->ibqp.device;
	u32 qpn = qp->ibqp.qp_num;
	int i;

	if (!(wr->send_flags & IB_SEND_INLINE)) {
		wqe->num_sge = wr->num_sge;
		for (i = 0; i < wr->num_sge; i++) {
			wqe->sge[i].addr = wr->sg_list[i].addr;
			wqe->sge[i].length = wr->sg_list[i].length;
			wqe->sge[i].lkey = wr->sg_list[i].lkey;
		}
		return 0;
	}
	if (!(o->flags & MR_OPC_INLINE)) {
		ibdev_dbg(ibdev, "QP %u: opcode %d cannot be inline\n", qpn,
			  wr->opcode);
		return -EINVAL;
	}
	if (len > qp->max_inline) {
		ibdev_dbg(ibdev, "QP %u: %llu bytes inline, max_inline_data is %u\n",
			  qpn, len, qp->max_inline);
		return -EINVAL;
	}
	return mr_sq_copy_inline(qp, wr, user, wqe->inline_data);
}

/**
 * mr_sq_build() - check a send WR and copy it into a WQE
 * @qp: the QP, whose type the WR must suit
 * @wr: the WR
 * @user: its inline data is at user addresses
 * @wqe: the WQE, of sq.stride bytes
 *
 * Returns 0 or -EINVAL, -EFAULT (inline data unreadable).
 */
int mr_sq_build(struct mr_qp *qp, const struct ib_send_wr *wr, bool user,
		struct mr_send_wqe *wqe)
{
	const struct mr_opcode_info *o = mr_opcode_get(wr->opcode);
	u64 len;
	int err;

	err = mr_sq_check(qp, wr, o, &len);
	if (err)
		return err;
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	wqe->opcode = wr->opcode;
	wqe->send_flags = wr->send_flags;
	wqe->length = len;
	if (mr_qp_is_ud(qp)) {
		err = mr_sq_build_ud(qp, wr, wqe);
		if (err)
			return err;
	}
	err = mr_sq_build_opcode(qp, wr, o, len, wqe);
	if (err)
		return err;
	return mr_sq_build_data(qp, wr, o, len, user, wqe);
}

/*
 * Check that each SGE of @wqe names an MR of the QP's PD that covers it
 * with the rights the operation needs. The transport looks the MRs up
 * again when it moves the data: they may be deregistered meanwhile.
 */
int mr_sq_check_sges(struct mr_qp *qp, const struct mr_send_wqe *wqe)
{
	struct mr_dev *dev = to_mr_dev(qp->ibqp.device);
	u32 need = mr_opcode_has(wqe->opcode, MR_OPC_LOCAL_WRITE) ?
		   MR_ACC_LOCAL_WRITE : MR_ACC_LOCAL_READ;
	u32 i;

	for (i = 0; i < wqe->num_sge; i++) {
		const struct mr_sge *sge = &wqe->sge[i];
		struct mr_mr *mr = mr_mr_get(dev, qp->ibqp.pd, sge->lkey, NULL);
		int err;

		if (!mr) {
			ibdev_dbg(&dev->ib_dev, "QP %u: SGE %u: no MR with lkey %#x in the QP's PD\n",
				  qp->ibqp.qp_num, i, sge->lkey);
			return -EINVAL;
		}
		err = mr_mr_check(mr, sge->addr, sge->length, need);
		mr_mr_put(mr);
		if (err) {
			ibdev_dbg(&dev->ib_dev, "QP %u: SGE %u (%#llx, %u bytes) %s MR %#x\n",
				  qp->ibqp.qp_num, i, sge->addr, sge->length,
				  err == -ERANGE ? "outside" : "needs rights not granted by",
				  sge->lkey);
			return -EINVAL;
		}
	}
	return 0;
}

/* Mapped send rings */

/*
 * Give a user RC or UC QP a send ring of at least sq.depth slots, each
 * with room for max_send_sge SGEs or max_inline_data bytes. Process
 * context, before the QP is published.
 */
int mr_sq_map(struct mr_qp *qp, struct ib_udata *udata)
{
	struct mr_wq *sq = &qp->sq;
	u32 entries = roundup_pow_of_two(sq->depth);
	size_t data = max_t(size_t, sq->max_sge * sizeof(struct ib_uverbs_sge),
			    qp->max_inline);
	size_t stride = ALIGN(sizeof(struct metaroce_send_wqe) + data,
			      METAROCE_RING_INDEX_ALIGN);
	int err;

	/* A slot's copy, its SGEs as ib_sge, the WQE built from them. */
	sq->ucopy = kzalloc(stride + sq->max_sge * sizeof(struct ib_sge) +
			    sq->stride, GFP_KERNEL_ACCOUNT);
	if (!sq->ucopy)
		return -ENOMEM;
	err = mr_wq_map(sq, udata, entries, stride);
	if (err) {
		kfree(sq->ucopy);
		sq->ucopy = NULL;
		return err;
	}
	/* Nothing in flight: the first post rings. */
	sq->udoorbell = true;
	sq->uring->flags = METAROCE_WQ_NEED_DOORBELL;
	return 0;
}

void mr_sq_unmap(struct mr_qp *qp)
{
	struct mr_wq *sq = &qp->sq;

	mr_wq_unmap(sq);
	kfree(sq->ucopy);
	sq->ucopy = NULL;
}

static const void *mr_sq_user_slot(const struct mr_wq *sq, u32 i)
{
	return sq->uring->wqe + (size_t)(i & (sq->uentries - 1)) * sq->ustride;
}

/* Under sq.lock: tell user space whether it rings after posting. */
static void mr_sq_set_doorbell(struct mr_wq *sq, bool need)
{
	if (sq->udoorbell == need)
		return;
	sq->udoorbell = need;
	WRITE_ONCE(sq->uring->flags, need ? METAROCE_WQ_NEED_DOORBELL : 0);
}

/* The opcodes of POST_SEND's user WRs, as ib_uverbs_post_send() takes them. */
static bool mr_sq_user_opcode(u32 opcode)
{
	switch (opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return true;
	default:
		return false;
	}
}

/*
 * The send WR in the copy of a slot, as an ib_send_wr (with its rdma or
 * atomic part) whose SGEs are @sges: inline data stays in the copy.
 */
/* A send WR with the part its opcode adds. */
union mr_sq_wr {
	struct ib_send_wr wr;
	struct ib_rdma_wr rdma;
	struct ib_atomic_wr atomic;
};

static int mr_sq_user_wr(struct mr_wq *sq, const struct metaroce_send_wqe *u,
			 struct ib_sge *sges, union mr_sq_wr *w)
{
	u32 s;

	if (u->reserved || !mr_sq_user_opcode(u->opcode) ||
	    u->num_sge > sq->max_sge ||
	    u->inline_len > sq->ustride - sizeof(*u))
		return -EINVAL;
	w->wr.wr_id = u->wr_id;
	w->wr.opcode = u->opcode;
	w->wr.send_flags = u->send_flags;
	w->wr.sg_list = sges;
	if (u->opcode == IB_WR_SEND_WITH_INV)
		w->wr.ex.invalidate_rkey = u->ex;
	else
		w->wr.ex.imm_data = (__force __be32)u->ex;
	if (u->send_flags & IB_SEND_INLINE) {
		sges[0] = (struct ib_sge){ .addr = (uintptr_t)u->data,
					   .length = u->inline_len };
		w->wr.num_sge = u->inline_len ? 1 : 0;
	} else {
		for (s = 0; s < u->num_sge; s++) {
			struct ib_uverbs_sge us;

			memcpy(&us, u->data + s * sizeof(us), sizeof(us));
			sges[s] = (struct ib_sge){ .addr = us.addr,
						   .length = us.length,
						   .lkey = us.lkey };
		}
		w->wr.num_sge = u->num_sge;
	}
	if (mr_opcode_has(u->opcode, MR_OPC_ATOMIC)) {
		w->atomic.remote_addr = u->remote_addr;
		w->atomic.rkey = u->rkey;
		w->atomic.compare_add = u->compare_add;
		w->atomic.swap = u->swap;
	} else {
		w->rdma.remote_addr = u->remote_addr;
		w->rdma.rkey = u->rkey;
	}
	return 0;
}

/* Under sq.lock, in RTS: slot @i, copied, checked and submitted. */
static int mr_sq_take(struct mr_qp *qp, u32 i)
{
	struct mr_wq *sq = &qp->sq;
	struct metaroce_send_wqe *u = sq->ucopy;
	struct ib_sge *sges = sq->ucopy + sq->ustride;
	struct mr_send_wqe *wqe = (void *)(sges + sq->max_sge);
	union mr_sq_wr w = {};
	int err;

	memcpy(u, mr_sq_user_slot(sq, i), sq->ustride);
	err = mr_sq_user_wr(sq, u, sges, &w);
	if (!err && u->stream && u->stream >= qp->nstreams)
		err = -EINVAL;
	if (!err)
		err = mr_sq_build(qp, &w.wr, false, wqe);
	if (!err)
		wqe->stream = u->stream;
	if (!err)
		err = mr_sq_check_sges(qp, wqe);
	if (!err)
		err = mr_req_submit(qp, wqe);
	if (!err)
		qp->local.posted++;
	return err;
}

/*
 * Under sq.lock, in RTS: submit what user space posted. The slots of
 * WQEs not yet retired are not reused, so an honest producer is at most
 * sq.depth ahead of them, and the kernel ring has room for each.
 */
static bool mr_sq_pull_ring(struct mr_qp *qp)
{
	struct mr_wq *sq = &qp->sq;
	u32 producer;

	for (;;) {
		/* Slots before the index: user space writes them first. */
		producer = smp_load_acquire(&sq->uring->producer);
		if (producer - (sq->ucons - sq->count) > sq->depth)
			return false;
		for (; sq->ucons != producer; sq->ucons++)
			if (mr_sq_take(qp, sq->ucons))
				return false;
		/* Sends in flight bring ACKs, and with each a pull. */
		mr_sq_set_doorbell(sq, !sq->count);
		if (sq->count)
			return true;
		smp_mb();	/* the flag before producer: pairs with user space */
		if (READ_ONCE(sq->uring->producer) == sq->ucons)
			return true;
	}
}

/*
 * Under sq.lock, in a flushing state: queue what user space posted, to
 * complete as flushed. Only wr_id and opcode are read.
 */
static bool mr_sq_pull_flushed(struct mr_qp *qp)
{
	struct mr_wq *sq = &qp->sq;
	/* Slots before the index: user space writes them first. */
	u32 producer = smp_load_acquire(&sq->uring->producer);

	if (producer - (sq->ucons - sq->count) > sq->depth)
		return false;
	for (; sq->ucons != producer; sq->ucons++) {
		struct mr_send_wqe *wqe = mr_wq_slot(sq, sq->head + sq->count);
		struct metaroce_send_wqe u;

		memcpy(&u, mr_sq_user_slot(sq, sq->ucons), sizeof(u));
		if (!mr_opcode_get(u.opcode))
			return false;
		memset(wqe, 0, sizeof(*wqe));
		wqe->wr_id = u.wr_id;
		wqe->opcode = u.opcode;
		sq->count++;
		qp->local.posted++;
	}
	return true;
}

/**
 * mr_sq_pull() - take what user space posted in a QP's send ring
 * @qp: the QP; nothing happens unless it has a send ring
 *
 * In RTS each new WQE is checked and submitted as post_send's are; in a
 * flushing state it is queued to complete as flushed (mr_wq_flush()); in
 * the other states it waits in the ring. A hostile ring is counted in
 * ring_errors and moves the QP to ERR; nothing more is read from it. Any
 * context.
 */
void mr_sq_pull(struct mr_qp *qp)
{
	struct mr_wq *sq = &qp->sq;
	unsigned long flags;
	bool ok = true;
	u32 at;

	if (!sq->uring)
		return;
	spin_lock_irqsave(&sq->lock, flags);
	if (!sq->ubad) {
		if (qp->state == IB_QPS_RTS)
			ok = mr_sq_pull_ring(qp);
		else if (mr_wq_flushes(qp->state, MR_WQ_SQ))
			ok = mr_sq_pull_flushed(qp);
		sq->ubad = !ok;
	}
	at = sq->ucons;
	spin_unlock_irqrestore(&sq->lock, flags);
	if (ok)
		return;
	mr_stats_inc(to_mr_dev(qp->ibqp.device), MR_CNT_RING_ERRORS);
	ibdev_dbg(qp->ibqp.device,
		  "QP %u: mapped send ring: WQE %u or an index out of range\n",
		  qp->ibqp.qp_num, at);
	mr_qp_fatal(qp);
}
