// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// mr_ring DEVICE PEER: the rings a CQ, a receive queue and a send queue
// share with the kernel through mmap(), used as the provider uses them and
// as a hostile process would. Completions come from an RC QP in the error
// state: each receive posted to it completes at once, flushed. The send
// ring's cases connect DEVICE to PEER.
//
// The kernel must treat the ring as hostile memory: a consumer index out
// of range or a garbage notify word costs the process its own CQ (an
// overrun, IB_EVENT_CQ_ERR), never a write outside the ring or a splat
// (the debug kernel's KASAN and the harness's dmesg check see those).
#include "guest_test.h"

#include "metaroce-abi.h"
#include "metaroce.h" // the provider's Cq: where its ring is mapped

#include <atomic>
#include <fcntl.h>
#include <poll.h>
#include <random>
#include <sys/wait.h>
#include <thread>

using namespace guest;

namespace {

metaroce::Cq *provider_cq(ibv_cq *cq) {
    return reinterpret_cast<metaroce::Cq *>(cq);
}

metaroce_cq_ring *ring_of(ibv_cq *cq) {
    return provider_cq(cq)->ring;
}

uint32_t load(const uint32_t &v) {
    return __atomic_load_n(&v, __ATOMIC_ACQUIRE);
}

void store(uint32_t &v, uint32_t x) {
    __atomic_store_n(&v, x, __ATOMIC_RELEASE);
}

// An RC QP in the error state on one CQ for both queues.
Qp error_qp(ibv_pd *pd, ibv_cq *cq, uint32_t depth) {
    ibv_qp_init_attr init{};
    init.send_cq = init.recv_cq = cq;
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = depth;
    init.cap.max_recv_wr = depth;
    init.cap.max_send_sge = init.cap.max_recv_sge = 1;
    Qp qp(ibv_create_qp(pd, &init));
    if (!qp)
        return qp;
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.port_num = 1;
    if (ibv_modify_qp(qp.get(), &attr,
                      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
        return nullptr;
    attr.qp_state = IBV_QPS_ERR;
    if (ibv_modify_qp(qp.get(), &attr, IBV_QP_STATE))
        return nullptr;
    return qp;
}

// @n receives with wr_ids from @first, each flushed into the CQ at once.
int flush_recvs(ibv_qp *qp, uint64_t first, int n) {
    for (int i = 0; i < n; i++) {
        ibv_recv_wr wr{};
        ibv_recv_wr *bad = nullptr;
        wr.wr_id = first + uint64_t(i);
        if (int err = ibv_post_recv(qp, &wr, &bad))
            return err;
    }
    return 0;
}

// Polls up to @max completions; their wr_ids in order.
std::vector<uint64_t> drain(ibv_cq *cq, int max) {
    std::vector<uint64_t> ids;
    ibv_wc wc[16];
    while (int(ids.size()) < max) {
        int n = ibv_poll_cq(cq, 16, wc);
        if (n <= 0)
            break;
        for (int i = 0; i < n; i++)
            ids.push_back(wc[i].wr_id);
    }
    return ids;
}

bool in_order(const std::vector<uint64_t> &ids, uint64_t first, size_t n) {
    if (ids.size() != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (ids[i] != first + i)
            return false;
    return true;
}

// The next asynchronous event of @ctx within @ms, or -1.
int async_event(ibv_context *ctx, int ms) {
    pollfd p{ctx->async_fd, POLLIN, 0};
    if (poll(&p, 1, ms) != 1)
        return -1;
    ibv_async_event ev{};
    if (ibv_get_async_event(ctx, &ev))
        return -1;
    const int type = ev.event_type;
    ibv_ack_async_event(&ev);
    return type;
}

// A second mapping of @cq's ring, at the provider's offset plus
// @delta_pages, @size bytes (0: the ring's size); nullptr if refused.
void *map_again(ibv_context *ctx, ibv_cq *cq, long delta_pages = 0, size_t size = 0) {
    const metaroce::Cq *c = provider_cq(cq);
    void *p = mmap(nullptr, size ? size : c->map_size, PROT_READ | PROT_WRITE, MAP_SHARED,
                   ctx->cmd_fd, off_t(c->map_offset) + delta_pages * sysconf(_SC_PAGESIZE));
    return p == MAP_FAILED ? nullptr : p;
}

constexpr int kCqe = 64;

struct Setup {
    Pd pd;
    Cq cq;
    Qp qp;
};

bool setup(ibv_context *ctx, Setup &s, int cqe = kCqe) {
    s.pd.reset(ibv_alloc_pd(ctx));
    s.cq.reset(s.pd ? ibv_create_cq(ctx, cqe, nullptr, nullptr, 0) : nullptr);
    s.qp = s.cq ? error_qp(s.pd.get(), s.cq.get(), 256) : nullptr;
    return s.qp != nullptr;
}

// The ring in use, completions polled from it with no command.
void use_cases(Ktap &t, ibv_context *ctx) {
    Setup s;
    if (!setup(ctx, s))
        bail("cannot set up a CQ and an error QP");
    metaroce_cq_ring *ring = ring_of(s.cq.get());
    const metaroce::Cq *c = provider_cq(s.cq.get());
    t.check(ring && c->entries >= kCqe && !(c->entries & (c->entries - 1)) &&
                s.cq->cqe == int(c->entries),
            "create_cq: a mapped ring, its entries a power of 2 >= cqe, reported as cqe",
            "ring %p entries %u cqe %d", static_cast<void *>(ring), c->entries, s.cq->cqe);
    if (!ring)
        return;
    const int flushed = flush_recvs(s.qp.get(), 100, 10);
    const uint32_t produced = load(ring->producer);
    const auto ids = drain(s.cq.get(), 20);
    t.check(flushed == 0 && produced == 10 && in_order(ids, 100, 10) && load(ring->consumer) == 10,
            "10 flushed receives: producer 10, polled in order, consumer 10",
            "post %d producer %u polled %zu consumer %u", flushed, produced, ids.size(),
            load(ring->consumer));

    // Around the wrap of the ring: more completions than its entries.
    int err = 0;
    std::vector<uint64_t> all;
    for (int round = 0; round < 5 && !err; round++) {
        err = flush_recvs(s.qp.get(), 1000 + uint64_t(round) * 40, 40);
        auto got = drain(s.cq.get(), 40);
        all.insert(all.end(), got.begin(), got.end());
    }
    t.check(!err && in_order(all, 1000, 200) && !load(ring->overflow),
            "200 completions through a ring of 64: in order, no overflow", "err %d polled %zu", err,
            all.size());

    // The extended CQ polls the same ring in batches.
    ibv_cq_init_attr_ex attr{};
    attr.cqe = 32;
    attr.wc_flags = IBV_WC_STANDARD_FLAGS;
    ibv_cq_ex *cqx = ibv_create_cq_ex(ctx, &attr);
    Qp qpx = cqx ? error_qp(s.pd.get(), ibv_cq_ex_to_cq(cqx), 64) : nullptr;
    std::vector<uint64_t> batch;
    if (qpx && flush_recvs(qpx.get(), 7, 20) == 0) {
        ibv_poll_cq_attr pa{};
        for (int rc = ibv_start_poll(cqx, &pa); rc == 0; rc = ibv_next_poll(cqx))
            batch.push_back(cqx->wr_id);
        if (!batch.empty())
            ibv_end_poll(cqx);
    }
    metaroce_cq_ring *xring = cqx ? ring_of(ibv_cq_ex_to_cq(cqx)) : nullptr;
    t.check(xring && in_order(batch, 7, 20) && load(xring->consumer) == 20,
            "ibv_cq_ex: 20 completions in one start/next/end batch from the ring",
            "ring %p polled %zu", static_cast<void *>(xring), batch.size());
    qpx.reset();
    if (cqx)
        ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));

    // Armed in memory: a completion channel hears of the next completion.
    Channel ch(ibv_create_comp_channel(ctx));
    Cq armed(ch ? ibv_create_cq(ctx, 16, nullptr, ch.get(), 0) : nullptr);
    Qp aqp = armed ? error_qp(s.pd.get(), armed.get(), 16) : nullptr;
    bool event = false, quiet_before = false;
    if (aqp && ibv_req_notify_cq(armed.get(), 0) == 0) {
        const int fd = ch->fd;
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        pollfd p{fd, POLLIN, 0};
        quiet_before = poll(&p, 1, 100) == 0;
        flush_recvs(aqp.get(), 1, 1);
        ibv_cq *ev_cq = nullptr;
        void *ev_ctx = nullptr;
        event = poll(&p, 1, 2000) == 1 && ibv_get_cq_event(ch.get(), &ev_cq, &ev_ctx) == 0 &&
                ev_cq == armed.get();
        if (event)
            ibv_ack_cq_events(armed.get(), 1);
    }
    t.check(quiet_before && event && load(ring_of(armed.get())->notify) == 0,
            "req_notify_cq in the ring: one event for the next completion, then disarmed",
            "quiet %d event %d", quiet_before, event);
    aqp.reset();
    armed.reset();

    // Resize keeps the completions it holds, in order, in a new ring.
    flush_recvs(s.qp.get(), 500, 30);
    metaroce_cq_ring *before = ring_of(s.cq.get());
    const int rc = ibv_resize_cq(s.cq.get(), 200);
    const auto kept = drain(s.cq.get(), 40);
    t.check(rc == 0 && s.cq->cqe == 256 && provider_cq(s.cq.get())->entries == 256 &&
                in_order(kept, 500, 30),
            "resize_cq 64 -> 200 with 30 completions held: 256 entries, all 30 kept in order",
            "rc %d cqe %d polled %zu (ring %p was %p)", rc, s.cq->cqe, kept.size(),
            static_cast<void *>(ring_of(s.cq.get())), static_cast<void *>(before));
    flush_recvs(s.qp.get(), 600, 3);
    t.check(in_order(drain(s.cq.get(), 10), 600, 3), "... and the new ring takes new ones");
}

// What a hostile process can do to its own ring.
void hostile_cases(Ktap &t, ibv_context *ctx) {
    Setup s;
    if (!setup(ctx, s, 16))
        bail("cannot set up a CQ and an error QP");
    ibv_cq *cq = s.cq.get();
    metaroce_cq_ring *ring = ring_of(cq);

    // A consumer index ahead of the producer: the ring reads as overrun.
    store(ring->consumer, load(ring->producer) + 1000);
    flush_recvs(s.qp.get(), 1, 4);
    const int ev = async_event(ctx, 2000);
    t.check(load(ring->overflow) == 1 && load(ring->producer) == 0 && ev == IBV_EVENT_CQ_ERR,
            "consumer written past producer: CQ overrun (overflow set, IBV_EVENT_CQ_ERR), "
            "nothing written",
            "overflow %u producer %u event %d", load(ring->overflow), load(ring->producer), ev);
    s.qp.reset();
    s.cq.reset();

    // Garbage in every word user space can write, while completions flow.
    Cq cq2(ibv_create_cq(ctx, 16, nullptr, nullptr, 0));
    Qp qp2 = cq2 ? error_qp(s.pd.get(), cq2.get(), 256) : nullptr;
    if (!qp2)
        bail("cannot set up a second CQ");
    metaroce_cq_ring *r2 = ring_of(cq2.get());
    std::atomic<bool> stop{false};
    std::thread vandal([&] {
        uint32_t x = 0x9e3779b9;
        while (!stop.load()) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            store(r2->consumer, x);
            store(r2->notify, x >> 3);
            r2->cqe[x & 15].wr_id = x;
        }
    });
    int posted = 0;
    for (int i = 0; i < 2000; i++)
        posted += flush_recvs(qp2.get(), uint64_t(i), 1) == 0;
    stop = true;
    vandal.join();
    t.check(posted == 2000,
            "2000 completions while a thread writes random consumer, notify "
            "and slots: every post accepted, no splat",
            "%d posted", posted);
    qp2.reset();
    t.check(ibv_destroy_cq(cq2.release()) == 0, "... and the CQ is destroyed cleanly");

    // Mappings the kernel does not offer.
    Cq cq3(ibv_create_cq(ctx, 16, nullptr, nullptr, 0));
    if (!cq3)
        bail("cannot create a third CQ");
    const size_t size = provider_cq(cq3.get())->map_size;
    void *wrong_off = map_again(ctx, cq3.get(), 4096);
    void *too_big = map_again(ctx, cq3.get(), 0, size + 4096);
    void *too_small = size > 4096 ? map_again(ctx, cq3.get(), 0, size - 4096) : nullptr;
    void *priv = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, ctx->cmd_fd,
                      off_t(provider_cq(cq3.get())->map_offset));
    t.check(!wrong_off && !too_big && !too_small && priv == MAP_FAILED,
            "mmap at an offset no ring has, of the wrong size, or private: refused");

    // Destroyed while mapped: the memory stays until the last mapping goes.
    auto *again = static_cast<metaroce_cq_ring *>(map_again(ctx, cq3.get()));
    Qp qp3 = again ? error_qp(s.pd.get(), cq3.get(), 16) : nullptr;
    if (qp3)
        flush_recvs(qp3.get(), 77, 2);
    const bool shared = again && load(again->producer) == 2 && again->cqe[1].wr_id == 78;
    qp3.reset();
    const int drc = ibv_destroy_cq(cq3.release());
    bool usable = false;
    if (again) {
        store(again->consumer, 12345);
        usable = load(again->producer) == 2 && load(again->consumer) == 12345;
        munmap(again, size);
    }
    t.check(shared && drc == 0 && usable,
            "a second mapping sees the same ring, and stays usable after destroy_cq",
            "shared %d destroy %d usable %d", shared, drc, usable);
    Cq after(ibv_create_cq(ctx, 1, nullptr, nullptr, 0));
    t.check(after && ring_of(after.get()), "the device still creates mapped CQs afterwards");
}

// The device's ring_errors counter, from `rdma statistic` (sysfs does not
// show the device inside a netns); -1 if absent.
long ring_errors(const char *dev) {
    const std::string cmd = std::string("rdma statistic show link ") + dev + "/1 2>/dev/null";
    Pipe f(popen(cmd.c_str(), "r"));
    char word[128];
    bool next = false;
    while (f && std::fscanf(f.get(), "%127s", word) == 1) {
        if (next)
            return std::strtol(word, nullptr, 10);
        next = std::strcmp(word, "ring_errors") == 0;
    }
    return -1;
}

// The receive ring, posted into by the provider and by a hostile process.
void recv_ring_cases(Ktap &t, ibv_context *ctx, const char *dev) {
    Setup s;
    if (!setup(ctx, s))
        bail("cannot set up for the receive ring");
    const metaroce::Qp *q = reinterpret_cast<const metaroce::Qp *>(s.qp.get());
    metaroce_wq_ring *ring = q->rq.ring;
    t.check(ring && q->rq.entries >= 256 && q->rq.depth == 256 &&
                (load(ring->flags) & METAROCE_WQ_NEED_DOORBELL),
            "create_qp: a mapped receive ring; in ERR the kernel asks for the doorbell",
            "ring %p entries %u depth %u", static_cast<void *>(ring), q ? q->rq.entries : 0,
            q ? q->rq.depth : 0);
    if (!ring)
        return;
    flush_recvs(s.qp.get(), 40, 5);
    t.check(in_order(drain(s.cq.get(), 10), 40, 5) && load(ring->consumer) == 5 &&
                load(ring->producer) == 5,
            "5 receives through the ring on an ERR QP: flushed in order, every slot back");

    // A WQE with more SGEs than the QP has, behind a real doorbell.
    const long before = ring_errors(dev);
    auto *slot = ring->wqe + size_t(load(ring->producer) & (q->rq.entries - 1)) * q->rq.stride;
    metaroce_recv_wqe bad{};
    bad.wr_id = 666;
    bad.num_sge = q->rq.max_sge + 100;
    std::memcpy(slot, &bad, sizeof(bad));
    store(ring->producer, load(ring->producer) + 1);
    ibv_recv_wr *none = nullptr;
    const int rc = ibv_cmd_post_recv(s.qp.get(), nullptr, &none);
    const long after = ring_errors(dev);
    const auto ids = drain(s.cq.get(), 10);
    t.check(rc == 0 && before >= 0 && after == before + 1 && ids.empty(),
            "a WQE with too many SGEs: counted in ring_errors, never completed",
            "rc %d ring_errors %ld -> %ld, %zu completions", rc, before, after, ids.size());

    // A producer index far past what the QP may have outstanding.
    Qp qp2 = error_qp(s.pd.get(), s.cq.get(), 16);
    metaroce_wq_ring *r2 = qp2 ? reinterpret_cast<metaroce::Qp *>(qp2.get())->rq.ring : nullptr;
    long after2 = -1;
    if (r2) {
        store(r2->producer, 100000);
        ibv_cmd_post_recv(qp2.get(), nullptr, &none);
        after2 = ring_errors(dev);
    }
    t.check(r2 && after2 == after + 1 && drain(s.cq.get(), 10).empty() && load(r2->consumer) == 0,
            "a producer 100000 ahead: counted, nothing read or completed", "ring_errors %ld -> %ld",
            after, after2);

    // An SRQ posts into its ring; its size may grow up to the ring's slots.
    ibv_srq_init_attr sattr{};
    sattr.attr.max_wr = 100;
    sattr.attr.max_sge = 2;
    Srq srq(ibv_create_srq(s.pd.get(), &sattr));
    const auto *ps = srq ? reinterpret_cast<const metaroce::Srq *>(srq.get()) : nullptr;
    int posted = 0;
    for (int i = 0; ps && ps->rq.ring && i < 100; i++) {
        ibv_recv_wr wr{};
        ibv_recv_wr *bad = nullptr;
        wr.wr_id = uint64_t(i);
        posted += ibv_post_srq_recv(srq.get(), &wr, &bad) == 0;
    }
    ibv_recv_wr extra{};
    ibv_recv_wr *bad_wr = nullptr;
    const int full = srq ? ibv_post_srq_recv(srq.get(), &extra, &bad_wr) : -1;
    t.check(ps && ps->rq.ring && ps->rq.entries == 128 && posted == 100 && full == ENOMEM &&
                load(ps->rq.ring->producer) == 100,
            "create_srq: a mapped ring of 128; 100 receives posted in it, the 101st ENOMEM",
            "ring %p entries %u posted %d then %d", ps ? static_cast<void *>(ps->rq.ring) : nullptr,
            ps ? ps->rq.entries : 0, posted, full);
    ibv_srq_attr grow{};
    grow.max_wr = 128;
    const int to128 = srq ? ibv_modify_srq(srq.get(), &grow, IBV_SRQ_MAX_WR) : -1;
    const int more = srq ? ibv_post_srq_recv(srq.get(), &extra, &bad_wr) : -1;
    grow.max_wr = 300;
    const int to300 = srq ? ibv_modify_srq(srq.get(), &grow, IBV_SRQ_MAX_WR) : -1;
    ibv_srq_attr now{};
    const int queried = srq ? ibv_query_srq(srq.get(), &now) : -1;
    const bool by_command = ps && !ps->rq.ring;
    const int posted_after = srq ? ibv_post_srq_recv(srq.get(), &extra, &bad_wr) : -1;
    t.check(to128 == 0 && more == 0 && to300 == 0 && queried == 0 && now.max_wr == 300 &&
                by_command && posted_after == 0,
            "modify_srq to the ring's 128 slots, then to 300: posts by command from then on",
            "rc %d post %d rc %d query %d max_wr %u by command %d post %d", to128, more, to300,
            queried, now.max_wr, by_command, posted_after);
}

// fork() after the ring is mapped: the child sees the parent's ring and
// exits; the parent's CQ works on.
void fork_cases(Ktap &t, ibv_context *ctx) {
    Setup s;
    if (!setup(ctx, s, 16))
        bail("cannot set up for fork");
    flush_recvs(s.qp.get(), 1, 3);
    const pid_t pid = fork();
    if (pid == 0) {
        metaroce_cq_ring *ring = ring_of(s.cq.get());
        _exit(load(ring->producer) == 3 && ring->cqe[2].wr_id == 3 ? 0 : 1);
    }
    int status = -1;
    waitpid(pid, &status, 0);
    const auto ids = drain(s.cq.get(), 10);
    flush_recvs(s.qp.get(), 4, 2);
    const auto more = drain(s.cq.get(), 10);
    t.check(WIFEXITED(status) && WEXITSTATUS(status) == 0 && in_order(ids, 1, 3) &&
                in_order(more, 4, 2),
            "fork(): the child reads the ring; the parent polls on after it exits",
            "child status %#x, parent polled %zu then %zu", status, ids.size(), more.size());
}

// ---- The send ring ---------------------------------------------------------

metaroce::SendRing &send_ring(ibv_qp *qp) {
    return reinterpret_cast<metaroce::Qp *>(qp)->sq;
}

// A registered buffer of @size bytes, each byte a function of its offset
// and @seed.
struct Buffer {
    std::vector<uint8_t> bytes;
    Mr mr;
    Buffer(ibv_pd *pd, size_t size, uint8_t seed) : bytes(size) {
        for (size_t i = 0; i < size; i++)
            bytes[i] = uint8_t(i * 7 + seed + (i >> 12));
        mr.reset(
            ibv_reg_mr(pd, bytes.data(), size,
                       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ));
    }
};

// A WRITE of @len bytes from @src at @off to the same offset of @dst.
int post_write(ibv_qp *qp, uint64_t wr_id, Buffer &src, Buffer &dst, size_t off, uint32_t len) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(src.bytes.data() + off), len, src.mr->lkey};
    ibv_send_wr wr = send_wr(wr_id, IBV_WR_RDMA_WRITE, &sge);
    wr.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(dst.bytes.data() + off);
    wr.wr.rdma.rkey = dst.mr->rkey;
    return post_send_wr(qp, wr);
}

// Writes a slot the kernel must refuse and rings: ring_errors grows by one
// and the QP goes to ERR. @producer: where to put the producer index (0:
// one past the slot).
bool refused(Ktap &t, RcEnd &a, RcEnd &b, const char *dev, uint32_t producer, const char *what) {
    RcPair p(a, b);
    metaroce::SendRing &sq = send_ring(p[0]);
    if (p.error() || !sq.ring)
        return t.check(false, what, "no pair (%d) or no send ring", p.error());
    const long before = ring_errors(dev);
    metaroce_send_wqe w{};
    w.wr_id = 1;
    w.opcode = 0x77; // no such opcode
    std::memcpy(sq.ring->wqe, &w, sizeof(w));
    store(sq.ring->producer, producer ? producer : 1);
    ibv_send_wr *none = nullptr;
    const int rc = ibv_cmd_post_send(p[0], nullptr, &none);
    const bool err = p.wait_state(0, IBV_QPS_ERR);
    const long after = ring_errors(dev);
    return t.check(rc == 0 && err && before >= 0 && after == before + 1 &&
                       load(sq.ring->consumer) == 0,
                   what, "doorbell %d, QP state %d, ring_errors %ld -> %ld, consumer %u", rc,
                   p.state(0), before, after, load(sq.ring->consumer));
}

void send_ring_cases(Ktap &t, const char *dev, const char *peer) {
    RcEnd a, b;
    open_rc_ends(a, dev, b, peer);
    RcPairOptions o;
    o.max_wr = 64;
    o.max_inline = 128;
    {
        RcPair p(a, b, o);
        metaroce::SendRing &sq = send_ring(p[0]);
        t.check(!p.error() && sq.ring && sq.entries == 64 && sq.depth == 64 &&
                    sq.max_inline == 128 && (load(sq.ring->flags) & METAROCE_WQ_NEED_DOORBELL),
                "RC QP: a mapped send ring of 64; idle, the kernel asks for the doorbell",
                "pair %d ring %p entries %u depth %u inline %u", p.error(),
                static_cast<void *>(sq.ring), sq.entries, sq.depth, sq.max_inline);
        if (p.error() || !sq.ring)
            return;

        // A stream, 32 in flight: the kernel reads the ring as ACKs come.
        constexpr size_t kSize = 1 << 20, kMsg = 4096;
        constexpr int kWrites = 1000, kInFlight = 32;
        Buffer src(a.pd.get(), kSize, 1), dst(b.pd.get(), kSize, 2);
        int posted = 0, done = 0, err = 0;
        uint64_t next_id = 0;
        bool ordered = true;
        for (int spins = 0; done < kWrites && !err && spins < 200000; spins++) {
            while (!err && posted < kWrites && posted - done < kInFlight) {
                err = post_write(p[0], uint64_t(posted), src, dst, (posted * kMsg) % kSize, kMsg);
                posted += !err;
            }
            ibv_wc wc[16];
            const int n = ibv_poll_cq(a.scq.get(), 16, wc);
            for (int i = 0; i < n; i++) {
                ordered &= wc[i].status == IBV_WC_SUCCESS && wc[i].wr_id == next_id++;
                done++;
            }
            if (n <= 0)
                usleep(50);
        }
        t.check(!err && done == kWrites && ordered && src.bytes == dst.bytes,
                "1000 WRITEs of 4 KiB through the send ring, 32 in flight: in order, data right",
                "post err %d, %d posted, %d completed, in order %d, data %s", err, posted, done,
                ordered, src.bytes == dst.bytes ? "right" : "wrong");

        // Inline data is copied into the slot.
        char msg[100], got[100] = {};
        for (size_t i = 0; i < sizeof(msg); i++)
            msg[i] = char('a' + i % 26);
        Mr rmr(ibv_reg_mr(b.pd.get(), got, sizeof(got), IBV_ACCESS_LOCAL_WRITE));
        ibv_sge rsge{reinterpret_cast<uintptr_t>(got), sizeof(got), rmr ? rmr->lkey : 0};
        ibv_sge isge{reinterpret_cast<uintptr_t>(msg), sizeof(msg), 0};
        ibv_send_wr iwr = send_wr(9000, IBV_WR_SEND, &isge);
        iwr.send_flags = IBV_SEND_INLINE;
        const int rrc = post_recv_wr(p[1], 1, &rsge);
        const int src_rc = post_send_wr(p[0], iwr);
        std::memset(msg, 0, sizeof(msg)); // the bytes were taken at post time
        const auto rwc = poll_wcs(b.rcq.get(), 1);
        const auto swc = poll_wcs(a.scq.get(), 1);
        bool same = true;
        for (size_t i = 0; i < sizeof(got); i++)
            same &= got[i] == char('a' + i % 26);
        t.check(rrc == 0 && src_rc == 0 && rwc.size() == 1 && rwc[0].status == IBV_WC_SUCCESS &&
                    rwc[0].byte_len == 100 && swc.size() == 1 && swc[0].wr_id == 9000 && same,
                "an inline SEND of 100 bytes through the ring: received byte for byte",
                "recv %d send %d, completions %s / %s", rrc, src_rc, wcs_str(rwc).c_str(),
                wcs_str(swc).c_str());
    }

    refused(t, a, b, dev, 0, "a send slot with no valid opcode: ring_errors + 1, QP to ERR");
    refused(t, a, b, dev, 100000, "a send producer 100000 ahead: ring_errors + 1, QP to ERR");

    // A hostile thread writes random slots and indices and rings, through a
    // mapping of its own, while the QP is destroyed under it.
    {
        const long before = ring_errors(dev);
        auto p = std::make_unique<RcPair>(a, b, o);
        metaroce::SendRing &sq = send_ring((*p)[0]);
        void *map = mmap(nullptr, sq.map_size, PROT_READ | PROT_WRITE, MAP_SHARED, a.ctx->cmd_fd,
                         off_t(sq.map_offset));
        ibv_qp shadow = *(*p)[0]; // context and handle, for the doorbell
        std::atomic<bool> stop{false};
        std::atomic<int> doorbells{0};
        std::thread scribbler([&] {
            if (map == MAP_FAILED)
                return;
            auto *ring = static_cast<metaroce_wq_ring *>(map);
            const size_t slots = size_t{sq.entries} * sq.stride;
            std::mt19937 rng(7);
            while (!stop.load()) {
                for (int i = 0; i < 64; i++)
                    ring->wqe[rng() % slots] = uint8_t(rng());
                store(ring->producer, rng() % 4 ? load(ring->producer) + rng() % 8 : rng());
                ibv_send_wr *none = nullptr;
                doorbells += ibv_cmd_post_send(&shadow, nullptr, &none) == 0;
            }
        });
        usleep(200000);
        p.reset(); // destroy_qp while the thread writes and rings
        usleep(50000);
        stop = true;
        scribbler.join();
        const bool mapped = map != MAP_FAILED;
        if (mapped)
            munmap(map, sq.map_size);
        RcPair fresh(a, b, o);
        Buffer src(a.pd.get(), 8192, 3), dst(b.pd.get(), 8192, 4);
        const int rc = fresh.error() ? -1 : post_write(fresh[0], 1, src, dst, 0, 8192);
        const auto wc = poll_wcs(a.scq.get(), 1);
        t.check(mapped && doorbells > 0 && ring_errors(dev) > before && rc == 0 && wc.size() == 1 &&
                    wc[0].status == IBV_WC_SUCCESS && src.bytes == dst.bytes,
                "random send slots and indices, rung while the QP is destroyed: counted, and a "
                "new QP works",
                "mapped %d, %d doorbells, ring_errors %ld -> %ld, then write %d %s", mapped,
                doorbells.load(), before, ring_errors(dev), rc, wcs_str(wc).c_str());
    }

    // A process that exits with its sends in flight.
    const pid_t pid = fork();
    if (pid == 0) {
        RcEnd ca, cb;
        std::string why;
        if (!open_rc_end(ca, dev, &why) || !open_rc_end(cb, peer, &why))
            _exit(2);
        RcPair p(ca, cb, o);
        Buffer src(ca.pd.get(), 1 << 20, 5), dst(cb.pd.get(), 1 << 20, 6);
        for (int i = 0; !p.error() && i < 32; i++)
            if (post_write(p[0], uint64_t(i), src, dst, size_t(i) * 32768, 32768))
                _exit(3);
        _exit(p.error() ? 4 : 0);
    }
    int status = -1;
    waitpid(pid, &status, 0);
    RcPair after(a, b, o);
    Buffer src(a.pd.get(), 8192, 7), dst(b.pd.get(), 8192, 8);
    const int rc = after.error() ? -1 : post_write(after[0], 2, src, dst, 0, 8192);
    const auto wc = poll_wcs(a.scq.get(), 1);
    t.check(WIFEXITED(status) && WEXITSTATUS(status) == 0 && rc == 0 && wc.size() == 1 &&
                wc[0].status == IBV_WC_SUCCESS && src.bytes == dst.bytes,
            "a process exits with 32 WRITEs of 32 KiB in its send ring: a new QP works",
            "child status %#x, then write %d %s", status, rc, wcs_str(wc).c_str());
}

} // namespace

int main(int argc, char **argv) {
    start(argc, argv, 2, "DEVICE PEER");
    Context ctx = open_device(argv[1]);
    if (!ctx)
        bail(std::string("no device ") + argv[1]);
    Ktap t(27);
    use_cases(t, ctx.get());
    hostile_cases(t, ctx.get());
    recv_ring_cases(t, ctx.get(), argv[1]);
    fork_cases(t, ctx.get());
    send_ring_cases(t, argv[1], argv[2]);
    return t.passed() ? 0 : 1;
}
