// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// mr-conform: runs conformance cases (files, or directories of *.mrc files)
// against a target and prints KTAP, then a table of cases and passes per
// section of protocol.rst, then "N passed, N failed". Exit status 0 when
// every case passed, 1 when one failed, 2 on a usage or setup error.
//
//   mr-conform --target host [options] CASES...
//   mr-conform --target live --device DEV --peer-ip IP [--peer-netns NS]
//              [--foreign-ip IP] [options] CASES...
//
// The live target's addresses are IPv4 or IPv6, both of one family: the
// QP is reached in that family (the cases that say "needs ipv4" are
// skipped over IPv6).
// Options: --spec FILE (protocol.rst: every case's section must be one of
// its headings), --match TEXT (cases whose name or section contains it),
// --list, --verbose (every packet), --within MS, --tolerance MS, --psk HEX
// (the device encrypts with this key, the module parameter psk's text:
// every packet is sealed and opened; the cases of a directory named
// "encrypted" need it).
#include "case.h"
#include "run.h"
#include "target.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <map>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace {

using namespace conform;

int Usage() {
    std::fprintf(stderr,
                 "usage: mr-conform --target host|live [--device DEV --peer-ip IP "
                 "[--peer-netns NS] [--foreign-ip IP]] [--spec FILE] [--match TEXT] "
                 "[--list] [--verbose] [--within MS] [--tolerance MS] [--psk HEX] "
                 "CASES...\n"
                 "  --peer-ip IP, --foreign-ip IP  IPv4 or IPv6 addresses, both of one "
                 "family;\n"
                 "             the QP is reached by its RoCE v2 GID of that family\n"
                 "  --psk HEX  the device encrypts with this pre-shared key (64 hex digits, "
                 "as the\n"
                 "             module parameter psk): the runner seals every packet it "
                 "sends and\n"
                 "             opens every packet it receives; cases/encrypted/ needs "
                 "it\n");
    return 2;
}

// The *.mrc files of @path (a file, or a directory), sorted.
std::vector<std::string> CaseFiles(const std::string &path) {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return {path};
    std::vector<std::string> out;
    if (DIR *d = opendir(path.c_str())) {
        while (dirent *e = readdir(d)) {
            const std::string n = e->d_name;
            if (n.size() > 4 && n.compare(n.size() - 4, 4, ".mrc") == 0)
                out.push_back(path + "/" + n);
        }
        closedir(d);
    }
    std::sort(out.begin(), out.end());
    return out;
}

// The section headings of an RST file, in order: a line underlined by one
// of = - ~ as long as it.
std::vector<std::string> Headings(const std::string &file) {
    std::ifstream in(file);
    std::vector<std::string> out;
    std::string prev, line;
    while (std::getline(in, line)) {
        if (!prev.empty() && line.size() == prev.size() && line.size() > 2 &&
            line.find_first_not_of(line[0]) == std::string::npos && std::strchr("=-~", line[0]) &&
            prev.find_first_not_of(line[0]) != std::string::npos)
            out.push_back(prev);
        prev = line;
    }
    return out;
}

} // namespace

int main(int argc, char **argv) {
    std::string target, device, peer_ip, peer_netns, foreign_ip, spec, match, psk;
    bool list = false;
    RunOptions opts;
    std::vector<std::string> paths;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        auto val = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
        if (a == "--target")
            target = val();
        else if (a == "--device")
            device = val();
        else if (a == "--peer-ip")
            peer_ip = val();
        else if (a == "--peer-netns")
            peer_netns = val();
        else if (a == "--foreign-ip")
            foreign_ip = val();
        else if (a == "--spec")
            spec = val();
        else if (a == "--match")
            match = val();
        else if (a == "--psk")
            psk = val();
        else if (a == "--within")
            opts.within_ms = std::stod(val());
        else if (a == "--tolerance")
            opts.tolerance_ms = std::stod(val());
        else if (a == "--list")
            list = true;
        else if (a == "--verbose")
            opts.verbose = true;
        else if (a == "-h" || a == "--help")
            return Usage(), 0;
        else if (a.rfind("--", 0) == 0)
            return Usage();
        else
            paths.push_back(a);
    }
    std::vector<Case> cases;
    for (auto &p : paths)
        for (auto &f : CaseFiles(p)) {
            std::string why;
            if (!ParseCaseFile(f, &cases, &why)) {
                std::fprintf(stderr, "mr-conform: %s\n", why.c_str());
                return 2;
            }
        }
    if (!match.empty())
        std::erase_if(cases, [&](const Case &c) {
            return c.name.find(match) == std::string::npos &&
                   c.section.find(match) == std::string::npos;
        });
    std::vector<std::string> headings;
    if (!spec.empty()) {
        headings = Headings(spec);
        if (headings.empty()) {
            std::fprintf(stderr, "mr-conform: no headings in %s\n", spec.c_str());
            return 2;
        }
    }
    if (list) {
        for (auto &c : cases)
            std::printf("%s\t%s\n", c.section.c_str(), c.name.c_str());
        return 0;
    }
    if (cases.empty() || (target != "host" && target != "live"))
        return Usage();
    if (!psk.empty() || std::find(argv, argv + argc, std::string("--psk")) != argv + argc) {
        Psk k;
        std::string why;
        if (!ParsePsk(psk, &k, &why)) {
            std::fprintf(stderr, "mr-conform: %s\n", why.c_str());
            return 2;
        }
        opts.psk = k;
    }
    for (auto &c : cases)
        if (!opts.psk && ("/" + c.file).find("/encrypted/") != std::string::npos) {
            std::fprintf(stderr, "mr-conform: %s: the encrypted cases need --psk\n",
                         c.file.c_str());
            return 2;
        }

    std::unique_ptr<Target> t;
    if (target == "host") {
        t = MakeHostTarget();
        opts.tolerance_ms = std::min(opts.tolerance_ms, 0.5);
    } else {
        std::string why;
        t = MakeGuestTarget(device, peer_netns, peer_ip, foreign_ip, &why);
        if (!t) {
            std::printf("Bail out! %s\n", why.c_str());
            return 2;
        }
    }
    {
        std::string why;
        const Bytes key = opts.psk ? Bytes(opts.psk->begin(), opts.psk->end()) : Bytes{};
        if (!t->SetPsk(key, &why)) {
            std::printf("Bail out! %s\n", why.c_str());
            return 2;
        }
    }
    setvbuf(stdout, nullptr, _IOLBF, 0);
    std::printf("KTAP version 1\n1..%zu\n", cases.size());
    std::map<std::string, std::pair<int, int>> per_section; // cases, passed
    int passed = 0, skipped = 0, n = 0;
    for (auto &c : cases) {
        Result r;
        std::string lacks;
        for (auto &f : c.needs)
            if (!t->Has(f))
                lacks = f;
        if (!lacks.empty()) {
            skipped++;
            std::printf("ok %d %s: %s # SKIP the %s target has no %s\n", ++n, c.section.c_str(),
                        c.name.c_str(), t->Name().c_str(), lacks.c_str());
            continue;
        }
        if (!headings.empty() &&
            std::find(headings.begin(), headings.end(), c.section) == headings.end())
            r.why = c.file + ":" + std::to_string(c.line) + ": no section \"" + c.section +
                    "\" in " + spec;
        else
            r = RunCase(*t, c, opts);
        auto &s = per_section[c.section];
        s.first++;
        s.second += r.ok;
        passed += r.ok;
        std::printf("%s %d %s: %s\n", r.ok ? "ok" : "not ok", ++n, c.section.c_str(),
                    c.name.c_str());
        if (!r.ok)
            std::printf("# %s\n", r.why.c_str());
        if (!r.log.empty() && (!r.ok || opts.verbose)) {
            size_t start = 0;
            while (start < r.log.size()) {
                const size_t nl = r.log.find('\n', start);
                std::printf("# %s\n", r.log.substr(start, nl - start).c_str());
                start = nl == std::string::npos ? r.log.size() : nl + 1;
            }
        }
    }
    // Sections in the spec's order when it is given.
    std::vector<std::string> order = headings;
    for (auto &[s, counts] : per_section)
        if (std::find(order.begin(), order.end(), s) == order.end())
            order.push_back(s);
    std::printf("# %-34s %5s %6s\n", "section", "cases", "passed");
    for (auto &s : order)
        if (per_section.count(s))
            std::printf("# %-34s %5d %6d\n", s.c_str(), per_section[s].first,
                        per_section[s].second);
    const int failed = n - passed - skipped;
    std::printf("# target %s: %d passed, %d failed, %d skipped\n", t->Name().c_str(), passed,
                failed, skipped);
    std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
