// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "cli.h"

#include "args.h"
#include "errors.h"
#include "format.h"
#include "metaroce-netlink.h"
#include "parse.h"
#include "request.h"
#include "session.h"

#include <cerrno>
#include <system_error>

namespace metaroce::cli {

namespace {

using args::Action;
using args::Invocation;

void warn_interrupted(const session::Reply &r, std::ostream &err) {
    if (r.interrupted)
        err << "Warning: the kernel's dump was interrupted by a change and may be "
               "inconsistent; run it again.\n";
}

errors::Context context(const Invocation &inv) {
    errors::Context c;
    c.dev = inv.dev;
    c.qpn = inv.qpn;
    c.path = inv.path;
    switch (inv.action) {
    case Action::DevShow:
        c.action = "dev show" + (inv.dev ? " " + *inv.dev : "");
        break;
    case Action::DevSet:
        c.action = "dev set " + *inv.dev;
        c.needs_admin = true;
        break;
    case Action::QpShow:
        c.action = "qp show";
        break;
    case Action::PathShow:
        c.action = "path show";
        break;
    case Action::PlaneShow:
        c.action = "plane show";
        break;
    case Action::PlaneAdd:
    case Action::PlaneDel:
        c.action =
            std::string(inv.action == Action::PlaneAdd ? "plane add " : "plane del ") + *inv.netdev;
        c.needs_admin = true;
        break;
    case Action::Monitor:
        c.action = "monitor";
        break;
    default:
        break;
    }
    return c;
}

void dev_show(session::Session &s, const Invocation &inv, std::ostream &out, std::ostream &err) {
    uint16_t fam = s.family().id;
    uint32_t seq = s.next_seq();
    session::Reply r =
        s.call(inv.dev ? request::dev_get(fam, seq, *inv.dev) : request::dev_dump(fam, seq));
    std::vector<model::Device> devs;
    for (const auto &m : r.messages)
        devs.push_back(parse::device(m));
    out << format::devices(devs, inv.style);
    warn_interrupted(r, err);
}

void dev_set(session::Session &s, const Invocation &inv) {
    uint16_t fam = s.family().id;
    s.call(request::dev_set(fam, s.next_seq(), *inv.dev, inv.settings));
}

void qp_show(session::Session &s, const Invocation &inv, std::ostream &out, std::ostream &err) {
    uint16_t fam = s.family().id;
    uint32_t seq = s.next_seq();
    // One QP of one device is a get, so that a missing QP is an error.
    session::Reply r = s.call(inv.dev && inv.qpn ? request::qp_get(fam, seq, *inv.dev, *inv.qpn)
                                                 : request::qp_dump(fam, seq, inv.dev, inv.qpn));
    std::vector<model::Qp> qps;
    for (const auto &m : r.messages)
        qps.push_back(parse::qp(m));
    out << format::qps(qps, inv.style);
    warn_interrupted(r, err);
}

void path_show(session::Session &s, const Invocation &inv, std::ostream &out, std::ostream &err) {
    uint16_t fam = s.family().id;
    session::Reply r = s.call(request::path_dump(fam, s.next_seq(), *inv.dev, *inv.qpn, inv.path));
    std::vector<model::Path> paths;
    for (const auto &m : r.messages)
        paths.push_back(parse::path(m));
    if (inv.path && paths.empty())
        throw errors::CliError("no path " + std::to_string(*inv.path) + " on QP " +
                               std::to_string(*inv.qpn) + " of " + *inv.dev);
    out << format::paths(paths, inv.style);
    warn_interrupted(r, err);
}

void plane_show(session::Session &s, const Invocation &inv, std::ostream &out, std::ostream &err) {
    uint16_t fam = s.family().id;
    session::Reply r = s.call(request::plane_dump(fam, s.next_seq(), inv.dev));
    std::vector<model::Plane> planes;
    for (const auto &m : r.messages)
        planes.push_back(parse::plane(m));
    out << format::planes(planes, inv.style);
    warn_interrupted(r, err);
}

void plane_set(session::Session &s, const Invocation &inv) {
    uint16_t fam = s.family().id;
    s.call(request::plane_set(fam, s.next_seq(), inv.action == Action::PlaneAdd, *inv.dev,
                              *inv.netdev));
}

void monitor(session::Session &s, const Invocation &inv, std::ostream &out, std::ostream &err) {
    for (;;) {
        std::optional<nl::Bytes> msg;
        try {
            msg = s.next_event();
        } catch (const std::system_error &e) {
            if (e.code().value() != ENOBUFS)
                throw;
            err << "Warning: events were lost (the socket's receive buffer overran)\n";
            continue;
        }
        if (!msg)
            return;
        if (auto ev = parse::event(*msg))
            out << format::event(*ev, inv.style) << std::flush;
    }
}

} // namespace

int run(const std::vector<std::string> &argv,
        const std::function<transport::Transport &()> &connect, uint32_t first_seq,
        std::ostream &out, std::ostream &err, const std::string &module_dir) {
    Invocation inv;
    try {
        inv = args::parse(argv);
    } catch (const errors::UsageError &e) {
        err << "Error: " << e.what() << "\nTry \"metaroce help\".\n";
        return e.exit_code();
    }
    if (inv.action == Action::Help) {
        out << args::usage(inv.help_topic);
        return 0;
    }
    if (inv.action == Action::Version) {
        out << "metaroce (soft-MetaRoCE), netlink family \"" << METAROCE_GENL_NAME << "\" version "
            << METAROCE_GENL_VERSION << "\n";
        return 0;
    }
    try {
        session::Session s(connect(), first_seq, module_dir);
        switch (inv.action) {
        case Action::DevShow:
            dev_show(s, inv, out, err);
            break;
        case Action::DevSet:
            dev_set(s, inv);
            break;
        case Action::QpShow:
            qp_show(s, inv, out, err);
            break;
        case Action::PathShow:
            path_show(s, inv, out, err);
            break;
        case Action::PlaneShow:
            plane_show(s, inv, out, err);
            break;
        case Action::PlaneAdd:
        case Action::PlaneDel:
            plane_set(s, inv);
            break;
        case Action::Monitor:
            monitor(s, inv, out, err);
            break;
        default:
            break;
        }
    } catch (const errors::KernelError &e) {
        err << "Error: " << errors::explain(e, context(inv)) << "\n";
        return 1;
    } catch (const errors::CliError &e) {
        err << "Error: " << e.what() << "\n";
        return e.exit_code();
    } catch (const nl::MalformedError &e) {
        err << "Error: " << e.what() << "\n";
        return 1;
    } catch (const std::system_error &e) {
        err << "Error: " << e.what() << "\n";
        return 1;
    }
    return 0;
}

} // namespace metaroce::cli
