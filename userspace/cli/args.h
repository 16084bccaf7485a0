// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The command line of `metaroce`, in iproute2's habits: options first,
// then OBJECT COMMAND arguments; objects and commands may be abbreviated.
// Throws errors::UsageError for anything it cannot take.
#ifndef METAROCE_CLI_ARGS_H
#define METAROCE_CLI_ARGS_H

#include "format.h"
#include "model.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace metaroce::args {

enum class Action {
    Help,
    Version,
    DevShow,
    DevSet,
    QpShow,
    PathShow,
    PlaneShow,
    PlaneAdd,
    PlaneDel,
    Monitor
};

struct Invocation {
    format::Style style;
    Action action = Action::Help;
    std::string help_topic; // "", "dev", "qp", "path", "plane", "monitor"
    std::optional<std::string> dev, netdev;
    std::optional<uint32_t> qpn, path;
    model::DevSettings settings;
};

Invocation parse(const std::vector<std::string> &argv); // without argv[0]
std::string usage(std::string_view topic);

} // namespace metaroce::args

#endif
