// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "args.h"

#include "errors.h"
#include "metaroce-netlink.h"
#include "settings.h"
#include "units.h"

#include <array>

namespace metaroce::args {

namespace {

using errors::UsageError;

// IB_DEVICE_NAME_MAX less its NUL; IFNAMSIZ less its NUL.
constexpr size_t kDevNameMax = 63;
constexpr size_t kNetdevNameMax = 15;
constexpr uint32_t kQpnMax = 0xffffff;

// iproute2's matches(): @arg is a non-empty prefix of @word.
bool matches(std::string_view arg, std::string_view word) {
    return !arg.empty() && word.substr(0, arg.size()) == arg;
}

// The one word of @words that @arg abbreviates.
std::string_view pick(std::string_view arg, std::initializer_list<std::string_view> words,
                      std::string_view what) {
    std::string_view found;
    for (auto w : words) {
        if (arg == w)
            return w;
        if (matches(arg, w)) {
            if (!found.empty())
                throw UsageError("\"" + std::string(arg) + "\" is ambiguous; which " +
                                 std::string(what) + "?");
            found = w;
        }
    }
    if (found.empty())
        throw UsageError("unknown " + std::string(what) + " \"" + std::string(arg) + "\"");
    return found;
}

class Cursor {
public:
    explicit Cursor(const std::vector<std::string> &v) : v_(v) {}
    bool done() const { return i_ >= v_.size(); }
    const std::string &peek() const { return v_[i_]; }
    const std::string &next() { return v_[i_++]; }
    const std::string &value(std::string_view key) {
        if (done())
            throw UsageError(std::string(key) + " needs a value");
        return next();
    }

private:
    const std::vector<std::string> &v_;
    size_t i_ = 0;
};

std::string device_name(const std::string &s) {
    if (s.empty())
        throw UsageError("the device name is empty");
    if (s.size() > kDevNameMax)
        throw UsageError("device name \"" + s + "\" is longer than " + std::to_string(kDevNameMax) +
                         " characters");
    return s;
}

uint32_t number(const std::string &s, uint64_t min, uint64_t max, std::string_view what) {
    try {
        return static_cast<uint32_t>(units::parse_uint(s, min, max, what));
    } catch (const units::Error &e) {
        throw UsageError(e.what());
    }
}

template <typename T> void once(std::optional<T> &slot, T v, std::string_view key) {
    if (slot)
        throw UsageError(std::string(key) + " is given twice");
    slot = std::move(v);
}

void parse_dev(Cursor &c, Invocation &inv) {
    std::string_view cmd =
        c.done() ? "show" : pick(c.next(), {"show", "list", "set", "help"}, "dev command");
    if (cmd == "help") {
        inv.action = Action::Help;
        inv.help_topic = "dev";
        return;
    }
    if (cmd == "show" || cmd == "list") {
        inv.action = Action::DevShow;
        if (!c.done())
            inv.dev = device_name(c.next());
        if (!c.done())
            throw UsageError("unexpected \"" + c.peek() + "\" after the device");
        return;
    }
    inv.action = Action::DevSet;
    if (c.done())
        throw UsageError("dev set needs a device");
    inv.dev = device_name(c.next());
    while (!c.done()) {
        const std::string &key = c.next();
        const settings::Setting *s = settings::find(key);
        if (!s)
            throw UsageError("unknown setting \"" + key + "\"; see \"metaroce dev help\"");
        const std::string &text = c.value(key);
        auto &slot = s->set == &abi::kCc ? inv.settings.cc : inv.settings.dev;
        if (slot.count(s->attr))
            throw UsageError(key + " is given twice");
        try {
            slot[s->attr] = settings::parse(*s, text);
        } catch (const units::Error &e) {
            throw UsageError(e.what());
        }
    }
    if (inv.settings.empty())
        throw UsageError("dev set " + *inv.dev + ": nothing to set");
}

void parse_qp(Cursor &c, Invocation &inv) {
    std::string_view cmd =
        c.done() ? "show" : pick(c.next(), {"show", "list", "help"}, "qp command");
    if (cmd == "help") {
        inv.action = Action::Help;
        inv.help_topic = "qp";
        return;
    }
    inv.action = Action::QpShow;
    while (!c.done()) {
        std::string_view key = pick(c.next(), {"dev", "qpn"}, "qp show argument");
        if (key == "dev")
            once(inv.dev, device_name(c.value(key)), key);
        else
            once(inv.qpn, number(c.value(key), 1, kQpnMax, key), key);
    }
}

void parse_path(Cursor &c, Invocation &inv) {
    std::string_view cmd =
        c.done() ? "show" : pick(c.next(), {"show", "list", "help"}, "path command");
    if (cmd == "help") {
        inv.action = Action::Help;
        inv.help_topic = "path";
        return;
    }
    inv.action = Action::PathShow;
    while (!c.done()) {
        std::string_view key = pick(c.next(), {"dev", "qpn", "path"}, "path show argument");
        if (key == "dev")
            once(inv.dev, device_name(c.value(key)), key);
        else if (key == "qpn")
            once(inv.qpn, number(c.value(key), 1, kQpnMax, key), key);
        else
            once(inv.path, number(c.value(key), 0, METAROCE_PATHS_MAX - 1, key), key);
    }
    if (!inv.dev || !inv.qpn)
        throw UsageError("path show needs dev DEV and qpn N");
}

std::string netdev_name(const std::string &s) {
    if (s.empty())
        throw UsageError("the netdev name is empty");
    if (s.size() > kNetdevNameMax)
        throw UsageError("netdev name \"" + s + "\" is longer than " +
                         std::to_string(kNetdevNameMax) + " characters");
    return s;
}

void parse_plane(Cursor &c, Invocation &inv) {
    std::string_view cmd =
        c.done()
            ? "show"
            : pick(c.next(), {"show", "list", "add", "del", "delete", "help"}, "plane command");
    if (cmd == "help") {
        inv.action = Action::Help;
        inv.help_topic = "plane";
        return;
    }
    bool show = cmd == "show" || cmd == "list";
    inv.action = show ? Action::PlaneShow : cmd == "add" ? Action::PlaneAdd : Action::PlaneDel;
    while (!c.done()) {
        std::string_view key = show ? pick(c.next(), {"dev"}, "plane show argument")
                                    : pick(c.next(), {"dev", "netdev"}, "plane argument");
        if (key == "dev")
            once(inv.dev, device_name(c.value(key)), key);
        else
            once(inv.netdev, netdev_name(c.value(key)), key);
    }
    if (!show && (!inv.dev || !inv.netdev))
        throw UsageError("plane " + std::string(cmd == "add" ? "add" : "del") +
                         " needs dev DEV and netdev NETDEV");
}

std::string placeholder(const settings::Setting &s) {
    switch (s.kind) {
    case settings::Kind::OnOff:
        return "{ on | off }";
    case settings::Kind::Window:
        return "PACKETS";
    case settings::Kind::Time:
        return "TIME";
    case settings::Kind::Rate:
        return "{ RATE | auto }";
    case settings::Kind::Uint:
        break;
    }
    return s.keyword == "udp-port" ? "PORT" : "N";
}

} // namespace

Invocation parse(const std::vector<std::string> &argv) {
    Invocation inv;
    Cursor c(argv);
    while (!c.done() && c.peek().size() > 1 && c.peek()[0] == '-') {
        std::string opt = c.next();
        std::string_view o = opt;
        o.remove_prefix(o.substr(0, 2) == "--" ? 2 : 1);
        if (o == "j" || o == "json") {
            inv.style.json = true;
        } else if (o == "p" || o == "pretty") {
            inv.style.pretty = true;
        } else if (o == "s" || o == "stats" || o == "statistics") {
            inv.style.stats = true;
        } else if (o == "d" || o == "details") {
            inv.style.details = true;
        } else if (o == "V" || o == "version" || o == "Version") {
            inv.action = Action::Version;
            return inv;
        } else if (o == "h" || o == "help") {
            inv.action = Action::Help;
            return inv;
        } else {
            throw UsageError("unknown option \"" + opt + "\"");
        }
    }
    if (c.done())
        throw UsageError("no object given");
    std::string_view obj =
        pick(c.next(), {"dev", "qp", "path", "plane", "monitor", "help"}, "object");
    if (obj == "dev") {
        parse_dev(c, inv);
    } else if (obj == "qp") {
        parse_qp(c, inv);
    } else if (obj == "path") {
        parse_path(c, inv);
    } else if (obj == "plane") {
        parse_plane(c, inv);
    } else if (obj == "monitor") {
        inv.action = Action::Monitor;
        if (!c.done() && matches(c.peek(), "help")) {
            inv.action = Action::Help;
            inv.help_topic = "monitor";
            c.next();
        }
        if (!c.done())
            throw UsageError("monitor takes no arguments");
    } else {
        inv.action = Action::Help;
        if (!c.done())
            inv.help_topic =
                pick(c.next(), {"dev", "qp", "path", "plane", "monitor"}, "help topic");
    }
    return inv;
}

std::string usage(std::string_view topic) {
    if (topic == "dev") {
        std::string s = "Usage: metaroce dev show [ DEV ]\n"
                        "       metaroce dev set DEV SETTING VALUE [ SETTING VALUE ... ]\n"
                        "where  SETTING VALUE :=\n";
        for (const auto &st : settings::all()) {
            std::string line = "         " + std::string(st.keyword) + " " + placeholder(st);
            line.resize(std::max<size_t>(line.size() + 1, 42), ' ');
            s += line + std::string(st.help) + "\n";
        }
        s += "       RATE := NUMBER{ bit | Kbit | Mbit | Gbit | Tbit }\n"
             "       TIME := NUMBER{ ns | us | ms | s }\n";
        return s;
    }
    if (topic == "qp")
        return "Usage: metaroce qp show [ dev DEV ] [ qpn N ]\n";
    if (topic == "path")
        return "Usage: metaroce path show dev DEV qpn N [ path ID ]\n";
    if (topic == "plane")
        return "Usage: metaroce plane show [ dev DEV ]\n"
               "       metaroce plane add dev DEV netdev NETDEV\n"
               "       metaroce plane del dev DEV netdev NETDEV\n"
               "A plane is a netdev the device's connections spray their paths over;\n"
               "a device without planes sends through its own netdev.\n";
    if (topic == "monitor")
        return "Usage: metaroce monitor\n"
               "Prints path failovers, QPs going to the error state, planes going out of\n"
               "service and back, and device changes as they happen, until interrupted.\n";
    return "Usage: metaroce [ OPTIONS ] OBJECT { COMMAND | help }\n"
           "where  OBJECT := { dev | qp | path | plane | monitor }\n"
           "       OPTIONS := { -j[son] | -p[retty] | -s[tatistics] | -d[etails] | -V[ersion] |\n"
           "                    -h[elp] }\n";
}

} // namespace metaroce::args
