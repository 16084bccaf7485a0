// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// What the conformance runner needs of an implementation under test: one QP
// of it, connected to the runner, which plays its peer. The runner sends it
// datagrams (the UDP payload, with the few IP and UDP facts that matter),
// reads what it sends, drives its verbs and reads its counters. Two targets
// implement it: a live MetaRoCE device (guest_target.cc: verbs and a UDP
// socket in another network namespace, or on another host) and the proto/
// engines on this host (host_target.cc, virtual time).
#pragma once

#include <chrono>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace conform {

using Ms = std::chrono::duration<double, std::milli>;
using Bytes = std::vector<uint8_t>;

// The UDP port both ends use (protocol.rst, "Encapsulation").
constexpr uint16_t kPort = 4792;
// The QPN the runner's peer claims, and the PSNs of the connection.
constexpr uint32_t kPeerQpn = 0x000123;
constexpr uint32_t kPeerPsn = 0x100; // the runner's first PSN: the QP's rq_psn
constexpr uint32_t kQpPsn = 0x200;   // the QP's first PSN: its sq_psn

// A datagram to or from the QP under test.
struct Datagram {
    Bytes payload;        // the UDP payload: a MetaRoCE packet
    uint16_t sport = 0;   // UDP source port (to the QP: any path's port)
    bool ce = false;      // IP ECN field Congestion Experienced
    bool ect = false;     // (received) sent ECT(0)
    bool foreign = false; // from (to) another address than the peer's
    bool no_csum = false; // (to the QP) UDP checksum zero (IPv6: UDP_NO_CHECK6_TX)
    double t_ms = -1;     // (from the QP) when it arrived, on NowMs()'s clock; -1: now
};

enum class QpType { RC, UC, UD };

// The QP under test and how it is connected to the runner's peer.
struct QpSpec {
    QpType type = QpType::RC;
    uint32_t mtu = 1024;
    uint8_t retry_cnt = 7;
    uint8_t rnr_retry = 7;
    uint8_t min_rnr_timer = 1; // code 1: 10 us
    uint8_t timeout = 14;
    uint8_t max_rd_atomic = 4;
    uint8_t max_dest_rd_atomic = 4;
    uint32_t qkey = 0x11111111; // UD
    bool remote_write = true, remote_read = true, remote_atomic = true;
    uint32_t mem_len = 65536; // one registered region, for both directions
};

// A work request of the QP under test; addresses are offsets in its region.
struct SendWr {
    uint64_t wr_id = 0;
    std::string op; // send send_imm send_inv write write_imm read cas faa
    uint32_t offset = 0, length = 0;
    uint32_t imm = 0, inv_rkey = 0;
    uint32_t rkey = 0; // remote (the runner's peer: any value)
    uint64_t va = 0;
    uint64_t compare = 0, swap_add = 0;
    bool solicited = false;
    uint32_t remote_qpn = kPeerQpn, remote_qkey = 0x11111111; // UD
};

struct Completion {
    uint64_t wr_id = 0;
    std::string
        status; // success, rem_access_err, rnr_retry_exc_err, ... (ibv_wc_status_str, short)
    std::string opcode; // send rdma_write rdma_read comp_swap fetch_add recv recv_rdma_imm
    uint32_t byte_len = 0;
    std::optional<uint32_t> imm;
    uint32_t src_qp = 0; // UD
};

class Target {
public:
    virtual ~Target() = default;
    virtual std::string Name() const = 0;

    // A fresh QP (the previous one destroyed), in RTS for RC and UC
    // (connected to kPeerQpn at the runner's address, rq_psn kPeerPsn,
    // sq_psn kQpPsn), RTS for UD; its region filled with Pattern(0, i).
    // False with *why when it cannot be made.
    virtual bool CreateQp(const QpSpec &spec, std::string *why) = 0;
    virtual uint32_t Qpn() const = 0;
    virtual uint32_t Rkey() const = 0; // of its region
    virtual uint64_t Va() const = 0;   // of its region's byte 0

    virtual int PostRecv(uint64_t wr_id, uint32_t offset, uint32_t length) = 0; // errno
    virtual int PostSend(const SendWr &wr) = 0;                                 // errno
    // The next completion, waiting up to @wait.
    virtual std::optional<Completion> PollCq(Ms wait) = 0;
    virtual Bytes ReadMem(uint32_t offset, uint32_t length) = 0;
    virtual std::string QpState() = 0; // reset init rtr rts sqd sqe err

    // Sends @d to the QP's device, port kPort.
    virtual void Inject(const Datagram &d) = 0;
    // The next datagram the device sent to the runner, waiting up to @wait.
    virtual std::optional<Datagram> Receive(Ms wait) = 0;
    // Lets @d pass (guest: sleeps; host: advances the clock, runs timers,
    // keeps what is sent for Receive()).
    virtual void Wait(Ms d) = 0;
    // The device's counters by their `rdma statistic` names.
    virtual std::map<std::string, int64_t> Counters() = 0;
    // Whether the target has @feature: "mad", a MAD layer behind QP1;
    // "instant", a runner faster than the implementation's timers (the
    // ACK delay, 100 us between HELLO answers), as in virtual time;
    // "ipv4", a QP reached over IPv4 (a UD receive's GRH area is then 20
    // zero bytes and an IPv4 header).
    virtual bool Has(const std::string &feature) const = 0;
    // Encryption (protocol.rst, "Encryption"). The addresses the keys
    // are derived from, each 16 bytes (IPv4 v4-mapped): the QP's, the
    // peer's, the foreign one's (empty: none).
    struct Addresses {
        Bytes qp, peer, foreign;
    };
    virtual Addresses Addrs() const { return {}; }
    // The device encrypts with @psk (32 bytes; empty: it does not), from
    // the next CreateQp() on. False with *why when the target cannot.
    virtual bool SetPsk(const Bytes &psk, std::string *why) {
        if (psk.empty())
            return true;
        *why = Name() + " cannot encrypt";
        return false;
    }

    // The target's clock, ms: when Receive() returned, when Inject() sent.
    virtual double NowMs() {
        using namespace std::chrono;
        return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
    }
};

// A completion status by its value (enum ibv_wc_status, which is the
// kernel's enum ib_wc_status), as ibv_wc_status_str() names it, short.
inline const char *WcStatusName(uint32_t status) {
    static const char *const names[] = {
        "success",        "loc_len_err", "loc_qp_op_err", "loc_eec_op_err",    "loc_prot_err",
        "wr_flush_err",   "mw_bind_err", "bad_resp_err",  "loc_access_err",    "rem_inv_req_err",
        "rem_access_err", "rem_op_err",  "retry_exc_err", "rnr_retry_exc_err",
    };
    return status < std::size(names) ? names[status] : "general_err";
}

// The byte at offset @i of data made with @seed: what payload=N carries and
// what a QP's region holds at first (seed 0).
inline uint8_t Pattern(uint32_t seed, uint64_t i) {
    return static_cast<uint8_t>(i * 7 + seed * 31 + 13);
}

std::unique_ptr<Target> MakeHostTarget();
// The live target: @device (an RDMA device name) and @peer_netns, the
// network namespace whose address @peer_ip the runner sends from (empty:
// this one), @foreign_ip a second address there: IPv4 or IPv6 addresses,
// both of one family, which is the one the QP is addressed in.
std::unique_ptr<Target> MakeGuestTarget(const std::string &device, const std::string &peer_netns,
                                        const std::string &peer_ip, const std::string &foreign_ip,
                                        std::string *why);

} // namespace conform
