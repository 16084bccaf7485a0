// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory windows, types 1 and 2B. A window's key has an index in the MR
 * key space (mr.c), whose entry is a tagged pointer to the window's key
 * state: it outlives the ib_mw by an RCU grace period, since lookups from
 * softirq read it. Binding makes a view of the MR (mr_mr_bind_window())
 * and publishes it here; remote accesses with the window's key find the
 * view. Type 1 windows are bound with ibv_bind_mw() and unbound by a bind
 * of length 0; type 2 windows by a bind WR, once, to the binding QP, until
 * a LOCAL_INV or a received SEND with invalidate. Binds and dealloc hold
 * the device's mw_lock; the view pointer changes under the state's lock.
 */
#include <linux/slab.h>

#include "mr.h"
#include "mw.h"

/* What a window's key index names; freed after a grace period. */
struct mr_mw_key {
	spinlock_t lock;		/* window and rkey; taken from softirq */
	struct mr_mr __rcu *window;	/* the bound window's view, or NULL */
	u32 rkey;			/* the bound window's key */
	u32 qpn;			/* type 2: the QP it is bound to */
	struct ib_pd *pd;
	enum ib_mw_type type;
	struct rcu_head rcu;
};

static inline struct mr_mw *to_mr_mw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct mr_mw, ibmw);
}

int mr_mw_alloc(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct mr_dev *dev = to_mr_dev(ibmw->device);
	struct mr_mw *mw = to_mr_mw(ibmw);
	struct mr_mw_key *k;
	int err;

	k = kzalloc(sizeof(*k), GFP_KERNEL);
	if (!k)
		return -ENOMEM;
	spin_lock_init(&k->lock);
	k->pd = ibmw->pd;
	k->type = ibmw->type;
	err = xa_alloc_cyclic(&dev->mr_xa, &mw->index,
			      xa_tag_pointer(k, MR_XA_MW),
			      XA_LIMIT(1, MR_MAX_MR), &dev->mr_next,
			      GFP_KERNEL);
	if (err < 0) {
		kfree(k);
		ibdev_dbg(&dev->ib_dev, "no key left for a MW\n");
		return err == -EBUSY ? -ENOMEM : err;
	}
	mw->key = k;
	ibmw->rkey = mw->index << 8 | (u8)atomic_inc_return(&dev->mr_variant);
	return 0;
}

/* Unbind @k's window, if any. */
static void mr_mw_unbind(struct mr_mw_key *k)
{
	struct mr_mr *view;
	unsigned long flags;

	spin_lock_irqsave(&k->lock, flags);
	view = rcu_dereference_protected(k->window, lockdep_is_held(&k->lock));
	RCU_INIT_POINTER(k->window, NULL);
	spin_unlock_irqrestore(&k->lock, flags);
	if (view)
		mr_mr_unbind_window(view);
}

int mr_mw_dealloc(struct ib_mw *ibmw)
{
	struct mr_dev *dev = to_mr_dev(ibmw->device);
	struct mr_mw *mw = to_mr_mw(ibmw);

	mutex_lock(&dev->mw_lock);
	xa_erase(&dev->mr_xa, mw->index);
	mutex_unlock(&dev->mw_lock);
	mr_mw_unbind(mw->key);
	kfree_rcu(mw->key, rcu);
	return 0;
}

/* The view of @k's bound window, or NULL; under rcu_read_lock(). */
struct mr_mr *mr_mw_window(struct mr_mw_key *k)
{
	return rcu_dereference(k->window);
}

/**
 * mr_mw_bind() - execute a bind of a user QP
 * @qp: the binding QP
 * @req: the request, as the provider gave it
 *
 * Returns 0, or -EINVAL / -ENOMEM with the reason logged.
 */
int mr_mw_bind(struct mr_qp *qp, const struct metaroce_local_wr *req)
{
	struct mr_dev *dev = to_mr_dev(qp->ibqp.device);
	struct ib_pd *pd = qp->ibqp.pd;
	struct mr_mr *view = NULL, *old;
	const char *why = NULL;
	struct mr_mw_key *k;
	unsigned long flags;
	void *entry;

	mutex_lock(&dev->mw_lock);
	entry = xa_load(&dev->mr_xa, req->rkey >> 8);
	k = xa_pointer_tag(entry) == MR_XA_MW ? xa_untag_pointer(entry) : NULL;
	if (!k || k->pd != pd)
		why = "no MW of the QP's PD with that key";
	else if (req->new_rkey >> 8 != req->rkey >> 8)
		why = "new key of another index";
	else if (k->type == IB_MW_TYPE_2 && rcu_access_pointer(k->window))
		why = "type 2 MW bound already";
	else if (k->type == IB_MW_TYPE_2 && !req->length)
		why = "type 2 MW bound with length 0";
	if (why) {
		mutex_unlock(&dev->mw_lock);
		ibdev_dbg(&dev->ib_dev, "QP %u: bind of MW %#x refused: %s\n",
			  qp->ibqp.qp_num, req->rkey, why);
		return -EINVAL;
	}
	if (req->length) {
		view = mr_mr_bind_window(dev, pd, req->mr_lkey, req->addr,
					 req->length, req->access, req->new_rkey,
					 k->type == IB_MW_TYPE_2 ?
						 qp->ibqp.qp_num : 0);
		if (IS_ERR(view)) {
			mutex_unlock(&dev->mw_lock);
			return PTR_ERR(view);
		}
	}
	spin_lock_irqsave(&k->lock, flags);
	old = rcu_dereference_protected(k->window, lockdep_is_held(&k->lock));
	rcu_assign_pointer(k->window, view);
	k->rkey = req->new_rkey;
	k->qpn = qp->ibqp.qp_num;
	spin_unlock_irqrestore(&k->lock, flags);
	mutex_unlock(&dev->mw_lock);
	if (old)
		mr_mr_unbind_window(old);
	return 0;
}

/**
 * mr_mw_invalidate() - unbind a type 2 window by its key
 * @dev: the device
 * @k: the window's key state
 * @pd: the PD of the invalidating QP
 * @key: the key to invalidate (LOCAL_INV, or a SEND with invalidate's)
 * @rqp: for a SEND with invalidate, the QP it came to; NULL for LOCAL_INV
 *
 * Under rcu_read_lock(), any context. Type 1 windows are refused, as the
 * spec has it (o10-37.2.26), and a peer reaches a window only through the
 * QP it is bound to. Returns 0 or -EINVAL with the reason logged.
 */
int mr_mw_invalidate(struct mr_dev *dev, struct mr_mw_key *k,
		     struct ib_pd *pd, u32 key, const struct mr_qp *rqp)
{
	const char *why = NULL;
	struct mr_mr *view;
	unsigned long flags;

	spin_lock_irqsave(&k->lock, flags);
	view = rcu_dereference_protected(k->window, lockdep_is_held(&k->lock));
	if (k->type == IB_MW_TYPE_1)
		why = "a type 1 MW";
	else if (!view || k->rkey != key)
		why = "no window bound with that key";
	else if (k->pd != pd)
		why = "MW of another PD";
	else if (rqp && k->qpn != rqp->ibqp.qp_num)
		why = "window bound to another QP";
	else
		RCU_INIT_POINTER(k->window, NULL);
	spin_unlock_irqrestore(&k->lock, flags);
	if (why) {
		ibdev_dbg(&dev->ib_dev, "invalidate %#x refused: %s\n", key,
			  why);
		return -EINVAL;
	}
	mr_mr_unbind_window(view);
	return 0;
}
