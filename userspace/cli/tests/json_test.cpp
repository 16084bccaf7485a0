// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "json.h"
#include "json_value.h"

#include <gtest/gtest.h>

namespace metaroce::json {
namespace {

TEST(Json, CompactDocument) {
    Writer w(false);
    w.begin_array().begin_object();
    w.member("ifname", std::string("mrc0")).member("paths", 16u).member("cc", true);
    w.key("window").number_text("0.25");
    w.key("empty").begin_object().end_object();
    w.key("list").begin_array().number(1).number(2).end_array();
    w.key("none").null();
    w.end_object().end_array();
    EXPECT_EQ(w.str(), "[{\"ifname\":\"mrc0\",\"paths\":16,\"cc\":true,\"window\":0.25,"
                       "\"empty\":{},\"list\":[1,2],\"none\":null}]");
}

TEST(Json, PrettyDocumentIndentsByFour) {
    Writer w(true);
    w.begin_array().begin_object().member("a", 1u);
    w.key("b").begin_object().member("c", false).end_object();
    w.end_object().end_array();
    EXPECT_EQ(w.str(), "[\n"
                       "    {\n"
                       "        \"a\": 1,\n"
                       "        \"b\": {\n"
                       "            \"c\": false\n"
                       "        }\n"
                       "    }\n"
                       "]");
}

TEST(Json, StringsAreEscaped) {
    Writer w(false);
    w.string("a\"b\\c\n\t\x01");
    EXPECT_EQ(w.str(), "\"a\\\"b\\\\c\\n\\t\\u0001\"");
    auto v = testjson::parse(w.str());
    EXPECT_EQ(v.str(), "a\"b\\c\n\t\x01");
}

TEST(Json, MisuseIsALogicError) {
    Writer w(false);
    w.begin_object();
    EXPECT_THROW(w.number(1), std::logic_error); // a value without a key
    EXPECT_THROW(w.end_array(), std::logic_error);
    Writer a(false);
    a.begin_array();
    EXPECT_THROW(a.key("k"), std::logic_error);
}

TEST(TestJsonParser, RejectsWhatIsNotJson) {
    for (const char *bad : {"[1,]", "{\"a\":1,}", "{\"a\" 1}", "[01]", "[1.]", "\"x", "[1] 2",
                            "{\"a\":1,\"a\":2}", "[tru]", "", "[\"\t\"]"})
        EXPECT_THROW(testjson::parse(bad), testjson::ParseError) << bad;
    auto v = testjson::parse(" {\"a\": [1, 2.5, -3e2, \"x\", null, true]} ");
    EXPECT_EQ(v["a"].size(), 6u);
    EXPECT_EQ(v["a"][1].number(), "2.5");
    EXPECT_EQ(v["a"][2].number(), "-3e2");
}

} // namespace
} // namespace metaroce::json
