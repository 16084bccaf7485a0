// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The model's sender: the kernel's requester engine (proto/requester.c)
// over its sender engine (proto/sender.c), with ns-3 as their host (the
// functions each comment names are the kernel's side of the same
// boundary). All protocol state lives in the kernel's structs and is
// changed only by the kernel's functions.
#include "sender_host.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

using namespace ns3;

namespace mrscale {

uint64_t MrSender::Now() {
    return NowNs();
}

MrSender::MrSender(Ptr<ns3::Node> node, const TransportParams &params, Ipv4Address dst,
                   uint32_t qpn, uint32_t seed, uint64_t bytes, Time start, HostPlanes *planes,
                   bool ack_socket)
    : node_(node), params_(params), dst_(dst), qpn_(qpn), tags_(ConnTagsOf(qpn)), bytes_(bytes),
      msgs_(static_cast<uint32_t>((bytes + params.msg_bytes - 1) / params.msg_bytes)),
      posted_(msgs_), msg_(msgs_), tx_path_(params.paths), sock_(params.paths),
      host_timers_(params, seed), planes_(planes) {
    // Every MetaRoCE packet, ACKs too, goes to UDP port 4791.
    if (ack_socket) {
        ack_sock_ = Socket::CreateSocket(node_, UdpSocketFactory::GetTypeId());
        if (ack_sock_->Bind(InetSocketAddress(Ipv4Address::GetAny(), kRoceV2Port))) {
            std::fprintf(stderr, "mr-scale: cannot bind UDP port %u\n", kRoceV2Port);
            std::exit(2);
        }
        ack_sock_->SetRecvCallback(MakeCallback(&MrSender::RecvAck, this));
    }
    // req.c: mr_req_start(): no path has sent on a plane yet.
    mr_plane_track_init(&track_);
    if (planes_)
        plane_gen_ = planes_->Gen();
    // req.c: mr_req_start().
    engine_.host = this;
    req_.host = this;
    mr_requester_start(&req_.r, params.mtu, MR_RNR_RETRY_INFINITE);
    mr_sender_setup(&engine_.s, tx_path_.data(), params.paths, kFailAfter, &params_.timing,
                    &params_.cc);
    if (mr_sender_start(&engine_.s, 0, false, seed, FullPacketBytes(params.mtu))) {
        std::fprintf(stderr, "mr-scale: mr_sender_start: bad path count %u\n", params.paths);
        std::exit(2);
    }
    for (uint32_t i = 0; i < params.paths; i++)
        OpenSocket(i);
    Simulator::Schedule(start, &MrSender::Start, this);
}

MrSender::~MrSender() {
    mr_sender_release(&engine_.s);
}

mr_tx_ring *MrSender::RingGet() {
    if (free_rings_.empty())
        free_rings_.push_back(std::make_unique<mr_tx_ring>());
    mr_tx_ring *r = free_rings_.back().release();
    free_rings_.pop_back();
    rings_peak_ = std::max(rings_peak_, ++rings_out_);
    return r;
}

void MrSender::RingPut(mr_tx_ring *r) {
    rings_out_--;
    free_rings_.emplace_back(r);
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
    // Connections of one host whose paths drew the same source port send
    // through one socket (the kernel's share one UDP socket); it only sends.
    static std::map<std::pair<ns3::Node *, uint16_t>, Ptr<Socket>> shared;
    Ptr<Socket> &same = shared[{PeekPointer(node_), sport}];
    if (same && !ack_sock_) {
        sock_[id] = same;
        return;
    }
    sock_[id] = Socket::CreateSocket(node_, UdpSocketFactory::GetTypeId());
    if (sock_[id]->Bind(InetSocketAddress(Ipv4Address::GetAny(), sport))) {
        std::fprintf(stderr, "mr-scale: cannot bind source port %u\n", sport);
        std::exit(2);
    }
    sock_[id]->ShutdownRecv(); // ACKs come to port 4791
    same = sock_[id];
}

void MrSender::SetStreams(uint32_t n, std::vector<uint16_t> stream) {
    stream_last_.assign(n, 0);
    mr_requester_streams(&req_.r, stream_last_.data(), n);
    for (uint32_t msn = 0; msn < msgs_; msn++)
        msg_[msn].stream = static_cast<uint16_t>(msn < stream.size() ? stream[msn] : msn % n);
}

void MrSender::SetPostTimes(std::vector<uint64_t> post_ns) {
    post_ns_ = std::move(post_ns);
    post_ns_.resize(std::min<size_t>(post_ns_.size(), msgs_));
    posted_ = 0;
    PostDue();
}

// The application posts the messages due by now, and the sender goes on.
void MrSender::PostDue() {
    const uint64_t now = Now();
    while (posted_ < msgs_ && (posted_ >= post_ns_.size() || post_ns_[posted_] <= now))
        posted_++;
    if (posted_ < msgs_)
        Simulator::Schedule(NanoSeconds(post_ns_[posted_] - now), &MrSender::PostDue, this);
    Push();
}

void MrSender::Start() {
    stats_.start_ns = static_cast<int64_t>(Now());
    if (!msgs_) {
        Finish();
        return;
    }
    if (!params_.hello) {
        Push();
        return;
    }
    mr_hello_init(&hello_, tags_.to_sender);
    mr_hello_start(&hello_, HelloNow());
    SendHello();
}

// proto/hello.c takes times above 0 (0 is "none"); the kernel's clock
// is never 0, the simulation's starts there.
uint64_t MrSender::HelloNow() {
    return std::max<uint64_t>(Now(), 1);
}

// handshake.c: mr_handshake_send(): a HELLO when one is due, on the path
// its number picks, until the peer's tag is proven.
void MrSender::SendHello() {
    mr_pkt pkt;
    if (Done() || mr_hello_ready(&hello_) ||
        !mr_hello_due(&hello_, HelloNow(), params_.timing.rto_min_ns, params_.timing.rto_max_ns,
                      &pkt))
        return;
    const uint32_t id = (hello_.tries - 1) % params_.paths;
    pkt.base.qpn = qpn_;
    // tx.c: mr_tx_control(): a HELLO tries the planes in turn.
    SendOn(id, BuildPacket(pkt), Route(-1, hello_.n_sent));
    stats_.hellos++;
    hello_timer_ = Simulator::Schedule(
        NanoSeconds(Until(host_timers_.Tick(Now(), hello_.deadline))), &MrSender::SendHello, this);
}

// handshake.c: mr_handshake_rcv(): the receiver's answer proves its tag
// and carries its first hint, which bounds the first flight.
void MrSender::OnHello(const mr_pkt &pkt) {
    const bool ready = mr_hello_ready(&hello_);
    mr_pkt reply;
    if (Done())
        return;
    if (mr_hello_rcv(&hello_, &pkt, HelloNow(), &reply)) {
        reply.base.qpn = qpn_;
        SendOn(0, BuildPacket(reply), Route(-1, hello_.n_sent));
    }
    if (ready || !mr_hello_ready(&hello_))
        return;
    hello_timer_.Cancel();
    mr_sender_hello(&engine_.s, hello_.hint_kbps, hello_.rtt_ns, Now());
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
    return posted_ - r->msn_head;
}

// Every message is posted and complete.
bool MrSender::AllDone() const {
    const mr_requester *r = &req_.r;
    return r->peer_done == r->msn_head && !Posted() && (leaving_ || posted_ == msgs_);
}

// mr_requester_env_msg(): what the requester needs of message @msn.
void MrSender::Msg(uint32_t msn, mr_req_msg *m) const {
    *m = mr_req_msg{};
    m->length = MsgLen(msn);
    if (msn < msgs_) {
        m->started = msg_[msn].started;
        m->stream = msg_[msn].stream;
    }
}

// mr_requester_env_start(): kept for its packets (wq.c keeps them in the
// WQE).
void MrSender::MsgStart(uint32_t msn, uint32_t rsn, uint8_t order) {
    if (msn >= msgs_)
        return;
    msg_[msn].started = true;
    msg_[msn].rsn = rsn;
    msg_[msn].order = order;
}

// req.c: mr_req_planes(): a plane left service since this sender last
// looked: what its paths sent there is lost with it and goes to the other
// paths now.
void MrSender::ReqPlanes() {
    if (!planes_ || planes_->Gen() == plane_gen_)
        return;
    plane_gen_ = planes_->Gen();
    for (uint32_t id = 0; id < engine_.s.npaths; id++)
        if (mr_plane_track_lost(&track_, id, mr_sender_path_una(&engine_.s, id),
                                planes_->Serving())) {
            planes_->stats.abandoned +=
                mr_sender_path_una(&engine_.s, id) != mr_sender_path_nxt(&engine_.s, id);
            mr_sender_abandon(&engine_.s, id);
        }
}

// tx.c: mr_plane_route(), -1 without planes.
int MrSender::Route(int arrived, uint32_t path) {
    return planes_ ? static_cast<int>(planes_->Route(arrived, path)) : -1;
}

// req.c: mr_req_push().
void MrSender::Push() {
    if (!Started() || Done())
        return;
    ReqPlanes();
    if (params_.hello && !mr_hello_ready(&hello_))
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
        // receive.c: mr_plane_arrived(), for every packet of the device.
        ArrivedTag arrived;
        if (planes_ && p->PeekPacketTag(arrived))
            planes_->Arrived(arrived.Plane());
        Receive(p);
    }
}

void MrSender::Receive(Ptr<Packet> p) {
    mr_pkt pkt;
    // handshake.c: a packet without our tag is not the peer's.
    if (!DecodePacket(p, &pkt) || pkt.base.qpn != qpn_ || pkt.base.tag != tags_.to_sender)
        return;
    if (pkt.base.opcode == MR_OP_HELLO)
        params_.cpu->Run([this, pkt] { OnHello(pkt); });
    else if (pkt.base.opcode == MR_OP_ACK)
        params_.cpu->Run([this, pkt] { OnAck(pkt); });
}

// comp.c: mr_comp_ack_rcv(), then its completions (mr_comp_complete()).
void MrSender::OnAck(const mr_pkt &pkt) {
    if (Done() || mr_sender_ack(&engine_.s, &pkt, Now()))
        return; // reordered, of an abandoned epoch, or bogus
    if (Done())
        return;
    mr_requester *r = &req_.r;
    mr_requester_peer_done(r, &engine_.s, pkt.ack.msn_done);
    while (mr_requester_head(r) == MR_REQ_HEAD_DONE)
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
    if (tp.msn < msgs_) {
        w.stream = msg_[tp.msn].stream;
        w.order = msg_[tp.msn].order;
        w.rsn = msg_[tp.msn].rsn;
    }
    pkt.payload_len = mr_requester_header(&req_.r, &tp, Stale(tp) ? nullptr : &w, &pkt);
    Ptr<Packet> packet = BuildPacket(pkt);
    const uint32_t bytes = packet->GetSize();
    // tx.c: the plane the path leaves on now, recorded for its packets.
    const int plane = Route(-1, id);
    if (plane >= 0)
        mr_plane_track_sent(&track_, id, static_cast<uint32_t>(plane), psn, tp.why != MR_SEND_FIRST,
                            mr_sender_path_nxt(&engine_.s, id));
    SendOn(id, packet, plane);
    stats_.packets++;
    return static_cast<int>(bytes);
}

// Packet @p to the receiver from path @id's socket, ECN-capable, on
// @plane (-1: none).
void MrSender::SendOn(uint32_t id, Ptr<Packet> p, int plane) {
    if (plane >= 0)
        p->AddPacketTag(PlaneTag(static_cast<uint8_t>(plane)));
    // ns-3's UDP takes the TOS byte from the address, not the socket.
    InetSocketAddress to(dst_, kRoceV2Port);
    to.SetTos(kEct0);
    params_.cpu->Run([sock = sock_[id], p, to] { sock->SendTo(p, 0, to); });
}

bool MrSender::Stale(const mr_tx_pkt &tp) const {
    return mr_requester_stale(&req_.r, &tp);
}

void MrSender::RetryExceeded() {
    stats_.failed = true;
    mr_sender_stop(&engine_.s);
    timer_.Cancel();
    pace_.Cancel();
    hello_timer_.Cancel();
}

// The path restarts on a new source port, in a new epoch.
void MrSender::FailedOver(uint32_t id) {
    stats_.failovers++;
    // comp.c: a new PSN space: no plane holds its packets.
    mr_plane_track_restart(&track_, id);
    OpenSocket(id);
}

void MrSender::Event(mr_sender_event ev, uint32_t id, uint32_t arg) {
    // comp.c: a packet lost on a plane the path has left blames no plane.
    if (ev == MR_SEV_RTO && planes_ && mr_plane_track_blames(&track_, id, arg))
        planes_->PathTimeout(&engine_.s.ps, track_.sent, id);
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
    case MR_SEV_SPURIOUS:
        break;
    }
}

void MrSender::Finish() {
    stats_.done_ns = static_cast<int64_t>(Now());
    mr_sender_stop(&engine_.s);
    timer_.Cancel();
    pace_.Cancel();
    hello_timer_.Cancel();
}

void MrSender::Dump() const {
    const mr_sender *s = &engine_.s;
    const mr_requester *r = &req_.r;
    if (params_.hello)
        std::fprintf(stderr,
                     "  hello: sent %u tries %u proven %u peer %s known %d deadline %.0f us "
                     "timer %s, hint %u kbit/s rtt %.1f us\n",
                     hello_.n_sent, hello_.tries, hello_.n_proven, hello_.peer ? "yes" : "no",
                     hello_.known, static_cast<double>(hello_.deadline) / 1e3,
                     hello_timer_.IsRunning() ? "armed" : "idle", hello_.hint_kbps,
                     static_cast<double>(hello_.rtt_ns) / 1e3);
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

} // namespace mrscale

// The sender engine's environment (proto/sender.h): the model's side.
using mrscale::MrSender;

int mr_sender_env_xmit(struct mr_sender *s, u32 id, u32 psn, const struct mr_tx_pkt *tp, u8 flags,
                       enum mr_send_why) {
    return MrSender::Of(s).Xmit(id, psn, *tp, flags);
}

struct mr_tx_ring *mr_sender_env_ring_get(struct mr_sender *s) {
    return MrSender::Of(s).RingGet();
}

void mr_sender_env_ring_put(struct mr_sender *s, struct mr_tx_ring *r) {
    MrSender::Of(s).RingPut(r);
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

void mr_sender_env_event(struct mr_sender *s, enum mr_sender_event ev, u32 id, u32 arg) {
    MrSender::Of(s).Event(ev, id, arg);
}

// The requester engine's environment (proto/requester.h): the model's
// side. Its messages are WRITEs; it sends no READs, so owes no responses.
u32 mr_requester_env_posted(struct mr_requester *r) {
    return MrSender::Of(r).Posted();
}

void mr_requester_env_msg(struct mr_requester *r, u32 msn, struct mr_req_msg *m) {
    MrSender::Of(r).Msg(msn, m);
}

void mr_requester_env_start(struct mr_requester *r, u32 msn, u32 rsn, u8 order) {
    MrSender::Of(r).MsgStart(msn, rsn, order);
}

bool mr_requester_env_response_due(struct mr_requester *) {
    return false;
}

void mr_requester_env_response(struct mr_requester *, struct mr_tx_pkt *) {}
