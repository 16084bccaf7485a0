// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The runner's own MetaRoCE codec, written from protocol.rst's tables and
// not from the kernel's wire.c, so that a bug in wire.c cannot hide in both
// ends of a case. It checks nothing: it writes any value into any field (a
// case makes malformed packets by naming what is wrong) and reads every
// field of a packet it knows the opcode of.
#pragma once

#include "target.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace conform {

constexpr uint32_t kBaseLen = 24;

struct Field {
    const char *name;
    uint32_t at;   // from the start of the packet
    uint32_t size; // bytes, big-endian; the ACK's sack is 32
};

struct Opcode {
    const char *name;
    uint8_t value;
    uint32_t hdr_len; // the opcode header, after the base header
    bool payload;
    std::vector<Field> fields; // of the opcode header
};

const std::vector<Field> &BaseFields();
const Opcode *OpcodeByName(const std::string &name);
const Opcode *OpcodeByValue(uint8_t value);
const std::vector<Opcode> &Opcodes();

// A packet as fields by name (base and opcode header), the SACK map as the
// set of PSNs it reports, and the payload.
struct Packet {
    std::string opcode; // its name, or "0x.." for an unknown value
    std::map<std::string, uint64_t> fields;
    std::set<uint32_t> sack;
    Bytes payload;
};

// The bytes of @p: base and opcode header, then the payload.
Bytes Encode(const Packet &p);
// @b decoded; nullopt (with *why) if shorter than its headers or of an
// unknown opcode.
std::optional<Packet> Decode(const Bytes &b, std::string *why);
// One line for a person: "ACK path=3 psn=0x102 cum_psn=0x103 sack={0x105}".
std::string Describe(const Packet &p);

} // namespace conform
