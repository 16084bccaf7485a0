// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "nl.h"

#include <cstring>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

namespace metaroce::nl {

namespace {

// Requests are small; the largest (DEV_SET with everything) is under 200 bytes.
constexpr size_t kRequestMax = 4096;

template <typename T> T load(const uint8_t *p) {
    T v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}

std::string_view type_name(abi::Type t) {
    switch (t) {
    case abi::Type::U8:
        return "u8";
    case abi::Type::U16:
        return "u16";
    case abi::Type::U32:
        return "u32";
    case abi::Type::U64:
        return "u64";
    case abi::Type::String:
        return "string";
    case abi::Type::Binary:
        return "binary";
    case abi::Type::Nest:
        return "nest";
    default:
        return "pad";
    }
}

size_t scalar_len(abi::Type t) {
    switch (t) {
    case abi::Type::U8:
        return 1;
    case abi::Type::U16:
        return 2;
    case abi::Type::U32:
        return 4;
    case abi::Type::U64:
        return 8;
    default:
        return 0;
    }
}

[[noreturn]] void malformed(const std::string &what) {
    throw MalformedError("malformed reply from the kernel: " + what);
}

// Walk a run of attributes; calls fn(type, attr, payload) for each.
template <typename Fn>
void walk(std::span<const uint8_t> bytes, const std::string &where, Fn &&fn) {
    size_t off = 0;
    while (off < bytes.size()) {
        if (bytes.size() - off < NLA_HDRLEN)
            malformed(where + ": " + std::to_string(bytes.size() - off) +
                      " stray bytes after the attributes");
        uint16_t len = load<uint16_t>(&bytes[off]);
        uint16_t type = load<uint16_t>(&bytes[off + 2]) & NLA_TYPE_MASK;
        if (len < NLA_HDRLEN || len > bytes.size() - off)
            malformed(where + ": attribute " + std::to_string(type) + " has length " +
                      std::to_string(len) + ", " + std::to_string(bytes.size() - off) +
                      " bytes are left");
        auto attr = reinterpret_cast<const nlattr *>(&bytes[off]);
        fn(type, attr, bytes.subspan(off + NLA_HDRLEN, len - NLA_HDRLEN));
        off += std::min<size_t>(NLA_ALIGN(len), bytes.size() - off);
    }
}

} // namespace

Builder::Builder(uint16_t type, uint16_t flags, uint32_t seq, uint8_t cmd, uint8_t version)
    : buf_(kRequestMax) {
    nlh_ = mnl_nlmsg_put_header(buf_.data());
    nlh_->nlmsg_type = type;
    nlh_->nlmsg_flags = flags;
    nlh_->nlmsg_seq = seq;
    auto g = static_cast<genlmsghdr *>(mnl_nlmsg_put_extra_header(nlh_, sizeof(genlmsghdr)));
    g->cmd = cmd;
    g->version = version;
}

void Builder::check(bool fits) {
    if (!fits)
        throw std::length_error("netlink request too long");
}

Builder &Builder::u8(uint16_t type, uint8_t v) {
    check(mnl_attr_put_u8_check(nlh_, buf_.size(), type, v));
    return *this;
}

Builder &Builder::u16(uint16_t type, uint16_t v) {
    check(mnl_attr_put_u16_check(nlh_, buf_.size(), type, v));
    return *this;
}

Builder &Builder::u32(uint16_t type, uint32_t v) {
    check(mnl_attr_put_u32_check(nlh_, buf_.size(), type, v));
    return *this;
}

Builder &Builder::u64(uint16_t type, uint64_t v) {
    check(mnl_attr_put_u64_check(nlh_, buf_.size(), type, v));
    return *this;
}

Builder &Builder::str(uint16_t type, std::string_view v) {
    std::string s(v); // NUL-terminated copy
    check(mnl_attr_put_strz_check(nlh_, buf_.size(), type, s.c_str()));
    return *this;
}

Builder &Builder::nest_begin(uint16_t type) {
    nlattr *start = mnl_attr_nest_start_check(nlh_, buf_.size(), type);
    check(start != nullptr);
    // Strict validation in the kernel wants the flag on every nest.
    start->nla_type |= NLA_F_NESTED;
    nests_.push_back(start);
    return *this;
}

Builder &Builder::nest_end() {
    mnl_attr_nest_end(nlh_, nests_.back());
    nests_.pop_back();
    return *this;
}

Bytes Builder::finish() {
    if (!nests_.empty())
        throw std::logic_error("netlink request with an open nest");
    Bytes out(buf_.begin(), buf_.begin() + nlh_->nlmsg_len);
    return out;
}

std::span<const uint8_t> payload(const nlattr *attr) {
    auto p = reinterpret_cast<const uint8_t *>(attr);
    return {p + NLA_HDRLEN, static_cast<size_t>(load<uint16_t>(p) - NLA_HDRLEN)};
}

namespace {

void check_attr(const abi::Attr &a, std::span<const uint8_t> data, const std::string &where) {
    std::string name = where + "/" + std::string(a.name);
    size_t want = scalar_len(a.type);
    if (want && data.size() != want)
        malformed(name + " has " + std::to_string(data.size()) + " bytes, a " +
                  std::string(type_name(a.type)) + " has " + std::to_string(want));
    if (a.type == abi::Type::String) {
        if (data.empty() || data.back() != 0)
            malformed(name + " is a string without its terminating NUL");
        size_t chars = std::strlen(reinterpret_cast<const char *>(data.data()));
        if (chars != data.size() - 1)
            malformed(name + " has a NUL inside");
        if (chars > a.max_len)
            malformed(name + " is " + std::to_string(chars) + " characters long, at most " +
                      std::to_string(a.max_len) + " are allowed");
    }
    if (a.type == abi::Type::Binary && (data.size() < a.min_len || data.size() > a.max_len))
        malformed(name + " has " + std::to_string(data.size()) + " bytes, " +
                  (a.min_len == a.max_len
                       ? std::to_string(a.min_len)
                       : std::to_string(a.min_len) + " to " + std::to_string(a.max_len)) +
                  " expected");
}

} // namespace

Attrs Attrs::parse(const abi::AttrSet &set, std::span<const uint8_t> bytes) {
    return parse_at(set, bytes, std::string(set.name));
}

Attrs Attrs::parse_at(const abi::AttrSet &set, std::span<const uint8_t> bytes,
                      const std::string &where) {
    Attrs out(set);
    walk(bytes, where, [&](uint16_t type, const nlattr *attr, std::span<const uint8_t> data) {
        const abi::Attr *a = set.find(type);
        if (!a || a->type == abi::Type::Pad || a->type == abi::Type::Unused)
            return; // padding, or newer than us
        check_attr(*a, data, where);
        if (a->type == abi::Type::Nest && a->nested)
            parse_at(*a->nested, data, where + "/" + std::string(a->name));
        auto &slot = out.by_type_[type];
        if (!slot.empty() && !a->multi)
            malformed(where + "/" + std::string(a->name) + " appears twice");
        slot.push_back(attr);
    });
    return out;
}

bool Attrs::has(uint16_t type) const {
    return type < by_type_.size() && !by_type_[type].empty();
}

const nlattr *Attrs::first(uint16_t type, abi::Type want) const {
    const abi::Attr *a = set_->find(type);
    if (!a || a->type != want)
        throw std::logic_error("attribute " + std::to_string(type) + " of set " +
                               std::string(set_->name) + " is not a " +
                               std::string(type_name(want)));
    return has(type) ? by_type_[type].front() : nullptr;
}

std::optional<uint8_t> Attrs::u8(uint16_t type) const {
    auto a = first(type, abi::Type::U8);
    return a ? std::optional(payload(a)[0]) : std::nullopt;
}

std::optional<uint16_t> Attrs::u16(uint16_t type) const {
    auto a = first(type, abi::Type::U16);
    return a ? std::optional(load<uint16_t>(payload(a).data())) : std::nullopt;
}

std::optional<uint32_t> Attrs::u32(uint16_t type) const {
    auto a = first(type, abi::Type::U32);
    return a ? std::optional(load<uint32_t>(payload(a).data())) : std::nullopt;
}

std::optional<uint64_t> Attrs::u64(uint16_t type) const {
    auto a = first(type, abi::Type::U64);
    return a ? std::optional(load<uint64_t>(payload(a).data())) : std::nullopt;
}

std::optional<std::string> Attrs::str(uint16_t type) const {
    auto a = first(type, abi::Type::String);
    if (!a)
        return std::nullopt;
    auto p = payload(a);
    return std::string(reinterpret_cast<const char *>(p.data()), p.size() - 1);
}

std::optional<std::span<const uint8_t>> Attrs::bin(uint16_t type) const {
    auto a = first(type, abi::Type::Binary);
    return a ? std::optional(payload(a)) : std::nullopt;
}

std::optional<Attrs> Attrs::nest(uint16_t type) const {
    auto a = first(type, abi::Type::Nest);
    if (!a)
        return std::nullopt;
    return parse(nested_set(type), payload(a));
}

std::vector<Attrs> Attrs::nests(uint16_t type) const {
    first(type, abi::Type::Nest);
    std::vector<Attrs> out;
    if (has(type))
        for (auto a : by_type_[type])
            out.push_back(parse(nested_set(type), payload(a)));
    return out;
}

const abi::AttrSet &Attrs::nested_set(uint16_t type) const {
    const abi::AttrSet *nested = set_->find(type)->nested;
    if (!nested)
        throw std::logic_error("nest without a set; use list()");
    return *nested;
}

std::vector<Attrs> Attrs::list(uint16_t type, const abi::AttrSet &item) const {
    auto a = first(type, abi::Type::Nest);
    std::vector<Attrs> out;
    if (!a)
        return out;
    std::string where = std::string(set_->name) + "/" + std::string(set_->find(type)->name);
    walk(payload(a), where, [&](uint16_t, const nlattr *, std::span<const uint8_t> data) {
        out.push_back(parse_at(item, data, where + "/" + std::string(item.name)));
    });
    return out;
}

std::vector<std::pair<std::string_view, uint64_t>> Attrs::scalars() const {
    std::vector<std::pair<std::string_view, uint64_t>> out;
    for (uint16_t t = 0; t < by_type_.size(); t++) {
        if (by_type_[t].empty())
            continue;
        auto p = payload(by_type_[t].front());
        switch (set_->attrs[t].type) {
        case abi::Type::U8:
            out.emplace_back(set_->attrs[t].name, p[0]);
            break;
        case abi::Type::U16:
            out.emplace_back(set_->attrs[t].name, load<uint16_t>(p.data()));
            break;
        case abi::Type::U32:
            out.emplace_back(set_->attrs[t].name, load<uint32_t>(p.data()));
            break;
        case abi::Type::U64:
            out.emplace_back(set_->attrs[t].name, load<uint64_t>(p.data()));
            break;
        default:
            break;
        }
    }
    return out;
}

std::vector<std::span<const uint8_t>> split(std::span<const uint8_t> datagram) {
    std::vector<std::span<const uint8_t>> out;
    size_t off = 0;
    while (off < datagram.size()) {
        size_t left = datagram.size() - off;
        if (left < NLMSG_HDRLEN)
            malformed(std::to_string(left) + " bytes after the last message");
        uint32_t len = load<uint32_t>(&datagram[off]);
        if (len < NLMSG_HDRLEN || len > left)
            malformed("a message of length " + std::to_string(len) + " in the " +
                      std::to_string(left) + " bytes left of a datagram");
        out.push_back(datagram.subspan(off, len));
        off += std::min<size_t>(NLMSG_ALIGN(len), left);
    }
    return out;
}

Header header(std::span<const uint8_t> msg) {
    Header h;
    h.len = load<uint32_t>(&msg[0]);
    h.type = load<uint16_t>(&msg[4]);
    h.flags = load<uint16_t>(&msg[6]);
    h.seq = load<uint32_t>(&msg[8]);
    h.pid = load<uint32_t>(&msg[12]);
    return h;
}

Genl genl(std::span<const uint8_t> msg) {
    if (msg.size() < NLMSG_HDRLEN + GENL_HDRLEN)
        malformed("a generic netlink message of " + std::to_string(msg.size()) + " bytes");
    return {msg[NLMSG_HDRLEN], msg[NLMSG_HDRLEN + 1], msg.subspan(NLMSG_HDRLEN + GENL_HDRLEN)};
}

} // namespace metaroce::nl
