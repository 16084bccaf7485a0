// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "codec.h"

#include <cinttypes>
#include <cstdio>

namespace conform {
namespace {

const std::vector<Field> kBase = {
    {"version", 0, 1}, {"opcode", 1, 1}, {"flags", 2, 1},  {"path", 3, 1},    {"order", 4, 1},
    {"qpn", 5, 3},     {"psn", 8, 4},    {"epoch", 12, 2}, {"stream", 14, 2}, {"tag", 16, 8},
};

// protocol.rst, "Opcode headers" and "HELLO": offsets from the packet's start.
const std::vector<Opcode> kOpcodes = {
    {"SEND",
     0x01,
     16,
     true,
     {{"msn", 24, 4}, {"rsn", 28, 4}, {"length", 32, 4}, {"offset", 36, 4}}},
    {"SEND_IMM",
     0x02,
     20,
     true,
     {{"msn", 24, 4}, {"rsn", 28, 4}, {"length", 32, 4}, {"offset", 36, 4}, {"imm", 40, 4}}},
    {"SEND_INV",
     0x03,
     20,
     true,
     {{"msn", 24, 4}, {"rsn", 28, 4}, {"length", 32, 4}, {"offset", 36, 4}, {"inv_rkey", 40, 4}}},
    {"WRITE",
     0x04,
     24,
     true,
     {{"msn", 24, 4}, {"rkey", 28, 4}, {"va", 32, 8}, {"length", 40, 4}, {"offset", 44, 4}}},
    {"WRITE_IMM",
     0x05,
     32,
     true,
     {{"msn", 24, 4},
      {"rkey", 28, 4},
      {"va", 32, 8},
      {"length", 40, 4},
      {"offset", 44, 4},
      {"rsn", 48, 4},
      {"imm", 52, 4}}},
    {"READ_REQ",
     0x06,
     20,
     false,
     {{"msn", 24, 4}, {"rkey", 28, 4}, {"va", 32, 8}, {"length", 40, 4}}},
    {"CMP_SWAP",
     0x07,
     32,
     false,
     {{"msn", 24, 4}, {"rkey", 28, 4}, {"va", 32, 8}, {"swap", 40, 8}, {"compare", 48, 8}}},
    {"FETCH_ADD",
     0x08,
     24,
     false,
     {{"msn", 24, 4}, {"rkey", 28, 4}, {"va", 32, 8}, {"add", 40, 8}}},
    {"UD_SEND", 0x09, 8, true, {{"src_qpn", 24, 4}, {"qkey", 28, 4}}},
    {"UD_SEND_IMM", 0x0a, 12, true, {{"src_qpn", 24, 4}, {"qkey", 28, 4}, {"imm", 32, 4}}},
    {"READ_RESP", 0x10, 12, true, {{"msn", 24, 4}, {"length", 28, 4}, {"offset", 32, 4}}},
    {"ATOMIC_RESP", 0x11, 12, false, {{"msn", 24, 4}, {"orig", 28, 8}}},
    {"ACK",
     0x20,
     48,
     false,
     {{"cum_psn", 24, 4},
      {"sack", 28, 32},
      {"msn_done", 60, 4},
      {"ecn_count", 64, 4},
      {"rate_hint", 68, 4}}},
    {"NAK",
     0x21,
     8,
     false,
     {{"msn", 24, 4}, {"code", 28, 1}, {"rsvd29", 29, 1}, {"rnr_delay", 30, 2}}},
    {"HELLO", 0x22, 16, false, {{"src_tag", 24, 8}, {"hflags", 32, 4}, {"rate_hint", 36, 4}}},
};

void Put(Bytes &b, uint32_t at, uint32_t size, uint64_t v) {
    for (uint32_t i = 0; i < size; i++)
        b[at + i] = static_cast<uint8_t>(v >> (8 * (size - 1 - i)));
}

uint64_t Get(const Bytes &b, uint32_t at, uint32_t size) {
    uint64_t v = 0;
    for (uint32_t i = 0; i < size; i++)
        v = v << 8 | b[at + i];
    return v;
}

} // namespace

const std::vector<Field> &BaseFields() {
    return kBase;
}
const std::vector<Opcode> &Opcodes() {
    return kOpcodes;
}

const Opcode *OpcodeByName(const std::string &name) {
    for (auto &op : kOpcodes)
        if (name == op.name)
            return &op;
    return nullptr;
}

const Opcode *OpcodeByValue(uint8_t value) {
    for (auto &op : kOpcodes)
        if (value == op.value)
            return &op;
    return nullptr;
}

Bytes Encode(const Packet &p) {
    const Opcode *op = OpcodeByName(p.opcode);
    const uint32_t hdr = kBaseLen + (op ? op->hdr_len : 0);
    Bytes b(hdr, 0);
    auto value = [&](const char *name, uint64_t dflt) {
        auto it = p.fields.find(name);
        return it == p.fields.end() ? dflt : it->second;
    };
    for (auto &f : kBase)
        Put(b, f.at, f.size, value(f.name, 0));
    if (op) {
        for (auto &f : op->fields) {
            if (std::string(f.name) != "sack") {
                Put(b, f.at, f.size, value(f.name, 0));
                continue;
            }
            // Word w, bit b (value 1 << b): PSN cum + 64 w + b.
            const uint32_t cum = static_cast<uint32_t>(value("cum_psn", 0));
            uint64_t words[4] = {};
            for (uint32_t psn : p.sack) {
                const uint32_t d = psn - cum;
                if (d < 256)
                    words[d / 64] |= 1ull << (d % 64);
            }
            for (int w = 0; w < 4; w++)
                Put(b, f.at + 8 * w, 8, words[w]);
        }
    }
    b.insert(b.end(), p.payload.begin(), p.payload.end());
    return b;
}

std::optional<Packet> Decode(const Bytes &b, std::string *why) {
    if (b.size() < kBaseLen) {
        *why = "shorter than the base header";
        return std::nullopt;
    }
    const Opcode *op = OpcodeByValue(b[1]);
    if (!op) {
        *why = "unknown opcode " + std::to_string(b[1]);
        return std::nullopt;
    }
    if (b.size() < kBaseLen + op->hdr_len) {
        *why = std::string("shorter than the headers of ") + op->name;
        return std::nullopt;
    }
    Packet p;
    p.opcode = op->name;
    for (auto &f : kBase)
        p.fields[f.name] = Get(b, f.at, f.size);
    for (auto &f : op->fields) {
        if (std::string(f.name) != "sack") {
            p.fields[f.name] = Get(b, f.at, f.size);
            continue;
        }
        const uint32_t cum = static_cast<uint32_t>(Get(b, 24, 4));
        for (uint32_t w = 0; w < 4; w++) {
            const uint64_t word = Get(b, f.at + 8 * w, 8);
            for (uint32_t bit = 0; bit < 64; bit++)
                if (word >> bit & 1)
                    p.sack.insert(cum + 64 * w + bit);
        }
    }
    p.payload.assign(b.begin() + kBaseLen + op->hdr_len, b.end());
    return p;
}

std::string Describe(const Packet &p) {
    std::string s = p.opcode;
    char buf[64];
    const Opcode *op = OpcodeByName(p.opcode);
    auto add = [&](const Field &f) {
        if (std::string(f.name) == "sack") {
            s += " sack={";
            int n = 0;
            for (uint32_t psn : p.sack) {
                std::snprintf(buf, sizeof(buf), "%s0x%x", n++ ? "," : "", psn);
                s += buf;
            }
            s += "}";
            return;
        }
        auto it = p.fields.find(f.name);
        if (it == p.fields.end() || std::string(f.name) == "opcode" ||
            std::string(f.name) == "version")
            return;
        if (std::string(f.name).rfind("rsvd", 0) == 0 && !it->second)
            return;
        std::snprintf(buf, sizeof(buf), " %s=0x%" PRIx64, f.name, it->second);
        s += buf;
    };
    for (auto &f : kBase)
        add(f);
    if (op)
        for (auto &f : op->fields)
            add(f);
    if (!p.payload.empty())
        s += " payload=" + std::to_string(p.payload.size());
    return s;
}

} // namespace conform
