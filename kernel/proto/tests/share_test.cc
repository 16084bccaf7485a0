// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Host tests of proto/share.c: the receiver's max-min fair shares of its
// ingress capacity, for equal, demand-limited, joining, leaving and idle
// senders, and 4096 of them against a reference by sorting.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

extern "C" {
#include "cc.h"
#include "share.h"
}

namespace {

constexpr uint64_t kMs = 1000000;

mr_cc_params DefaultParams()
{
	mr_cc_params prm;

	mr_cc_params_default(&prm);
	return prm;
}

// Each flow sends at min(its share, its own limit): one interval.
void Interval(std::vector<mr_share_flow> &f, const std::vector<double> &limit,
	      uint64_t interval, uint32_t cap, mr_share_stats *st = nullptr)
{
	const mr_cc_params prm = DefaultParams();

	for (size_t i = 0; i < f.size(); i++) {
		double share = f[i].hint_kbps ? f[i].hint_kbps : 1e12;
		double kbps = std::min(share, limit[i]);

		f[i].bytes = (uint64_t)(kbps * 1000 / 8 * interval / 1e9);
	}
	mr_share_split(&prm, f.data(), (uint32_t)f.size(), cap, interval, st);
}

} // namespace

// N equal senders: C / N at the first interval, and it stays.
TEST(Share, EqualSendersAtOnce)
{
	const uint32_t cap = 100000; // 100 Mbit/s
	mr_cc_params prm = DefaultParams();
	std::vector<mr_share_flow> f(8);
	mr_share_stats st;

	for (auto &x : f)
		x.bytes = 1000000; // the first window: far above any share
	uint32_t fresh = mr_share_split(&prm, f.data(), 8, cap, kMs, &st);

	for (auto &x : f) {
		EXPECT_EQ(x.hint_kbps, cap / 8);
		EXPECT_EQ(x.demand_kbps, MR_SHARE_UNBOUNDED);
	}
	EXPECT_EQ(st.active, 8u);
	EXPECT_EQ(st.unbounded, 8u);
	EXPECT_EQ(st.passes, 1u);
	EXPECT_EQ(fresh, cap / 9);
	std::vector<double> lim(8, 1e12);

	for (int i = 0; i < 20; i++) {
		Interval(f, lim, kMs, cap, &st);
		for (auto &x : f)
			ASSERT_EQ(x.hint_kbps, cap / 8) << "interval " << i;
	}
	// No capacity or no interval: no hints at all.
	mr_share_split(&prm, f.data(), 8, 0, kMs, nullptr);
	EXPECT_EQ(f[0].hint_kbps, 0u);
	f[0].hint_kbps = 5;
	mr_share_split(&prm, f.data(), 8, cap, 0, nullptr);
	EXPECT_EQ(f[0].hint_kbps, 0u);
	EXPECT_EQ(mr_share_split(&prm, nullptr, 0, cap, kMs, nullptr), cap);
}

// A sender limited elsewhere (below half its share) gets twice what it
// uses; the others share the rest equally, max-min.
TEST(Share, DemandLimitedSenders)
{
	const uint32_t cap = 100000;
	std::vector<mr_share_flow> f(4);
	std::vector<double> lim = { 5000, 1e12, 1e12, 1e12 };
	mr_share_stats st;

	for (int i = 0; i < 10; i++)
		Interval(f, lim, 10 * kMs, cap, &st);
	// 5 Mbit/s, twice: 10; the rest in three: 30.
	EXPECT_NEAR(f[0].hint_kbps, 10000, 2);
	EXPECT_NEAR(f[1].hint_kbps, (cap - 10000) / 3.0, 2);
	EXPECT_EQ(f[1].hint_kbps, f[2].hint_kbps);
	EXPECT_EQ(f[2].hint_kbps, f[3].hint_kbps);
	EXPECT_EQ(st.unbounded, 3u);
	EXPECT_LE(st.passes, 3u);
	// Its limit goes: it uses its whole share, so it is unbounded at
	// once, and the next interval gives it the fair share.
	lim[0] = 1e12;
	Interval(f, lim, 10 * kMs, cap, &st);
	Interval(f, lim, 10 * kMs, cap, &st);
	for (auto &x : f)
		EXPECT_EQ(x.hint_kbps, cap / 4);
	// Everyone limited far below the capacity: each gets its demand, and
	// the rest is split evenly.
	std::vector<double> low = { 10000, 5000, 2500, 2500 };

	for (int i = 0; i < 30; i++)
		Interval(f, low, 10 * kMs, cap, &st);
	EXPECT_EQ(st.unbounded, 0u);
	double extra = (cap - 2 * 20000) / 4;

	for (size_t i = 0; i < f.size(); i++)
		EXPECT_NEAR(f[i].hint_kbps, 2 * low[i] + extra, 4) << i;
}

// A sender that stops drops out after share_idle intervals; one that
// joins gets its share at once; either way the others re-converge in the
// same interval.
TEST(Share, JoinLeaveAndIdle)
{
	const uint32_t cap = 120000;
	std::vector<mr_share_flow> f(3);
	std::vector<double> lim(3, 1e12);
	mr_share_stats st;

	Interval(f, lim, kMs, cap);
	Interval(f, lim, kMs, cap);
	EXPECT_EQ(f[0].hint_kbps, cap / 3);
	// Joining: a fresh entry (zeroed) is unbounded.
	f.push_back(mr_share_flow{});
	lim.push_back(1e12);
	Interval(f, lim, kMs, cap);
	for (auto &x : f)
		EXPECT_EQ(x.hint_kbps, cap / 4);
	// Leaving by removal: C / 3 in the next interval.
	f.erase(f.begin() + 1);
	lim.erase(lim.begin() + 1);
	Interval(f, lim, kMs, cap);
	for (auto &x : f)
		EXPECT_EQ(x.hint_kbps, cap / 3);
	// Leaving by going idle: after share_idle (2) intervals it is out,
	// and keeps the newcomer's share for when it comes back.
	lim[2] = 0;
	Interval(f, lim, kMs, cap, &st);
	EXPECT_EQ(st.active, 3u);
	Interval(f, lim, kMs, cap, &st);
	EXPECT_EQ(st.active, 2u);
	EXPECT_EQ(f[2].demand_kbps, 0u);
	EXPECT_EQ(f[0].hint_kbps, cap / 2);
	EXPECT_EQ(f[1].hint_kbps, cap / 2);
	EXPECT_EQ(f[2].hint_kbps, cap / 3); // a newcomer's share
	// It resumes: unbounded at once (it uses all of what it got).
	lim[2] = 1e12;
	Interval(f, lim, kMs, cap, &st);
	EXPECT_EQ(st.active, 3u);
	for (auto &x : f)
		EXPECT_EQ(x.hint_kbps, cap / 3);
}

namespace {

// Max-min fair shares by the book: sort the demands, fill from the
// smallest.
std::vector<double> ReferenceShares(const std::vector<uint32_t> &demand,
				    double cap)
{
	std::vector<size_t> order(demand.size());
	std::vector<double> share(demand.size());
	size_t left = demand.size();

	for (size_t i = 0; i < order.size(); i++)
		order[i] = i;
	std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
		return demand[a] < demand[b];
	});
	for (size_t i : order) {
		double fair = cap / left;
		double d = demand[i] == MR_SHARE_UNBOUNDED ? 1e300 : demand[i];

		share[i] = std::min(d, fair);
		cap -= share[i];
		left--;
	}
	return share;
}

} // namespace

// 4096 senders with mixed demands: the shares match max-min fairness
// computed by sorting, and the search takes few passes, also for demands
// built to make a plain Newton iteration take one pass per sender.
TEST(Share, ManySendersMaxMin)
{
	const uint32_t n = 4096, cap = 400000000; // 400 Gbit/s
	mr_cc_params prm = DefaultParams();
	std::mt19937 rng(3);

	for (int trial = 0; trial < 4; trial++) {
		std::vector<mr_share_flow> f(n);
		std::vector<uint32_t> demand(n);
		mr_share_stats st;

		for (uint32_t i = 0; i < n; i++) {
			// Shares of 200 Mbit/s; each uses some of it, or all.
			uint32_t used = trial == 3 ?
						// geometric: 1, 1.002, ...
						(uint32_t)(60000 *
							   std::pow(1.0005, i)) :
						(uint32_t)(rng() % 200000);

			f[i].hint_kbps = 200000;
			f[i].rate_kbps = used / 2;
			f[i].bytes = (uint64_t)used * 1000 / 8; // 1 ms
		}
		uint32_t fresh = mr_share_split(&prm, f.data(), n, cap, kMs, &st);

		for (uint32_t i = 0; i < n; i++)
			demand[i] = f[i].demand_kbps;
		std::vector<double> ref = ReferenceShares(demand, cap);
		double sum = 0, level = 0;

		for (uint32_t i = 0; i < n; i++) {
			ASSERT_NEAR(f[i].hint_kbps, ref[i], 1.0) << i;
			sum += f[i].hint_kbps;
			level = std::max(level, (double)f[i].hint_kbps);
		}
		EXPECT_LE(sum, cap);
		EXPECT_GE(sum, cap - n);
		EXPECT_LE(st.passes, 67u);
		if (trial < 3) {
			EXPECT_LE(st.passes, 4u);
		}
		EXPECT_GT(fresh, 0u);
		EXPECT_LE(fresh, level);
	}
	// 4096 equal senders: C / 4096 in one pass.
	std::vector<mr_share_flow> f(n);
	mr_share_stats st;

	for (auto &x : f)
		x.bytes = 100000;
	mr_share_split(&prm, f.data(), n, cap, kMs, &st);
	EXPECT_EQ(st.passes, 1u);
	for (auto &x : f)
		ASSERT_EQ(x.hint_kbps, cap / n);
	// Shares never round to 0 ("no hint"): at least 1 kbit/s.
	mr_share_split(&prm, f.data(), n, 1000, kMs, &st);
	for (auto &x : f)
		ASSERT_EQ(x.hint_kbps, 1u);
}
