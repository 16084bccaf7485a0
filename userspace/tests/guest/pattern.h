// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Message bytes that check themselves, for the guest programs that verify
// data (mr_verify, mr_craft --fuzz): byte k of a message is a function of
// its key and k, so a lost, misplaced or stale byte shows; bytes around
// the message hold a guard value, so a write past it shows too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace guest {

// What memory outside any message holds, unless a caller picks another.
constexpr uint8_t kGuardByte = 0xa5;

inline uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// The bytes of one message: byte k is a function of the message key and k.
class Pattern {
public:
    explicit Pattern(uint64_t key) : key_(key) {}
    uint8_t at(uint64_t k) {
        if (k >> 3 != word_index_) {
            word_index_ = k >> 3;
            word_ = mix(key_ ^ mix(word_index_));
        }
        return static_cast<uint8_t>(word_ >> ((k & 7) * 8));
    }

private:
    uint64_t key_;
    uint64_t word_index_ = UINT64_MAX;
    uint64_t word_ = 0;
};

// A run of bytes inside a slot.
struct Piece {
    size_t off;
    uint32_t len;
};

inline void fill_pattern(uint8_t *buf, const std::vector<Piece> &pieces, uint32_t len,
                         uint64_t key) {
    Pattern p(key);
    uint64_t k = 0;
    for (const Piece &pc : pieces)
        for (uint32_t i = 0; i < pc.len && k < len; i++)
            buf[pc.off + i] = p.at(k++);
}

// The first wrong byte of [lo, hi) in @buf: the pieces hold message bytes
// 0..@len-1 in order (@expect gives byte k), everything else is guard.
struct Mismatch {
    size_t off;
    int64_t msg_off; // -1: a guard byte
    uint8_t want, got;
};
template <class Expect>
std::optional<Mismatch> check_region(const uint8_t *buf, size_t lo, size_t hi,
                                     const std::vector<Piece> &pieces, uint32_t len,
                                     Expect &&expect, uint8_t guard = kGuardByte) {
    size_t pos = lo;
    uint64_t k = 0;
    auto guard_until = [&](size_t end) -> std::optional<Mismatch> {
        for (; pos < end; pos++)
            if (buf[pos] != guard)
                return Mismatch{pos, -1, guard, buf[pos]};
        return std::nullopt;
    };
    for (const Piece &pc : pieces) {
        if (auto m = guard_until(pc.off))
            return m;
        for (uint32_t i = 0; i < pc.len; i++, pos++) {
            if (k < len) {
                uint8_t want = expect(k);
                if (buf[pos] != want)
                    return Mismatch{pos, static_cast<int64_t>(k), want, buf[pos]};
                k++;
            } else if (buf[pos] != guard) {
                return Mismatch{pos, -1, guard, buf[pos]};
            }
        }
    }
    return guard_until(hi);
}

inline std::optional<Mismatch> check_pattern(const uint8_t *buf, size_t lo, size_t hi,
                                             const std::vector<Piece> &pieces, uint32_t len,
                                             uint64_t key) {
    Pattern p(key);
    return check_region(buf, lo, hi, pieces, len, [&](uint64_t k) { return p.at(k); });
}

} // namespace guest
