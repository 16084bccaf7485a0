// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// metaroce(8): administration of soft-MetaRoCE devices over generic netlink.
#include "cli.h"

#include <ctime>
#include <iostream>
#include <optional>

int main(int argc, char **argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    std::optional<metaroce::transport::Socket> sock;
    auto connect = [&]() -> metaroce::transport::Transport & {
        if (!sock)
            sock.emplace();
        return *sock;
    };
    // Sequence numbers as iproute2 starts them: stale replies cannot match.
    auto seq = static_cast<uint32_t>(std::time(nullptr));
    return metaroce::cli::run(args, connect, seq, std::cout, std::cerr);
}
