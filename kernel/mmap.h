/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Queue memory shared with user space: vmalloc'd, offered through the
 * uverbs fd's mmap(); its pages are freed when both its object and the
 * last mapping are gone.
 */
#ifndef METAROCE_MMAP_H
#define METAROCE_MMAP_H

#include "metaroce.h"

struct mr_mmap {
	struct rdma_user_mmap_entry entry;
	void *buf;			/* zeroed, page-aligned */
	size_t size;
};

struct mr_mmap *mr_mmap_create(struct ib_udata *udata, size_t size);
int mr_mmap_read_request(struct ib_device *ibdev, struct ib_udata *udata,
			 u32 known, u32 *flags, u32 *arg);
void mr_mmap_remove(struct mr_mmap *map);
u64 mr_mmap_offset(const struct mr_mmap *map);

int mr_mmap_map(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void mr_mmap_free(struct rdma_user_mmap_entry *entry);

#endif /* METAROCE_MMAP_H */
