// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Runs cases against a target: one fresh QP per case, the runner playing
// its peer.
#pragma once

#include "case.h"
#include "gcm.h"
#include "target.h"

#include <optional>
#include <string>

namespace conform {

struct RunOptions {
    double within_ms = 1000; // how long a ">" or "cq" waits by default
    double tolerance_ms = 2; // around a "+MS" time of a ">"
    bool verbose = false;    // every packet, both ways
    // The target's device encrypts with it: the runner seals what it
    // sends and opens what it receives (protocol.rst, "Encryption").
    std::optional<Psk> psk;
};

struct Result {
    bool ok = false;
    std::string why; // what failed, with the case line
    std::string log; // the packets, when verbose
};

Result RunCase(Target &t, const Case &c, const RunOptions &o);

} // namespace conform
