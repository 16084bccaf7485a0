// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "run.h"

#include "codec.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <deque>
#include <set>
#include <stdexcept>

namespace conform {
namespace {

// The runner's own connection tag: what the QP must put in its packets.
constexpr uint64_t kPeerTag = 0x5eed0000c0ffee01ull;
// $ctr: this far above the runner's nonce counter when a case starts.
constexpr uint64_t kCaseCounterGap = 1ull << 20;

// Names a case may use for values (flags, HELLO flags, NAK codes).
const std::map<std::string, uint64_t> kConstants = {
    {"ack_req", 0x01},        {"solicited", 0x02},    {"encrypted", 0x04},
    {"window_limited", 0x08}, {"known", 0x1},         {"reply", 0x2},
    {"remote_access", 1},     {"invalid_request", 2}, {"rnr", 3},
};

const std::map<std::string, int> kErrnos = {
    {"0", 0}, {"EINVAL", EINVAL}, {"ENOMEM", ENOMEM}, {"EOPNOTSUPP", EOPNOTSUPP}, {"EPERM", EPERM},
};

// A failed check: the case stops with its line and what was wrong.
struct Failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::string Hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
    return buf;
}

struct Got {
    Datagram d;
    std::optional<Packet> p;
    std::string undecodable;
    double t;
    std::optional<uint64_t> counter; // the trailer's, when it opened
};

// The keys of the runner's ends (psk mode): to and from the QP, from the
// peer's address and from the foreign one.
struct Keys {
    DirKey to_qp, from_qp, to_qp_foreign, from_qp_foreign;
    DirKey reverse, reverse_foreign; // the wrong direction: K(qp, sender)
};

class Runner {
public:
    Runner(Target &t, const Case &c, const RunOptions &o) : t_(t), c_(c), o_(o) {}

    Result Run() {
        Result r;
        int line = c_.line;
        try {
            Setup();
            for (auto &ev : c_.events) {
                line = ev.line;
                Do(ev);
            }
            r.ok = true;
        } catch (const Failure &f) {
            r.why = c_.file + ":" + std::to_string(line) + ": " + f.what();
        }
        r.log = log_;
        return r;
    }

private:
    // ---- values ----------------------------------------------------------
    uint64_t Term(const std::string &s) {
        if (s.empty())
            throw Failure("empty value");
        if (s[0] == '$') {
            auto it = vars_.find(s.substr(1));
            if (it == vars_.end())
                throw Failure("no value for " + s);
            return it->second;
        }
        if (auto it = kConstants.find(s); it != kConstants.end())
            return it->second;
        if (const Opcode *op = OpcodeByName(s))
            return op->value;
        try {
            size_t used = 0;
            const uint64_t v = std::stoull(s, &used, 0);
            if (used == s.size())
                return v;
        } catch (...) {
        }
        throw Failure("not a value: " + s);
    }

    // "a|b", "$x+1", "$x-0x10": ORs of sums.
    uint64_t Eval(const std::string &s) {
        uint64_t v = 0;
        size_t start = 0;
        for (;;) {
            const size_t bar = s.find('|', start);
            const std::string part = s.substr(start, bar == std::string::npos ? bar : bar - start);
            uint64_t sum = 0;
            size_t i = 0;
            int sign = 1;
            while (i <= part.size()) {
                size_t j = part.find_first_of("+-", i + 1);
                if (j == std::string::npos)
                    j = part.size();
                const uint64_t term = Term(part.substr(i, j - i));
                sum = sign > 0 ? sum + term : sum - term;
                if (j == part.size())
                    break;
                sign = part[j] == '+' ? 1 : -1;
                i = j + 1;
            }
            v |= sum;
            if (bar == std::string::npos)
                return v;
            start = bar + 1;
        }
    }

    // "0a1b..": bytes; "." may separate groups for the reader.
    Bytes HexBytes(const std::string &s) {
        Bytes out;
        std::string digits;
        for (char ch : s)
            if (ch != '.')
                digits += ch;
        if (digits.size() % 2)
            throw Failure("odd number of hex digits: " + s);
        for (size_t i = 0; i < digits.size(); i += 2)
            out.push_back(static_cast<uint8_t>(std::stoul(digits.substr(i, 2), nullptr, 16)));
        return out;
    }

    std::set<uint32_t> SackSet(const std::string &s) {
        std::set<uint32_t> out;
        if (s == "none" || s.empty())
            return out;
        size_t start = 0;
        for (;;) {
            const size_t comma = s.find(',', start);
            out.insert(static_cast<uint32_t>(Eval(s.substr(start, comma - start))));
            if (comma == std::string::npos)
                return out;
            start = comma + 1;
        }
    }

    double MsParam(const Event &ev, const char *key, double dflt) {
        const std::string *v = ev.Param(key);
        return v ? std::stod(*v) : dflt;
    }

    // How long an expectation waits: the case's bound plus the target's
    // tolerance (a live host's scheduling), or the runner's default.
    double Within(const Event &ev) {
        return ev.Param("within") ? MsParam(ev, "within", 0) + o_.tolerance_ms : o_.within_ms;
    }

    uint64_t Num(const Event &ev, const char *key, uint64_t dflt) {
        const std::string *v = ev.Param(key);
        return v ? Eval(*v) : dflt;
    }

    // ---- the QP ------------------------------------------------------------
    void Setup() {
        QpSpec spec;
        const Event &q = c_.qp;
        handshake_ = true;
        if (!q.verb.empty()) {
            if (q.Has("uc"))
                spec.type = QpType::UC;
            else if (q.Has("ud"))
                spec.type = QpType::UD;
            spec.mtu = static_cast<uint32_t>(Num(q, "mtu", spec.mtu));
            spec.retry_cnt = static_cast<uint8_t>(Num(q, "retry_cnt", spec.retry_cnt));
            spec.rnr_retry = static_cast<uint8_t>(Num(q, "rnr_retry", spec.rnr_retry));
            spec.min_rnr_timer = static_cast<uint8_t>(Num(q, "min_rnr_timer", spec.min_rnr_timer));
            spec.max_rd_atomic = static_cast<uint8_t>(Num(q, "max_rd_atomic", spec.max_rd_atomic));
            spec.max_dest_rd_atomic =
                static_cast<uint8_t>(Num(q, "max_dest_rd_atomic", spec.max_dest_rd_atomic));
            spec.qkey = static_cast<uint32_t>(Num(q, "qkey", spec.qkey));
            if (const std::string *a = q.Param("access")) {
                spec.remote_write = a->find('w') != std::string::npos;
                spec.remote_read = a->find('r') != std::string::npos;
                spec.remote_atomic = a->find('a') != std::string::npos;
            }
            handshake_ = !q.Has("no_handshake") && spec.type != QpType::UD;
        }
        type_ = spec.type;
        if (o_.psk) {
            const Target::Addresses a = t_.Addrs();
            if (a.qp.empty() || a.peer.empty())
                throw Failure("the target has no addresses to derive keys from");
            const Psk &k = *o_.psk;
            keys_ = Keys{DeriveKey(k, a.peer, a.qp),    DeriveKey(k, a.qp, a.peer),
                         DeriveKey(k, a.foreign, a.qp), DeriveKey(k, a.qp, a.foreign),
                         DeriveKey(k, a.qp, a.peer),    DeriveKey(k, a.qp, a.foreign)};
        }
        std::string why;
        if (!t_.CreateQp(spec, &why))
            throw Failure("cannot create the QP: " + why);
        vars_ = {{"qpn", t_.Qpn()},   {"peer_qpn", kPeerQpn},
                 {"rkey", t_.Rkey()}, {"va", t_.Va()},
                 {"rq", kPeerPsn},    {"sq", kQpPsn},
                 {"ptag", kPeerTag},  {"qkey", spec.qkey},
                 {"tag", 0},          {"ctr", NextCounter() + kCaseCounterGap}};
        t_prev_ = t_.NowMs();
        if (handshake_)
            Handshake();
        base_ = t_.Counters();
        t_prev_ = t_.NowMs();
    }

    // The QP's first HELLO, answered with the proof that ends the handshake.
    void Handshake() {
        Event ev;
        ev.verb = ">";
        ev.args = {"HELLO"};
        ev.params = {{"src_tag", "?tag"}, {"within", "3000"}};
        Expect(ev);
        Packet p;
        p.opcode = "HELLO";
        p.fields = {{"version", 2},        {"opcode", 0x22},      {"qpn", t_.Qpn()},
                    {"tag", vars_["tag"]}, {"src_tag", kPeerTag}, {"hflags", 0x3}};
        Datagram d;
        d.payload = Encode(p);
        d.sport = 49152;
        std::string how;
        Seal(Event{}, &d, &how);
        Send(d, p, how);
        t_.Wait(std::chrono::milliseconds(1));
        Drain(5);
        queue_.clear();
    }

    // ---- packets -----------------------------------------------------------
    void Send(const Datagram &d, const Packet &p, const std::string &how = "") {
        if (o_.verbose)
            log_ += "  < " + Describe(p) + (d.foreign ? " (foreign)" : "") + how + "\n";
        t_.Inject(d);
    }

    void Pull(double wait_ms) {
        auto d = t_.Receive(Ms(wait_ms < 0 ? 0 : wait_ms));
        if (!d)
            return;
        Got g{*d, std::nullopt, "", d->t_ms >= 0 ? d->t_ms : t_.NowMs(), std::nullopt};
        if (o_.psk) {
            // Every packet must be encrypted with K(qp, receiver) and open.
            OpenError err;
            auto o = Open(d->foreign ? keys_.from_qp_foreign : keys_.from_qp, d->payload, &err);
            if (o) {
                g.counter = o->counter;
                g.p = Decode(o->clear, &g.undecodable);
            } else {
                g.undecodable = err == OpenError::NotEncrypted ? "sent in the clear"
                                : err == OpenError::Short
                                    ? "too short for an encrypted packet (" +
                                          std::to_string(d->payload.size()) + " bytes)"
                                    : std::string("its tag does not check with K(qp, ") +
                                          (d->foreign ? "foreign" : "peer") + ")";
            }
        } else {
            g.p = Decode(d->payload, &g.undecodable);
        }
        if (o_.verbose)
            log_ += "  > " + (g.p ? Describe(*g.p) : "undecodable: " + g.undecodable) +
                    (g.counter ? " [sealed, counter " + Hex(*g.counter) + "]" : "") + "\n";
        queue_.push_back(std::move(g));
    }

    // What is queued after @ms more of waiting.
    void Drain(double ms) {
        const double end = t_.NowMs() + ms;
        size_t n;
        do {
            n = queue_.size();
            Pull(end - t_.NowMs());
        } while (queue_.size() != n && t_.NowMs() < end);
    }

    void Inject(const Event &ev) {
        if (ev.args.empty())
            throw Failure("< needs an opcode");
        Packet p;
        p.opcode = ev.args[0];
        const Opcode *op = OpcodeByName(p.opcode);
        const bool raw_op = !op;
        const bool ud = op && (p.opcode == "UD_SEND" || p.opcode == "UD_SEND_IMM");
        const bool hello = p.opcode == "HELLO";
        p.fields["version"] = 2;
        p.fields["opcode"] = raw_op ? Eval(p.opcode) : op->value;
        p.fields["qpn"] = t_.Qpn();
        p.fields["tag"] = ud || hello ? 0 : vars_["tag"];
        Datagram d;
        d.sport = 49152;
        uint32_t seed = 1;
        std::optional<uint32_t> payload_len;
        Bytes data;
        size_t trunc = SIZE_MAX, extra = 0;
        for (auto &[k, v] : ev.params) {
            if (k == "payload")
                payload_len = static_cast<uint32_t>(Eval(v));
            else if (k == "seed")
                seed = static_cast<uint32_t>(Eval(v));
            else if (k == "sport")
                d.sport = static_cast<uint16_t>(Eval(v));
            else if (k == "trunc")
                trunc = Eval(v);
            else if (k == "extra")
                extra = Eval(v);
            else if (k == "sack")
                p.sack = SackSet(v);
            else if (k == "data")
                data = HexBytes(v);
            else if (k != "tamper" && k != "counter" && k != "key")
                p.fields[k] = Eval(v);
        }
        d.foreign = ev.Has("foreign");
        d.ce = ev.Has("ce");
        d.no_csum = ev.Has("nocsum");
        const uint32_t path = static_cast<uint32_t>(p.fields["path"]);
        const uint32_t epoch = static_cast<uint32_t>(p.fields["epoch"]);
        const auto key = std::make_pair(path, epoch);
        if (!p.fields.count("psn") && !hello && !ud && op && op->value < 0x20) {
            auto it = next_psn_.find(key);
            p.fields["psn"] = it != next_psn_.end() ? it->second : (epoch ? 0 : kPeerPsn);
        }
        if (!hello && !ud && p.fields.count("psn") && op && op->value < 0x20)
            next_psn_[key] = static_cast<uint32_t>(p.fields["psn"]) + 1;
        if (payload_len) {
            const uint64_t off = p.fields.count("offset") ? p.fields["offset"] : 0;
            for (uint32_t i = 0; i < *payload_len; i++)
                p.payload.push_back(Pattern(seed, off + i));
            if (!p.fields.count("length") && !ud)
                p.fields["length"] = *payload_len;
        }
        p.payload.insert(p.payload.end(), data.begin(), data.end());
        d.payload = Encode(p);
        if (trunc < d.payload.size())
            d.payload.resize(trunc);
        d.payload.resize(d.payload.size() + extra, 0);
        std::string how;
        Seal(ev, &d, &how);
        if (ev.at_ms >= 0)
            WaitUntil(t_prev_ + ev.at_ms);
        Send(d, p, how);
        t_prev_ = t_.NowMs();
    }

    // psk mode: @d sealed as the "<" event @ev says (the words clear,
    // tamper=, counter=, key=); *how says how, for the log.
    void Seal(const Event &ev, Datagram *d, std::string *how) {
        const std::string *tamper = ev.Param("tamper"), *key = ev.Param("key");
        const bool sealing = o_.psk && !ev.Has("clear");
        if (!o_.psk && (ev.Has("clear") || tamper || key || ev.Param("counter")))
            throw Failure("clear, tamper=, counter= and key= need --psk");
        if (!sealing) {
            if (o_.psk)
                *how = " [clear]";
            return;
        }
        const DirKey *k = d->foreign ? &keys_.to_qp_foreign : &keys_.to_qp;
        if (key) {
            if (*key == "peer")
                k = &keys_.to_qp;
            else if (*key == "foreign")
                k = &keys_.to_qp_foreign;
            else if (*key == "reverse")
                k = d->foreign ? &keys_.reverse_foreign : &keys_.reverse;
            else
                throw Failure("key=peer|foreign|reverse, not " + *key);
        }
        const uint64_t counter = ev.Param("counter") ? Num(ev, "counter", 0) : NextCounter();
        if (ev.Param("counter"))
            SkipCounters(counter); // the target's window follows the highest
        if (d->payload.size() < kAadLen) {
            *how = " [too short to seal]";
            return;
        }
        d->payload = conform::Seal(*k, d->payload, counter);
        *how = " [sealed, counter " + Hex(counter) + (key ? ", key " + *key : "");
        if (tamper) {
            // One bit flipped in that part of the sealed packet.
            const size_t len = d->payload.size();
            size_t at;
            if (*tamper == "ct" && len > kAadLen + kTrailerLen)
                at = kAadLen;
            else if (*tamper == "tag")
                at = len - 1;
            else if (*tamper == "counter")
                at = len - 16 - 1; // the counter's last byte
            else if (*tamper == "base")
                at = 11; // the PSN's last byte: not a flag the receiver checks first
            else
                throw Failure("tamper=ct|tag|counter|base, not " + *tamper);
            d->payload[at] ^= 0x01;
            *how += ", tampered " + *tamper;
        }
        *how += "]";
    }

    void WaitUntil(double when) {
        const double now = t_.NowMs();
        if (when > now) {
            Drain(when - now);
            const double left = when - t_.NowMs();
            if (left > 0)
                t_.Wait(Ms(left));
        }
    }

    // Whether @g is what @ev expects; the first difference in *diff. The
    // captures go to *bind.
    bool Matches(const Event &ev, const Got &g, std::map<std::string, uint64_t> *bind,
                 std::string *diff) {
        if (!g.p) {
            *diff = "undecodable (" + g.undecodable + ")";
            return false;
        }
        const Packet &p = *g.p;
        if (p.opcode != ev.args[0]) {
            *diff = p.opcode;
            return false;
        }
        auto field = [&](const std::string &k) -> uint64_t {
            auto it = p.fields.find(k);
            if (it == p.fields.end())
                throw Failure(p.opcode + " has no field " + k);
            return it->second;
        };
        std::set<std::string> named;
        for (auto &[k, v] : ev.params)
            named.insert(k);
        const bool ud = p.opcode == "UD_SEND" || p.opcode == "UD_SEND_IMM";
        std::vector<std::pair<std::string, std::string>> checks = {{"version", "2"}};
        if (!named.count("qpn"))
            checks.emplace_back("qpn", "$peer_qpn");
        if (!named.count("tag") && handshake_ && !ud && p.opcode != "HELLO")
            checks.emplace_back("tag", "$ptag");
        for (auto &kv : ev.params)
            checks.push_back(kv);
        const uint64_t offset = p.fields.count("offset") ? p.fields.at("offset") : 0;
        for (auto &[k, v] : checks) {
            if (k == "within" || k == "late" || v == "*")
                continue;
            if (k == "sack") {
                if (p.sack != SackSet(v)) {
                    *diff = "sack differs";
                    return false;
                }
                continue;
            }
            if (k == "payload") {
                if (p.payload.size() != Eval(v)) {
                    *diff = "payload " + std::to_string(p.payload.size());
                    return false;
                }
                continue;
            }
            if (k == "data") {
                const Bytes want = HexBytes(v);
                if (p.payload.size() < want.size() ||
                    !std::equal(want.begin(), want.end(), p.payload.begin())) {
                    *diff = "payload does not start with " + v;
                    return false;
                }
                continue;
            }
            if (k == "src" || k == "seed") {
                // src=O: the QP's region from O; seed=S: what the runner sent.
                const uint64_t base = k == "src" ? Eval(v) : 0;
                const uint32_t seed = k == "src" ? 0 : static_cast<uint32_t>(Eval(v));
                for (size_t i = 0; i < p.payload.size(); i++)
                    if (p.payload[i] != Pattern(seed, base + offset + i)) {
                        *diff = "payload byte " + std::to_string(i);
                        return false;
                    }
                continue;
            }
            uint64_t got;
            if (k == "sport")
                got = g.d.sport;
            else if (k == "ect")
                got = g.d.ect;
            else if (k == "wire_len")
                got = g.d.payload.size();
            else if (k == "wire_flags")
                got = g.d.payload.size() > 2 ? g.d.payload[2] : 0;
            else if (k == "nonce_counter") {
                if (!g.counter)
                    throw Failure("nonce_counter needs --psk");
                got = *g.counter;
            } else
                got = field(k);
            if (v[0] == '?') {
                (*bind)[v.substr(1)] = got;
                continue;
            }
            if (v[0] == '!') {
                // !x: anything but x.
                if (got == Eval(v.substr(1))) {
                    *diff = k + "=" + Hex(got) + " (want " + v + ")";
                    return false;
                }
                continue;
            }
            if (const size_t dots = v.find(".."); dots != std::string::npos) {
                // lo..hi: a range, both ends included.
                const uint64_t lo = Eval(v.substr(0, dots)), hi = Eval(v.substr(dots + 2));
                if (got < lo || got > hi) {
                    *diff = k + "=" + Hex(got) + " (want " + v + ")";
                    return false;
                }
                continue;
            }
            // ">V", ">=V": at least; else exactly.
            const bool gt = v[0] == '>', ge = gt && v.size() > 1 && v[1] == '=';
            const uint64_t want = Eval(v.substr(ge ? 2 : gt ? 1 : 0));
            if (ge ? got < want : gt ? got <= want : got != want) {
                *diff = k + "=" + Hex(got) + " (want " + (gt ? v.substr(0, ge ? 2 : 1) : "") +
                        Hex(want) + ")";
                return false;
            }
        }
        return true;
    }

    void Expect(const Event &ev) {
        if (ev.args.empty())
            throw Failure("> needs an opcode, or none");
        if (ev.args[0] == "none")
            return ExpectNone(ev);
        const double start = t_prev_;
        // late=MS: a timer's own granularity, on top of the tolerance.
        const double within =
            ev.at_ms >= 0 ? ev.at_ms + o_.tolerance_ms + MsParam(ev, "late", 0) : Within(ev);
        const double deadline = t_.NowMs() + within + (ev.at_ms >= 0 ? start - t_.NowMs() : 0);
        std::string closest;
        for (size_t seen = 0;;) {
            for (; seen < queue_.size(); seen++) {
                std::map<std::string, uint64_t> bind;
                std::string diff;
                if (queue_[seen].t > deadline || !Matches(ev, queue_[seen], &bind, &diff)) {
                    if (queue_[seen].p && queue_[seen].p->opcode == ev.args[0])
                        closest = Describe(*queue_[seen].p) + ": " + diff;
                    continue;
                }
                const double when = queue_[seen].t;
                queue_.erase(queue_.begin() + static_cast<long>(seen));
                for (auto &[k, v] : bind)
                    vars_[k] = v;
                if (ev.at_ms >= 0 && (when < start + ev.at_ms - o_.tolerance_ms)) {
                    char buf[96];
                    std::snprintf(buf, sizeof(buf), "came after %.3f ms, expected %.3f +- %.3f",
                                  when - start, ev.at_ms, o_.tolerance_ms);
                    throw Failure(buf);
                }
                t_prev_ = when;
                return;
            }
            // Past the deadline, what is already there may still have
            // arrived in time (the socket's timestamps say when).
            const double left = deadline - t_.NowMs();
            const size_t had = queue_.size();
            Pull(std::max(0.0, left));
            if (queue_.size() == had && t_.NowMs() >= deadline)
                break;
        }
        std::string what = "no " + ev.args[0];
        if (!closest.empty())
            what += "; the last " + ev.args[0] + " was " + closest;
        else if (!queue_.empty())
            what += "; got " +
                    (queue_.back().p ? Describe(*queue_.back().p) : queue_.back().undecodable);
        throw Failure(what);
    }

    // "> none [OPCODE] [for=MS] [but_FIELD=V ...]": nothing new (of that
    // opcode) for MS, but packets of that opcode whose fields are all the
    // but_ ones (a copy of a packet that may cross an injection).
    void ExpectNone(const Event &ev) {
        const size_t before = queue_.size();
        Drain(MsParam(ev, "for", 50));
        // With an opcode, and fields: only such packets are unexpected.
        Event like = ev, but = ev;
        if (ev.args.size() > 1)
            like.args = but.args = {ev.args[1]};
        const auto is_but = [](const auto &kv) { return kv.first.rfind("but_", 0) == 0; };
        std::erase_if(like.params, [&](auto &kv) { return kv.first == "for" || is_but(kv); });
        but.params.clear();
        for (const auto &kv : ev.params)
            if (is_but(kv))
                but.params.emplace_back(kv.first.substr(4), kv.second);
        for (size_t i = before; i < queue_.size(); i++) {
            const Got &g = queue_[i];
            std::map<std::string, uint64_t> bind;
            std::string diff;
            if (ev.args.size() > 1 && !Matches(like, g, &bind, &diff))
                continue;
            if (!but.params.empty() && ev.args.size() > 1 && Matches(but, g, &bind, &diff))
                continue;
            throw Failure("unexpected " +
                          (g.p ? Describe(*g.p) : "undecodable packet (" + g.undecodable + ")"));
        }
        t_prev_ = t_.NowMs();
    }

    // ---- verbs -------------------------------------------------------------
    void CheckErr(const Event &ev, int got, const char *what) {
        const std::string *want = ev.Param("err");
        const int w = want ? (kErrnos.count(*want) ? kErrnos.at(*want) : -1) : 0;
        if (got != w)
            throw Failure(std::string(what) + " returned " + std::strerror(got));
    }

    void PostSend(const Event &ev) {
        SendWr wr;
        wr.wr_id = Num(ev, "wr", 0);
        wr.op = ev.Param("op") ? *ev.Param("op") : "send";
        wr.offset = static_cast<uint32_t>(Num(ev, "off", 0));
        wr.length = static_cast<uint32_t>(Num(ev, "len", 0));
        wr.imm = static_cast<uint32_t>(Num(ev, "imm", 0));
        wr.inv_rkey = static_cast<uint32_t>(Num(ev, "inv_rkey", 0));
        wr.rkey = static_cast<uint32_t>(Num(ev, "rkey", 0x777));
        wr.va = Num(ev, "va", 0x7000000);
        wr.compare = Num(ev, "compare", 0);
        wr.swap_add = Num(ev, "swap", Num(ev, "add", 0));
        wr.solicited = ev.Has("solicited");
        wr.remote_qkey = static_cast<uint32_t>(Num(ev, "qkey", vars_["qkey"]));
        CheckErr(ev, t_.PostSend(wr), "post_send");
    }

    void Cq(const Event &ev) {
        if (ev.Has("none")) {
            if (auto c = t_.PollCq(Ms(MsParam(ev, "for", 50))))
                throw Failure("unexpected completion wr " + std::to_string(c->wr_id) + " " +
                              c->status);
            return;
        }
        auto c = t_.PollCq(Ms(Within(ev)));
        if (!c)
            throw Failure("no completion");
        auto check = [&](const char *key, const std::string &got) {
            const std::string *want = ev.Param(key);
            if (want && *want != got)
                throw Failure(std::string("completion ") + key + " " + got + ", want " + *want);
        };
        auto check_num = [&](const char *key, uint64_t got) {
            const std::string *want = ev.Param(key);
            if (want && Eval(*want) != got)
                throw Failure(std::string("completion ") + key + " " + Hex(got) + ", want " +
                              *want);
        };
        check_num("wr", c->wr_id);
        check("status", c->status);
        check("opcode", c->opcode);
        if (c->status == "success")
            check_num("len", c->byte_len);
        if (ev.Param("imm")) {
            if (!c->imm)
                throw Failure("completion without immediate data");
            check_num("imm", *c->imm);
        }
        if (ev.Param("src_qp"))
            check_num("src_qp", c->src_qp);
    }

    void Mem(const Event &ev) {
        const uint32_t off = static_cast<uint32_t>(Num(ev, "off", 0));
        const uint32_t len = static_cast<uint32_t>(Num(ev, "len", 0));
        const uint32_t seed = static_cast<uint32_t>(Num(ev, "seed", 0));
        const uint64_t at = Num(ev, "at", seed ? 0 : off);
        const Bytes b = t_.ReadMem(off, len);
        if (b.size() != len)
            throw Failure("cannot read the region");
        if (const std::string *v = ev.Param("u64")) {
            // A word an atomic wrote, little-endian as the host's memory.
            uint64_t w = 0;
            for (int i = 7; i >= 0; i--)
                w = w << 8 | b[static_cast<size_t>(i)];
            if (w != Eval(*v))
                throw Failure("word at " + std::to_string(off) + " is " + Hex(w));
            return;
        }
        for (uint32_t i = 0; i < len; i++)
            if (b[i] != Pattern(seed, at + i))
                throw Failure("region byte " + std::to_string(off + i) + " is " + Hex(b[i]) +
                              ", want " + Hex(Pattern(seed, at + i)));
    }

    void State(const Event &ev) {
        const double end = t_.NowMs() + Within(ev);
        std::string s;
        do {
            s = t_.QpState();
            if (s == ev.args.at(0))
                return;
            t_.Wait(std::chrono::milliseconds(5));
        } while (t_.NowMs() < end);
        throw Failure("QP in " + s + ", want " + ev.args[0]);
    }

    void Counter(const Event &ev) {
        if (ev.args.size() != 2)
            throw Failure("counter NAME N, or counter NAME >=N");
        const std::string &name = ev.args[0];
        const bool at_least = ev.args[1].rfind(">=", 0) == 0;
        const bool at_most = ev.args[1].rfind("<=", 0) == 0;
        const int64_t want =
            static_cast<int64_t>(Eval(at_least || at_most ? ev.args[1].substr(2) : ev.args[1]));
        const double end = t_.NowMs() + Within(ev);
        int64_t got;
        for (;;) {
            auto now = t_.Counters();
            if (!now.count(name))
                throw Failure("no counter " + name);
            got = now[name] - base_[name];
            if (at_most || got >= want || t_.NowMs() >= end)
                break;
            t_.Wait(std::chrono::milliseconds(10));
        }
        if (at_least ? got < want : at_most ? got > want : got != want)
            throw Failure(name + " grew by " + std::to_string(got) + ", want " + ev.args[1]);
    }

    void Do(const Event &ev) {
        const std::string &v = ev.verb;
        if (v == "<")
            return Inject(ev);
        if (v == ">")
            return Expect(ev);
        if (ev.at_ms >= 0)
            WaitUntil(t_prev_ + ev.at_ms);
        if (v == "post_recv")
            CheckErr(ev,
                     t_.PostRecv(Num(ev, "wr", 0), static_cast<uint32_t>(Num(ev, "off", 0)),
                                 static_cast<uint32_t>(Num(ev, "len", 0))),
                     "post_recv");
        else if (v == "post_send")
            PostSend(ev);
        else if (v == "cq")
            Cq(ev);
        else if (v == "mem")
            Mem(ev);
        else if (v == "state")
            State(ev);
        else if (v == "counter")
            Counter(ev);
        else if (v == "wait")
            WaitUntil(t_.NowMs() + std::stod(ev.args.at(0)));
        else if (v == "flush")
            queue_.clear();
        else if (v == "handshake")
            Handshake();
        else if (v == "set")
            for (auto &[k, val] : ev.params)
                vars_[k] = Eval(val);
        else
            throw Failure("unknown event " + v);
        t_prev_ = t_.NowMs();
    }

    Target &t_;
    const Case &c_;
    const RunOptions &o_;
    QpType type_ = QpType::RC;
    bool handshake_ = true;
    std::map<std::string, uint64_t> vars_;
    std::map<std::string, int64_t> base_;
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> next_psn_;
    std::deque<Got> queue_;
    Keys keys_;
    double t_prev_ = 0;
    std::string log_;
};

} // namespace

Result RunCase(Target &t, const Case &c, const RunOptions &o) {
    return Runner(t, c, o).Run();
}

} // namespace conform
