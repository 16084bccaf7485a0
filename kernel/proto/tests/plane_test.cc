// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Host tests of proto/plane.c: a path's plane and a plane's service.
#include <gtest/gtest.h>

#include <vector>

extern "C" {
#include "plane.h"
}

namespace {

constexpr uint64_t kMs = 1000000;

// In service, or tried again: a path goes to it.
bool mr_plane_usable_at(const struct mr_plane *pl, uint64_t now)
{
	return mr_plane_usable(pl) || mr_plane_probing(pl, now);
}

std::vector<uint32_t> PerPlane(uint32_t paths, uint32_t count, uint32_t usable,
			       uint32_t probing = 0)
{
	std::vector<uint32_t> n(count);

	for (uint32_t id = 0; id < paths; id++)
		n[mr_plane_pick(id, count, usable, probing)]++;
	return n;
}

} // namespace

TEST(PlanePick, PathsSpreadEvenlyAndKeepTheirPlane)
{
	EXPECT_EQ(PerPlane(16, 4, 0xf), (std::vector<uint32_t>{ 4, 4, 4, 4 }));
	EXPECT_EQ(PerPlane(16, 8, 0xff), std::vector<uint32_t>(8, 2));
	EXPECT_EQ(PerPlane(16, 1, 1), std::vector<uint32_t>{ 16 });
	// Plane 2 out: its 4 paths go to the other three, the others stay.
	for (uint32_t id = 0; id < 16; id++) {
		uint32_t p = mr_plane_pick(id, 4, 0xb, 0);

		EXPECT_NE(p, 2u);
		if (id % 4 != 2) {
			EXPECT_EQ(p, id % 4) << id;
		}
	}
	EXPECT_EQ(PerPlane(16, 4, 0xb), (std::vector<uint32_t>{ 6, 5, 0, 5 }));
	EXPECT_EQ(mr_plane_paths(2, 16, 4, 0xb, 0), 0u);
	EXPECT_EQ(mr_plane_paths(0, 16, 4, 0xb, 0), 6u);
	// None in service: each keeps its own; bits above count are ignored.
	EXPECT_EQ(PerPlane(16, 4, 0xf0), (std::vector<uint32_t>{ 4, 4, 4, 4 }));
	EXPECT_EQ(mr_plane_pick(5, 0, 0, 0), 0u);
	// Plane 2 tried again: path 2 alone goes back to it.
	EXPECT_EQ(PerPlane(16, 4, 0xb, 0x4), (std::vector<uint32_t>{ 5, 5, 1, 5 }));
	EXPECT_EQ(mr_plane_pick(2, 4, 0xb, 0x4), 2u);
	EXPECT_NE(mr_plane_pick(6, 4, 0xb, 0x4), 2u);
}

TEST(PlaneState, CarrierTakesItOutAndBringsItBack)
{
	struct mr_plane pl;

	mr_plane_init(&pl, true, 1);
	EXPECT_TRUE(mr_plane_usable_at(&pl, 1));
	EXPECT_EQ(mr_plane_carrier(&pl, false, 2), MR_PLANE_WENT_DOWN);
	EXPECT_EQ(mr_plane_carrier(&pl, false, 3), MR_PLANE_SAME);
	EXPECT_FALSE(mr_plane_usable_at(&pl, 1000 * kMs));
	// Nothing arrives on a plane without carrier; timeouts change nothing.
	EXPECT_EQ(mr_plane_timed_out(&pl, 4), MR_PLANE_SAME);
	EXPECT_EQ(mr_plane_carrier(&pl, true, 5), MR_PLANE_CAME_UP);
	EXPECT_EQ(mr_plane_carrier(&pl, true, 6), MR_PLANE_SAME);
	EXPECT_TRUE(mr_plane_usable_at(&pl, 6));
	mr_plane_init(&pl, false, 1);
	EXPECT_FALSE(mr_plane_usable_at(&pl, 1));
}

TEST(PlaneState, TimedOutIsRetriedWithBackoffAndComesUpOnAnAnswer)
{
	struct mr_plane pl;
	uint64_t t = 1;

	mr_plane_init(&pl, true, t);
	EXPECT_EQ(mr_plane_timed_out(&pl, t), MR_PLANE_WENT_DOWN);
	EXPECT_FALSE(mr_plane_usable_at(&pl, t + 99 * kMs));
	// A packet before the wait is over does not bring it back.
	EXPECT_EQ(mr_plane_rx(&pl, t + 50 * kMs), MR_PLANE_SAME);
	EXPECT_TRUE(mr_plane_usable_at(&pl, t + 100 * kMs));
	// Tried again and out again: no event, twice the wait.
	t += 150 * kMs;
	EXPECT_EQ(mr_plane_timed_out(&pl, t), MR_PLANE_SAME);
	EXPECT_FALSE(mr_plane_usable_at(&pl, t + 199 * kMs));
	EXPECT_TRUE(mr_plane_usable_at(&pl, t + 200 * kMs));
	EXPECT_EQ(mr_plane_rx(&pl, t + 210 * kMs), MR_PLANE_CAME_UP);
	EXPECT_TRUE(mr_plane_usable_at(&pl, t + 210 * kMs));
	// Down again soon after: the wait keeps doubling (400 ms) ...
	t += 300 * kMs;
	EXPECT_EQ(mr_plane_timed_out(&pl, t), MR_PLANE_WENT_DOWN);
	EXPECT_FALSE(mr_plane_usable_at(&pl, t + 399 * kMs));
	EXPECT_EQ(mr_plane_rx(&pl, t + 400 * kMs), MR_PLANE_CAME_UP);
	// ... and starts over once the plane stayed up for long.
	t += 400 * kMs + MR_PLANE_STABLE_NS;
	EXPECT_EQ(mr_plane_timed_out(&pl, t), MR_PLANE_WENT_DOWN);
	EXPECT_TRUE(mr_plane_usable_at(&pl, t + MR_PLANE_RETRY_MIN_NS));
	// The wait stops growing at its ceiling.
	for (int i = 0; i < 20; i++) {
		t = pl.retry_at;
		mr_plane_timed_out(&pl, t);
	}
	EXPECT_EQ(pl.retry_at - t, MR_PLANE_RETRY_MAX_NS);
}

TEST(PlaneState, APlaneIsOutWhenEveryBusyPathOnItTimedOut)
{
	struct mr_paths ps;
	uint8_t sent_on[MR_PATH_MAX];

	ASSERT_EQ(mr_paths_init(&ps, 16, 3, 1), 0);
	for (uint32_t i = 0; i < 16; i++)
		sent_on[i] = i % 4;
	// Path 1 times out, alone on plane 1 with packets in flight: a few
	// times may be congestion, MR_PLANE_TIMEOUTS in a row is the plane.
	ps.path[1].inflight = 3;
	for (uint32_t rtos = 0; rtos + 1 < MR_PLANE_TIMEOUTS; rtos++) {
		ps.path[1].rtos = rtos;
		EXPECT_FALSE(mr_plane_paths_timed_out(&ps, sent_on, 1, 4, 0xf, 0));
	}
	ps.path[1].rtos = MR_PLANE_TIMEOUTS - 1;
	EXPECT_TRUE(mr_plane_paths_timed_out(&ps, sent_on, 1, 4, 0xf, 0));
	// Path 5, on plane 1 too, has packets in flight and no timeout.
	ps.path[5].inflight = 2;
	EXPECT_FALSE(mr_plane_paths_timed_out(&ps, sent_on, 1, 4, 0xf, 0));
	ps.path[5].rtos = 1;
	EXPECT_TRUE(mr_plane_paths_timed_out(&ps, sent_on, 1, 4, 0xf, 0));
	// Another plane's busy path does not count for this one.
	ps.path[2].inflight = 1;
	EXPECT_TRUE(mr_plane_paths_timed_out(&ps, sent_on, 1, 4, 0xf, 0));
	EXPECT_FALSE(mr_plane_paths_timed_out(&ps, sent_on, 6, 4, 0xf, 0));
	// Plane 1 out of service: path 1, moved to plane 0, lost its
	// packets on plane 1, which says nothing about plane 0.
	EXPECT_FALSE(mr_plane_paths_timed_out(&ps, sent_on, 1, 4, 0xd, 0));
	// Once it sent on plane 0, its timeouts are plane 0's.
	sent_on[1] = 0;
	EXPECT_TRUE(mr_plane_paths_timed_out(&ps, sent_on, 1, 4, 0xd, 0));
	ps.path[4].inflight = 1;
	EXPECT_FALSE(mr_plane_paths_timed_out(&ps, sent_on, 1, 4, 0xd, 0));
}

TEST(PlaneTrack, APathsPacketsBelongToThePlaneTheyLeftOn)
{
	struct mr_plane_track t;

	mr_plane_track_init(&t);
	EXPECT_FALSE(mr_plane_track_blames(&t, 3, 100));
	EXPECT_FALSE(mr_plane_track_lost(&t, 3, 100, 0));
	// Path 3 sends 100..109 on plane 3.
	for (uint32_t psn = 100; psn < 110; psn++)
		mr_plane_track_sent(&t, 3, 3, psn, false, psn + 1);
	EXPECT_TRUE(mr_plane_track_blames(&t, 3, 100));
	EXPECT_FALSE(mr_plane_track_lost(&t, 3, 100, 0xf));
	EXPECT_TRUE(mr_plane_track_lost(&t, 3, 100, 0x7));
	// Plane 3 leaves service; the RTO's resend of 100 goes on plane 0:
	// 100..109 are still plane 3's, lost with it.
	mr_plane_track_sent(&t, 3, 0, 100, true, 110);
	EXPECT_FALSE(mr_plane_track_blames(&t, 3, 100));
	EXPECT_TRUE(mr_plane_track_lost(&t, 3, 100, 0x7));
	// New packets from 110 on are plane 0's.
	mr_plane_track_sent(&t, 3, 0, 110, false, 111);
	EXPECT_TRUE(mr_plane_track_blames(&t, 3, 110));
	// Once 100..109 are acknowledged, nothing is lost.
	EXPECT_FALSE(mr_plane_track_lost(&t, 3, 110, 0x7));
	EXPECT_TRUE(mr_plane_track_lost(&t, 3, 110, 0x6));
	mr_plane_track_restart(&t, 3);
	EXPECT_FALSE(mr_plane_track_lost(&t, 3, 0, 0));
}
