// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The receiver's fair shares (contracts in share.h, rules in
 * protocol.rst). As in cc.c, divisions by a variable are 32-bit, or go
 * through mr_cc_div64(), so that a 32-bit kernel needs no libgcc helper.
 */
#include "cc.h"
#include "share.h"

#define MR_SHARE_RATE_MAX 0xffffffffu	/* kbit/s: a saturated rate */
#define MR_SHARE_DEMAND_NEAR_SHIFT 1	/* >= 1/2 of its share: unbounded */

static u64 mr_share_min(u64 a, u64 b)
{
	return a < b ? a : b;
}

static u64 mr_share_max(u64 a, u64 b)
{
	return a > b ? a : b;
}

/*
 * kbit/s = bytes * 8e6 / ns = bytes * inv >> 32, inv = (8e6 << 32) / ns
 * rounded up, so that exact rates come out exact.
 */
static u64 mr_share_rate_inv(u64 interval_ns)
{
	u64 ns = interval_ns ? interval_ns : 1;

	return mr_cc_div64((MR_CC_NS_KBPS << 32) + ns - 1, ns);
}

static u32 mr_share_rate_mul(u64 bytes, u64 inv)
{
	u64 b = mr_share_min(bytes, MR_SHARE_RATE_MAX), r;

	r = b * (inv >> 32) + ((b * (u32)inv) >> 32);
	return (u32)mr_share_min(r, MR_SHARE_RATE_MAX);
}

u32 mr_share_rate_kbps(u64 bytes, u64 interval_ns)
{
	return mr_share_rate_mul(bytes, mr_share_rate_inv(interval_ns));
}

/*
 * A sender's demand from its interval: dropped out after share_idle
 * intervals without data (0); new, or using at least 7/8 of its share,
 * unbounded; else what it sent + 25 %. What it sent is the larger of this
 * interval's rate and the last one's, so that a sender with few packets
 * per interval is not taken for a slow one.
 */
static u32 mr_share_demand(const struct mr_cc_params *prm,
			   struct mr_share_flow *f, u64 inv)
{
	u32 r = mr_share_rate_mul(f->bytes, inv), m = r;
	u64 d;

	if (f->rate_kbps > m)
		m = f->rate_kbps;
	f->rate_kbps = r;
	if (f->bytes)
		f->idle = 0;
	else if (f->idle < 255)
		f->idle++;
	if (f->idle >= prm->share_idle)
		return 0;
	/*
	 * A sender whose window shrank (a mark, a loss) sends below its
	 * share for a while without wanting less: only one below half of it
	 * is limited elsewhere, and it gets twice what it used, so that it
	 * keeps room to come back.
	 */
	if (!f->hint_kbps ||
	    m >= f->hint_kbps - (f->hint_kbps >> MR_SHARE_DEMAND_NEAR_SHIFT))
		return MR_SHARE_UNBOUNDED;
	d = 2 * (u64)m + 1;
	return (u32)mr_share_min(d, MR_SHARE_UNBOUNDED - 1);
}

/* f(x) = sum over active senders of min(demand, x) = *sum + *k * x. */
static void mr_share_fill(const struct mr_share_flow *flows, u32 n, u64 x,
			  u64 *sum, u32 *k)
{
	u32 i, d;

	*sum = 0;
	*k = 0;
	for (i = 0; i < n; i++) {
		d = flows[i].demand_kbps;
		if (!d)
			continue;
		if (d != MR_SHARE_UNBOUNDED && d <= x)
			*sum += d;
		else
			(*k)++;
	}
}

/*
 * The water level: the largest integer L with f(L) <= cap. f is concave
 * and piecewise linear, so a Newton step from a feasible point stays
 * feasible and usually lands on L at once (1 pass for equal senders, 2
 * for two classes). Every other pass bisects [lo, hi) instead, which
 * bounds the search at about 2 * 33 passes whatever the demands.
 * Returns the sum and count of the last feasible point through @sum, @k.
 */
static u64 mr_share_level(const struct mr_share_flow *flows, u32 n, u64 cap,
			  u32 active, u64 *sum, u32 *k, u32 *passes)
{
	u64 lo = (u32)cap / active, hi = cap + 1, x = lo, cand, s;
	u32 pass, kk;

	*sum = 0;
	*k = active;
	for (pass = 1;; pass++) {
		mr_share_fill(flows, n, x, &s, &kk);
		if (kk && s + (u64)kk * x <= cap) {
			*sum = s;
			*k = kk;
			cand = (u32)(cap - s) / kk;
			if (cand <= x) {
				lo = x;
				break;
			}
			lo = cand;
		} else {
			hi = x;
		}
		if (hi - lo <= 1)
			break;
		x = (pass & 1) ? lo : lo + (hi - lo) / 2;
	}
	*passes = pass;
	return lo;
}

u32 mr_share_split(const struct mr_cc_params *prm, struct mr_share_flow *flows,
		   u32 n, u32 capacity_kbps, u64 interval_ns,
		   struct mr_share_stats *st)
{
	u64 inv = mr_share_rate_inv(interval_ns), bounded = 0, level, fresh, sum;
	u32 i, d, active = 0, unbounded = 0, k, passes = 0, extra = 0, h;

	for (i = 0; i < n; i++) {
		d = mr_share_demand(prm, &flows[i], inv);
		flows[i].demand_kbps = d;
		active += !!d;
		unbounded += d == MR_SHARE_UNBOUNDED;
		if (d && d != MR_SHARE_UNBOUNDED)
			bounded += d;
	}
	if (!capacity_kbps || !interval_ns) {
		level = 0;
		fresh = 0;
	} else if (!active) {
		level = capacity_kbps;
		fresh = capacity_kbps;
	} else if (!unbounded && bounded <= capacity_kbps) {
		/* Everyone's demand fits: the rest is split evenly. */
		level = MR_SHARE_UNBOUNDED;
		extra = (u32)(capacity_kbps - bounded) / active;
		fresh = mr_share_max(capacity_kbps - bounded,
				     capacity_kbps / (active + 1));
	} else {
		level = mr_share_level(flows, n, capacity_kbps, active, &sum,
				       &k, &passes);
		/* A newcomer's share, low: as if only the level's set moved. */
		fresh = (u32)(capacity_kbps - sum) / (k + 1);
	}
	if (capacity_kbps && interval_ns && !fresh)
		fresh = 1;
	for (i = 0; i < n; i++) {
		d = flows[i].demand_kbps;
		if (!capacity_kbps || !interval_ns)
			h = 0;
		else if (!d)
			h = (u32)fresh;
		else if (d == MR_SHARE_UNBOUNDED || d > level)
			h = (u32)level;
		else
			h = d + extra;
		/* 0 would mean "no hint": the smallest share is 1 kbit/s. */
		flows[i].hint_kbps = h || !fresh ? h : 1;
	}
	if (st) {
		st->active = active;
		st->unbounded = unbounded;
		st->passes = passes;
	}
	return (u32)fresh;
}
EXPORT_SYMBOL_IF_KUNIT(mr_share_split);
