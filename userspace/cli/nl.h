// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Netlink messages as bytes: building requests (on libmnl) and reading
// attributes strictly against the tables of abi.h. Nothing here does I/O.
#ifndef METAROCE_CLI_NL_H
#define METAROCE_CLI_NL_H

#include "abi.h"

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

struct nlattr;
struct nlmsghdr;

namespace metaroce::nl {

using Bytes = std::vector<uint8_t>;

// A reply that breaks the netlink format or the ABI's types.
class MalformedError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// One request: nlmsghdr, genlmsghdr, attributes.
class Builder {
public:
    Builder(uint16_t type, uint16_t flags, uint32_t seq, uint8_t cmd, uint8_t version);
    Builder &u8(uint16_t type, uint8_t v);
    Builder &u16(uint16_t type, uint16_t v);
    Builder &u32(uint16_t type, uint32_t v);
    Builder &u64(uint16_t type, uint64_t v);
    Builder &str(uint16_t type, std::string_view v);
    Builder &nest_begin(uint16_t type);
    Builder &nest_end();
    Bytes finish();

private:
    void check(bool fits);
    Bytes buf_;
    nlmsghdr *nlh_;
    std::vector<nlattr *> nests_;
};

// The attributes of one set in one message or nest, checked on parse: every
// known attribute has its exact length, strings end in NUL within their
// limit, nests are well formed all the way down, and only multi attributes
// repeat. Unknown attribute numbers are skipped (newer kernels add some).
// Points into the parsed bytes, which must outlive it.
class Attrs {
public:
    static Attrs parse(const abi::AttrSet &set, std::span<const uint8_t> payload);

    const abi::AttrSet &set() const { return *set_; }
    bool has(uint16_t type) const;
    std::optional<uint8_t> u8(uint16_t type) const;
    std::optional<uint16_t> u16(uint16_t type) const;
    std::optional<uint32_t> u32(uint16_t type) const;
    std::optional<uint64_t> u64(uint16_t type) const;
    std::optional<std::string> str(uint16_t type) const;
    std::optional<std::span<const uint8_t>> bin(uint16_t type) const;
    std::optional<Attrs> nest(uint16_t type) const;
    std::vector<Attrs> nests(uint16_t type) const; // every occurrence
    // A nest of numbered nests (nlctrl's lists), each parsed as @item.
    std::vector<Attrs> list(uint16_t type, const abi::AttrSet &item) const;
    // Scalars present, in attribute order: (spec name, value).
    std::vector<std::pair<std::string_view, uint64_t>> scalars() const;

private:
    explicit Attrs(const abi::AttrSet &set) : set_(&set), by_type_(set.attrs.size()) {}
    static Attrs parse_at(const abi::AttrSet &set, std::span<const uint8_t> payload,
                          const std::string &where);
    const abi::AttrSet &nested_set(uint16_t type) const;
    const nlattr *first(uint16_t type, abi::Type want) const;
    const abi::AttrSet *set_;
    std::vector<std::vector<const nlattr *>> by_type_;
};

// The payload of an attribute as seen by a parser: bounds-checked walk.
std::span<const uint8_t> payload(const nlattr *attr);

// Split a datagram into its messages; throws MalformedError on a bad length.
std::vector<std::span<const uint8_t>> split(std::span<const uint8_t> datagram);

// The message's header, copied out (messages need not be aligned).
struct Header {
    uint32_t len;
    uint16_t type, flags;
    uint32_t seq, pid;
};
Header header(std::span<const uint8_t> msg);

// A generic netlink message: its command and its attribute bytes.
struct Genl {
    uint8_t cmd, version;
    std::span<const uint8_t> attrs;
};
Genl genl(std::span<const uint8_t> msg);

} // namespace metaroce::nl

#endif
