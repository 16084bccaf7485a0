// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// mr_qp_states: RC queue pairs of two metaroce devices through libibverbs and
// our provider, as the guest selftest 22-qp-states.sh runs it: creation and
// its limits, the RESET -> INIT -> RTR -> RTS walk with the peer's QPN and
// GID, query_qp, refused transitions and work requests, and the flush of
// queued WRs on the move to ERR. There is no transport yet, so no data moves.
// Prints KTAP (one case per check); exits 1 if a case failed, 2 if a device
// cannot even be opened.
//
//   mr_qp_states DEVICE PEER_DEVICE
#include "guest_test.h"

#include <infiniband/verbs.h>

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <poll.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using namespace guest;

constexpr int kCases = 49;

// One end: a device with its PD, CQs, a registered buffer and its RoCE v2
// IPv4 GID. The receive CQ of the first end has a completion channel.
struct End {
    const char *name = nullptr;
    Context ctx;
    Pd pd;
    Channel ch;
    Cq scq, rcq;
    std::vector<uint8_t> buf = std::vector<uint8_t>(4096);
    Mr mr;
    ibv_port_attr port{};
    int gid_index = -1;
    ibv_gid gid{};
    unsigned unacked_events = 0;

    ~End() {
        if (rcq && unacked_events)
            ibv_ack_cq_events(rcq.get(), unacked_events);
    }
};

[[noreturn]] void bail_on(const char *what, const char *dev) {
    bail(std::string(what) + " on " + dev + ": " + std::strerror(errno));
}

void open_end(End &e, const char *name, bool channel) {
    e.name = name;
    e.ctx = open_device(name);
    if (!e.ctx)
        bail_on("cannot open the RDMA device", name);
    e.pd.reset(ibv_alloc_pd(e.ctx.get()));
    if (!e.pd)
        bail_on("alloc_pd", name);
    if (channel) {
        e.ch.reset(ibv_create_comp_channel(e.ctx.get()));
        if (!e.ch)
            bail_on("create_comp_channel", name);
    }
    e.scq.reset(ibv_create_cq(e.ctx.get(), 64, nullptr, nullptr, 0));
    e.rcq.reset(ibv_create_cq(e.ctx.get(), 64, nullptr, e.ch.get(), 0));
    if (!e.scq || !e.rcq)
        bail_on("create_cq", name);
    e.mr.reset(ibv_reg_mr(e.pd.get(), e.buf.data(), e.buf.size(), IBV_ACCESS_LOCAL_WRITE));
    if (!e.mr)
        bail_on("reg_mr", name);
    if (ibv_query_port(e.ctx.get(), 1, &e.port))
        bail_on("query_port", name);
}

// The device's RoCE v2 GID that holds an IPv4 address (v4-mapped).
bool find_gid(End &e) {
    e.gid_index = find_ipv4_gid(e.ctx.get(), e.port, &e.gid);
    return e.gid_index >= 0;
}

std::string gid_str(const ibv_gid &gid) {
    char s[INET6_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET6, gid.raw, s, sizeof(s));
    return s;
}

ibv_qp_init_attr rc_init(End &e, uint32_t wr = 64) {
    ibv_qp_init_attr init{};
    init.send_cq = e.scq.get();
    init.recv_cq = e.rcq.get();
    init.cap.max_send_wr = wr;
    init.cap.max_recv_wr = wr;
    init.cap.max_send_sge = 4;
    init.cap.max_recv_sge = 4;
    init.cap.max_inline_data = 64;
    init.qp_type = IBV_QPT_RC;
    init.sq_sig_all = 1;
    return init;
}

Qp create_qp(End &e, ibv_qp_init_attr init, int *err) {
    errno = 0;
    Qp qp(ibv_create_qp(e.pd.get(), &init));
    *err = qp ? 0 : errno;
    return qp;
}

constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
constexpr uint32_t kPsn[2] = {0x123456, 0xabcdef};
// What the query_qp cases expect back.
constexpr RcParams kParams = {
    .access = kAccess, .max_rd_atomic = 2, .min_rnr_timer = 12, .rnr_retry = 6};

int to_init(ibv_qp *qp) {
    return modify_rc(qp, IBV_QPS_INIT, {}, kParams);
}

// INIT -> RTR towards @peer's QP @dqpn; the PSN it sends with is kPsn[@peer_i].
int to_rtr(ibv_qp *qp, const End &self, const End &peer, uint32_t dqpn, int peer_i, ibv_mtu mtu) {
    const RcPath path = {.dest_qpn = dqpn,
                         .dgid = peer.gid,
                         .sgid_index = self.gid_index,
                         .mtu = mtu,
                         .rq_psn = kPsn[peer_i]};
    return modify_rc(qp, IBV_QPS_RTR, path, kParams);
}

int to_rts(ibv_qp *qp, int self_i) {
    return modify_rc(qp, IBV_QPS_RTS, {.sq_psn = kPsn[self_i]}, kParams);
}

int to_state(ibv_qp *qp, ibv_qp_state s) {
    ibv_qp_attr a{};
    a.qp_state = s;
    return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

ibv_qp_state qp_state(ibv_qp *qp) {
    ibv_qp_attr a{};
    ibv_qp_init_attr init{};
    if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init))
        return static_cast<ibv_qp_state>(-1);
    return a.qp_state;
}

// A SEND of @n SGEs of 16 bytes each in @e's MR, key @lkey.
int post_send(ibv_qp *qp, End &e, uint64_t wr_id, int n, uint32_t lkey, unsigned flags = 0,
              uint32_t len = 16) {
    std::vector<ibv_sge> sge(static_cast<size_t>(n));
    for (int i = 0; i < n; i++)
        sge[static_cast<size_t>(i)] = {reinterpret_cast<uintptr_t>(e.buf.data()) + 16u * i, len,
                                       lkey};
    ibv_send_wr wr{}, *bad = nullptr;
    wr.wr_id = wr_id;
    wr.sg_list = sge.data();
    wr.num_sge = n;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = flags;
    return ibv_post_send(qp, &wr, &bad);
}

// A chain of receive WRs with ids @first.. and @sges[i] SGEs each; the
// index of *bad_wr in the chain (-1 if none) goes to *bad_index.
int post_recvs(ibv_qp *qp, End &e, uint64_t first, const std::vector<int> &sges, int *bad_index) {
    std::vector<ibv_recv_wr> wrs(sges.size());
    std::vector<std::vector<ibv_sge>> lists(sges.size());
    for (size_t i = 0; i < sges.size(); i++) {
        for (int j = 0; j < sges[i]; j++)
            lists[i].push_back({reinterpret_cast<uintptr_t>(e.buf.data()), 16, e.mr->lkey});
        wrs[i].wr_id = first + i;
        wrs[i].sg_list = lists[i].data();
        wrs[i].num_sge = sges[i];
        wrs[i].next = i + 1 < sges.size() ? &wrs[i + 1] : nullptr;
    }
    ibv_recv_wr *bad = nullptr;
    int rc = ibv_post_recv(qp, wrs.data(), &bad);
    *bad_index = bad ? static_cast<int>(bad - wrs.data()) : -1;
    return rc;
}

std::vector<ibv_wc> drain(ibv_cq *cq) {
    std::vector<ibv_wc> out;
    ibv_wc wc[16];
    int n;
    while ((n = ibv_poll_cq(cq, 16, wc)) > 0)
        out.insert(out.end(), wc, wc + n);
    return out;
}

// Poll @cq until it has given @n completions or 5 s have passed.
std::vector<ibv_wc> wait_wcs(ibv_cq *cq, size_t n) {
    std::vector<ibv_wc> out;
    for (int i = 0; i < 500 && out.size() < n; i++) {
        auto more = drain(cq);
        out.insert(out.end(), more.begin(), more.end());
        if (out.size() < n)
            usleep(10000);
    }
    return out;
}

bool listed(const std::vector<std::string> &lines, uint32_t qpn, const char *state) {
    const std::string q = " lqpn " + std::to_string(qpn) + " ";
    const std::string s = std::string(" state ") + state + " ";
    for (const auto &l : lines)
        if (l.find(q) != std::string::npos && l.find(s) != std::string::npos)
            return true;
    return false;
}

void run(Ktap &t, End &a, End &b) {
    ibv_device_attr attr{};
    int err = ibv_query_device(a.ctx.get(), &attr);
    t.check(err == 0 && attr.max_qp > 0 && attr.max_qp_wr == 16384 && attr.max_sge == 32 &&
                attr.max_qp_rd_atom == 16 && attr.max_qp_init_rd_atom == 16,
            "query_device: max_qp set, max_qp_wr 16384, max_sge 32, rd_atom 16/16",
            "err %d max_qp %d max_qp_wr %d max_sge %d rd_atom %d/%d", err, attr.max_qp,
            attr.max_qp_wr, attr.max_sge, attr.max_qp_rd_atom, attr.max_qp_init_rd_atom);
    t.check(find_gid(a), "RoCE v2 IPv4 GID on " + std::string(a.name), "none among %d GIDs",
            a.port.gid_tbl_len);
    t.check(find_gid(b), "RoCE v2 IPv4 GID on " + std::string(b.name), "none among %d GIDs",
            b.port.gid_tbl_len);
    std::printf("# %s GID %d %s, %s GID %d %s, active MTU %d\n", a.name, a.gid_index,
                gid_str(a.gid).c_str(), b.name, b.gid_index, gid_str(b.gid).c_str(),
                a.port.active_mtu);

    // Creation and its limits.
    ibv_qp_init_attr init = rc_init(a);
    Qp qa = create_qp(a, init, &err);
    t.check(qa && qa->qp_num >= 16 && qa->qp_num <= 0xffffff && qa->state == IBV_QPS_RESET,
            "create_qp RC on the first device: 24-bit QPN >= 16, RESET", "errno %d qpn %u", err,
            qa ? qa->qp_num : 0);
    Qp qb = create_qp(b, rc_init(b, 16), &err);
    t.check(qb != nullptr, "create_qp RC on the peer device (16 WRs)", "errno %d", err);
    if (!qa || !qb) {
        std::printf("Bail out! no QPs\n");
        std::exit(1);
    }
    ibv_qp_init_attr bad = rc_init(a);
    bad.cap.max_send_wr = static_cast<uint32_t>(attr.max_qp_wr) + 1;
    Qp none = create_qp(a, bad, &err);
    t.refused(err, EINVAL, "create_qp with max_send_wr = max_qp_wr + 1: EINVAL");
    bad = rc_init(a);
    bad.cap.max_recv_sge = static_cast<uint32_t>(attr.max_sge) + 1;
    none = create_qp(a, bad, &err);
    t.refused(err, EINVAL, "create_qp with max_recv_sge = max_sge + 1: EINVAL");
    bad = rc_init(a);
    bad.cap.max_inline_data = 257;
    none = create_qp(a, bad, &err);
    t.refused(err, EINVAL, "create_qp with 257 bytes of inline data: EINVAL");
    bad = rc_init(a);
    bad.qp_type = IBV_QPT_RAW_PACKET;
    none = create_qp(a, bad, &err);
    t.refused(err, EOPNOTSUPP, "create_qp RAW_PACKET: EOPNOTSUPP");

    // Refusals in RESET and INIT.
    errno = 0;
    t.refused(to_state(qa.get(), IBV_QPS_RTR), EINVAL, "modify RESET -> RTR: EINVAL");
    int bad_index;
    t.refused(post_recvs(qa.get(), a, 1, {1}, &bad_index), EINVAL, "post_recv in RESET: EINVAL");
    t.check(to_init(qa.get()) == 0 && to_init(qb.get()) == 0, "modify RESET -> INIT, both QPs");
    t.refused(post_send(qa.get(), a, 1, 1, a.mr->lkey), EINVAL, "post_send in INIT: EINVAL");
    t.refused(to_rts(qa.get(), 0), EINVAL, "modify INIT -> RTS: EINVAL");
    t.refused(to_rtr(qa.get(), a, b, qb->qp_num, 1, static_cast<ibv_mtu>(IBV_MTU_4096 + 1)), EINVAL,
              "modify INIT -> RTR with path_mtu code 6 (no such MTU): EINVAL");
    t.check(qp_state(qa.get()) == IBV_QPS_INIT, "refused modifies left the QP in INIT");

    // The walk to RTS, with the peer's QPN and GID. qa asks for one MTU step
    // above the active MTU, as rdma_cm may: it gets the active MTU.
    const auto above_active =
        static_cast<ibv_mtu>(std::min<int>(a.port.active_mtu + 1, IBV_MTU_4096));
    int rc1 = to_rtr(qa.get(), a, b, qb->qp_num, 1, above_active);
    int rc2 = to_rtr(qb.get(), b, a, qa->qp_num, 0, b.port.active_mtu);
    t.check(rc1 == 0 && rc2 == 0, "modify INIT -> RTR with the peer's QPN and GID, both QPs",
            "rc %d/%d", rc1, rc2);
    rc1 = to_rts(qa.get(), 0);
    rc2 = to_rts(qb.get(), 1);
    t.check(rc1 == 0 && rc2 == 0, "modify RTR -> RTS, both QPs", "rc %d/%d", rc1, rc2);

    ibv_qp_attr q{};
    ibv_qp_init_attr qi{};
    err = ibv_query_qp(qa.get(), &q, IBV_QP_STATE | IBV_QP_AV | IBV_QP_DEST_QPN, &qi);
    t.check(err == 0 && q.qp_state == IBV_QPS_RTS && q.cur_qp_state == IBV_QPS_RTS,
            "query_qp: state RTS", "err %d state %d cur %d", err, q.qp_state, q.cur_qp_state);
    t.check(
        q.dest_qp_num == qb->qp_num && std::memcmp(q.ah_attr.grh.dgid.raw, b.gid.raw, 16) == 0 &&
            q.ah_attr.grh.sgid_index == a.gid_index && q.ah_attr.is_global,
        "query_qp: dest_qp_num and the AV's GIDs", "dest %u (want %u) dgid %s sgid_index %u",
        q.dest_qp_num, qb->qp_num, gid_str(q.ah_attr.grh.dgid).c_str(), q.ah_attr.grh.sgid_index);
    t.check(q.path_mtu == a.port.active_mtu && q.rq_psn == kPsn[1] && q.sq_psn == kPsn[0],
            "query_qp: path_mtu (clamped to the active MTU), rq_psn, sq_psn",
            "mtu %d (asked %d) psn rq %#x sq %#x", q.path_mtu, above_active, q.rq_psn, q.sq_psn);
    t.check(q.timeout == 14 && q.retry_cnt == 7 && q.rnr_retry == 6 && q.min_rnr_timer == 12,
            "query_qp: timeout, retry_cnt, rnr_retry, min_rnr_timer",
            "timeout %u retry %u rnr_retry %u min_rnr %u", q.timeout, q.retry_cnt, q.rnr_retry,
            q.min_rnr_timer);
    t.check(q.qp_access_flags == static_cast<unsigned>(kAccess) && q.max_rd_atomic == 2 &&
                q.max_dest_rd_atomic == 4 && q.port_num == 1 && q.pkey_index == 0,
            "query_qp: access flags, max_rd_atomic, max_dest_rd_atomic, port, pkey index",
            "access %#x rd_atomic %u/%u port %u pkey %u", q.qp_access_flags, q.max_rd_atomic,
            q.max_dest_rd_atomic, q.port_num, q.pkey_index);
    t.check(q.cap.max_send_wr == 64 && q.cap.max_recv_wr == 64 && q.cap.max_send_sge == 4 &&
                q.cap.max_recv_sge == 4 && q.cap.max_inline_data == 64 &&
                qi.qp_type == IBV_QPT_RC && qi.sq_sig_all == 1,
            "query_qp: caps as created, RC, sq_sig_all",
            "wr %u/%u sge %u/%u inline %u type %d sig_all %d", q.cap.max_send_wr, q.cap.max_recv_wr,
            q.cap.max_send_sge, q.cap.max_recv_sge, q.cap.max_inline_data, qi.qp_type,
            qi.sq_sig_all);
    auto lines = rdma_resources("qp", nullptr);
    t.check(lines.size() == 2 && listed(lines, qa->qp_num, "RTS") &&
                listed(lines, qb->qp_num, "RTS"),
            "rdma resource show qp: our 2 QPs, in RTS", "%zu lines with our pid", lines.size());

    // Send WRs in RTS: checked whole before anything is queued.
    t.refused(post_send(qa.get(), a, 1, 5, a.mr->lkey), EINVAL,
              "post_send with max_send_sge + 1 SGEs: EINVAL");
    t.refused(post_send(qa.get(), a, 1, 1, a.mr->lkey + 0x100), EINVAL,
              "post_send with a wrong lkey: EINVAL");
    t.refused(post_send(qa.get(), a, 1, 1, a.mr->lkey, 0, 8192), EINVAL,
              "post_send with an SGE beyond its MR: EINVAL");
    t.refused(post_send(qa.get(), a, 1, 1, a.mr->lkey, IBV_SEND_INLINE, 65), EINVAL,
              "post_send of 65 bytes inline (max 64): EINVAL");
    // A valid SEND in RTS crosses to the peer, which has a receive posted.
    err = post_recvs(qb.get(), b, 99, {1}, &bad_index);
    int sent = post_send(qa.get(), a, 7, 1, a.mr->lkey);
    auto sw = wait_wcs(a.scq.get(), 1);
    auto rw = wait_wcs(b.rcq.get(), 1);
    t.check(err == 0 && sent == 0 && sw.size() == 1 && sw[0].wr_id == 7 &&
                sw[0].status == IBV_WC_SUCCESS && sw[0].opcode == IBV_WC_SEND && rw.size() == 1 &&
                rw[0].wr_id == 99 && rw[0].status == IBV_WC_SUCCESS &&
                rw[0].opcode == IBV_WC_RECV && rw[0].byte_len == 16 && rw[0].qp_num == qb->qp_num,
            "post_send of a valid SEND in RTS: send and receive completions",
            "rc %d/%d, %zu send (status %d), %zu receive (status %d, %u bytes)", err, sent,
            sw.size(), sw.empty() ? -1 : sw[0].status, rw.size(), rw.empty() ? -1 : rw[0].status,
            rw.empty() ? 0 : rw[0].byte_len);
    t.refused(post_recvs(qa.get(), a, 1, {5}, &bad_index), EINVAL,
              "post_recv with max_recv_sge + 1 SGEs: EINVAL");

    // A chain whose third WR is bad: bad_wr points at it, the first two stay.
    err = post_recvs(qa.get(), a, 1, {1, 4, 5, 1}, &bad_index);
    t.check(err == EINVAL && bad_index == 2, "post_recv chain, third WR bad: EINVAL, bad_wr = 3rd",
            "rc %d bad_wr index %d", err, bad_index);
    err = post_recvs(qa.get(), a, 3, {1, 1, 1, 1, 1, 1, 1, 1}, &bad_index);
    t.check(err == 0 && bad_index == -1, "post_recv of 8 more WRs in RTS", "rc %d", err);
    err = post_recvs(qb.get(), b, 100, std::vector<int>(17, 1), &bad_index);
    t.check(err == ENOMEM && bad_index == 16,
            "post_recv of 17 WRs on a 16-WR queue: ENOMEM, bad_wr = 17th", "rc %d bad_wr index %d",
            err, bad_index);

    // To ERR: the 10 queued receives complete as flushed, in post order.
    err = ibv_req_notify_cq(a.rcq.get(), 0);
    t.check(err == 0, "req_notify_cq on the receive CQ (completion channel)", "rc %d", err);
    err = to_state(qa.get(), IBV_QPS_ERR);
    t.check(err == 0 && qp_state(qa.get()) == IBV_QPS_ERR, "modify RTS -> ERR", "rc %d", err);
    auto wcs = drain(a.rcq.get());
    bool in_order = wcs.size() == 10;
    for (size_t i = 0; in_order && i < wcs.size(); i++)
        in_order = wcs[i].wr_id == 1 + i && wcs[i].status == IBV_WC_WR_FLUSH_ERR &&
                   wcs[i].qp_num == qa->qp_num;
    t.check(in_order, "10 receive completions, IBV_WC_WR_FLUSH_ERR, wr_ids 1..10 in order",
            "%zu completions, first wr_id %" PRIu64 " status %d", wcs.size(),
            wcs.empty() ? 0 : wcs[0].wr_id, wcs.empty() ? -1 : wcs[0].status);
    pollfd pfd{a.ch->fd, POLLIN, 0};
    ibv_cq *ev_cq = nullptr;
    void *ev_ctx = nullptr;
    bool fired = poll(&pfd, 1, 2000) == 1 && ibv_get_cq_event(a.ch.get(), &ev_cq, &ev_ctx) == 0 &&
                 ev_cq == a.rcq.get();
    a.unacked_events += fired;
    t.check(fired, "the flush fired a completion event on the channel", "errno %d", errno);
    t.check(drain(a.scq.get()).empty(), "no send completions: nothing was queued");

    // Posting in ERR: queued, then flushed at once.
    err = post_recvs(qa.get(), a, 42, {1}, &bad_index);
    wcs = drain(a.rcq.get());
    t.check(err == 0 && wcs.size() == 1 && wcs[0].wr_id == 42 &&
                wcs[0].status == IBV_WC_WR_FLUSH_ERR && wcs[0].opcode == IBV_WC_RECV,
            "post_recv in ERR: one flushed completion with its wr_id", "rc %d, %zu completions",
            err, wcs.size());
    err = post_send(qa.get(), a, 43, 1, a.mr->lkey);
    int err2 = post_send(qa.get(), a, 44, 0, 0, IBV_SEND_INLINE);
    wcs = drain(a.scq.get());
    t.check(err == 0 && err2 == 0 && wcs.size() == 2 && wcs[0].wr_id == 43 && wcs[1].wr_id == 44 &&
                wcs[0].status == IBV_WC_WR_FLUSH_ERR && wcs[1].status == IBV_WC_WR_FLUSH_ERR &&
                wcs[0].opcode == IBV_WC_SEND,
            "post_send in ERR (SGE and inline): flushed completions in order",
            "rc %d/%d, %zu completions", err, err2, wcs.size());
    t.refused(post_send(qa.get(), a, 45, 5, a.mr->lkey), EINVAL,
              "post_send in ERR with max_send_sge + 1 SGEs: still EINVAL");

    // Back to RESET: queues dropped; and the peer goes down with WRs queued.
    err = to_state(qa.get(), IBV_QPS_RESET);
    t.check(err == 0 && qp_state(qa.get()) == IBV_QPS_RESET, "modify ERR -> RESET", "rc %d", err);
    err = to_state(qb.get(), IBV_QPS_RESET);
    wcs = drain(b.rcq.get());
    t.check(err == 0 && wcs.empty(), "RTS -> RESET with 16 receives queued: no completions",
            "rc %d, %zu completions", err, wcs.size());
    lines = rdma_resources("qp", nullptr);
    t.check(lines.size() == 2 && listed(lines, qa->qp_num, "RESET") &&
                listed(lines, qb->qp_num, "RESET"),
            "rdma resource show qp: our 2 QPs, in RESET", "%zu lines with our pid", lines.size());
    err = to_init(qa.get());
    t.check(err == 0 && post_recvs(qa.get(), a, 50, {1, 1}, &bad_index) == 0,
            "RESET -> INIT again, post_recv in INIT", "rc %d", err);

    err = ibv_destroy_qp(qa.release());
    err |= ibv_destroy_qp(qb.release());
    t.check(err == 0, "destroy_qp of both QPs (one with receives queued)", "rc %d", err);
    t.check(drain(a.rcq.get()).empty(), "destroy_qp completes nothing");
    t.check(rdma_resources("qp", nullptr).empty(), "rdma resource show qp: none left");
}

} // namespace

int main(int argc, char **argv) {
    start(argc, argv, 2, "DEVICE PEER_DEVICE");
    Ktap t(kCases);
    End a, b;
    open_end(a, argv[1], true);
    open_end(b, argv[2], false);
    run(t, a, b);
    return t.passed() ? 0 : 1;
}
