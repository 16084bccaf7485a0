// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Every request the tool builds, byte for byte against the recordings that
// gen_data.py encodes from the spec.
#include "args.h"
#include "metaroce-netlink.h"
#include "request.h"
#include "testdata.h"

#include <gtest/gtest.h>

namespace metaroce::request {
namespace {

using testdata::hex;
using testdata::kFamily;
using testdata::load_one;

void same(const nl::Bytes &built, const std::string &file) {
    EXPECT_EQ(hex(built), hex(load_one(file))) << file;
}

model::DevSettings settings_of(const std::vector<std::string> &argv) {
    return args::parse(argv).settings;
}

TEST(Request, FamilyLookup) {
    same(get_family(1), "req-ctrl-getfamily.hex");
}

TEST(Request, Devices) {
    same(dev_dump(kFamily, 2), "req-dev-dump.hex");
    same(dev_get(kFamily, 2, "mrc0"), "req-dev-get.hex");
    same(dev_get(kFamily, 2, "mrc9"), "req-dev-get-mrc9.hex");
}

TEST(Request, DevSetPutsSettingsInAttributeOrder) {
    same(dev_set(kFamily, 2, "mrc0", settings_of({"dev", "set", "mrc0", "paths", "48"})),
         "req-dev-set-paths.hex");
    same(dev_set(kFamily, 2, "mrc0", settings_of({"dev", "set", "mrc0", "udp-port", "4793"})),
         "req-dev-set-port.hex");
    // The order on the command line does not matter.
    std::vector<std::string> all = {"dev", "set", "mrc0"};
    for (auto [k, v] : std::vector<std::pair<const char *, const char *>>{
             {"ingress-rate", "12.5Mbit"},
             {"loss-burst", "4"},
             {"target-delay", "25us"},
             {"min-window", "0.25"},
             {"max-conn-window", "1024"},
             {"max-path-window", "128"},
             {"init-conn-window", "32"},
             {"init-path-window", "8"},
             {"cc-ai", "0.5"},
             {"cc-gain", "5"},
             {"cc-loss", "on"},
             {"cc-delay", "off"},
             {"cc-ecn", "on"},
             {"cc", "on"},
             {"fail-after", "4"},
             {"paths", "8"},
             {"udp-port", "4793"},
         }) {
        all.push_back(k);
        all.push_back(v);
    }
    same(dev_set(kFamily, 2, "mrc0", settings_of(all)), "req-dev-set-all.hex");
    same(dev_set(kFamily, 2, "mrc0",
                 settings_of({"dev", "set", "mrc0", "cc", "off", "ingress-rate", "auto"})),
         "req-dev-set-cc-off.hex");
}

TEST(Request, QpsAndPaths) {
    same(qp_dump(kFamily, 2, std::nullopt, std::nullopt), "req-qp-dump.hex");
    same(qp_dump(kFamily, 2, "mrc0", std::nullopt), "req-qp-dump-dev.hex");
    same(qp_dump(kFamily, 2, std::nullopt, 17), "req-qp-dump-num.hex");
    same(qp_get(kFamily, 2, "mrc0", 17), "req-qp-get.hex");
    same(qp_get(kFamily, 2, "mrc0", 99), "req-qp-get-99.hex");
    same(path_dump(kFamily, 2, "mrc0", 17, std::nullopt), "req-path-dump.hex");
    same(path_dump(kFamily, 2, "mrc0", 17, 2), "req-path-dump-id.hex");
}

TEST(Request, Planes) {
    same(plane_dump(kFamily, 2, "mrp0"), "req-plane-dump.hex");
    same(plane_set(kFamily, 2, true, "mrp0", "p2"), "req-plane-add.hex");
    same(plane_set(kFamily, 2, false, "mrp0", "p2"), "req-plane-del.hex");
}

} // namespace
} // namespace metaroce::request
