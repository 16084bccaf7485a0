// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Numbers with units, both ways: what `dev set` accepts and what `show`
// prints. ABI units: rates kbit/s, times ns, windows 1/1024 packet, alpha
// 1/65536. Parsers throw units::Error with a message naming the value.
#ifndef METAROCE_CLI_UNITS_H
#define METAROCE_CLI_UNITS_H

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace metaroce::units {

class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A plain decimal integer in [min, max].
uint64_t parse_uint(std::string_view s, uint64_t min, uint64_t max, std::string_view what);
bool parse_on_off(std::string_view s, std::string_view what);
// "12.5Mbit", "10gbit", "800kbit", "1tbit" (a unit is required) to kbit/s.
uint32_t parse_rate_kbps(std::string_view s, std::string_view what);
// "50us", "1.5ms", "2s", "800ns" to ns.
uint64_t parse_time_ns(std::string_view s, std::string_view what);
// Packets, "16" or "0.25", to 1/1024 packet (rounded to the nearest).
uint32_t parse_window(std::string_view s, std::string_view what);

// "12.5Mbit", "10Gbit", "800Kbit": at most two decimals.
std::string rate(uint64_t kbps);
// "850ns", "45.2us", "12.3ms", "1.5s": one decimal at most.
std::string time(uint64_t ns);
// Windows in packets: "16", "256.5", "0.25" (two decimals at most).
std::string window(uint32_t units);
// Alpha as a fraction with three decimals: "0.063".
std::string alpha(uint32_t units);
// Exact decimal values for JSON: 262656 -> "256.5", 1 -> "0.0009765625".
std::string window_exact(uint32_t units);
std::string alpha_exact(uint32_t units);

} // namespace metaroce::units

#endif
