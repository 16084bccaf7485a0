/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Congestion control of one connection: pure arithmetic, no clock, no
 * timer, no allocation. The caller (the kernel transport, a host test, the
 * ns-3 scale model) passes times in nanoseconds and packet counts in.
 * Documentation/metaroce/protocol.rst ("Congestion control") has the rules
 * with their numbers; this header is their code form.
 *
 * Sender: a window per path and one per connection; the connection's caps
 * the sum of its paths'. When it binds, every path has room, and the
 * path scheduler (path.h) sprays by that room: the paths whose ACKs come
 * back soonest, on the links with no queue, get the packets. Each window
 * reacts, at most once per round trip, to
 *  - loss: a burst of losses within a round (>= loss_burst and >= a
 *    fraction of the round's packets) halves the window; losses at high
 *    delay (a full queue) decrease it by (delay - target) / delay, at most
 *    1/2, as Swift does; isolated losses at low delay are not congestion;
 *  - ECN: DCTCP's alpha (RFC 8257), the marked fraction of a round, and a
 *    decrease by alpha/2. A path always decreases, which moves the
 *    connection's packets to its other paths; the connection does only
 *    when the delay is high too (UEC NSCC's four cases of ECN x delay:
 *    marks at low delay are left to this load balancing);
 *  - delay: RTT above a target derived from the path's base RTT also
 *    slows the additive increase to a quarter.
 * Otherwise the windows grow additively. A window may go below one packet:
 * pacing then spaces the packets.
 *
 * Pacing: a connection sends at most at its rate, the smaller of its
 * window's rate (window / SRTT, +25 %) and the receiver's hint, in bursts
 * of MR_CC_BURST packets, or at the window's rate of what it sends in
 * MR_CC_QUANTUM_NS when that is more. It paces only when one of them
 * limits: with its windows at their maximum and no smaller hint, it does
 * not.
 *
 * Start: a new connection sends a small initial window (2 packets: N
 * senders put N of them into the receiver's port before any hint comes
 * back); the first hint sizes the window to what the hint fills in a
 * round trip, cutting it at once or raising it by doubling per round trip
 * until the first sign of congestion, and every later one caps it there.
 *
 * Receiver: share.h splits its ingress capacity into fair shares, which it
 * returns to each sender in every ACK as a rate hint (kbit/s).
 *
 * Windows are fixed point: packets << MR_CC_SHIFT. Rates are kbit/s.
 */
#ifndef METAROCE_PROTO_CC_H
#define METAROCE_PROTO_CC_H

#include "types.h"

#define MR_CC_SHIFT 10
#define MR_CC_ONE 1024u			/* one packet: 1 << MR_CC_SHIFT */
#define MR_CC_ALPHA_ONE 65536u		/* alpha = 1.0, Q16 */
#define MR_CC_BURST 4			/* packets that may leave back to back */
/*
 * At a window's rate, a burst is what the rate sends in MR_CC_QUANTUM_NS
 * (as TCP's pacing, a millisecond), at most MR_CC_BURST_MAX packets.
 */
#define MR_CC_QUANTUM_NS 1000000ull
#define MR_CC_BURST_MAX 64u

/* Limits of the parameters (mr_cc_params_check()). */
#define MR_CC_MAX_PATH_WINDOW 256u	/* the SACK scoreboard of a path */
#define MR_CC_MAX_CONN_WINDOW 65536u	/* packets */
#define MR_CC_MAX_AI (16 * MR_CC_ONE)	/* packets per round */
#define MR_CC_MAX_TIME_NS 1000000000ull	/* target terms: at most 1 s */

/*
 * The longest gap pacing puts between two packets, and so the longest
 * delay mr_cc_pace_delay() can return: (MR_CC_BURST + 1) gaps.
 */
#define MR_CC_GAP_MAX_NS 1000000000ull
#define MR_CC_PACE_MAX_NS ((MR_CC_BURST + 1) * MR_CC_GAP_MAX_NS)

/* Times are monotonic ns below this (146 years); later ones count as it. */
#define MR_CC_TIME_MAX_NS 0x4000000000000000ull

/* Knobs; mr_cc_params_default() fills the defaults (see the .rst). */
struct mr_cc_params {
	u8 enabled;		/* 0: fixed windows at their maximum, no pacing */
	u8 ecn;			/* react to CE marks */
	u8 delay;		/* use delay (else ECN alone decides, as DCTCP) */
	u8 loss;		/* react to loss bursts */
	u8 g_shift;		/* DCTCP gain g = 2^-g_shift; 4: 1/16 */
	u32 init_path_window;	/* packets */
	u32 init_conn_window;	/* packets */
	u32 max_path_window;	/* packets, at most MR_CC_MAX_PATH_WINDOW */
	u32 max_conn_window;	/* packets, at most MR_CC_MAX_CONN_WINDOW */
	u32 min_window;		/* fixed point, 1..MR_CC_ONE */
	u32 ai;			/* the paths' increase per round, together */
	u32 ai_conn;		/* the connection's; both fixed point */
	u64 target_floor_ns;	/* delay target: base + max(floor, base >> shift) */
	u8 target_shift;
	u64 target_scale_ns;	/* + up to this much for small windows (Swift) */
	u64 base_window_ns;	/* the base RTT is the minimum of 1-2 windows */
	u32 loss_burst;		/* losses in a round that may mean congestion */
	u8 loss_frac_shift;	/* ... if also >= 2^-shift of the round's packets */
	u8 share_idle;		/* intervals without data: a sender drops out */
	/*
	 * The receiver learns a capacity below its host's from the rounds
	 * (mr_share_table_round()); 0: it takes the host's as it is.
	 */
	u8 share_learn;
};

/*
 * A window and what it has seen in its round: a path has one, and so has
 * the connection (over the ACKs of all its paths). A round ends at the
 * first ACK that acknowledges a packet sent after it began; a decrease
 * holds the window until an ACK acknowledges a packet sent after it.
 */
struct mr_cc_win {
	u32 cwnd;		/* fixed point */
	u32 alpha;		/* marked fraction, Q16 (DCTCP) */
	u64 round_end;		/* send order that closes the round; 0: none */
	u32 round_acked;	/* packets acknowledged in the round */
	u32 round_marked;	/* CE marks counted in it */
	u32 round_lost;		/* losses reported in it */
	u64 hold_until;		/* send order the last decrease waits for */
	u8 holding;		/* no change until then */
	u32 undo_cwnd;		/* before the last loss decrease; 0: none */
};

/* One path's congestion state. */
struct mr_cc_path {
	struct mr_cc_win w;	/* w.cwnd 0: not attached to a connection */
	u64 srtt;		/* the caller's smoothed RTT, ns; 0: none yet */
	u64 base_cur;		/* minimum RTT of the current base window */
	u64 base_prev;		/* ... and of the previous one; 0: none */
	u64 base_start;		/* when the current base window began, ns */
	u32 ecn_seen;		/* the last ECN count of the ACKs (wraps) */
};

/* The connection's congestion and pacing state. */
struct mr_cc_conn {
	struct mr_cc_win w;	/* caps the sum of the paths' windows */
	u32 paths_cwnd;		/* sum of its paths' cwnd */
	u32 npaths;		/* paths attached (mr_cc_path_init()) */
	u32 mtu;		/* bytes of a full packet, as pacing counts them */
	u64 srtt;		/* smoothed RTT over all paths' samples, ns */
	u64 pace_rtt;		/* the RTT pacing spreads a window over, ns */
	/*
	 * The connection's base RTT: the minimum over all its paths'
	 * samples, aged as a path's. Most paths of a new connection take
	 * their first samples in the queue its first flight built; one that
	 * got through early knows the fabric's.
	 */
	u64 base_cur;
	u64 base_prev;
	u64 base_start;
	u8 hinted;		/* the first hint has sized the window */
	/*
	 * The window the first hint fills, which the connection's window
	 * doubles towards every round trip; 0: reached, or given up at the
	 * first congestion or high delay.
	 */
	u32 ramp_to;
	/* Send order up to which packets went before the first hint. */
	u64 grace_until;	/* their marks and losses do not count */
	u8 grace_open;		/* the handshake's hint: until an ACK's */
	u64 acked_high;		/* the newest send order acknowledged */
	u8 hint_limits;		/* the hint is slower than the window */
	u32 hint_kbps;		/* the receiver's last hint, 0: none */
	u64 hint_q24;		/* the hint's ns per byte << 24 */
	u64 gap_ns;		/* the window's gap per packet; 0: no limit */
	u64 next_ns;		/* when the next burst may start */
	u32 burst;		/* packets left in the current burst */
	/* Counters the caller reads for telemetry (they wrap). */
	u32 marks;		/* CE marks the ACKs reported */
	u32 decreases;		/* window decreases, of paths and connection */
	u32 hint_limited;	/* packets whose gap the hint set */
	u32 paced;		/* times a packet had to wait */
};

/* What one ACK of one path told the sender. */
struct mr_cc_ack_info {
	u32 acked;		/* packets newly acknowledged */
	u32 lost;		/* packets newly reported lost */
	/* Resends that proved needless: the ACK answers a duplicate. */
	u32 spurious;
	u32 ecn_count;		/* the ACK's cumulative CE count */
	u64 rtt_ns;		/* RTT sample, 0: none */
	u64 srtt_ns;		/* the path's SRTT after the sample, 0: none */
	u64 acked_order;	/* newest send order this ACK acknowledged */
	u64 sent_order;		/* the connection's send order now */
	u64 now_ns;		/* the time now (ages the base RTT) */
	u32 hint_kbps;		/* the ACK's rate hint, 0: none */
};

/* What mr_cc_ack() did, for counters and trace events. */
enum mr_cc_verdict {
	MR_CC_HOLD = 0,		/* windows unchanged */
	MR_CC_INCREASE = 1,
	MR_CC_DECREASE_ECN = 2,
	MR_CC_DECREASE_LOSS = 3,
};

/*
 * mr_cc_params_default() - fill @prm with the defaults (protocol.rst)
 *
 * mr_cc_params_check() - whether @prm is usable: every limit above holds.
 * Return: 0, or -MR_EFIELD. Every other function takes checked params.
 */
void mr_cc_params_default(struct mr_cc_params *prm);
int mr_cc_params_check(const struct mr_cc_params *prm);

/*
 * mr_cc_conn_init() - a new connection, with no path yet
 * @mtu: bytes of a full packet, counted as mr_cc_pace_sent() counts them
 *	(clamped to 1..65535); converts windows to rates and back
 *
 * The window starts at init_conn_window (max_conn_window if CC is off).
 */
void mr_cc_conn_init(struct mr_cc_conn *c, const struct mr_cc_params *prm,
		     u32 mtu);

/*
 * mr_cc_path_init() - a path joins connection @c (after mr_cc_conn_init())
 *
 * At connection setup for each path, and again when a path restarts in a
 * new epoch (after mr_cc_path_exit()): its window starts at
 * init_path_window, alpha at 1, no base RTT, and the ECN count at 0, as
 * the receiver counts it per path epoch.
 *
 * mr_cc_path_exit() - the path leaves @c (removed, or about to restart);
 * a second call does nothing. The connection tracks the sum of its
 * paths' windows, so every attached path must be exited before re-init.
 */
void mr_cc_path_init(struct mr_cc_path *p, struct mr_cc_conn *c,
		     const struct mr_cc_params *prm);
void mr_cc_path_exit(struct mr_cc_path *p, struct mr_cc_conn *c,
		     const struct mr_cc_params *prm);

/*
 * mr_cc_ack() - one ACK of path @p, accepted by the SACK scoreboard
 * @a: what it says:
 *	acked, lost: what mr_sack_tx_ack() newly acknowledged / declared lost;
 *	ecn_count: the ACK's field, as received;
 *	rtt_ns: the sample it gave (Karn: 0 if none), srtt_ns: the path's
 *	SRTT after it (0 while the path has none);
 *	acked_order: the largest send order among the packets it newly
 *	acknowledged (0 if none), sent_order: the connection's count of
 *	packets sent so far (the order the last packet sent got);
 *	now_ns: the time, monotonic; hint_kbps: the ACK's rate hint.
 *
 * Updates the path's and the connection's windows, alpha, rounds, base
 * RTT, SRTT, hint and pacing rate. After it, give mr_cc_path_window() to
 * mr_paths_set_window() and gate the connection's packets in flight with
 * mr_cc_conn_window(). With CC off it only follows the ECN count.
 * Constant time (a few 64-bit divisions through mr_cc_div64()).
 *
 * Return: the strongest change to the path's or the connection's window.
 */
enum mr_cc_verdict mr_cc_ack(const struct mr_cc_params *prm,
			     struct mr_cc_conn *c, struct mr_cc_path *p,
			     const struct mr_cc_ack_info *a);

/*
 * mr_cc_hello() - the receiver's hint before any data, from the handshake
 * @hint_kbps: the rate hint of the peer's proven HELLO (0: none)
 * @rtt_ns: the handshake's round trip (0: unknown)
 * @sent_order: the connection's count of packets sent so far
 * @now_ns: the time
 *
 * The first hint, a round trip early: with the round trip it bounds the
 * initial window to what the hint fills (or ramps the window up to it),
 * and it paces at once, the first packet one gap from now: the k-th of
 * an incast's senders, granted C / k, then sends its first packet k
 * packet times from now, and N senders' first packets reach the port
 * one after the other rather than all at once. Ignored once a hint came,
 * or with CC off.
 */
void mr_cc_hello(const struct mr_cc_params *prm, struct mr_cc_conn *c,
		 u32 hint_kbps, u64 rtt_ns, u64 sent_order, u64 now_ns);

/*
 * mr_cc_timeout() - path @p's RTO fired (not for a tail probe)
 * @sent_order: the connection's send order now
 *
 * Halves the path's window (down to min_window) and holds it until an ACK
 * acknowledges a packet sent after now. The connection's window stays: a
 * timeout is evidence about one path. Each timeout halves again.
 */
void mr_cc_timeout(const struct mr_cc_params *prm, struct mr_cc_conn *c,
		   struct mr_cc_path *p, u64 sent_order);

/*
 * mr_cc_path_window(), mr_cc_conn_window() - the windows in whole packets
 * for the scheduler: rounded up, at least 1 and at most the maximum (the
 * maximum with CC off). Below one packet, pacing spaces the packets.
 *
 * mr_cc_path_target() - the path's delay target, ns: base RTT +
 * max(target_floor_ns, base >> target_shift) + up to target_scale_ns as
 * the window shrinks; 0 while it has no base RTT.
 */
u32 mr_cc_path_window(const struct mr_cc_params *prm,
		      const struct mr_cc_path *p);
u32 mr_cc_conn_window(const struct mr_cc_params *prm,
		      const struct mr_cc_conn *c);
u64 mr_cc_path_target(const struct mr_cc_params *prm,
		      const struct mr_cc_path *p);

/*
 * mr_cc_window_limited() - whether a packet that leaves with @inflight
 * packets out (itself included) says MR_FLAG_WINDOW_LIMITED
 *
 * True when the connection's windows (the smaller of its own and its
 * paths' sum) are full with it and hold less than half of what the last
 * hint fills (within the maximum): congestion, not the application or
 * the CPU, keeps the sender under the share the receiver grants.
 */
bool mr_cc_window_limited(const struct mr_cc_params *prm,
			  const struct mr_cc_conn *c, u32 inflight);

/*
 * mr_cc_pace_delay() - how long the next packet must wait, ns
 * @now_ns: the time, monotonic
 *
 * 0 if it may go now: pacing is off, the current burst (MR_CC_BURST
 * packets, or at the window's rate what it sends in MR_CC_QUANTUM_NS,
 * at most MR_CC_BURST_MAX) is not spent, or the next may start.
 * Otherwise the wait until it may (at most MR_CC_PACE_MAX_NS): arm a
 * timer for it and ask again when it fires. Counts the wait in c->paced.
 *
 * mr_cc_pace_sent() - a packet of @bytes left at @now_ns
 *
 * Call it for every data packet sent, new or resent (a resend need not
 * wait, but it uses the rate). The burst's time grows by the packet's
 * gap: the larger of the window's (SRTT / (window * 1.25)) and the
 * hint's (bytes * 8 / hint), at most MR_CC_GAP_MAX_NS. Pacing is off with
 * CC off, and when neither limits: the window at its maximum (the
 * connection's, or all paths' at theirs) and no hint slower than it.
 */
u64 mr_cc_pace_delay(const struct mr_cc_params *prm, struct mr_cc_conn *c,
		     u64 now_ns);
void mr_cc_pace_sent(const struct mr_cc_params *prm, struct mr_cc_conn *c,
		     u32 bytes, u64 now_ns);

/*
 * The hint's unit: kbit/s in the ACK's 32-bit field (up to 4.29 Tbit/s);
 * 0 is no hint, so a non-zero rate encodes as at least 1.
 */
#define MR_CC_NS_KBPS 8000000ull	/* ns per byte at 1 kbit/s */
u32 mr_cc_hint_from_bps(u64 bps);
u64 mr_cc_hint_to_bps(u32 kbps);

/* n / d, for 32-bit kernels too (no __udivdi3); d = 0 gives ~0. */
u64 mr_cc_div64(u64 n, u64 d);

#endif /* METAROCE_PROTO_CC_H */
