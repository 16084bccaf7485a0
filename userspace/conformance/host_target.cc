// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The host target: one QP made of the kernel's protocol engines (proto/),
// hosted as the kernel hosts them, on a virtual clock. Each function below
// that mirrors a kernel function names it; the order of checks, the
// counters and the completions are the kernel's (receive.c, handshake.c,
// resp.c, ack.c, comp.c, req.c, tx.c, timers.c, ud.c, qp.c), so that the
// same case files pass here and on a live device.
#include <algorithm>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>

#include "gcm.h"
#include "target.h"

extern "C" {
#include "aead.h"
#include "cc.h"
#include "hello.h"
#include "path.h"
#include "receiver.h"
#include "requester.h"
#include "requeue.h"
#include "responder.h"
#include "sender.h"
#include "share.h"
#include "wire.h"
}

namespace conform {
namespace {

constexpr uint32_t kQpn = 0x000011;
constexpr uint32_t kRkey = 0x1234;
constexpr uint64_t kVa = 0x10000000;
// The kernel's defaults: xport.c's paths parameter, ack.c's ack_delay_us.
constexpr uint32_t kPaths = MR_PATH_DEFAULT;
constexpr uint64_t kAckDelayNs = MR_ACK_DELAY_NS;
// After a fatal NAK, its repeats are this far apart (xport.h).
constexpr uint64_t kFatalNakGapNs = MR_RTO_MIN_NS / 2;
// A re-armed timer that is already due fires a jiffy later (timers.c).
constexpr uint64_t kJiffyNs = 1000000;
// What share.c gives a lone connection on a 10 Gbit/s link: capacity less
// 1/16. The kernel's depends on the link; cases match rate hints as "any".
constexpr uint32_t kHintKbps = 10000000 - 10000000 / 16;
constexpr uint32_t kGrhLen = 40;

// enum ib_wc_status, by value, as ibv_wc_status_str() names them (short).
enum WcStatus : uint32_t {
    kSuccess = 0,
    kLocLenErr = 1,
    kLocQpOpErr = 2,
    kLocProtErr = 4,
    kWrFlushErr = 5,
    kRemInvReqErr = 9,
    kRemAccessErr = 10,
    kRemOpErr = 11,
    kRetryExcErr = 12,
    kRnrRetryExcErr = 13,
};

// Every device counter of kernel/counters.c, so that a case may expect 0.
const char *const kCounterNames[] = {
    "rx_packets",
    "rx_bytes",
    "tx_packets",
    "tx_bytes",
    "rx_drop_short",
    "rx_drop_version",
    "rx_drop_malformed",
    "rx_drop_no_csum",
    "rx_drop_no_qp",
    "rx_drop_no_dev",
    "tx_drop_no_route",
    "tx_drop_error",
    "retransmits",
    "sack_gaps",
    "rto_events",
    "duplicate_packets",
    "out_of_order",
    "path_failovers",
    "tail_probes",
    "rto_deferred",
    "spurious_resends",
    "rnr_naks",
    "ud_rx_drop_qkey",
    "ud_rx_drop_no_recv",
    "ud_rx_too_long",
    "ud_tx_too_long",
    "gsi_tx_packets",
    "gsi_rx_packets",
    "uc_rx_drop_no_recv",
    "uc_rx_drop_remote_access",
    "uc_rx_drop_too_long",
    "uc_rx_drop_recv_fault",
    "uc_rx_drop_invalid",
    "ce_marks",
    "cc_decreases",
    "cc_hint_limited",
    "cc_paced",
    "rx_drop_not_peer",
    "rx_drop_bad_tag",
    "rx_drop_early",
    "hello_tx",
    "hello_rx",
    "rx_refused_map_budget",
    "fatal_naks",
    "fatal_naks_suppressed",
    "acks_held",
    "rx_drop_rd_excess",
    "rx_drop_bogus_nak",
    "rx_bogus_msn_done",
    "tx_encrypted",
    "rx_decrypted",
    "rx_drop_auth",
    "rx_drop_not_encrypted",
    "rx_drop_encrypted",
    "rx_drop_no_key",
    "tx_drop_no_key",
    "rx_peer_unproven",
    "rx_drop_replay",
    "rx_key_rate_limited",
    "peer_evictions",
    "peer_table_full",
};

// A UC drop: its counter and the status of the receive it owned (resp.c).
struct RxDrop {
    const char *counter;
    uint32_t status;
};
const RxDrop kRxDrops[] = {
    {nullptr, kSuccess},
    {"uc_rx_drop_no_recv", kSuccess},
    {"rx_refused_map_budget", kRemInvReqErr},
    {"uc_rx_drop_invalid", kRemInvReqErr},
    {"uc_rx_drop_remote_access", kRemAccessErr},
    {"uc_rx_drop_too_long", kLocLenErr},
    {"uc_rx_drop_recv_fault", kLocProtErr},
};

// What the entry point does after an engine took a packet (xport.h).
enum class Next { None, Push, Respond };

// The kernel's jhash_2words(): it seeds the paths' source ports (req.c).
uint32_t Rol32(uint32_t w, int s) {
    return w << s | w >> (32 - s);
}
uint32_t Jhash2Words(uint32_t a, uint32_t b, uint32_t initval) {
    uint32_t c = 0;
    initval += 0xdeadbeef + (2 << 2);
    a += initval;
    b += initval;
    c += initval;
    c ^= b;
    c -= Rol32(b, 14);
    a ^= c;
    a -= Rol32(c, 11);
    b ^= a;
    b -= Rol32(a, 25);
    c ^= b;
    c -= Rol32(b, 16);
    a ^= c;
    a -= Rol32(c, 4);
    b ^= a;
    b -= Rol32(a, 14);
    c ^= b;
    c -= Rol32(b, 24);
    return c;
}

// A send WQE, with what the kernel keeps beside it (struct mr_wqe_tx).
struct SendWqe {
    SendWr wr;
    uint32_t length = 0;
    uint8_t wire_op = 0;
    bool rd = false, consumes = false;
    uint32_t rsn = 0;
    uint8_t order = MR_ORDER_PREV;
    bool started = false;
    mr_req_slices resp{};
    std::vector<u64> map; // of a READ of more than 64 slices
};

struct RecvWqe {
    uint64_t wr_id;
    uint32_t offset, length;
    bool completed = false; // ahead of the head, by a stream
};

// --- encryption: crypt.c ---------------------------------------------------

// The addresses of the host target's ends: what its UD GRH names.
const uint8_t kQpIp[4] = {10, 0, 0, 1}, kPeerIp[4] = {10, 0, 0, 2}, kForeignIp[4] = {10, 0, 0, 3};

// A device's encryption (struct mr_crypt): its psk, the peers it has keys
// for, with the replay window of each. It lives with the target (the device)
// and outlives each QP, as keys outlive QPs in the kernel. The work item
// that makes keys runs at once, before the next packet.
class HostCrypt {
public:
    using CountFn = std::function<void(const char *)>;

    HostCrypt(const Psk &psk) : psk_(psk), qp_(V4Mapped(kQpIp)) {}

    static Bytes PeerAddr(bool foreign) { return V4Mapped(foreign ? kForeignIp : kPeerIp); }

    // mr_crypt_peer_prepare(): modify_qp to RTR, a sleepable AH.
    void Prepare(bool foreign) { Make(PeerAddr(foreign), nullptr); }

    // mr_crypt_tx(): false when the packet must be dropped (counted).
    bool Tx(Bytes *b, bool foreign, const CountFn &count) {
        const Bytes peer = PeerAddr(foreign);
        if (!peers_.count(peer)) {
            Make(peer, nullptr); // the work item, asked by the packet path
            count("tx_drop_no_key");
            return false;
        }
        *b = Seal(DeriveKey(psk_, qp_, peer), *b, NextCounter());
        count("tx_encrypted");
        return true;
    }

    // mr_crypt_rx(): *clear the clear packet, or false when it is dropped
    // (counted), in crypt.c's order of checks.
    bool Rx(const Bytes &b, bool foreign, Bytes *clear, const CountFn &count) {
        const Bytes peer = PeerAddr(foreign);
        if (!mr_aead_is_encrypted(b.data()))
            return count("rx_drop_not_encrypted"), false;
        u32 text_len;
        if (mr_aead_text_len(static_cast<u32>(b.size()), &text_len))
            return count("rx_drop_short"), false;
        if (!peers_.count(peer)) {
            count("rx_drop_no_key");
            if (!Make(peer, &b))
                count("rx_peer_unproven");
            return false;
        }
        OpenError err;
        auto o = Open(DeriveKey(psk_, peer, qp_), b, &err);
        if (!o)
            return count(OpenErrorName(err)), false;
        if (mr_aead_replay_check(&peers_[peer], o->counter))
            return count("rx_drop_replay"), false;
        *clear = std::move(o->clear);
        count("rx_decrypted");
        return true;
    }

private:
    // mr_crypt_peer_make(): kept only if @pkt, the packet that asked,
    // opens with them.
    bool Make(const Bytes &peer, const Bytes *pkt) {
        OpenError err;
        if (pkt && !Open(DeriveKey(psk_, peer, qp_), *pkt, &err))
            return false;
        peers_.try_emplace(peer, mr_aead_replay{});
        return true;
    }

    Psk psk_;
    Bytes qp_;
    std::map<Bytes, mr_aead_replay> peers_;
};

class HostQp;
// The QP the engines' environment functions serve: one at a time.
HostQp *g_qp = nullptr;

class HostQp {
public:
    HostQp(const QpSpec &spec, uint64_t now, uint64_t tag, HostCrypt *crypt = nullptr)
        : spec_(spec), now_(now), crypt_(crypt) {
        for (const char *n : kCounterNames)
            counters_[n] = 0;
        mem_.resize(spec.mem_len);
        for (uint32_t i = 0; i < spec.mem_len; i++)
            mem_[i] = Pattern(0, i);
        if (spec.type == QpType::UD) {
            state_ = "rts";
            return;
        }
        // xport.c: mr_xport_create().
        path_.resize(kPaths);
        mr_sender_timing tm;
        mr_sender_timing_default(&tm);
        mr_cc_params ccp = CcDefaults();
        mr_sender_setup(&snd_, path_.data(), kPaths, MR_PATH_DEFAULT_FAIL_AFTER, &tm, &ccp);
        // RTR (mr_xport_modify()): the MTU, our tag, the responder.
        mtu_ = spec.mtu;
        mr_hello_init(&hello_, tag);
        mr_receiver_start(&rcv_, kPeerPsn);
        rx_on_ = true;
        mr_responder_init(&rsp_, mtu_, spec.type == QpType::UC);
        mr_responder_set_rd_max(&rsp_, spec.max_dest_rd_atomic);
        // RTS: the requester starts, and with it the handshake.
        state_ = "rts";
        ReqStart(false);
        if (HandshakeSend())
            RetryExceeded();
        Settle();
    }
    ~HostQp() {
        if (spec_.type != QpType::UD) {
            mr_sender_release(&snd_);
            mr_responder_free(&rsp_);
        }
    }

    HostQp(const HostQp &) = delete;
    HostQp &operator=(const HostQp &) = delete;

    // --- verbs -----------------------------------------------------------

    int PostRecv(uint64_t wr_id, uint32_t offset, uint32_t length) {
        if (uint64_t{offset} + length > mem_.size())
            return EINVAL;
        rq_.push_back({wr_id, offset, length});
        if (state_ == "err")
            FlushRq();
        return 0;
    }

    int PostSend(const SendWr &wr) {
        SendWqe w;
        w.wr = wr;
        w.length = wr.length;
        if (!SendOpcode(wr.op, &w))
            return EINVAL;
        // qp.c: atomics take one 8-byte SGE and an aligned address.
        if (wr.op == "cas" || wr.op == "faa") {
            if (!w.length)
                w.length = 8;
            if (w.length != 8 || wr.va % 8)
                return EINVAL;
        }
        if (uint64_t{wr.offset} + w.length > mem_.size())
            return EINVAL; // mr_qp_check_sges()
        if (spec_.type == QpType::UD)
            return PostUd(w);
        sq_.push_back(std::move(w));
        SendWqe &q = sq_.back();
        q.resp.map = &q.resp.map1;
        uint32_t slices = std::max<uint32_t>(1, (q.length + mtu_ - 1) / mtu_);
        if (q.wire_op == MR_OP_READ_REQ && slices > 64) {
            q.map.assign((slices + 63) / 64, 0);
            q.resp.map = q.map.data();
        }
        if (state_ == "err") {
            FlushSq();
            return 0;
        }
        // mr_xport_kick().
        Push();
        if (HandshakeSend())
            RetryExceeded();
        Settle();
        return 0;
    }

    std::optional<Completion> PollCq() {
        if (cq_.empty())
            return std::nullopt;
        Completion c = cq_.front();
        cq_.pop_front();
        return c;
    }

    Bytes ReadMem(uint32_t offset, uint32_t length) {
        if (offset >= mem_.size())
            return {};
        length = std::min<uint32_t>(length, mem_.size() - offset);
        return Bytes(mem_.begin() + offset, mem_.begin() + offset + length);
    }

    std::string State() const { return state_; }
    std::map<std::string, int64_t> Counters() const { return counters_; }
    bool HasCompletion() const { return !cq_.empty(); }
    bool HasOutput() const { return !out_.empty(); }
    uint64_t Now() const { return now_; }

    std::optional<Datagram> TakeOutput() {
        if (out_.empty())
            return std::nullopt;
        Datagram d = std::move(out_.front());
        out_.pop_front();
        return d;
    }

    // --- time ------------------------------------------------------------

    // Fires the earliest timer due at or before @limit, at its time:
    // false when none is.
    bool Step(uint64_t limit) {
        uint64_t main = MainDeadline(), pace = PaceDeadline(), ack = AckDeadline();
        uint64_t next = 0;
        for (uint64_t d : {main, pace, ack})
            if (d && (!next || d < next))
                next = d;
        if (!next || next > limit)
            return false;
        now_ = std::max(now_, next);
        if (ack && ack <= now_) {
            // timers.c: mr_timers_ack().
            mr_receiver_timeout(&rcv_, now_);
        } else if (pace && pace <= now_) {
            // mr_timers_pace().
            mr_sender_pace_over(&snd_);
            Push();
        } else {
            // mr_timers_fire().
            main_fired_ = now_;
            if (req_.rnr_wait && req_.rnr_deadline <= now_)
                mr_requester_rnr_resume(&req_);
            mr_sender_timeout(&snd_, now_);
            if (HandshakeSend())
                RetryExceeded();
            Push();
        }
        Settle();
        return true;
    }

    void RunUntil(uint64_t t) {
        while (Step(t)) {
        }
        now_ = std::max(now_, t);
    }

    // --- the receive path: receive.c --------------------------------------

    void Inject(const Datagram &d) {
        uint32_t len = d.payload.size();
        Count("rx_packets");
        Count("rx_bytes", len);
        if (d.no_csum)
            return Count("rx_drop_no_csum");
        if (len < MR_BASE_HDR_LEN)
            return Count("rx_drop_short");
        Bytes clear;
        if (crypt_) {
            if (!crypt_->Rx(d.payload, d.foreign, &clear, [this](const char *c) { Count(c); }))
                return;
            len = clear.size();
        } else if (mr_aead_is_encrypted(d.payload.data())) {
            // mr_crypt_rx() without keys: the codec refuses the flag.
            Count("rx_drop_encrypted");
        }
        const Bytes &b = crypt_ ? clear : d.payload;
        mr_pkt pkt{};
        int err = mr_wire_decode(b.data(), len, &pkt);
        if (err) {
            if (err == -MR_ETRUNC)
                return Count("rx_drop_short");
            if (err == -MR_EVERSION)
                return Count("rx_drop_version");
            return Count("rx_drop_malformed");
        }
        // mr_receive_packet(): datagrams to UD QPs, the rest to RC and UC.
        bool ud = mr_wire_op_flags(pkt.base.opcode) & MR_WIRE_F_DATAGRAM;
        if (pkt.base.qpn != kQpn || ud != (spec_.type == QpType::UD))
            return Count("rx_drop_no_qp");
        if (ud)
            return UdRcv(d, pkt, b.data() + pkt.hdr_len);
        ReceiveXport(d, pkt, b.data() + pkt.hdr_len);
        Settle();
    }

private:
    // --- counters and output ---------------------------------------------

    void Count(const char *name, int64_t n = 1) { counters_[name] += n; }

    // mr_socket_xmit(): ECT(0) on everything it sends.
    void Emit(Bytes bytes, uint16_t sport) {
        // mr_crypt_tx(): to the peer, the only address the QP sends to.
        if (crypt_ && !crypt_->Tx(&bytes, false, [this](const char *c) { Count(c); }))
            return;
        Count("tx_packets");
        Count("tx_bytes", bytes.size());
        Datagram d;
        d.payload = std::move(bytes);
        d.sport = sport;
        d.ect = true;
        out_.push_back(std::move(d));
    }

    void Complete(Completion c) { cq_.push_back(std::move(c)); }

    static mr_cc_params CcDefaults() {
        // congestion.c: mr_congestion_defaults() with its module defaults.
        mr_cc_params def, prm;
        mr_cc_params_default(&def);
        prm = def;
        prm.enabled = true;
        prm.target_floor_ns = 5000ull * 1000;
        prm.min_window = MR_CC_ONE;
        if (mr_cc_params_check(&prm)) {
            prm = def;
            prm.enabled = true;
        }
        return prm;
    }

    // The wire opcode of a WR on this QP type (opcode.c), 0: refused.
    bool SendOpcode(const std::string &op, SendWqe *w) const {
        bool rc = spec_.type == QpType::RC, ud = spec_.type == QpType::UD;
        uint8_t o = 0;
        if (op == "send")
            o = ud ? MR_OP_UD_SEND : MR_OP_SEND, w->consumes = true;
        else if (op == "send_imm")
            o = ud ? MR_OP_UD_SEND_IMM : MR_OP_SEND_IMM, w->consumes = true;
        else if (op == "send_inv" && rc)
            o = MR_OP_SEND_INV, w->consumes = true;
        else if (op == "write" && !ud)
            o = MR_OP_WRITE;
        else if (op == "write_imm" && !ud)
            o = MR_OP_WRITE_IMM, w->consumes = true;
        else if (op == "read" && rc)
            o = MR_OP_READ_REQ, w->rd = true;
        else if (op == "cas" && rc)
            o = MR_OP_CMP_SWAP, w->rd = true;
        else if (op == "faa" && rc)
            o = MR_OP_FETCH_ADD, w->rd = true;
        w->wire_op = o;
        return o != 0;
    }

    static const char *WcOpcode(const std::string &op) {
        if (op == "write" || op == "write_imm")
            return "rdma_write";
        if (op == "read")
            return "rdma_read";
        if (op == "cas")
            return "comp_swap";
        if (op == "faa")
            return "fetch_add";
        return "send";
    }

    // --- memory: mr.c for one region with every right --------------------

    // 0, or -EACCES: the rkey, or the range within the region.
    int MrCheck(uint32_t rkey, uint64_t va, uint64_t len) const {
        if (rkey != kRkey)
            return -EACCES;
        if (va < kVa || va - kVa > mem_.size() || len > mem_.size() - (va - kVa))
            return -EACCES;
        return 0;
    }
    uint8_t *At(uint64_t va) { return mem_.data() + (va - kVa); }

    // --- state: qp.c -----------------------------------------------------

    // mr_qp_fatal(): the error work moves the QP to ERR once the entry
    // point is done (Settle()).
    void Fatal() { fatal_pending_ = true; }

    void Settle() {
        if (!fatal_pending_)
            return;
        fatal_pending_ = false;
        if (state_ != "rts" && state_ != "rtr")
            return;
        state_ = "err";
        // mr_xport_stop(): requester and responder stop.
        mr_sender_stop(&snd_);
        mr_requester_stop(&req_);
        rx_on_ = false;
        FlushSq();
        FlushRq();
    }

    void FlushSq() {
        while (!sq_.empty()) {
            Completion c;
            c.wr_id = sq_.front().wr.wr_id;
            c.status = WcStatusName(kWrFlushErr);
            c.opcode = WcOpcode(sq_.front().wr.op);
            c.byte_len = sq_.front().length;
            sq_.pop_front();
            Complete(c);
        }
    }

    void FlushRq() {
        while (!rq_.empty()) {
            Completion c;
            c.wr_id = rq_.front().wr_id;
            c.status = WcStatusName(kWrFlushErr);
            c.opcode = "recv";
            const bool completed = rq_.front().completed;
            rq_.pop_front();
            if (!completed)
                Complete(c);
        }
    }

    // --- UD: ud.c --------------------------------------------------------

    int PostUd(SendWqe &w) {
        if (state_ == "err" || state_ == "sqe") {
            Complete({w.wr.wr_id, WcStatusName(kWrFlushErr), "send", w.length, {}, 0});
            return 0;
        }
        // mr_ud_xmit(): one datagram of at most the path MTU.
        if (w.length > spec_.mtu) {
            Count("ud_tx_too_long");
            state_ = "sqe";
            Complete({w.wr.wr_id, WcStatusName(kLocLenErr), "send", w.length, {}, 0});
            return 0;
        }
        mr_pkt pkt{};
        pkt.base.opcode = w.wire_op;
        if (w.wr.solicited)
            pkt.base.flags = MR_FLAG_SOLICITED;
        pkt.base.qpn = w.wr.remote_qpn;
        pkt.base.psn = ud_psn_++;
        pkt.ud.src_qpn = kQpn;
        pkt.ud.qkey = w.wr.remote_qkey & 0x80000000u ? spec_.qkey : w.wr.remote_qkey;
        pkt.ud.imm = w.wr.imm;
        pkt.payload_len = w.length;
        Bytes buf(MR_MAX_HDR_LEN + w.length);
        int h = mr_wire_encode(&pkt, buf.data(), buf.size());
        if (h < 0)
            return EINVAL;
        std::memcpy(buf.data() + h, mem_.data() + w.wr.offset, w.length);
        buf.resize(h + w.length);
        Emit(std::move(buf), 0xc000 | (kQpn & 0x3fff));
        Complete({w.wr.wr_id, "success", "send", w.length, {}, 0});
        return 0;
    }

    // mr_ud_rcv(): the GRH area holds an IPv4 header in its last 20 bytes.
    void UdRcv(const Datagram &d, const mr_pkt &pkt, const uint8_t *data) {
        uint32_t len = pkt.payload_len;
        if (pkt.ud.qkey != spec_.qkey)
            return Count("ud_rx_drop_qkey");
        if (rq_.empty() || state_ == "err") {
            Count("ud_rx_drop_no_recv");
            return;
        }
        RecvWqe r = rq_.front();
        rq_.pop_front();
        Completion c;
        c.wr_id = r.wr_id;
        c.opcode = "recv";
        c.byte_len = kGrhLen + len;
        c.src_qp = pkt.ud.src_qpn;
        if (kGrhLen + len > r.length) {
            Count("ud_rx_too_long");
            c.status = WcStatusName(kLocLenErr);
        } else {
            uint8_t *g = mem_.data() + r.offset;
            std::memset(g, 0, kGrhLen);
            uint8_t *ip = g + 20;
            uint32_t tot = 20 + 8 + d.payload.size();
            ip[0] = 0x45;
            ip[1] = d.ce ? 3 : 2; // ECN: CE, or the ECT(0) senders set
            mr_put_be16(ip + 2, tot);
            ip[6] = 0x40; // DF
            ip[8] = 64;
            ip[9] = 17;
            const uint8_t src[4] = {10, 0, 0, 2}, dst[4] = {10, 0, 0, 1};
            std::memcpy(ip + 12, src, 4);
            std::memcpy(ip + 16, dst, 4);
            uint32_t sum = 0;
            for (int i = 0; i < 20; i += 2)
                sum += mr_get_be16(ip + i);
            while (sum >> 16)
                sum = (sum & 0xffff) + (sum >> 16);
            mr_put_be16(ip + 10, static_cast<uint16_t>(~sum));
            if (len)
                std::memcpy(g + kGrhLen, data, len);
            c.status = "success";
        }
        if (mr_wire_op_flags(pkt.base.opcode) & MR_WIRE_F_IMM)
            c.imm = pkt.ud.imm;
        Complete(c);
    }

    // --- RC and UC: receive.c's mr_receive_xport() --------------------------

    void ReceiveXport(const Datagram &d, const mr_pkt &pkt, const uint8_t *data) {
        Next next = Next::None;
        const char *drop = "rx_drop_not_peer";
        if (d.foreign || (pkt.base.opcode != MR_OP_HELLO && !HandshakeCheck(pkt, d.sport, &drop)))
            return Count(drop);
        switch (pkt.base.opcode) {
        case MR_OP_HELLO:
            HandshakeRcv(pkt, d.sport);
            next = Next::Push;
            break;
        case MR_OP_ACK:
            next = CompAckRcv(pkt);
            break;
        case MR_OP_NAK:
            CompNakRcv(pkt);
            break;
        default:
            if (mr_wire_op_flags(pkt.base.opcode) & MR_WIRE_F_RESPONSE)
                next = CompRespIn(pkt, d, data);
            else
                next = RespRcv(pkt, d, data);
            break;
        }
        if (next == Next::Respond)
            Respond();
        else if (next == Next::Push)
            Push();
        if (HandshakeSend())
            RetryExceeded();
    }

    // --- handshake.c -----------------------------------------------------

    uint32_t ShareHint() const { return snd_.ccp.enabled ? kHintKbps : 0; }

    void HandshakeXmit(mr_pkt *hello, uint16_t sport) {
        hello->hello.rate_hint = ShareHint();
        TxControl(hello, sport);
    }

    bool HandshakeCheck(const mr_pkt &pkt, uint16_t sport, const char **drop) {
        mr_pkt hello{};
        switch (mr_hello_check(&hello_, pkt.base.tag)) {
        case MR_HELLO_PASS:
            return true;
        case MR_HELLO_BAD_TAG:
            *drop = "rx_drop_bad_tag";
            return false;
        case MR_HELLO_EARLY:
            break;
        }
        if (mr_hello_early(&hello_, now_, &hello))
            HandshakeXmit(&hello, sport);
        *drop = "rx_drop_early";
        return false;
    }

    void HandshakeRcv(const mr_pkt &pkt, uint16_t sport) {
        bool ready = mr_hello_ready(&hello_);
        mr_pkt reply{};
        Count("hello_rx");
        if (!hello_.local)
            return;
        if (mr_hello_rcv(&hello_, &pkt, now_, &reply))
            HandshakeXmit(&reply, sport);
        if (!ready && mr_hello_ready(&hello_))
            mr_sender_hello(&snd_, hello_.hint_kbps, hello_.rtt_ns, now_);
    }

    bool HandshakeSend() {
        mr_pkt hello{};
        if (!hello_.deadline)
            return false;
        if (!snd_.on || !snd_.npaths ||
            !mr_hello_due(&hello_, now_, MR_RTO_MIN_NS, MR_RTO_MAX_NS, &hello))
            return false;
        if (hello_.tries > (Retries() + 1) * snd_.fail_after) {
            mr_hello_stop(&hello_);
            return !sq_.empty();
        }
        uint32_t id = (hello_.tries - 1) % snd_.npaths;
        HandshakeXmit(&hello, mr_sender_path_port(&snd_, id));
        return false;
    }

    // --- req.c -----------------------------------------------------------

    void ReqStart(bool early) {
        uint32_t seed = Jhash2Words(kQpn, kPeerQpn, 0);
        mr_requester_start(&req_, mtu_, spec_.rnr_retry);
        mr_sender_start(&snd_, kQpPsn, early, seed, mtu_ + MR_TRANSPORT_HDR_RESERVE);
        mr_hello_start(&hello_, now_);
    }

    void Push() {
        if (!snd_.on)
            return;
        if (!mr_hello_ready(&hello_)) {
            if (!sq_.empty())
                mr_hello_start(&hello_, now_);
            return;
        }
        mr_requester_push(&req_, &snd_, spec_.max_rd_atomic, now_);
    }

    void Respond() {
        if (!snd_.on)
            ReqStart(true);
        Push();
    }

    uint32_t Retries() const { return spec_.type == QpType::UC ? 7 : spec_.retry_cnt; }

    // --- timers.c: the three deadlines -------------------------------------

    uint64_t MainDeadline() const {
        if (!snd_.on)
            return 0;
        uint64_t next = mr_requester_expiry(&req_);
        if (hello_.deadline && (!next || hello_.deadline < next))
            next = hello_.deadline;
        uint64_t d = mr_sender_expiry(&snd_);
        if (d && (!next || d < next))
            next = d;
        // Re-armed while due: the next jiffy.
        if (next && main_fired_ && next <= main_fired_)
            next = main_fired_ + kJiffyNs;
        return next;
    }
    uint64_t PaceDeadline() const { return snd_.on ? snd_.pace_ns : 0; }
    uint64_t AckDeadline() const { return rx_on_ ? mr_receiver_expiry(&rcv_) : 0; }

    // --- ack.c -----------------------------------------------------------

    bool AckAdmit(const mr_pkt &pkt, uint16_t sport) {
        if (fatal_)
            AckRefuseAgain(pkt, sport);
        if (fatal_ || !rx_on_) {
            Count("rx_drop_no_qp");
            return false;
        }
        return true;
    }

    void AckRefuseAgain(const mr_pkt &pkt, uint16_t sport) {
        if (now_ - fatal_nak_ns_ < kFatalNakGapNs) {
            Count("fatal_naks_suppressed");
            return;
        }
        fatal_nak_ns_ = now_;
        AckNak(pkt, sport, fatal_msn_, fatal_);
        Count("fatal_naks");
    }

    void AckNak(const mr_pkt &pkt, uint16_t sport, uint32_t msn, uint8_t code) {
        if (code == MR_NAK_RNR)
            Count("rnr_naks");
        mr_receiver_nak(&rcv_, &pkt, sport, msn, code, spec_.min_rnr_timer);
    }

    void AckRefuse(uint32_t msn, uint8_t code) {
        fatal_ = code;
        fatal_msn_ = msn;
        fatal_nak_ns_ = now_;
        rx_on_ = false;
        Fatal();
    }

public:
    void AckRefuseLate(uint32_t msn, uint8_t code, uint8_t path) {
        AckRefuse(msn, code);
        mr_receiver_nak_late(&rcv_, path, msn, code);
    }

private:
    // --- resp.c ----------------------------------------------------------

    Next RespRcv(const mr_pkt &pkt, const Datagram &d, const uint8_t *data) {
        mr_rx rx{};
        rx.pkt = &pkt;
        rx.data = data;
        bool ack_now = false;
        if (!AckAdmit(pkt, d.sport))
            return Next::None;
        rx.new_pkt = mr_receiver_fresh(&rcv_, &pkt);
        mr_responder_admit(&rsp_, &rx);
        if (rx.kind == MR_RX_DROP)
            return Next::None;
        mr_sack_rx_res res = mr_receiver_arrival(&rcv_, &pkt, d.sport, d.ce, &ack_now);
        if (res != MR_SACK_NEW) {
            mr_responder_unadmit(&rsp_, &rx);
            if (res == MR_SACK_DUP && rx.kind == MR_RX_RNR)
                AckNak(pkt, d.sport, rx.ri.msn, MR_NAK_RNR);
            return Next::None;
        }
        return RespAct(&rx, d.sport, ack_now);
    }

    Next RespAct(mr_rx *rx, uint16_t sport, bool ack_now) {
        const mr_pkt *pkt = rx->pkt;
        bool complete = false, dup = false;
        uint8_t nak = 0;
        switch (rx->kind) {
        case MR_RX_RNR:
            nak = MR_NAK_RNR;
            break;
        case MR_RX_REFUSE:
            Count("rx_refused_map_budget");
            nak = MR_NAK_INVALID_REQUEST;
            break;
        case MR_RX_MESSAGE:
            nak = mr_responder_place(&rsp_, rx, &complete, &dup);
            break;
        default:
            Count("duplicate_packets");
            break;
        }
        if (nak && nak != MR_NAK_RNR)
            AckRefuse(rx->ri.msn, nak);
        if (nak)
            AckNak(*pkt, sport, rx->ri.msn, nak);
        if (complete) {
            bool respond = mr_responder_advance(&rsp_, fatal_);
            mr_receiver_ack_all(&rcv_, now_);
            return respond ? Next::Respond : Next::None;
        }
        mr_receiver_coalesce(&rcv_, pkt->base.path, pkt->base.psn,
                             ack_now || nak || rx->kind == MR_RX_OLD || dup, now_);
        return Next::None;
    }

public:
    // The responder engine's environment (resp.c).
    void RespRetireRecv() { rq_.pop_front(); }
    bool RespPosted(uint32_t recv) const { return recv - rsp_.rsn_head < rq_.size(); }

    int RespWrite(const mr_rx *rx) {
        const mr_pkt *p = rx->pkt;
        uint32_t len = p->payload_len;
        if (!spec_.remote_write)
            return -MR_EACCESS;
        if (!len)
            return 0;
        uint64_t va = p->write.va + p->write.offset;
        if (MrCheck(p->write.rkey, va, len))
            return -MR_EACCESS;
        std::memcpy(At(va), rx->data, len);
        return 0;
    }

    int RespScatter(const mr_rx *rx, uint32_t recv) {
        if (recv - rsp_.rsn_head >= rq_.size())
            return -MR_EACCESS;
        const RecvWqe &r = rq_[recv - rsp_.rsn_head];
        uint32_t len = rx->pkt->payload_len;
        if (rx->ri.length > r.length)
            return -MR_ELENGTH;
        if (uint64_t{rx->ri.offset} + len > r.length)
            return -MR_EACCESS;
        if (len)
            std::memcpy(mem_.data() + r.offset + rx->ri.offset, rx->data, len);
        return 0;
    }

    uint8_t RespCheckRd(const mr_rx_msg *m) const {
        bool read = m->opcode == MR_OP_READ_REQ;
        uint32_t len = read ? m->rd_len : 8;
        if (!(read ? spec_.remote_read : spec_.remote_atomic))
            return MR_NAK_INVALID_REQUEST;
        if (!read && m->va % 8)
            return MR_NAK_INVALID_REQUEST;
        if (!len)
            return 0;
        return MrCheck(m->rkey, m->va, len) ? MR_NAK_REMOTE_ACCESS : 0;
    }

    uint8_t RespAtomic(const mr_rx_msg *m, u64 *orig) {
        if (MrCheck(m->rkey, m->va, 8) || m->va % 8)
            return MR_NAK_REMOTE_ACCESS;
        uint64_t v;
        std::memcpy(&v, At(m->va), 8);
        *orig = v;
        if (m->opcode == MR_OP_CMP_SWAP) {
            if (v == m->compare)
                v = m->swap_add;
        } else {
            v += m->swap_add;
        }
        std::memcpy(At(m->va), &v, 8);
        return 0;
    }

    // The receive stays queued until RespRetireRecv(): a stream's may
    // complete ahead of the head.
    bool RespCompleteRecv(const mr_rx_msg *m, uint8_t error) {
        if (m->recv - rsp_.rsn_head >= rq_.size())
            return false;
        RecvWqe &r = rq_[m->recv - rsp_.rsn_head];
        r.completed = true;
        unsigned flags = mr_wire_op_flags(m->opcode);
        Completion c;
        c.wr_id = r.wr_id;
        c.opcode = "recv";
        uint32_t status = kRxDrops[error].status;
        if (status != kSuccess) {
            c.status = WcStatusName(status);
            Complete(c);
            return true;
        }
        c.status = "success";
        c.byte_len = m->length;
        if (m->opcode == MR_OP_WRITE_IMM)
            c.opcode = "recv_rdma_imm";
        if (flags & MR_WIRE_F_IMM)
            c.imm = m->imm;
        else if (flags & MR_WIRE_F_INVALIDATES)
            c.status = WcStatusName(kLocProtErr); // our one MR is no fast-reg MR
        Complete(c);
        return true;
    }

    void RespEvent(mr_responder_event ev, uint32_t arg) {
        static const char *const names[] = {"rx_drop_malformed", "rx_drop_short",
                                            "duplicate_packets", nullptr, "rx_drop_rd_excess"};
        if (ev == MR_RSE_DROPPED)
            Count(arg < std::size(kRxDrops) && kRxDrops[arg].counter ? kRxDrops[arg].counter
                                                                     : "uc_rx_drop_invalid");
        else
            Count(names[ev]);
    }

private:
    // --- comp.c ----------------------------------------------------------

    bool CompPop(uint32_t status) {
        if (sq_.empty())
            return false;
        SendWqe &w = sq_.front();
        Completion c;
        c.wr_id = w.wr.wr_id;
        c.opcode = WcOpcode(w.wr.op);
        c.byte_len = w.length;
        c.status = WcStatusName(status);
        bool rd_open = req_.msn_head != req_.msn_send && w.rd && !w.resp.done;
        sq_.pop_front();
        mr_requester_retire(&req_, rd_open);
        Complete(c);
        return true;
    }

public:
    void CompComplete() {
        while (snd_.on) {
            switch (mr_requester_head(&req_)) {
            case MR_REQ_HEAD_DONE:
                if (!CompPop(kSuccess))
                    return;
                break;
            case MR_REQ_HEAD_FAILED:
                CompPop(req_.err_status);
                mr_sender_stop(&snd_);
                Fatal();
                return;
            default:
                return;
            }
        }
    }

    void CompFail(uint32_t msn, uint32_t status) {
        if (mr_requester_fail(&req_, msn, status))
            CompComplete();
    }

    void RetryExceeded() { CompFail(req_.msn_head, kRetryExcErr); }

private:
    SendWqe *WqeOf(uint32_t msn) {
        uint32_t i = msn - req_.msn_head;
        return i < sq_.size() ? &sq_[i] : nullptr;
    }

    bool CompRespRcv(const mr_pkt &pkt, const uint8_t *data) {
        bool read = pkt.base.opcode == MR_OP_READ_RESP;
        uint32_t msn = read ? pkt.read_resp.msn : pkt.atomic_resp.msn;
        if (!snd_.on || mr_seq_before(msn, req_.msn_head) || !mr_seq_before(msn, req_.msn_hi)) {
            Count("duplicate_packets");
            return false;
        }
        SendWqe *w = WqeOf(msn);
        if (!w || !w->rd || read != (w->wire_op == MR_OP_READ_REQ)) {
            Count("rx_drop_malformed");
            return false;
        }
        if (read) {
            switch (mr_requester_read_slice(&req_, w->length, &w->resp, &pkt)) {
            case MR_REQ_SLICE_MALFORMED:
                Count("rx_drop_malformed");
                return false;
            case MR_REQ_SLICE_DUP:
                Count("duplicate_packets");
                return false;
            case MR_REQ_SLICE_EMPTY:
                CompFail(msn, kRemAccessErr);
                return false;
            case MR_REQ_SLICE_NEW:
                break;
            }
            if (pkt.payload_len)
                std::memcpy(mem_.data() + w->wr.offset + pkt.read_resp.offset, data,
                            pkt.payload_len);
        } else {
            if (w->resp.done) {
                Count("duplicate_packets");
                return false;
            }
            uint64_t orig = pkt.atomic_resp.orig;
            std::memcpy(mem_.data() + w->wr.offset, &orig, 8);
        }
        mr_requester_answered(&req_, msn, &w->resp, read ? w->length : 0);
        if (!w->resp.done)
            return false;
        CompComplete();
        return true;
    }

    Next CompRespIn(const mr_pkt &pkt, const Datagram &d, const uint8_t *data) {
        bool ack_now = false;
        if (!AckAdmit(pkt, d.sport) ||
            mr_receiver_arrival(&rcv_, &pkt, d.sport, d.ce, &ack_now) != MR_SACK_NEW)
            return Next::None;
        if (CompRespRcv(pkt, data)) {
            mr_receiver_ack_all(&rcv_, now_);
            return Next::Push;
        }
        mr_receiver_coalesce(&rcv_, pkt.base.path, pkt.base.psn, ack_now, now_);
        return Next::None;
    }

    Next CompAckRcv(const mr_pkt &pkt) {
        if (!snd_.on) {
            Count("rx_drop_no_qp");
            return Next::None;
        }
        int err = mr_sender_ack(&snd_, &pkt, now_);
        if (err) {
            Count(err == -MR_ESTALE ? "duplicate_packets" : "rx_drop_malformed");
            return Next::None;
        }
        if (!snd_.on)
            return Next::None;
        if (!mr_requester_peer_done(&req_, &snd_, pkt.ack.msn_done))
            Count("rx_bogus_msn_done");
        CompComplete();
        return Next::Push;
    }

    void CompNakRcv(const mr_pkt &pkt) {
        uint32_t msn = pkt.nak.msn;
        if (!snd_.on) {
            Count("rx_drop_no_qp");
            return;
        }
        if (spec_.type == QpType::UC) {
            Count("rx_drop_malformed");
            return;
        }
        switch (mr_requester_nak(&req_, &snd_, &pkt, spec_.rnr_retry, now_)) {
        case MR_REQ_NAK_OLD:
            Count("duplicate_packets");
            break;
        case MR_REQ_NAK_BOGUS:
            Count("rx_drop_bogus_nak");
            break;
        case MR_REQ_NAK_FAIL:
            CompFail(msn, pkt.nak.code == MR_NAK_REMOTE_ACCESS ? kRemAccessErr : kRemInvReqErr);
            break;
        case MR_REQ_NAK_RNR_SPENT:
            CompFail(msn, kRnrRetryExcErr);
            break;
        default:
            break;
        }
    }

public:
    // --- tx.c: the sender engine's xmit ------------------------------------

    int TxSend(uint32_t id, uint32_t psn, const mr_tx_pkt *tp, uint8_t flags, bool resend) {
        mr_pkt pkt{};
        const SendWqe *w = nullptr;
        pkt.base.path = id;
        pkt.base.epoch = mr_sender_path_epoch(&snd_, id);
        pkt.base.qpn = kPeerQpn;
        pkt.base.psn = psn;
        pkt.base.tag = hello_.peer;
        pkt.base.flags |= flags;
        const mr_resp *r = mr_responder_resp(&rsp_, tp->msn);
        if (tp->resp) {
            if (!r) {
                pkt.base.opcode = MR_OP_READ_RESP;
                pkt.read_resp.msn = tp->msn;
                pkt.payload_len = 0;
            } else if (r->opcode != MR_OP_READ_REQ) {
                pkt.base.opcode = MR_OP_ATOMIC_RESP;
                pkt.atomic_resp.msn = r->msn;
                pkt.atomic_resp.orig = r->orig;
            } else {
                pkt.base.opcode = MR_OP_READ_RESP;
                pkt.read_resp.msn = r->msn;
                pkt.read_resp.length = r->length;
                pkt.read_resp.offset = tp->offset;
                pkt.payload_len = std::min(mtu_, r->length - tp->offset);
            }
        } else if (mr_requester_stale(&req_, tp)) {
            pkt.payload_len = mr_requester_header(&req_, tp, nullptr, &pkt);
        } else {
            w = WqeOf(tp->msn);
            mr_req_wire wire{};
            wire.opcode = w->wire_op;
            wire.solicited = w->wr.solicited && w->consumes;
            wire.rkey = w->wr.rkey;
            wire.va = w->wr.va;
            wire.length = w->length;
            wire.rsn = w->rsn;
            wire.order = w->order;
            wire.imm = w->wr.imm;
            wire.inv_rkey = w->wr.inv_rkey;
            wire.swap_add = w->wr.swap_add;
            wire.compare = w->wire_op == MR_OP_CMP_SWAP ? w->wr.compare : 0;
            pkt.payload_len = mr_requester_header(&req_, tp, &wire, &pkt);
        }
        uint32_t len = pkt.payload_len;
        Bytes buf(MR_MAX_HDR_LEN + len);
        int h = mr_wire_encode(&pkt, buf.data(), buf.size());
        if (h < 0) {
            Count("tx_drop_error");
            return 0;
        }
        if (len && tp->resp) {
            // mr_tx_gather_response(): the memory as it is now.
            if (MrCheck(r->rkey, r->va + tp->offset, len)) {
                if (!resend)
                    return -EACCES;
                pkt.payload_len = len = 0;
                h = mr_wire_encode(&pkt, buf.data(), buf.size());
            } else {
                std::memcpy(buf.data() + h, At(r->va + tp->offset), len);
            }
        } else if (len) {
            std::memcpy(buf.data() + h, mem_.data() + w->wr.offset + tp->offset, len);
        }
        buf.resize(h + len);
        int n = buf.size();
        Emit(std::move(buf), mr_sender_path_port(&snd_, id));
        return n;
    }

    // mr_tx_control(): an ACK or NAK gets the peer's tag; a HELLO has its own.
    void TxControl(mr_pkt *pkt, uint16_t sport) {
        pkt->base.qpn = kPeerQpn;
        if (pkt->base.opcode == MR_OP_HELLO)
            Count("hello_tx");
        else
            pkt->base.tag = hello_.peer;
        Bytes buf(MR_MAX_HDR_LEN);
        int h = mr_wire_encode(pkt, buf.data(), buf.size());
        if (h < 0) {
            Count("tx_drop_error");
            return;
        }
        buf.resize(h);
        Emit(std::move(buf), sport);
    }

    // mr_sender_env_xmit().
    int SenderXmit(uint32_t id, uint32_t psn, const mr_tx_pkt *tp, uint8_t flags, mr_send_why why) {
        int n = TxSend(id, psn, tp, flags, why != MR_SEND_FIRST);
        if (n == -EACCES) {
            const mr_resp *r = mr_responder_resp(&rsp_, tp->msn);
            if (!fatal_)
                AckRefuseLate(tp->msn, MR_NAK_REMOTE_ACCESS, r ? r->path : 0);
            return 0;
        }
        return n;
    }

    bool SenderAnswered(const mr_tx_pkt *tp) {
        if (tp->resp || mr_seq_before(tp->msn, req_.msn_head) ||
            !mr_seq_before(tp->msn, req_.msn_hi))
            return false;
        const SendWqe *w = WqeOf(tp->msn);
        return w && w->wire_op == MR_OP_READ_REQ && w->resp.got && !w->resp.done;
    }

    void SenderEvent(mr_sender_event ev) {
        static const char *const names[] = {
            "retransmits", "sack_gaps",       "tail_probes",  "rto_events",       "rto_deferred",
            "cc_paced",    "cc_hint_limited", "cc_decreases", "spurious_resends",
        };
        if (ev < std::size(names))
            Count(names[ev]);
    }
    void Failover() { Count("path_failovers"); }
    uint32_t SenderRetries() const { return Retries(); }

    // The requester engine's environment (req.c).
    uint32_t ReqPosted() const { return sq_.size(); }
    void ReqMsg(uint32_t msn, mr_req_msg *m) {
        const SendWqe *w = WqeOf(msn);
        *m = mr_req_msg{};
        if (!w)
            return;
        m->length = w->length;
        m->rd = w->rd;
        m->consumes = w->consumes;
        m->started = w->started;
        m->answered = w->resp.done;
    }
    void ReqStart(uint32_t msn, uint32_t rsn, uint8_t order) {
        if (SendWqe *w = WqeOf(msn)) {
            w->rsn = rsn;
            w->order = order;
            w->started = true;
        }
    }
    bool ReqResponseDue() { return mr_responder_response_due(&rsp_, fatal_); }
    void ReqResponse(mr_tx_pkt *tp) { mr_responder_response_take(&rsp_, tp); }

    // The receiver engine's environment (ack.c).
    uint32_t MsnDone() const { return rsp_.msn_done; }
    uint32_t Hint() const { return ShareHint(); }
    void ReceiverEvent(mr_receiver_event ev, uint32_t arg) {
        static const char *const names[] = {"duplicate_packets", "out_of_order", "ce_marks",
                                            "acks_held"};
        Count(names[ev], ev == MR_REV_ACKS_HELD ? arg : 1);
    }

    mr_requester &Req() { return req_; }

private:
    QpSpec spec_;
    uint64_t now_;
    HostCrypt *crypt_; // the device's, or none
    std::string state_ = "reset";
    bool fatal_pending_ = false;
    uint64_t main_fired_ = 0;
    uint32_t mtu_ = 1024;
    uint32_t ud_psn_ = 0;
    std::map<std::string, int64_t> counters_;
    Bytes mem_;
    std::deque<SendWqe> sq_;
    std::deque<RecvWqe> rq_;
    std::deque<Completion> cq_;
    std::deque<Datagram> out_;

    // struct mr_xport
    mr_hello hello_{};
    std::vector<mr_tx_path> path_;
    mr_sender snd_{};
    mr_requester req_{};
    mr_responder rsp_{};
    mr_receiver rcv_{};
    bool rx_on_ = false;
    uint8_t fatal_ = 0;
    uint32_t fatal_msn_ = 0;
    uint64_t fatal_nak_ns_ = 0;
};

class HostTarget final : public Target {
public:
    std::string Name() const override { return "host"; }

    bool CreateQp(const QpSpec &spec, std::string *why) override {
        if (spec.mtu < 256 || spec.mtu > 4096 || (spec.mtu & (spec.mtu - 1))) {
            *why = "bad MTU";
            return false;
        }
        g_qp = nullptr;
        qp_.reset();
        uint64_t tag = 0;
        while (!tag)
            tag = rng_();
        // Each QP on its own clock, which starts well above 0 ("none").
        if (crypt_)
            crypt_->Prepare(false); // RTR, or the UD QP's AH
        qp_ = std::make_unique<HostQp>(spec, kEpochNs, tag, crypt_.get());
        g_qp = qp_.get();
        return true;
    }
    uint32_t Qpn() const override { return kQpn; }
    uint32_t Rkey() const override { return kRkey; }
    uint64_t Va() const override { return kVa; }

    // The device encrypts (crypt.c) from now on, with new keys.
    bool SetPsk(const Bytes &psk, std::string *why) override {
        crypt_.reset();
        if (psk.empty())
            return true;
        Psk k;
        if (psk.size() != k.size()) {
            *why = "a psk is 32 bytes";
            return false;
        }
        std::copy(psk.begin(), psk.end(), k.begin());
        crypt_ = std::make_unique<HostCrypt>(k);
        return true;
    }
    Addresses Addrs() const override {
        return {V4Mapped(kQpIp), V4Mapped(kPeerIp), V4Mapped(kForeignIp)};
    }

    int PostRecv(uint64_t wr_id, uint32_t offset, uint32_t length) override {
        return qp_ ? qp_->PostRecv(wr_id, offset, length) : EINVAL;
    }
    int PostSend(const SendWr &wr) override { return qp_ ? qp_->PostSend(wr) : EINVAL; }

    std::optional<Completion> PollCq(Ms wait) override {
        if (!qp_)
            return std::nullopt;
        Advance(wait, [this] { return qp_->HasCompletion(); });
        return qp_->PollCq();
    }
    Bytes ReadMem(uint32_t offset, uint32_t length) override {
        return qp_ ? qp_->ReadMem(offset, length) : Bytes{};
    }
    std::string QpState() override { return qp_ ? qp_->State() : "reset"; }

    void Inject(const Datagram &d) override {
        if (qp_)
            qp_->Inject(d);
    }
    std::optional<Datagram> Receive(Ms wait) override {
        if (!qp_)
            return std::nullopt;
        Advance(wait, [this] { return qp_->HasOutput(); });
        return qp_->TakeOutput();
    }
    void Wait(Ms d) override {
        if (qp_)
            qp_->RunUntil(qp_->Now() + Ns(d));
    }
    std::map<std::string, int64_t> Counters() override {
        return qp_ ? qp_->Counters() : std::map<std::string, int64_t>{};
    }

    // The MAD layer behind QP1 is ib_core's, not a protocol unit's.
    // Its addresses are IPv4 ones (kQpIp, kPeerIp): "ipv4".
    bool Has(const std::string &feature) const override {
        return feature == "instant" || feature == "ipv4";
    }

    // The virtual clock, for the runner's relative times.
    double NowMs() override { return qp_ ? static_cast<double>(qp_->Now()) / 1e6 : 0; }

    ~HostTarget() override { g_qp = nullptr; }

private:
    static constexpr uint64_t kEpochNs = 1000000000ull;
    // Runs the QP's timers until @ready() or @wait has passed, in virtual
    // time: the clock stops at the event that made it ready.
    template <typename Ready> void Advance(Ms wait, Ready ready) {
        const uint64_t end = qp_->Now() + Ns(wait);
        while (!ready() && qp_->Step(end)) {
        }
        if (!ready())
            qp_->RunUntil(end);
    }

    static uint64_t Ns(Ms d) { return static_cast<uint64_t>(std::max(0.0, d.count()) * 1e6); }

    std::mt19937_64 rng_{std::random_device{}()};
    std::unique_ptr<HostCrypt> crypt_; // declared first: it outlives qp_
    std::unique_ptr<HostQp> qp_;
};

} // namespace

std::unique_ptr<Target> MakeHostTarget() {
    return std::make_unique<HostTarget>();
}

} // namespace conform

// The engines' environment (proto/*.h), C linkage, for the one QP.
using conform::g_qp;

extern "C" {

int mr_sender_env_xmit(struct mr_sender *, u32 id, u32 psn, const struct mr_tx_pkt *tp, u8 flags,
                       enum mr_send_why why) {
    return g_qp->SenderXmit(id, psn, tp, flags, why);
}
// comp.c: the rings the paths borrow while they have packets out, from
// one pool (a QP gives its rings back as it goes, after g_qp has moved on).
static std::vector<std::unique_ptr<mr_tx_ring>> g_free_rings;
struct mr_tx_ring *mr_sender_env_ring_get(struct mr_sender *) {
    if (g_free_rings.empty())
        g_free_rings.push_back(std::make_unique<mr_tx_ring>());
    mr_tx_ring *r = g_free_rings.back().release();
    g_free_rings.pop_back();
    return r;
}
void mr_sender_env_ring_put(struct mr_sender *, struct mr_tx_ring *r) {
    g_free_rings.emplace_back(r);
}
bool mr_sender_env_stale(struct mr_sender *, const struct mr_tx_pkt *tp) {
    return mr_requester_stale(&g_qp->Req(), tp);
}
bool mr_sender_env_answered(struct mr_sender *, const struct mr_tx_pkt *tp) {
    return g_qp->SenderAnswered(tp);
}
u32 mr_sender_env_retries(struct mr_sender *) {
    return g_qp->SenderRetries();
}
void mr_sender_env_retry_exceeded(struct mr_sender *) {
    g_qp->RetryExceeded();
}
void mr_sender_env_failover(struct mr_sender *, u32, u16, u16, u32) {
    g_qp->Failover();
}
void mr_sender_env_event(struct mr_sender *, enum mr_sender_event ev, u32, u32) {
    g_qp->SenderEvent(ev);
}

u32 mr_requester_env_posted(struct mr_requester *) {
    return g_qp->ReqPosted();
}
void mr_requester_env_msg(struct mr_requester *, u32 msn, struct mr_req_msg *m) {
    g_qp->ReqMsg(msn, m);
}
void mr_requester_env_start(struct mr_requester *, u32 msn, u32 rsn, u8 order) {
    g_qp->ReqStart(msn, rsn, order);
}
bool mr_requester_env_response_due(struct mr_requester *) {
    return g_qp->ReqResponseDue();
}
void mr_requester_env_response(struct mr_requester *, struct mr_tx_pkt *tp) {
    g_qp->ReqResponse(tp);
}

bool mr_responder_env_posted(struct mr_responder *, u32 recv) {
    return g_qp->RespPosted(recv);
}
void *mr_responder_env_alloc(struct mr_responder *, u32 bytes) {
    return calloc(1, bytes);
}
void mr_responder_env_free(struct mr_responder *, void *p) {
    free(p);
}
void *mr_responder_env_map_alloc(struct mr_responder *, u32 bytes) {
    return calloc(1, bytes);
}
void mr_responder_env_map_free(struct mr_responder *, void *p, u32) {
    free(p);
}
int mr_responder_env_write(struct mr_responder *, const struct mr_rx *rx) {
    return g_qp->RespWrite(rx);
}
int mr_responder_env_scatter(struct mr_responder *, const struct mr_rx *rx, u32 recv) {
    return g_qp->RespScatter(rx, recv);
}
u8 mr_responder_env_check_rd(struct mr_responder *, const struct mr_rx_msg *m) {
    return g_qp->RespCheckRd(m);
}
u8 mr_responder_env_atomic(struct mr_responder *, const struct mr_rx_msg *m, u64 *orig) {
    return g_qp->RespAtomic(m, orig);
}
bool mr_responder_env_complete_recv(struct mr_responder *, const struct mr_rx_msg *m, u8 error) {
    return g_qp->RespCompleteRecv(m, error);
}
void mr_responder_env_retire_recv(struct mr_responder *) {
    g_qp->RespRetireRecv();
}
void mr_responder_env_refuse_late(struct mr_responder *, u32 msn, u8 nak, u8 path) {
    g_qp->AckRefuseLate(msn, nak, path);
}
void mr_responder_env_event(struct mr_responder *, enum mr_responder_event ev, u32 arg) {
    g_qp->RespEvent(ev, arg);
}

void mr_receiver_env_send(struct mr_receiver *, struct mr_pkt *pkt, u16 sport) {
    g_qp->TxControl(pkt, sport);
}
u32 mr_receiver_env_msn_done(struct mr_receiver *) {
    return g_qp->MsnDone();
}
u32 mr_receiver_env_hint(struct mr_receiver *) {
    return g_qp->Hint();
}
u64 mr_receiver_env_ack_delay(struct mr_receiver *) {
    return conform::kAckDelayNs;
}
void mr_receiver_env_event(struct mr_receiver *, enum mr_receiver_event ev, u32 arg) {
    g_qp->ReceiverEvent(ev, arg);
}

// share_table.c is linked but not used: one connection has no table.
u64 mr_share_table_env_bytes(struct mr_share_table *, u32) {
    return 0;
}
void mr_share_table_env_signals(struct mr_share_table *, u32, struct mr_share_signals *) {}
void mr_share_table_env_hint(struct mr_share_table *, u32, u32) {}
void mr_share_table_env_gone(struct mr_share_table *, u32) {}
void mr_share_table_env_moved(struct mr_share_table *, u32, u32) {}
}
