// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue memory shared with user space. An object (a CQ, a receive queue)
 * creates its ring here and removes it when destroyed; the memory is
 * vfree()d when the entry's last reference goes. A mapping holds no
 * reference on the entry, nor any code of ours (no vm_ops): it holds the
 * pages themselves, which remap_vmalloc_range() references one by one, so
 * they outlive the object, the ucontext and the module while user space
 * still maps them (destroy with mappings alive, fork(), a device removed
 * or the module unloaded under a running process), and the entry leaves
 * the ucontext's table when the object does.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "mmap.h"

static struct mr_mmap *to_mr_mmap(struct rdma_user_mmap_entry *entry)
{
	return container_of(entry, struct mr_mmap, entry);
}

/* A zeroed buffer of @size bytes, mappable through @udata's context. */
struct mr_mmap *mr_mmap_create(struct ib_udata *udata, size_t size)
{
	struct mr_ucontext *uc = rdma_udata_to_drv_context(udata,
		struct mr_ucontext, ibuc);
	struct mr_mmap *map;
	int err;

	map = kzalloc(sizeof(*map), GFP_KERNEL_ACCOUNT);
	if (!map)
		return ERR_PTR(-ENOMEM);
	map->size = PAGE_ALIGN(size);
	map->buf = vmalloc_user(map->size);
	if (!map->buf) {
		kfree(map);
		return ERR_PTR(-ENOMEM);
	}
	err = rdma_user_mmap_entry_insert(&uc->ibuc, &map->entry, map->size);
	if (err) {
		vfree(map->buf);
		kfree(map);
		return ERR_PTR(err);
	}
	return map;
}

/*
 * The rings a provider asks for in @udata, from the request every object
 * shares ({flags, arg}): 0 when it sends none (an older provider). Only
 * the flags in @known are granted; the second word goes to @arg (QP: its
 * streams), or must be zero without one, as unknown trailing bytes must.
 */
int mr_mmap_read_request(struct ib_device *ibdev, struct ib_udata *udata,
			 u32 known, u32 *flags, u32 *arg)
{
	struct metaroce_create_cq_cmd req = {};
	int err;

	static_assert(sizeof(struct metaroce_create_qp_cmd) == sizeof(req) &&
		      sizeof(struct metaroce_create_srq_cmd) == sizeof(req));
	*flags = 0;
	if (arg)
		*arg = 0;
	if (!udata || !udata->inlen)
		return 0;
	err = ib_copy_from_udata(&req, udata, min(udata->inlen, sizeof(req)));
	if (err)
		return err;
	if ((req.reserved && !arg) ||
	    (udata->inlen > sizeof(req) &&
	     !ib_is_udata_cleared(udata, sizeof(req),
				  udata->inlen - sizeof(req)))) {
		ibdev_dbg(ibdev, "ring request: reserved bytes set\n");
		return -EINVAL;
	}
	*flags = req.flags & known;
	if (arg)
		*arg = req.reserved;
	return 0;
}

/* The object is gone: no new mapping; the memory goes with the last one. */
void mr_mmap_remove(struct mr_mmap *map)
{
	rdma_user_mmap_entry_remove(&map->entry);
}

u64 mr_mmap_offset(const struct mr_mmap *map)
{
	return rdma_user_mmap_get_offset(&map->entry);
}

/* ib_device_ops.mmap: a whole ring, shared, at the offset it was given. */
int mr_mmap_map(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *entry;
	struct mr_mmap *map;
	int err;

	entry = rdma_user_mmap_entry_get(ibuc, vma);
	if (!entry) {
		ibdev_dbg(ibuc->device,
			  "mmap at page %lu, %lu bytes: no such ring\n",
			  vma->vm_pgoff, vma->vm_end - vma->vm_start);
		return -EINVAL;
	}
	map = to_mr_mmap(entry);
	err = remap_vmalloc_range(vma, map->buf, 0);
	rdma_user_mmap_entry_put(entry);
	return err;
}

/* ib_device_ops.mmap_free: the last reference is gone; mapped pages stay. */
void mr_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct mr_mmap *map = to_mr_mmap(entry);

	vfree(map->buf);
	kfree(map);
}
