// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// What the model's two MetaRoCE endpoints (sender_host.h, receiver_host.h)
// share. They are MetaRoCE endpoints over ns-3 UDP sockets, driven by the
// kernel's own
// engines (proto.h): a sender that writes messages to one receiver, and a
// receiver that takes many senders. The sender is the kernel's requester
// engine (proto/requester.c: what goes next) over its sender engine
// (proto/sender.c: path choice, PSNs, resends, tail probe, RTO, failover,
// windows, pacing), with ns-3 sockets and events as their host. The
// receiver is the kernel's responder engine (proto/responder.c: messages,
// slices, duplicates, MSN done) and receiver engine (proto/receiver.c:
// windows, CE counts, ACK coalescing) over a memory that only counts (no
// memory regions, completion queues or READs).
#pragma once

#include "config.h"
#include "proto.h"

#include <ns3/core-module.h>
#include <ns3/internet-module.h>
#include <ns3/network-module.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

namespace mrscale {

constexpr uint16_t kRoceV2Port = 4791;
constexpr uint32_t kFailAfter = MR_PATH_DEFAULT_FAIL_AFTER;
constexpr uint32_t kRetryCnt = 7;           // the QP's retry_cnt, an application's setting
constexpr uint32_t kMaxShareFlows = 0x4000; // a device's table: the kernel's MR_MAX_QP
constexpr uint8_t kEct0 = 0x02;             // IP ECN field
constexpr uint8_t kCe = 0x03;

// Bytes of a full data packet as congestion control counts them (pacing,
// hints, shares): its UDP payload, MetaRoCE headers and data.
constexpr uint32_t FullPacketBytes(uint32_t mtu) {
    return MR_BASE_HDR_LEN + MR_WRITE_HDR_LEN + mtu;
}

// The connection tags of connection @qpn (wire.h: base.tag): the one the
// sender's data carries, which the receiver checks, and the one its ACKs
// carry back. Each end draws its own from the QPN, so the two ends agree
// even without the HELLO handshake (--hello off): never 0, one per
// direction, different for every connection. With it, the handshake
// (proto/hello.c) teaches them as the kernel's does, and carries the
// receiver's first hint.
struct ConnTags {
    uint64_t to_receiver;
    uint64_t to_sender;
};
ConnTags ConnTagsOf(uint32_t qpn);

// A link's rate in those bytes: what the layers below take per packet
// comes off (protocol.rst: "The rate hint").
inline uint64_t PayloadRate(uint64_t link_bps, uint32_t mtu) {
    const uint64_t full = FullPacketBytes(mtu);
    return link_bps / (full + kLinkOverhead) * full;
}

uint64_t NowNs();

// The CPUs of a machine on which every endpoint runs, as the guest's
// network namespaces share its vCPUs: each packet an endpoint sends or
// receives takes `per_packet` ns of the first free of `cores` CPUs, in
// the order the work comes; what waits for a CPU waits. 0 ns: free.
class HostCpu {
public:
    HostCpu(uint32_t cores, uint64_t per_packet)
        : free_(std::max<uint32_t>(1, cores), 0), per_packet_(per_packet) {}
    // Do `work` (a packet's sending or receiving) once a CPU has done it.
    template <typename Work> void Run(Work work) {
        const uint64_t now = NowNs();
        if (!per_packet_) {
            work();
            return;
        }
        auto cpu = std::min_element(free_.begin(), free_.end());
        *cpu = std::max(*cpu, now) + per_packet_;
        ns3::Simulator::Schedule(ns3::NanoSeconds(*cpu - now), work);
    }

private:
    std::vector<uint64_t> free_; // when each CPU is free
    uint64_t per_packet_;
};

// What both ends of a connection agree on, and the sender's timers.
struct TransportParams {
    uint32_t mtu = 4096;
    uint32_t paths = 16;
    uint32_t msg_bytes = 64 * 1024;
    mr_cc_params cc{};
    mr_sender_timing timing{};     // the kernel's, over --time-scale (MakeParams())
    uint64_t ack_delay_ns = 2'000; // ack.c's ack_delay_us (200 us) / 100
    uint64_t timer_tick_ns = 0;    // Config: the host's timers
    uint64_t timer_late_ns = 0;
    std::shared_ptr<HostCpu> cpu; // Config: shared by a run's endpoints
    bool hello = true;            // the HELLO handshake before the first data
};

// When a timer armed at `now` for `due` fires on a host whose timers
// tick every `tick` ns (a jiffies timer: mod_timer(jiffies + 1 +
// nsecs_to_jiffies(due - now)), timers.c) and fire up to `late` ns late.
class HostTimers {
public:
    HostTimers(const TransportParams &p, uint32_t seed)
        : tick_(p.timer_tick_ns), late_(p.timer_late_ns), rng_(seed | 1) {}
    uint64_t Tick(uint64_t now, uint64_t due) {
        uint64_t at = due;
        if (tick_)
            at = (now / tick_ + 1 + (due > now ? due - now : 0) / tick_) * tick_;
        return at + Late();
    }
    uint64_t HighRes(uint64_t due) { return due + Late(); }

private:
    uint64_t Late() {
        if (!late_)
            return 0;
        return (XorShift64Star(rng_) >> 11) % (late_ + 1);
    }
    uint64_t tick_, late_, rng_;
};

// Nanoseconds from now until the absolute time `at` (0 if past).
uint64_t Until(uint64_t at);

// A packet of mr_wire_encode()'s header in front of ns-3's zero-filled
// virtual payload (no copies), and back: the kernel's codec both ways.
ns3::Ptr<ns3::Packet> BuildPacket(const mr_pkt &pkt);
bool DecodePacket(ns3::Ptr<const ns3::Packet> p, mr_pkt *pkt);

} // namespace mrscale
