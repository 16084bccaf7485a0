// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Output of `metaroce`: text in the style of ip and rdma (one line per
// device and QP, an aligned table of paths, one line per event) or JSON
// (-j; an array per command, one object per line for events; -p indents).
// Pure functions of the model, so that the tests can check them.
#ifndef METAROCE_CLI_FORMAT_H
#define METAROCE_CLI_FORMAT_H

#include "model.h"

#include <string>
#include <vector>

namespace metaroce::format {

struct Style {
    bool json = false;
    bool pretty = false;
    bool stats = false;   // -s
    bool details = false; // -d
};

std::string devices(const std::vector<model::Device> &devs, const Style &style);
std::string qps(const std::vector<model::Qp> &qps, const Style &style);
std::string paths(const std::vector<model::Path> &paths, const Style &style);
std::string planes(const std::vector<model::Plane> &planes, const Style &style);
std::string event(const model::Event &ev, const Style &style);

// Names of the ABI's enums; a value this tool does not know prints as its number.
std::string qp_type(uint8_t v);
std::string qp_state(uint8_t v);
std::string path_state(uint8_t v);
std::string error_reason(uint8_t v);
std::string plane_state(uint8_t v);
std::string plane_reason(uint8_t v);
std::string qp_handshake(uint8_t v);
std::string tag(uint64_t v); // 0x and 16 hex digits
std::string address(const model::Address &a);

} // namespace metaroce::format

#endif
