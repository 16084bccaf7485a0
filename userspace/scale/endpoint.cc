// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The MetaRoCE sender and receiver of the scale model. Function by function
// they follow the kernel (named in each comment); all protocol state lives
// in the kernel's structs and is changed only by the kernel's functions.
#include "endpoint.h"

#include "config.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

using namespace ns3;

namespace mrscale {
namespace {

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

uint32_t Ctz64(uint64_t v) {
    return static_cast<uint32_t>(__builtin_ctzll(v));
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
    return static_cast<uint64_t>(Simulator::Now().GetNanoSeconds());
}

MrSender::MrSender(Ptr<ns3::Node> node, const TransportParams &params, Ipv4Address dst,
                   uint32_t qpn, uint32_t seed, uint64_t bytes, Time start)
    : node_(node), params_(params), dst_(dst), qpn_(qpn), tags_(ConnTagsOf(qpn)), bytes_(bytes),
      msgs_(static_cast<uint32_t>((bytes + params.msg_bytes - 1) / params.msg_bytes)),
      pkt_bytes_(FullPacketBytes(params.mtu)), path_(params.paths),
      requeue_slots_(mr_requeue_slots(params.paths)) {
    // Every MetaRoCE packet, ACKs too, goes to UDP port 4791.
    ack_sock_ = Socket::CreateSocket(node_, UdpSocketFactory::GetTypeId());
    if (ack_sock_->Bind(InetSocketAddress(Ipv4Address::GetAny(), kRoceV2Port))) {
        std::fprintf(stderr, "mr-scale: cannot bind UDP port %u\n", kRoceV2Port);
        std::exit(2);
    }
    ack_sock_->SetRecvCallback(MakeCallback(&MrSender::RecvAck, this));
    // req.c: mr_req_start().
    if (mr_paths_init(&ps_, params.paths, kFailAfter, seed)) {
        std::fprintf(stderr, "mr-scale: mr_paths_init: bad path count %u\n", params.paths);
        std::exit(2);
    }
    mr_cc_conn_init(&cc_, &params_.cc, pkt_bytes_);
    mr_requeue_init(&requeue_, requeue_slots_.data(), static_cast<u32>(requeue_slots_.size()));
    for (uint32_t i = 0; i < params.paths; i++) {
        Path &p = path_[i];
        mr_sack_tx_init(&p.sb, 0);
        mr_cc_path_init(&p.cc, &cc_, &params_.cc);
        mr_paths_set_window(&ps_, i, mr_cc_path_window(&params_.cc, &p.cc));
        mr_rto_init(&p.rto, params.rto_init_ns, params.rto_min_ns, params.rto_max_ns);
        OpenSocket(i);
    }
    Simulator::Schedule(start, &MrSender::Start, this);
}

void MrSender::OpenSocket(uint32_t id) {
    Path &p = path_[id];
    if (p.sock)
        old_socks_.push_back(p.sock);
    p.sock = Socket::CreateSocket(node_, UdpSocketFactory::GetTypeId());
    if (p.sock->Bind(InetSocketAddress(Ipv4Address::GetAny(), ps_.path[id].sport))) {
        std::fprintf(stderr, "mr-scale: cannot bind source port %u\n", ps_.path[id].sport);
        std::exit(2);
    }
    p.sock->ShutdownRecv(); // ACKs come to port 4791
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
    if (!Done() && peer_done_ == msn_send_ && !send_off_)
        Finish();
}

uint32_t MrSender::MsgLen(uint32_t msn) const {
    uint64_t off = static_cast<uint64_t>(msn) * params_.msg_bytes;
    return static_cast<uint32_t>(std::min<uint64_t>(params_.msg_bytes, bytes_ - off));
}

// req.c: mr_req_take(). The connection's window caps what all paths have
// in flight; a path with a full scoreboard is passed over.
int MrSender::Take(uint32_t *psn) {
    if (ps_.inflight >= mr_cc_conn_window(&params_.cc, &cc_))
        return -MR_ENOSPC;
    for (uint32_t tries = 0; tries < ps_.count; tries++) {
        int id = mr_paths_pick(&ps_);
        if (id < 0)
            return id;
        if (!mr_sack_tx_send(&path_[id].sb, psn))
            return id;
        mr_paths_unpick(&ps_, static_cast<uint32_t>(id));
    }
    return -MR_ENOSPC;
}

// req.c: mr_req_push(): moved packets first, then new data, as the windows
// and the pacer allow.
void MrSender::Push() {
    if (!Started() || Done())
        return;
    const uint64_t now = Now();
    for (;;) {
        const mr_requeue *e;
        while ((e = mr_requeue_front(&requeue_)) && mr_seq_before(e->msn, peer_done_))
            mr_requeue_pop(&requeue_);
        const bool moved = e != nullptr;
        // A sender that leaves finishes the message it is in, then starts none.
        if (!moved && ((leaving_ && !send_off_) || msn_send_ >= msgs_ ||
                       !mr_window_in(msn_send_, peer_done_)))
            return;
        uint64_t wait = mr_cc_pace_delay(&params_.cc, &cc_, now);
        if (wait) {
            if (!pace_.IsRunning())
                pace_ = Simulator::Schedule(NanoSeconds(wait), &MrSender::Push, this);
            return;
        }
        uint32_t psn;
        int id = Take(&psn);
        if (id < 0)
            return;
        TxPkt tp{};
        if (moved) {
            tp.msn = e->msn;
            tp.offset = e->offset;
            mr_requeue_pop(&requeue_);
            stats_.moved++;
        } else {
            tp.msn = msn_send_;
            tp.offset = send_off_;
            send_off_ += params_.mtu;
            if (send_off_ >= MsgLen(msn_send_)) {
                msn_send_++;
                send_off_ = 0;
            }
        }
        SendPkt(static_cast<uint32_t>(id), psn, tp, moved);
    }
}

// tx.c: mr_tx_send(). A packet of a message that completed meanwhile
// goes as an empty SEND with its MSN, which closes its PSN hole.
void MrSender::SendPkt(uint32_t id, uint32_t psn, const TxPkt &tp, bool resend) {
    Path &p = path_[id];
    const uint64_t now = Now();
    TxPkt &slot = p.pkt[psn % MR_SACK_WINDOW];
    slot = tp;
    slot.sends = resend && tp.sends < 255 ? tp.sends + 1 : 1;
    slot.sent_ns = now;
    slot.order = ++tx_order_;

    mr_pkt pkt{};
    pkt.base.path = static_cast<u8>(id);
    pkt.base.epoch = p.sb.epoch;
    pkt.base.qpn = qpn_;
    pkt.base.psn = psn;
    pkt.base.tag = tags_.to_receiver;
    // The packet that fills its path's window asks for an ACK at once.
    if (ps_.path[id].inflight >= ps_.path[id].window)
        pkt.base.flags |= MR_FLAG_ACK_REQ;
    if (mr_seq_before(tp.msn, peer_done_)) {
        pkt.base.opcode = MR_OP_SEND;
        pkt.send.msn = tp.msn;
    } else {
        pkt.base.opcode = MR_OP_WRITE;
        pkt.write.msn = tp.msn;
        pkt.write.rkey = 0x100;
        pkt.write.length = MsgLen(tp.msn);
        pkt.write.offset = tp.offset;
        pkt.payload_len = std::min(params_.mtu, pkt.write.length - tp.offset);
    }
    Ptr<Packet> packet = BuildPacket(pkt);
    const uint32_t bytes = packet->GetSize();
    // ns-3's UDP takes the TOS byte from the address, not the socket.
    InetSocketAddress to(dst_, kRoceV2Port);
    to.SetTos(kEct0);
    p.sock->SendTo(packet, 0, to);
    stats_.packets++;
    if (resend)
        stats_.retransmits++;
    mr_cc_pace_sent(&params_.cc, &cc_, bytes, now);
    if (!p.deadline) {
        ArmPath(p, now);
        ArmTimer();
    }
}

// comp.c: mr_comp_resend(). @charge: it had been reported lost, so it is in
// flight again.
void MrSender::Resend(uint32_t id, uint32_t psn, bool charge) {
    Path &p = path_[id];
    if (mr_sack_tx_resend(&p.sb, psn))
        return;
    if (charge)
        mr_paths_recharge(&ps_, id);
    TxPkt tp = p.pkt[psn % MR_SACK_WINDOW];
    SendPkt(id, psn, tp, true);
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

// comp.c: mr_comp_ack_rcv(), with congestion control fed from the same ACK.
void MrSender::OnAck(const mr_pkt &pkt) {
    if (Done())
        return;
    const uint32_t id = pkt.base.path;
    if (id >= ps_.count)
        return;
    Path &p = path_[id];
    const uint64_t now = Now();
    mr_sack_res res;
    // comp.c: mr_comp_spurious(): the ACK names a resent packet already
    // known to have arrived: its original arrived too.
    const bool spurious = mr_sack_tx_arrived(&p.sb, pkt.base.epoch, pkt.base.psn) &&
                          p.pkt[pkt.base.psn % MR_SACK_WINDOW].sends > 1;
    if (mr_sack_tx_ack(&p.sb, pkt.base.epoch, pkt.ack.cum_psn, pkt.ack.sack, &res))
        return; // reordered, of an abandoned epoch, or bogus
    // The RTT sample: the oldest newly acknowledged packet sent once (Karn).
    uint64_t rtt = 0, acked_order = 0;
    for (uint32_t w = 0; w < MR_SACK_WORDS; w++) {
        uint64_t once = res.acked[w] & ~res.ambiguous[w];
        if (!once)
            continue;
        uint32_t psn = res.base + 64 * w + Ctz64(once);
        rtt = now - p.pkt[psn % MR_SACK_WINDOW].sent_ns;
        mr_rto_sample(&p.rto, rtt);
        break;
    }
    mr_paths_ack(&ps_, id, res.n_acked, res.n_lost);
    if (res.n_acked) {
        acked_ns_ = now;
        for (uint32_t w = 0; w < MR_SACK_WORDS; w++)
            for (uint64_t bits = res.acked[w]; bits; bits &= bits - 1) {
                uint32_t psn = res.base + 64 * w + Ctz64(bits);
                acked_order = std::max(acked_order, p.pkt[psn % MR_SACK_WINDOW].order);
            }
        acked_front_ = std::max(acked_front_, acked_order);
        rtos_ = 0;
        p.deadline = 0;
        p.probed = false;
        p.deferred = false;
    }

    mr_cc_ack_info a{};
    a.acked = res.n_acked;
    a.lost = res.n_lost;
    a.spurious = spurious;
    a.ecn_count = pkt.ack.ecn_count;
    a.rtt_ns = rtt;
    a.srtt_ns = p.rto.srtt;
    a.acked_order = acked_order;
    a.sent_order = tx_order_;
    a.now_ns = now;
    a.hint_kbps = pkt.ack.rate_hint;
    mr_cc_ack(&params_.cc, &cc_, &p.cc, &a);
    mr_paths_set_window(&ps_, id, mr_cc_path_window(&params_.cc, &p.cc));

    for (uint32_t i = 0; i < MR_SACK_WINDOW && res.n_lost; i++) {
        if (!mr_sack_res_test(res.lost, i))
            continue;
        stats_.sack_resends++;
        Resend(id, res.base + i, true);
    }
    if (p.sb.una != p.sb.nxt && !p.deadline) {
        ArmPath(p, now);
        ArmTimer();
    }
    // Nothing not yet sent can be done: a bogus value changes nothing.
    if (mr_seq_before(peer_done_, pkt.ack.msn_done) && !mr_seq_before(msn_send_, pkt.ack.msn_done))
        peer_done_ = pkt.ack.msn_done;
    if (peer_done_ == msgs_ || (leaving_ && peer_done_ == msn_send_ && !send_off_)) {
        Finish();
        return;
    }
    Push();
}

// xport.h: mr_xport_arm_path(): a tail probe first, after about two round
// trips without an ACK, then the RTO proper (mr_rto_wait()).
void MrSender::ArmPath(Path &p, uint64_t now) {
    p.deadline = now + mr_rto_wait(&p.rto, p.probed, params_.pto_min_ns);
    p.armed_ns = now;
}

// timers.c: mr_timers_sync(): one timer for all paths, at the earliest
// deadline.
void MrSender::ArmTimer() {
    if (Done())
        return;
    uint64_t next = 0;
    for (const Path &p : path_)
        if (p.deadline && (!next || p.deadline < next))
            next = p.deadline;
    if (!next || (timer_.IsRunning() && timer_at_ <= next))
        return;
    timer_.Cancel();
    const uint64_t now = Now();
    timer_at_ = next;
    timer_ = Simulator::Schedule(NanoSeconds(next > now ? next - now : 0), &MrSender::Timer, this);
}

// timers.c: mr_timers_fire().
void MrSender::Timer() {
    const uint64_t now = Now();
    timer_at_ = 0;
    for (uint32_t i = 0; i < ps_.count && !Done(); i++)
        if (path_[i].deadline && path_[i].deadline <= now)
            PathTimeout(i, now);
    Push();
    ArmTimer();
}

// comp.c: mr_comp_timer_early() without READs: older packets of the
// connection are still coming back, so ours waits in a queue.
bool MrSender::TimerEarly(Path &p, uint32_t psn) {
    const TxPkt &tp = p.pkt[psn % MR_SACK_WINDOW];
    if (!mr_rto_early(tp.order, acked_front_, MR_ACK_EVERY * ps_.count, p.armed_ns, acked_ns_,
                      p.deferred))
        return false;
    p.deferred |= acked_front_ >= tp.order;
    return true;
}

// comp.c: mr_comp_path_timeout().
void MrSender::PathTimeout(uint32_t id, uint64_t now) {
    Path &p = path_[id];
    const uint32_t budget = (kRetryCnt + 1) * ps_.count * kFailAfter;
    uint32_t psn = p.sb.una;
    p.deadline = 0;
    if (!mr_sack_tx_next_unacked(&p.sb, &psn))
        return;
    if (TimerEarly(p, psn)) {
        stats_.deferred++;
        ArmPath(p, now);
        return;
    }
    if (!p.probed) {
        p.probed = true;
        stats_.probes++;
        Resend(id, psn, false);
        if (!p.deadline && p.sb.una != p.sb.nxt)
            ArmPath(p, now);
        return;
    }
    stats_.rtos++;
    mr_rto_timeout(&p.rto);
    mr_cc_timeout(&params_.cc, &cc_, &p.cc, tx_order_);
    mr_paths_set_window(&ps_, id, mr_cc_path_window(&params_.cc, &p.cc));
    if (++rtos_ > budget) {
        stats_.failed = true;
        timer_.Cancel();
        pace_.Cancel();
        return;
    }
    if (mr_paths_timeout(&ps_, id, 0)) {
        Failover(id);
        return;
    }
    Resend(id, psn, false);
    if (!p.deadline && p.sb.una != p.sb.nxt)
        ArmPath(p, now);
}

// comp.c: mr_comp_failover(): the path's unacknowledged packets go to the
// other paths; it restarts on a new source port, in a new epoch.
void MrSender::Failover(uint32_t id) {
    Path &p = path_[id];
    uint64_t rto = mr_rto_get(&p.rto);
    for (uint32_t psn = p.sb.una; mr_sack_tx_next_unacked(&p.sb, &psn); psn++) {
        const TxPkt &tp = p.pkt[psn % MR_SACK_WINDOW];
        if (mr_seq_before(tp.msn, peer_done_))
            continue;
        const mr_requeue e{tp.msn, tp.offset, 0, false};
        // It holds every scoreboard's worth: cannot fill up (a model bug).
        if (mr_requeue_push(&requeue_, &e)) {
            std::fprintf(stderr, "mr-scale: qpn %u: requeue ring full\n", qpn_);
            std::abort();
        }
    }
    mr_cc_path_exit(&p.cc, &cc_, &params_.cc);
    mr_paths_restart(&ps_, id);
    mr_cc_path_init(&p.cc, &cc_, &params_.cc);
    mr_paths_set_window(&ps_, id, mr_cc_path_window(&params_.cc, &p.cc));
    mr_sack_tx_reset(&p.sb, ps_.path[id].epoch);
    // A fresh estimator from the backed-off timeout (see the kernel).
    mr_rto_init(&p.rto, rto, params_.rto_min_ns, params_.rto_max_ns);
    p.deadline = 0;
    p.probed = false;
    p.deferred = false;
    stats_.failovers++;
    OpenSocket(id);
}

void MrSender::Finish() {
    stats_.done_ns = static_cast<int64_t>(Now());
    timer_.Cancel();
    pace_.Cancel();
}

void MrSender::Dump() const {
    std::fprintf(stderr,
                 "  qpn %u: msn_send %u/%u send_off %u peer_done %u inflight %u/%u requeued %u "
                 "rtos %u timer %s at %.0f us pace %s\n",
                 qpn_, msn_send_, msgs_, send_off_, peer_done_, ps_.inflight,
                 mr_cc_conn_window(&params_.cc, &cc_), requeue_.count, rtos_,
                 timer_.IsRunning() ? "armed" : "idle", timer_at_ / 1e3,
                 pace_.IsRunning() ? "armed" : "idle");
    for (uint32_t i = 0; i < ps_.count; i++) {
        const Path &p = path_[i];
        std::fprintf(stderr,
                     "    path %u: state %u port %u epoch %u window %u inflight %u una %u nxt %u "
                     "sacked %u lost %u deadline %.0f us probed %d rto %.0f us\n",
                     i, ps_.path[i].state, ps_.path[i].sport, p.sb.epoch, ps_.path[i].window,
                     ps_.path[i].inflight, p.sb.una, p.sb.nxt, p.sb.n_sacked, p.sb.n_lost,
                     p.deadline / 1e3, p.probed, mr_rto_get(&p.rto) / 1e3);
    }
}

double MrSender::RateBps() const {
    // What the sender's gates let it send at (Push(), Take()): the packets
    // its windows let be in flight, whole packets as mr_cc_conn_window()
    // and mr_cc_path_window() give them, over its SRTT (Little's law); with
    // congestion control also the pacer's rate, the larger of the window's
    // gap and the hint's, whichever is slowest.
    const mr_cc_params &prm = params_.cc;
    double srtt = static_cast<double>(cc_.srtt);
    if (!srtt) {
        uint64_t sum = 0, n = 0;
        for (uint32_t i = 0; i < ps_.count; i++)
            if (path_[i].rto.srtt) {
                sum += path_[i].rto.srtt;
                n++;
            }
        if (!n)
            return 0;
        srtt = static_cast<double>(sum) / static_cast<double>(n);
    }
    uint32_t paths = 0;
    for (uint32_t i = 0; i < ps_.count; i++)
        paths += ps_.path[i].state == MR_PATH_ACTIVE ? ps_.path[i].window : 0;
    const double window = std::min(paths, mr_cc_conn_window(&prm, &cc_));
    const double bits = static_cast<double>(pkt_bytes_) * 8;
    double rate = window * bits * 1e9 / srtt;
    if (prm.enabled && cc_.gap_ns)
        rate = std::min(rate, bits * 1e9 / static_cast<double>(cc_.gap_ns));
    if (prm.enabled && cc_.hint_limits && cc_.hint_kbps)
        rate = std::min(rate, static_cast<double>(mr_cc_hint_to_bps(cc_.hint_kbps)));
    return rate;
}

MrReceiver::MrReceiver(Ptr<ns3::Node> node, const TransportParams &params, uint64_t capacity_bps,
                       uint64_t min_interval_ns)
    : params_(params), capacity_bps_(capacity_bps), min_interval_ns_(min_interval_ns) {
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
    Simulator::ScheduleNow(&MrReceiver::Share, this);
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
            slot->rx.resize(MR_WIRE_MAX_PATHS);
            for (auto &r : slot->rx)
                mr_sack_rx_init(&r.win, 0);
            // Zeroed when the sender appears (share.h); until the next share
            // round its ACKs carry the newcomer's share.
            slot->flow = flows_.size();
            flows_.push_back(mr_share_flow{});
            flow_conn_.push_back(slot.get());
            // share.c: until the next round, at most an even share.
            even_kbps_ = std::max<uint32_t>(1, mr_cc_hint_from_bps(ShareCapacity()) /
                                                   static_cast<uint32_t>(flows_.size()));
        }
        OnData(*slot, pkt, src.GetPort(), ce, p->GetSize());
    }
}

// resp.c: mr_resp_rcv(), its SACK and ACK part: ack.c's mr_ack_arrival()
// and mr_ack_coalesce().
void MrReceiver::OnData(Conn &c, const mr_pkt &pkt, uint16_t sport, bool ce, uint32_t bytes) {
    const uint32_t id = pkt.base.path, psn = pkt.base.psn;
    RxPath &r = c.rx[id];
    c.stats.packets++;
    c.stats.udp_bytes += bytes;
    flows_[c.flow].bytes += bytes;
    if (ce)
        c.stats.ce++;

    const uint16_t prev_epoch = r.win.epoch;
    const uint32_t prev_cum = r.win.cum;
    const mr_sack_rx_res res = mr_sack_rx_record(&r.win, pkt.base.epoch, psn);
    // CE marks of the path epoch, duplicates included (protocol.rst,
    // "Signals"); a new epoch counts from 0.
    if (r.win.epoch != prev_epoch)
        r.ecn = 0;
    if (ce && res != MR_SACK_STALE)
        r.ecn++;
    switch (res) {
    case MR_SACK_STALE:
    case MR_SACK_BEYOND:
        c.stats.duplicates++;
        return;
    case MR_SACK_DUP:
        c.stats.duplicates++;
        r.sport = sport;
        if (r.seen && r.win.epoch == r.epoch)
            Ack(c, id, psn);
        return;
    case MR_SACK_NEW:
        break;
    }
    // At once for a new hole or a filled one (proto/coalesce.c).
    bool ack_now = mr_coalesce_at_once(&pkt, r.seen, r.last_psn, prev_epoch, prev_cum, r.win.cum);
    r.sport = sport;
    r.seen = true;
    r.epoch = r.win.epoch;
    r.last_psn = psn;
    r.unacked++;
    bool complete = false;
    // A packet no completion will acknowledge (a slice that landed before,
    // of a message complete) is acknowledged now.
    if (!Place(c, pkt, &complete)) {
        c.stats.duplicates++;
        ack_now = true;
    }
    if (complete) {
        AckAll(c);
    } else if (ack_now || mr_coalesce_due(r.unacked)) {
        Ack(c, id, psn);
    } else if (!c.ack_held) {
        // ack.c: mr_ack_coalesce(): a held ACK waits at most ack_delay.
        c.ack_held = true;
        Simulator::Schedule(NanoSeconds(params_.ack_delay_ns), &MrReceiver::AckFlush, this, &c);
    }
}

// ack.c: mr_ack_flush(): the held ACKs are due.
void MrReceiver::AckFlush(Conn *c) {
    c->ack_held = false;
    for (uint32_t i = 0; i < MR_WIRE_MAX_PATHS; i++) {
        RxPath &r = c->rx[i];
        if (r.seen && r.epoch == r.win.epoch && r.unacked)
            Ack(*c, i, r.last_psn);
    }
}

// Placement reduced to its bookkeeping: which slices of which message have
// landed, and "MSN done" over the complete ones. True for a new slice.
bool MrReceiver::Place(Conn &c, const mr_pkt &pkt, bool *complete) {
    if (pkt.base.opcode != MR_OP_WRITE)
        return false; // an empty SEND of a completed message
    const uint32_t msn = pkt.write.msn;
    if (mr_seq_before(msn, c.msn_done) || !mr_window_in(msn, c.msn_done))
        return false;
    RxMsg &m = c.msgs[msn];
    if (m.landed.empty())
        m.landed.resize(std::max<uint32_t>(1, (pkt.write.length + params_.mtu - 1) / params_.mtu));
    uint32_t slice = pkt.write.offset / params_.mtu;
    if (slice >= m.landed.size() || m.landed[slice])
        return false;
    m.landed[slice] = true;
    m.count++;
    c.stats.payload_bytes += pkt.payload_len;
    for (auto it = c.msgs.find(c.msn_done);
         it != c.msgs.end() && it->second.count == it->second.landed.size();
         it = c.msgs.find(c.msn_done)) {
        c.msgs.erase(it);
        c.msn_done++;
        *complete = true;
    }
    return true;
}

// ack.c: mr_ack_path(): the path's whole window, naming packet @psn.
void MrReceiver::Ack(Conn &c, uint32_t id, uint32_t psn) {
    RxPath &r = c.rx[id];
    mr_pkt pkt{};
    pkt.base.opcode = MR_OP_ACK;
    pkt.base.path = static_cast<u8>(id);
    pkt.base.epoch = r.win.epoch;
    pkt.base.qpn = c.qpn;
    pkt.base.psn = psn;
    pkt.base.tag = c.tags.to_sender;
    mr_sack_rx_fill_ack(&r.win, &pkt.ack);
    pkt.ack.msn_done = c.msn_done;
    pkt.ack.ecn_count = r.ecn;
    pkt.ack.rate_hint = Hint(c);
    r.unacked = 0;
    Ptr<Packet> p = BuildPacket(pkt);
    UdpHeader udp;
    udp.SetSourcePort(r.sport);
    udp.SetDestinationPort(kRoceV2Port);
    p->AddHeader(udp);
    InetSocketAddress to(c.peer, 0);
    to.SetTos(kEct0);
    ack_raw_->SendTo(p, 0, to);
    acks_++;
}

// ack.c: mr_ack_all(): after a completion, every path with packets
// not yet acknowledged, and one more when that is a single path.
void MrReceiver::AckAll(Conn &c) {
    uint32_t acks = 0, spare = MR_WIRE_MAX_PATHS;
    for (uint32_t i = 0; i < MR_WIRE_MAX_PATHS; i++) {
        RxPath &r = c.rx[i];
        if (!r.seen || r.epoch != r.win.epoch)
            continue;
        if (r.unacked) {
            Ack(c, i, r.last_psn);
            acks++;
        } else if (spare == MR_WIRE_MAX_PATHS) {
            spare = i;
        }
    }
    if (acks == 1 && spare < MR_WIRE_MAX_PATHS)
        Ack(c, spare, c.rx[spare].last_psn);
}

// The capacity the shares divide: the link's payload rate, less 1/32 so
// that a queue the first flight built drains (share.c's 1/16 covers both
// in the guest).
uint64_t MrReceiver::ShareCapacity() const {
    return PayloadRate(capacity_bps_, params_.mtu) / 32 * 31;
}

// With CC off a receiver sends no hint (protocol.rst).
uint32_t MrReceiver::Hint(const Conn &c) const {
    if (!params_.cc.enabled)
        return 0;
    const uint32_t hint = c.shared ? flows_[c.flow].hint_kbps : fresh_kbps_;
    return even_kbps_ && (!hint || even_kbps_ < hint) ? even_kbps_ : hint;
}

// A share round (mr_share_split()): every sender's share of the ingress
// capacity, which its ACKs carry until the next round. mr_share_split() wants
// an interval in which a sender at its share sends several packets: the
// next round comes after 4 full packets at the even share of the active
// senders, at most 10 ms, at least min_interval later.
void MrReceiver::Share() {
    const uint64_t now = static_cast<uint64_t>(Simulator::Now().GetNanoSeconds());
    const uint64_t interval = now - last_share_ns_;
    last_share_ns_ = now;
    const uint64_t capacity = ShareCapacity();
    fresh_kbps_ = mr_share_split(&params_.cc, flows_.data(), static_cast<u32>(flows_.size()),
                                 mr_cc_hint_from_bps(capacity), interval, &share_stats_);
    share_calls_++;
    even_kbps_ = 0;
    for (size_t i = 0; i < flows_.size(); i++) {
        flows_[i].bytes = 0;
        flow_conn_[i]->shared = true;
    }
    const uint64_t pkt_bits =
        8ull * (MR_BASE_HDR_LEN + MR_WRITE_HDR_LEN + params_.mtu + kLinkOverhead);
    const uint64_t even = 4 * pkt_bits * 1'000'000'000ull *
                          std::max<uint32_t>(1, share_stats_.active) / capacity_bps_;
    const uint64_t next =
        std::max<uint64_t>(min_interval_ns_, std::min<uint64_t>(even, 10'000'000));
    Simulator::Schedule(NanoSeconds(next), &MrReceiver::Share, this);
}

} // namespace mrscale
