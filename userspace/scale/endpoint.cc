// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The MetaRoCE sender and receiver of the scale model: the kernel's sender
// and receiver engines with ns-3 as their host (the functions each comment
// names are the kernel's side of the same boundary). All protocol state
// lives in the kernel's structs and is changed only by the kernel's
// functions.
#include "endpoint.h"

#include "config.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

using namespace ns3;

namespace mrscale {
namespace {

// The simulation's time in the engines' unit, ns.
uint64_t NowNs() {
    return static_cast<uint64_t>(Simulator::Now().GetNanoSeconds());
}

// Nanoseconds from now until the absolute time `at` (0 if past).
uint64_t Until(uint64_t at) {
    const uint64_t now = NowNs();
    return at > now ? at - now : 0;
}

// A MetaRoCE header as mr_wire_encode() wrote it, in front of the payload.
// The payload itself is ns-3's zero-filled virtual data: no copies.
class WireHeader : public Header {
public:
    WireHeader() = default;
    WireHeader(const uint8_t *bytes, uint32_t len) : len_(len) {
        std::copy(bytes, bytes + len, bytes_.begin());
    }
    static TypeId GetTypeId() {
        static TypeId tid =
            TypeId("mrscale::WireHeader").SetParent<Header>().SetGroupName("MetaRoCE");
        return tid;
    }
    TypeId GetInstanceTypeId() const override { return GetTypeId(); }
    uint32_t GetSerializedSize() const override { return len_; }
    void Serialize(Buffer::Iterator it) const override { it.Write(bytes_.data(), len_); }
    uint32_t Deserialize(Buffer::Iterator it) override {
        it.Read(bytes_.data(), len_);
        return len_;
    }
    void Print(std::ostream &os) const override { os << "metaroce " << len_ << " bytes"; }

private:
    std::array<uint8_t, MR_MAX_HDR_LEN> bytes_{};
    uint32_t len_ = 0;
};

Ptr<Packet> BuildPacket(const mr_pkt &pkt) {
    uint8_t hdr[MR_MAX_HDR_LEN];
    int n = mr_wire_encode(&pkt, hdr, sizeof(hdr));
    if (n < 0) {
        // Everything we build must pass the peer's decoder: a model bug.
        std::fprintf(stderr, "mr-scale: mr_wire_encode: error %d (opcode %u)\n", -n,
                     pkt.base.opcode);
        std::abort();
    }
    Ptr<Packet> p = Create<Packet>(pkt.payload_len);
    p->AddHeader(WireHeader(hdr, static_cast<uint32_t>(n)));
    return p;
}

// Decode a received packet's headers with the kernel's decoder. It reads
// the headers only, so only they are copied out of the packet.
bool DecodePacket(Ptr<const Packet> p, mr_pkt *pkt) {
    static std::array<uint8_t, MR_MAX_HDR_LEN + MR_WIRE_MAX_PAYLOAD> buf{};
    uint32_t size = p->GetSize();
    if (size > buf.size())
        return false;
    p->CopyData(buf.data(), std::min<uint32_t>(size, MR_MAX_HDR_LEN));
    return mr_wire_decode(buf.data(), size, pkt) == 0;
}

} // namespace

// splitmix64 of the QPN and the direction: well mixed, and 0 only for one
// input in 2^64, which is moved off 0.
ConnTags ConnTagsOf(uint32_t qpn) {
    auto mix = [](uint64_t x) {
        x += 0x9e3779b97f4a7c15ull;
        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
        x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
        x ^= x >> 31;
        return x ? x : 1;
    };
    return {mix(2ull * qpn), mix(2ull * qpn + 1)};
}

uint64_t MrSender::Now() {
    return NowNs();
}

MrSender::MrSender(Ptr<ns3::Node> node, const TransportParams &params, Ipv4Address dst,
                   uint32_t qpn, uint32_t seed, uint64_t bytes, Time start)
    : node_(node), params_(params), dst_(dst), qpn_(qpn), tags_(ConnTagsOf(qpn)), bytes_(bytes),
      msgs_(static_cast<uint32_t>((bytes + params.msg_bytes - 1) / params.msg_bytes)),
      tx_path_(params.paths), requeue_slots_(mr_requeue_slots(params.paths)), sock_(params.paths),
      host_timers_(params, seed) {
    // Every MetaRoCE packet, ACKs too, goes to UDP port 4791.
    ack_sock_ = Socket::CreateSocket(node_, UdpSocketFactory::GetTypeId());
    if (ack_sock_->Bind(InetSocketAddress(Ipv4Address::GetAny(), kRoceV2Port))) {
        std::fprintf(stderr, "mr-scale: cannot bind UDP port %u\n", kRoceV2Port);
        std::exit(2);
    }
    ack_sock_->SetRecvCallback(MakeCallback(&MrSender::RecvAck, this));
    // req.c: mr_req_start().
    engine_.host = this;
    req_.host = this;
    mr_requester_start(&req_.r, params.mtu, MR_RNR_RETRY_INFINITE);
    mr_sender_setup(&engine_.s, tx_path_.data(), params.paths, requeue_slots_.data(), kFailAfter,
                    &params_.timing, &params_.cc);
    if (mr_sender_start(&engine_.s, 0, false, seed, FullPacketBytes(params.mtu))) {
        std::fprintf(stderr, "mr-scale: mr_sender_start: bad path count %u\n", params.paths);
        std::exit(2);
    }
    for (uint32_t i = 0; i < params.paths; i++)
        OpenSocket(i);
    Simulator::Schedule(start, &MrSender::Start, this);
}

MrSender &MrSender::Of(mr_sender *s) {
    return *reinterpret_cast<Engine *>(s)->host;
}

MrSender &MrSender::Of(mr_requester *r) {
    return *reinterpret_cast<ReqEngine *>(r)->host;
}

void MrSender::OpenSocket(uint32_t id) {
    const uint16_t sport = mr_sender_path_port(&engine_.s, id);
    if (sock_[id])
        old_socks_.push_back(sock_[id]);
    sock_[id] = Socket::CreateSocket(node_, UdpSocketFactory::GetTypeId());
    if (sock_[id]->Bind(InetSocketAddress(Ipv4Address::GetAny(), sport))) {
        std::fprintf(stderr, "mr-scale: cannot bind source port %u\n", sport);
        std::exit(2);
    }
    sock_[id]->ShutdownRecv(); // ACKs come to port 4791
}

void MrSender::Start() {
    stats_.start_ns = static_cast<int64_t>(Now());
    if (!msgs_)
        Finish();
    Push();
}

void MrSender::Leave() {
    leaving_ = true;
    // Nothing started and unfinished: done now.
    if (!Done() && AllDone())
        Finish();
}

uint32_t MrSender::MsgLen(uint32_t msn) const {
    uint64_t off = static_cast<uint64_t>(msn) * params_.msg_bytes;
    return static_cast<uint32_t>(std::min<uint64_t>(params_.msg_bytes, bytes_ - off));
}

// The messages from msn_head on: all not yet complete, or for a sender
// that leaves, only those started (it finishes the one it is in).
uint32_t MrSender::Posted() const {
    const mr_requester *r = &req_.r;
    if (leaving_)
        return r->msn_send - r->msn_head + !!r->send_off;
    return msgs_ - r->msn_head;
}

// Every message posted is complete.
bool MrSender::AllDone() const {
    const mr_requester *r = &req_.r;
    return r->peer_done == r->msn_head && !Posted();
}

// req.c: mr_req_push().
void MrSender::Push() {
    if (!Started() || Done())
        return;
    mr_requester_push(&req_.r, &engine_.s, 1, Now());
    Sync();
}

// timers.c: mr_timers_sync(): the pacer when a paced packet waits, and one
// timer for all paths at the engine's earliest deadline.
void MrSender::Sync() {
    const mr_sender *s = &engine_.s;
    const uint64_t now = Now();
    if (Done())
        return;
    if (s->pace_ns && !pace_.IsRunning())
        pace_ = Simulator::Schedule(NanoSeconds(Until(host_timers_.HighRes(s->pace_ns))),
                                    &MrSender::PaceOver, this);
    const uint64_t next = mr_sender_expiry(s);
    if (!next || (timer_.IsRunning() && timer_at_ <= next))
        return;
    timer_.Cancel();
    timer_at_ = next;
    timer_ = Simulator::Schedule(NanoSeconds(Until(host_timers_.Tick(now, next))), &MrSender::Timer,
                                 this);
}

// timers.c: mr_timers_pace().
void MrSender::PaceOver() {
    mr_sender_pace_over(&engine_.s);
    Push();
}

// timers.c: mr_timers_fire().
void MrSender::Timer() {
    timer_at_ = 0;
    mr_sender_timeout(&engine_.s, Now());
    Push();
}

void MrSender::RecvAck(Ptr<Socket> sock) {
    Ptr<Packet> p;
    while ((p = sock->Recv())) {
        mr_pkt pkt;
        // handshake.c: a packet without our tag is not the peer's.
        if (!DecodePacket(p, &pkt) || pkt.base.opcode != MR_OP_ACK || pkt.base.qpn != qpn_ ||
            pkt.base.tag != tags_.to_sender)
            continue;
        OnAck(pkt);
    }
}

// comp.c: mr_comp_ack_rcv(), then its completions (mr_comp_complete()).
void MrSender::OnAck(const mr_pkt &pkt) {
    if (Done() || mr_sender_ack(&engine_.s, &pkt, Now()))
        return; // reordered, of an abandoned epoch, or bogus
    if (Done())
        return;
    mr_requester *r = &req_.r;
    mr_requester_peer_done(r, pkt.ack.msn_done);
    while (r->msn_head != r->peer_done)
        mr_requester_retire(r, false);
    if (AllDone()) {
        Finish();
        return;
    }
    Push();
}

// tx.c: mr_tx_send(): the requester engine writes the header of a WRITE
// of --msg-size bytes, or of the empty SEND that closes the PSN hole of a
// packet whose message completed meanwhile.
int MrSender::Xmit(uint32_t id, uint32_t psn, const mr_tx_pkt &tp, uint8_t flags) {
    mr_pkt pkt{};
    pkt.base.path = static_cast<u8>(id);
    pkt.base.epoch = mr_sender_path_epoch(&engine_.s, id);
    pkt.base.qpn = qpn_;
    pkt.base.psn = psn;
    pkt.base.tag = tags_.to_receiver;
    pkt.base.flags = flags;
    mr_req_wire w{};
    w.opcode = MR_OP_WRITE;
    w.rkey = 0x100;
    w.length = MsgLen(tp.msn);
    pkt.payload_len = mr_requester_header(&req_.r, &tp, Stale(tp) ? nullptr : &w, &pkt);
    Ptr<Packet> packet = BuildPacket(pkt);
    const uint32_t bytes = packet->GetSize();
    // ns-3's UDP takes the TOS byte from the address, not the socket.
    InetSocketAddress to(dst_, kRoceV2Port);
    to.SetTos(kEct0);
    sock_[id]->SendTo(packet, 0, to);
    stats_.packets++;
    return static_cast<int>(bytes);
}

bool MrSender::Stale(const mr_tx_pkt &tp) const {
    return mr_requester_stale(&req_.r, &tp);
}

void MrSender::RetryExceeded() {
    stats_.failed = true;
    mr_sender_stop(&engine_.s);
    timer_.Cancel();
    pace_.Cancel();
}

// The path restarts on a new source port, in a new epoch.
void MrSender::FailedOver(uint32_t id) {
    stats_.failovers++;
    OpenSocket(id);
}

void MrSender::Event(mr_sender_event ev, uint32_t arg) {
    switch (ev) {
    case MR_SEV_RESENT:
        stats_.retransmits++;
        stats_.moved += arg == MR_SEND_MOVED;
        break;
    case MR_SEV_SACK_GAP:
        stats_.sack_resends++;
        break;
    case MR_SEV_PROBE:
        stats_.probes++;
        break;
    case MR_SEV_RTO:
        stats_.rtos++;
        break;
    case MR_SEV_DEFERRED:
        stats_.deferred++;
        break;
    case MR_SEV_CC_DECREASE:
        stats_.decreases++;
        break;
    case MR_SEV_PACED:
    case MR_SEV_HINT_LIMITED:
        break;
    }
}

void MrSender::Finish() {
    stats_.done_ns = static_cast<int64_t>(Now());
    mr_sender_stop(&engine_.s);
    timer_.Cancel();
    pace_.Cancel();
}

void MrSender::Dump() const {
    const mr_sender *s = &engine_.s;
    const mr_requester *r = &req_.r;
    std::fprintf(stderr,
                 "  qpn %u: msn_send %u/%u send_off %u peer_done %u inflight %u/%u requeued %u "
                 "rtos %u timer %s at %.0f us pace %s\n",
                 qpn_, r->msn_send, msgs_, r->send_off, r->peer_done, s->ps.inflight,
                 mr_cc_conn_window(&params_.cc, &s->cc), s->requeue.count, s->rtos,
                 timer_.IsRunning() ? "armed" : "idle", timer_at_ / 1e3,
                 pace_.IsRunning() ? "armed" : "idle");
    for (uint32_t i = 0; i < s->ps.count; i++) {
        const mr_tx_path &p = s->path[i];
        const mr_path &ps = s->ps.path[i];
        std::fprintf(stderr,
                     "    path %u: state %u port %u epoch %u window %u inflight %u una %u nxt %u "
                     "sacked %u lost %u deadline %.0f us probed %d rto %.0f us\n",
                     i, ps.state, ps.sport, p.sb.epoch, ps.window, ps.inflight, p.sb.una, p.sb.nxt,
                     p.sb.n_sacked, p.sb.n_lost, p.deadline / 1e3, p.probed,
                     mr_rto_get(&p.rto) / 1e3);
    }
}

double MrSender::RateBps() const {
    // What the sender's gates let it send at (Push(), mr_sender_take()): the
    // packets its windows let be in flight, whole packets as
    // mr_cc_conn_window() and mr_cc_path_window() give them, over its SRTT
    // (Little's law); with congestion control also the pacer's rate, the
    // larger of the window's gap and the hint's, whichever is slowest.
    const mr_cc_params &prm = params_.cc;
    const mr_sender *s = &engine_.s;
    double srtt = static_cast<double>(s->cc.srtt);
    if (!srtt) {
        uint64_t sum = 0, n = 0;
        for (uint32_t i = 0; i < s->ps.count; i++)
            if (s->path[i].rto.srtt) {
                sum += s->path[i].rto.srtt;
                n++;
            }
        if (!n)
            return 0;
        srtt = static_cast<double>(sum) / static_cast<double>(n);
    }
    uint32_t paths = 0;
    for (uint32_t i = 0; i < s->ps.count; i++)
        paths += s->ps.path[i].state == MR_PATH_ACTIVE ? s->ps.path[i].window : 0;
    const double window = std::min(paths, mr_cc_conn_window(&prm, &s->cc));
    const double bits = static_cast<double>(FullPacketBytes(params_.mtu)) * 8;
    double rate = window * bits * 1e9 / srtt;
    if (prm.enabled && s->cc.gap_ns)
        rate = std::min(rate, bits * 1e9 / static_cast<double>(s->cc.gap_ns));
    if (prm.enabled && s->cc.hint_limits && s->cc.hint_kbps)
        rate = std::min(rate, static_cast<double>(mr_cc_hint_to_bps(s->cc.hint_kbps)));
    return rate;
}

MrReceiver::MrReceiver(Ptr<ns3::Node> node, const TransportParams &params, uint64_t capacity_bps,
                       uint64_t min_interval_ns)
    : params_(params), capacity_bps_(capacity_bps), min_interval_ns_(min_interval_ns),
      host_timers_(params, 0x5eed) {
    sock_ = Socket::CreateSocket(node, UdpSocketFactory::GetTypeId());
    if (sock_->Bind(InetSocketAddress(Ipv4Address::GetAny(), kRoceV2Port))) {
        std::fprintf(stderr, "mr-scale: cannot bind UDP port %u\n", kRoceV2Port);
        std::exit(2);
    }
    sock_->SetIpRecvTos(true);
    sock_->SetRecvCallback(MakeCallback(&MrReceiver::Recv, this));
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

void MrReceiver::Recv(Ptr<Socket> sock) {
    Ptr<Packet> p;
    Address from;
    while ((p = sock->RecvFrom(from))) {
        SocketIpTosTag tos;
        bool ce = p->RemovePacketTag(tos) && (tos.GetTos() & 0x3) == kCe;
        mr_pkt pkt;
        if (!DecodePacket(p, &pkt))
            continue;
        if (pkt.base.opcode != MR_OP_WRITE && pkt.base.opcode != MR_OP_SEND)
            continue;
        InetSocketAddress src = InetSocketAddress::ConvertFrom(from);
        const ConnTags tags = ConnTagsOf(pkt.base.qpn);
        if (pkt.base.tag != tags.to_receiver) // handshake.c: not the peer's
            continue;
        auto &slot = conns_[pkt.base.qpn];
        if (!slot) {
            slot = std::make_unique<Conn>();
            slot->qpn = pkt.base.qpn;
            slot->tags = tags;
            slot->peer = src.GetIpv4();
            slot->owner = this;
            slot->engine.conn = slot.get();
            slot->resp.conn = slot.get();
            mr_receiver_start(&slot->engine.r, 0); // ack.c: mr_ack_init()
            mr_responder_init(&slot->resp.r, params_.mtu, false);
        }
        OnData(*slot, pkt, src.GetPort(), ce, p->GetSize());
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
    if (c.slot < 0) {
        uint32_t hint = 0;
        const int32_t slot = mr_share_table_join(&table_.t, ShareCapacity(), now, &hint);
        if (slot >= 0) {
            flow_conn_[slot] = &c;
            c.slot = slot;
            c.hint = hint;
        }
    }
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
        mr_responder_advance(&c.resp.r, false);
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
    out.base.tag = c.tags.to_sender;
    Ptr<Packet> p = BuildPacket(out);
    UdpHeader udp;
    udp.SetSourcePort(sport);
    udp.SetDestinationPort(kRoceV2Port);
    p->AddHeader(udp);
    InetSocketAddress to(c.peer, 0);
    to.SetTos(kEct0);
    ack_raw_->SendTo(p, 0, to);
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

// The sender engine's environment (proto/sender.h): the model's side.
using mrscale::MrSender;

int mr_sender_env_xmit(struct mr_sender *s, u32 id, u32 psn, const struct mr_tx_pkt *tp, u8 flags,
                       enum mr_send_why) {
    return MrSender::Of(s).Xmit(id, psn, *tp, flags);
}

bool mr_sender_env_stale(struct mr_sender *s, const struct mr_tx_pkt *tp) {
    return MrSender::Of(s).Stale(*tp);
}

// The model sends no READs.
bool mr_sender_env_answered(struct mr_sender *, const struct mr_tx_pkt *) {
    return false;
}

u32 mr_sender_env_retries(struct mr_sender *) {
    return mrscale::kRetryCnt;
}

void mr_sender_env_retry_exceeded(struct mr_sender *s) {
    MrSender::Of(s).RetryExceeded();
}

void mr_sender_env_failover(struct mr_sender *s, u32 id, u16, u16, u32) {
    MrSender::Of(s).FailedOver(id);
}

void mr_sender_env_event(struct mr_sender *s, enum mr_sender_event ev, u32, u32 arg) {
    MrSender::Of(s).Event(ev, arg);
}

// The requester engine's environment (proto/requester.h): the model's
// side. Its messages are WRITEs; it sends no READs, so owes no responses.
u32 mr_requester_env_posted(struct mr_requester *r) {
    return MrSender::Of(r).Posted();
}

void mr_requester_env_msg(struct mr_requester *r, u32 msn, struct mr_req_msg *m) {
    *m = mr_req_msg{};
    m->length = MrSender::Of(r).MsgLen(msn);
}

void mr_requester_env_rsn(struct mr_requester *, u32, u32) {}

bool mr_requester_env_response_due(struct mr_requester *) {
    return false;
}

void mr_requester_env_response(struct mr_requester *, struct mr_tx_pkt *) {}

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
}

// The responder engine's environment (proto/responder.h): the model's
// side. Its memory takes every WRITE and only counts the new bytes; no
// message consumes a receive, no READ or atomic comes.
bool mr_responder_env_posted(struct mr_responder *, u32) {
    return true;
}

u64 *mr_responder_env_map_alloc(struct mr_responder *, u32 bits) {
    return static_cast<u64 *>(std::calloc((bits + 63) / 64, sizeof(u64)));
}

void mr_responder_env_map_free(struct mr_responder *, u64 *map) {
    std::free(map);
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
