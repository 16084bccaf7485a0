// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The scale model's parameters: one struct with the defaults, filled from the
// command line. Rates are bit/s, times nanoseconds, sizes bytes.
#pragma once

#include "proto.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mrscale {

// How much faster the model's clocks run than the kernel's defaults by
// default: RTO, tail probe, ACK delay and the delay target are the
// kernel's divided by --time-scale. The kernel's suit the guest's RTT of
// about 1.5 ms, the model's 100 Gbit/s fabric has one of 5 us.
constexpr uint32_t kTimeScale = 100;

enum class Aqm { kRed, kTailDrop };

// Planes: who writes to whom. kOne: connections from one host to another;
// kIncast: one connection from each of N hosts to one; kAll2All: one
// connection from each of H hosts to each other.
enum class Pattern { kOne, kIncast, kAll2All };

// Config::ingress_bps of a receiver that knows no capacity: it shares the
// most it has received (share.c without a rate: the table measures).
constexpr uint64_t kNoIngress = ~0ull;

struct Config {
    // Links and switch ports.
    uint64_t rate_bps = 100'000'000'000; // host links and the incast port
    uint64_t host_rate_bps = 0;          // the senders' links, if not rate_bps
    uint64_t ingress_bps = 0;            // what the receiver's shares divide, if not rate_bps
    uint64_t delay_ns = 1000;            // per link, one way
    uint64_t buffer_bytes = 512 * 1024;  // per switch port
    uint64_t red_min_bytes = 64 * 1024;  // RED ramp, on the instantaneous queue
    uint64_t red_max_bytes = 256 * 1024;
    double red_pmax = 0.2; // marking probability at red_max
    // ECMP fabric: `links` spine links whose rates add up to fabric_bps.
    std::vector<uint32_t> links = {4, 8};
    uint64_t fabric_bps = 100'000'000'000;
    // Transport.
    uint32_t mtu = 4096;            // RDMA payload per packet
    uint32_t paths = 16;            // UDP source ports per connection
    uint32_t msg_bytes = 64 * 1024; // one WRITE message
    // The kernel's timing constants over time_scale, unless set.
    uint32_t time_scale = kTimeScale;
    std::optional<uint64_t> rto_init_ns, rto_min_ns, rto_max_ns, pto_min_ns, ack_delay_ns;
    // The host's timers, as a guest's are: the engine's RTO and probe
    // timer fires on a tick of this length, as a jiffies timer does
    // (timers.c: mod_timer()); every timer, the pacer's and the acker's
    // hrtimers too, up to timer_late_ns late. 0: exact.
    uint64_t timer_tick_ns = 0;
    uint64_t timer_late_ns = 0;
    // The CPU time a packet costs its host to send, and to receive, on
    // host_cpus CPUs that every endpoint shares (a guest). 0: free.
    uint64_t host_cpu_ns = 0;
    uint32_t host_cpus = 2;
    uint64_t share_interval_ns = 0; // shortest share round; 0: auto (see README)
    // Congestion control: mr_cc_params_default() unless set here.
    std::optional<uint32_t> cc_init_path_window, cc_init_conn_window;
    std::optional<uint32_t> cc_max_path_window, cc_max_conn_window;
    std::optional<uint64_t> cc_target_floor_ns, cc_target_scale_ns;
    std::optional<bool> cc_ecn, cc_delay, cc_loss, share_learn, hello;
    // Experiments.
    std::vector<uint32_t> senders = {2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
    uint64_t incast_total_bytes = 64ull << 20; // split over the senders...
    uint64_t incast_min_bytes = 256 * 1024;    // ...with at least this each
    // Join/leave: base senders + senders that join, then leave.
    std::vector<std::pair<uint32_t, uint32_t>> join_cases = {
        {1, 1}, {8, 1}, {8, 8}, {64, 1}, {64, 64}};
    uint64_t ecmp_bytes = 96ull << 20;
    // Planes: hosts with one NIC per plane, each plane a switch of its own.
    std::vector<uint32_t> planes = {4, 8};
    std::vector<uint32_t> plane_conns = {1, 64};
    std::vector<Pattern> patterns = {Pattern::kOne, Pattern::kIncast, Pattern::kAll2All};
    uint64_t plane_bytes = 16ull << 20; // per plane, split over the connections...
    int32_t fail_plane = 1;             // blackholed, both ways (-1: none)
    double fail_at = 0.4;               // of the ideal transfer time
    double restore_at = 0;              // ... and restored then (0: never)
    // Streams: `flows` flows of `flow_msgs` messages each, posted evenly
    // at `stream_loads` of the port, as one QP of that many streams, as
    // one QP each, and as one QP of one stream; random loss on the port.
    uint32_t flows = 64;
    uint32_t flow_msgs = 32;
    std::vector<double> stream_loads = {0.5, 0.9};
    double stream_loss = 0.01;
    std::vector<bool> cc = {true, false};
    std::vector<Aqm> aqm = {Aqm::kRed, Aqm::kTailDrop};
    double loss = 0;         // incast: random loss on the port's link
    double tolerance = 0.10; // "within 10 % of the fair share"
    uint32_t seed = 1;
    uint32_t jobs = 1; // simulations run at once
    bool verbose = false;
};

// xorshift64*: the model's random streams, each seeded on its own so that
// one setting changes nothing else. Returns the next 64 bits.
inline uint64_t XorShift64Star(uint64_t &state) {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545f4914f6cdd1dull;
}

// The per-link wire overhead ns-3 serialises besides our UDP payload:
// IPv4 (20), UDP (8) and the point-to-point PPP header (2).
constexpr uint32_t kLinkOverhead = 20 + 8 + 2;

// Parse "--name value" options into cfg; returns an error message or "".
std::string ParseOptions(const std::vector<std::string> &args, Config &cfg);
std::string OptionsHelp();

std::string FormatRate(double bps);
std::string FormatBytes(double bytes);

} // namespace mrscale
