// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// `metaroce`: one invocation from the command line to the output, over a
// transport the caller provides (a netlink socket, or recorded replies).
#ifndef METAROCE_CLI_CLI_H
#define METAROCE_CLI_CLI_H

#include "transport.h"

#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace metaroce::cli {

// Returns the exit code: 0 done, 1 an error, 2 a usage error. @connect is
// called at most once, only by commands that talk to the kernel.
// @module_dir is the module's sysfs directory (see session::Session).
int run(const std::vector<std::string> &args,
        const std::function<transport::Transport &()> &connect, uint32_t first_seq,
        std::ostream &out, std::ostream &err,
        const std::string &module_dir = "/sys/module/metaroce");

} // namespace metaroce::cli

#endif
