// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs, reliable and unreliable connected (both over the transport
 * of xport.h) and unreliable datagram (ud.c sends and receives those):
 * creation, the state machine of modify_qp, and the send
 * and receive queues that post_send/post_recv fill. The queues are rings
 * of WQEs in kernel memory that hold a copy of everything the transport
 * needs (inline data included), so the caller's work requests and buffers
 * may go as soon as the post returns.
 *
 * mr_req_submit() is where a send WR in RTS enters the transport
 * (xport.h): it queues it, and post_send kicks the transport once the
 * queue lock is dropped. What each opcode may do on each QP type is
 * opcode.c's table. Receive WRs queue up and the responder consumes
 * them. Moving to ERR completes every queued WQE with IB_WC_WR_FLUSH_ERR,
 * in post order. A fatal error of the transport moves the QP to ERR from
 * the error work (mr_qp_fatal()), the one way the transport changes the
 * QP's state.
 *
 * QPNs come from a per-device xarray; mr_qp_get() finds a QP by its
 * number under RCU and takes a reference, which destroy_qp waits for.
 */
#include <kunit/visibility.h>
#include <linux/log2.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <net/ipv6.h>
#include <rdma/ib_addr.h>

#include "ah.h"
#include "cq.h"
#include "crypt.h"
#include "local.h"
#include "mmap.h"
#include "mr.h"
#include "notify.h"
#include "opcode.h"
#include "qp.h"
#include "req.h"
#include "sq.h"
#include "srq.h"
#include "ud.h"
#include "wq.h"
#include "xport.h"
#include "proto/bounds.h"

#define MR_QP_ACCESS \
	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
	 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC)

void mr_qp_dev_init(struct mr_dev *dev)
{
	xa_init_flags(&dev->qp_xa, XA_FLAGS_ALLOC);
	dev->qp_next = MR_QPN_MIN;
	atomic_set(&dev->num_qp, 0);
	/* Here, not in device.c: the KUnit fixtures create QPs too. */
	mutex_init(&dev->settings_lock);
	mr_xport_default_settings(&dev->settings);
}
EXPORT_SYMBOL_IF_KUNIT(mr_qp_dev_init);

/* The QPs besides the GSI QP, which ib_core gives every device. */
unsigned int mr_qp_count_non_gsi(struct mr_dev *dev)
{
	unsigned int n = atomic_read(&dev->num_qp);

	return n && xa_load(&dev->qp_xa, MR_QPN_GSI) ? n - 1 : n;
}

/* ib_core destroys every QP before it lets the device go. */
void mr_qp_dev_fini(struct mr_dev *dev)
{
	WARN_ON(!xa_empty(&dev->qp_xa));
	xa_destroy(&dev->qp_xa);
	mutex_destroy(&dev->settings_lock);
}
EXPORT_SYMBOL_IF_KUNIT(mr_qp_dev_fini);

/*
 * Find the QP numbered @qpn and take a reference; NULL if there is none.
 * Any context; release with mr_qp_put().
 */
struct mr_qp *mr_qp_get(struct mr_dev *dev, u32 qpn)
{
	struct mr_qp *qp;

	rcu_read_lock();
	qp = xa_load(&dev->qp_xa, qpn);
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	rcu_read_unlock();
	return qp;
}
EXPORT_SYMBOL_IF_KUNIT(mr_qp_get);

/*
 * The QP with the lowest QPN at or above *@qpn, with a reference, and
 * its QPN in *@qpn; NULL if there is none. For walks that must survive
 * QPs coming and going (netlink dumps).
 */
struct mr_qp *mr_qp_get_next(struct mr_dev *dev, u32 *qpn)
{
	unsigned long index = *qpn;
	struct mr_qp *qp;

	rcu_read_lock();
	xa_for_each_start(&dev->qp_xa, index, qp, index) {
		if (refcount_inc_not_zero(&qp->ref))
			break;
	}
	rcu_read_unlock();
	if (qp)
		*qpn = index;
	return qp;
}

void mr_qp_put(struct mr_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->released);
}
EXPORT_SYMBOL_IF_KUNIT(mr_qp_put);

/* create_qp and destroy_qp */

/*
 * mr_qp_fatal() queued it: move the QP to ERR, which flushes its queues
 * and tells netlink, and raise IB_EVENT_QP_FATAL. From process context:
 * modify_qp takes a mutex.
 */
static void mr_qp_err_work(struct work_struct *work)
{
	struct mr_qp *qp = container_of(work, struct mr_qp, err_work);
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = IB_EVENT_QP_FATAL,
	};

	/* A QP already reset or in ERR by its owner is left alone. */
	if (READ_ONCE(qp->state) != IB_QPS_RTS &&
	    READ_ONCE(qp->state) != IB_QPS_RTR)
		return;
	if (mr_qp_modify(&qp->ibqp, &attr, IB_QP_STATE, NULL))
		return;
	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/* Stopped first: until then a timer may still queue the error work. */
static void mr_qp_xport_destroy(struct mr_qp *qp)
{
	mr_xport_stop(qp);
	cancel_work_sync(&qp->err_work);
	mr_xport_destroy(qp);
}

static int mr_qp_check_cap(struct mr_dev *dev, const struct ib_qp_cap *cap)
{
	if (cap->max_send_wr > MR_MAX_QP_WR || cap->max_recv_wr > MR_MAX_QP_WR ||
	    cap->max_send_sge > MR_MAX_SGE || cap->max_recv_sge > MR_MAX_SGE ||
	    cap->max_inline_data > MR_MAX_INLINE) {
		ibdev_dbg(&dev->ib_dev,
			  "QP caps wr %u/%u sge %u/%u inline %u exceed %u/%u/%u\n",
			  cap->max_send_wr, cap->max_recv_wr, cap->max_send_sge,
			  cap->max_recv_sge, cap->max_inline_data, MR_MAX_QP_WR,
			  MR_MAX_SGE, MR_MAX_INLINE);
		return -EINVAL;
	}
	return 0;
}

static int mr_qp_check_init(struct mr_dev *dev,
			    const struct ib_qp_init_attr *init, bool user)
{
	if (init->qp_type != IB_QPT_RC && init->qp_type != IB_QPT_UC &&
	    init->qp_type != IB_QPT_UD && init->qp_type != IB_QPT_GSI) {
		ibdev_dbg(&dev->ib_dev, "QP type %d not supported (RC, UC, UD and GSI only)\n",
			  init->qp_type);
		return -EOPNOTSUPP;
	}
	if (init->qp_type == IB_QPT_GSI &&
	    (user || init->port_num != MR_PORT)) {
		ibdev_dbg(&dev->ib_dev, "GSI QP %s refused\n",
			  user ? "from user space" : "on a port we lack");
		return -EINVAL;
	}
	if (mr_qp_is_ud_type(init->qp_type) && init->srq) {
		ibdev_dbg(&dev->ib_dev, "UD QP with an SRQ not supported\n");
		return -EOPNOTSUPP;
	}
	if (init->rwq_ind_tbl) {
		ibdev_dbg(&dev->ib_dev, "QP with an RWQ table not supported\n");
		return -EOPNOTSUPP;
	}
	if (init->create_flags) {
		ibdev_dbg(&dev->ib_dev, "QP create flags %#x not supported\n",
			  init->create_flags);
		return -EOPNOTSUPP;
	}
	if (!init->send_cq || !init->recv_cq) {
		ibdev_dbg(&dev->ib_dev, "QP without a send or receive CQ\n");
		return -EINVAL;
	}
	return mr_qp_check_cap(dev, &init->cap);
}

/*
 * Size the send and receive rings from @init's caps, which get the values
 * granted; a QP on an SRQ gets the ring of the receives it binds instead.
 */
static int mr_qp_queues_init(struct mr_qp *qp, struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;
	u32 sq_sge, rq_sge;
	size_t sq_stride;
	int err;

	/* A queue holds at least one WR of at least one SGE. */
	cap->max_send_wr = max(cap->max_send_wr, 1U);
	cap->max_recv_wr = max(cap->max_recv_wr, 1U);
	sq_sge = max(cap->max_send_sge, 1U);
	rq_sge = max(cap->max_recv_sge, 1U);
	sq_stride = max(struct_size((struct mr_send_wqe *)NULL, sge, sq_sge),
			struct_size((struct mr_send_wqe *)NULL, inline_data,
				    cap->max_inline_data));
	err = mr_wq_init(&qp->sq, cap->max_send_wr, sq_sge, sq_stride);
	if (err)
		return err;
	if (init->srq) {
		err = mr_srq_qp_init(qp, init->srq);
		cap->max_recv_wr = 0;
		rq_sge = 0;
	} else {
		err = mr_wq_init(&qp->rq, cap->max_recv_wr, rq_sge,
				 struct_size((struct mr_recv_wqe *)NULL, sge,
					     rq_sge));
	}
	if (err) {
		kvfree(qp->sq.buf);
		return err;
	}
	cap->max_send_sge = sq_sge;
	cap->max_recv_sge = rq_sge;
	return 0;
}

/*
 * A user QP's rings, if its provider asks for them (an older one sends no
 * request and posts by command): the receive queue, unless on an SRQ,
 * and the send queue of an RC or UC QP. On failure it maps none.
 */
static int mr_qp_map_rings(struct mr_qp *qp, const struct ib_qp_init_attr *init,
			   struct ib_udata *udata)
{
	struct metaroce_create_qp_resp resp = {};
	u32 want, streams;
	int err;

	if (!udata || !udata->inlen)
		return 0;
	err = mr_mmap_read_request(qp->ibqp.device, udata,
				   METAROCE_QP_RQ_RING | METAROCE_QP_SQ_RING, &want,
				   &streams);
	if (err)
		return err;
	/* Sends name their stream in the send ring's slots. */
	if (streams > 1 &&
	    (init->qp_type != IB_QPT_RC || !(want & METAROCE_QP_SQ_RING) ||
	     streams > METAROCE_MAX_STREAMS ||
	     udata->outlen < sizeof(resp))) {
		ibdev_dbg(qp->ibqp.device,
			  "%u streams: RC with a send ring, at most %u\n",
			  streams, METAROCE_MAX_STREAMS);
		return -EINVAL;
	}
	if ((want & METAROCE_QP_RQ_RING) && !init->srq) {
		if (udata->outlen < offsetofend(typeof(resp), reserved))
			return -EINVAL;
		err = mr_wq_map_recv(&qp->rq, udata,
				     roundup_pow_of_two(qp->rq.depth));
		if (err)
			return err;
		resp.rq_mmap_offset = mr_mmap_offset(qp->rq.map);
		resp.rq_mmap_size = qp->rq.map->size;
		resp.flags |= METAROCE_QP_RQ_RING;
		resp.rq_entries = qp->rq.uentries;
		resp.rq_stride = qp->rq.ustride;
		resp.rq_max_sge = qp->rq.max_sge;
	}
	/* Datagrams name their AH, which the ring cannot carry. */
	if ((want & METAROCE_QP_SQ_RING) && !mr_qp_is_ud_type(init->qp_type) &&
	    udata->outlen >= sizeof(resp)) {
		err = mr_sq_map(qp, udata);
		if (err)
			goto err_rq;
		resp.sq_mmap_offset = mr_mmap_offset(qp->sq.map);
		resp.sq_mmap_size = qp->sq.map->size;
		resp.flags |= METAROCE_QP_SQ_RING;
		resp.sq_entries = qp->sq.uentries;
		resp.sq_stride = qp->sq.ustride;
		resp.sq_max_sge = qp->sq.max_sge;
		resp.sq_max_inline = qp->max_inline;
		/* The transport's requester takes them (mr_req_streams()). */
		if (streams > 1) {
			qp->nstreams = streams;
			resp.streams = streams;
		}
	}
	err = ib_copy_to_udata(udata, &resp, min(udata->outlen, sizeof(resp)));
	if (!err)
		return 0;
	mr_sq_unmap(qp);
err_rq:
	mr_wq_unmap(&qp->rq);
	return err;
}

/* Locks, reference, state and attributes of a new QP, in RESET. */
static void mr_qp_fields_init(struct mr_qp *qp,
			      const struct ib_qp_init_attr *init)
{
	/* Two call sites, two lock classes: modify_qp nests them. */
	spin_lock_init(&qp->sq.lock);
	spin_lock_init(&qp->rq.lock);
	mutex_init(&qp->state_lock);
	INIT_WORK(&qp->err_work, mr_qp_err_work);
	refcount_set(&qp->ref, 1);
	init_completion(&qp->released);
	qp->state = IB_QPS_RESET;
	qp->max_inline = init->cap.max_inline_data;
	qp->sq_sig_type = init->sq_sig_type;
	qp->scq = to_mr_cq(init->send_cq);
	qp->rcq = to_mr_cq(init->recv_cq);
	memset(&qp->attr, 0, sizeof(qp->attr));
	qp->attr.port_num = MR_PORT;
	qp->attr.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	qp->attr.ah_attr.port_num = MR_PORT;
	memset(&qp->flow, 0, sizeof(qp->flow));
}

/* The local-operation ring, then the transport (RC, UC) or ud.c's part. */
static int mr_qp_type_init(struct mr_qp *qp, enum ib_qp_type type)
{
	int err;

	err = mr_local_init(qp, type == IB_QPT_RC);
	if (err)
		return err;
	if (mr_qp_is_ud_type(type)) {
		mr_ud_qp_init(qp);
		return 0;
	}
	return mr_xport_create(qp);
}

/*
 * Reserve a QPN in the xarray, with no QP behind it yet: the GSI QP's
 * fixed one, or the next free one for the others.
 */
static int mr_qp_reserve_qpn(struct mr_dev *dev, enum ib_qp_type type,
			     u32 *qpn)
{
	int err;

	if (type == IB_QPT_GSI) {
		*qpn = MR_QPN_GSI;
		err = xa_insert(&dev->qp_xa, *qpn, NULL, GFP_KERNEL);
		if (err)
			ibdev_dbg(&dev->ib_dev, "a GSI QP exists already\n");
		return err;
	}
	err = xa_alloc_cyclic(&dev->qp_xa, qpn, NULL,
			      XA_LIMIT(MR_QPN_MIN, MR_QPN_MAX),
			      &dev->qp_next, GFP_KERNEL);
	if (err < 0) {
		ibdev_dbg(&dev->ib_dev, "no QPN left\n");
		return err == -EBUSY ? -ENOMEM : err;
	}
	/* 1 says the numbers wrapped around: a success too. */
	return 0;
}

int mr_qp_create(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		 struct ib_udata *udata)
{
	struct mr_dev *dev = to_mr_dev(ibqp->device);
	struct mr_qp *qp = to_mr_qp(ibqp);
	u32 qpn;
	int err;

	err = mr_qp_check_init(dev, init, !!udata);
	if (err)
		return err;
	if (atomic_inc_return(&dev->num_qp) > MR_MAX_QP) {
		ibdev_dbg(&dev->ib_dev, "QP limit of %u reached\n", MR_MAX_QP);
		err = -ENOMEM;
		goto err_count;
	}
	err = mr_qp_queues_init(qp, init);
	if (err)
		goto err_count;
	mr_qp_fields_init(qp, init);
	err = mr_qp_map_rings(qp, init, udata);
	if (err)
		goto err_rings;
	err = mr_qp_type_init(qp, init->qp_type);
	if (err)
		goto err_queues;

	/* Reserve the number, then publish the QP that carries it. */
	err = mr_qp_reserve_qpn(dev, init->qp_type, &qpn);
	if (err)
		goto err_xport;
	ibqp->qp_num = qpn;
	xa_store(&dev->qp_xa, qpn, qp, GFP_KERNEL);
	return 0;

err_xport:
	if (qp->xp)
		mr_qp_xport_destroy(qp);
err_queues:
	mr_local_fini(qp);
	mr_sq_unmap(qp);
	mr_wq_unmap(&qp->rq);
err_rings:
	mutex_destroy(&qp->state_lock);
	kvfree(qp->rq.buf);
	kvfree(qp->sq.buf);
err_count:
	atomic_dec(&dev->num_qp);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(mr_qp_create);

/* Drops queued WQEs without completions (ib_core wants none). */
int mr_qp_destroy(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct mr_dev *dev = to_mr_dev(ibqp->device);
	struct mr_qp *qp = to_mr_qp(ibqp);

	xa_erase(&dev->qp_xa, ibqp->qp_num);
	/*
	 * ib_core frees @qp with kfree(): no lookup may still be reading it.
	 * Expedited: a normal grace period per QP makes tearing down
	 * thousands of connections take minutes.
	 */
	synchronize_rcu_expedited();
	mr_qp_put(qp);
	wait_for_completion(&qp->released);
	if (qp->xp)
		mr_qp_xport_destroy(qp);
	else
		mr_ud_qp_fini(qp);
	mr_local_fini(qp);
	/* Nothing completes for @qp any more: none of its completions stay. */
	mr_cq_clean(qp->scq, ibqp);
	if (qp->rcq != qp->scq)
		mr_cq_clean(qp->rcq, ibqp);
	mr_sq_unmap(qp);
	kvfree(qp->sq.buf);
	mr_wq_unmap(&qp->rq);
	kvfree(qp->rq.buf);
	mutex_destroy(&qp->state_lock);
	atomic_dec(&dev->num_qp);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_qp_destroy);

/* modify_qp and query_qp */

/* The state transition, and the features the mask asks for. */
static int mr_qp_check_transition(struct mr_qp *qp,
				  const struct ib_qp_attr *attr, int mask)
{
	struct ib_device *ibdev = qp->ibqp.device;
	enum ib_qp_state cur, next;

	cur = mask & IB_QP_CUR_STATE ? attr->cur_qp_state : qp->state;
	next = mask & IB_QP_STATE ? attr->qp_state : cur;
	if (!ib_modify_qp_is_ok(cur, next, qp->ibqp.qp_type, mask)) {
		ibdev_dbg(ibdev, "QP %u: transition %d -> %d with mask %#x refused\n",
			  qp->ibqp.qp_num, cur, next, mask);
		return -EINVAL;
	}
	if (cur != qp->state) {
		ibdev_dbg(ibdev, "QP %u: current state %d given, it is %d\n",
			  qp->ibqp.qp_num, cur, qp->state);
		return -EINVAL;
	}
	if (next == IB_QPS_SQD) {
		ibdev_dbg(ibdev, "QP %u: SQD not supported\n", qp->ibqp.qp_num);
		return -EOPNOTSUPP;
	}
	if (mask & (IB_QP_ALT_PATH | IB_QP_RATE_LIMIT)) {
		ibdev_dbg(ibdev, "QP %u: alternate paths and rate limits not supported\n",
			  qp->ibqp.qp_num);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* The value of each attribute in the mask, against what we support. */
static int mr_qp_check_values(struct mr_qp *qp, const struct ib_qp_attr *attr,
			      int mask)
{
	struct mr_dev *dev = to_mr_dev(qp->ibqp.device);
	struct ib_device *ibdev = &dev->ib_dev;

	if ((mask & IB_QP_PORT) && attr->port_num != MR_PORT) {
		ibdev_dbg(ibdev, "QP %u: no port %u\n", qp->ibqp.qp_num,
			  attr->port_num);
		return -EINVAL;
	}
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index) {
		ibdev_dbg(ibdev, "QP %u: no P_Key index %u\n", qp->ibqp.qp_num,
			  attr->pkey_index);
		return -EINVAL;
	}
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~MR_QP_ACCESS)) {
		ibdev_dbg(ibdev, "QP %u: access flags %#x not supported\n",
			  qp->ibqp.qp_num, attr->qp_access_flags);
		return -EINVAL;
	}
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096 ||
	     mr_dev_active_mtu(dev) == MR_MTU_NONE)) {
		ibdev_dbg(ibdev, "QP %u: path MTU code %d invalid or netdev MTU %u too small\n",
			  qp->ibqp.qp_num, attr->path_mtu, dev->ndev->mtu);
		return -EINVAL;
	}
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > MR_QPN_MAX) {
		ibdev_dbg(ibdev, "QP %u: destination QPN %#x is not 24 bits\n",
			  qp->ibqp.qp_num, attr->dest_qp_num);
		return -EINVAL;
	}
	if (((mask & IB_QP_RQ_PSN) && attr->rq_psn > MR_QPN_MAX) ||
	    ((mask & IB_QP_SQ_PSN) && attr->sq_psn > MR_QPN_MAX)) {
		ibdev_dbg(ibdev, "QP %u: PSN is not 24 bits\n", qp->ibqp.qp_num);
		return -EINVAL;
	}
	if (((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	     attr->max_rd_atomic > MR_MAX_RD_ATOMIC) ||
	    ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	     attr->max_dest_rd_atomic > MR_MAX_RD_ATOMIC)) {
		ibdev_dbg(ibdev, "QP %u: RDMA READ/atomic depth %u/%u above %u\n",
			  qp->ibqp.qp_num, attr->max_rd_atomic,
			  attr->max_dest_rd_atomic, MR_MAX_RD_ATOMIC);
		return -EINVAL;
	}
	if (((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31) ||
	    ((mask & IB_QP_TIMEOUT) && attr->timeout > 31) ||
	    ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7) ||
	    ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)) {
		ibdev_dbg(ibdev, "QP %u: timer or retry count out of range\n",
			  qp->ibqp.qp_num);
		return -EINVAL;
	}
	return 0;
}

/* Check everything before changing anything: modify_qp is all or nothing. */
static int mr_qp_check_attr(struct mr_qp *qp, const struct ib_qp_attr *attr,
			    int mask, struct mr_flow *flow)
{
	int err;

	err = mr_qp_check_transition(qp, attr, mask);
	if (err)
		return err;
	err = mr_qp_check_values(qp, attr, mask);
	if (err)
		return err;
	if (mask & IB_QP_AV)
		return mr_ah_av_to_flow(to_mr_dev(qp->ibqp.device),
					&attr->ah_attr, flow);
	return 0;
}

static void mr_qp_store_attr(struct mr_qp *qp, const struct ib_qp_attr *attr,
			     int mask, const struct mr_flow *flow)
{
	struct mr_dev *dev = to_mr_dev(qp->ibqp.device);
	struct ib_qp_attr *a = &qp->attr;

	if (mask & IB_QP_ACCESS_FLAGS)
		a->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		a->port_num = attr->port_num;
	/*
	 * rdma_cm sizes the path MTU for 96 header bytes, we need up to
	 * MR_WIRE_OVERHEAD (more when the device encrypts): a request one
	 * step above the port's active MTU gets the active MTU, as query_qp
	 * then shows.
	 */
	if (mask & IB_QP_PATH_MTU)
		a->path_mtu = min_t(enum ib_mtu, attr->path_mtu,
				    (enum ib_mtu)mr_dev_active_mtu(dev));
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_PATH_MIG_STATE)
		a->path_mig_state = attr->path_mig_state;
	if (mask & IB_QP_QKEY)
		WRITE_ONCE(a->qkey, attr->qkey);
	if (mask & IB_QP_AV) {
		/* ib_core drops its sgid_attr reference when we return. */
		a->ah_attr = attr->ah_attr;
		a->ah_attr.grh.sgid_attr = NULL;
		qp->flow = *flow;
	}
}

int mr_qp_modify(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		 struct ib_udata *udata)
{
	struct mr_qp *qp = to_mr_qp(ibqp);
	struct mr_flow flow = {};
	enum ib_qp_state old;
	unsigned long flags;
	bool flush = false, last_wqe = false;
	int err;

	mutex_lock(&qp->state_lock);
	err = mr_qp_check_attr(qp, attr, mask, &flow);
	if (err)
		goto out;
	mr_qp_store_attr(qp, attr, mask, &flow);
	/* The peer is known: its keys are ready before its first packet. */
	if ((mask & IB_QP_AV) && qp->xp)
		mr_crypt_peer_prepare(to_mr_dev(ibqp->device), &qp->flow);
	if (mask & IB_QP_STATE) {
		old = qp->state;
		spin_lock_irqsave(&qp->sq.lock, flags);
		mr_wq_set_state(qp, attr->qp_state);
		spin_unlock_irqrestore(&qp->sq.lock, flags);
		/* Before the flush: the transport lets go of the WQEs. */
		if (qp->xp)
			mr_xport_modify(qp, old, qp->state);
		flush = qp->state == IB_QPS_ERR;
		last_wqe = flush && old != IB_QPS_ERR;
	}
out:
	mutex_unlock(&qp->state_lock);
	/* Not under state_lock: completion handlers may modify the QP. */
	if (flush) {
		mr_sq_pull(qp);
		mr_wq_flush(qp, MR_WQ_SQ);
		mr_wq_flush(qp, MR_WQ_RQ);
	}
	if (last_wqe) {
		mr_srq_qp_error(qp);
		mr_notify_qp_error(qp, qp->xp ? mr_xport_error_reason(qp) :
						METAROCE_QP_ERROR_USER);
	}
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(mr_qp_modify);

int mr_qp_query(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		struct ib_qp_init_attr *init)
{
	struct mr_qp *qp = to_mr_qp(ibqp);
	struct ib_qp_cap cap = {
		.max_send_wr = qp->sq.depth,
		.max_recv_wr = ibqp->srq ? 0 : qp->rq.depth,
		.max_send_sge = qp->sq.max_sge,
		.max_recv_sge = ibqp->srq ? 0 : qp->rq.max_sge,
		.max_inline_data = qp->max_inline,
	};

	mutex_lock(&qp->state_lock);
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	mutex_unlock(&qp->state_lock);
	attr->cap = cap;
	attr->sq_draining = 0;

	memset(init, 0, sizeof(*init));
	init->qp_context = ibqp->qp_context;
	init->send_cq = &qp->scq->ibcq;
	init->recv_cq = &qp->rcq->ibcq;
	init->srq = ibqp->srq;
	init->qp_type = ibqp->qp_type;
	init->sq_sig_type = qp->sq_sig_type;
	init->cap = cap;
	init->port_num = MR_PORT;
	return 0;
}

/* post_recv */

static int mr_qp_recv_one(struct mr_qp *qp, const struct ib_recv_wr *wr)
{
	if (qp->state == IB_QPS_RESET) {
		ibdev_dbg(qp->ibqp.device, "QP %u: post_recv in RESET\n",
			  qp->ibqp.qp_num);
		return -EINVAL;
	}
	if (qp->ibqp.srq) {
		ibdev_dbg(qp->ibqp.device,
			  "QP %u: post_recv on a QP with an SRQ\n",
			  qp->ibqp.qp_num);
		return -EINVAL;
	}
	return mr_wq_recv_add(qp->ibqp.device, &qp->rq, wr, "QP",
			       qp->ibqp.qp_num);
}

/*
 * Queue receive WRs in any state but RESET; in ERR they complete at once
 * as flushed. Any context.
 */
int mr_qp_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct mr_qp *qp = to_mr_qp(ibqp);
	unsigned long flags;
	bool flush;
	int err = 0;

	spin_lock_irqsave(&qp->rq.lock, flags);
	for (; wr; wr = wr->next) {
		err = mr_qp_recv_one(qp, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	flush = mr_wq_flushes(qp->state, MR_WQ_RQ);
	spin_unlock_irqrestore(&qp->rq.lock, flags);
	if (flush)
		mr_wq_flush(qp, MR_WQ_RQ);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(mr_qp_post_recv);

/* post_send */

static int mr_qp_send_queue(struct mr_qp *qp, const struct mr_send_wqe *wqe,
			    bool *flush, bool *kick)
{
	struct mr_wq *sq = &qp->sq;
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&sq->lock, flags);
	switch (qp->state) {
	case IB_QPS_RESET:
	case IB_QPS_INIT:
	case IB_QPS_RTR:
		ibdev_dbg(qp->ibqp.device, "QP %u: post_send in state %d\n",
			  qp->ibqp.qp_num, qp->state);
		err = -EINVAL;
		break;
	default:
		if (sq->count == sq->depth) {
			ibdev_dbg(qp->ibqp.device, "QP %u: send queue full (%u)\n",
				  qp->ibqp.qp_num, sq->depth);
			err = -ENOMEM;
		} else if (mr_wq_flushes(qp->state, MR_WQ_SQ)) {
			memcpy(mr_wq_slot(sq, sq->head + sq->count), wqe,
			       sq->stride);
			sq->count++;
			qp->local.posted++;
			*flush = true;
		} else {
			err = mr_sq_check_sges(qp, wqe);
			if (!err && qp->xp) {
				err = mr_req_submit(qp, wqe);
			} else if (!err) {
				/* UD: mr_ud_kick() sends it. */
				memcpy(mr_wq_slot(sq, sq->head + sq->count),
				       wqe, sq->stride);
				sq->count++;
			}
			if (!err) {
				qp->local.posted++;
				*kick = true;
			}
		}
		break;
	}
	spin_unlock_irqrestore(&sq->lock, flags);
	return err;
}

/*
 * Post send WRs: refused before RTS; in ERR (and SQE) queued and completed
 * at once as flushed. User QPs post in process context (inline data is
 * copied from user memory); kernel QPs may post from any context.
 */
int mr_qp_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct mr_qp *qp = to_mr_qp(ibqp);
	struct mr_send_wqe *wqe;
	bool flush = false, kick = false;
	int err = 0;

	if (qp->sq.uring) {
		/* The doorbell: its WRs are in the ring, none come with it. */
		if (wr) {
			ibdev_dbg(ibqp->device, "QP %u: posts through its send ring\n",
				  ibqp->qp_num);
			*bad_wr = wr;
			return -EINVAL;
		}
		/* In RTS the push reads the ring; in ERR it completes flushed. */
		mr_xport_kick(qp);
		if (mr_wq_flushes(READ_ONCE(qp->state), MR_WQ_SQ)) {
			mr_sq_pull(qp);
			mr_wq_flush(qp, MR_WQ_SQ);
		}
		return 0;
	}
	wqe = kmalloc(qp->sq.stride, ibqp->uobject ? GFP_KERNEL : GFP_ATOMIC);
	if (!wqe) {
		*bad_wr = wr;
		return -ENOMEM;
	}
	for (; wr; wr = wr->next) {
		if (wr->opcode == IB_WR_REG_MR || wr->opcode == IB_WR_LOCAL_INV) {
			err = mr_local_post(qp, wr);
		} else {
			err = mr_sq_build(qp, wr, !!ibqp->uobject, wqe);
			if (!err)
				err = mr_qp_send_queue(qp, wqe, &flush, &kick);
		}
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	kfree(wqe);
	if (kick && qp->xp)
		mr_xport_kick(qp);
	else if (kick)
		mr_ud_kick(qp);
	if (flush)
		mr_wq_flush(qp, MR_WQ_SQ);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(mr_qp_post_send);
