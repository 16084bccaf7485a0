// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Recorded replies and events into the model, field by field.
#include "metaroce-netlink.h"
#include "parse.h"
#include "testdata.h"

#include <gtest/gtest.h>

namespace metaroce::parse {
namespace {

// The messages of a recording, without NLMSG_DONE/ERROR.
std::vector<nl::Bytes> messages(const std::string &file) {
    std::vector<nl::Bytes> out;
    for (auto &d : testdata::load(file))
        for (auto m : nl::split(d))
            if (nl::header(m).type >= 0x10)
                out.emplace_back(m.begin(), m.end());
    return out;
}

TEST(Parse, FamilyRecord) {
    auto f = family(messages("ctrl-family.hex").at(0));
    EXPECT_EQ(f.id, testdata::kFamily);
    EXPECT_EQ(f.version, 1u);
    EXPECT_EQ(f.events_group, testdata::kEventsGroup);
    auto none = family(messages("ctrl-family-nogroup.hex").at(0));
    EXPECT_FALSE(none.events_group);
    EXPECT_EQ(family(messages("ctrl-family-v2.hex").at(0)).version, 2u);
}

TEST(Parse, DevicesWithEverythingAndWithLittle) {
    auto m = messages("dev-dump.hex");
    ASSERT_EQ(m.size(), 2u);
    auto d = device(m[0]);
    EXPECT_EQ(d.index, 3u);
    EXPECT_EQ(d.name, "mrc0");
    EXPECT_EQ(d.netdev, "veth0");
    EXPECT_EQ(d.netdev_ifindex, 5u);
    EXPECT_EQ(d.udp_port, 4792);
    EXPECT_EQ(d.paths, 16u);
    EXPECT_EQ(d.fail_after, 3u);
    EXPECT_EQ(d.num_qps, 4u);
    EXPECT_EQ(d.ingress_kbps, 0u);
    EXPECT_EQ(d.ingress_active_kbps, 10000000u);
    EXPECT_EQ(d.num_keys, 0u);
    ASSERT_TRUE(d.cc);
    EXPECT_EQ(d.cc->enabled, true);
    EXPECT_EQ(d.cc->gain_shift, 4);
    EXPECT_EQ(d.cc->ai, 1024u);
    EXPECT_EQ(d.cc->init_path_window, 16u * 1024);
    EXPECT_EQ(d.cc->max_conn_window, 4096u * 1024);
    EXPECT_EQ(d.cc->min_window, 256u);
    EXPECT_EQ(d.cc->target_delay_ns, 50000u);
    EXPECT_EQ(d.cc->loss_burst, 8u);
    ASSERT_TRUE(d.stats);
    ASSERT_EQ(d.stats->size(), 6u);
    EXPECT_EQ((*d.stats)[1].name, "rx_bytes");
    EXPECT_EQ((*d.stats)[1].value, 1234567u);

    // mrc1: 64-bit pads, an unknown attribute, and omissions.
    auto e = device(m[1]);
    EXPECT_EQ(e.name, "mrc1");
    EXPECT_FALSE(e.fail_after);
    ASSERT_TRUE(e.cc);
    EXPECT_EQ(e.cc->enabled, false);
    EXPECT_FALSE(e.cc->ecn);
    ASSERT_TRUE(e.stats);
    EXPECT_TRUE(e.stats->empty());
}

TEST(Parse, Qps) {
    auto m = messages("qp-dump.hex");
    ASSERT_EQ(m.size(), 4u);
    auto gsi = qp(m[0]);
    EXPECT_EQ(gsi.num, 1u);
    EXPECT_EQ(gsi.type, METAROCE_QP_TYPE_GSI);
    EXPECT_FALSE(gsi.peer);
    EXPECT_FALSE(gsi.stats);

    auto rc = qp(m[1]); // with 64-bit pads
    EXPECT_EQ(rc.dev_name, "mrc0");
    EXPECT_EQ(rc.num, 17u);
    EXPECT_EQ(rc.state, METAROCE_QP_STATE_RTS);
    EXPECT_EQ(rc.peer_num, 18u);
    ASSERT_TRUE(rc.peer && rc.local);
    EXPECT_FALSE(rc.peer->v6);
    EXPECT_EQ(rc.peer->bytes[3], 2);
    EXPECT_EQ(rc.conn_window, 256u * 1024 + 512);
    EXPECT_EQ(rc.srtt_ns, 45200u);
    EXPECT_EQ(rc.alpha, 4096u);
    ASSERT_TRUE(rc.stats);
    ASSERT_EQ(rc.stats->size(), 14u);
    EXPECT_EQ((*rc.stats)[4].name, "retransmits");
    EXPECT_EQ((*rc.stats)[4].value, 12u);
    EXPECT_EQ(rc.stats->back().name, "hint-limited");

    auto uc = qp(m[2]);
    EXPECT_EQ(uc.type, METAROCE_QP_TYPE_UC);
    ASSERT_TRUE(uc.peer);
    EXPECT_TRUE(uc.peer->v6);
    EXPECT_EQ(uc.peer->bytes[0], 0xfd);
    EXPECT_EQ(uc.peer->bytes[15], 2);
    EXPECT_FALSE(uc.srtt_ns);
    EXPECT_EQ(uc.pacing_kbps, 0u);
}

TEST(Parse, Paths) {
    auto m = messages("path-dump.hex");
    ASSERT_EQ(m.size(), 4u);
    auto p1 = path(m[1]);
    EXPECT_EQ(p1.qpn, 17u);
    EXPECT_EQ(p1.id, 1u);
    EXPECT_EQ(p1.sport, 50122);
    EXPECT_EQ(p1.epoch, 1);
    EXPECT_EQ(p1.window, 8704u);
    EXPECT_EQ(p1.alpha, 16384u);
    EXPECT_EQ(p1.srtt_ns, 52000u);
    auto p2 = path(m[2]);
    EXPECT_EQ(p2.state, METAROCE_PATH_STATE_FAILED);
    EXPECT_EQ(p2.consec_rtos, 3u);
    auto p3 = path(m[3]);
    EXPECT_FALSE(p3.srtt_ns);
    EXPECT_FALSE(p3.base_rtt_ns);
    EXPECT_EQ(p3.rto_ns, 20000000u);
}

TEST(Parse, Planes) {
    auto m = messages("plane-dump.hex");
    ASSERT_EQ(m.size(), 2u);
    auto p1 = plane(m[1]);
    EXPECT_EQ(p1.dev_name, "mrp0");
    EXPECT_EQ(p1.id, 1u);
    EXPECT_EQ(p1.netdev, "p1");
    EXPECT_EQ(p1.netdev_ifindex, 8u);
    EXPECT_EQ(p1.state, METAROCE_PLANE_STATE_TIMED_OUT);
    EXPECT_EQ(p1.retry_ns, 180000000u);
    ASSERT_TRUE(p1.stats);
    EXPECT_EQ(p1.stats->size(), 6u);
    EXPECT_FALSE(plane(m[0]).retry_ns);
}

TEST(Parse, RepliesMustCarryTheirCommand) {
    auto m = messages("qp-dump.hex");
    EXPECT_THROW(device(m[0]), nl::MalformedError);
    EXPECT_THROW(path(m[0]), nl::MalformedError);
}

TEST(Parse, Events) {
    auto d = testdata::load("events.hex");
    ASSERT_EQ(d.size(), 2u);
    auto first = nl::split(d[0]);
    auto f = event(first[0]);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->kind, model::Event::Kind::PathFailover);
    EXPECT_EQ(f->qpn, 17u);
    EXPECT_EQ(f->path_id, 2u);
    EXPECT_EQ(f->old_sport, 50333);
    EXPECT_EQ(f->new_sport, 61007);
    EXPECT_EQ(f->moved, 5u);
    auto q = event(first[1]);
    ASSERT_TRUE(q);
    EXPECT_EQ(q->kind, model::Event::Kind::QpError);
    EXPECT_EQ(q->reason, METAROCE_QP_ERROR_RETRY_EXCEEDED);
    auto second = nl::split(d[1]);
    auto c = event(second[0]);
    ASSERT_TRUE(c && c->device);
    EXPECT_EQ(c->kind, model::Event::Kind::DevChange);
    EXPECT_EQ(c->device->paths, 8u);
    EXPECT_EQ(c->dev_name, "mrc1");
    EXPECT_EQ(event(second[1])->plane, 1u);
    EXPECT_FALSE(event(second[2])); // command 42
}

} // namespace
} // namespace metaroce::parse
