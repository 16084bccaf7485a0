/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The path scheduler of one connection. A path is a UDP source port, so
 * that ECMP hashing gives each its own route through the fabric. New
 * packets go to the active paths with room by a round robin weighted by
 * that room (room^2 / window), so that spraying follows the windows
 * congestion control sets and, when the connection's window binds first,
 * the paths whose packets are acknowledged soonest; a path that times out
 * N times in a row fails, and restarts with a new source port and a new
 * epoch of its PSN space.
 */
#ifndef METAROCE_PROTO_PATH_H
#define METAROCE_PROTO_PATH_H

#include "types.h"
#include "wire.h"

#define MR_PATH_DEFAULT 16
#define MR_PATH_MAX MR_WIRE_MAX_PATHS
#define MR_PATH_MAX_WINDOW MR_WIRE_SACK_BITS	/* the SACK scoreboard */
#define MR_PATH_INIT_WINDOW 16	/* until congestion control sets it */
#define MR_PATH_DEFAULT_FAIL_AFTER 3

/* Source ports come from the dynamic range of RFC 6335: 2^14 ports. */
#define MR_PATH_PORT_MIN 49152u
#define MR_PATH_PORT_BITS 14
#define MR_PATH_PORT_MAX (MR_PATH_PORT_MIN + (1u << MR_PATH_PORT_BITS) - 1)

enum mr_path_state {
	MR_PATH_ACTIVE = 0,
	MR_PATH_FAILED = 1,	/* skipped until mr_paths_restart() */
};

struct mr_path {
	u32 window;	/* packets it may have in flight */
	u32 inflight;	/* packets in flight */
	u32 rtos;	/* consecutive timeouts */
	s32 credit;	/* its turn in the weighted round robin */
	u16 sport;	/* UDP source port */
	u16 epoch;	/* PSN space generation, bumped on restart */
	u8 state;	/* enum mr_path_state */
};

/* New packets a path takes in a row while few are in flight. */
#define MR_PATH_RUN 4

struct mr_paths {
	struct mr_path path[MR_PATH_MAX];
	u32 count;	/* paths in use: path[0..count) */
	u32 cursor;	/* where the search starts: ties go round-robin */
	u32 run_id;	/* the path of the current run of picks */
	u32 run_left;	/* picks left in that run */
	u32 inflight;	/* packets in flight on all paths: their sum */
	u32 fail_after;	/* consecutive timeouts that fail a path */
	u32 seed;	/* source port derivation */
	u32 ports;	/* source ports handed out so far */
};

u16 mr_path_port(u32 seed, u32 counter);
int mr_paths_init(struct mr_paths *ps, u32 count, u32 fail_after, u32 seed);
int mr_paths_set_count(struct mr_paths *ps, u32 count);
void mr_paths_set_window(struct mr_paths *ps, u32 id, u32 window);
int mr_paths_pick(struct mr_paths *ps);
int mr_paths_pick_other(struct mr_paths *ps, u32 avoid);
int mr_paths_charge(struct mr_paths *ps, u32 id);
void mr_paths_recharge(struct mr_paths *ps, u32 id);
void mr_paths_unpick(struct mr_paths *ps, u32 id);
void mr_paths_ack(struct mr_paths *ps, u32 id, u32 n_acked, u32 n_lost);
bool mr_paths_timeout(struct mr_paths *ps, u32 id, u32 n_lost);
int mr_paths_restart(struct mr_paths *ps, u32 id);

#endif /* METAROCE_PROTO_PATH_H */
