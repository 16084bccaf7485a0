// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "units.h"

#include "metaroce-netlink.h"

#include <array>
#include <cctype>
#include <cstdio>

namespace metaroce::units {

namespace {

std::string quoted(std::string_view s) {
    return "\"" + std::string(s) + "\"";
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size())
        return false;
    for (size_t i = 0; i < a.size(); i++)
        if (std::tolower(static_cast<unsigned char>(a[i])) !=
            std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

// A non-negative decimal "123" or "12.375" as value * 10^frac_digits.
struct Decimal {
    uint64_t mantissa = 0; // all digits
    unsigned frac_digits = 0;
};

// Parses the number at the start of @s; the rest is the unit.
bool split_decimal(std::string_view s, Decimal &d, std::string_view &unit) {
    size_t i = 0;
    bool digits = false, dot = false;
    for (; i < s.size(); i++) {
        char c = s[i];
        if (c >= '0' && c <= '9') {
            if (d.mantissa > (UINT64_MAX - 9) / 10 || d.frac_digits >= 18)
                return false;
            d.mantissa = d.mantissa * 10 + static_cast<uint64_t>(c - '0');
            digits = true;
            if (dot)
                d.frac_digits++;
        } else if (c == '.' && !dot) {
            dot = true;
        } else {
            break;
        }
    }
    unit = s.substr(i);
    return digits && !(dot && d.frac_digits == 0);
}

uint64_t pow10(unsigned n) {
    uint64_t p = 1;
    while (n--)
        p *= 10;
    return p;
}

// d * scale, rounded to the nearest integer; false on overflow.
bool scaled(const Decimal &d, uint64_t scale, uint64_t &out) {
    unsigned __int128 v = static_cast<unsigned __int128>(d.mantissa) * scale;
    uint64_t div = pow10(d.frac_digits);
    v = (v + div / 2) / div;
    if (v > UINT64_MAX)
        return false;
    out = static_cast<uint64_t>(v);
    return true;
}

// value / div with at most @decimals decimals, trailing zeros dropped.
std::string fixed(uint64_t value, uint64_t div, unsigned decimals) {
    uint64_t scale = pow10(decimals);
    unsigned __int128 v = (static_cast<unsigned __int128>(value) * scale + div / 2) / div;
    uint64_t whole = static_cast<uint64_t>(v / scale);
    uint64_t frac = static_cast<uint64_t>(v % scale);
    std::string out = std::to_string(whole);
    if (frac) {
        std::string f = std::to_string(frac);
        f.insert(0, decimals - f.size(), '0');
        while (f.back() == '0')
            f.pop_back();
        out += "." + f;
    }
    return out;
}

// value / 2^bits exactly (every such fraction has a finite decimal form).
std::string exact(uint64_t value, unsigned bits) {
    uint64_t one = uint64_t{1} << bits;
    std::string out = std::to_string(value >> bits);
    uint64_t frac = value & (one - 1);
    if (frac) {
        // frac / 2^bits = frac * 5^bits / 10^bits
        uint64_t five = 1;
        for (unsigned i = 0; i < bits; i++)
            five *= 5;
        std::string f = std::to_string(frac * five);
        f.insert(0, bits - f.size(), '0');
        while (f.back() == '0')
            f.pop_back();
        out += "." + f;
    }
    return out;
}

} // namespace

uint64_t parse_uint(std::string_view s, uint64_t min, uint64_t max, std::string_view what) {
    uint64_t v = 0;
    if (s.empty())
        throw Error(std::string(what) + " needs a number");
    for (char c : s) {
        if (c < '0' || c > '9')
            throw Error(std::string(what) + " " + quoted(s) + " is not a number");
        if (v > (UINT64_MAX - 9) / 10) {
            v = UINT64_MAX;
            break;
        }
        v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    if (v < min || v > max)
        throw Error(std::string(what) + " " + std::string(s) + " is out of range " +
                    std::to_string(min) + "-" + std::to_string(max));
    return v;
}

bool parse_on_off(std::string_view s, std::string_view what) {
    if (s == "on")
        return true;
    if (s == "off")
        return false;
    throw Error(std::string(what) + " takes on or off, not " + quoted(s));
}

uint32_t parse_rate_kbps(std::string_view s, std::string_view what) {
    static constexpr std::array<std::pair<std::string_view, uint64_t>, 5> kUnits{{
        {"bit", 1},
        {"kbit", 1000},
        {"mbit", 1000000},
        {"gbit", 1000000000},
        {"tbit", 1000000000000},
    }};
    Decimal d;
    std::string_view unit;
    if (!split_decimal(s, d, unit))
        throw Error(std::string(what) + " " + quoted(s) + " is not a rate (e.g. 10Gbit)");
    for (auto &[name, bits] : kUnits) {
        if (!iequals(unit, name))
            continue;
        uint64_t bps;
        if (!scaled(d, bits, bps) || bps / 1000 + (bps % 1000 >= 500) > UINT32_MAX)
            throw Error(std::string(what) + " " + std::string(s) + " is above " + rate(UINT32_MAX));
        uint64_t kbps = (bps + 500) / 1000;
        if (kbps == 0)
            throw Error(std::string(what) + " " + std::string(s) + " is below 1Kbit");
        return static_cast<uint32_t>(kbps);
    }
    throw Error(std::string(what) + " " + quoted(s) +
                (unit.empty() ? " needs a unit: bit, Kbit, Mbit, Gbit or Tbit"
                              : " has an unknown unit; use bit, Kbit, Mbit, Gbit or Tbit"));
}

uint64_t parse_time_ns(std::string_view s, std::string_view what) {
    static constexpr std::array<std::pair<std::string_view, uint64_t>, 4> kUnits{{
        {"ns", 1},
        {"us", 1000},
        {"ms", 1000000},
        {"s", 1000000000},
    }};
    Decimal d;
    std::string_view unit;
    if (!split_decimal(s, d, unit))
        throw Error(std::string(what) + " " + quoted(s) + " is not a time (e.g. 50us)");
    for (auto &[name, ns] : kUnits) {
        if (unit != name)
            continue;
        uint64_t v;
        if (!scaled(d, ns, v))
            throw Error(std::string(what) + " " + std::string(s) + " is too long");
        return v;
    }
    throw Error(std::string(what) + " " + quoted(s) +
                (unit.empty() ? " needs a unit: ns, us, ms or s"
                              : " has an unknown unit; use ns, us, ms or s"));
}

uint32_t parse_window(std::string_view s, std::string_view what) {
    Decimal d;
    std::string_view unit;
    uint64_t v;
    if (!split_decimal(s, d, unit) || !unit.empty())
        throw Error(std::string(what) + " " + quoted(s) + " is not a number of packets");
    if (!scaled(d, METAROCE_WINDOW_UNIT, v) || v > UINT32_MAX)
        throw Error(std::string(what) + " " + std::string(s) + " is too large");
    return static_cast<uint32_t>(v);
}

namespace {

// The smallest unit that shows the value below 1000 after rounding.
template <size_t N>
std::string with_unit(uint64_t value, const std::array<std::pair<const char *, uint64_t>, N> &units,
                      unsigned decimals) {
    for (size_t i = 0; i < N; i++) {
        auto [name, div] = units[i];
        std::string s = fixed(value, div, decimals);
        if (i + 1 == N || s.substr(0, s.find('.')).size() <= 3)
            return s + name;
    }
    return {};
}

} // namespace

std::string rate(uint64_t kbps) {
    static constexpr std::array<std::pair<const char *, uint64_t>, 4> kUnits{{
        {"Kbit", 1},
        {"Mbit", 1000},
        {"Gbit", 1000000},
        {"Tbit", 1000000000},
    }};
    return with_unit(kbps, kUnits, 2);
}

std::string time(uint64_t ns) {
    static constexpr std::array<std::pair<const char *, uint64_t>, 4> kUnits{{
        {"ns", 1},
        {"us", 1000},
        {"ms", 1000000},
        {"s", 1000000000},
    }};
    return with_unit(ns, kUnits, 1);
}

std::string window(uint32_t units) {
    return fixed(units, METAROCE_WINDOW_UNIT, 2);
}

std::string alpha(uint32_t units) {
    std::string s = fixed(units, METAROCE_ALPHA_UNIT, 3);
    // Always three decimals, so that columns line up.
    auto dot = s.find('.');
    if (dot == std::string::npos)
        return s + ".000";
    return s + std::string(3 - (s.size() - dot - 1), '0');
}

std::string window_exact(uint32_t units) {
    return exact(units, 10);
}

std::string alpha_exact(uint32_t units) {
    return exact(units, 16);
}

} // namespace metaroce::units
