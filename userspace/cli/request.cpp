// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "request.h"

#include "metaroce-netlink.h"

#include <linux/genetlink.h>
#include <linux/netlink.h>

namespace metaroce::request {

namespace {

constexpr uint16_t kDo = NLM_F_REQUEST | NLM_F_ACK;
constexpr uint16_t kDump = NLM_F_REQUEST | NLM_F_DUMP;

nl::Builder msg(uint16_t family, uint16_t flags, uint32_t seq, uint8_t cmd) {
    return nl::Builder(family, flags, seq, cmd, METAROCE_GENL_VERSION);
}

// The values of one set, in attribute order, at the width the ABI gives them.
void put_all(nl::Builder &b, const abi::AttrSet &set, const std::map<uint16_t, uint64_t> &vals) {
    for (auto [type, v] : vals) {
        const abi::Attr *a = set.find(type);
        if (!a)
            throw std::logic_error("no attribute " + std::to_string(type) + " in " +
                                   std::string(set.name));
        switch (a->type) {
        case abi::Type::U8:
            b.u8(type, static_cast<uint8_t>(v));
            break;
        case abi::Type::U16:
            b.u16(type, static_cast<uint16_t>(v));
            break;
        case abi::Type::U32:
            b.u32(type, static_cast<uint32_t>(v));
            break;
        case abi::Type::U64:
            b.u64(type, v);
            break;
        default:
            throw std::logic_error("setting of a non-integer attribute");
        }
    }
}

} // namespace

nl::Bytes get_family(uint32_t seq) {
    return nl::Builder(GENL_ID_CTRL, kDo, seq, CTRL_CMD_GETFAMILY, 1)
        .str(CTRL_ATTR_FAMILY_NAME, METAROCE_GENL_NAME)
        .finish();
}

nl::Bytes dev_dump(uint16_t family, uint32_t seq) {
    return msg(family, kDump, seq, METAROCE_CMD_DEV_GET).finish();
}

nl::Bytes dev_get(uint16_t family, uint32_t seq, const std::string &dev) {
    return msg(family, kDo, seq, METAROCE_CMD_DEV_GET).str(METAROCE_A_DEV_NAME, dev).finish();
}

nl::Bytes dev_set(uint16_t family, uint32_t seq, const std::string &dev,
                  const model::DevSettings &settings) {
    nl::Builder b = msg(family, kDo, seq, METAROCE_CMD_DEV_SET);
    b.str(METAROCE_A_DEV_NAME, dev);
    // The cc nest goes where its number puts it among the device's attributes.
    std::map<uint16_t, uint64_t> before, after;
    for (auto [type, v] : settings.dev)
        (type < METAROCE_A_DEV_CC ? before : after)[type] = v;
    put_all(b, abi::kDev, before);
    if (!settings.cc.empty()) {
        b.nest_begin(METAROCE_A_DEV_CC);
        put_all(b, abi::kCc, settings.cc);
        b.nest_end();
    }
    put_all(b, abi::kDev, after);
    return b.finish();
}

nl::Bytes qp_dump(uint16_t family, uint32_t seq, const std::optional<std::string> &dev,
                  std::optional<uint32_t> qpn) {
    nl::Builder b = msg(family, kDump, seq, METAROCE_CMD_QP_GET);
    if (dev)
        b.str(METAROCE_A_QP_DEV_NAME, *dev);
    if (qpn)
        b.u32(METAROCE_A_QP_NUM, *qpn);
    return b.finish();
}

nl::Bytes qp_get(uint16_t family, uint32_t seq, const std::string &dev, uint32_t qpn) {
    return msg(family, kDo, seq, METAROCE_CMD_QP_GET)
        .str(METAROCE_A_QP_DEV_NAME, dev)
        .u32(METAROCE_A_QP_NUM, qpn)
        .finish();
}

nl::Bytes path_dump(uint16_t family, uint32_t seq, const std::string &dev, uint32_t qpn,
                    std::optional<uint32_t> path) {
    nl::Builder b = msg(family, kDump, seq, METAROCE_CMD_PATH_GET);
    b.str(METAROCE_A_PATH_DEV_NAME, dev).u32(METAROCE_A_PATH_QPN, qpn);
    if (path)
        b.u32(METAROCE_A_PATH_ID, *path);
    return b.finish();
}

nl::Bytes plane_dump(uint16_t family, uint32_t seq, const std::optional<std::string> &dev) {
    nl::Builder b = msg(family, kDump, seq, METAROCE_CMD_PLANE_GET);
    if (dev)
        b.str(METAROCE_A_PLANE_DEV_NAME, *dev);
    return b.finish();
}

nl::Bytes plane_set(uint16_t family, uint32_t seq, bool add, const std::string &dev,
                    const std::string &netdev) {
    return msg(family, kDo, seq, add ? METAROCE_CMD_PLANE_ADD : METAROCE_CMD_PLANE_DEL)
        .str(METAROCE_A_PLANE_DEV_NAME, dev)
        .str(METAROCE_A_PLANE_NETDEV_NAME, netdev)
        .finish();
}

} // namespace metaroce::request
