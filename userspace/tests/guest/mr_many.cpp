// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// mr_many: many RC connections between two devices of one host. It sets
// up --qps QPs on each device with --threads threads (each QP created,
// connected to its peer and moved to RTS), then each round sends one
// message of --bytes each way on every connection at once and checks
// every received byte, its length and its wr_id. Around the setup and
// after the traffic it reads the kernel's slab and vmalloc figures
// (/proc/meminfo), and with --hold it waits that long with every QP
// connected and idle (for `rdma -dd resource show qp` to be read; SIGUSR1
// ends the wait) before it tears everything down. Prints KTAP (4 cases); exits 1 on a failure.
//
//   mr_many --dev-a mrc0 --dev-b mrc1 [--qps N] [--bytes N] [--rounds N]
//           [--threads N] [--hold S] [--timeout S] [--memory-checks 0|1]
// --memory-checks 0 skips the two memory cases (reported all the same): a
// KASAN kernel holds freed memory in its quarantine.
#include "guest_test.h"

#include <infiniband/verbs.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <csignal>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace guest;

volatile std::sig_atomic_t g_hold_over = 0; // SIGUSR1 ends --hold
using Clock = std::chrono::steady_clock;

struct Options {
    const char *dev[2] = {nullptr, nullptr};
    uint32_t qps = 64;
    uint32_t bytes = 1024;
    uint32_t rounds = 2;
    uint32_t threads = 4;
    double hold = 0;
    double timeout = 60;
    bool memory_checks = true;
};

[[noreturn]] void usage(const char *why) {
    std::fprintf(stderr,
                 "mr_many: %s\nusage: mr_many --dev-a DEV --dev-b DEV [--qps N] [--bytes N] "
                 "[--rounds N] [--threads N] [--hold S] [--timeout S] [--memory-checks 0|1]\n",
                 why);
    std::exit(2);
}

Options parse(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (i + 1 >= argc)
            usage(("missing value of " + a).c_str());
        const char *v = argv[++i];
        if (a == "--dev-a")
            o.dev[0] = v;
        else if (a == "--dev-b")
            o.dev[1] = v;
        else if (a == "--qps")
            o.qps = static_cast<uint32_t>(std::strtoul(v, nullptr, 0));
        else if (a == "--bytes")
            o.bytes = static_cast<uint32_t>(std::strtoul(v, nullptr, 0));
        else if (a == "--rounds")
            o.rounds = static_cast<uint32_t>(std::strtoul(v, nullptr, 0));
        else if (a == "--threads")
            o.threads = static_cast<uint32_t>(std::strtoul(v, nullptr, 0));
        else if (a == "--hold")
            o.hold = std::strtod(v, nullptr);
        else if (a == "--timeout")
            o.timeout = std::strtod(v, nullptr);
        else if (a == "--memory-checks")
            o.memory_checks = std::strtoul(v, nullptr, 0) != 0;
        else
            usage(("unknown option " + a).c_str());
    }
    if (!o.dev[0] || !o.dev[1])
        usage("--dev-a and --dev-b are required");
    if (!o.qps || !o.bytes || !o.threads || o.qps > 16384)
        usage("--qps (1-16384), --bytes and --threads must be positive");
    return o;
}

// Slab and vmalloc memory in use, KiB (/proc/meminfo).
long long kernel_kib() {
    std::ifstream f("/proc/meminfo");
    std::string key;
    long long v, total = 0;
    std::string unit;
    while (f >> key >> v) {
        if (key == "Slab:" || key == "VmallocUsed:")
            total += v;
        std::getline(f, unit);
    }
    return total;
}

void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void diag(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vdiag(fmt, ap);
    va_end(ap);
}

double secs_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

// Byte @i of the message of connection @qp, direction @dir, round @round.
uint8_t pattern(uint32_t qp, uint32_t dir, uint32_t round, uint32_t i) {
    uint32_t x = qp * 2654435761u ^ (dir + 1) * 40503u ^ round * 97u ^ i * 31u;
    return static_cast<uint8_t>(x ^ x >> 13);
}

// One device: its PD, one CQ for everything, its QPs, and a region with a
// send and a receive buffer per QP.
struct End {
    std::string why;
    RcEnd rc;
    Cq cq;
    std::vector<Qp> qp;
    std::unique_ptr<Mapping> mem;
    Mr mr;
    uint32_t bytes = 0;

    uint8_t *send_buf(uint32_t i) const { return mem->get() + (2ull * i) * bytes; }
    uint8_t *recv_buf(uint32_t i) const { return mem->get() + (2ull * i + 1) * bytes; }
};

bool open_end(End &e, const char *name, const Options &o) {
    if (!open_rc_end(e.rc, name, &e.why))
        return false;
    e.bytes = o.bytes;
    e.cq.reset(
        ibv_create_cq(e.rc.ctx.get(), static_cast<int>(4 * o.qps + 64), nullptr, nullptr, 0));
    e.mem = std::make_unique<Mapping>(2ull * o.qps * o.bytes, PROT_READ | PROT_WRITE);
    int err = 0;
    if (e.cq && e.mem->get())
        e.mr = reg_mr(e.rc.pd.get(), e.mem->get(), e.mem->size(), IBV_ACCESS_LOCAL_WRITE, &err);
    if (!e.cq || !e.mr) {
        e.why = std::string("cannot create the CQ or register memory on ") + name;
        return false;
    }
    e.qp.resize(o.qps);
    return true;
}

Qp create_qp(End &e) {
    ibv_qp_init_attr init{};
    init.send_cq = e.cq.get();
    init.recv_cq = e.cq.get();
    init.cap.max_send_wr = 2;
    init.cap.max_recv_wr = 2;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    init.qp_type = IBV_QPT_RC;
    init.sq_sig_all = 1;
    return Qp(ibv_create_qp(e.rc.pd.get(), &init));
}

// Connections [from, to): create both QPs, then walk each to RTS.
// Returns the errno of the first failure, or 0.
int set_up(End *ends, uint32_t from, uint32_t to) {
    RcParams params;
    params.access = IBV_ACCESS_LOCAL_WRITE;
    params.max_rd_atomic = 1;
    params.max_dest_rd_atomic = 1;
    for (uint32_t i = from; i < to; i++) {
        for (int s = 0; s < 2; s++) {
            ends[s].qp[i] = create_qp(ends[s]);
            if (!ends[s].qp[i])
                return errno ? errno : ENOMEM;
        }
        for (ibv_qp_state step : kRcSteps)
            for (int s = 0; s < 2; s++) {
                const End &self = ends[s], &peer = ends[1 - s];
                RcPath path{.dest_qpn = peer.qp[i]->qp_num,
                            .dgid = peer.rc.gid,
                            .sgid_index = self.rc.gid_index,
                            .mtu = std::min(self.rc.port.active_mtu, peer.rc.port.active_mtu),
                            .sq_psn = (i * 7 + static_cast<uint32_t>(s)) & 0xffffff,
                            .rq_psn = (i * 7 + static_cast<uint32_t>(1 - s)) & 0xffffff};
                if (int err = modify_rc(self.qp[i].get(), step, path, params))
                    return err;
            }
    }
    return 0;
}

// One round: a receive then a send on every QP of both ends, then every
// completion, each received message checked. Returns the errors seen.
uint64_t round_trip(End *ends, const Options &o, uint32_t round, double timeout,
                    uint64_t *verified) {
    uint64_t errors = 0;
    for (int s = 0; s < 2; s++)
        for (uint32_t i = 0; i < o.qps; i++) {
            ibv_sge sge{reinterpret_cast<uintptr_t>(ends[s].recv_buf(i)), o.bytes,
                        ends[s].mr->lkey};
            std::memset(ends[s].recv_buf(i), 0, o.bytes);
            if (post_recv_wr(ends[s].qp[i].get(), i, &sge))
                errors++;
        }
    for (int s = 0; s < 2; s++)
        for (uint32_t i = 0; i < o.qps; i++) {
            uint8_t *buf = ends[s].send_buf(i);
            for (uint32_t b = 0; b < o.bytes; b++)
                buf[b] = pattern(i, static_cast<uint32_t>(s), round, b);
            ibv_sge sge{reinterpret_cast<uintptr_t>(buf), o.bytes, ends[s].mr->lkey};
            if (post_send_wr(ends[s].qp[i].get(), send_wr(i, IBV_WR_SEND, &sge)))
                errors++;
        }
    const uint64_t want = 2ull * o.qps; // per end: its sends and its receives
    for (int s = 0; s < 2; s++) {
        const auto start = Clock::now();
        uint64_t got = 0;
        while (got < want && secs_since(start) < timeout) {
            ibv_wc wc[64];
            int n = ibv_poll_cq(ends[s].cq.get(), 64, wc);
            if (n <= 0) {
                usleep(1000);
                continue;
            }
            for (int k = 0; k < n; k++, got++) {
                const ibv_wc &w = wc[k];
                const uint32_t i = static_cast<uint32_t>(w.wr_id);
                if (w.status != IBV_WC_SUCCESS || i >= o.qps || w.qp_num != ends[s].qp[i]->qp_num) {
                    if (errors++ < 5)
                        diag("%s: wr_id %" PRIu64 " qp %u status %s", ends[s].rc.name.c_str(),
                             w.wr_id, w.qp_num, ibv_wc_status_str(w.status));
                    continue;
                }
                if (w.opcode != IBV_WC_RECV)
                    continue;
                const uint8_t *buf = ends[s].recv_buf(i);
                bool ok = w.byte_len == o.bytes;
                for (uint32_t b = 0; ok && b < o.bytes; b++)
                    ok = buf[b] == pattern(i, static_cast<uint32_t>(1 - s), round, b);
                if (!ok && errors++ < 5)
                    diag("%s: qp %u round %u: byte_len %u or the bytes are wrong",
                         ends[s].rc.name.c_str(), i, round, w.byte_len);
                *verified += ok;
            }
        }
        if (got < want) {
            diag("%s: round %u: %" PRIu64 " of %" PRIu64 " completions", ends[s].rc.name.c_str(),
                 round, got, want);
            errors += want - got;
        }
    }
    return errors;
}

} // namespace

int main(int argc, char **argv) {
    const Options o = parse(argc, argv);
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    Ktap t(4);

    End ends[2];
    if (!open_end(ends[0], o.dev[0], o) || !open_end(ends[1], o.dev[1], o))
        bail(ends[0].why.empty() ? ends[1].why : ends[0].why);

    const long long kib0 = kernel_kib();
    const auto setup_start = Clock::now();
    std::vector<std::thread> workers;
    std::atomic<int> first_err{0};
    const uint32_t per = (o.qps + o.threads - 1) / o.threads;
    for (uint32_t w = 0; w < o.threads; w++) {
        const uint32_t from = std::min(o.qps, w * per), to = std::min(o.qps, from + per);
        workers.emplace_back([&, from, to] {
            int err = set_up(ends, from, to);
            int none = 0;
            if (err)
                first_err.compare_exchange_strong(none, err);
        });
    }
    for (std::thread &w : workers)
        w.join();
    const double setup_s = secs_since(setup_start);
    const long long kib1 = kernel_kib();
    t.check(!first_err,
            std::to_string(o.qps) + " connections set up (" + std::to_string(o.threads) +
                " threads)",
            "errno %d (%s)", first_err.load(), std::strerror(first_err.load()));
    std::printf("# setup %.2f s, %.0f connections/s; kernel memory %+lld KiB, %.1f KiB per QP\n",
                setup_s, o.qps / setup_s, kib1 - kib0,
                static_cast<double>(kib1 - kib0) / (2.0 * o.qps));
    if (first_err) {
        for (int k = 0; k < 3; k++)
            t.check(false, "not run: setup failed");
        return 1;
    }

    uint64_t errors = 0, verified = 0;
    const auto traffic_start = Clock::now();
    for (uint32_t r = 0; r < o.rounds; r++)
        errors += round_trip(ends, o, r, o.timeout, &verified);
    const double traffic_s = secs_since(traffic_start);
    t.check(!errors && verified == 2ull * o.qps * o.rounds,
            "every connection moved verified data both ways, " + std::to_string(o.rounds) +
                " rounds",
            "%" PRIu64 " errors, %" PRIu64 " of %" PRIu64 " messages verified", errors, verified,
            static_cast<uint64_t>(2ull * o.qps * o.rounds));
    std::printf("# traffic %.2f s: %" PRIu64 " messages of %u B, %.0f messages/s\n", traffic_s,
                verified, o.bytes, static_cast<double>(verified) / traffic_s);

    // Idle again: what the connections hold once the kernel's trim (from
    // 50 to 100 ms after the last packet) has run.
    const long long borrowed_max = static_cast<long long>(o.qps) * 2 * 8;
    long long kib2 = kernel_kib();
    for (int k = 0; o.memory_checks && k < 50 && kib2 - kib1 >= borrowed_max; k++) {
        usleep(100000);
        kib2 = kernel_kib();
    }
    std::printf("# idle after the traffic: kernel memory %+lld KiB since before the setup, "
                "%.1f KiB per QP\n",
                kib2 - kib0, static_cast<double>(kib2 - kib0) / (2.0 * o.qps));
    std::printf("# mem_per_qp_kib %.1f\n", static_cast<double>(kib2 - kib0) / (2.0 * o.qps));
    const std::string skip = o.memory_checks ? "" : " # SKIP --memory-checks 0";
    t.check(!o.memory_checks || kib2 - kib1 < borrowed_max,
            "idle connections gave back what the traffic borrowed" + skip,
            "%+lld KiB since the setup", kib2 - kib1);
    if (o.hold > 0) {
        std::signal(SIGUSR1, [](int) { g_hold_over = 1; });
        std::printf("# holding %.1f s\n", o.hold);
        const auto hold_start = Clock::now();
        while (!g_hold_over && secs_since(hold_start) < o.hold)
            usleep(50000);
    }

    const auto down_start = Clock::now();
    for (End &e : ends)
        e.qp.clear();
    std::printf("# teardown %.2f s\n", secs_since(down_start));
    // Freed through RCU: give it a moment.
    long long kib3 = kernel_kib();
    for (int k = 0; o.memory_checks && k < 20 && kib3 - kib0 >= static_cast<long long>(o.qps);
         k++) {
        usleep(100000);
        kib3 = kernel_kib();
    }
    t.check(!o.memory_checks || kib3 - kib0 < static_cast<long long>(o.qps),
            "every QP destroyed, its memory given back (within 0.5 KiB a QP)" + skip,
            "%+lld KiB since before the setup", kib3 - kib0);
    return t.passed() ? 0 : 1;
}
