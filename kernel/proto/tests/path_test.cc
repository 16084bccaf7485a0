// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Host tests of proto/path.c, and a failover run of path + sack together.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

extern "C" {
#include "path.h"
#include "sack.h"
}

TEST(PathPort, RangeAndDistinct)
{
	for (uint32_t seed : { 0u, 1u, 0xdeadbeefu, 0xffffffffu }) {
		std::set<uint16_t> ports;

		for (uint32_t c = 0; c < (1u << MR_PATH_PORT_BITS); c++) {
			uint16_t p = mr_path_port(seed, 1000 + c);

			ASSERT_GE(p, MR_PATH_PORT_MIN);
			ASSERT_LE(p, MR_PATH_PORT_MAX);
			ports.insert(p);
		}
		// 2^14 consecutive counters: every port of the range, once.
		EXPECT_EQ(ports.size(), 1u << MR_PATH_PORT_BITS);
	}
	EXPECT_EQ(mr_path_port(7, 3), mr_path_port(7, 3));
	EXPECT_NE(mr_path_port(7, 3), mr_path_port(8, 3));
	EXPECT_EQ(MR_PATH_PORT_MAX, 65535u);
}

// Neighbouring counters do not get neighbouring ports.
TEST(PathPort, Scattered)
{
	int close = 0;

	for (uint32_t c = 0; c < 1000; c++) {
		int d = mr_path_port(99, c + 1) - mr_path_port(99, c);

		close += d >= -16 && d <= 16;
	}
	EXPECT_LT(close, 20);
}

TEST(Paths, InitChecks)
{
	mr_paths ps;

	EXPECT_EQ(mr_paths_init(&ps, 0, 3, 1), -MR_EFIELD);
	EXPECT_EQ(mr_paths_init(&ps, MR_PATH_MAX + 1, 3, 1), -MR_EFIELD);
	EXPECT_EQ(mr_paths_init(&ps, 4, 0, 1), -MR_EFIELD);
	ASSERT_EQ(mr_paths_init(&ps, MR_PATH_MAX, 3, 1), 0);
	ASSERT_EQ(mr_paths_init(&ps, MR_PATH_DEFAULT, 3, 1), 0);
	std::set<uint16_t> ports;

	for (uint32_t i = 0; i < ps.count; i++) {
		EXPECT_EQ(ps.path[i].state, MR_PATH_ACTIVE);
		EXPECT_EQ(ps.path[i].epoch, 0);
		EXPECT_EQ(ps.path[i].window, MR_PATH_INIT_WINDOW);
		ports.insert(ps.path[i].sport);
	}
	EXPECT_EQ(ports.size(), (size_t)MR_PATH_DEFAULT);
}

// charge_each: one packet in flight on each of the first @n paths, so that
// as many are in flight as there are paths and picks go one at a time.
static void charge_each(mr_paths *ps, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		ASSERT_EQ(mr_paths_charge(ps, i), 0);
}

// Fewer packets in flight than paths: runs of MR_PATH_RUN on one path,
// so 11 packets cross 3 of 16 paths. As many as paths: one at a time.
TEST(Paths, ShortRunsWhileFewInFlight)
{
	mr_paths ps;
	std::vector<int> picks;

	ASSERT_EQ(mr_paths_init(&ps, 16, 3, 1), 0);
	for (int i = 0; i < 11; i++)
		picks.push_back(mr_paths_pick(&ps));
	EXPECT_EQ(std::set<int>(picks.begin(), picks.end()).size(), 3u);
	for (int i = 0; i < 11; i++)
		EXPECT_EQ(picks[i], picks[i / MR_PATH_RUN * MR_PATH_RUN]) << i;
	// A run ends at a full path, and never takes the path to avoid.
	ASSERT_EQ(mr_paths_init(&ps, 4, 3, 1), 0);
	for (uint32_t i = 0; i < 4; i++)
		mr_paths_set_window(&ps, i, 2);
	EXPECT_EQ(mr_paths_pick(&ps), 0);
	EXPECT_EQ(mr_paths_pick(&ps), 0);
	EXPECT_NE(mr_paths_pick(&ps), 0);
	int run = mr_paths_pick(&ps);

	EXPECT_NE(mr_paths_pick_other(&ps, (uint32_t)run), run);
	ASSERT_EQ(mr_paths_init(&ps, 4, 3, 1), 0);
	charge_each(&ps, 4);
	uint32_t per[4] = {};

	for (int i = 0; i < 8; i++)
		per[mr_paths_pick(&ps)]++;
	for (uint32_t i = 0; i < 4; i++)
		EXPECT_EQ(per[i], 2u) << "path " << i;
}

TEST(Paths, RoundRobinSkipsFullAndFailed)
{
	mr_paths ps;

	ASSERT_EQ(mr_paths_init(&ps, 4, 2, 1), 0);
	charge_each(&ps, 4);
	for (int round = 0; round < 2; round++) { // each path once a round
		uint32_t seen = 0;

		for (int i = 0; i < 4; i++)
			seen |= 1u << mr_paths_pick(&ps);
		EXPECT_EQ(seen, 0xfu);
	}
	mr_paths_set_window(&ps, 1, 3); // path 1 has 3 in flight: full
	uint32_t seen = 0;

	for (int i = 0; i < 3; i++)
		seen |= 1u << mr_paths_pick(&ps);
	EXPECT_EQ(seen, 0xdu); // 0, 2 and 3
	EXPECT_FALSE(mr_paths_timeout(&ps, 2, 4)); // its 4 packets lost
	EXPECT_TRUE(mr_paths_timeout(&ps, 2, 0)); // second in a row: failed
	EXPECT_EQ(ps.path[2].state, MR_PATH_FAILED);
	EXPECT_EQ(ps.path[2].inflight, 0u);
	EXPECT_FALSE(mr_paths_timeout(&ps, 2, 0)); // fails only once
	seen = 0;
	for (int i = 0; i < 2; i++)
		seen |= 1u << mr_paths_pick(&ps);
	EXPECT_EQ(seen, 0x9u); // 0 and 3
	EXPECT_EQ(mr_paths_charge(&ps, 2), -MR_ENOPATH);
	EXPECT_EQ(mr_paths_charge(&ps, 1), -MR_EAGAIN);
	EXPECT_EQ(mr_paths_charge(&ps, 4), -MR_EFIELD);
	mr_paths_ack(&ps, 1, 1, 0);
	EXPECT_EQ(mr_paths_charge(&ps, 1), 0);
}

TEST(Paths, FullAndNoPath)
{
	mr_paths ps;

	ASSERT_EQ(mr_paths_init(&ps, 3, 1, 1), 0);
	for (uint32_t i = 0; i < 3; i++)
		mr_paths_set_window(&ps, i, 1);
	for (int i = 0; i < 3; i++)
		EXPECT_GE(mr_paths_pick(&ps), 0);
	EXPECT_EQ(mr_paths_pick(&ps), -MR_EAGAIN);
	mr_paths_ack(&ps, 1, 1, 0);
	EXPECT_EQ(mr_paths_pick(&ps), 1);
	for (uint32_t i = 0; i < 3; i++)
		EXPECT_TRUE(mr_paths_timeout(&ps, i, 1));
	EXPECT_EQ(mr_paths_pick(&ps), -MR_ENOPATH);
	ASSERT_EQ(mr_paths_restart(&ps, 2), 0);
	EXPECT_EQ(mr_paths_pick(&ps), 2);
	EXPECT_EQ(mr_paths_restart(&ps, 3), -MR_EFIELD);
}

// The connection's total stays the sum of the paths' counts, whatever
// charges, acks, timeouts and restarts do to them.
TEST(Paths, InflightTotalIsTheSum)
{
	mr_paths ps;
	uint32_t rnd = 12345;
	auto next = [&rnd](uint32_t n) {
		rnd = rnd * 1103515245u + 12345u;
		return (rnd >> 16) % n;
	};

	ASSERT_EQ(mr_paths_init(&ps, 8, 3, 1), 0);
	for (int step = 0; step < 20000; step++) {
		uint32_t id = next(9); // 8: no such path

		switch (next(8)) {
		case 0:
		case 1:
			mr_paths_pick(&ps);
			break;
		case 2:
			mr_paths_charge(&ps, id);
			break;
		case 3:
			mr_paths_recharge(&ps, id);
			break;
		case 4:
			mr_paths_unpick(&ps, id);
			break;
		case 5:
			mr_paths_ack(&ps, id, next(4), next(3));
			break;
		case 6:
			if (mr_paths_timeout(&ps, id, next(3)))
				mr_paths_restart(&ps, id);
			break;
		default:
			if (!next(50))
				mr_paths_restart(&ps, id);
			break;
		}
		uint32_t sum = 0;

		for (uint32_t i = 0; i < ps.count; i++)
			sum += ps.path[i].inflight;
		ASSERT_EQ(ps.inflight, sum) << "step " << step;
	}
	for (uint32_t i = 0; i < ps.count; i++)
		mr_paths_ack(&ps, i, ps.path[i].inflight, 0);
	EXPECT_EQ(ps.inflight, 0u);
}

TEST(Paths, WindowClamps)
{
	mr_paths ps;

	ASSERT_EQ(mr_paths_init(&ps, 2, 1, 1), 0);
	mr_paths_set_window(&ps, 0, 0);
	EXPECT_EQ(ps.path[0].window, 1u);
	mr_paths_set_window(&ps, 0, 100000);
	EXPECT_EQ(ps.path[0].window, (uint32_t)MR_PATH_MAX_WINDOW);
	mr_paths_set_window(&ps, 2, 5); // no such path: ignored
	mr_paths_ack(&ps, 7, 1, 1);
	EXPECT_FALSE(mr_paths_timeout(&ps, 7, 1));
}

// An ACK is proof of life: consecutive timeouts start over.
TEST(Paths, AckResetsTimeoutCount)
{
	mr_paths ps;

	ASSERT_EQ(mr_paths_init(&ps, 2, 3, 1), 0);
	EXPECT_FALSE(mr_paths_timeout(&ps, 0, 0));
	EXPECT_FALSE(mr_paths_timeout(&ps, 0, 0));
	mr_paths_ack(&ps, 0, 0, 2); // losses only: no proof of life
	EXPECT_EQ(ps.path[0].rtos, 2u);
	mr_paths_ack(&ps, 0, 1, 0);
	EXPECT_EQ(ps.path[0].rtos, 0u);
	EXPECT_FALSE(mr_paths_timeout(&ps, 0, 0));
	EXPECT_FALSE(mr_paths_timeout(&ps, 0, 0));
	EXPECT_TRUE(mr_paths_timeout(&ps, 0, 0));
}

TEST(Paths, RestartGivesNewPortAndEpoch)
{
	mr_paths ps;

	ASSERT_EQ(mr_paths_init(&ps, 16, 1, 0x1234), 0);
	std::set<uint16_t> used;

	for (uint32_t i = 0; i < 16; i++)
		used.insert(ps.path[i].sport);
	for (int round = 1; round <= 100; round++) {
		uint32_t id = round % 16;
		uint16_t old = ps.path[id].sport;

		EXPECT_TRUE(mr_paths_timeout(&ps, id, 0));
		ASSERT_EQ(mr_paths_restart(&ps, id), 0);
		EXPECT_NE(ps.path[id].sport, old);
		EXPECT_EQ(ps.path[id].state, MR_PATH_ACTIVE);
		EXPECT_EQ(ps.path[id].rtos, 0u);
		EXPECT_TRUE(used.insert(ps.path[id].sport).second);
		std::set<uint16_t> now;

		for (uint32_t i = 0; i < 16; i++)
			now.insert(ps.path[i].sport);
		EXPECT_EQ(now.size(), 16u);
	}
	EXPECT_EQ(ps.path[1].epoch, 7); // restarted in rounds 1, 17, ..., 97

	// The same calls give the same ports: deterministic.
	mr_paths a, b;

	ASSERT_EQ(mr_paths_init(&a, 8, 1, 99), 0);
	ASSERT_EQ(mr_paths_init(&b, 8, 1, 99), 0);
	mr_paths_timeout(&a, 3, 0);
	mr_paths_timeout(&b, 3, 0);
	mr_paths_restart(&a, 3);
	mr_paths_restart(&b, 3);
	for (uint32_t i = 0; i < 8; i++)
		EXPECT_EQ(a.path[i].sport, b.path[i].sport);
}

TEST(Paths, SetCount)
{
	mr_paths ps;

	ASSERT_EQ(mr_paths_init(&ps, 4, 1, 1), 0);
	charge_each(&ps, 4);
	EXPECT_EQ(mr_paths_pick(&ps), 0);
	EXPECT_EQ(mr_paths_pick(&ps), 1);
	EXPECT_EQ(mr_paths_pick(&ps), 2);
	EXPECT_EQ(mr_paths_set_count(&ps, 2), -MR_EBUSY); // 2 and 3 have some
	EXPECT_EQ(ps.count, 4u);
	mr_paths_ack(&ps, 2, 2, 0);
	mr_paths_ack(&ps, 3, 1, 0);
	EXPECT_EQ(mr_paths_set_count(&ps, 2), 0);
	EXPECT_EQ(mr_paths_pick(&ps), 1); // the cursor was 3: 3 % 2
	EXPECT_EQ(mr_paths_set_count(&ps, 0), -MR_EFIELD);
	EXPECT_EQ(mr_paths_set_count(&ps, MR_PATH_MAX + 1), -MR_EFIELD);
	EXPECT_EQ(mr_paths_set_count(&ps, MR_PATH_MAX), 0);
	// Paths 2 and 3 come back in a new epoch; new ones start at 0.
	EXPECT_EQ(ps.path[2].epoch, 1);
	EXPECT_EQ(ps.path[3].epoch, 1);
	EXPECT_EQ(ps.path[4].epoch, 0);
	std::set<uint16_t> ports;

	for (uint32_t i = 0; i < ps.count; i++)
		ports.insert(ps.path[i].sport);
	EXPECT_EQ(ports.size(), (size_t)MR_PATH_MAX);
}

// Spraying over 4 paths, one of which turns into a black hole: its
// packets move to the others, it restarts on a new port in a new epoch,
// and every message arrives.
TEST(PathFailover, BlackHoledPathRecovers)
{
	const uint32_t kPaths = 4, kMsgs = 5000, kDead = 2;
	const uint32_t start = 0xfffffff0;
	struct Sent {
		uint32_t path, psn;
		uint16_t epoch, sport;
	};
	mr_paths ps;
	mr_sack_tx tx[kPaths];
	uint16_t mark[kPaths][MR_SACK_WINDOW];
	mr_sack_rx rx[kPaths];
	std::map<uint32_t, uint32_t> carried[kPaths]; // psn -> message
	std::vector<uint32_t> queue; // messages waiting for a path
	std::vector<Sent> resends;
	std::set<uint32_t> got;
	std::set<uint16_t> black; // source ports the fabric drops
	uint32_t next_msg = 0, stale = 0, failures = 0, timeouts = 0;
	uint16_t dead_port;

	ASSERT_EQ(mr_paths_init(&ps, kPaths, 3, 77), 0);
	dead_port = ps.path[kDead].sport;
	for (uint32_t i = 0; i < kPaths; i++) {
		mr_sack_tx_init(&tx[i], start, mark[i]);
		mr_sack_rx_init(&rx[i], start);
	}
	for (int round = 0; got.size() < kMsgs; round++) {
		ASSERT_LT(round, 10000);
		if (round == 20)
			black.insert(dead_port);
		std::vector<Sent> wire;

		wire.swap(resends);
		// New messages and moved ones, sprayed.
		while (!queue.empty() || next_msg < kMsgs) {
			int id = mr_paths_pick(&ps);
			uint32_t psn, msg;

			if (id < 0)
				break;
			ASSERT_EQ(mr_sack_tx_send(&tx[id], &psn), 0);
			if (!queue.empty()) {
				msg = queue.back();
				queue.pop_back();
			} else {
				msg = next_msg++;
			}
			carried[id][psn] = msg;
			wire.push_back({ (uint32_t)id, psn, ps.path[id].epoch,
					 ps.path[id].sport });
		}
		// The fabric, then the receiver's ACKs, path by path.
		std::vector<bool> heard(kPaths, false);

		for (const Sent &s : wire) {
			if (black.count(s.sport))
				continue;
			auto r = mr_sack_rx_record(&rx[s.path], s.epoch, s.psn);

			if (r == MR_SACK_STALE) {
				stale++;
				continue;
			}
			if (r == MR_SACK_NEW)
				got.insert(carried[s.path][s.psn]);
			mr_ack_hdr a{};
			mr_sack_res res;

			mr_sack_rx_fill_ack(&rx[s.path], &a);
			ASSERT_EQ(mr_sack_tx_ack(&tx[s.path], rx[s.path].epoch,
						 a.cum_psn, a.sack, &res),
				  0);
			heard[s.path] = true;
			ASSERT_EQ(res.n_lost, 0u); // nothing else drops
			mr_paths_ack(&ps, s.path, res.n_acked, res.n_lost);
		}
		// Timers: a path with packets out that heard nothing.
		for (uint32_t id = 0; id < kPaths; id++) {
			mr_sack_res res;

			if (heard[id] || tx[id].una == tx[id].nxt)
				continue;
			timeouts++;
			mr_sack_tx_timeout(&tx[id], &res);
			if (!mr_paths_timeout(&ps, id, res.n_lost)) {
				// Resend each loss on its path, same PSN.
				for (uint32_t i = 0; i < MR_SACK_WINDOW; i++) {
					uint32_t psn = res.base + i;

					if (!mr_sack_res_test(res.lost, i))
						continue;
					ASSERT_EQ(mr_paths_charge(&ps, id), 0);
					ASSERT_EQ(mr_sack_tx_resend(&tx[id], psn),
						  0);
					resends.push_back(
						{ id, psn, ps.path[id].epoch,
						  ps.path[id].sport });
				}
				continue;
			}
			// Failed: move what the receiver lacks, restart.
			failures++;
			for (uint32_t psn = tx[id].una;
			     mr_sack_tx_next_unacked(&tx[id], &psn); psn++)
				queue.push_back(carried[id][psn]);
			carried[id].clear();
			ASSERT_EQ(mr_paths_restart(&ps, id), 0);
			mr_sack_tx_reset(&tx[id], ps.path[id].epoch);
		}
	}
	EXPECT_EQ(got.size(), kMsgs);
	EXPECT_EQ(failures, 1u);
	EXPECT_EQ(timeouts, 3u);
	EXPECT_EQ(ps.path[kDead].epoch, 1);
	EXPECT_NE(ps.path[kDead].sport, dead_port);
	EXPECT_EQ(rx[kDead].epoch, 1);
	EXPECT_EQ(stale, 0u);
	for (uint32_t id = 0; id < kPaths; id++)
		EXPECT_EQ(ps.path[id].state, MR_PATH_ACTIVE);
}

// When the connection's window binds before the paths' (every path has
// room), packets still go to paths in proportion to their windows: the
// emptiest relative to its window first. Round robin would split 1:1:1:1.
TEST(PathsWeighted, ProportionalToWindows)
{
	const uint32_t kWin[4] = { 32, 8, 32, 8 }, kConn = 20;
	std::vector<uint32_t> fifo, picks(4);
	mr_paths ps;

	ASSERT_EQ(mr_paths_init(&ps, 4, 3, 1), 0);
	for (uint32_t i = 0; i < 4; i++)
		mr_paths_set_window(&ps, i, kWin[i]);
	for (int step = 0; step < 40000; step++) {
		if (ps.inflight < kConn) {
			int id = mr_paths_pick(&ps);

			ASSERT_GE(id, 0);
			picks[id]++;
			fifo.push_back((uint32_t)id);
		} else { // the oldest packet is acknowledged
			mr_paths_ack(&ps, fifo.front(), 1, 0);
			fifo.erase(fifo.begin());
		}
		for (uint32_t i = 0; i < 4; i++)
			ASSERT_LE(ps.path[i].inflight, kWin[i]);
	}
	uint32_t total = picks[0] + picks[1] + picks[2] + picks[3];

	EXPECT_EQ(total, 20000u + kConn / 2); // picks and acks alternate
	// 32 : 8 : 32 : 8 is 40 % : 10 % : 40 % : 10 %, within 1 %.
	EXPECT_NEAR(picks[0] * 100.0 / total, 40.0, 1.0);
	EXPECT_NEAR(picks[1] * 100.0 / total, 10.0, 1.0);
	EXPECT_NEAR(picks[2] * 100.0 / total, 40.0, 1.0);
	EXPECT_NEAR(picks[3] * 100.0 / total, 10.0, 1.0);
}

// A congested path's share follows its window as it shrinks.
TEST(PathsWeighted, ShrunkPathGetsLess)
{
	mr_paths ps;
	uint32_t on1 = 0;

	ASSERT_EQ(mr_paths_init(&ps, 2, 3, 1), 0);
	mr_paths_set_window(&ps, 0, 64);
	mr_paths_set_window(&ps, 1, 4);
	// 17 in flight on 64 + 4: 16 on path 0, 1 on path 1 (4/68 of 17).
	for (int i = 0; i < 17; i++)
		on1 += mr_paths_pick(&ps) == 1;
	EXPECT_EQ(ps.path[0].inflight, 16u);
	EXPECT_EQ(on1, 1u);
	// Each packet acknowledged as the next goes: 16 to 1, whatever the
	// fill, over many picks.
	on1 = 0;
	for (int i = 0; i < 680; i++) {
		int id = mr_paths_pick(&ps);

		ASSERT_GE(id, 0);
		on1 += id == 1;
		mr_paths_ack(&ps, (uint32_t)id, 1, 0);
	}
	EXPECT_EQ(on1, 40u);
}

// Equal windows and fill: each path once in every round of picks. A path
// with fewer packets in flight gets more than the others, but a path with
// many (a hole: packets that will turn out lost) keeps getting packets
// while it has room: its next packets are what show the hole.
TEST(PathsWeighted, EqualRoomsShareEvenly)
{
	uint32_t picks[4] = {};
	mr_paths ps;

	ASSERT_EQ(mr_paths_init(&ps, 4, 3, 1), 0);
	charge_each(&ps, 4);
	for (int round = 0; round < 2; round++) {
		uint32_t seen = 0;

		for (int i = 0; i < 4; i++)
			seen |= 1u << mr_paths_pick(&ps);
		EXPECT_EQ(seen, 0xfu);
	}
	mr_paths_ack(&ps, 2, 3, 0); // path 2 is empty now, the others not
	for (int i = 0; i < 24; i++)
		picks[mr_paths_pick(&ps)]++;
	EXPECT_GT(picks[2], picks[0]);
	for (int i = 0; i < 4; i++)
		EXPECT_GE(picks[i], 5u) << "path " << i;
}

// Room, not the window alone: with the connection's window binding and
// every path's window far from full, the paths whose packets are
// acknowledged sooner (their links are not queued) get more of them.
TEST(PathsWeighted, FasterAckedPathsGetMore)
{
	std::vector<std::pair<uint64_t, uint32_t>> out; // due, path
	uint32_t picks[2] = {};
	mr_paths ps;

	ASSERT_EQ(mr_paths_init(&ps, 2, 3, 1), 0);
	// Path 0's packets take 3 ticks to be acknowledged, path 1's 1.
	for (uint64_t t = 0; t < 4000; t++) {
		while (ps.inflight < 8) {
			int id = mr_paths_pick(&ps);

			ASSERT_GE(id, 0);
			picks[id]++;
			out.emplace_back(t + (id ? 1 : 3), (uint32_t)id);
		}
		for (size_t i = 0; i < out.size();) {
			if (out[i].first <= t) {
				mr_paths_ack(&ps, out[i].second, 1, 0);
				out.erase(out.begin() + (long)i);
			} else {
				i++;
			}
		}
	}
	// By the windows alone: 1 : 1. By room: path 1 carries more.
	EXPECT_GT(picks[1], picks[0] * 11 / 10);
}

TEST(PathsWeighted, PickOtherAvoidsUnlessAlone)
{
	mr_paths ps;

	ASSERT_EQ(mr_paths_init(&ps, 3, 3, 1), 0);
	charge_each(&ps, 3);
	EXPECT_EQ(mr_paths_pick_other(&ps, 0), 1);
	EXPECT_EQ(mr_paths_pick_other(&ps, 2), 0);
	EXPECT_EQ(mr_paths_pick_other(&ps, 0), 2);
	for (uint32_t i = 0; i < 3; i++)
		mr_paths_set_window(&ps, i, 1);
	ps.path[1].inflight = 0; // only path 1 has room now
	ps.inflight = 2;
	EXPECT_EQ(mr_paths_pick_other(&ps, 1), 1); // alone: taken anyway
	EXPECT_EQ(mr_paths_pick_other(&ps, 1), -MR_EAGAIN);
	EXPECT_EQ(mr_paths_pick_other(&ps, 64), -MR_EAGAIN);
}
