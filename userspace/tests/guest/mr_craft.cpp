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
//   mr_craft [--netns PEER_DEVICE=NETNS] DEVICE PEER_DEVICE PEER_IPV4 PEER_IPV6 COUNT
//   mr_craft --foreign DEVICE PEER_DEVICE PEER_IPV4 DEVICE_IPV4 COUNT
//
// Run in DEVICE's namespace; the datagrams go to PEER_DEVICE's host, COUNT
// of each kind, from the address of the target QP's peer. Those meant to
// reach the QP's engines carry its connection tag, which `metaroce -j -d qp
// show` gives to root (run in NETNS, where PEER_DEVICE's netdev lives); the
// same packets with a wrong tag must each be dropped as rx_drop_bad_tag.
// With --foreign, run on a third host: well-formed packets that would break
// the connection if the receiver believed them (the attacks of a host that
// can guess QPNs), to both ends, each of which must drop them all: sent
// with the attacker's own address, as not from its peer; with the peer's
// address forged (raw IPv4), for the tag the attacker cannot know.
//
//   mr_craft --fuzz SECONDS [--victim rc|srq|ud] [--netns PEER_DEVICE=NETNS] DEVICE
//            PEER_DEVICE PEER_IPV4 SEED
//
// With --fuzz, run in DEVICE's namespace: a fuzzer aimed at a live QP, as
// 25-fuzz.sh runs it. An RC pair of its own between the devices moves
// traffic of every kind both ways (SENDs, WRITEs, READs, atomics, an RNR
// NAK; every byte checked) while an AF_PACKET socket keeps what leaves for
// PEER_DEVICE's QP: a few hundred valid packets with its connection tag.
// Then for SECONDS, mutations of them go to that QP from this host's UDP
// socket (the receiver checks the peer's address, not its port), paced to
// what the target's device takes: bit flips and byte sets in the headers,
// fields set to extremes and PSNs/MSNs around the window edges the capture
// shows, opcode swaps, truncation, junk appended, two seeds spliced, HELLO
// flags and tags; one in ten also breaks the tag. SEED seeds the mutations
// (std::mt19937_64): the same seed picks the same mutations of the
// captured packets, which differ per run only in tags, QPNs and addresses.
// The drops that the codec and the receive path's order of checks predict
// must be counted (short, version and no-checksum exactly; the engines add
// to the others); the pair must end in RTS or ERR, complete or flush every
// WR, leave every byte outside its MRs and SGEs alone, and be destroyed; a
// new pair then carries verified data. One in ten mutations is a forged
// SEND, well formed at the QP's next PSN, MSN and RSN, that it must take.
// With --victim srq, the target QP takes its receives from an SRQ, and a
// second pair streams checked messages through the same SRQ meanwhile;
// with --victim ud, the target is a UD QP (datagrams: tag 0, a Q_Key),
// seeded by a checked stream of datagrams that goes on through the fuzz.
// Either way the receiving side checks what it is given (RecvCheck): each
// receive is filled with a canary when posted; each completion must name a
// posted receive (wr_id), fit its SGE (byte_len) and leave the bytes past
// byte_len alone; each buffer is held 100 ms while the fuzz goes on and
// must not change after its completion; the stream's messages arrive
// intact (data, byte_len, immediate) and then, after the fuzz, all of a
// last few. "# fuzz-sent N" tells the caller how many datagrams went.
//
//   mr_craft --lying [--netns PEER_DEVICE=NETNS] DEVICE PEER_DEVICE PEER_IPV4
//
// With --lying, run in DEVICE's namespace: the attacks of a peer that holds
// the connection tag, as 28-lying-peer.sh runs it (run_lying(),
// run_rd_excess()).
//
//   mr_craft --tamper COUNT DEVICE PEER_DEVICE PEER_IPV4
//
// With --tamper, run in DEVICE's namespace with both devices encrypting
// (the psk module parameter), as 26-encrypt.sh runs it: an RC pair of its
// own moves verified traffic of every kind while an AF_PACKET socket keeps
// what leaves for PEER_DEVICE's QP, which must all be encrypted. Then COUNT
// copies of them each with one bit flipped in the ciphertext, in the base
// header, in the nonce and in the GCM tag go to that QP from this host's
// UDP socket (checksum valid): each must count exactly COUNT rx_drop_auth
// and no other drop. COUNT copies sent again unchanged (replays) must count
// rx_drop_replay, and COUNT well-formed cleartext SENDs to the QP
// rx_drop_not_encrypted, alike. The pair must stay in RTS and carry verified
// traffic after, and tx_encrypted and rx_decrypted must have counted the
// captured packets.
//
//   mr_craft --lying-acks COUNT DEVICE PEER_DEVICE PEER_IPV4
//
// With --lying-acks, run in DEVICE's namespace: the lying peer, which holds the
// connection tag (issue 31). PEER_DEVICE's QP sends a SEND that DEVICE's
// QP refuses for want of a receive (RNR, waits of 491 ms); an AF_PACKET
// socket keeps DEVICE's ACKs and NAKs for it. Then COUNT ACKs of the
// right path, epoch and PSNs that report the SEND done, COUNT that report
// messages never sent done, and COUNT fatal NAKs of the SEND that name a
// PSN or epoch that never carried it go to the requester: the ACKs must
// complete nothing (rx_bogus_msn_done), the NAKs fail nothing
// (rx_drop_bogus_nak), the QP stays in RTS, and once the receive is
// posted the SEND completes with its data intact.
#include "guest_test.h"
#include "pattern.h"

extern "C" {
#include "aead.h"
#include "wire.h"
}

#include <infiniband/verbs.h>

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <linux/if_packet.h>
#include <map>
#include <memory>
#include <net/ethernet.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <optional>
#include <random>
#include <set>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using namespace guest;

constexpr int kCases = 36, kForeignCases = 20;
constexpr uint16_t kPort = 4792;
// Base header bytes that the codec refuses to encode wrong (protocol.rst):
// version, opcode, flags, path id, and the reserved bytes 4 and 14-15; the
// PSN, the epoch and the receiver's tag.
constexpr size_t kVersionByte = 0, kOpcodeByte = 1, kFlagsByte = 2, kPathByte = 3;
constexpr size_t kReservedByte = 4, kPsnByte = 8, kEpochByte = 12, kReservedTail = 14;
constexpr size_t kTagByte = 16;
// The HELLO header after the base header: the sender's tag, then its flags.
constexpr size_t kHelloSrcTag = MR_BASE_HDR_LEN, kHelloFlags = MR_BASE_HDR_LEN + 8;
// The source port of forged datagrams: one a path could have.
constexpr uint16_t kForgedSport = 50000;

const char *const kDropCounters[] = {"rx_drop_short",   "rx_drop_version", "rx_drop_malformed",
                                     "rx_drop_no_csum", "rx_drop_no_qp",   "rx_drop_not_peer",
                                     "rx_drop_bad_tag", "rx_drop_early"};

using Packet = std::vector<uint8_t>;
using Counts = std::map<std::string, long long>;

// Waits up to @max_ms for counters of @dev to reach @want over @before (a
// counter the device lacks counts as 0, and never gets there), then
// @linger_ms more for any beyond: the counters after.
Counts settle(const char *dev, Counts before, const Counts &want, int max_ms = 10000,
              int linger_ms = 50) {
    // Each reading starts a process: the deadline is the clock's, not a sum of sleeps.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(max_ms);
    while (std::chrono::steady_clock::now() < deadline) {
        Counts now = rdma_counters(dev);
        bool done = true;
        for (auto &[name, n] : want)
            done = done && now[name] - before[name] >= n;
        if (done)
            break;
        usleep(20000);
    }
    usleep(linger_ms * 1000);
    return rdma_counters(dev);
}

// Packets the stack dropped before any protocol saw them, on every CPU: a
// full receive backlog, when a busy host starves the guest's softirqs
// (/proc/net/softnet_stat, second column, hex).
long long backlog_drops() {
    std::ifstream f("/proc/net/softnet_stat");
    long long sum = 0;
    std::string line;
    while (std::getline(f, line)) {
        std::istringstream in(line);
        std::string processed, dropped;
        if (in >> processed >> dropped)
            sum += std::stoll(dropped, nullptr, 16);
    }
    return sum;
}

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

// @tag: the receiving QP's connection tag, as the peer puts it in every
// RC and UC packet (the codec refuses 0 there).
mr_pkt base(uint8_t opcode, uint32_t qpn, uint32_t psn, uint64_t tag) {
    mr_pkt pkt{};
    pkt.base.opcode = opcode;
    pkt.base.qpn = qpn;
    pkt.base.psn = psn;
    pkt.base.tag = tag;
    return pkt;
}

mr_pkt send_pkt(uint32_t qpn, uint32_t psn, uint32_t msn, uint32_t length, uint32_t payload,
                uint64_t tag) {
    mr_pkt pkt = base(MR_OP_SEND, qpn, psn, tag);
    pkt.send.msn = msn;
    pkt.send.length = length;
    pkt.payload_len = payload;
    return pkt;
}

mr_pkt hello_pkt(uint32_t qpn, uint64_t tag, uint64_t src_tag, uint32_t flags) {
    mr_pkt pkt = base(MR_OP_HELLO, qpn, 0, tag);
    pkt.hello.src_tag = src_tag;
    pkt.hello.flags = flags;
    return pkt;
}

// Where a kind's datagrams go to the MetaRoCE port.
class Sender {
public:
    virtual ~Sender() = default;
    virtual bool send(const Packet &p) = 0;
};

class Udp : public Sender {
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
    bool send(const Packet &p) override {
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

uint32_t checksum_add(uint32_t sum, const uint8_t *p, size_t n) {
    for (size_t i = 0; i + 1 < n; i += 2)
        sum += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
    if (n % 2)
        sum += static_cast<uint32_t>(p[n - 1] << 8);
    return sum;
}

uint16_t checksum_fold(uint32_t sum) {
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<uint16_t>(~sum);
}

// UDP over IPv4 with a source address that is not ours: a raw socket
// writes the IP header (IPPROTO_RAW implies IP_HDRINCL), so the route to
// the destination is taken with any source. The UDP checksum is real.
class ForgedUdp4 : public Sender {
public:
    ForgedUdp4(const char *from, const char *to) {
        fd_ = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
        dst_.sin_family = AF_INET;
        ok_ = fd_ >= 0 && inet_pton(AF_INET, from, &src_) == 1 &&
              inet_pton(AF_INET, to, &dst_.sin_addr) == 1;
    }
    ForgedUdp4(const ForgedUdp4 &) = delete;
    ForgedUdp4 &operator=(const ForgedUdp4 &) = delete;
    ~ForgedUdp4() override {
        if (fd_ >= 0)
            close(fd_);
    }
    bool ok() const { return ok_; }
    bool send(const Packet &p) override {
        std::vector<uint8_t> d(sizeof(iphdr) + sizeof(udphdr) + p.size());
        auto *ip = reinterpret_cast<iphdr *>(d.data());
        auto *udp = reinterpret_cast<udphdr *>(d.data() + sizeof(iphdr));
        ip->version = 4;
        ip->ihl = sizeof(iphdr) / 4;
        ip->tot_len = htons(static_cast<uint16_t>(d.size()));
        ip->ttl = 64;
        ip->protocol = IPPROTO_UDP;
        ip->saddr = src_.s_addr;
        ip->daddr = dst_.sin_addr.s_addr; // the kernel fills the id and the IP checksum
        udp->source = htons(kForgedSport);
        udp->dest = htons(kPort);
        udp->len = htons(static_cast<uint16_t>(sizeof(udphdr) + p.size()));
        std::copy(p.begin(), p.end(), d.begin() + sizeof(iphdr) + sizeof(udphdr));
        // The pseudo-header: addresses, protocol, UDP length; then UDP.
        uint8_t pseudo[12] = {};
        std::memcpy(pseudo, &ip->saddr, 4);
        std::memcpy(pseudo + 4, &ip->daddr, 4);
        pseudo[9] = IPPROTO_UDP;
        std::memcpy(pseudo + 10, &udp->len, 2);
        uint16_t sum =
            checksum_fold(checksum_add(checksum_add(0, pseudo, sizeof(pseudo)),
                                       d.data() + sizeof(iphdr), d.size() - sizeof(iphdr)));
        udp->check = htons(sum ? sum : 0xffff); // 0 would say "no checksum"
        return sendto(fd_, d.data(), d.size(), 0, reinterpret_cast<const sockaddr *>(&dst_),
                      sizeof(dst_)) == static_cast<ssize_t>(d.size());
    }

private:
    int fd_ = -1;
    bool ok_ = false;
    in_addr src_{};
    sockaddr_in dst_{};
};

// A QP as `metaroce -j -d qp show` reports it to root.
struct QpTags {
    uint64_t local = 0, peer = 0;
    std::string handshake;
};

// The string member @key of the JSON object text @json, if any.
std::optional<std::string> json_string(const std::string &json, const std::string &key) {
    std::string k = "\"" + key + "\":\"";
    size_t at = json.find(k);
    if (at == std::string::npos)
        return std::nullopt;
    at += k.size();
    size_t end = json.find('"', at);
    if (end == std::string::npos)
        return std::nullopt;
    return json.substr(at, end - at);
}

// The output (stdout and stderr) of @argv, run without a shell: the
// guest's /bin/sh is busybox, whose applets (ip) shadow the real tools.
// posix_spawn, as popen: no fork whose copy-on-write would move pages
// under this process's MRs.
std::string output_of(const std::vector<std::string> &argv) {
    int fds[2];
    if (pipe(fds))
        return std::string("pipe: ") + std::strerror(errno);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    std::vector<char *> args;
    for (const auto &a : argv)
        args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid;
    int err = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    std::string out;
    char buf[512];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof(buf))) > 0)
        out.append(buf, static_cast<size_t>(n));
    close(fds[0]);
    if (err)
        return "cannot run " + argv[0] + ": " + std::strerror(err);
    int status;
    waitpid(pid, &status, 0);
    return out;
}

// The metaroce tool beside this program (both are in the guest's
// /usr/local/bin and in build/userspace/), else the one on PATH.
std::string metaroce_tool() {
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0) {
        std::string dir(self, static_cast<size_t>(n));
        std::string tool = dir.substr(0, dir.rfind('/') + 1) + "metaroce";
        if (access(tool.c_str(), X_OK) == 0)
            return tool;
    }
    return "metaroce";
}

// QP @qpn of @dev through the metaroce tool, run in network namespace
// @netns ("": this one), where the device's netdev is. Bails out when it
// cannot: the cases that need the tag would test nothing without it.
QpTags qp_tags(const std::string &netns, const std::string &dev, uint32_t qpn) {
    std::vector<std::string> argv = {
        metaroce_tool(), "-j", "-d", "qp", "show", "dev", dev, "qpn", std::to_string(qpn)};
    if (!netns.empty())
        argv.insert(argv.begin(), {"ip", "netns", "exec", netns});
    std::string cmd;
    for (const auto &a : argv)
        cmd += (cmd.empty() ? "" : " ") + a;
    std::string out = output_of(argv);
    auto local = json_string(out, "local_tag"), peer = json_string(out, "peer_tag");
    auto handshake = json_string(out, "handshake");
    if (!local || !peer || !handshake)
        bail("cannot read the connection tags of QP " + std::to_string(qpn) + " of " + dev +
             " from `" + cmd + "` (it needs the metaroce tool and CAP_NET_ADMIN): " + out);
    QpTags q;
    q.local = std::strtoull(local->c_str(), nullptr, 16);
    q.peer = std::strtoull(peer->c_str(), nullptr, 16);
    q.handshake = *handshake;
    if (!q.local)
        bail("QP " + std::to_string(qpn) + " of " + dev + " has no tag: " + out);
    return q;
}

struct Craft {
    Ktap &t;
    const char *target;
    Sender &udp4, &udp6;
    int count;
    std::mt19937 rng{20261130};

    uint32_t rand32() { return static_cast<uint32_t>(rng()); }
    uint32_t below(uint32_t n) { return rand32() % n; }
    uint64_t rand64() { return static_cast<uint64_t>(rand32()) << 32 | rand32(); }
    // A tag that is neither @real nor 0: what a forger without the tag sends.
    uint64_t wrong_tag(uint64_t real) {
        uint64_t tag;
        do
            tag = rand64();
        while (tag == real || tag == 0);
        return tag;
    }

    // Sends @count datagrams from @make, and checks that the target's drop
    // counters grew by what the codec predicts (@want for those that decode:
    // a drop counter, or "" when they must reach a QP and drop nothing).
    void kind(const std::string &desc, const std::function<Packet(int)> &make,
              const std::string &want, Sender *via = nullptr) {
        Sender &udp = via ? *via : udp4;
        Counts predicted;
        Counts before = rdma_counters(target);
        const long long backlog_before = backlog_drops();
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
        Counts after = settle(target, before, predicted, 30000);
        // What the stack lost before the module saw it is not the
        // module's to count: a counter may fall short by that much.
        long long lost = backlog_drops() - backlog_before, short_by = 0;
        std::string got, expect;
        bool ok = sent == count && !after.empty();
        for (const char *name : kDropCounters) {
            long long d = after[name] - before[name], w = predicted[name];
            // Other QPs' late packets may land in rx_drop_no_qp meanwhile.
            bool no_qp = std::strcmp(name, "rx_drop_no_qp") == 0;
            ok = ok && (no_qp ? d >= w - lost : d <= w);
            short_by += no_qp || d >= w ? 0 : w - d;
            got += std::string(name) + " +" + std::to_string(d) + " ";
            expect += std::string(name) + " +" + std::to_string(w) + " ";
        }
        ok = ok && short_by <= lost;
        t.check(ok, desc + " (" + std::to_string(count) + "): drop counters as predicted",
                "sent %d of %d; got %s; want %s; the backlog dropped %lld", sent, count,
                got.c_str(), expect.c_str(), lost);
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
         int count, const std::string &netns) {
    RcPair p(a, b);
    if (p.error())
        bail("cannot build an RC pair: " + std::string(std::strerror(p.error())));
    const uint32_t qpn = p[1]->qp_num;     // the target: the responder on PEER
    const uint32_t psn0 = RcPair::kPsn[0]; // where its receive windows start
    std::string why;
    t.check(exchange(p, a, b, 0, &why), "the pair carries a SEND before the storm", "%s",
            why.c_str());
    // From here the responder has completed MSN 0 and expects MSN 1, and
    // the handshake is over: the tag is what the peer (us, by address) sends.
    const QpTags tags = qp_tags(netns, b.name, qpn);
    const uint64_t tag = tags.local;

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
                                          MR_OP_ACK,       MR_OP_NAK,       MR_OP_HELLO};
            uint8_t op = ops[i % sizeof(ops)];
            mr_pkt pkt = base(op, qpn, op == MR_OP_HELLO ? 0 : far_psn, tag);
            if (op == MR_OP_NAK)
                pkt.nak.code = MR_NAK_RNR;
            if (op == MR_OP_ACK)
                pkt.ack.cum_psn = far_psn + 1;
            if (op == MR_OP_HELLO)
                pkt.hello.src_tag = c.wrong_tag(0);
            Packet p = encode(pkt);
            p.resize(c.below(static_cast<uint32_t>(p.size())));
            return p;
        },
        "");
    c.kind(
        "wrong wire version",
        [&](int) {
            Packet p = encode(send_pkt(qpn, far_psn, 1, 16, 16, tag));
            do
                p[kVersionByte] = static_cast<uint8_t>(c.rand32());
            while (p[kVersionByte] == MR_WIRE_VERSION);
            return p;
        },
        "");
    c.kind(
        "unknown opcodes",
        [&](int) {
            Packet p = encode(send_pkt(qpn, far_psn, 1, 16, 16, tag));
            do
                p[kOpcodeByte] = static_cast<uint8_t>(c.rand32());
            while (mr_wire_hdr_len(p[kOpcodeByte]));
            return p;
        },
        "");
    c.kind(
        "reserved flag bits and reserved bytes",
        [&](int i) {
            Packet p = encode(send_pkt(qpn, far_psn, 1, 16, 16, tag));
            if (i % 3 == 0) {
                // A bit no packet may carry in the clear: a reserved one,
                // or ENCRYPTED, which decoding refuses.
                uint8_t bit;
                do
                    bit = static_cast<uint8_t>(1u << c.below(8));
                while (bit & (MR_FLAG_ACK_REQ | MR_FLAG_SOLICITED | MR_FLAG_WINDOW_LIMITED));
                p[kFlagsByte] |= bit;
                return p;
            }
            // Bytes 4 and 14-15 are a request's order and stream; in any
            // other packet they are reserved.
            p = encode(hello_pkt(qpn, tag, 1, 0));
            if (i % 3 == 1)
                p[kReservedByte] = static_cast<uint8_t>(1 + c.below(255));
            else
                p[kReservedTail + c.below(2)] = static_cast<uint8_t>(1 + c.below(255));
            return p;
        },
        "");
    c.kind(
        "path id 64 and above",
        [&](int) {
            Packet p = encode(send_pkt(qpn, far_psn, 1, 16, 16, tag));
            p[kPathByte] =
                static_cast<uint8_t>(MR_WIRE_MAX_PATHS + c.below(256 - MR_WIRE_MAX_PATHS));
            return p;
        },
        "");
    // A connection's packet without a tag, and HELLOs against their rules:
    // no sender tag, unknown flags, "known" without naming the receiver's
    // tag, a PSN or an epoch.
    c.kind(
        "data packets without a tag, HELLOs that break the handshake's rules",
        [&](int i) {
            Packet p;
            if (i % 5 == 0) {
                p = encode(send_pkt(qpn, far_psn, 1, 16, 16, tag));
                mr_put_be64(&p[kTagByte], 0);
                return p;
            }
            p = encode(hello_pkt(qpn, c.wrong_tag(0), c.wrong_tag(0), 0));
            switch (i % 5) {
            case 1:
                mr_put_be64(&p[kHelloSrcTag], 0);
                break;
            case 2:
                mr_put_be32(&p[kHelloFlags], (MR_HELLO_REPLY << 1) << c.below(30));
                break;
            case 3:
                mr_put_be64(&p[kTagByte], 0);
                mr_put_be32(&p[kHelloFlags], MR_HELLO_KNOWN);
                break;
            default:
                if (c.below(2))
                    mr_put_be32(&p[kPsnByte], 1 + c.below(0xfffffffe));
                else
                    mr_put_be16(&p[kEpochByte], static_cast<uint16_t>(1 + c.below(0xfffe)));
            }
            if (predicted_drop(p).empty())
                bail("a HELLO against the rules decodes");
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
            return encode(send_pkt(none, psn0, 1, 16, 16, tag));
        },
        "rx_drop_no_qp");
    c.kind(
        "SENDs to the live QP claiming more than 2 GiB",
        [&](int) {
            Packet p = encode(send_pkt(qpn, far_psn, 1, 0x13572468, 16, tag));
            patch32(p, 0x13572468, MR_WIRE_MAX_MSG_LEN + 1 + c.below(0x7ffffffe));
            return p;
        },
        "");
    c.kind(
        "SENDs to the live QP with the payload beyond the length",
        [&](int) {
            mr_pkt pkt = send_pkt(qpn, far_psn, 1, 0x2000, 16, tag);
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
                Packet p = encode(send_pkt(qpn, far_psn, 1, 0x10000, MR_WIRE_MAX_PAYLOAD, tag));
                p.push_back(0xcc); // one byte more than any MTU carries
                return p;
            }
            Packet p = encode(send_pkt(qpn, far_psn, 1, 64, 64, tag));
            p.resize(p.size() - 64); // the headers promise 64 bytes; none follow
            return p;
        },
        "");
    // The packets below carry the tag: they reach the engines, which must
    // refuse them for what they say. Each has a twin with a wrong tag.
    // These decode; the responder drops them for an MSN outside its window.
    auto far_msn = [&](int i, uint64_t with) {
        uint32_t msn = 1 + MR_WIRE_SACK_BITS + c.below(0x7fffff00);
        if (i % 2)
            return encode(send_pkt(qpn, psn0, msn, 64, 64, with));
        mr_pkt pkt = base(MR_OP_WRITE, qpn, psn0, with);
        pkt.write.msn = msn;
        pkt.write.rkey = c.rand32();
        pkt.write.va = static_cast<uint64_t>(c.rand32()) << 20;
        pkt.write.length = 64;
        pkt.payload_len = 64;
        return encode(pkt);
    };
    c.kind(
        "SENDs and WRITEs (garbage rkey) to the live QP, MSN far outside the window",
        [&](int i) { return far_msn(i, tag); }, "rx_drop_malformed");
    // The live QP's requester has sent nothing: every ACK that claims more
    // than that is malformed; so is one for a path it does not use.
    auto greedy_ack = [&](int i, uint64_t with) {
        mr_pkt pkt = base(MR_OP_ACK, qpn, 0, with);
        pkt.ack.cum_psn = RcPair::kPsn[1] + (i % 2 ? 0 : 1 + c.below(200));
        for (auto &w : pkt.ack.sack)
            w = ~0ull;
        pkt.ack.sack[0] &= ~1ull;
        pkt.base.psn = pkt.ack.cum_psn + 1;
        pkt.base.path = static_cast<uint8_t>(i % 3 == 2 ? 4 + c.below(60) : 0);
        pkt.ack.msn_done = c.rand32();
        return encode(pkt);
    };
    c.kind(
        "ACKs to the live QP whose SACK claims everything, or beyond what was sent",
        [&](int i) { return greedy_ack(i, tag); }, "rx_drop_malformed");
    c.kind(
        "NAKs with an unknown code, or a delay on a non-RNR NAK",
        [&](int i) {
            mr_pkt pkt = base(MR_OP_NAK, qpn, 0, tag);
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
    auto stray_nak = [&](int i, uint64_t with) {
        mr_pkt pkt = base(MR_OP_NAK, qpn, c.rand32(), with);
        pkt.nak.msn = 1 + c.below(0x7fffffff);
        pkt.nak.code = i % 2 ? MR_NAK_REMOTE_ACCESS : MR_NAK_INVALID_REQUEST;
        return encode(pkt);
    };
    c.kind(
        "NAKs (remote access, invalid request) for MSNs the live QP never sent",
        [&](int i) { return stray_nak(i, tag); }, "");
    // IPv4 allows "no checksum", IPv6 tunnels may; MetaRoCE has no
    // integrity check but UDP's.
    for (int family : {AF_INET, AF_INET6}) {
        bool v4 = family == AF_INET;
        Udp nocsum(family, v4 ? peer4 : peer6);
        if (!nocsum.ok() || !nocsum.no_checksum())
            bail("cannot open a UDP socket without checksums");
        c.kind(
            std::string("valid SENDs over ") + (v4 ? "IPv4" : "IPv6") + " without a UDP checksum",
            [&](int) { return encode(send_pkt(qpn, far_psn, 1, 16, 16, tag)); }, "rx_drop_no_csum",
            &nocsum);
    }

    // From the peer's address without its tag (an off-path host that can
    // forge the address): the twins of the cases above, then what would
    // break the connection if it were believed. Each is dropped as
    // rx_drop_bad_tag before any engine sees it.
    c.kind(
        "wrong tag: the far-MSN SENDs and WRITEs, greedy ACKs, stray NAKs, valid SENDs",
        [&](int i) {
            uint64_t wrong = c.wrong_tag(tag);
            switch (i % 4) {
            case 0:
                return far_msn(i / 4, wrong);
            case 1:
                return greedy_ack(i / 4, wrong);
            case 2:
                return stray_nak(i / 4, wrong);
            }
            return encode(send_pkt(qpn, psn0 + 1, 1, 16, 16, wrong));
        },
        "rx_drop_bad_tag");
    c.kind(
        "wrong tag: in-window SENDs, WRITEs, atomics and 2 GiB READs",
        [&](int i) {
            uint64_t wrong = c.wrong_tag(tag);
            uint32_t psn = psn0 + 1 + static_cast<uint32_t>(i % 64);
            mr_pkt pkt = send_pkt(qpn, psn, 1 + static_cast<uint32_t>(i % 8), 64, 64, wrong);
            uint64_t va = static_cast<uint64_t>(c.rand32()) << 12;
            switch (i % 4) {
            case 1:
                pkt = base(MR_OP_WRITE, qpn, psn, wrong);
                pkt.write.msn = 1 + c.below(8);
                pkt.write.rkey = c.rand32();
                pkt.write.va = va;
                pkt.write.length = 64;
                pkt.payload_len = 64;
                break;
            case 2:
                pkt = base(MR_OP_FETCH_ADD, qpn, psn, wrong);
                pkt.atomic.msn = 1 + c.below(8);
                pkt.atomic.rkey = c.rand32();
                pkt.atomic.va = va;
                pkt.atomic.swap_add = 1;
                break;
            case 3:
                pkt = base(MR_OP_READ_REQ, qpn, psn, wrong);
                pkt.read_req.msn = 1 + c.below(8);
                pkt.read_req.rkey = c.rand32();
                pkt.read_req.va = va;
                pkt.read_req.length = MR_WIRE_MAX_MSG_LEN;
                break;
            }
            pkt.base.path = static_cast<uint8_t>(i % 4);
            return encode(pkt);
        },
        "rx_drop_bad_tag");
    // The target as a requester (it sends back below): answers to it.
    c.kind(
        "wrong tag: ACKs, NAKs, READ responses with epochs ahead, atomic responses",
        [&](int i) {
            uint64_t wrong = c.wrong_tag(tag);
            uint32_t sent = RcPair::kPsn[1] + static_cast<uint32_t>(i % 64);
            mr_pkt pkt = base(MR_OP_ACK, qpn, sent, wrong);
            switch (i % 4) {
            case 0:
                pkt.ack.cum_psn = sent + 1;
                pkt.ack.msn_done = 1 + c.below(64);
                break;
            case 1:
                pkt = base(MR_OP_NAK, qpn, sent, wrong);
                pkt.nak.msn = 1 + static_cast<uint32_t>(i % 64);
                pkt.nak.code = i % 8 == 1 ? MR_NAK_REMOTE_ACCESS : MR_NAK_INVALID_REQUEST;
                break;
            case 2:
                pkt = base(MR_OP_READ_RESP, qpn, psn0 + c.below(64), wrong);
                pkt.base.path = static_cast<uint8_t>(i % 16);
                pkt.base.epoch = static_cast<uint16_t>(0x8000 + i / 16);
                pkt.read_resp.msn = 1;
                pkt.read_resp.length = 16;
                pkt.payload_len = 16;
                break;
            default:
                pkt = base(MR_OP_ATOMIC_RESP, qpn, psn0 + c.below(64), wrong);
                pkt.atomic_resp.msn = 1 + c.below(64);
                pkt.atomic_resp.orig = c.rand32();
            }
            return encode(pkt);
        },
        "rx_drop_bad_tag");
    // HELLOs are the one kind a receiver takes without its tag, to learn
    // the peer's. One naming a wrong tag proves nothing and changes nothing
    // (the target answers some, to our port); one with the target's tag
    // that names another sender tag than the peer's is a second peer: a
    // connection has one.
    Counts hello0 = rdma_counters(c.target);
    c.kind(
        "HELLOs with a wrong tag (sent before the tag is known, or forged)",
        [&](int i) {
            uint64_t to = i % 2 ? c.wrong_tag(tag) : 0;
            uint32_t flags = (i % 4 == 1 ? MR_HELLO_KNOWN : 0) | (i % 3 ? MR_HELLO_REPLY : 0);
            return encode(hello_pkt(qpn, to, c.wrong_tag(tags.peer), to ? flags : 0));
        },
        "");
    c.kind(
        "HELLOs with the target's tag naming another peer tag",
        [&](int i) {
            uint32_t flags = (i % 2 ? MR_HELLO_KNOWN : 0) | (i % 3 ? MR_HELLO_REPLY : 0);
            return encode(hello_pkt(qpn, tag, c.wrong_tag(tags.peer), flags));
        },
        "");
    Counts hello1 = rdma_counters(c.target);
    const QpTags now = qp_tags(netns, b.name, qpn);
    t.check(now.local == tags.local && now.peer == tags.peer && now.handshake == "done" &&
                hello1["hello_rx"] - hello0["hello_rx"] >= 2 * count,
            "the target's tags and handshake are as before the HELLOs (hello_rx counted them)",
            "local %016" PRIx64 " -> %016" PRIx64 ", peer %016" PRIx64 " -> %016" PRIx64
            ", handshake %s -> %s, hello_rx %lld -> %lld",
            tags.local, now.local, tags.peer, now.peer, tags.handshake.c_str(),
            now.handshake.c_str(), hello0["hello_rx"], hello1["hello_rx"]);

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
        mr_pkt pkt = send_pkt(qpn, far_psn, 2, 3000, 1024, tag);
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

// Sets the module parameter @name to @value; returns the old value ("" on failure).
std::string set_param(const std::string &name, const std::string &value) {
    const std::string path = "/sys/module/metaroce/parameters/" + name;
    std::string old;
    std::ifstream(path) >> old;
    std::ofstream out(path);
    out << value << "\n";
    out.flush();
    return out ? old : "";
}

// A WRITE packet of message @msn (@length bytes at @va under @rkey) to
// @qpn: the slice at @offset, on @path at @psn. Its payload is 0xcc.
mr_pkt write_pkt(uint32_t qpn, uint8_t path, uint32_t psn, uint32_t msn, uint32_t rkey, uint64_t va,
                 uint32_t length, uint32_t offset, uint32_t mtu, uint64_t tag) {
    mr_pkt pkt = base(MR_OP_WRITE, qpn, psn, tag);
    pkt.base.path = path;
    pkt.write = {
        .msn = msn, .rkey = rkey, .va = va, .length = length, .offset = offset, .rsn = 0, .imm = 0};
    pkt.payload_len = std::min(mtu, length - offset);
    return pkt;
}

// What a peer may make a responder hold and send (issue #16), against a
// fresh RC pair whose responder is on @b: paths 16-63, which the real
// requester (16 paths) never uses, carry the crafted packets. A message
// completing on 48 paths draws at most 16 ACKs at once (acks_held counts
// the rest); 2 GiB WRITEs fill the QP's slice-map budget (four of them at
// its MTU) and the fifth is refused with NAK INVALID_REQUEST, which moves
// the QP to ERR, counted, without a map; a flood at that fatal QP draws
// the NAK at most once per 5 ms (fatal_naks, fatal_naks_suppressed).
void run_bounds(Ktap &t, RcEnd &a, RcEnd &b, Udp &udp4, const std::string &netns, int count) {
    RcPair q(a, b);
    if (q.error())
        bail("cannot build an RC pair: " + std::string(std::strerror(q.error())));
    std::string why;
    t.check(exchange(q, a, b, 0, &why), "bounds: a second pair carries a SEND", "%s", why.c_str());
    const uint32_t qpn = q[1]->qp_num, psn0 = RcPair::kPsn[0];
    const uint64_t tag = qp_tags(netns, b.name, qpn).local;
    ibv_qp_attr attr{};
    ibv_qp_init_attr init{};
    if (ibv_query_qp(q[1], &attr, IBV_QP_PATH_MTU, &init))
        bail("cannot query the path MTU of QP " + std::to_string(qpn));
    const uint32_t mtu = 128u << attr.path_mtu;
    constexpr uint8_t kFirstPath = 16;
    constexpr uint32_t kPaths = MR_WIRE_MAX_PATHS - kFirstPath, kBurst = 16;
    std::vector<uint8_t> buf(2 * kPaths * mtu);
    Mr mr(ibv_reg_mr(b.pd.get(), buf.data(), buf.size(),
                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
    if (!mr)
        bail("cannot register the WRITE target");
    const uint64_t va = reinterpret_cast<uintptr_t>(buf.data());
    const char *dev = b.name.c_str();

    // MSN 1: a WRITE of two slices per path. Each path's first packet is
    // acknowledged at once; its second is held (ack_delay_us stretched so
    // the held ACKs' timer cannot fire meanwhile) until the last one
    // completes the message and every path is due.
    const std::string old_delay = set_param("ack_delay_us", "300000");
    const uint32_t len1 = 2 * kPaths * mtu;
    Counts before = rdma_counters(dev);
    bool sent = !old_delay.empty();
    for (uint32_t round = 0; round < 2; round++)
        for (uint32_t k = 0; k < kPaths; k++)
            sent = udp4.send(encode(write_pkt(qpn, static_cast<uint8_t>(kFirstPath + k),
                                              psn0 + round, 1, mr->rkey, va, len1,
                                              (round * kPaths + k) * mtu, mtu, tag))) &&
                   sent;
    Counts after = settle(dev, before, {{"acks_held", kPaths - kBurst}});
    if (!old_delay.empty())
        set_param("ack_delay_us", old_delay);
    bool landed = true;
    for (uint8_t byte : buf)
        landed = landed && byte == 0xcc;
    long long held = after["acks_held"] - before["acks_held"];
    t.check(sent && landed && held == kPaths - kBurst,
            "bounds: a WRITE completing on 48 paths draws 16 ACKs at once, 32 held",
            "sent %d, landed %d, acks_held +%lld (want %u), tx_packets +%lld", sent, landed, held,
            kPaths - kBurst, after["tx_packets"] - before["tx_packets"]);

    // MSNs 2-5: the first slice of a 2 GiB WRITE each, which fill the
    // budget; MSN 6 is one more.
    before = rdma_counters(dev);
    sent = true;
    for (uint32_t k = 0; k < 5; k++)
        sent =
            udp4.send(encode(write_pkt(qpn, static_cast<uint8_t>(kFirstPath + k), psn0 + 2, 2 + k,
                                       mr->rkey, va, MR_WIRE_MAX_MSG_LEN, 0, mtu, tag))) &&
            sent;
    after = settle(dev, before, {{"rx_refused_map_budget", 1}});
    int state = q.state(1);
    for (int waited = 0; state != IBV_QPS_ERR && waited < 1000; waited += 20) {
        usleep(20000);
        state = q.state(1);
    }
    long long refused = after["rx_refused_map_budget"] - before["rx_refused_map_budget"];
    t.check(sent && refused == 1 && after["rx_drop_short"] == before["rx_drop_short"],
            "bounds: four 2 GiB WRITEs fill the slice-map budget, the fifth is refused",
            "sent %d, rx_refused_map_budget +%lld (want 1), rx_drop_short +%lld", sent, refused,
            after["rx_drop_short"] - before["rx_drop_short"]);
    t.check(state == IBV_QPS_ERR, "bounds: the refused QP is in ERR (NAK INVALID_REQUEST)",
            "state %d", state);

    // A flood at the fatal QP: each packet would draw the NAK again.
    before = rdma_counters(dev);
    int flood = 0;
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < count; i++) {
        flood += udp4.send(
            encode(write_pkt(qpn, static_cast<uint8_t>(kFirstPath + i % kPaths),
                             psn0 + 3 + static_cast<uint32_t>(i / kPaths),
                             7 + static_cast<uint32_t>(i % 64), mr->rkey, va, 64, 0, mtu, tag)));
        if (i % 32 == 31)
            usleep(2000); // stay below the veth backlog
    }
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - start)
                  .count();
    after = settle(dev, before, {{"fatal_naks", 1}});
    for (int waited = 0; waited < 1000; waited += 20) {
        if (after["fatal_naks"] + after["fatal_naks_suppressed"] - before["fatal_naks"] -
                before["fatal_naks_suppressed"] >=
            flood)
            break;
        usleep(20000);
        after = rdma_counters(dev);
    }
    long long naks = after["fatal_naks"] - before["fatal_naks"],
              quiet = after["fatal_naks_suppressed"] - before["fatal_naks_suppressed"];
    // One per 5 ms from the refusal's NAK on, and the receive may lag the send.
    long long most = 2 + (ms + 100) / 5;
    t.check(flood == count && naks >= 1 && naks <= most && naks + quiet == flood,
            "bounds: a flood at the fatal QP draws its NAK at most once per 5 ms",
            "sent %d in %lld ms: fatal_naks +%lld (at most %lld), suppressed +%lld, "
            "tx_packets +%lld",
            flood, static_cast<long long>(ms), naks, most, quiet,
            after["tx_packets"] - before["tx_packets"]);

    // The device goes on: a new pair between the same devices carries data.
    RcPair r(a, b);
    t.check(!r.error() && exchange(r, a, b, 0, &why),
            "bounds: a new pair carries a SEND after the refusal and the flood", "%s",
            r.error() ? std::strerror(r.error()) : why.c_str());
}

// The attacks of a third host on the connection a <-> b: what would reset,
// fail or complete it if the receiver took it from anyone. The QPNs are
// known here; an attacker would have to guess them. The tags it cannot
// know: it sends random ones. @name says how the datagrams come (from
// the attacker's address, or the peer's forged), @drop where they must land.
struct Attacks {
    Craft &ca, &cb;
    uint32_t qa, qb;

    void run(const std::string &name, const std::string &drop) {
        for (Craft *c : {&ca, &cb}) {
            const uint32_t qpn = c == &ca ? qa : qb;
            c->kind(
                "READ_RESPs on every path with an epoch far ahead, to " + std::string(c->target) +
                    name,
                [&](int i) {
                    mr_pkt pkt =
                        base(MR_OP_READ_RESP, qpn, c->below(MR_WIRE_QPN_MAX + 1), c->wrong_tag(0));
                    pkt.base.path = static_cast<uint8_t>(i % 16);
                    pkt.base.epoch = static_cast<uint16_t>(0x8000 + i / 16);
                    pkt.read_resp.msn = 1;
                    pkt.read_resp.length = 16;
                    pkt.payload_len = 16;
                    return encode(pkt);
                },
                drop);
        }
        // Against a, the requester: answers to what it sent, or will send.
        ca.kind(
            "NAKs (remote access, invalid request) for in-window MSNs" + name,
            [&](int i) {
                mr_pkt pkt = base(MR_OP_NAK, qa, RcPair::kPsn[0] + static_cast<uint32_t>(i % 64),
                                  ca.wrong_tag(0));
                pkt.nak.msn = 1 + static_cast<uint32_t>(i % 64);
                pkt.nak.code = i % 2 ? MR_NAK_REMOTE_ACCESS : MR_NAK_INVALID_REQUEST;
                return encode(pkt);
            },
            drop);
        ca.kind(
            "ACKs with an in-window cumulative PSN and an MSN done ahead" + name,
            [&](int i) {
                mr_pkt pkt = base(MR_OP_ACK, qa, 0, ca.wrong_tag(0));
                pkt.base.path = static_cast<uint8_t>(i % 16);
                pkt.ack.cum_psn = RcPair::kPsn[0] + 1 + ca.below(64);
                pkt.base.psn = pkt.ack.cum_psn - 1;
                pkt.ack.msn_done = 2 + ca.below(64);
                return encode(pkt);
            },
            drop);
        ca.kind(
            "READ and atomic responses for in-window MSNs" + name,
            [&](int i) {
                mr_pkt pkt = base(i % 2 ? MR_OP_READ_RESP : MR_OP_ATOMIC_RESP, qa,
                                  RcPair::kPsn[1] + ca.below(64), ca.wrong_tag(0));
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
            drop);
        // Against b, the responder: requests it would place, answer or complete.
        cb.kind(
            "SENDs sweeping the next MSNs and RSNs, in-window PSNs" + name,
            [&](int i) {
                mr_pkt pkt = send_pkt(qb, RcPair::kPsn[0] + 1 + static_cast<uint32_t>(i % 64),
                                      1 + static_cast<uint32_t>(i % 8), 64, 64, cb.wrong_tag(0));
                pkt.base.path = static_cast<uint8_t>(i % 16);
                pkt.send.rsn = static_cast<uint32_t>(i / 8 % 64);
                return encode(pkt);
            },
            drop);
        cb.kind(
            "WRITEs and atomics with guessed rkeys" + name,
            [&](int i) {
                mr_pkt pkt = base(i % 2 ? MR_OP_WRITE : MR_OP_FETCH_ADD, qb,
                                  RcPair::kPsn[0] + 1 + cb.below(64), cb.wrong_tag(0));
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
            drop);
        cb.kind(
            "READ requests for 2 GiB" + name,
            [&](int) {
                mr_pkt pkt =
                    base(MR_OP_READ_REQ, qb, RcPair::kPsn[0] + 1 + cb.below(64), cb.wrong_tag(0));
                pkt.read_req = {.msn = 1 + cb.below(8),
                                .rkey = cb.rand32(),
                                .va = static_cast<uint64_t>(cb.rand32()) << 12,
                                .length = MR_WIRE_MAX_MSG_LEN};
                return encode(pkt);
            },
            drop);
    }
};

// From a third host: the attacks with its own address (@to_a, @to_b), then
// with the other end's address forged (@forged_a to a from b's address,
// @forged_b to b from a's).
void run_foreign(Ktap &t, RcEnd &a, RcEnd &b, Udp &to_a, Udp &to_b, ForgedUdp4 &forged_a,
                 ForgedUdp4 &forged_b, int count) {
    RcPair p(a, b);
    if (p.error())
        bail("cannot build an RC pair: " + std::string(std::strerror(p.error())));
    std::string why;
    t.check(exchange(p, a, b, 0, &why), "the pair carries a SEND before the attacks", "%s",
            why.c_str());

    Craft ca{t, a.name.c_str(), to_a, to_a, count}, cb{t, b.name.c_str(), to_b, to_b, count};
    Attacks{ca, cb, p[0]->qp_num, p[1]->qp_num}.run("", "rx_drop_not_peer");
    Craft fa{t, a.name.c_str(), forged_a, forged_a, count},
        fb{t, b.name.c_str(), forged_b, forged_b, count};
    Attacks{fa, fb, p[0]->qp_num, p[1]->qp_num}.run(", from the peer's address", "rx_drop_bad_tag");

    t.check(p.state(0) == IBV_QPS_RTS && p.state(1) == IBV_QPS_RTS,
            "both QPs are still in RTS after the attacks", "states %d/%d", p.state(0), p.state(1));
    t.check(exchange(p, a, b, 0, &why), "a verified SEND a -> b after the attacks", "%s",
            why.c_str());
    t.check(exchange(p, b, a, 1, &why), "a verified SEND b -> a after the attacks", "%s",
            why.c_str());
}

// ---- --fuzz: mutations of captured packets at a live QP --------------------

constexpr int kFuzzCases = 10;
constexpr size_t kFuzzMaxSeeds = 500;
constexpr uint32_t kFuzzRounds = 4;         // of traffic to capture: about 80 packets each
constexpr uint32_t kFuzzRegion = 64 * 1024; // the target's RDMA memory
constexpr uint32_t kFuzzSlot = 4096, kFuzzRecvLen = 3072, kFuzzRecvs = 8;
// Datagrams sent but not yet seen by the target's device, at most (plus a
// batch, up to 8 x 512 while the target keeps up): below the per-CPU backlog
// (netdev_max_backlog, 10000 in the guest), little delay for other traffic.
constexpr long long kFuzzInFlight = 1000, kFuzzBatch = 512;

// Datagrams to UDP 4792 that leave this namespace for @peer, as an AF_PACKET
// socket sees them on the way out; a thread reads them while traffic runs,
// for_qp() picks a QP's after.
class Capture {
public:
    explicit Capture(const char *peer) {
        // ETH_P_ALL: only such sockets see what is sent, not just received.
        fd_ = socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_ALL));
        timeval tv{0, 100000};
        ok_ = fd_ >= 0 && inet_pton(AF_INET, peer, &peer_) == 1 &&
              setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0;
        if (ok_)
            reader_ = std::thread([this] { read_loop(); });
    }
    Capture(const Capture &) = delete;
    Capture &operator=(const Capture &) = delete;
    ~Capture() {
        stop();
        if (fd_ >= 0)
            close(fd_);
    }
    bool ok() const { return ok_; }
    void stop() {
        stop_ = true;
        if (reader_.joinable())
            reader_.join();
    }
    // After stop(): the UDP payloads that were for QP @qpn, in order.
    std::vector<Packet> for_qp(uint32_t qpn) const {
        std::vector<Packet> out;
        for (const Packet &p : got_)
            if (p.size() >= MR_BASE_HDR_LEN && (mr_get_be32(&p[4]) & MR_WIRE_QPN_MAX) == qpn)
                out.push_back(p);
        return out;
    }

private:
    void read_loop() {
        std::vector<uint8_t> buf(65536);
        while (!stop_) {
            sockaddr_ll from{};
            socklen_t len = sizeof(from);
            ssize_t n =
                recvfrom(fd_, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr *>(&from), &len);
            if (n < static_cast<ssize_t>(sizeof(iphdr)) || from.sll_pkttype != PACKET_OUTGOING ||
                from.sll_protocol != htons(ETH_P_IP))
                continue;
            const auto *ip = reinterpret_cast<const iphdr *>(buf.data());
            size_t ihl = ip->ihl * 4u;
            if (ip->protocol != IPPROTO_UDP || ip->daddr != peer_.s_addr ||
                static_cast<size_t>(n) < ihl + sizeof(udphdr))
                continue;
            const auto *udp = reinterpret_cast<const udphdr *>(buf.data() + ihl);
            size_t ulen = ntohs(udp->len);
            if (ntohs(udp->dest) != kPort || ulen < sizeof(udphdr) ||
                ihl + ulen > static_cast<size_t>(n))
                continue;
            const uint8_t *payload = buf.data() + ihl + sizeof(udphdr);
            got_.emplace_back(payload, payload + ulen - sizeof(udphdr));
        }
    }

    int fd_ = -1;
    bool ok_ = false;
    in_addr peer_{};
    std::atomic<bool> stop_{false};
    std::vector<Packet> got_; // the reader's until stop()
    std::thread reader_;
};

// How many datagrams of ours the target's device has seen: those it
// received beyond what the peer's device sent it. One `rdma statistic` for
// both (this namespace's sysfs may not show them); -1 if it cannot tell.
long long fuzz_seen(const char *target, const char *peer) {
    Pipe f(popen("rdma statistic show link 2>/dev/null", "r"));
    if (!f)
        return -1;
    long long rx = -1, tx = -1;
    char line[8192];
    while (std::fgets(line, sizeof(line), f.get())) {
        char link[128];
        if (std::sscanf(line, "link %127s", link) != 1)
            continue;
        std::string l = link, text = line;
        auto value = [&](const char *name) {
            size_t at = text.find(std::string(" ") + name + " ");
            return at == std::string::npos ? -1
                                           : std::atoll(text.c_str() + at + std::strlen(name) + 2);
        };
        if (l == std::string(target) + "/1")
            rx = value("rx_packets");
        else if (l == std::string(peer) + "/1")
            tx = value("tx_packets");
    }
    return rx < 0 || tx < 0 ? -1 : rx - tx;
}

// Memory with guard zones: @len usable bytes after kFuzzRegion bytes of
// guard, then kFuzzRegion more; the guards hold kGuardByte.
struct Guarded {
    Mapping map;
    explicit Guarded(size_t len) : map(len + 2 * kFuzzRegion, PROT_READ | PROT_WRITE) {
        if (map.get())
            std::memset(map.get(), kGuardByte, map.size());
    }
    uint8_t *data() const { return map.get() + kFuzzRegion; }
    // The first guard byte that changed, as an offset from data(), if any.
    std::optional<long> damaged(size_t len) const {
        const uint8_t *p = map.get();
        for (size_t i = 0; i < map.size(); i++)
            if ((i < kFuzzRegion || i >= kFuzzRegion + len) && p[i] != kGuardByte)
                return static_cast<long>(i) - static_cast<long>(kFuzzRegion);
        return std::nullopt;
    }
};

double since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

uint8_t pattern_byte(uint32_t key, size_t i) {
    return static_cast<uint8_t>((i * 131 + key * 7 + (i >> 8)) & 0xff);
}

// The target pair's memory: on each end a region for RDMA (the peer's WRITEs,
// READs and atomics hit it), and on the target slots of receives, each
// followed by bytes no SEND may reach.
struct FuzzMemory {
    Guarded rdma_a{kFuzzRegion}, rdma_b{kFuzzRegion};
    Guarded recv_a{kFuzzSlot * kFuzzRecvs}, recv_b{kFuzzSlot * kFuzzRecvs};
    Mr mr_rdma_a, mr_rdma_b, mr_recv_a, mr_recv_b;
    static constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

    FuzzMemory(RcEnd &a, RcEnd &b) {
        mr_rdma_a.reset(ibv_reg_mr(a.pd.get(), rdma_a.data(), kFuzzRegion, kAccess));
        mr_rdma_b.reset(ibv_reg_mr(b.pd.get(), rdma_b.data(), kFuzzRegion, kAccess));
        mr_recv_a.reset(
            ibv_reg_mr(a.pd.get(), recv_a.data(), kFuzzSlot * kFuzzRecvs, IBV_ACCESS_LOCAL_WRITE));
        mr_recv_b.reset(
            ibv_reg_mr(b.pd.get(), recv_b.data(), kFuzzSlot * kFuzzRecvs, IBV_ACCESS_LOCAL_WRITE));
        if (!mr_rdma_a || !mr_rdma_b || !mr_recv_a || !mr_recv_b)
            bail("cannot register the fuzz target's memory: " + std::string(std::strerror(errno)));
        // The bytes of each receive slot past its SGE are guards too.
        for (Guarded *g : {&recv_a, &recv_b})
            for (uint32_t s = 0; s < kFuzzRecvs; s++)
                std::memset(g->data() + s * kFuzzSlot, 0, kFuzzRecvLen);
    }
    // The first byte outside what the peer may write that changed, if any.
    std::optional<std::string> damage() const {
        for (auto [g, name] : {std::pair{&rdma_a, "a's RDMA region"}, {&rdma_b, "b's RDMA region"}})
            if (auto at = g->damaged(kFuzzRegion))
                return std::string(name) + " guard at offset " + std::to_string(*at);
        for (auto [g, name] : {std::pair{&recv_a, "a's receives"}, {&recv_b, "b's receives"}}) {
            if (auto at = g->damaged(kFuzzSlot * kFuzzRecvs))
                return std::string(name) + " guard at offset " + std::to_string(*at);
            for (uint32_t s = 0; s < kFuzzRecvs; s++)
                for (uint32_t i = kFuzzRecvLen; i < kFuzzSlot; i++)
                    if (g->data()[s * kFuzzSlot + i] != kGuardByte)
                        return std::string(name) + " slot " + std::to_string(s) + " byte " +
                               std::to_string(i) + " (past its SGE)";
        }
        return std::nullopt;
    }
};

// Posts receive slot @slot of @mr on @qp, or on @srq if there is one.
int post_slot(ibv_qp *qp, const Guarded &g, const Mr &mr, uint32_t slot, ibv_srq *srq = nullptr) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(g.data() + slot * kFuzzSlot), kFuzzRecvLen, mr->lkey};
    if (srq) {
        ibv_recv_wr wr{}, *bad = nullptr;
        wr.wr_id = 100 + slot;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        return ibv_post_srq_recv(srq, &wr, &bad);
    }
    return post_recv_wr(qp, 100 + slot, &sge);
}

// ---- the fuzz victim's own checks (--victim srq, --victim ud) -------------

// Receives of the fuzzed QP's side, each slot kCheckSlot bytes with an SGE
// of kCheckSge: every receive is filled with kCanary when posted.
constexpr uint32_t kCheckSlots = 32, kCheckSlot = 4096, kCheckSge = 3072;
constexpr uint8_t kCanary = 0x5c;
// A completed receive's buffer is held this long (the fuzz goes on), then
// checked again before it is reposted: a write after completion shows.
constexpr auto kCheckHold = std::chrono::milliseconds(100);
// The fuzz is over once no foreign message has completed for this long.
constexpr auto kCheckQuiet = std::chrono::milliseconds(300);
constexpr uint32_t kCheckWindow = 8, kCheckTail = 8, kVerifiedHdr = 16;
constexpr int kCheckerCases = 4;

// A verified message: its sequence number, its length and a check word
// from the run's key, then Pattern bytes of the run's key and the number.
struct VerifiedHdr {
    uint32_t seq, len;
    uint64_t check;
};

// A verified stream through the victim's receives while the fuzz runs, and
// what a receiver can check itself: each completion names a receive that is
// posted (wr_id), its byte_len fits the SGE and nothing past it is written;
// the stream's messages arrive intact (data and byte_len), each once (and
// in order on an RC QP); no buffer changes after its completion. run() is
// the thread's; stop() ends the stream with kCheckTail more messages that
// must all arrive.
class RecvCheck {
public:
    struct Setup {
        ibv_cq *rcq, *scq;
        ibv_pd *rpd, *spd;
        std::function<int(ibv_recv_wr *)> post_recv; // on the victim: its RQ or SRQ
        std::function<int(ibv_send_wr *)> post_send; // the stream's sender (a UD WR gets its AH)
        uint32_t send_qpn;
        uint32_t stream_qpn; // RC: the QP whose every receive is the stream's; UD: 0
        uint32_t grh;        // bytes the device puts before a datagram: 40 on UD
        uint32_t max_len;    // of a stream message
        const char *rdev;    // the receiving device, for the tail's counters
        uint64_t key = 0;    // start() sets it
    };
    explicit RecvCheck(const Setup &s)
        : s_(s), recv_(kCheckSlots * kCheckSlot),
          send_(kCheckWindow * kCheckSlot, PROT_READ | PROT_WRITE) {
        std::memset(recv_.data(), kCanary, kCheckSlots * kCheckSlot);
        rmr_.reset(
            ibv_reg_mr(s.rpd, recv_.data(), kCheckSlots * kCheckSlot, IBV_ACCESS_LOCAL_WRITE));
        smr_.reset(ibv_reg_mr(s.spd, send_.get(), send_.size(), IBV_ACCESS_LOCAL_WRITE));
        if (!rmr_ || !smr_ || !send_.get())
            bail("cannot register the checked receives: " + std::string(std::strerror(errno)));
    }
    RecvCheck(const RecvCheck &) = delete;
    RecvCheck &operator=(const RecvCheck &) = delete;
    ~RecvCheck() { stop(); }

    // A run of the stream under @key (messages of another key are foreign);
    // receives still posted from the last run stay posted.
    void start(uint64_t key) {
        s_.key = key;
        stop_ = false;
        tail_from_ = ~0u;
        tail_got_ = intact_ = foreign_ = errors_ = rechecked_ = 0;
        bad_wc_.clear(), late_.clear(), bad_stream_.clear(), seen_.clear();
        rx_seq_ = next_seq_;
        thread_ = std::thread([this] { run(); });
    }
    void stop() {
        stop_ = true;
        if (thread_.joinable())
            thread_.join();
    }
    uint32_t sent() const { return next_seq_; }

    // After stop(): the cases, in order.
    void report(Ktap &t, const std::string &what) const {
        std::printf("# %s: %u stream messages sent, %u received intact, %u foreign, %u "
                    "receive errors, %u buffers rechecked\n",
                    what.c_str(), next_seq_, intact_, foreign_, errors_, rechecked_);
        auto first = [](const std::vector<std::string> &v) {
            std::string s;
            for (size_t i = 0; i < v.size() && i < 4; i++)
                s += (i ? "; " : "") + v[i];
            if (v.size() > 4)
                s += "; and " + std::to_string(v.size() - 4) + " more";
            return s;
        };
        t.check(bad_wc_.empty(),
                what + ": every receive completion names a posted receive (wr_id), its byte_len "
                       "fits the SGE, nothing past byte_len is written",
                "%s", first(bad_wc_).c_str());
        t.check(rechecked_ > 0 && late_.empty(),
                what + ": no receive buffer changes after its completion (rechecked " +
                    std::to_string(kCheckHold.count()) + " ms later, before reposting)",
                "%u rechecked; %s", rechecked_, first(late_).c_str());
        t.check(intact_ > 0 && bad_stream_.empty(),
                what + ": the verified stream's messages arrive intact (data, byte_len), " +
                    (s_.stream_qpn ? "in order" : "each once"),
                "%u intact; %s", intact_, first(bad_stream_).c_str());
        const std::string tail = what + ": after the fuzz, " + std::to_string(kCheckTail) +
                                 " more stream messages all arrive intact";
        // With an SRQ, the fuzzed QP holds at most its share (srq.c).
        t.check(tail_got_ == kCheckTail, tail, "%s", tail_note_.c_str());
    }

private:
    using Clock = std::chrono::steady_clock;
    struct Held {
        uint32_t slot;
        uint64_t wr_id;
        Clock::time_point at;
        std::vector<uint8_t> bytes;
    };

    uint8_t *slot(uint32_t i) const { return recv_.data() + i * kCheckSlot; }
    static uint64_t check_word(uint64_t key, uint32_t seq, uint32_t len) {
        return mix(key ^ (static_cast<uint64_t>(len) << 32 | seq));
    }
    uint32_t len_of(uint32_t seq) const {
        return kVerifiedHdr +
               static_cast<uint32_t>(mix(s_.key ^ seq) % (s_.max_len - kVerifiedHdr + 1));
    }
    // Message @seq's byte @k.
    static uint8_t verified_byte(const VerifiedHdr &h, Pattern &p, uint64_t k) {
        if (k < kVerifiedHdr)
            return reinterpret_cast<const uint8_t *>(&h)[k];
        return p.at(k);
    }

    void post(uint32_t i) {
        std::memset(slot(i), kCanary, kCheckSlot);
        uint64_t wr_id = ++gen_ << 8 | i;
        ibv_sge sge{reinterpret_cast<uintptr_t>(slot(i)), kCheckSge, rmr_->lkey};
        ibv_recv_wr wr{};
        wr.wr_id = wr_id;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        posted_[i] = wr_id;
        if (s_.post_recv(&wr))
            bad_wc_.push_back("posting receive " + std::to_string(i) + " failed");
    }

    bool send_next() {
        const uint32_t seq = next_seq_, len = len_of(seq);
        uint8_t *buf = send_.get() + (seq % kCheckWindow) * kCheckSlot;
        fill_pattern(buf, {{0, len}}, len, mix(s_.key ^ seq));
        VerifiedHdr h{seq, len, check_word(s_.key, seq, len)};
        std::memcpy(buf, &h, sizeof(h));
        ibv_sge sge{reinterpret_cast<uintptr_t>(buf), len, smr_->lkey};
        ibv_send_wr wr = send_wr(seq, seq % 2 ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, &sge);
        wr.imm_data = htonl(seq);
        if (s_.post_send(&wr)) {
            bad_stream_.push_back("posting message " + std::to_string(seq) + " failed");
            return false;
        }
        next_seq_++;
        in_flight_++;
        return true;
    }

    void on_recv(const ibv_wc &wc) {
        const uint32_t i = static_cast<uint32_t>(wc.wr_id & 0xff);
        char what[160];
        std::snprintf(what, sizeof(what), "receive wr_id %#" PRIx64 " (QP %u, %s, byte_len %u)",
                      static_cast<uint64_t>(wc.wr_id), wc.qp_num, ibv_wc_status_str(wc.status),
                      wc.byte_len);
        if (i >= kCheckSlots || posted_[i] != wc.wr_id) {
            bad_wc_.push_back(std::string(what) + ": no such receive is posted");
            return;
        }
        posted_[i] = 0;
        const uint8_t *buf = slot(i);
        const bool stream_qp = s_.stream_qpn && wc.qp_num == s_.stream_qpn;
        if (wc.status != IBV_WC_SUCCESS) {
            errors_++;
            if (stream_qp)
                bad_stream_.push_back(std::string(what) + ": on the stream's QP");
        } else if (wc.byte_len < s_.grh || wc.byte_len > kCheckSge) {
            bad_wc_.push_back(std::string(what) + ": byte_len outside the SGE");
        } else if (auto m = check_region(
                       buf, 0, kCheckSlot, {{0, kCheckSge}}, wc.byte_len,
                       [&](uint64_t k) { return buf[k]; }, kCanary)) {
            bad_wc_.push_back(std::string(what) + ": byte " + std::to_string(m->off) +
                              " past byte_len written");
        } else {
            check_content(wc, buf, what, stream_qp);
        }
        held_.push_back({i, wc.wr_id, Clock::now(), std::vector<uint8_t>(buf, buf + kCheckSlot)});
    }

    void check_content(const ibv_wc &wc, const uint8_t *buf, const char *what, bool stream_qp) {
        VerifiedHdr h{};
        const uint32_t n = wc.byte_len - s_.grh;
        if (n >= kVerifiedHdr)
            std::memcpy(&h, buf + s_.grh, sizeof(h));
        const bool ours = n >= kVerifiedHdr && h.check == check_word(s_.key, h.seq, h.len);
        if (!ours) {
            foreign_++;
            last_foreign_ = Clock::now();
            if (stream_qp)
                bad_stream_.push_back(std::string(what) + ": not the stream's message " +
                                      std::to_string(rx_seq_));
            return;
        }
        Pattern p(mix(s_.key ^ h.seq));
        auto m = check_region(
            buf, s_.grh, kCheckSge, {{s_.grh, kCheckSge - s_.grh}}, h.len,
            [&](uint64_t k) { return verified_byte(h, p, k); }, kCanary);
        std::string why;
        if (s_.stream_qpn && !stream_qp)
            why = "the stream's message " + std::to_string(h.seq) + " completed on another QP";
        else if (h.seq >= next_seq_ || h.len != len_of(h.seq))
            why = "message " + std::to_string(h.seq) + " of length " + std::to_string(h.len) +
                  " was never sent";
        else if (s_.stream_qpn && h.seq != rx_seq_)
            why = "message " + std::to_string(h.seq) + " where " + std::to_string(rx_seq_) +
                  " was due";
        else if (!s_.stream_qpn && seen_.count(h.seq))
            why = "message " + std::to_string(h.seq) + " a second time";
        else if (!(wc.wc_flags & IBV_WC_WITH_IMM) != !(h.seq % 2) ||
                 (h.seq % 2 && ntohl(wc.imm_data) != h.seq))
            why = "message " + std::to_string(h.seq) + ": immediate data wrong or missing";
        else if (n != h.len)
            why = "byte_len is not the message's " + std::to_string(h.len + s_.grh);
        else if (m)
            why = "message " + std::to_string(h.seq) + " byte " + std::to_string(m->off - s_.grh) +
                  " is " + std::to_string(m->got) + ", not " + std::to_string(m->want);
        if (!why.empty()) {
            bad_stream_.push_back(std::string(what) + ": " + why);
            return;
        }
        seen_.insert(h.seq);
        rx_seq_ = h.seq + 1;
        intact_++;
        tail_got_ += h.seq >= tail_from_;
    }

    // Held buffers whose time is up (all, with @all): checked, reposted.
    void release(bool all, bool repost) {
        while (!held_.empty() && (all || Clock::now() - held_.front().at >= kCheckHold)) {
            Held &h = held_.front();
            const uint8_t *buf = slot(h.slot);
            for (uint32_t k = 0; k < kCheckSlot; k++)
                if (buf[k] != h.bytes[k]) {
                    late_.push_back("receive wr_id " + std::to_string(h.wr_id) + ": byte " +
                                    std::to_string(k) + " changed from " +
                                    std::to_string(h.bytes[k]) + " to " + std::to_string(buf[k]) +
                                    " after its completion");
                    break;
                }
            rechecked_++;
            if (repost)
                post(h.slot);
            held_.pop_front();
        }
    }

    void poll() {
        ibv_wc wc[16];
        int n;
        while ((n = ibv_poll_cq(s_.scq, 16, wc)) > 0)
            for (int k = 0; k < n; k++) {
                if (wc[k].qp_num != s_.send_qpn)
                    continue;
                in_flight_--;
                if (wc[k].status != IBV_WC_SUCCESS)
                    bad_stream_.push_back("message " + std::to_string(wc[k].wr_id) +
                                          " sent: " + ibv_wc_status_str(wc[k].status));
            }
        while ((n = ibv_poll_cq(s_.rcq, 16, wc)) > 0)
            for (int k = 0; k < n; k++)
                on_recv(wc[k]);
    }

    void run() {
        for (uint32_t i = 0; i < kCheckSlots; i++)
            if (!posted_[i])
                post(i);
        // The stream while the fuzz runs, paced by its send completions.
        while (!stop_) {
            if (in_flight_ < kCheckWindow && !send_next())
                break;
            poll();
            release(false, true);
            usleep(in_flight_ < kCheckWindow ? 500 : 100);
        }
        // Then the tail, once every receive is posted again and the fuzz's
        // last packets, queued on a slow (debug) kernel, have stopped
        // taking receives.
        auto until = Clock::now() + std::chrono::seconds(5);
        while ((in_flight_ || !held_.empty() || Clock::now() - last_foreign_ < kCheckQuiet) &&
               Clock::now() < until) {
            poll();
            release(false, true);
            usleep(1000);
        }
        const auto t0 = Clock::now();
        uint32_t posted = 0;
        for (uint64_t id : posted_)
            posted += id != 0;
        char note[160];
        std::snprintf(note, sizeof(note),
                      "tail from message %u: %u in flight, %zu held, %u posted, %u foreign so far",
                      next_seq_, in_flight_, held_.size(), posted, foreign_);
        tail_note_ = note;
        const char *const watch[] = {"rx_packets", "ud_rx_drop_no_recv", "rnr_naks", "ring_errors",
                                     "rx_drop_no_qp"};
        Counts c0 = rdma_counters(s_.rdev);
        tail_from_ = next_seq_;
        for (uint32_t k = 0; k < kCheckTail; k++) {
            while (in_flight_ >= kCheckWindow && Clock::now() < until + std::chrono::seconds(5))
                poll(), usleep(200);
            send_next();
        }
        until = Clock::now() + std::chrono::seconds(5);
        while (tail_got_ < kCheckTail && Clock::now() < until) {
            poll();
            release(false, true);
            usleep(1000);
        }
        tail_note_ += ", " + std::to_string(tail_got_) + " arrived in " +
                      std::to_string(std::chrono::duration<double>(Clock::now() - t0).count()) +
                      " s, " + std::to_string(foreign_) + " foreign;";
        Counts c1 = rdma_counters(s_.rdev);
        for (const char *w : watch)
            tail_note_ += std::string(" ") + w + " +" + std::to_string(c1[w] - c0[w]);
        usleep(static_cast<useconds_t>(kCheckHold.count() * 1000));
        poll();
        release(true, false);
        if (auto at = recv_.damaged(kCheckSlots * kCheckSlot))
            bad_wc_.push_back("the receive pool's guard at offset " + std::to_string(*at));
    }

    Setup s_;
    Guarded recv_;
    Mapping send_;
    Mr rmr_, smr_;
    std::thread thread_;
    std::atomic<bool> stop_{false};
    uint64_t posted_[kCheckSlots] = {};
    uint64_t gen_ = 0;
    std::deque<Held> held_;
    Clock::time_point last_foreign_{};
    std::set<uint32_t> seen_;
    uint32_t next_seq_ = 0, rx_seq_ = 0, in_flight_ = 0, tail_from_ = ~0u, tail_got_ = 0;
    uint32_t intact_ = 0, foreign_ = 0, errors_ = 0, rechecked_ = 0;
    std::vector<std::string> bad_wc_, late_, bad_stream_;
    std::string tail_note_;
};

// One round of traffic of every kind on the target pair: a -> b SEND,
// SEND_IMM, WRITE, WRITE_IMM, READ and both atomics; b -> a SEND (before
// a's receive is posted; with @rnr, once a has NAKed it RNR), WRITE, READ,
// FETCH_ADD.
// Every completion must succeed and every byte land; "" or what went wrong.
std::string fuzz_round(RcPair &p, RcEnd &a, RcEnd &b, FuzzMemory &m, uint32_t round, bool rnr,
                       ibv_srq *srq = nullptr) {
    uint8_t *ra = m.rdma_a.data(), *rb = m.rdma_b.data();
    uint32_t key = round + 1;
    // Sources: a's region [0, 16K) is what a sends, b's [32K, 48K) what b sends.
    for (size_t i = 0; i < 16384; i++) {
        ra[i] = pattern_byte(key, i);
        rb[32768 + i] = pattern_byte(key + 1000, i);
    }
    std::memset(ra + 16384, 0, 16384); // where READs from b land
    std::memset(rb, 0, 16384);         // where a's WRITEs land
    auto sge = [](uint8_t *at, uint32_t len, const Mr &mr) {
        return ibv_sge{reinterpret_cast<uintptr_t>(at), len, mr->lkey};
    };
    const uint32_t rkey_a = m.mr_rdma_a->rkey, rkey_b = m.mr_rdma_b->rkey;
    auto va = [](uint8_t *at) { return reinterpret_cast<uint64_t>(at); };
    int rc = 0;
    for (uint32_t s = 0; s < 3; s++) // SEND, SEND_IMM, WRITE_IMM
        rc |= post_slot(p[1], m.recv_b, m.mr_recv_b, s, srq);
    std::vector<ibv_sge> sa = {sge(ra, 100, m.mr_rdma_a),          sge(ra + 100, 3000, m.mr_rdma_a),
                               sge(ra + 4096, 2500, m.mr_rdma_a),  sge(ra + 8192, 64, m.mr_rdma_a),
                               sge(ra + 16384, 3000, m.mr_rdma_a), sge(ra + 24576, 8, m.mr_rdma_a),
                               sge(ra + 24584, 8, m.mr_rdma_a)};
    ibv_wr_opcode ops_a[] = {IBV_WR_SEND,
                             IBV_WR_SEND_WITH_IMM,
                             IBV_WR_RDMA_WRITE,
                             IBV_WR_RDMA_WRITE_WITH_IMM,
                             IBV_WR_RDMA_READ,
                             IBV_WR_ATOMIC_CMP_AND_SWP,
                             IBV_WR_ATOMIC_FETCH_AND_ADD};
    // b's atomic word at 48K holds the round's FETCH_ADD count; CMP_SWAP at 48K+8.
    uint64_t *word = reinterpret_cast<uint64_t *>(rb + 49152);
    if (round == 0)
        word[0] = word[1] = 0;
    for (int i = 0; i < 7; i++) {
        ibv_send_wr wr = send_wr(static_cast<uint64_t>(i), ops_a[i], &sa[static_cast<size_t>(i)]);
        wr.imm_data = htonl(0x1000 + round);
        switch (ops_a[i]) {
        case IBV_WR_RDMA_WRITE:
            wr.wr.rdma = {va(rb + 4096), rkey_b};
            break;
        case IBV_WR_RDMA_WRITE_WITH_IMM:
            wr.wr.rdma = {va(rb + 8192), rkey_b};
            break;
        case IBV_WR_RDMA_READ:
            wr.wr.rdma = {va(rb + 32768), rkey_b};
            break;
        case IBV_WR_ATOMIC_CMP_AND_SWP:
            wr.wr.atomic = {va(rb + 49160), round, round + 1, rkey_b};
            break;
        case IBV_WR_ATOMIC_FETCH_AND_ADD:
            wr.wr.atomic = {va(rb + 49152), 1, 0, rkey_b};
            break;
        default:
            break;
        }
        rc |= post_send_wr(p[0], wr);
    }
    // b -> a: a SEND that finds no receive (RNR NAK), then WRITE, READ, FETCH_ADD.
    std::vector<ibv_sge> sb = {sge(rb + 32768, 2000, m.mr_rdma_b),
                               sge(rb + 36864, 1500, m.mr_rdma_b),
                               sge(rb + 16384, 1500, m.mr_rdma_b), sge(rb + 20480, 8, m.mr_rdma_b)};
    ibv_wr_opcode ops_b[] = {IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ,
                             IBV_WR_ATOMIC_FETCH_AND_ADD};
    uint64_t *word_a = reinterpret_cast<uint64_t *>(ra + 49152);
    if (round == 0)
        *word_a = 0;
    const long long rnr0 = rnr ? rdma_counters(a.name.c_str())["rnr_naks"] : 0;
    for (int i = 0; i < 4; i++) {
        ibv_send_wr wr =
            send_wr(static_cast<uint64_t>(10 + i), ops_b[i], &sb[static_cast<size_t>(i)]);
        if (ops_b[i] == IBV_WR_RDMA_WRITE)
            wr.wr.rdma = {va(ra + 32768), rkey_a};
        else if (ops_b[i] == IBV_WR_RDMA_READ)
            wr.wr.rdma = {va(ra), rkey_a};
        else if (ops_b[i] == IBV_WR_ATOMIC_FETCH_AND_ADD)
            wr.wr.atomic = {va(ra + 49152), 1, 0, rkey_a};
        rc |= post_send_wr(p[1], wr);
        if (i == 0) {
            // The SEND meets no receive: a NAKs it RNR (and counts that).
            for (int w = 0; rnr && w < 30 && rdma_counters(a.name.c_str())["rnr_naks"] == rnr0; w++)
                usleep(100000);
            rc |= post_slot(p[0], m.recv_a, m.mr_recv_a, 0);
        }
    }
    if (rc)
        return "posting failed";
    auto wa = poll_wcs(a.scq.get(), 7, 10000), wb = poll_wcs(b.scq.get(), 4, 10000);
    auto ra_wc = poll_wcs(a.rcq.get(), 1, 10000), rb_wc = poll_wcs(b.rcq.get(), 3, 10000);
    std::string wcs = "a " + wcs_str(wa) + "/ b " + wcs_str(wb) + "/ recv a " + wcs_str(ra_wc) +
                      "/ recv b " + wcs_str(rb_wc);
    bool ok = wa.size() == 7 && wb.size() == 4 && ra_wc.size() == 1 && rb_wc.size() == 3;
    for (auto *v : {&wa, &wb, &ra_wc, &rb_wc})
        for (const ibv_wc &wc : *v)
            ok = ok && wc.status == IBV_WC_SUCCESS;
    if (!ok)
        return "completions: " + wcs;
    // Every byte: what each side sent or wrote, and what each READ brought.
    auto same = [](const uint8_t *x, const uint8_t *y, size_t n) { return !std::memcmp(x, y, n); };
    const uint8_t *rcv_b = m.recv_b.data(), *rcv_a = m.recv_a.data();
    if (!same(rcv_b, ra, 100) || !same(rcv_b + kFuzzSlot, ra + 100, 3000) ||
        !same(rb + 4096, ra + 4096, 2500) || !same(rb + 8192, ra + 8192, 64) ||
        !same(ra + 16384, rb + 32768, 3000))
        return "a's data did not land as sent, or its READ brought other bytes";
    if (!same(rcv_a, rb + 32768, 2000) || !same(ra + 32768, rb + 36864, 1500) ||
        !same(rb + 16384, ra, 1500))
        return "b's data did not land as sent, or its READ brought other bytes";
    uint64_t orig_fa = 0, orig_a = 0;
    std::memcpy(&orig_fa, ra + 24584, 8);
    std::memcpy(&orig_a, rb + 20480, 8);
    if (word[0] != round + 1 || word[1] != round + 1 || orig_fa != round || orig_a != round ||
        *word_a != round + 1)
        return "atomics: b's words " + std::to_string(word[0]) + "/" + std::to_string(word[1]) +
               ", a's " + std::to_string(*word_a) + ", originals " + std::to_string(orig_fa) + "/" +
               std::to_string(orig_a) + " in round " + std::to_string(round);
    return "";
}

// A field of a packet: where, how wide, and what it means (for the values
// worth trying).
enum class Sem { Raw, Flags, Path, Qpn, Psn, Epoch, Msn, CumPsn, Len, Va, Key, Sack, Code, Hello };
struct Field {
    uint8_t off, size;
    Sem sem;
};

// The fields of @opcode's headers (protocol.rst), the base header's first.
std::vector<Field> fields_of(uint8_t opcode) {
    std::vector<Field> f = {{2, 1, Sem::Flags},
                            {3, 1, Sem::Path},
                            {5, 3, Sem::Qpn},
                            {8, 4, Sem::Psn},
                            {12, 2, Sem::Epoch}};
    const uint8_t H = MR_BASE_HDR_LEN;
    switch (opcode) {
    case MR_OP_SEND:
    case MR_OP_SEND_IMM:
    case MR_OP_SEND_INV:
        f.insert(
            f.end(),
            {{H, 4, Sem::Msn}, {H + 4, 4, Sem::Msn}, {H + 8, 4, Sem::Len}, {H + 12, 4, Sem::Len}});
        if (opcode != MR_OP_SEND)
            f.push_back({H + 16, 4, Sem::Key});
        break;
    case MR_OP_WRITE:
    case MR_OP_WRITE_IMM:
        f.insert(f.end(), {{H, 4, Sem::Msn},
                           {H + 4, 4, Sem::Key},
                           {H + 8, 8, Sem::Va},
                           {H + 16, 4, Sem::Len},
                           {H + 20, 4, Sem::Len}});
        if (opcode == MR_OP_WRITE_IMM)
            f.insert(f.end(), {{H + 24, 4, Sem::Msn}, {H + 28, 4, Sem::Raw}});
        break;
    case MR_OP_READ_REQ:
        f.insert(
            f.end(),
            {{H, 4, Sem::Msn}, {H + 4, 4, Sem::Key}, {H + 8, 8, Sem::Va}, {H + 16, 4, Sem::Len}});
        break;
    case MR_OP_CMP_SWAP:
    case MR_OP_FETCH_ADD:
        f.insert(
            f.end(),
            {{H, 4, Sem::Msn}, {H + 4, 4, Sem::Key}, {H + 8, 8, Sem::Va}, {H + 16, 8, Sem::Raw}});
        if (opcode == MR_OP_CMP_SWAP)
            f.push_back({H + 24, 8, Sem::Raw});
        break;
    case MR_OP_READ_RESP:
        f.insert(f.end(), {{H, 4, Sem::Msn}, {H + 4, 4, Sem::Len}, {H + 8, 4, Sem::Len}});
        break;
    case MR_OP_ATOMIC_RESP:
        f.insert(f.end(), {{H, 4, Sem::Msn}, {H + 4, 8, Sem::Raw}});
        break;
    case MR_OP_ACK:
        f.insert(f.end(), {{H, 4, Sem::CumPsn},
                           {H + 4, 8, Sem::Sack},
                           {H + 12, 8, Sem::Sack},
                           {H + 20, 8, Sem::Sack},
                           {H + 28, 8, Sem::Sack},
                           {H + 36, 4, Sem::Msn},
                           {H + 40, 4, Sem::Raw},
                           {H + 44, 4, Sem::Raw}});
        break;
    case MR_OP_NAK:
        f.insert(
            f.end(),
            {{H, 4, Sem::Msn}, {H + 4, 1, Sem::Code}, {H + 5, 1, Sem::Raw}, {H + 6, 2, Sem::Raw}});
        break;
    case MR_OP_HELLO:
        f.insert(f.end(), {{H, 8, Sem::Key}, {H + 8, 4, Sem::Hello}});
        break;
    default:
        break;
    }
    return f;
}

uint64_t get_field(const Packet &p, const Field &f) {
    uint64_t v = 0;
    for (unsigned i = 0; i < f.size; i++)
        v = v << 8 | p[f.off + i];
    return v;
}

void put_field(Packet &p, const Field &f, uint64_t v) {
    for (unsigned i = f.size; i-- > 0; v >>= 8)
        p[f.off + i] = static_cast<uint8_t>(v);
}

enum Mutation {
    kBitFlip,
    kByteSet,
    kExtreme,
    kWindowEdge,
    kOpcode,
    kTruncate,
    kExtend,
    kSplice,
    kHello,
    kForge,
    kNumMutations
};
const char *const kMutationNames[] = {
    "bit flips",  "byte set",  "field extremes", "window edges", "opcode swap",
    "truncation", "extension", "splice",         "HELLO fields", "forged SENDs"};

// The connection's edges as the captured packets show them: per path of
// the peer (a), the next PSN its data packets take; the next MSN of its
// requests; per path of the target (b), the PSN its ACKs expect next.
struct Edges {
    std::map<uint8_t, uint32_t> psn, cum_psn;
    uint32_t msn = 0, rsn = 0;

    explicit Edges(const std::vector<Packet> &seeds) {
        for (const Packet &p : seeds) {
            mr_pkt pkt;
            if (mr_wire_decode(p.data(), static_cast<u32>(p.size()), &pkt))
                continue;
            uint8_t path = pkt.base.path;
            if (pkt.base.opcode == MR_OP_ACK) {
                cum_psn[path] = std::max(cum_psn[path], pkt.ack.cum_psn);
            } else if (pkt.base.opcode < MR_OP_ACK) {
                psn[path] = std::max(psn[path], pkt.base.psn + 1);
                if (pkt.base.opcode < MR_OP_READ_RESP)
                    msn = std::max(msn, pkt.send.msn + 1); // msn leads every request header
                if (pkt.base.opcode <= MR_OP_SEND_INV)
                    rsn = std::max(rsn, pkt.send.rsn + 1);
                else if (pkt.base.opcode == MR_OP_WRITE_IMM)
                    rsn = std::max(rsn, pkt.write.rsn + 1);
            }
        }
    }
};

struct Fuzzer {
    const std::vector<Packet> &seeds;
    const Edges &edges;
    uint64_t tag, peer_tag;
    std::mt19937_64 rng;
    long long kinds[kNumMutations] = {};
    long long tag_broken = 0;
    // forge()'s: the next PSN per path, MSN and RSN, from the edges on.
    std::map<uint8_t, uint32_t> forge_psn = {};
    std::optional<uint32_t> forge_msn = {}, forge_rsn = {};

    uint64_t below(uint64_t n) { return n ? rng() % n : 0; }
    bool one_in(unsigned n) { return below(n) == 0; }
    const Packet &seed() { return seeds[below(seeds.size())]; }
    // A byte of the headers outside the tag, mostly; anywhere sometimes.
    size_t header_byte(const Packet &p) {
        size_t hdr = std::min(p.size(), static_cast<size_t>(MR_MAX_HDR_LEN));
        if (one_in(5) || hdr <= kTagByte + 8)
            return below(p.size());
        size_t at = below(hdr - 8);
        return at < kTagByte ? at : at + 8;
    }

    uint64_t extreme(const Field &f, uint64_t orig) {
        const uint64_t max = f.size == 8 ? ~0ull : (1ull << (8 * f.size)) - 1;
        const uint64_t picks[] = {0, 1, max, max - 1, orig + 1, orig - 1, max >> 1, (max >> 1) + 1};
        uint64_t v = picks[below(std::size(picks))];
        switch (f.sem) {
        case Sem::Len: {
            const uint64_t lens[] = {0,      1,          7,          8,          1023,
                                     1024,   1025,       4095,       4096,       4097,
                                     0xffff, 0x7fffffff, 0x80000000, 0x80000001, 0xffffffff};
            if (one_in(2))
                v = lens[below(std::size(lens))];
            break;
        }
        case Sem::Va: {
            const uint64_t d[] = {1, 7, 8, 4096, kFuzzRegion - 1, kFuzzRegion, kFuzzRegion + 1};
            uint64_t delta = d[below(std::size(d))];
            if (one_in(2))
                v = one_in(2) ? orig + delta : orig - delta;
            break;
        }
        case Sem::Path: {
            const uint64_t ids[] = {0, 1, 3, 4, 15, 16, 63, 64, 255};
            v = ids[below(std::size(ids))];
            break;
        }
        case Sem::Flags:
            v = one_in(2) ? below(4) : 1u << below(8);
            break;
        case Sem::Code:
            v = below(6);
            break;
        case Sem::Hello:
            v = one_in(2) ? below(4) : 1ull << below(32);
            break;
        case Sem::Sack:
            if (one_in(2))
                v = one_in(2) ? 1ull << below(64) : ~0ull << below(64);
            break;
        case Sem::Key:
            if (f.size == 8 && one_in(2)) // the HELLO's sender tag
                v = one_in(2) ? peer_tag : peer_tag ^ (1ull << below(64));
            break;
        default:
            break;
        }
        return v & max;
    }

    // A PSN or MSN at the edge of what the target expects: just before,
    // at, after, at the end of the window and past it.
    uint64_t edge(const Field &f, uint64_t orig, uint8_t path) {
        uint32_t base;
        switch (f.sem) {
        case Sem::Psn:
            base = edges.psn.count(path) ? edges.psn.at(path) : static_cast<uint32_t>(orig);
            break;
        case Sem::CumPsn:
            base = edges.cum_psn.count(path) ? edges.cum_psn.at(path) : static_cast<uint32_t>(orig);
            break;
        case Sem::Msn:
            base = edges.msn;
            break;
        default:
            return orig;
        }
        const int64_t d[] = {-2, -1, 0, 1, 2, 15, 16, 17, 255, 256, 257, -256, 0x800000};
        return static_cast<uint32_t>(base + d[below(std::size(d))]);
    }

    void field_mutation(Packet &p, bool edges_only) {
        std::vector<Field> fs;
        for (const Field &f : fields_of(p[kOpcodeByte]))
            if (f.off + f.size <= p.size() &&
                (!edges_only || f.sem == Sem::Psn || f.sem == Sem::CumPsn || f.sem == Sem::Msn))
                fs.push_back(f);
        if (fs.empty())
            return;
        const Field &f = fs[below(fs.size())];
        uint64_t orig = get_field(p, f);
        put_field(p, f, edges_only ? edge(f, orig, p[kPathByte]) : extreme(f, orig));
    }

    Packet hello() {
        std::vector<const Packet *> hellos;
        for (const Packet &p : seeds)
            if (p[kOpcodeByte] == MR_OP_HELLO && p.size() >= MR_BASE_HDR_LEN + MR_HELLO_HDR_LEN)
                hellos.push_back(&p);
        Packet p;
        if (!hellos.empty() && one_in(2)) {
            p = *hellos[below(hellos.size())];
        } else {
            mr_pkt pkt = base(MR_OP_HELLO, mr_get_be32(&seed()[4]) & MR_WIRE_QPN_MAX, 0, tag);
            pkt.hello.src_tag = peer_tag;
            pkt.hello.flags = static_cast<uint32_t>(below(4));
            p = encode(pkt);
        }
        if (one_in(3))
            mr_put_be64(&p[kTagByte], one_in(2) ? 0 : tag);
        for (int n = 1 + static_cast<int>(below(2)); n > 0; n--) {
            std::vector<Field> fs = fields_of(MR_OP_HELLO);
            const Field &f = fs[below(fs.size())];
            put_field(p, f, extreme(f, get_field(p, f)));
        }
        return p;
    }

    // A message that the target takes, well formed and with the real tag:
    // from a SEND seed, a SEND at its path's next PSN and the next MSN,
    // naming the next receive (RSN); from a datagram, one with a new
    // payload. Its payload is random; its tag is never broken (one lost
    // would leave a PSN hole that holds back every forged SEND after).
    Packet forge() {
        std::vector<const Packet *> sends;
        for (const Packet &p : seeds)
            if (p[kOpcodeByte] == MR_OP_SEND || p[kOpcodeByte] == MR_OP_SEND_IMM ||
                p[kOpcodeByte] == MR_OP_UD_SEND || p[kOpcodeByte] == MR_OP_UD_SEND_IMM)
                sends.push_back(&p);
        mr_pkt pkt;
        if (sends.empty())
            return seed();
        const Packet &from = *sends[below(sends.size())];
        if (mr_wire_decode(from.data(), static_cast<u32>(from.size()), &pkt))
            return from;
        pkt.payload_len = 1 + static_cast<uint32_t>(below(1000));
        if (pkt.base.opcode == MR_OP_SEND || pkt.base.opcode == MR_OP_SEND_IMM) {
            const uint8_t path = pkt.base.path;
            if (!forge_psn.count(path))
                forge_psn[path] = edges.psn.count(path) ? edges.psn.at(path) : pkt.base.psn;
            if (!forge_msn)
                forge_msn = edges.msn, forge_rsn = edges.rsn;
            pkt.base.psn = forge_psn[path]++;
            pkt.send.msn = (*forge_msn)++;
            pkt.send.rsn = (*forge_rsn)++;
            pkt.send.length = pkt.payload_len;
            pkt.send.offset = 0;
        }
        Packet p = encode(pkt);
        for (size_t i = p.size() - pkt.payload_len; i < p.size(); i++)
            p[i] = static_cast<uint8_t>(rng());
        return p;
    }

    Packet next() {
        Mutation kind = static_cast<Mutation>(below(kNumMutations));
        kinds[kind]++;
        Packet p = kind == kHello ? hello() : kind == kForge ? forge() : seed();
        switch (kind) {
        case kBitFlip:
            for (int n = 1 + static_cast<int>(below(4)); n > 0; n--)
                p[header_byte(p)] ^= static_cast<uint8_t>(1u << below(8));
            break;
        case kByteSet:
            p[header_byte(p)] = static_cast<uint8_t>(rng());
            break;
        case kExtreme:
            field_mutation(p, false);
            break;
        case kWindowEdge:
            field_mutation(p, true);
            break;
        case kOpcode: {
            static const uint8_t ops[] = {MR_OP_SEND,        MR_OP_SEND_IMM,  MR_OP_SEND_INV,
                                          MR_OP_WRITE,       MR_OP_WRITE_IMM, MR_OP_READ_REQ,
                                          MR_OP_CMP_SWAP,    MR_OP_FETCH_ADD, MR_OP_UD_SEND,
                                          MR_OP_UD_SEND_IMM, MR_OP_READ_RESP, MR_OP_ATOMIC_RESP,
                                          MR_OP_ACK,         MR_OP_NAK,       MR_OP_HELLO};
            p[kOpcodeByte] = ops[below(std::size(ops))];
            break;
        }
        case kTruncate: {
            size_t hdr = MR_BASE_HDR_LEN + mr_wire_hdr_len(p[kOpcodeByte]);
            const size_t cuts[] = {hdr - 1,        hdr, hdr + 1, p.size() - 1, MR_BASE_HDR_LEN - 1,
                                   MR_BASE_HDR_LEN};
            size_t to = one_in(2) ? cuts[below(std::size(cuts))] : below(p.size());
            p.resize(std::min(to, p.size()));
            break;
        }
        case kExtend: {
            size_t more = one_in(8) ? 1 + below(4200) : 1 + below(64);
            more = std::min(more, 4400 - std::min<size_t>(p.size(), 4400));
            for (size_t i = 0; i < more; i++)
                p.push_back(static_cast<uint8_t>(rng()));
            break;
        }
        case kSplice: {
            const Packet &other = seed();
            size_t cut = MR_BASE_HDR_LEN + below(p.size() - MR_BASE_HDR_LEN + 1);
            size_t from = below(other.size() + 1);
            p.resize(cut);
            p.insert(p.end(), other.begin() + static_cast<long>(from), other.end());
            break;
        }
        default:
            break;
        }
        // One in ten: the tag broken as well (those end in rx_drop_bad_tag).
        if (p.size() >= MR_BASE_HDR_LEN && kind != kForge && one_in(10)) {
            tag_broken++;
            uint64_t t = mr_get_be64(&p[kTagByte]);
            mr_put_be64(&p[kTagByte], one_in(4) ? rng() : t ^ (1ull << below(64)));
        }
        return p;
    }
};

// Where a fuzzed datagram to the target must land, when the codec and the
// receive path's order of checks (kernel/receive.c) say it for sure: a
// decode error's counter, rx_drop_no_qp for a datagram opcode at an RC QP,
// rx_drop_bad_tag for another tag at the target; "" when it reaches an
// engine, a UD QP (@ud: the target is one) or another QP.
std::string fuzz_predicted(const Packet &p, uint32_t qpn, uint64_t tag, bool ud) {
    std::string drop = predicted_drop(p);
    if (!drop.empty())
        return drop;
    mr_pkt pkt;
    mr_wire_decode(p.data(), static_cast<u32>(p.size()), &pkt);
    if (pkt.base.qpn != qpn)
        return "";
    if ((pkt.base.opcode == MR_OP_UD_SEND || pkt.base.opcode == MR_OP_UD_SEND_IMM) != ud)
        return "rx_drop_no_qp";
    if (ud)
        return ""; // the Q_Key is checked later, and counted by its own counter
    if (pkt.base.opcode != MR_OP_HELLO && pkt.base.tag != tag)
        return "rx_drop_bad_tag";
    return "";
}

// Posts every receive slot of b and one SEND from a, moves both QPs to ERR
// and waits for every WR to complete, flushed or not: true if all did.
bool fuzz_drain(RcPair &p, RcEnd &a, RcEnd &b, FuzzMemory &m, size_t recvs_b, std::string *why) {
    // Slots 0-2 were consumed by the last round; the fuzz phase posted 3-7
    // (@recvs_b: 5), unless b's receives are an SRQ's (0).
    ibv_sge s{reinterpret_cast<uintptr_t>(m.rdma_a.data()), 64, m.mr_rdma_a->lkey};
    int rc = post_send_wr(p[0], send_wr(77, IBV_WR_SEND, &s));
    auto sent = poll_wcs(a.scq.get(), 1, 3000); // RNR retries for ever if b has no receive
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_ERR;
    int e0 = ibv_modify_qp(p[0], &attr, IBV_QP_STATE),
        e1 = ibv_modify_qp(p[1], &attr, IBV_QP_STATE);
    auto flushed = poll_wcs(a.scq.get(), rc == 0 && sent.empty() ? 1 : 0, 10000);
    auto recv = poll_wcs(b.rcq.get(), recvs_b, 10000);
    *why = "post " + std::to_string(rc) + ", send " + wcs_str(sent) + wcs_str(flushed) +
           ", b's receives " + wcs_str(recv) + ", to ERR " + std::to_string(e0) + "/" +
           std::to_string(e1);
    return rc == 0 && sent.size() + flushed.size() == 1 && recv.size() >= recvs_b && !e0 && !e1;
}

// Sends mutations from @fz at QP @qpn of @target for @seconds, paced to
// what it takes, then checks the drops the codec predicts (@ud: the target
// is a UD QP): the datagrams sent.
long long fuzz_send(Ktap &t, Fuzzer &fz, Udp &udp, const char *target, const char *peer_dev,
                    uint32_t qpn, uint64_t tag, int seconds, bool ud) {
    Counts before = rdma_counters(target);
    Counts predicted;
    long long sent = 0, tried = 0, waits = 0;
    const long long seen0 = fuzz_seen(target, peer_dev);
    auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    // Between looks at the counters (a process each): more datagrams while
    // the target keeps up, as when its receive runs inline in our sends.
    long long batch = kFuzzBatch;
    while (elapsed() < seconds) {
        for (long long i = 0; i < batch && (i % 64 || elapsed() < seconds); i++) {
            Packet pk = fz.next();
            std::string drop = fuzz_predicted(pk, qpn, tag, ud);
            tried++;
            if (udp.send(pk)) {
                sent++;
                if (!drop.empty())
                    predicted[drop]++;
            }
        }
        // Pace to what the target takes, below what the backlog holds.
        for (int w = 0; w < 100 && seen0 >= 0; w++) {
            long long seen = fuzz_seen(target, peer_dev), behind = sent - (seen - seen0);
            if (seen < 0 || behind < kFuzzInFlight) {
                batch = behind < kFuzzBatch / 2 ? std::min(2 * batch, 8 * kFuzzBatch) : kFuzzBatch;
                break;
            }
            batch = kFuzzBatch;
            waits++;
            usleep(20000);
        }
    }
    double secs = elapsed();
    std::printf("# fuzz: sent %lld of %lld datagrams in %.1f s (%.0f/s), %lld pacing waits\n", sent,
                tried, secs, sent / secs, waits);
    std::string kinds;
    for (int k = 0; k < kNumMutations; k++)
        kinds += std::string(k ? ", " : "") + kMutationNames[k] + " " + std::to_string(fz.kinds[k]);
    std::printf("# fuzz mutations: %s; tag broken in %lld\n", kinds.c_str(), fz.tag_broken);

    // The counters settle once every datagram that must be refused was.
    Counts after = settle(target, before, predicted, 60000, 300);
    std::string got, want;
    bool exact = sent == tried && !after.empty(), atleast = exact;
    for (const char *name : kDropCounters) {
        long long d = after[name] - before[name], w = predicted[name];
        got += std::string(name) + " +" + std::to_string(d) + " ";
        want += std::string(name) + " +" + std::to_string(w) + " ";
        std::string n = name;
        if (n == "rx_drop_short" || n == "rx_drop_version" || n == "rx_drop_no_csum")
            exact = exact && d == w;
        else
            atleast = atleast && d >= w;
        // The fuzz reached each of these (a run too short would not).
        if (n == "rx_drop_short" || n == "rx_drop_version" || n == "rx_drop_malformed" ||
            n == (ud ? "rx_drop_no_qp" : "rx_drop_bad_tag"))
            atleast = atleast && w > 0;
    }
    std::printf("# target's drops: %s(predicted at least: %s)\n", got.c_str(), want.c_str());
    std::printf("# target's rx_packets +%lld, duplicate_packets +%lld, hello_rx +%lld, "
                "ud_rx_drop_qkey +%lld, ud_rx_drop_no_recv +%lld, ud_rx_too_long +%lld\n",
                after["rx_packets"] - before["rx_packets"],
                after["duplicate_packets"] - before["duplicate_packets"],
                after["hello_rx"] - before["hello_rx"],
                after["ud_rx_drop_qkey"] - before["ud_rx_drop_qkey"],
                after["ud_rx_drop_no_recv"] - before["ud_rx_drop_no_recv"],
                after["ud_rx_too_long"] - before["ud_rx_too_long"]);
    t.check(
        exact,
        "fuzz: rx_drop_short, rx_drop_version, rx_drop_no_csum grew exactly as the codec predicts",
        "sent %lld of %lld; got %s; want %s", sent, tried, got.c_str(), want.c_str());
    t.check(atleast,
            "fuzz: rx_drop_malformed, rx_drop_no_qp, rx_drop_bad_tag grew at least as predicted",
            "got %s; want %s", got.c_str(), want.c_str());

    return sent;
}

// @srq: b's QP takes its receives from an SRQ, which a second pair's
// stream shares (RecvCheck). The datagrams sent go to *@sent_out.
void run_fuzz(Ktap &t, RcEnd &a, RcEnd &b, const char *peer4, Udp &udp, int seconds, uint64_t seed,
              const std::string &netns, bool with_srq, long long *sent_out) {
    std::printf("# fuzz: seed %" PRIu64 ", %d s (replay: the same seed picks the same mutations)\n",
                seed, seconds);
    const auto run0 = std::chrono::steady_clock::now();
    Capture cap(peer4);
    if (!cap.ok())
        bail("cannot open an AF_PACKET socket (needs CAP_NET_RAW): " +
             std::string(std::strerror(errno)));
    std::unique_ptr<RecvCheck> check; // outlives the SRQ its receives are in
    Srq srq;
    RcPairOptions opts;
    if (with_srq) {
        ibv_srq_init_attr si{};
        si.attr.max_wr = 2 * kCheckSlots;
        si.attr.max_sge = 1;
        srq.reset(ibv_create_srq(b.pd.get(), &si));
        if (!srq)
            bail("cannot create an SRQ: " + std::string(std::strerror(errno)));
        opts.srq[1] = srq.get();
    }
    auto pair = std::make_unique<RcPair>(a, b, opts);
    RcPair &p = *pair;
    if (p.error())
        bail("cannot build an RC pair: " + std::string(std::strerror(p.error())));
    FuzzMemory m(a, b);
    const uint32_t qpn = p[1]->qp_num;

    // Seeds: the pair's own traffic of every kind, as it leaves this host.
    std::string why;
    uint32_t rounds = 0;
    for (; rounds < kFuzzRounds && why.empty(); rounds++)
        why = fuzz_round(p, a, b, m, rounds, rounds % 2 == 0, srq.get());
    usleep(200000); // the last ACKs
    cap.stop();
    std::vector<Packet> seeds = cap.for_qp(qpn);
    t.check(why.empty(),
            "traffic of every kind between the target pair, verified (" + std::to_string(rounds) +
                " rounds)",
            "%s", why.c_str());
    const Edges edges(seeds);           // from them all: the last packets set the edges
    if (seeds.size() > kFuzzMaxSeeds) { // thin them out evenly: each round keeps some
        std::vector<Packet> kept;
        for (size_t i = 0; i < kFuzzMaxSeeds; i++)
            kept.push_back(seeds[i * seeds.size() / kFuzzMaxSeeds]);
        seeds.swap(kept);
    }
    std::map<int, int> by_op;
    for (const Packet &s : seeds)
        by_op[s[kOpcodeByte]]++;
    std::string ops;
    for (auto [op, n] : by_op) {
        char one[32];
        std::snprintf(one, sizeof(one), "%s0x%02x:%d", ops.empty() ? "" : " ", op, n);
        ops += one;
    }
    const int want_ops[] = {MR_OP_SEND,        MR_OP_SEND_IMM, MR_OP_WRITE,     MR_OP_WRITE_IMM,
                            MR_OP_READ_REQ,    MR_OP_CMP_SWAP, MR_OP_FETCH_ADD, MR_OP_READ_RESP,
                            MR_OP_ATOMIC_RESP, MR_OP_ACK,      MR_OP_NAK};
    bool every = seeds.size() >= 100;
    for (int op : want_ops)
        every = every && by_op.count(op);
    t.check(every, "captured " + std::to_string(seeds.size()) + " seeds, of every opcode but UD",
            "opcode:count %s", ops.c_str());
    if (seeds.empty())
        bail("no packet of the target pair was captured");
    std::printf("# seeds by opcode: %s (captured in %.1f s)\n", ops.c_str(), since(run0));

    const QpTags tags = qp_tags(netns, b.name, qpn);
    Fuzzer fz{seeds, edges, tags.local, tags.peer, std::mt19937_64(seed)};
    // Receives for fuzzed SENDs to land in (with an SRQ, RecvCheck's).
    for (uint32_t s = 3; s < kFuzzRecvs && !srq; s++)
        post_slot(p[1], m.recv_b, m.mr_recv_b, s);

    // Meanwhile, with an SRQ, a stream through it on a second QP, checked.
    std::unique_ptr<RcPair> sibling;
    if (srq) {
        sibling = std::make_unique<RcPair>(a, b, opts);
        if (sibling->error())
            bail("cannot build a second RC pair on the SRQ: " +
                 std::string(std::strerror(sibling->error())));
        RcPair &sp = *sibling;
        check = std::make_unique<RecvCheck>(
            RecvCheck::Setup{b.rcq.get(), a.scq.get(), b.pd.get(), a.pd.get(),
                             [&](ibv_recv_wr *wr) {
                                 ibv_recv_wr *bad;
                                 return ibv_post_srq_recv(srq.get(), wr, &bad);
                             },
                             [&](ibv_send_wr *wr) {
                                 ibv_send_wr *bad;
                                 return ibv_post_send(sp[0], wr, &bad);
                             },
                             sp[0]->qp_num, sp[1]->qp_num, 0, kCheckSge, b.name.c_str()});
        check->start(mix(seed ^ 0x5eed));
    }
    *sent_out =
        fuzz_send(t, fz, udp, b.name.c_str(), a.name.c_str(), qpn, tags.local, seconds, false);
    if (check) {
        check->stop();
        check->report(t, "SRQ");
    }

    int s0 = p.state(0), s1 = p.state(1);
    auto rts_or_err = [](int s) { return s == IBV_QPS_RTS || s == IBV_QPS_ERR; };
    t.check(rts_or_err(s0) && rts_or_err(s1), "fuzz: the target pair's QPs are in RTS or ERR",
            "states %d/%d", s0, s1);
    std::printf("# target pair states after the fuzz: %d/%d (RTS %d, ERR %d)\n", s0, s1,
                IBV_QPS_RTS, IBV_QPS_ERR);
    t.check(fuzz_drain(p, a, b, m, srq ? 0 : 5, &why),
            "fuzz: every WR of the target pair completes (flushed in ERR): no hang", "%s",
            why.c_str());
    auto damage = m.damage();
    t.check(!damage, "fuzz: no byte outside the target's MRs and SGEs changed", "%s",
            damage ? damage->c_str() : "");
    int d0 = ibv_destroy_qp(p.qp[0].release()), d1 = ibv_destroy_qp(p.qp[1].release());
    t.check(d0 == 0 && d1 == 0, "fuzz: the target QPs are destroyed", "destroy %d/%d", d0, d1);
    pair.reset();
    if (sibling) { // what the stream had in flight, once the fuzzed QP is gone
        auto late = poll_wcs(b.rcq.get(), 2 * kCheckTail, 2000);
        long n = std::count_if(late.begin(), late.end(), [&](const ibv_wc &wc) {
            return wc.qp_num == (*sibling)[1]->qp_num;
        });
        std::printf("# with the fuzzed QP destroyed, %ld receives of the stream's QP completed\n",
                    n);
    }
    for (RcEnd *e : {&a, &b}) // what the old pair left in the CQs
        for (ibv_cq *cq : {e->scq.get(), e->rcq.get()})
            poll_wcs(cq, 1000, 0);

    // A new pair between the same devices carries data, every byte checked.
    RcPair fresh(a, b);
    if (fresh.error())
        bail("cannot build an RC pair after the fuzz: " +
             std::string(std::strerror(fresh.error())));
    FuzzMemory m2(a, b);
    std::string w2 = fuzz_round(fresh, a, b, m2, 0, false);
    std::printf("# fuzz: %.1f s in all\n", since(run0));
    t.check(w2.empty(), "fuzz: a new RC pair then moves every kind of traffic, verified", "%s",
            w2.c_str());
    t.check(exchange(fresh, a, b, 0, &w2) && exchange(fresh, b, a, 1, &w2),
            "fuzz: and SENDs both ways on it", "%s", w2.c_str());
}

// ---- --fuzz --victim ud: mutations of datagrams at a UD QP -----------------

constexpr uint32_t kFuzzQkey = 0x5a5a0001;
constexpr uint32_t kUdSeeds = 160;
constexpr int kFuzzUdCases = 1 + 2 + 2 * kCheckerCases + 2;

// A UD QP of @e with Q_Key kFuzzQkey, in RTS; null if it cannot be made.
Qp ud_qp(RcEnd &e) {
    ibv_qp_init_attr init{};
    init.send_cq = e.scq.get();
    init.recv_cq = e.rcq.get();
    init.cap.max_send_wr = 2 * kCheckWindow;
    init.cap.max_recv_wr = 2 * kCheckSlots;
    init.cap.max_send_sge = init.cap.max_recv_sge = 1;
    init.qp_type = IBV_QPT_UD;
    init.sq_sig_all = 1;
    Qp qp(ibv_create_qp(e.pd.get(), &init));
    for (ibv_qp_state to : kRcSteps)
        if (qp && modify_ud(qp.get(), to, kFuzzQkey))
            qp.reset();
    return qp;
}

// A UD QP on b takes a checked stream of datagrams from a UD QP on a
// (RecvCheck) while an AF_PACKET socket keeps them; then, while a second
// stream runs, mutations of them go to it from this host's UDP socket for
// @seconds. Datagrams carry no tag (0), only the Q_Key. The datagrams sent
// go to *@sent_out.
void run_fuzz_ud(Ktap &t, RcEnd &a, RcEnd &b, const char *peer4, Udp &udp, int seconds,
                 uint64_t seed, long long *sent_out) {
    std::printf("# fuzz a UD QP: seed %" PRIu64 ", %d s\n", seed, seconds);
    const auto run0 = std::chrono::steady_clock::now();
    Capture cap(peer4);
    if (!cap.ok())
        bail("cannot open an AF_PACKET socket (needs CAP_NET_RAW): " +
             std::string(std::strerror(errno)));
    std::unique_ptr<RecvCheck> check; // outlives the QPs its receives are on
    Qp qa = ud_qp(a), qb = ud_qp(b);
    ibv_ah_attr ah_attr{};
    ah_attr.is_global = 1;
    ah_attr.grh.dgid = b.gid;
    ah_attr.grh.sgid_index = static_cast<uint8_t>(a.gid_index);
    ah_attr.grh.hop_limit = 64;
    ah_attr.port_num = 1;
    std::unique_ptr<ibv_ah, Deleter<ibv_destroy_ah>> ah(ibv_create_ah(a.pd.get(), &ah_attr));
    if (!qa || !qb || !ah)
        bail("cannot build UD QPs and an AH: " + std::string(std::strerror(errno)));
    const uint32_t qpn = qb->qp_num, mtu = 128u << a.port.active_mtu;
    check = std::make_unique<RecvCheck>(
        RecvCheck::Setup{b.rcq.get(), a.scq.get(), b.pd.get(), a.pd.get(),
                         [&](ibv_recv_wr *wr) {
                             ibv_recv_wr *bad;
                             return ibv_post_recv(qb.get(), wr, &bad);
                         },
                         [&](ibv_send_wr *wr) {
                             ibv_send_wr *bad;
                             wr->wr.ud = {ah.get(), qpn, kFuzzQkey};
                             return ibv_post_send(qa.get(), wr, &bad);
                         },
                         qa->qp_num, 0, 40, std::min(mtu, kCheckSge - 40), b.name.c_str()});

    // Seeds: a stream of datagrams, as they leave this host.
    check->start(mix(seed ^ 0xcab));
    for (int w = 0; w < 500 && check->sent() < kUdSeeds; w++)
        usleep(10000);
    check->stop();
    cap.stop();
    check->report(t, "UD, while captured");
    std::vector<Packet> seeds = cap.for_qp(qpn);
    std::map<int, int> by_op;
    for (const Packet &s : seeds)
        by_op[s[kOpcodeByte]]++;
    t.check(seeds.size() >= 100 && by_op.count(MR_OP_UD_SEND) && by_op.count(MR_OP_UD_SEND_IMM),
            "captured " + std::to_string(seeds.size()) + " seeds, UD_SEND and UD_SEND_IMM",
            "UD_SEND %d, UD_SEND_IMM %d", by_op[MR_OP_UD_SEND], by_op[MR_OP_UD_SEND_IMM]);
    if (seeds.empty())
        bail("no datagram to the UD QP was captured");
    std::printf("# seeds by opcode: UD_SEND %d, UD_SEND_IMM %d (captured in %.1f s)\n",
                by_op[MR_OP_UD_SEND], by_op[MR_OP_UD_SEND_IMM], since(run0));

    // Tags only for the HELLOs the fuzzer makes up: datagrams have none.
    const Edges edges(seeds);
    Fuzzer fz{seeds, edges, 1, 2, std::mt19937_64(seed)};
    check->start(mix(seed ^ 0xf022));
    *sent_out = fuzz_send(t, fz, udp, b.name.c_str(), a.name.c_str(), qpn, 1, seconds, true);
    check->stop();
    check->report(t, "UD");

    ibv_qp_attr at{};
    ibv_qp_init_attr init{};
    int q = ibv_query_qp(qb.get(), &at, IBV_QP_STATE, &init);
    t.check(q == 0 && at.qp_state == IBV_QPS_RTS, "fuzz: the UD QP is still in RTS",
            "query %d, state %d", q, at.qp_state);
    int d0 = ibv_destroy_qp(qa.release()), d1 = ibv_destroy_qp(qb.release());
    t.check(d0 == 0 && d1 == 0, "fuzz: the UD QPs are destroyed", "destroy %d/%d", d0, d1);
    std::printf("# fuzz: %.1f s in all\n", since(run0));
}

// ---- --lying: a peer that holds the tag and lies about RSNs ----------------

constexpr int kLyingCases = 9;

// Two SENDs that name one receive, at the responder QP of a pair of its
// own, from its peer's address with the real tag: message A (MSN 1, RSN 1,
// 2 KiB, two packets of 0xcc) and message B (MSN 2, also RSN 1, two packets
// of 0x5a), interleaved so that B's second packet arrives after A took and
// completed receive 1. B must be dropped whole (rx_drop_malformed), receive
// 1 hold A's bytes alone, receive 2 stay untouched and uncompleted, and a
// second pair carry data after.
void run_lying(Ktap &t, RcEnd &a, RcEnd &b, Udp &udp4, const std::string &netns) {
    RcPair p(a, b), other(a, b);
    if (p.error() || other.error())
        bail("cannot build RC pairs: " + std::string(std::strerror(p.error())));
    const uint32_t qpn = p[1]->qp_num, psn0 = RcPair::kPsn[0];
    std::string why;
    t.check(exchange(p, a, b, 0, &why), "the attacked pair carries a SEND first", "%s",
            why.c_str());
    // The responder has completed MSN 0 and RSN 0: next are 1 and 1.
    const uint64_t tag = qp_tags(netns, b.name, qpn).local;

    constexpr uint32_t kLen = 2048, kBuf = 4096;
    constexpr uint8_t kGuard = 0x11;
    std::vector<uint8_t> buf(2 * kBuf, kGuard);
    Mr mr(ibv_reg_mr(b.pd.get(), buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE));
    if (!mr)
        bail("reg_mr failed");
    int rc = 0;
    for (uint32_t i = 0; i < 2; i++) {
        ibv_sge sge{reinterpret_cast<uintptr_t>(&buf[i * kBuf]), kBuf, mr->lkey};
        rc |= post_recv_wr(p[1], 101 + i, &sge);
    }
    auto packet = [&](uint32_t msn, uint32_t off, uint32_t psn, uint8_t fill) {
        mr_pkt pkt = send_pkt(qpn, psn, msn, kLen, 1024, tag);
        pkt.send.rsn = 1;
        pkt.send.offset = off;
        Packet d = encode(pkt);
        std::fill(d.end() - 1024, d.end(), fill);
        return d;
    };
    Counts before = rdma_counters(b.name.c_str());
    // A's first, B's first (RSN 1 again, while A is open), A's last (A
    // completes, taking receive 1), B's last (receive 1 is gone).
    bool sent = rc == 0 && udp4.send(packet(1, 0, psn0 + 8, 0xcc)) &&
                udp4.send(packet(2, 0, psn0 + 9, 0x5a));
    usleep(50000);
    sent = sent && udp4.send(packet(1, 1024, psn0 + 10, 0xcc));
    auto first = poll_wcs(b.rcq.get(), 1);
    sent = sent && udp4.send(packet(2, 1024, psn0 + 11, 0x5a));
    Counts want;
    want["rx_drop_malformed"] = 2;
    Counts after = settle(b.name.c_str(), before, want, 3000);
    auto more = poll_wcs(b.rcq.get(), 1, 300);
    t.check(sent && first.size() == 1 && first[0].status == IBV_WC_SUCCESS &&
                first[0].wr_id == 101 && first[0].byte_len == kLen,
            "message A (MSN 1, RSN 1) completes receive 1", "sent %d, recv %s", sent,
            wcs_str(first).c_str());
    t.check(after["rx_drop_malformed"] - before["rx_drop_malformed"] == 2,
            "message B (MSN 2, RSN 1 again) is dropped and counted", "rx_drop_malformed +%lld",
            after["rx_drop_malformed"] - before["rx_drop_malformed"]);
    size_t bad = 0;
    for (size_t i = 0; i < buf.size(); i++)
        bad += buf[i] != (i < kLen ? 0xcc : kGuard);
    t.check(more.empty() && bad == 0,
            "no receive completes for B, and no byte of B lands in any receive",
            "further completions %s, %zu bytes differ", wcs_str(more).c_str(), bad);
    int state = p.state(1);
    t.check(state == IBV_QPS_RTS || state == IBV_QPS_ERR, "the attacked QP is in RTS or ERR",
            "state %d", state);
    t.check(exchange(other, a, b, 0, &why), "another pair between the devices carries a SEND", "%s",
            why.c_str());
}

// READs beyond the negotiated depth, at the responder QP of a fresh pair,
// from its peer's address with the real tag: kReads READs of 256 KiB in a
// burst, where max_dest_rd_atomic is 4. The responder holds at most 4 (open,
// or with a response not wholly sent): those beyond are dropped and counted
// (rx_drop_rd_excess), never answered; the QP and another pair go on.
void run_rd_excess(Ktap &t, RcEnd &a, RcEnd &b, Udp &udp4, const std::string &netns) {
    constexpr uint32_t kReads = 32, kRead = 256 * 1024, kDepth = 4;
    RcPair p(a, b), other(a, b);
    if (p.error() || other.error())
        bail("cannot build RC pairs: " + std::string(std::strerror(p.error())));
    const uint32_t qpn = p[1]->qp_num, psn0 = RcPair::kPsn[0];
    std::string why;
    bool ok = exchange(p, a, b, 0, &why);
    const uint64_t tag = qp_tags(netns, b.name, qpn).local;
    std::vector<uint8_t> buf(kRead, 0x42);
    Mr mr(ibv_reg_mr(b.pd.get(), buf.data(), buf.size(),
                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ));
    if (!mr)
        bail("reg_mr failed");
    Counts before = rdma_counters(b.name.c_str());
    for (uint32_t i = 0; ok && i < kReads; i++) {
        mr_pkt pkt = base(MR_OP_READ_REQ, qpn, psn0 + 8 + i, tag);
        pkt.read_req.msn = 1 + i;
        pkt.read_req.rkey = mr->rkey;
        pkt.read_req.va = reinterpret_cast<uintptr_t>(buf.data());
        pkt.read_req.length = kRead;
        ok = udp4.send(encode(pkt));
    }
    Counts after = settle(b.name.c_str(), before, {{"rx_drop_rd_excess", kReads / 2}}, 3000);
    long long dropped = after["rx_drop_rd_excess"] - before["rx_drop_rd_excess"];
    long long sent = after["tx_bytes"] - before["tx_bytes"];
    t.check(ok && dropped >= kReads / 2 && dropped <= kReads - kDepth,
            "READs beyond max_dest_rd_atomic are dropped and counted",
            "sent %d, exchange %s, rx_drop_rd_excess +%lld of %u (want %u..%u)", ok, why.c_str(),
            dropped, kReads, kReads / 2, kReads - kDepth);
    // Each READ taken costs at most its response (and headers, and ACKs).
    const long long taken = kReads - dropped, cap = taken * (kRead + kRead / 8) + 64 * 1024;
    t.check(sent <= cap, "the responder sends no more than the READs it took",
            "tx_bytes +%lld for %lld READs taken (at most %lld)", sent, taken, cap);
    int state = p.state(1);
    t.check((state == IBV_QPS_RTS || state == IBV_QPS_ERR) && exchange(other, a, b, 0, &why),
            "the attacked QP is in RTS or ERR, another pair carries a SEND", "state %d, %s", state,
            why.c_str());
}

// ---- --tamper: encrypted packets with a byte changed ------------------------

constexpr int kTamperCases = 12;
// An encrypting device's packets (protocol.rst, Encryption): the base header
// in clear, the opcode header and payload sealed, an 8-byte nonce counter and
// a 16-byte AES-GCM tag at the end.
constexpr size_t kNonceLen = MR_AEAD_COUNTER_LEN, kGcmTagLen = MR_AEAD_TAG_LEN;
// The drops an encrypting receiver adds to the others.
const char *const kCryptoDrops[] = {"rx_drop_auth", "rx_drop_not_encrypted", "rx_drop_encrypted",
                                    "rx_drop_no_key", "rx_drop_replay"};

// Where in a sealed packet a tamper changes a byte.
enum class Part { Ciphertext, Header, Nonce, Tag };

// @p with one byte changed in @part (the @i-th copy: positions and bit
// patterns vary, never a no-op). Header: the PSN's low byte, authenticated
// but not checked before the tag is (a field like the version or the flags
// would be refused as malformed first).
Packet tampered(Packet p, Part part, uint32_t i, std::mt19937 &rng) {
    const size_t sealed = p.size() - MR_BASE_HDR_LEN - kNonceLen - kGcmTagLen;
    size_t at = 0;
    switch (part) {
    case Part::Ciphertext:
        at = MR_BASE_HDR_LEN + rng() % sealed;
        break;
    case Part::Header:
        at = kPsnByte + 3;
        break;
    case Part::Nonce:
        at = p.size() - kGcmTagLen - kNonceLen + rng() % kNonceLen;
        break;
    case Part::Tag:
        at = p.size() - kGcmTagLen + rng() % kGcmTagLen;
        break;
    }
    p[at] ^= static_cast<uint8_t>(1u << (i % 8));
    return p;
}

// Sends @count datagrams from @make at the target and checks that its drop
// counters grew by exactly @count in @want and by nothing elsewhere.
void tamper_kind(Ktap &t, const char *target, Udp &udp, int count, const std::string &desc,
                 const std::function<Packet(uint32_t)> &make, const std::string &want) {
    Counts before = rdma_counters(target);
    int sent = 0;
    for (int i = 0; i < count; i++) {
        sent += udp.send(make(static_cast<uint32_t>(i)));
        if (i % 32 == 31)
            usleep(2000); // stay below the veth backlog
    }
    Counts after = settle(target, before, {{want, count}}, 30000, 300);
    std::string got;
    bool ok = sent == count && after.count(want);
    std::vector<std::string> names(std::begin(kDropCounters), std::end(kDropCounters));
    names.insert(names.end(), std::begin(kCryptoDrops), std::end(kCryptoDrops));
    for (const std::string &name : names) {
        long long d = after[name] - before[name];
        ok = ok && d == (name == want ? count : 0);
        if (d)
            got += " " + name + " +" + std::to_string(d);
    }
    std::printf("# %s: sent %d, %s%s\n", desc.c_str(), sent, target,
                got.empty() ? " no drop" : got.c_str());
    t.check(ok,
            desc + " (" + std::to_string(count) + "): " + want + " +" + std::to_string(count) +
                ", no other drop",
            "sent %d of %d; drops%s", sent, count, got.empty() ? " none" : got.c_str());
}

void run_tamper(Ktap &t, RcEnd &a, RcEnd &b, const char *peer4, Udp &udp, int count) {
    const auto run0 = std::chrono::steady_clock::now();
    Capture cap(peer4);
    if (!cap.ok())
        bail("cannot open an AF_PACKET socket (needs CAP_NET_RAW): " +
             std::string(std::strerror(errno)));
    RcPair p(a, b);
    if (p.error())
        bail("cannot build an RC pair: " + std::string(std::strerror(p.error())));
    FuzzMemory m(a, b);
    const uint32_t qpn = p[1]->qp_num;
    const char *target = b.name.c_str();
    Counts b0 = rdma_counters(target), a0 = rdma_counters(a.name.c_str());

    // Valid sealed packets for the target QP, as they leave this host.
    std::string why;
    uint32_t rounds = 0;
    for (; rounds < 2 && why.empty(); rounds++)
        why = fuzz_round(p, a, b, m, rounds, false);
    usleep(200000); // the last ACKs
    cap.stop();
    t.check(why.empty(),
            "traffic of every kind between the pair, verified (" + std::to_string(rounds) +
                " rounds)",
            "%s", why.c_str());
    std::vector<Packet> all = cap.for_qp(qpn), sealed;
    size_t clear = 0;
    for (const Packet &s : all) {
        if (!mr_aead_is_encrypted(s.data()))
            clear++;
        // At least one sealed byte besides the nonce and the tag.
        else if (s.size() > MR_BASE_HDR_LEN + kNonceLen + kGcmTagLen)
            sealed.push_back(s);
    }
    t.check(!all.empty() && clear == 0,
            "every one of the " + std::to_string(all.size()) +
                " packets captured for the target QP is encrypted",
            "%zu in clear", clear);
    if (sealed.empty())
        bail("no encrypted packet of the target pair was captured");
    std::printf("# captured %zu encrypted packets for QP %u in %.1f s\n", sealed.size(), qpn,
                since(run0));

    std::mt19937 rng(20261202);
    auto pick = [&](uint32_t i) { return sealed[i * 7919u % sealed.size()]; };
    const std::pair<Part, const char *> parts[] = {{Part::Ciphertext, "a ciphertext byte"},
                                                   {Part::Header, "a base header byte (PSN)"},
                                                   {Part::Nonce, "a nonce byte"},
                                                   {Part::Tag, "a GCM tag byte"}};
    for (auto [part, name] : parts)
        tamper_kind(
            t, target, udp, count, std::string("captured packets with ") + name + " flipped",
            [&, part = part](uint32_t i) { return tampered(pick(i), part, i, rng); },
            "rx_drop_auth");
    // Unchanged: each opens, and the replay window refuses its counter.
    tamper_kind(
        t, target, udp, count, "captured packets sent again unchanged",
        [&](uint32_t i) { return pick(i); }, "rx_drop_replay");
    // In clear, well-formed and aimed at the QP: refused before anything else.
    tamper_kind(
        t, target, udp, count, "cleartext SENDs to the QP",
        [&](uint32_t i) { return encode(send_pkt(qpn, 1000 + i, 1, 16, 16, 1)); },
        "rx_drop_not_encrypted");

    int s0 = p.state(0), s1 = p.state(1);
    t.check(s0 == IBV_QPS_RTS && s1 == IBV_QPS_RTS, "the pair's QPs are still in RTS",
            "states %d/%d (RTS %d)", s0, s1, IBV_QPS_RTS);
    why = fuzz_round(p, a, b, m, rounds, true);
    t.check(why.empty(), "the same pair then moves every kind of traffic, verified", "%s",
            why.c_str());
    t.check(exchange(p, a, b, 0, &why) && exchange(p, b, a, 1, &why), "and SENDs both ways on it",
            "%s", why.c_str());
    Counts b1 = rdma_counters(target), a1 = rdma_counters(a.name.c_str());
    long long enc = a1["tx_encrypted"] - a0["tx_encrypted"],
              dec = b1["rx_decrypted"] - b0["rx_decrypted"];
    std::printf("# %s tx_encrypted +%lld, %s rx_decrypted +%lld; %.1f s in all\n", a.name.c_str(),
                enc, target, dec, since(run0));
    const auto captured = static_cast<long long>(all.size());
    t.check(enc >= captured && dec >= captured,
            "tx_encrypted and rx_decrypted counted at least the captured packets",
            "tx_encrypted +%lld for %zu captured, rx_decrypted +%lld", enc, all.size(), dec);
}

// ---- --lying-acks: a peer that holds the tag reports what did not happen --

constexpr int kLieCases = 6;

void run_lie(Ktap &t, RcEnd &a, RcEnd &b, const char *peer4, Udp &udp, int count) {
    Capture cap(peer4);
    if (!cap.ok())
        bail("cannot open an AF_PACKET socket (needs CAP_NET_RAW): " +
             std::string(std::strerror(errno)));
    RcPairOptions opts;
    opts.min_rnr_timer = 31; // 491 ms: the forgeries go within one wait
    RcPair p(a, b, opts);
    if (p.error())
        bail("cannot build an RC pair: " + std::string(std::strerror(p.error())));
    const uint32_t qpn = p[1]->qp_num; // the target: the requester on PEER
    const char *target = b.name.c_str();
    std::string why;
    t.check(exchange(p, b, a, 1, &why), "lie: the pair carries a SEND from the target first", "%s",
            why.c_str());

    // The SEND the lies are about: no receive for it yet.
    std::vector<uint8_t> out(200), in(256, 0);
    for (size_t i = 0; i < out.size(); i++)
        out[i] = static_cast<uint8_t>(i * 7 + 1);
    Mr out_mr(ibv_reg_mr(b.pd.get(), out.data(), out.size(), IBV_ACCESS_LOCAL_WRITE));
    Mr in_mr(ibv_reg_mr(a.pd.get(), in.data(), in.size(), IBV_ACCESS_LOCAL_WRITE));
    if (!out_mr || !in_mr)
        bail("reg_mr failed");
    ibv_sge ss{reinterpret_cast<uintptr_t>(out.data()), 200, out_mr->lkey};
    ibv_sge rs{reinterpret_cast<uintptr_t>(in.data()), 256, in_mr->lkey};
    Counts before = rdma_counters(target);
    if (post_send_wr(p[1], send_wr(77, IBV_WR_SEND, &ss)))
        bail("post_send failed");
    usleep(150000); // refused, acknowledged, waiting
    cap.stop();
    std::optional<mr_pkt> ack, rnr;
    for (const Packet &c : cap.for_qp(qpn)) {
        mr_pkt k;
        if (mr_wire_decode(c.data(), static_cast<u32>(c.size()), &k))
            continue;
        if (k.base.opcode == MR_OP_ACK)
            ack = k;
        else if (k.base.opcode == MR_OP_NAK && k.nak.code == MR_NAK_RNR)
            rnr = k;
    }
    t.check(ack && rnr, "lie: the SEND was refused (RNR) and acknowledged", "ACK %s, RNR NAK %s",
            ack ? "seen" : "missing", rnr ? "seen" : "missing");
    if (!ack || !rnr)
        bail("no ACK or RNR NAK of the target's SEND was captured");
    const uint32_t msn = rnr->nak.msn;
    std::printf("# SEND MSN %u refused on path %u epoch %u PSN %u; last ACK path %u cum %u\n", msn,
                rnr->base.path, rnr->base.epoch, rnr->base.psn, ack->base.path, ack->ack.cum_psn);

    int sent = 0;
    for (int i = 0; i < count; i++) {
        mr_pkt k = *ack; // the SEND reported done, past it, never sent
        k.ack.msn_done = msn + 1 + (i % 2 ? 1000u + static_cast<uint32_t>(i) : 0u);
        sent += udp.send(encode(k));
        mr_pkt n = *rnr; // a fatal NAK of it on a PSN or epoch it never had
        n.nak.code = i % 2 ? MR_NAK_REMOTE_ACCESS : MR_NAK_INVALID_REQUEST;
        n.nak.rnr_delay = 0;
        if (i % 3 == 2)
            n.base.epoch = static_cast<u16>(n.base.epoch + 1);
        else
            n.base.psn += 300 + static_cast<uint32_t>(i);
        sent += udp.send(encode(n));
        if (i % 32 == 31)
            usleep(2000);
    }
    Counts after = settle(target, before,
                          {{"rx_bogus_msn_done", count}, {"rx_drop_bogus_nak", count}}, 5000, 50);
    long long bogus = after["rx_bogus_msn_done"] - before["rx_bogus_msn_done"],
              naks = after["rx_drop_bogus_nak"] - before["rx_drop_bogus_nak"];
    auto early = poll_wcs(b.scq.get(), 1, 100);
    std::printf("# sent %d: rx_bogus_msn_done +%lld, rx_drop_bogus_nak +%lld, completions %s\n",
                sent, bogus, naks, wcs_str(early).c_str());
    t.check(early.empty() && p.state(1) == IBV_QPS_RTS,
            "lie: the forged ACKs completed nothing, the NAKs failed nothing: QP in RTS",
            "completions %s, state %d", wcs_str(early).c_str(), p.state(1));
    t.check(sent == 2 * count && bogus >= count && naks == count,
            "lie: rx_bogus_msn_done and rx_drop_bogus_nak counted the forgeries",
            "sent %d of %d; rx_bogus_msn_done +%lld, rx_drop_bogus_nak +%lld (want %d)", sent,
            2 * count, bogus, naks, count);

    // The receive comes: the SEND goes again after its wait, and lands whole.
    int rc = post_recv_wr(p[0], 5, &rs);
    auto sw = poll_wcs(b.scq.get(), 1, 5000);
    auto rw = poll_wcs(a.rcq.get(), 1, 5000);
    bool same = std::equal(out.begin(), out.end(), in.begin());
    t.check(rc == 0 && sw.size() == 1 && sw[0].wr_id == 77 && sw[0].status == IBV_WC_SUCCESS &&
                rw.size() == 1 && rw[0].status == IBV_WC_SUCCESS && rw[0].byte_len == 200 && same,
            "lie: once the receive is posted the SEND completes, its data intact",
            "rc %d send %s recv %s data %s", rc, wcs_str(sw).c_str(), wcs_str(rw).c_str(),
            same ? "same" : "differs");
    t.check(exchange(p, a, b, 0, &why) && exchange(p, b, a, 1, &why),
            "lie: and the pair carries SENDs both ways after", "%s", why.c_str());
}

} // namespace

int main(int argc, char **argv) {
    bool foreign = false, lying = false;
    int fuzz_seconds = 0, tamper_count = 0, lie_count = 0;
    std::string victim = "rc";                // the fuzz's target: an RC QP, one on an SRQ, a UD QP
    std::map<std::string, std::string> netns; // device -> network namespace
    char *const prog = argv[0];
    while (argc > 1 && std::strncmp(argv[1], "--", 2) == 0) {
        std::string opt = argv[1];
        const char *eq = argc > 2 ? std::strchr(argv[2], '=') : nullptr;
        if (opt == "--foreign") {
            foreign = true;
        } else if (opt == "--lying") {
            lying = true;
        } else if (opt == "--netns" && eq && eq != argv[2] && eq[1]) {
            netns[std::string(argv[2], static_cast<size_t>(eq - argv[2]))] = eq + 1;
            argv++;
            argc--;
        } else if (opt == "--fuzz" && argc > 2 && std::atoi(argv[2]) > 0) {
            fuzz_seconds = std::atoi(argv[2]);
            argv++;
            argc--;
        } else if (opt == "--victim" && argc > 2 &&
                   (!std::strcmp(argv[2], "rc") || !std::strcmp(argv[2], "srq") ||
                    !std::strcmp(argv[2], "ud"))) {
            victim = argv[2];
            argv++;
            argc--;
        } else if (opt == "--tamper" && argc > 2 && std::atoi(argv[2]) > 0) {
            tamper_count = std::atoi(argv[2]);
            argv++;
            argc--;
        } else if (opt == "--lying-acks" && argc > 2 && std::atoi(argv[2]) > 0) {
            lie_count = std::atoi(argv[2]);
            argv++;
            argc--;
        } else {
            std::fprintf(stderr, "mr_craft: bad option %s%s\n", argv[1],
                         opt == "--netns"        ? " (want --netns DEVICE=NETNS)"
                         : opt == "--fuzz"       ? " (want --fuzz SECONDS, above 0)"
                         : opt == "--victim"     ? " (want --victim rc|srq|ud)"
                         : opt == "--tamper"     ? " (want --tamper COUNT, above 0)"
                         : opt == "--lying-acks" ? " (want --lying-acks COUNT, above 0)"
                                                 : "");
            return 2;
        }
        argv++;
        argc--;
    }
    argv[0] = prog; // for the usage line
    if (fuzz_seconds) {
        start(argc, argv, 4,
              "--fuzz SECONDS [--victim rc|srq|ud] [--netns PEER_DEVICE=NETNS] DEVICE "
              "PEER_DEVICE PEER_IPV4 SEED");
        char *end = nullptr;
        uint64_t seed = std::strtoull(argv[4], &end, 0);
        if (!*argv[4] || *end) {
            std::fprintf(stderr, "mr_craft: bad seed %s (want a number)\n", argv[4]);
            return 2;
        }
        Ktap t(victim == "ud"    ? kFuzzUdCases
               : victim == "srq" ? kFuzzCases + kCheckerCases
                                 : kFuzzCases);
        RcEnd a, b;
        open_rc_ends(a, argv[1], b, argv[2]);
        Udp udp4(AF_INET, argv[3]);
        if (!udp4.ok())
            bail("cannot open a UDP socket to " + std::string(argv[3]));
        long long sent = 0;
        if (victim == "ud")
            run_fuzz_ud(t, a, b, argv[3], udp4, fuzz_seconds, seed, &sent);
        else
            run_fuzz(t, a, b, argv[3], udp4, fuzz_seconds, seed, netns[argv[2]], victim == "srq",
                     &sent);
        std::printf("# fuzz-sent %lld\n", sent);
        return t.passed() ? 0 : 1;
    }
    if (lying) {
        start(argc, argv, 3, "--lying [--netns PEER_DEVICE=NETNS] DEVICE PEER_DEVICE PEER_IPV4");
        Ktap t(kLyingCases);
        RcEnd a, b;
        open_rc_ends(a, argv[1], b, argv[2]);
        Udp udp4(AF_INET, argv[3]);
        if (!udp4.ok())
            bail("cannot open a UDP socket to " + std::string(argv[3]));
        run_lying(t, a, b, udp4, netns[argv[2]]);
        run_rd_excess(t, a, b, udp4, netns[argv[2]]);
        return t.passed() ? 0 : 1;
    }
    if (tamper_count) {
        start(argc, argv, 3, "--tamper COUNT DEVICE PEER_DEVICE PEER_IPV4");
        Ktap t(kTamperCases);
        RcEnd a, b;
        open_rc_ends(a, argv[1], b, argv[2]);
        Udp udp4(AF_INET, argv[3]);
        if (!udp4.ok())
            bail("cannot open a UDP socket to " + std::string(argv[3]));
        run_tamper(t, a, b, argv[3], udp4, tamper_count);
        return t.passed() ? 0 : 1;
    }
    if (lie_count) {
        start(argc, argv, 3, "--lying-acks COUNT DEVICE PEER_DEVICE PEER_IPV4");
        Ktap t(kLieCases);
        RcEnd a, b;
        open_rc_ends(a, argv[1], b, argv[2]);
        Udp udp4(AF_INET, argv[3]);
        if (!udp4.ok())
            bail("cannot open a UDP socket to " + std::string(argv[3]));
        run_lie(t, a, b, argv[3], udp4, lie_count);
        return t.passed() ? 0 : 1;
    }
    start(argc, argv, 5,
          foreign ? "--foreign DEVICE PEER_DEVICE PEER_IPV4 DEVICE_IPV4 COUNT"
                  : "[--netns PEER_DEVICE=NETNS] DEVICE PEER_DEVICE PEER_IPV4 PEER_IPV6 COUNT");
    Ktap t(foreign ? kForeignCases : kCases);
    RcEnd a, b;
    open_rc_ends(a, argv[1], b, argv[2]);
    if (foreign) {
        Udp to_b(AF_INET, argv[3]), to_a(AF_INET, argv[4]);
        if (!to_a.ok() || !to_b.ok())
            bail("cannot open UDP sockets to " + std::string(argv[3]) + " / " + argv[4]);
        ForgedUdp4 forged_a(argv[3], argv[4]), forged_b(argv[4], argv[3]);
        if (!forged_a.ok() || !forged_b.ok())
            bail("cannot open a raw IPv4 socket (needs CAP_NET_RAW): " +
                 std::string(std::strerror(errno)));
        run_foreign(t, a, b, to_a, to_b, forged_a, forged_b, std::atoi(argv[5]));
    } else {
        Udp udp4(AF_INET, argv[3]), udp6(AF_INET6, argv[4]);
        if (!udp4.ok() || !udp6.ok())
            bail("cannot open UDP sockets to " + std::string(argv[3]) + " / " + argv[4]);
        run(t, a, b, argv[3], argv[4], udp4, udp6, std::atoi(argv[5]), netns[argv[2]]);
        run_bounds(t, a, b, udp4, netns[argv[2]], std::atoi(argv[5]));
    }
    return t.passed() ? 0 : 1;
}
