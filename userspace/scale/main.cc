// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// mr-scale: the MetaRoCE scale model on ns-3.
//
//   mr-scale incast|ecmp|joinleave|planes|all [OPTIONS]   print markdown tables
//   mr-scale check [OPTIONS]                       the short run of make check
//   mr-scale help
#include "config.h"
#include "experiments.h"

#include <cstdio>
#include <string>
#include <vector>

namespace {

void Usage(FILE *f) {
    std::fprintf(
        f,
        "Usage: mr-scale { incast | ecmp | joinleave | planes | streams | all | check | help } "
        "[OPTIONS]\n"
        "  incast     N senders into one port: settling, fairness, queue, drops\n"
        "  ecmp       one connection over equal-cost links: spread, a link failure\n"
        "  joinleave  senders joining and leaving an incast\n"
        "  planes     hosts with one NIC per plane, a plane failing\n"
        "  streams    one QP of many streams against many QPs, the same traffic, with loss\n"
        "  all        incast, ecmp, joinleave and streams\n"
        "  check      a short run that asserts properties; ends \"N passed, N failed\"\n"
        "Options:\n%s",
        mrscale::OptionsHelp().c_str());
}

} // namespace

int main(int argc, char **argv) {
    if (argc < 2) {
        Usage(stderr);
        return 2;
    }
    std::string cmd = argv[1];
    if (cmd == "help" || cmd == "--help" || cmd == "-h") {
        Usage(stdout);
        return 0;
    }
    mrscale::Config cfg;
    std::string err = mrscale::ParseOptions(std::vector<std::string>(argv + 2, argv + argc), cfg);
    if (!err.empty()) {
        std::fprintf(stderr, "mr-scale: %s\n", err.c_str());
        return 2;
    }
    for (bool cc : {true, false}) {
        mrscale::TransportParams p = mrscale::MakeParams(cfg, cc);
        if (mr_cc_params_check(&p.cc)) {
            std::fprintf(stderr,
                         "mr-scale: the congestion control options do not fit together "
                         "(mr_cc_params_check(); e.g. an initial window above the "
                         "largest, or a path window above %u)\n",
                         MR_CC_MAX_PATH_WINDOW);
            return 2;
        }
    }
    if (cmd == "incast") {
        mrscale::IncastTable(cfg);
    } else if (cmd == "ecmp") {
        mrscale::EcmpTable(cfg);
    } else if (cmd == "joinleave") {
        mrscale::JoinLeaveTable(cfg);
        mrscale::PlanesTable(cfg);
    } else if (cmd == "planes") {
        mrscale::PlanesTable(cfg);
    } else if (cmd == "streams") {
        mrscale::StreamsTable(cfg);
    } else if (cmd == "all") {
        mrscale::IncastTable(cfg);
        mrscale::EcmpTable(cfg);
        mrscale::JoinLeaveTable(cfg);
        mrscale::StreamsTable(cfg);
    } else if (cmd == "check") {
        return mrscale::Check(cfg) ? 1 : 0;
    } else {
        std::fprintf(stderr, "mr-scale: unknown command \"%s\"\n", cmd.c_str());
        Usage(stderr);
        return 2;
    }
    return 0;
}
