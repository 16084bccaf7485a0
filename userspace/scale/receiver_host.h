// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The model's receiver: the kernel's responder, receiver and share-table
// engines with ns-3 sockets and events as their host (receiver_host.cc).
#pragma once

#include "endpoint.h"
#include "planes.h"

namespace mrscale {

// Counters of one sender at the receiver.
struct FlowStats {
    uint64_t udp_bytes = 0;     // UDP payload of every data packet that arrived
    uint64_t payload_bytes = 0; // new payload: goodput
    uint64_t packets = 0;
    uint64_t duplicates = 0;
    uint64_t ce = 0;
    uint64_t ahead = 0; // messages delivered before an older one (streams)
};

class MrReceiver {
public:
    // capacity_bps: its ingress link, which the shares divide. The senders'
    // table is the kernel's (proto/share_table.c); a share round comes at the
    // first ACK 4 packet gaps at the even share of the active senders after
    // the last, at most every min_interval_ns (see Share()).
    // planes: its host's (nullptr: none); without a socket of its own, its
    // host's hands it its packets (Receive()).
    MrReceiver(ns3::Ptr<ns3::Node> node, const TransportParams &params, uint64_t capacity_bps,
               uint64_t min_interval_ns, HostPlanes *planes = nullptr, bool socket = true);
    MrReceiver(const MrReceiver &) = delete;
    MrReceiver &operator=(const MrReceiver &) = delete;

    // Flow of sender QPN qpn, created by its first packet; nullptr before.
    const FlowStats *Flow(uint32_t qpn) const;
    // When the responder delivered each message of sender qpn (by MSN; -1:
    // not yet); nullptr before its first packet.
    const std::vector<int64_t> *MsgDone(uint32_t qpn) const;
    // Bytes of its engines' state for sender qpn: their structs and the
    // most the responder held at once (its window, slice maps, responses).
    uint64_t StateBytes(uint32_t qpn) const;
    // Senders mr_share_split() counted as active in its last call.
    uint32_t ActiveFlows() const { return table_.t.stats.active; }
    uint64_t AcksSent() const { return acks_; }
    uint64_t ShareCalls() const { return share_calls_; }
    // A packet for this receiver (data or a HELLO) from its host's socket,
    // with its IP TOS tag.
    void Receive(ns3::Ptr<ns3::Packet> p, const ns3::Address &from);

    // A sender's connection; its engines' environments (proto/receiver.h,
    // proto/responder.h) are bound to these in receiver_host.cc.
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
        uint64_t share_bytes = 0;         // new bytes since the last round
        mr_share_signals share_signals{}; // and what they met
        uint32_t hint = 0;                // kbit/s; 0: none
        int32_t slot = -1;
        mr_hello hello{}; // handshake.c: the tag handshake
        // receive.c: the plane each path's packets last came by (-1: none)
        std::array<int8_t, MR_PATH_MAX> plane_arrived;
        FlowStats stats;
        // when the responder delivered each message, by MSN (-1: not yet)
        std::vector<int64_t> msg_done;
        uint64_t resp_bytes = 0, resp_peak = 0; // what the responder holds
        Conn() { plane_arrived.fill(-1); }
        void Delivered(uint32_t msn_before);
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
    Conn &ConnOf(uint32_t qpn, const ns3::InetSocketAddress &src);
    void Take(const mr_pkt &pkt, const ns3::InetSocketAddress &src, bool ce, uint32_t bytes,
              int plane);
    void OnHello(Conn &c, const mr_pkt &pkt, const ns3::InetSocketAddress &src, int plane);
    void Join(Conn &c, uint64_t now);
    void OnData(Conn &c, const mr_pkt &pkt, uint16_t sport, bool ce, uint32_t bytes);
    void SyncAcker(Conn &c);
    void AckTimer(Conn *c);
    void Share(uint64_t now);
    uint32_t ShareCapacity() const;
    uint64_t ShareInterval(uint32_t active) const;

    ns3::Ptr<ns3::Socket> sock_;
    ns3::Ptr<ns3::Socket> ack_raw_;
    HostPlanes *planes_;
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
