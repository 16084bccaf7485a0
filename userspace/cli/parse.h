// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Replies and events of the metaroce family (and nlctrl's family record)
// into the model. Each takes one whole netlink message; a message that
// breaks the ABI throws nl::MalformedError naming the attribute.
#ifndef METAROCE_CLI_PARSE_H
#define METAROCE_CLI_PARSE_H

#include "model.h"
#include "nl.h"

#include <optional>
#include <span>

namespace metaroce::parse {

model::Family family(std::span<const uint8_t> msg);
model::Device device(std::span<const uint8_t> msg);
model::Qp qp(std::span<const uint8_t> msg);
model::Path path(std::span<const uint8_t> msg);
model::Plane plane(std::span<const uint8_t> msg);
// An event of our family; nullopt for commands this tool does not know.
std::optional<model::Event> event(std::span<const uint8_t> msg);

} // namespace metaroce::parse

#endif
