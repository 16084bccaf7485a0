// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// What the model's endpoints share: the clock, the kernel's codec on ns-3
// packets, and the connection tags.
#include "endpoint.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

using namespace ns3;

namespace mrscale {

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

} // namespace mrscale
