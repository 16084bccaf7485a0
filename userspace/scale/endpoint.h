// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// MetaRoCE endpoints over ns-3 UDP sockets, driven by the kernel's own
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
// carry back. The model skips the HELLO handshake (proto/hello.c) and
// draws both from the QPN, so the two ends agree: never 0, one per
// direction, different for every connection.
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

// Counters of one sender, read by the experiments.
struct SenderStats {
    uint64_t packets = 0;     // every transmission
    uint64_t retransmits = 0; // of which resends: SACK, probe, RTO, moved
    uint64_t sack_resends = 0;
    uint64_t probes = 0;
    uint64_t rtos = 0;
    uint64_t deferred = 0; // timers that fired early and waited
    uint64_t failovers = 0;
    uint64_t moved = 0;     // packets moved off failed paths
    uint64_t ce_acked = 0;  // CE marks reported back
    uint64_t decreases = 0; // window decreases mr_cc_ack() reported
    int64_t start_ns = -1;
    int64_t done_ns = -1;
    bool failed = false; // retry budget exhausted
};

class MrSender {
public:
    // Writes `bytes` to `dst` as messages of params.msg_bytes, from `start`.
    MrSender(ns3::Ptr<ns3::Node> node, const TransportParams &params, ns3::Ipv4Address dst,
             uint32_t qpn, uint32_t seed, uint64_t bytes, ns3::Time start);
    MrSender(const MrSender &) = delete;
    MrSender &operator=(const MrSender &) = delete;

    // Start no new message after the current ones: the sender leaves.
    void Leave();
    bool Done() const { return stats_.done_ns >= 0 || stats_.failed; }
    bool Started() const { return stats_.start_ns >= 0; }
    uint32_t Qpn() const { return qpn_; }
    const SenderStats &Stats() const { return stats_; }
    const mr_paths &Paths() const { return engine_.s.ps; }
    const mr_cc_conn &Cc() const { return engine_.s.cc; }
    // The rate congestion control lets the connection send at, bit/s of UDP
    // payload: the packets its windows let be in flight over its SRTT, and
    // its pacing rate (window gap, hint) if that is slower.
    double RateBps() const;
    // Debugging: the transport's state, to stderr.
    void Dump() const;

    // The sender engine's environment (proto/sender.h), which endpoint.cc
    // binds to these.
    static MrSender &Of(mr_sender *s);
    int Xmit(uint32_t id, uint32_t psn, const mr_tx_pkt &tp, uint8_t flags);
    bool Stale(const mr_tx_pkt &tp) const;
    void RetryExceeded();
    void FailedOver(uint32_t id);
    void Event(mr_sender_event ev, uint32_t arg);
    // The requester engine's environment (proto/requester.h).
    static MrSender &Of(mr_requester *r);
    uint32_t Posted() const;
    uint32_t MsgLen(uint32_t msn) const;

private:
    // The engine, and the way back from it to its host: standard layout,
    // so a pointer to `s` is one to the Engine.
    struct Engine {
        mr_sender s;
        MrSender *host;
    };
    struct ReqEngine {
        mr_requester r;
        MrSender *host;
    };
    void Start();
    void OpenSocket(uint32_t id);
    bool AllDone() const;
    void Push();
    void Sync();
    void PaceOver();
    void RecvAck(ns3::Ptr<ns3::Socket> sock);
    void OnAck(const mr_pkt &pkt);
    void Timer();
    void Finish();
    static uint64_t Now();

    ns3::Ptr<ns3::Node> node_;
    TransportParams params_;
    ns3::Ipv4Address dst_;
    uint32_t qpn_;
    ConnTags tags_;
    uint64_t bytes_;
    uint32_t msgs_;

    Engine engine_{};
    ReqEngine req_{};
    std::vector<mr_tx_path> tx_path_;       // the engine's paths
    std::vector<mr_requeue> requeue_slots_; // mr_requeue_slots() of them
    std::vector<ns3::Ptr<ns3::Socket>> sock_;
    std::vector<ns3::Ptr<ns3::Socket>> old_socks_; // of restarted paths
    ns3::Ptr<ns3::Socket> ack_sock_;
    bool leaving_ = false;
    ns3::EventId timer_;
    uint64_t timer_at_ = 0;
    ns3::EventId pace_;
    HostTimers host_timers_;
    SenderStats stats_;
};

// Counters of one sender at the receiver.
struct FlowStats {
    uint64_t udp_bytes = 0;     // UDP payload of every data packet that arrived
    uint64_t payload_bytes = 0; // new payload: goodput
    uint64_t packets = 0;
    uint64_t duplicates = 0;
    uint64_t ce = 0;
};

class MrReceiver {
public:
    // capacity_bps: its ingress link, which the shares divide. The senders'
    // table is the kernel's (proto/share_table.c); a share round comes at the
    // first ACK 4 packet gaps at the even share of the active senders after
    // the last, at most every min_interval_ns (see Share()).
    MrReceiver(ns3::Ptr<ns3::Node> node, const TransportParams &params, uint64_t capacity_bps,
               uint64_t min_interval_ns);
    MrReceiver(const MrReceiver &) = delete;
    MrReceiver &operator=(const MrReceiver &) = delete;

    // Flow of sender QPN qpn, created by its first packet; nullptr before.
    const FlowStats *Flow(uint32_t qpn) const;
    // Senders mr_share_split() counted as active in its last call.
    uint32_t ActiveFlows() const { return table_.t.stats.active; }
    uint64_t AcksSent() const { return acks_; }
    uint64_t ShareCalls() const { return share_calls_; }

    // A sender's connection; its engines' environments (proto/receiver.h,
    // proto/responder.h) are bound to these in endpoint.cc.
    struct Conn {
        // The engine, and the way back: standard layout, so a pointer to
        // `r` is one to the Engine.
        struct Engine {
            mr_receiver r;
            Conn *conn;
        } engine{};
        // The responder engine, and the way back.
        struct Resp {
            mr_responder r;
            Conn *conn;
        } resp{};
        MrReceiver *owner;
        uint32_t qpn;
        ConnTags tags;
        ns3::Ipv4Address peer;
        ns3::EventId acker; // the engine's held ACKs (mr_receiver_expiry())
        uint64_t acker_at = 0;
        // share.c's struct mr_conn_share: its entry in the table, -1: none
        uint64_t share_bytes = 0; // new bytes since the last round
        uint32_t hint = 0;        // kbit/s; 0: none
        int32_t slot = -1;
        FlowStats stats;
        Conn() = default;
        Conn(const Conn &) = delete;
        Conn &operator=(const Conn &) = delete;
        ~Conn() { mr_responder_free(&resp.r); }
    };
    static Conn &Of(mr_receiver *r);
    static Conn &Of(mr_responder *r) { return *reinterpret_cast<Conn::Resp *>(r)->conn; }
    void SendControl(const Conn &c, const mr_pkt &pkt, uint16_t sport);
    uint32_t Hint(const Conn &c);
    uint64_t AckDelay() const { return params_.ack_delay_ns; }

    // The senders' table (proto/share.h) and the way back from its
    // environment: standard layout, so a pointer to `t` is one to the Table.
    struct Table {
        mr_share_table t;
        MrReceiver *owner;
    };
    static MrReceiver &Of(mr_share_table *t) { return *reinterpret_cast<Table *>(t)->owner; }
    // The sender of table entry i (share.c: owner[i]).
    Conn *&FlowConn(uint32_t i) { return flow_conn_[i]; }

private:
    void Recv(ns3::Ptr<ns3::Socket> sock);
    void OnData(Conn &c, const mr_pkt &pkt, uint16_t sport, bool ce, uint32_t bytes);
    void SyncAcker(Conn &c);
    void AckTimer(Conn *c);
    void Share(uint64_t now);
    uint32_t ShareCapacity() const;
    uint64_t ShareInterval(uint32_t active) const;

    ns3::Ptr<ns3::Socket> sock_;
    ns3::Ptr<ns3::Socket> ack_raw_;
    TransportParams params_;
    uint64_t capacity_bps_;
    uint64_t min_interval_ns_;
    HostTimers host_timers_;
    uint64_t share_interval_ns_; // until the next round (Share())
    Table table_{};
    std::vector<mr_share_flow> flows_;
    std::vector<Conn *> flow_conn_; // entry -> its sender (share.c: owner)
    uint64_t share_calls_ = 0;
    std::unordered_map<uint32_t, std::unique_ptr<Conn>> conns_;
    uint64_t acks_ = 0;
};

} // namespace mrscale
