// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Command-line options of mr-scale. Every value is checked; a bad one is an
// error message naming the option, never a crash.
#include "config.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <sstream>

namespace mrscale {
namespace {

// A number followed by a unit suffix, the suffix looked up in `units`.
bool ParseScaled(const std::string &s, const std::map<std::string, double> &units, double &out) {
    if (s.empty())
        return false;
    errno = 0;
    char *end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (errno || end == s.c_str() || !std::isfinite(v) || v < 0)
        return false;
    auto it = units.find(std::string(end));
    if (it == units.end())
        return false;
    out = v * it->second;
    return true;
}

const std::map<std::string, double> kRateUnits = {
    {"", 1},       {"bit", 1}, {"K", 1e3},    {"Kbit", 1e3}, {"M", 1e6},
    {"Mbit", 1e6}, {"G", 1e9}, {"Gbit", 1e9}, {"T", 1e12},   {"Tbit", 1e12},
};
const std::map<std::string, double> kTimeUnits = {
    {"ns", 1},
    {"us", 1e3},
    {"ms", 1e6},
    {"s", 1e9},
};
const std::map<std::string, double> kSizeUnits = {
    {"", 1},        {"B", 1},         {"K", 1024},    {"KiB", 1024},
    {"M", 1 << 20}, {"MiB", 1 << 20}, {"G", 1 << 30}, {"GiB", 1 << 30},
};

std::vector<std::string> SplitList(const std::string &s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
        out.push_back(item);
    return out;
}

bool ParseUint(const std::string &s, uint64_t lo, uint64_t hi, uint64_t &out) {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos)
        return false;
    errno = 0;
    unsigned long long v = std::strtoull(s.c_str(), nullptr, 10);
    if (errno || v < lo || v > hi)
        return false;
    out = v;
    return true;
}

struct Option {
    const char *name;
    const char *arg;
    const char *help;
    std::function<bool(const std::string &, Config &)> set;
};

bool SetRate(const std::string &s, uint64_t &out) {
    double v;
    if (!ParseScaled(s, kRateUnits, v) || v < 1e6 || v > 1e13)
        return false;
    out = static_cast<uint64_t>(v);
    return true;
}

bool SetTime(const std::string &s, uint64_t lo, uint64_t hi, uint64_t &out) {
    double v;
    if (s == "0" && lo == 0) { // no unit needed
        out = 0;
        return true;
    }
    if (!ParseScaled(s, kTimeUnits, v) || v < lo || v > hi)
        return false;
    out = static_cast<uint64_t>(v);
    return true;
}

bool SetTime(const std::string &s, uint64_t lo, uint64_t hi, std::optional<uint64_t> &out) {
    uint64_t v;
    if (!SetTime(s, lo, hi, v))
        return false;
    out = v;
    return true;
}

bool SetSize(const std::string &s, uint64_t lo, uint64_t hi, uint64_t &out) {
    double v;
    if (!ParseScaled(s, kSizeUnits, v) || v < lo || v > hi)
        return false;
    out = static_cast<uint64_t>(v);
    return true;
}

bool SetOpt(const std::string &s, uint64_t lo, uint64_t hi, std::optional<uint32_t> &out) {
    uint64_t v;
    if (!ParseUint(s, lo, hi, v))
        return false;
    out = static_cast<uint32_t>(v);
    return true;
}

bool SetOnOff(const std::string &s, std::optional<bool> &out) {
    if (s != "on" && s != "off")
        return false;
    out = s == "on";
    return true;
}

template <typename T>
bool SetList(const std::string &s, uint64_t lo, uint64_t hi, std::vector<T> &out) {
    std::vector<T> v;
    for (const auto &item : SplitList(s)) {
        uint64_t n;
        if (!ParseUint(item, lo, hi, n))
            return false;
        v.push_back(static_cast<T>(n));
    }
    if (v.empty())
        return false;
    out = v;
    return true;
}

// "one,incast,all2all": the planes' patterns.
bool SetPatterns(const std::string &s, std::vector<Pattern> &out) {
    std::vector<Pattern> v;
    size_t at = 0;
    for (;;) {
        const size_t end = s.find(',', at);
        const std::string w = s.substr(at, end == std::string::npos ? end : end - at);
        if (w == "one")
            v.push_back(Pattern::kOne);
        else if (w == "incast")
            v.push_back(Pattern::kIncast);
        else if (w == "all2all")
            v.push_back(Pattern::kAll2All);
        else
            return false;
        if (end == std::string::npos)
            break;
        at = end + 1;
    }
    out = v;
    return true;
}

// A plane, or -1 (or "none"): no plane fails.
bool SetPlane(const std::string &s, int32_t &out) {
    uint64_t v;
    if (s == "-1" || s == "none") {
        out = -1;
        return true;
    }
    if (!ParseUint(s, 0, MR_PLANES_MAX - 1, v))
        return false;
    out = static_cast<int32_t>(v);
    return true;
}

// A fraction of a time, 0-hi.
bool SetFrac(const std::string &s, double hi, double &out) {
    double v;
    if (!ParseScaled(s, {{"", 1}, {"%", 0.01}}, v) || v > hi)
        return false;
    out = v;
    return true;
}

const std::vector<Option> &BaseOptions() {
    static const std::vector<Option> opts = {
        {"rate", "RATE", "host links and the incast port (100G)",
         [](const std::string &s, Config &c) { return SetRate(s, c.rate_bps); }},
        {"delay", "TIME", "one-way delay of every link (1us)",
         [](const std::string &s, Config &c) { return SetTime(s, 1, 1e9, c.delay_ns); }},
        {"buffer", "SIZE", "buffer of each switch port (512K)",
         [](const std::string &s, Config &c) {
             return SetSize(s, 8192, 1ull << 30, c.buffer_bytes);
         }},
        {"red-min", "SIZE", "RED: queue where marking starts (64K)",
         [](const std::string &s, Config &c) {
             return SetSize(s, 0, 1ull << 30, c.red_min_bytes);
         }},
        {"red-max", "SIZE", "RED: queue where the probability reaches --red-pmax (256K)",
         [](const std::string &s, Config &c) {
             return SetSize(s, 1, 1ull << 30, c.red_max_bytes);
         }},
        {"red-pmax", "P", "RED: marking probability at --red-max, 0-1 (0.2)",
         [](const std::string &s, Config &c) {
             double v;
             if (!ParseScaled(s, {{"", 1}}, v) || v <= 0 || v > 1)
                 return false;
             c.red_pmax = v;
             return true;
         }},
        {"links", "N[,N...]", "ECMP: equal-cost spine links, 2-16 (4,8)",
         [](const std::string &s, Config &c) { return SetList(s, 2, 16, c.links); }},
        {"fabric-rate", "RATE", "ECMP: the spine links' rates added up (100G)",
         [](const std::string &s, Config &c) { return SetRate(s, c.fabric_bps); }},
        {"mtu", "BYTES", "RDMA MTU: 256, 512, 1024, 2048 or 4096 (4096)",
         [](const std::string &s, Config &c) {
             uint64_t v;
             if (!ParseUint(s, 256, 4096, v) || (v & (v - 1)))
                 return false;
             c.mtu = static_cast<uint32_t>(v);
             return true;
         }},
        {"paths", "N", "paths (UDP source ports) per connection, 1-64 (16)",
         [](const std::string &s, Config &c) {
             uint64_t v;
             if (!ParseUint(s, 1, 64, v))
                 return false;
             c.paths = static_cast<uint32_t>(v);
             return true;
         }},
        {"msg-size", "SIZE", "bytes per WRITE message (64K)",
         [](const std::string &s, Config &c) {
             uint64_t v;
             if (!SetSize(s, 1, 1u << 30, v))
                 return false;
             c.msg_bytes = static_cast<uint32_t>(v);
             return true;
         }},
        {"time-scale", "N", "the kernel's timing constants divided by N, 1-1000 (100)",
         [](const std::string &s, Config &c) {
             uint64_t v;
             if (!ParseUint(s, 1, 1000, v))
                 return false;
             c.time_scale = static_cast<uint32_t>(v);
             return true;
         }},
        {"rto-init", "TIME", "retransmission timeout before an RTT sample (kernel's / scale)",
         [](const std::string &s, Config &c) { return SetTime(s, 1000, 1e10, c.rto_init_ns); }},
        {"rto-min", "TIME", "RTO floor (kernel's / scale)",
         [](const std::string &s, Config &c) { return SetTime(s, 1000, 1e10, c.rto_min_ns); }},
        {"rto-max", "TIME", "RTO ceiling (kernel's / scale)",
         [](const std::string &s, Config &c) { return SetTime(s, 1000, 1e10, c.rto_max_ns); }},
        {"pto-min", "TIME", "tail probe floor (kernel's / scale)",
         [](const std::string &s, Config &c) { return SetTime(s, 100, 1e10, c.pto_min_ns); }},
        {"ack-delay", "TIME", "the longest a held ACK waits (kernel's / scale)",
         [](const std::string &s, Config &c) { return SetTime(s, 1, 1e10, c.ack_delay_ns); }},
        {"timer-tick", "TIME", "the RTO and probe timer's tick, as a jiffy (0: exact)",
         [](const std::string &s, Config &c) { return SetTime(s, 0, 1e9, c.timer_tick_ns); }},
        {"timer-late", "TIME", "every timer fires up to this late, at random (0)",
         [](const std::string &s, Config &c) { return SetTime(s, 0, 1e9, c.timer_late_ns); }},
        {"host-cpu", "TIME",
         "CPU time a packet costs to send, and to receive, on --host-cpus CPUs every "
         "endpoint shares, as a guest's (0: free)",
         [](const std::string &s, Config &c) { return SetTime(s, 0, 1e9, c.host_cpu_ns); }},
        {"host-cpus", "N", "the CPUs of --host-cpu (2)",
         [](const std::string &s, Config &c) {
             uint64_t v;
             if (!ParseUint(s, 1, 64, v))
                 return false;
             c.host_cpus = static_cast<uint32_t>(v);
             return true;
         }},
        {"host-rate", "RATE", "incast: the senders' links (--rate)",
         [](const std::string &s, Config &c) { return SetRate(s, c.host_rate_bps); }},
        {"ingress", "RATE",
         "incast: the receiver's ingress capacity, the shares' (--rate); "
         "none: measured",
         [](const std::string &s, Config &c) {
             if (s == "none") {
                 c.ingress_bps = kNoIngress;
                 return true;
             }
             return SetRate(s, c.ingress_bps);
         }},
        {"share-interval", "TIME", "receiver: how often it recomputes the shares (auto)",
         [](const std::string &s, Config &c) { return SetTime(s, 100, 1e9, c.share_interval_ns); }},
        {"cc-init-path-window", "N", "CC: a path's first window, packets (cc.c's default)",
         [](const std::string &s, Config &c) {
             return SetOpt(s, 1, 65536, c.cc_init_path_window);
         }},
        {"cc-init-conn-window", "N", "CC: a connection's first window, packets",
         [](const std::string &s, Config &c) {
             return SetOpt(s, 1, 65536, c.cc_init_conn_window);
         }},
        {"cc-max-path-window", "N", "CC: a path's largest window, and its window with CC off",
         [](const std::string &s, Config &c) { return SetOpt(s, 1, 65536, c.cc_max_path_window); }},
        {"cc-max-conn-window", "N", "CC: a connection's largest window, and with CC off",
         [](const std::string &s, Config &c) { return SetOpt(s, 1, 65536, c.cc_max_conn_window); }},
        {"cc-target-floor", "TIME", "CC: delay target above the base RTT, at least (cc.c's / 100)",
         [](const std::string &s, Config &c) {
             uint64_t v;
             if (!SetTime(s, 0, 1e9, v))
                 return false;
             c.cc_target_floor_ns = v;
             return true;
         }},
        {"cc-target-scale", "TIME",
         "CC: delay target added for windows of one packet (cc.c's / 100)",
         [](const std::string &s, Config &c) {
             uint64_t v;
             if (!SetTime(s, 0, 1e9, v))
                 return false;
             c.cc_target_scale_ns = v;
             return true;
         }},
        {"cc-ecn", "on|off", "CC: react to CE marks",
         [](const std::string &s, Config &c) { return SetOnOff(s, c.cc_ecn); }},
        {"share-learn", "on|off",
         "receiver: learn a capacity below --ingress (the kernel's ingress_learn)",
         [](const std::string &s, Config &c) { return SetOnOff(s, c.share_learn); }},
        {"hello", "on|off",
         "the HELLO handshake before a sender's first data, with the receiver's first hint (on)",
         [](const std::string &s, Config &c) { return SetOnOff(s, c.hello); }},
        {"cc-delay", "on|off", "CC: use delay",
         [](const std::string &s, Config &c) { return SetOnOff(s, c.cc_delay); }},
        {"cc-loss", "on|off", "CC: react to loss bursts",
         [](const std::string &s, Config &c) { return SetOnOff(s, c.cc_loss); }},
        {"senders", "N[,N...]", "incast: sender counts, 1-4096 (2,4,...,1024)",
         [](const std::string &s, Config &c) { return SetList(s, 1, 4096, c.senders); }},
        {"join", "B+E[,B+E...]", "join/leave: base senders + senders that join and leave",
         [](const std::string &s, Config &c) {
             std::vector<std::pair<uint32_t, uint32_t>> v;
             for (const auto &item : SplitList(s)) {
                 auto plus = item.find('+');
                 uint64_t b, e;
                 if (plus == std::string::npos || !ParseUint(item.substr(0, plus), 1, 2048, b) ||
                     !ParseUint(item.substr(plus + 1), 1, 2048, e))
                     return false;
                 v.push_back({static_cast<uint32_t>(b), static_cast<uint32_t>(e)});
             }
             if (v.empty())
                 return false;
             c.join_cases = v;
             return true;
         }},
        {"bytes", "SIZE", "incast: bytes of all senders together (64M)",
         [](const std::string &s, Config &c) {
             return SetSize(s, 4096, 1ull << 40, c.incast_total_bytes);
         }},
        {"min-bytes", "SIZE", "incast: bytes per sender at least (256K)",
         [](const std::string &s, Config &c) {
             return SetSize(s, 1, 1ull << 40, c.incast_min_bytes);
         }},
        {"ecmp-bytes", "SIZE", "ECMP: bytes of the one connection (96M)",
         [](const std::string &s, Config &c) {
             return SetSize(s, 4096, 1ull << 40, c.ecmp_bytes);
         }},
        {"cc", "on|off|both", "congestion control (both)",
         [](const std::string &s, Config &c) {
             if (s == "on")
                 c.cc = {true};
             else if (s == "off")
                 c.cc = {false};
             else if (s == "both")
                 c.cc = {true, false};
             else
                 return false;
             return true;
         }},
        {"aqm", "red|taildrop|both", "switch ports: RED with ECN marking, or tail drop (both)",
         [](const std::string &s, Config &c) {
             if (s == "red")
                 c.aqm = {Aqm::kRed};
             else if (s == "taildrop")
                 c.aqm = {Aqm::kTailDrop};
             else if (s == "both")
                 c.aqm = {Aqm::kRed, Aqm::kTailDrop};
             else
                 return false;
             return true;
         }},
        {"loss", "P", "incast: random loss of the port's link toward the receiver, 0-0.5 (0)",
         [](const std::string &s, Config &c) {
             double v;
             if (!ParseScaled(s, {{"", 1}, {"%", 0.01}}, v) || v > 0.5)
                 return false;
             c.loss = v;
             return true;
         }},
        {"tolerance", "P", "how close to the fair share counts as settled, 0-1 (0.1)",
         [](const std::string &s, Config &c) {
             double v;
             if (!ParseScaled(s, {{"", 1}}, v) || v <= 0 || v >= 1)
                 return false;
             c.tolerance = v;
             return true;
         }},
        {"seed", "N", "source port seeds and ECMP hash seeds (1)",
         [](const std::string &s, Config &c) {
             uint64_t v;
             if (!ParseUint(s, 0, 0xffffffffu, v))
                 return false;
             c.seed = static_cast<uint32_t>(v);
             return true;
         }},
        {"jobs", "N", "simulations at once, one process each, 1-64 (1)",
         [](const std::string &s, Config &c) {
             uint64_t v;
             if (!ParseUint(s, 1, 64, v))
                 return false;
             c.jobs = static_cast<uint32_t>(v);
             return true;
         }},
    };
    return opts;
}

// The planes' options (apart, so the table above keeps its layout).
const std::vector<Option> &PlaneOptions() {
    static const std::vector<Option> opts = {
        {"planes", "N[,N...]", "planes: planes per host, 1-8 (4,8)",
         [](const std::string &s, Config &c) { return SetList(s, 1, 8, c.planes); }},
        {"conns", "N[,N...]", "planes: connections, 1-4096 (1,64)",
         [](const std::string &s, Config &c) { return SetList(s, 1, 4096, c.plane_conns); }},
        {"pattern", "P[,P...]", "planes: one, incast or all2all (all three)",
         [](const std::string &s, Config &c) { return SetPatterns(s, c.patterns); }},
        {"plane-bytes", "SIZE", "planes: bytes per plane, all connections together (16M)",
         [](const std::string &s, Config &c) {
             return SetSize(s, 4096, 1ull << 40, c.plane_bytes);
         }},
        {"fail-plane", "K", "planes: the plane blackholed, both ways; -1: none (1)",
         [](const std::string &s, Config &c) { return SetPlane(s, c.fail_plane); }},
        {"fail-at", "FRAC", "planes: when it fails, of the ideal transfer time (0.4)",
         [](const std::string &s, Config &c) { return SetFrac(s, 10, c.fail_at); }},
        {"restore-at", "FRAC", "planes: when it is back, of the ideal time; 0: never (0)",
         [](const std::string &s, Config &c) { return SetFrac(s, 1000, c.restore_at); }},
    };
    return opts;
}

// The streams experiment's options.
const std::vector<Option> &StreamOptions() {
    static const std::vector<Option> opts = {
        {"flows", "N", "streams: flows, each a stream or a QP, 2-128 (64)",
         [](const std::string &s, Config &c) {
             uint64_t v;
             if (!ParseUint(s, 2, MR_ORDER_MAX + 1, v))
                 return false;
             c.flows = static_cast<uint32_t>(v);
             return true;
         }},
        {"flow-msgs", "N", "streams: messages of --msg-bytes per flow, 1-4096 (32)",
         [](const std::string &s, Config &c) {
             uint64_t v;
             if (!ParseUint(s, 1, 4096, v))
                 return false;
             c.flow_msgs = static_cast<uint32_t>(v);
             return true;
         }},
        {"stream-load", "L[,L...]",
         "streams: offered load, of the port's payload rate, 0-1.5; 0: all posted at once "
         "(0.5,0.9)",
         [](const std::string &s, Config &c) {
             std::vector<double> v;
             for (const auto &item : SplitList(s)) {
                 double l;
                 if (!SetFrac(item, 1.5, l))
                     return false;
                 v.push_back(l);
             }
             if (v.empty())
                 return false;
             c.stream_loads = v;
             return true;
         }},
        {"stream-loss", "P", "streams: random loss of the port's link, 0-0.5 (0.01)",
         [](const std::string &s, Config &c) { return SetFrac(s, 0.5, c.stream_loss); }},
    };
    return opts;
}

const std::vector<Option> &Options() {
    static const std::vector<Option> opts = [] {
        std::vector<Option> all = BaseOptions();
        all.insert(all.end(), PlaneOptions().begin(), PlaneOptions().end());
        all.insert(all.end(), StreamOptions().begin(), StreamOptions().end());
        return all;
    }();
    return opts;
}

// --guest: the guest's incast as the issues measure it (4 senders into a
// 60 Mbit/s port, RED marking 20-60 KB, tail drop at 96 KB, RTT about
// 1.5 ms, netdev MTU 1500) with the kernel's own timing and the stock
// kernel's 4 ms jiffy, at the module's defaults: the receiver takes its
// veth's 10 Gbit/s for its ingress capacity (ingress_mbps unset). Options
// after it, or before, override it.
const std::vector<std::string> kGuestPreset = {
    // clang-format off
    "--rate", "60M", "--host-rate", "1G", "--ingress", "10G", "--delay", "335us",
    "--buffer", "96K", "--red-min", "20K", "--red-max", "60K", "--red-pmax", "0.1",
    "--mtu", "1024", "--time-scale", "1", "--timer-tick", "4ms",
    "--senders", "4", "--bytes", "32M",
    "--links", "4", "--fabric-rate", "80M", "--ecmp-bytes", "20M",
    // clang-format on
};

} // namespace

std::string ParseOptions(const std::vector<std::string> &args, Config &cfg) {
    for (const auto &a : args)
        if (a == "--guest") {
            std::vector<std::string> rest;
            for (const auto &b : args)
                if (b != "--guest")
                    rest.push_back(b);
            std::vector<std::string> all = kGuestPreset;
            all.insert(all.end(), rest.begin(), rest.end());
            return ParseOptions(all, cfg);
        }
    for (size_t i = 0; i < args.size(); i++) {
        std::string a = args[i];
        if (a == "--verbose" || a == "-v") {
            cfg.verbose = true;
            continue;
        }
        if (a.rfind("--", 0) != 0)
            return "unexpected argument \"" + a + "\"";
        std::string name = a.substr(2), value;
        bool has_value = false;
        if (auto eq = name.find('='); eq != std::string::npos) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
            has_value = true;
        }
        const Option *opt = nullptr;
        for (const auto &o : Options())
            if (name == o.name)
                opt = &o;
        if (!opt)
            return "unknown option \"--" + name + "\" (see --help)";
        if (!has_value) {
            if (i + 1 >= args.size())
                return "option \"--" + name + "\" needs a value: " + opt->arg;
            value = args[++i];
        }
        if (!opt->set(value, cfg))
            return "bad value \"" + value + "\" for --" + name + " " + opt->arg + ": " + opt->help;
    }
    if (cfg.red_min_bytes > cfg.red_max_bytes)
        return "--red-min must not exceed --red-max";
    if (cfg.rto_min_ns && cfg.rto_max_ns && *cfg.rto_min_ns > *cfg.rto_max_ns)
        return "--rto-min must not exceed --rto-max";
    return "";
}

std::string OptionsHelp() {
    std::string out;
    for (const auto &o : Options()) {
        char line[160];
        std::snprintf(line, sizeof(line), "  --%-20s %-18s %s\n", o.name, o.arg, o.help);
        out += line;
    }
    out += "  --guest                                 the guest's incast and ECMP scale "
           "(config.cc: kGuestPreset)\n";
    out += "  --verbose                               progress on stderr\n";
    out += "Rates take K, M, G, T (bit/s, decimal); sizes K, M, G (binary); times ns, us, ms, "
           "s.\n";
    return out;
}

std::string FormatRate(double bps) {
    char buf[32];
    if (bps >= 1e9)
        std::snprintf(buf, sizeof(buf), "%.4gG", bps / 1e9);
    else
        std::snprintf(buf, sizeof(buf), "%.4gM", bps / 1e6);
    return buf;
}

std::string FormatBytes(double bytes) {
    char buf[32];
    if (bytes >= (1 << 20))
        std::snprintf(buf, sizeof(buf), "%.4g MiB", bytes / (1 << 20));
    else if (bytes >= 1024)
        std::snprintf(buf, sizeof(buf), "%.4g KiB", bytes / 1024);
    else
        std::snprintf(buf, sizeof(buf), "%.0f B", bytes);
    return buf;
}

} // namespace mrscale
