// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "case.h"

#include <fstream>
#include <sstream>

namespace conform {

bool ParseCaseFile(const std::string &path, std::vector<Case> *out, std::string *why) {
    std::ifstream in(path);
    if (!in) {
        *why = path + ": cannot read";
        return false;
    }
    std::string section, text;
    Case *cur = nullptr;
    for (int n = 1; std::getline(in, text); n++) {
        const auto hash = text.find('#');
        if (hash != std::string::npos)
            text.resize(hash);
        std::istringstream words(text);
        Event ev;
        ev.line = n;
        std::string w;
        if (!(words >> w))
            continue;
        auto fail = [&](const std::string &msg) {
            *why = path + ":" + std::to_string(n) + ": " + msg;
            return false;
        };
        if (w == "section") {
            std::getline(words >> std::ws, section);
            while (!section.empty() && section.back() == ' ')
                section.pop_back();
            continue;
        }
        if (w == "case") {
            if (!(words >> w))
                return fail("a case needs a name");
            if (section.empty())
                return fail("case " + w + " before any section line");
            out->push_back(Case{path, n, w, section, {}, {}});
            cur = &out->back();
            continue;
        }
        if (!cur)
            return fail("'" + w + "' outside a case");
        if (w[0] == '+') {
            try {
                ev.at_ms = std::stod(w.substr(1));
            } catch (...) {
                return fail("bad time " + w);
            }
            if (!(words >> w))
                return fail("a time without an event");
        }
        ev.verb = w;
        while (words >> w) {
            const auto eq = w.find('=');
            // ">=N" (counter) is a word, not a key ">".
            if (eq == std::string::npos || eq == 0 || w[0] == '>')
                ev.args.push_back(w);
            else
                ev.params.emplace_back(w.substr(0, eq), w.substr(eq + 1));
        }
        if (ev.verb == "qp") {
            if (!cur->events.empty() || !cur->qp.verb.empty())
                return fail("qp must be a case's first line, once");
            cur->qp = ev;
        } else {
            cur->events.push_back(ev);
        }
    }
    return true;
}

} // namespace conform
