// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// soft-MetaRoCE rdma-core provider.
//
// Every verb is kernel-mediated: each one is a uverbs write()/ioctl command
// built by libibverbs' ibv_cmd_* helpers, with no driver-private udata and
// no mmap()ed queues. The provider only allocates the user-visible objects
// and translates errors into the conventions libibverbs callers expect:
//   * verbs returning a pointer return null and set errno;
//   * verbs returning int return 0 or a positive errno value (errno is set
//     too), except poll_cq, which returns a count or -1 with errno set.
#include "metaroce.h"

#include "metaroce-abi.h"

#include <cerrno>
#include <cstdarg>
#include <cstdio>

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
        verbs_uninit_context(&ctx->vctx);
        std::free(ctx);
    }
};
using ContextPtr = std::unique_ptr<Context, ContextRelease>;

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

    cmd::GetContext cmd{};
    ib_uverbs_get_context_resp resp{};
    if (int ret = ibv_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd), &resp, sizeof(resp))) {
        debug("GET_CONTEXT on %s failed: errno %d", ibdev->name, ret);
        ctx.reset(); // closes cmd_fd; then report the command's error
        return fail_null<verbs_context>(ret);
    }
    verbs_set_ops(&ctx->vctx, &kContextOps);
    debug("opened a context on %s", ibdev->name);
    return &ctx.release()->vctx;
}

void free_context(ibv_context *ibctx) noexcept {
    ContextPtr release(to_context(ibctx));
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

ibv_mr *reg_mr(ibv_pd *pd, void *addr, size_t length, uint64_t hca_va, int access) noexcept {
    auto vmr = zalloc<verbs_mr>();
    if (!vmr)
        return fail_null<ibv_mr>(ENOMEM);
    cmd::RegMr cmd{};
    ib_uverbs_reg_mr_resp resp{};
    if (int ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr.get(), &cmd, sizeof(cmd),
                                 &resp, sizeof(resp)))
        return fail_null<ibv_mr>(ret);
    return &vmr.release()->mr;
}

int dereg_mr(verbs_mr *vmr) noexcept {
    return finish_destroy(ibv_cmd_dereg_mr(vmr), vmr);
}

// --- Completion queues --------------------------------------------------------

ibv_cq *create_cq(ibv_context *ctx, int cqe, ibv_comp_channel *channel, int comp_vector) noexcept {
    auto cq = zalloc<ibv_cq>();
    if (!cq)
        return fail_null<ibv_cq>(ENOMEM);
    cmd::CreateCq cmd{};
    ib_uverbs_create_cq_resp resp{};
    if (int ret = ibv_cmd_create_cq(ctx, cqe, channel, comp_vector, cq.get(), &cmd, sizeof(cmd),
                                    &resp, sizeof(resp)))
        return fail_null<ibv_cq>(ret);
    return cq.release();
}

int destroy_cq(ibv_cq *cq) noexcept {
    return finish_destroy(ibv_cmd_destroy_cq(cq), cq);
}

int resize_cq(ibv_cq *cq, int cqe) noexcept {
    cmd::ResizeCq cmd{};
    ib_uverbs_resize_cq_resp resp{};
    if (int ret = ibv_cmd_resize_cq(cq, cqe, &cmd, sizeof(cmd), &resp, sizeof(resp)))
        return fail(ret);
    return 0;
}

// --- Queue pairs ------------------------------------------------------------

verbs_qp *to_vqp(ibv_qp *qp) noexcept {
    static_assert(offsetof(verbs_qp, qp) == 0);
    return reinterpret_cast<verbs_qp *>(qp);
}

ibv_qp *create_qp(ibv_pd *pd, ibv_qp_init_attr *attr) noexcept {
    // A verbs_qp with comp_mask 0: ibv_qp_to_qp_ex() then reports no qp_ex.
    auto vqp = zalloc<verbs_qp>();
    if (!vqp)
        return fail_null<ibv_qp>(ENOMEM);
    cmd::CreateQp cmd{};
    ib_uverbs_create_qp_resp resp{};
    if (int ret = ibv_cmd_create_qp(pd, &vqp->qp, attr, &cmd, sizeof(cmd), &resp, sizeof(resp)))
        return fail_null<ibv_qp>(ret);
    return &vqp.release()->qp;
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
    return finish_destroy(ibv_cmd_destroy_qp(qp), to_vqp(qp));
}

// --- Shared receive queues ---------------------------------------------------

ibv_srq *create_srq(ibv_pd *pd, ibv_srq_init_attr *attr) noexcept {
    auto srq = zalloc<ibv_srq>();
    if (!srq)
        return fail_null<ibv_srq>(ENOMEM);
    cmd::CreateSrq cmd{};
    ib_uverbs_create_srq_resp resp{};
    if (int ret = ibv_cmd_create_srq(pd, srq.get(), attr, &cmd, sizeof(cmd), &resp, sizeof(resp)))
        return fail_null<ibv_srq>(ret);
    return srq.release();
}

int modify_srq(ibv_srq *srq, ibv_srq_attr *attr, int attr_mask) noexcept {
    cmd::ModifySrq cmd{};
    if (int ret = ibv_cmd_modify_srq(srq, attr, attr_mask, &cmd, sizeof(cmd)))
        return fail(ret);
    return 0;
}

int query_srq(ibv_srq *srq, ibv_srq_attr *attr) noexcept {
    cmd::QuerySrq cmd{};
    if (int ret = ibv_cmd_query_srq(srq, attr, &cmd, sizeof(cmd)))
        return fail(ret);
    return 0;
}

int destroy_srq(ibv_srq *srq) noexcept {
    return finish_destroy(ibv_cmd_destroy_srq(srq), srq);
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
    .alloc_pd = alloc_pd,
    .attach_mcast = ibv_cmd_attach_mcast,
    .create_ah = create_ah,
    .create_cq = create_cq,
    .create_qp = create_qp,
    .create_srq = create_srq,
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
    .poll_cq = ibv_cmd_poll_cq,
    .post_recv = ibv_cmd_post_recv,
    .post_send = ibv_cmd_post_send,
    .post_srq_recv = ibv_cmd_post_srq_recv,
    .query_device_ex = query_device_ex,
    .query_port = query_port,
    .query_qp = query_qp,
    .query_srq = query_srq,
    .reg_mr = reg_mr,
    .req_notify_cq = ibv_cmd_req_notify_cq,
    .resize_cq = resize_cq,
};

bool debug_enabled() noexcept {
    const char *v = std::getenv("METAROCE_DEBUG");
    return v && *v && !(v[0] == '0' && v[1] == '\0');
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
