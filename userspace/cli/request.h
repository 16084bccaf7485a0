// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The requests of each command, as bytes. Selectors are optional where the
// ABI allows a dump of everything. Gets and sets ask for an ACK, so that
// every request ends in NLMSG_ERROR (or NLMSG_DONE for a dump).
#ifndef METAROCE_CLI_REQUEST_H
#define METAROCE_CLI_REQUEST_H

#include "model.h"
#include "nl.h"

#include <optional>
#include <string>

namespace metaroce::request {

nl::Bytes get_family(uint32_t seq);
nl::Bytes dev_dump(uint16_t family, uint32_t seq);
nl::Bytes dev_get(uint16_t family, uint32_t seq, const std::string &dev);
nl::Bytes dev_set(uint16_t family, uint32_t seq, const std::string &dev,
                  const model::DevSettings &settings);
nl::Bytes qp_dump(uint16_t family, uint32_t seq, const std::optional<std::string> &dev,
                  std::optional<uint32_t> qpn);
nl::Bytes qp_get(uint16_t family, uint32_t seq, const std::string &dev, uint32_t qpn);
nl::Bytes path_dump(uint16_t family, uint32_t seq, const std::string &dev, uint32_t qpn,
                    std::optional<uint32_t> path);
nl::Bytes plane_dump(uint16_t family, uint32_t seq, const std::optional<std::string> &dev);
// PLANE_ADD (@add) or PLANE_DEL of netdev @netdev.
nl::Bytes plane_set(uint16_t family, uint32_t seq, bool add, const std::string &dev,
                    const std::string &netdev);

} // namespace metaroce::request

#endif
