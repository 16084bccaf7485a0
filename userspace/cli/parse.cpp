// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "parse.h"

#include "metaroce-netlink.h"

#include <algorithm>
#include <cstring>
#include <linux/genetlink.h>

namespace metaroce::parse {

namespace {

using nl::Attrs;

// The attributes of a message of our family, which must carry @cmd.
Attrs attrs_of(std::span<const uint8_t> msg, const abi::AttrSet &set,
               std::initializer_list<uint8_t> cmds) {
    nl::Genl g = nl::genl(msg);
    if (std::find(cmds.begin(), cmds.end(), g.cmd) == cmds.end())
        throw nl::MalformedError("malformed reply from the kernel: command " +
                                 std::to_string(g.cmd) + " where " + std::string(set.name) +
                                 " was expected");
    return Attrs::parse(set, g.attrs);
}

std::optional<bool> flag(const std::optional<uint8_t> &v) {
    return v ? std::optional(*v != 0) : std::nullopt;
}

std::optional<model::Address> address(const Attrs &a, uint16_t v4, uint16_t v6) {
    model::Address out;
    if (auto b = a.bin(v4)) {
        std::copy(b->begin(), b->end(), out.bytes.begin());
    } else if (auto b6 = a.bin(v6)) {
        out.v6 = true;
        std::copy(b6->begin(), b6->end(), out.bytes.begin());
    } else {
        return std::nullopt;
    }
    return out;
}

std::vector<model::Stat> stats(const Attrs &nest) {
    std::vector<model::Stat> out;
    for (auto &[name, value] : nest.scalars())
        out.push_back({std::string(name), value});
    return out;
}

// A stats nest of named entries (enum metaroce_a_stats), in @set's reply.
std::vector<model::Stat> entries(const Attrs &nest, const std::string &set) {
    std::vector<model::Stat> out;
    for (const Attrs &e : nest.nests(METAROCE_A_STATS_ENTRY)) {
        auto name = e.str(METAROCE_A_STATS_ENTRY_NAME);
        auto value = e.u64(METAROCE_A_STATS_ENTRY_VALUE);
        if (!name || !value)
            throw nl::MalformedError("malformed reply from the kernel: " + set +
                                     "/stats/entry without name or value");
        out.push_back({*name, *value});
    }
    return out;
}

model::Cc cc(const Attrs &a) {
    model::Cc c;
    c.enabled = flag(a.u8(METAROCE_A_CC_ENABLED));
    c.ecn = flag(a.u8(METAROCE_A_CC_ECN));
    c.delay = flag(a.u8(METAROCE_A_CC_DELAY));
    c.loss = flag(a.u8(METAROCE_A_CC_LOSS));
    c.gain_shift = a.u8(METAROCE_A_CC_GAIN_SHIFT);
    c.ai = a.u32(METAROCE_A_CC_AI);
    c.init_path_window = a.u32(METAROCE_A_CC_INIT_PATH_WINDOW);
    c.init_conn_window = a.u32(METAROCE_A_CC_INIT_CONN_WINDOW);
    c.max_path_window = a.u32(METAROCE_A_CC_MAX_PATH_WINDOW);
    c.max_conn_window = a.u32(METAROCE_A_CC_MAX_CONN_WINDOW);
    c.min_window = a.u32(METAROCE_A_CC_MIN_WINDOW);
    c.target_delay_ns = a.u64(METAROCE_A_CC_TARGET_DELAY_NS);
    c.loss_burst = a.u32(METAROCE_A_CC_LOSS_BURST);
    return c;
}

model::Device device_of(const Attrs &a) {
    model::Device d;
    d.index = a.u32(METAROCE_A_DEV_INDEX);
    d.name = a.str(METAROCE_A_DEV_NAME);
    d.netdev_ifindex = a.u32(METAROCE_A_DEV_NETDEV_IFINDEX);
    d.netdev = a.str(METAROCE_A_DEV_NETDEV_NAME);
    d.udp_port = a.u16(METAROCE_A_DEV_UDP_PORT);
    d.paths = a.u32(METAROCE_A_DEV_PATHS);
    d.fail_after = a.u32(METAROCE_A_DEV_FAIL_AFTER);
    d.num_qps = a.u32(METAROCE_A_DEV_NUM_QPS);
    if (auto n = a.nest(METAROCE_A_DEV_CC))
        d.cc = cc(*n);
    d.ingress_kbps = a.u32(METAROCE_A_DEV_INGRESS_KBPS);
    d.ingress_active_kbps = a.u32(METAROCE_A_DEV_INGRESS_ACTIVE_KBPS);
    if (auto n = a.nest(METAROCE_A_DEV_STATS))
        d.stats = entries(*n, "dev");
    d.num_keys = a.u32(METAROCE_A_DEV_NUM_KEYS);
    if (!d.name)
        throw nl::MalformedError("malformed reply from the kernel: a device without dev/name");
    return d;
}

} // namespace

model::Family family(std::span<const uint8_t> msg) {
    nl::Genl g = nl::genl(msg);
    if (g.cmd != CTRL_CMD_NEWFAMILY)
        throw nl::MalformedError("malformed reply from nlctrl: command " + std::to_string(g.cmd));
    Attrs a = Attrs::parse(abi::kCtrl, g.attrs);
    auto id = a.u16(CTRL_ATTR_FAMILY_ID);
    auto version = a.u32(CTRL_ATTR_VERSION);
    if (!id || !version)
        throw nl::MalformedError("malformed reply from nlctrl: no family id or version");
    model::Family f{*id, *version, std::nullopt};
    for (const Attrs &grp : a.list(CTRL_ATTR_MCAST_GROUPS, abi::kCtrlGroup)) {
        if (grp.str(CTRL_ATTR_MCAST_GRP_NAME) == METAROCE_GENL_MCGRP_EVENTS)
            f.events_group = grp.u32(CTRL_ATTR_MCAST_GRP_ID);
    }
    return f;
}

model::Device device(std::span<const uint8_t> msg) {
    return device_of(attrs_of(msg, abi::kDev, {METAROCE_CMD_DEV_GET}));
}

model::Qp qp(std::span<const uint8_t> msg) {
    Attrs a = attrs_of(msg, abi::kQp, {METAROCE_CMD_QP_GET});
    model::Qp q;
    q.dev_index = a.u32(METAROCE_A_QP_DEV_INDEX);
    q.dev_name = a.str(METAROCE_A_QP_DEV_NAME);
    q.num = a.u32(METAROCE_A_QP_NUM);
    q.type = a.u8(METAROCE_A_QP_TYPE);
    q.state = a.u8(METAROCE_A_QP_STATE);
    q.peer_num = a.u32(METAROCE_A_QP_PEER_NUM);
    q.local = address(a, METAROCE_A_QP_LOCAL_IPV4, METAROCE_A_QP_LOCAL_IPV6);
    q.peer = address(a, METAROCE_A_QP_PEER_IPV4, METAROCE_A_QP_PEER_IPV6);
    q.paths = a.u32(METAROCE_A_QP_PATHS);
    q.mtu = a.u32(METAROCE_A_QP_MTU);
    q.conn_window = a.u32(METAROCE_A_QP_CONN_WINDOW);
    q.inflight = a.u32(METAROCE_A_QP_INFLIGHT);
    q.pacing_kbps = a.u32(METAROCE_A_QP_PACING_KBPS);
    q.rate_hint_kbps = a.u32(METAROCE_A_QP_RATE_HINT_KBPS);
    q.alpha = a.u32(METAROCE_A_QP_ALPHA);
    q.srtt_ns = a.u64(METAROCE_A_QP_SRTT_NS);
    if (auto n = a.nest(METAROCE_A_QP_STATS))
        q.stats = stats(*n);
    q.handshake = a.u8(METAROCE_A_QP_HANDSHAKE);
    q.local_tag = a.u64(METAROCE_A_QP_LOCAL_TAG);
    q.peer_tag = a.u64(METAROCE_A_QP_PEER_TAG);
    if (!q.num)
        throw nl::MalformedError("malformed reply from the kernel: a QP without qp/num");
    return q;
}

model::Path path(std::span<const uint8_t> msg) {
    Attrs a = attrs_of(msg, abi::kPath, {METAROCE_CMD_PATH_GET});
    model::Path p;
    p.dev_index = a.u32(METAROCE_A_PATH_DEV_INDEX);
    p.dev_name = a.str(METAROCE_A_PATH_DEV_NAME);
    p.qpn = a.u32(METAROCE_A_PATH_QPN);
    p.id = a.u32(METAROCE_A_PATH_ID);
    p.sport = a.u16(METAROCE_A_PATH_SPORT);
    p.epoch = a.u16(METAROCE_A_PATH_EPOCH);
    p.state = a.u8(METAROCE_A_PATH_STATE);
    p.srtt_ns = a.u64(METAROCE_A_PATH_SRTT_NS);
    p.rttvar_ns = a.u64(METAROCE_A_PATH_RTTVAR_NS);
    p.rto_ns = a.u64(METAROCE_A_PATH_RTO_NS);
    p.base_rtt_ns = a.u64(METAROCE_A_PATH_BASE_RTT_NS);
    p.window = a.u32(METAROCE_A_PATH_WINDOW);
    p.inflight = a.u32(METAROCE_A_PATH_INFLIGHT);
    p.alpha = a.u32(METAROCE_A_PATH_ALPHA);
    p.consec_rtos = a.u32(METAROCE_A_PATH_CONSEC_RTOS);
    if (auto n = a.nest(METAROCE_A_PATH_STATS))
        p.stats = stats(*n);
    if (!p.id)
        throw nl::MalformedError("malformed reply from the kernel: a path without path/id");
    return p;
}

model::Plane plane(std::span<const uint8_t> msg) {
    Attrs a = attrs_of(msg, abi::kPlane, {METAROCE_CMD_PLANE_GET});
    model::Plane p;
    p.dev_index = a.u32(METAROCE_A_PLANE_DEV_INDEX);
    p.dev_name = a.str(METAROCE_A_PLANE_DEV_NAME);
    p.id = a.u32(METAROCE_A_PLANE_ID);
    p.netdev_ifindex = a.u32(METAROCE_A_PLANE_NETDEV_IFINDEX);
    p.netdev = a.str(METAROCE_A_PLANE_NETDEV_NAME);
    p.state = a.u8(METAROCE_A_PLANE_STATE);
    p.paths = a.u32(METAROCE_A_PLANE_PATHS);
    p.retry_ns = a.u64(METAROCE_A_PLANE_RETRY_NS);
    if (auto n = a.nest(METAROCE_A_PLANE_STATS))
        p.stats = entries(*n, "plane");
    if (!p.id || !p.netdev)
        throw nl::MalformedError("malformed reply from the kernel: a plane without id or netdev");
    return p;
}

std::optional<model::Event> event(std::span<const uint8_t> msg) {
    nl::Genl g = nl::genl(msg);
    model::Event e;
    switch (g.cmd) {
    case METAROCE_CMD_DEV_CHANGE_NTF: {
        e.kind = model::Event::Kind::DevChange;
        e.device = device_of(Attrs::parse(abi::kDev, g.attrs));
        e.dev_index = e.device->index;
        e.dev_name = e.device->name;
        return e;
    }
    case METAROCE_CMD_PATH_FAILOVER_NTF:
        e.kind = model::Event::Kind::PathFailover;
        break;
    case METAROCE_CMD_QP_ERROR_NTF:
        e.kind = model::Event::Kind::QpError;
        break;
    case METAROCE_CMD_PLANE_DOWN_NTF:
        e.kind = model::Event::Kind::PlaneDown;
        break;
    case METAROCE_CMD_PLANE_UP_NTF:
        e.kind = model::Event::Kind::PlaneUp;
        break;
    default:
        return std::nullopt;
    }
    Attrs a = Attrs::parse(abi::kEvent, g.attrs);
    e.dev_index = a.u32(METAROCE_A_EVENT_DEV_INDEX);
    e.dev_name = a.str(METAROCE_A_EVENT_DEV_NAME);
    e.qpn = a.u32(METAROCE_A_EVENT_QPN);
    e.path_id = a.u32(METAROCE_A_EVENT_PATH_ID);
    e.old_epoch = a.u16(METAROCE_A_EVENT_OLD_EPOCH);
    e.new_epoch = a.u16(METAROCE_A_EVENT_NEW_EPOCH);
    e.old_sport = a.u16(METAROCE_A_EVENT_OLD_SPORT);
    e.new_sport = a.u16(METAROCE_A_EVENT_NEW_SPORT);
    e.moved = a.u32(METAROCE_A_EVENT_MOVED);
    e.reason = a.u8(METAROCE_A_EVENT_REASON);
    e.plane = a.u32(METAROCE_A_EVENT_PLANE);
    e.plane_netdev = a.str(METAROCE_A_EVENT_PLANE_NETDEV);
    e.plane_reason = a.u8(METAROCE_A_EVENT_PLANE_REASON);
    return e;
}

} // namespace metaroce::parse
