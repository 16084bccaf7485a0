// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// mr_verbs_objects: memory regions and completion queues of a metaroce device
// through libibverbs and our provider, as the guest selftest
// 20-verbs-objects.sh runs it. Prints KTAP (one case per check); exits 1 if a
// case failed, 2 if the device cannot even be opened.
//
//   mr_verbs_objects DEVICE
#include "verbs_private.h"

#include "guest_test.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace {

using namespace guest;

constexpr int kCases = 35;

Mr reg_iova(ibv_pd *pd, void *addr, size_t len, uint64_t iova, int access, int *err) {
    errno = 0;
    Mr mr(ibv_reg_mr_iova(pd, addr, len, iova, access));
    *err = mr ? 0 : errno;
    return mr;
}

Cq create_cq(ibv_context *ctx, int cqe, ibv_comp_channel *ch, int *err) {
    errno = 0;
    Cq cq(ibv_create_cq(ctx, cqe, nullptr, ch, 0));
    *err = cq ? 0 : errno;
    return cq;
}

bool has_key(const std::vector<std::string> &lines, const char *field, uint32_t key) {
    char want[64];
    std::snprintf(want, sizeof(want), " %s 0x%x ", field, key);
    for (const auto &l : lines)
        if (l.find(want) != std::string::npos)
            return true;
    return false;
}

void mr_cases(Ktap &t, ibv_context *ctx, ibv_pd *pd, const ibv_device_attr &attr) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    constexpr size_t kMiB = 1 << 20;
    Mapping buf(2 * kMiB, PROT_READ | PROT_WRITE);
    Mapping none(4 * page, PROT_NONE);
    if (!buf.get() || !none.get()) {
        std::printf("Bail out! mmap failed: %s\n", std::strerror(errno));
        std::exit(2);
    }
    std::memset(buf.get(), 0x5a, 2 * kMiB);
    const int lw = IBV_ACCESS_LOCAL_WRITE, rw = IBV_ACCESS_REMOTE_WRITE,
              rr = IBV_ACCESS_REMOTE_READ, ra = IBV_ACCESS_REMOTE_ATOMIC;
    int err;

    Mr one = reg_mr(pd, buf.get(), 1, lw, &err);
    t.check(one != nullptr, "reg_mr 1 byte, LOCAL_WRITE", "errno %d", err);
    t.check(one && one->lkey && !one->rkey, "1-byte MR: lkey set, no rkey without remote access",
            "lkey %#x rkey %#x", one ? one->lkey : 0, one ? one->rkey : 0);
    Mr ro = reg_mr(pd, buf.get() + page, page, 0, &err);
    t.check(ro != nullptr, "reg_mr one page, no access flags (local read only)", "errno %d", err);
    Mr big = reg_mr(pd, buf.get(), kMiB, lw | rw | rr, &err);
    t.check(big != nullptr, "reg_mr 1 MiB, LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ", "errno %d", err);
    t.check(big && big->rkey == big->lkey && big->length == kMiB,
            "1 MiB MR: rkey == lkey, length 1 MiB", "lkey %#x rkey %#x length %zu",
            big ? big->lkey : 0, big ? big->rkey : 0, big ? big->length : 0);
    Mr odd = reg_mr(pd, buf.get() + 3, 5000, lw | rr, &err);
    t.check(odd != nullptr, "reg_mr unaligned start and length (buf+3, 5000 bytes)", "errno %d",
            err);
    Mr atomic = reg_mr(pd, buf.get() + kMiB, kMiB, lw | rw | rr | ra, &err);
    t.check(atomic != nullptr, "reg_mr with every remote right incl. REMOTE_ATOMIC", "errno %d",
            err);
    const uint64_t iova = 0x7000000000ull + 3;
    Mr moved = reg_iova(pd, buf.get() + 3, 100, iova, lw, &err);
    t.check(moved && moved->addr == buf.get() + 3, "reg_mr_iova at another iova (same page offset)",
            "errno %d", err);

    std::vector<uint32_t> keys;
    for (const Mr *m : {&one, &ro, &big, &odd, &atomic, &moved})
        if (*m)
            keys.push_back((*m)->lkey);
    bool distinct = true;
    for (size_t i = 0; i < keys.size(); i++)
        for (size_t j = i + 1; j < keys.size(); j++)
            distinct &= keys[i] != keys[j];
    t.check(keys.size() == 6 && distinct, "six MRs, six distinct lkeys");

    // rdma resource show mr lists each of them by lkey.
    auto lines = rdma_resources("mr", ibv_get_device_name(ctx->device));
    bool all = lines.size() == 6;
    for (uint32_t k : keys)
        all &= has_key(lines, "lkey", k);
    t.check(all, "rdma resource show mr: our 6 MRs, by lkey", "%zu lines with our pid",
            lines.size());

    // Refusals.
    Mr bad = reg_mr(pd, buf.get(), page, rw, &err);
    t.refused(err, EINVAL, "reg_mr REMOTE_WRITE without LOCAL_WRITE: EINVAL");
    bad = reg_mr(pd, buf.get(), page, ra | rr, &err);
    t.refused(err, EINVAL, "reg_mr REMOTE_ATOMIC without LOCAL_WRITE: EINVAL");
    bad = reg_mr(pd, buf.get(), 0, lw, &err);
    t.refused(err, EINVAL, "reg_mr of 0 bytes: EINVAL");
    bad = reg_mr(pd, buf.get() + 1, 0, lw, &err);
    t.refused(err, EINVAL, "reg_mr of 0 bytes at an unaligned address: EINVAL");
    {
        Mr bindable = reg_mr(pd, buf.get(), page, lw | IBV_ACCESS_MW_BIND, &err);
        t.check(bindable != nullptr, "reg_mr MW_BIND (memory windows may bind to it): accepted",
                "errno %d", err);
    }
    bad = reg_mr(pd, buf.get(), attr.max_mr_size + 1, lw, &err);
    t.refused(err, EINVAL, "reg_mr of max_mr_size + 1 bytes: EINVAL");
    bad = reg_mr(pd, none.get(), page, lw, &err);
    t.refused(err, EFAULT, "reg_mr of PROT_NONE memory: EFAULT");
    bad = reg_iova(pd, buf.get(), page, 0x10001, lw, &err);
    t.refused(err, EINVAL, "reg_mr_iova with another page offset than the address: EINVAL");

    // A key does not come back: dereg, register the same range again.
    const uint32_t old_key = one->lkey;
    one.reset();
    Mr again = reg_mr(pd, buf.get(), 1, lw, &err);
    t.check(again && again->lkey != old_key, "re-registration gets a fresh lkey",
            "errno %d, old %#x new %#x", err, old_key, again ? again->lkey : 0);

    int rc = 0;
    for (Mr *m : {&again, &ro, &big, &odd, &atomic, &moved})
        if (*m)
            rc |= ibv_dereg_mr(m->release());
    t.check(rc == 0, "dereg_mr of every MR", "rc %d", rc);
    t.check(rdma_resources("mr", ibv_get_device_name(ctx->device)).empty(),
            "rdma resource show mr: none left");
}

void cq_cases(Ktap &t, ibv_context *ctx, const ibv_device_attr &attr) {
    const char *dev = ibv_get_device_name(ctx->device);
    int err;

    Cq small = create_cq(ctx, 1, nullptr, &err);
    t.check(small && small->cqe >= 1, "create_cq with 1 entry", "errno %d", err);
    Cq max = create_cq(ctx, attr.max_cqe, nullptr, &err);
    t.check(max && max->cqe >= attr.max_cqe, "create_cq with max_cqe entries",
            "errno %d, max_cqe %d", err, attr.max_cqe);
    Cq bad = create_cq(ctx, attr.max_cqe + 1, nullptr, &err);
    t.refused(err, EINVAL, "create_cq with max_cqe + 1 entries: EINVAL");
    bad = create_cq(ctx, 0, nullptr, &err);
    t.refused(err, EINVAL, "create_cq with 0 entries: EINVAL");

    ibv_wc wc[4];
    int n = small ? ibv_poll_cq(small.get(), 4, wc) : -1;
    t.check(n == 0, "poll_cq of an empty CQ: 0 completions", "got %d (errno %d)", n, errno);
    n = small ? ibv_req_notify_cq(small.get(), 0) : -1;
    t.check(n == 0, "req_notify_cq (next completion)", "got %d", n);
    n = max ? ibv_req_notify_cq(max.get(), 1) : -1;
    t.check(n == 0, "req_notify_cq (solicited only)", "got %d", n);

    // Armed, with a channel, but nothing completes: no event.
    Channel ch(ibv_create_comp_channel(ctx));
    Cq armed = ch ? create_cq(ctx, 16, ch.get(), &err) : nullptr;
    bool quiet = false;
    if (armed && ibv_req_notify_cq(armed.get(), 0) == 0) {
        fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
        ibv_cq *ev_cq = nullptr;
        void *ev_ctx = nullptr;
        errno = 0;
        quiet = ibv_get_cq_event(ch.get(), &ev_cq, &ev_ctx) == -1 && errno == EAGAIN;
    }
    t.check(quiet, "armed CQ on a channel: no event without completions", "errno %d", errno);

    n = small ? ibv_resize_cq(small.get(), 64) : -1;
    t.check(n == 0 && small->cqe == 64, "resize_cq 1 -> 64", "rc %d cqe %d", n,
            small ? small->cqe : -1);
    n = small ? ibv_resize_cq(small.get(), static_cast<int>(attr.max_cqe) + 1) : -1;
    t.refused(n, EINVAL, "resize_cq beyond max_cqe: EINVAL");

    auto lines = rdma_resources("cq", dev);
    t.check(lines.size() == 3, "rdma resource show cq: our 3 CQs", "%zu lines with our pid",
            lines.size());

    int rc = 0;
    for (Cq *c : {&small, &max, &armed})
        if (*c)
            rc |= ibv_destroy_cq(c->release());
    t.check(rc == 0, "destroy_cq of every CQ", "rc %d", rc);
    t.check(rdma_resources("cq", dev).empty(), "rdma resource show cq: none left");
}

} // namespace

int main(int argc, char **argv) {
    start(argc, argv, 1, "DEVICE");
    Ktap t(kCases);
    Context ctx = open_device(argv[1]);
    if (!ctx)
        bail(std::string("cannot open RDMA device ") + argv[1] + ": " + std::strerror(errno));
    ibv_device_attr attr{};
    int err = ibv_query_device(ctx.get(), &attr);
    const long page = sysconf(_SC_PAGESIZE);
    t.check(err == 0 && attr.max_mr > 0 && attr.max_mr_size >= (1u << 20) && attr.max_cq > 0 &&
                attr.max_cqe > 0 && attr.page_size_cap == static_cast<uint64_t>(page),
            "query_device: max_mr, max_mr_size, max_cq, max_cqe set; page_size_cap = page size",
            "err %d max_mr %d max_mr_size %" PRIu64 " max_cq %d max_cqe %d page_size_cap %" PRIu64,
            err, attr.max_mr, attr.max_mr_size, attr.max_cq, attr.max_cqe, attr.page_size_cap);
    Pd pd(ibv_alloc_pd(ctx.get()));
    if (!pd)
        bail(std::string("alloc_pd on ") + argv[1] + ": " + std::strerror(errno));
    mr_cases(t, ctx.get(), pd.get(), attr);
    cq_cases(t, ctx.get(), attr);
    return t.passed() ? 0 : 1;
}
