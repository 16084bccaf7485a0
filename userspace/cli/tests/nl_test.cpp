// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The netlink layer: the C++ attribute tables against the YAML spec, the
// request builder, and the strict reading of replies.
#include "abi.h"
#include "metaroce-netlink.h"
#include "nl.h"
#include "parse.h"
#include "testdata.h"

#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <sstream>

namespace metaroce::nl {
namespace {

const std::map<std::string, const abi::AttrSet *> kSets = {{"dev", &abi::kDev},
                                                           {"cc", &abi::kCc},
                                                           {"stats", &abi::kStats},
                                                           {"stats-entry", &abi::kStatsEntry},
                                                           {"key", &abi::kKey},
                                                           {"qp", &abi::kQp},
                                                           {"qp-stats", &abi::kQpStats},
                                                           {"path", &abi::kPath},
                                                           {"path-stats", &abi::kPathStats},
                                                           {"event", &abi::kEvent},
                                                           {"plane", &abi::kPlane}};

std::string type_name(abi::Type t) {
    switch (t) {
    case abi::Type::Pad:
        return "pad";
    case abi::Type::U8:
        return "u8";
    case abi::Type::U16:
        return "u16";
    case abi::Type::U32:
        return "u32";
    case abi::Type::U64:
        return "u64";
    case abi::Type::String:
        return "string";
    case abi::Type::Binary:
        return "binary";
    case abi::Type::Nest:
        return "nest";
    default:
        return "unused";
    }
}

TEST(Abi, TablesAreTheSpecsAttributeSets) {
    std::ifstream f(std::string(METAROCE_CLI_TEST_DATA) + "/spec-attrs.txt");
    ASSERT_TRUE(f);
    std::map<std::string, size_t> per_set;
    std::string line;
    size_t lines = 0;
    while (std::getline(f, line)) {
        if (line.empty() || line[0] == '#')
            continue;
        std::istringstream w(line);
        std::string set, name, type, nested;
        unsigned num;
        w >> set >> num >> name >> type >> nested;
        ASSERT_TRUE(kSets.count(set)) << line;
        const abi::Attr *a = kSets.at(set)->find(static_cast<uint16_t>(num));
        ASSERT_NE(a, nullptr) << line;
        EXPECT_EQ(a->name, name) << line;
        EXPECT_EQ(type_name(a->type), type) << line;
        if (type == "nest") {
            ASSERT_NE(a->nested, nullptr) << line;
            EXPECT_EQ(a->nested->name, nested) << line;
        }
        per_set[set]++;
        lines++;
    }
    EXPECT_GT(lines, 100u);
    // Nothing in the tables that the spec lacks.
    for (auto &[name, set] : kSets) {
        size_t n = 0;
        for (auto &a : set->attrs)
            n += !a.name.empty();
        EXPECT_EQ(n, per_set[name]) << name;
    }
}

TEST(Builder, NestsCarryTheNestedFlagAndLengths) {
    Bytes b = Builder(0x1e, 5, 9, METAROCE_CMD_DEV_SET, 1)
                  .nest_begin(METAROCE_A_DEV_CC)
                  .u8(METAROCE_A_CC_ENABLED, 1)
                  .nest_end()
                  .finish();
    EXPECT_EQ(testdata::hex(b), "20000000 1e000500 09000000 00000000 02010000 "
                                "0c000a80 05000200 01000000");
}

TEST(Builder, RefusesWhatDoesNotFit) {
    Builder b(0x1e, 5, 1, METAROCE_CMD_DEV_SET, 1);
    EXPECT_THROW(b.str(METAROCE_A_DEV_NAME, std::string(5000, 'x')), std::length_error);
    Builder open(0x1e, 5, 1, METAROCE_CMD_DEV_SET, 1);
    open.nest_begin(METAROCE_A_DEV_CC);
    EXPECT_THROW(open.finish(), std::logic_error);
}

std::string malformed(std::span<const uint8_t> msg) {
    try {
        parse::device(msg);
    } catch (const MalformedError &e) {
        return e.what();
    }
    return "parsed";
}

TEST(Attrs, WrongLengthsAreNamed) {
    auto d = testdata::load_one("bad-attr-len.hex");
    EXPECT_EQ(malformed(split(d)[0]),
              "malformed reply from the kernel: dev/paths has 2 bytes, a u32 has 4");
    auto s = testdata::load_one("bad-string.hex");
    EXPECT_EQ(malformed(split(s)[0]),
              "malformed reply from the kernel: dev/name is a string without its terminating NUL");
}

TEST(Attrs, NestedErrorsNameTheWholePath) {
    Bytes b = Builder(0x1e, 0, 2, METAROCE_CMD_DEV_GET, 1)
                  .str(METAROCE_A_DEV_NAME, "mrc0")
                  .nest_begin(METAROCE_A_DEV_CC)
                  .u8(METAROCE_A_CC_AI, 1)
                  .nest_end()
                  .finish();
    EXPECT_EQ(malformed(b), "malformed reply from the kernel: dev/cc/ai has 1 bytes, a u32 has 4");
    Bytes stats = Builder(0x1e, 0, 2, METAROCE_CMD_DEV_GET, 1)
                      .str(METAROCE_A_DEV_NAME, "mrc0")
                      .nest_begin(METAROCE_A_DEV_STATS)
                      .nest_begin(METAROCE_A_STATS_ENTRY)
                      .str(METAROCE_A_STATS_ENTRY_NAME, std::string(64, 'n'))
                      .nest_end()
                      .nest_end()
                      .finish();
    EXPECT_EQ(malformed(stats), "malformed reply from the kernel: dev/stats/entry/name is 64 "
                                "characters long, at most 63 are allowed");
}

TEST(Attrs, OnlyMultiAttributesRepeat) {
    Bytes twice = Builder(0x1e, 0, 2, METAROCE_CMD_DEV_GET, 1)
                      .str(METAROCE_A_DEV_NAME, "mrc0")
                      .u32(METAROCE_A_DEV_PATHS, 4)
                      .u32(METAROCE_A_DEV_PATHS, 8)
                      .finish();
    EXPECT_EQ(malformed(twice), "malformed reply from the kernel: dev/paths appears twice");
    Bytes entries = Builder(0x1e, 0, 2, METAROCE_CMD_DEV_GET, 1)
                        .str(METAROCE_A_DEV_NAME, "mrc0")
                        .nest_begin(METAROCE_A_DEV_STATS)
                        .nest_begin(METAROCE_A_STATS_ENTRY)
                        .str(METAROCE_A_STATS_ENTRY_NAME, "a")
                        .u64(METAROCE_A_STATS_ENTRY_VALUE, 1)
                        .nest_end()
                        .nest_begin(METAROCE_A_STATS_ENTRY)
                        .str(METAROCE_A_STATS_ENTRY_NAME, "b")
                        .u64(METAROCE_A_STATS_ENTRY_VALUE, 2)
                        .nest_end()
                        .nest_end()
                        .finish();
    auto dev = parse::device(entries);
    ASSERT_TRUE(dev.stats);
    ASSERT_EQ(dev.stats->size(), 2u);
    EXPECT_EQ((*dev.stats)[1].name, "b");
    EXPECT_EQ((*dev.stats)[1].value, 2u);
}

TEST(Attrs, LengthsBeyondTheMessageAreRefused) {
    Bytes b =
        Builder(0x1e, 0, 2, METAROCE_CMD_DEV_GET, 1).str(METAROCE_A_DEV_NAME, "mrc0").finish();
    b[20] = 0x40; // the name claims 64 bytes; 12 are left
    EXPECT_EQ(malformed(b), "malformed reply from the kernel: dev: attribute 3 has length 64, "
                            "12 bytes are left");
    Bytes stray = Builder(0x1e, 0, 2, METAROCE_CMD_DEV_GET, 1).finish();
    stray.insert(stray.end(), {1, 0});
    stray[0] += 2;
    EXPECT_EQ(malformed(stray),
              "malformed reply from the kernel: dev: 2 stray bytes after the attributes");
    EXPECT_EQ(malformed(Bytes(stray.begin(), stray.begin() + 18)),
              "malformed reply from the kernel: a generic netlink message of 18 bytes");
}

TEST(Split, DatagramsMustHoldWholeMessages) {
    auto d = testdata::load_one("bad-truncated.hex");
    EXPECT_THROW(split(d), MalformedError);
    auto two = testdata::load("dev-dump.hex");
    ASSERT_EQ(two.size(), 2u);
    EXPECT_EQ(split(two[0]).size(), 1u);
    EXPECT_EQ(split(two[1]).size(), 2u); // mrc1 and NLMSG_DONE
    Bytes tail(two[0]);
    tail.insert(tail.end(), {0, 0, 0, 0});
    EXPECT_THROW(split(tail), MalformedError);
}

} // namespace
} // namespace metaroce::nl
