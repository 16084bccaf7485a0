// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "units.h"

#include <gtest/gtest.h>

namespace metaroce::units {
namespace {

TEST(Units, RatesParseWithTheirUnit) {
    EXPECT_EQ(parse_rate_kbps("12.5Mbit", "r"), 12500u);
    EXPECT_EQ(parse_rate_kbps("10gbit", "r"), 10000000u);
    EXPECT_EQ(parse_rate_kbps("10Gbit", "r"), 10000000u);
    EXPECT_EQ(parse_rate_kbps("800Kbit", "r"), 800u);
    EXPECT_EQ(parse_rate_kbps("1500bit", "r"), 2u); // rounded to the nearest kbit
    EXPECT_EQ(parse_rate_kbps("4.294967295Tbit", "r"), 4294967295u);
    EXPECT_EQ(parse_rate_kbps("0.001Mbit", "r"), 1u);
}

TEST(Units, BadRatesSayWhy) {
    auto msg = [](std::string_view s) {
        try {
            parse_rate_kbps(s, "ingress-rate");
        } catch (const Error &e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_EQ(msg("100"), "ingress-rate \"100\" needs a unit: bit, Kbit, Mbit, Gbit or Tbit");
    EXPECT_EQ(msg("100mbps"),
              "ingress-rate \"100mbps\" has an unknown unit; use bit, Kbit, Mbit, Gbit or Tbit");
    EXPECT_EQ(msg("fast"), "ingress-rate \"fast\" is not a rate (e.g. 10Gbit)");
    EXPECT_EQ(msg("-1Gbit"), "ingress-rate \"-1Gbit\" is not a rate (e.g. 10Gbit)");
    EXPECT_EQ(msg("1.Gbit"), "ingress-rate \"1.Gbit\" is not a rate (e.g. 10Gbit)");
    EXPECT_EQ(msg("5Tbit"), "ingress-rate 5Tbit is above 4.29Tbit");
    EXPECT_EQ(msg("400bit"), "ingress-rate 400bit is below 1Kbit");
    EXPECT_EQ(msg("99999999999999999999999Tbit"),
              "ingress-rate \"99999999999999999999999Tbit\" is not a rate (e.g. 10Gbit)");
}

TEST(Units, TimesParseToNanoseconds) {
    EXPECT_EQ(parse_time_ns("50us", "t"), 50000u);
    EXPECT_EQ(parse_time_ns("1.5ms", "t"), 1500000u);
    EXPECT_EQ(parse_time_ns("2s", "t"), 2000000000u);
    EXPECT_EQ(parse_time_ns("800ns", "t"), 800u);
    EXPECT_EQ(parse_time_ns("0.0015us", "t"), 2u);
    EXPECT_THROW(parse_time_ns("50", "t"), Error);
    EXPECT_THROW(parse_time_ns("50 us", "t"), Error);
    EXPECT_THROW(parse_time_ns("50min", "t"), Error);
    EXPECT_THROW(parse_time_ns("ms", "t"), Error);
    EXPECT_THROW(parse_time_ns("99999999999999s", "t"), Error);
}

TEST(Units, WindowsCountPacketsIn1024ths) {
    EXPECT_EQ(parse_window("16", "w"), 16u * 1024);
    EXPECT_EQ(parse_window("0.25", "w"), 256u);
    EXPECT_EQ(parse_window("256.5", "w"), 256u * 1024 + 512);
    EXPECT_EQ(parse_window("0.0009765625", "w"), 1u);
    EXPECT_EQ(parse_window("0.0001", "w"), 0u); // rounds to nothing; the range check refuses
    EXPECT_THROW(parse_window("1/4", "w"), Error);
    EXPECT_THROW(parse_window("16p", "w"), Error);
    EXPECT_THROW(parse_window("", "w"), Error);
    EXPECT_THROW(parse_window("5000000", "w"), Error);
}

TEST(Units, PlainNumbersAreRangeChecked) {
    EXPECT_EQ(parse_uint("64", 1, 64, "paths"), 64u);
    auto msg = [](std::string_view s) {
        try {
            parse_uint(s, 1, 64, "paths");
        } catch (const Error &e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_EQ(msg("65"), "paths 65 is out of range 1-64");
    EXPECT_EQ(msg("0"), "paths 0 is out of range 1-64");
    EXPECT_EQ(msg("99999999999999999999999"), "paths 99999999999999999999999 is out of range 1-64");
    EXPECT_EQ(msg("0x10"), "paths \"0x10\" is not a number");
    EXPECT_EQ(msg("-1"), "paths \"-1\" is not a number");
    EXPECT_EQ(msg(""), "paths needs a number");
    EXPECT_TRUE(parse_on_off("on", "cc"));
    EXPECT_FALSE(parse_on_off("off", "cc"));
    EXPECT_THROW(parse_on_off("yes", "cc"), Error);
}

TEST(Units, RatesPrintWithTheLargestFittingUnit) {
    EXPECT_EQ(rate(12500), "12.5Mbit");
    EXPECT_EQ(rate(10000000), "10Gbit");
    EXPECT_EQ(rate(800), "800Kbit");
    EXPECT_EQ(rate(1234567), "1.23Gbit");
    EXPECT_EQ(rate(999), "999Kbit");
    EXPECT_EQ(rate(999999), "1Gbit"); // 999.999Mbit rounds to 1000Mbit
    EXPECT_EQ(rate(0), "0Kbit");
    EXPECT_EQ(rate(4294967295), "4.29Tbit");
}

TEST(Units, TimesPrintInNsUsMsOrS) {
    EXPECT_EQ(time(850), "850ns");
    EXPECT_EQ(time(45200), "45.2us");
    EXPECT_EQ(time(45000), "45us");
    EXPECT_EQ(time(12340000), "12.3ms");
    EXPECT_EQ(time(1500000000), "1.5s");
    EXPECT_EQ(time(999960), "1ms");
    EXPECT_EQ(time(0), "0ns");
}

TEST(Units, WindowsAndAlphaPrintAsDecimals) {
    EXPECT_EQ(window(16384), "16");
    EXPECT_EQ(window(256), "0.25");
    EXPECT_EQ(window(262656), "256.5");
    EXPECT_EQ(window(1), "0");
    EXPECT_EQ(window_exact(1), "0.0009765625");
    EXPECT_EQ(window_exact(262656), "256.5");
    EXPECT_EQ(window_exact(0), "0");
    EXPECT_EQ(alpha(4096), "0.063");
    EXPECT_EQ(alpha(65536), "1.000");
    EXPECT_EQ(alpha(0), "0.000");
    EXPECT_EQ(alpha(32768), "0.500");
    EXPECT_EQ(alpha_exact(4096), "0.0625");
    EXPECT_EQ(alpha_exact(1), "0.0000152587890625");
    EXPECT_EQ(alpha_exact(65536), "1");
}

} // namespace
} // namespace metaroce::units
