// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The congestion control fuzz body: arbitrary bytes pick valid parameters
 * and then a sequence of ACKs, losses, marks, RTT samples, hints,
 * timeouts, path restarts, clock jumps, pacing calls and receiver share
 * computations. After every step, what must hold for any input: windows
 * within their bounds, the connection's sum of its paths' windows exact,
 * alpha at most 1, pacing waits finite and bursts at most MR_CC_BURST_MAX,
 * shares within the capacity. UBSan catches any overflow on the way.
 */
#include <string.h>

#include "cc.h"
#include "share.h"
#include "fuzz_cc.h"

#define FUZZ_CC_PATHS 16
#define FUZZ_CC_FLOWS 48

struct fuzz_cc_in {
	const unsigned char *p;
	size_t n;
};

static u32 fuzz_cc_u8(struct fuzz_cc_in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

static u32 fuzz_cc_u32(struct fuzz_cc_in *in)
{
	u32 v = 0;
	int i;

	for (i = 0; i < 4; i++)
		v = v << 8 | fuzz_cc_u8(in);
	return v;
}

static u64 fuzz_cc_u64(struct fuzz_cc_in *in)
{
	u64 hi = fuzz_cc_u32(in);

	return hi << 32 | fuzz_cc_u32(in);
}

/* A time: 0, small, around real RTTs, or anything. */
static u64 fuzz_cc_time(struct fuzz_cc_in *in)
{
	switch (fuzz_cc_u8(in) & 3) {
	case 0:
		return 0;
	case 1:
		return fuzz_cc_u8(in);
	case 2:
		return (u64)fuzz_cc_u32(in) >> (fuzz_cc_u8(in) & 15);
	default:
		return fuzz_cc_u64(in);
	}
}

static void fuzz_cc_params(struct fuzz_cc_in *in, struct mr_cc_params *prm)
{
	u32 flags = fuzz_cc_u8(in);

	mr_cc_params_default(prm);
	if (!(flags & 0x80))
		return;
	prm->enabled = !(flags & 1);
	prm->ecn = !(flags & 2);
	prm->delay = !(flags & 4);
	prm->loss = !(flags & 8);
	prm->g_shift = 1 + fuzz_cc_u8(in) % 16;
	prm->max_path_window = 1 + fuzz_cc_u8(in) % MR_CC_MAX_PATH_WINDOW;
	prm->init_path_window = 1 + fuzz_cc_u8(in) % prm->max_path_window;
	prm->max_conn_window = 1 + fuzz_cc_u32(in) % MR_CC_MAX_CONN_WINDOW;
	prm->init_conn_window = 1 + fuzz_cc_u32(in) % prm->max_conn_window;
	prm->min_window = 1 + fuzz_cc_u32(in) % MR_CC_ONE;
	prm->ai = 1 + fuzz_cc_u32(in) % MR_CC_MAX_AI;
	prm->ai_conn = 1 + fuzz_cc_u32(in) % MR_CC_MAX_AI;
	prm->target_floor_ns = fuzz_cc_u32(in) % (MR_CC_MAX_TIME_NS + 1);
	prm->target_shift = fuzz_cc_u8(in) % 17;
	prm->target_scale_ns = fuzz_cc_u32(in) % (MR_CC_MAX_TIME_NS + 1);
	prm->base_window_ns = 1000000 + (u64)fuzz_cc_u32(in);
	prm->loss_burst = 1 + fuzz_cc_u8(in);
	prm->loss_frac_shift = fuzz_cc_u8(in) % 17;
	prm->share_idle = 1 + fuzz_cc_u8(in) % 8;
}

static int fuzz_cc_check_win(const struct mr_cc_params *prm,
			     const struct mr_cc_win *w, u32 max_pkts)
{
	if (w->cwnd < prm->min_window && prm->enabled)
		return 1;
	if (w->cwnd > max_pkts << MR_CC_SHIFT)
		return 2;
	if (w->alpha > MR_CC_ALPHA_ONE)
		return 3;
	return 0;
}

static int fuzz_cc_check(const struct mr_cc_params *prm,
			 const struct mr_cc_conn *c,
			 const struct mr_cc_path *p, u32 npaths)
{
	u32 i, sum = 0, w;
	int rc;

	for (i = 0; i < npaths; i++) {
		rc = fuzz_cc_check_win(prm, &p[i].w, prm->max_path_window);
		if (rc)
			return 10 + rc;
		w = mr_cc_path_window(prm, &p[i]);
		if (w < 1 || w > prm->max_path_window)
			return 14;
		sum += p[i].w.cwnd;
	}
	rc = fuzz_cc_check_win(prm, &c->w, prm->max_conn_window);
	if (rc)
		return 20 + rc;
	w = mr_cc_conn_window(prm, c);
	if (w < 1 || w > prm->max_conn_window)
		return 24;
	if (c->paths_cwnd != sum || c->npaths != npaths)
		return 25;
	if (c->gap_ns > MR_CC_GAP_MAX_NS || c->burst > MR_CC_BURST_MAX)
		return 26;
	return 0;
}

static int fuzz_cc_share(struct fuzz_cc_in *in,
			 const struct mr_cc_params *prm,
			 struct mr_share_flow *flows, u32 *nflows)
{
	u32 n = fuzz_cc_u8(in) % (FUZZ_CC_FLOWS + 1), i, cap, fresh;
	struct mr_share_stats st;
	u64 interval, sum = 0;

	/* Keep the senders of the last call, add fresh ones, or start over. */
	for (i = *nflows; i < n; i++)
		memset(&flows[i], 0, sizeof(flows[i]));
	*nflows = n;
	for (i = 0; i < n; i++) {
		u32 b = fuzz_cc_u8(in);

		flows[i].bytes = b & 1 ? 0 : (u64)fuzz_cc_u32(in) << (b >> 4);
		if (b & 2)
			flows[i].hint_kbps = fuzz_cc_u32(in);
	}
	cap = fuzz_cc_u8(in) & 1 ? fuzz_cc_u32(in) : fuzz_cc_u8(in);
	interval = fuzz_cc_time(in);
	fresh = mr_share_split(prm, flows, n, cap, interval, &st);
	if (!cap || !interval) {
		for (i = 0; i < n; i++)
			if (flows[i].hint_kbps)
				return 40;
		return fresh ? 41 : 0;
	}
	if (!fresh || fresh > cap || st.active > n || st.unbounded > st.active)
		return 42;
	if (st.passes > 70)
		return 43;
	for (i = 0; i < n; i++) {
		if (!flows[i].hint_kbps)
			return 44;
		if (flows[i].demand_kbps)
			sum += flows[i].hint_kbps;
		else if (flows[i].hint_kbps != fresh ||
			 flows[i].idle < prm->share_idle)
			return 45;
	}
	/* Within the capacity, but for the 1 kbit/s floor of each share. */
	if (sum > (u64)cap + st.active)
		return 46;
	return 0;
}

int mr_fuzz_cc(const unsigned char *data, size_t size)
{
	struct mr_cc_path p[FUZZ_CC_PATHS];
	struct mr_share_flow flows[FUZZ_CC_FLOWS];
	struct fuzz_cc_in in = { data, size };
	u32 npaths, nflows = 0, same = 0, i;
	struct mr_cc_params prm;
	struct mr_cc_ack_info a;
	struct mr_cc_conn c;
	u64 now, sent = 0, d, last = ~0ull;
	int rc;

	fuzz_cc_params(&in, &prm);
	if (mr_cc_params_check(&prm))
		return 1;
	npaths = 1 + fuzz_cc_u8(&in) % FUZZ_CC_PATHS;
	mr_cc_conn_init(&c, &prm, fuzz_cc_u32(&in) >> (fuzz_cc_u8(&in) & 31));
	for (i = 0; i < npaths; i++)
		mr_cc_path_init(&p[i], &c, &prm);
	now = fuzz_cc_time(&in);
	while (in.n) {
		u32 op = fuzz_cc_u8(&in) % 9, id = fuzz_cc_u8(&in) % npaths;
		enum mr_cc_verdict v;

		if (op != 4)
			same = 0;
		switch (op) {
		case 0:
		case 1:
		case 2:
			memset(&a, 0, sizeof(a));
			a.acked = fuzz_cc_u8(&in) % 70;
			if (!a.acked && fuzz_cc_u8(&in) == 0xff)
				a.acked = fuzz_cc_u32(&in);
			a.lost = fuzz_cc_u8(&in) % 12;
			a.ecn_count = p[id].ecn_seen;
			if (op == 1)
				a.ecn_count += fuzz_cc_u8(&in) % ((u64)a.acked + 1);
			else if (op == 2)
				a.ecn_count = fuzz_cc_u32(&in);
			a.rtt_ns = fuzz_cc_time(&in);
			a.srtt_ns = fuzz_cc_u8(&in) & 1 ? a.rtt_ns :
							   fuzz_cc_time(&in);
			sent += fuzz_cc_u8(&in);
			a.sent_order = sent;
			a.acked_order = a.acked && sent ?
						fuzz_cc_u64(&in) % (sent + 1) :
						0;
			now += fuzz_cc_time(&in) >> 8;
			a.now_ns = now;
			a.hint_kbps = fuzz_cc_u8(&in) & 1 ? c.hint_kbps :
							    fuzz_cc_u32(&in);
			v = mr_cc_ack(&prm, &c, &p[id], &a);
			if (v > MR_CC_DECREASE_LOSS)
				return 2;
			if (mr_cc_path_target(&prm, &p[id]) > 4 * 0x80000000ull)
				return 3;
			break;
		case 3:
			mr_cc_timeout(&prm, &c, &p[id], sent);
			break;
		case 4:
			d = mr_cc_pace_delay(&prm, &c, now);
			if (d > MR_CC_PACE_MAX_NS)
				return 4;
			if (fuzz_cc_u8(&in) & 1) {
				now += fuzz_cc_u8(&in) & 1 ? d : d / 2;
				break;
			}
			if (d)
				break;
			/* Sent now: at most a burst at one instant. */
			if (c.gap_ns || c.hint_limits)
				same = now == last ? same + 1 : 1;
			else
				same = 0;
			last = now;
			if (same > MR_CC_BURST_MAX)
				return 5;
			mr_cc_pace_sent(&prm, &c, fuzz_cc_u32(&in) >> 16, now);
			break;
		case 5:
			mr_cc_path_exit(&p[id], &c, &prm);
			mr_cc_path_init(&p[id], &c, &prm);
			break;
		case 6:
			now = fuzz_cc_time(&in); /* any jump, also back */
			break;
		case 7:
			rc = fuzz_cc_share(&in, &prm, flows, &nflows);
			if (rc)
				return rc;
			break;
		default:
			sent += fuzz_cc_u32(&in);
			break;
		}
		rc = fuzz_cc_check(&prm, &c, p, npaths);
		if (rc)
			return rc;
	}
	return 0;
}
