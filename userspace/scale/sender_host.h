// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The model's sender: the kernel's requester and sender engines with ns-3
// sockets and events as their host (sender_host.cc).
#pragma once

#include "endpoint.h"
#include "planes.h"

#include <memory>

namespace mrscale {

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
    uint64_t hellos = 0;    // HELLOs sent
    int64_t start_ns = -1;
    int64_t done_ns = -1;
    bool failed = false; // retry budget exhausted
};

class MrSender {
public:
    // Writes `bytes` to `dst` as messages of params.msg_bytes, from `start`.
    // planes: its host's planes (nullptr: one network, no planes). Without
    // an ACK socket of its own, a host's socket hands it its packets
    // (Receive()), as several endpoints on one host share UDP port 4791.
    MrSender(ns3::Ptr<ns3::Node> node, const TransportParams &params, ns3::Ipv4Address dst,
             uint32_t qpn, uint32_t seed, uint64_t bytes, ns3::Time start,
             HostPlanes *planes = nullptr, bool ack_socket = true);
    MrSender(const MrSender &) = delete;
    MrSender &operator=(const MrSender &) = delete;
    ~MrSender();

    // Start no new message after the current ones: the sender leaves.
    void Leave();
    // Before its start: a connection of n streams (mr_requester_streams()),
    // message msn on stream stream[msn] (empty: msn % n).
    void SetStreams(uint32_t n, std::vector<uint16_t> stream = {});
    // Before its start: message msn is posted at time post_ns[msn] (not
    // decreasing; empty: every message at the start).
    void SetPostTimes(std::vector<uint64_t> post_ns);
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

    // The sender engine's environment (proto/sender.h), which sender_host.cc
    // binds to these.
    static MrSender &Of(mr_sender *s);
    int Xmit(uint32_t id, uint32_t psn, const mr_tx_pkt &tp, uint8_t flags);
    bool Stale(const mr_tx_pkt &tp) const;
    mr_tx_ring *RingGet();
    void RingPut(mr_tx_ring *r);
    // Rings its paths hold now, and at most at once (the engine's state).
    uint32_t RingsOut() const { return rings_out_; }
    uint32_t RingsPeak() const { return rings_peak_; }
    // Bytes of its engines' state: their structs, its paths, the most rings
    // its paths held at once, its streams' array.
    uint64_t StateBytes() const {
        return sizeof(mr_sender) + sizeof(mr_requester) + tx_path_.size() * sizeof(mr_tx_path) +
               rings_peak_ * sizeof(mr_tx_ring) + stream_last_.size() * sizeof(uint32_t);
    }
    void RetryExceeded();
    void FailedOver(uint32_t id);
    void Event(mr_sender_event ev, uint32_t id, uint32_t arg);
    // A packet for this sender (an ACK or a HELLO) from its host's socket.
    void Receive(ns3::Ptr<ns3::Packet> p);
    // The requester engine's environment (proto/requester.h).
    static MrSender &Of(mr_requester *r);
    uint32_t Posted() const;
    uint32_t MsgLen(uint32_t msn) const;
    void Msg(uint32_t msn, mr_req_msg *m) const;
    void MsgStart(uint32_t msn, uint32_t rsn, uint8_t order);
    uint32_t Streams() const { return req_.r.nstreams ? req_.r.nstreams : 1; }

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
    void SendOn(uint32_t id, ns3::Ptr<ns3::Packet> p, int plane);
    int Route(int arrived, uint32_t path);
    void ReqPlanes();
    void SendHello();
    void OnHello(const mr_pkt &pkt);
    void OpenSocket(uint32_t id);
    bool AllDone() const;
    void Push();
    void PostDue();
    void Sync();
    void PaceOver();
    void RecvAck(ns3::Ptr<ns3::Socket> sock);
    void OnAck(const mr_pkt &pkt);
    void Timer();
    void Finish();
    static uint64_t Now();
    static uint64_t HelloNow();

    ns3::Ptr<ns3::Node> node_;
    TransportParams params_;
    ns3::Ipv4Address dst_;
    uint32_t qpn_;
    ConnTags tags_;
    uint64_t bytes_;
    uint32_t msgs_;
    // The application's posts: messages posted so far, and when the rest are.
    uint32_t posted_;
    std::vector<uint64_t> post_ns_;
    // req.c's per-message state the requester hands its host
    // (mr_requester_env_start()): whether it started, its RSN and order
    // byte, and its stream; the streams' last messages (stream_last).
    struct MsgState {
        bool started = false;
        uint8_t order = MR_ORDER_PREV;
        uint16_t stream = 0;
        uint32_t rsn = 0;
    };
    std::vector<MsgState> msg_;
    std::vector<uint32_t> stream_last_;

    Engine engine_{};
    ReqEngine req_{};
    std::vector<mr_tx_path> tx_path_; // the engine's paths
    // the rings they borrow while they have packets out, for reuse
    std::vector<std::unique_ptr<mr_tx_ring>> free_rings_;
    uint32_t rings_out_ = 0, rings_peak_ = 0;
    std::vector<ns3::Ptr<ns3::Socket>> sock_;
    std::vector<ns3::Ptr<ns3::Socket>> old_socks_; // of restarted paths
    ns3::Ptr<ns3::Socket> ack_sock_;
    bool leaving_ = false;
    ns3::EventId timer_;
    uint64_t timer_at_ = 0;
    ns3::EventId pace_;
    mr_hello hello_{}; // handshake.c: the tag handshake, its first hint
    ns3::EventId hello_timer_;
    HostTimers host_timers_;
    SenderStats stats_;
    // The xport's plane record (req.c, tx.c, comp.c): the plane each path
    // last sent on (0xff: none yet), the first PSN it sent there, and the
    // planes' generation last looked at.
    HostPlanes *planes_;
    mr_plane_track track_{}; // the planes its paths' packets left on
    uint32_t plane_gen_ = 0;
};

} // namespace mrscale
