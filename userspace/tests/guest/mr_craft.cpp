// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// mr_craft: crafted and garbage UDP datagrams to the MetaRoCE port of a
// host, as the guest selftest 23-bad-input.sh runs it. Packets are built with
// the kernel's own wire codec (kernel/proto/wire.c), then broken on purpose;
// the codec also predicts which drop counter each must bump. Per kind, the
// target device's `rdma statistic` drop counters must grow by exactly the
// predicted amounts, and an RC QP pair between the two devices, whose
// responder QP the packets aim at, must still carry data afterwards.
// Prints KTAP; exits 1 if a case failed, 2 on a setup failure.
//
//   mr_craft DEVICE PEER_DEVICE PEER_IPV4 PEER_IPV6 COUNT
//   mr_craft --foreign DEVICE PEER_DEVICE PEER_IPV4 DEVICE_IPV4 COUNT
//
// Run in DEVICE's namespace; the datagrams go to PEER_DEVICE's host, COUNT
// of each kind. With --foreign, run on a third host: well-formed packets
// that would break the connection if the receiver believed them (the
// attacks of a host that can guess QPNs), to both ends, each of which must
// drop them all as not from its peer.
#include "guest_test.h"

extern "C" {
#include "wire.h"
}

#include <infiniband/verbs.h>

#include <arpa/inet.h>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <random>
#include <string>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace {

using namespace guest;

constexpr int kCases = 23, kForeignCases = 12;
constexpr uint16_t kPort = 4792;
// Base header bytes that the codec refuses to encode wrong (protocol.rst):
// version, opcode, flags, path id, and the reserved bytes 4 and 14-15.
constexpr size_t kVersionByte = 0, kOpcodeByte = 1, kFlagsByte = 2, kPathByte = 3;
constexpr size_t kReservedByte = 4, kReservedTail = 14;

const char *const kDropCounters[] = {"rx_drop_short",   "rx_drop_version", "rx_drop_malformed",
                                     "rx_drop_no_csum", "rx_drop_no_qp",   "rx_drop_not_peer"};

using Packet = std::vector<uint8_t>;
using Counts = std::map<std::string, long long>;

// The counter a datagram that fails decoding lands in, as the kernel's
// receive path maps codec errors; "" if it decodes.
std::string predicted_drop(const Packet &p) {
    mr_pkt pkt;
    if (p.size() < MR_BASE_HDR_LEN)
        return "rx_drop_short";
    switch (mr_wire_decode(p.data(), static_cast<u32>(p.size()), &pkt)) {
    case 0:
        return "";
    case -MR_ETRUNC:
        return "rx_drop_short";
    case -MR_EVERSION:
        return "rx_drop_version";
    default:
        return "rx_drop_malformed";
    }
}

// Headers by the codec, then payload_len bytes of 0xcc.
Packet encode(const mr_pkt &pkt) {
    Packet p(MR_MAX_HDR_LEN);
    int n = mr_wire_encode(&pkt, p.data(), static_cast<u32>(p.size()));
    if (n < 0)
        bail("the codec refused a packet template (" + std::to_string(n) + ")");
    p.resize(static_cast<size_t>(n));
    p.insert(p.end(), pkt.payload_len, 0xcc);
    return p;
}

// Replace the big-endian 32-bit @sentinel, which the template put in one
// field, by @value: fields the codec will not encode wrong, found without
// restating the opcode header layouts.
void patch32(Packet &p, uint32_t sentinel, uint32_t value) {
    for (size_t i = MR_BASE_HDR_LEN; i + 4 <= p.size(); i++)
        if (mr_get_be32(&p[i]) == sentinel) {
            mr_put_be32(&p[i], value);
            return;
        }
    bail("sentinel not found in the template");
}

mr_pkt base(uint8_t opcode, uint32_t qpn, uint32_t psn) {
    mr_pkt pkt{};
    pkt.base.opcode = opcode;
    pkt.base.qpn = qpn;
    pkt.base.psn = psn;
    return pkt;
}

mr_pkt send_pkt(uint32_t qpn, uint32_t psn, uint32_t msn, uint32_t length, uint32_t payload) {
    mr_pkt pkt = base(MR_OP_SEND, qpn, psn);
    pkt.send.msn = msn;
    pkt.send.length = length;
    pkt.payload_len = payload;
    return pkt;
}

class Udp {
public:
    Udp(int family, const char *addr) : family_(family) {
        fd_ = socket(family, SOCK_DGRAM, 0);
        if (family == AF_INET) {
            sin_.sin_family = AF_INET;
            sin_.sin_port = htons(kPort);
            ok_ = fd_ >= 0 && inet_pton(AF_INET, addr, &sin_.sin_addr) == 1;
        } else {
            sin6_.sin6_family = AF_INET6;
            sin6_.sin6_port = htons(kPort);
            ok_ = fd_ >= 0 && inet_pton(AF_INET6, addr, &sin6_.sin6_addr) == 1;
        }
    }
    Udp(const Udp &) = delete;
    Udp &operator=(const Udp &) = delete;
    ~Udp() {
        if (fd_ >= 0)
            close(fd_);
    }
    bool ok() const { return ok_; }
    // Send with a zero UDP checksum: "none" (IPv4), or RFC 6935's (IPv6).
    bool no_checksum() {
        int one = 1;
        if (family_ == AF_INET)
            return setsockopt(fd_, SOL_SOCKET, SO_NO_CHECK, &one, sizeof(one)) == 0;
        return setsockopt(fd_, IPPROTO_UDP, UDP_NO_CHECK6_TX, &one, sizeof(one)) == 0;
    }
    bool send(const Packet &p) {
        const sockaddr *to = family_ == AF_INET ? reinterpret_cast<const sockaddr *>(&sin_)
                                                : reinterpret_cast<const sockaddr *>(&sin6_);
        socklen_t len = family_ == AF_INET ? sizeof(sin_) : sizeof(sin6_);
        return sendto(fd_, p.data(), p.size(), 0, to, len) == static_cast<ssize_t>(p.size());
    }

private:
    int family_;
    int fd_ = -1;
    bool ok_ = false;
    sockaddr_in sin_{};
    sockaddr_in6 sin6_{};
};

struct Craft {
    Ktap &t;
    const char *target;
    Udp &udp4, &udp6;
    int count;
    std::mt19937 rng{20261130};

    uint32_t rand32() { return static_cast<uint32_t>(rng()); }
    uint32_t below(uint32_t n) { return rand32() % n; }

    // Sends @count datagrams from @make, and checks that the target's drop
    // counters grew by what the codec predicts (@want for those that decode:
    // a drop counter, or "" when they must reach a QP and drop nothing).
    void kind(const std::string &desc, const std::function<Packet(int)> &make,
              const std::string &want, Udp *via = nullptr) {
        Udp &udp = via ? *via : udp4;
        Counts predicted;
        Counts before = rdma_counters(target);
        int sent = 0;
        for (int i = 0; i < count; i++) {
            Packet p = make(i);
            std::string reason = predicted_drop(p);
            if (reason.empty())
                reason = want;
            if (!reason.empty())
                predicted[reason]++;
            sent += udp.send(p);
            if (i % 32 == 31)
                usleep(2000); // stay below the veth backlog
        }
        // Wait for the counters to settle.
        Counts after;
        for (int waited = 0; waited < 3000; waited += 20) {
            after = rdma_counters(target);
            bool done = true;
            for (auto &[name, n] : predicted)
                done = done && after[name] - before[name] >= n;
            if (done)
                break;
            usleep(20000);
        }
        usleep(50000);
        after = rdma_counters(target);
        std::string got, expect;
        bool ok = sent == count && !after.empty();
        for (const char *name : kDropCounters) {
            long long d = after[name] - before[name], w = predicted[name];
            // Other QPs' late packets may land in rx_drop_no_qp meanwhile.
            bool no_qp = std::strcmp(name, "rx_drop_no_qp") == 0;
            ok = ok && (no_qp ? d >= w : d == w);
            got += std::string(name) + " +" + std::to_string(d) + " ";
            expect += std::string(name) + " +" + std::to_string(w) + " ";
        }
        t.check(ok, desc + " (" + std::to_string(count) + "): drop counters as predicted",
                "sent %d of %d; got %s; want %s", sent, count, got.c_str(), expect.c_str());
    }
};

// A SEND of 200 bytes from QP @i (on @from) to the other QP (on @to).
bool exchange(RcPair &p, RcEnd &from, RcEnd &to, int i, std::string *why) {
    std::vector<uint8_t> out(256, 0x3c), in(256);
    Mr out_mr(ibv_reg_mr(from.pd.get(), out.data(), out.size(), IBV_ACCESS_LOCAL_WRITE));
    Mr in_mr(ibv_reg_mr(to.pd.get(), in.data(), in.size(), IBV_ACCESS_LOCAL_WRITE));
    if (!out_mr || !in_mr) {
        *why = "reg_mr failed";
        return false;
    }
    ibv_sge rs{reinterpret_cast<uintptr_t>(in.data()), 256, in_mr->lkey};
    ibv_sge ss{reinterpret_cast<uintptr_t>(out.data()), 200, out_mr->lkey};
    int rc = post_recv_wr(p[1 - i], 1, &rs) | post_send_wr(p[i], send_wr(2, IBV_WR_SEND, &ss));
    auto sw = poll_wcs(from.scq.get(), 1);
    auto rw = poll_wcs(to.rcq.get(), 1);
    *why = "rc " + std::to_string(rc) + " send " + wcs_str(sw) + " recv " + wcs_str(rw);
    return rc == 0 && sw.size() == 1 && sw[0].status == IBV_WC_SUCCESS && rw.size() == 1 &&
           rw[0].status == IBV_WC_SUCCESS && rw[0].byte_len == 200 && in[199] == 0x3c;
}

void run(Ktap &t, RcEnd &a, RcEnd &b, const char *peer4, const char *peer6, Udp &udp4, Udp &udp6,
         int count) {
    RcPair p(a, b);
    if (p.error())
        bail("cannot build an RC pair: " + std::string(std::strerror(p.error())));
    const uint32_t qpn = p[1]->qp_num;     // the target: the responder on PEER
    const uint32_t psn0 = RcPair::kPsn[0]; // where its receive windows start
    std::string why;
    t.check(exchange(p, a, b, 0, &why), "the pair carries a SEND before the storm", "%s",
            why.c_str());
    // From here the responder has completed MSN 0 and expects MSN 1.

    Craft c{t, b.name.c_str(), udp4, udp6, count};
    // Far outside every path's window: a packet that gets that far is dropped
    // as a duplicate and never touches the QP's sequence space.
    const uint32_t far_psn = psn0 + 0x40000000;

    c.kind(
        "random bytes of random length, IPv4",
        [&](int) {
            Packet p;
            do {
                p.resize(c.below(1400));
                for (auto &byte : p)
                    byte = static_cast<uint8_t>(c.rand32());
                if (c.below(2) && !p.empty())
                    p[0] = MR_WIRE_VERSION; // get past the version check too
            } while (predicted_drop(p).empty());
            return p;
        },
        "");
    c.kind(
        "random bytes of random length, IPv6",
        [&](int) {
            Packet p(c.below(1200));
            for (auto &byte : p)
                byte = static_cast<uint8_t>(c.rand32());
            if (!p.empty())
                p[0] = MR_WIRE_VERSION;
            if (predicted_drop(p).empty())
                p.resize(3);
            return p;
        },
        "", &udp6);
    c.kind(
        "headers cut short, every opcode",
        [&](int i) {
            static const uint8_t ops[] = {MR_OP_SEND,      MR_OP_SEND_IMM,  MR_OP_WRITE,
                                          MR_OP_WRITE_IMM, MR_OP_READ_REQ,  MR_OP_CMP_SWAP,
                                          MR_OP_FETCH_ADD, MR_OP_READ_RESP, MR_OP_ATOMIC_RESP,
                                          MR_OP_ACK,       MR_OP_NAK};
            mr_pkt pkt = base(ops[i % sizeof(ops)], qpn, far_psn);
            if (pkt.base.opcode == MR_OP_NAK)
                pkt.nak.code = MR_NAK_RNR;
            if (pkt.base.opcode == MR_OP_ACK)
                pkt.ack.cum_psn = far_psn + 1;
            Packet p = encode(pkt);
            p.resize(c.below(static_cast<uint32_t>(p.size())));
            return p;
        },
        "");
    c.kind(
        "wrong wire version",
        [&](int) {
            Packet p = encode(send_pkt(qpn, far_psn, 1, 16, 16));
            do
                p[kVersionByte] = static_cast<uint8_t>(c.rand32());
            while (p[kVersionByte] == MR_WIRE_VERSION);
            return p;
        },
        "");
    c.kind(
        "unknown opcodes",
        [&](int) {
            Packet p = encode(send_pkt(qpn, far_psn, 1, 16, 16));
            do
                p[kOpcodeByte] = static_cast<uint8_t>(c.rand32());
            while (mr_wire_hdr_len(p[kOpcodeByte]));
            return p;
        },
        "");
    c.kind(
        "reserved flag bits and reserved bytes",
        [&](int i) {
            Packet p = encode(send_pkt(qpn, far_psn, 1, 16, 16));
            if (i % 3 == 0)
                p[kFlagsByte] |= static_cast<uint8_t>(4u << c.below(6));
            else if (i % 3 == 1)
                p[kReservedByte] = static_cast<uint8_t>(1 + c.below(255));
            else
                p[kReservedTail + c.below(2)] = static_cast<uint8_t>(1 + c.below(255));
            return p;
        },
        "");
    c.kind(
        "path id 64 and above",
        [&](int) {
            Packet p = encode(send_pkt(qpn, far_psn, 1, 16, 16));
            p[kPathByte] =
                static_cast<uint8_t>(MR_WIRE_MAX_PATHS + c.below(256 - MR_WIRE_MAX_PATHS));
            return p;
        },
        "");
    c.kind(
        "valid SENDs to QPNs of no QP",
        [&](int) {
            uint32_t none;
            do
                none = 0x100000 + c.below(MR_WIRE_QPN_MAX + 1 - 0x100000);
            while (none == qpn || none == p[0]->qp_num);
            return encode(send_pkt(none, psn0, 1, 16, 16));
        },
        "rx_drop_no_qp");
    c.kind(
        "SENDs to the live QP claiming more than 2 GiB",
        [&](int) {
            Packet p = encode(send_pkt(qpn, far_psn, 1, 0x13572468, 16));
            patch32(p, 0x13572468, MR_WIRE_MAX_MSG_LEN + 1 + c.below(0x7ffffffe));
            return p;
        },
        "");
    c.kind(
        "SENDs to the live QP with the payload beyond the length",
        [&](int) {
            mr_pkt pkt = send_pkt(qpn, far_psn, 1, 0x2000, 16);
            pkt.send.offset = 0x1000;
            Packet p = encode(pkt);
            patch32(p, 0x1000, 0x2000 - 15 + c.below(0x100000));
            return p;
        },
        "");
    c.kind(
        "data packets to the live QP: payload 4097+ or none at all",
        [&](int i) {
            if (i % 2) {
                Packet p = encode(send_pkt(qpn, far_psn, 1, 0x10000, MR_WIRE_MAX_PAYLOAD));
                p.push_back(0xcc); // one byte more than any MTU carries
                return p;
            }
            Packet p = encode(send_pkt(qpn, far_psn, 1, 64, 64));
            p.resize(p.size() - 64); // the headers promise 64 bytes; none follow
            return p;
        },
        "");
    // These decode; the responder drops them for an MSN outside its window.
    c.kind(
        "SENDs and WRITEs (garbage rkey) to the live QP, MSN far outside the window",
        [&](int i) {
            uint32_t msn = 1 + MR_WIRE_SACK_BITS + c.below(0x7fffff00);
            if (i % 2)
                return encode(send_pkt(qpn, psn0, msn, 64, 64));
            mr_pkt pkt = base(MR_OP_WRITE, qpn, psn0);
            pkt.write.msn = msn;
            pkt.write.rkey = c.rand32();
            pkt.write.va = static_cast<uint64_t>(c.rand32()) << 20;
            pkt.write.length = 64;
            pkt.payload_len = 64;
            return encode(pkt);
        },
        "rx_drop_malformed");
    // The live QP's requester has sent nothing: every ACK that claims more
    // than that is malformed; so is one for a path it does not use.
    c.kind(
        "ACKs to the live QP whose SACK claims everything, or beyond what was sent",
        [&](int i) {
            mr_pkt pkt = base(MR_OP_ACK, qpn, 0);
            pkt.ack.cum_psn = RcPair::kPsn[1] + (i % 2 ? 0 : 1 + c.below(200));
            for (auto &w : pkt.ack.sack)
                w = ~0ull;
            pkt.ack.sack[0] &= ~1ull;
            pkt.base.psn = pkt.ack.cum_psn + 1;
            pkt.base.path = static_cast<uint8_t>(i % 3 == 2 ? 4 + c.below(60) : 0);
            pkt.ack.msn_done = c.rand32();
            return encode(pkt);
        },
        "rx_drop_malformed");
    c.kind(
        "NAKs with an unknown code, or a delay on a non-RNR NAK",
        [&](int i) {
            mr_pkt pkt = base(MR_OP_NAK, qpn, 0);
            pkt.nak.code = MR_NAK_RNR;
            pkt.nak.rnr_delay = 0x1234;
            Packet p = encode(pkt);
            if (i % 2)
                patch32(p, static_cast<uint32_t>(MR_NAK_RNR) << 24 | 0x1234,
                        (4 + c.below(252)) << 24);
            else
                patch32(p, static_cast<uint32_t>(MR_NAK_RNR) << 24 | 0x1234,
                        static_cast<uint32_t>(MR_NAK_REMOTE_ACCESS) << 24 | 0x1234);
            return p;
        },
        "");
    // A well-formed NAK for a message never sent: ignored, not obeyed.
    c.kind(
        "NAKs (remote access, invalid request) for MSNs the live QP never sent",
        [&](int i) {
            mr_pkt pkt = base(MR_OP_NAK, qpn, c.rand32());
            pkt.nak.msn = 1 + c.below(0x7fffffff);
            pkt.nak.code = i % 2 ? MR_NAK_REMOTE_ACCESS : MR_NAK_INVALID_REQUEST;
            return encode(pkt);
        },
        "");
    // IPv4 allows "no checksum", IPv6 tunnels may; MetaRoCE has no
    // integrity check but UDP's.
    for (int family : {AF_INET, AF_INET6}) {
        bool v4 = family == AF_INET;
        Udp nocsum(family, v4 ? peer4 : peer6);
        if (!nocsum.ok() || !nocsum.no_checksum())
            bail("cannot open a UDP socket without checksums");
        c.kind(
            std::string("valid SENDs over ") + (v4 ? "IPv4" : "IPv6") + " without a UDP checksum",
            [&](int) { return encode(send_pkt(qpn, far_psn, 1, 16, 16)); }, "rx_drop_no_csum",
            &nocsum);
    }

    t.check(p.state(1) == IBV_QPS_RTS && p.state(0) == IBV_QPS_RTS,
            "both QPs are still in RTS after the storm", "states %d/%d", p.state(0), p.state(1));
    t.check(exchange(p, a, b, 0, &why), "the pair still carries a SEND to the target QP", "%s",
            why.c_str());
    t.check(exchange(p, b, a, 1, &why), "the target QP still sends back", "%s", why.c_str());

    // A SEND that names the next MSN and a posted receive, with a PSN past
    // the window: dropped for its PSN, it must leave no trace, so the real
    // SEND of that MSN (the next one) lands.
    {
        std::vector<uint8_t> in(256);
        Mr in_mr(ibv_reg_mr(b.pd.get(), in.data(), in.size(), IBV_ACCESS_LOCAL_WRITE));
        ibv_sge rs{reinterpret_cast<uintptr_t>(in.data()), 256, in_mr ? in_mr->lkey : 0};
        int rc = post_recv_wr(p[1], 1, &rs);
        // Two SENDs a -> b so far (MSN 0 and 1, RSN 0 and 1): next are 2 and 2.
        mr_pkt pkt = send_pkt(qpn, far_psn, 2, 3000, 1024);
        pkt.send.rsn = 2;
        Counts before = rdma_counters(c.target);
        bool sent = rc == 0 && udp4.send(encode(pkt));
        usleep(100000);
        Counts after = rdma_counters(c.target);
        t.check(sent && after["duplicate_packets"] > before["duplicate_packets"],
                "a SEND for the next MSN with a PSN past the window is dropped",
                "sent %d, duplicate_packets %lld -> %lld", sent, before["duplicate_packets"],
                after["duplicate_packets"]);
        // The real one, into the receive posted above.
        std::vector<uint8_t> out(256, 0x3c);
        Mr out_mr(ibv_reg_mr(a.pd.get(), out.data(), out.size(), IBV_ACCESS_LOCAL_WRITE));
        ibv_sge ss{reinterpret_cast<uintptr_t>(out.data()), 200, out_mr ? out_mr->lkey : 0};
        rc = post_send_wr(p[0], send_wr(3, IBV_WR_SEND, &ss));
        auto sw = poll_wcs(a.scq.get(), 1);
        auto rw = poll_wcs(b.rcq.get(), 1);
        t.check(rc == 0 && sw.size() == 1 && sw[0].status == IBV_WC_SUCCESS && rw.size() == 1 &&
                    rw[0].status == IBV_WC_SUCCESS && rw[0].byte_len == 200,
                "the real SEND of that MSN then lands (the dropped one left no trace)",
                "rc %d send %s recv %s", rc, wcs_str(sw).c_str(), wcs_str(rw).c_str());
    }
}

// From a third host, with its own address: what would reset, fail or
// complete the connection a <-> b if the receiver took it from anyone.
// The QPNs are known here; an attacker would have to guess them.
void run_foreign(Ktap &t, RcEnd &a, RcEnd &b, Udp &to_a, Udp &to_b, int count) {
    RcPair p(a, b);
    if (p.error())
        bail("cannot build an RC pair: " + std::string(std::strerror(p.error())));
    const uint32_t qa = p[0]->qp_num, qb = p[1]->qp_num;
    std::string why;
    t.check(exchange(p, a, b, 0, &why), "the pair carries a SEND before the attacks", "%s",
            why.c_str());

    const std::string np = "rx_drop_not_peer";
    Craft ca{t, a.name.c_str(), to_a, to_a, count}, cb{t, b.name.c_str(), to_b, to_b, count};
    for (Craft *c : {&ca, &cb}) {
        const uint32_t qpn = c == &ca ? qa : qb;
        c->kind(
            "READ_RESPs on every path with an epoch far ahead, to " + std::string(c->target),
            [&](int i) {
                mr_pkt pkt = base(MR_OP_READ_RESP, qpn, c->below(MR_WIRE_QPN_MAX + 1));
                pkt.base.path = static_cast<uint8_t>(i % 16);
                pkt.base.epoch = static_cast<uint16_t>(0x8000 + i / 16);
                pkt.read_resp.msn = 1;
                pkt.read_resp.length = 16;
                pkt.payload_len = 16;
                return encode(pkt);
            },
            np);
    }
    // Against a, the requester: answers to what it sent, or will send.
    ca.kind(
        "NAKs (remote access, invalid request) for in-window MSNs",
        [&](int i) {
            mr_pkt pkt = base(MR_OP_NAK, qa, RcPair::kPsn[0] + static_cast<uint32_t>(i % 64));
            pkt.nak.msn = 1 + static_cast<uint32_t>(i % 64);
            pkt.nak.code = i % 2 ? MR_NAK_REMOTE_ACCESS : MR_NAK_INVALID_REQUEST;
            return encode(pkt);
        },
        np);
    ca.kind(
        "ACKs with an in-window cumulative PSN and an MSN done ahead",
        [&](int i) {
            mr_pkt pkt = base(MR_OP_ACK, qa, 0);
            pkt.base.path = static_cast<uint8_t>(i % 16);
            pkt.ack.cum_psn = RcPair::kPsn[0] + 1 + ca.below(64);
            pkt.base.psn = pkt.ack.cum_psn - 1;
            pkt.ack.msn_done = 2 + ca.below(64);
            return encode(pkt);
        },
        np);
    ca.kind(
        "READ and atomic responses for in-window MSNs",
        [&](int i) {
            mr_pkt pkt = base(i % 2 ? MR_OP_READ_RESP : MR_OP_ATOMIC_RESP, qa,
                              RcPair::kPsn[1] + ca.below(64));
            if (i % 2) {
                pkt.read_resp.msn = 1 + ca.below(64);
                pkt.read_resp.length = 64;
                pkt.payload_len = 64;
            } else {
                pkt.atomic_resp.msn = 1 + ca.below(64);
                pkt.atomic_resp.orig = ca.rand32();
            }
            return encode(pkt);
        },
        np);
    // Against b, the responder: requests it would place, answer or complete.
    cb.kind(
        "SENDs sweeping the next MSNs and RSNs, in-window PSNs",
        [&](int i) {
            mr_pkt pkt = send_pkt(qb, RcPair::kPsn[0] + 1 + static_cast<uint32_t>(i % 64),
                                  1 + static_cast<uint32_t>(i % 8), 64, 64);
            pkt.base.path = static_cast<uint8_t>(i % 16);
            pkt.send.rsn = static_cast<uint32_t>(i / 8 % 64);
            return encode(pkt);
        },
        np);
    cb.kind(
        "WRITEs and atomics with guessed rkeys",
        [&](int i) {
            mr_pkt pkt =
                base(i % 2 ? MR_OP_WRITE : MR_OP_FETCH_ADD, qb, RcPair::kPsn[0] + 1 + cb.below(64));
            uint64_t va = static_cast<uint64_t>(cb.rand32()) << 12;
            if (i % 2) {
                pkt.write = {.msn = 1 + cb.below(8),
                             .rkey = cb.rand32(),
                             .va = va,
                             .length = 64,
                             .offset = 0,
                             .rsn = 0,
                             .imm = 0};
                pkt.payload_len = 64;
            } else {
                pkt.atomic = {.msn = 1 + cb.below(8),
                              .rkey = cb.rand32(),
                              .va = va,
                              .swap_add = 1,
                              .compare = 0};
            }
            return encode(pkt);
        },
        np);
    cb.kind(
        "READ requests for 2 GiB",
        [&](int) {
            mr_pkt pkt = base(MR_OP_READ_REQ, qb, RcPair::kPsn[0] + 1 + cb.below(64));
            pkt.read_req = {.msn = 1 + cb.below(8),
                            .rkey = cb.rand32(),
                            .va = static_cast<uint64_t>(cb.rand32()) << 12,
                            .length = MR_WIRE_MAX_MSG_LEN};
            return encode(pkt);
        },
        np);

    t.check(p.state(0) == IBV_QPS_RTS && p.state(1) == IBV_QPS_RTS,
            "both QPs are still in RTS after the attacks", "states %d/%d", p.state(0), p.state(1));
    t.check(exchange(p, a, b, 0, &why), "a verified SEND a -> b after the attacks", "%s",
            why.c_str());
    t.check(exchange(p, b, a, 1, &why), "a verified SEND b -> a after the attacks", "%s",
            why.c_str());
}

} // namespace

int main(int argc, char **argv) {
    bool foreign = argc > 1 && std::strcmp(argv[1], "--foreign") == 0;
    if (foreign) {
        argv++;
        argc--;
    }
    start(argc, argv, 5,
          foreign ? "--foreign DEVICE PEER_DEVICE PEER_IPV4 DEVICE_IPV4 COUNT"
                  : "DEVICE PEER_DEVICE PEER_IPV4 PEER_IPV6 COUNT");
    Ktap t(foreign ? kForeignCases : kCases);
    RcEnd a, b;
    open_rc_ends(a, argv[1], b, argv[2]);
    if (foreign) {
        Udp to_b(AF_INET, argv[3]), to_a(AF_INET, argv[4]);
        if (!to_a.ok() || !to_b.ok())
            bail("cannot open UDP sockets to " + std::string(argv[3]) + " / " + argv[4]);
        run_foreign(t, a, b, to_a, to_b, std::atoi(argv[5]));
    } else {
        Udp udp4(AF_INET, argv[3]), udp6(AF_INET6, argv[4]);
        if (!udp4.ok() || !udp6.ok())
            bail("cannot open UDP sockets to " + std::string(argv[3]) + " / " + argv[4]);
        run(t, a, b, argv[3], argv[4], udp4, udp6, std::atoi(argv[5]));
    }
    return t.passed() ? 0 : 1;
}
