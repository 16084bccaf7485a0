// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// What the guest test programs share: KTAP output and the start of main(),
// RAII owners for verbs objects and anonymous memory, opening a device by
// name, the walk of RC QPs to RTS, posting single WRs, and `rdma resource
// show` lines.
#pragma once

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace guest {

// A KTAP diagnostic line: "# " and the printf-style text.
inline void vdiag(const char *fmt, va_list ap) {
    std::printf("# ");
    std::vprintf(fmt, ap);
    std::printf("\n");
}

// A setup failure that leaves no case to run: KTAP's bail out, status 2.
[[noreturn]] inline void bail(const std::string &why) {
    std::printf("Bail out! %s\n", why.c_str());
    std::exit(2);
}

// The start of main(): exactly @nargs arguments (named by @usage) or exit
// status 2, and stdout line-buffered so each KTAP line shows when it runs.
inline void start(int argc, char **argv, int nargs, const char *usage) {
    if (argc != nargs + 1) {
        std::fprintf(stderr, "usage: %s %s\n", argv[0], usage);
        std::exit(2);
    }
    setvbuf(stdout, nullptr, _IOLBF, 0);
}

// One KTAP case per check; the destructor notes a plan that was not met.
class Ktap {
public:
    explicit Ktap(int planned) : planned_(planned) {
        std::printf("KTAP version 1\n1..%d\n", planned_);
    }
    Ktap(const Ktap &) = delete;
    Ktap &operator=(const Ktap &) = delete;
    ~Ktap() {
        if (n_ != planned_)
            std::printf("# planned %d cases but ran %d\n", planned_, n_);
        std::fflush(stdout);
    }

    // One case; on failure the printf-style diagnostic comes first.
    bool check(bool ok, const std::string &desc, const char *fmt = nullptr, ...)
        __attribute__((format(printf, 4, 5))) {
        if (!ok && fmt) {
            va_list ap;
            va_start(ap, fmt);
            vdiag(fmt, ap);
            va_end(ap);
        }
        std::printf("%s %d %s\n", ok ? "ok" : "not ok", ++n_, desc.c_str());
        failed_ += !ok;
        return ok;
    }
    // An expectation not required yet (KTAP "# TODO @reason"): printed as
    // "ok" or "not ok" as @ok says, never a failure of the program.
    bool todo(bool ok, const std::string &desc, const std::string &reason) {
        std::printf("%s %d %s # TODO %s\n", ok ? "ok" : "not ok", ++n_, desc.c_str(),
                    reason.c_str());
        return ok;
    }
    // A call that must fail with errno @want.
    bool refused(int err, int want, const std::string &desc) {
        return check(err == want, desc, "got errno %d (%s), want %d (%s)", err, std::strerror(err),
                     want, std::strerror(want));
    }
    bool passed() const { return failed_ == 0 && n_ == planned_; }

private:
    int planned_;
    int n_ = 0;
    int failed_ = 0;
};

// A unique_ptr deleter that calls @Free (the result, if any, is of no use).
template <auto Free> struct Deleter {
    template <class T> void operator()(T *p) const noexcept { Free(p); }
};
using Context = std::unique_ptr<ibv_context, Deleter<ibv_close_device>>;
using Pd = std::unique_ptr<ibv_pd, Deleter<ibv_dealloc_pd>>;
using Mr = std::unique_ptr<ibv_mr, Deleter<ibv_dereg_mr>>;
using Cq = std::unique_ptr<ibv_cq, Deleter<ibv_destroy_cq>>;
using Qp = std::unique_ptr<ibv_qp, Deleter<ibv_destroy_qp>>;
using Srq = std::unique_ptr<ibv_srq, Deleter<ibv_destroy_srq>>;
using Channel = std::unique_ptr<ibv_comp_channel, Deleter<ibv_destroy_comp_channel>>;
using DeviceList = std::unique_ptr<ibv_device *, Deleter<ibv_free_device_list>>;
using Pipe = std::unique_ptr<FILE, Deleter<pclose>>;

// Anonymous memory, unmapped on scope exit. Page-aligned, so MRs over it
// start on a page; get() is null if mmap failed.
class Mapping {
public:
    Mapping(size_t len, int prot) : len_(len) {
        void *p = mmap(nullptr, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        addr_ = p == MAP_FAILED ? nullptr : static_cast<uint8_t *>(p);
    }
    Mapping(const Mapping &) = delete;
    Mapping &operator=(const Mapping &) = delete;
    ~Mapping() {
        if (addr_)
            munmap(addr_, len_);
    }
    uint8_t *get() const { return addr_; }
    size_t size() const { return len_; }

private:
    size_t len_;
    uint8_t *addr_;
};

// reg_mr: the MR, or null with the errno in *err.
inline Mr reg_mr(ibv_pd *pd, void *addr, size_t len, int access, int *err) {
    errno = 0;
    Mr mr(ibv_reg_mr(pd, addr, len, access));
    *err = mr ? 0 : errno;
    return mr;
}

// Opens the device called @name, or returns null.
inline Context open_device(const char *name) {
    DeviceList list(ibv_get_device_list(nullptr));
    for (ibv_device **d = list.get(); d && *d; d++)
        if (std::strcmp(ibv_get_device_name(*d), name) == 0)
            return Context(ibv_open_device(*d));
    return nullptr;
}

// The `rdma resource show KIND [dev DEV]` lines of this process (every device
// when @dev is null), each field followed by a space.
inline std::vector<std::string> rdma_resources(const char *kind, const char *dev) {
    std::string cmd = std::string("rdma resource show ") + kind;
    if (dev)
        cmd += std::string(" dev ") + dev;
    cmd += " 2>&1";
    Pipe f(popen(cmd.c_str(), "r"));
    std::vector<std::string> lines;
    if (!f)
        return lines;
    const std::string pid = " pid " + std::to_string(getpid()) + " ";
    char buf[1024];
    while (std::fgets(buf, sizeof(buf), f.get())) {
        std::string line(buf);
        if (!line.empty() && line.back() == '\n')
            line.pop_back();
        line += ' '; // every field is then followed by a space
        if (line.find(pid) != std::string::npos)
            lines.push_back(line);
    }
    return lines;
}

// ---- RC queue pairs ------------------------------------------------------
// The index of the first RoCE v2 GID of port 1 of @family, with the GID in
// *gid; -1 if there is none. AF_INET: a GID that holds an IPv4 address
// (v4-mapped). AF_INET6: an IPv6 address that is neither v4-mapped nor
// link-local (fe80::/10), one a peer reaches without naming an interface.
inline int find_roce_v2_gid(ibv_context *ctx, const ibv_port_attr &port, int family, ibv_gid *gid) {
    static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    static const uint8_t zero[16] = {};
    for (int i = 0; i < port.gid_tbl_len; i++) {
        ibv_gid_entry entry{};
        if (ibv_query_gid_ex(ctx, 1, static_cast<uint32_t>(i), &entry, 0) != 0 ||
            entry.gid_type != IBV_GID_TYPE_ROCE_V2)
            continue;
        const uint8_t *raw = entry.gid.raw;
        const bool is_v4 = std::memcmp(raw, v4mapped, sizeof(v4mapped)) == 0;
        const bool link_local = raw[0] == 0xfe && (raw[1] & 0xc0) == 0x80;
        const bool ok =
            family == AF_INET6 ? !is_v4 && !link_local && std::memcmp(raw, zero, 16) != 0 : is_v4;
        if (ok) {
            *gid = entry.gid;
            return i;
        }
    }
    return -1;
}

// The index of the first RoCE v2 GID of port 1 that holds an IPv4 address
// (v4-mapped), with the GID in *gid; -1 if there is none.
inline int find_ipv4_gid(ibv_context *ctx, const ibv_port_attr &port, ibv_gid *gid) {
    return find_roce_v2_gid(ctx, port, AF_INET, gid);
}

// Where an RC QP sends: the peer QP and GID, the local GID, MTU and PSNs.
struct RcPath {
    uint32_t dest_qpn = 0;
    ibv_gid dgid{};
    int sgid_index = 0;
    ibv_mtu mtu = IBV_MTU_1024;
    uint32_t sq_psn = 0; // the PSN this QP sends with
    uint32_t rq_psn = 0; // the PSN the peer sends with
};

// How an RC QP behaves: rights, reads and atomics in flight, timers.
struct RcParams {
    int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                 IBV_ACCESS_REMOTE_ATOMIC;
    uint8_t max_rd_atomic = 4;
    uint8_t max_dest_rd_atomic = 4;
    uint8_t min_rnr_timer = 1; // responder side: code 1 is 10 us
    uint8_t timeout = 14;
    uint8_t retry_cnt = 7;
    uint8_t rnr_retry = 7; // 7: retry RNR for ever
};

// The steps from RESET to RTS, in order.
constexpr ibv_qp_state kRcSteps[] = {IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS};

// One step of an RC (or UC) QP to @to (INIT, RTR or RTS) with the
// attributes that step takes for its type (UC: no READ/atomic depths, no
// timers or retries); ibv_modify_qp's result.
inline int modify_rc(ibv_qp *qp, ibv_qp_state to, const RcPath &path, const RcParams &params) {
    ibv_qp_attr a{};
    a.qp_state = to;
    int mask = IBV_QP_STATE;
    const int rc_only = qp->qp_type == IBV_QPT_RC ? ~0 : 0;
    switch (to) {
    case IBV_QPS_INIT:
        a.port_num = 1;
        a.qp_access_flags = static_cast<unsigned>(params.access);
        mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
        break;
    case IBV_QPS_RTR:
        a.path_mtu = path.mtu;
        a.dest_qp_num = path.dest_qpn;
        a.rq_psn = path.rq_psn;
        a.max_dest_rd_atomic = params.max_dest_rd_atomic;
        a.min_rnr_timer = params.min_rnr_timer;
        a.ah_attr.is_global = 1;
        a.ah_attr.grh.dgid = path.dgid;
        a.ah_attr.grh.sgid_index = static_cast<uint8_t>(path.sgid_index);
        a.ah_attr.grh.hop_limit = 64;
        a.ah_attr.port_num = 1;
        mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                ((IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) & rc_only);
        break;
    case IBV_QPS_RTS:
        a.timeout = params.timeout;
        a.retry_cnt = params.retry_cnt;
        a.rnr_retry = params.rnr_retry;
        a.sq_psn = path.sq_psn;
        a.max_rd_atomic = params.max_rd_atomic;
        mask |= IBV_QP_SQ_PSN |
                ((IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC) &
                 rc_only);
        break;
    default:
        break;
    }
    return ibv_modify_qp(qp, &a, mask);
}

// One step of a UD QP to @to (INIT, RTR or RTS): in INIT its Q_Key @qkey,
// in RTS its send PSN @sq_psn; ibv_modify_qp's result.
inline int modify_ud(ibv_qp *qp, ibv_qp_state to, uint32_t qkey, uint32_t sq_psn = 0) {
    ibv_qp_attr a{};
    a.qp_state = to;
    int mask = IBV_QP_STATE;
    if (to == IBV_QPS_INIT) {
        a.port_num = 1;
        a.qkey = qkey;
        mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
    } else if (to == IBV_QPS_RTS) {
        a.sq_psn = sq_psn;
        mask |= IBV_QP_SQ_PSN;
    }
    return ibv_modify_qp(qp, &a, mask);
}

// One end of a connection: a device, a PD, a send and a receive CQ, and the
// port's RoCE v2 GID of one family (IPv4: v4-mapped) to address it by.
struct RcEnd {
    std::string name;
    Context ctx;
    Pd pd;
    Cq scq, rcq;
    ibv_port_attr port{};
    int gid_index = -1;
    ibv_gid gid{};
};

// Opens @name for RC pairs, addressed by its RoCE v2 GID of @family
// (AF_INET or AF_INET6); false (with a reason in *why) if it cannot.
inline bool open_rc_end(RcEnd &e, const char *name, std::string *why, int family = AF_INET) {
    e.name = name;
    e.ctx = open_device(name);
    if (!e.ctx || !(e.pd = Pd(ibv_alloc_pd(e.ctx.get())))) {
        *why = std::string("cannot open ") + name + " or allocate a PD";
        return false;
    }
    e.scq.reset(ibv_create_cq(e.ctx.get(), 256, nullptr, nullptr, 0));
    e.rcq.reset(ibv_create_cq(e.ctx.get(), 256, nullptr, nullptr, 0));
    if (!e.scq || !e.rcq || ibv_query_port(e.ctx.get(), 1, &e.port)) {
        *why = std::string("cannot create CQs or query the port of ") + name;
        return false;
    }
    e.gid_index = find_roce_v2_gid(e.ctx.get(), e.port, family, &e.gid);
    if (e.gid_index < 0) {
        const char *ip = family == AF_INET ? "IPv4" : "IPv6";
        *why = std::string("no RoCE v2 ") + ip + " GID on " + name;
        return false;
    }
    return true;
}

// Opens both ends of the RC pairs of a test, or bails out.
inline void open_rc_ends(RcEnd &a, const char *name_a, RcEnd &b, const char *name_b) {
    std::string why;
    if (!open_rc_end(a, name_a, &why) || !open_rc_end(b, name_b, &why))
        bail(why);
}

// How to build an RcPair; the defaults give a working pair.
struct RcPairOptions : RcParams {
    uint32_t max_wr = 32;
    uint32_t max_sge = 4;
    uint32_t max_inline = 64;
    // Stop the walk early: RESET, INIT, RTR or RTS (both QPs).
    ibv_qp_state until = IBV_QPS_RTS;
    // Per end: the QP takes its receives from this SRQ instead of an RQ.
    ibv_srq *srq[2] = {nullptr, nullptr};
    ibv_qp_type type = IBV_QPT_RC; // or IBV_QPT_UC
};

// Where a QP of @self sends: QP @dest_qpn of @peer, at @self's active MTU,
// with PSNs @sq_psn (its own) and @rq_psn (the peer's).
inline RcPath rc_path(const RcEnd &self, const RcEnd &peer, uint32_t dest_qpn, uint32_t sq_psn,
                      uint32_t rq_psn) {
    return {.dest_qpn = dest_qpn,
            .dgid = peer.gid,
            .sgid_index = self.gid_index,
            .mtu = self.port.active_mtu,
            .sq_psn = sq_psn,
            .rq_psn = rq_psn};
}

// Two RC QPs, qp[0] on end a and qp[1] on end b, connected to each other
// and moved to opts.until. Destroyed on scope exit; each fault leaves a QP
// in ERR, so tests make a fresh pair per fault.
class RcPair {
public:
    static constexpr uint32_t kPsn[2] = {0x10000, 0x20000};

    RcPair(RcEnd &a, RcEnd &b, const RcPairOptions &opts = {}) : end_{&a, &b} {
        for (int i = 0; i < 2; i++) {
            ibv_qp_init_attr init{};
            init.send_cq = end_[i]->scq.get();
            init.recv_cq = end_[i]->rcq.get();
            init.cap.max_send_wr = opts.max_wr;
            init.cap.max_recv_wr = opts.max_wr;
            init.cap.max_send_sge = opts.max_sge;
            init.cap.max_recv_sge = opts.max_sge;
            init.cap.max_inline_data = opts.max_inline;
            init.qp_type = opts.type;
            init.sq_sig_all = 1;
            init.srq = opts.srq[i];
            qp[i].reset(ibv_create_qp(end_[i]->pd.get(), &init));
            if (!qp[i]) {
                error_ = errno;
                return;
            }
        }
        // Both QPs take each step before either takes the next.
        for (ibv_qp_state step : kRcSteps)
            for (int i = 0; i < 2 && !error_ && step <= opts.until; i++)
                error_ = modify_rc(qp[i].get(), step, path(i), opts);
    }

    // 0, or the errno of the first step that failed.
    int error() const { return error_; }
    ibv_qp *operator[](int i) const { return qp[i].get(); }

    // The state ibv_query_qp reports, or -1.
    int state(int i) const {
        ibv_qp_attr a{};
        ibv_qp_init_attr init{};
        if (!qp[i] || ibv_query_qp(qp[i].get(), &a, IBV_QP_STATE, &init))
            return -1;
        return a.qp_state;
    }
    // Waits up to @ms for QP @i to reach @s (a fatal error moves it later).
    bool wait_state(int i, ibv_qp_state s, int ms = 5000) const {
        for (int t = 0; t < ms; t += 10) {
            if (state(i) == s)
                return true;
            usleep(10000);
        }
        return state(i) == s;
    }

    Qp qp[2];

private:
    RcPath path(int i) const {
        return rc_path(*end_[i], *end_[1 - i], qp[1 - i]->qp_num, kPsn[i], kPsn[1 - i]);
    }

    RcEnd *end_[2];
    int error_ = 0;
};

// ---- single work requests --------------------------------------------------
// A send WR of @op over @n SGEs from @sge; the caller sets what else it needs.
inline ibv_send_wr send_wr(uint64_t wr_id, ibv_wr_opcode op, ibv_sge *sge, int n = 1) {
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = sge;
    wr.num_sge = n;
    wr.opcode = op;
    return wr;
}

// Posts @wr alone; ibv_post_send's result.
inline int post_send_wr(ibv_qp *qp, ibv_send_wr wr) {
    ibv_send_wr *bad = nullptr;
    return ibv_post_send(qp, &wr, &bad);
}

// Posts one receive WR over @n SGEs from @sge; ibv_post_recv's result.
inline int post_recv_wr(ibv_qp *qp, uint64_t wr_id, ibv_sge *sge, int n = 1) {
    ibv_recv_wr wr{}, *bad = nullptr;
    wr.wr_id = wr_id;
    wr.sg_list = sge;
    wr.num_sge = n;
    return ibv_post_recv(qp, &wr, &bad);
}

// Polls @cq until it has given @n completions or @ms milliseconds passed.
inline std::vector<ibv_wc> poll_wcs(ibv_cq *cq, size_t n, int ms = 5000) {
    std::vector<ibv_wc> out;
    for (int t = 0;; t += 2) {
        ibv_wc wc[16];
        int got;
        while (out.size() < n && (got = ibv_poll_cq(cq, 16, wc)) > 0)
            out.insert(out.end(), wc, wc + got);
        if (out.size() >= n || t >= ms)
            return out;
        usleep(2000);
    }
}

// "wr_id:status wr_id:status ..." of completions, for diagnostics.
inline std::string wcs_str(const std::vector<ibv_wc> &wcs) {
    std::string s;
    for (const ibv_wc &wc : wcs)
        s += std::to_string(wc.wr_id) + ":" + ibv_wc_status_str(wc.status) + " ";
    return s.empty() ? "none" : s;
}

// The counters of `rdma statistic show link DEV/1` by name (empty on error).
inline std::map<std::string, long long> rdma_counters(const char *dev) {
    std::string cmd = std::string("rdma statistic show link ") + dev + "/1 2>/dev/null";
    Pipe f(popen(cmd.c_str(), "r"));
    std::map<std::string, long long> out;
    char name[128], value[64];
    // "link DEV/1 name value name value ..."
    if (!f || std::fscanf(f.get(), "%127s %127s", name, name) != 2)
        return out;
    while (std::fscanf(f.get(), "%127s %63s", name, value) == 2)
        out[name] = std::atoll(value);
    return out;
}

} // namespace guest
