// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Planes: a host with one NIC per plane, each plane an independent network,
// and the host's one address reachable over every plane. HostPlanes is a
// host's device-wide plane state as kernel/plane.c keeps it (the planes in
// service, those tried again, the generation that moves on when one leaves
// service), driven by the kernel's own proto/plane.c. The tags carry a
// packet's plane between the endpoints and the host's routing: the plane it
// leaves on (what the kernel's flow.oif is), and the plane it arrived on
// (the kernel's ingress netdev).
#pragma once

#include "proto.h"

#include <ns3/network-module.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace mrscale {

// A packet leaves on this plane (set by an endpoint, read by FabricRouting).
class PlaneTag : public ns3::Tag {
public:
    PlaneTag() = default;
    explicit PlaneTag(uint8_t plane) : plane_(plane) {}
    static ns3::TypeId GetTypeId();
    ns3::TypeId GetInstanceTypeId() const override { return GetTypeId(); }
    uint32_t GetSerializedSize() const override { return 1; }
    void Serialize(ns3::TagBuffer i) const override { i.WriteU8(plane_); }
    void Deserialize(ns3::TagBuffer i) override { plane_ = i.ReadU8(); }
    void Print(std::ostream &os) const override { os << "plane=" << unsigned(plane_); }
    uint8_t Plane() const { return plane_; }

private:
    uint8_t plane_ = 0;
};

// A packet arrived on this plane (set by FabricRouting at its host).
class ArrivedTag : public PlaneTag {
public:
    ArrivedTag() = default;
    explicit ArrivedTag(uint8_t plane) : PlaneTag(plane) {}
    static ns3::TypeId GetTypeId();
    ns3::TypeId GetInstanceTypeId() const override { return GetTypeId(); }
};

// Counters of a host's planes.
struct PlaneStats {
    uint64_t ups = 0;       // a plane tried again came back (mr_plane_rx())
    uint64_t abandoned = 0; // paths mr_sender_abandon()ed for it (senders)
    // Each time a plane left service on timeouts: (when, which).
    std::vector<std::pair<int64_t, uint32_t>> downs;
};

// kernel/plane.c's per-device state over the model's clock. plane.c's
// retry times (100 ms to 3.2 s) are the kernel's: the model's clock is
// multiplied by --time-scale before plane.c sees it, as the RTO's
// constants are divided by it.
class HostPlanes {
public:
    HostPlanes(uint32_t count, uint32_t time_scale);
    uint32_t Count() const { return count_; }
    // mr_plane_route(): the plane a packet of `path` leaves on; `arrived`:
    // the plane what it answers came by (an ACK), or -1.
    uint32_t Route(int arrived, uint32_t path);
    // mr_plane_arrived(): a packet arrived on `plane`.
    void Arrived(uint32_t plane);
    // mr_plane_path_timeout(): path `id` of a connection timed out.
    void PathTimeout(const mr_paths *ps, const u8 *sent_on, uint32_t id);
    // mr_plane_gen(), mr_plane_serves().
    uint32_t Gen() const { return gen_; }
    uint32_t Serving() const { return usable_; }
    const mr_plane &State(uint32_t plane) const { return st_[plane]; }
    PlaneStats stats;

private:
    uint64_t Now() const;
    void UpdateMask(uint64_t now);
    uint32_t UsableMask(uint64_t now, uint32_t *probing);

    uint32_t count_;
    uint64_t scale_;
    mr_plane st_[MR_PLANES_MAX]{};
    uint32_t usable_ = 0, probing_ = 0, gen_ = 0;
    uint64_t retry_ = ~0ull;
};

} // namespace mrscale
