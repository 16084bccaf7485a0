// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Case files (Documentation/metaroce/conformance.rst has the format): each
// is a list of cases, each case a list of events, one per line.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace conform {

// One line of a case: "[+MS] VERB ARG... key=value...".
struct Event {
    int line = 0;
    double at_ms = -1; // "+MS": that long after the previous event; -1: none
    std::string verb;  // <, >, post_recv, post_send, cq, mem, state, counter, wait, flush, ...
    std::vector<std::string> args;                           // words without '='
    std::vector<std::pair<std::string, std::string>> params; // key=value, in order

    const std::string *Param(const std::string &key) const {
        for (auto &[k, v] : params)
            if (k == key)
                return &v;
        return nullptr;
    }
    bool Has(const std::string &word) const {
        for (auto &a : args)
            if (a == word)
                return true;
        return false;
    }
};

struct Case {
    std::string file;
    int line = 0;
    std::string name;
    std::string section; // a heading of protocol.rst
    Event qp;            // the "qp" line; verb empty: an RC QP with the defaults
    // "needs FEATURE...": what the target must have beyond the protocol
    // units (mad: a MAD layer behind QP1); a target without is skipped.
    std::vector<std::string> needs;
    std::vector<Event> events;
};

// The cases of @path appended to @out; false with *why on a syntax error.
bool ParseCaseFile(const std::string &path, std::vector<Case> *out, std::string *why);

} // namespace conform
