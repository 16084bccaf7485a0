// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// What the kernel reports and what the tool asks it to change, in ABI units
// (see uapi/metaroce-netlink.h). An absent value is std::nullopt: replies
// may omit any attribute.
#ifndef METAROCE_CLI_MODEL_H
#define METAROCE_CLI_MODEL_H

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace metaroce::model {

// The family as nlctrl reports it.
struct Family {
    uint16_t id = 0;
    uint32_t version = 0;
    std::optional<uint32_t> events_group;
};

struct Stat {
    std::string name; // the spec's name, e.g. "tx-packets", or the device counter's
    uint64_t value = 0;
};

struct Address {
    bool v6 = false;
    std::array<uint8_t, 16> bytes{}; // v4: the first 4
};

struct Cc {
    std::optional<bool> enabled, ecn, delay, loss;
    std::optional<uint8_t> gain_shift;
    std::optional<uint32_t> ai;
    std::optional<uint32_t> init_path_window, init_conn_window;
    std::optional<uint32_t> max_path_window, max_conn_window, min_window;
    std::optional<uint64_t> target_delay_ns;
    std::optional<uint32_t> loss_burst;

    bool empty() const {
        return !enabled && !ecn && !delay && !loss && !gain_shift && !ai && !init_path_window &&
               !init_conn_window && !max_path_window && !max_conn_window && !min_window &&
               !target_delay_ns && !loss_burst;
    }
};

struct Device {
    std::optional<uint32_t> index;
    std::optional<std::string> name;
    std::optional<uint32_t> netdev_ifindex;
    std::optional<std::string> netdev;
    std::optional<uint16_t> udp_port;
    std::optional<uint32_t> paths, fail_after, num_qps;
    std::optional<Cc> cc;
    std::optional<uint32_t> ingress_kbps, ingress_active_kbps;
    std::optional<std::vector<Stat>> stats;
    std::optional<uint32_t> num_keys;
};

// What `dev set` changes: attribute number to value, of the device set
// (udp-port, paths ...) and of its cc nest. The request carries them in
// attribute order, each at its ABI width.
struct DevSettings {
    std::map<uint16_t, uint64_t> dev, cc;

    bool empty() const { return dev.empty() && cc.empty(); }
};

struct Qp {
    std::optional<uint32_t> dev_index;
    std::optional<std::string> dev_name;
    std::optional<uint32_t> num;
    std::optional<uint8_t> type, state;
    std::optional<uint32_t> peer_num;
    std::optional<Address> local, peer;
    std::optional<uint32_t> paths, mtu, conn_window, inflight, pacing_kbps, rate_hint_kbps, alpha;
    std::optional<uint64_t> srtt_ns;
    std::optional<std::vector<Stat>> stats;
    std::optional<uint8_t> handshake;
    // The connection tags: only to CAP_NET_ADMIN callers.
    std::optional<uint64_t> local_tag, peer_tag;
};

struct Path {
    std::optional<uint32_t> dev_index;
    std::optional<std::string> dev_name;
    std::optional<uint32_t> qpn, id;
    std::optional<uint16_t> sport, epoch;
    std::optional<uint8_t> state;
    std::optional<uint64_t> srtt_ns, rttvar_ns, rto_ns, base_rtt_ns;
    std::optional<uint32_t> window, inflight, alpha, consec_rtos;
    std::optional<std::vector<Stat>> stats;
};

struct Plane {
    std::optional<uint32_t> dev_index;
    std::optional<std::string> dev_name;
    std::optional<uint32_t> id, netdev_ifindex;
    std::optional<std::string> netdev;
    std::optional<uint8_t> state;
    std::optional<uint32_t> paths;
    std::optional<uint64_t> retry_ns;
    std::optional<std::vector<Stat>> stats;
};

struct Event {
    enum class Kind { DevChange, PathFailover, QpError, PlaneDown, PlaneUp };
    Kind kind = Kind::DevChange;
    std::optional<uint32_t> dev_index;
    std::optional<std::string> dev_name;
    std::optional<uint32_t> qpn, path_id;
    std::optional<uint16_t> old_epoch, new_epoch, old_sport, new_sport;
    std::optional<uint32_t> moved;
    std::optional<uint8_t> reason;
    std::optional<uint32_t> plane;
    std::optional<std::string> plane_netdev;
    std::optional<uint8_t> plane_reason;
    std::optional<Device> device; // DevChange
};

} // namespace metaroce::model

#endif
