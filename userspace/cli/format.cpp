// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "format.h"

#include "json.h"
#include "metaroce-netlink.h"
#include "units.h"

#include <algorithm>
#include <arpa/inet.h>
#include <array>
#include <cinttypes>
#include <cstdio>

namespace metaroce::format {

namespace {

// Continuation lines (cc settings, statistics) are indented like `ip -d`.
constexpr std::string_view kIndent = "    ";
// Statistics wrap before this column.
constexpr size_t kWrap = 100;

// Words of one text line: "key value key value ...".
class Line {
public:
    Line &word(std::string_view w) {
        if (!text_.empty())
            text_ += ' ';
        text_ += w;
        return *this;
    }
    Line &kv(std::string_view k, std::string_view v) { return word(k).word(v); }
    template <typename T> Line &kv(std::string_view k, const std::optional<T> &v) {
        if (v)
            kv(k, std::to_string(*v));
        return *this;
    }
    bool empty() const { return text_.empty(); }
    const std::string &str() const { return text_; }

private:
    std::string text_;
};

std::string on_off(bool v) {
    return v ? "on" : "off";
}

// Statistics as "name value" pairs on indented lines of at most kWrap columns.
std::string stat_lines(const std::vector<model::Stat> &stats) {
    std::string out, line;
    for (const auto &s : stats) {
        std::string pair = s.name + " " + std::to_string(s.value);
        if (!line.empty() && kIndent.size() + line.size() + 1 + pair.size() > kWrap) {
            out += std::string(kIndent) + line + "\n";
            line.clear();
        }
        line += (line.empty() ? "" : " ") + pair;
    }
    if (!line.empty())
        out += std::string(kIndent) + line + "\n";
    return out;
}

// JSON keys use underscores where the spec's names have dashes.
std::string json_key(std::string_view name) {
    std::string k(name);
    std::replace(k.begin(), k.end(), '-', '_');
    return k;
}

void stats_json(json::Writer &w, const std::vector<model::Stat> &stats) {
    w.key("stats").begin_object();
    for (const auto &s : stats)
        w.member(json_key(s.name), s.value);
    w.end_object();
}

template <typename T>
void opt_member(json::Writer &w, std::string_view k, const std::optional<T> &v) {
    if (v)
        w.member(k, *v);
}

std::string document(const json::Writer &w) {
    return w.str() + "\n";
}

// --- devices ---------------------------------------------------------------

std::string device_text(const model::Device &d, const Style &style) {
    Line head;
    std::string out;
    if (d.index)
        head.word(std::to_string(*d.index) + ":");
    head.word(d.name.value_or("?") + ":");
    if (d.netdev)
        head.kv("netdev", *d.netdev);
    head.kv("udp-port", d.udp_port).kv("paths", d.paths).kv("fail-after", d.fail_after);
    head.kv("qps", d.num_qps);
    if (d.num_keys && *d.num_keys)
        head.kv("keys", std::to_string(*d.num_keys));
    if (d.ingress_kbps) {
        if (*d.ingress_kbps)
            head.kv("ingress-rate", units::rate(*d.ingress_kbps));
        else if (d.ingress_active_kbps)
            head.kv("ingress-rate", "auto")
                .word("(" +
                      (*d.ingress_active_kbps ? units::rate(*d.ingress_active_kbps) : "unknown") +
                      ")");
        else
            head.kv("ingress-rate", "auto");
    }
    out += head.str() + "\n";
    if (d.cc) {
        const model::Cc &c = *d.cc;
        Line sw, win;
        if (c.enabled)
            sw.kv("cc", on_off(*c.enabled));
        if (c.ecn)
            sw.kv("cc-ecn", on_off(*c.ecn));
        if (c.delay)
            sw.kv("cc-delay", on_off(*c.delay));
        if (c.loss)
            sw.kv("cc-loss", on_off(*c.loss));
        sw.kv("cc-gain", c.gain_shift);
        if (c.ai)
            sw.kv("cc-ai", units::window(*c.ai));
        if (c.target_delay_ns)
            sw.kv("target-delay", units::time(*c.target_delay_ns));
        sw.kv("loss-burst", c.loss_burst);
        auto w = [&](std::string_view k, const std::optional<uint32_t> &v) {
            if (v)
                win.kv(k, units::window(*v));
        };
        w("init-path-window", c.init_path_window);
        w("init-conn-window", c.init_conn_window);
        w("max-path-window", c.max_path_window);
        w("max-conn-window", c.max_conn_window);
        w("min-window", c.min_window);
        if (!sw.empty())
            out += std::string(kIndent) + sw.str() + "\n";
        if (!win.empty())
            out += std::string(kIndent) + win.str() + "\n";
    }
    if (style.stats && d.stats)
        out += stat_lines(*d.stats);
    return out;
}

// The members of a device object (also used by the dev-change event).
void device_members(json::Writer &w, const model::Device &d, const Style &style) {
    opt_member(w, "ifindex", d.index);
    opt_member(w, "ifname", d.name);
    opt_member(w, "netdev", d.netdev);
    opt_member(w, "netdev_ifindex", d.netdev_ifindex);
    opt_member(w, "udp_port", d.udp_port);
    opt_member(w, "paths", d.paths);
    opt_member(w, "fail_after", d.fail_after);
    opt_member(w, "qps", d.num_qps);
    opt_member(w, "keys", d.num_keys);
    opt_member(w, "ingress_kbps", d.ingress_kbps);
    opt_member(w, "ingress_active_kbps", d.ingress_active_kbps);
    if (d.cc) {
        const model::Cc &c = *d.cc;
        w.key("cc").begin_object();
        opt_member(w, "enabled", c.enabled);
        opt_member(w, "ecn", c.ecn);
        opt_member(w, "delay", c.delay);
        opt_member(w, "loss", c.loss);
        opt_member(w, "gain_shift", c.gain_shift);
        auto win = [&](std::string_view k, const std::optional<uint32_t> &v) {
            if (v)
                w.key(k).number_text(units::window_exact(*v));
        };
        win("ai", c.ai);
        win("init_path_window", c.init_path_window);
        win("init_conn_window", c.init_conn_window);
        win("max_path_window", c.max_path_window);
        win("max_conn_window", c.max_conn_window);
        win("min_window", c.min_window);
        opt_member(w, "target_delay_ns", c.target_delay_ns);
        opt_member(w, "loss_burst", c.loss_burst);
        w.end_object();
    }
    if (style.stats && d.stats) {
        w.key("stats").begin_object();
        for (const auto &s : *d.stats)
            w.member(s.name, s.value);
        w.end_object();
    }
}

// --- QPs -------------------------------------------------------------------

std::string qp_text(const model::Qp &q, const Style &style) {
    Line l;
    if (q.dev_name)
        l.kv("dev", *q.dev_name);
    l.kv("qpn", q.num);
    if (q.type)
        l.kv("type", qp_type(*q.type));
    if (q.state)
        l.kv("state", qp_state(*q.state));
    if (q.handshake)
        l.kv("handshake", qp_handshake(*q.handshake));
    if (q.local)
        l.kv("local", address(*q.local));
    if (q.peer)
        l.kv("peer", address(*q.peer));
    l.kv("rqpn", q.peer_num).kv("paths", q.paths).kv("mtu", q.mtu);
    if (q.conn_window)
        l.kv("window", units::window(*q.conn_window));
    l.kv("inflight", q.inflight);
    if (q.pacing_kbps)
        l.kv("pacing", *q.pacing_kbps ? units::rate(*q.pacing_kbps) : "off");
    if (q.rate_hint_kbps)
        l.kv("hint", *q.rate_hint_kbps ? units::rate(*q.rate_hint_kbps) : "none");
    if (q.alpha)
        l.kv("alpha", units::alpha(*q.alpha));
    if (q.srtt_ns)
        l.kv("srtt", units::time(*q.srtt_ns));
    std::string out = l.str() + "\n";
    if (style.details) {
        Line tags;
        if (q.local_tag)
            tags.kv("local-tag", tag(*q.local_tag));
        if (q.peer_tag)
            tags.kv("peer-tag", tag(*q.peer_tag));
        if (!tags.empty())
            out += std::string(kIndent) + tags.str() + "\n";
    }
    if (style.stats && q.stats)
        out += stat_lines(*q.stats);
    return out;
}

void qp_json(json::Writer &w, const model::Qp &q, const Style &style) {
    w.begin_object();
    opt_member(w, "ifindex", q.dev_index);
    opt_member(w, "ifname", q.dev_name);
    opt_member(w, "qpn", q.num);
    if (q.type)
        w.member("type", qp_type(*q.type));
    if (q.state)
        w.member("state", qp_state(*q.state));
    if (q.handshake)
        w.member("handshake", qp_handshake(*q.handshake));
    if (q.local)
        w.member("local", address(*q.local));
    if (q.peer)
        w.member("peer", address(*q.peer));
    opt_member(w, "rqpn", q.peer_num);
    opt_member(w, "paths", q.paths);
    opt_member(w, "mtu", q.mtu);
    if (q.conn_window)
        w.key("window").number_text(units::window_exact(*q.conn_window));
    opt_member(w, "inflight", q.inflight);
    opt_member(w, "pacing_kbps", q.pacing_kbps);
    opt_member(w, "rate_hint_kbps", q.rate_hint_kbps);
    if (q.alpha)
        w.key("alpha").number_text(units::alpha_exact(*q.alpha));
    opt_member(w, "srtt_ns", q.srtt_ns);
    // Strings: JSON numbers lose 64-bit precision in most readers.
    if (style.details && q.local_tag)
        w.member("local_tag", tag(*q.local_tag));
    if (style.details && q.peer_tag)
        w.member("peer_tag", tag(*q.peer_tag));
    if (style.stats && q.stats)
        stats_json(w, *q.stats);
    w.end_object();
}

// --- paths -----------------------------------------------------------------

std::optional<uint64_t> stat(const std::optional<std::vector<model::Stat>> &stats,
                             std::string_view name) {
    if (stats)
        for (const auto &s : *stats)
            if (s.name == name)
                return s.value;
    return std::nullopt;
}

// A table with left-aligned columns two spaces apart.
std::string table(const std::vector<std::vector<std::string>> &rows) {
    std::vector<size_t> width;
    for (const auto &r : rows)
        for (size_t i = 0; i < r.size(); i++) {
            if (width.size() <= i)
                width.push_back(0);
            width[i] = std::max(width[i], r[i].size());
        }
    std::string out;
    for (const auto &r : rows) {
        std::string line;
        for (size_t i = 0; i < r.size(); i++) {
            line += r[i];
            if (i + 1 < r.size())
                line.append(width[i] - r[i].size() + 2, ' ');
        }
        out += line + "\n";
    }
    return out;
}

template <typename T, typename F> std::string cell(const std::optional<T> &v, F &&fmt) {
    return v ? fmt(*v) : "-";
}

std::string num(uint64_t v) {
    return std::to_string(v);
}

constexpr std::array<std::string_view, 5> kPathStatColumns = {
    "tx-packets", "sack-gaps", "rto-events", "tail-probes", "ce-marks"};

std::string paths_text(const std::vector<model::Path> &paths, const Style &style) {
    if (paths.empty())
        return {};
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> head = {"PATH", "SPORT",  "EPOCH",    "STATE", "SRTT",   "RTTVAR",
                                     "RTO",  "WINDOW", "INFLIGHT", "ALPHA", "RETRANS"};
    if (style.stats) {
        head.insert(head.end(), {"BASE-RTT", "CONSEC-RTOS"});
        for (auto c : kPathStatColumns) {
            std::string h(c);
            std::transform(h.begin(), h.end(), h.begin(), ::toupper);
            head.push_back(h);
        }
    }
    rows.push_back(head);
    for (const auto &p : paths) {
        std::vector<std::string> r = {
            cell(p.id, num),
            cell(p.sport, num),
            cell(p.epoch, num),
            cell(p.state, path_state),
            cell(p.srtt_ns, units::time),
            cell(p.rttvar_ns, units::time),
            cell(p.rto_ns, units::time),
            cell(p.window, units::window),
            cell(p.inflight, num),
            cell(p.alpha, units::alpha),
            cell(stat(p.stats, "retransmits"), num),
        };
        if (style.stats) {
            r.push_back(cell(p.base_rtt_ns, units::time));
            r.push_back(cell(p.consec_rtos, num));
            for (auto c : kPathStatColumns)
                r.push_back(cell(stat(p.stats, c), num));
        }
        rows.push_back(r);
    }
    return table(rows);
}

void path_json(json::Writer &w, const model::Path &p, const Style &style) {
    w.begin_object();
    opt_member(w, "ifindex", p.dev_index);
    opt_member(w, "ifname", p.dev_name);
    opt_member(w, "qpn", p.qpn);
    opt_member(w, "path", p.id);
    opt_member(w, "sport", p.sport);
    opt_member(w, "epoch", p.epoch);
    if (p.state)
        w.member("state", path_state(*p.state));
    opt_member(w, "srtt_ns", p.srtt_ns);
    opt_member(w, "rttvar_ns", p.rttvar_ns);
    opt_member(w, "rto_ns", p.rto_ns);
    opt_member(w, "base_rtt_ns", p.base_rtt_ns);
    if (p.window)
        w.key("window").number_text(units::window_exact(*p.window));
    opt_member(w, "inflight", p.inflight);
    if (p.alpha)
        w.key("alpha").number_text(units::alpha_exact(*p.alpha));
    opt_member(w, "consec_rtos", p.consec_rtos);
    opt_member(w, "retransmits", stat(p.stats, "retransmits"));
    if (style.stats && p.stats)
        stats_json(w, *p.stats);
    w.end_object();
}

// --- planes ----------------------------------------------------------------

constexpr std::array<std::string_view, 3> kPlaneColumns = {"tx_packets", "rx_packets", "downs"};
constexpr std::array<std::string_view, 3> kPlaneStatColumns = {"tx_bytes", "rx_bytes", "ce_marks"};

std::string header(std::string_view name) {
    std::string h(name);
    std::transform(h.begin(), h.end(), h.begin(), ::toupper);
    std::replace(h.begin(), h.end(), '_', '-');
    return h;
}

std::string planes_text(const std::vector<model::Plane> &planes, const Style &style) {
    if (planes.empty())
        return {};
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> head = {"DEV", "PLANE", "NETDEV", "STATE", "PATHS"};
    for (auto c : kPlaneColumns)
        head.push_back(header(c));
    if (style.stats) {
        for (auto c : kPlaneStatColumns)
            head.push_back(header(c));
        head.push_back("RETRY-IN");
    }
    rows.push_back(head);
    for (const auto &p : planes) {
        std::vector<std::string> r = {
            p.dev_name.value_or("-"),   cell(p.id, num),    p.netdev.value_or("-"),
            cell(p.state, plane_state), cell(p.paths, num),
        };
        for (auto c : kPlaneColumns)
            r.push_back(cell(stat(p.stats, c), num));
        if (style.stats) {
            for (auto c : kPlaneStatColumns)
                r.push_back(cell(stat(p.stats, c), num));
            r.push_back(cell(p.retry_ns, units::time));
        }
        rows.push_back(r);
    }
    return table(rows);
}

void plane_json(json::Writer &w, const model::Plane &p, const Style &style) {
    w.begin_object();
    opt_member(w, "ifindex", p.dev_index);
    opt_member(w, "ifname", p.dev_name);
    opt_member(w, "plane", p.id);
    opt_member(w, "netdev_ifindex", p.netdev_ifindex);
    opt_member(w, "netdev", p.netdev);
    if (p.state)
        w.member("state", plane_state(*p.state));
    opt_member(w, "paths", p.paths);
    opt_member(w, "retry_ns", p.retry_ns);
    for (auto c : kPlaneColumns)
        opt_member(w, c, stat(p.stats, c));
    if (style.stats && p.stats)
        stats_json(w, *p.stats);
    w.end_object();
}

// --- events ----------------------------------------------------------------

std::string_view event_name(model::Event::Kind k) {
    switch (k) {
    case model::Event::Kind::DevChange:
        return "dev-change";
    case model::Event::Kind::PathFailover:
        return "path-failover";
    case model::Event::Kind::QpError:
        return "qp-error";
    case model::Event::Kind::PlaneDown:
        return "plane-down";
    case model::Event::Kind::PlaneUp:
        return "plane-up";
    }
    return "?";
}

std::string change(const std::optional<uint16_t> &from, const std::optional<uint16_t> &to) {
    return (from ? std::to_string(*from) : "?") + "->" + (to ? std::to_string(*to) : "?");
}

} // namespace

std::string qp_type(uint8_t v) {
    switch (v) {
    case METAROCE_QP_TYPE_RC:
        return "RC";
    case METAROCE_QP_TYPE_UC:
        return "UC";
    case METAROCE_QP_TYPE_UD:
        return "UD";
    case METAROCE_QP_TYPE_GSI:
        return "GSI";
    default:
        return std::to_string(v);
    }
}

std::string qp_state(uint8_t v) {
    static constexpr std::array<const char *, 7> kNames = {"RESET", "INIT", "RTR", "RTS",
                                                           "SQD",   "SQE",  "ERR"};
    static_assert(METAROCE_QP_STATE_ERR == kNames.size() - 1);
    return v < kNames.size() ? kNames[v] : std::to_string(v);
}

std::string path_state(uint8_t v) {
    switch (v) {
    case METAROCE_PATH_STATE_ACTIVE:
        return "active";
    case METAROCE_PATH_STATE_FAILED:
        return "failed";
    default:
        return std::to_string(v);
    }
}

std::string plane_state(uint8_t v) {
    static constexpr std::array<const char *, 4> kNames = {"?", "up", "no-carrier", "timed-out"};
    static_assert(METAROCE_PLANE_STATE_TIMED_OUT == kNames.size() - 1);
    return v > 0 && v < kNames.size() ? kNames[v] : std::to_string(v);
}

std::string plane_reason(uint8_t v) {
    static constexpr std::array<const char *, 5> kNames = {"?", "carrier", "timeout", "answered",
                                                           "removed"};
    static_assert(METAROCE_PLANE_REASON_REMOVED == kNames.size() - 1);
    return v > 0 && v < kNames.size() ? kNames[v] : std::to_string(v);
}

std::string error_reason(uint8_t v) {
    static constexpr std::array<const char *, 9> kNames = {
        "other",     "user",           "retry-exceeded", "rnr-retry-exceeded", "remote-access",
        "remote-op", "remote-invalid", "local",          "peer-fatal"};
    static_assert(METAROCE_QP_ERROR_PEER_FATAL == kNames.size() - 1);
    return v < kNames.size() ? kNames[v] : std::to_string(v);
}

std::string qp_handshake(uint8_t v) {
    static constexpr std::array<const char *, 4> kNames = {"none", "waiting", "peer-known", "done"};
    static_assert(METAROCE_QP_HANDSHAKE_DONE == kNames.size() - 1);
    return v < kNames.size() ? kNames[v] : std::to_string(v);
}

std::string tag(uint64_t v) {
    char buf[19];
    std::snprintf(buf, sizeof(buf), "0x%016" PRIx64, v);
    return buf;
}

std::string address(const model::Address &a) {
    char buf[INET6_ADDRSTRLEN];
    if (!inet_ntop(a.v6 ? AF_INET6 : AF_INET, a.bytes.data(), buf, sizeof(buf)))
        return "?";
    return buf;
}

std::string devices(const std::vector<model::Device> &devs, const Style &style) {
    if (!style.json) {
        std::string out;
        for (const auto &d : devs)
            out += device_text(d, style);
        return out;
    }
    json::Writer w(style.pretty);
    w.begin_array();
    for (const auto &d : devs) {
        w.begin_object();
        device_members(w, d, style);
        w.end_object();
    }
    w.end_array();
    return document(w);
}

std::string qps(const std::vector<model::Qp> &qps, const Style &style) {
    if (!style.json) {
        std::string out;
        for (const auto &q : qps)
            out += qp_text(q, style);
        return out;
    }
    json::Writer w(style.pretty);
    w.begin_array();
    for (const auto &q : qps)
        qp_json(w, q, style);
    w.end_array();
    return document(w);
}

std::string paths(const std::vector<model::Path> &paths, const Style &style) {
    if (!style.json)
        return paths_text(paths, style);
    json::Writer w(style.pretty);
    w.begin_array();
    for (const auto &p : paths)
        path_json(w, p, style);
    w.end_array();
    return document(w);
}

std::string planes(const std::vector<model::Plane> &planes, const Style &style) {
    if (!style.json)
        return planes_text(planes, style);
    json::Writer w(style.pretty);
    w.begin_array();
    for (const auto &p : planes)
        plane_json(w, p, style);
    w.end_array();
    return document(w);
}

std::string event(const model::Event &ev, const Style &style) {
    using Kind = model::Event::Kind;
    if (style.json) {
        json::Writer w(style.pretty);
        w.begin_object();
        w.member("event", event_name(ev.kind));
        if (ev.kind == Kind::DevChange && ev.device) {
            device_members(w, *ev.device, style);
        } else {
            opt_member(w, "ifindex", ev.dev_index);
            opt_member(w, "ifname", ev.dev_name);
            opt_member(w, "qpn", ev.qpn);
            opt_member(w, "path", ev.path_id);
            opt_member(w, "old_epoch", ev.old_epoch);
            opt_member(w, "new_epoch", ev.new_epoch);
            opt_member(w, "old_sport", ev.old_sport);
            opt_member(w, "new_sport", ev.new_sport);
            opt_member(w, "moved", ev.moved);
            if (ev.reason)
                w.member("reason", error_reason(*ev.reason));
            opt_member(w, "plane", ev.plane);
            opt_member(w, "netdev", ev.plane_netdev);
            if (ev.plane_reason)
                w.member("plane_reason", plane_reason(*ev.plane_reason));
        }
        w.end_object();
        return document(w);
    }
    Line l;
    l.word(event_name(ev.kind));
    if (ev.kind == Kind::DevChange && ev.device)
        return l.str() + " " + device_text(*ev.device, style);
    if (ev.dev_name)
        l.kv("dev", *ev.dev_name);
    l.kv("qpn", ev.qpn);
    switch (ev.kind) {
    case Kind::PathFailover:
        l.kv("path", ev.path_id);
        l.kv("epoch", change(ev.old_epoch, ev.new_epoch));
        l.kv("sport", change(ev.old_sport, ev.new_sport));
        l.kv("moved", ev.moved);
        break;
    case Kind::QpError:
        if (ev.reason)
            l.kv("reason", error_reason(*ev.reason));
        break;
    default:
        l.kv("plane", ev.plane);
        if (ev.plane_netdev)
            l.kv("netdev", *ev.plane_netdev);
        if (ev.plane_reason)
            l.kv("reason", plane_reason(*ev.plane_reason));
        break;
    }
    return l.str() + "\n";
}

} // namespace metaroce::format
