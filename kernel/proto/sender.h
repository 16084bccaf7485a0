/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The sender engine: the paths of a connection as its sending side sees
 * them. It chooses the path and PSN of each packet, keeps every path's
 * scoreboard, RTT and congestion window, takes the ACKs, resends what they
 * report lost, runs the tail probe and the RTO, fails a path over and
 * moves its packets to the others, and paces. It does no I/O and reads no
 * clock: it is handed ACKs and the time, and it calls the environment
 * functions below, which each host (the kernel's comp.c, the scale model,
 * the host tests) defines once, at link time.
 *
 * What a packet carries (which message, which bytes) is the host's: the
 * engine keeps a packet as struct mr_tx_pkt and hands it back to build.
 * Only this file writes struct mr_sender; hosts read it.
 */
#ifndef METAROCE_PROTO_SENDER_H
#define METAROCE_PROTO_SENDER_H

#include "cc.h"
#include "path.h"
#include "requeue.h"
#include "rto.h"
#include "sack.h"
#include "types.h"
#include "wire.h"

#define MR_NS_PER_MS 1000000ull
/*
 * The kernel's timers, for RTTs of up to a few milliseconds (a guest under
 * TCG); a host on a faster fabric scales them (struct mr_sender_timing).
 */
#define MR_RTO_INIT_NS (20 * MR_NS_PER_MS)
#define MR_RTO_MIN_NS (10 * MR_NS_PER_MS)
#define MR_RTO_MAX_NS (500 * MR_NS_PER_MS)
/*
 * A tail probe goes after twice the path's SRTT (or SRTT + 4 RTTVAR when
 * the RTT jitters more), but not sooner than this.
 */
#define MR_PTO_MIN_NS (2 * MR_NS_PER_MS)

/*
 * A path that cannot have its ring of packet records now
 * (mr_sender_env_ring_get()) tries again this much later.
 */
#define MR_RING_WAIT_NS MR_NS_PER_MS

struct mr_tx_path {
	struct mr_sack_tx sb;
	struct mr_rto rto;
	u64 deadline;		/* ns when its timer is due; 0: not armed */
	u64 armed_ns;		/* when the deadline was set */
	bool probed;		/* the tail probe went: next is the RTO */
	bool deferred;		/* its timer waited once for the slack */
	struct mr_cc_path cc;	/* its congestion window */
	/* For administrators: over all its epochs. */
	u64 n_sent;		/* packets, resends included */
	u64 n_resent;
	u64 n_sack_gaps;	/* packets the SACKs reported lost */
	u64 n_rtos;		/* RTOs (tail probes not included) */
	u64 n_probes;		/* tail probes */
	/*
	 * Its packets' records: borrowed for its first packet in flight,
	 * kept while it sends, given back by mr_sender_trim() once idle.
	 */
	struct mr_tx_ring *ring;
	u32 ring_psn;		/* the first PSN its ring recorded */
	bool ring_used;		/* recorded a packet since the last trim */
};

/* The timers' constants, ns. */
struct mr_sender_timing {
	u64 rto_init_ns;
	u64 rto_min_ns;
	u64 rto_max_ns;
	u64 pto_min_ns;
};

struct mr_sender {
	bool on;		/* started and not stopped */
	u32 npaths;		/* path[] entries */
	u32 fail_after;		/* RTOs in a row that fail a path */
	struct mr_sender_timing tm;
	struct mr_cc_params ccp;
	struct mr_paths ps;
	struct mr_tx_path *path;
	struct mr_requeue requeue;	/* packets of failed paths */
	u32 rings;		/* borrowed: on paths and in the requeue */
	struct mr_cc_conn cc;
	u64 pace_ns;		/* when paced packets may go on; 0: none wait */
	u64 tx_order;		/* packets sent, resends included */
	u64 acked_ns;		/* an ACK last acknowledged something new */
	u64 acked_front;	/* newest order acknowledged: mr_rto_early() */
	u32 rtos;		/* RTOs in a row, any path, no ACK progress */
	u64 n_failovers;	/* paths failed */
};

/* Why a packet goes (mr_sender_env_xmit()): all but the first are resends. */
enum mr_send_why {
	MR_SEND_FIRST,
	MR_SEND_SACK,		/* an ACK reported it lost */
	MR_SEND_PROBE,		/* the tail probe */
	MR_SEND_RTO,
	MR_SEND_MOVED,		/* off a failed path */
};

/* What the engine reports for the host's counters and traces. */
enum mr_sender_event {
	MR_SEV_RESENT,		/* a resend left (mr_sender_env_xmit() > 0) */
	MR_SEV_SACK_GAP,	/* an ACK reported a packet lost */
	MR_SEV_PROBE,
	MR_SEV_RTO,
	MR_SEV_DEFERRED,	/* a path's timer was early and waits again */
	MR_SEV_PACED,		/* a new packet waits for the pacer */
	MR_SEV_HINT_LIMITED,	/* the receiver's hint slowed the pacer */
	MR_SEV_CC_DECREASE,	/* @arg: the enum mr_cc_verdict */
	MR_SEV_SPURIOUS,	/* a gap resend was needless; @arg: the
				 * path's reorder tolerance now
				 */
};

/*
 * The environment, one definition per host. Each is called with the
 * engine in the middle of its work; each may stop it (mr_sender_stop()),
 * which the engine checks after every call.
 */

/*
 * Build and send packet @tp of path @id at @psn, its base header flags
 * @flags (MR_FLAG_ACK_REQ, MR_FLAG_WINDOW_LIMITED); its header takes the
 * path's epoch and port from mr_sender_path_epoch() and the paths. Return the bytes that left
 * (its UDP payload), 0 when it was lost before the wire. The host handles
 * its own errors (unreadable memory fails its message).
 */
int mr_sender_env_xmit(struct mr_sender *s, u32 id, u32 psn,
		       const struct mr_tx_pkt *tp, u8 flags,
		       enum mr_send_why why);
/*
 * Lend a ring of packet records to a path that starts to send, until
 * mr_sender_env_ring_put(); NULL when there is no memory now (the engine
 * tries again MR_RING_WAIT_NS later). Its contents are the engine's.
 */
struct mr_tx_ring *mr_sender_env_ring_get(struct mr_sender *s);
void mr_sender_env_ring_put(struct mr_sender *s, struct mr_tx_ring *r);
/* Whether @tp's message is complete, so that it need not move. */
bool mr_sender_env_stale(struct mr_sender *s, const struct mr_tx_pkt *tp);
/*
 * Whether @tp's answer is arriving, though @tp is unacknowledged (a READ
 * request whose response has started to land): its timer waits.
 */
bool mr_sender_env_answered(struct mr_sender *s, const struct mr_tx_pkt *tp);
/* Timeouts in a row each path gets beyond the first before the QP fails. */
u32 mr_sender_env_retries(struct mr_sender *s);
/* The retry budget is spent: the host fails the connection. */
void mr_sender_env_retry_exceeded(struct mr_sender *s);
/* Path @id failed over: it left epoch @old_epoch and port @old_sport. */
void mr_sender_env_failover(struct mr_sender *s, u32 id, u16 old_epoch,
			    u16 old_sport, u32 moved);
void mr_sender_env_event(struct mr_sender *s, enum mr_sender_event ev,
			 u32 id, u32 arg);

void mr_sender_timing_default(struct mr_sender_timing *tm);
void mr_sender_setup(struct mr_sender *s, struct mr_tx_path *path,
		     u32 npaths, u32 fail_after,
		     const struct mr_sender_timing *tm,
		     const struct mr_cc_params *ccp);
int mr_sender_start(struct mr_sender *s, u32 psn, bool early, u32 seed,
		    u32 pkt_bytes);
void mr_sender_stop(struct mr_sender *s);
void mr_sender_release(struct mr_sender *s);
bool mr_sender_trim(struct mr_sender *s);

bool mr_sender_room(const struct mr_sender *s);
bool mr_sender_pace_wait(struct mr_sender *s, u64 now);
void mr_sender_pace_over(struct mr_sender *s);
int mr_sender_take(struct mr_sender *s, int avoid, u32 *psn, u64 now);
int mr_sender_send(struct mr_sender *s, u32 id, u32 psn,
		   const struct mr_tx_pkt *tp, enum mr_send_why why, u64 now);
bool mr_sender_push_moved(struct mr_sender *s, u64 now);
u32 mr_sender_oldest_unacked(const struct mr_sender *s, u32 from, u32 upto);
void mr_sender_abandon(struct mr_sender *s, u32 id);

int mr_sender_ack(struct mr_sender *s, const struct mr_pkt *ack, u64 now);
void mr_sender_hello(struct mr_sender *s, u32 hint_kbps, u64 rtt_ns,
		     u64 now);
u64 mr_sender_expiry(const struct mr_sender *s);
void mr_sender_timeout(struct mr_sender *s, u64 now);

static inline u16 mr_sender_path_epoch(const struct mr_sender *s, u32 id)
{
	return s->path[id].sb.epoch;
}

static inline u16 mr_sender_path_port(const struct mr_sender *s, u32 id)
{
	return s->ps.path[id].sport;
}

/* Path @id's oldest unacknowledged PSN, and the next new one. */
static inline u32 mr_sender_path_una(const struct mr_sender *s, u32 id)
{
	return s->path[id].sb.una;
}

static inline u32 mr_sender_path_nxt(const struct mr_sender *s, u32 id)
{
	return s->path[id].sb.nxt;
}

/*
 * The packet in flight that a NAK of path @id's @epoch and @psn is about,
 * or NULL when that PSN is from an older epoch, outside the window, not
 * sent yet, or older than what the path's ring recorded.
 */
static inline const struct mr_tx_pkt *
mr_sender_in_flight(const struct mr_sender *s, u32 id, u16 epoch, u32 psn)
{
	const struct mr_tx_path *p;

	if (id >= s->npaths)
		return NULL;
	p = &s->path[id];
	if (!p->ring || epoch != p->sb.epoch ||
	    p->sb.nxt - psn - 1 >= MR_SACK_WINDOW ||
	    psn - p->ring_psn >= p->sb.nxt - p->ring_psn)
		return NULL;
	return &p->ring->pkt[psn % MR_SACK_WINDOW];
}

/*
 * Whether nothing is unacknowledged, nor waiting to move off a failed
 * path.
 */
static inline bool mr_sender_drained(const struct mr_sender *s)
{
	u32 i;

	for (i = 0; i < s->npaths; i++)
		if (s->path[i].ring && s->path[i].sb.una != s->path[i].sb.nxt)
			return false;
	return !s->requeue.head;
}

/* Whether the engine holds borrowed memory, which mr_sender_trim() frees. */
static inline bool mr_sender_holds(const struct mr_sender *s)
{
	return s->rings;
}

/* Whether nothing is in flight on any path. */
static inline bool mr_sender_idle(const struct mr_sender *s)
{
	return !s->ps.inflight;
}

#endif /* METAROCE_PROTO_SENDER_H */
