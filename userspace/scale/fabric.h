// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The network under the endpoints: ns-3 nodes with the IPv4 stack, point-to-
// point links, a queue disc on every link end, and our routing. A switch
// that has several equal-cost next hops for a destination picks one by a
// hash of the packet's 5-tuple, as a fabric switch does; ns-3's own ECMP
// picks per packet, which would hide what spraying over source ports does.
#pragma once

#include "config.h"

#include <ns3/error-model.h>
#include <ns3/internet-module.h>
#include <ns3/network-module.h>
#include <ns3/traffic-control-module.h>

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

namespace mrscale {

// Routing of one node: /32 routes to hosts, each a group of equal-cost next
// hops, and a host's default routes, one per link: a host with several
// links (planes) sends a packet out of the one its PlaneTag names (plane
// 0 without), from its one address, and tags what it receives with the
// plane it arrived on (ArrivedTag).
class FabricRouting : public ns3::Ipv4RoutingProtocol {
public:
    struct NextHop {
        uint32_t iface;
        ns3::Ipv4Address gateway;
    };

    static ns3::TypeId GetTypeId();

    void SetHashSeed(uint32_t seed) { hash_seed_ = seed; }
    void AddHostRoute(ns3::Ipv4Address dst, const std::vector<NextHop> &hops);
    // A host's link to plane (the number of such calls before), with the
    // host's address as the source of what it sends.
    void AddDefaultRoute(const NextHop &hop, ns3::Ipv4Address source);

    // The 5-tuple hash a switch spreads flows with.
    static uint32_t FlowHash(uint32_t seed, uint32_t src, uint32_t dst, uint8_t proto,
                             uint16_t sport, uint16_t dport);

    ns3::Ptr<ns3::Ipv4Route> RouteOutput(ns3::Ptr<ns3::Packet> p, const ns3::Ipv4Header &header,
                                         ns3::Ptr<ns3::NetDevice> oif,
                                         ns3::Socket::SocketErrno &sockerr) override;
    bool RouteInput(ns3::Ptr<const ns3::Packet> p, const ns3::Ipv4Header &header,
                    ns3::Ptr<const ns3::NetDevice> idev, UnicastForwardCallback ucb,
                    MulticastForwardCallback mcb, LocalDeliverCallback lcb,
                    ErrorCallback ecb) override;
    void NotifyInterfaceUp(uint32_t) override {}
    void NotifyInterfaceDown(uint32_t) override {}
    void NotifyAddAddress(uint32_t, ns3::Ipv4InterfaceAddress) override {}
    void NotifyRemoveAddress(uint32_t, ns3::Ipv4InterfaceAddress) override {}
    void SetIpv4(ns3::Ptr<ns3::Ipv4> ipv4) override { ipv4_ = ipv4; }
    void PrintRoutingTable(ns3::Ptr<ns3::OutputStreamWrapper> stream,
                           ns3::Time::Unit unit) const override;

private:
    // A next hop with its route object, built once.
    struct Hop {
        NextHop hop;
        ns3::Ptr<ns3::Ipv4Route> route;
    };
    Hop MakeHop(const NextHop &hop) const;
    const Hop *Pick(const std::vector<Hop> &group, const ns3::Ipv4Header &header,
                    ns3::Ptr<const ns3::Packet> p) const;

    ns3::Ptr<ns3::Ipv4> ipv4_;
    std::unordered_map<uint32_t, std::vector<Hop>> routes_;
    std::vector<Hop> default_;                       // a host's, per plane
    std::unordered_map<uint32_t, uint8_t> plane_of_; // a host's interface -> plane
    uint32_t hash_seed_ = 0;
};

// What a link does to the packets it delivers to one of its ends: after
// Fail() it drops everything, a blackhole, as a dead optic or a gray
// failure is to the endpoints before routing reacts; before, it may drop
// packets at random (SetLoss()), independently, as netem's loss does.
class LinkFault : public ns3::ErrorModel {
public:
    static ns3::TypeId GetTypeId();
    void Fail() { failed_ = true; }
    void Restore() { failed_ = false; }
    void SetLoss(double rate, uint64_t seed) {
        loss_ = static_cast<uint64_t>(rate * 18446744073709551615.0);
        rng_ = seed | 1;
    }
    uint64_t Dropped() const { return dropped_; }

private:
    bool DoCorrupt(ns3::Ptr<ns3::Packet>) override {
        bool drop = failed_;
        if (!drop && loss_) {
            // its own stream, so a loss rate changes nothing else
            drop = XorShift64Star(rng_) < loss_;
        }
        dropped_ += drop;
        return drop;
    }
    void DoReset() override {}
    bool failed_ = false;
    uint64_t loss_ = 0; // drop probability, 2^-64 units
    uint64_t rng_ = 1;
    uint64_t dropped_ = 0;
};

// What a link end's queue disc is.
enum class Port {
    kHost,   // a NIC: deep FIFO, never the bottleneck
    kSwitch, // a switch port: the configured buffer and AQM
};

// A network of hosts and switches, built link by link, then routed.
class Fabric {
public:
    struct LinkEnd {
        uint32_t node;
        ns3::Ptr<ns3::NetDevice> dev;
        ns3::Ptr<ns3::QueueDisc> qdisc;
        ns3::Ipv4Address addr;
        uint32_t iface;
    };
    struct Link {
        LinkEnd end[2];
        ns3::Ptr<LinkFault> fault[2]; // on what end[i] receives
        void Fail() {
            fault[0]->Fail();
            fault[1]->Fail();
        }
        void Restore() {
            fault[0]->Restore();
            fault[1]->Restore();
        }
        uint64_t Dropped() const { return fault[0]->Dropped() + fault[1]->Dropped(); }
        uint64_t rate_bps;
        uint64_t tx_packets[2] = {0, 0}; // sent from end[i]
    };

    Fabric(const Config &cfg, Aqm aqm);
    uint32_t AddHost();
    uint32_t AddSwitch();
    // Returns the link id. Port kinds are of end a and end b.
    uint32_t Connect(uint32_t a, uint32_t b, uint64_t rate_bps, Port pa, Port pb);
    // Routes every host from every switch over shortest paths; call once.
    void Route();

    ns3::Ptr<ns3::Node> Node(uint32_t id) const { return nodes_.at(id); }
    // A host's one address: that of its first link (plane 0), which every
    // plane reaches.
    ns3::Ipv4Address HostAddress(uint32_t host) const;
    Link &GetLink(uint32_t id) { return *links_.at(id); }
    // The queue disc at end `from` of link `id`, sending toward the other end.
    ns3::Ptr<ns3::QueueDisc> Qdisc(uint32_t id, uint32_t from) const {
        return links_.at(id)->end[from].qdisc;
    }
    // Count packets each end of the link sends (its PhyTxBegin).
    void CountTx(uint32_t id);

private:
    ns3::TrafficControlHelper PortQdisc(Port port, uint64_t rate_bps) const;

    const Config &cfg_;
    Aqm aqm_;
    std::vector<ns3::Ptr<ns3::Node>> nodes_;
    std::vector<bool> is_host_;
    std::vector<std::unique_ptr<Link>> links_;
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> adj_; // (neighbour, link)
    ns3::Ipv4AddressHelper addresses_;
};

} // namespace mrscale
