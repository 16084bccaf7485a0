// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Checks our declaration of libibverbs' private ABI (provider/verbs_private.h)
// against the real libibverbs 44 at run time:
//  * every private function we declare resolves at IBVERBS_PRIVATE_34;
//  * a context built by the real _verbs_init_and_alloc_context() and given a
//    table of per-slot sentinels by the real verbs_set_ops() routes every
//    public verb to the sentinel of the slot with the same name, with the
//    caller's arguments. Any slip in the member order of our
//    verbs_context_ops makes some public verb land in the wrong sentinel;
//  * the verbs_device, verbs_device_ops, verbs_mr and verbs_qp fields that
//    libibverbs reads or writes are where we declare them.
#include "metaroce.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <set>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

// --- Sentinels ---------------------------------------------------------------

// Every slot of verbs_context_ops (the test does not rely on their order).
// clang-format off
#define CONTEXT_OPS(X) \
    X(advise_mr) \
    X(alloc_dm) \
    X(alloc_mw) \
    X(alloc_null_mr) \
    X(alloc_parent_domain) \
    X(alloc_pd) \
    X(alloc_td) \
    X(async_event) \
    X(attach_counters_point_flow) \
    X(attach_mcast) \
    X(bind_mw) \
    X(close_xrcd) \
    X(cq_event) \
    X(create_ah) \
    X(create_counters) \
    X(create_cq) \
    X(create_cq_ex) \
    X(create_flow) \
    X(create_flow_action_esp) \
    X(create_qp) \
    X(create_qp_ex) \
    X(create_rwq_ind_table) \
    X(create_srq) \
    X(create_srq_ex) \
    X(create_wq) \
    X(dealloc_mw) \
    X(dealloc_pd) \
    X(dealloc_td) \
    X(dereg_mr) \
    X(destroy_ah) \
    X(destroy_counters) \
    X(destroy_cq) \
    X(destroy_flow) \
    X(destroy_flow_action) \
    X(destroy_qp) \
    X(destroy_rwq_ind_table) \
    X(destroy_srq) \
    X(destroy_wq) \
    X(detach_mcast) \
    X(free_context) \
    X(free_dm) \
    X(get_srq_num) \
    X(import_dm) \
    X(import_mr) \
    X(import_pd) \
    X(modify_cq) \
    X(modify_flow_action_esp) \
    X(modify_qp) \
    X(modify_qp_rate_limit) \
    X(modify_srq) \
    X(modify_wq) \
    X(open_qp) \
    X(open_xrcd) \
    X(poll_cq) \
    X(post_recv) \
    X(post_send) \
    X(post_srq_ops) \
    X(post_srq_recv) \
    X(query_device_ex) \
    X(query_ece) \
    X(query_port) \
    X(query_qp) \
    X(query_qp_data_in_order) \
    X(query_rt_values) \
    X(query_srq) \
    X(read_counters) \
    X(reg_dm_mr) \
    X(reg_dmabuf_mr) \
    X(reg_mr) \
    X(req_notify_cq) \
    X(rereg_mr) \
    X(resize_cq) \
    X(set_ece) \
    X(unimport_dm) \
    X(unimport_mr) \
    X(unimport_pd)
// clang-format on

enum class Slot {
#define X(name) name,
    CONTEXT_OPS(X)
#undef X
};

constexpr const char *kSlotNames[] = {
#define X(name) #name,
    CONTEXT_OPS(X)
#undef X
};
constexpr size_t kSlotCount = std::size(kSlotNames);

const char *slot_name(Slot s) {
    return kSlotNames[static_cast<size_t>(s)];
}

template <typename T> uintptr_t word(T v) {
    if constexpr (std::is_null_pointer_v<T>)
        return 0;
    else if constexpr (std::is_pointer_v<T>)
        return reinterpret_cast<uintptr_t>(v);
    else
        return static_cast<uintptr_t>(v);
}

template <typename... T> std::vector<uintptr_t> args(T... v) {
    return {word(v)...};
}

struct Call {
    Slot slot;
    std::vector<uintptr_t> args;
};

std::vector<Call> g_calls; // sentinel calls since the last check
std::set<Slot> g_seen;     // every slot reached so far
uintptr_t g_return = 0;    // what the next sentinel returns
constexpr int kTestDriverId = 0x5a5a;

template <Slot S, typename Fn> struct Sentinel;
template <Slot S, typename R, typename... A> struct Sentinel<S, R (*)(A...)> {
    static R fn(A... a) noexcept {
        g_calls.push_back({S, {word(a)...}});
        g_seen.insert(S);
        if constexpr (std::is_pointer_v<R>)
            return reinterpret_cast<R>(g_return);
        else if constexpr (!std::is_void_v<R>)
            return static_cast<R>(g_return);
    }
};

verbs_context_ops make_sentinel_ops() {
    verbs_context_ops ops{};
#define X(name) ops.name = &Sentinel<Slot::name, decltype(ops.name)>::fn;
    CONTEXT_OPS(X)
#undef X
    return ops;
}
const verbs_context_ops g_sentinel_ops = make_sentinel_ops();

std::vector<uintptr_t> slot_words(const verbs_context_ops &ops) {
    std::vector<uintptr_t> w(sizeof(ops) / sizeof(uintptr_t));
    std::memcpy(w.data(), &ops, sizeof(ops));
    return w;
}

// Expects exactly one sentinel call since the last check.
void expect_call(Slot slot, const std::vector<uintptr_t> &expected) {
    ASSERT_EQ(g_calls.size(), 1u) << "expected one call to " << slot_name(slot);
    EXPECT_STREQ(slot_name(g_calls[0].slot), slot_name(slot));
    EXPECT_EQ(g_calls[0].args, expected) << "arguments of " << slot_name(slot);
    g_calls.clear();
}

// --- A device and context made by the real libibverbs -------------------------

// Driver context with the verbs_context at a non-zero offset, to check how
// _verbs_init_and_alloc_context() interprets context_offset.
struct TestContext {
    uint64_t head;
    verbs_context vctx;
};
constexpr uint64_t kHeadMagic = 0x6d657461726f6365;

struct AllocContextCall {
    ibv_device *device = nullptr;
    int cmd_fd = 0;
    void *private_data = nullptr;
};
AllocContextCall g_alloc_context_call;
std::vector<verbs_device *> g_uninit_device_calls;

verbs_context *sentinel_alloc_context(ibv_device *dev, int cmd_fd, void *private_data) noexcept {
    g_alloc_context_call = {dev, cmd_fd, private_data};
    // verbs_open_device() passes cmd_fd -1 for a device without sysfs. Use
    // /dev/null instead: libibverbs only probes it with one ioctl (ENOTTY).
    int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return nullptr;
    auto *tc = static_cast<TestContext *>(_verbs_init_and_alloc_context(
        dev, fd, sizeof(TestContext),
        reinterpret_cast<verbs_context *>(uintptr_t{offsetof(TestContext, vctx)}), kTestDriverId));
    if (!tc)
        return nullptr;
    tc->head = kHeadMagic;
    verbs_set_ops(&tc->vctx, &g_sentinel_ops);
    return &tc->vctx;
}

void record_uninit_device(verbs_device *dev) noexcept {
    g_uninit_device_calls.push_back(dev);
}

const verbs_device_ops kSentinelDeviceOps = {
    .name = "sentinel",
    .match_min_abi_version = 1,
    .match_max_abi_version = 1,
    .match_table = nullptr,
    .static_providers = nullptr,
    .match_device = nullptr,
    .alloc_context = sentinel_alloc_context,
    .import_context = nullptr,
    .alloc_device = nullptr,
    .uninit_device = record_uninit_device,
};

TestContext *test_context(verbs_context *vctx) {
    return reinterpret_cast<TestContext *>(reinterpret_cast<char *>(vctx) -
                                           offsetof(TestContext, vctx));
}

class SentinelContext : public ::testing::Test {
protected:
    void SetUp() override {
        dev_ = metaroce::zalloc<verbs_device>();
        ASSERT_TRUE(dev_);
        dev_->ops = &kSentinelDeviceOps;
        dev_->refcount = 1; // what libibverbs' try_driver() starts with
        // The public entry point: verbs_open_device() -> ops->alloc_context.
        ctx_ = ibv_open_device(&dev_->device);
        ASSERT_NE(ctx_, nullptr) << "errno " << errno;
        vctx_ = verbs_get_ctx(ctx_);
        ASSERT_NE(vctx_, nullptr);
        g_calls.clear();
        g_return = 0;
    }

    void TearDown() override {
        if (vctx_) {
            verbs_uninit_context(vctx_); // drops the device reference, closes fds
            std::free(test_context(vctx_));
        }
        EXPECT_EQ(dev_->refcount, 1);
        EXPECT_TRUE(g_uninit_device_calls.empty()); // refcount never reached 0
        g_calls.clear();
    }

    metaroce::CPtr<verbs_device> dev_;
    ibv_context *ctx_ = nullptr;
    verbs_context *vctx_ = nullptr;
};

// --- Tests ---------------------------------------------------------------------

TEST(PrivateAbi, DeclaredFunctionsResolveAtPrivateVersion) {
    void *lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(lib, nullptr) << dlerror();
    int n = 0;
#define X(name)                                                                                    \
    {                                                                                              \
        void *sym = dlvsym(lib, #name, METAROCE_VERBS_PRIVATE_VERSION);                            \
        EXPECT_NE(sym, nullptr) << #name;                                                          \
        EXPECT_EQ(sym, reinterpret_cast<void *>(&name)) << #name " binds elsewhere";               \
        ++n;                                                                                       \
    }
    METAROCE_VERBS_PRIVATE_SYMBOLS(X)
#undef X
    EXPECT_EQ(n, 33);
    // The versioned name of the registration entry point is ABI 34's.
    EXPECT_EQ(dlvsym(lib, "verbs_register_driver_34", "IBVERBS_PRIVATE_33"), nullptr);
    dlclose(lib);
}

TEST(PrivateAbi, SentinelTableFillsEverySlotDistinctly) {
    EXPECT_EQ(kSlotCount * sizeof(void *), sizeof(verbs_context_ops));
    const auto words = slot_words(g_sentinel_ops);
    ASSERT_EQ(words.size(), kSlotCount);
    EXPECT_EQ(std::count(words.begin(), words.end(), 0u), 0) << "a slot has no sentinel";
    EXPECT_EQ(std::set<uintptr_t>(words.begin(), words.end()).size(), kSlotCount);
}

TEST_F(SentinelContext, ContextIsInitialisedWhereWeSaidItIs) {
    EXPECT_EQ(g_alloc_context_call.device, &dev_->device);
    EXPECT_EQ(g_alloc_context_call.cmd_fd, -1); // no sysfs: no device node opened
    EXPECT_EQ(test_context(vctx_)->head, kHeadMagic);
    EXPECT_EQ(vctx_->sz, sizeof(verbs_context));
    EXPECT_EQ(ctx_->device, &dev_->device);
    EXPECT_EQ(ctx_->async_fd, -1);
    EXPECT_EQ(dev_->refcount, 2); // verbs_init_context() took a reference

    struct stat st {
    }, null_st{};
    ASSERT_EQ(fstat(ctx_->cmd_fd, &st), 0);
    ASSERT_EQ(stat("/dev/null", &null_st), 0);
    EXPECT_EQ(st.st_rdev, null_st.st_rdev);

    // verbs_set_ops() also fills the public ibv_context_ops: spot-check it.
    EXPECT_EQ(ctx_->ops.poll_cq, g_sentinel_ops.poll_cq);
    EXPECT_EQ(ctx_->ops.post_send, g_sentinel_ops.post_send);
    EXPECT_EQ(ctx_->ops.post_recv, g_sentinel_ops.post_recv);
    EXPECT_EQ(ctx_->ops.req_notify_cq, g_sentinel_ops.req_notify_cq);
    EXPECT_EQ(reinterpret_cast<void *>(ctx_->ops._compat_alloc_pd),
              reinterpret_cast<void *>(g_sentinel_ops.alloc_pd));
    EXPECT_EQ(vctx_->query_device_ex, g_sentinel_ops.query_device_ex);
}

TEST_F(SentinelContext, EveryPublicVerbReachesItsOwnSlot) {
    g_seen.clear();
    ibv_pd pd{};
    pd.context = ctx_;
    verbs_mr vmr{};
    vmr.mr.context = ctx_;
    vmr.mr.pd = &pd;
    verbs_qp vqp{};
    ibv_qp &qp = vqp.qp;
    qp.context = ctx_;
    qp.pd = &pd;
    ibv_cq cq{};
    cq.context = ctx_;
    ibv_srq srq{};
    srq.context = ctx_;

    // Device and port.
    ibv_device_attr_ex attr_ex{};
    EXPECT_EQ(ibv_query_device_ex(ctx_, nullptr, &attr_ex), 0);
    expect_call(Slot::query_device_ex, args(ctx_, nullptr, &attr_ex, sizeof(attr_ex)));
    ibv_device_attr attr{};
    EXPECT_EQ(ibv_query_device(ctx_, &attr), 0);
    expect_call(Slot::query_device_ex, args(ctx_, nullptr, &attr, sizeof(attr)));
    ibv_port_attr port_attr{};
    EXPECT_EQ(ibv_query_port(ctx_, 3, &port_attr), 0);
    expect_call(Slot::query_port, args(ctx_, 3, &port_attr));
    ibv_values_ex values{};
    EXPECT_EQ(ibv_query_rt_values_ex(ctx_, &values), 0);
    expect_call(Slot::query_rt_values, args(ctx_, &values));

    // Protection domains, thread and parent domains.
    g_return = word(&pd);
    EXPECT_EQ(ibv_alloc_pd(ctx_), &pd);
    expect_call(Slot::alloc_pd, args(ctx_));
    g_return = 0;
    EXPECT_EQ(ibv_dealloc_pd(&pd), 0);
    expect_call(Slot::dealloc_pd, args(&pd));
    ibv_parent_domain_init_attr pd_attr{};
    EXPECT_EQ(ibv_alloc_parent_domain(ctx_, &pd_attr), nullptr);
    expect_call(Slot::alloc_parent_domain, args(ctx_, &pd_attr));
    ibv_td_init_attr td_attr{};
    EXPECT_EQ(ibv_alloc_td(ctx_, &td_attr), nullptr);
    expect_call(Slot::alloc_td, args(ctx_, &td_attr));
    ibv_td td{};
    td.context = ctx_;
    EXPECT_EQ(ibv_dealloc_td(&td), 0);
    expect_call(Slot::dealloc_td, args(&td));
    EXPECT_EQ(ibv_import_pd(ctx_, 7), nullptr);
    expect_call(Slot::import_pd, args(ctx_, 7));
    ibv_unimport_pd(&pd);
    expect_call(Slot::unimport_pd, args(&pd));

    // Memory regions and windows.
    alignas(64) static char buf[256];
    g_return = word(&vmr.mr);
    EXPECT_EQ(ibv_reg_mr(&pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE), &vmr.mr);
    expect_call(Slot::reg_mr, args(&pd, buf, sizeof(buf), buf, IBV_ACCESS_LOCAL_WRITE));
    EXPECT_EQ(ibv_reg_dmabuf_mr(&pd, 0x100, 4096, 0x2000, 9, IBV_ACCESS_REMOTE_READ), &vmr.mr);
    expect_call(Slot::reg_dmabuf_mr, args(&pd, 0x100, 4096, 0x2000, 9, IBV_ACCESS_REMOTE_READ));
    g_return = 0;
    EXPECT_EQ(ibv_alloc_null_mr(&pd), nullptr);
    expect_call(Slot::alloc_null_mr, args(&pd));
    vmr.mr_type = METAROCE_MR_TYPE_MR;
    EXPECT_EQ(ibv_rereg_mr(&vmr.mr, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
                           IBV_ACCESS_REMOTE_WRITE),
              0);
    expect_call(Slot::rereg_mr, args(&vmr, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
                                     IBV_ACCESS_REMOTE_WRITE));
    EXPECT_EQ(ibv_dereg_mr(&vmr.mr), 0);
    expect_call(Slot::dereg_mr, args(&vmr));
    EXPECT_EQ(ibv_import_mr(&pd, 11), nullptr);
    expect_call(Slot::import_mr, args(&pd, 11));
    ibv_unimport_mr(&vmr.mr);
    expect_call(Slot::unimport_mr, args(&vmr.mr));
    ibv_sge sge{};
    EXPECT_EQ(ibv_advise_mr(&pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 1, &sge, 1), 0);
    expect_call(Slot::advise_mr, args(&pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 1, &sge, 1));
    EXPECT_EQ(ibv_alloc_mw(&pd, IBV_MW_TYPE_2), nullptr);
    expect_call(Slot::alloc_mw, args(&pd, IBV_MW_TYPE_2));
    ibv_mw mw{};
    mw.context = ctx_;
    mw.pd = &pd;
    mw.type = IBV_MW_TYPE_1;
    ibv_mw_bind bind{};
    EXPECT_EQ(ibv_bind_mw(&qp, &mw, &bind), 0);
    expect_call(Slot::bind_mw, args(&qp, &mw, &bind));
    EXPECT_EQ(ibv_dealloc_mw(&mw), 0);
    expect_call(Slot::dealloc_mw, args(&mw));

    // Device memory.
    ibv_alloc_dm_attr dm_attr{};
    EXPECT_EQ(ibv_alloc_dm(ctx_, &dm_attr), nullptr);
    expect_call(Slot::alloc_dm, args(ctx_, &dm_attr));
    ibv_dm dm{};
    dm.context = ctx_;
    EXPECT_EQ(ibv_reg_dm_mr(&pd, &dm, 8, 64, IBV_ACCESS_ZERO_BASED), nullptr);
    expect_call(Slot::reg_dm_mr, args(&pd, &dm, 8, 64, IBV_ACCESS_ZERO_BASED));
    EXPECT_EQ(ibv_free_dm(&dm), 0);
    expect_call(Slot::free_dm, args(&dm));
    EXPECT_EQ(ibv_import_dm(ctx_, 5), nullptr);
    expect_call(Slot::import_dm, args(ctx_, 5));
    ibv_unimport_dm(&dm);
    expect_call(Slot::unimport_dm, args(&dm));

    // Completion queues.
    g_return = word(&cq);
    int cq_user_context = 0;
    EXPECT_EQ(ibv_create_cq(ctx_, 16, &cq_user_context, nullptr, 2), &cq);
    expect_call(Slot::create_cq, args(ctx_, 16, nullptr, 2));
    EXPECT_EQ(cq.cq_context, &cq_user_context); // verbs_init_cq() ran on our object
    ibv_cq_ex cq_ex{};
    g_return = word(&cq_ex);
    ibv_cq_init_attr_ex cq_attr{};
    cq_attr.cqe = 8;
    EXPECT_EQ(ibv_create_cq_ex(ctx_, &cq_attr), &cq_ex);
    expect_call(Slot::create_cq_ex, args(ctx_, &cq_attr));
    g_return = 0;
    ibv_wc wc[4];
    EXPECT_EQ(ibv_poll_cq(&cq, 4, wc), 0);
    expect_call(Slot::poll_cq, args(&cq, 4, wc));
    EXPECT_EQ(ibv_req_notify_cq(&cq, 1), 0);
    expect_call(Slot::req_notify_cq, args(&cq, 1));
    EXPECT_EQ(ibv_resize_cq(&cq, 32), 0);
    expect_call(Slot::resize_cq, args(&cq, 32));
    ibv_modify_cq_attr modify_cq_attr{};
    EXPECT_EQ(ibv_modify_cq(&cq, &modify_cq_attr), 0);
    expect_call(Slot::modify_cq, args(&cq, &modify_cq_attr));
    {
        int fds[2];
        ASSERT_EQ(pipe(fds), 0);
        ibv_comp_channel channel{};
        channel.context = ctx_;
        channel.fd = fds[0];
        ib_uverbs_comp_event_desc ev{};
        ev.cq_handle = word(&cq);
        ASSERT_EQ(write(fds[1], &ev, sizeof(ev)), ssize_t(sizeof(ev)));
        ibv_cq *ev_cq = nullptr;
        void *ev_ctx = nullptr;
        EXPECT_EQ(ibv_get_cq_event(&channel, &ev_cq, &ev_ctx), 0);
        expect_call(Slot::cq_event, args(&cq));
        EXPECT_EQ(ev_cq, &cq);
        close(fds[0]);
        close(fds[1]);
    }
    EXPECT_EQ(ibv_destroy_cq(&cq), 0);
    expect_call(Slot::destroy_cq, args(&cq));

    // Shared receive queues.
    ibv_srq_init_attr srq_init{};
    g_return = word(&srq);
    EXPECT_EQ(ibv_create_srq(&pd, &srq_init), &srq);
    expect_call(Slot::create_srq, args(&pd, &srq_init));
    g_return = 0;
    ibv_srq_init_attr_ex srq_init_ex{};
    srq_init_ex.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE;
    srq_init_ex.srq_type = IBV_SRQT_XRC;
    srq_init_ex.pd = &pd;
    EXPECT_EQ(ibv_create_srq_ex(ctx_, &srq_init_ex), nullptr);
    expect_call(Slot::create_srq_ex, args(ctx_, &srq_init_ex));
    ibv_srq_attr srq_attr{};
    EXPECT_EQ(ibv_modify_srq(&srq, &srq_attr, IBV_SRQ_LIMIT), 0);
    expect_call(Slot::modify_srq, args(&srq, &srq_attr, IBV_SRQ_LIMIT));
    EXPECT_EQ(ibv_query_srq(&srq, &srq_attr), 0);
    expect_call(Slot::query_srq, args(&srq, &srq_attr));
    uint32_t srq_num = 0;
    EXPECT_EQ(ibv_get_srq_num(&srq, &srq_num), 0);
    expect_call(Slot::get_srq_num, args(&srq, &srq_num));
    ibv_recv_wr rwr{};
    ibv_recv_wr *bad_rwr = nullptr;
    EXPECT_EQ(ibv_post_srq_recv(&srq, &rwr, &bad_rwr), 0);
    expect_call(Slot::post_srq_recv, args(&srq, &rwr, &bad_rwr));
    ibv_ops_wr op{};
    ibv_ops_wr *bad_op = nullptr;
    EXPECT_EQ(ibv_post_srq_ops(&srq, &op, &bad_op), 0);
    expect_call(Slot::post_srq_ops, args(&srq, &op, &bad_op));
    EXPECT_EQ(ibv_destroy_srq(&srq), 0);
    expect_call(Slot::destroy_srq, args(&srq));

    // Queue pairs.
    ibv_qp_init_attr qp_init{};
    g_return = word(&qp);
    EXPECT_EQ(ibv_create_qp(&pd, &qp_init), &qp);
    expect_call(Slot::create_qp, args(&pd, &qp_init));
    g_return = 0;
    ibv_qp_init_attr_ex qp_init_ex{};
    qp_init_ex.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS;
    qp_init_ex.pd = &pd;
    EXPECT_EQ(ibv_create_qp_ex(ctx_, &qp_init_ex), nullptr);
    expect_call(Slot::create_qp_ex, args(ctx_, &qp_init_ex));
    ibv_qp_open_attr open_attr{};
    EXPECT_EQ(ibv_open_qp(ctx_, &open_attr), nullptr);
    expect_call(Slot::open_qp, args(ctx_, &open_attr));
    ibv_qp_attr qp_attr{};
    qp_attr.qp_state = IBV_QPS_INIT;
    EXPECT_EQ(ibv_modify_qp(&qp, &qp_attr, IBV_QP_STATE), 0);
    expect_call(Slot::modify_qp, args(&qp, &qp_attr, IBV_QP_STATE));
    EXPECT_EQ(qp.state, IBV_QPS_INIT);
    ibv_qp_init_attr qp_init_out{};
    EXPECT_EQ(ibv_query_qp(&qp, &qp_attr, IBV_QP_CAP, &qp_init_out), 0);
    expect_call(Slot::query_qp, args(&qp, &qp_attr, IBV_QP_CAP, &qp_init_out));
    ibv_qp_rate_limit_attr rate{};
    EXPECT_EQ(ibv_modify_qp_rate_limit(&qp, &rate), 0);
    expect_call(Slot::modify_qp_rate_limit, args(&qp, &rate));
    EXPECT_EQ(ibv_query_qp_data_in_order(&qp, IBV_WR_RDMA_WRITE, 0), 0);
    expect_call(Slot::query_qp_data_in_order, args(&qp, IBV_WR_RDMA_WRITE, 0));
    ibv_ece ece{};
    EXPECT_EQ(ibv_query_ece(&qp, &ece), 0);
    expect_call(Slot::query_ece, args(&qp, &ece));
    ece.vendor_id = 1;
    EXPECT_EQ(ibv_set_ece(&qp, &ece), 0);
    expect_call(Slot::set_ece, args(&qp, &ece));
    ibv_send_wr swr{};
    ibv_send_wr *bad_swr = nullptr;
    EXPECT_EQ(ibv_post_send(&qp, &swr, &bad_swr), 0);
    expect_call(Slot::post_send, args(&qp, &swr, &bad_swr));
    EXPECT_EQ(ibv_post_recv(&qp, &rwr, &bad_rwr), 0);
    expect_call(Slot::post_recv, args(&qp, &rwr, &bad_rwr));
    ibv_gid gid{};
    EXPECT_EQ(ibv_attach_mcast(&qp, &gid, 0x1234), 0);
    expect_call(Slot::attach_mcast, args(&qp, &gid, 0x1234));
    EXPECT_EQ(ibv_detach_mcast(&qp, &gid, 0x4321), 0);
    expect_call(Slot::detach_mcast, args(&qp, &gid, 0x4321));
    EXPECT_EQ(ibv_destroy_qp(&qp), 0);
    expect_call(Slot::destroy_qp, args(&qp));

    // Address handles, XRC domains, work queues.
    ibv_ah_attr ah_attr{};
    EXPECT_EQ(ibv_create_ah(&pd, &ah_attr), nullptr);
    expect_call(Slot::create_ah, args(&pd, &ah_attr));
    ibv_ah ah{};
    ah.context = ctx_;
    EXPECT_EQ(ibv_destroy_ah(&ah), 0);
    expect_call(Slot::destroy_ah, args(&ah));
    ibv_xrcd_init_attr xrcd_attr{};
    EXPECT_EQ(ibv_open_xrcd(ctx_, &xrcd_attr), nullptr);
    expect_call(Slot::open_xrcd, args(ctx_, &xrcd_attr));
    ibv_xrcd xrcd{};
    xrcd.context = ctx_;
    EXPECT_EQ(ibv_close_xrcd(&xrcd), 0);
    expect_call(Slot::close_xrcd, args(&xrcd));
    ibv_wq_init_attr wq_init{};
    EXPECT_EQ(ibv_create_wq(ctx_, &wq_init), nullptr);
    expect_call(Slot::create_wq, args(ctx_, &wq_init));
    ibv_wq wq{};
    wq.context = ctx_;
    ibv_wq_attr wq_attr{};
    EXPECT_EQ(ibv_modify_wq(&wq, &wq_attr), 0);
    expect_call(Slot::modify_wq, args(&wq, &wq_attr));
    EXPECT_EQ(ibv_destroy_wq(&wq), 0);
    expect_call(Slot::destroy_wq, args(&wq));
    ibv_rwq_ind_table_init_attr ind_init{};
    EXPECT_EQ(ibv_create_rwq_ind_table(ctx_, &ind_init), nullptr);
    expect_call(Slot::create_rwq_ind_table, args(ctx_, &ind_init));
    ibv_rwq_ind_table ind{};
    ind.context = ctx_;
    EXPECT_EQ(ibv_destroy_rwq_ind_table(&ind), 0);
    expect_call(Slot::destroy_rwq_ind_table, args(&ind));

    // Flows, flow actions, counters.
    ibv_flow_attr flow_attr{};
    EXPECT_EQ(ibv_create_flow(&qp, &flow_attr), nullptr);
    expect_call(Slot::create_flow, args(&qp, &flow_attr));
    ibv_flow flow{};
    flow.context = ctx_;
    EXPECT_EQ(ibv_destroy_flow(&flow), 0);
    expect_call(Slot::destroy_flow, args(&flow));
    ibv_flow_action_esp_attr esp{};
    EXPECT_EQ(ibv_create_flow_action_esp(ctx_, &esp), nullptr);
    expect_call(Slot::create_flow_action_esp, args(ctx_, &esp));
    ibv_flow_action action{};
    action.context = ctx_;
    EXPECT_EQ(ibv_modify_flow_action_esp(&action, &esp), 0);
    expect_call(Slot::modify_flow_action_esp, args(&action, &esp));
    EXPECT_EQ(ibv_destroy_flow_action(&action), 0);
    expect_call(Slot::destroy_flow_action, args(&action));
    ibv_counters_init_attr counters_init{};
    EXPECT_EQ(ibv_create_counters(ctx_, &counters_init), nullptr);
    expect_call(Slot::create_counters, args(ctx_, &counters_init));
    ibv_counters counters{};
    counters.context = ctx_;
    ibv_counter_attach_attr attach{};
    EXPECT_EQ(ibv_attach_counters_point_flow(&counters, &attach, &flow), 0);
    expect_call(Slot::attach_counters_point_flow, args(&counters, &attach, &flow));
    uint64_t counter_values[2];
    EXPECT_EQ(ibv_read_counters(&counters, counter_values, 2, 1), 0);
    expect_call(Slot::read_counters, args(&counters, counter_values, 2, 1));
    EXPECT_EQ(ibv_destroy_counters(&counters), 0);
    expect_call(Slot::destroy_counters, args(&counters));

    // Asynchronous events: libibverbs reads them from context->async_fd.
    {
        int fds[2];
        ASSERT_EQ(pipe(fds), 0);
        ctx_->async_fd = fds[0]; // closed by verbs_uninit_context()
        ib_uverbs_async_event_desc ev{};
        ev.element = word(&cq);
        ev.event_type = IBV_EVENT_CQ_ERR;
        ASSERT_EQ(write(fds[1], &ev, sizeof(ev)), ssize_t(sizeof(ev)));
        close(fds[1]);
        ibv_async_event event{};
        EXPECT_EQ(ibv_get_async_event(ctx_, &event), 0);
        expect_call(Slot::async_event, args(ctx_, &event));
        EXPECT_EQ(event.element.cq, &cq);
    }

    // Closing the device calls free_context; TearDown() releases the memory.
    EXPECT_EQ(ibv_close_device(ctx_), 0);
    expect_call(Slot::free_context, args(ctx_));

    std::vector<std::string> missed;
    for (size_t i = 0; i < kSlotCount; ++i)
        if (!g_seen.count(static_cast<Slot>(i)))
            missed.push_back(kSlotNames[i]);
    EXPECT_TRUE(missed.empty()) << "slots not reached: " << ::testing::PrintToString(missed);
}

// The check above can fail: exchange two slots of the same signature in the
// table handed to libibverbs and the public verb lands in the other sentinel.
TEST_F(SentinelContext, SwappedSlotsAreDetected) {
    auto words = slot_words(g_sentinel_ops);
    std::swap(words[offsetof(verbs_context_ops, post_send) / sizeof(uintptr_t)],
              words[offsetof(verbs_context_ops, post_recv) / sizeof(uintptr_t)]);
    verbs_context_ops swapped{};
    std::memcpy(static_cast<void *>(&swapped), words.data(), sizeof(swapped));
    verbs_set_ops(vctx_, &swapped);
    verbs_qp vqp{};
    vqp.qp.context = ctx_;
    ibv_send_wr swr{};
    ibv_send_wr *bad = nullptr;
    EXPECT_EQ(ibv_post_send(&vqp.qp, &swr, &bad), 0);
    ASSERT_EQ(g_calls.size(), 1u);
    EXPECT_EQ(g_calls[0].slot, Slot::post_recv);
    g_calls.clear();
}

TEST_F(SentinelContext, DeviceFieldsLibibverbsReads) {
    // ibv_reg_mr() keeps "optional" access flags only if verbs_device's
    // core_support says the kernel accepts them.
    ibv_pd pd{};
    pd.context = ctx_;
    static char buf[64];
    const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING;
    dev_->core_support = 0;
    EXPECT_EQ(ibv_reg_mr(&pd, buf, sizeof(buf), access), nullptr);
    expect_call(Slot::reg_mr, args(&pd, buf, sizeof(buf), buf, IBV_ACCESS_LOCAL_WRITE));
    dev_->core_support = IB_UVERBS_CORE_SUPPORT_OPTIONAL_MR_ACCESS;
    EXPECT_EQ(ibv_reg_mr(&pd, buf, sizeof(buf), access), nullptr);
    expect_call(Slot::reg_mr, args(&pd, buf, sizeof(buf), buf, access));
}

TEST_F(SentinelContext, ObjectFieldsLibibverbsReads) {
    // ibv_rereg_mr() refuses anything but a plain MR, judged by mr_type.
    ibv_pd pd{};
    pd.context = ctx_;
    verbs_mr vmr{};
    vmr.mr.context = ctx_;
    vmr.mr_type = METAROCE_MR_TYPE_NULL_MR;
    EXPECT_EQ(ibv_rereg_mr(&vmr.mr, IBV_REREG_MR_CHANGE_PD, &pd, nullptr, 0, 0),
              IBV_REREG_MR_ERR_INPUT);
    EXPECT_TRUE(g_calls.empty());
    vmr.mr_type = METAROCE_MR_TYPE_MR;
    EXPECT_EQ(ibv_rereg_mr(&vmr.mr, IBV_REREG_MR_CHANGE_PD, &pd, nullptr, 0, 0), 0);
    expect_call(Slot::rereg_mr, args(&vmr, IBV_REREG_MR_CHANGE_PD, &pd, nullptr, 0, 0));

    // ibv_qp_to_qp_ex() trusts verbs_qp::comp_mask.
    verbs_qp vqp{};
    EXPECT_EQ(ibv_qp_to_qp_ex(&vqp.qp), nullptr);
    vqp.comp_mask = METAROCE_VERBS_QP_EX;
    EXPECT_EQ(ibv_qp_to_qp_ex(&vqp.qp), &vqp.qp_ex);
}

// A device whose last reference goes away is handed to ops->uninit_device.
TEST(PrivateAbi, LastDeviceReferenceCallsUninitDevice) {
    auto dev = metaroce::zalloc<verbs_device>();
    ASSERT_TRUE(dev);
    dev->ops = &kSentinelDeviceOps;
    dev->refcount = 0;
    int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    auto *tc = static_cast<TestContext *>(_verbs_init_and_alloc_context(
        &dev->device, fd, sizeof(TestContext),
        reinterpret_cast<verbs_context *>(uintptr_t{offsetof(TestContext, vctx)}), kTestDriverId));
    ASSERT_NE(tc, nullptr);
    EXPECT_EQ(dev->refcount, 1);
    g_uninit_device_calls.clear();
    verbs_uninit_context(&tc->vctx);
    std::free(tc);
    EXPECT_EQ(dev->refcount, 0);
    ASSERT_EQ(g_uninit_device_calls.size(), 1u);
    EXPECT_EQ(g_uninit_device_calls[0], dev.get());
    g_uninit_device_calls.clear();
    EXPECT_EQ(fcntl(fd, F_GETFD), -1); // cmd_fd was closed
}

} // namespace
