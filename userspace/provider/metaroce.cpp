// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// soft-MetaRoCE rdma-core provider.
//
// A CQ's completions are in a ring the kernel shares through mmap(): it is
// polled and armed there, with no system call (the kernel's ring layout is
// uapi's struct metaroce_cq_ring). Every other verb is a uverbs write() or
// ioctl command built by libibverbs' ibv_cmd_* helpers; so is every CQ
// verb against a module that grants no ring. The provider allocates the
// user-visible objects, maps the extended APIs onto the same commands
// (ibv_wr_* batches become one POST_SEND) and translates errors into the
// conventions libibverbs callers expect:
//   * verbs returning a pointer return null and set errno;
//   * verbs returning int return 0 or a positive errno value (errno is set
//     too), except poll_cq, which returns a count or -1 with errno set.
#include "metaroce.h"

#include "metaroce-abi.h"
#include "mrcdv.h"

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <utility>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

namespace metaroce {
namespace {

// Returns err after storing it in errno, for int-returning verbs.
int fail(int err) noexcept {
    errno = err;
    return err;
}

// Null with errno set, for pointer-returning verbs.
template <typename T> T *fail_null(int err) noexcept {
    errno = err;
    return nullptr;
}

// The ibv_context sits at the end of verbs_context, not at its start.
Context *to_context(ibv_context *ibctx) noexcept {
    static_assert(offsetof(Context, vctx) == 0);
    return reinterpret_cast<Context *>(reinterpret_cast<char *>(ibctx) -
                                       offsetof(verbs_context, context));
}

// A context created by _verbs_init_and_alloc_context(); undone with
// verbs_uninit_context() (which closes the fds) and free().
struct ContextRelease {
    void operator()(Context *ctx) const noexcept {
        pthread_rwlock_destroy(&ctx->mrs.lock);
        std::free(ctx->mrs.mrs);
        verbs_uninit_context(&ctx->vctx);
        std::free(ctx);
    }
};
using ContextPtr = std::unique_ptr<Context, ContextRelease>;

// --- Data-path accounting -----------------------------------------------------
//
// With METAROCE_STATS set, the last context to close prints how many data-
// path operations the process made and how many system calls they cost:
// the fast path's figure of merit, without strace.
enum DataPathCounter : unsigned {
    kSendWrs,
    kRecvWrs,
    kCompletions,
    kCmdPostSend,
    kCmdPostRecv,
    kCmdPostSrqRecv,
    kCmdPollCq,
    kCmdReqNotify,
    kCmdLocalWr,
    kNumDataPathCounters
};
uint64_t g_data_path[kNumDataPathCounters];
unsigned g_contexts;  // open, for print_data_path() at the last close
bool g_count_enabled; // METAROCE_STATS, read at the first open

// Off by default: an atomic add on a line every thread shares would tax
// each post and poll of the path it measures.
void count(DataPathCounter c, uint64_t n = 1) noexcept {
    if (__atomic_load_n(&g_count_enabled, __ATOMIC_RELAXED))
        __atomic_fetch_add(&g_data_path[c], n, __ATOMIC_RELAXED);
}

void print_data_path() noexcept {
    if (!__atomic_load_n(&g_count_enabled, __ATOMIC_RELAXED))
        return;
    uint64_t c[kNumDataPathCounters];
    for (unsigned i = 0; i < kNumDataPathCounters; i++)
        c[i] = __atomic_load_n(&g_data_path[i], __ATOMIC_RELAXED);
    const uint64_t ops = c[kSendWrs] + c[kRecvWrs] + c[kCompletions];
    const uint64_t calls = c[kCmdPostSend] + c[kCmdPostRecv] + c[kCmdPostSrqRecv] + c[kCmdPollCq] +
                           c[kCmdReqNotify] + c[kCmdLocalWr];
    std::fprintf(stderr,
                 "metaroce: data path: %llu operations (%llu sends, %llu receives, %llu "
                 "completions), %llu system calls (post_send %llu, post_recv %llu, "
                 "post_srq_recv %llu, poll_cq %llu, req_notify_cq %llu, local_wr %llu)\n",
                 (unsigned long long)ops, (unsigned long long)c[kSendWrs],
                 (unsigned long long)c[kRecvWrs], (unsigned long long)c[kCompletions],
                 (unsigned long long)calls, (unsigned long long)c[kCmdPostSend],
                 (unsigned long long)c[kCmdPostRecv], (unsigned long long)c[kCmdPostSrqRecv],
                 (unsigned long long)c[kCmdPollCq], (unsigned long long)c[kCmdReqNotify],
                 (unsigned long long)c[kCmdLocalWr]);
}

// WRs in a list of ibv_recv_wr or ibv_send_wr.
template <typename Wr> unsigned list_length(const Wr *wr) noexcept {
    unsigned n = 0;
    for (; wr; wr = wr->next)
        n++;
    return n;
}

// Frees a provider object once its destroy command succeeded. On failure
// the object stays valid, so that the caller may retry.
template <typename T> int finish_destroy(int ret, T *owner) noexcept {
    if (ret)
        return fail(ret);
    CPtr<T> release(owner);
    return 0;
}

// --- Device --------------------------------------------------------------

bool match_device(verbs_sysfs_dev *dev) noexcept {
    // libibverbs has already compared the device with kMatchTable; keep that
    // answer and only report it.
    const bool ours = dev->match != nullptr;
    debug("%s %s (%s, driver_id %#x, abi %u)", ours ? "matched" : "not matching", dev->ibdev_name,
          dev->sysfs_name, dev->driver_id, dev->abi_ver);
    return ours;
}

verbs_device *alloc_device(verbs_sysfs_dev *dev) noexcept {
    auto device = zalloc<Device>();
    if (!device)
        return fail_null<verbs_device>(ENOMEM);
    debug("allocated device for %s", dev ? dev->ibdev_name : "?");
    return &device.release()->vdev;
}

void uninit_device(verbs_device *vdev) noexcept {
    static_assert(offsetof(Device, vdev) == 0);
    CPtr<Device> release(reinterpret_cast<Device *>(vdev));
}

verbs_context *alloc_context(ibv_device *ibdev, int cmd_fd, void * /*private_data*/) noexcept {
    // METAROCE_DRIVER_ID, not RDMA_DRIVER_UNKNOWN: libibverbs copies this id
    // into every ioctl header, and the kernel rejects the ioctl with EINVAL
    // unless it equals ib_device_ops.driver_id of the device behind cmd_fd.
    // On failure this closes cmd_fd and sets errno.
    ContextPtr ctx(static_cast<Context *>(_verbs_init_and_alloc_context(
        ibdev, cmd_fd, sizeof(Context),
        reinterpret_cast<verbs_context *>(uintptr_t{offsetof(Context, vctx)}),
        METAROCE_DRIVER_ID)));
    if (!ctx)
        return nullptr;
    pthread_rwlock_init(&ctx->mrs.lock, nullptr);

    cmd::GetContext cmd{};
    ib_uverbs_get_context_resp resp{};
    if (int ret = ibv_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd), &resp, sizeof(resp))) {
        debug("GET_CONTEXT on %s failed: errno %d", ibdev->name, ret);
        ctx.reset(); // closes cmd_fd; then report the command's error
        return fail_null<verbs_context>(ret);
    }
    verbs_set_ops(&ctx->vctx, &kContextOps);
    if (__atomic_add_fetch(&g_contexts, 1, __ATOMIC_RELAXED) == 1)
        __atomic_store_n(&g_count_enabled, env_enabled("METAROCE_STATS"), __ATOMIC_RELAXED);
    debug("opened a context on %s", ibdev->name);
    return &ctx.release()->vctx;
}

void free_context(ibv_context *ibctx) noexcept {
    ContextPtr release(to_context(ibctx));
    if (__atomic_sub_fetch(&g_contexts, 1, __ATOMIC_RELAXED) == 0)
        print_data_path();
}

// --- Device and port queries ----------------------------------------------

int query_device_ex(ibv_context *ctx, const ibv_query_device_ex_input *input,
                    ibv_device_attr_ex *attr, size_t attr_size) noexcept {
    ib_uverbs_ex_query_device_resp resp{};
    size_t resp_size = sizeof(resp);
    if (int ret = ibv_cmd_query_device_any(ctx, input, attr, attr_size, &resp, &resp_size))
        return fail(ret);
    // The kernel reports fw_ver as major << 32 | minor << 16 | sub_minor.
    const uint64_t fw = resp.base.fw_ver;
    std::snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver), "%u.%u.%u",
                  unsigned(fw >> 32 & 0xffff), unsigned(fw >> 16 & 0xffff), unsigned(fw & 0xffff));
    return 0;
}

int query_port(ibv_context *ctx, uint8_t port, ibv_port_attr *attr) noexcept {
    cmd::QueryPort cmd{};
    if (int ret = ibv_cmd_query_port(ctx, port, attr, &cmd, sizeof(cmd)))
        return fail(ret);
    return 0;
}

// --- Protection domains and memory regions ---------------------------------

ibv_pd *alloc_pd(ibv_context *ctx) noexcept {
    auto pd = zalloc<ibv_pd>();
    if (!pd)
        return fail_null<ibv_pd>(ENOMEM);
    cmd::AllocPd cmd{};
    ib_uverbs_alloc_pd_resp resp{};
    if (int ret = ibv_cmd_alloc_pd(ctx, pd.get(), &cmd, sizeof(cmd), &resp, sizeof(resp)))
        return fail_null<ibv_pd>(ret);
    return pd.release();
}

int dealloc_pd(ibv_pd *pd) noexcept {
    return finish_destroy(ibv_cmd_dealloc_pd(pd), pd);
}

// --- The MRs of a context, for checking sends posted in a ring -------------

// The first entry whose lkey is not below @lkey.
MrInfo *mr_table_lower(MrTable &t, uint32_t lkey) noexcept {
    return std::lower_bound(t.mrs, t.mrs + t.count, lkey,
                            [](const MrInfo &m, uint32_t key) { return m.lkey < key; });
}

bool mr_table_add(MrTable &t, const MrInfo &mr) noexcept {
    pthread_rwlock_wrlock(&t.lock);
    bool ok = true;
    if (t.count == t.capacity) {
        const size_t cap = std::max<size_t>(16, t.capacity * 2);
        if (auto *p = static_cast<MrInfo *>(std::realloc(t.mrs, cap * sizeof(MrInfo)))) {
            t.mrs = p;
            t.capacity = cap;
        } else {
            ok = false;
        }
    }
    if (ok) {
        MrInfo *at = mr_table_lower(t, mr.lkey);
        std::memmove(at + 1, at, size_t(t.mrs + t.count - at) * sizeof(MrInfo));
        *at = mr;
        t.count++;
    }
    pthread_rwlock_unlock(&t.lock);
    return ok;
}

void mr_table_remove(MrTable &t, uint32_t lkey) noexcept {
    pthread_rwlock_wrlock(&t.lock);
    MrInfo *at = mr_table_lower(t, lkey);
    if (at != t.mrs + t.count && at->lkey == lkey) {
        std::memmove(at, at + 1, size_t(t.mrs + t.count - at - 1) * sizeof(MrInfo));
        t.count--;
    }
    pthread_rwlock_unlock(&t.lock);
}

ibv_mr *reg_mr(ibv_pd *pd, void *addr, size_t length, uint64_t hca_va, int access) noexcept {
    auto vmr = zalloc<verbs_mr>();
    if (!vmr)
        return fail_null<ibv_mr>(ENOMEM);
    cmd::RegMr cmd{};
    ib_uverbs_reg_mr_resp resp{};
    if (int ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr.get(), &cmd, sizeof(cmd),
                                 &resp, sizeof(resp)))
        return fail_null<ibv_mr>(ret);
    if (!mr_table_add(to_context(pd->context)->mrs,
                      MrInfo{vmr->mr.lkey, access, pd, hca_va, length})) {
        ibv_cmd_dereg_mr(vmr.get());
        return fail_null<ibv_mr>(ENOMEM);
    }
    return &vmr.release()->mr;
}

int dereg_mr(verbs_mr *vmr) noexcept {
    const uint32_t lkey = vmr->mr.lkey;
    MrTable &mrs = to_context(vmr->mr.context)->mrs;
    if (int ret = ibv_cmd_dereg_mr(vmr))
        return fail(ret);
    mr_table_remove(mrs, lkey);
    CPtr<verbs_mr> release(vmr);
    return 0;
}

// --- Completion queues --------------------------------------------------------

Cq *to_cq(ibv_cq *cq) noexcept {
    static_assert(offsetof(Cq, cq) == 0 && offsetof(Cq, cq_ex) == 0);
    return reinterpret_cast<Cq *>(cq);
}

Cq *to_cq(ibv_cq_ex *cq_ex) noexcept {
    return reinterpret_cast<Cq *>(cq_ex);
}

// A command or response with driver data after its core: the core ends
// in a flexible array, so the two share one buffer.
template <typename Base, typename Driver> struct WithDriverData {
    alignas(8) unsigned char bytes[sizeof(Base) + sizeof(Driver)]{};
    Base *base() noexcept { return reinterpret_cast<Base *>(bytes); }
    void set_driver(const Driver &d) noexcept { std::memcpy(bytes + sizeof(Base), &d, sizeof(d)); }
    Driver driver() const noexcept {
        Driver d;
        std::memcpy(&d, bytes + sizeof(Base), sizeof(d));
        return d;
    }
};

// The driver data of CREATE_CQ and RESIZE_CQ: what we ask for and what the
// kernel grants. An older module answers nothing: the response stays zero.
using CreateCqCmd = WithDriverData<cmd::CreateCq, metaroce_create_cq_cmd>;
using CreateCqResp = WithDriverData<ib_uverbs_create_cq_resp, metaroce_create_cq_resp>;
using ResizeCqResp = WithDriverData<ib_uverbs_resize_cq_resp, metaroce_create_cq_resp>;

// Maps the ring the kernel granted, if it granted one; false on failure
// (errno set). A ring too small for its entries is refused.
bool map_cq_ring(Cq *cq, int cmd_fd, const metaroce_create_cq_resp &granted) noexcept {
    cq->ring = nullptr;
    if (!(granted.flags & METAROCE_CQ_RING)) {
        debug("CQ %u: no mapped ring, completions by command", cq->cq.handle);
        return true;
    }
    const uint32_t n = granted.entries;
    if (n == 0 || (n & (n - 1)) ||
        granted.mmap_size < sizeof(metaroce_cq_ring) + size_t{n} * sizeof(ib_uverbs_wc)) {
        errno = EPROTO;
        return false;
    }
    void *p = mmap(nullptr, granted.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, cmd_fd,
                   off_t(granted.mmap_offset));
    if (p == MAP_FAILED)
        return false;
    cq->ring = static_cast<metaroce_cq_ring *>(p);
    cq->map_offset = granted.mmap_offset;
    cq->map_size = granted.mmap_size;
    cq->entries = n;
    cq->consumer = 0;
    return true;
}

void unmap_cq_ring(Cq *cq) noexcept {
    if (cq->ring)
        munmap(cq->ring, cq->map_size);
    cq->ring = nullptr;
}

// CREATE_CQ asking for a mapped ring; the CQ's lock is initialised.
bool create_kernel_cq(ibv_context *ctx, int cqe, ibv_comp_channel *channel, int comp_vector,
                      Cq *cq) noexcept {
    CreateCqCmd cmd;
    metaroce_create_cq_cmd ask{};
    ask.flags = METAROCE_CQ_RING;
    cmd.set_driver(ask);
    CreateCqResp resp;
    if (int ret = ibv_cmd_create_cq(ctx, cqe, channel, comp_vector, &cq->cq, cmd.base(),
                                    sizeof(cmd), resp.base(), sizeof(resp))) {
        errno = ret;
        return false;
    }
    if (!map_cq_ring(cq, ctx->cmd_fd, resp.driver())) {
        const int err = errno;
        ibv_cmd_destroy_cq(&cq->cq);
        errno = err;
        return false;
    }
    pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
    return true;
}

ibv_cq *create_cq(ibv_context *ctx, int cqe, ibv_comp_channel *channel, int comp_vector) noexcept {
    auto cq = zalloc<Cq>();
    if (!cq)
        return fail_null<ibv_cq>(ENOMEM);
    if (!create_kernel_cq(ctx, cqe, channel, comp_vector, cq.get()))
        return nullptr;
    return &cq.release()->cq;
}

// Also for extended CQs: a Cq is released with free() like an ibv_cq.
int destroy_cq(ibv_cq *ibcq) noexcept {
    Cq *cq = to_cq(ibcq);
    if (int ret = ibv_cmd_destroy_cq(ibcq))
        return fail(ret);
    unmap_cq_ring(cq);
    pthread_spin_destroy(&cq->lock);
    CPtr<Cq> release(cq);
    return 0;
}

// A mapped CQ's completions move to a new ring, from its slot 0; the
// old one goes. Nobody polls meanwhile: we hold the lock.
int resize_cq(ibv_cq *ibcq, int cqe) noexcept {
    Cq *cq = to_cq(ibcq);
    cmd::ResizeCq cmd{};
    ResizeCqResp resp;
    pthread_spin_lock(&cq->lock);
    int ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), resp.base(), sizeof(resp));
    if (!ret && cq->ring) {
        unmap_cq_ring(cq);
        errno = 0;
        if (!map_cq_ring(cq, ibcq->context->cmd_fd, resp.driver()) || !cq->ring)
            ret = errno ? errno : EPROTO; // the CQ is lost to us
    }
    pthread_spin_unlock(&cq->lock);
    return ret ? fail(ret) : 0;
}

// ibv_cmd_poll_cq() copies the kernel's ib_wc_flags as they are, but from
// bit 2 on they are not libibverbs' ibv_wc_flags: the kernel's
// IB_WC_WITH_INVALIDATE (bit 2) is IBV_WC_WITH_INV (bit 3), its
// IB_WC_IP_CSUM_OK (bit 3) is IBV_WC_IP_CSUM_OK (bit 2). GRH and WITH_IMM
// agree; the kernel's other bits have no meaning in ibv_wc.
constexpr unsigned int kKernelWcWithInvalidate = 1u << 2, kKernelWcIpCsumOk = 1u << 3;

unsigned int wc_flags_from_kernel(unsigned int kernel) noexcept {
    unsigned int flags = kernel & (IBV_WC_GRH | IBV_WC_WITH_IMM);
    if (kernel & kKernelWcWithInvalidate)
        flags |= IBV_WC_WITH_INV;
    if (kernel & kKernelWcIpCsumOk)
        flags |= IBV_WC_IP_CSUM_OK;
    return flags;
}

// A ring slot as POLL_CQ would have returned it.
void wc_from_ring(const ib_uverbs_wc &k, ibv_wc &wc) noexcept {
    wc.wr_id = k.wr_id;
    wc.status = ibv_wc_status(k.status);
    wc.opcode = ibv_wc_opcode(k.opcode);
    wc.vendor_err = k.vendor_err;
    wc.byte_len = k.byte_len;
    wc.imm_data = k.ex.imm_data;
    wc.qp_num = k.qp_num;
    wc.src_qp = k.src_qp;
    wc.wc_flags = wc_flags_from_kernel(k.wc_flags);
    wc.pkey_index = k.pkey_index;
    wc.slid = k.slid;
    wc.sl = k.sl;
    wc.dlid_path_bits = k.dlid_path_bits;
}

// Completions the kernel has produced and we have not read.
uint32_t ring_ready(const Cq *cq) noexcept {
    return __atomic_load_n(&cq->ring->producer, __ATOMIC_ACQUIRE) - cq->consumer;
}

// Hands the slots read so far back to the kernel.
void ring_release(Cq *cq) noexcept {
    __atomic_store_n(&cq->ring->consumer, cq->consumer, __ATOMIC_RELEASE);
}

void ring_read(Cq *cq, ibv_wc &wc) noexcept {
    wc_from_ring(cq->ring->cqe[cq->consumer & (cq->entries - 1)], wc);
    cq->consumer++;
}

int poll_cq(ibv_cq *ibcq, int num_entries, ibv_wc *wc) noexcept {
    Cq *cq = to_cq(ibcq);
    if (!cq->ring) {
        count(kCmdPollCq);
        const int n = ibv_cmd_poll_cq(ibcq, num_entries, wc);
        for (int i = 0; i < n; i++)
            wc[i].wc_flags = wc_flags_from_kernel(wc[i].wc_flags);
        if (n > 0)
            count(kCompletions, unsigned(n));
        return n;
    }
    pthread_spin_lock(&cq->lock);
    const uint32_t ready = ring_ready(cq);
    int n = 0;
    for (; n < num_entries && uint32_t(n) < ready; n++)
        ring_read(cq, wc[n]);
    if (n)
        ring_release(cq);
    pthread_spin_unlock(&cq->lock);
    if (n)
        count(kCompletions, unsigned(n));
    return n;
}

// Drops @qpn's completions from a mapped ring, keeping the others in order.
// The kernel may append meanwhile: only the slots below the producer seen
// here move (towards it), and the consumer then skips the dropped ones.
void clean_cq(Cq *cq, uint32_t qpn) noexcept {
    if (!cq->ring)
        return;
    pthread_spin_lock(&cq->lock);
    const uint32_t mask = cq->entries - 1;
    const uint32_t end = cq->consumer + ring_ready(cq);
    uint32_t dropped = 0;
    for (uint32_t i = end; i != cq->consumer; i--) {
        const ib_uverbs_wc &wc = cq->ring->cqe[(i - 1) & mask];
        if (wc.qp_num == qpn)
            dropped++;
        else if (dropped)
            cq->ring->cqe[(i - 1 + dropped) & mask] = wc;
    }
    if (dropped) {
        cq->consumer += dropped;
        ring_release(cq);
    }
    pthread_spin_unlock(&cq->lock);
}

// Arms a mapped CQ by a store the kernel reads after each completion it
// writes; an armed NEXT is not narrowed to SOLICITED. The fence pairs
// with the kernel's between its producer store and its notify load: a
// completion that raced the arming is found by the caller's next poll.
int req_notify_cq(ibv_cq *ibcq, int solicited_only) noexcept {
    Cq *cq = to_cq(ibcq);
    if (!cq->ring) {
        count(kCmdReqNotify);
        return ibv_cmd_req_notify_cq(ibcq, solicited_only);
    }
    uint32_t *notify = &cq->ring->notify;
    if (!solicited_only) {
        __atomic_store_n(notify, uint32_t{METAROCE_CQ_NOTIFY_NEXT}, __ATOMIC_SEQ_CST);
    } else {
        uint32_t was = METAROCE_CQ_NOTIFY_NONE;
        __atomic_compare_exchange_n(notify, &was, uint32_t{METAROCE_CQ_NOTIFY_SOLICITED}, false,
                                    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return 0;
}

// --- Extended CQs ---------------------------------------------------------

// The ibv_wc fields the read_* accessors can give (IBV_WC_STANDARD_FLAGS);
// no timestamps, VLAN, flow tag or tag matching.
constexpr uint64_t kCqWcFlags =
    IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
    IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL | IBV_WC_EX_WITH_DLID_PATH_BITS;

const ibv_wc &current_wc(ibv_cq_ex *cq_ex) noexcept {
    return to_cq(cq_ex)->wc;
}

void set_current(ibv_cq_ex *cq_ex) noexcept {
    const Cq *cq = to_cq(cq_ex);
    cq_ex->status = cq->wc.status;
    cq_ex->wr_id = cq->wc.wr_id;
}

// Without a ring: the next completion by command: 0, ENOENT when the CQ is
// empty, or an errno.
int poll_one_by_command(ibv_cq_ex *cq_ex) noexcept {
    Cq *cq = to_cq(cq_ex);
    const int n = poll_cq(&cq->cq, 1, &cq->wc);
    if (n < 0)
        return errno;
    if (n == 0)
        return ENOENT;
    set_current(cq_ex);
    return 0;
}

// The ring's next completion, under the lock: 0 or ENOENT.
int read_next(ibv_cq_ex *cq_ex) noexcept {
    Cq *cq = to_cq(cq_ex);
    if (!ring_ready(cq))
        return ENOENT;
    ring_read(cq, cq->wc);
    set_current(cq_ex);
    count(kCompletions);
    return 0;
}

// With a ring, the lock is held from a successful start_poll() to
// end_poll(), and the slots read go back to the kernel at the end.
int start_poll(ibv_cq_ex *cq_ex, ibv_poll_cq_attr *attr) noexcept {
    if (attr->comp_mask)
        return EINVAL;
    Cq *cq = to_cq(cq_ex);
    if (!cq->ring)
        return poll_one_by_command(cq_ex);
    pthread_spin_lock(&cq->lock);
    const int ret = read_next(cq_ex);
    if (ret)
        pthread_spin_unlock(&cq->lock);
    return ret;
}

int next_poll(ibv_cq_ex *cq_ex) noexcept {
    return to_cq(cq_ex)->ring ? read_next(cq_ex) : poll_one_by_command(cq_ex);
}

void end_poll(ibv_cq_ex *cq_ex) noexcept {
    Cq *cq = to_cq(cq_ex);
    if (!cq->ring)
        return;
    ring_release(cq);
    pthread_spin_unlock(&cq->lock);
}

ibv_wc_opcode read_opcode(ibv_cq_ex *cq_ex) noexcept {
    return current_wc(cq_ex).opcode;
}
uint32_t read_vendor_err(ibv_cq_ex *cq_ex) noexcept {
    return current_wc(cq_ex).vendor_err;
}
uint32_t read_byte_len(ibv_cq_ex *cq_ex) noexcept {
    return current_wc(cq_ex).byte_len;
}
__be32 read_imm_data(ibv_cq_ex *cq_ex) noexcept {
    return current_wc(cq_ex).imm_data;
}
uint32_t read_qp_num(ibv_cq_ex *cq_ex) noexcept {
    return current_wc(cq_ex).qp_num;
}
uint32_t read_src_qp(ibv_cq_ex *cq_ex) noexcept {
    return current_wc(cq_ex).src_qp;
}
unsigned int read_wc_flags(ibv_cq_ex *cq_ex) noexcept {
    return current_wc(cq_ex).wc_flags;
}
uint32_t read_slid(ibv_cq_ex *cq_ex) noexcept {
    return current_wc(cq_ex).slid;
}
uint8_t read_sl(ibv_cq_ex *cq_ex) noexcept {
    return current_wc(cq_ex).sl;
}
uint8_t read_dlid_path_bits(ibv_cq_ex *cq_ex) noexcept {
    return current_wc(cq_ex).dlid_path_bits;
}

// ibv_create_cq_ex(): refuses with EOPNOTSUPP what the accessors above
// cannot give, as rxe does; the kernel checks cqe and comp_vector.
ibv_cq_ex *create_cq_ex(ibv_context *ctx, ibv_cq_init_attr_ex *attr) noexcept {
    if (attr->comp_mask & ~uint32_t{IBV_CQ_INIT_ATTR_MASK_FLAGS})
        return fail_null<ibv_cq_ex>(EOPNOTSUPP);
    if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
        (attr->flags & ~uint32_t{IBV_CREATE_CQ_ATTR_SINGLE_THREADED}))
        return fail_null<ibv_cq_ex>(EOPNOTSUPP);
    if (attr->wc_flags & ~kCqWcFlags)
        return fail_null<ibv_cq_ex>(EOPNOTSUPP);
    if (attr->cqe > uint32_t{INT32_MAX})
        return fail_null<ibv_cq_ex>(EINVAL);

    auto cq = zalloc<Cq>();
    if (!cq)
        return fail_null<ibv_cq_ex>(ENOMEM);
    if (!create_kernel_cq(ctx, int(attr->cqe), attr->channel, int(attr->comp_vector), cq.get()))
        return nullptr;
    cq->cq.cq_context = attr->cq_context;
    ibv_cq_ex &cq_ex = cq->cq_ex;
    cq_ex.start_poll = start_poll;
    cq_ex.next_poll = next_poll;
    cq_ex.end_poll = end_poll;
    cq_ex.read_opcode = read_opcode;
    cq_ex.read_vendor_err = read_vendor_err;
    cq_ex.read_byte_len = read_byte_len;
    cq_ex.read_imm_data = read_imm_data;
    cq_ex.read_qp_num = read_qp_num;
    cq_ex.read_src_qp = read_src_qp;
    cq_ex.read_wc_flags = read_wc_flags;
    cq_ex.read_slid = read_slid;
    cq_ex.read_sl = read_sl;
    cq_ex.read_dlid_path_bits = read_dlid_path_bits;
    return &cq.release()->cq_ex;
}

// --- Receive rings, of QPs and SRQs ------------------------------------------

// What the kernel granted for a receive ring: from CREATE_QP or CREATE_SRQ.
struct RecvRingGrant {
    bool granted;
    uint64_t offset;
    uint32_t size, entries, stride, max_sge;
};

// Maps the receive ring the kernel granted, if it did; false on failure
// (errno set). @depth: the max_wr granted, the receives outstanding at
// most. @what names the queue in debug lines.
bool map_recv_ring(RecvRing &rq, int cmd_fd, const RecvRingGrant &g, uint32_t depth,
                   const char *what, uint32_t num) noexcept {
    rq.ring = nullptr;
    debug("%s %u: receive ring %s, %u entries of %u bytes", what, num,
          g.granted ? "granted" : "not granted", g.entries, g.stride);
    if (!g.granted)
        return true;
    // libibverbs' write path for a uverbs ABI below 5 places the response
    // elsewhere (the provider's unit tests take it): an answer that is not
    // a ring leaves the receives to the command, which every module takes.
    const uint32_t n = g.entries;
    if (n == 0 || (n & (n - 1)) || depth > n || g.max_sge == 0 ||
        g.stride < sizeof(metaroce_recv_wqe) + g.max_sge * sizeof(ib_uverbs_sge) ||
        g.size < sizeof(metaroce_wq_ring) + size_t{n} * g.stride) {
        debug("%s %u: no usable receive ring in the answer, receives by command", what, num);
        return true;
    }
    void *p = mmap(nullptr, g.size, PROT_READ | PROT_WRITE, MAP_SHARED, cmd_fd, off_t(g.offset));
    if (p == MAP_FAILED)
        return false;
    rq.ring = static_cast<metaroce_wq_ring *>(p);
    rq.map_size = g.size;
    rq.entries = n;
    rq.stride = g.stride;
    rq.max_sge = g.max_sge;
    rq.depth = depth;
    rq.producer = 0;
    pthread_spin_init(&rq.lock, PTHREAD_PROCESS_PRIVATE);
    return true;
}

void unmap_recv_ring(RecvRing &rq) noexcept {
    if (!rq.ring)
        return;
    munmap(rq.ring, rq.map_size);
    pthread_spin_destroy(&rq.lock);
    rq.ring = nullptr;
}

// Writes @wr's receives into the ring; returns 0 or an errno with *bad_wr
// set, and in *doorbell whether the kernel asked to be told.
int post_to_ring(RecvRing &rq, ibv_recv_wr *wr, ibv_recv_wr **bad_wr, bool *doorbell) noexcept {
    metaroce_wq_ring *ring = rq.ring;
    int err = 0;
    pthread_spin_lock(&rq.lock);
    const uint32_t start = rq.producer;
    // The kernel's consumer, read again only when the ring looks full.
    uint32_t consumer = __atomic_load_n(&ring->consumer, __ATOMIC_ACQUIRE);
    for (; wr; wr = wr->next) {
        if (wr->num_sge < 0 || uint32_t(wr->num_sge) > rq.max_sge) {
            err = EINVAL;
            break;
        }
        if (rq.producer - consumer >= rq.depth &&
            rq.producer - (consumer = __atomic_load_n(&ring->consumer, __ATOMIC_ACQUIRE)) >=
                rq.depth) {
            err = ENOMEM;
            break;
        }
        auto *slot = ring->wqe + size_t(rq.producer & (rq.entries - 1)) * rq.stride;
        metaroce_recv_wqe hdr{};
        hdr.wr_id = wr->wr_id;
        hdr.num_sge = uint32_t(wr->num_sge);
        std::memcpy(slot, &hdr, sizeof(hdr));
        for (int i = 0; i < wr->num_sge; i++) {
            ib_uverbs_sge sge{wr->sg_list[i].addr, wr->sg_list[i].length, wr->sg_list[i].lkey};
            std::memcpy(slot + sizeof(hdr) + size_t(i) * sizeof(sge), &sge, sizeof(sge));
        }
        rq.producer++;
    }
    *doorbell = false;
    if (rq.producer != start) {
        __atomic_store_n(&ring->producer, rq.producer, __ATOMIC_RELEASE);
        // Pairs with the kernel's barrier between setting the flag and
        // reading producer: one of the two sees the other.
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        *doorbell = __atomic_load_n(&ring->flags, __ATOMIC_RELAXED) & METAROCE_WQ_NEED_DOORBELL;
    }
    pthread_spin_unlock(&rq.lock);
    if (err)
        *bad_wr = wr;
    return err;
}

// --- Send rings, of RC and UC QPs ---------------------------------------------

// Maps the send ring of CREATE_QP's answer, if granted; false on failure
// (errno set). @depth: the max_send_wr granted.
bool map_send_ring(SendRing &sq, int cmd_fd, const metaroce_create_qp_resp &r, uint32_t depth,
                   uint32_t num) noexcept {
    sq.ring = nullptr;
    debug("QP %u: send ring %s, %u entries of %u bytes", num,
          r.flags & METAROCE_QP_SQ_RING ? "granted" : "not granted", r.sq_entries, r.sq_stride);
    if (!(r.flags & METAROCE_QP_SQ_RING))
        return true;
    const uint32_t n = r.sq_entries;
    if (n == 0 || (n & (n - 1)) || depth > n || r.sq_max_sge == 0 ||
        r.sq_stride < sizeof(metaroce_send_wqe) +
                          std::max<size_t>(r.sq_max_sge * sizeof(ib_uverbs_sge), r.sq_max_inline) ||
        r.sq_mmap_size < sizeof(metaroce_wq_ring) + size_t{n} * r.sq_stride) {
        debug("QP %u: no usable send ring in the answer, sends by command", num);
        return true;
    }
    void *p = mmap(nullptr, r.sq_mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, cmd_fd,
                   off_t(r.sq_mmap_offset));
    if (p == MAP_FAILED)
        return false;
    sq.ring = static_cast<metaroce_wq_ring *>(p);
    sq.map_offset = r.sq_mmap_offset;
    sq.map_size = r.sq_mmap_size;
    sq.entries = n;
    sq.stride = r.sq_stride;
    sq.max_sge = r.sq_max_sge;
    sq.max_inline = r.sq_max_inline;
    sq.depth = depth;
    sq.producer = 0;
    pthread_spin_init(&sq.lock, PTHREAD_PROCESS_PRIVATE);
    return true;
}

void unmap_send_ring(SendRing &sq) noexcept {
    if (!sq.ring)
        return;
    munmap(sq.ring, sq.map_size);
    pthread_spin_destroy(&sq.lock);
    sq.ring = nullptr;
}

// --- Queue pairs ------------------------------------------------------------

Qp *to_qp(ibv_qp *qp) noexcept {
    static_assert(offsetof(Qp, vqp) == 0 && offsetof(verbs_qp, qp) == 0);
    return reinterpret_cast<Qp *>(qp);
}

Qp *to_qp(ibv_qp_ex *qpx) noexcept {
    static_assert(offsetof(verbs_qp, qp_ex) == 0);
    return reinterpret_cast<Qp *>(qpx);
}

// A QP and its batch arrays.
struct QpRelease {
    void operator()(Qp *qp) const noexcept {
        unmap_recv_ring(qp->rq);
        unmap_send_ring(qp->sq);
        CPtr<ibv_send_wr> wrs(qp->wrs);
        CPtr<uint16_t> streams(qp->streams);
        CPtr<ibv_sge> sges(qp->sges);
        CPtr<uint8_t> inline_data(qp->inline_data);
        CPtr<Qp> release(qp);
    }
};
using QpPtr = std::unique_ptr<Qp, QpRelease>;

using CreateQpCmd = WithDriverData<cmd::CreateQp, metaroce_create_qp_cmd>;
using CreateQpResp = WithDriverData<ib_uverbs_create_qp_resp, metaroce_create_qp_resp>;

// Receives into the mapped ring, with no system call unless the kernel
// asks for the doorbell (the QP is in ERR: they complete at once, flushed).
int post_recv(ibv_qp *ibqp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept {
    Qp *qp = to_qp(ibqp);
    count(kRecvWrs, list_length(wr));
    if (!qp->rq.ring) {
        count(kCmdPostRecv);
        return ibv_cmd_post_recv(ibqp, wr, bad_wr);
    }
    if (ibqp->state == IBV_QPS_RESET) {
        *bad_wr = wr;
        return fail(EINVAL);
    }
    bool doorbell = false;
    int err = post_to_ring(qp->rq, wr, bad_wr, &doorbell);
    if (doorbell) {
        ibv_recv_wr *none = nullptr;
        count(kCmdPostRecv);
        if (int ret = ibv_cmd_post_recv(ibqp, nullptr, &none); ret && !err)
            err = ret;
    }
    return err ? fail(err) : 0;
}

// CREATE_QP for both ibv_create_qp() and ibv_create_qp_ex(); copies the
// granted capabilities back into attr.
QpPtr create_kernel_qp(ibv_pd *pd, ibv_qp_init_attr *attr, uint32_t streams = 0) noexcept {
    QpPtr qp(zalloc<Qp>().release());
    if (!qp) {
        errno = ENOMEM;
        return nullptr;
    }
    CreateQpCmd cmd;
    metaroce_create_qp_cmd ask{};
    ask.flags =
        (attr->srq ? 0 : METAROCE_QP_RQ_RING) |
        (attr->qp_type == IBV_QPT_RC || attr->qp_type == IBV_QPT_UC ? METAROCE_QP_SQ_RING : 0);
    ask.streams = streams;
    cmd.set_driver(ask);
    CreateQpResp resp;
    if (int ret = ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, cmd.base(), sizeof(cmd), resp.base(),
                                    sizeof(resp))) {
        // Nothing to undo in the kernel; release only our memory.
        errno = ret;
        return nullptr;
    }
    const metaroce_create_qp_resp r = resp.driver();
    // A kernel without streams grants none: its sends could not name one.
    if (streams > 1 && r.streams != streams) {
        ibv_cmd_destroy_qp(&qp->vqp.qp);
        errno = EOPNOTSUPP;
        return nullptr;
    }
    qp->nstreams = r.streams;
    const RecvRingGrant grant{bool(r.flags & METAROCE_QP_RQ_RING),
                              r.rq_mmap_offset,
                              r.rq_mmap_size,
                              r.rq_entries,
                              r.rq_stride,
                              r.rq_max_sge};
    if (!map_recv_ring(qp->rq, pd->context->cmd_fd, grant, attr->cap.max_recv_wr, "QP",
                       qp->vqp.qp.qp_num) ||
        !map_send_ring(qp->sq, pd->context->cmd_fd, r, attr->cap.max_send_wr, qp->vqp.qp.qp_num)) {
        const int err = errno;
        ibv_cmd_destroy_qp(&qp->vqp.qp);
        errno = err;
        return nullptr;
    }
    return qp;
}

ibv_qp *create_qp(ibv_pd *pd, ibv_qp_init_attr *attr) noexcept {
    // comp_mask stays 0: ibv_qp_to_qp_ex() then reports no qp_ex.
    QpPtr qp = create_kernel_qp(pd, attr);
    return qp ? &qp.release()->vqp.qp : nullptr;
}

// --- Memory windows and local work requests -------------------------------

ibv_mw *alloc_mw(ibv_pd *pd, ibv_mw_type type) noexcept {
    auto mw = zalloc<ibv_mw>();
    if (!mw)
        return fail_null<ibv_mw>(ENOMEM);
    cmd::AllocMw cmd{};
    ib_uverbs_alloc_mw_resp resp{};
    if (int ret = ibv_cmd_alloc_mw(pd, type, mw.get(), &cmd, sizeof(cmd), &resp, sizeof(resp)))
        return fail_null<ibv_mw>(ret);
    return mw.release();
}

int dealloc_mw(ibv_mw *mw) noexcept {
    return finish_destroy(ibv_cmd_dealloc_mw(mw), mw);
}

// The POST_SEND command takes neither binds nor LOCAL_INV: they go one by
// one through the driver method METAROCE_METHOD_QP_LOCAL_WR. The kernel
// runs them at once and orders their completions after earlier sends.
int post_local_wr(ibv_qp *qp, const metaroce_local_wr &req) noexcept {
    // The header ends in a flexible array: the attributes follow it.
    struct {
        alignas(ib_uverbs_ioctl_hdr)
            uint8_t bytes[sizeof(ib_uverbs_ioctl_hdr) + 2 * sizeof(ib_uverbs_attr)];
    } cmd{};
    ib_uverbs_ioctl_hdr hdr{};
    hdr.length = sizeof(cmd);
    hdr.object_id = UVERBS_OBJECT_QP;
    hdr.method_id = METAROCE_METHOD_QP_LOCAL_WR;
    hdr.num_attrs = 2;
    hdr.driver_id = METAROCE_DRIVER_ID;
    ib_uverbs_attr attrs[2]{};
    attrs[0].attr_id = METAROCE_ATTR_LOCAL_WR_QP;
    attrs[0].flags = UVERBS_ATTR_F_MANDATORY;
    attrs[0].data = qp->handle;
    attrs[1].attr_id = METAROCE_ATTR_LOCAL_WR_REQ;
    attrs[1].flags = UVERBS_ATTR_F_MANDATORY;
    attrs[1].len = sizeof(req);
    attrs[1].data = reinterpret_cast<uintptr_t>(&req);
    std::memcpy(cmd.bytes, &hdr, sizeof(hdr));
    std::memcpy(cmd.bytes + sizeof(hdr), attrs, sizeof(attrs));
    count(kSendWrs);
    count(kCmdLocalWr);
    if (ioctl(qp->context->cmd_fd, RDMA_VERBS_IOCTL, cmd.bytes))
        return errno;
    return 0;
}

metaroce_local_wr bind_request(uint64_t wr_id, unsigned send_flags, const ibv_mw *mw,
                               uint32_t new_rkey, const ibv_mw_bind_info &info) noexcept {
    metaroce_local_wr req{};
    req.wr_id = wr_id;
    req.send_flags = send_flags & IBV_SEND_SIGNALED;
    req.opcode = METAROCE_LOCAL_WR_BIND_MW;
    req.rkey = mw->rkey;
    req.new_rkey = new_rkey;
    req.mr_lkey = info.mr ? info.mr->lkey : 0;
    req.addr = info.addr;
    req.length = info.length;
    req.access = info.mw_access_flags;
    return req;
}

// ibv_bind_mw(): type 1 windows; the window takes the next key.
int bind_mw(ibv_qp *qp, ibv_mw *mw, ibv_mw_bind *mw_bind) noexcept {
    if (!mw || mw->type != IBV_MW_TYPE_1 || !mw_bind)
        return fail(EINVAL);
    const uint32_t new_rkey = ibv_inc_rkey(mw->rkey);
    if (int ret = post_local_wr(qp, bind_request(mw_bind->wr_id, mw_bind->send_flags, mw, new_rkey,
                                                 mw_bind->bind_info)))
        return fail(ret);
    mw->rkey = new_rkey;
    return 0;
}

bool is_local_wr(const ibv_send_wr *wr) noexcept {
    return wr->opcode == IBV_WR_BIND_MW || wr->opcode == IBV_WR_LOCAL_INV;
}

// IBV_WR_BIND_MW (type 2 windows) or IBV_WR_LOCAL_INV.
int post_local_send_wr(ibv_qp *qp, const ibv_send_wr *wr) noexcept {
    if (wr->opcode == IBV_WR_LOCAL_INV) {
        metaroce_local_wr req{};
        req.wr_id = wr->wr_id;
        req.send_flags = wr->send_flags & IBV_SEND_SIGNALED;
        req.opcode = METAROCE_LOCAL_WR_LOCAL_INV;
        req.rkey = wr->invalidate_rkey;
        return post_local_wr(qp, req);
    }
    const ibv_mw *mw = wr->bind_mw.mw;
    if (!mw || mw->type != IBV_MW_TYPE_2)
        return EINVAL;
    return post_local_wr(
        qp, bind_request(wr->wr_id, wr->send_flags, mw, wr->bind_mw.rkey, wr->bind_mw.bind_info));
}

constexpr unsigned kSendFlags =
    IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_INLINE;
constexpr uint64_t kMaxMessage = uint64_t{1} << 31;

bool is_atomic(ibv_wr_opcode op) noexcept {
    return op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

// The opcodes a ring takes per QP type, as the kernel's opcode table does.
bool ring_opcode(ibv_qp_type type, ibv_wr_opcode op) noexcept {
    switch (op) {
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM:
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
        return true;
    case IBV_WR_SEND_WITH_INV:
    case IBV_WR_RDMA_READ:
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
        return type == IBV_QPT_RC;
    default:
        return false;
    }
}

// Each SGE names an MR of @pd that covers it with the rights @op needs
// (a READ or an atomic writes its local buffer).
bool sges_valid(MrTable &t, const ibv_pd *pd, const ibv_send_wr *wr) noexcept {
    const bool writes = wr->opcode == IBV_WR_RDMA_READ || is_atomic(wr->opcode);
    bool ok = true;
    pthread_rwlock_rdlock(&t.lock);
    for (int i = 0; ok && i < wr->num_sge; i++) {
        const ibv_sge &sge = wr->sg_list[i];
        const MrInfo *mr = mr_table_lower(t, sge.lkey);
        ok = mr != t.mrs + t.count && mr->lkey == sge.lkey && mr->pd == pd &&
             (!writes || (mr->access & IBV_ACCESS_LOCAL_WRITE)) && sge.addr >= mr->iova &&
             sge.addr - mr->iova <= mr->length && sge.length <= mr->length - (sge.addr - mr->iova);
    }
    pthread_rwlock_unlock(&t.lock);
    return ok;
}

// The checks of the kernel's post_send (kernel/sq.c) that do not need the
// kernel: a WR that fails one is refused here with EINVAL, as by command.
int check_send_wr(const SendRing &sq, ibv_qp *qp, const ibv_send_wr *wr) noexcept {
    if (wr->num_sge < 0 || uint32_t(wr->num_sge) > sq.max_sge || (wr->send_flags & ~kSendFlags) ||
        !ring_opcode(qp->qp_type, wr->opcode))
        return EINVAL;
    uint64_t len = 0;
    for (int i = 0; i < wr->num_sge; i++)
        len += wr->sg_list[i].length;
    if (len > kMaxMessage)
        return EINVAL;
    if (wr->send_flags & IBV_SEND_INLINE)
        return is_atomic(wr->opcode) || wr->opcode == IBV_WR_RDMA_READ || len > sq.max_inline
                   ? EINVAL
                   : 0;
    if (is_atomic(wr->opcode) &&
        (wr->num_sge != 1 || len != sizeof(uint64_t) || wr->wr.atomic.remote_addr % 8))
        return EINVAL;
    return sges_valid(to_context(qp->context)->mrs, qp->pd, wr) ? 0 : EINVAL;
}

// Writes @wr into the next slot.
void write_send_slot(SendRing &sq, const ibv_send_wr *wr, uint16_t stream) noexcept {
    uint8_t *slot = sq.ring->wqe + size_t(sq.producer & (sq.entries - 1)) * sq.stride;
    metaroce_send_wqe w{};
    w.wr_id = wr->wr_id;
    w.stream = stream;
    w.opcode = wr->opcode;
    w.send_flags = wr->send_flags;
    w.ex = wr->opcode == IBV_WR_SEND_WITH_INV ? wr->invalidate_rkey : wr->imm_data;
    if (is_atomic(wr->opcode)) {
        w.remote_addr = wr->wr.atomic.remote_addr;
        w.rkey = wr->wr.atomic.rkey;
        w.compare_add = wr->wr.atomic.compare_add;
        w.swap = wr->wr.atomic.swap;
    } else {
        w.remote_addr = wr->wr.rdma.remote_addr;
        w.rkey = wr->wr.rdma.rkey;
    }
    uint8_t *data = slot + sizeof(w);
    if (wr->send_flags & IBV_SEND_INLINE) {
        for (int i = 0; i < wr->num_sge; i++) {
            const ibv_sge &sge = wr->sg_list[i];
            std::memcpy(data + w.inline_len, reinterpret_cast<const void *>(sge.addr), sge.length);
            w.inline_len += sge.length;
        }
    } else {
        w.num_sge = uint32_t(wr->num_sge);
        for (int i = 0; i < wr->num_sge; i++) {
            const ib_uverbs_sge sge{wr->sg_list[i].addr, wr->sg_list[i].length,
                                    wr->sg_list[i].lkey};
            std::memcpy(data + size_t(i) * sizeof(sge), &sge, sizeof(sge));
        }
    }
    std::memcpy(slot, &w, sizeof(w));
}

// Publishes the slots written since @start; true when the kernel asked for
// the doorbell.
bool publish_send_ring(SendRing &sq, uint32_t start) noexcept {
    if (sq.producer == start)
        return false;
    __atomic_store_n(&sq.ring->producer, sq.producer, __ATOMIC_RELEASE);
    // Pairs with the kernel's barrier between setting the flag and reading
    // producer: one of the two sees the other.
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return __atomic_load_n(&sq.ring->flags, __ATOMIC_RELAXED) & METAROCE_WQ_NEED_DOORBELL;
}

// The doorbell: a POST_SEND with no WR; the kernel reads the ring.
int ring_send_doorbell(ibv_qp *qp) noexcept {
    ibv_send_wr *none = nullptr;
    count(kCmdPostSend);
    return ibv_cmd_post_send(qp, nullptr, &none);
}

// ibv_post_send() on a QP with a send ring: no system call while the
// kernel has sends in flight, whose ACKs make it read the ring. Binds and
// LOCAL_INV go by their command, after the doorbell for the sends before
// them, so that the kernel orders their completions after those. @streams,
// if any, has the stream of each WR of the list.
int post_send_ring(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad_wr,
                   const uint16_t *streams = nullptr) noexcept {
    SendRing &sq = to_qp(qp)->sq;
    if (qp->state == IBV_QPS_RESET || qp->state == IBV_QPS_INIT || qp->state == IBV_QPS_RTR) {
        *bad_wr = wr;
        return fail(EINVAL);
    }
    count(kSendWrs, list_length(wr));
    int err = 0;
    pthread_spin_lock(&sq.lock);
    uint32_t start = sq.producer;
    // The kernel's consumer, read again only when the ring looks full.
    uint32_t consumer = __atomic_load_n(&sq.ring->consumer, __ATOMIC_ACQUIRE);
    for (; wr; wr = wr->next, streams += streams ? 1 : 0) {
        if (is_local_wr(wr)) {
            if (sq.producer != start) {
                publish_send_ring(sq, start);
                err = ring_send_doorbell(qp);
                start = sq.producer;
            }
            if (!err)
                err = post_local_send_wr(qp, wr);
            if (err)
                break;
            continue;
        }
        if ((err = check_send_wr(sq, qp, wr)))
            break;
        if (sq.producer - consumer >= sq.depth &&
            sq.producer - (consumer = __atomic_load_n(&sq.ring->consumer, __ATOMIC_ACQUIRE)) >=
                sq.depth) {
            err = ENOMEM;
            break;
        }
        write_send_slot(sq, wr, streams ? *streams : 0);
        sq.producer++;
    }
    const bool doorbell = publish_send_ring(sq, start);
    pthread_spin_unlock(&sq.lock);
    if (doorbell)
        if (int ret = ring_send_doorbell(qp); ret && !err)
            err = ret;
    if (err) {
        *bad_wr = wr;
        return fail(err);
    }
    return 0;
}

// ibv_post_send(): runs of ordinary WRs go with POST_SEND, local WRs
// between them one by one, so the list keeps its order.
int post_send(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad_wr) noexcept {
    if (to_qp(qp)->sq.ring)
        return post_send_ring(qp, wr, bad_wr);
    while (wr) {
        if (is_local_wr(wr)) {
            if (int ret = post_local_send_wr(qp, wr)) {
                *bad_wr = wr;
                return fail(ret);
            }
            wr = wr->next;
            continue;
        }
        ibv_send_wr *last = wr;
        while (last->next && !is_local_wr(last->next))
            last = last->next;
        // Cut the list after the run for the command, then mend it.
        ibv_send_wr *rest = std::exchange(last->next, nullptr);
        count(kSendWrs, list_length(wr));
        count(kCmdPostSend);
        const int ret = ibv_cmd_post_send(qp, wr, bad_wr);
        last->next = rest;
        if (ret)
            return fail(ret);
        wr = rest;
    }
    return 0;
}

// --- Extended QPs: the ibv_wr_* calls batch ibv_send_wr for POST_SEND --------

// The opcodes the kernel executes, per QP type.
constexpr uint64_t kRcSendOps =
    IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_SEND_WITH_INV |
    IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |
    IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
    IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV;
constexpr uint64_t kUcSendOps = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
                                IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
constexpr uint64_t kUdSendOps = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
// create_qp_ex() comp_mask bits we honour. CREATE_FLAGS only with no flag set.
constexpr uint32_t kQpInitAttrMask =
    IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;

void record_error(Qp *qp, int err) noexcept {
    if (!qp->batch_error)
        qp->batch_error = err;
}

// Starts a new request carrying the qp_ex's current wr_id and wr_flags, or
// returns null after recording an error: the opcode was not requested at
// creation (the API requires it), or the batch is longer than the queue.
ibv_send_wr *start_wr(ibv_qp_ex *qpx, ibv_wr_opcode opcode, uint64_t send_op) noexcept {
    Qp *qp = to_qp(qpx);
    if (!(qp->send_ops_flags & send_op)) {
        record_error(qp, EOPNOTSUPP);
        return nullptr;
    }
    if (qp->count == qp->max_wr) {
        record_error(qp, ENOMEM);
        return nullptr;
    }
    ibv_send_wr *wr = &qp->wrs[qp->count];
    *wr = ibv_send_wr{};
    if (qp->streams)
        qp->streams[qp->count] = 0;
    wr->wr_id = qpx->wr_id;
    wr->send_flags = qpx->wr_flags;
    wr->opcode = opcode;
    wr->sg_list = &qp->sges[size_t{qp->count} * qp->max_sge];
    if (qp->count)
        qp->wrs[qp->count - 1].next = wr;
    ++qp->count;
    return wr;
}

// The request the wr_set_* calls apply to: the last one started.
ibv_send_wr *current_wr(ibv_qp_ex *qpx) noexcept {
    Qp *qp = to_qp(qpx);
    if (!qp->count) {
        record_error(qp, EINVAL);
        return nullptr;
    }
    return &qp->wrs[qp->count - 1];
}

void wr_start(ibv_qp_ex *qpx) noexcept {
    Qp *qp = to_qp(qpx);
    qp->count = 0;
    qp->batch_error = 0;
}

void wr_abort(ibv_qp_ex *qpx) noexcept {
    wr_start(qpx); // drop the batch
}

int wr_complete(ibv_qp_ex *qpx) noexcept {
    Qp *qp = to_qp(qpx);
    const uint32_t count = std::exchange(qp->count, 0);
    if (int err = std::exchange(qp->batch_error, 0))
        return fail(err);
    if (!count)
        return 0;
    ibv_send_wr *bad_wr = nullptr;
    const int ret = qp->nstreams ? post_send_ring(&qp->vqp.qp, qp->wrs, &bad_wr, qp->streams)
                                 : post_send(&qp->vqp.qp, qp->wrs, &bad_wr);
    return ret ? fail(ret) : 0;
}

void wr_send(ibv_qp_ex *qpx) noexcept {
    start_wr(qpx, IBV_WR_SEND, IBV_QP_EX_WITH_SEND);
}

void wr_send_imm(ibv_qp_ex *qpx, __be32 imm_data) noexcept {
    if (ibv_send_wr *wr = start_wr(qpx, IBV_WR_SEND_WITH_IMM, IBV_QP_EX_WITH_SEND_WITH_IMM))
        wr->imm_data = imm_data;
}

void wr_send_inv(ibv_qp_ex *qpx, uint32_t invalidate_rkey) noexcept {
    if (ibv_send_wr *wr = start_wr(qpx, IBV_WR_SEND_WITH_INV, IBV_QP_EX_WITH_SEND_WITH_INV))
        wr->invalidate_rkey = invalidate_rkey;
}

void set_rdma(ibv_send_wr *p, uint32_t rkey, uint64_t remote_addr) noexcept {
    if (!p)
        return;
    p->wr.rdma.rkey = rkey;
    p->wr.rdma.remote_addr = remote_addr;
}

void wr_rdma_write(ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr) noexcept {
    set_rdma(start_wr(qpx, IBV_WR_RDMA_WRITE, IBV_QP_EX_WITH_RDMA_WRITE), rkey, remote_addr);
}

void wr_rdma_write_imm(ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
                       __be32 imm_data) noexcept {
    ibv_send_wr *p = start_wr(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM);
    set_rdma(p, rkey, remote_addr);
    if (p)
        p->imm_data = imm_data;
}

void wr_rdma_read(ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr) noexcept {
    set_rdma(start_wr(qpx, IBV_WR_RDMA_READ, IBV_QP_EX_WITH_RDMA_READ), rkey, remote_addr);
}

void set_atomic(ibv_send_wr *p, uint32_t rkey, uint64_t remote_addr, uint64_t compare_add,
                uint64_t swap) noexcept {
    if (!p)
        return;
    p->wr.atomic.rkey = rkey;
    p->wr.atomic.remote_addr = remote_addr;
    p->wr.atomic.compare_add = compare_add;
    p->wr.atomic.swap = swap;
}

void wr_atomic_cmp_swp(ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr, uint64_t compare,
                       uint64_t swap) noexcept {
    set_atomic(start_wr(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP), rkey,
               remote_addr, compare, swap);
}

void wr_atomic_fetch_add(ibv_qp_ex *qpx, uint32_t rkey, uint64_t remote_addr,
                         uint64_t add) noexcept {
    set_atomic(start_wr(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD),
               rkey, remote_addr, add, 0);
}

void wr_set_ud_addr(ibv_qp_ex *qpx, ibv_ah *ah, uint32_t remote_qpn,
                    uint32_t remote_qkey) noexcept {
    if (ibv_send_wr *p = current_wr(qpx)) {
        p->wr.ud.ah = ah;
        p->wr.ud.remote_qpn = remote_qpn;
        p->wr.ud.remote_qkey = remote_qkey;
    }
}

void wr_set_sge_list(ibv_qp_ex *qpx, size_t num_sge, const ibv_sge *sg_list) noexcept {
    ibv_send_wr *wr = current_wr(qpx);
    if (!wr)
        return;
    Qp *qp = to_qp(qpx);
    if (num_sge > qp->max_sge) {
        record_error(qp, EINVAL);
        return;
    }
    std::copy_n(sg_list, num_sge, wr->sg_list);
    wr->num_sge = int(num_sge);
}

void wr_set_sge(ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length) noexcept {
    const ibv_sge sge{addr, length, lkey};
    wr_set_sge_list(qpx, 1, &sge);
}

void wr_set_inline_data_list(ibv_qp_ex *qpx, size_t num_buf,
                             const ibv_data_buf *buf_list) noexcept {
    ibv_send_wr *wr = current_wr(qpx);
    if (!wr)
        return;
    // The kernel copies inline data at POST_SEND; until then we keep a copy
    // (posted as one SGE), since the caller may reuse its buffers at once.
    Qp *qp = to_qp(qpx);
    uint8_t *start = &qp->inline_data[size_t(wr - qp->wrs) * qp->max_inline];
    size_t length = 0;
    for (size_t i = 0; i < num_buf; ++i) {
        if (buf_list[i].length > qp->max_inline - length) {
            record_error(qp, EINVAL);
            return;
        }
        std::memcpy(start + length, buf_list[i].addr, buf_list[i].length);
        length += buf_list[i].length;
    }
    wr->sg_list[0] = ibv_sge{reinterpret_cast<uintptr_t>(start), uint32_t(length), 0};
    wr->num_sge = length ? 1 : 0;
    wr->send_flags |= IBV_SEND_INLINE;
}

void wr_set_inline_data(ibv_qp_ex *qpx, void *addr, size_t length) noexcept {
    const ibv_data_buf buf{addr, length};
    wr_set_inline_data_list(qpx, 1, &buf);
}

void wr_bind_mw(ibv_qp_ex *qpx, ibv_mw *mw, uint32_t rkey, const ibv_mw_bind_info *info) noexcept {
    if (ibv_send_wr *wr = start_wr(qpx, IBV_WR_BIND_MW, IBV_QP_EX_WITH_BIND_MW)) {
        wr->bind_mw.mw = mw;
        wr->bind_mw.rkey = rkey;
        wr->bind_mw.bind_info = *info;
    }
}

void wr_local_inv(ibv_qp_ex *qpx, uint32_t invalidate_rkey) noexcept {
    if (ibv_send_wr *wr = start_wr(qpx, IBV_WR_LOCAL_INV, IBV_QP_EX_WITH_LOCAL_INV))
        wr->invalidate_rkey = invalidate_rkey;
}

// Verbs the kernel does not execute: the batch then fails at wr_complete().
void record_unsupported(ibv_qp_ex *qpx) noexcept {
    record_error(to_qp(qpx), EOPNOTSUPP);
}
void wr_send_tso(ibv_qp_ex *qpx, void *, uint16_t, uint16_t) noexcept {
    record_unsupported(qpx);
}
void wr_set_xrc_srqn(ibv_qp_ex *qpx, uint32_t) noexcept {
    record_unsupported(qpx);
}
void wr_atomic_write(ibv_qp_ex *qpx, uint32_t, uint64_t, const void *) noexcept {
    record_unsupported(qpx);
}

void install_wr_ops(ibv_qp_ex *qpx) noexcept {
    qpx->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
    qpx->wr_atomic_fetch_add = wr_atomic_fetch_add;
    qpx->wr_bind_mw = wr_bind_mw;
    qpx->wr_local_inv = wr_local_inv;
    qpx->wr_rdma_read = wr_rdma_read;
    qpx->wr_rdma_write = wr_rdma_write;
    qpx->wr_rdma_write_imm = wr_rdma_write_imm;
    qpx->wr_send = wr_send;
    qpx->wr_send_imm = wr_send_imm;
    qpx->wr_send_inv = wr_send_inv;
    qpx->wr_send_tso = wr_send_tso;
    qpx->wr_set_ud_addr = wr_set_ud_addr;
    qpx->wr_set_xrc_srqn = wr_set_xrc_srqn;
    qpx->wr_set_inline_data = wr_set_inline_data;
    qpx->wr_set_inline_data_list = wr_set_inline_data_list;
    qpx->wr_set_sge = wr_set_sge;
    qpx->wr_set_sge_list = wr_set_sge_list;
    qpx->wr_start = wr_start;
    qpx->wr_complete = wr_complete;
    qpx->wr_abort = wr_abort;
    qpx->wr_atomic_write = wr_atomic_write;
}

// Room for a batch as long as the send queue granted by the kernel.
int alloc_batch(Qp *qp, const ibv_qp_cap &cap) noexcept {
    qp->max_wr = std::max(cap.max_send_wr, 1u);
    qp->max_sge = std::max(cap.max_send_sge, 1u);
    qp->max_inline = cap.max_inline_data;
    CPtr<ibv_send_wr> wrs(static_cast<ibv_send_wr *>(std::calloc(qp->max_wr, sizeof(ibv_send_wr))));
    CPtr<ibv_sge> sges(
        static_cast<ibv_sge *>(std::calloc(size_t{qp->max_wr} * qp->max_sge, sizeof(ibv_sge))));
    CPtr<uint8_t> inline_data(
        static_cast<uint8_t *>(std::calloc(size_t{qp->max_wr} * qp->max_inline + 1, 1)));
    CPtr<uint16_t> streams(qp->nstreams
                               ? static_cast<uint16_t *>(std::calloc(qp->max_wr, sizeof(uint16_t)))
                               : nullptr);
    if (!wrs || !sges || !inline_data || (qp->nstreams && !streams))
        return ENOMEM;
    qp->streams = streams.release();
    qp->wrs = wrs.release();
    qp->sges = sges.release();
    qp->inline_data = inline_data.release();
    return 0;
}

// ibv_create_qp_ex(): what the kernel and the batch above can honour, and
// EOPNOTSUPP for the rest (create flags, TSO, XRC, other QP types' send ops),
// as rxe answers.
ibv_qp *create_qp_ex_streams(ibv_qp_init_attr_ex *attr, uint32_t streams) noexcept {
    if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd)
        return fail_null<ibv_qp>(EINVAL);
    if (attr->comp_mask & ~kQpInitAttrMask)
        return fail_null<ibv_qp>(EOPNOTSUPP);
    if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr->create_flags)
        return fail_null<ibv_qp>(EOPNOTSUPP);
    uint64_t send_ops = 0;
    if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
        const uint64_t supported = attr->qp_type == IBV_QPT_RC   ? kRcSendOps
                                   : attr->qp_type == IBV_QPT_UC ? kUcSendOps
                                   : attr->qp_type == IBV_QPT_UD ? kUdSendOps
                                                                 : 0;
        send_ops = attr->send_ops_flags;
        if (!send_ops || (send_ops & ~supported))
            return fail_null<ibv_qp>(EOPNOTSUPP);
    }

    ibv_qp_init_attr base{};
    base.qp_context = attr->qp_context;
    base.send_cq = attr->send_cq;
    base.recv_cq = attr->recv_cq;
    base.srq = attr->srq;
    base.cap = attr->cap;
    base.qp_type = attr->qp_type;
    base.sq_sig_all = attr->sq_sig_all;
    QpPtr qp = create_kernel_qp(attr->pd, &base, streams);
    if (!qp)
        return nullptr;
    attr->cap = base.cap;
    if (send_ops) {
        if (int ret = alloc_batch(qp.get(), base.cap)) {
            ibv_cmd_destroy_qp(&qp->vqp.qp);
            return fail_null<ibv_qp>(ret);
        }
        qp->send_ops_flags = send_ops;
        qp->vqp.comp_mask = METAROCE_VERBS_QP_EX;
        install_wr_ops(&qp->vqp.qp_ex);
    }
    return &qp.release()->vqp.qp;
}

ibv_qp *create_qp_ex(ibv_context * /*ctx*/, ibv_qp_init_attr_ex *attr) noexcept {
    return create_qp_ex_streams(attr, 0);
}

// --- Direct verbs (mrcdv.h) ----------------------------------------------------

bool is_metaroce(const ibv_context *ctx) noexcept {
    return ctx && ctx->device &&
           reinterpret_cast<const verbs_device *>(ctx->device)->ops == &kDeviceOps;
}

// The caller's struct may be older (shorter) than ours: fill what fits.
int query_device_dv(ibv_context *ctx, mrcdv_device_attr *attr, uint32_t inlen) noexcept {
    if (!is_metaroce(ctx))
        return EOPNOTSUPP;
    if (!attr || inlen < offsetof(mrcdv_device_attr, reserved))
        return EINVAL;
    mrcdv_device_attr a{};
    a.max_streams = METAROCE_MAX_STREAMS;
    std::memcpy(attr, &a, std::min<size_t>(inlen, sizeof(a)));
    return 0;
}

// Streams need the extended QP: its sends name them (mrcdv_wr_set_stream()).
ibv_qp *create_qp_dv(ibv_context *ctx, ibv_qp_init_attr_ex *attr, const mrcdv_qp_init_attr *mrc,
                     uint32_t inlen) noexcept {
    if (!is_metaroce(ctx))
        return fail_null<ibv_qp>(EOPNOTSUPP);
    if (!attr || !mrc || inlen < offsetof(mrcdv_qp_init_attr, reserved) || mrc->comp_mask ||
        (inlen >= sizeof(*mrc) && mrc->reserved) || mrc->streams > METAROCE_MAX_STREAMS)
        return fail_null<ibv_qp>(EINVAL);
    if (mrc->streams > 1 &&
        (attr->qp_type != IBV_QPT_RC || !(attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)))
        return fail_null<ibv_qp>(EINVAL);
    return create_qp_ex_streams(attr, mrc->streams > 1 ? mrc->streams : 0);
}

void wr_set_stream(ibv_qp_ex *qpx, uint16_t stream) noexcept {
    Qp *qp = to_qp(qpx);
    ibv_send_wr *wr = current_wr(qpx);
    if (!wr)
        return;
    if (!qp->streams || stream >= qp->nstreams) {
        if (stream)
            record_error(qp, EINVAL);
        return;
    }
    qp->streams[qp->count - 1] = stream;
}

int modify_qp(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask) noexcept {
    cmd::ModifyQp cmd{};
    if (int ret = ibv_cmd_modify_qp(qp, attr, attr_mask, &cmd, sizeof(cmd)))
        return fail(ret);
    return 0;
}

int query_qp(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask, ibv_qp_init_attr *init_attr) noexcept {
    cmd::QueryQp cmd{};
    if (int ret = ibv_cmd_query_qp(qp, attr, attr_mask, init_attr, &cmd, sizeof(cmd)))
        return fail(ret);
    return 0;
}

int destroy_qp(ibv_qp *qp) noexcept {
    const uint32_t qpn = qp->qp_num;
    ibv_cq *send_cq = qp->send_cq, *recv_cq = qp->recv_cq;
    if (int ret = ibv_cmd_destroy_qp(qp))
        return fail(ret); // the QP stays valid, so that the caller may retry
    // As with the command path, whose kernel cleans its CQs of them, no
    // completion of a destroyed QP is polled after.
    if (send_cq)
        clean_cq(to_cq(send_cq), qpn);
    if (recv_cq && recv_cq != send_cq)
        clean_cq(to_cq(recv_cq), qpn);
    QpPtr release(to_qp(qp));
    return 0;
}

// --- Shared receive queues ---------------------------------------------------

using CreateSrqCmd = WithDriverData<cmd::CreateSrq, metaroce_create_srq_cmd>;
using CreateSrqResp = WithDriverData<ib_uverbs_create_srq_resp, metaroce_create_srq_resp>;

Srq *to_srq(ibv_srq *srq) noexcept {
    static_assert(offsetof(Srq, srq) == 0);
    return reinterpret_cast<Srq *>(srq);
}

ibv_srq *create_srq(ibv_pd *pd, ibv_srq_init_attr *attr) noexcept {
    auto srq = zalloc<Srq>();
    if (!srq)
        return fail_null<ibv_srq>(ENOMEM);
    CreateSrqCmd cmd;
    metaroce_create_srq_cmd ask{};
    ask.flags = METAROCE_SRQ_RING;
    cmd.set_driver(ask);
    CreateSrqResp resp;
    if (int ret = ibv_cmd_create_srq(pd, &srq->srq, attr, cmd.base(), sizeof(cmd), resp.base(),
                                     sizeof(resp)))
        return fail_null<ibv_srq>(ret);
    const metaroce_create_srq_resp r = resp.driver();
    const RecvRingGrant grant{bool(r.flags & METAROCE_SRQ_RING),
                              r.mmap_offset,
                              r.mmap_size,
                              r.entries,
                              r.stride,
                              r.max_sge};
    if (!map_recv_ring(srq->rq, pd->context->cmd_fd, grant, attr->attr.max_wr, "SRQ",
                       srq->srq.handle)) {
        const int err = errno;
        ibv_cmd_destroy_srq(&srq->srq);
        return fail_null<ibv_srq>(err);
    }
    return &srq.release()->srq;
}

// A mapped SRQ keeps its ring while max_wr fits in its slots; grown past
// them, it posts by command (the kernel took the ring's WQEs first).
int modify_srq(ibv_srq *ibsrq, ibv_srq_attr *attr, int attr_mask) noexcept {
    Srq *srq = to_srq(ibsrq);
    cmd::ModifySrq cmd{};
    if (int ret = ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd, sizeof(cmd)))
        return fail(ret);
    if (srq->rq.ring && (attr_mask & IBV_SRQ_MAX_WR)) {
        if (attr->max_wr > srq->rq.entries) {
            debug("SRQ %u: %u WRs outgrow its ring, receives by command", ibsrq->handle,
                  attr->max_wr);
            unmap_recv_ring(srq->rq);
        } else {
            pthread_spin_lock(&srq->rq.lock);
            srq->rq.depth = attr->max_wr;
            pthread_spin_unlock(&srq->rq.lock);
        }
    }
    return 0;
}

int post_srq_recv(ibv_srq *ibsrq, ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept {
    Srq *srq = to_srq(ibsrq);
    count(kRecvWrs, list_length(wr));
    if (!srq->rq.ring) {
        count(kCmdPostSrqRecv);
        return ibv_cmd_post_srq_recv(ibsrq, wr, bad_wr);
    }
    bool doorbell = false;
    const int err = post_to_ring(srq->rq, wr, bad_wr, &doorbell);
    return err ? fail(err) : 0;
}

int query_srq(ibv_srq *srq, ibv_srq_attr *attr) noexcept {
    cmd::QuerySrq cmd{};
    if (int ret = ibv_cmd_query_srq(srq, attr, &cmd, sizeof(cmd)))
        return fail(ret);
    return 0;
}

int destroy_srq(ibv_srq *ibsrq) noexcept {
    Srq *srq = to_srq(ibsrq);
    if (int ret = ibv_cmd_destroy_srq(ibsrq))
        return fail(ret);
    unmap_recv_ring(srq->rq);
    CPtr<Srq> release(srq);
    return 0;
}

// --- Address handles ----------------------------------------------------------

ibv_ah *create_ah(ibv_pd *pd, ibv_ah_attr *attr) noexcept {
    auto ah = zalloc<ibv_ah>();
    if (!ah)
        return fail_null<ibv_ah>(ENOMEM);
    ib_uverbs_create_ah_resp resp{};
    if (int ret = ibv_cmd_create_ah(pd, ah.get(), attr, &resp, sizeof(resp)))
        return fail_null<ibv_ah>(ret);
    return ah.release();
}

int destroy_ah(ibv_ah *ah) noexcept {
    return finish_destroy(ibv_cmd_destroy_ah(ah), ah);
}

} // namespace

const verbs_match_ent kMatchTable[2] = {
    // Matching by the private driver id only (see uapi/metaroce-abi.h). No
    // name entry: a name match would also claim any device called
    // "metaroce*", and driver.h discourages it.
    {.driver_data = nullptr,
     .u = {.driver_id = METAROCE_DRIVER_ID},
     .vendor = 0,
     .device = 0,
     .kind = METAROCE_MATCH_DRIVER_ID},
    {}, // METAROCE_MATCH_SENTINEL
};

const verbs_device_ops kDeviceOps = {
    .name = METAROCE_LINK_TYPE,
    .match_min_abi_version = METAROCE_UVERBS_ABI_VERSION,
    .match_max_abi_version = METAROCE_UVERBS_ABI_VERSION,
    .match_table = kMatchTable,
    .static_providers = nullptr,
    .match_device = match_device,
    .alloc_context = alloc_context,
    .import_context = nullptr,
    .alloc_device = alloc_device,
    .uninit_device = uninit_device,
};

// Designated initializers must follow declaration order in C++, so this
// table is also a compile-time check that it lists slots alphabetically.
// Null slots get libibverbs' stubs, which fail with EOPNOTSUPP (the event
// hooks async_event and cq_event do nothing).
const verbs_context_ops kContextOps = {
    .alloc_mw = alloc_mw,
    .alloc_pd = alloc_pd,
    .attach_mcast = ibv_cmd_attach_mcast,
    .bind_mw = bind_mw,
    .create_ah = create_ah,
    .create_cq = create_cq,
    .create_cq_ex = create_cq_ex,
    .create_qp = create_qp,
    .create_qp_ex = create_qp_ex,
    .create_srq = create_srq,
    .dealloc_mw = dealloc_mw,
    .dealloc_pd = dealloc_pd,
    .dereg_mr = dereg_mr,
    .destroy_ah = destroy_ah,
    .destroy_cq = destroy_cq,
    .destroy_qp = destroy_qp,
    .destroy_srq = destroy_srq,
    .detach_mcast = ibv_cmd_detach_mcast,
    .free_context = free_context,
    .modify_qp = modify_qp,
    .modify_srq = modify_srq,
    .poll_cq = poll_cq,
    .post_recv = post_recv,
    .post_send = post_send,
    .post_srq_recv = post_srq_recv,
    .query_device_ex = query_device_ex,
    .query_port = query_port,
    .query_qp = query_qp,
    .query_srq = query_srq,
    .reg_mr = reg_mr,
    .req_notify_cq = req_notify_cq,
    .resize_cq = resize_cq,
};

bool env_enabled(const char *name) noexcept {
    const char *v = std::getenv(name);
    return v && *v && !(v[0] == '0' && v[1] == '\0');
}

bool debug_enabled() noexcept {
    return env_enabled("METAROCE_DEBUG");
}

void debug(const char *fmt, ...) noexcept {
    if (!debug_enabled())
        return;
    const int saved_errno = errno;
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    std::fprintf(stderr, "metaroce: %s\n", line);
    errno = saved_errno;
}

} // namespace metaroce

// The exported direct verbs: extern "C", the only symbols the provider
// exports (metaroce.map).
#define MRCDV_EXPORT extern "C" __attribute__((visibility("default")))

MRCDV_EXPORT int mrcdv_query_device(ibv_context *context, mrcdv_device_attr *attr, uint32_t inlen) {
    return metaroce::query_device_dv(context, attr, inlen);
}

MRCDV_EXPORT ibv_qp *mrcdv_create_qp(ibv_context *context, ibv_qp_init_attr_ex *attr,
                                     mrcdv_qp_init_attr *mrc_attr, uint32_t inlen) {
    return metaroce::create_qp_dv(context, attr, mrc_attr, inlen);
}

MRCDV_EXPORT uint32_t mrcdv_qp_streams(ibv_qp *qp) {
    if (!qp || !metaroce::is_metaroce(qp->context))
        return 1;
    const uint32_t n = metaroce::to_qp(qp)->nstreams;
    return n ? n : 1;
}

MRCDV_EXPORT void mrcdv_wr_set_stream(ibv_qp_ex *qpx, uint16_t stream) {
    metaroce::wr_set_stream(qpx, stream);
}

MRCDV_EXPORT uint16_t mrcdv_wc_read_stream(ibv_cq_ex *cq) {
    return uint16_t(metaroce::current_wc(cq).slid);
}
