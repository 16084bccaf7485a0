// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "bounds.h"
#include "wire.h"

/*
 * Registration flags: only the four rights and MW binding, and remote write
 * or atomic only together with local write, as the IB spec requires: a peer
 * may not write memory that its owner may not.
 */
int mr_bounds_check_access(u32 access)
{
	if (access & ~(MR_ACC_MASK | MR_ACC_MW_BIND))
		return -MR_EFLAGS;
	if ((access & (MR_ACC_REMOTE_WRITE | MR_ACC_REMOTE_ATOMIC)) &&
	    !(access & MR_ACC_LOCAL_WRITE))
		return -MR_EFLAGS;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_bounds_check_access);

/*
 * A region to register: at least one byte, and its last byte addressable
 * (iova + len may reach 2^64 but not pass it).
 */
int mr_bounds_check_region(u64 iova, u64 len, u32 access)
{
	if (!len)
		return -MR_ELENGTH;
	if (len - 1 > ~(u64)0 - iova)
		return -MR_ERANGE;
	return mr_bounds_check_access(access);
}
EXPORT_SYMBOL_IF_KUNIT(mr_bounds_check_region);

/*
 * An access of @len bytes at @iova needing the rights @need, against the
 * region [mr_iova, mr_iova + mr_len) that grants @mr_access. Rights are
 * checked first, so a peer without them learns nothing about the bounds.
 * Written without computing iova + len, which may wrap.
 */
int mr_bounds_check_range(u64 mr_iova, u64 mr_len, u32 mr_access, u64 iova, u64 len,
			  u32 need)
{
	u64 off;

	if (need & ~(MR_ACC_MASK | MR_ACC_LOCAL_READ))
		return -MR_EFLAGS;
	if (need & ~(mr_access | MR_ACC_LOCAL_READ))
		return -MR_EACCESS;
	if (iova < mr_iova)
		return -MR_ERANGE;
	off = iova - mr_iova;
	if (off > mr_len || len > mr_len - off)
		return -MR_ERANGE;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_bounds_check_range);

/*
 * Binding a window of @win_len bytes at @win_iova with the rights
 * @win_access to a region: the region must allow binding (-MR_EACCESS),
 * lend remote write or atomic only if it grants local write (-MR_EACCESS),
 * and hold the whole window (-MR_ERANGE). An empty window (a type 1
 * window's unbind) needs only the binding right.
 */
int mr_bounds_check_window(u64 mr_iova, u64 mr_len, u32 mr_access, u64 win_iova,
			   u64 win_len, u32 win_access)
{
	if (win_access & ~MR_ACC_MASK)
		return -MR_EFLAGS;
	if (!(mr_access & MR_ACC_MW_BIND))
		return -MR_EACCESS;
	if ((win_access & (MR_ACC_REMOTE_WRITE | MR_ACC_REMOTE_ATOMIC)) &&
	    !(mr_access & MR_ACC_LOCAL_WRITE))
		return -MR_EACCESS;
	if (!win_len)
		return 0;
	return mr_bounds_check_range(mr_iova, mr_len, mr_access, win_iova, win_len, 0);
}
EXPORT_SYMBOL_IF_KUNIT(mr_bounds_check_window);

/* The slices of a message of @length bytes at @mtu: one at least. */
u32 mr_bounds_map_bits(u32 length, u32 mtu)
{
	u32 n;

	if (!mtu)
		return 0;
	n = length / mtu + !!(length % mtu);
	return n ? n : 1;
}
EXPORT_SYMBOL_IF_KUNIT(mr_bounds_map_bits);

/*
 * The slice-map bits a connection at @mtu may hold: MR_BOUNDS_MAP_MSGS
 * messages of the largest size, so that any message the protocol allows
 * fits, and a few at once (2^23 bits, 1 MiB, at MTU 1024).
 */
u32 mr_bounds_map_budget(u32 mtu)
{
	return MR_BOUNDS_MAP_MSGS * mr_bounds_map_bits(MR_WIRE_MAX_MSG_LEN, mtu);
}
EXPORT_SYMBOL_IF_KUNIT(mr_bounds_map_budget);

/* Whether a map of @bits more fits beside the @held of @budget. */
bool mr_bounds_map_admit(u32 held, u32 bits, u32 budget)
{
	return held <= budget && bits <= budget - held;
}
EXPORT_SYMBOL_IF_KUNIT(mr_bounds_map_admit);

/*
 * Whether a repeated NAK may go at @now_ns, the last one having gone at
 * @last_ns (0: none yet): at most one per @gap_ns, whatever the peer sends.
 */
bool mr_bounds_nak_due(u64 last_ns, u64 now_ns, u64 gap_ns)
{
	return !last_ns || now_ns - last_ns >= gap_ns;
}
EXPORT_SYMBOL_IF_KUNIT(mr_bounds_nak_due);
