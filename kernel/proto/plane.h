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
#define MR_PLANE_NONE 0xff	/* no plane (struct mr_plane_track) */
/*
 * A path's timeouts in a row that may take its plane out (with the
 * connection's other paths on it timed out too): fewer may be congestion.
 */
#define MR_PLANE_TIMEOUTS 2
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

/*
 * What a connection's sender knows of its paths' planes (its host keeps
 * one): the plane each path last sent on, the one before it, and the
 * first new PSN sent on the last one (those before went on earlier ones).
 */
struct mr_plane_track {
	u8 sent[MR_PATH_MAX];	/* MR_PLANE_NONE: none yet */
	u8 prev[MR_PATH_MAX];
	u32 first[MR_PATH_MAX];
};

void mr_plane_track_init(struct mr_plane_track *t);
void mr_plane_track_restart(struct mr_plane_track *t, u32 id);
void mr_plane_track_sent(struct mr_plane_track *t, u32 id, u32 plane,
			 u32 psn, bool resend, u32 nxt);
bool mr_plane_track_blames(const struct mr_plane_track *t, u32 id, u32 psn);
bool mr_plane_track_lost(const struct mr_plane_track *t, u32 id, u32 una,
			 u32 serving);

/* A host's planes' service at one time, for its data path to read. */
struct mr_plane_masks {
	u32 usable;		/* bit i: plane i serves */
	u32 probing;		/* ... is tried again, by one path */
	u64 retry;		/* when the next one is tried again; ~0: never */
};

void mr_plane_masks_init(struct mr_plane_masks *m);
void mr_plane_masks_add(struct mr_plane_masks *m, const struct mr_plane *pl,
			u32 id, u64 now);
bool mr_plane_masks_lost(const struct mr_plane_masks *before,
			 const struct mr_plane_masks *after);

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
