// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// UC QPs between two metaroce devices, as KTAP: the walk to RTS with UC's
// attribute masks (RC's extra ones refused), READ and atomics refused at
// post with the WR returned as bad_wr, WRITE and WRITE_IMM landing, and
// the responder's drops: a WRITE with a wrong rkey, a SEND with no receive
// posted (the next SEND then takes the receive posted after it), a SEND
// longer than its receive (that receive completes in error). Each drop is
// counted in its uc_rx_drop_* counter, no NAK fails the sender's WR, and
// neither QP leaves RTS.
//
// usage: mr_uc DEV_A DEV_B (e.g. mrc0 mrc1; DEV_A sends, DEV_B receives)
#include "guest_test.h"

#include <arpa/inet.h>

using namespace guest;

namespace {

constexpr size_t kBuf = 8192;
constexpr int kCases = 29;

// A buffer registered with every right a UC QP can use.
struct Buffer {
    Mapping mem{kBuf, PROT_READ | PROT_WRITE};
    Mr mr;
    uint8_t *at(size_t off) const { return mem.get() + off; }
    ibv_sge sge(size_t off, uint32_t len) const {
        return {reinterpret_cast<uintptr_t>(at(off)), len, mr->lkey};
    }
};

// A counter of @dev. The responder counts a drop before it acknowledges
// the message, so the sender's completion comes after the count.
long long counter(const char *dev, const char *name) {
    auto c = rdma_counters(dev);
    auto it = c.find(name);
    return it == c.end() ? -1 : it->second;
}

// Both QPs still in RTS.
bool both_rts(const RcPair &p) {
    return p.state(0) == IBV_QPS_RTS && p.state(1) == IBV_QPS_RTS;
}

// One signalled WR posted on qp[0]; its completion's status, or -1.
int send_one(const RcPair &p, RcEnd &a, ibv_send_wr wr) {
    if (post_send_wr(p[0], wr))
        return -1;
    auto wcs = poll_wcs(a.scq.get(), 1);
    return wcs.size() == 1 ? wcs[0].status : -1;
}

} // namespace

int main(int argc, char **argv) {
    start(argc, argv, 2, "DEV_A DEV_B");
    Ktap t(kCases);
    RcEnd a, b;
    open_rc_ends(a, argv[1], b, argv[2]);
    const char *dev_b = argv[2];
    const int rights = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    Buffer src, dst;
    int err;
    src.mr = reg_mr(a.pd.get(), src.at(0), kBuf, rights, &err);
    dst.mr = reg_mr(b.pd.get(), dst.at(0), kBuf, rights, &err);
    if (!src.mr || !dst.mr)
        bail("cannot register the buffers");

    // RC's RTR/RTS attributes are not UC's: ib_core refuses them.
    {
        RcPairOptions o;
        o.type = IBV_QPT_UC;
        o.until = IBV_QPS_RTR;
        o.access = rights;
        RcPair p(a, b, o);
        t.check(!p.error() && p.state(0) == IBV_QPS_RTR, "UC pair to RTR with UC's masks",
                "error %d state %d", p.error(), p.state(0));
        ibv_qp_attr at{};
        at.qp_state = IBV_QPS_RTS;
        at.sq_psn = 1;
        at.timeout = 14;
        at.retry_cnt = 7;
        t.refused(ibv_modify_qp(p[0], &at,
                                IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT),
                  EINVAL, "RTS with RC's timeout and retry count refused on UC");
        at.max_rd_atomic = 1;
        t.refused(ibv_modify_qp(p[0], &at, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC),
                  EINVAL, "RTS with max_rd_atomic refused on UC");
        t.check(p.state(0) == IBV_QPS_RTR, "the refused modifies changed nothing", "state %d",
                p.state(0));
    }

    RcPairOptions opts;
    opts.type = IBV_QPT_UC;
    opts.access = rights;
    RcPair p(a, b, opts);
    t.check(!p.error() && both_rts(p), "UC pair to RTS", "error %d", p.error());
    if (p.error())
        bail("no UC pair");
    ibv_qp_attr qa{};
    ibv_qp_init_attr qi{};
    t.check(!ibv_query_qp(p[0], &qa, IBV_QP_STATE, &qi) && qi.qp_type == IBV_QPT_UC,
            "query_qp reports a UC QP", "type %d", qi.qp_type);

    // Refused at post: no READ, no atomics on UC; bad_wr names the WR.
    ibv_sge s8 = src.sge(0, 8);
    for (ibv_wr_opcode op : {IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
                             IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_SEND_WITH_INV}) {
        ibv_send_wr ok = send_wr(1, IBV_WR_RDMA_WRITE, &s8);
        ok.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(dst.at(0));
        ok.wr.rdma.rkey = dst.mr->rkey;
        ibv_send_wr bad_one = send_wr(2, op, &s8);
        bad_one.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(dst.at(0));
        bad_one.wr.rdma.rkey = dst.mr->rkey;
        ok.next = &bad_one;
        ibv_send_wr *bad = nullptr;
        int ret = ibv_post_send(p[0], &ok, &bad);
        t.check(ret == EINVAL && bad == &bad_one,
                std::string("opcode ") + std::to_string(op) + " refused at post (EINVAL, bad_wr)",
                "ret %d, bad_wr %s", ret, bad == &bad_one ? "the WR" : "another");
        // The WRITE before it went: its completion, nothing more.
        auto wcs = poll_wcs(a.scq.get(), 1);
        t.check(wcs.size() == 1 && wcs[0].wr_id == 1 && wcs[0].status == IBV_WC_SUCCESS,
                "  the WRITE posted before it completes", "%s", wcs_str(wcs).c_str());
    }

    // WRITE: lands at the rkey's address.
    std::memset(src.at(0), 0x5a, 3000);
    std::memset(dst.at(0), 0, kBuf);
    ibv_sge s3000 = src.sge(0, 3000);
    ibv_send_wr w = send_wr(10, IBV_WR_RDMA_WRITE, &s3000);
    w.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(dst.at(100));
    w.wr.rdma.rkey = dst.mr->rkey;
    int st = send_one(p, a, w);
    t.check(st == IBV_WC_SUCCESS && std::memcmp(dst.at(100), src.at(0), 3000) == 0 &&
                dst.at(100)[3000] == 0,
            "WRITE of 3000 bytes lands", "status %d", st);

    // WRITE with a wrong rkey: dropped at the responder, counted, no error.
    long long ra0 = counter(dev_b, "uc_rx_drop_remote_access");
    std::memset(src.at(0), 0xa5, 3000);
    w.wr.rdma.rkey = dst.mr->rkey ^ 0x100;
    st = send_one(p, a, w);
    long long ra1 = counter(dev_b, "uc_rx_drop_remote_access");
    t.check(st == IBV_WC_SUCCESS, "WRITE with a wrong rkey: no NAK, the sender's WR succeeds",
            "status %d", st);
    t.check(ra1 == ra0 + 1, "  uc_rx_drop_remote_access counts it", "%lld -> %lld", ra0, ra1);
    t.check(dst.at(100)[0] == 0x5a, "  the memory is untouched", "byte %#x", dst.at(100)[0]);
    t.check(both_rts(p), "  both QPs stay in RTS", "states %d %d", p.state(0), p.state(1));
    // Out of bounds, with the right rkey: the same.
    w.wr.rdma.rkey = dst.mr->rkey;
    w.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(dst.at(kBuf - 100));
    st = send_one(p, a, w);
    long long ra2 = counter(dev_b, "uc_rx_drop_remote_access");
    t.check(st == IBV_WC_SUCCESS && ra2 == ra1 + 1 && both_rts(p),
            "WRITE past the MR's end: dropped, counted, QPs in RTS", "status %d, %lld -> %lld", st,
            ra1, ra2);

    // SEND with no receive posted: dropped, and its RSN skipped, so the
    // next SEND lands in the receive posted after it.
    long long nr0 = counter(dev_b, "uc_rx_drop_no_recv");
    ibv_sge s64 = src.sge(0, 64);
    std::memset(src.at(0), 0x11, 64);
    st = send_one(p, a, send_wr(20, IBV_WR_SEND, &s64));
    long long nr1 = counter(dev_b, "uc_rx_drop_no_recv");
    t.check(st == IBV_WC_SUCCESS && nr1 == nr0 + 1,
            "SEND with no receive posted: dropped, uc_rx_drop_no_recv counts it",
            "status %d, %lld -> %lld", st, nr0, nr1);
    ibv_sge r256 = dst.sge(4096, 256);
    std::memset(src.at(0), 0x22, 64);
    bool posted = post_recv_wr(p[1], 30, &r256) == 0;
    st = send_one(p, a, send_wr(21, IBV_WR_SEND, &s64));
    auto rwc = poll_wcs(b.rcq.get(), 1);
    t.check(posted && st == IBV_WC_SUCCESS && rwc.size() == 1 && rwc[0].wr_id == 30 &&
                rwc[0].status == IBV_WC_SUCCESS && rwc[0].byte_len == 64 && dst.at(4096)[0] == 0x22,
            "  the next SEND lands in the receive posted then", "%s", wcs_str(rwc).c_str());

    // SEND longer than its receive: that receive completes in error.
    long long tl0 = counter(dev_b, "uc_rx_drop_too_long");
    ibv_sge r16 = dst.sge(4096, 16);
    posted = post_recv_wr(p[1], 31, &r16) == 0;
    st = send_one(p, a, send_wr(22, IBV_WR_SEND, &s64));
    rwc = poll_wcs(b.rcq.get(), 1);
    long long tl1 = counter(dev_b, "uc_rx_drop_too_long");
    t.check(posted && st == IBV_WC_SUCCESS, "SEND of 64 bytes into 16: the sender's WR succeeds",
            "status %d", st);
    t.check(rwc.size() == 1 && rwc[0].wr_id == 31 && rwc[0].status == IBV_WC_LOC_LEN_ERR,
            "  its receive completes with a local length error", "%s", wcs_str(rwc).c_str());
    t.check(tl1 == tl0 + 1, "  uc_rx_drop_too_long counts it", "%lld -> %lld", tl0, tl1);
    t.check(both_rts(p), "  both QPs stay in RTS", "states %d %d", p.state(0), p.state(1));

    // WRITE_IMM and SEND_IMM after all that: the QPs still work.
    posted = post_recv_wr(p[1], 32, &r256) == 0 && post_recv_wr(p[1], 33, &r256) == 0;
    std::memset(src.at(0), 0x33, 64);
    ibv_send_wr wi = send_wr(23, IBV_WR_RDMA_WRITE_WITH_IMM, &s64);
    wi.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(dst.at(200));
    wi.wr.rdma.rkey = dst.mr->rkey;
    wi.imm_data = htonl(0x1234);
    st = send_one(p, a, wi);
    rwc = poll_wcs(b.rcq.get(), 1);
    t.check(posted && st == IBV_WC_SUCCESS && rwc.size() == 1 && rwc[0].wr_id == 32 &&
                rwc[0].opcode == IBV_WC_RECV_RDMA_WITH_IMM && ntohl(rwc[0].imm_data) == 0x1234 &&
                dst.at(200)[63] == 0x33,
            "WRITE_IMM lands and completes its receive with the immediate", "%s",
            wcs_str(rwc).c_str());
    ibv_send_wr si = send_wr(24, IBV_WR_SEND_WITH_IMM, &s64);
    si.imm_data = htonl(0x5678);
    st = send_one(p, a, si);
    rwc = poll_wcs(b.rcq.get(), 1);
    t.check(st == IBV_WC_SUCCESS && rwc.size() == 1 && rwc[0].wr_id == 33 &&
                (rwc[0].wc_flags & IBV_WC_WITH_IMM) && ntohl(rwc[0].imm_data) == 0x5678,
            "SEND_IMM lands with its immediate", "%s", wcs_str(rwc).c_str());
    t.check(both_rts(p), "both QPs in RTS at the end", "states %d %d", p.state(0), p.state(1));
    return t.passed() ? 0 : 1;
}
