// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The model's receiver: the kernel's responder engine (proto/responder.c),
// receiver engine (proto/receiver.c) and share table
// (proto/share_table.c), with ns-3 as their host (the functions each
// comment names are the kernel's side of the same boundary).
#include "receiver_host.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

using namespace ns3;

namespace mrscale {

MrReceiver::MrReceiver(Ptr<ns3::Node> node, const TransportParams &params, uint64_t capacity_bps,
                       uint64_t min_interval_ns, HostPlanes *planes, bool socket)
    : planes_(planes), params_(params), capacity_bps_(capacity_bps),
      min_interval_ns_(min_interval_ns), host_timers_(params, 0x5eed) {
    if (socket) {
        sock_ = Socket::CreateSocket(node, UdpSocketFactory::GetTypeId());
        if (sock_->Bind(InetSocketAddress(Ipv4Address::GetAny(), kRoceV2Port))) {
            std::fprintf(stderr, "mr-scale: cannot bind UDP port %u\n", kRoceV2Port);
            std::exit(2);
        }
        sock_->SetIpRecvTos(true);
        sock_->SetRecvCallback(MakeCallback(&MrReceiver::Recv, this));
    }
    // ACKs go from the acknowledged packets' source port to port 4791
    // (tx.c: mr_tx_control()), so they hash onto the fabric as the kernel's
    // do. No UDP socket can send from thousands of ports cheaply, so they
    // go through a raw socket with our own UDP header.
    ack_raw_ = Socket::CreateSocket(node, Ipv4RawSocketFactory::GetTypeId());
    ack_raw_->SetAttribute("Protocol", UintegerValue(UdpL4Protocol::PROT_NUMBER));
    ack_raw_->ShutdownRecv();
    // As many senders as the kernel's device takes (MR_MAX_QP).
    flows_.resize(kMaxShareFlows);
    flow_conn_.resize(kMaxShareFlows);
    mr_share_table_init(&table_.t, flows_.data(), kMaxShareFlows);
    table_.owner = this;
    share_interval_ns_ = ShareInterval(0);
}

const FlowStats *MrReceiver::Flow(uint32_t qpn) const {
    auto it = conns_.find(qpn);
    return it == conns_.end() ? nullptr : &it->second->stats;
}

const std::vector<int64_t> *MrReceiver::MsgDone(uint32_t qpn) const {
    auto it = conns_.find(qpn);
    return it == conns_.end() ? nullptr : &it->second->msg_done;
}

uint64_t MrReceiver::StateBytes(uint32_t qpn) const {
    auto it = conns_.find(qpn);
    if (it == conns_.end())
        return 0;
    return sizeof(mr_receiver) + sizeof(mr_responder) + it->second->resp_peak;
}

// What mr_responder_advance() delivered (resp.c completes what it
// delivers: a WRITE without a receive has nothing else to show): the
// messages "MSN done" passed since @msn_before, and those of other
// streams delivered ahead of it, still in the window.
void MrReceiver::Conn::Delivered(uint32_t msn_before) {
    const mr_responder *r = &resp.r;
    const int64_t now = static_cast<int64_t>(NowNs());
    auto mark = [&](uint32_t msn) {
        if (msn >= msg_done.size())
            msg_done.resize(msn + 1, -1);
        if (msg_done[msn] < 0)
            msg_done[msn] = now;
    };
    for (uint32_t msn = msn_before; msn != r->msn_done; msn++)
        mark(msn);
    for (uint32_t i = 0; r->msg && i < MR_MSG_WINDOW; i++) {
        const mr_rx_msg &m = r->msg[(r->msn_done + i) % MR_MSG_WINDOW];
        if (m.used && m.delivered && m.msn == r->msn_done + i &&
            (m.msn >= msg_done.size() || msg_done[m.msn] < 0)) {
            mark(m.msn);
            stats.ahead++;
        }
    }
}

void MrReceiver::Recv(Ptr<Socket> sock) {
    Ptr<Packet> p;
    Address from;
    while ((p = sock->RecvFrom(from))) {
        // receive.c: mr_plane_arrived(), for every packet of the device.
        ArrivedTag arrived;
        if (planes_ && p->PeekPacketTag(arrived))
            planes_->Arrived(arrived.Plane());
        Receive(p, from);
    }
}

void MrReceiver::Receive(Ptr<Packet> p, const Address &from) {
    SocketIpTosTag tos;
    bool ce = p->RemovePacketTag(tos) && (tos.GetTos() & 0x3) == kCe;
    ArrivedTag arrived;
    const int plane = planes_ && p->PeekPacketTag(arrived) ? arrived.Plane() : -1;
    mr_pkt pkt;
    if (!DecodePacket(p, &pkt))
        return;
    InetSocketAddress src = InetSocketAddress::ConvertFrom(from);
    if (pkt.base.opcode == MR_OP_HELLO) {
        params_.cpu->Run(
            [this, pkt, src, plane] { OnHello(ConnOf(pkt.base.qpn, src), pkt, src, plane); });
        return;
    }
    if (pkt.base.opcode != MR_OP_WRITE && pkt.base.opcode != MR_OP_SEND)
        return;
    if (pkt.base.tag != ConnTagsOf(pkt.base.qpn).to_receiver) // handshake.c: not the peer's
        return;
    params_.cpu->Run(
        [this, pkt, src, ce, size = p->GetSize(), plane] { Take(pkt, src, ce, size, plane); });
}

// receive.c: the connection a packet is for, opened by its first (the
// model's QPs exist from the first packet on, in RTR).
MrReceiver::Conn &MrReceiver::ConnOf(uint32_t qpn, const InetSocketAddress &src) {
    auto &slot = conns_[qpn];
    if (!slot) {
        slot = std::make_unique<Conn>();
        slot->qpn = qpn;
        slot->tags = ConnTagsOf(qpn);
        slot->peer = src.GetIpv4();
        slot->owner = this;
        slot->engine.conn = slot.get();
        slot->resp.conn = slot.get();
        mr_receiver_start(&slot->engine.r, 0); // ack.c: mr_ack_init()
        mr_responder_init(&slot->resp.r, params_.mtu, false);
        mr_hello_init(&slot->hello, slot->tags.to_receiver); // handshake.c: at RTR
    }
    return *slot;
}

// receive.c: a packet of the peer's: its path's ACKs go back on the plane
// it came by.
void MrReceiver::Take(const mr_pkt &pkt, const InetSocketAddress &src, bool ce, uint32_t bytes,
                      int plane) {
    Conn &c = ConnOf(pkt.base.qpn, src);
    if (plane >= 0 && pkt.base.path < MR_PATH_MAX)
        c.plane_arrived[pkt.base.path] = static_cast<int8_t>(plane);
    OnData(c, pkt, src.GetPort(), ce, bytes);
}

// handshake.c: mr_handshake_rcv(): a HELLO is answered, with this end's
// first hint for the sender, which joins the share table.
void MrReceiver::OnHello(Conn &c, const mr_pkt &pkt, const InetSocketAddress &src, int plane) {
    mr_pkt reply;
    if (plane >= 0 && pkt.base.path < MR_PATH_MAX)
        c.plane_arrived[pkt.base.path] = static_cast<int8_t>(plane);
    if (!mr_hello_rcv(&c.hello, &pkt, std::max<uint64_t>(NowNs(), 1), &reply))
        return;
    if (params_.cc.enabled)
        Join(c, NowNs());
    reply.hello.rate_hint = Hint(c);
    SendControl(c, reply, src.GetPort());
}

// share.c: mr_share_join(): a sender joins the table; until the next round
// its ACKs carry the newcomer's share.
void MrReceiver::Join(Conn &c, uint64_t now) {
    uint32_t hint = 0;
    if (c.slot >= 0)
        return;
    const int32_t slot = mr_share_table_join(&table_.t, ShareCapacity(), now, &hint);
    if (slot >= 0) {
        flow_conn_[slot] = &c;
        c.slot = slot;
        c.hint = hint;
    }
}

// resp.c: mr_resp_rcv(): the responder engine admits the packet, the
// receiver engine records it on its path, the responder places it.
void MrReceiver::OnData(Conn &c, const mr_pkt &pkt, uint16_t sport, bool ce, uint32_t bytes) {
    mr_receiver *r = &c.engine.r;
    const uint64_t now = NowNs();
    c.stats.packets++;
    c.stats.udp_bytes += bytes;
    mr_rx in{};
    in.pkt = &pkt;
    in.new_pkt = mr_receiver_fresh(r, &pkt);
    mr_responder_admit(&c.resp.r, &in);
    if (in.kind == MR_RX_DROP)
        return;
    bool ack_now = false;
    if (mr_receiver_arrival(r, &pkt, sport, ce, &ack_now) != MR_SACK_NEW) {
        mr_responder_unadmit(&c.resp.r, &in);
        SyncAcker(c);
        return;
    }
    // ack.c: mr_ack_arrival(): a new packet counts towards its share
    // (share.c: mr_share_rx()), and its first joins the table, whose ACKs
    // carry the newcomer's share until the next round.
    c.share_bytes += pkt.hdr_len + pkt.payload_len;
    c.share_signals.packets++;
    c.share_signals.limited += !!(pkt.base.flags & MR_FLAG_WINDOW_LIMITED);
    Join(c, now);
    bool complete = false, dup = false;
    if (in.kind == MR_RX_MESSAGE)
        mr_responder_place(&c.resp.r, &in, &complete, &dup);
    // A packet no completion will acknowledge (a slice that landed before,
    // of a message complete) is acknowledged now.
    if (dup || in.kind == MR_RX_OLD) {
        c.stats.duplicates++;
        ack_now = true;
    }
    if (complete) {
        const uint32_t before = c.resp.r.msn_done;
        mr_responder_advance(&c.resp.r, false);
        c.Delivered(before);
        mr_receiver_ack_all(r, now);
    } else {
        mr_receiver_coalesce(r, pkt.base.path, pkt.base.psn, ack_now, now);
    }
    SyncAcker(c);
}

// timers.c: the acker, at the engine's expiry.
void MrReceiver::SyncAcker(Conn &c) {
    const uint64_t due = mr_receiver_expiry(&c.engine.r);
    if (!due || (c.acker.IsRunning() && due == c.acker_at))
        return;
    c.acker.Cancel();
    c.acker_at = due;
    c.acker = Simulator::Schedule(NanoSeconds(Until(host_timers_.HighRes(due))),
                                  &MrReceiver::AckTimer, this, &c);
}

void MrReceiver::AckTimer(Conn *c) {
    mr_receiver_timeout(&c->engine.r, NowNs());
    SyncAcker(*c);
}

MrReceiver::Conn &MrReceiver::Of(mr_receiver *r) {
    return *reinterpret_cast<Conn::Engine *>(r)->conn;
}

// tx.c: mr_tx_control(): an ACK or NAK of the engine, from the
// acknowledged packets' port.
void MrReceiver::SendControl(const Conn &c, const mr_pkt &pkt, uint16_t sport) {
    mr_pkt out = pkt;
    out.base.qpn = c.qpn;
    if (out.base.opcode != MR_OP_HELLO) // a HELLO names the tag it knows
        out.base.tag = c.tags.to_sender;
    Ptr<Packet> p = BuildPacket(out);
    UdpHeader udp;
    udp.SetSourcePort(sport);
    udp.SetDestinationPort(kRoceV2Port);
    p->AddHeader(udp);
    if (planes_) {
        // tx.c: mr_tx_control(): an ACK goes back on the plane its path's
        // data came by; a HELLO tries the planes in turn.
        int arrived = -1;
        uint32_t path = out.base.path;
        if (out.base.opcode == MR_OP_HELLO)
            path = c.hello.n_sent;
        else if (out.base.path < MR_PATH_MAX)
            arrived = c.plane_arrived[out.base.path];
        p->AddPacketTag(PlaneTag(static_cast<uint8_t>(planes_->Route(arrived, path))));
    }
    InetSocketAddress to(c.peer, 0);
    to.SetTos(kEct0);
    params_.cpu->Run([sock = ack_raw_, p, to] { sock->SendTo(p, 0, to); });
    acks_++;
}

// The capacity the shares divide, kbit/s: the link's payload rate, less 1/32
// so that a queue the first flight built drains (share.c's 1/16 covers both
// in the guest).
uint32_t MrReceiver::ShareCapacity() const {
    return mr_cc_hint_from_bps(PayloadRate(capacity_bps_, params_.mtu) / 32 * 31);
}

// share.c: mr_share_hint(). With CC off a receiver sends no hint
// (protocol.rst); else the first ACK after the round's interval computes
// for all.
uint32_t MrReceiver::Hint(const Conn &c) {
    if (!params_.cc.enabled)
        return 0;
    const uint64_t now = NowNs();
    if (mr_share_table_due(&table_.t, now, share_interval_ns_))
        Share(now);
    return mr_share_table_hint(table_.t.even_kbps, c.hint);
}

// The interval after a round that found @active senders. mr_share_split()
// wants one in which a sender at its share sends several packets: 4 full
// packets at the even share of the active senders, at most 10 ms, at least
// min_interval. The kernel's is share_interval_us.
uint64_t MrReceiver::ShareInterval(uint32_t active) const {
    const uint64_t pkt_bits =
        8ull * (MR_BASE_HDR_LEN + MR_WRITE_HDR_LEN + params_.mtu + kLinkOverhead);
    const uint64_t even = 4 * pkt_bits * 1'000'000'000ull * std::max<uint32_t>(1, active) /
                          std::max<uint64_t>(1, capacity_bps_);
    return std::max<uint64_t>(min_interval_ns_, std::min<uint64_t>(even, 10'000'000));
}

// A share round (proto/share_table.c): every sender's share of the ingress
// capacity, which its ACKs carry until the next round; idle senders leave.
void MrReceiver::Share(uint64_t now) {
    mr_share_table_round(&table_.t, &params_.cc, ShareCapacity(), now);
    share_calls_++;
    share_interval_ns_ = ShareInterval(table_.t.stats.active);
}

} // namespace mrscale

// The receiver engine's environment (proto/receiver.h): the model's side.
using mrscale::MrReceiver;

void mr_receiver_env_send(struct mr_receiver *r, struct mr_pkt *pkt, u16 sport) {
    MrReceiver::Conn &c = MrReceiver::Of(r);
    c.owner->SendControl(c, *pkt, sport);
}

u32 mr_receiver_env_msn_done(struct mr_receiver *r) {
    return MrReceiver::Of(r).resp.r.msn_done;
}

u32 mr_receiver_env_hint(struct mr_receiver *r) {
    MrReceiver::Conn &c = MrReceiver::Of(r);
    return c.owner->Hint(c);
}

u64 mr_receiver_env_ack_delay(struct mr_receiver *r) {
    return MrReceiver::Of(r).owner->AckDelay();
}

void mr_receiver_env_event(struct mr_receiver *r, enum mr_receiver_event ev, u32) {
    MrReceiver::Conn &c = MrReceiver::Of(r);
    c.stats.duplicates += ev == MR_REV_DUPLICATE;
    c.stats.ce += ev == MR_REV_CE;
    c.share_signals.marks += ev == MR_REV_CE;
    c.share_signals.gaps += ev == MR_REV_OUT_OF_ORDER;
}

// The responder engine's environment (proto/responder.h): the model's
// side. Its memory takes every WRITE and only counts the new bytes; no
// message consumes a receive, no READ or atomic comes.
bool mr_responder_env_posted(struct mr_responder *, u32) {
    return true;
}

// What it borrows is counted (the engine's state), its size kept in front.
constexpr size_t kAllocHead = alignof(std::max_align_t);

void *mr_responder_env_alloc(struct mr_responder *r, u32 bytes) {
    auto *p = static_cast<char *>(std::calloc(1, kAllocHead + bytes));
    if (!p)
        return nullptr;
    *reinterpret_cast<u32 *>(p) = bytes;
    MrReceiver::Conn &c = MrReceiver::Of(r);
    c.resp_bytes += bytes;
    c.resp_peak = std::max(c.resp_peak, c.resp_bytes);
    return p + kAllocHead;
}

void mr_responder_env_free(struct mr_responder *r, void *p) {
    if (!p)
        return;
    char *head = static_cast<char *>(p) - kAllocHead;
    MrReceiver::Of(r).resp_bytes -= *reinterpret_cast<u32 *>(head);
    std::free(head);
}

void *mr_responder_env_map_alloc(struct mr_responder *, u32 bytes) {
    return std::calloc(1, bytes);
}

void mr_responder_env_map_free(struct mr_responder *, void *p, u32) {
    std::free(p);
}

int mr_responder_env_write(struct mr_responder *r, const struct mr_rx *rx) {
    MrReceiver::Of(r).stats.payload_bytes += rx->pkt->payload_len;
    return 0;
}

int mr_responder_env_scatter(struct mr_responder *, const struct mr_rx *, u32) {
    return 0;
}

u8 mr_responder_env_check_rd(struct mr_responder *, const struct mr_rx_msg *) {
    return MR_NAK_INVALID_REQUEST;
}

u8 mr_responder_env_atomic(struct mr_responder *, const struct mr_rx_msg *, u64 *) {
    return MR_NAK_INVALID_REQUEST;
}

bool mr_responder_env_complete_recv(struct mr_responder *, const struct mr_rx_msg *, u8) {
    return true;
}

void mr_responder_env_retire_recv(struct mr_responder *) {}

void mr_responder_env_refuse_late(struct mr_responder *, u32, u8, u8) {}

void mr_responder_env_event(struct mr_responder *, enum mr_responder_event, u32) {}

// The share table's environment (proto/share.h): the model's side, as
// share.c keeps it (entry -> its sender's connection).
static MrReceiver::Conn &ShareOwner(struct mr_share_table *t, u32 i) {
    return *MrReceiver::Of(t).FlowConn(i);
}

u64 mr_share_table_env_bytes(struct mr_share_table *t, u32 i) {
    MrReceiver::Conn &c = ShareOwner(t, i);
    const uint64_t bytes = c.share_bytes;
    c.share_bytes = 0;
    return bytes;
}

void mr_share_table_env_signals(struct mr_share_table *t, u32 i, struct mr_share_signals *sig) {
    MrReceiver::Conn &c = ShareOwner(t, i);
    sig->packets += c.share_signals.packets;
    sig->marks += c.share_signals.marks;
    sig->gaps += c.share_signals.gaps;
    sig->limited += c.share_signals.limited;
    c.share_signals = {};
}

void mr_share_table_env_hint(struct mr_share_table *t, u32 i, u32 hint_kbps) {
    ShareOwner(t, i).hint = hint_kbps;
}

void mr_share_table_env_gone(struct mr_share_table *t, u32 i) {
    MrReceiver::Conn &c = ShareOwner(t, i);
    c.slot = -1;
    c.hint = 0;
}

void mr_share_table_env_moved(struct mr_share_table *t, u32 from, u32 to) {
    MrReceiver &rx = MrReceiver::Of(t);
    rx.FlowConn(to) = rx.FlowConn(from);
    rx.FlowConn(to)->slot = static_cast<int32_t>(to);
}
