// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// mr_pcap: the oracle of the dissector test (metaroce.lua). It writes
// MetaRoCE frames into a pcap file, or reads the MetaRoCE datagrams of any
// capture, and prints for each frame what the dissector must show: every
// field with its value, or the reason the kernel's codec
// (kernel/proto/wire.c) refuses the packet.
//
//   mr_pcap write FILE [PORT]   frames carrying every opcode with known
//                               values, malformed ones, and one on another
//                               port; prints the values the frames were
//                               built from
//   mr_pcap read FILE [PORT]    decodes each UDP datagram from or to PORT
//                               (4792) with mr_wire_decode(); prints what
//                               the codec finds
//   mr_pcap fuzz FILE N SEED    N frames: the `write` packets mutated at
//                               random (reproducible from SEED); prints
//                               what the codec finds in each
//
// Output, one frame after the other (check-dissector.py reads it):
//   frame N                     the Nth frame of the file, from 1
//   kind metaroce|other|skip    a MetaRoCE datagram; not one (another port,
//                               not UDP); one that cannot be checked (an IP
//                               fragment, a frame cut short by the snaplen)
//   error NAME                  the codec refuses it: trunc, version, opcode,
//                               flags, reserved, field or length (enum mr_err)
//   metaroce.FIELD VALUE...     a field the dissector shows, each of its
//                               occurrences (decimal, or hex bytes as
//                               aa:bb); a field without a value is a subtree
//
// Exit status 0, 1 on bad input (with a message), 2 on a usage error.
extern "C" {
#include "wire.h"
}

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Bytes = std::vector<uint8_t>;

constexpr uint16_t kDefaultPort = 4792;
constexpr uint16_t kOtherPort = 9999;     // no dissector claims it
constexpr uint16_t kPathPortBase = 49152; // the dynamic range: path ports
constexpr uint32_t kLinkEthernet = 1;     // pcap link types
constexpr uint32_t kLinkRaw = 101;
constexpr uint32_t kLinkRawOld = 12;
constexpr uint32_t kLinkSll = 113;
constexpr uint32_t kLinkSll2 = 276;
constexpr uint32_t kLinkNull = 0;
constexpr uint16_t kEtherIpv4 = 0x0800, kEtherIpv6 = 0x86dd, kEtherVlan = 0x8100,
                   kEtherQinQ = 0x88a8;
constexpr uint8_t kIpProtoUdp = 17;

struct BadInput : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// --- the expected dissection of one frame

// The lines of one frame, in the order the dissector shows the fields.
class Expect {
public:
    explicit Expect(unsigned frame) { out_ << "frame " << frame << "\n"; }
    void kind(const char *k) { out_ << "kind " << k << "\n"; }
    void error(const char *e) { out_ << "error " << e << "\n"; }
    void num(const std::string &field, uint64_t v) {
        out_ << "metaroce." << field << " " << v << "\n";
    }
    void nums(const std::string &field, const std::vector<uint64_t> &vs) {
        if (vs.empty())
            return;
        out_ << "metaroce." << field;
        for (uint64_t v : vs)
            out_ << " " << v;
        out_ << "\n";
    }
    void subtree(const std::string &name) { out_ << "metaroce." << name << "\n"; }
    void bytes(const std::string &field, const uint8_t *p, size_t n) {
        out_ << "metaroce." << field << " ";
        char hex[4];
        for (size_t i = 0; i < n; i++) {
            std::snprintf(hex, sizeof(hex), i ? ":%02x" : "%02x", p[i]);
            out_ << hex;
        }
        out_ << "\n";
    }
    std::string str() const { return out_.str(); }

private:
    std::ostringstream out_;
};

const char *err_name(int err) {
    switch (-err) {
    case MR_ETRUNC:
        return "trunc";
    case MR_EVERSION:
        return "version";
    case MR_EOPCODE:
        return "opcode";
    case MR_EFLAGS:
        return "flags";
    case MR_ERESERVED:
        return "reserved";
    case MR_EFIELD:
        return "field";
    case MR_ELENGTH:
        return "length";
    }
    return "unknown";
}

// The opcode header's fields as protocol.rst names them, field by field in
// wire order: written out again here, not taken from wire.c's tables, so
// that the test compares two readings of the document.
void expect_op(Expect &e, const mr_pkt &p) {
    switch (p.base.opcode) {
    case MR_OP_SEND:
    case MR_OP_SEND_IMM:
    case MR_OP_SEND_INV:
        e.subtree("send");
        e.num("send.msn", p.send.msn);
        e.num("send.rsn", p.send.rsn);
        e.num("send.length", p.send.length);
        e.num("send.offset", p.send.offset);
        if (p.base.opcode == MR_OP_SEND_IMM)
            e.num("send.imm", p.send.imm);
        if (p.base.opcode == MR_OP_SEND_INV)
            e.num("send.inv_rkey", p.send.inv_rkey);
        break;
    case MR_OP_WRITE:
    case MR_OP_WRITE_IMM:
        e.subtree("write");
        e.num("write.msn", p.write.msn);
        e.num("write.rkey", p.write.rkey);
        e.num("write.va", p.write.va);
        e.num("write.length", p.write.length);
        e.num("write.offset", p.write.offset);
        if (p.base.opcode == MR_OP_WRITE_IMM) {
            e.num("write.rsn", p.write.rsn);
            e.num("write.imm", p.write.imm);
        }
        break;
    case MR_OP_READ_REQ:
        e.subtree("read_req");
        e.num("read_req.msn", p.read_req.msn);
        e.num("read_req.rkey", p.read_req.rkey);
        e.num("read_req.va", p.read_req.va);
        e.num("read_req.length", p.read_req.length);
        break;
    case MR_OP_CMP_SWAP:
    case MR_OP_FETCH_ADD:
        e.subtree("atomic");
        e.num("atomic.msn", p.atomic.msn);
        e.num("atomic.rkey", p.atomic.rkey);
        e.num("atomic.va", p.atomic.va);
        e.num("atomic.swap_add", p.atomic.swap_add);
        if (p.base.opcode == MR_OP_CMP_SWAP)
            e.num("atomic.compare", p.atomic.compare);
        break;
    case MR_OP_UD_SEND:
    case MR_OP_UD_SEND_IMM:
        e.subtree("ud");
        e.num("ud.src_qpn", p.ud.src_qpn);
        e.num("ud.qkey", p.ud.qkey);
        if (p.base.opcode == MR_OP_UD_SEND_IMM)
            e.num("ud.imm", p.ud.imm);
        break;
    case MR_OP_READ_RESP:
        e.subtree("read_resp");
        e.num("read_resp.msn", p.read_resp.msn);
        e.num("read_resp.length", p.read_resp.length);
        e.num("read_resp.offset", p.read_resp.offset);
        break;
    case MR_OP_ATOMIC_RESP:
        e.subtree("atomic_resp");
        e.num("atomic_resp.msn", p.atomic_resp.msn);
        e.num("atomic_resp.orig", p.atomic_resp.orig);
        break;
    case MR_OP_ACK: {
        e.subtree("ack");
        e.num("ack.cum_psn", p.ack.cum_psn);
        uint8_t map[MR_WIRE_SACK_WORDS * 8];
        for (unsigned w = 0; w < MR_WIRE_SACK_WORDS; w++)
            mr_put_be64(map + 8 * w, p.ack.sack[w]);
        e.bytes("ack.sack_map", map, sizeof(map));
        // The PSNs the map reports, and the holes below the last of them.
        std::vector<uint64_t> words, sacked, missing;
        unsigned last = 0;
        for (unsigned bit = 0; bit < MR_WIRE_SACK_BITS; bit++)
            if (p.ack.sack[bit / 64] >> (bit % 64) & 1)
                last = bit;
        for (unsigned w = 0; w < MR_WIRE_SACK_WORDS; w++)
            words.push_back(p.ack.sack[w]);
        for (unsigned bit = 0; bit < MR_WIRE_SACK_BITS; bit++) {
            uint32_t psn = p.ack.cum_psn + bit;
            if (p.ack.sack[bit / 64] >> (bit % 64) & 1)
                sacked.push_back(psn);
            else if (bit < last)
                missing.push_back(psn);
        }
        e.nums("ack.sack_word", words);
        e.num("ack.sack_count", sacked.size());
        e.nums("ack.sack", sacked);
        e.nums("ack.missing", missing);
        e.num("ack.msn_done", p.ack.msn_done);
        e.num("ack.ecn_count", p.ack.ecn_count);
        e.num("ack.rate_hint", p.ack.rate_hint);
        break;
    }
    case MR_OP_NAK:
        e.subtree("nak");
        e.num("nak.msn", p.nak.msn);
        e.num("nak.code", p.nak.code);
        e.num("nak.reserved", 0);
        e.num("nak.rnr_delay", p.nak.rnr_delay);
        break;
    case MR_OP_HELLO:
        e.subtree("hello");
        e.num("hello.src_tag", p.hello.src_tag);
        e.num("hello.flags", p.hello.flags);
        e.num("hello.flags.known", !!(p.hello.flags & MR_HELLO_KNOWN));
        e.num("hello.flags.reply", !!(p.hello.flags & MR_HELLO_REPLY));
        e.num("hello.rate_hint", p.hello.rate_hint);
        break;
    }
}

// A packet that decodes: the base header, the opcode header, the lengths and
// the payload, from @p (known values, or what the codec decoded).
std::string expect_valid(unsigned frame, const mr_pkt &p, const uint8_t *payload) {
    Expect e(frame);
    e.kind("metaroce");
    e.num("version", MR_WIRE_VERSION);
    e.num("opcode", p.base.opcode);
    e.num("flags", p.base.flags);
    e.num("flags.ack_req", !!(p.base.flags & MR_FLAG_ACK_REQ));
    e.num("flags.solicited", !!(p.base.flags & MR_FLAG_SOLICITED));
    e.num("flags.window_limited", !!(p.base.flags & MR_FLAG_WINDOW_LIMITED));
    e.num("flags.reserved",
          p.base.flags & ~(MR_FLAG_ACK_REQ | MR_FLAG_SOLICITED | MR_FLAG_WINDOW_LIMITED) & 0xff);
    e.num("path", p.base.path);
    e.num("order", p.base.order);
    e.num("qpn", p.base.qpn);
    e.num("psn", p.base.psn);
    e.num("epoch", p.base.epoch);
    e.num("stream", p.base.stream);
    e.num("tag", p.base.tag);
    expect_op(e, p);
    e.num("hdr_len", mr_wire_hdr_len(p.base.opcode));
    e.num("payload_len", p.payload_len);
    if (p.payload_len)
        e.bytes("payload", payload, p.payload_len);
    return e.str();
}

// What the codec makes of the UDP payload @d.
std::string expect_decoded(unsigned frame, const Bytes &d) {
    mr_pkt pkt;
    int err = mr_wire_decode(d.data(), static_cast<u32>(d.size()), &pkt);
    if (!err)
        return expect_valid(frame, pkt, d.data() + pkt.hdr_len);
    Expect e(frame);
    e.kind("metaroce");
    e.error(err_name(err));
    return e.str();
}

std::string expect_kind(unsigned frame, const char *kind) {
    Expect e(frame);
    e.kind(kind);
    return e.str();
}

// --- frames

uint16_t checksum_fold(uint32_t sum) {
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<uint16_t>(~sum);
}

uint32_t checksum_add(uint32_t sum, const uint8_t *p, size_t n) {
    for (size_t i = 0; i + 1 < n; i += 2)
        sum += mr_get_be16(p + i);
    if (n & 1)
        sum += static_cast<uint32_t>(p[n - 1]) << 8;
    return sum;
}

struct Endpoints {
    bool ipv6 = false;
    uint16_t sport = kPathPortBase;
    uint16_t dport = kDefaultPort;
};

// Ethernet, IPv4 or IPv6, UDP with its checksum, then @udp_payload.
Bytes frame(const Endpoints &ep, const Bytes &udp_payload) {
    // 02:00:00:00:00:01 to 02:00:00:00:00:02
    Bytes f = {0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0, 0};
    mr_put_be16(&f[12], ep.ipv6 ? kEtherIpv6 : kEtherIpv4);

    size_t udp_len = 8 + udp_payload.size();
    Bytes udp(8);
    mr_put_be16(&udp[0], ep.sport);
    mr_put_be16(&udp[2], ep.dport);
    mr_put_be16(&udp[4], static_cast<uint16_t>(udp_len));
    udp.insert(udp.end(), udp_payload.begin(), udp_payload.end());

    uint32_t pseudo = kIpProtoUdp + static_cast<uint32_t>(udp_len);
    Bytes ip;
    if (ep.ipv6) {
        ip.assign(40, 0);
        ip[0] = 0x60;
        mr_put_be16(&ip[4], static_cast<uint16_t>(udp_len));
        ip[6] = kIpProtoUdp;
        ip[7] = 64;
        ip[8] = 0xfd; // fd00::1 -> fd00::2
        ip[23] = 1;
        ip[24] = 0xfd;
        ip[39] = 2;
        pseudo = checksum_add(pseudo, &ip[8], 32);
    } else {
        ip.assign(20, 0);
        ip[0] = 0x45;
        mr_put_be16(&ip[2], static_cast<uint16_t>(20 + udp_len));
        mr_put_be16(&ip[6], 0x4000); // DF
        ip[8] = 64;
        ip[9] = kIpProtoUdp;
        const uint8_t addrs[8] = {10, 0, 0, 1, 10, 0, 0, 2};
        std::memcpy(&ip[12], addrs, 8);
        mr_put_be16(&ip[10], checksum_fold(checksum_add(0, ip.data(), 20)));
        pseudo = checksum_add(pseudo, &ip[12], 8);
    }
    uint16_t csum = checksum_fold(checksum_add(pseudo, udp.data(), udp.size()));
    mr_put_be16(&udp[6], csum ? csum : 0xffff); // never zero (protocol.rst)

    f.insert(f.end(), ip.begin(), ip.end());
    f.insert(f.end(), udp.begin(), udp.end());
    return f;
}

class PcapWriter {
public:
    explicit PcapWriter(const std::string &path) : out_(path, std::ios::binary) {
        if (!out_)
            throw BadInput("cannot create " + path);
        uint32_t hdr[6] = {0xa1b2c3d4, 0x00040002, 0, 0, 262144, kLinkEthernet};
        out_.write(reinterpret_cast<const char *>(hdr), sizeof(hdr));
    }
    // @f, or its first @caplen bytes as a capture with that snaplen takes it.
    void add(const Bytes &f, size_t caplen = SIZE_MAX) {
        caplen = std::min(caplen, f.size());
        uint32_t rec[4] = {1764547200 + n_, 0, static_cast<uint32_t>(caplen),
                           static_cast<uint32_t>(f.size())};
        out_.write(reinterpret_cast<const char *>(rec), sizeof(rec));
        out_.write(reinterpret_cast<const char *>(f.data()), static_cast<std::streamsize>(caplen));
        n_++;
    }
    void close() {
        out_.close();
        if (!out_)
            throw BadInput("write error");
    }

private:
    std::ofstream out_;
    uint32_t n_ = 0;
};

// --- the frames `write` makes

// Recognisable payload bytes: a ramp from @seed.
Bytes pattern(size_t n, uint8_t seed) {
    Bytes b(n);
    for (size_t i = 0; i < n; i++)
        b[i] = static_cast<uint8_t>(seed + 7 * i);
    return b;
}

// A connection's packets carry their receiver's tag: one per QPN here, with
// the high bit set (64-bit fields must not pass through a double); UD none.
mr_pkt base(uint8_t opcode, uint8_t flags, uint8_t path, uint16_t epoch, uint32_t qpn,
            uint32_t psn) {
    mr_pkt p{};
    p.base.opcode = opcode;
    p.base.flags = flags;
    p.base.path = path;
    p.base.epoch = epoch;
    p.base.qpn = qpn;
    p.base.psn = psn;
    if (opcode != MR_OP_UD_SEND && opcode != MR_OP_UD_SEND_IMM)
        p.base.tag = 0x8765432100000001ull + (static_cast<uint64_t>(qpn) << 8);
    return p;
}

// A HELLO to the QP with tag @tag (0: not known yet) from the one with @src.
mr_pkt hello(uint8_t path, uint32_t qpn, uint64_t tag, uint64_t src, uint32_t flags,
             uint32_t hint = 0) {
    mr_pkt p = base(MR_OP_HELLO, 0, path, 0, qpn, 0);
    p.base.tag = tag;
    p.hello = {.src_tag = src, .flags = flags, .rate_hint = hint};
    return p;
}

// The headers by the codec, then the payload.
Bytes encode(const mr_pkt &p, const Bytes &payload) {
    Bytes b(MR_MAX_HDR_LEN);
    int n = mr_wire_encode(&p, b.data(), static_cast<u32>(b.size()));
    if (n < 0)
        throw std::logic_error(std::string("the codec refuses a valid template: ") + err_name(n));
    b.resize(static_cast<size_t>(n));
    b.insert(b.end(), payload.begin(), payload.end());
    return b;
}

struct Valid {
    mr_pkt pkt;
    Bytes payload;
    Endpoints ep;
};

// One packet per opcode at least, with values that tell fields apart: high
// bits in 64-bit fields, the largest path id and QPN, PSNs that wrap.
std::vector<Valid> valid_packets() {
    std::vector<Valid> v;
    auto add = [&](mr_pkt p, Bytes payload, Endpoints ep = {}) {
        p.payload_len = static_cast<u32>(payload.size());
        if (ep.dport == kDefaultPort) // from the path's port, or back to it
            ep.sport = static_cast<uint16_t>(ep.sport + p.base.path);
        else
            ep.dport = static_cast<uint16_t>(ep.dport + p.base.path);
        v.push_back({p, std::move(payload), ep});
    };
    // Acknowledgments come from the MetaRoCE port to the path's port.
    const Endpoints to_path{false, kDefaultPort, kPathPortBase};
    const Endpoints ipv6{true, kPathPortBase, kDefaultPort};

    mr_pkt p = base(MR_OP_SEND, MR_FLAG_ACK_REQ | MR_FLAG_SOLICITED, 3, 7, 0x000123, 1000);
    p.send = {.msn = 17, .rsn = 4, .length = 1000, .offset = 512, .imm = 0, .inv_rkey = 0};
    add(p, pattern(256, 1));

    p = base(MR_OP_SEND_IMM, MR_FLAG_SOLICITED, 4, 0, 0x000124, 2000);
    p.send = {.msn = 18, .rsn = 5, .length = 64, .offset = 0, .imm = 0xdeadbeef, .inv_rkey = 0};
    // Stream 7, after the message 2 before it in that stream.
    p.base.stream = 7;
    p.base.order = 1;
    add(p, pattern(64, 2));

    p = base(MR_OP_SEND_INV, 0, 5, 1, 0x000125, 3000);
    p.send = {.msn = 19, .rsn = 6, .length = 32, .offset = 0, .imm = 0, .inv_rkey = 0x12345678};
    add(p, pattern(32, 3));

    p = base(MR_OP_WRITE, MR_FLAG_ACK_REQ, 63, 65535, MR_WIRE_QPN_MAX, 0xffffffff);
    p.write = {.msn = 0xffffffff,
               .rkey = 0xabcdef01,
               .va = 0xfedcba9876543000,
               .length = 8192,
               .offset = 4096,
               .rsn = 0,
               .imm = 0};
    add(p, pattern(MR_WIRE_MAX_PAYLOAD, 4)); // a jumbo frame

    p = base(MR_OP_WRITE_IMM, MR_FLAG_SOLICITED, 1, 2, 0x00abcd, 77);
    p.write = {.msn = 21,
               .rkey = 0x0badf00d,
               .va = 0x00007f0012345678,
               .length = 100,
               .offset = 0,
               .rsn = 9,
               .imm = 0x01020304};
    add(p, pattern(100, 5), ipv6);

    p = base(MR_OP_READ_REQ, MR_FLAG_ACK_REQ, 2, 3, 0x000200, 4000);
    p.read_req = {.msn = 22, .rkey = 0x44332211, .va = 0x00007fff12345678, .length = 0x80000000};
    add(p, {});

    p = base(MR_OP_READ_REQ, 0, 6, 0, 0x000201, 4001);
    p.read_req = {.msn = 23, .rkey = 0x55, .va = 0, .length = 0};
    add(p, {}, ipv6);

    p = base(MR_OP_CMP_SWAP, MR_FLAG_ACK_REQ, 7, 0, 0x000300, 5000);
    p.atomic = {.msn = 24,
                .rkey = 0x66,
                .va = 0x0000000000001000,
                .swap_add = 0x1111222233334444,
                .compare = 0xffffffffffffffff};
    add(p, {});

    p = base(MR_OP_FETCH_ADD, 0, 8, 0, 0x000301, 5001);
    p.atomic = {.msn = 25, .rkey = 0x67, .va = 0xfffffffffffffff0, .swap_add = 1, .compare = 0};
    add(p, {});

    p = base(MR_OP_UD_SEND, MR_FLAG_SOLICITED, 0, 0, 1, 42);
    p.ud = {.src_qpn = 1, .qkey = 0x80010000, .imm = 0};
    add(p, pattern(256, 6));

    p = base(MR_OP_UD_SEND_IMM, 0, 0, 0, 0x000400, 43);
    p.ud = {.src_qpn = MR_WIRE_QPN_MAX, .qkey = 0x11111111, .imm = 0xcafef00d};
    add(p, pattern(16, 7), ipv6);

    p = base(MR_OP_READ_RESP, MR_FLAG_ACK_REQ, 9, 4, 0x000500, 6000);
    p.read_resp = {.msn = 22, .length = 10000, .offset = 4096};
    add(p, pattern(1024, 8));

    p = base(MR_OP_READ_RESP, 0, 10, 0, 0x000500, 6001);
    p.read_resp = {.msn = 23, .length = 0, .offset = 0}; // the zero-length READ
    add(p, {});

    p = base(MR_OP_ATOMIC_RESP, 0, 11, 0, 0x000600, 7000);
    p.atomic_resp = {.msn = 24, .orig = 0x8000000000000001};
    add(p, {});

    // An ACK with nothing SACKed; psn names the packet before cum.
    p = base(MR_OP_ACK, 0, 5, 0, 0x000123, 499);
    p.ack = {.cum_psn = 500, .sack = {}, .msn_done = 17, .ecn_count = 0, .rate_hint = 0};
    add(p, {}, to_path);

    // Bits in every word, the last PSN of the window, PSNs wrapping past 2^32.
    p = base(MR_OP_ACK, 0, 12, 9, 0x000124, 0xffffffef);
    p.ack = {.cum_psn = 0xfffffff0,
             .sack = {(1ull << 1) | (1ull << 2) | (1ull << 5) | (1ull << 63), 1ull, 1ull << 31,
                      1ull << 63},
             .msn_done = 0xfffffffe,
             .ecn_count = 3,
             .rate_hint = 12345};
    p.base.psn = p.ack.cum_psn + 255;
    add(p, {}, to_path);

    // A full first word, over IPv6.
    p = base(MR_OP_ACK, 0, 13, 1, 0x000125, 1063);
    p.ack = {.cum_psn = 1000,
             .sack = {0xfffffffffffffffe, 0, 0, 0},
             .msn_done = 30,
             .ecn_count = 0xffffffff,
             .rate_hint = 0};
    add(p, {}, {true, kDefaultPort, kPathPortBase});

    p = base(MR_OP_NAK, 0, 3, 7, 0x000123, 1001);
    p.nak = {.msn = 17, .code = MR_NAK_REMOTE_ACCESS, .rnr_delay = 0};
    add(p, {}, to_path);

    p = base(MR_OP_NAK, 0, 4, 0, 0x000124, 2001);
    p.nak = {.msn = 18, .code = MR_NAK_INVALID_REQUEST, .rnr_delay = 0};
    add(p, {}, to_path);

    p = base(MR_OP_NAK, 0, 5, 0, 0x000125, 3001);
    p.nak = {.msn = 19, .code = MR_NAK_RNR, .rnr_delay = 640};
    add(p, {}, to_path);

    // The handshake: a first HELLO, its answer, the proof of the tag, a retry.
    add(hello(0, 0x000123, 0, 0xa1a2a3a4a5a6a7a8, 0), {});
    add(hello(1, 0x000321, 0xa1a2a3a4a5a6a7a8, 0x0000000000000001, MR_HELLO_REPLY, 2500000), {},
        to_path);
    add(hello(63, MR_WIRE_QPN_MAX, 0xffffffffffffffff, 0x8000000000000000,
              MR_HELLO_KNOWN | MR_HELLO_REPLY),
        {}, ipv6);
    add(hello(2, 0x000123, 0x1000000000000000, 0xa1a2a3a4a5a6a7a8, MR_HELLO_KNOWN), {});
    return v;
}

struct Malformed {
    const char *want; // what the codec must say, or the frame is a bad test
    Bytes bytes;
};

// Valid packets broken in one place each, covering every check of wire.c.
std::vector<Malformed> malformed_packets() {
    std::vector<Malformed> v;
    auto tweak = [&](const char *want, mr_pkt p, Bytes payload,
                     const std::function<void(Bytes &)> &change) {
        p.payload_len = static_cast<u32>(payload.size());
        Bytes b = encode(p, payload);
        change(b);
        v.push_back({want, std::move(b)});
    };
    mr_pkt send = base(MR_OP_SEND, 0, 1, 0, 0x10, 100);
    send.send = {.msn = 1, .rsn = 1, .length = 16, .offset = 0, .imm = 0, .inv_rkey = 0};
    mr_pkt send0 = send; // the empty message: no payload
    send0.send.length = 0;
    mr_pkt write = base(MR_OP_WRITE, 0, 1, 0, 0x10, 101);
    write.write = {
        .msn = 2, .rkey = 9, .va = 0x1000, .length = 16, .offset = 0, .rsn = 0, .imm = 0};
    mr_pkt read = base(MR_OP_READ_REQ, 0, 1, 0, 0x10, 102);
    read.read_req = {.msn = 3, .rkey = 9, .va = 0x1000, .length = 16};
    mr_pkt cas = base(MR_OP_CMP_SWAP, 0, 1, 0, 0x10, 103);
    cas.atomic = {.msn = 4, .rkey = 9, .va = 0x1000, .swap_add = 1, .compare = 2};
    mr_pkt ack = base(MR_OP_ACK, 0, 1, 0, 0x10, 103);
    ack.ack = {.cum_psn = 100,
               .sack = {1ull << 3, 0, 0, 0},
               .msn_done = 1,
               .ecn_count = 0,
               .rate_hint = 0};
    mr_pkt nak = base(MR_OP_NAK, 0, 1, 0, 0x10, 104);
    nak.nak = {.msn = 5, .code = MR_NAK_REMOTE_ACCESS, .rnr_delay = 0};
    mr_pkt ud = base(MR_OP_UD_SEND, 0, 0, 0, 0x10, 105);
    ud.ud = {.src_qpn = 2, .qkey = 3, .imm = 0};
    mr_pkt hi = hello(1, 0x10, 0x77, 0x88, MR_HELLO_KNOWN);
    const Bytes data16 = pattern(16, 9);
    // Byte offsets in the opcode headers (protocol.rst), from the packet start.
    constexpr size_t op = MR_BASE_HDR_LEN;

    tweak("trunc", send, data16, [](Bytes &b) { b.resize(10); });
    tweak("trunc", write, data16, [](Bytes &b) { b.resize(30); });
    tweak("version", send, data16, [](Bytes &b) { b[0] = 1; }); // before tags
    tweak("version", send, data16, [](Bytes &b) { b[0] = 3; });
    tweak("trunc", hi, {}, [](Bytes &b) { b.resize(MR_BASE_HDR_LEN - 1); });
    tweak("opcode", send, data16, [](Bytes &b) { b[1] = 0x0b; });
    tweak("opcode", send, data16, [](Bytes &b) { b[1] = 0x00; });
    // Bytes 4 and 14-15: a request's order and stream, else reserved.
    tweak("reserved", ack, {}, [](Bytes &b) { b[4] = 1; });
    tweak("reserved", hi, {}, [](Bytes &b) { b[15] = 1; });
    tweak("reserved", nak, {}, [](Bytes &b) { b[op + 5] = 0x80; });
    tweak("flags", send, data16, [](Bytes &b) { b[2] = 0x04; });
    tweak("flags", write, data16, [](Bytes &b) { b[2] = MR_FLAG_SOLICITED; });
    tweak("flags", ack, {}, [](Bytes &b) { b[2] = MR_FLAG_ACK_REQ; });
    tweak("field", send, data16, [](Bytes &b) { b[3] = MR_WIRE_MAX_PATHS; });
    tweak("length", read, {}, [](Bytes &b) { b.resize(b.size() + 8, 0xee); });
    tweak("field", send, data16, [](Bytes &b) { mr_put_be32(&b[op + 8], 0x80000001); });
    tweak("length", send, data16, [](Bytes &b) { mr_put_be32(&b[op + 12], 8); });
    tweak("length", send0, {}, [](Bytes &b) { mr_put_be32(&b[op + 8], 10); });
    tweak("length", send0, {}, [](Bytes &b) {
        mr_put_be32(&b[op + 8], 8192);
        b.resize(b.size() + MR_WIRE_MAX_PAYLOAD + 4, 0x5a);
    });
    tweak("field", write, data16, [](Bytes &b) { mr_put_be64(&b[op + 8], 0xfffffffffffffff8); });
    tweak("field", read, {}, [](Bytes &b) { mr_put_be32(&b[op + 16], 0x80000001); });
    tweak("field", read, {}, [](Bytes &b) { mr_put_be64(&b[op + 8], 0xfffffffffffffff1); });
    tweak("field", cas, {}, [](Bytes &b) { mr_put_be64(&b[op + 8], 0xfffffffffffffffc); });
    tweak("field", ack, {}, [](Bytes &b) { b[op + 11] |= 1; });         // SACK bit 0: cum itself
    tweak("field", ack, {}, [](Bytes &b) { mr_put_be32(&b[8], 104); }); // psn not in the map
    tweak("field", nak, {}, [](Bytes &b) { b[op + 4] = 0; });
    tweak("field", nak, {}, [](Bytes &b) { b[op + 4] = 4; });
    tweak("field", nak, {}, [](Bytes &b) { mr_put_be16(&b[op + 6], 1); }); // delay, not RNR
    tweak("field", ud, data16, [](Bytes &b) { b[3] = 1; });
    tweak("field", ud, data16, [](Bytes &b) { mr_put_be16(&b[12], 1); });
    tweak("field", ud, data16, [](Bytes &b) { mr_put_be32(&b[op], 0x01000000); });
    tweak("length", ud, {}, [](Bytes &b) { b.resize(b.size() + MR_WIRE_MAX_PAYLOAD + 1, 1); });
    // Tags: a connection's packet names its receiver's, a datagram none.
    tweak("field", send, data16, [](Bytes &b) { mr_put_be64(&b[16], 0); });
    tweak("field", ack, {}, [](Bytes &b) { mr_put_be64(&b[16], 0); });
    tweak("field", ud, data16, [](Bytes &b) { b[23] = 1; });
    // HELLO: no sequence, a sender's tag, KNOWN only with a tag, two flags.
    tweak("field", hi, {}, [](Bytes &b) { b[11] = 1; });
    tweak("field", hi, {}, [](Bytes &b) { b[13] = 1; });
    tweak("field", hi, {}, [](Bytes &b) { mr_put_be64(&b[op], 0); });
    tweak("field", hi, {}, [](Bytes &b) { mr_put_be64(&b[16], 0); });
    tweak("field", hi, {}, [](Bytes &b) { b[op + 8] = 0x80; });
    tweak("flags", hi, {}, [](Bytes &b) { b[2] = MR_FLAG_ACK_REQ; });
    tweak("length", hi, {}, [](Bytes &b) { b.resize(b.size() + 4, 0); });
    return v;
}

int do_write(const std::string &path, uint16_t port) {
    PcapWriter pcap(path);
    unsigned n = 0;
    std::string out;
    for (Valid &p : valid_packets()) {
        if (p.ep.dport == kDefaultPort)
            p.ep.dport = port;
        else
            p.ep.sport = port;
        pcap.add(frame(p.ep, encode(p.pkt, p.payload)));
        out += expect_valid(++n, p.pkt, p.payload.data());
    }
    for (const Malformed &m : malformed_packets()) {
        std::string got = expect_decoded(n + 1, m.bytes);
        if (got.find(std::string("error ") + m.want + "\n") == std::string::npos)
            throw std::logic_error("malformed frame " + std::to_string(n + 1) +
                                   " does not fail with " + m.want + ":\n" + got);
        pcap.add(frame({false, kPathPortBase + 1, port}, m.bytes));
        out += got;
        n++;
    }
    // The same SEND on a port nobody claims: not MetaRoCE.
    const Valid first = valid_packets().front(); // a copy: the vector is a temporary
    pcap.add(frame({false, kPathPortBase, kOtherPort}, encode(first.pkt, first.payload)));
    out += expect_kind(++n, "other");
    pcap.close();
    std::fputs(out.c_str(), stdout);
    return 0;
}

// --- `fuzz`: the test packets mutated at random

// Changes 1 to 3 things in each packet: a bit or a byte of the headers, the
// length, the opcode (its header then reads other bytes), the version; one
// frame in 20 is cut short as by a capture's snaplen. Frames cut short and
// empty datagrams (no dissector sees those) are only checked for Lua errors.
int do_fuzz(const std::string &path, unsigned count, uint32_t seed) {
    std::mt19937 rng(seed);
    auto below = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    std::vector<Bytes> seeds;
    for (const Valid &p : valid_packets())
        seeds.push_back(encode(p.pkt, p.payload));
    for (const Malformed &m : malformed_packets())
        seeds.push_back(m.bytes);
    static const uint8_t opcodes[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
                                      0x10, 0x11, 0x20, 0x21, 0x22, 0x00, 0x0b, 0x23, 0xff};
    PcapWriter pcap(path);
    std::string out;
    for (unsigned n = 1; n <= count; n++) {
        Bytes b = seeds[below(seeds.size())];
        for (size_t changes = 1 + below(3); changes; changes--) {
            size_t front = std::min<size_t>(b.size(), MR_MAX_HDR_LEN);
            switch (below(6)) {
            case 0:
                if (front)
                    b[below(front)] ^= static_cast<uint8_t>(1u << below(8));
                break;
            case 1:
                if (front)
                    b[below(front)] = static_cast<uint8_t>(rng());
                break;
            case 2:
                b.resize(below(b.size() + 1));
                break;
            case 3:
                b.resize(b.size() + below(64), 0xa5);
                break;
            case 4:
                if (b.size() > 1)
                    b[1] = opcodes[below(sizeof(opcodes))];
                break;
            default:
                if (!b.empty())
                    b[0] = below(8) ? MR_WIRE_VERSION : static_cast<uint8_t>(rng());
                break;
            }
        }
        Endpoints ep{below(4) == 0, static_cast<uint16_t>(kPathPortBase + below(64)), kDefaultPort};
        Bytes f = frame(ep, b);
        if (below(20) == 0 || b.empty()) {
            pcap.add(f, b.empty() ? f.size() : below(f.size()));
            out += expect_kind(n, "skip");
        } else {
            pcap.add(f);
            out += expect_decoded(n, b);
        }
    }
    pcap.close();
    std::fputs(out.c_str(), stdout);
    return 0;
}

// --- reading captures

class PcapReader {
public:
    explicit PcapReader(const std::string &path) : in_(path, std::ios::binary) {
        if (!in_)
            throw BadInput("cannot open " + path);
        uint8_t hdr[24];
        if (!in_.read(reinterpret_cast<char *>(hdr), sizeof(hdr)))
            throw BadInput(path + ": too short for a pcap file");
        uint32_t magic = le32(hdr);
        if (magic == 0xa1b2c3d4 || magic == 0xa1b23c4d) {
            big_ = false;
        } else if (magic == 0xd4c3b2a1 || magic == 0x4d3cb2a1) {
            big_ = true;
        } else if (magic == 0x0a0d0d0a) {
            throw BadInput(path + ": pcapng; convert it first: editcap -F pcap IN OUT");
        } else {
            throw BadInput(path + ": not a pcap file");
        }
        linktype_ = get32(hdr + 20) & 0xffff;
    }
    uint32_t linktype() const { return linktype_; }
    // The next frame and whether it was captured whole.
    bool next(Bytes &f, bool &whole) {
        uint8_t rec[16];
        if (!in_.read(reinterpret_cast<char *>(rec), sizeof(rec))) {
            if (in_.gcount())
                throw BadInput("a frame header is cut short");
            return false;
        }
        uint32_t caplen = get32(rec + 8), len = get32(rec + 12);
        if (caplen > (1u << 26))
            throw BadInput("a frame claims " + std::to_string(caplen) + " bytes");
        f.resize(caplen);
        if (!in_.read(reinterpret_cast<char *>(f.data()), caplen))
            throw BadInput("a frame is cut short");
        whole = caplen >= len;
        return true;
    }

private:
    static uint32_t le32(const uint8_t *p) {
        return p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24;
    }
    uint32_t get32(const uint8_t *p) const { return big_ ? mr_get_be32(p) : le32(p); }

    std::ifstream in_;
    bool big_ = false;
    uint32_t linktype_ = 0;
};

// Where the network layer of a frame starts and what it is (0: unknown).
std::optional<std::pair<size_t, uint16_t>> link_layer(uint32_t linktype, const Bytes &f) {
    size_t at;
    uint16_t type;
    switch (linktype) {
    case kLinkEthernet:
        if (f.size() < 14)
            return std::nullopt;
        at = 14;
        type = mr_get_be16(&f[12]);
        while ((type == kEtherVlan || type == kEtherQinQ) && f.size() >= at + 4) {
            type = mr_get_be16(&f[at + 2]);
            at += 4;
        }
        return std::make_pair(at, type);
    case kLinkSll:
        if (f.size() < 16)
            return std::nullopt;
        return std::make_pair(size_t{16}, mr_get_be16(&f[14]));
    case kLinkSll2:
        if (f.size() < 20)
            return std::nullopt;
        return std::make_pair(size_t{20}, mr_get_be16(&f[0]));
    case kLinkRaw:
    case kLinkRawOld:
        if (f.empty())
            return std::nullopt;
        return std::make_pair(size_t{0}, (f[0] >> 4) == 6 ? kEtherIpv6 : kEtherIpv4);
    case kLinkNull: // a host-order address family: 2 is IPv4, 10/24/28/30 IPv6
        if (f.size() < 5)
            return std::nullopt;
        return std::make_pair(size_t{4}, (f[4] >> 4) == 6 ? kEtherIpv6 : kEtherIpv4);
    }
    throw BadInput("pcap link type " + std::to_string(linktype) + " is not supported");
}

// The kind of one captured frame and, for MetaRoCE, its UDP payload.
const char *classify(uint32_t linktype, const Bytes &f, bool whole, uint16_t port, Bytes &data) {
    // A frame cut short before its UDP ports is not known to be MetaRoCE.
    const char *unknown = whole ? "other" : "skip";
    auto ll = link_layer(linktype, f);
    if (!ll)
        return unknown;
    auto [at, type] = *ll;
    size_t udp;
    if (type == kEtherIpv4) {
        if (f.size() < at + 20)
            return unknown;
        if (f[at] >> 4 != 4 || f[at + 9] != kIpProtoUdp)
            return "other";
        if (mr_get_be16(&f[at + 6]) & 0x3fff) // more fragments, or an offset
            return "skip";
        udp = at + (f[at] & 0x0f) * 4u;
    } else if (type == kEtherIpv6) {
        if (f.size() < at + 40)
            return unknown;
        if (f[at + 6] != kIpProtoUdp)
            return f[at + 6] == 44 ? "skip" : "other"; // 44: a fragment header
        udp = at + 40;
    } else {
        return "other";
    }
    if (f.size() < udp + 8)
        return unknown;
    if (mr_get_be16(&f[udp]) != port && mr_get_be16(&f[udp + 2]) != port)
        return "other";
    // Wireshark hands an empty datagram to no dissector: nothing to check.
    size_t udp_len = mr_get_be16(&f[udp + 4]);
    if (!whole || udp_len <= 8 || f.size() < udp + udp_len)
        return "skip";
    data.assign(f.begin() + static_cast<long>(udp + 8),
                f.begin() + static_cast<long>(udp + udp_len));
    return "metaroce";
}

int do_read(const std::string &path, uint16_t port) {
    PcapReader pcap(path);
    Bytes f, data;
    bool whole;
    unsigned n = 0;
    std::string out;
    while (pcap.next(f, whole)) {
        const char *kind = classify(pcap.linktype(), f, whole, port, data);
        n++;
        out += std::strcmp(kind, "metaroce") ? expect_kind(n, kind) : expect_decoded(n, data);
    }
    std::fputs(out.c_str(), stdout);
    return 0;
}

uint16_t parse_port(const char *s) {
    char *end;
    unsigned long v = std::strtoul(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v == 0 || v > 65535)
        throw BadInput(std::string("bad UDP port: ") + s);
    return static_cast<uint16_t>(v);
}

unsigned long parse_number(const char *s, unsigned long max, const char *what) {
    char *end;
    unsigned long v = std::strtoul(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v > max)
        throw BadInput(std::string("bad ") + what + ": " + s);
    return v;
}

} // namespace

int main(int argc, char **argv) {
    bool fuzz = argc == 5 && std::strcmp(argv[1], "fuzz") == 0;
    bool rw = (argc == 3 || argc == 4) &&
              (std::strcmp(argv[1], "write") == 0 || std::strcmp(argv[1], "read") == 0);
    if (!fuzz && !rw) {
        std::fprintf(stderr,
                     "usage: %s write|read FILE.pcap [UDP_PORT]\n"
                     "       %s fuzz FILE.pcap COUNT SEED\n",
                     argv[0], argv[0]);
        return 2;
    }
    try {
        if (fuzz)
            return do_fuzz(argv[2], static_cast<unsigned>(parse_number(argv[3], 1000000, "count")),
                           static_cast<uint32_t>(parse_number(argv[4], 0xffffffff, "seed")));
        uint16_t port = argc == 4 ? parse_port(argv[3]) : kDefaultPort;
        if (std::strcmp(argv[1], "write") == 0)
            return do_write(argv[2], port);
        return do_read(argv[2], port);
    } catch (const BadInput &e) {
        std::fprintf(stderr, "mr_pcap: %s\n", e.what());
        return 1;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "mr_pcap: internal error: %s\n", e.what());
        return 1;
    }
}
