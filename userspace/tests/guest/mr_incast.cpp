// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// mr_incast: many RC senders streaming into one receiver, each byte checked,
// with a small-message latency probe beside them. One process opens every
// device (the RDMA netns mode is shared, so devices of all namespaces are
// visible) and connects one RC QP pair per sender device to the receiver
// device. Each sender streams messages of --size bytes, --window of them in
// flight, as RDMA WRITEs into its own ring of slots at the receiver, or as
// SENDs into receives posted there. Byte k of message m of sender s is a
// function of (seed, s, m, k); a message's slot is checked when it completes
// (WRITE: at the send completion, which RC gives once the data is placed;
// SEND: at the receive completion) and only then reused, so every byte that
// arrived is compared and a stale, lost or misplaced one shows.
//
// The probe, when given, WRITEs --probe-size bytes from its own device to
// the receiver every --probe-interval-ms, one at a time, and times each from
// post to completion (the data crossed the bottleneck and the ACK came back).
//
// Both ends sleep on completion events (no busy polling), so the guest's
// CPUs stay with the network. Prints, one line each:
//   sender I DEV msgs M bytes B window_s W goodput_mbps G max_gap_ms X
//          drained yes|no drain_ms D errors E
//   probe samples N p50_us A p99_us B max_us C errors E pending P pending_ms Q
//   total senders N goodput_mbps G jain J verified M errors E
//   bin T_MS MBPS_1 ... MBPS_N     (per-sender goodput in each --bin-ms)
// Goodput counts the bytes of messages completed in the sender's window:
// from max(its start, --warmup) to its end (--seconds, or --active).
// Exits 0 when every message posted completed and checked out, 1 on a wrong
// byte or a failed completion, 3 when messages were still missing after
// --drain seconds after --seconds (a stall), 2 on bad arguments or setup
// errors.
//
//   mr_incast --recv DEV [--send DEV,DEV,...] [--probe DEV] [--op write|send]
//             [--size B] [--window N] [--seconds S] [--warmup S] [--bin-ms MS]
//             [--active I:START:END]... [--probe-size B] [--probe-interval-ms MS]
//             [--drain S] [--seed N]
#include "guest_test.h"

#include <infiniband/verbs.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <poll.h>
#include <string>
#include <vector>

namespace {

using namespace guest;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kProbeStream = 0xffff; // the probe's stream number in the pattern

uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// Byte k of message @msg of stream @stream, as 8-byte words.
uint64_t pattern_word(uint64_t seed, uint64_t stream, uint64_t msg, uint64_t word) {
    return mix(mix(seed ^ (stream << 48) ^ msg) ^ word);
}

void fill(uint8_t *buf, uint32_t len, uint64_t seed, uint64_t stream, uint64_t msg) {
    for (uint32_t off = 0; off < len; off += 8) {
        const uint64_t w = pattern_word(seed, stream, msg, off / 8);
        std::memcpy(buf + off, &w, std::min<uint32_t>(8, len - off));
    }
}

// The offset of the first wrong byte, or -1.
int64_t check(const uint8_t *buf, uint32_t len, uint64_t seed, uint64_t stream, uint64_t msg) {
    for (uint32_t off = 0; off < len; off += 8) {
        const uint64_t w = pattern_word(seed, stream, msg, off / 8);
        const uint32_t n = std::min<uint32_t>(8, len - off);
        if (std::memcmp(buf + off, &w, n) != 0)
            for (uint32_t i = 0; i < n; i++)
                if (buf[off + i] != reinterpret_cast<const uint8_t *>(&w)[i])
                    return off + i;
    }
    return -1;
}

struct Active {
    double start = 0, end = -1; // seconds from the run's start; end < 0: --seconds
};

struct Options {
    const char *recv = nullptr;
    std::vector<std::string> send;
    const char *probe = nullptr;
    bool use_send = false;
    uint32_t size = 65536;
    unsigned window = 8;
    double seconds = 10;
    double warmup = 1;
    unsigned bin_ms = 1000;
    std::vector<std::optional<Active>> active; // by sender index, from --active
    uint32_t probe_size = 64;
    unsigned probe_interval_ms = 20;
    double drain = 30;
    uint64_t seed = 1;
};

double secs_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}

// A completion channel, its fd non-blocking so that draining it stops.
class EventChannel {
public:
    explicit EventChannel(ibv_context *ctx) : ch_(ibv_create_comp_channel(ctx)) {
        if (ch_) {
            const int fl = fcntl(ch_->fd, F_GETFL);
            if (fl < 0 || fcntl(ch_->fd, F_SETFL, fl | O_NONBLOCK) < 0)
                ch_.reset();
        }
    }
    ibv_comp_channel *get() const { return ch_.get(); }
    int fd() const { return ch_->fd; }

    // Acknowledges and re-arms every CQ with an event waiting.
    void drain() {
        ibv_cq *cq;
        void *cq_ctx;
        while (ibv_get_cq_event(ch_.get(), &cq, &cq_ctx) == 0) {
            ibv_ack_cq_events(cq, 1);
            ibv_req_notify_cq(cq, 0);
        }
    }

private:
    Channel ch_;
};

// One device's end: context, PD, a CQ for sends and one for receives, both
// on the device's completion channel, and the IPv4 GID.
struct Device {
    RcEnd end;
    std::optional<EventChannel> events;

    bool open(const char *name, int cqe, std::string *why) {
        if (!open_rc_end(end, name, why))
            return false;
        events.emplace(end.ctx.get());
        if (!events->get()) {
            *why = std::string("cannot create a completion channel on ") + name;
            return false;
        }
        end.scq.reset(ibv_create_cq(end.ctx.get(), cqe, nullptr, events->get(), 0));
        end.rcq.reset(ibv_create_cq(end.ctx.get(), cqe, nullptr, events->get(), 0));
        if (!end.scq || !end.rcq || ibv_req_notify_cq(end.scq.get(), 0) ||
            ibv_req_notify_cq(end.rcq.get(), 0)) {
            *why = std::string("cannot create or arm the CQs of ") + name;
            return false;
        }
        return true;
    }
};

struct Buffer {
    std::optional<Mapping> mem;
    Mr mr;

    bool make(ibv_pd *pd, size_t len, int access) {
        mem.emplace(len, PROT_READ | PROT_WRITE);
        if (!mem->get())
            return false;
        std::memset(mem->get(), 0, len);
        int err = 0;
        mr = reg_mr(pd, mem->get(), len, access, &err);
        return mr != nullptr;
    }
    uint8_t *at(size_t off) const { return mem->get() + off; }
};

constexpr int kRemoteAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

// One sender: its device, its QP pair to the receiver, source slots at the
// sender and destination slots at the receiver; message m uses slot m % window.
class Sender {
public:
    Sender(const Options &o, unsigned index) : o_(o), index_(index) {}

    bool setup(Device &recv, std::string *why) {
        const std::string &name = o_.send[index_];
        if (!dev_.open(name.c_str(), static_cast<int>(o_.window) + 8, why))
            return false;
        RcPairOptions po;
        po.max_wr = o_.window + 8;
        po.max_sge = 1;
        po.max_inline = 0;
        pair_.emplace(dev_.end, recv.end, po);
        if (pair_->error()) {
            *why = name + ": QP pair to " + o_.recv + ": " + std::strerror(pair_->error());
            return false;
        }
        const size_t len = static_cast<size_t>(o_.size) * o_.window;
        if (!src_.make(dev_.end.pd.get(), len, IBV_ACCESS_LOCAL_WRITE) ||
            !dst_.make(recv.end.pd.get(), len, kRemoteAccess)) {
            *why = name + ": cannot map or register 2 x " + std::to_string(len) + " bytes";
            return false;
        }
        if (o_.use_send)
            for (unsigned i = 0; i < o_.window; i++)
                if (!post_recv()) {
                    *why = name + ": post_recv failed";
                    return false;
                }
        return true;
    }

    const std::string &name() const { return o_.send[index_]; }
    Device &device() { return dev_; }
    ibv_qp *recv_qp() const { return (*pair_)[1]; }

    double start_s() const {
        return index_ < o_.active.size() && o_.active[index_] ? o_.active[index_]->start : 0;
    }
    double end_s() const {
        const double e =
            index_ < o_.active.size() && o_.active[index_] ? o_.active[index_]->end : -1;
        return e < 0 ? o_.seconds : std::min(e, o_.seconds);
    }
    bool done() const { return posted_ == completed_; }
    uint64_t outstanding() const { return posted_ - completed_; }

    // Posts what the window (and, for SEND, the receives posted) allows.
    bool post(double now_s, Clock::time_point now) {
        if (now_s < start_s() || now_s >= end_s())
            return true;
        while (posted_ - completed_ < o_.window && (!o_.use_send || posted_ < recvs_)) {
            const uint64_t m = posted_;
            uint8_t *src = src_.at(slot_off(m));
            fill(src, o_.size, o_.seed, index_, m);
            ibv_sge sge{reinterpret_cast<uintptr_t>(src), o_.size, src_.mr->lkey};
            ibv_send_wr wr = send_wr(m, o_.use_send ? IBV_WR_SEND : IBV_WR_RDMA_WRITE, &sge);
            wr.send_flags = IBV_SEND_SIGNALED;
            if (!o_.use_send) {
                wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(dst_.at(slot_off(m)));
                wr.wr.rdma.rkey = dst_.mr->rkey;
            }
            if (int err = post_send_wr((*pair_)[0], wr)) {
                std::printf("# %s: post_send of message %" PRIu64 ": %s\n", name().c_str(), m,
                            std::strerror(err));
                errors_++;
                return false;
            }
            if (posted_ == completed_)
                busy_since_ = now;
            posted_++;
        }
        return true;
    }

    // A send completion: in order, message completed_.
    bool on_send_wc(const ibv_wc &wc, Clock::time_point now) {
        if (!wc_ok(wc, "send", completed_))
            return false;
        if (!o_.use_send && !verify(completed_))
            return false;
        record(now);
        return true;
    }

    // A receive completion at the receiver (SEND): check, then post it again.
    bool on_recv_wc(const ibv_wc &wc) {
        if (!wc_ok(wc, "recv", recv_done_))
            return false;
        if (wc.byte_len != o_.size) {
            std::printf("# %s: message %" PRIu64 ": receive byte_len %u, want %u\n", name().c_str(),
                        recv_done_, wc.byte_len, o_.size);
            errors_++;
            return false;
        }
        if (!verify(recv_done_))
            return false;
        recv_done_++;
        return post_recv();
    }

    struct Result {
        uint64_t msgs, bytes;
        double window_s, goodput_mbps, max_gap_ms;
    };
    Result result() const {
        const double from = std::max(start_s(), o_.warmup), to = end_s();
        uint64_t msgs = 0;
        for (double t : done_at_)
            msgs += t >= from && t < to;
        const double w = std::max(0.0, to - from);
        const uint64_t bytes = msgs * o_.size;
        return {msgs, bytes, w, w > 0 ? bytes * 8 / w / 1e6 : 0, max_gap_ * 1e3};
    }
    // Bytes completed in [from, to) seconds.
    uint64_t bytes_in(double from, double to) const {
        return static_cast<uint64_t>(std::count_if(done_at_.begin(), done_at_.end(),
                                                   [&](double t) { return t >= from && t < to; })) *
               o_.size;
    }
    double last_done_s() const { return done_at_.empty() ? 0 : done_at_.back(); }
    uint64_t completed() const { return completed_; }
    uint64_t errors() const { return errors_; }
    void set_origin(Clock::time_point t0) { t0_ = t0; }

private:
    size_t slot_off(uint64_t m) const { return static_cast<size_t>(m % o_.window) * o_.size; }

    bool post_recv() {
        const uint64_t m = recvs_;
        ibv_sge sge{reinterpret_cast<uintptr_t>(dst_.at(slot_off(m))), o_.size, dst_.mr->lkey};
        if (post_recv_wr((*pair_)[1], m, &sge)) {
            errors_++;
            return false;
        }
        recvs_++;
        return true;
    }

    bool wc_ok(const ibv_wc &wc, const char *what, uint64_t want) {
        if (wc.status == IBV_WC_SUCCESS && wc.wr_id == want)
            return true;
        std::printf("# %s: %s completion wr_id %" PRIu64 " status %s, want wr_id %" PRIu64
                    " success\n",
                    name().c_str(), what, wc.wr_id, ibv_wc_status_str(wc.status), want);
        errors_++;
        return false;
    }

    bool verify(uint64_t m) {
        const int64_t bad = check(dst_.at(slot_off(m)), o_.size, o_.seed, index_, m);
        if (bad < 0)
            return true;
        std::printf("# %s: message %" PRIu64 " byte %" PRId64 " wrong at the receiver\n",
                    name().c_str(), m, bad);
        errors_++;
        return false;
    }

    void record(Clock::time_point now) {
        const double gap = secs_between(last_done_ > busy_since_ ? last_done_ : busy_since_, now);
        max_gap_ = std::max(max_gap_, gap);
        last_done_ = now;
        busy_since_ = now;
        done_at_.push_back(secs_between(t0_, now));
        completed_++;
    }

    const Options &o_;
    unsigned index_;
    Device dev_;
    std::optional<RcPair> pair_;
    Buffer src_, dst_;
    uint64_t posted_ = 0, completed_ = 0, recvs_ = 0, recv_done_ = 0, errors_ = 0;
    Clock::time_point t0_{}, busy_since_{}, last_done_{};
    double max_gap_ = 0;
    std::vector<double> done_at_; // seconds from the run's start
};

// The latency probe: one small WRITE at a time to the receiver.
class Probe {
public:
    explicit Probe(const Options &o) : o_(o) {}

    bool setup(Device &recv, std::string *why) {
        if (!dev_.open(o_.probe, 16, why))
            return false;
        RcPairOptions po;
        po.max_wr = 8;
        po.max_sge = 1;
        po.max_inline = 0;
        pair_.emplace(dev_.end, recv.end, po);
        if (pair_->error()) {
            *why = std::string(o_.probe) + ": QP pair: " + std::strerror(pair_->error());
            return false;
        }
        if (!src_.make(dev_.end.pd.get(), o_.probe_size, IBV_ACCESS_LOCAL_WRITE) ||
            !dst_.make(recv.end.pd.get(), o_.probe_size, kRemoteAccess)) {
            *why = std::string(o_.probe) + ": cannot register the probe buffers";
            return false;
        }
        return true;
    }

    Device &device() { return dev_; }

    // Posts the next probe when it is due and none is out.
    bool post(Clock::time_point now, Clock::time_point stop) {
        if (pending_ || now < next_ || now >= stop)
            return true;
        fill(src_.at(0), o_.probe_size, o_.seed, kProbeStream, sent_);
        ibv_sge sge{reinterpret_cast<uintptr_t>(src_.at(0)), o_.probe_size, src_.mr->lkey};
        ibv_send_wr wr = send_wr(sent_, IBV_WR_RDMA_WRITE, &sge);
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(dst_.at(0));
        wr.wr.rdma.rkey = dst_.mr->rkey;
        if (post_send_wr((*pair_)[0], wr)) {
            errors_++;
            return false;
        }
        pending_ = true;
        posted_at_ = now;
        next_ = now + std::chrono::milliseconds(o_.probe_interval_ms);
        return true;
    }

    bool on_send_wc(const ibv_wc &wc, Clock::time_point now) {
        const bool ok = wc.status == IBV_WC_SUCCESS && wc.wr_id == sent_ && pending_ &&
                        check(dst_.at(0), o_.probe_size, o_.seed, kProbeStream, sent_) < 0;
        if (!ok) {
            std::printf("# probe: completion wr_id %" PRIu64 " status %s: wrong\n", wc.wr_id,
                        ibv_wc_status_str(wc.status));
            errors_++;
        }
        samples_.push_back(secs_between(posted_at_, now) * 1e6);
        pending_ = false;
        sent_++;
        return ok;
    }

    Clock::time_point next_due() const { return next_; }
    bool pending() const { return pending_; }

    void print(Clock::time_point now) {
        std::vector<double> s = samples_;
        std::sort(s.begin(), s.end());
        auto pct = [&](double p) {
            if (s.empty())
                return 0.0;
            size_t i = static_cast<size_t>(std::ceil(p * s.size())) - 1;
            return s[std::min(i, s.size() - 1)];
        };
        std::printf("probe samples %zu p50_us %.0f p99_us %.0f max_us %.0f errors %" PRIu64
                    " pending %d pending_ms %.0f\n",
                    s.size(), pct(0.5), pct(0.99), s.empty() ? 0.0 : s.back(), errors_,
                    pending_ ? 1 : 0, pending_ ? secs_between(posted_at_, now) * 1e3 : 0.0);
    }
    uint64_t errors() const { return errors_; }

private:
    const Options &o_;
    Device dev_;
    std::optional<RcPair> pair_;
    Buffer src_, dst_;
    bool pending_ = false;
    uint64_t sent_ = 0, errors_ = 0;
    Clock::time_point posted_at_{}, next_{};
    std::vector<double> samples_;
};

[[noreturn]] void usage(const char *why = nullptr) {
    if (why)
        std::fprintf(stderr, "mr_incast: %s\n", why);
    std::fprintf(
        stderr, "usage: mr_incast --recv DEV [--send DEV,DEV,...] [--probe DEV] [--op write|send]\n"
                "       [--size B] [--window N] [--seconds S] [--warmup S] [--bin-ms MS]\n"
                "       [--active I:START:END]... [--probe-size B] [--probe-interval-ms MS]\n"
                "       [--drain S] [--seed N]\n");
    std::exit(2);
}

double number(const char *v, const char *opt, double lo, double hi) {
    char *end = nullptr;
    const double d = std::strtod(v, &end);
    if (!end || *end || end == v || !(d >= lo && d <= hi))
        usage((std::string(opt) + ": '" + v + "' is not a number in [" + std::to_string(lo) + ", " +
               std::to_string(hi) + "]")
                  .c_str());
    return d;
}

std::vector<std::string> split(const std::string &s, char sep) {
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos <= s.size()) {
        const size_t at = s.find(sep, pos);
        out.push_back(s.substr(pos, at == std::string::npos ? std::string::npos : at - pos));
        if (at == std::string::npos)
            break;
        pos = at + 1;
    }
    return out;
}

Options parse(int argc, char **argv) {
    Options o;
    std::vector<std::string> active;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        if (i + 1 >= argc)
            usage((a + " needs a value").c_str());
        const char *v = argv[++i];
        if (a == "--recv")
            o.recv = v;
        else if (a == "--send")
            o.send = split(v, ',');
        else if (a == "--probe")
            o.probe = v;
        else if (a == "--op" && (std::strcmp(v, "write") == 0 || std::strcmp(v, "send") == 0))
            o.use_send = std::strcmp(v, "send") == 0;
        else if (a == "--size")
            o.size = static_cast<uint32_t>(number(v, "--size", 8, 1 << 24));
        else if (a == "--window")
            o.window = static_cast<unsigned>(number(v, "--window", 1, 1024));
        else if (a == "--seconds")
            o.seconds = number(v, "--seconds", 0, 86400);
        else if (a == "--warmup")
            o.warmup = number(v, "--warmup", 0, 86400);
        else if (a == "--bin-ms")
            o.bin_ms = static_cast<unsigned>(number(v, "--bin-ms", 10, 1e6));
        else if (a == "--active")
            active.push_back(v);
        else if (a == "--probe-size")
            o.probe_size = static_cast<uint32_t>(number(v, "--probe-size", 8, 65536));
        else if (a == "--probe-interval-ms")
            o.probe_interval_ms = static_cast<unsigned>(number(v, "--probe-interval-ms", 1, 1e5));
        else if (a == "--drain")
            o.drain = number(v, "--drain", 0, 86400);
        else if (a == "--seed")
            o.seed = static_cast<uint64_t>(number(v, "--seed", 0, 1e15));
        else
            usage(("unknown option or value: " + a + " " + v).c_str());
    }
    if (!o.recv)
        usage("--recv is required");
    if (o.send.empty() && !o.probe)
        usage("nothing to run: give --send or --probe");
    for (const std::string &s : o.send)
        if (s.empty())
            usage("--send: empty device name");
    o.active.resize(o.send.size());
    for (const std::string &s : active) {
        const std::vector<std::string> f = split(s, ':');
        if (f.size() != 3)
            usage(("--active " + s + ": want I:START:END").c_str());
        const auto idx = static_cast<size_t>(number(f[0].c_str(), "--active I", 1, 1e6));
        if (idx > o.send.size())
            usage(("--active " + s + ": no sender " + f[0]).c_str());
        o.active[idx - 1] = Active{number(f[1].c_str(), "--active START", 0, 86400),
                                   number(f[2].c_str(), "--active END", 0, 86400)};
    }
    return o;
}

} // namespace

int main(int argc, char **argv) {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    const Options o = parse(argc, argv);
    const size_t n = o.send.size();

    std::string why;
    Device recv;
    if (!recv.open(o.recv, static_cast<int>(n * (o.window + 8) + 16), &why))
        bail(why);
    std::vector<std::unique_ptr<Sender>> senders;
    for (unsigned i = 0; i < n; i++) {
        senders.push_back(std::make_unique<Sender>(o, i));
        if (!senders.back()->setup(recv, &why))
            bail(why);
    }
    std::optional<Probe> probe;
    if (o.probe) {
        probe.emplace(o);
        if (!probe->setup(recv, &why))
            bail(why);
    }
    std::printf("# mr_incast: %zu sender(s) -> %s, %s of %u B, window %u, %.1f s (warm-up %.1f s)"
                "%s%s\n",
                n, o.recv, o.use_send ? "SEND" : "WRITE", o.size, o.window, o.seconds, o.warmup,
                o.probe ? ", probe from " : "", o.probe ? o.probe : "");

    // Every completion channel, and who owns each CQ.
    std::vector<pollfd> fds{{recv.events->fd(), POLLIN, 0}};
    std::vector<EventChannel *> channels{&*recv.events};
    for (auto &s : senders) {
        fds.push_back({s->device().events->fd(), POLLIN, 0});
        channels.push_back(&*s->device().events);
    }
    if (probe) {
        fds.push_back({probe->device().events->fd(), POLLIN, 0});
        channels.push_back(&*probe->device().events);
    }

    const Clock::time_point t0 = Clock::now();
    const Clock::time_point stop =
        t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
    for (auto &s : senders)
        s->set_origin(t0);
    bool failed = false;
    Clock::time_point last_progress = t0;
    auto all_done = [&] {
        return std::all_of(senders.begin(), senders.end(), [](auto &s) { return s->done(); }) &&
               (!probe || !probe->pending());
    };
    for (;;) {
        Clock::time_point now = Clock::now();
        const double now_s = secs_between(t0, now);
        if (!failed) {
            for (auto &s : senders)
                failed |= !s->post(now_s, now);
            if (probe)
                failed |= !probe->post(now, stop);
        }
        if (failed || (now >= stop && (all_done() || secs_between(stop, now) > o.drain)))
            break;
        // Sleep until a completion, the next probe, the next start or the stop.
        Clock::time_point wake = now + std::chrono::milliseconds(100);
        if (probe && !probe->pending())
            wake = std::min(wake, probe->next_due());
        if (now < stop)
            wake = std::min(wake, stop);
        for (auto &s : senders) {
            const auto st = t0 + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(s->start_s()));
            if (st > now)
                wake = std::min(wake, st);
        }
        const auto ms = std::chrono::ceil<std::chrono::milliseconds>(wake - now).count();
        if (poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(ms, 0))) < 0) {
            std::printf("# poll: %s\n", std::strerror(errno));
            failed = true;
            break;
        }
        for (EventChannel *c : channels)
            c->drain();
        // Poll every CQ after re-arming it: nothing that came in between is lost.
        now = Clock::now();
        ibv_wc wc[32];
        int got;
        while ((got = ibv_poll_cq(recv.end.rcq.get(), 32, wc)) > 0)
            for (int i = 0; i < got; i++) {
                auto it = std::find_if(senders.begin(), senders.end(), [&](auto &s) {
                    return s->recv_qp()->qp_num == wc[i].qp_num;
                });
                if (it == senders.end()) {
                    std::printf("# receive completion for unknown QP %u\n", wc[i].qp_num);
                    failed = true;
                } else {
                    failed |= !(*it)->on_recv_wc(wc[i]);
                }
                last_progress = now;
            }
        for (auto &s : senders)
            while ((got = ibv_poll_cq(s->device().end.scq.get(), 32, wc)) > 0)
                for (int i = 0; i < got; i++) {
                    failed |= !s->on_send_wc(wc[i], now);
                    last_progress = now;
                }
        if (probe)
            while ((got = ibv_poll_cq(probe->device().end.scq.get(), 32, wc)) > 0)
                for (int i = 0; i < got; i++) {
                    failed |= !probe->on_send_wc(wc[i], now);
                    last_progress = now;
                }
    }
    const Clock::time_point end = Clock::now();

    bool stalled = false;
    uint64_t verified = 0, errors = 0;
    double sum = 0, sum2 = 0;
    for (unsigned i = 0; i < n; i++) {
        const Sender &s = *senders[i];
        const Sender::Result r = s.result();
        const bool drained = s.done();
        stalled |= !drained;
        verified += s.completed();
        errors += s.errors();
        sum += r.goodput_mbps;
        sum2 += r.goodput_mbps * r.goodput_mbps;
        const double drain_ms = drained ? std::max(0.0, s.last_done_s() - s.end_s()) * 1e3
                                        : secs_between(t0, end) * 1e3 - s.end_s() * 1e3;
        std::printf("sender %u %s msgs %" PRIu64 " bytes %" PRIu64
                    " window_s %.2f goodput_mbps %.3f"
                    " max_gap_ms %.0f drained %s drain_ms %.0f errors %" PRIu64 "\n",
                    i + 1, s.name().c_str(), r.msgs, r.bytes, r.window_s, r.goodput_mbps,
                    r.max_gap_ms, drained ? "yes" : "no", drain_ms, s.errors());
        if (!drained)
            std::printf("# %s: %" PRIu64 " message(s) still missing %.1f s after the stop "
                        "(last completion of any sender %.1f s before the end)\n",
                        s.name().c_str(), s.outstanding(), secs_between(stop, end),
                        secs_between(last_progress, end));
    }
    if (probe) {
        probe->print(end);
        errors += probe->errors();
    }
    if (n) {
        const double jain = sum2 > 0 ? sum * sum / (static_cast<double>(n) * sum2) : 0;
        std::printf("total senders %zu goodput_mbps %.3f jain %.3f verified %" PRIu64
                    " errors %" PRIu64 "\n",
                    n, sum, jain, verified, errors);
        const double bin = o.bin_ms / 1e3;
        std::printf("bins %u\n", o.bin_ms);
        for (double t = 0; t + bin <= o.seconds + 1e-9; t += bin) {
            std::printf("bin %.0f", t * 1e3);
            for (auto &s : senders)
                std::printf(" %.3f", s->bytes_in(t, t + bin) * 8 / bin / 1e6);
            std::printf("\n");
        }
    }
    if (failed || errors)
        return 1;
    return stalled ? 3 : 0;
}
