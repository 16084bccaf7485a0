// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RFC 6298 with nanosecond integers. The gains 1/8 and 1/4 are shifts, so
 * the code needs no 64-bit division on any architecture.
 */
#include "rto.h"

static u64 mr_rto_clamp(u64 v, u64 lo, u64 hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/**
 * mr_rto_init() - start a path's estimator with no sample
 * @r: the estimator
 * @initial_ns: the timeout before the first sample
 * @min_ns: the floor; a timeout shorter than this would fire spuriously
 * @max_ns: the ceiling, also of backoff
 *
 * Bounds are made sane rather than refused: 1 <= min <= max <= the limit.
 */
void mr_rto_init(struct mr_rto *r, u64 initial_ns, u64 min_ns, u64 max_ns)
{
	r->max = mr_rto_clamp(max_ns, 1, MR_RTO_LIMIT_NS);
	r->min = mr_rto_clamp(min_ns, 1, r->max);
	r->rto = mr_rto_clamp(initial_ns, r->min, r->max);
	r->srtt = 0;
	r->rttvar = 0;
	r->backoffs = 0;
	r->samples = 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_rto_init);

/**
 * mr_rto_sample() - feed one RTT measurement
 * @r: the estimator
 * @rtt_ns: the measured RTT, from a packet sent only once (Karn)
 *
 * A fresh sample also ends any backoff: the path answers again.
 */
void mr_rto_sample(struct mr_rto *r, u64 rtt_ns)
{
	u64 rtt = mr_rto_clamp(rtt_ns, 1, r->max);
	u64 err;

	if (!r->samples) {
		r->srtt = rtt;
		r->rttvar = rtt / 2;
	} else {
		/* RTTVAR first: it measures against the old SRTT. */
		err = rtt > r->srtt ? rtt - r->srtt : r->srtt - rtt;
		r->rttvar = r->rttvar - (r->rttvar >> 2) + (err >> 2);
		if (rtt > r->srtt)
			r->srtt += (rtt - r->srtt) >> 3;
		else
			r->srtt -= (r->srtt - rtt) >> 3;
	}
	if (r->samples != (u32)-1)
		r->samples++;
	r->backoffs = 0;
	r->rto = mr_rto_clamp(r->srtt + 4 * r->rttvar, r->min, r->max);
}
EXPORT_SYMBOL_IF_KUNIT(mr_rto_sample);

/**
 * mr_rto_timeout() - the path's timer fired: back off
 * @r: the estimator
 *
 * Return: the doubled timeout to arm next, at most the ceiling.
 */
u64 mr_rto_timeout(struct mr_rto *r)
{
	r->rto = mr_rto_doubled(r->rto, r->max);
	if (r->backoffs != (u32)-1)
		r->backoffs++;
	return r->rto;
}
EXPORT_SYMBOL_IF_KUNIT(mr_rto_timeout);

/**
 * mr_rto_wait() - how long a path's timer waits now
 * @r: the estimator
 * @probed: the tail probe of the current wait has gone
 * @pto_min_ns: the shortest tail probe timeout
 *
 * Before the probe, and once there is an RTT sample, the timer fires as a
 * tail probe after max(2 SRTT, SRTT + 4 RTTVAR), at least @pto_min_ns and
 * at most the RTO; otherwise it waits the RTO.
 *
 * Return: the wait in nanoseconds.
 */
u64 mr_rto_wait(const struct mr_rto *r, bool probed, u64 pto_min_ns)
{
	u64 pto;

	if (probed || !r->srtt)
		return r->rto;
	pto = 2 * r->srtt;
	if (r->srtt + 4 * r->rttvar > pto)
		pto = r->srtt + 4 * r->rttvar;
	if (pto < pto_min_ns)
		pto = pto_min_ns;
	return pto > r->rto ? r->rto : pto;
}
EXPORT_SYMBOL_IF_KUNIT(mr_rto_wait);
