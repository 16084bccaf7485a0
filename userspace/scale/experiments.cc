// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Incast, ECMP with a link failure, and senders joining and leaving: the
// topologies, the sampling of rates and queues, and the markdown tables.
#include "experiments.h"

#include "fabric.h"
#include "planes.h"
#include "receiver_host.h"
#include "sender_host.h"

#include <ns3/core-module.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <sys/wait.h>
#include <type_traits>
#include <unistd.h>
#include <unordered_map>

using namespace ns3;

namespace mrscale {
namespace {

constexpr uint32_t kFirstQpn = 16; // the kernel numbers QPs from 16
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

uint32_t Hash32(uint32_t a, uint32_t b) {
    uint64_t x = (static_cast<uint64_t>(a) << 32 | b) * 0x9e3779b97f4a7c15ull;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ull;
    return static_cast<uint32_t>(x >> 32);
}

} // namespace

TransportParams MakeParams(const Config &cfg, bool cc) {
    TransportParams p;
    p.mtu = cfg.mtu;
    p.paths = cfg.paths;
    p.msg_bytes = cfg.msg_bytes;
    mr_cc_params_default(&p.cc);
    p.cc.enabled = cc;
    if (cfg.cc_init_path_window)
        p.cc.init_path_window = *cfg.cc_init_path_window;
    if (cfg.cc_init_conn_window)
        p.cc.init_conn_window = *cfg.cc_init_conn_window;
    if (cfg.cc_max_path_window)
        p.cc.max_path_window = *cfg.cc_max_path_window;
    if (cfg.cc_max_conn_window)
        p.cc.max_conn_window = *cfg.cc_max_conn_window;
    // The kernel's time constants suit the guest's millisecond RTTs; the
    // model's fabric has 5 us ones, so by default it divides them by 100,
    // as it does the RTO's (--time-scale).
    const uint64_t scale = cfg.time_scale;
    p.cc.target_floor_ns = cfg.cc_target_floor_ns.value_or(p.cc.target_floor_ns / scale);
    p.cc.target_scale_ns = cfg.cc_target_scale_ns.value_or(p.cc.target_scale_ns / scale);
    if (cfg.cc_ecn)
        p.cc.ecn = *cfg.cc_ecn;
    if (cfg.share_learn)
        p.cc.share_learn = *cfg.share_learn;
    p.hello = cfg.hello.value_or(true);
    if (cfg.cc_delay)
        p.cc.delay = *cfg.cc_delay;
    if (cfg.cc_loss)
        p.cc.loss = *cfg.cc_loss;
    p.timing.rto_init_ns = cfg.rto_init_ns.value_or(MR_RTO_INIT_NS / scale);
    p.timing.rto_min_ns = cfg.rto_min_ns.value_or(MR_RTO_MIN_NS / scale);
    p.timing.rto_max_ns = cfg.rto_max_ns.value_or(MR_RTO_MAX_NS / scale);
    p.timing.pto_min_ns = cfg.pto_min_ns.value_or(MR_PTO_MIN_NS / scale);
    p.ack_delay_ns = cfg.ack_delay_ns.value_or(MR_ACK_DELAY_NS / scale);
    p.timer_tick_ns = cfg.timer_tick_ns;
    p.timer_late_ns = cfg.timer_late_ns;
    p.cpu = std::make_shared<HostCpu>(cfg.host_cpus, cfg.host_cpu_ns);
    return p;
}

namespace {

uint32_t WirePacket(const Config &cfg) {
    return MR_BASE_HDR_LEN + MR_WRITE_HDR_LEN + cfg.mtu + kLinkOverhead;
}

// Propagation both ways plus a data packet's and an ACK's serialisation at
// every hop: the RTT of an idle network.
double BaseRtt(const Config &cfg, const std::vector<uint64_t> &hop_bps) {
    const double data = WirePacket(cfg) * 8.0,
                 ack = (MR_BASE_HDR_LEN + MR_ACK_HDR_LEN + kLinkOverhead) * 8.0;
    double rtt = 0;
    for (uint64_t bps : hop_bps)
        rtt += 2.0 * cfg.delay_ns + (data + ack) * 1e9 / static_cast<double>(bps);
    return rtt;
}

// The receiver's shortest share interval: 4 base RTTs unless set.
uint64_t ShareInterval(const Config &cfg, double base_rtt) {
    return cfg.share_interval_ns ? cfg.share_interval_ns
                                 : static_cast<uint64_t>(std::ceil(4 * base_rtt));
}

double Jain(const std::vector<double> &x) {
    double s = 0, s2 = 0;
    for (double v : x) {
        s += v;
        s2 += v * v;
    }
    return s2 > 0 ? s * s / (static_cast<double>(x.size()) * s2) : kNaN;
}

double WallSeconds(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Samples every tick (one base RTT): each sender's congestion-control rate
// and the bytes the receiver got from it, against the fair share of the
// capacity among the senders active then; the queue; the goodput.
class Sampler {
public:
    Sampler(const Config &cfg, uint64_t tick_ns, uint64_t capacity_bps, uint32_t window_ticks,
            const std::vector<std::unique_ptr<MrSender>> &senders, const MrReceiver &rx,
            Ptr<QueueDisc> queue, std::function<bool()> stop)
        : tol_(cfg.tolerance), tick_ns_(tick_ns), capacity_(static_cast<double>(capacity_bps)),
          window_(window_ticks), senders_(senders), rx_(rx), queue_(queue), stop_(std::move(stop)),
          ring_(senders.size() * (window_ticks + 1), 0) {
        if (const char *path = std::getenv("MR_SCALE_TRACE"))
            trace_ = std::fopen((std::string(path) + "." + std::to_string(getpid())).c_str(), "w");
        Simulator::Schedule(NanoSeconds(tick_ns_), &Sampler::Tick, this);
    }

    // One entry per tick.
    std::vector<double> time_ns, err_hint, err_rate, err_delivered, queue_bytes;
    std::vector<uint64_t> payload; // all senders' new payload so far
    // Per-sender payload at checkpoints.
    std::vector<double> cp_time;
    std::vector<std::vector<uint64_t>> cp_payload;

    // Settling after an event at t_event, judged until t_end: the first tick
    // from which on every sample is within the tolerance; at least 5 ticks
    // must remain. Returns RTTs (ticks) or -1.
    double SettleRtts(const std::vector<double> &err, double t_event, double t_end) const {
        int64_t first = -1, last_bad = -1, end = -1;
        for (size_t i = 0; i < time_ns.size(); i++) {
            if (time_ns[i] < t_event || time_ns[i] >= t_end)
                continue;
            if (first < 0)
                first = static_cast<int64_t>(i);
            end = static_cast<int64_t>(i);
            if (!(err[i] <= tol_))
                last_bad = static_cast<int64_t>(i);
        }
        if (first < 0 || end - std::max(first, last_bad + 1) < 4)
            return -1;
        int64_t ok = std::max(first, last_bad + 1);
        return (time_ns[ok] - t_event) / static_cast<double>(tick_ns_);
    }

    // Payload per sender between the checkpoints nearest to [a, b].
    std::vector<double> PayloadBetween(double a, double b, double *span) const {
        size_t ia = 0, ib = 0;
        for (size_t i = 0; i < cp_time.size(); i++) {
            if (cp_time[i] <= a)
                ia = i;
            if (cp_time[i] <= b)
                ib = i;
        }
        std::vector<double> out;
        *span = ib > ia ? cp_time[ib] - cp_time[ia] : 0;
        if (ib <= ia)
            return out;
        for (size_t s = 0; s < senders_.size(); s++)
            out.push_back(static_cast<double>(cp_payload[ib][s] - cp_payload[ia][s]));
        return out;
    }

    double MeanQueue(double a, double b) const {
        double sum = 0;
        size_t n = 0;
        for (size_t i = 0; i < time_ns.size(); i++)
            if (time_ns[i] >= a && time_ns[i] < b) {
                sum += queue_bytes[i];
                n++;
            }
        return n ? sum / static_cast<double>(n) : kNaN;
    }

private:
    void Tick() {
        const double now = static_cast<double>(Simulator::Now().GetNanoSeconds());
        uint32_t active = 0;
        for (const auto &s : senders_)
            active += s->Started() && !s->Done();
        const double fair = active ? capacity_ / active : kNaN;

        double err_rate = active ? 0 : kNaN, err_hint = err_rate;
        for (const auto &s : senders_)
            if (s->Started() && !s->Done()) {
                err_rate = std::max(err_rate, std::fabs(s->RateBps() / fair - 1));
                // No hint yet counts as far off.
                const double hint = static_cast<double>(mr_cc_hint_to_bps(s->Cc().hint_kbps));
                err_hint = std::max(err_hint, hint > 0 ? std::fabs(hint / fair - 1) : 1.0);
            }

        // The delivered rate over the last window, of senders that sent
        // through all of it.
        const size_t slot = ticks_ % (window_ + 1), old = (ticks_ + 1) % (window_ + 1);
        double err_del = ticks_ >= window_ && active ? 0 : kNaN;
        const double span = static_cast<double>(window_) * static_cast<double>(tick_ns_);
        uint64_t total = 0;
        for (size_t i = 0; i < senders_.size(); i++) {
            const FlowStats *f = rx_.Flow(senders_[i]->Qpn());
            uint64_t bytes = f ? f->udp_bytes : 0;
            total += f ? f->payload_bytes : 0;
            ring_[i * (window_ + 1) + slot] = bytes;
            const MrSender &s = *senders_[i];
            if (std::isnan(err_del) || !s.Started() || s.Done() ||
                static_cast<double>(s.Stats().start_ns) > now - span)
                continue;
            double got = static_cast<double>(bytes - ring_[i * (window_ + 1) + old]) * 8e9 / span;
            err_del = std::max(err_del, std::fabs(got / fair - 1));
        }
        time_ns.push_back(now);
        this->err_rate.push_back(err_rate);
        this->err_hint.push_back(err_hint);
        if (trace_) {
            std::fprintf(trace_, "%.0f %u", now, active);
            for (size_t i = 0; i < senders_.size(); i++) {
                const MrSender &s = *senders_[i];
                const FlowStats *f = rx_.Flow(s.Qpn());
                std::fprintf(trace_, " | %.3g %u %.3g %u %u %" PRIu64 " %u", s.RateBps() / 1e9,
                             s.Cc().hint_kbps, s.Cc().w.cwnd / 1024.0, s.Cc().paths_cwnd,
                             s.Paths().inflight, static_cast<uint64_t>(s.Cc().srtt),
                             f ? static_cast<unsigned>(f->packets) : 0u);
            }
            std::fprintf(trace_, "\n");
        }
        err_delivered.push_back(err_del);
        queue_bytes.push_back(queue_ ? static_cast<double>(queue_->GetNBytes()) : 0);
        payload.push_back(total);
        // Checkpoints 1 % of the time apart: any window [t/2, t] is resolved
        // to a few per cent, in O(log t) of them.
        if (cp_time.empty() || now - cp_time.back() >= 0.01 * now)
            Checkpoint(now);
        ticks_++;

        bool all_done =
            std::all_of(senders_.begin(), senders_.end(), [](const auto &s) { return s->Done(); });
        if ((stop_ && stop_()) || (!stop_ && all_done)) {
            Checkpoint(now);
            if (trace_)
                std::fclose(trace_);
            trace_ = nullptr;
            Simulator::Stop();
            return;
        }
        Simulator::Schedule(NanoSeconds(tick_ns_), &Sampler::Tick, this);
    }

    void Checkpoint(double now) {
        if (!cp_time.empty() && cp_time.back() == now)
            return;
        std::vector<uint64_t> row(senders_.size());
        for (size_t i = 0; i < senders_.size(); i++) {
            const FlowStats *f = rx_.Flow(senders_[i]->Qpn());
            row[i] = f ? f->payload_bytes : 0;
        }
        cp_time.push_back(now);
        cp_payload.push_back(std::move(row));
    }

    double tol_;
    uint64_t tick_ns_;
    double capacity_;
    uint32_t window_;
    const std::vector<std::unique_ptr<MrSender>> &senders_;
    const MrReceiver &rx_;
    Ptr<QueueDisc> queue_;
    std::function<bool()> stop_;
    std::vector<uint64_t> ring_;
    FILE *trace_ = nullptr; // debugging: MR_SCALE_TRACE=file, per tick
    uint64_t ticks_ = 0;
};

// The delivered rate is judged over windows long enough for 30 packets of
// each sender at its fair share, and at least 2 ticks.
uint32_t DeliveredWindow(const Config &cfg, uint32_t senders, uint64_t capacity_bps,
                         uint64_t tick_ns) {
    double t = 30.0 * senders * WirePacket(cfg) * 8 * 1e9 / static_cast<double>(capacity_bps);
    return std::max<uint32_t>(2,
                              static_cast<uint32_t>(std::ceil(t / static_cast<double>(tick_ns))));
}

struct QueuePeak {
    Ptr<QueueDisc> q;
    uint64_t peak = 0;
    void Watch(Ptr<QueueDisc> qd) {
        q = qd;
        q->TraceConnectWithoutContext(
            "Enqueue", Callback<void, Ptr<const QueueDiscItem>>([this](Ptr<const QueueDiscItem>) {
                peak = std::max<uint64_t>(peak, q->GetNBytes());
            }));
    }
};

// A star: senders and the receiver on one switch; its port toward the
// receiver is the bottleneck.
struct Star {
    std::unique_ptr<Fabric> fabric;
    uint32_t rx_host;
    uint32_t rx_link;
    std::vector<uint32_t> tx_hosts;
    double base_rtt;
};

uint64_t HostRate(const Config &cfg) {
    return cfg.host_rate_bps ? cfg.host_rate_bps : cfg.rate_bps;
}

uint64_t IngressRate(const Config &cfg) {
    if (cfg.ingress_bps == kNoIngress)
        return 0;
    return cfg.ingress_bps ? cfg.ingress_bps : cfg.rate_bps;
}

Star BuildStar(const Config &cfg, Aqm aqm, uint32_t senders) {
    Star s;
    s.fabric = std::make_unique<Fabric>(cfg, aqm);
    uint32_t sw = s.fabric->AddSwitch();
    s.rx_host = s.fabric->AddHost();
    s.rx_link = s.fabric->Connect(sw, s.rx_host, cfg.rate_bps, Port::kSwitch, Port::kHost);
    for (uint32_t i = 0; i < senders; i++) {
        uint32_t h = s.fabric->AddHost();
        s.fabric->Connect(h, sw, HostRate(cfg), Port::kHost, Port::kSwitch);
        s.tx_hosts.push_back(h);
    }
    s.fabric->Route();
    if (cfg.loss > 0)
        s.fabric->GetLink(s.rx_link).fault[1]->SetLoss(cfg.loss, Hash32(cfg.seed, 0x105e));
    s.base_rtt = BaseRtt(cfg, {HostRate(cfg), cfg.rate_bps});
    return s;
}

uint64_t StartJitter(const Config &cfg, uint32_t i) {
    return Hash32(cfg.seed, i) % 1000;
}

} // namespace

IncastResult RunIncast(const Config &cfg, uint32_t n, bool cc, Aqm aqm) {
    auto t0 = std::chrono::steady_clock::now();
    IncastResult r{};
    r.senders = n;
    r.cc = cc;
    r.aqm = aqm;
    Star star = BuildStar(cfg, aqm, n);
    r.base_rtt_ns = star.base_rtt;
    const TransportParams params = MakeParams(cfg, cc);
    MrReceiver rx(star.fabric->Node(star.rx_host), params, IngressRate(cfg),
                  ShareInterval(cfg, star.base_rtt));
    const Ipv4Address dst = star.fabric->HostAddress(star.rx_host);
    const uint64_t bytes = std::max(cfg.incast_total_bytes / n, cfg.incast_min_bytes);
    std::vector<std::unique_ptr<MrSender>> senders;
    for (uint32_t i = 0; i < n; i++)
        senders.push_back(std::make_unique<MrSender>(
            star.fabric->Node(star.tx_hosts[i]), params, dst, kFirstQpn + i,
            Hash32(cfg.seed, kFirstQpn + i), bytes, NanoSeconds(StartJitter(cfg, i))));

    Ptr<QueueDisc> q = star.fabric->Qdisc(star.rx_link, 0);
    QueuePeak peak;
    peak.Watch(q);
    const uint64_t tick = static_cast<uint64_t>(std::llround(star.base_rtt));
    const uint32_t window = DeliveredWindow(cfg, n, cfg.rate_bps, tick);
    r.window_rtts = window;
    Sampler sampler(cfg, tick, PayloadRate(cfg.rate_bps, cfg.mtu), window, senders, rx, q, nullptr);
    const double ideal_ns = static_cast<double>(n) *
                                static_cast<double>((bytes + cfg.mtu - 1) / cfg.mtu) *
                                WirePacket(cfg) * 8e9 / static_cast<double>(cfg.rate_bps) +
                            star.base_rtt;
    Simulator::Stop(NanoSeconds(static_cast<uint64_t>(20 * ideal_ns) + 50'000'000));
    Simulator::Run();

    double first = std::numeric_limits<double>::max(), last = 0;
    for (const auto &s : senders) {
        const SenderStats &st = s->Stats();
        if (st.failed) {
            r.failed++;
            last = std::max(last, static_cast<double>(Simulator::Now().GetNanoSeconds()));
        } else if (st.done_ns >= 0) {
            first = std::min(first, static_cast<double>(st.done_ns));
            last = std::max(last, static_cast<double>(st.done_ns));
        } else {
            last = std::max(last, static_cast<double>(Simulator::Now().GetNanoSeconds()));
        }
        r.retransmits += st.retransmits;
        r.rtos += st.rtos;
        r.deferred += st.deferred;
        r.failovers += st.failovers;
        if (cfg.verbose)
            std::fprintf(
                stderr,
                "sender %u: packets %" PRIu64 " resends %" PRIu64 " (sack %" PRIu64
                ", probes %" PRIu64 ", moved %" PRIu64 ") RTOs %" PRIu64 " deferred %" PRIu64
                " failovers %" PRIu64 " decreases %" PRIu64 " done %.0f us%s\n",
                s->Qpn(), st.packets, st.retransmits, st.sack_resends, st.probes, st.moved, st.rtos,
                st.deferred, st.failovers, static_cast<uint64_t>(s->Cc().decreases),
                static_cast<double>(st.done_ns) / 1e3, st.failed ? " FAILED" : "");
        if (cfg.verbose && !s->Done())
            s->Dump();
    }
    if (first == std::numeric_limits<double>::max())
        first = last;
    r.settle.hint_rtts = sampler.SettleRtts(sampler.err_hint, 0, first);
    r.settle.rate_rtts = sampler.SettleRtts(sampler.err_rate, 0, first);
    // The delivered rate is judged until a window before the first
    // completion: in its last window a sender runs out of data to send.
    r.settle.delivered_rtts = sampler.SettleRtts(
        sampler.err_delivered, 0, first - static_cast<double>(window) * static_cast<double>(tick));
    double span;
    std::vector<double> got = sampler.PayloadBetween(first / 2, first, &span);
    r.jain = got.empty() ? kNaN : Jain(got);
    double sum = 0;
    for (double g : got)
        sum += g;
    r.goodput = span > 0 ? sum * 8e9 / span / static_cast<double>(cfg.rate_bps) : kNaN;
    r.peak_queue = static_cast<double>(peak.peak);
    r.mean_queue = sampler.MeanQueue(first / 2, first);
    QueueDisc::Stats qs = q->GetStats();
    r.qdisc_packets = qs.nTotalReceivedPackets;
    r.drops = qs.nTotalDroppedPackets;
    r.marks = qs.nTotalMarkedPackets;
    r.random_losses = star.fabric->GetLink(star.rx_link).fault[1]->Dropped();
    r.done_ratio = last / ideal_ns;
    Simulator::Destroy();
    r.wall_s = WallSeconds(t0);
    return r;
}

EcmpResult RunEcmp(const Config &cfg, uint32_t links, bool cc, bool fail) {
    auto t0 = std::chrono::steady_clock::now();
    EcmpResult r{};
    r.links = links;
    r.cc = cc;
    r.fail = fail;
    // A leaf-spine-leaf fabric: sender - leaf A - L spines - leaf B -
    // receiver. Host links run at twice the spines' sum, so the spine links
    // are the bottleneck and how a connection spreads over them shows.
    const uint64_t link_bps = cfg.fabric_bps / links, host_bps = 2 * cfg.fabric_bps;
    Fabric fabric(cfg, Aqm::kRed);
    const uint32_t tx = fabric.AddHost(), leaf_a = fabric.AddSwitch();
    std::vector<uint32_t> spines;
    for (uint32_t i = 0; i < links; i++)
        spines.push_back(fabric.AddSwitch());
    const uint32_t leaf_b = fabric.AddSwitch(), rxh = fabric.AddHost();
    fabric.Connect(tx, leaf_a, host_bps, Port::kHost, Port::kSwitch);
    std::vector<uint32_t> up;
    for (uint32_t i = 0; i < links; i++) {
        up.push_back(fabric.Connect(leaf_a, spines[i], link_bps, Port::kSwitch, Port::kSwitch));
        fabric.CountTx(up.back());
    }
    for (uint32_t i = 0; i < links; i++)
        fabric.Connect(spines[i], leaf_b, link_bps, Port::kSwitch, Port::kSwitch);
    fabric.Connect(leaf_b, rxh, host_bps, Port::kSwitch, Port::kHost);
    fabric.Route();
    r.base_rtt_ns = BaseRtt(cfg, {host_bps, link_bps, link_bps, host_bps});

    const TransportParams params = MakeParams(cfg, cc);
    MrReceiver rx(fabric.Node(rxh), params, host_bps, ShareInterval(cfg, r.base_rtt_ns));
    std::vector<std::unique_ptr<MrSender>> senders;
    senders.push_back(std::make_unique<MrSender>(fabric.Node(tx), params, fabric.HostAddress(rxh),
                                                 kFirstQpn, Hash32(cfg.seed, kFirstQpn),
                                                 cfg.ecmp_bytes, NanoSeconds(0)));
    MrSender &sender = *senders[0];
    // Which spine each path's source port hashes to at leaf A (the group
    // lists the spines in the order they were linked).
    const uint32_t leaf_seed = cfg.seed * 0x9e3779b1u + leaf_a;
    auto link_of = [&](uint16_t sport) {
        return FabricRouting::FlowHash(leaf_seed, fabric.HostAddress(tx).Get(),
                                       fabric.HostAddress(rxh).Get(), 17, sport, kRoceV2Port) %
               links;
    };
    for (uint32_t p = 0; p < sender.Paths().count; p++)
        r.paths_on_link[link_of(sender.Paths().path[p].sport)]++;

    std::vector<QueuePeak> peaks(links);
    for (uint32_t i = 0; i < links; i++)
        peaks[i].Watch(fabric.Qdisc(up[i], 0));
    const uint64_t tick = static_cast<uint64_t>(std::llround(r.base_rtt_ns));
    Sampler sampler(cfg, tick, PayloadRate(cfg.fabric_bps, cfg.mtu), 2, senders, rx, nullptr,
                    nullptr);
    const double ideal_ns = static_cast<double>((cfg.ecmp_bytes + cfg.mtu - 1) / cfg.mtu) *
                            WirePacket(cfg) * 8e9 / static_cast<double>(cfg.fabric_bps);
    if (fail) {
        r.fail_us = 0.4 * ideal_ns / 1000;
        // The link that carries most of the connection's paths then fails.
        Simulator::Schedule(NanoSeconds(static_cast<uint64_t>(r.fail_us * 1000)), [&]() {
            std::vector<uint32_t> on(links, 0);
            for (uint32_t p = 0; p < sender.Paths().count; p++)
                on[link_of(sender.Paths().path[p].sport)]++;
            r.failed_link =
                static_cast<uint32_t>(std::max_element(on.begin(), on.end()) - on.begin());
            r.paths_on_failed = on[r.failed_link];
            fabric.GetLink(up[r.failed_link]).Fail();
        });
    }
    Simulator::Stop(NanoSeconds(static_cast<uint64_t>(20 * ideal_ns) + 50'000'000));
    Simulator::Run();

    const SenderStats &st = sender.Stats();
    double done = st.done_ns >= 0 ? static_cast<double>(st.done_ns)
                                  : static_cast<double>(Simulator::Now().GetNanoSeconds());
    r.done_us = done / 1000;
    r.goodput =
        static_cast<double>(cfg.ecmp_bytes) * 8e9 / done / static_cast<double>(cfg.fabric_bps);
    uint64_t total = 0, most = 0;
    for (uint32_t i = 0; i < links; i++) {
        r.packets_on_link[i] = fabric.GetLink(up[i]).tx_packets[0];
        r.peak_queue[i] = static_cast<double>(peaks[i].peak);
        total += r.packets_on_link[i];
        most = std::max(most, r.packets_on_link[i]);
        QueueDisc::Stats qs = fabric.Qdisc(up[i], 0)->GetStats();
        r.drops += qs.nTotalDroppedPackets;
        r.marks += qs.nTotalMarkedPackets;
    }
    r.spread = total ? static_cast<double>(most) * links / static_cast<double>(total) : kNaN;
    r.retransmits = st.retransmits;
    r.moved = st.moved;
    r.failovers = st.failovers;
    r.rtos = st.rtos;
    if (fail) {
        r.blackholed = fabric.GetLink(up[r.failed_link]).Dropped();
        // Goodput per tick, smoothed over 4 ticks.
        const auto &t = sampler.time_ns;
        const auto &pl = sampler.payload;
        auto rate = [&](size_t i) {
            size_t j = i >= 4 ? i - 4 : 0;
            return i > j ? static_cast<double>(pl[i] - pl[j]) * 8e9 / (t[i] - t[j]) : 0.0;
        };
        const double tf = r.fail_us * 1000;
        double before = 0;
        size_t nb = 0, i_end = 0;
        for (size_t i = 0; i < t.size(); i++) {
            if (t[i] >= tf / 2 && t[i] < tf) {
                before += rate(i);
                nb++;
            }
            if (pl[i] <= 0.95 * static_cast<double>(cfg.ecmp_bytes))
                i_end = i;
        }
        before = nb ? before / static_cast<double>(nb) : kNaN;
        const double target = 0.9 * (links - 1) / links * before;
        double low = std::numeric_limits<double>::max();
        int64_t last_bad = -1, first_after = -1;
        for (size_t i = 0; i <= i_end && i < t.size(); i++) {
            if (t[i] < tf)
                continue;
            if (first_after < 0)
                first_after = static_cast<int64_t>(i);
            low = std::min(low, rate(i));
            if (rate(i) < target)
                last_bad = static_cast<int64_t>(i);
        }
        r.dip = first_after >= 0 ? low / before : kNaN;
        if (first_after < 0 || last_bad >= static_cast<int64_t>(i_end))
            r.recover_rtts = -1;
        else
            r.recover_rtts = (t[static_cast<size_t>(std::max(first_after, last_bad + 1))] - tf) /
                             static_cast<double>(tick);
    }
    Simulator::Destroy();
    r.wall_s = WallSeconds(t0);
    return r;
}

JoinLeaveResult RunJoinLeave(const Config &cfg, uint32_t base, uint32_t extra, bool cc) {
    auto t0 = std::chrono::steady_clock::now();
    JoinLeaveResult r{};
    r.base = base;
    r.extra = extra;
    r.cc = cc;
    Aqm aqm = cfg.aqm.empty() ? Aqm::kRed : cfg.aqm.front();
    Star star = BuildStar(cfg, aqm, base + extra);
    r.base_rtt_ns = star.base_rtt;
    const TransportParams params = MakeParams(cfg, cc);
    MrReceiver rx(star.fabric->Node(star.rx_host), params, IngressRate(cfg),
                  ShareInterval(cfg, star.base_rtt));
    const uint64_t tick = static_cast<uint64_t>(std::llround(star.base_rtt));
    const uint32_t window = DeliveredWindow(cfg, base + extra, cfg.rate_bps, tick);
    r.window_rtts = window;
    // Each phase lasts 4 delivered-rate windows, at least 200 RTTs.
    const uint64_t phase = std::max<uint64_t>(200, 4ull * window) * tick;
    const Ipv4Address dst = star.fabric->HostAddress(star.rx_host);
    const uint64_t forever = 1ull << 40;
    std::vector<std::unique_ptr<MrSender>> senders;
    for (uint32_t i = 0; i < base + extra; i++) {
        uint64_t start = StartJitter(cfg, i) + (i < base ? 0 : phase);
        senders.push_back(std::make_unique<MrSender>(
            star.fabric->Node(star.tx_hosts[i]), params, dst, kFirstQpn + i,
            Hash32(cfg.seed, kFirstQpn + i), forever, NanoSeconds(start)));
    }
    const double t_join = static_cast<double>(phase);
    Simulator::Schedule(NanoSeconds(2 * phase), [&]() {
        for (uint32_t i = base; i < base + extra; i++)
            senders[i]->Leave();
    });
    double t_left = -1;
    auto stop = [&]() {
        const double now = static_cast<double>(Simulator::Now().GetNanoSeconds());
        if (t_left < 0 && now >= 2.0 * static_cast<double>(phase)) {
            bool all = true;
            for (uint32_t i = base; i < base + extra; i++)
                all = all && senders[i]->Done();
            if (all) {
                t_left = 0;
                for (uint32_t i = base; i < base + extra; i++)
                    t_left = std::max(t_left, static_cast<double>(senders[i]->Stats().done_ns));
            }
        }
        return t_left >= 0 && now >= t_left + static_cast<double>(phase);
    };
    Ptr<QueueDisc> q = star.fabric->Qdisc(star.rx_link, 0);
    Sampler sampler(cfg, tick, PayloadRate(cfg.rate_bps, cfg.mtu), window, senders, rx, q, stop);
    Simulator::Stop(NanoSeconds(50 * phase + 50'000'000));
    Simulator::Run();

    const double end = static_cast<double>(Simulator::Now().GetNanoSeconds());
    if (t_left < 0)
        t_left = end;
    r.before.hint_rtts = sampler.SettleRtts(sampler.err_hint, 0, t_join);
    r.before.rate_rtts = sampler.SettleRtts(sampler.err_rate, 0, t_join);
    r.before.delivered_rtts = sampler.SettleRtts(sampler.err_delivered, 0, t_join);
    r.join.hint_rtts = sampler.SettleRtts(sampler.err_hint, t_join, 2.0 * phase);
    r.join.rate_rtts = sampler.SettleRtts(sampler.err_rate, t_join, 2.0 * phase);
    r.join.delivered_rtts = sampler.SettleRtts(sampler.err_delivered, t_join, 2.0 * phase);
    r.leave.hint_rtts = sampler.SettleRtts(sampler.err_hint, t_left, end);
    r.leave.rate_rtts = sampler.SettleRtts(sampler.err_rate, t_left, end);
    r.leave.delivered_rtts = sampler.SettleRtts(sampler.err_delivered, t_left, end);
    double span;
    r.jain_joined = Jain(sampler.PayloadBetween(1.5 * phase, 2.0 * phase, &span));
    std::vector<double> left = sampler.PayloadBetween(t_left + phase / 2.0, end, &span);
    left.resize(std::min<size_t>(left.size(), base));
    r.jain_left = left.empty() ? kNaN : Jain(left);
    r.drops = q->GetStats().nTotalDroppedPackets;
    Simulator::Destroy();
    r.wall_s = WallSeconds(t0);
    return r;
}

namespace {

// A host of the planes' fabric: its planes (kernel/plane.c's state), its
// endpoints, and its one socket on UDP port 4791 that hands each packet to
// the sender of its QPN, or else to the host's receiver.
struct PlaneHost {
    std::unique_ptr<HostPlanes> planes;
    std::unique_ptr<MrReceiver> rx;
    std::unordered_map<uint32_t, MrSender *> senders;
    Ptr<Socket> sock;

    void Recv(Ptr<Socket> s) {
        Ptr<Packet> p;
        Address from;
        while ((p = s->RecvFrom(from))) {
            // receive.c: mr_plane_arrived(), for every packet of the device.
            ArrivedTag arrived;
            if (p->PeekPacketTag(arrived))
                planes->Arrived(arrived.Plane());
            mr_pkt pkt;
            if (!DecodePacket(p, &pkt))
                continue;
            auto it = senders.find(pkt.base.qpn);
            if (it != senders.end())
                it->second->Receive(p);
            else if (rx)
                rx->Receive(p, from);
        }
    }
};

const char *PatternName(Pattern p) {
    return p == Pattern::kOne ? "one" : p == Pattern::kIncast ? "incast" : "all2all";
}

} // namespace

PlanesResult RunPlanes(const Config &cfg, uint32_t n, uint32_t conns, Pattern pattern) {
    auto t0 = std::chrono::steady_clock::now();
    PlanesResult r{};
    r.planes = n;
    r.pattern = pattern;
    r.fail_plane = cfg.fail_plane < static_cast<int32_t>(n) ? cfg.fail_plane : -1;
    // Who writes to whom.
    std::vector<std::pair<uint32_t, uint32_t>> pairs; // (from, to), host indices
    uint32_t hosts = 2, receivers = 1;
    if (pattern == Pattern::kOne) {
        for (uint32_t i = 0; i < conns; i++)
            pairs.push_back({1, 0});
    } else if (pattern == Pattern::kIncast) {
        hosts = conns + 1;
        for (uint32_t i = 0; i < conns; i++)
            pairs.push_back({i + 1, 0});
    } else {
        while (hosts * (hosts - 1) < conns)
            hosts++;
        receivers = hosts;
        for (uint32_t a = 0; a < hosts; a++)
            for (uint32_t b = 0; b < hosts; b++)
                if (a != b)
                    pairs.push_back({a, b});
    }
    r.conns = static_cast<uint32_t>(pairs.size());
    r.hosts = hosts;

    // Each plane a switch of its own; each host one link (NIC) to each.
    Fabric fabric(cfg, Aqm::kRed);
    std::vector<uint32_t> sw, host;
    for (uint32_t p = 0; p < n; p++)
        sw.push_back(fabric.AddSwitch());
    std::vector<std::vector<uint32_t>> plane_links(n);
    for (uint32_t h = 0; h < hosts; h++) {
        host.push_back(fabric.AddHost());
        for (uint32_t p = 0; p < n; p++)
            plane_links[p].push_back(
                fabric.Connect(host[h], sw[p], cfg.rate_bps, Port::kHost, Port::kSwitch));
    }
    fabric.Route();
    r.base_rtt_ns = BaseRtt(cfg, {cfg.rate_bps, cfg.rate_bps});
    // A receiver's ingress is the sum of its planes (mr_plane_link_mbps()).
    const uint64_t ingress = static_cast<uint64_t>(n) * cfg.rate_bps;
    r.capacity_bps = static_cast<double>(PayloadRate(ingress, cfg.mtu)) * receivers;

    const TransportParams params = MakeParams(cfg, true);
    std::vector<PlaneHost> ph(hosts);
    for (uint32_t h = 0; h < hosts; h++) {
        ph[h].planes = std::make_unique<HostPlanes>(n, cfg.time_scale);
        ph[h].sock = Socket::CreateSocket(fabric.Node(host[h]), UdpSocketFactory::GetTypeId());
        if (ph[h].sock->Bind(InetSocketAddress(Ipv4Address::GetAny(), kRoceV2Port))) {
            std::fprintf(stderr, "mr-scale: cannot bind UDP port %u\n", kRoceV2Port);
            std::exit(2);
        }
        ph[h].sock->SetIpRecvTos(true);
        PlaneHost *me = &ph[h];
        ph[h].sock->SetRecvCallback(
            Callback<void, Ptr<Socket>>([me](Ptr<Socket> s) { me->Recv(s); }));
    }
    // --plane-bytes per plane of each receiving host, over its connections.
    const uint64_t total = static_cast<uint64_t>(n) * cfg.plane_bytes * receivers;
    const uint64_t bytes = std::max<uint64_t>(total / r.conns, cfg.incast_min_bytes);
    std::vector<std::unique_ptr<MrSender>> senders;
    std::vector<std::pair<const MrReceiver *, uint32_t>> flows;
    for (uint32_t i = 0; i < r.conns; i++) {
        auto [from, to] = pairs[i];
        if (!ph[to].rx)
            ph[to].rx = std::make_unique<MrReceiver>(fabric.Node(host[to]), params, ingress,
                                                     ShareInterval(cfg, r.base_rtt_ns),
                                                     ph[to].planes.get(), false);
        const uint32_t qpn = kFirstQpn + i;
        senders.push_back(std::make_unique<MrSender>(
            fabric.Node(host[from]), params, fabric.HostAddress(host[to]), qpn,
            Hash32(cfg.seed, qpn), bytes, NanoSeconds(StartJitter(cfg, i)), ph[from].planes.get(),
            false));
        ph[from].senders[qpn] = senders.back().get();
        flows.push_back({ph[to].rx.get(), qpn});
    }
    const uint64_t all_bytes = bytes * r.conns;
    r.ideal_ns = static_cast<double>(all_bytes / cfg.mtu + 1) * WirePacket(cfg) * 8e9 /
                     (static_cast<double>(ingress) * receivers) +
                 r.base_rtt_ns;

    // Goodput every base RTT: all connections' new payload so far.
    const uint64_t tick = static_cast<uint64_t>(std::llround(r.base_rtt_ns));
    std::vector<double> t;
    std::vector<uint64_t> pl;
    std::function<void()> sample = [&]() {
        uint64_t got = 0;
        for (auto [rx, qpn] : flows)
            if (const FlowStats *f = rx->Flow(qpn))
                got += f->payload_bytes;
        t.push_back(static_cast<double>(Simulator::Now().GetNanoSeconds()));
        pl.push_back(got);
        if (std::all_of(senders.begin(), senders.end(), [](const auto &s) { return s->Done(); })) {
            Simulator::Stop();
            return;
        }
        Simulator::Schedule(NanoSeconds(tick), sample);
    };
    Simulator::Schedule(NanoSeconds(tick), sample);
    if (r.fail_plane >= 0) {
        const uint32_t k = static_cast<uint32_t>(r.fail_plane);
        r.fail_ns = cfg.fail_at * r.ideal_ns;
        Simulator::Schedule(NanoSeconds(static_cast<uint64_t>(r.fail_ns)),
                            [&fabric, &plane_links, k]() {
                                for (uint32_t l : plane_links[k])
                                    fabric.GetLink(l).Fail();
                            });
        if (cfg.restore_at > cfg.fail_at) {
            r.restore_ns = cfg.restore_at * r.ideal_ns;
            Simulator::Schedule(NanoSeconds(static_cast<uint64_t>(r.restore_ns)),
                                [&fabric, &plane_links, k]() {
                                    for (uint32_t l : plane_links[k])
                                        fabric.GetLink(l).Restore();
                                });
        }
    }
    Simulator::Stop(NanoSeconds(static_cast<uint64_t>(20 * r.ideal_ns) + 50'000'000));
    Simulator::Run();

    double done = 0;
    for (const auto &s : senders) {
        const SenderStats &st = s->Stats();
        done = std::max(done, st.done_ns >= 0
                                  ? static_cast<double>(st.done_ns)
                                  : static_cast<double>(Simulator::Now().GetNanoSeconds()));
        r.failed += st.failed;
        r.rtos += st.rtos;
        r.failovers += st.failovers;
    }
    r.done_ratio = done / r.ideal_ns;
    r.goodput = static_cast<double>(all_bytes) * 8e9 / done / r.capacity_bps;
    for (uint32_t p = 0; p < n; p++)
        for (uint32_t l : plane_links[p]) {
            if (static_cast<int32_t>(p) == r.fail_plane)
                r.blackholed += fabric.GetLink(l).Dropped();
            QueueDisc::Stats qs = fabric.Qdisc(l, 1)->GetStats();
            r.drops += qs.nTotalDroppedPackets;
            r.marks += qs.nTotalMarkedPackets;
        }
    r.out_rtts = -1;
    for (const auto &h : ph) {
        r.abandoned += h.planes->stats.abandoned;
        r.plane_ups += h.planes->stats.ups;
        bool out = false;
        for (auto [at, plane] : h.planes->stats.downs) {
            if (r.fail_plane < 0 || static_cast<int32_t>(plane) != r.fail_plane ||
                static_cast<double>(at) < r.fail_ns) {
                r.false_outs++;
                continue;
            }
            const double rtts = (static_cast<double>(at) - r.fail_ns) / r.base_rtt_ns;
            r.out_rtts = r.out_rtts < 0 ? rtts : std::min(r.out_rtts, rtts);
            out = true;
        }
        r.hosts_out += out;
    }
    // Goodput over 4 ticks: before the failure (its second half), its
    // lowest after it, and when it stays at or above 85 % of (N-1)/N of
    // before, until 95 % of the data is in.
    auto rate = [&](size_t i) {
        size_t j = i >= 4 ? i - 4 : 0;
        return i > j ? static_cast<double>(pl[i] - pl[j]) * 8e9 / (t[i] - t[j]) : 0.0;
    };
    r.before = r.after = r.dip = r.recover_rtts = kNaN;
    // Debugging: MR_SCALE_PLANES_TRACE=1, each tick's time (us) and goodput.
    if (std::getenv("MR_SCALE_PLANES_TRACE"))
        for (size_t i = 0; i < t.size(); i++)
            std::fprintf(stderr, "%.1f %.3f\n", t[i] / 1e3, rate(i) / r.capacity_bps);
    if (r.fail_plane >= 0) {
        const double tf = r.fail_ns;
        double before = 0;
        size_t nb = 0, i_end = 0;
        for (size_t i = 0; i < t.size(); i++) {
            if (t[i] >= tf / 2 && t[i] < tf) {
                before += rate(i);
                nb++;
            }
            if (static_cast<double>(pl[i]) <= 0.95 * static_cast<double>(all_bytes))
                i_end = i;
        }
        before = nb ? before / static_cast<double>(nb) : kNaN;
        const double target = 0.85 * (n - 1) / n * before;
        double low = std::numeric_limits<double>::max();
        int64_t last_bad = -1, first_after = -1;
        for (size_t i = 0; i <= i_end && i < t.size(); i++) {
            if (t[i] < tf)
                continue;
            if (first_after < 0)
                first_after = static_cast<int64_t>(i);
            low = std::min(low, rate(i));
            if (rate(i) < target)
                last_bad = static_cast<int64_t>(i);
        }
        r.before = before / r.capacity_bps;
        r.dip = first_after >= 0 ? low / before : kNaN;
        if (first_after < 0 || last_bad >= static_cast<int64_t>(i_end)) {
            r.recover_rtts = -1;
        } else {
            const size_t ok = static_cast<size_t>(std::max(first_after, last_bad + 1));
            r.recover_rtts = (t[ok] - tf) / static_cast<double>(tick);
            if (i_end > ok)
                r.after = static_cast<double>(pl[i_end] - pl[ok]) * 8e9 / (t[i_end] - t[ok]) /
                          r.capacity_bps;
        }
    }
    Simulator::Destroy();
    r.wall_s = WallSeconds(t0);
    return r;
}

// cfg.flows flows of cfg.flow_msgs messages each, flow f's k-th posted at
// (k flows + f) / flows periods, a period being one message of each flow
// at `load` of the port (0: all at once), from one host to another over
// a star whose port drops cfg.stream_loss at random: as one connection of
// `streams` streams (message m on stream m % streams, of flow m % flows),
// or as `conns` = flows connections of one stream each.
StreamsResult RunStreams(const Config &base, uint32_t conns, uint32_t streams, double load) {
    auto t0 = std::chrono::steady_clock::now();
    Config cfg = base;
    cfg.loss = base.stream_loss;
    StreamsResult r{};
    r.flows = cfg.flows;
    r.conns = conns;
    r.streams = streams;
    r.load = load;
    r.loss = cfg.loss;
    // CC on unless --cc off alone.
    r.cc = cfg.cc.size() != 1 || cfg.cc[0];
    Star star = BuildStar(cfg, Aqm::kRed, 1);
    r.base_rtt_ns = star.base_rtt;
    const TransportParams params = MakeParams(cfg, r.cc);
    MrReceiver rx(star.fabric->Node(star.rx_host), params, IngressRate(cfg),
                  ShareInterval(cfg, star.base_rtt));
    const Ipv4Address dst = star.fabric->HostAddress(star.rx_host);
    const uint32_t flows = cfg.flows, per_conn = flows * cfg.flow_msgs / conns;
    r.msgs = flows * cfg.flow_msgs;
    const double gap = load > 0 ? static_cast<double>(cfg.msg_bytes) * 8e9 /
                                      (load * static_cast<double>(cfg.rate_bps))
                                : 0; // between posts, of all flows
    // Connection c's message m: its flow, and when it is posted.
    auto flow_of = [&](uint32_t c, uint32_t m) { return conns == 1 ? m % flows : c; };
    auto post_of = [&](uint32_t c, uint32_t m) {
        const uint32_t g = conns == 1 ? m : m * flows + c;
        return static_cast<uint64_t>(std::llround(g * gap));
    };
    // Several connections of one host share its socket (as PlaneHost).
    PlaneHost host;
    if (conns > 1) {
        host.sock = Socket::CreateSocket(star.fabric->Node(star.tx_hosts[0]),
                                         UdpSocketFactory::GetTypeId());
        if (host.sock->Bind(InetSocketAddress(Ipv4Address::GetAny(), kRoceV2Port))) {
            std::fprintf(stderr, "mr-scale: cannot bind UDP port %u\n", kRoceV2Port);
            std::exit(2);
        }
        PlaneHost *me = &host;
        host.sock->SetRecvCallback(
            Callback<void, Ptr<Socket>>([me](Ptr<Socket> s) { me->Recv(s); }));
    }
    std::vector<std::unique_ptr<MrSender>> senders;
    for (uint32_t c = 0; c < conns; c++) {
        const uint32_t qpn = kFirstQpn + c;
        senders.push_back(std::make_unique<MrSender>(
            star.fabric->Node(star.tx_hosts[0]), params, dst, qpn, Hash32(cfg.seed, qpn),
            static_cast<uint64_t>(per_conn) * cfg.msg_bytes, NanoSeconds(0), nullptr, conns == 1));
        if (conns > 1)
            host.senders[qpn] = senders.back().get();
        senders.back()->SetStreams(streams);
        std::vector<uint64_t> post;
        for (uint32_t m = 0; m < per_conn; m++)
            post.push_back(post_of(c, m));
        senders.back()->SetPostTimes(std::move(post));
    }
    // Until every message is delivered (and its sender knows), or long after.
    const uint64_t tick = static_cast<uint64_t>(std::llround(star.base_rtt));
    std::function<void()> poll = [&]() {
        if (std::all_of(senders.begin(), senders.end(), [](const auto &s) { return s->Done(); })) {
            Simulator::Stop();
            return;
        }
        Simulator::Schedule(NanoSeconds(tick), poll);
    };
    Simulator::Schedule(NanoSeconds(tick), poll);
    const double ideal_ns = static_cast<double>(r.msgs) * static_cast<double>(cfg.msg_bytes) * 8e9 /
                            static_cast<double>(cfg.rate_bps);
    Simulator::Stop(
        NanoSeconds(static_cast<uint64_t>(std::max(
                        20 * ideal_ns, 2 * static_cast<double>(post_of(conns - 1, per_conn - 1)))) +
                    50'000'000));
    Simulator::Run();

    std::vector<double> lat;
    std::vector<double> first(flows, std::numeric_limits<double>::max()), last(flows, 0);
    double end = 0;
    for (uint32_t c = 0; c < conns; c++) {
        const MrSender &s = *senders[c];
        r.retransmits += s.Stats().retransmits;
        r.rtos += s.Stats().rtos;
        r.sender_state += s.StateBytes();
        r.receiver_state += rx.StateBytes(s.Qpn());
        if (const FlowStats *fs = rx.Flow(s.Qpn()))
            r.ahead += fs->ahead;
        const std::vector<int64_t> *done = rx.MsgDone(s.Qpn());
        for (uint32_t m = 0; m < per_conn; m++) {
            const uint32_t f = flow_of(c, m);
            const double post = static_cast<double>(post_of(c, m));
            first[f] = std::min(first[f], post);
            if (!done || m >= done->size() || (*done)[m] < 0) {
                last[f] = std::numeric_limits<double>::infinity();
                continue;
            }
            const double at = static_cast<double>((*done)[m]);
            if (cfg.verbose && at - post > 20 * star.base_rtt)
                std::fprintf(stderr, "qpn %u msn %u: posted %.1f us, delivered %.1f us\n", s.Qpn(),
                             m, post / 1e3, at / 1e3);
            r.done++;
            lat.push_back(at - post);
            last[f] = std::max(last[f], at);
            end = std::max(end, at);
        }
    }
    std::vector<double> rate;
    for (uint32_t f = 0; f < flows; f++)
        rate.push_back(static_cast<double>(cfg.flow_msgs) / (last[f] - first[f]));
    r.jain = Jain(rate);
    r.throughput = r.done == r.msgs && end > 0
                       ? static_cast<double>(r.msgs) * static_cast<double>(cfg.msg_bytes) * 8e9 /
                             end / static_cast<double>(cfg.rate_bps)
                       : kNaN;
    std::sort(lat.begin(), lat.end());
    auto pct = [&](double p) {
        if (lat.empty())
            return kNaN;
        const size_t i = static_cast<size_t>(std::ceil(p * static_cast<double>(lat.size()))) - 1;
        return lat[std::min(i, lat.size() - 1)] / 1e3;
    };
    double sum = 0;
    for (double l : lat)
        sum += l;
    r.mean_us = lat.empty() ? kNaN : sum / static_cast<double>(lat.size()) / 1e3;
    r.p50_us = pct(0.5);
    r.p99_us = pct(0.99);
    r.max_us = lat.empty() ? kNaN : lat.back() / 1e3;
    r.random_losses = star.fabric->GetLink(star.rx_link).fault[1]->Dropped();
    r.drops = star.fabric->Qdisc(star.rx_link, 0)->GetStats().nTotalDroppedPackets;
    Simulator::Destroy();
    r.wall_s = WallSeconds(t0);
    return r;
}

namespace {

// Runs the jobs in child processes, `parallel` at a time; a job whose
// process fails yields nullopt.
template <typename R>
std::vector<std::optional<R>> RunParallel(const std::vector<std::function<R()>> &jobs,
                                          uint32_t parallel, bool verbose) {
    static_assert(std::is_trivially_copyable_v<R>);
    struct Child {
        pid_t pid;
        int fd;
        size_t job;
    };
    std::vector<std::optional<R>> out(jobs.size());
    std::vector<Child> running;
    size_t next = 0;
    while (next < jobs.size() || !running.empty()) {
        while (running.size() < parallel && next < jobs.size()) {
            int fds[2];
            if (pipe(fds)) {
                std::perror("mr-scale: pipe");
                std::exit(2);
            }
            std::fflush(stdout);
            std::fflush(stderr);
            pid_t pid = fork();
            if (pid < 0) {
                std::perror("mr-scale: fork");
                std::exit(2);
            }
            if (pid == 0) {
                close(fds[0]);
                R r = jobs[next]();
                const char *p = reinterpret_cast<const char *>(&r);
                size_t left = sizeof(r);
                while (left) {
                    ssize_t n = write(fds[1], p, left);
                    if (n <= 0)
                        _exit(3);
                    p += n;
                    left -= static_cast<size_t>(n);
                }
                _exit(0);
            }
            close(fds[1]);
            running.push_back({pid, fds[0], next++});
        }
        // The result fits a pipe's buffer, so a child never blocks on it.
        int status;
        pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0) {
            std::perror("mr-scale: waitpid");
            std::exit(2);
        }
        auto it = std::find_if(running.begin(), running.end(),
                               [pid](const Child &c) { return c.pid == pid; });
        if (it == running.end())
            continue;
        R r;
        size_t got = 0;
        char *p = reinterpret_cast<char *>(&r);
        while (got < sizeof(r)) {
            ssize_t n = read(it->fd, p + got, sizeof(r) - got);
            if (n <= 0)
                break;
            got += static_cast<size_t>(n);
        }
        close(it->fd);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && got == sizeof(r))
            out[it->job] = r;
        else
            std::fprintf(stderr, "mr-scale: run %zu failed (status %d)\n", it->job, status);
        if (verbose)
            std::fprintf(stderr, "mr-scale: run %zu of %zu done\n", it->job + 1, jobs.size());
        running.erase(it);
    }
    return out;
}

const char *AqmName(Aqm a) {
    return a == Aqm::kRed ? "RED+ECN" : "tail drop";
}

std::string Fmt(const char *fmt, double v) {
    if (std::isnan(v))
        return "—";
    char buf[64];
    std::snprintf(buf, sizeof(buf), fmt, v);
    return buf;
}

std::string FmtSettle(double rtts) {
    return rtts < 0 ? "never" : Fmt("%.0f", rtts);
}

std::string FmtCount(uint64_t n, uint64_t of) {
    char buf[64];
    if (of)
        std::snprintf(buf, sizeof(buf), "%" PRIu64 " (%.2f %%)", n, 100.0 * n / of);
    else
        std::snprintf(buf, sizeof(buf), "%" PRIu64, n);
    return buf;
}

void PrintRow(const std::vector<std::string> &cells) {
    std::string line = "|";
    for (const auto &c : cells)
        line += " " + c + " |";
    std::puts(line.c_str());
}

void PrintHeader(const std::vector<std::string> &cells) {
    PrintRow(cells);
    std::string line = "|";
    for (size_t i = 0; i < cells.size(); i++)
        line += "---|";
    std::puts(line.c_str());
}

void PrintSetup(const Config &cfg) {
    const TransportParams p = MakeParams(cfg, true);
    std::printf(
        "Links %s (senders' %s; shares of %s), %.3g us each way; switch ports %s, RED marks %s-%s "
        "(p %.2g, "
        "then to 1 at twice that); MTU %u, %u paths, %s messages; the kernel's timing / %u: "
        "RTO %.3g-%.3g ms, tail probe from %.3g us, ACKs held up to %.3g us; timers tick %.3g "
        "ms, late up to %.3g ms.\n\n",
        FormatRate(static_cast<double>(cfg.rate_bps)).c_str(),
        FormatRate(static_cast<double>(HostRate(cfg))).c_str(),
        FormatRate(static_cast<double>(IngressRate(cfg))).c_str(), cfg.delay_ns / 1e3,
        FormatBytes(static_cast<double>(cfg.buffer_bytes)).c_str(),
        FormatBytes(static_cast<double>(cfg.red_min_bytes)).c_str(),
        FormatBytes(static_cast<double>(cfg.red_max_bytes)).c_str(), cfg.red_pmax, cfg.mtu,
        cfg.paths, FormatBytes(cfg.msg_bytes).c_str(), cfg.time_scale, p.timing.rto_min_ns / 1e6,
        p.timing.rto_max_ns / 1e6, p.timing.pto_min_ns / 1e3, p.ack_delay_ns / 1e3,
        cfg.timer_tick_ns / 1e6, cfg.timer_late_ns / 1e6);
}

std::vector<std::optional<IncastResult>> IncastRuns(const Config &cfg,
                                                    const std::vector<uint32_t> &senders) {
    std::vector<std::function<IncastResult()>> jobs;
    for (uint32_t n : senders)
        for (Aqm aqm : cfg.aqm)
            for (bool cc : cfg.cc)
                jobs.push_back([&cfg, n, aqm, cc]() { return RunIncast(cfg, n, cc, aqm); });
    return RunParallel(jobs, cfg.jobs, cfg.verbose);
}

void PrintIncast(const std::vector<std::optional<IncastResult>> &rows) {
    PrintHeader({"senders", "port", "CC", "hint settles (RTTs)", "rate settles (RTTs)",
                 "delivery settles (RTTs)", "Jain", "goodput / port", "peak queue", "mean queue",
                 "drops", "CE marks", "resends", "RTOs / deferred", "last done / ideal"});
    for (const auto &o : rows) {
        if (!o) {
            PrintRow({"run failed"});
            continue;
        }
        const IncastResult &r = *o;
        std::string failed = r.failed ? " (" + std::to_string(r.failed) + " gave up)" : "";
        PrintRow({std::to_string(r.senders), AqmName(r.aqm), r.cc ? "on" : "off",
                  r.cc ? FmtSettle(r.settle.hint_rtts) : "—",
                  r.cc ? FmtSettle(r.settle.rate_rtts) : "—",
                  FmtSettle(r.settle.delivered_rtts) + " (" + Fmt("%.0f", r.window_rtts) + ")",
                  Fmt("%.3f", r.jain), Fmt("%.3f", r.goodput), FormatBytes(r.peak_queue),
                  FormatBytes(r.mean_queue),
                  FmtCount(r.drops, r.qdisc_packets) +
                      (r.random_losses ? " + " + std::to_string(r.random_losses) + " random"
                                       : std::string()),
                  FmtCount(r.marks, 0), FmtCount(r.retransmits, 0),
                  FmtCount(r.rtos, 0) + " / " + FmtCount(r.deferred, 0),
                  Fmt("%.2f", r.done_ratio) + failed});
    }
}

std::string PerLink(const uint32_t *v, uint32_t n) {
    std::string s;
    for (uint32_t i = 0; i < n; i++)
        s += (i ? "/" : "") + std::to_string(v[i]);
    return s;
}

std::string PerLink(const uint64_t *v, uint32_t n) {
    std::string s;
    for (uint32_t i = 0; i < n; i++)
        s += (i ? "/" : "") + std::to_string(v[i]);
    return s;
}

std::string PerLinkKiB(const double *v, uint32_t n) {
    std::string s;
    for (uint32_t i = 0; i < n; i++)
        s += (i ? "/" : "") + Fmt("%.0f", v[i] / 1024);
    return s;
}

std::vector<std::optional<EcmpResult>> EcmpRuns(const Config &cfg, bool fail) {
    std::vector<std::function<EcmpResult()>> jobs;
    for (uint32_t l : cfg.links)
        for (bool cc : cfg.cc)
            jobs.push_back([&cfg, l, cc, fail]() { return RunEcmp(cfg, l, cc, fail); });
    return RunParallel(jobs, cfg.jobs, cfg.verbose);
}

} // namespace

void IncastTable(const Config &cfg) {
    auto t0 = std::chrono::steady_clock::now();
    auto rows = IncastRuns(cfg, cfg.senders);
    double rtt = 0;
    for (const auto &o : rows)
        if (o)
            rtt = o->base_rtt_ns;
    std::printf("### Incast: N senders -> 1 receiver through one switch port\n\n");
    PrintSetup(cfg);
    std::printf("Base RTT %.2f us. Each sender writes max(%s / N, %s). \"Settles\": RTTs until "
                "every sender stays within %.0f %% of its fair share: the hint it holds, the "
                "rate its windows and pacer allow, and the delivered rate, measured over the "
                "window in brackets (RTTs). Steady state: the second half of the time until the "
                "first sender completes.\n\n",
                rtt / 1e3, FormatBytes(static_cast<double>(cfg.incast_total_bytes)).c_str(),
                FormatBytes(static_cast<double>(cfg.incast_min_bytes)).c_str(),
                cfg.tolerance * 100);
    PrintIncast(rows);
    std::printf("\n(%zu runs, %.0f s)\n\n", rows.size(), WallSeconds(t0));
}

void EcmpTable(const Config &cfg) {
    auto t0 = std::chrono::steady_clock::now();
    auto rows = EcmpRuns(cfg, false);
    auto fails = EcmpRuns(cfg, true);
    std::printf("### ECMP: one connection over equal-cost spine links, hashed on the 5-tuple\n\n");
    PrintSetup(cfg);
    std::printf("Sender and receiver links %s; the spine links add up to %s. The connection "
                "writes %s.\n\n",
                FormatRate(2.0 * static_cast<double>(cfg.fabric_bps)).c_str(),
                FormatRate(static_cast<double>(cfg.fabric_bps)).c_str(),
                FormatBytes(static_cast<double>(cfg.ecmp_bytes)).c_str());
    PrintHeader({"links", "CC", "paths per link", "packets per link", "max / mean",
                 "peak queue per link (KiB)", "goodput / links", "done (us)", "drops", "CE marks",
                 "resends"});
    for (const auto &o : rows) {
        if (!o) {
            PrintRow({"run failed"});
            continue;
        }
        const EcmpResult &r = *o;
        PrintRow({std::to_string(r.links), r.cc ? "on" : "off", PerLink(r.paths_on_link, r.links),
                  PerLink(r.packets_on_link, r.links), Fmt("%.2f", r.spread),
                  PerLinkKiB(r.peak_queue, r.links), Fmt("%.3f", r.goodput), Fmt("%.0f", r.done_us),
                  FmtCount(r.drops, 0), FmtCount(r.marks, 0), FmtCount(r.retransmits, 0)});
    }
    std::printf("\nOne link (the one most of the connection's paths hash to) blackholes at 40 %% "
                "of the ideal "
                "transfer time. Recovery: goodput (over 4 RTTs) stays at or above 90 %% of "
                "(L-1)/L of what it was.\n\n");
    PrintHeader({"links", "CC", "failed link", "at (us)", "goodput dip", "recovers (RTTs)",
                 "blackholed", "moved by failover", "failovers", "RTOs", "done (us)",
                 "vs no failure"});
    for (size_t i = 0; i < fails.size(); i++) {
        if (!fails[i]) {
            PrintRow({"run failed"});
            continue;
        }
        const EcmpResult &r = *fails[i];
        std::string vs = i < rows.size() && rows[i]
                             ? Fmt("%+.1f %%", 100.0 * (r.done_us / rows[i]->done_us - 1))
                             : "—";
        PrintRow(
            {std::to_string(r.links), r.cc ? "on" : "off",
             std::to_string(r.failed_link) + " (" + std::to_string(r.paths_on_failed) + " paths)",
             Fmt("%.0f", r.fail_us), Fmt("%.2f", r.dip), FmtSettle(r.recover_rtts),
             FmtCount(r.blackholed, 0), FmtCount(r.moved, 0), FmtCount(r.failovers, 0),
             FmtCount(r.rtos, 0), Fmt("%.0f", r.done_us), vs});
    }
    std::printf("\n(%zu runs, %.0f s)\n\n", rows.size() + fails.size(), WallSeconds(t0));
}

void JoinLeaveTable(const Config &cfg) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::function<JoinLeaveResult()>> jobs;
    for (auto [b, e] : cfg.join_cases)
        for (bool cc : cfg.cc)
            jobs.push_back([&cfg, b = b, e = e, cc]() { return RunJoinLeave(cfg, b, e, cc); });
    auto rows = RunParallel(jobs, cfg.jobs, cfg.verbose);
    std::printf("### Join and leave: senders joining and leaving an incast\n\n");
    PrintSetup(cfg);
    std::printf("Base senders run throughout; the extra ones join after a phase (at least 200 "
                "RTTs) and leave one phase later (the event is their last completion). Port: "
                "%s. \"Settles\" as in the incast table, judged until the next event.\n\n",
                AqmName(cfg.aqm.empty() ? Aqm::kRed : cfg.aqm.front()));
    PrintHeader({"senders", "CC", "at start: hint / rate / delivered (RTTs)",
                 "join: hint / rate / delivered", "Jain joined", "leave: hint / rate / delivered",
                 "Jain after", "drops"});
    for (const auto &o : rows) {
        if (!o) {
            PrintRow({"run failed"});
            continue;
        }
        const JoinLeaveResult &r = *o;
        auto both = [&](const Settle &s) {
            return (r.cc ? FmtSettle(s.hint_rtts) + " / " + FmtSettle(s.rate_rtts)
                         : std::string("— / —")) +
                   " / " + FmtSettle(s.delivered_rtts);
        };
        PrintRow({std::to_string(r.base) + " + " + std::to_string(r.extra), r.cc ? "on" : "off",
                  both(r.before), both(r.join), Fmt("%.3f", r.jain_joined), both(r.leave),
                  Fmt("%.3f", r.jain_left), FmtCount(r.drops, 0)});
    }
    std::printf("\n(%zu runs, %.0f s; delivered-rate window up to %.0f RTTs)\n\n", rows.size(),
                WallSeconds(t0), rows.empty() || !rows.back() ? 0.0 : rows.back()->window_rtts);
}

namespace {

std::vector<std::optional<PlanesResult>> PlanesRuns(const Config &cfg) {
    std::vector<std::function<PlanesResult()>> jobs;
    for (uint32_t n : cfg.planes)
        for (Pattern pat : cfg.patterns)
            for (uint32_t c : cfg.plane_conns) {
                // One connection is the same whoever else there is.
                if (c == 1 && pat != Pattern::kOne &&
                    std::find(cfg.patterns.begin(), cfg.patterns.end(), Pattern::kOne) !=
                        cfg.patterns.end())
                    continue;
                jobs.push_back([&cfg, n, c, pat]() { return RunPlanes(cfg, n, c, pat); });
            }
    return RunParallel(jobs, cfg.jobs, cfg.verbose);
}

} // namespace

void PlanesTable(const Config &cfg) {
    auto t0 = std::chrono::steady_clock::now();
    auto rows = PlanesRuns(cfg);
    std::printf("### Planes: hosts with one NIC per plane, a plane failing\n\n");
    PrintSetup(cfg);
    std::printf("Each plane is a switch of its own; each host has a %s link to each, and one "
                "address every plane reaches. The connections into a host write %s per plane of it "
                "together (at least %s each). ",
                FormatRate(static_cast<double>(cfg.rate_bps)).c_str(),
                FormatBytes(static_cast<double>(cfg.plane_bytes)).c_str(),
                FormatBytes(static_cast<double>(cfg.incast_min_bytes)).c_str());
    if (cfg.fail_plane >= 0)
        std::printf(
            "Plane %d blackholes, both ways, at %.0f %% of the ideal transfer time%s. "
            "Goodput: payload over the sum of the planes' payload rates at the "
            "receivers, over 4 RTTs; *before*: the second half before the failure; "
            "*recovers*: RTTs until it stays at or above 85 %% of (N-1)/N of before, "
            "until 95 %% of the data is in; *after*: from then until 95 %%. *Out*: RTTs "
            "until the first host takes the plane out of service (hosts that did; how often a "
            "host took it back when an answer came on it, mr_plane_rx()); *false outs*: planes a "
            "host took out that had not failed, or before the failure.",
            cfg.fail_plane, 100 * cfg.fail_at,
            cfg.restore_at > cfg.fail_at ? Fmt(", back at %.0f %%", 100 * cfg.restore_at).c_str()
                                         : ", never back");
    std::printf("\n\n");
    PrintHeader({"planes", "pattern", "conns (hosts)", "base RTT (us)", "goodput / planes",
                 "before", "after", "(N-1)/N", "dip", "out (RTTs)", "false outs", "recovers (RTTs)",
                 "abandoned paths", "RTOs", "failovers", "blackholed", "drops", "done / ideal"});
    for (const auto &o : rows) {
        if (!o) {
            PrintRow({"run failed"});
            continue;
        }
        const PlanesResult &r = *o;
        PrintRow({std::to_string(r.planes), PatternName(r.pattern),
                  std::to_string(r.conns) + " (" + std::to_string(r.hosts) + ")",
                  Fmt("%.2f", r.base_rtt_ns / 1e3), Fmt("%.3f", r.goodput), Fmt("%.3f", r.before),
                  Fmt("%.3f", r.after), Fmt("%.3f", (r.planes - 1.0) / r.planes),
                  Fmt("%.2f", r.dip),
                  r.fail_plane < 0 ? "—"
                  : r.out_rtts < 0
                      ? "never"
                      : Fmt("%.0f", r.out_rtts) + " (" + std::to_string(r.hosts_out) +
                            (r.plane_ups ? ", back " + std::to_string(r.plane_ups) : "") + ")",
                  FmtCount(r.false_outs, 0), r.fail_plane < 0 ? "—" : FmtSettle(r.recover_rtts),
                  FmtCount(r.abandoned, 0), FmtCount(r.rtos, 0), FmtCount(r.failovers, 0),
                  FmtCount(r.blackholed, 0), FmtCount(r.drops, 0),
                  Fmt("%.2f", r.done_ratio) +
                      (r.failed ? " (" + std::to_string(r.failed) + " failed)" : "")});
    }
    std::printf("\n(%zu runs, %.0f s)\n\n", rows.size(), WallSeconds(t0));
}

namespace {

// The three ways to carry the flows, at each load.
std::vector<std::function<StreamsResult()>> StreamsJobs(const Config &cfg,
                                                        const std::vector<double> &loads) {
    std::vector<std::function<StreamsResult()>> jobs;
    for (double load : loads) {
        jobs.push_back([&cfg, load]() { return RunStreams(cfg, 1, cfg.flows, load); });
        jobs.push_back([&cfg, load]() { return RunStreams(cfg, cfg.flows, 1, load); });
        jobs.push_back([&cfg, load]() { return RunStreams(cfg, 1, 1, load); });
    }
    return jobs;
}

std::string StreamsLayout(const StreamsResult &r) {
    return r.conns == 1
               ? "1 QP x " + std::to_string(r.streams) + (r.streams == 1 ? " stream" : " streams")
               : std::to_string(r.conns) + " QPs x 1 stream";
}

} // namespace

void StreamsTable(const Config &cfg) {
    auto t0 = std::chrono::steady_clock::now();
    auto rows = RunParallel(StreamsJobs(cfg, cfg.stream_loads), cfg.jobs, cfg.verbose);
    std::printf("### Streams: one QP of %u streams, %u QPs, one QP of one stream\n\n", cfg.flows,
                cfg.flows);
    PrintSetup(cfg);
    std::printf("%u flows of %u messages of %s each, from one host to another through one "
                "port that drops %.3g %% at random (toward the receiver); flow f's k-th message "
                "is posted at (k %u + f) / %u of a period in which every flow posts one at the "
                "load's share of the port (load 0: all at once). Completion: post to delivery at "
                "the responder; Jain of the flows' goodput, each from its first post to its last "
                "delivery; throughput: all payload over the last delivery; state: the engines' "
                "structs, paths, the most send rings held at once and the streams' array at the "
                "senders, the most the responders held at the receiver.\n\n",
                cfg.flows, cfg.flow_msgs, FormatBytes(cfg.msg_bytes).c_str(), 100 * cfg.stream_loss,
                cfg.flows, cfg.flows);
    PrintHeader({"carried as", "load", "throughput / port", "Jain", "mean (us)", "p50 (us)",
                 "p99 (us)", "max (us)", "delivered (ahead)", "random losses", "resends", "RTOs",
                 "sender state", "receiver state"});
    for (const auto &o : rows) {
        if (!o) {
            PrintRow({"run failed"});
            continue;
        }
        const StreamsResult &r = *o;
        PrintRow({StreamsLayout(r), r.load > 0 ? Fmt("%.2f", r.load) : "all at once",
                  Fmt("%.3f", r.throughput), Fmt("%.3f", r.jain), Fmt("%.2f", r.mean_us),
                  Fmt("%.1f", r.p50_us), Fmt("%.1f", r.p99_us), Fmt("%.1f", r.max_us),
                  std::to_string(r.done) + " / " + std::to_string(r.msgs) + " (" +
                      std::to_string(r.ahead) + ")",
                  FmtCount(r.random_losses, 0), FmtCount(r.retransmits, 0), FmtCount(r.rtos, 0),
                  FormatBytes(static_cast<double>(r.sender_state)),
                  FormatBytes(static_cast<double>(r.receiver_state))});
    }
    std::printf("\n(%zu runs, %.0f s)\n\n", rows.size(), WallSeconds(t0));
}

namespace {

// One asserted property: prints a GoogleTest-like line.
struct Checker {
    int passed = 0, failed = 0;
    void Expect(const std::string &name, bool ok, const std::string &got) {
        std::printf("[ %s ] %s (%s)\n", ok ? "    OK" : "FAILED", name.c_str(), got.c_str());
        (ok ? passed : failed)++;
    }
    // A run that did not finish fails every property asked of it.
    template <typename R> const R *Run(const std::optional<R> &r, const std::string &name) {
        if (!r)
            Expect(name + ": the run completes", false, "its process failed");
        return r ? &*r : nullptr;
    }
};

} // namespace

// The short run of `make check`: one sender alone (the model's own
// baseline), an 8-sender incast with RED/ECN and with tail drop, CC on and
// off, and one connection over 4 equal-cost links, without and with a
// link failure. The bounds are the guest-test margins where it has
// them; each property fails if congestion control or the model breaks.
int Check(const Config &base) {
    auto t0 = std::chrono::steady_clock::now();
    Config cfg = base;
    cfg.incast_total_bytes = std::min<uint64_t>(cfg.incast_total_bytes, 32ull << 20);
    cfg.ecmp_bytes = std::min<uint64_t>(cfg.ecmp_bytes, 48ull << 20);
    Config lossy = cfg;
    lossy.loss = 0.01;
    std::vector<std::function<IncastResult()>> incasts = {
        [&]() { return RunIncast(cfg, 1, false, Aqm::kRed); },
        [&]() { return RunIncast(cfg, 1, true, Aqm::kRed); },
        [&]() { return RunIncast(lossy, 1, true, Aqm::kRed); },
        [&]() { return RunIncast(cfg, 8, true, Aqm::kRed); },
        [&]() { return RunIncast(cfg, 8, false, Aqm::kRed); },
        [&]() { return RunIncast(cfg, 8, true, Aqm::kTailDrop); },
        [&]() { return RunIncast(cfg, 8, false, Aqm::kTailDrop); },
        [&]() { return RunIncast(cfg, 32, true, Aqm::kRed); },
    };
    std::vector<std::function<EcmpResult()>> ecmps = {
        [&]() { return RunEcmp(cfg, 4, true, false); },
        [&]() { return RunEcmp(cfg, 4, true, true); },
    };
    // 4 planes, one connection, plane 1 blackholed at 40 %.
    Config pcfg = cfg;
    pcfg.plane_bytes = 8ull << 20;
    pcfg.fail_plane = 1;
    pcfg.fail_at = 0.4;
    pcfg.restore_at = 0;
    std::vector<std::function<PlanesResult()>> planes = {
        [&]() { return RunPlanes(pcfg, 4, 1, Pattern::kOne); },
    };
    // 64 flows at 0.9 of the port, 1 % lost: as 64 streams, 64 QPs, one.
    Config scfg = cfg;
    scfg.flow_msgs = std::min<uint32_t>(cfg.flow_msgs, 16);
    auto in = RunParallel(incasts, cfg.jobs, cfg.verbose);
    auto ec = RunParallel(ecmps, cfg.jobs, cfg.verbose);
    auto pl = RunParallel(planes, cfg.jobs, cfg.verbose);
    auto st = RunParallel(StreamsJobs(scfg, {0.9}), cfg.jobs, cfg.verbose);
    Checker c;
    auto drop_pct = [](const IncastResult &r) {
        return r.qdisc_packets
                   ? 100.0 * static_cast<double>(r.drops) / static_cast<double>(r.qdisc_packets)
                   : 0.0;
    };
    if (const IncastResult *r = c.Run(in[0], "incast 1 alone")) {
        c.Expect("incast 1, RED, CC off: a lone sender fills the port, goodput >= 0.95",
                 r->goodput >= 0.95, Fmt("%.3f", r->goodput));
        c.Expect("incast 1, RED, CC off: nothing dropped", r->drops == 0, FmtCount(r->drops, 0));
    }
    if (const IncastResult *r = c.Run(in[1], "incast 1 CC on"), *l = c.Run(in[2], "incast 1 lossy");
        r && l)
        c.Expect("incast 1, CC on, 1 % random loss: >= 0.9 of the loss-free goodput",
                 l->goodput >= 0.9 * r->goodput, Fmt("%.3f", l->goodput / r->goodput));
    const IncastResult *red_on = c.Run(in[3], "incast 8 RED CC on");
    if (const IncastResult *r = red_on) {
        c.Expect("incast 8, RED, CC on: Jain >= 0.9", r->jain >= 0.9, Fmt("%.3f", r->jain));
        // Counted from the start: the first hints come a round trip in,
        // and 8 first flights of 2 packets fit the port's round trip.
        c.Expect("incast 8, RED, CC on: hints settle within 4 RTTs",
                 r->settle.hint_rtts >= 0 && r->settle.hint_rtts <= 4,
                 FmtSettle(r->settle.hint_rtts) + " RTTs");
        c.Expect("incast 8, RED, CC on: rates settle within 6 RTTs",
                 r->settle.rate_rtts >= 0 && r->settle.rate_rtts <= 6,
                 FmtSettle(r->settle.rate_rtts) + " RTTs");
        c.Expect("incast 8, RED, CC on: the start queues at most a quarter of the buffer",
                 r->peak_queue <= static_cast<double>(cfg.buffer_bytes) / 4,
                 FormatBytes(r->peak_queue));
        c.Expect("incast 8, RED, CC on: goodput >= 0.85 of the port", r->goodput >= 0.85,
                 Fmt("%.3f", r->goodput));
        c.Expect("incast 8, RED, CC on: <= 1 % of packets dropped", drop_pct(*r) <= 1.0,
                 Fmt("%.2f %%", drop_pct(*r)));
        c.Expect("incast 8, RED, CC on: every sender completes within 1.3 x ideal",
                 !r->failed && r->done_ratio <= 1.3, Fmt("%.2f", r->done_ratio));
    }
    if (const IncastResult *r = c.Run(in[5], "incast 8 tail drop CC on")) {
        c.Expect("incast 8, tail drop, CC on: Jain >= 0.9", r->jain >= 0.9, Fmt("%.3f", r->jain));
        c.Expect("incast 8, tail drop, CC on: goodput >= 0.7 of the port", r->goodput >= 0.7,
                 Fmt("%.3f", r->goodput));
        c.Expect("incast 8, tail drop, CC on: <= 5 % of packets dropped", drop_pct(*r) <= 5.0,
                 Fmt("%.2f %%", drop_pct(*r)));
    }
    if (const IncastResult *r = c.Run(in[4], "incast 8 RED CC off"); r && red_on)
        c.Expect("incast 8, RED, CC on: the queue stays short, mean <= a quarter of the "
                 "buffer, where CC off fills it",
                 red_on->mean_queue <= static_cast<double>(cfg.buffer_bytes) / 4 &&
                     r->peak_queue > static_cast<double>(cfg.buffer_bytes) * 3 / 4,
                 "mean " + FormatBytes(red_on->mean_queue) + ", CC off peak " +
                     FormatBytes(r->peak_queue));
    const IncastResult *td_off = c.Run(in[6], "incast 8 tail drop CC off");
    const IncastResult *td_on = in[5] ? &*in[5] : nullptr;
    if (td_on && td_off)
        c.Expect("incast 8, tail drop: CC on drops less than a fifth of CC off's",
                 5 * td_on->drops < td_off->drops,
                 std::to_string(td_on->drops) + " vs " + std::to_string(td_off->drops));
    // 32 first flights overfilled the port with 16-packet initial windows.
    if (const IncastResult *r = c.Run(in[7], "incast 32 RED CC on")) {
        c.Expect("incast 32, RED, CC on: nothing dropped", r->drops == 0, FmtCount(r->drops, 0));
        c.Expect("incast 32, RED, CC on: hints settle within 16 RTTs",
                 r->settle.hint_rtts >= 0 && r->settle.hint_rtts <= 16,
                 FmtSettle(r->settle.hint_rtts) + " RTTs");
        c.Expect("incast 32, RED, CC on: Jain >= 0.9, goodput >= 0.9 of the port",
                 r->jain >= 0.9 && r->goodput >= 0.9,
                 Fmt("%.3f", r->jain) + ", " + Fmt("%.3f", r->goodput));
    }
    if (const EcmpResult *r = c.Run(ec[0], "ecmp 4")) {
        c.Expect("ecmp 4 links, CC on: goodput >= 0.8 of the links' sum", r->goodput >= 0.8,
                 Fmt("%.3f", r->goodput));
        c.Expect("ecmp 4 links, CC on: no spine port drops", r->drops == 0, FmtCount(r->drops, 0));
        c.Expect("ecmp 4 links, CC on: packets per link max / mean <= 1.25", r->spread <= 1.25,
                 Fmt("%.2f", r->spread) + ", paths " + PerLink(r->paths_on_link, r->links));
    }
    if (const EcmpResult *r = c.Run(ec[1], "ecmp 4 failure")) {
        c.Expect("ecmp 4 links, a link fails, CC on: the transfer completes, paths fail over",
                 r->done_us > 0 && r->failovers > 0 && r->blackholed > 0,
                 std::to_string(r->failovers) + " failovers, " + std::to_string(r->blackholed) +
                     " blackholed");
    }
    if (const PlanesResult *r = c.Run(pl[0], "planes 4")) {
        c.Expect("planes 4, one connection: goodput >= 0.9 of the planes' sum before the failure",
                 r->before >= 0.9, Fmt("%.3f", r->before));
        // A path's second RTO in a row takes a plane out (one may be
        // congestion): the probe, the RTO and its doubled backoff.
        c.Expect("planes 4, a plane blackholed: the sender's host takes it out within 100 RTTs "
                 "(plane.c on a path's second RTO), its paths move, no other plane goes",
                 r->out_rtts >= 0 && r->out_rtts <= 100 && r->abandoned > 0 && !r->false_outs,
                 FmtSettle(r->out_rtts) + " RTTs, " + std::to_string(r->abandoned) +
                     " paths abandoned, " + std::to_string(r->false_outs) + " other planes out");
        c.Expect("planes 4, a plane blackholed: the transfer completes",
                 !r->failed && r->goodput > 0, Fmt("%.2f x ideal", r->done_ratio));
    }
    const StreamsResult *ms = c.Run(st[0], "streams 1 QP x streams");
    const StreamsResult *qps = c.Run(st[1], "streams QPs");
    const StreamsResult *one = c.Run(st[2], "streams 1 QP x 1 stream");
    if (ms && one) {
        // The sender does the same either way (the order byte changes no
        // packet's fate), so a stream can only deliver sooner.
        c.Expect("streams, 1 % loss: every message delivered; with streams some ahead of an "
                 "older one (another stream's loss), with one stream none",
                 ms->done == ms->msgs && one->done == one->msgs && ms->ahead > 0 && !one->ahead,
                 std::to_string(ms->ahead) + " ahead, " + std::to_string(one->ahead));
        c.Expect("streams, 1 % loss: mean completion below one stream's, p99 and max no higher",
                 ms->mean_us < one->mean_us && ms->p99_us <= one->p99_us &&
                     ms->max_us <= one->max_us,
                 Fmt("%.2f", ms->mean_us) + " vs " + Fmt("%.2f", one->mean_us) + " us");
        c.Expect("streams, 1 QP x streams: throughput >= 0.95 of the offered load",
                 ms->throughput >= 0.95 * ms->load, Fmt("%.3f", ms->throughput));
    }
    if (ms && qps)
        c.Expect("streams: 1 QP x streams holds under a tenth of the QPs' transport state",
                 10 * (ms->sender_state + ms->receiver_state) <
                     qps->sender_state + qps->receiver_state,
                 FormatBytes(static_cast<double>(ms->sender_state + ms->receiver_state)) + " vs " +
                     FormatBytes(static_cast<double>(qps->sender_state + qps->receiver_state)));
    std::printf("(%.0f s)\n%d passed, %d failed\n", WallSeconds(t0), c.passed, c.failed);
    return c.failed;
}

} // namespace mrscale
