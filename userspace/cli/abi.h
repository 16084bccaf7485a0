// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The attribute sets of uapi/metaroce-netlink.h as tables: each attribute's
// name (the spec's), type and length rules, so that replies can be checked
// strictly and errors can name attributes. Indexed by attribute type.
#ifndef METAROCE_CLI_ABI_H
#define METAROCE_CLI_ABI_H

#include <cstdint>
#include <span>
#include <string_view>

namespace metaroce::abi {

enum class Type { Unused, Pad, U8, U16, U32, U64, String, Binary, Nest };

struct AttrSet;

struct Attr {
    std::string_view name; // empty: no attribute of this number
    Type type = Type::Unused;
    const AttrSet *nested = nullptr;
    uint16_t min_len = 0; // Binary: payload bytes; String: 0
    uint16_t max_len = 0; // Binary: payload bytes; String: characters
    bool multi = false;   // may appear more than once
};

struct AttrSet {
    std::string_view name;
    std::span<const Attr> attrs; // [type]

    const Attr *find(uint16_t type) const {
        return type < attrs.size() && !attrs[type].name.empty() ? &attrs[type] : nullptr;
    }
};

extern const AttrSet kDev, kCc, kStats, kStatsEntry, kKey, kQp, kQpStats, kPath, kPathStats, kEvent,
    kPlane;
// nlctrl's reply to CTRL_CMD_GETFAMILY, and the extended ACK.
extern const AttrSet kCtrl, kCtrlGroup, kExtack, kPolicy;

// The set a message of our family with this command carries; null if none.
const AttrSet *set_for_cmd(uint8_t cmd);

} // namespace metaroce::abi

#endif
