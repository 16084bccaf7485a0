// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Congestion control arithmetic (contracts in cc.h, rules in
 * protocol.rst). Fixed point throughout. Divisions by a variable are
 * 32-bit, or go through mr_cc_div64(), so that a 32-bit kernel needs no
 * libgcc helper.
 */
#include "cc.h"

#define MR_CC_U32_MAX 0xffffffffu
#define MR_CC_RTT_MAX_NS 0x7fffffffull	/* 2.1 s: keeps products in 64 bits */
#define MR_CC_COUNT_MAX 0x1000000u	/* per-ACK and per-round counts */
#define MR_CC_ECN_PLAUSIBLE 1024u	/* more new marks than this: resync */
#define MR_CC_FAIR_SHIFT 2		/* no ECN, high delay: ai / 4 */
#define MR_CC_MAX_MTU 65535u
#define MR_CC_MS 1000000ull

static_assert(MR_CC_ONE == 1u << MR_CC_SHIFT, "MR_CC_ONE is one packet");

static u64 mr_cc_min(u64 a, u64 b)
{
	return a < b ? a : b;
}

static u64 mr_cc_max(u64 a, u64 b)
{
	return a > b ? a : b;
}

static u32 mr_cc_sat_add(u32 a, u32 b)
{
	return a + b > MR_CC_COUNT_MAX || a + b < a ? MR_CC_COUNT_MAX : a + b;
}

u64 mr_cc_div64(u64 n, u64 d)
{
	u64 q = 0;
	int shift;

	if (!d)
		return ~0ull;
	if (!((n | d) >> 32))
		return (u32)n / (u32)d;
	if (n < d)
		return 0;
	/* Long division from the quotient's top bit: at most 64 steps. */
	shift = __builtin_clzll(d) - __builtin_clzll(n);
	d <<= shift;
	for (; shift >= 0; shift--) {
		q <<= 1;
		if (n >= d) {
			n -= d;
			q |= 1;
		}
		d >>= 1;
	}
	return q;
}

void mr_cc_params_default(struct mr_cc_params *prm)
{
	*prm = (struct mr_cc_params){
		.enabled = 1,
		.ecn = 1,
		.delay = 1,
		.loss = 1,
		.g_shift = 4,
		.init_path_window = 16,
		.init_conn_window = 2,
		.max_path_window = 64,
		.max_conn_window = 256,
		.min_window = MR_CC_ONE / 64,
		.ai = 4 * MR_CC_ONE,
		.ai_conn = 4 * MR_CC_ONE,
		.target_floor_ns = 2 * MR_CC_MS,
		.target_shift = 1,
		.target_scale_ns = MR_CC_MS / 2,
		.base_window_ns = 2000 * MR_CC_MS,
		.loss_burst = 4,
		.loss_frac_shift = 3,
		.share_idle = 2,
	};
}
EXPORT_SYMBOL_IF_KUNIT(mr_cc_params_default);

int mr_cc_params_check(const struct mr_cc_params *prm)
{
	if (prm->g_shift < 1 || prm->g_shift > 16)
		return -MR_EFIELD;
	if (!prm->max_path_window ||
	    prm->max_path_window > MR_CC_MAX_PATH_WINDOW ||
	    !prm->init_path_window ||
	    prm->init_path_window > prm->max_path_window)
		return -MR_EFIELD;
	if (!prm->max_conn_window ||
	    prm->max_conn_window > MR_CC_MAX_CONN_WINDOW ||
	    !prm->init_conn_window ||
	    prm->init_conn_window > prm->max_conn_window)
		return -MR_EFIELD;
	if (!prm->min_window || prm->min_window > MR_CC_ONE)
		return -MR_EFIELD;
	if (!prm->ai || prm->ai > MR_CC_MAX_AI || !prm->ai_conn ||
	    prm->ai_conn > MR_CC_MAX_AI)
		return -MR_EFIELD;
	if (prm->target_floor_ns > MR_CC_MAX_TIME_NS || prm->target_shift > 16 ||
	    prm->target_scale_ns > MR_CC_MAX_TIME_NS)
		return -MR_EFIELD;
	if (prm->base_window_ns < MR_CC_MS ||
	    prm->base_window_ns > 3600 * MR_CC_MAX_TIME_NS)
		return -MR_EFIELD;
	if (!prm->loss_burst || prm->loss_burst > MR_CC_COUNT_MAX ||
	    prm->loss_frac_shift > 16 || !prm->share_idle)
		return -MR_EFIELD;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_cc_params_check);

static u32 mr_cc_clamp_win(const struct mr_cc_params *prm, u64 cwnd,
			   u32 max_pkts)
{
	u64 max = (u64)max_pkts << MR_CC_SHIFT;

	return (u32)(cwnd < prm->min_window ? prm->min_window :
		     cwnd > max ? max : cwnd);
}

static u64 mr_cc_conn_base(const struct mr_cc_conn *c)
{
	if (!c->base_prev)
		return c->base_cur;
	return mr_cc_min(c->base_cur, c->base_prev);
}

/*
 * The connection's window as it limits, the smaller of its own and its
 * paths' sum, and the largest that can be (@full), both fixed point.
 */
static u64 mr_cc_conn_span(const struct mr_cc_params *prm,
			   const struct mr_cc_conn *c, u64 *full)
{
	u64 w = c->w.cwnd, f = prm->max_conn_window;

	if (c->npaths) {
		w = mr_cc_min(w, c->paths_cwnd);
		f = mr_cc_min(f, (u64)c->npaths * prm->max_path_window);
	}
	*full = f << MR_CC_SHIFT;
	return w;
}

/*
 * The rate pacing keeps: the window's (window / SRTT, +25 %) while the
 * window is below its maximum, and the hint's while it is slower than
 * the window's. Recomputed whenever a window, the SRTT or the hint moves.
 */
static void mr_cc_pace_update(const struct mr_cc_params *prm,
			      struct mr_cc_conn *c)
{
	u64 full, w = mr_cc_conn_span(prm, c, &full), gw = 0, gh;

	c->gap_ns = 0;
	c->hint_limits = 0;
	if (!prm->enabled)
		return;
	if (c->pace_rtt && w)
		gw = mr_cc_div64(c->pace_rtt << (MR_CC_SHIFT + 2), w * 5);
	if (w < full)
		c->gap_ns = mr_cc_min(gw, MR_CC_GAP_MAX_NS);
	if (c->hint_kbps) {
		gh = ((u64)c->mtu * c->hint_q24) >> 24;
		c->hint_limits = !gw || gh > gw;
	}
}

void mr_cc_conn_init(struct mr_cc_conn *c, const struct mr_cc_params *prm,
		     u32 mtu)
{
	*c = (struct mr_cc_conn){
		.w.cwnd = (prm->enabled ? prm->init_conn_window :
					  prm->max_conn_window) << MR_CC_SHIFT,
		.w.alpha = MR_CC_ALPHA_ONE,
		.mtu = mtu < 1 ? 1 : mtu > MR_CC_MAX_MTU ? MR_CC_MAX_MTU : mtu,
	};
}
EXPORT_SYMBOL_IF_KUNIT(mr_cc_conn_init);

static void mr_cc_path_set(struct mr_cc_conn *c, struct mr_cc_path *p,
			   u32 cwnd)
{
	c->paths_cwnd = c->paths_cwnd - p->w.cwnd + cwnd;
	p->w.cwnd = cwnd;
}

void mr_cc_path_init(struct mr_cc_path *p, struct mr_cc_conn *c,
		     const struct mr_cc_params *prm)
{
	*p = (struct mr_cc_path){ .w.alpha = MR_CC_ALPHA_ONE };
	mr_cc_path_set(c, p, (prm->enabled ? prm->init_path_window :
					     prm->max_path_window)
					    << MR_CC_SHIFT);
	c->npaths++;
	mr_cc_pace_update(prm, c);
}
EXPORT_SYMBOL_IF_KUNIT(mr_cc_path_init);

void mr_cc_path_exit(struct mr_cc_path *p, struct mr_cc_conn *c,
		     const struct mr_cc_params *prm)
{
	if (!p->w.cwnd)
		return;
	mr_cc_path_set(c, p, 0);
	c->npaths--;
	mr_cc_pace_update(prm, c);
}
EXPORT_SYMBOL_IF_KUNIT(mr_cc_path_exit);

static u32 mr_cc_whole(u32 cwnd, u32 max)
{
	u32 n = (cwnd + MR_CC_ONE - 1) >> MR_CC_SHIFT;

	return n < 1 ? 1 : n > max ? max : n;
}

u32 mr_cc_path_window(const struct mr_cc_params *prm,
		      const struct mr_cc_path *p)
{
	if (!prm->enabled)
		return prm->max_path_window;
	return mr_cc_whole(p->w.cwnd, prm->max_path_window);
}
EXPORT_SYMBOL_IF_KUNIT(mr_cc_path_window);

u32 mr_cc_conn_window(const struct mr_cc_params *prm,
		      const struct mr_cc_conn *c)
{
	if (!prm->enabled)
		return prm->max_conn_window;
	return mr_cc_whole(c->w.cwnd, prm->max_conn_window);
}
EXPORT_SYMBOL_IF_KUNIT(mr_cc_conn_window);

/*
 * The window the hint fills in one round trip, + 25 %. The round trip is
 * pacing's (the SRTT, at most twice the connection's base RTT), not the
 * SRTT alone: a queue the first flight built makes the SRTT long, and a
 * window sized to it would keep the queue for good, the hint's rate
 * filling it exactly.
 */
static u64 mr_cc_hint_window(const struct mr_cc_conn *c, u32 hint)
{
	/* hint * 1000 / 8 bytes/s * rtt / 1e9 / mtu << MR_CC_SHIFT */
	u64 w = mr_cc_div64((u64)hint * c->pace_rtt * 2, (u64)c->mtu * 15625);

	return w + (w >> 2);
}

bool mr_cc_window_limited(const struct mr_cc_params *prm,
			  const struct mr_cc_conn *c, u32 inflight)
{
	u64 full, w = mr_cc_conn_span(prm, c, &full);

	if (!prm->enabled || !c->hint_kbps || !c->pace_rtt)
		return false;
	if (inflight < mr_cc_whole((u32)w, prm->max_conn_window))
		return false;
	return w * 2 < mr_cc_min(mr_cc_hint_window(c, c->hint_kbps), full);
}
EXPORT_SYMBOL_IF_KUNIT(mr_cc_window_limited);

/* floor(sqrt(x)), bit by bit. */
static u32 mr_cc_isqrt(u32 x)
{
	u32 r = 0, bit = 1u << 30;

	while (bit > x)
		bit >>= 2;
	while (bit) {
		if (x >= r + bit) {
			x -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
		bit >>= 2;
	}
	return r;
}

/*
 * Swift's flow scaling: the target grows as the window shrinks, like
 * 1/sqrt(cwnd), from 0 at the largest window to target_scale_ns at one
 * packet and below. Many flows with small windows share a queue that a
 * few with large windows would keep short; this keeps them fair.
 */
static u64 mr_cc_scale(const struct mr_cc_params *prm, u32 cwnd)
{
	u32 max = prm->max_path_window << MR_CC_SHIFT, sw, sm, ratio;

	if (!prm->target_scale_ns || cwnd >= max || max <= MR_CC_ONE)
		return 0;
	if (cwnd < MR_CC_ONE)
		cwnd = MR_CC_ONE;
	sw = mr_cc_isqrt(cwnd << MR_CC_SHIFT);	/* sqrt(packets), Q10 */
	sm = mr_cc_isqrt(max << MR_CC_SHIFT);
	ratio = (sm << MR_CC_SHIFT) / sw;	/* sqrt(max / cwnd), Q10 */
	return mr_cc_div64(prm->target_scale_ns * (ratio - MR_CC_ONE),
			   sm - MR_CC_ONE);
}

static u64 mr_cc_base(const struct mr_cc_path *p)
{
	if (!p->base_prev)
		return p->base_cur;
	return mr_cc_min(p->base_cur, p->base_prev);
}

u64 mr_cc_path_target(const struct mr_cc_params *prm,
		      const struct mr_cc_path *p)
{
	u64 base = mr_cc_base(p);

	if (!base)
		return 0;
	return base + mr_cc_max(prm->target_floor_ns, base >> prm->target_shift) +
	       mr_cc_scale(prm, p->w.cwnd);
}

/*
 * The base RTT is the minimum of the current window of base_window_ns and
 * the previous one: a lucky sample ages out after two windows, and a route
 * that got longer shows within that time.
 */
static void mr_cc_base_sample(const struct mr_cc_params *prm, u64 *cur,
			      u64 *prev, u64 *start, u64 rtt, u64 now)
{
	if (!*cur || now - *start >= prm->base_window_ns) {
		*prev = *cur;
		*cur = rtt;
		*start = now;
	} else if (rtt < *cur) {
		*cur = rtt;
	}
}

/*
 * Marks that the ACK's cumulative count adds. An older ACK, overtaken by
 * a newer one, adds none; a count that jumps by more than the packets that
 * can have arrived in between (a counter we did not follow from its
 * start) becomes the new baseline.
 */
static u32 mr_cc_new_marks(struct mr_cc_path *p, u32 count)
{
	u32 d = count - p->ecn_seen;

	if (d <= MR_CC_ECN_PLAUSIBLE) {
		p->ecn_seen = count;
		return d;
	}
	if (p->ecn_seen - count > MR_CC_ECN_PLAUSIBLE)
		p->ecn_seen = count;
	return 0;
}

/*
 * The first hint sizes the connection's window (both ways: the small
 * initial window is raised to what the receiver grants, or capped to
 * it), and the marks and losses of the packets sent before it do not
 * count. Every later hint caps the window at what it fills, and one that
 * grows by 1/8 or more raises the window to that.
 */
static void mr_cc_hint(const struct mr_cc_params *prm, struct mr_cc_conn *c,
		       u32 hint, u64 sent_order)
{
	u64 w;

	if (hint != c->hint_kbps)
		c->hint_q24 = hint ? mr_cc_div64(MR_CC_NS_KBPS << 24, hint) : 0;
	if (!hint || !c->pace_rtt) {
		c->hint_kbps = hint;
		return;
	}
	w = mr_cc_hint_window(c, hint);
	/*
	 * At once, not only the pacing: the first ACKs of an incast grant
	 * the early senders more than their share, and a window those
	 * raised would keep the queue they built, the paced rate refilling
	 * it as fast as it drains.
	 */
	w = mr_cc_clamp_win(prm, w, prm->max_conn_window);
	if (c->hinted && w < c->w.cwnd)
		c->w.cwnd = (u32)w;
	if (c->ramp_to > w)
		c->ramp_to = (u32)w;
	if (!c->hinted || hint > (u64)c->hint_kbps + (c->hint_kbps >> 3)) {
		/*
		 * The first hint raises the window by doubling per round
		 * trip: a hint from a capacity that is not the bottleneck's
		 * (a link's speed, before the receiver learns better) would
		 * otherwise put whole windows of every sender into a port
		 * that holds a fraction of one.
		 */
		if (!c->hinted || c->ramp_to) {
			c->ramp_to = w > c->w.cwnd ? (u32)w : 0;
			c->w.cwnd = (u32)mr_cc_min(c->w.cwnd, w);
		} else if (w > c->w.cwnd) {
			c->w.cwnd = (u32)w;
		}
		/*
		 * What the first flight, sent before the receiver had a
		 * say, met in the queue it overfilled is no news: the hint
		 * answers it already.
		 */
		if (!c->hinted)
			c->grace_until = sent_order;
		c->hinted = 1;
	}
	c->hint_kbps = hint;
}

static bool mr_cc_loss_burst(const struct mr_cc_params *prm,
			     const struct mr_cc_win *w)
{
	u64 total = (u64)w->round_acked + w->round_lost;

	return w->round_lost >= prm->loss_burst &&
	       ((u64)w->round_lost << prm->loss_frac_shift) >= total;
}

/* What one ACK does to the window its counts went into. */
struct mr_cc_signal {
	u32 acked;
	u32 lost;
	u32 spurious;
	u32 marks;
	bool known;		/* delay and target are known */
	bool high;		/* ... and the delay is above the target */
	u32 mdf;		/* (delay - target) / delay, at most 1/2, Q16 */
	u64 acked_order;
	u64 sent_order;
};

/* Whether ECN marks at a low delay decrease a window. */
enum mr_cc_ecn_gate {
	MR_CC_ECN_ALWAYS,		/* a path's: it decreases */
	MR_CC_ECN_UNLESS_LOW_DELAY,	/* the connection's: it holds */
};

/*
 * Loss bursts first, then ECN x delay, at most one decrease per round
 * trip (and no increase while it holds):
 *   loss burst                  halve
 *   loss, high delay            decrease by (delay - target) / delay,
 *                               at most 1/2 (Swift): drops at a full queue
 *   ECN, high or unknown delay  decrease by alpha / 2 (DCTCP)
 *   ECN, low delay              the connection holds: the marked paths
 *                               shrink, and spraying moves its packets;
 *                               a path decreases by alpha / 2
 *                               (@gate MR_CC_ECN_ALWAYS)
 *   no ECN, low delay           + ai per round
 *   no ECN, high delay          + ai / 4 per round
 * A loss at low delay, not in a burst, is not congestion.
 */
static enum mr_cc_verdict mr_cc_react(const struct mr_cc_params *prm,
				      struct mr_cc_win *w, u32 max_pkts,
				      u32 ai, u32 share,
				      enum mr_cc_ecn_gate gate,
				      const struct mr_cc_signal *s)
{
	u64 cwnd = w->cwnd, step;
	enum mr_cc_verdict v;
	u32 old = w->cwnd;

	w->round_acked = mr_cc_sat_add(w->round_acked, s->acked);
	w->round_marked = mr_cc_sat_add(w->round_marked, s->marks);
	w->round_lost = mr_cc_sat_add(w->round_lost, s->lost);
	/*
	 * A loss that proves spurious (the path reordered, it did not drop)
	 * no longer counts, and undoes the decrease it caused, as TCP's
	 * undo does.
	 */
	if (s->spurious) {
		w->round_lost -= (u32)mr_cc_min(s->spurious, w->round_lost);
		if (w->undo_cwnd > w->cwnd) {
			w->cwnd = w->undo_cwnd;
			w->undo_cwnd = 0;
			w->holding = 0;
			return MR_CC_INCREASE;
		}
	}
	if (w->holding && s->acked && s->acked_order > w->hold_until)
		w->holding = 0;
	if (prm->loss && s->lost && !w->holding && mr_cc_loss_burst(prm, w)) {
		v = MR_CC_DECREASE_LOSS;
		cwnd -= cwnd >> 1;
		w->round_lost = 0;	/* these losses are answered */
		w->undo_cwnd = old;
	} else if (prm->loss && s->lost && !w->holding && s->high) {
		v = MR_CC_DECREASE_LOSS;
		cwnd -= (cwnd * s->mdf) >> 16;
		w->round_lost = 0;
		w->undo_cwnd = old;
	} else if (s->marks && !w->holding &&
		   (gate == MR_CC_ECN_ALWAYS || !s->known || s->high)) {
		v = MR_CC_DECREASE_ECN;
		cwnd -= (cwnd * w->alpha) >> 17;
		w->undo_cwnd = 0;	/* marks are never spurious */
	} else if (!s->marks && !w->holding && s->acked) {
		v = MR_CC_INCREASE;
		step = s->high ? ai >> MR_CC_FAIR_SHIFT : ai;
		if (share >= MR_CC_ONE)
			cwnd += mr_cc_div64((step * s->acked) << MR_CC_SHIFT,
					    share);
		else	/* below one packet: at most doubles per ACK */
			cwnd += mr_cc_min(step * s->acked, cwnd);
	} else {
		return MR_CC_HOLD;
	}
	w->cwnd = mr_cc_clamp_win(prm, cwnd, max_pkts);
	if (v == MR_CC_INCREASE)
		return w->cwnd > old ? v : MR_CC_HOLD;
	w->holding = 1;
	w->hold_until = s->sent_order;
	return w->cwnd < old ? v : MR_CC_HOLD;
}

/*
 * The first ACK that acknowledges a packet sent after the round began
 * ends it: alpha <- (1 - g) alpha + g F, F the round's marked share. That
 * ACK's counts go into the next round.
 */
static void mr_cc_round(const struct mr_cc_params *prm, struct mr_cc_win *w,
			const struct mr_cc_signal *s)
{
	u64 f;

	if (w->round_end && (!s->acked || s->acked_order <= w->round_end))
		return;
	if (w->round_end && w->round_acked) {
		f = w->round_marked >= w->round_acked ?
			    MR_CC_ALPHA_ONE :
			    mr_cc_div64((u64)w->round_marked << 16,
					w->round_acked);
		w->alpha = w->alpha - (w->alpha >> prm->g_shift) +
			   (u32)(f >> prm->g_shift);
	}
	w->round_end = s->sent_order;
	w->round_acked = 0;
	w->round_marked = 0;
	w->round_lost = 0;
}

/*
 * Take the ACK's RTT sample @rtt (0: none) and its SRTT into the path's
 * and the connection's estimates.
 */
static void mr_cc_rtt_sample(const struct mr_cc_params *prm,
			     struct mr_cc_conn *c, struct mr_cc_path *p,
			     const struct mr_cc_ack_info *a, u64 rtt)
{
	if (a->srtt_ns)
		p->srtt = mr_cc_min(a->srtt_ns, MR_CC_RTT_MAX_NS);
	if (rtt) {
		mr_cc_base_sample(prm, &p->base_cur, &p->base_prev,
				  &p->base_start, rtt, a->now_ns);
		mr_cc_base_sample(prm, &c->base_cur, &c->base_prev,
				  &c->base_start, rtt, a->now_ns);
		c->srtt = c->srtt ? c->srtt - (c->srtt >> 3) + (rtt >> 3) : rtt;
	}
	/*
	 * Pacing spreads a window over the SRTT, but not over more than twice
	 * the path's base RTT: samples that waited for a loss's repair (the
	 * receiver acknowledges a path's last packets when their message
	 * completes) inflate the SRTT of a sender that sends in bursts, and
	 * pacing at that SRTT would slow every later burst.
	 */
	c->pace_rtt = c->srtt;
	if (mr_cc_conn_base(c))
		c->pace_rtt = mr_cc_min(c->srtt, 2 * mr_cc_conn_base(c));
}

/* Set the delay part of @s from the sample @rtt (0: none) and the path's. */
static void mr_cc_delay_signal(const struct mr_cc_params *prm,
			       const struct mr_cc_path *p, u64 rtt,
			       struct mr_cc_signal *s)
{
	u64 delay, target;

	/* Delay: the lower of sample and SRTT, so one stall is not a queue. */
	delay = rtt && p->srtt ? mr_cc_min(rtt, p->srtt) : rtt ? rtt : p->srtt;
	target = prm->delay ? mr_cc_path_target(prm, p) : 0;
	s->known = delay && target;
	s->high = s->known && delay > target;
	if (s->high)
		s->mdf = (u32)mr_cc_min(mr_cc_div64((delay - target) << 16,
						    delay),
					MR_CC_ALPHA_ONE / 2);
}

/*
 * The paths' increase is coupled (MPTCP's LIA, RFC 6356): together they
 * grow by ai per round, so spraying over P paths is no more aggressive
 * than one flow; a path's share is its window's.
 */
static enum mr_cc_verdict mr_cc_react_path(const struct mr_cc_params *prm,
					   struct mr_cc_conn *c,
					   struct mr_cc_path *p,
					   const struct mr_cc_signal *s)
{
	u32 cwnd = p->w.cwnd;
	enum mr_cc_verdict v;

	v = mr_cc_react(prm, &p->w, prm->max_path_window, prm->ai,
			(u32)mr_cc_max(c->paths_cwnd, p->w.cwnd),
			MR_CC_ECN_ALWAYS, s);
	c->paths_cwnd = c->paths_cwnd - cwnd + p->w.cwnd;
	return v;
}

static enum mr_cc_verdict mr_cc_react_conn(const struct mr_cc_params *prm,
					   struct mr_cc_conn *c,
					   const struct mr_cc_signal *s)
{
	u32 cwnd = c->w.cwnd;
	enum mr_cc_verdict v;

	v = mr_cc_react(prm, &c->w, prm->max_conn_window, prm->ai_conn,
			c->w.cwnd, MR_CC_ECN_UNLESS_LOW_DELAY, s);
	/*
	 * The first hint's ramp: + what each ACK acknowledges, until a mark
	 * or a decrease. Not an isolated loss: random loss is no congestion.
	 */
	if (c->ramp_to && (v >= MR_CC_DECREASE_ECN || s->marks)) {
		c->ramp_to = 0;
	} else if (c->ramp_to && s->acked) {
		c->w.cwnd = (u32)mr_cc_min(c->ramp_to,
					   (u64)c->w.cwnd +
					   ((u64)s->acked << MR_CC_SHIFT));
		if (c->w.cwnd >= c->ramp_to)
			c->ramp_to = 0;
		if (c->w.cwnd > cwnd)
			v = MR_CC_INCREASE;
	}
	/* Rate-limited by the hint: no growth past what the hint fills. */
	if (v == MR_CC_INCREASE && c->hint_kbps && c->pace_rtt) {
		c->w.cwnd = (u32)mr_cc_max(cwnd,
					   mr_cc_min(c->w.cwnd,
						     mr_cc_hint_window(c, c->hint_kbps)));
		if (c->w.cwnd == cwnd)
			v = MR_CC_HOLD;
	}
	return v;
}

enum mr_cc_verdict mr_cc_ack(const struct mr_cc_params *prm,
			     struct mr_cc_conn *c, struct mr_cc_path *p,
			     const struct mr_cc_ack_info *a)
{
	u64 rtt = mr_cc_min(a->rtt_ns, MR_CC_RTT_MAX_NS);
	struct mr_cc_signal s = {
		.acked = (u32)mr_cc_min(a->acked, MR_CC_COUNT_MAX),
		.lost = (u32)mr_cc_min(a->lost, MR_CC_COUNT_MAX),
		.spurious = (u32)mr_cc_min(a->spurious, MR_CC_COUNT_MAX),
		.marks = mr_cc_new_marks(p, a->ecn_count),
		.acked_order = a->acked_order,
		.sent_order = a->sent_order,
	};
	enum mr_cc_verdict v, vc;

	if (!prm->enabled || !p->w.cwnd)
		return MR_CC_HOLD;
	if (!prm->ecn)
		s.marks = 0;
	c->marks += s.marks;
	mr_cc_rtt_sample(prm, c, p, a, rtt);
	/*
	 * The first flight went on the handshake's hint, which the k-th of
	 * N senders gets as C / k: the first ACK's hint (C / N) answers the
	 * queue it built, as it does without the handshake's.
	 */
	if (c->grace_open && a->hint_kbps) {
		c->grace_until = a->sent_order;
		c->grace_open = 0;
	}
	mr_cc_hint(prm, c, a->hint_kbps, a->sent_order);
	if (a->acked_order > c->acked_high)
		c->acked_high = a->acked_order;
	if (c->acked_high <= c->grace_until) {
		s.marks = 0;
		s.lost = 0;
	}
	mr_cc_delay_signal(prm, p, rtt, &s);

	mr_cc_round(prm, &p->w, &s);
	mr_cc_round(prm, &c->w, &s);
	v = mr_cc_react_path(prm, c, p, &s);
	vc = mr_cc_react_conn(prm, c, &s);
	c->decreases += (v >= MR_CC_DECREASE_ECN) + (vc >= MR_CC_DECREASE_ECN);
	mr_cc_pace_update(prm, c);
	return v > vc ? v : vc;
}
EXPORT_SYMBOL_IF_KUNIT(mr_cc_ack);

void mr_cc_timeout(const struct mr_cc_params *prm, struct mr_cc_conn *c,
		   struct mr_cc_path *p, u64 sent_order)
{
	u32 cwnd = p->w.cwnd;

	if (!prm->enabled || !cwnd)
		return;
	mr_cc_path_set(c, p, mr_cc_clamp_win(prm, cwnd >> 1,
					     prm->max_path_window));
	p->w.holding = 1;
	p->w.hold_until = sent_order;
	p->w.round_lost = 0;
	p->w.undo_cwnd = 0;
	if (p->w.cwnd < cwnd)
		c->decreases++;
	mr_cc_pace_update(prm, c);
}
EXPORT_SYMBOL_IF_KUNIT(mr_cc_timeout);

/* The gap a packet of @bytes leaves behind it. */
static u64 mr_cc_gap(const struct mr_cc_conn *c, u32 bytes, bool *by_hint)
{
	u64 gap = c->gap_ns, gh;

	*by_hint = false;
	if (c->hint_limits) {
		gh = (mr_cc_min(bytes, MR_CC_MAX_MTU) * c->hint_q24) >> 24;
		if (gh > gap) {
			gap = gh;
			*by_hint = true;
		}
	}
	/* At least 1 ns, or a burst would never be spent. */
	return gap < 1 ? 1 : mr_cc_min(gap, MR_CC_GAP_MAX_NS);
}

static bool mr_cc_paced(const struct mr_cc_params *prm,
			const struct mr_cc_conn *c)
{
	return prm->enabled && (c->gap_ns || c->hint_limits);
}

u64 mr_cc_pace_delay(const struct mr_cc_params *prm, struct mr_cc_conn *c,
		     u64 now_ns)
{
	now_ns = mr_cc_min(now_ns, MR_CC_TIME_MAX_NS);
	if (!mr_cc_paced(prm, c) || c->burst || now_ns >= c->next_ns)
		return 0;
	/* Only a clock that went back can be this far behind: catch up. */
	if (c->next_ns - now_ns > MR_CC_PACE_MAX_NS)
		c->next_ns = now_ns + MR_CC_PACE_MAX_NS;
	c->paced++;
	return c->next_ns - now_ns;
}
EXPORT_SYMBOL_IF_KUNIT(mr_cc_pace_delay);

/*
 * Packets of a burst at @gap: MR_CC_BURST at the hint's rate, which the
 * receiver shares out among its senders, so that their bursts stay short
 * at its port. A window's rate needs no finer grain than
 * MR_CC_QUANTUM_NS: a host that sends in software pays a timer and an
 * ACK for each burst, and 256 QPs in a guest paced at 4 packets a burst
 * overran the softirqs and held ACKs back 200 ms, which the peers' RTOs
 * took for losses.
 */
static u32 mr_cc_burst(u64 gap, bool by_hint)
{
	if (by_hint || gap * MR_CC_BURST >= MR_CC_QUANTUM_NS)
		return MR_CC_BURST;
	return (u32)mr_cc_min(mr_cc_div64(MR_CC_QUANTUM_NS, gap),
			      MR_CC_BURST_MAX);
}

/*
 * A burst starts when the last one is spent or its time is up: the
 * packets leave back to back, and each moves the time the next burst may
 * start by its gap. A timer that fires less than one gap late loses no
 * time; the first packet's gap then still ends after now, so no second
 * burst can start at the same instant.
 */
void mr_cc_pace_sent(const struct mr_cc_params *prm, struct mr_cc_conn *c,
		     u32 bytes, u64 now_ns)
{
	bool by_hint;
	u64 gap, credit;

	now_ns = mr_cc_min(now_ns, MR_CC_TIME_MAX_NS);
	if (!mr_cc_paced(prm, c)) {
		c->burst = 0;
		return;
	}
	gap = mr_cc_gap(c, bytes, &by_hint);
	if (!c->burst || now_ns >= c->next_ns) {
		credit = mr_cc_min(gap - 1, now_ns);
		c->next_ns = mr_cc_max(c->next_ns, now_ns - credit);
		c->burst = mr_cc_burst(gap, by_hint);
	}
	c->next_ns += gap;
	c->burst--;
	c->hint_limited += by_hint;
}
EXPORT_SYMBOL_IF_KUNIT(mr_cc_pace_sent);

void mr_cc_hello(const struct mr_cc_params *prm, struct mr_cc_conn *c,
		 u32 hint_kbps, u64 rtt_ns, u64 sent_order, u64 now_ns)
{
	u64 pace_rtt = c->pace_rtt;
	bool by_hint;

	if (!prm->enabled || !hint_kbps || c->hint_kbps || c->hinted)
		return;
	/*
	 * The round trip sizes the window the hint fills, and only that:
	 * the window's own pacing waits for the data's samples, since the
	 * HELLO's answer may have waited for more than a queue.
	 */
	if (!pace_rtt)
		c->pace_rtt = mr_cc_min(rtt_ns, MR_CC_RTT_MAX_NS);
	mr_cc_hint(prm, c, hint_kbps, sent_order);
	c->pace_rtt = pace_rtt;
	c->grace_open = 1;
	mr_cc_pace_update(prm, c);
	if (mr_cc_paced(prm, c) && !sent_order) {
		now_ns = mr_cc_min(now_ns, MR_CC_TIME_MAX_NS);
		c->next_ns = now_ns + mr_cc_gap(c, c->mtu, &by_hint);
		c->burst = 0;
	}
}
EXPORT_SYMBOL_IF_KUNIT(mr_cc_hello);

u32 mr_cc_hint_from_bps(u64 bps)
{
	u64 kbps = mr_cc_div64(bps, 1000);

	if (!bps)
		return 0;
	return kbps < 1 ? 1 : kbps > MR_CC_U32_MAX ? MR_CC_U32_MAX : (u32)kbps;
}
EXPORT_SYMBOL_IF_KUNIT(mr_cc_hint_from_bps);

u64 mr_cc_hint_to_bps(u32 kbps)
{
	return (u64)kbps * 1000;
}
EXPORT_SYMBOL_IF_KUNIT(mr_cc_hint_to_bps);
