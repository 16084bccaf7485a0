// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// One conversation with the kernel over a Transport: the family lookup,
// requests with their replies up to the ACK or the end of the dump, and
// the event stream. Kernel refusals throw errors::KernelError, broken
// replies nl::MalformedError.
#ifndef METAROCE_CLI_SESSION_H
#define METAROCE_CLI_SESSION_H

#include "model.h"
#include "nl.h"
#include "transport.h"

#include <deque>
#include <optional>
#include <string>

namespace metaroce::session {

struct Reply {
    std::vector<nl::Bytes> messages; // of our family, in order
    bool interrupted = false;        // a dump marked NLM_F_DUMP_INTR
};

class Session {
public:
    // @module_dir: where sysfs shows the module when it is loaded, so that a
    // missing family can be told apart from a missing module.
    Session(transport::Transport &t, uint32_t first_seq,
            std::string module_dir = "/sys/module/metaroce")
        : t_(t), seq_(first_seq), module_dir_(std::move(module_dir)) {}

    // The family; looked up once. Throws errors::CliError if the module is
    // not loaded or speaks another version.
    const model::Family &family();
    uint32_t next_seq() { return seq_++; }
    // Send a request and collect its reply: a do request up to its ACK, a
    // dump up to NLMSG_DONE.
    Reply call(const nl::Bytes &request);
    // Join the events group (once), then return the next message of our
    // family; nullopt when the stream ends.
    std::optional<nl::Bytes> next_event();

private:
    transport::Transport &t_;
    uint32_t seq_;
    std::string module_dir_;
    std::optional<model::Family> family_;
    bool joined_ = false;
    std::deque<nl::Bytes> pending_;
};

} // namespace metaroce::session

#endif
