// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Output corners the recordings do not reach: values this tool does not
// know, missing attributes, names that need escaping.
#include "format.h"
#include "json_value.h"
#include "metaroce-netlink.h"

#include <gtest/gtest.h>

namespace metaroce::format {
namespace {

TEST(Format, UnknownEnumValuesPrintAsNumbers) {
    EXPECT_EQ(qp_type(METAROCE_QP_TYPE_UD), "UD");
    EXPECT_EQ(qp_type(0), "0");
    EXPECT_EQ(qp_type(9), "9");
    EXPECT_EQ(qp_state(METAROCE_QP_STATE_ERR), "ERR");
    EXPECT_EQ(qp_state(7), "7");
    EXPECT_EQ(path_state(METAROCE_PATH_STATE_FAILED), "failed");
    EXPECT_EQ(path_state(2), "2");
    EXPECT_EQ(error_reason(METAROCE_QP_ERROR_PEER_FATAL), "peer-fatal");
    EXPECT_EQ(error_reason(METAROCE_QP_ERROR_OTHER), "other");
    EXPECT_EQ(error_reason(9), "9");
}

TEST(Format, DevicesWithLittleToSay) {
    model::Device d;
    d.name = "mrc0";
    d.ingress_kbps = 0;
    d.ingress_active_kbps = 0;
    d.num_keys = 2;
    EXPECT_EQ(devices({d}, {}), "mrc0: keys 2 ingress-rate auto (unknown)\n");
    d.ingress_active_kbps.reset();
    EXPECT_EQ(devices({d}, {}), "mrc0: keys 2 ingress-rate auto\n");
    EXPECT_EQ(devices({}, {}), "");
    EXPECT_EQ(devices({}, {true, false, false}), "[]\n");
}

TEST(Format, JsonEscapesNames) {
    model::Device d;
    d.name = "odd\"name\\";
    std::string out = devices({d}, {true, true, false});
    auto v = testjson::parse(out);
    EXPECT_EQ(v[0]["ifname"].str(), "odd\"name\\");
}

TEST(Format, AddressesOfBothFamilies) {
    model::Address a;
    a.bytes = {192, 168, 1, 20};
    EXPECT_EQ(address(a), "192.168.1.20");
    model::Address b;
    b.v6 = true;
    b.bytes = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1};
    EXPECT_EQ(address(b), "::ffff:10.0.0.1");
}

TEST(Format, EventsWithMissingFields) {
    model::Event e;
    e.kind = model::Event::Kind::PathFailover;
    e.dev_name = "mrc0";
    e.qpn = 17;
    e.path_id = 3;
    e.new_epoch = 4;
    EXPECT_EQ(event(e, {}), "path-failover dev mrc0 qpn 17 path 3 epoch ?->4 sport ?->?\n");
    e.kind = model::Event::Kind::PlaneUp;
    e.qpn.reset();
    e.plane = 2;
    EXPECT_EQ(event(e, {}), "plane-up dev mrc0 plane 2\n");
    auto v = testjson::parse(event(e, {true, false, false}));
    EXPECT_EQ(v["event"].str(), "plane-up");
    EXPECT_EQ(v["plane"].number(), "2");
}

} // namespace
} // namespace metaroce::format
