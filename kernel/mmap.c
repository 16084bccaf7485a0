// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue memory shared with user space. An object (a CQ) creates its ring
 * here and removes it when destroyed; each mapping holds a reference on
 * the entry, so the memory outlives the object while user space still
 * maps it (destroy with mappings alive, fork()), and nothing the kernel
 * frees stays reachable from user space.
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
 * A provider's request for rings, @len bytes, from @udata: zeroed when it
 * sends none (an older provider). Bytes past what we know must be zero.
 */
int mr_mmap_read_request(struct ib_device *ibdev, struct ib_udata *udata,
			 void *req, size_t len)
{
	int err;

	memset(req, 0, len);
	if (!udata || !udata->inlen)
		return 0;
	err = ib_copy_from_udata(req, udata, min(udata->inlen, len));
	if (err)
		return err;
	if (udata->inlen > len &&
	    !ib_is_udata_cleared(udata, len, udata->inlen - len)) {
		ibdev_dbg(ibdev, "ring request: unknown bytes set\n");
		return -EINVAL;
	}
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

/* Each VMA, including those fork() copies, holds a reference. */
static void mr_mmap_vma_open(struct vm_area_struct *vma)
{
	struct mr_mmap *map = vma->vm_private_data;

	kref_get(&map->entry.ref);
}

static void mr_mmap_vma_close(struct vm_area_struct *vma)
{
	struct mr_mmap *map = vma->vm_private_data;

	rdma_user_mmap_entry_put(&map->entry);
}

static const struct vm_operations_struct mr_mmap_vm_ops = {
	.open = mr_mmap_vma_open,
	.close = mr_mmap_vma_close,
};

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
	if (err) {
		rdma_user_mmap_entry_put(entry);
		return err;
	}
	/* The reference taken by _get() is the VMA's. */
	vma->vm_private_data = map;
	vma->vm_ops = &mr_mmap_vm_ops;
	return 0;
}

/* ib_device_ops.mmap_free: the last reference is gone. */
void mr_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct mr_mmap *map = to_mr_mmap(entry);

	vfree(map->buf);
	kfree(map);
}
