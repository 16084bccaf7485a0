/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Fixed-width types for the pure protocol units in proto/. These units build
 * both into metaroce.ko and into userspace unit tests, fuzzers and
 * simulators, so they include nothing but this header. It also gives them
 * static_assert(), their error codes, byte order and sequence arithmetic.
 */
#ifndef METAROCE_PROTO_TYPES_H
#define METAROCE_PROTO_TYPES_H

#ifdef __KERNEL__
#include <kunit/visibility.h>
#include <linux/build_bug.h>
#include <linux/export.h>
#include <linux/types.h>
#else
#include <assert.h>
#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s8 s8;
typedef __s16 s16;
typedef __s32 s32;
typedef __s64 s64;
/* Only the kernel's KUnit suites link against the module's symbols. */
#define EXPORT_SYMBOL_IF_KUNIT(symbol)
#endif

/*
 * Error codes of the protocol units, returned negated (-MR_ETRUNC). They are
 * their own small set, not errnos, so that a test can tell which check fired.
 */
enum mr_err {
	MR_OK = 0,
	MR_ETRUNC = 1,		/* the buffer ends before the headers do */
	MR_EVERSION = 2,	/* unknown wire version */
	MR_EOPCODE = 3,		/* unknown opcode */
	MR_EFLAGS = 4,		/* undefined flag, or one the opcode may not use */
	MR_ERESERVED = 5,	/* a reserved field is not zero */
	MR_EFIELD = 6,		/* a field holds a value it may not hold */
	MR_ELENGTH = 7,		/* payload and length fields disagree */
	MR_ENOSPC = 8,		/* no room: buffer, window or scoreboard full */
	MR_ESTALE = 9,		/* an old acknowledgment or path epoch */
	MR_EAGAIN = 10,		/* nothing possible now, try again later */
	MR_ENOPATH = 11,	/* no path is active */
	MR_EBUSY = 12,		/* the object still has packets in flight */
	MR_EACCESS = 13,	/* the memory region does not grant the access */
	MR_ERANGE = 14,		/* an address range wraps or leaves its region */
};

/*
 * Big-endian field access on byte pointers. No alignment is assumed, and the
 * code is the same in the kernel and in userspace.
 */
static inline u16 mr_get_be16(const u8 *p)
{
	return (u16)(p[0] << 8 | p[1]);
}

static inline u32 mr_get_be24(const u8 *p)
{
	return (u32)p[0] << 16 | (u32)p[1] << 8 | p[2];
}

static inline u32 mr_get_be32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

static inline u64 mr_get_be64(const u8 *p)
{
	return (u64)mr_get_be32(p) << 32 | mr_get_be32(p + 4);
}

static inline void mr_put_be16(u8 *p, u16 v)
{
	p[0] = (u8)(v >> 8);
	p[1] = (u8)v;
}

static inline void mr_put_be24(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 16);
	p[1] = (u8)(v >> 8);
	p[2] = (u8)v;
}

static inline void mr_put_be32(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 24);
	p[1] = (u8)(v >> 16);
	p[2] = (u8)(v >> 8);
	p[3] = (u8)v;
}

static inline void mr_put_be64(u8 *p, u64 v)
{
	mr_put_be32(p, (u32)(v >> 32));
	mr_put_be32(p + 4, (u32)v);
}

/* Bit @bit of the slice map @map (64-bit words). */
static inline bool mr_map_test(const u64 *map, u32 bit)
{
	return map[bit / 64] & (1ull << (bit % 64));
}

static inline void mr_map_set(u64 *map, u32 bit)
{
	map[bit / 64] |= 1ull << (bit % 64);
}

/*
 * Serial-number order of 32-bit sequence numbers (RFC 1982 style): a is
 * before b when b is less than 2^31 ahead of a, so wraparound is harmless.
 */
static inline bool mr_seq_before(u32 a, u32 b)
{
	return (s32)(a - b) < 0;
}

#endif /* METAROCE_PROTO_TYPES_H */
