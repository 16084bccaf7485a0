// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions: registration of user memory (pinned through ib_umem),
 * the DMA MR and the fast-registration MRs of kernel consumers, their keys,
 * and the data movers that the transport uses to read and write a region,
 * also from softirq.
 *
 * Keys are (index << 8 | variant): the index finds the MR in a per-device
 * xarray, the variant byte changes with every registration, so a key kept
 * after its MR was deregistered does not find the MR that reuses the index.
 * Lookups take a reference under RCU; dereg unpublishes the MR, then waits
 * for those references to go before unpinning its pages.
 *
 * Memory windows (mw.c) share the key space: their index holds a tagged
 * pointer to the window's key state, and a bound window is a "view", an
 * mr_mr of its own range and rights whose pages are its parent MR's. A
 * view is made by each bind and holds a reference on the parent; unbinding
 * drops the view's own reference, so a lookup in flight keeps both alive.
 * An MR with windows bound to it cannot be deregistered (as rxe).
 *
 * A fast-registration MR (ib_alloc_mr) gets its pages from ib_map_mr_sg()
 * and becomes usable only when an IB_WR_REG_MR gives it a key, rights and
 * a range; IB_WR_LOCAL_INV or a SEND with invalidate takes its keys away
 * again, and completes once the lookups that found it are done. Lookups
 * match the keys kept here, not those in struct ib_mr, which the consumer
 * changes (ib_update_fast_reg_key) before registering.
 */
#include <kunit/visibility.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>

#include "mr.h"
#include "mw.h"
#include "proto/bounds.h"

static_assert(MR_ACC_LOCAL_WRITE == IB_ACCESS_LOCAL_WRITE);
static_assert(MR_ACC_REMOTE_WRITE == IB_ACCESS_REMOTE_WRITE);
static_assert(MR_ACC_REMOTE_READ == IB_ACCESS_REMOTE_READ);
static_assert(MR_ACC_REMOTE_ATOMIC == IB_ACCESS_REMOTE_ATOMIC);
static_assert(!(MR_ACC_LOCAL_READ & IB_ACCESS_SUPPORTED));
static_assert(MR_MAX_MR < (1u << 24));

/* Flags accepted besides the rights: hints that change nothing for us. */
#define MR_ACCESS_IGNORED (IB_ACCESS_HUGETLB | IB_ACCESS_OPTIONAL)

struct mr_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;	/* NULL for the DMA MR */
	struct page **pages;	/* the umem's pages, for O(1) offset lookup */
	u64 *page_list;		/* fast reg: kernel addresses of its pages */
	u32 max_pages;		/* fast reg: size of page_list */
	u32 npages;		/* fast reg: pages mapped by ib_map_mr_sg() */
	u32 first_off;		/* fast reg: iova's offset in page_list[0] */
	u32 page_shift;		/* fast reg: log2 of the registered page size */
	u64 iova;
	u64 length;
	u32 access;		/* MR_ACC_* */
	u32 index;
	u32 lkey;		/* what lookups match; 0: invalid */
	u32 rkey;		/* 0: no remote access */
	struct mr_mr *parent;	/* a window's view: the MR it lies in */
	u32 qpn;		/* a type 2 window's view: its QP; else 0 */
	atomic_t num_mw;	/* windows bound to this MR */
	refcount_t ref;		/* the registration's, plus one per lookup */
	struct completion released;
	struct rcu_head rcu;
};

static inline struct mr_mr *to_mr_mr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct mr_mr, ibmr);
}

void mr_mr_dev_init(struct mr_dev *dev)
{
	xa_init_flags(&dev->mr_xa, XA_FLAGS_ALLOC1);
	mutex_init(&dev->mw_lock);
	dev->mr_next = 1;
	atomic_set(&dev->mr_variant, 0);
	atomic_long_set(&dev->mr_refused, 0);
}
EXPORT_SYMBOL_IF_KUNIT(mr_mr_dev_init);

/* ib_core deregisters every MR before it lets the device go. */
void mr_mr_dev_fini(struct mr_dev *dev)
{
	WARN_ON(!xa_empty(&dev->mr_xa));
	xa_destroy(&dev->mr_xa);
}
EXPORT_SYMBOL_IF_KUNIT(mr_mr_dev_fini);

/* Rights as registered (the IB flags minus the hints we ignore), or -errno. */
static int mr_mr_rights(struct mr_dev *dev, int access)
{
	const u32 known = MR_ACC_MASK | MR_ACC_MW_BIND;

	if (access & ~(known | MR_ACCESS_IGNORED)) {
		ibdev_dbg(&dev->ib_dev, "MR access flags %#x not supported\n",
			  access & ~(known | MR_ACCESS_IGNORED));
		return -EOPNOTSUPP;
	}
	return access & known;
}

/* Give @mr its keys and make it visible to lookups. */
static int mr_mr_publish(struct mr_dev *dev, struct mr_mr *mr)
{
	u32 key;
	int err;

	/* Reserve the index first: the key depends on it. */
	err = xa_alloc_cyclic(&dev->mr_xa, &mr->index, NULL,
			      XA_LIMIT(1, MR_MAX_MR), &dev->mr_next,
			      GFP_KERNEL);
	if (err < 0) {
		ibdev_dbg(&dev->ib_dev, "no MR key left (%d MRs max)\n",
			  MR_MAX_MR);
		return err == -EBUSY ? -ENOMEM : err;
	}
	key = mr->index << 8 | (u8)atomic_inc_return(&dev->mr_variant);
	mr->ibmr.lkey = key;
	/* No remote right, no rkey: index 0 is never allocated. */
	mr->ibmr.rkey = mr->access & MR_ACC_REMOTE ? key : 0;
	if (mr->ibmr.type == IB_MR_TYPE_MEM_REG) {
		/* The consumer's REG_MR WR will use the key in both. */
		mr->ibmr.rkey = key;
	} else {
		mr->lkey = mr->ibmr.lkey;
		mr->rkey = mr->ibmr.rkey;
	}
	refcount_set(&mr->ref, 1);
	init_completion(&mr->released);
	xa_store(&dev->mr_xa, mr->index, mr, GFP_KERNEL);
	return 0;
}

/*
 * Hide @mr from lookups and wait until no packet uses it any more; refused
 * while windows are bound to it (IBA 10.6.7.2.6). mw_lock orders this
 * against binds, which find the MR by its key.
 */
static int mr_mr_unpublish(struct mr_dev *dev, struct mr_mr *mr)
{
	mutex_lock(&dev->mw_lock);
	if (atomic_read(&mr->num_mw)) {
		mutex_unlock(&dev->mw_lock);
		ibdev_dbg(&dev->ib_dev, "MR %#x has %d windows bound\n",
			  mr->ibmr.lkey, atomic_read(&mr->num_mw));
		return -EINVAL;
	}
	xa_erase(&dev->mr_xa, mr->index);
	mutex_unlock(&dev->mw_lock);
	mr_mr_put(mr);
	wait_for_completion(&mr->released);
	return 0;
}

/* Unpin the pages of a user MR, free a fast-reg MR's page list. */
static void mr_mr_unpin(struct mr_mr *mr)
{
	kvfree(mr->page_list);
	kvfree(mr->pages);
	ib_umem_release(mr->umem);
}

/*
 * What reg_mr returns: @mr published, or, when @err is set or publishing
 * fails, @mr freed and the error.
 */
static struct ib_mr *mr_mr_finish(struct mr_dev *dev, struct mr_mr *mr,
				  int err)
{
	if (!err)
		err = mr_mr_publish(dev, mr);
	if (!err)
		return &mr->ibmr;
	mr_mr_unpin(mr);
	kfree(mr);
	return ERR_PTR(err);
}

static struct mr_mr *mr_mr_new(struct ib_pd *ibpd, enum ib_mr_type type,
			       u64 iova, u64 length, u32 rights)
{
	struct mr_mr *mr = kzalloc(sizeof(*mr), GFP_KERNEL);

	if (!mr)
		return NULL;
	/* ib_core sets these after we return; lookups need them before. */
	mr->ibmr.type = type;
	mr->ibmr.device = ibpd->device;
	mr->ibmr.pd = ibpd;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	mr->ibmr.page_size = PAGE_SIZE;
	mr->iova = iova;
	mr->length = length;
	mr->access = rights;
	return mr;
}

struct ib_mr *mr_mr_get_dma(struct ib_pd *ibpd, int access)
{
	struct mr_dev *dev = to_mr_dev(ibpd->device);
	int rights = mr_mr_rights(dev, access);
	struct mr_mr *mr;

	if (rights < 0)
		return ERR_PTR(rights);
	/* A peer with a key to all of kernel memory: never. */
	if (rights & (MR_ACC_REMOTE | MR_ACC_MW_BIND)) {
		ibdev_dbg(&dev->ib_dev, "DMA MR with remote access refused\n");
		return ERR_PTR(-EOPNOTSUPP);
	}
	/*
	 * Kernel consumers address it with the "DMA addresses" of a virtual
	 * DMA device, i.e. kernel virtual addresses: [0, 2^64 - 1) covers all.
	 */
	mr = mr_mr_new(ibpd, IB_MR_TYPE_DMA, 0, U64_MAX, rights);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	return mr_mr_finish(dev, mr, 0);
}
EXPORT_SYMBOL_IF_KUNIT(mr_mr_get_dma);

/* Page pointers of the pinned umem, one per PAGE_SIZE page. */
static int mr_mr_collect_pages(struct mr_mr *mr)
{
	struct sg_table *sgt = &mr->umem->sgt_append.sgt;
	size_t npages = ib_umem_num_pages(mr->umem), i = 0;
	struct sg_page_iter piter;

	mr->pages = kvcalloc(npages, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(sgt, &piter, 0) {
		if (WARN_ON_ONCE(i >= npages))
			return -EFAULT;
		mr->pages[i++] = sg_page_iter_page(&piter);
	}
	if (WARN_ON_ONCE(i != npages))
		return -EFAULT;
	return 0;
}

struct ib_mr *mr_mr_reg_user(struct ib_pd *ibpd, u64 start, u64 length,
			     u64 iova, int access, struct ib_udata *udata)
{
	struct mr_dev *dev = to_mr_dev(ibpd->device);
	int rights = mr_mr_rights(dev, access);
	struct mr_mr *mr;
	int err;

	if (rights < 0)
		return ERR_PTR(rights);
	err = mr_bounds_check_region(iova, length, rights);
	if (err) {
		ibdev_dbg(&dev->ib_dev,
			  "reg_mr refused (iova %#llx length %llu access %#x): %s\n",
			  iova, length, access,
			  err == -MR_ELENGTH ? "zero length" :
			  err == -MR_ERANGE ? "iova range wraps" :
			  "remote write/atomic without local write");
		return ERR_PTR(-EINVAL);
	}
	if (length > MR_MAX_MR_SIZE) {
		ibdev_dbg(&dev->ib_dev, "MR of %llu bytes exceeds %llu\n",
			  length, MR_MAX_MR_SIZE);
		return ERR_PTR(-EINVAL);
	}

	mr = mr_mr_new(ibpd, IB_MR_TYPE_USER, iova, length, rights);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		mr->umem = NULL;
		ibdev_dbg(&dev->ib_dev, "pinning %llu bytes at %#llx failed (%d)\n",
			  length, start, err);
	} else {
		err = mr_mr_collect_pages(mr);
	}
	return mr_mr_finish(dev, mr, err);
}

int mr_mr_dereg(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct mr_mr *mr = to_mr_mr(ibmr);

	int err = mr_mr_unpublish(to_mr_dev(ibmr->device), mr);

	if (err)
		return err;
	mr_mr_unpin(mr);
	/* A lookup may still be looking at it under RCU. */
	kfree_rcu(mr, rcu);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_mr_dereg);

struct ib_mr *mr_mr_alloc_fast(struct ib_pd *ibpd, enum ib_mr_type type,
			       u32 max_num_sg)
{
	struct mr_dev *dev = to_mr_dev(ibpd->device);
	struct mr_mr *mr;

	if (type != IB_MR_TYPE_MEM_REG) {
		ibdev_dbg(&dev->ib_dev, "MR type %d not supported\n", type);
		return ERR_PTR(-EOPNOTSUPP);
	}
	if (!max_num_sg || max_num_sg > MR_MAX_FAST_REG_PAGES) {
		ibdev_dbg(&dev->ib_dev, "fast-reg MR of %u pages: 1 to %u\n",
			  max_num_sg, MR_MAX_FAST_REG_PAGES);
		return ERR_PTR(-EINVAL);
	}
	mr = mr_mr_new(ibpd, type, 0, 0, 0);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->page_list = kvcalloc(max_num_sg, sizeof(*mr->page_list),
				 GFP_KERNEL);
	mr->max_pages = max_num_sg;
	return mr_mr_finish(dev, mr, mr->page_list ? 0 : -ENOMEM);
}
EXPORT_SYMBOL_IF_KUNIT(mr_mr_alloc_fast);

static int mr_mr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct mr_mr *mr = to_mr_mr(ibmr);

	if (mr->npages == mr->max_pages)
		return -ENOMEM;
	mr->page_list[mr->npages++] = addr;
	return 0;
}

int mr_mr_map_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		 unsigned int *sg_offset)
{
	struct mr_mr *mr = to_mr_mr(ibmr);
	int n;

	mr->npages = 0;
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, mr_mr_set_page);
	mr->first_off = ibmr->iova & (ibmr->page_size - 1);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(mr_mr_map_sg);

/**
 * mr_mr_fast_reg() - execute an IB_WR_REG_MR
 * @dev: the device
 * @pd: the posting QP's PD
 * @wr: the work request
 *
 * The MR takes the WR's key, its rights, and the range ib_map_mr_sg() set.
 * Returns 0, or -EINVAL with the reason logged.
 */
int mr_mr_fast_reg(struct mr_dev *dev, struct ib_pd *pd,
		   const struct ib_reg_wr *wr)
{
	struct mr_mr *mr = to_mr_mr(wr->mr);
	int rights = mr_mr_rights(dev, wr->access);
	const char *why = NULL;
	u64 size = wr->mr->page_size;

	if (wr->mr->type != IB_MR_TYPE_MEM_REG || !mr->page_list)
		why = "not a fast-registration MR";
	else if (wr->mr->pd != pd)
		why = "MR of another PD";
	else if (wr->key >> 8 != mr->index)
		why = "key of another MR";
	else if (rights < 0 ||
		 mr_bounds_check_region(wr->mr->iova, wr->mr->length, rights))
		why = "bad access flags or range";
	else if (!is_power_of_2(size) || size < SZ_4K ||
		 mr->first_off + wr->mr->length > mr->npages * size)
		why = "range beyond the mapped pages";
	if (why) {
		ibdev_dbg(&dev->ib_dev, "REG_MR of key %#x refused: %s\n",
			  wr->key, why);
		return -EINVAL;
	}
	/* Invalid while it changes, so no lookup sees half of it. */
	WRITE_ONCE(mr->lkey, 0);
	WRITE_ONCE(mr->rkey, 0);
	smp_wmb();	/* the range before the keys */
	mr->iova = wr->mr->iova;
	mr->length = wr->mr->length;
	mr->access = rights;
	mr->page_shift = ilog2(size);
	smp_wmb();	/* the range before the new keys: mr_mr_get() */
	WRITE_ONCE(mr->lkey, wr->key);
	WRITE_ONCE(mr->rkey, rights & MR_ACC_REMOTE ? wr->key : 0);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_mr_fast_reg);

/*
 * The keys of @mr are gone: wait until the lookups that found it with
 * them are done, so that once the invalidation completes nothing reads or
 * writes its pages. Besides lookups, the references are the
 * registration's, the caller's and one per window bound to it (the views
 * keep theirs). A lookup is one packet's copy under a spinlock, so the
 * wait is short; a LOCAL_INV posted from a task yields meanwhile. The
 * reference count is read before the windows: a bind racing with us holds
 * one more reference before it counts its window, and mr_mr_get() sees
 * our cleared key if we missed its reference.
 */
static void mr_mr_wait_lookups(struct mr_mr *mr)
{
	smp_mb();	/* the cleared keys before the count: mr_mr_get() */
	for (;;) {
		unsigned int refs = refcount_read(&mr->ref);

		smp_rmb();	/* the references before the windows */
		if (refs <= 2 + (unsigned int)atomic_read(&mr->num_mw))
			return;
		if (preemptible())
			cond_resched();
		else
			cpu_relax();
	}
}

/**
 * mr_mr_invalidate() - take the keys of a fast-registration MR away
 * @dev: the device
 * @pd: the PD of the QP that invalidates
 * @key: its current key (IB_WR_LOCAL_INV, or a received SEND_INV's rkey)
 * @rqp: for a received SEND_INV, the QP it came to; NULL for a local one
 *
 * @key may also name a memory window (mw.c). A peer names an MR by its
 * rkey, which an MR without remote rights does not have: it cannot take
 * away what it was never given. Returns 0, or -EINVAL if @key names no
 * valid fast-reg MR or type 2 window of @pd.
 */
int mr_mr_invalidate(struct mr_dev *dev, struct ib_pd *pd, u32 key,
		     const struct mr_qp *rqp)
{
	struct mr_mr *mr;
	void *entry;
	int err = 0;

	rcu_read_lock();
	entry = xa_load(&dev->mr_xa, key >> 8);
	if (xa_pointer_tag(entry) == MR_XA_MW) {
		err = mr_mw_invalidate(dev, xa_untag_pointer(entry), pd, key,
				       rqp);
		rcu_read_unlock();
		return err;
	}
	rcu_read_unlock();
	mr = mr_mr_get(dev, pd, key, rqp);
	if (!mr) {
		ibdev_dbg(&dev->ib_dev, "invalidate %#x: no valid MR with that key\n",
			  key);
		return -EINVAL;
	}
	if (mr->ibmr.type != IB_MR_TYPE_MEM_REG) {
		ibdev_dbg(&dev->ib_dev, "invalidate %#x: not a fast-registration MR\n",
			  key);
		err = -EINVAL;
	} else {
		WRITE_ONCE(mr->lkey, 0);
		WRITE_ONCE(mr->rkey, 0);
		mr_mr_wait_lookups(mr);
	}
	mr_mr_put(mr);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(mr_mr_invalidate);

/* The key a lookup matches: the rkey for a peer's access (@rqp). */
static u32 mr_mr_key(const struct mr_mr *mr, const struct mr_qp *rqp)
{
	return rqp ? READ_ONCE(mr->rkey) : READ_ONCE(mr->lkey);
}

/*
 * Find the MR of @key and take a reference; NULL if there is none, it is
 * stale, belongs to another PD than @pd (unless @pd is NULL), or, for a
 * remote access by QP @rqp, grants no remote access. An rkey may name a
 * bound memory window: that gives its view, whose range and rights are the
 * window's; a type 2 window serves only the QP it is bound to. Any
 * context; release with mr_mr_put().
 */
struct mr_mr *mr_mr_get(struct mr_dev *dev, struct ib_pd *pd, u32 key,
			const struct mr_qp *rqp)
{
	struct mr_mr *mr;
	void *entry;

	rcu_read_lock();
	entry = xa_load(&dev->mr_xa, key >> 8);
	if (xa_pointer_tag(entry) == MR_XA_MW)
		mr = rqp ? mr_mw_window(xa_untag_pointer(entry)) : NULL;
	else
		mr = entry;
	if (mr && (mr_mr_key(mr, rqp) != key ||
		   (pd && mr->ibmr.pd != pd) ||
		   (mr->qpn && mr->qpn != rqp->ibqp.qp_num) ||
		   !refcount_inc_not_zero(&mr->ref)))
		mr = NULL;
	/* Its keys again, after our reference: mr_mr_wait_lookups(). */
	if (mr) {
		smp_mb__after_atomic();	/* our reference, then the key */
		if (mr_mr_key(mr, rqp) != key) {
			mr_mr_put(mr);
			mr = NULL;
		}
	}
	rcu_read_unlock();
	if (!mr)
		atomic_long_inc(&dev->mr_refused);
	else
		smp_rmb();	/* the key before the range: mr_mr_fast_reg() */
	return mr;
}
EXPORT_SYMBOL_IF_KUNIT(mr_mr_get);

void mr_mr_put(struct mr_mr *mr)
{
	if (!refcount_dec_and_test(&mr->ref))
		return;
	if (!mr->parent) {
		complete(&mr->released);
		return;
	}
	/* A window's view: unbound and no lookup left. */
	mr_mr_put(mr->parent);
	kfree_rcu(mr, rcu);
}
EXPORT_SYMBOL_IF_KUNIT(mr_mr_put);

/**
 * mr_mr_bind_window() - the view of a window to bind
 * @dev: the device
 * @pd: the PD of the window and of the binding QP
 * @lkey: the key of the MR the window lies in
 * @iova: the window's first byte
 * @len: its length, not 0
 * @access: its rights (IB_ACCESS_*; local write is the MR's, ignored)
 * @rkey: the window's key while bound
 * @qpn: a type 2 window's QP, or 0
 *
 * Called with mw_lock held, so the MR cannot go meanwhile. Returns the
 * view, which lookups may use once the window publishes it, or an
 * ERR_PTR with the reason logged.
 */
struct mr_mr *mr_mr_bind_window(struct mr_dev *dev, struct ib_pd *pd,
				u32 lkey, u64 iova, u64 len, u32 access,
				u32 rkey, u32 qpn)
{
	struct mr_mr *mr, *view;
	int err;

	lockdep_assert_held(&dev->mw_lock);
	mr = mr_mr_get(dev, pd, lkey, NULL);
	if (!mr) {
		ibdev_dbg(&dev->ib_dev, "bind: no MR %#x in the PD\n", lkey);
		return ERR_PTR(-EINVAL);
	}
	err = mr_bounds_check_window(mr->iova, mr->length, mr->access, iova, len,
				     access);
	if (err) {
		ibdev_dbg(&dev->ib_dev, "bind to MR %#x refused: %s\n", lkey,
			  err == -MR_ERANGE ? "window outside the MR" :
			  err == -MR_EFLAGS ? "bad window access flags" :
			  "MR without MW_BIND, or writable window on a read-only MR");
		mr_mr_put(mr);
		return ERR_PTR(-EINVAL);
	}
	view = mr_mr_new(pd, IB_MR_TYPE_USER, iova, len,
			 access & MR_ACC_REMOTE);
	if (!view) {
		mr_mr_put(mr);
		return ERR_PTR(-ENOMEM);
	}
	view->parent = mr;	/* our lookup's reference is the view's now */
	view->qpn = qpn;
	view->rkey = rkey;
	refcount_set(&view->ref, 1);
	atomic_inc(&mr->num_mw);
	return view;
}

/* A window's view is no longer bound: the last lookup frees it. */
void mr_mr_unbind_window(struct mr_mr *view)
{
	atomic_dec(&view->parent->num_mw);
	mr_mr_put(view);
}

/* Check an access; 0, -EACCES (rights) or -ERANGE (bounds). */
int mr_mr_check(struct mr_mr *mr, u64 iova, u64 len, u32 need)
{
	int err = mr_bounds_check_range(mr->iova, mr->length, mr->access, iova, len,
				 need);

	if (!err)
		return 0;
	atomic_long_inc(&to_mr_dev(mr->ibmr.device)->mr_refused);
	return err == -MR_ERANGE ? -ERANGE : -EACCES;
}

/*
 * mr_mr_walk() for a fast-reg MR: its pages are kernel addresses (a
 * virtual DMA device's "DMA addresses"), each mapped for its whole size.
 */
static void mr_mr_walk_pages(struct mr_mr *mr, u64 iova, u64 len,
			     void (*fn)(void *va, size_t n, void *ctx),
			     void *ctx)
{
	u64 size = BIT_ULL(mr->page_shift);
	u64 pos = mr->first_off + (iova - mr->iova);

	while (len) {
		u64 off = pos & (size - 1);
		u64 n = min(len, size - off);
		u32 i = pos >> mr->page_shift;

		if (WARN_ON_ONCE(i >= mr->npages))
			return;
		fn((void *)(uintptr_t)(mr->page_list[i] + off), n, ctx);
		pos += n;
		len -= n;
	}
}

/*
 * Call @fn on each virtually contiguous piece of [iova, iova + len), which
 * mr_mr_check() has accepted. Pages are mapped with kmap_local_page(), so
 * this neither sleeps nor touches user mappings, and @fn may not sleep.
 */
static void mr_mr_walk(struct mr_mr *mr, u64 iova, u64 len,
		       void (*fn)(void *va, size_t n, void *ctx), void *ctx)
{
	u64 pos;

	if (mr->parent)	/* a window: the same addresses in its MR */
		mr = mr->parent;
	if (mr->page_list) {
		mr_mr_walk_pages(mr, iova, len, fn, ctx);
		return;
	}
	if (!mr->umem) {
		fn((void *)(uintptr_t)iova, len, ctx);
		return;
	}
	/* Byte position in the pinned pages, which start page aligned. */
	pos = ib_umem_offset(mr->umem) + (iova - mr->iova);
	while (len) {
		size_t off = offset_in_page(pos);
		size_t n = min_t(u64, len, PAGE_SIZE - off);
		void *va = kmap_local_page(mr->pages[pos >> PAGE_SHIFT]);

		fn(va + off, n, ctx);
		kunmap_local(va);
		pos += n;
		len -= n;
	}
}

struct mr_copy_ctx {
	u8 *buf;
	bool to_mr;
};

static void mr_mr_copy_piece(void *va, size_t n, void *ctx)
{
	struct mr_copy_ctx *c = ctx;

	if (c->to_mr)
		memcpy(va, c->buf, n);
	else
		memcpy(c->buf, va, n);
	c->buf += n;
}

/*
 * Copy @len bytes from @src into @mr at @iova, with the rights @need
 * (MR_ACC_LOCAL_WRITE for a receive, MR_ACC_REMOTE_WRITE for an RDMA
 * write). 0, or -EACCES / -ERANGE without copying anything.
 */
int mr_mr_copy_to(struct mr_mr *mr, u64 iova, const void *src, u64 len,
		  u32 need)
{
	struct mr_copy_ctx c = { .buf = (u8 *)src, .to_mr = true };
	int err = mr_mr_check(mr, iova, len, need);

	if (!err)
		mr_mr_walk(mr, iova, len, mr_mr_copy_piece, &c);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(mr_mr_copy_to);

/*
 * Copy @len bytes of @mr at @iova into @dst, with the rights @need
 * (MR_ACC_LOCAL_READ for a send, MR_ACC_REMOTE_READ for an RDMA read).
 */
int mr_mr_copy_from(struct mr_mr *mr, u64 iova, void *dst, u64 len, u32 need)
{
	struct mr_copy_ctx c = { .buf = dst, .to_mr = false };
	int err = mr_mr_check(mr, iova, len, need);

	if (!err)
		mr_mr_walk(mr, iova, len, mr_mr_copy_piece, &c);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(mr_mr_copy_from);

/**
 * mr_mr_sgl_copy() - copy between a buffer and the memory an SGE list names
 * @dev: the device
 * @pd: the PD the MRs must belong to
 * @sge: the list, as posted
 * @num_sge: its length
 * @off: where in the list's bytes to start
 * @buf: the other side of the copy
 * @len: bytes to copy
 * @dir: %MR_COPY_TO_SGL copies @buf into the list (needs local write),
 *	%MR_COPY_FROM_SGL copies out of it (needs local read)
 *
 * Each lkey is looked up again: the MR may be gone since post time.
 * Returns 0, -EINVAL (no such MR, or the list is shorter than @off +
 * @len), or the MR check's -EACCES / -ERANGE.
 */
int mr_mr_sgl_copy(struct mr_dev *dev, struct ib_pd *pd,
		   const struct mr_sge *sge, u32 num_sge, u32 off, void *buf,
		u32 len, enum mr_mr_copy_dir dir)
{
	u8 *p = buf;
	u32 i;

	for (i = 0; i < num_sge && len; i++) {
		struct mr_mr *mr;
		u32 n;
		int err;

		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		n = min(len, sge[i].length - off);
		mr = mr_mr_get(dev, pd, sge[i].lkey, NULL);
		if (!mr)
			return -EINVAL;
		if (dir == MR_COPY_TO_SGL)
			err = mr_mr_copy_to(mr, sge[i].addr + off, p, n,
					    MR_ACC_LOCAL_WRITE);
		else
			err = mr_mr_copy_from(mr, sge[i].addr + off, p, n,
					      MR_ACC_LOCAL_READ);
		mr_mr_put(mr);
		if (err)
			return err;
		p += n;
		len -= n;
		off = 0;
	}
	return len ? -EINVAL : 0;
}

struct mr_atomic_ctx {
	bool cmp_swap;
	u64 swap_add;
	u64 compare;
	u64 orig;
};

/* The word is 8-byte aligned, so it is one piece of one page. */
static void mr_mr_atomic_piece(void *va, size_t n, void *ctx)
{
	struct mr_atomic_ctx *c = ctx;
	atomic64_t *word = va;

	if (WARN_ON_ONCE(n != sizeof(u64)))
		return;
	if (c->cmp_swap)
		c->orig = atomic64_cmpxchg(word, c->compare, c->swap_add);
	else
		c->orig = atomic64_fetch_add(c->swap_add, word);
}

/**
 * mr_mr_atomic() - execute a remote atomic on the 64-bit word at @iova
 * @mr: the region, with remote atomic rights
 * @iova: the word's address, 8-byte aligned
 * @cmp_swap: compare-and-swap, else fetch-and-add
 * @swap_add: the swap value or the addend
 * @compare: the compare value
 * @orig: the word before the operation
 *
 * The CPU's atomic instructions do the work, so the operation is atomic
 * towards the CPUs and every other QP alike.
 */
int mr_mr_atomic(struct mr_mr *mr, u64 iova, bool cmp_swap, u64 swap_add,
		 u64 compare, u64 *orig)
{
	struct mr_atomic_ctx c = {
		.cmp_swap = cmp_swap,
		.swap_add = swap_add,
		.compare = compare,
	};
	int err;

	if (!IS_ALIGNED(iova, sizeof(u64)))
		return -EINVAL;
	err = mr_mr_check(mr, iova, sizeof(u64), MR_ACC_REMOTE_ATOMIC);
	if (err)
		return err;
	mr_mr_walk(mr, iova, sizeof(u64), mr_mr_atomic_piece, &c);
	*orig = c.orig;
	return 0;
}
