// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Links, queue discs and 5-tuple ECMP routing for the scale model.
#include "fabric.h"

#include "planes.h"

#include <ns3/point-to-point-module.h>

#include <deque>
#include <limits>
#include <stdexcept>

using namespace ns3;

namespace mrscale {

NS_OBJECT_ENSURE_REGISTERED(FabricRouting);
NS_OBJECT_ENSURE_REGISTERED(LinkFault);

TypeId FabricRouting::GetTypeId() {
    static TypeId tid = TypeId("mrscale::FabricRouting")
                            .SetParent<Ipv4RoutingProtocol>()
                            .SetGroupName("MetaRoCE")
                            .AddConstructor<FabricRouting>();
    return tid;
}

TypeId LinkFault::GetTypeId() {
    static TypeId tid = TypeId("mrscale::LinkFault")
                            .SetParent<ErrorModel>()
                            .SetGroupName("MetaRoCE")
                            .AddConstructor<LinkFault>();
    return tid;
}

namespace {

// murmur3's finaliser: every input bit affects every output bit.
uint32_t Mix(uint32_t h) {
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

} // namespace

uint32_t FabricRouting::FlowHash(uint32_t seed, uint32_t src, uint32_t dst, uint8_t proto,
                                 uint16_t sport, uint16_t dport) {
    uint32_t h = Mix(seed ^ 0x9e3779b9u);
    h = Mix(h ^ src);
    h = Mix(h ^ dst);
    h = Mix(h ^ (static_cast<uint32_t>(sport) << 16 | dport));
    return Mix(h ^ proto);
}

FabricRouting::Hop FabricRouting::MakeHop(const NextHop &hop) const {
    auto route = Create<Ipv4Route>();
    route->SetGateway(hop.gateway);
    route->SetOutputDevice(ipv4_->GetNetDevice(hop.iface));
    route->SetSource(ipv4_->GetAddress(hop.iface, 0).GetLocal());
    return Hop{hop, route};
}

void FabricRouting::AddHostRoute(Ipv4Address dst, const std::vector<NextHop> &hops) {
    auto &group = routes_[dst.Get()];
    group.clear();
    for (const auto &h : hops)
        group.push_back(MakeHop(h));
}

void FabricRouting::AddDefaultRoute(const NextHop &hop, Ipv4Address source) {
    plane_of_[hop.iface] = static_cast<uint8_t>(default_.size());
    default_.push_back(MakeHop(hop));
    default_.back().route->SetSource(source);
}

const FabricRouting::Hop *FabricRouting::Pick(const std::vector<Hop> &group,
                                              const Ipv4Header &header, Ptr<const Packet> p) const {
    if (group.empty())
        return nullptr;
    if (group.size() == 1)
        return &group[0];
    uint16_t sport = 0, dport = 0;
    uint8_t ports[4];
    // Forwarded packets start with their UDP header (the IP header is apart).
    if (p && header.GetProtocol() == 17 && p->CopyData(ports, 4) == 4) {
        sport = static_cast<uint16_t>(ports[0] << 8 | ports[1]);
        dport = static_cast<uint16_t>(ports[2] << 8 | ports[3]);
    }
    uint32_t h = FlowHash(hash_seed_, header.GetSource().Get(), header.GetDestination().Get(),
                          header.GetProtocol(), sport, dport);
    return &group[h % group.size()];
}

Ptr<Ipv4Route> FabricRouting::RouteOutput(Ptr<Packet> p, const Ipv4Header &header,
                                          Ptr<NetDevice> oif, Socket::SocketErrno &sockerr) {
    (void)oif;
    auto it = routes_.find(header.GetDestination().Get());
    const Hop *hop = nullptr;
    if (it != routes_.end()) {
        hop = Pick(it->second, header, p);
    } else if (!default_.empty()) {
        // A host: out of the plane the packet names (tx.c: flow.oif).
        PlaneTag tag;
        uint32_t plane = p && p->PeekPacketTag(tag) ? tag.Plane() : 0;
        hop = &default_[plane < default_.size() ? plane : 0];
    }
    if (!hop) {
        sockerr = Socket::ERROR_NOROUTETOHOST;
        return nullptr;
    }
    sockerr = Socket::ERROR_NOTERROR;
    auto route = Create<Ipv4Route>(*hop->route);
    route->SetDestination(header.GetDestination());
    return route;
}

bool FabricRouting::RouteInput(Ptr<const Packet> p, const Ipv4Header &header,
                               Ptr<const NetDevice> idev, UnicastForwardCallback ucb,
                               MulticastForwardCallback mcb, LocalDeliverCallback lcb,
                               ErrorCallback ecb) {
    (void)mcb;
    int32_t iif = ipv4_->GetInterfaceForDevice(idev);
    if (iif < 0)
        return false;
    if (ipv4_->IsDestinationAddress(header.GetDestination(), iif)) {
        if (lcb.IsNull())
            return false;
        if (default_.size() > 1) {
            // receive.c: the ingress netdev, which mr_plane_arrived() maps
            // to its plane.
            auto pl = plane_of_.find(static_cast<uint32_t>(iif));
            ArrivedTag old;
            if (pl != plane_of_.end() && !p->PeekPacketTag(old))
                p->AddPacketTag(ArrivedTag(pl->second));
        }
        lcb(p, header, iif);
        return true;
    }
    auto it = routes_.find(header.GetDestination().Get());
    const Hop *hop = it != routes_.end() ? Pick(it->second, header, p) : nullptr;
    if (!hop || !ipv4_->IsForwarding(iif)) {
        ecb(p, header, Socket::ERROR_NOROUTETOHOST);
        return true;
    }
    ucb(hop->route, p, header);
    return true;
}

void FabricRouting::PrintRoutingTable(Ptr<OutputStreamWrapper> stream, Time::Unit unit) const {
    (void)unit;
    std::ostream &os = *stream->GetStream();
    for (const auto &[dst, group] : routes_) {
        os << Ipv4Address(dst) << ":";
        for (const auto &h : group)
            os << " if" << h.hop.iface << " via " << h.hop.gateway;
        os << "\n";
    }
}

Fabric::Fabric(const Config &cfg, Aqm aqm) : cfg_(cfg), aqm_(aqm) {
    addresses_.SetBase("10.0.0.0", "255.255.255.252");
}

uint32_t Fabric::AddHost() {
    nodes_.push_back(CreateObject<ns3::Node>());
    is_host_.push_back(true);
    adj_.emplace_back();
    InternetStackHelper stack;
    stack.SetRoutingHelper(Ipv4StaticRoutingHelper());
    stack.Install(nodes_.back());
    nodes_.back()->GetObject<Ipv4>()->SetRoutingProtocol(CreateObject<FabricRouting>());
    return static_cast<uint32_t>(nodes_.size() - 1);
}

uint32_t Fabric::AddSwitch() {
    uint32_t id = AddHost();
    is_host_[id] = false;
    // Switches hash differently, or every stage would repeat the first one's
    // choice (hash polarisation).
    nodes_[id]->GetObject<Ipv4>()->GetRoutingProtocol()->GetObject<FabricRouting>()->SetHashSeed(
        cfg_.seed * 0x9e3779b1u + id);
    return id;
}

TrafficControlHelper Fabric::PortQdisc(Port port, uint64_t rate_bps) const {
    TrafficControlHelper tch;
    if (port == Port::kHost) {
        tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue("64MB"));
        return tch;
    }
    std::string size = std::to_string(cfg_.buffer_bytes) + "B";
    if (aqm_ == Aqm::kTailDrop) {
        tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", StringValue(size));
        return tch;
    }
    // RED on the instantaneous queue (QW 1), as datacenter ECN marking is
    // configured: marks from red-min, with probability pmax at red-max,
    // rising to 1 at twice red-max (gentle); ECN-capable packets are marked,
    // never dropped early; a full buffer drops.
    tch.SetRootQueueDisc("ns3::RedQueueDisc", "MaxSize", StringValue(size), "MinTh",
                         DoubleValue(static_cast<double>(cfg_.red_min_bytes)), "MaxTh",
                         DoubleValue(static_cast<double>(cfg_.red_max_bytes)), "LInterm",
                         DoubleValue(1.0 / cfg_.red_pmax), "QW", DoubleValue(1.0), "UseEcn",
                         BooleanValue(true), "UseHardDrop", BooleanValue(false), "Gentle",
                         BooleanValue(true), "Wait", BooleanValue(false), "MeanPktSize",
                         UintegerValue(cfg_.mtu + 64 + kLinkOverhead), "LinkBandwidth",
                         DataRateValue(DataRate(rate_bps)), "LinkDelay",
                         TimeValue(NanoSeconds(cfg_.delay_ns)));
    return tch;
}

uint32_t Fabric::Connect(uint32_t a, uint32_t b, uint64_t rate_bps, Port pa, Port pb) {
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(rate_bps)));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(9000));
    p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(cfg_.delay_ns)));
    // One packet below the queue disc, so that the queue disc holds the queue.
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));
    NetDeviceContainer devs = p2p.Install(nodes_.at(a), nodes_.at(b));

    auto link = std::make_unique<Link>();
    link->rate_bps = rate_bps;
    Port ports[2] = {pa, pb};
    for (uint32_t i = 0; i < 2; i++) {
        QueueDiscContainer q = PortQdisc(ports[i], rate_bps).Install(devs.Get(i));
        link->end[i].qdisc = q.Get(0);
        link->end[i].dev = devs.Get(i);
        link->end[i].node = i ? b : a;
        link->fault[i] = CreateObject<LinkFault>();
        DynamicCast<PointToPointNetDevice>(devs.Get(i))->SetReceiveErrorModel(link->fault[i]);
    }
    Ipv4InterfaceContainer ifs = addresses_.Assign(devs);
    addresses_.NewNetwork();
    for (uint32_t i = 0; i < 2; i++) {
        link->end[i].addr = ifs.GetAddress(i);
        link->end[i].iface = ifs.Get(i).second;
    }
    uint32_t id = static_cast<uint32_t>(links_.size());
    links_.push_back(std::move(link));
    adj_[a].push_back({b, id});
    adj_[b].push_back({a, id});
    return id;
}

Ipv4Address Fabric::HostAddress(uint32_t host) const {
    if (!is_host_.at(host) || adj_[host].empty())
        throw std::logic_error("a host has a link");
    const Link &l = *links_[adj_[host][0].second];
    return l.end[0].node == host ? l.end[0].addr : l.end[1].addr;
}

void Fabric::Route() {
    const uint32_t n = static_cast<uint32_t>(nodes_.size());
    auto routing = [&](uint32_t node) {
        return nodes_[node]->GetObject<Ipv4>()->GetRoutingProtocol()->GetObject<FabricRouting>();
    };
    auto far_end = [&](uint32_t link, uint32_t node) -> const LinkEnd & {
        const Link &l = *links_[link];
        return l.end[0].node == node ? l.end[1] : l.end[0];
    };
    auto near_end = [&](uint32_t link, uint32_t node) -> const LinkEnd & {
        const Link &l = *links_[link];
        return l.end[0].node == node ? l.end[0] : l.end[1];
    };
    for (uint32_t h = 0; h < n; h++) {
        if (!is_host_[h])
            continue;
        // One default route per link: plane i is the host's i-th link.
        for (auto [v, link] : adj_[h]) {
            (void)v;
            routing(h)->AddDefaultRoute({near_end(link, h).iface, far_end(link, h).addr},
                                        HostAddress(h));
        }
    }
    // Hop counts to each host (breadth first, never through another host),
    // then every switch routes to it over each neighbour one hop closer.
    std::vector<uint32_t> dist(n);
    for (uint32_t h = 0; h < n; h++) {
        if (!is_host_[h])
            continue;
        std::fill(dist.begin(), dist.end(), std::numeric_limits<uint32_t>::max());
        std::deque<uint32_t> todo = {h};
        dist[h] = 0;
        while (!todo.empty()) {
            uint32_t u = todo.front();
            todo.pop_front();
            if (is_host_[u] && u != h)
                continue;
            for (auto [v, link] : adj_[u]) {
                (void)link;
                if (dist[v] == std::numeric_limits<uint32_t>::max()) {
                    dist[v] = dist[u] + 1;
                    todo.push_back(v);
                }
            }
        }
        Ipv4Address dst = HostAddress(h);
        for (uint32_t s = 0; s < n; s++) {
            if (is_host_[s] || dist[s] == std::numeric_limits<uint32_t>::max())
                continue;
            std::vector<FabricRouting::NextHop> hops;
            for (auto [v, link] : adj_[s])
                if (dist[v] + 1 == dist[s])
                    hops.push_back({near_end(link, s).iface, far_end(link, s).addr});
            routing(s)->AddHostRoute(dst, hops);
        }
    }
}

void Fabric::CountTx(uint32_t id) {
    Link *l = links_.at(id).get();
    for (uint32_t i = 0; i < 2; i++)
        l->end[i].dev->TraceConnectWithoutContext(
            "PhyTxBegin",
            Callback<void, Ptr<const Packet>>([l, i](Ptr<const Packet>) { l->tx_packets[i]++; }));
}

} // namespace mrscale
