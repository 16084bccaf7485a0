/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Memory region checks: which access flags a region may be registered with,
 * whether an access to (iova, len) with given rights falls inside a
 * region that grants them, and whether a memory window may be bound to
 * it. Every data mover runs these before touching memory, so they are
 * pure and tested on their own. Also the bounds on what a peer can make
 * the responder hold or send: slice-map memory and repeated NAKs.
 */
#ifndef METAROCE_PROTO_MR_BOUNDS_H
#define METAROCE_PROTO_MR_BOUNDS_H

#include "types.h"

/* Access rights, valued as enum ib_access_flags (mr.c asserts it). */
#define MR_ACC_LOCAL_WRITE	0x1u
#define MR_ACC_REMOTE_WRITE	0x2u
#define MR_ACC_REMOTE_READ	0x4u
#define MR_ACC_REMOTE_ATOMIC	0x8u
#define MR_ACC_MASK		0xfu
/* Not a right of access: memory windows may be bound to the region. */
#define MR_ACC_MW_BIND		0x10u
/* Not a registration flag: every region grants local read. */
#define MR_ACC_LOCAL_READ	0x10000u

#define MR_ACC_REMOTE \
	(MR_ACC_REMOTE_WRITE | MR_ACC_REMOTE_READ | MR_ACC_REMOTE_ATOMIC)

int mr_bounds_check_access(u32 access);
int mr_bounds_check_region(u64 iova, u64 len, u32 access);
int mr_bounds_check_range(u64 mr_iova, u64 mr_len, u32 mr_access, u64 iova, u64 len,
			  u32 need);
int mr_bounds_check_window(u64 mr_iova, u64 mr_len, u32 mr_access, u64 win_iova,
			   u64 win_len, u32 win_access);

/*
 * A message of more than 64 MTU slices has an allocated slice map, a bit
 * per slice. The maps of a connection's messages in progress may hold
 * together the bits of this many messages of the largest size (2^31
 * bytes) at its MTU; a message whose map would pass that is refused.
 */
#define MR_BOUNDS_MAP_MSGS 4u

u32 mr_bounds_map_bits(u32 length, u32 mtu);
u32 mr_bounds_map_budget(u32 mtu);
bool mr_bounds_map_admit(u32 held, u32 bits, u32 budget);
bool mr_bounds_nak_due(u64 last_ns, u64 now_ns, u64 gap_ns);

#endif /* METAROCE_PROTO_MR_BOUNDS_H */
