// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The settings `metaroce dev set` takes: keyword, attribute, unit and the
// range the ABI allows. The argument parser reads values with it, and
// error messages name a refused attribute by its keyword.
#ifndef METAROCE_CLI_SETTINGS_H
#define METAROCE_CLI_SETTINGS_H

#include "abi.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace metaroce::settings {

enum class Kind { Uint, OnOff, Window, Time, Rate };

struct Setting {
    std::string_view keyword;
    const abi::AttrSet *set; // abi::kDev or abi::kCc
    uint16_t attr;
    Kind kind;
    uint64_t min, max; // ABI units
    std::string_view help;
};

std::span<const Setting> all();
const Setting *find(std::string_view keyword);
const Setting *find(const abi::AttrSet &set, uint16_t attr);
// Parse the value of a keyword; throws units::Error, range included.
uint64_t parse(const Setting &s, std::string_view text);
// A value in the keyword's unit, as the user would type it.
std::string show(Kind kind, uint64_t value);

} // namespace metaroce::settings

#endif
