// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "abi.h"

#include "metaroce-netlink.h"

#include <array>
#include <linux/genetlink.h>
#include <linux/netlink.h>

namespace metaroce::abi {

namespace {

using enum Type;

// A table indexed by attribute type, built from designated entries.
template <size_t N> struct Table {
    std::array<Attr, N> attrs{};
    constexpr Table &add(uint16_t type, Attr attr) {
        attrs[type] = attr;
        return *this;
    }
};

constexpr Attr str(std::string_view name, uint16_t max_chars) {
    return {name, String, nullptr, 0, max_chars};
}
constexpr Attr bin(std::string_view name, uint16_t min, uint16_t max) {
    return {name, Binary, nullptr, min, max};
}
constexpr Attr nest(std::string_view name, const AttrSet *set, bool multi = false) {
    return {name, Nest, set, 0, 0, multi};
}

constexpr auto kCcTable = Table<METAROCE_A_CC_MAX + 1>{}
                              .add(METAROCE_A_CC_PAD, {"pad", Pad})
                              .add(METAROCE_A_CC_ENABLED, {"enabled", U8})
                              .add(METAROCE_A_CC_ECN, {"ecn", U8})
                              .add(METAROCE_A_CC_DELAY, {"delay", U8})
                              .add(METAROCE_A_CC_LOSS, {"loss", U8})
                              .add(METAROCE_A_CC_GAIN_SHIFT, {"gain-shift", U8})
                              .add(METAROCE_A_CC_AI, {"ai", U32})
                              .add(METAROCE_A_CC_INIT_PATH_WINDOW, {"init-path-window", U32})
                              .add(METAROCE_A_CC_INIT_CONN_WINDOW, {"init-conn-window", U32})
                              .add(METAROCE_A_CC_MAX_PATH_WINDOW, {"max-path-window", U32})
                              .add(METAROCE_A_CC_MAX_CONN_WINDOW, {"max-conn-window", U32})
                              .add(METAROCE_A_CC_MIN_WINDOW, {"min-window", U32})
                              .add(METAROCE_A_CC_TARGET_DELAY_NS, {"target-delay-ns", U64})
                              .add(METAROCE_A_CC_LOSS_BURST, {"loss-burst", U32});

constexpr auto kStatsEntryTable = Table<METAROCE_A_STATS_ENTRY_MAX + 1>{}
                                      .add(METAROCE_A_STATS_ENTRY_PAD, {"pad", Pad})
                                      .add(METAROCE_A_STATS_ENTRY_NAME, str("name", 63))
                                      .add(METAROCE_A_STATS_ENTRY_VALUE, {"value", U64});

constexpr auto kStatsTable = Table<METAROCE_A_STATS_MAX + 1>{}.add(
    METAROCE_A_STATS_ENTRY, nest("entry", &kStatsEntry, true));

constexpr auto kKeyTable =
    Table<METAROCE_A_KEY_MAX + 1>{}
        .add(METAROCE_A_KEY_PEER_IPV4, bin("peer-ipv4", 4, 4))
        .add(METAROCE_A_KEY_PEER_IPV6, bin("peer-ipv6", 16, 16))
        .add(METAROCE_A_KEY_SECRET, bin("secret", METAROCE_KEY_LEN_MIN, METAROCE_KEY_LEN_MAX));

constexpr auto kDevTable =
    Table<METAROCE_A_DEV_MAX + 1>{}
        .add(METAROCE_A_DEV_PAD, {"pad", Pad})
        .add(METAROCE_A_DEV_INDEX, {"index", U32})
        .add(METAROCE_A_DEV_NAME, str("name", 63))
        .add(METAROCE_A_DEV_NETDEV_IFINDEX, {"netdev-ifindex", U32})
        .add(METAROCE_A_DEV_NETDEV_NAME, str("netdev-name", 15))
        .add(METAROCE_A_DEV_UDP_PORT, {"udp-port", U16})
        .add(METAROCE_A_DEV_PATHS, {"paths", U32})
        .add(METAROCE_A_DEV_FAIL_AFTER, {"fail-after", U32})
        .add(METAROCE_A_DEV_NUM_QPS, {"num-qps", U32})
        .add(METAROCE_A_DEV_CC, nest("cc", &kCc))
        .add(METAROCE_A_DEV_INGRESS_KBPS, {"ingress-kbps", U32})
        .add(METAROCE_A_DEV_INGRESS_ACTIVE_KBPS, {"ingress-active-kbps", U32})
        .add(METAROCE_A_DEV_STATS, nest("stats", &kStats))
        .add(METAROCE_A_DEV_KEY, nest("key", &kKey))
        .add(METAROCE_A_DEV_NUM_KEYS, {"num-keys", U32});

constexpr auto kQpStatsTable = Table<METAROCE_A_QP_STATS_MAX + 1>{}
                                   .add(METAROCE_A_QP_STATS_PAD, {"pad", Pad})
                                   .add(METAROCE_A_QP_STATS_TX_PACKETS, {"tx-packets", U64})
                                   .add(METAROCE_A_QP_STATS_TX_BYTES, {"tx-bytes", U64})
                                   .add(METAROCE_A_QP_STATS_RX_PACKETS, {"rx-packets", U64})
                                   .add(METAROCE_A_QP_STATS_RX_BYTES, {"rx-bytes", U64})
                                   .add(METAROCE_A_QP_STATS_RETRANSMITS, {"retransmits", U64})
                                   .add(METAROCE_A_QP_STATS_SACK_GAPS, {"sack-gaps", U64})
                                   .add(METAROCE_A_QP_STATS_RTO_EVENTS, {"rto-events", U64})
                                   .add(METAROCE_A_QP_STATS_TAIL_PROBES, {"tail-probes", U64})
                                   .add(METAROCE_A_QP_STATS_PATH_FAILOVERS, {"path-failovers", U64})
                                   .add(METAROCE_A_QP_STATS_DUPLICATES, {"duplicates", U64})
                                   .add(METAROCE_A_QP_STATS_RNR_NAKS, {"rnr-naks", U64})
                                   .add(METAROCE_A_QP_STATS_CE_MARKS, {"ce-marks", U64})
                                   .add(METAROCE_A_QP_STATS_CC_DECREASES, {"cc-decreases", U64})
                                   .add(METAROCE_A_QP_STATS_HINT_LIMITED, {"hint-limited", U64});

constexpr auto kQpTable = Table<METAROCE_A_QP_MAX + 1>{}
                              .add(METAROCE_A_QP_PAD, {"pad", Pad})
                              .add(METAROCE_A_QP_DEV_INDEX, {"dev-index", U32})
                              .add(METAROCE_A_QP_DEV_NAME, str("dev-name", 63))
                              .add(METAROCE_A_QP_NUM, {"num", U32})
                              .add(METAROCE_A_QP_TYPE, {"type", U8})
                              .add(METAROCE_A_QP_STATE, {"state", U8})
                              .add(METAROCE_A_QP_PEER_NUM, {"peer-num", U32})
                              .add(METAROCE_A_QP_LOCAL_IPV4, bin("local-ipv4", 4, 4))
                              .add(METAROCE_A_QP_LOCAL_IPV6, bin("local-ipv6", 16, 16))
                              .add(METAROCE_A_QP_PEER_IPV4, bin("peer-ipv4", 4, 4))
                              .add(METAROCE_A_QP_PEER_IPV6, bin("peer-ipv6", 16, 16))
                              .add(METAROCE_A_QP_PATHS, {"paths", U32})
                              .add(METAROCE_A_QP_MTU, {"mtu", U32})
                              .add(METAROCE_A_QP_CONN_WINDOW, {"conn-window", U32})
                              .add(METAROCE_A_QP_INFLIGHT, {"inflight", U32})
                              .add(METAROCE_A_QP_PACING_KBPS, {"pacing-kbps", U32})
                              .add(METAROCE_A_QP_RATE_HINT_KBPS, {"rate-hint-kbps", U32})
                              .add(METAROCE_A_QP_ALPHA, {"alpha", U32})
                              .add(METAROCE_A_QP_SRTT_NS, {"srtt-ns", U64})
                              .add(METAROCE_A_QP_STATS, nest("stats", &kQpStats))
                              .add(METAROCE_A_QP_HANDSHAKE, {"handshake", U8})
                              .add(METAROCE_A_QP_LOCAL_TAG, {"local-tag", U64})
                              .add(METAROCE_A_QP_PEER_TAG, {"peer-tag", U64});

constexpr auto kPathStatsTable = Table<METAROCE_A_PATH_STATS_MAX + 1>{}
                                     .add(METAROCE_A_PATH_STATS_PAD, {"pad", Pad})
                                     .add(METAROCE_A_PATH_STATS_TX_PACKETS, {"tx-packets", U64})
                                     .add(METAROCE_A_PATH_STATS_RETRANSMITS, {"retransmits", U64})
                                     .add(METAROCE_A_PATH_STATS_SACK_GAPS, {"sack-gaps", U64})
                                     .add(METAROCE_A_PATH_STATS_RTO_EVENTS, {"rto-events", U64})
                                     .add(METAROCE_A_PATH_STATS_TAIL_PROBES, {"tail-probes", U64})
                                     .add(METAROCE_A_PATH_STATS_CE_MARKS, {"ce-marks", U64});

constexpr auto kPathTable = Table<METAROCE_A_PATH_MAX + 1>{}
                                .add(METAROCE_A_PATH_PAD, {"pad", Pad})
                                .add(METAROCE_A_PATH_DEV_INDEX, {"dev-index", U32})
                                .add(METAROCE_A_PATH_DEV_NAME, str("dev-name", 63))
                                .add(METAROCE_A_PATH_QPN, {"qpn", U32})
                                .add(METAROCE_A_PATH_ID, {"id", U32})
                                .add(METAROCE_A_PATH_SPORT, {"sport", U16})
                                .add(METAROCE_A_PATH_EPOCH, {"epoch", U16})
                                .add(METAROCE_A_PATH_STATE, {"state", U8})
                                .add(METAROCE_A_PATH_SRTT_NS, {"srtt-ns", U64})
                                .add(METAROCE_A_PATH_RTTVAR_NS, {"rttvar-ns", U64})
                                .add(METAROCE_A_PATH_RTO_NS, {"rto-ns", U64})
                                .add(METAROCE_A_PATH_BASE_RTT_NS, {"base-rtt-ns", U64})
                                .add(METAROCE_A_PATH_WINDOW, {"window", U32})
                                .add(METAROCE_A_PATH_INFLIGHT, {"inflight", U32})
                                .add(METAROCE_A_PATH_ALPHA, {"alpha", U32})
                                .add(METAROCE_A_PATH_CONSEC_RTOS, {"consec-rtos", U32})
                                .add(METAROCE_A_PATH_STATS, nest("stats", &kPathStats));

constexpr auto kEventTable = Table<METAROCE_A_EVENT_MAX + 1>{}
                                 .add(METAROCE_A_EVENT_PAD, {"pad", Pad})
                                 .add(METAROCE_A_EVENT_DEV_INDEX, {"dev-index", U32})
                                 .add(METAROCE_A_EVENT_DEV_NAME, str("dev-name", 63))
                                 .add(METAROCE_A_EVENT_QPN, {"qpn", U32})
                                 .add(METAROCE_A_EVENT_PATH_ID, {"path-id", U32})
                                 .add(METAROCE_A_EVENT_OLD_EPOCH, {"old-epoch", U16})
                                 .add(METAROCE_A_EVENT_NEW_EPOCH, {"new-epoch", U16})
                                 .add(METAROCE_A_EVENT_OLD_SPORT, {"old-sport", U16})
                                 .add(METAROCE_A_EVENT_NEW_SPORT, {"new-sport", U16})
                                 .add(METAROCE_A_EVENT_MOVED, {"moved", U32})
                                 .add(METAROCE_A_EVENT_REASON, {"reason", U8})
                                 .add(METAROCE_A_EVENT_PLANE, {"plane", U32})
                                 .add(METAROCE_A_EVENT_PLANE_NETDEV, str("plane-netdev", 15))
                                 .add(METAROCE_A_EVENT_PLANE_REASON, {"plane-reason", U8});

constexpr auto kPlaneTable = Table<METAROCE_A_PLANE_MAX + 1>{}
                                 .add(METAROCE_A_PLANE_PAD, {"pad", Pad})
                                 .add(METAROCE_A_PLANE_DEV_INDEX, {"dev-index", U32})
                                 .add(METAROCE_A_PLANE_DEV_NAME, str("dev-name", 63))
                                 .add(METAROCE_A_PLANE_ID, {"id", U32})
                                 .add(METAROCE_A_PLANE_NETDEV_IFINDEX, {"netdev-ifindex", U32})
                                 .add(METAROCE_A_PLANE_NETDEV_NAME, str("netdev-name", 15))
                                 .add(METAROCE_A_PLANE_STATE, {"state", U8})
                                 .add(METAROCE_A_PLANE_PATHS, {"paths", U32})
                                 .add(METAROCE_A_PLANE_RETRY_NS, {"retry-ns", U64})
                                 .add(METAROCE_A_PLANE_STATS, nest("stats", &kStats));

// Only what we read; the op list is not needed.
constexpr auto kCtrlTable = Table<CTRL_ATTR_MCAST_GROUPS + 1>{}
                                .add(CTRL_ATTR_FAMILY_ID, {"family-id", U16})
                                .add(CTRL_ATTR_FAMILY_NAME, str("family-name", GENL_NAMSIZ - 1))
                                .add(CTRL_ATTR_VERSION, {"version", U32})
                                .add(CTRL_ATTR_HDRSIZE, {"hdrsize", U32})
                                .add(CTRL_ATTR_MAXATTR, {"maxattr", U32})
                                .add(CTRL_ATTR_OPS, nest("ops", nullptr))
                                .add(CTRL_ATTR_MCAST_GROUPS, nest("mcast-groups", nullptr));

constexpr auto kCtrlGroupTable = Table<CTRL_ATTR_MCAST_GRP_ID + 1>{}
                                     .add(CTRL_ATTR_MCAST_GRP_NAME, str("name", GENL_NAMSIZ - 1))
                                     .add(CTRL_ATTR_MCAST_GRP_ID, {"id", U32});

constexpr auto kPolicyTable = Table<NL_POLICY_TYPE_ATTR_MASK + 1>{}
                                  .add(NL_POLICY_TYPE_ATTR_TYPE, {"type", U32})
                                  .add(NL_POLICY_TYPE_ATTR_MIN_VALUE_S, {"min-value-s", U64})
                                  .add(NL_POLICY_TYPE_ATTR_MAX_VALUE_S, {"max-value-s", U64})
                                  .add(NL_POLICY_TYPE_ATTR_MIN_VALUE_U, {"min-value-u", U64})
                                  .add(NL_POLICY_TYPE_ATTR_MAX_VALUE_U, {"max-value-u", U64})
                                  .add(NL_POLICY_TYPE_ATTR_MIN_LENGTH, {"min-length", U32})
                                  .add(NL_POLICY_TYPE_ATTR_MAX_LENGTH, {"max-length", U32})
                                  .add(NL_POLICY_TYPE_ATTR_PAD, {"pad", Pad})
                                  .add(NL_POLICY_TYPE_ATTR_MASK, {"mask", U64});

constexpr auto kExtackTable = Table<NLMSGERR_ATTR_MISS_NEST + 1>{}
                                  .add(NLMSGERR_ATTR_MSG, str("msg", 65535))
                                  .add(NLMSGERR_ATTR_OFFS, {"offs", U32})
                                  .add(NLMSGERR_ATTR_COOKIE, bin("cookie", 0, 65535))
                                  .add(NLMSGERR_ATTR_POLICY, nest("policy", &kPolicy))
                                  .add(NLMSGERR_ATTR_MISS_TYPE, {"miss-type", U32})
                                  .add(NLMSGERR_ATTR_MISS_NEST, {"miss-nest", U32});

} // namespace

const AttrSet kDev{"dev", kDevTable.attrs};
const AttrSet kCc{"cc", kCcTable.attrs};
const AttrSet kStats{"stats", kStatsTable.attrs};
const AttrSet kStatsEntry{"stats-entry", kStatsEntryTable.attrs};
const AttrSet kKey{"key", kKeyTable.attrs};
const AttrSet kQp{"qp", kQpTable.attrs};
const AttrSet kQpStats{"qp-stats", kQpStatsTable.attrs};
const AttrSet kPath{"path", kPathTable.attrs};
const AttrSet kPathStats{"path-stats", kPathStatsTable.attrs};
const AttrSet kEvent{"event", kEventTable.attrs};
const AttrSet kPlane{"plane", kPlaneTable.attrs};
const AttrSet kCtrl{"ctrl", kCtrlTable.attrs};
const AttrSet kCtrlGroup{"mcast-group", kCtrlGroupTable.attrs};
const AttrSet kExtack{"extack", kExtackTable.attrs};
const AttrSet kPolicy{"policy", kPolicyTable.attrs};

const AttrSet *set_for_cmd(uint8_t cmd) {
    switch (cmd) {
    case METAROCE_CMD_DEV_GET:
    case METAROCE_CMD_DEV_SET:
    case METAROCE_CMD_DEV_CHANGE_NTF:
        return &kDev;
    case METAROCE_CMD_QP_GET:
        return &kQp;
    case METAROCE_CMD_PATH_GET:
        return &kPath;
    case METAROCE_CMD_PLANE_GET:
    case METAROCE_CMD_PLANE_ADD:
    case METAROCE_CMD_PLANE_DEL:
        return &kPlane;
    case METAROCE_CMD_PATH_FAILOVER_NTF:
    case METAROCE_CMD_QP_ERROR_NTF:
    case METAROCE_CMD_PLANE_DOWN_NTF:
    case METAROCE_CMD_PLANE_UP_NTF:
        return &kEvent;
    default:
        return nullptr;
    }
}

} // namespace metaroce::abi
