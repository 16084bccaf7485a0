// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// mr_srq: shared receive queues of a metaroce device, as the guest selftest
// 33-srq.sh runs it. Between two devices of one process (senders on the
// first, an SRQ on the second): the SRQ limits the device reports and the
// sizes create refuses, query and modify (resize, limit), the limit event
// delivered once, receives in SRQ order, RNR while the SRQ is empty, two
// QPs consuming one SRQ into one shared CQ with every byte right, a QP's
// move to ERR leaving the SRQ's WQEs alone, and destroy refused (EBUSY)
// while a QP uses the SRQ. Prints KTAP (one case per check); exits 1 if a
// case failed, 2 if the devices cannot be set up.
//
//   mr_srq DEVICE PEER_DEVICE
#include "guest_test.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace guest;

constexpr int kCases = 32;
constexpr size_t kSlot = 4096;       // bytes per receive and per send buffer
constexpr uint32_t kRecvSlots = 128; // receive buffers, reused in turn
constexpr uint32_t kSendSlots = 64;
constexpr uint32_t kSrqSize = 64;
constexpr uint32_t kLimit = 8;

// Message (sender, seq): its two first bytes name it, the rest follows
// from them, so a receive can be checked without knowing which it is.
uint8_t pattern(uint8_t sender, uint8_t seq, size_t j) {
    return static_cast<uint8_t>(sender * 131 + seq * 7 + j * 13 + j / 251);
}
void fill(uint8_t *p, size_t len, uint8_t sender, uint8_t seq) {
    for (size_t j = 0; j < len; j++)
        p[j] = j == 0 ? sender : j == 1 ? seq : pattern(sender, seq, j);
}
bool intact(const uint8_t *p, size_t len) {
    for (size_t j = 2; j < len; j++)
        if (p[j] != pattern(p[0], p[1], j))
            return false;
    return true;
}

class SrqTest {
public:
    SrqTest(RcEnd &a, RcEnd &b)
        : a_(a), b_(b), sbuf_(kSendSlots * kSlot, PROT_READ | PROT_WRITE),
          rbuf_(kRecvSlots * kSlot, PROT_READ | PROT_WRITE) {}

    bool setup(std::string *why) {
        int err = 0;
        const int access = IBV_ACCESS_LOCAL_WRITE;
        if (!sbuf_.get() || !rbuf_.get() ||
            !(smr_ = reg_mr(a_.pd.get(), sbuf_.get(), sbuf_.size(), access, &err)) ||
            !(rmr_ = reg_mr(b_.pd.get(), rbuf_.get(), rbuf_.size(), access, &err))) {
            *why = "cannot map or register buffers: " + std::string(std::strerror(err));
            return false;
        }
        // Async events are read with a timeout.
        int fd = b_.ctx->async_fd;
        if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)) {
            *why = "cannot make the async fd non-blocking";
            return false;
        }
        return true;
    }

    // Posts @n receives to @srq, each on the next receive buffer (wr_id:
    // the buffer's number). Returns 0 or the errno.
    int post_srq(ibv_srq *srq, uint32_t n) {
        for (uint32_t i = 0; i < n; i++) {
            const uint32_t slot = next_recv_++ % kRecvSlots;
            ibv_sge sge{reinterpret_cast<uintptr_t>(rbuf_.get() + slot * kSlot),
                        static_cast<uint32_t>(kSlot), rmr_->lkey};
            ibv_recv_wr wr{};
            ibv_recv_wr *bad = nullptr;
            wr.wr_id = slot;
            wr.sg_list = &sge;
            wr.num_sge = 1;
            if (int err = ibv_post_srq_recv(srq, &wr, &bad))
                return err;
        }
        return 0;
    }

    // Sends message (sender, seq) of @len bytes on @qp, and reaps the send
    // completions once the window is full. Returns 0 or the errno.
    int send(ibv_qp *qp, uint8_t sender, uint8_t seq, size_t len) {
        const uint32_t slot = next_send_++ % kSendSlots;
        uint8_t *p = sbuf_.get() + slot * kSlot;
        fill(p, len, sender, seq);
        ibv_sge sge{reinterpret_cast<uintptr_t>(p), static_cast<uint32_t>(len), smr_->lkey};
        ibv_send_wr wr{};
        ibv_send_wr *bad = nullptr;
        wr.wr_id = slot;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_SEND;
        wr.send_flags = IBV_SEND_SIGNALED;
        if (int err = ibv_post_send(qp, &wr, &bad))
            return err;
        if (++unreaped_ == kSendSlots / 2)
            reap_sends();
        return 0;
    }

    // Waits for every send posted so far; false if one failed or is missing.
    bool reap_sends(int ms = 10000) {
        const auto wcs = poll_wcs(a_.scq.get(), unreaped_, ms);
        bool ok = wcs.size() == unreaped_;
        for (const ibv_wc &wc : wcs)
            ok = ok && wc.status == IBV_WC_SUCCESS;
        unreaped_ = 0;
        return ok;
    }

    // The asynchronous events of the receiving device within @ms.
    std::vector<ibv_async_event> events(int ms) {
        std::vector<ibv_async_event> out;
        pollfd pfd{b_.ctx->async_fd, POLLIN, 0};
        while (poll(&pfd, 1, ms) > 0) {
            ibv_async_event ev{};
            if (ibv_get_async_event(b_.ctx.get(), &ev))
                break;
            out.push_back(ev);
            ibv_ack_async_event(&ev);
            ms = 50; // drain what follows closely
        }
        return out;
    }

    const uint8_t *recv_buf(uint64_t wr_id) const { return rbuf_.get() + wr_id * kSlot; }

private:
    RcEnd &a_, &b_;
    Mapping sbuf_, rbuf_;
    Mr smr_, rmr_;
    uint32_t next_recv_ = 0, next_send_ = 0;
    size_t unreaped_ = 0;
};

size_t count_events(const std::vector<ibv_async_event> &evs, ibv_event_type type) {
    size_t n = 0;
    for (const auto &ev : evs)
        n += ev.event_type == type;
    return n;
}

std::string events_str(const std::vector<ibv_async_event> &evs) {
    std::string s;
    for (const auto &ev : evs)
        s += std::string(ibv_event_type_str(ev.event_type)) + "; ";
    return s.empty() ? "none" : s;
}

int modify_srq(ibv_srq *srq, uint32_t max_wr, uint32_t limit, int mask) {
    ibv_srq_attr attr{};
    attr.max_wr = max_wr;
    attr.srq_limit = limit;
    return ibv_modify_srq(srq, &attr, mask);
}

ibv_srq_attr query_srq(ibv_srq *srq) {
    ibv_srq_attr attr{};
    if (ibv_query_srq(srq, &attr))
        attr.max_wr = attr.max_sge = attr.srq_limit = ~0u;
    return attr;
}

// create_srq: the SRQ, or null with the errno in *err.
Srq create_srq(ibv_pd *pd, uint32_t max_wr, uint32_t max_sge, uint32_t limit, int *err) {
    ibv_srq_init_attr init{};
    init.attr.max_wr = max_wr;
    init.attr.max_sge = max_sge;
    init.attr.srq_limit = limit;
    errno = 0;
    Srq srq(ibv_create_srq(pd, &init));
    *err = srq ? 0 : errno;
    return srq;
}

// The receive completions of @wcs: all successful, of @len bytes, and
// their buffers intact.
bool receives_right(const SrqTest &t, const std::vector<ibv_wc> &wcs, size_t len) {
    for (const ibv_wc &wc : wcs)
        if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV || wc.byte_len != len ||
            !intact(t.recv_buf(wc.wr_id), len))
            return false;
    return true;
}

int run(const char *dev_a, const char *dev_b) {
    RcEnd a, b;
    std::string why;
    if (!open_rc_end(a, dev_a, &why) || !open_rc_end(b, dev_b, &why)) {
        std::printf("Bail out! %s\n", why.c_str());
        return 2;
    }
    SrqTest t(a, b);
    if (!t.setup(&why)) {
        std::printf("Bail out! %s\n", why.c_str());
        return 2;
    }
    Ktap ktap(kCases);
    int err = 0;

    // Limits and sizes.
    ibv_device_attr dattr{};
    err = ibv_query_device(b.ctx.get(), &dattr);
    ktap.check(!err && dattr.max_srq > 0 && dattr.max_srq_wr >= int(kSrqSize) * 2 &&
                   dattr.max_srq_sge >= 2,
               "query_device reports SRQ limits", "err %d max_srq %d max_srq_wr %d max_srq_sge %d",
               err, dattr.max_srq, dattr.max_srq_wr, dattr.max_srq_sge);
    create_srq(b.pd.get(), 0, 1, 0, &err);
    ktap.refused(err, EINVAL, "create_srq with max_wr 0: EINVAL");
    create_srq(b.pd.get(), uint32_t(dattr.max_srq_wr) + 1, 1, 0, &err);
    ktap.refused(err, EINVAL, "create_srq with max_wr above max_srq_wr: EINVAL");
    create_srq(b.pd.get(), 4, uint32_t(dattr.max_srq_sge) + 1, 0, &err);
    ktap.refused(err, EINVAL, "create_srq with max_sge above max_srq_sge: EINVAL");
    // The limit given to create is ignored: the SRQ starts unarmed.
    Srq srq = create_srq(b.pd.get(), kSrqSize, 2, 5, &err);
    if (!ktap.check(srq != nullptr, "create_srq of 64 WRs, 2 SGEs", "errno %d", err)) {
        std::printf("Bail out! no SRQ\n");
        return 1;
    }
    ibv_srq_attr attr = query_srq(srq.get());
    ktap.check(attr.max_wr == kSrqSize && attr.max_sge == 2 && attr.srq_limit == 0,
               "query_srq: 64 WRs, 2 SGEs, limit 0 (unarmed)", "max_wr %u max_sge %u limit %u",
               attr.max_wr, attr.max_sge, attr.srq_limit);
    ktap.refused(modify_srq(srq.get(), 0, kSrqSize + 1, IBV_SRQ_LIMIT), EINVAL,
                 "modify_srq: limit above the size: EINVAL");
    err = modify_srq(srq.get(), kSrqSize * 2, 0, IBV_SRQ_MAX_WR);
    attr = query_srq(srq.get());
    ktap.check(!err && attr.max_wr == kSrqSize * 2, "modify_srq resizes to 128 WRs",
               "err %d max_wr %u", err, attr.max_wr);
    err = modify_srq(srq.get(), 0, kLimit, IBV_SRQ_LIMIT);
    attr = query_srq(srq.get());
    ktap.check(!err && attr.srq_limit == kLimit, "modify_srq arms limit 8", "err %d limit %u", err,
               attr.srq_limit);

    // One QP on the SRQ: the limit event, SRQ order, RNR while empty.
    RcPairOptions opts;
    opts.srq[1] = srq.get();
    opts.min_rnr_timer = 14; // 1.28 ms: RNR retries while the SRQ is empty

    auto pair1 = std::make_unique<RcPair>(a, b, opts);
    ktap.check(pair1->error() == 0, "RC pair 1 with the SRQ on its receiver reaches RTS",
               "errno %d", pair1->error());
    ibv_qp_attr qattr{};
    ibv_qp_init_attr qinit{};
    err = ibv_query_qp((*pair1)[1], &qattr, IBV_QP_CAP, &qinit);
    ktap.check(!err && qinit.srq == srq.get() && qattr.cap.max_recv_wr == 0,
               "query_qp names the SRQ, with no receive queue of its own",
               "err %d srq %p max_recv_wr %u", err, static_cast<void *>(qinit.srq),
               qattr.cap.max_recv_wr);
    {
        ibv_recv_wr wr{};
        ibv_recv_wr *bad = nullptr;
        ktap.refused(ibv_post_recv((*pair1)[1], &wr, &bad), EINVAL,
                     "post_recv on a QP with an SRQ: EINVAL");
    }
    ktap.check(t.post_srq(srq.get(), 16) == 0, "post_srq_recv of 16 receives");
    err = 0;
    for (uint8_t i = 0; i < 16 - kLimit && !err; i++)
        err = t.send((*pair1)[0], 1, i, 64);
    auto wcs = poll_wcs(b.rcq.get(), 16 - kLimit);
    auto evs = t.events(200);
    ktap.check(!err && wcs.size() == 16 - kLimit && !count_events(evs, IBV_EVENT_SRQ_LIMIT_REACHED),
               "8 receives taken (8 left, at the limit): no limit event",
               "send err %d, %zu receives, events: %s", err, wcs.size(), events_str(evs).c_str());
    err = t.send((*pair1)[0], 1, 8, 64);
    auto more = poll_wcs(b.rcq.get(), 1);
    wcs.insert(wcs.end(), more.begin(), more.end());
    evs = t.events(2000);
    bool srq_named = !evs.empty() && evs[0].element.srq == srq.get();
    ktap.check(!err && count_events(evs, IBV_EVENT_SRQ_LIMIT_REACHED) == 1 && srq_named,
               "the 9th receive (7 left) raises SRQ_LIMIT_REACHED once, for the SRQ",
               "send err %d, events: %s", err, events_str(evs).c_str());
    attr = query_srq(srq.get());
    ktap.check(attr.srq_limit == 0, "the event disarmed the limit", "limit %u", attr.srq_limit);
    for (uint8_t i = 9; i < 12 && !err; i++)
        err = t.send((*pair1)[0], 1, i, 64);
    more = poll_wcs(b.rcq.get(), 3);
    wcs.insert(wcs.end(), more.begin(), more.end());
    evs = t.events(200);
    ktap.check(!err && !count_events(evs, IBV_EVENT_SRQ_LIMIT_REACHED),
               "3 more receives: no second limit event", "err %d, events: %s", err,
               events_str(evs).c_str());
    bool in_order = wcs.size() == 12;
    for (size_t i = 0; in_order && i < wcs.size(); i++)
        in_order =
            wcs[i].wr_id == i && wcs[i].qp_num == (*pair1)[1]->qp_num && t.recv_buf(i)[1] == i;
    ktap.check(in_order && receives_right(t, wcs, 64),
               "12 receives complete in SRQ post order, every byte right", "%zu completions: %s",
               wcs.size(), wcs_str(wcs).c_str());
    ktap.refused(modify_srq(srq.get(), 2, 0, IBV_SRQ_MAX_WR), EINVAL,
                 "modify_srq: resize below the 4 WQEs it holds: EINVAL");

    // The SRQ holds 4: a 5th message waits (RNR) until a receive is posted.
    for (uint8_t i = 12; i < 17 && !err; i++)
        err = t.send((*pair1)[0], 1, i, 64);
    wcs = poll_wcs(b.rcq.get(), 5, 300);
    ktap.check(!err && wcs.size() == 4, "SRQ empty: 4 of 5 messages land, the 5th waits",
               "err %d, %zu receives", err, wcs.size());
    err = t.post_srq(srq.get(), 1);
    more = poll_wcs(b.rcq.get(), 1);
    wcs.insert(wcs.end(), more.begin(), more.end());
    ktap.check(!err && wcs.size() == 5 && receives_right(t, wcs, 64) && t.reap_sends(),
               "posting a receive lets the 5th land; all sends succeed", "err %d, %s", err,
               wcs_str(wcs).c_str());

    // Two QPs consume one SRQ into one CQ; messages span several packets.
    auto pair2 = std::make_unique<RcPair>(a, b, opts);
    ktap.check(pair2->error() == 0, "RC pair 2 on the same SRQ reaches RTS", "errno %d",
               pair2->error());
    const uint8_t per_qp = 24;
    const size_t len = 3000;
    err = t.post_srq(srq.get(), 2 * per_qp);
    for (uint8_t i = 0; i < per_qp && !err; i++) {
        err = t.send((*pair1)[0], 1, i, len);
        if (!err)
            err = t.send((*pair2)[0], 2, i, len);
    }
    wcs = poll_wcs(b.rcq.get(), 2 * per_qp);
    ktap.check(!err && wcs.size() == 2u * per_qp && t.reap_sends(),
               "48 messages from two QPs: 48 receives on the shared CQ", "err %d, %zu receives",
               err, wcs.size());
    size_t on_qp1 = 0, on_qp2 = 0;
    std::set<std::pair<uint8_t, uint8_t>> seen;
    bool sender_matches = true;
    for (const ibv_wc &wc : wcs) {
        const uint8_t *p = t.recv_buf(wc.wr_id);
        const bool q1 = wc.qp_num == (*pair1)[1]->qp_num;
        on_qp1 += q1;
        on_qp2 += wc.qp_num == (*pair2)[1]->qp_num;
        sender_matches = sender_matches && p[0] == (q1 ? 1 : 2);
        seen.insert({p[0], p[1]});
    }
    ktap.check(on_qp1 == per_qp && on_qp2 == per_qp && sender_matches,
               "24 receives on each QP, each from its own sender", "qp1 %zu qp2 %zu", on_qp1,
               on_qp2);
    ktap.check(receives_right(t, wcs, len) && seen.size() == 2u * per_qp,
               "every message once, 3000 bytes, every byte right", "%zu distinct: %s", seen.size(),
               wcs_str(wcs).c_str());

    // A QP's move to ERR flushes only what it bound: the SRQ keeps the rest.
    err = t.post_srq(srq.get(), 6);
    ibv_qp_attr to_err{};
    to_err.qp_state = IBV_QPS_ERR;
    int merr = ibv_modify_qp((*pair1)[1], &to_err, IBV_QP_STATE);
    evs = t.events(2000);
    bool qp_named = false;
    for (const auto &ev : evs)
        qp_named = qp_named ||
                   (ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED && ev.element.qp == (*pair1)[1]);
    ktap.check(!err && !merr && qp_named, "QP 1 to ERR: LAST_WQE_REACHED for it",
               "post %d modify %d, events: %s", err, merr, events_str(evs).c_str());
    wcs = poll_wcs(b.rcq.get(), 1, 200);
    ktap.check(wcs.empty(), "no flush completion: QP 1 had bound nothing", "%s",
               wcs_str(wcs).c_str());
    for (uint8_t i = 0; i < 6 && !err; i++)
        err = t.send((*pair2)[0], 2, 100 + i, 200);
    wcs = poll_wcs(b.rcq.get(), 6);
    bool all_qp2 = wcs.size() == 6;
    for (const ibv_wc &wc : wcs)
        all_qp2 = all_qp2 && wc.qp_num == (*pair2)[1]->qp_num;
    ktap.check(!err && all_qp2 && receives_right(t, wcs, 200) && t.reap_sends(),
               "the 6 SRQ receives are all there for QP 2", "err %d, %s", err,
               wcs_str(wcs).c_str());

    // Destroy order: not while a QP uses the SRQ.
    err = ibv_destroy_srq(srq.get());
    if (err == 0)
        srq.release(); // gone already: do not destroy it twice
    ktap.refused(err, EBUSY, "destroy_srq while QPs use it: EBUSY");
    attr = srq ? query_srq(srq.get()) : ibv_srq_attr{};
    const size_t listed = rdma_resources("srq", dev_b).size();
    ktap.check(attr.max_wr == kSrqSize * 2 && listed == 1,
               "the SRQ is still there: it answers, rdma resource lists it",
               "max_wr %u, %zu listed", attr.max_wr, listed);
    pair1.reset();
    pair2.reset();
    err = ibv_destroy_srq(srq.get());
    if (err == 0)
        srq.release();
    ktap.check(err == 0, "destroy_srq once its QPs are gone", "errno %d", err);
    t.events(50); // nothing may be left unacknowledged
    ktap.check(rdma_resources("srq", dev_b).empty(), "rdma resource show srq: none left");
    return ktap.passed() ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s DEVICE PEER_DEVICE\n", argv[0]);
        return 2;
    }
    return run(argv[1], argv[2]);
}
