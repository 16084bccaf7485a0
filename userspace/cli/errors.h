// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Errors of the tool and their messages. A KernelError is the kernel's
// refusal (errno and extended ACK) of one request; explain() turns it
// into one line that names the device, QP or setting at fault.
#ifndef METAROCE_CLI_ERRORS_H
#define METAROCE_CLI_ERRORS_H

#include "nl.h"

#include <optional>
#include <stdexcept>
#include <string>

namespace metaroce::errors {

// A message for the user, final as it stands.
class CliError : public std::runtime_error {
public:
    explicit CliError(const std::string &msg, int exit_code = 1)
        : std::runtime_error(msg), exit_code_(exit_code) {}
    int exit_code() const { return exit_code_; }

private:
    int exit_code_;
};

// Bad command line: exit code 2.
class UsageError : public CliError {
public:
    explicit UsageError(const std::string &msg) : CliError(msg, 2) {}
};

struct KernelError : std::runtime_error {
    KernelError(int err, nl::Bytes req);
    int error; // positive errno
    std::optional<std::string> message;
    std::optional<uint32_t> offset;   // of the refused attribute in the request
    std::optional<uint64_t> min, max; // the policy's range for it
    std::optional<uint32_t> missing_type;
    nl::Bytes request;
};

// Parse the extended ACK attributes of an NLMSG_ERROR or NLMSG_DONE.
void read_extack(KernelError &e, std::span<const uint8_t> tlvs);

// What was asked, for the message.
struct Context {
    std::string action; // "dev set mrc0"
    std::optional<std::string> dev;
    std::optional<uint32_t> qpn, path;
    bool needs_admin = false;
};

std::string explain(const KernelError &e, const Context &c);

// The attribute at @offset of a request of our family: "set/name", the
// dev set keyword and value if it is a setting. For messages and tests.
struct BadAttr {
    std::string path; // "dev/cc/gain-shift"
    std::optional<std::string> keyword, value;
    const void *setting = nullptr; // settings::Setting
};
std::optional<BadAttr> attr_at(std::span<const uint8_t> request, uint32_t offset);

} // namespace metaroce::errors

#endif
