// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The scale model's experiments. Each run is one ns-3 simulation in a
// process of its own (fork), so runs share no ns-3 state and may run side
// by side; a run returns a plain struct of figures.
#pragma once

#include "config.h"
#include "receiver_host.h"
#include "sender_host.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mrscale {

// A settling time: RTTs from an event until every sender's rate stays
// within the tolerance of its fair share; negative: it never did.
struct Settle {
    double hint_rtts = -1;      // of the receiver's hint each sender holds
    double rate_rtts = -1;      // of the rate congestion control sets
    double delivered_rtts = -1; // of the rate the receiver sees, over a window
};

struct IncastResult {
    uint32_t senders;
    bool cc;
    Aqm aqm;
    double base_rtt_ns;
    double window_rtts; // the delivered-rate window
    Settle settle;
    double jain;       // delivered bytes over the steady half
    double goodput;    // payload / port rate, steady half
    double peak_queue; // bytes
    double mean_queue; // bytes, steady half
    uint64_t qdisc_packets;
    uint64_t drops;
    uint64_t marks;
    uint64_t random_losses; // --loss, on the port's link
    uint64_t retransmits;
    uint64_t rtos;
    uint64_t deferred; // timers that fired early and waited (mr_rto_early())
    uint64_t failovers;
    double done_ratio; // last completion / ideal
    uint32_t failed;   // senders that gave up
    double wall_s;
};

struct EcmpResult {
    uint32_t links;
    bool cc;
    bool fail;
    double base_rtt_ns;
    uint32_t paths_on_link[16];
    uint64_t packets_on_link[16];
    double spread;         // max / mean packets per link
    double peak_queue[16]; // bytes, at each link's sending port
    double goodput;        // payload / sum of link rates, whole transfer
    double done_us;
    uint64_t drops;
    uint64_t marks;
    uint64_t retransmits;
    // With a failure:
    uint32_t failed_link;
    uint32_t paths_on_failed; // of the connection's paths, when it failed
    double fail_us;
    double dip;          // lowest goodput after it / before it
    double recover_rtts; // until goodput stays >= 90 % of (L-1)/L of before
    uint64_t blackholed;
    uint64_t moved;
    uint64_t failovers;
    uint64_t rtos;
    double wall_s;
};

struct JoinLeaveResult {
    uint32_t base;
    uint32_t extra;
    bool cc;
    double base_rtt_ns;
    double window_rtts;
    Settle before;      // the base senders, from their start
    Settle join;        // from the join
    Settle leave;       // from the last leaver's completion
    double jain_joined; // over the second half of the joined phase
    double jain_left;
    uint64_t drops;
    double wall_s;
};

struct PlanesResult {
    uint32_t planes;
    Pattern pattern;
    uint32_t conns;
    uint32_t hosts;
    int32_t fail_plane; // -1: none
    double base_rtt_ns;
    double capacity_bps; // the sum of the planes at the bottleneck(s)
    double ideal_ns;
    double fail_ns;
    double restore_ns; // 0: never
    double goodput;    // payload / sum of the planes, whole transfer
    double before;     // payload / sum of the planes, before the failure
    double after;      // ... from recovery until 95 % of the data is in
    double dip;        // lowest goodput (over 4 RTTs) after it / before it
    double out_rtts;   // until a host takes the plane out of service
    double recover_rtts;
    uint32_t hosts_out;  // hosts that took it out
    uint64_t false_outs; // a host took a plane out that had not failed (yet)
    uint64_t plane_ups;  // planes back in service (mr_plane_rx())
    uint64_t abandoned;  // paths mr_sender_abandon()ed
    uint64_t rtos;
    uint64_t failovers;
    uint64_t blackholed;
    uint64_t drops;
    uint64_t marks;
    double done_ratio; // last completion / ideal
    uint32_t failed;   // connections that gave up
    double wall_s;
};

// The same flows of messages as one QP of `streams` streams (conns 1),
// as one QP each (conns = flows), or as one QP of one stream.
struct StreamsResult {
    uint32_t flows;
    uint32_t conns;
    uint32_t streams; // per connection
    double load;      // offered, of the port; 0: all posted at once
    bool cc;
    double loss;
    double base_rtt_ns;
    double throughput; // message payload / port rate, first post to last completion
    double jain;       // of the flows' goodput, each from its first post to its last completion
    double mean_us;    // post to completion at the responder
    double p50_us;
    double p99_us;
    double max_us;
    uint32_t msgs;
    uint32_t done;  // messages the responder delivered
    uint64_t ahead; // ... before an older message of the connection
    uint64_t random_losses;
    uint64_t drops; // at the port
    uint64_t retransmits;
    uint64_t rtos;
    uint64_t sender_state; // bytes, all connections
    uint64_t receiver_state;
    double wall_s;
};

// The transport's parameters: cfg's, and cc.c's defaults where cfg sets none.
TransportParams MakeParams(const Config &cfg, bool cc);

IncastResult RunIncast(const Config &cfg, uint32_t senders, bool cc, Aqm aqm);
EcmpResult RunEcmp(const Config &cfg, uint32_t links, bool cc, bool fail);
JoinLeaveResult RunJoinLeave(const Config &cfg, uint32_t base, uint32_t extra, bool cc);
PlanesResult RunPlanes(const Config &cfg, uint32_t planes, uint32_t conns, Pattern pattern);
StreamsResult RunStreams(const Config &cfg, uint32_t conns, uint32_t streams, double load);

// The tables, each run in cfg.jobs processes at a time.
void IncastTable(const Config &cfg);
void EcmpTable(const Config &cfg);
void JoinLeaveTable(const Config &cfg);
void PlanesTable(const Config &cfg);
void StreamsTable(const Config &cfg);
// The short run for `make check`: returns the number of failed checks.
int Check(const Config &cfg);

} // namespace mrscale
