// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "settings.h"

#include "metaroce-netlink.h"
#include "units.h"

#include <array>
#include <cstdint>

namespace metaroce::settings {

namespace {

using enum Kind;

const std::array<Setting, 17> kSettings{{
    {"udp-port", &abi::kDev, METAROCE_A_DEV_UDP_PORT, Uint, 1, 65535,
     "UDP port of the protocol (not while QPs exist)"},
    {"paths", &abi::kDev, METAROCE_A_DEV_PATHS, Uint, METAROCE_PATHS_MIN, METAROCE_PATHS_MAX,
     "paths (UDP source ports) per connection"},
    {"fail-after", &abi::kDev, METAROCE_A_DEV_FAIL_AFTER, Uint, METAROCE_FAIL_AFTER_MIN,
     METAROCE_FAIL_AFTER_MAX, "timeouts in a row that fail a path"},
    {"cc", &abi::kCc, METAROCE_A_CC_ENABLED, OnOff, 0, 1, "congestion control"},
    {"cc-ecn", &abi::kCc, METAROCE_A_CC_ECN, OnOff, 0, 1, "react to ECN marks"},
    {"cc-delay", &abi::kCc, METAROCE_A_CC_DELAY, OnOff, 0, 1, "react to delay"},
    {"cc-loss", &abi::kCc, METAROCE_A_CC_LOSS, OnOff, 0, 1, "react to loss bursts"},
    {"cc-gain", &abi::kCc, METAROCE_A_CC_GAIN_SHIFT, Uint, METAROCE_CC_GAIN_SHIFT_MIN,
     METAROCE_CC_GAIN_SHIFT_MAX, "DCTCP gain g = 1/2^N"},
    {"cc-ai", &abi::kCc, METAROCE_A_CC_AI, Window, METAROCE_CC_AI_MIN, METAROCE_CC_AI_MAX,
     "additive increase per RTT, packets"},
    {"init-path-window", &abi::kCc, METAROCE_A_CC_INIT_PATH_WINDOW, Window, METAROCE_CC_WINDOW_MIN,
     METAROCE_CC_PATH_WINDOW_MAX, "packets"},
    {"init-conn-window", &abi::kCc, METAROCE_A_CC_INIT_CONN_WINDOW, Window, METAROCE_CC_WINDOW_MIN,
     METAROCE_CC_CONN_WINDOW_MAX, "packets"},
    {"max-path-window", &abi::kCc, METAROCE_A_CC_MAX_PATH_WINDOW, Window, METAROCE_CC_WINDOW_MIN,
     METAROCE_CC_PATH_WINDOW_MAX, "packets"},
    {"max-conn-window", &abi::kCc, METAROCE_A_CC_MAX_CONN_WINDOW, Window, METAROCE_CC_WINDOW_MIN,
     METAROCE_CC_CONN_WINDOW_MAX, "packets"},
    {"min-window", &abi::kCc, METAROCE_A_CC_MIN_WINDOW, Window, METAROCE_CC_MIN_WINDOW_MIN,
     METAROCE_CC_MIN_WINDOW_MAX, "packets; below 1 paces"},
    {"target-delay", &abi::kCc, METAROCE_A_CC_TARGET_DELAY_NS, Time,
     METAROCE_CC_TARGET_DELAY_MIN_NS, METAROCE_CC_TARGET_DELAY_MAX_NS,
     "queueing delay tolerated above the base RTT"},
    {"loss-burst", &abi::kCc, METAROCE_A_CC_LOSS_BURST, Uint, METAROCE_CC_LOSS_BURST_MIN,
     METAROCE_CC_LOSS_BURST_MAX, "losses in one RTT that mean congestion"},
    // "auto" (0): the netdev's link speed
    {"ingress-rate", &abi::kDev, METAROCE_A_DEV_INGRESS_KBPS, Rate, 0, UINT32_MAX,
     "capacity shared out in rate hints, or auto"},
}};

} // namespace

std::span<const Setting> all() {
    return kSettings;
}

const Setting *find(std::string_view keyword) {
    for (const Setting &s : kSettings)
        if (s.keyword == keyword)
            return &s;
    return nullptr;
}

const Setting *find(const abi::AttrSet &set, uint16_t attr) {
    for (const Setting &s : kSettings)
        if (s.set == &set && s.attr == attr)
            return &s;
    return nullptr;
}

uint64_t parse(const Setting &s, std::string_view text) {
    uint64_t v = 0;
    switch (s.kind) {
    case Uint:
        return units::parse_uint(text, s.min, s.max, s.keyword);
    case OnOff:
        return units::parse_on_off(text, s.keyword);
    case Window:
        v = units::parse_window(text, s.keyword);
        break;
    case Time:
        v = units::parse_time_ns(text, s.keyword);
        break;
    case Rate:
        return text == "auto" ? 0 : units::parse_rate_kbps(text, s.keyword);
    }
    if (v < s.min || v > s.max)
        throw units::Error(std::string(s.keyword) + " " + std::string(text) + " is out of range " +
                           show(s.kind, s.min) + "-" + show(s.kind, s.max));
    return v;
}

std::string show(Kind kind, uint64_t value) {
    switch (kind) {
    case OnOff:
        return value ? "on" : "off";
    case Window:
        return units::window_exact(static_cast<uint32_t>(value));
    case Time:
        return units::time(value);
    case Rate:
        return value ? units::rate(value) : "auto";
    case Uint:
        break;
    }
    return std::to_string(value);
}

} // namespace metaroce::settings
