// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// mr_bad_input: bad work requests and the errors they must give, between two
// metaroce devices of one process, as the guest selftest 23-bad-input.sh runs
// it. Remote accesses with a wrong rkey, out of bounds or without the right
// complete with IBV_WC_REM_ACCESS_ERR; a SEND too long for its receive with
// IBV_WC_REM_INV_REQ_ERR; RNR NAKs past rnr_retry with
// IBV_WC_RNR_RETRY_EXC_ERR; a vanished peer with IBV_WC_RETRY_EXC_ERR. Each
// fault moves the requester to ERR and flushes the WRs behind it in order,
// and the target memory, guard zones around each MR included, is never
// touched. WRs refused at post time (state, SGE count, lkey, alignment)
// give their errno. Memory windows: binds that break the rules complete
// with IBV_WC_MW_BIND_ERR, and accesses beyond a window, without its
// rights or after it is invalidated (by LOCAL_INV, or by the peer's
// SEND_WITH_INV, whose receive shows the key) fail like those of an MR.
// Prints KTAP; exits 1 if a case failed, 2 if the devices cannot even be set up.
//
//   mr_bad_input DEVICE PEER_DEVICE
#include "guest_test.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using namespace guest;

constexpr int kCases = 85;

// A patterned buffer: a guard zone, the registered region, a guard zone.
// The pattern depends on the position, so a shifted write shows too.
class Guarded {
public:
    static constexpr size_t kGuard = 4096;

    Guarded(ibv_pd *pd, size_t len, int access) : buf_(len + 2 * kGuard), len_(len) {
        for (size_t i = 0; i < buf_.size(); i++)
            buf_[i] = pattern(i);
        mr_.reset(ibv_reg_mr(pd, region(), len, access));
    }
    uint8_t *region() { return buf_.data() + kGuard; }
    uint64_t addr() { return reinterpret_cast<uintptr_t>(region()); }
    uint64_t end() { return addr() + len_; }
    size_t size() const { return len_; }
    ibv_mr *mr() const { return mr_.get(); }

    // Whether every byte still holds the pattern, except [skip, skip + n) of
    // the region; *where tells the first one that does not.
    bool intact(std::string *where, size_t skip = 0, size_t n = 0) const {
        for (size_t i = 0; i < buf_.size(); i++) {
            const size_t lo = kGuard + skip;
            if (i >= lo && i < lo + n)
                continue;
            if (buf_[i] != pattern(i)) {
                const long off = static_cast<long>(i) - static_cast<long>(kGuard);
                *where = "byte at region offset " + std::to_string(off) + " changed";
                return false;
            }
        }
        *where = "intact";
        return true;
    }

private:
    static uint8_t pattern(size_t i) { return static_cast<uint8_t>(i * 131 + 7); }

    std::vector<uint8_t> buf_;
    size_t len_;
    Mr mr_;
};

// RDMA WRITE or READ of @len bytes between @local (key @lkey) and @raddr.
int post_rdma(ibv_qp *qp, uint64_t wr_id, ibv_wr_opcode op, void *local, uint32_t len,
              uint32_t lkey, uint64_t raddr, uint32_t rkey) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(local), len, lkey};
    ibv_send_wr wr = send_wr(wr_id, op, &sge);
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
    return post_send_wr(qp, wr);
}

// A FETCH_ADD or CMP_SWAP at @raddr, the old value into @local.
int post_atomic(ibv_qp *qp, uint64_t wr_id, ibv_wr_opcode op, uint64_t *local, uint32_t lkey,
                uint64_t raddr, uint32_t rkey) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(local), 8, lkey};
    ibv_send_wr wr = send_wr(wr_id, op, &sge);
    wr.wr.atomic.remote_addr = raddr;
    wr.wr.atomic.rkey = rkey;
    wr.wr.atomic.compare_add = 1;
    wr.wr.atomic.swap = 0x5555555555555555ull;
    return post_send_wr(qp, wr);
}

// @n SGEs, each @len bytes at @addr under @lkey.
std::vector<ibv_sge> sges(const void *addr, uint32_t len, uint32_t lkey, int n) {
    return std::vector<ibv_sge>(static_cast<size_t>(n),
                                ibv_sge{reinterpret_cast<uintptr_t>(addr), len, lkey});
}

// A SEND of @n SGEs, each @len bytes at @addr under @lkey.
int post_send(ibv_qp *qp, uint64_t wr_id, const void *addr, uint32_t len, uint32_t lkey,
              int n = 1) {
    auto sge = sges(addr, len, lkey, n);
    return post_send_wr(qp, send_wr(wr_id, IBV_WR_SEND, sge.data(), n));
}

int post_recv(ibv_qp *qp, uint64_t wr_id, const void *addr, uint32_t len, uint32_t lkey,
              int n = 1) {
    auto sge = sges(addr, len, lkey, n);
    return post_recv_wr(qp, wr_id, sge.data(), n);
}

struct Suite {
    Ktap &t;
    RcEnd &a, &b;
    // Local memory of the requester: a source and a scratch buffer.
    std::vector<uint8_t> src = std::vector<uint8_t>(8192, 0xee);
    Mr src_mr;

    Suite(Ktap &kt, RcEnd &ea, RcEnd &eb) : t(kt), a(ea), b(eb) {
        src_mr.reset(ibv_reg_mr(a.pd.get(), src.data(), src.size(), IBV_ACCESS_LOCAL_WRITE));
        if (!src_mr)
            bail("reg_mr of the source buffer failed");
    }

    RcPair pair(const RcPairOptions &opts = {}) {
        // Whatever an earlier case left behind must not pass for this one's.
        for (ibv_cq *cq : {a.scq.get(), a.rcq.get(), b.scq.get(), b.rcq.get()})
            if (auto left = poll_wcs(cq, 64, 0); !left.empty())
                std::printf("# left over from the case before: %s\n", wcs_str(left).c_str());
        RcPair p(a, b, opts);
        if (p.error())
            bail("cannot build an RC pair: " + std::string(std::strerror(p.error())));
        return p;
    }

    // Two SENDs queued behind a faulting WR (ids @first + 1, + 2).
    void post_followers(RcPair &p, uint64_t first) {
        post_send(p[0], first + 1, src.data(), 16, src_mr->lkey);
        post_send(p[0], first + 2, src.data(), 16, src_mr->lkey);
    }

    // The WR @first was posted with two followers: it completes with @want,
    // the QP goes to ERR and the followers are flushed in order.
    void expect_fault(RcPair &p, const std::string &what, int rc, uint64_t first,
                      ibv_wc_status want, int ms = 10000) {
        auto wcs = rc ? std::vector<ibv_wc>{} : poll_wcs(a.scq.get(), 3, ms);
        t.check(rc == 0 && !wcs.empty() && wcs[0].wr_id == first && wcs[0].status == want,
                what + ": " + ibv_wc_status_str(want), "post rc %d, completions %s", rc,
                wcs_str(wcs).c_str());
        bool flushed = wcs.size() == 3;
        for (size_t i = 1; flushed && i < 3; i++)
            flushed = wcs[i].wr_id == first + i && wcs[i].status == IBV_WC_WR_FLUSH_ERR;
        bool err = p.wait_state(0, IBV_QPS_ERR);
        t.check(flushed && err, what + ": QP to ERR, the 2 WRs behind it flushed in order",
                "state %d, completions %s", p.state(0), wcs_str(wcs).c_str());
    }

    void expect_intact(const Guarded &g, const std::string &what, size_t skip = 0, size_t n = 0) {
        std::string where;
        bool ok = g.intact(&where, skip, n);
        t.check(ok, what, "%s", where.c_str());
    }

    void remote_write_faults();
    void remote_read_atomic_faults();
    void memory_windows();
    void refused_at_post();
    void receive_faults();
    void rnr();
    void retry_exhausted();
    void destroyed_with_completions();
};

// A QP destroyed before its completions are polled takes them along: they
// name it, and it is freed (uverbs would read its QP number after the free,
// which KASAN reports on the debug kernel).
void Suite::destroyed_with_completions() {
    {
        RcPair p = pair();
        int rc = post_recv(p[0], 800, src.data(), 16, src_mr->lkey);
        rc |= post_recv(p[0], 801, src.data(), 16, src_mr->lkey);
        ibv_qp_attr attr{};
        attr.qp_state = IBV_QPS_ERR;
        rc |= ibv_modify_qp(p[0], &attr, IBV_QP_STATE);
        if (rc)
            bail("cannot post receives or move the QP to ERR");
    }
    auto left = poll_wcs(a.rcq.get(), 2, 200);
    t.check(left.empty(), "QP destroyed with 2 flushed receives unpolled: none is polled after",
            "completions %s", wcs_str(left).c_str());
}

void Suite::remote_write_faults() {
    constexpr int kRw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                        IBV_ACCESS_REMOTE_ATOMIC;
    {
        Guarded g(b.pd.get(), 4096, kRw);
        RcPair p = pair();
        int rc = post_rdma(p[0], 100, IBV_WR_RDMA_WRITE, src.data(), 64, src_mr->lkey,
                           g.addr() + 128, g.mr()->rkey ^ 0x5a00);
        post_followers(p, 100);
        expect_fault(p, "WRITE with a wrong rkey", rc, 100, IBV_WC_REM_ACCESS_ERR);
        t.check(p.wait_state(1, IBV_QPS_ERR), "WRITE with a wrong rkey: the responder QP to ERR",
                "state %d", p.state(1));
        expect_intact(g, "WRITE with a wrong rkey: MR and guard zones unchanged");
    }
    {
        Guarded g(b.pd.get(), 4096, kRw);
        RcPair p = pair();
        int rc = post_rdma(p[0], 110, IBV_WR_RDMA_WRITE, src.data(), 64, src_mr->lkey, g.end() - 63,
                           g.mr()->rkey);
        post_followers(p, 110);
        expect_fault(p, "WRITE 1 byte beyond the MR end", rc, 110, IBV_WC_REM_ACCESS_ERR);
        expect_intact(g, "WRITE 1 byte beyond the MR end: MR and guard zones unchanged");
    }
    {
        Guarded g(b.pd.get(), 4096, kRw);
        RcPair p = pair();
        int rc = post_rdma(p[0], 120, IBV_WR_RDMA_WRITE, src.data(), 64, src_mr->lkey,
                           g.addr() - 16, g.mr()->rkey);
        post_followers(p, 120);
        expect_fault(p, "WRITE starting 16 bytes before the MR", rc, 120, IBV_WC_REM_ACCESS_ERR);
        expect_intact(g, "WRITE starting before the MR: MR and guard zones unchanged");
    }
    {
        Guarded g(b.pd.get(), 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
        RcPair p = pair();
        int rc = post_rdma(p[0], 130, IBV_WR_RDMA_WRITE, src.data(), 64, src_mr->lkey,
                           g.addr() + 256, g.mr()->rkey);
        post_followers(p, 130);
        expect_fault(p, "WRITE to an MR without REMOTE_WRITE", rc, 130, IBV_WC_REM_ACCESS_ERR);
        expect_intact(g, "WRITE to an MR without REMOTE_WRITE: MR and guard zones unchanged");
    }
    {
        // The control: the same guarded MR takes a good WRITE where it was aimed.
        Guarded g(b.pd.get(), 4096, kRw);
        RcPair p = pair();
        int rc = post_rdma(p[0], 140, IBV_WR_RDMA_WRITE, src.data(), 64, src_mr->lkey, g.end() - 64,
                           g.mr()->rkey);
        auto wcs = poll_wcs(a.scq.get(), 1);
        bool landed = true;
        for (size_t i = g.size() - 64; i < g.size(); i++)
            landed = landed && g.region()[i] == 0xee;
        t.check(rc == 0 && wcs.size() == 1 && wcs[0].status == IBV_WC_SUCCESS && landed,
                "control: WRITE of the last 64 bytes of the MR succeeds and lands",
                "rc %d completions %s landed %d", rc, wcs_str(wcs).c_str(), landed);
        expect_intact(g, "control: nothing around those 64 bytes changed", g.size() - 64, 64);
    }
}

void Suite::remote_read_atomic_faults() {
    // The READ lands in a guarded local buffer of the requester.
    Guarded dst(a.pd.get(), 4096, IBV_ACCESS_LOCAL_WRITE);
    {
        Guarded g(b.pd.get(), 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
        RcPair p = pair();
        int rc = post_rdma(p[0], 200, IBV_WR_RDMA_READ, dst.region(), 64, dst.mr()->lkey, g.addr(),
                           g.mr()->rkey);
        post_followers(p, 200);
        expect_fault(p, "READ from an MR without REMOTE_READ", rc, 200, IBV_WC_REM_ACCESS_ERR);
        expect_intact(dst, "READ without REMOTE_READ: the local buffer unchanged");
    }
    {
        Guarded g(b.pd.get(), 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
        RcPair p = pair();
        int rc = post_rdma(p[0], 210, IBV_WR_RDMA_READ, dst.region(), 64, dst.mr()->lkey,
                           g.end() - 32, g.mr()->rkey);
        post_followers(p, 210);
        expect_fault(p, "READ 32 bytes beyond the MR end", rc, 210, IBV_WC_REM_ACCESS_ERR);
        expect_intact(dst, "READ beyond the MR end: the local buffer unchanged");
    }
    uint64_t *old = reinterpret_cast<uint64_t *>(dst.region());
    {
        Guarded g(b.pd.get(), 4096,
                  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
        RcPair p = pair();
        int rc = post_atomic(p[0], 220, IBV_WR_ATOMIC_FETCH_AND_ADD, old, dst.mr()->lkey,
                             g.addr() + 64, g.mr()->rkey);
        post_followers(p, 220);
        expect_fault(p, "FETCH_ADD on an MR without REMOTE_ATOMIC", rc, 220, IBV_WC_REM_ACCESS_ERR);
        expect_intact(g, "FETCH_ADD without REMOTE_ATOMIC: MR and guard zones unchanged");
    }
    {
        Guarded g(b.pd.get(), 4096,
                  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
        RcPair p = pair();
        int rc = post_atomic(p[0], 230, IBV_WR_ATOMIC_CMP_AND_SWP, old, dst.mr()->lkey, g.end(),
                             g.mr()->rkey);
        post_followers(p, 230);
        expect_fault(p, "CMP_SWAP just past the MR end", rc, 230, IBV_WC_REM_ACCESS_ERR);
        expect_intact(g, "CMP_SWAP past the MR end: MR and guard zones unchanged");
        expect_intact(dst, "failed atomics: the local buffer unchanged");
    }
    {
        Guarded g(b.pd.get(), 4096,
                  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
        RcPair p = pair();
        t.refused(post_atomic(p[0], 240, IBV_WR_ATOMIC_FETCH_AND_ADD, old, dst.mr()->lkey,
                              g.addr() + 4, g.mr()->rkey),
                  EINVAL, "FETCH_ADD at an address not 8-byte aligned: EINVAL at post");
        t.check(poll_wcs(a.scq.get(), 1, 50).empty() && p.state(0) == IBV_QPS_RTS,
                "the refused atomic completes nothing; the QP stays in RTS");
    }
}

void Suite::refused_at_post() {
    uint8_t *buf = src.data();
    const uint32_t lkey = src_mr->lkey;
    {
        RcPairOptions o;
        o.until = IBV_QPS_RESET;
        RcPair p = pair(o);
        t.refused(post_recv(p[0], 1, buf, 16, lkey), EINVAL, "post_recv in RESET: EINVAL");
        t.refused(post_send(p[0], 1, buf, 16, lkey), EINVAL, "post_send in RESET: EINVAL");
    }
    {
        RcPairOptions o;
        o.until = IBV_QPS_INIT;
        RcPair p = pair(o);
        t.refused(post_send(p[0], 1, buf, 16, lkey), EINVAL, "post_send in INIT: EINVAL");
    }
    {
        RcPairOptions o;
        o.until = IBV_QPS_RTR;
        RcPair p = pair(o);
        t.refused(post_send(p[0], 1, buf, 16, lkey), EINVAL, "post_send in RTR: EINVAL");
    }
    RcPair p = pair();
    ibv_qp_attr q{};
    ibv_qp_init_attr qi{};
    if (ibv_query_qp(p[0], &q, IBV_QP_CAP, &qi))
        bail("query_qp failed");
    const int send_sge = static_cast<int>(q.cap.max_send_sge);
    const int recv_sge = static_cast<int>(q.cap.max_recv_sge);
    t.refused(post_send(p[0], 1, buf, 8, lkey, send_sge + 1), EINVAL,
              "post_send with max_send_sge + 1 SGEs (" + std::to_string(send_sge + 1) +
                  "): EINVAL");
    t.refused(post_send(p[0], 1, buf, 8, lkey, 1000), EINVAL, "post_send with 1000 SGEs: EINVAL");
    t.refused(post_recv(p[0], 1, buf, 8, lkey, recv_sge + 1), EINVAL,
              "post_recv with max_recv_sge + 1 SGEs (" + std::to_string(recv_sge + 1) +
                  "): EINVAL");
    t.refused(post_recv(p[0], 1, buf, 8, lkey, 1000), EINVAL, "post_recv with 1000 SGEs: EINVAL");

    // lkeys that do not name an MR of this QP's PD.
    Pd other_pd(ibv_alloc_pd(a.ctx.get()));
    std::vector<uint8_t> other(256);
    Mr other_mr(other_pd
                    ? ibv_reg_mr(other_pd.get(), other.data(), other.size(), IBV_ACCESS_LOCAL_WRITE)
                    : nullptr);
    if (!other_mr)
        bail("cannot register an MR in a second PD");
    t.refused(post_send(p[0], 1, other.data(), 16, other_mr->lkey), EINVAL,
              "post_send with the lkey of an MR in another PD: EINVAL");
    t.refused(post_send(p[0], 1, buf, 16, 0xdead00), EINVAL,
              "post_send with an lkey that names no MR: EINVAL");
    t.refused(post_rdma(p[0], 1, IBV_WR_RDMA_WRITE, buf, 16, lkey ^ 0x100, 0, 0), EINVAL,
              "WRITE whose local SGE has a wrong lkey: EINVAL");
    t.check(poll_wcs(a.scq.get(), 1, 50).empty() && p.state(0) == IBV_QPS_RTS,
            "refused WRs complete nothing; the QP stays in RTS");
    // The QP still works after all of that.
    std::vector<uint8_t> in(64);
    Mr in_mr(ibv_reg_mr(b.pd.get(), in.data(), in.size(), IBV_ACCESS_LOCAL_WRITE));
    int rc = in_mr ? post_recv(p[1], 9, in.data(), 64, in_mr->lkey) : -1;
    rc |= post_send(p[0], 9, buf, 64, lkey);
    auto sw = poll_wcs(a.scq.get(), 1);
    auto rw = poll_wcs(b.rcq.get(), 1);
    t.check(rc == 0 && sw.size() == 1 && sw[0].status == IBV_WC_SUCCESS && rw.size() == 1 &&
                rw[0].status == IBV_WC_SUCCESS && rw[0].byte_len == 64 && in[63] == 0xee,
            "then a SEND of 64 bytes still crosses", "rc %d send %s recv %s", rc,
            wcs_str(sw).c_str(), wcs_str(rw).c_str());
}

void Suite::receive_faults() {
    {
        // 64 bytes into a 32-byte receive in the middle of a guarded MR.
        Guarded g(b.pd.get(), 4096, IBV_ACCESS_LOCAL_WRITE);
        RcPair p = pair();
        int rc = post_recv(p[1], 300, g.region() + 64, 32, g.mr()->lkey);
        rc |= post_send(p[0], 300, src.data(), 64, src_mr->lkey);
        post_followers(p, 300);
        expect_fault(p, "SEND of 64 bytes into a 32-byte receive", rc, 300, IBV_WC_REM_INV_REQ_ERR);
        auto rw = poll_wcs(b.rcq.get(), 1);
        t.check(rw.size() == 1 && rw[0].wr_id == 300 && rw[0].status != IBV_WC_SUCCESS,
                "too-long SEND: the receive completes with an error", "completions %s",
                wcs_str(rw).c_str());
        expect_intact(g, "too-long SEND: nothing written outside the receive's 32 bytes", 64, 32);
    }
    {
        // A receive whose lkey belongs to another PD of the responder.
        Pd other_pd(ibv_alloc_pd(b.ctx.get()));
        if (!other_pd)
            bail("alloc_pd failed");
        Guarded g(other_pd.get(), 4096, IBV_ACCESS_LOCAL_WRITE);
        RcPair p = pair();
        int rc = post_recv(p[1], 310, g.region(), 64, g.mr()->lkey);
        rc |= post_send(p[0], 310, src.data(), 64, src_mr->lkey);
        auto wcs = rc ? std::vector<ibv_wc>{} : poll_wcs(a.scq.get(), 1);
        // IB says REM_OP_ERR; this transport's NAK for it is an invalid request.
        t.check(wcs.size() == 1 &&
                    (wcs[0].status == IBV_WC_REM_OP_ERR || wcs[0].status == IBV_WC_REM_INV_REQ_ERR),
                "SEND into a receive with another PD's lkey: IBV_WC_REM_OP_ERR or "
                "IBV_WC_REM_INV_REQ_ERR",
                "rc %d completions %s", rc, wcs_str(wcs).c_str());
        auto rw = poll_wcs(b.rcq.get(), 1);
        t.check(rw.size() == 1 && rw[0].wr_id == 310 && rw[0].status != IBV_WC_SUCCESS,
                "receive with another PD's lkey completes with an error", "completions %s",
                wcs_str(rw).c_str());
        expect_intact(g, "receive with another PD's lkey: that PD's MR unchanged");
    }
}

void Suite::rnr() {
    {
        RcPairOptions o;
        o.rnr_retry = 1;
        o.min_rnr_timer = 1;
        RcPair p = pair(o);
        int rc = post_send(p[0], 400, src.data(), 16, src_mr->lkey);
        post_followers(p, 400);
        expect_fault(p, "SEND with no receive, rnr_retry 1", rc, 400, IBV_WC_RNR_RETRY_EXC_ERR);
        t.check(p.state(1) == IBV_QPS_RTS, "RNR retry exhausted: the responder stays in RTS",
                "state %d", p.state(1));
    }
    {
        // Receive posted 200 ms late: RNR NAKs, then the SEND goes through.
        RcPairOptions o;
        o.rnr_retry = 7;
        o.min_rnr_timer = 14; // 0.96 ms
        RcPair p = pair(o);
        std::vector<uint8_t> in(64);
        Mr in_mr(ibv_reg_mr(b.pd.get(), in.data(), in.size(), IBV_ACCESS_LOCAL_WRITE));
        int rc = post_send(p[0], 410, src.data(), 64, src_mr->lkey);
        auto early = poll_wcs(a.scq.get(), 1, 200);
        rc |= in_mr ? post_recv(p[1], 410, in.data(), 64, in_mr->lkey) : -1;
        auto sw = poll_wcs(a.scq.get(), 1);
        auto rw = poll_wcs(b.rcq.get(), 1);
        t.check(rc == 0 && early.empty() && sw.size() == 1 && sw[0].status == IBV_WC_SUCCESS &&
                    rw.size() == 1 && rw[0].status == IBV_WC_SUCCESS && rw[0].byte_len == 64 &&
                    in[0] == 0xee && in[63] == 0xee,
                "SEND before its receive (rnr_retry 7): RNR, then both complete",
                "rc %d, before the receive %s, send %s, recv %s", rc, wcs_str(early).c_str(),
                wcs_str(sw).c_str(), wcs_str(rw).c_str());
    }
}

void Suite::retry_exhausted() {
    // The peer's QP is destroyed: nothing answers, the RTOs run out.
    RcPairOptions o;
    o.retry_cnt = 1;
    o.timeout = 8;
    RcPair p = pair(o);
    p.qp[1].reset();
    int rc = post_send(p[0], 500, src.data(), 16, src_mr->lkey);
    post_followers(p, 500);
    expect_fault(p, "SEND to a destroyed peer QP, retry_cnt 1", rc, 500, IBV_WC_RETRY_EXC_ERR,
                 60000);
}

// A window on end b, deallocated on scope exit.
using Mw = std::unique_ptr<ibv_mw, Deleter<ibv_dealloc_mw>>;

// Binds type 2 window @mw with a signaled IBV_WR_BIND_MW on @qp, whose send
// CQ is @cq; the completion's status (IBV_WC_GENERAL_ERR if none came) and
// the window's new key in *rkey.
ibv_wc_status bind_type2(ibv_qp *qp, ibv_cq *cq, uint64_t wr_id, ibv_mw *mw,
                         const ibv_mw_bind_info &info, uint32_t *rkey) {
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.opcode = IBV_WR_BIND_MW;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.bind_mw.mw = mw;
    wr.bind_mw.rkey = *rkey = ibv_inc_rkey(mw->rkey);
    wr.bind_mw.bind_info = info;
    if (post_send_wr(qp, wr))
        return IBV_WC_GENERAL_ERR;
    auto wcs = poll_wcs(cq, 1);
    return wcs.size() == 1 && wcs[0].wr_id == wr_id ? wcs[0].status : IBV_WC_GENERAL_ERR;
}

// A signaled IBV_WR_LOCAL_INV of @rkey on @qp; as bind_type2().
ibv_wc_status local_inv(ibv_qp *qp, ibv_cq *cq, uint64_t wr_id, uint32_t rkey) {
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.opcode = IBV_WR_LOCAL_INV;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.invalidate_rkey = rkey;
    if (post_send_wr(qp, wr))
        return IBV_WC_GENERAL_ERR;
    auto wcs = poll_wcs(cq, 1);
    return wcs.size() == 1 && wcs[0].wr_id == wr_id ? wcs[0].status : IBV_WC_GENERAL_ERR;
}

void Suite::memory_windows() {
    constexpr int kBind = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND;
    constexpr unsigned kWinRw = IBV_ACCESS_REMOTE_WRITE;
    constexpr size_t kWinOff = 1024, kWinLen = 1024;
    ibv_cq *bcq = b.scq.get();
    // A receive @id on p[1] into @in, then a signaled SEND_WITH_INV of
    // @rkey (@id + 1) from p[0]: post_send's result.
    auto send_with_inv = [&](RcPair &p, uint64_t id, std::vector<uint8_t> &in, ibv_mr *in_mr,
                             uint32_t rkey) {
        if (in_mr)
            post_recv(p[1], id, in.data(), static_cast<uint32_t>(in.size()), in_mr->lkey);
        ibv_sge sge{reinterpret_cast<uintptr_t>(src.data()), 32, src_mr->lkey};
        ibv_send_wr wr = send_wr(id + 1, IBV_WR_SEND_WITH_INV, &sge);
        wr.send_flags = IBV_SEND_SIGNALED;
        wr.invalidate_rkey = rkey;
        return post_send_wr(p[0], wr);
    };
    {
        // The window: 1 KiB in the middle of a 4 KiB MR, write only.
        Guarded g(b.pd.get(), 4096, kBind);
        Mw mw(ibv_alloc_mw(b.pd.get(), IBV_MW_TYPE_2));
        if (!g.mr() || !mw)
            bail("MR with MW_BIND access or type 2 MW refused");
        RcPair p = pair();
        uint32_t rkey = 0;
        const ibv_mw_bind_info win{g.mr(), g.addr() + kWinOff, kWinLen, kWinRw};
        t.check(bind_type2(p[1], bcq, 600, mw.get(), win, &rkey) == IBV_WC_SUCCESS,
                "MW type 2: bind of 1 KiB inside the MR completes");
        int rc = post_rdma(p[0], 601, IBV_WR_RDMA_WRITE, src.data(), 64, src_mr->lkey,
                           g.addr() + kWinOff + kWinLen - 64, rkey);
        auto wcs = poll_wcs(a.scq.get(), 1);
        t.check(rc == 0 && wcs.size() == 1 && wcs[0].status == IBV_WC_SUCCESS,
                "MW type 2: WRITE of the window's last 64 bytes succeeds", "rc %d, completions %s",
                rc, wcs_str(wcs).c_str());
        expect_intact(g, "MW type 2: the WRITE landed inside the window only",
                      kWinOff + kWinLen - 64, 64);
        t.check(ibv_dereg_mr(g.mr()) == EINVAL, "MW type 2: dereg of its MR refused while bound");
        rc = post_rdma(p[0], 602, IBV_WR_RDMA_WRITE, src.data(), 64, src_mr->lkey,
                       g.addr() + kWinOff + kWinLen - 63, rkey);
        post_followers(p, 602);
        expect_fault(p, "MW type 2: WRITE 1 byte beyond the window", rc, 602,
                     IBV_WC_REM_ACCESS_ERR);
        expect_intact(g, "MW type 2: nothing written beyond the window", kWinOff + kWinLen - 64,
                      64);
    }
    {
        Guarded g(b.pd.get(), 4096, kBind);
        Mw mw(ibv_alloc_mw(b.pd.get(), IBV_MW_TYPE_2));
        RcPair p = pair();
        uint32_t rkey = 0;
        const ibv_mw_bind_info win{g.mr(), g.addr() + kWinOff, kWinLen, kWinRw};
        bind_type2(p[1], bcq, 610, mw.get(), win, &rkey);
        int rc = post_rdma(p[0], 611, IBV_WR_RDMA_READ, src.data(), 64, src_mr->lkey,
                           g.addr() + kWinOff, rkey);
        post_followers(p, 611);
        expect_fault(p, "MW type 2: READ without the window's REMOTE_READ", rc, 611,
                     IBV_WC_REM_ACCESS_ERR);
    }
    {
        Guarded g(b.pd.get(), 4096, kBind);
        Mw mw(ibv_alloc_mw(b.pd.get(), IBV_MW_TYPE_2));
        RcPair p = pair();
        uint32_t rkey = 0;
        const ibv_mw_bind_info win{g.mr(), g.addr() + kWinOff, kWinLen, kWinRw};
        bind_type2(p[1], bcq, 620, mw.get(), win, &rkey);
        t.check(local_inv(p[1], bcq, 621, rkey) == IBV_WC_SUCCESS,
                "MW type 2: LOCAL_INV of its key completes");
        int rc = post_rdma(p[0], 622, IBV_WR_RDMA_WRITE, src.data(), 64, src_mr->lkey,
                           g.addr() + kWinOff, rkey);
        post_followers(p, 622);
        expect_fault(p, "MW type 2: WRITE after its invalidation", rc, 622, IBV_WC_REM_ACCESS_ERR);
        expect_intact(g, "MW type 2: nothing written after its invalidation");
    }
    {
        // A SEND_WITH_INV from the peer unbinds the window it names: the
        // receive shows the key, and the key is dead afterwards.
        Guarded g(b.pd.get(), 4096, kBind);
        Mw mw(ibv_alloc_mw(b.pd.get(), IBV_MW_TYPE_2));
        RcPair p = pair();
        uint32_t rkey = 0;
        const ibv_mw_bind_info win{g.mr(), g.addr() + kWinOff, kWinLen, kWinRw};
        bind_type2(p[1], bcq, 660, mw.get(), win, &rkey);
        std::vector<uint8_t> in(64);
        Mr in_mr(ibv_reg_mr(b.pd.get(), in.data(), in.size(), IBV_ACCESS_LOCAL_WRITE));
        int rc = send_with_inv(p, 661, in, in_mr.get(), rkey);
        auto sent = poll_wcs(a.scq.get(), 1);
        auto got = poll_wcs(b.rcq.get(), 1);
        t.check(rc == 0 && sent.size() == 1 && sent[0].wr_id == 662 &&
                    sent[0].status == IBV_WC_SUCCESS,
                "MW type 2: SEND_WITH_INV of its key completes", "rc %d, completions %s", rc,
                wcs_str(sent).c_str());
        t.check(got.size() == 1 && got[0].wr_id == 661 && got[0].status == IBV_WC_SUCCESS &&
                    got[0].wc_flags == IBV_WC_WITH_INV && got[0].invalidated_rkey == rkey,
                "MW type 2: the receive completes with IBV_WC_WITH_INV and the window's key",
                "completions %s, flags %#x, key %#x (want %#x)", wcs_str(got).c_str(),
                got.empty() ? 0u : static_cast<unsigned>(got[0].wc_flags),
                got.empty() ? 0u : got[0].invalidated_rkey, rkey);
        rc = post_rdma(p[0], 663, IBV_WR_RDMA_WRITE, src.data(), 64, src_mr->lkey,
                       g.addr() + kWinOff, rkey);
        post_followers(p, 663);
        expect_fault(p, "MW type 2: WRITE after a SEND_WITH_INV of its key", rc, 663,
                     IBV_WC_REM_ACCESS_ERR);
        expect_intact(g, "MW type 2: nothing written after the SEND_WITH_INV");
    }
    {
        // A type 2 window serves only the QP that bound it, even in its PD.
        Guarded g(b.pd.get(), 4096, kBind);
        Mw mw(ibv_alloc_mw(b.pd.get(), IBV_MW_TYPE_2));
        RcPair owner = pair();
        uint32_t rkey = 0;
        const ibv_mw_bind_info win{g.mr(), g.addr() + kWinOff, kWinLen, kWinRw};
        bind_type2(owner[1], bcq, 640, mw.get(), win, &rkey);
        RcPair p = pair();
        int rc = post_rdma(p[0], 641, IBV_WR_RDMA_WRITE, src.data(), 64, src_mr->lkey,
                           g.addr() + kWinOff, rkey);
        post_followers(p, 641);
        expect_fault(p, "MW type 2: WRITE through another QP of its PD", rc, 641,
                     IBV_WC_REM_ACCESS_ERR);
    }
    {
        // A peer reaches a type 2 window only through the QP it is bound
        // to: a SEND_WITH_INV of its key through another QP of its PD fails
        // that receive, and the window still serves its own QP.
        Guarded g(b.pd.get(), 4096, kBind);
        Mw mw(ibv_alloc_mw(b.pd.get(), IBV_MW_TYPE_2));
        RcPair owner = pair();
        uint32_t rkey = 0;
        const ibv_mw_bind_info win{g.mr(), g.addr() + kWinOff, kWinLen, kWinRw};
        bind_type2(owner[1], bcq, 670, mw.get(), win, &rkey);
        RcPair p = pair();
        std::vector<uint8_t> in(64);
        Mr in_mr(ibv_reg_mr(b.pd.get(), in.data(), in.size(), IBV_ACCESS_LOCAL_WRITE));
        int rc = send_with_inv(p, 671, in, in_mr.get(), rkey);
        poll_wcs(a.scq.get(), 1);
        auto got = poll_wcs(b.rcq.get(), 1);
        t.check(rc == 0 && got.size() == 1 && got[0].wr_id == 671 &&
                    got[0].status != IBV_WC_SUCCESS,
                "MW type 2: SEND_WITH_INV of its key through another QP fails the receive",
                "rc %d, completions %s", rc, wcs_str(got).c_str());
        rc = post_rdma(owner[0], 673, IBV_WR_RDMA_WRITE, src.data(), 64, src_mr->lkey,
                       g.addr() + kWinOff, rkey);
        auto w = poll_wcs(a.scq.get(), 1);
        t.check(rc == 0 && w.size() == 1 && w[0].wr_id == 673 && w[0].status == IBV_WC_SUCCESS &&
                    std::memcmp(g.region() + kWinOff, src.data(), 64) == 0,
                "MW type 2: ... and the window still takes a WRITE through its own QP",
                "rc %d, completions %s", rc, wcs_str(w).c_str());
    }
    {
        // One post_send list of BIND_MW, SEND, LOCAL_INV: the completions
        // come in post order, the LOCAL_INV's after the SEND's.
        Guarded g(b.pd.get(), 4096, kBind);
        Mw mw(ibv_alloc_mw(b.pd.get(), IBV_MW_TYPE_2));
        RcPair p = pair();
        std::vector<uint8_t> in(64), msg(64, 0x33);
        Mr in_mr(ibv_reg_mr(a.pd.get(), in.data(), in.size(), IBV_ACCESS_LOCAL_WRITE));
        if (in_mr)
            post_recv(p[0], 650, in.data(), 64, in_mr->lkey);
        Mr msg_mr(ibv_reg_mr(b.pd.get(), msg.data(), msg.size(), IBV_ACCESS_LOCAL_WRITE));
        ibv_sge sge{reinterpret_cast<uintptr_t>(msg.data()), 64, msg_mr ? msg_mr->lkey : 0};
        ibv_send_wr wr[3]{};
        wr[0].wr_id = 651;
        wr[0].opcode = IBV_WR_BIND_MW;
        wr[0].bind_mw.mw = mw.get();
        wr[0].bind_mw.rkey = ibv_inc_rkey(mw->rkey);
        wr[0].bind_mw.bind_info = {g.mr(), g.addr(), 4096, kWinRw};
        wr[1] = send_wr(652, IBV_WR_SEND, &sge);
        wr[2].wr_id = 653;
        wr[2].opcode = IBV_WR_LOCAL_INV;
        wr[2].invalidate_rkey = wr[0].bind_mw.rkey;
        for (int i = 0; i < 3; i++) {
            wr[i].send_flags = IBV_SEND_SIGNALED;
            wr[i].next = i < 2 ? &wr[i + 1] : nullptr;
        }
        ibv_send_wr *bad = nullptr;
        int rc = ibv_post_send(p[1], wr, &bad);
        auto wcs = poll_wcs(bcq, 3);
        bool in_order = wcs.size() == 3;
        for (size_t i = 0; in_order && i < 3; i++)
            in_order = wcs[i].wr_id == 651 + i && wcs[i].status == IBV_WC_SUCCESS;
        t.check(rc == 0 && in_order, "MW: BIND_MW, SEND, LOCAL_INV in one list complete in order",
                "rc %d, completions %s", rc, wcs_str(wcs).c_str());
        poll_wcs(a.rcq.get(), 1);
    }
    {
        // Binds against the rules: no MW_BIND right, outside the MR, a
        // writable window on an MR without local write.
        Guarded plain(b.pd.get(), 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
        Guarded g(b.pd.get(), 4096, kBind);
        Guarded ro(b.pd.get(), 4096, IBV_ACCESS_MW_BIND);
        Mw mw(ibv_alloc_mw(b.pd.get(), IBV_MW_TYPE_2));
        RcPair p = pair();
        uint32_t rkey = 0;
        ibv_wc_status st =
            bind_type2(p[1], bcq, 630, mw.get(), {plain.mr(), plain.addr(), 1024, kWinRw}, &rkey);
        t.check(st == IBV_WC_MW_BIND_ERR, "MW bind to an MR without MW_BIND: MW_BIND_ERR", "got %s",
                ibv_wc_status_str(st));
        st = bind_type2(p[1], bcq, 631, mw.get(), {g.mr(), g.end() - 512, 1024, kWinRw}, &rkey);
        t.check(st == IBV_WC_MW_BIND_ERR, "MW bind reaching past the MR end: MW_BIND_ERR", "got %s",
                ibv_wc_status_str(st));
        st = bind_type2(p[1], bcq, 632, mw.get(), {ro.mr(), ro.addr(), 1024, kWinRw}, &rkey);
        t.check(st == IBV_WC_MW_BIND_ERR,
                "MW bind of a writable window on an MR without local write: MW_BIND_ERR", "got %s",
                ibv_wc_status_str(st));
        // Type 1 windows are unbound by a bind of length 0, never invalidated.
        Mw mw1(ibv_alloc_mw(b.pd.get(), IBV_MW_TYPE_1));
        ibv_mw_bind bind{};
        bind.wr_id = 633;
        bind.send_flags = IBV_SEND_SIGNALED;
        bind.bind_info = {g.mr(), g.addr(), 4096, kWinRw};
        int rc = mw1 ? ibv_bind_mw(p[1], mw1.get(), &bind) : -1;
        auto wcs = poll_wcs(bcq, 1);
        t.check(rc == 0 && wcs.size() == 1 && wcs[0].status == IBV_WC_SUCCESS,
                "MW type 1: ibv_bind_mw completes", "rc %d, completions %s", rc,
                wcs_str(wcs).c_str());
        st = mw1 ? local_inv(p[1], bcq, 634, mw1->rkey) : IBV_WC_GENERAL_ERR;
        t.check(st == IBV_WC_LOC_QP_OP_ERR, "MW type 1: LOCAL_INV refused (LOC_QP_OP_ERR)",
                "got %s", ibv_wc_status_str(st));
    }
}

} // namespace

int main(int argc, char **argv) {
    start(argc, argv, 2, "DEVICE PEER_DEVICE");
    Ktap t(kCases);
    RcEnd a, b;
    open_rc_ends(a, argv[1], b, argv[2]);
    Suite s(t, a, b);
    s.refused_at_post();
    s.remote_write_faults();
    s.memory_windows();
    s.receive_faults();
    s.rnr();
    s.retry_exhausted();
    s.destroyed_with_completions();
    // Last: they need READ and atomics in the kernel.
    s.remote_read_atomic_faults();
    return t.passed() ? 0 : 1;
}
