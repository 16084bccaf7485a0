/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Planes of a multi-plane device: which plane a path's packets leave on,
 * and whether a plane is in service. A plane is an independent network a
 * host reaches through one netdev; a path is (plane, UDP source port).
 * The host alone picks the plane, so that the application and the fabric
 * need not know planes exist. protocol.rst ("Planes") has the rules.
 * Times are passed in, in ns; the unit reads no clock.
 */
#ifndef METAROCE_PROTO_PLANE_H
#define METAROCE_PROTO_PLANE_H

#include "types.h"
#include "path.h"

#define MR_PLANES_MAX 8
/* A plane taken out by timeouts is tried again after this, doubling. */
#define MR_PLANE_RETRY_MIN_NS 100000000ull	/* 100 ms */
#define MR_PLANE_RETRY_MAX_NS 3200000000ull	/* 3.2 s */
/* ... and the doubling starts over once it has stayed up this long. */
#define MR_PLANE_STABLE_NS 10000000000ull	/* 10 s */

enum mr_plane_state {
	MR_PLANE_UP = 1,
	MR_PLANE_NO_CARRIER = 2,	/* its netdev is down or has no carrier */
	MR_PLANE_TIMED_OUT = 3,		/* its paths timed out; retried later */
};

/* What a change did, for the host's events. */
enum mr_plane_change {
	MR_PLANE_SAME = 0,
	MR_PLANE_WENT_DOWN,
	MR_PLANE_CAME_UP,
};

struct mr_plane {
	u8 state;		/* enum mr_plane_state */
	u64 retry_at;		/* MR_PLANE_TIMED_OUT: in service again then */
	u64 retry_ns;		/* the wait after the next timeout */
	u64 up_since;		/* when it last came up */
};

void mr_plane_init(struct mr_plane *pl, bool carrier, u64 now);
bool mr_plane_usable(const struct mr_plane *pl);
bool mr_plane_probing(const struct mr_plane *pl, u64 now);
enum mr_plane_change mr_plane_carrier(struct mr_plane *pl, bool on, u64 now);
enum mr_plane_change mr_plane_rx(struct mr_plane *pl, u64 now);
enum mr_plane_change mr_plane_timed_out(struct mr_plane *pl, u64 now);
u32 mr_plane_pick(u32 path, u32 count, u32 usable, u32 probing);
u32 mr_plane_paths(u32 plane, u32 paths, u32 count, u32 usable, u32 probing);
bool mr_plane_paths_timed_out(const struct mr_paths *ps, const u8 *sent_on,
			      u32 id, u32 count, u32 usable, u32 probing);

#endif /* METAROCE_PROTO_PLANE_H */
