// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Tests of the provider itself: its registration data, its driver file, the
// built .so, and its verbs running through the real libibverbs against a
// fake uverbs device (tests/fake_kernel.h).
#include "fake_kernel.h"
#include "metaroce-abi.h"
#include "metaroce.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using metaroce::kContextOps;
using metaroce::kDeviceOps;
using metaroce::kMatchTable;

// --- Registration data ---------------------------------------------------------

TEST(ProviderTable, MatchesOnlyOurDriverIdAndAbi) {
    EXPECT_STREQ(kDeviceOps.name, "metaroce");
    EXPECT_STREQ(kDeviceOps.name, METAROCE_LINK_TYPE);
    EXPECT_EQ(kDeviceOps.match_min_abi_version, 1u);
    EXPECT_EQ(kDeviceOps.match_max_abi_version, 1u);
    EXPECT_EQ(kDeviceOps.match_max_abi_version, unsigned{METAROCE_UVERBS_ABI_VERSION});
    ASSERT_EQ(kDeviceOps.match_table, kMatchTable);
    EXPECT_EQ(kMatchTable[0].kind, METAROCE_MATCH_DRIVER_ID);
    EXPECT_EQ(kMatchTable[0].u.driver_id, uint64_t{METAROCE_DRIVER_ID});
    EXPECT_EQ(kMatchTable[0].u.driver_id, 0x4d52u);
    EXPECT_EQ(kMatchTable[1].kind, METAROCE_MATCH_SENTINEL); // no name or modalias entry
    EXPECT_NE(kDeviceOps.match_device, nullptr);
    EXPECT_NE(kDeviceOps.alloc_device, nullptr);
    EXPECT_NE(kDeviceOps.uninit_device, nullptr);
    EXPECT_NE(kDeviceOps.alloc_context, nullptr);
    EXPECT_EQ(kDeviceOps.import_context, nullptr);
    EXPECT_EQ(kDeviceOps.static_providers, nullptr);
}

TEST(ProviderTable, MatchDeviceKeepsTheTableVerdict) {
    verbs_sysfs_dev dev{};
    std::strcpy(dev.ibdev_name, "metaroce0");
    dev.driver_id = METAROCE_DRIVER_ID;
    dev.abi_ver = 1;
    dev.match = &kMatchTable[0];
    EXPECT_TRUE(kDeviceOps.match_device(&dev));
    dev.match = nullptr; // e.g. an rxe device
    EXPECT_FALSE(kDeviceOps.match_device(&dev));
}

TEST(ProviderTable, ImplementsTheKernelMediatedVerbs) {
    // The data path goes straight to libibverbs' command helpers, but for
    // the CQ, which is polled and armed in its mapped ring when it has one.
    EXPECT_NE(kContextOps.poll_cq, nullptr);
    EXPECT_NE(kContextOps.poll_cq, &ibv_cmd_poll_cq);
    EXPECT_NE(kContextOps.post_recv, nullptr);
    EXPECT_NE(kContextOps.post_recv, &ibv_cmd_post_recv);
    EXPECT_NE(kContextOps.post_srq_recv, nullptr);
    EXPECT_NE(kContextOps.post_srq_recv, &ibv_cmd_post_srq_recv);
    EXPECT_NE(kContextOps.req_notify_cq, nullptr);
    EXPECT_NE(kContextOps.req_notify_cq, &ibv_cmd_req_notify_cq);
    EXPECT_EQ(kContextOps.attach_mcast, &ibv_cmd_attach_mcast);
    EXPECT_EQ(kContextOps.detach_mcast, &ibv_cmd_detach_mcast);
    for (auto op : {reinterpret_cast<const void *>(kContextOps.query_device_ex),
                    reinterpret_cast<const void *>(kContextOps.query_port),
                    reinterpret_cast<const void *>(kContextOps.alloc_pd),
                    reinterpret_cast<const void *>(kContextOps.dealloc_pd),
                    reinterpret_cast<const void *>(kContextOps.reg_mr),
                    reinterpret_cast<const void *>(kContextOps.dereg_mr),
                    reinterpret_cast<const void *>(kContextOps.create_cq),
                    reinterpret_cast<const void *>(kContextOps.create_cq_ex),
                    reinterpret_cast<const void *>(kContextOps.destroy_cq),
                    reinterpret_cast<const void *>(kContextOps.resize_cq),
                    reinterpret_cast<const void *>(kContextOps.create_qp),
                    reinterpret_cast<const void *>(kContextOps.create_qp_ex),
                    reinterpret_cast<const void *>(kContextOps.modify_qp),
                    reinterpret_cast<const void *>(kContextOps.query_qp),
                    reinterpret_cast<const void *>(kContextOps.destroy_qp),
                    reinterpret_cast<const void *>(kContextOps.create_srq),
                    reinterpret_cast<const void *>(kContextOps.modify_srq),
                    reinterpret_cast<const void *>(kContextOps.query_srq),
                    reinterpret_cast<const void *>(kContextOps.destroy_srq),
                    reinterpret_cast<const void *>(kContextOps.create_ah),
                    reinterpret_cast<const void *>(kContextOps.destroy_ah),
                    reinterpret_cast<const void *>(kContextOps.free_context),
                    // POST_SEND takes no binds or LOCAL_INV: ours splits the list.
                    reinterpret_cast<const void *>(kContextOps.post_send),
                    reinterpret_cast<const void *>(kContextOps.alloc_mw),
                    reinterpret_cast<const void *>(kContextOps.bind_mw),
                    reinterpret_cast<const void *>(kContextOps.dealloc_mw)})
        EXPECT_NE(op, nullptr);
    // Not offered yet: libibverbs answers these with EOPNOTSUPP.
    EXPECT_EQ(kContextOps.create_srq_ex, nullptr);
}

// --- Files and the built library -------------------------------------------------

std::string read_file(const char *path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(ProviderFiles, DriverFileNamesTheBuiltLibrary) {
    EXPECT_EQ(read_file(METAROCE_DRIVER_FILE), "driver metaroce\n");
    // libibverbs loads lib<name>-rdmav34.so for a "driver <name>" line.
    const std::string so = METAROCE_PROVIDER_SO;
    EXPECT_EQ(so.substr(so.rfind('/') + 1), std::string("lib") + kDeviceOps.name + "-rdmav34.so");
}

TEST(ProviderFiles, LibraryLoadsAndReportsWithMetaroceDebug) {
    ASSERT_EQ(setenv("METAROCE_DEBUG", "1", 1), 0);
    ::testing::internal::CaptureStderr();
    // Never unloaded: its constructor registered kDeviceOps with libibverbs.
    void *so = dlopen(METAROCE_PROVIDER_SO, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    const std::string err = ::testing::internal::GetCapturedStderr();
    unsetenv("METAROCE_DEBUG");
    ASSERT_NE(so, nullptr) << dlerror();
    EXPECT_NE(err.find("metaroce: provider loaded"), std::string::npos) << err;
    // Nothing of ours is exported.
    EXPECT_EQ(dlsym(so, "_ZN8metaroce10kDeviceOpsE"), nullptr);
    EXPECT_EQ(dlsym(so, "metaroce_register_driver"), nullptr);
}

TEST(ProviderFiles, DebugSwitch) {
    unsetenv("METAROCE_DEBUG");
    EXPECT_FALSE(metaroce::debug_enabled());
    setenv("METAROCE_DEBUG", "0", 1);
    EXPECT_FALSE(metaroce::debug_enabled());
    setenv("METAROCE_DEBUG", "1", 1);
    EXPECT_TRUE(metaroce::debug_enabled());
    unsetenv("METAROCE_DEBUG");
}

// --- Verbs against a fake uverbs device ------------------------------------------

constexpr uint32_t kAsyncVectors = 2;

int dev_null() {
    return open("/dev/null", O_RDWR | O_CLOEXEC);
}
bool fd_is_open(int fd) {
    return fcntl(fd, F_GETFD) != -1;
}

class ProviderContext : public ::testing::Test {
protected:
    void SetUp() override {
        std::strcpy(sysfs_.ibdev_name, "metaroce0");
        std::strcpy(sysfs_.sysfs_name, "uverbs0");
        sysfs_.driver_id = METAROCE_DRIVER_ID;
        sysfs_.abi_ver = METAROCE_UVERBS_ABI_VERSION;
        sysfs_.num_ports = 1;
        vdev_ = kDeviceOps.alloc_device(&sysfs_);
        ASSERT_NE(vdev_, nullptr);
        // What libibverbs' try_driver() does after alloc_device().
        vdev_->ops = &kDeviceOps;
        vdev_->refcount = 1;
        vdev_->sysfs = &sysfs_;
        std::strcpy(vdev_->device.name, "metaroce0");

        kernel_ = std::make_unique<fake::Kernel>();
        async_fd_ = dev_null();
        kernel_->on(IB_USER_VERBS_CMD_GET_CONTEXT, [this](const fake::Request &r) {
            ib_uverbs_get_context_resp resp{};
            resp.async_fd = async_fd_;
            resp.num_comp_vectors = kAsyncVectors;
            r.reply(resp);
            return 0;
        });
    }

    void open_context() {
        vctx_ = kDeviceOps.alloc_context(&vdev_->device, kernel_->fd(), nullptr);
        ASSERT_NE(vctx_, nullptr) << "errno " << errno;
        ctx_ = &vctx_->context;
        kernel_->writes.clear();
    }

    void TearDown() override {
        if (ctx_) {
            EXPECT_EQ(ibv_close_device(ctx_), 0); // -> our free_context
        }
        kernel_.reset();
        if (vdev_) {
            EXPECT_EQ(vdev_->refcount, 1);
            vdev_->sysfs = nullptr; // owned by the test, not by libibverbs
            kDeviceOps.uninit_device(vdev_);
        }
    }

    const fake::Request &last_write() const { return kernel_->writes.back(); }

    verbs_sysfs_dev sysfs_{};
    verbs_device *vdev_ = nullptr;
    std::unique_ptr<fake::Kernel> kernel_;
    int async_fd_ = -1;
    verbs_context *vctx_ = nullptr;
    ibv_context *ctx_ = nullptr;
};

TEST_F(ProviderContext, OpensWithOurDriverIdAndNoDriverData) {
    const int cmd_fd = kernel_->fd();
    open_context();
    EXPECT_EQ(vdev_->refcount, 2);
    EXPECT_EQ(ctx_->cmd_fd, cmd_fd);
    EXPECT_EQ(ctx_->async_fd, async_fd_);
    EXPECT_EQ(ctx_->num_comp_vectors, int{kAsyncVectors});
    EXPECT_EQ(ctx_->ops.poll_cq, kContextOps.poll_cq);

    // libibverbs tried the ioctl interface first: every ioctl header carried
    // our driver id, which the kernel compares with ib_device_ops.driver_id.
    ASSERT_FALSE(kernel_->ioctls.empty());
    for (const auto &hdr : kernel_->ioctls)
        EXPECT_EQ(hdr.driver_id, uint32_t{METAROCE_DRIVER_ID});

    ctx_ = nullptr;
    EXPECT_EQ(ibv_close_device(&vctx_->context), 0);
    EXPECT_FALSE(fd_is_open(cmd_fd));
    EXPECT_FALSE(fd_is_open(async_fd_));
    EXPECT_EQ(vdev_->refcount, 1);
}

TEST_F(ProviderContext, GetContextCommandHasNoDriverData) {
    vctx_ = kDeviceOps.alloc_context(&vdev_->device, kernel_->fd(), nullptr);
    ASSERT_NE(vctx_, nullptr);
    ctx_ = &vctx_->context;
    ASSERT_EQ(kernel_->writes.size(), 1u);
    const auto &w = last_write();
    EXPECT_EQ(w.command, unsigned{IB_USER_VERBS_CMD_GET_CONTEXT});
    EXPECT_FALSE(w.extended);
    EXPECT_EQ(w.in_words * 4u, sizeof(ib_uverbs_cmd_hdr) + sizeof(ib_uverbs_get_context));
    EXPECT_EQ(w.out_words * 4u, sizeof(ib_uverbs_get_context_resp));
}

TEST_F(ProviderContext, GetContextFailureSetsErrnoAndClosesFd) {
    kernel_->on(IB_USER_VERBS_CMD_GET_CONTEXT, [](const fake::Request &) { return EPERM; });
    const int cmd_fd = kernel_->fd();
    errno = 0;
    EXPECT_EQ(kDeviceOps.alloc_context(&vdev_->device, cmd_fd, nullptr), nullptr);
    EXPECT_EQ(errno, EPERM);
    EXPECT_FALSE(fd_is_open(cmd_fd));
    EXPECT_EQ(vdev_->refcount, 1);
    close(async_fd_);
}

// The kernel side does not implement these yet: each verb must fail the way
// libibverbs documents, and must not free objects it did not destroy.
TEST_F(ProviderContext, UnimplementedKernelVerbsFailWithErrno) {
    open_context();
    ibv_port_attr port{};
    EXPECT_EQ(ibv_query_port(ctx_, 1, &port), EOPNOTSUPP);
    ibv_device_attr dev_attr{};
    EXPECT_EQ(ibv_query_device(ctx_, &dev_attr), EOPNOTSUPP);

    errno = 0;
    EXPECT_EQ(ibv_alloc_pd(ctx_), nullptr);
    EXPECT_EQ(errno, EOPNOTSUPP);
    errno = 0;
    EXPECT_EQ(ibv_create_cq(ctx_, 4, nullptr, nullptr, 0), nullptr);
    EXPECT_EQ(errno, EOPNOTSUPP);

    // Objects as if created earlier (stack objects: freeing one would crash).
    ibv_pd pd{};
    pd.context = ctx_;
    pd.handle = 1;
    metaroce::Cq provider_cq{}; // as the provider allocates it, with no ring
    pthread_spin_init(&provider_cq.lock, PTHREAD_PROCESS_PRIVATE);
    ibv_cq &cq = provider_cq.cq;
    cq.context = ctx_;
    cq.handle = 2;
    verbs_qp vqp{};
    ibv_qp &qp = vqp.qp;
    qp.context = ctx_;
    qp.handle = 3;
    qp.qp_type = IBV_QPT_RC;

    static char buf[64];
    errno = 0;
    EXPECT_EQ(ibv_reg_mr(&pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE), nullptr);
    EXPECT_EQ(errno, EOPNOTSUPP);
    ibv_qp_init_attr init{};
    init.send_cq = init.recv_cq = &cq;
    init.qp_type = IBV_QPT_RC;
    errno = 0;
    EXPECT_EQ(ibv_create_qp(&pd, &init), nullptr);
    EXPECT_EQ(errno, EOPNOTSUPP);
    ibv_ah_attr ah_attr{};
    errno = 0;
    EXPECT_EQ(ibv_create_ah(&pd, &ah_attr), nullptr);
    EXPECT_EQ(errno, EOPNOTSUPP);

    ibv_wc wc[2];
    errno = 0;
    EXPECT_EQ(ibv_poll_cq(&cq, 2, wc), -1);
    EXPECT_EQ(errno, EOPNOTSUPP);
    EXPECT_EQ(ibv_req_notify_cq(&cq, 0), EOPNOTSUPP);
    EXPECT_EQ(ibv_resize_cq(&cq, 8), EOPNOTSUPP);

    ibv_send_wr swr{};
    ibv_send_wr *bad_swr = nullptr;
    EXPECT_EQ(ibv_post_send(&qp, &swr, &bad_swr), EOPNOTSUPP);
    EXPECT_EQ(bad_swr, &swr);
    ibv_recv_wr rwr{};
    ibv_recv_wr *bad_rwr = nullptr;
    EXPECT_EQ(ibv_post_recv(&qp, &rwr, &bad_rwr), EOPNOTSUPP);
    EXPECT_EQ(bad_rwr, &rwr);
    ibv_qp_attr qp_attr{};
    qp_attr.qp_state = IBV_QPS_INIT;
    EXPECT_EQ(ibv_modify_qp(&qp, &qp_attr, IBV_QP_STATE), EOPNOTSUPP);
    EXPECT_EQ(ibv_query_qp(&qp, &qp_attr, IBV_QP_STATE, &init), EOPNOTSUPP);
    ibv_gid gid{};
    EXPECT_EQ(ibv_attach_mcast(&qp, &gid, 0), EOPNOTSUPP);
    EXPECT_EQ(ibv_detach_mcast(&qp, &gid, 0), EOPNOTSUPP);

    errno = 0;
    EXPECT_EQ(ibv_dealloc_pd(&pd), EOPNOTSUPP);
    EXPECT_EQ(errno, EOPNOTSUPP);
    EXPECT_EQ(ibv_destroy_cq(&cq), EOPNOTSUPP);
    EXPECT_EQ(ibv_destroy_qp(&qp), EOPNOTSUPP);

    for (const auto &hdr : kernel_->ioctls)
        EXPECT_EQ(hdr.driver_id, uint32_t{METAROCE_DRIVER_ID});
}

// A send list with a LOCAL_INV in it: the SEND before it goes alone with
// POST_SEND, the LOCAL_INV through the driver method; the fake kernel has
// no ioctl, so the list stops there, with the caller's list intact.
TEST_F(ProviderContext, LocalWorkRequestsSplitTheSendList) {
    open_context();
    auto &k = *kernel_;
    verbs_qp vqp{};
    ibv_qp &qp = vqp.qp;
    qp.context = ctx_;
    qp.handle = 3;
    qp.qp_type = IBV_QPT_RC;
    ibv_send_wr swr[3]{};
    for (int i = 0; i < 3; i++) {
        swr[i].wr_id = 10 + i;
        swr[i].opcode = IBV_WR_SEND;
        swr[i].next = i < 2 ? &swr[i + 1] : nullptr;
    }
    swr[1].opcode = IBV_WR_LOCAL_INV;
    swr[1].invalidate_rkey = 0x1234;
    const size_t ioctls_before = k.ioctls.size(); // those of opening the context
    std::vector<uint32_t> posted;
    k.on(IB_USER_VERBS_CMD_POST_SEND, [&](const fake::Request &r) {
        const auto c = r.as<ib_uverbs_post_send>();
        for (uint32_t i = 0; i < c.wr_count; i++)
            posted.push_back(
                static_cast<uint32_t>(r.at<ib_uverbs_send_wr>(sizeof(c) + i * c.wqe_size).wr_id));
        r.reply(ib_uverbs_post_send_resp{});
        return 0;
    });
    ibv_send_wr *bad = nullptr;
    EXPECT_NE(ibv_post_send(&qp, swr, &bad), 0);
    EXPECT_EQ(bad, &swr[1]);
    EXPECT_EQ(posted, std::vector<uint32_t>{10});
    ASSERT_EQ(k.ioctls.size(), ioctls_before + 1);
    EXPECT_EQ(k.ioctls.back().object_id, UVERBS_OBJECT_QP);
    EXPECT_EQ(k.ioctls.back().method_id, METAROCE_METHOD_QP_LOCAL_WR);
    EXPECT_EQ(k.ioctls.back().num_attrs, 2u);
    EXPECT_EQ(k.ioctls.back().driver_id, uint32_t{METAROCE_DRIVER_ID});
    EXPECT_EQ(swr[0].next, &swr[1]);
    EXPECT_EQ(swr[1].next, &swr[2]);

    // A type 1 window is bound with ibv_bind_mw, never with a bind WR.
    ibv_mw mw{};
    mw.context = ctx_;
    mw.type = IBV_MW_TYPE_1;
    swr[0].opcode = IBV_WR_BIND_MW;
    swr[0].bind_mw.mw = &mw;
    bad = nullptr;
    EXPECT_EQ(ibv_post_send(&qp, swr, &bad), EINVAL);
    EXPECT_EQ(bad, &swr[0]);
    EXPECT_EQ(k.ioctls.size(), ioctls_before + 1);
}

// With a kernel that answers, the provider's objects carry what it returned,
// and the commands carry what the caller asked for.
TEST_F(ProviderContext, VerbsPassThroughTheKernel) {
    open_context();
    auto &k = *kernel_;

    // query_device: fw_ver formatting and the phys_port_cnt_ex that libibverbs
    // takes from verbs_sysfs_dev::num_ports.
    sysfs_.num_ports = 2;
    auto device_resp = [](const fake::Request &r) {
        ib_uverbs_ex_query_device_resp resp{};
        resp.base.fw_ver = uint64_t{1} << 32 | 2 << 16 | 3;
        resp.base.vendor_part_id = METAROCE_VENDOR_PART_ID;
        resp.base.max_qp = 64;
        resp.base.phys_port_cnt = 1;
        resp.response_length = sizeof(resp);
        r.reply(r.extended ? static_cast<const void *>(&resp) : &resp.base,
                r.extended ? sizeof(resp) : sizeof(resp.base));
        return 0;
    };
    k.on(IB_USER_VERBS_CMD_QUERY_DEVICE, device_resp);
    ibv_device_attr_ex dev_attr{};
    ASSERT_EQ(ibv_query_device_ex(ctx_, nullptr, &dev_attr), 0);
    EXPECT_STREQ(dev_attr.orig_attr.fw_ver, "1.2.3");
    EXPECT_EQ(dev_attr.orig_attr.vendor_part_id, uint32_t{METAROCE_VENDOR_PART_ID});
    EXPECT_EQ(dev_attr.orig_attr.max_qp, 64);
    EXPECT_EQ(dev_attr.orig_attr.phys_port_cnt, 1);
    EXPECT_EQ(dev_attr.phys_port_cnt_ex, 2u);
    EXPECT_TRUE(last_write().extended);
    ibv_device_attr small{};
    ASSERT_EQ(ibv_query_device(ctx_, &small), 0);
    EXPECT_STREQ(small.fw_ver, "1.2.3");
    EXPECT_FALSE(last_write().extended);

    k.on(IB_USER_VERBS_CMD_QUERY_PORT, [](const fake::Request &r) {
        EXPECT_EQ(r.in_words * 4u, sizeof(metaroce::cmd::QueryPort));
        EXPECT_EQ(r.as<ib_uverbs_query_port>().port_num, 1);
        ib_uverbs_query_port_resp resp{};
        resp.state = IBV_PORT_ACTIVE;
        resp.max_mtu = IBV_MTU_4096;
        resp.active_mtu = IBV_MTU_1024;
        resp.gid_tbl_len = 16;
        resp.link_layer = IBV_LINK_LAYER_ETHERNET;
        r.reply(resp);
        return 0;
    });
    ibv_port_attr port{};
    ASSERT_EQ(ibv_query_port(ctx_, 1, &port), 0);
    EXPECT_EQ(port.state, IBV_PORT_ACTIVE);
    EXPECT_EQ(port.active_mtu, IBV_MTU_1024);
    EXPECT_EQ(port.gid_tbl_len, 16);
    EXPECT_EQ(port.link_layer, IBV_LINK_LAYER_ETHERNET);

    // Protection domain.
    k.on(IB_USER_VERBS_CMD_ALLOC_PD, [](const fake::Request &r) {
        EXPECT_EQ(r.in_words * 4u, sizeof(metaroce::cmd::AllocPd));
        r.reply(ib_uverbs_alloc_pd_resp{.pd_handle = 0x11});
        return 0;
    });
    ibv_pd *pd = ibv_alloc_pd(ctx_);
    ASSERT_NE(pd, nullptr);
    EXPECT_EQ(pd->handle, 0x11u);
    EXPECT_EQ(pd->context, ctx_);

    // Memory region.
    alignas(4096) static char buf[8192];
    const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    k.on(IB_USER_VERBS_CMD_REG_MR, [&](const fake::Request &r) {
        EXPECT_EQ(r.in_words * 4u, sizeof(metaroce::cmd::RegMr));
        const auto c = r.as<ib_uverbs_reg_mr>();
        EXPECT_EQ(c.start, reinterpret_cast<uintptr_t>(buf));
        EXPECT_EQ(c.length, sizeof(buf));
        EXPECT_EQ(c.hca_va, reinterpret_cast<uintptr_t>(buf));
        EXPECT_EQ(c.pd_handle, 0x11u);
        EXPECT_EQ(c.access_flags, unsigned(access));
        r.reply(ib_uverbs_reg_mr_resp{.mr_handle = 0x22, .lkey = 0x1000, .rkey = 0x2000});
        return 0;
    });
    ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), access);
    ASSERT_NE(mr, nullptr);
    EXPECT_EQ(mr->handle, 0x22u);
    EXPECT_EQ(mr->lkey, 0x1000u);
    EXPECT_EQ(mr->rkey, 0x2000u);
    EXPECT_EQ(mr->addr, buf);
    const auto *vmr = reinterpret_cast<const verbs_mr *>(mr);
    EXPECT_EQ(vmr->mr_type, METAROCE_MR_TYPE_MR);
    EXPECT_EQ(vmr->access, access);

    // Completion queue.
    // The provider asks for a mapped ring; this kernel, like a module older
    // than the rings, answers with no driver data: the CQ uses commands.
    k.on(IB_USER_VERBS_CMD_CREATE_CQ, [](const fake::Request &r) {
        EXPECT_EQ(r.in_words * 4u,
                  sizeof(metaroce::cmd::CreateCq) + sizeof(metaroce_create_cq_cmd));
        const auto drv = r.at<metaroce_create_cq_cmd>(sizeof(metaroce::cmd::CreateCq) -
                                                      sizeof(ib_uverbs_cmd_hdr));
        EXPECT_EQ(drv.flags, uint32_t{METAROCE_CQ_RING});
        EXPECT_EQ(drv.reserved, 0u);
        const auto c = r.as<ib_uverbs_create_cq>();
        EXPECT_EQ(c.cqe, 16u);
        EXPECT_EQ(c.comp_vector, 1u);
        EXPECT_EQ(c.comp_channel, -1);
        EXPECT_NE(c.user_handle, 0u);
        ib_uverbs_create_cq_resp resp{};
        resp.cq_handle = 0x33;
        resp.cqe = 31;
        r.reply(resp);
        return 0;
    });
    int cq_user_context = 0;
    ibv_cq *cq = ibv_create_cq(ctx_, 16, &cq_user_context, nullptr, 1);
    ASSERT_NE(cq, nullptr);
    EXPECT_EQ(cq->handle, 0x33u);
    EXPECT_EQ(cq->cqe, 31);
    EXPECT_EQ(cq->cq_context, &cq_user_context);
    k.on(IB_USER_VERBS_CMD_RESIZE_CQ, [](const fake::Request &r) {
        EXPECT_EQ(r.in_words * 4u, sizeof(metaroce::cmd::ResizeCq));
        EXPECT_EQ(r.as<ib_uverbs_resize_cq>().cq_handle, 0x33u);
        EXPECT_EQ(r.as<ib_uverbs_resize_cq>().cqe, 64u);
        ib_uverbs_resize_cq_resp resp{};
        resp.cqe = 127;
        r.reply(resp);
        return 0;
    });
    EXPECT_EQ(ibv_resize_cq(cq, 64), 0);
    EXPECT_EQ(cq->cqe, 127);

    k.on(IB_USER_VERBS_CMD_POLL_CQ, [](const fake::Request &r) {
        const auto c = r.as<ib_uverbs_poll_cq>();
        EXPECT_EQ(c.cq_handle, 0x33u);
        EXPECT_EQ(c.ne, 4u);
        ib_uverbs_poll_cq_resp head{};
        head.count = 3;
        ib_uverbs_wc wc[3]{};
        wc[0].wr_id = 42;
        wc[0].status = IBV_WC_SUCCESS;
        wc[0].opcode = IBV_WC_RECV;
        wc[0].byte_len = 64;
        wc[0].qp_num = 0x123;
        // The kernel's IB_WC_WITH_IMM | IB_WC_GRH, IB_WC_WITH_INVALIDATE,
        // IB_WC_IP_CSUM_OK | IB_WC_WITH_SMAC.
        wc[0].wc_flags = 0x3;
        wc[1].wc_flags = 0x4;
        wc[1].ex.invalidate_rkey = 0x5678;
        wc[2].wc_flags = 0x18;
        std::vector<uint8_t> out(sizeof(head) + sizeof(wc));
        std::memcpy(out.data(), &head, sizeof(head));
        std::memcpy(out.data() + sizeof(head), &wc, sizeof(wc));
        r.reply(out.data(), out.size());
        return 0;
    });
    ibv_wc wc[4]{};
    ASSERT_EQ(ibv_poll_cq(cq, 4, wc), 3);
    EXPECT_EQ(wc[0].wr_id, 42u);
    EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(wc[0].opcode, IBV_WC_RECV);
    EXPECT_EQ(wc[0].byte_len, 64u);
    EXPECT_EQ(wc[0].qp_num, 0x123u);
    EXPECT_EQ(wc[0].wc_flags, unsigned{IBV_WC_WITH_IMM | IBV_WC_GRH});
    EXPECT_EQ(wc[1].wc_flags, unsigned{IBV_WC_WITH_INV});
    EXPECT_EQ(wc[1].invalidated_rkey, 0x5678u);
    EXPECT_EQ(wc[2].wc_flags, unsigned{IBV_WC_IP_CSUM_OK});

    k.on(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ, [](const fake::Request &r) {
        const auto c = r.as<ib_uverbs_req_notify_cq>();
        EXPECT_EQ(c.cq_handle, 0x33u);
        EXPECT_EQ(c.solicited_only, 1u);
        return 0;
    });
    EXPECT_EQ(ibv_req_notify_cq(cq, 1), 0);

    // Queue pair.
    k.on(IB_USER_VERBS_CMD_CREATE_QP, [](const fake::Request &r) {
        // An RC QP asks for mapped receive and send rings. libibverbs reads
        // this fake's answer as the oldest response (no uverbs ABI from
        // sysfs), so the provider finds no usable ring there: both queues
        // by command.
        EXPECT_EQ(r.in_words * 4u,
                  sizeof(metaroce::cmd::CreateQp) + sizeof(metaroce_create_qp_cmd));
        EXPECT_EQ(r.at<metaroce_create_qp_cmd>(sizeof(metaroce::cmd::CreateQp) -
                                               sizeof(ib_uverbs_cmd_hdr))
                      .flags,
                  uint32_t{METAROCE_QP_RQ_RING | METAROCE_QP_SQ_RING});
        const auto c = r.as<ib_uverbs_create_qp>();
        EXPECT_EQ(c.pd_handle, 0x11u);
        EXPECT_EQ(c.send_cq_handle, 0x33u);
        EXPECT_EQ(c.recv_cq_handle, 0x33u);
        EXPECT_EQ(c.max_send_wr, 8u);
        EXPECT_EQ(c.qp_type, IBV_QPT_RC);
        ib_uverbs_create_qp_resp resp{};
        resp.qp_handle = 0x44;
        resp.qpn = 0x123;
        resp.max_send_wr = 15;
        resp.max_recv_wr = 15;
        resp.max_send_sge = 1;
        resp.max_recv_sge = 1;
        r.reply(resp);
        return 0;
    });
    ibv_qp_init_attr init{};
    init.send_cq = init.recv_cq = cq;
    init.cap.max_send_wr = init.cap.max_recv_wr = 8;
    init.cap.max_send_sge = init.cap.max_recv_sge = 1;
    init.qp_type = IBV_QPT_RC;
    ibv_qp *qp = ibv_create_qp(pd, &init);
    ASSERT_NE(qp, nullptr);
    EXPECT_EQ(qp->handle, 0x44u);
    EXPECT_EQ(qp->qp_num, 0x123u);
    EXPECT_EQ(qp->state, IBV_QPS_RESET);
    // The returned caps are not checked: libibverbs learns the uverbs ABI
    // version only from sysfs while enumerating devices, which this test
    // skips, and then uses the oldest CREATE_QP response (handle and qpn).
    EXPECT_EQ(ibv_qp_to_qp_ex(qp), nullptr);

    k.on(IB_USER_VERBS_CMD_MODIFY_QP, [](const fake::Request &r) {
        EXPECT_EQ(r.in_words * 4u, sizeof(metaroce::cmd::ModifyQp));
        const auto c = r.as<ib_uverbs_modify_qp>();
        EXPECT_EQ(c.qp_handle, 0x44u);
        EXPECT_EQ(c.attr_mask, unsigned(IBV_QP_STATE | IBV_QP_PORT));
        EXPECT_EQ(c.qp_state, IBV_QPS_INIT);
        EXPECT_EQ(c.port_num, 1);
        return 0;
    });
    ibv_qp_attr qp_attr{};
    qp_attr.qp_state = IBV_QPS_INIT;
    qp_attr.port_num = 1;
    ASSERT_EQ(ibv_modify_qp(qp, &qp_attr, IBV_QP_STATE | IBV_QP_PORT), 0);
    EXPECT_EQ(qp->state, IBV_QPS_INIT);

    k.on(IB_USER_VERBS_CMD_QUERY_QP, [](const fake::Request &r) {
        const auto c = r.as<ib_uverbs_query_qp>();
        EXPECT_EQ(c.qp_handle, 0x44u);
        ib_uverbs_query_qp_resp resp{};
        resp.qp_state = IBV_QPS_RTS;
        resp.sq_psn = 0x777;
        r.reply(resp);
        return 0;
    });
    ibv_qp_init_attr init_out{};
    ASSERT_EQ(ibv_query_qp(qp, &qp_attr, IBV_QP_STATE | IBV_QP_SQ_PSN, &init_out), 0);
    EXPECT_EQ(qp_attr.qp_state, IBV_QPS_RTS);
    EXPECT_EQ(qp_attr.sq_psn, 0x777u);

    // post_send: work requests and SGEs are marshalled after the core command;
    // a failing kernel names the first rejected request (1-based) in bad_wr.
    ibv_sge sge[2] = {{reinterpret_cast<uintptr_t>(buf), 64, mr->lkey},
                      {reinterpret_cast<uintptr_t>(buf) + 64, 32, mr->lkey}};
    ibv_send_wr swr[2]{};
    swr[0].wr_id = 1;
    swr[0].next = &swr[1];
    swr[0].sg_list = &sge[0];
    swr[0].num_sge = 1;
    swr[0].opcode = IBV_WR_RDMA_WRITE;
    swr[0].wr.rdma.remote_addr = 0xabc000;
    swr[0].wr.rdma.rkey = 0x99;
    swr[1].wr_id = 2;
    swr[1].sg_list = &sge[1];
    swr[1].num_sge = 1;
    swr[1].opcode = IBV_WR_SEND;
    swr[1].send_flags = IBV_SEND_SIGNALED;
    uint32_t reject_at = 0;
    k.on(IB_USER_VERBS_CMD_POST_SEND, [&](const fake::Request &r) {
        const auto c = r.as<ib_uverbs_post_send>();
        EXPECT_EQ(c.qp_handle, 0x44u);
        EXPECT_EQ(c.wr_count, 2u);
        EXPECT_EQ(c.sge_count, 2u);
        EXPECT_EQ(c.wqe_size, sizeof(ib_uverbs_send_wr));
        const size_t wrs = sizeof(ib_uverbs_post_send);
        const auto w0 = r.at<ib_uverbs_send_wr>(wrs);
        const auto w1 = r.at<ib_uverbs_send_wr>(wrs + c.wqe_size);
        EXPECT_EQ(w0.wr_id, 1u);
        EXPECT_EQ(w0.opcode, unsigned{IBV_WR_RDMA_WRITE});
        EXPECT_EQ(w0.wr.rdma.remote_addr, 0xabc000u);
        EXPECT_EQ(w0.wr.rdma.rkey, 0x99u);
        EXPECT_EQ(w1.wr_id, 2u);
        EXPECT_EQ(w1.send_flags, unsigned{IBV_SEND_SIGNALED});
        const auto s1 = r.at<ibv_sge>(wrs + 2 * c.wqe_size + sizeof(ibv_sge));
        EXPECT_EQ(s1.addr, sge[1].addr);
        EXPECT_EQ(s1.length, 32u);
        EXPECT_EQ(s1.lkey, 0x1000u);
        r.reply(ib_uverbs_post_send_resp{.bad_wr = reject_at});
        return reject_at ? EINVAL : 0;
    });
    ibv_send_wr *bad_swr = nullptr;
    EXPECT_EQ(ibv_post_send(qp, swr, &bad_swr), 0);
    reject_at = 2;
    EXPECT_EQ(ibv_post_send(qp, swr, &bad_swr), EINVAL);
    EXPECT_EQ(bad_swr, &swr[1]);

    k.on(IB_USER_VERBS_CMD_POST_RECV, [](const fake::Request &r) {
        const auto c = r.as<ib_uverbs_post_recv>();
        EXPECT_EQ(c.qp_handle, 0x44u);
        EXPECT_EQ(c.wr_count, 1u);
        EXPECT_EQ(r.at<ib_uverbs_recv_wr>(sizeof(c)).wr_id, 7u);
        r.reply(ib_uverbs_post_recv_resp{});
        return 0;
    });
    ibv_recv_wr rwr{};
    rwr.wr_id = 7;
    rwr.sg_list = &sge[0];
    rwr.num_sge = 1;
    ibv_recv_wr *bad_rwr = nullptr;
    EXPECT_EQ(ibv_post_recv(qp, &rwr, &bad_rwr), 0);

    // Multicast.
    ibv_gid gid{};
    gid.raw[0] = 0xff;
    gid.raw[15] = 0x01;
    for (uint32_t cmd : {IB_USER_VERBS_CMD_ATTACH_MCAST, IB_USER_VERBS_CMD_DETACH_MCAST})
        k.on(cmd, [](const fake::Request &r) {
            const auto c = r.as<ib_uverbs_attach_mcast>();
            EXPECT_EQ(c.gid[0], 0xff);
            EXPECT_EQ(c.gid[15], 0x01);
            EXPECT_EQ(c.qp_handle, 0x44u);
            EXPECT_EQ(c.mlid, 0xc001);
            return 0;
        });
    EXPECT_EQ(ibv_attach_mcast(qp, &gid, 0xc001), 0);
    EXPECT_EQ(ibv_detach_mcast(qp, &gid, 0xc001), 0);

    // Address handle.
    k.on(IB_USER_VERBS_CMD_CREATE_AH, [](const fake::Request &r) {
        const auto c = r.as<ib_uverbs_create_ah>();
        EXPECT_EQ(c.pd_handle, 0x11u);
        EXPECT_EQ(c.attr.is_global, 1);
        EXPECT_EQ(c.attr.grh.sgid_index, 3);
        EXPECT_EQ(c.attr.port_num, 1);
        r.reply(ib_uverbs_create_ah_resp{.ah_handle = 0x55});
        return 0;
    });
    ibv_ah_attr ah_attr{};
    ah_attr.is_global = 1;
    ah_attr.grh.sgid_index = 3;
    ah_attr.port_num = 1;
    ibv_ah *ah = ibv_create_ah(pd, &ah_attr);
    ASSERT_NE(ah, nullptr);
    EXPECT_EQ(ah->handle, 0x55u);
    EXPECT_EQ(ah->pd, pd);

    // Teardown, in the usual order; each destroy names the right handle.
    k.on(IB_USER_VERBS_CMD_DESTROY_AH, [](const fake::Request &r) {
        EXPECT_EQ(r.as<ib_uverbs_destroy_ah>().ah_handle, 0x55u);
        return 0;
    });
    EXPECT_EQ(ibv_destroy_ah(ah), 0);
    k.on(IB_USER_VERBS_CMD_DESTROY_QP, [](const fake::Request &r) {
        EXPECT_EQ(r.as<ib_uverbs_destroy_qp>().qp_handle, 0x44u);
        r.reply(ib_uverbs_destroy_qp_resp{});
        return 0;
    });
    EXPECT_EQ(ibv_destroy_qp(qp), 0);
    k.on(IB_USER_VERBS_CMD_DESTROY_CQ, [](const fake::Request &r) {
        EXPECT_EQ(r.as<ib_uverbs_destroy_cq>().cq_handle, 0x33u);
        r.reply(ib_uverbs_destroy_cq_resp{});
        return 0;
    });
    EXPECT_EQ(ibv_destroy_cq(cq), 0);
    k.on(IB_USER_VERBS_CMD_DEREG_MR, [](const fake::Request &r) {
        EXPECT_EQ(r.as<ib_uverbs_dereg_mr>().mr_handle, 0x22u);
        return 0;
    });
    EXPECT_EQ(ibv_dereg_mr(mr), 0);
    k.on(IB_USER_VERBS_CMD_DEALLOC_PD, [](const fake::Request &r) {
        EXPECT_EQ(r.as<ib_uverbs_dealloc_pd>().pd_handle, 0x11u);
        return 0;
    });
    EXPECT_EQ(ibv_dealloc_pd(pd), 0);

    for (const auto &hdr : k.ioctls)
        EXPECT_EQ(hdr.driver_id, uint32_t{METAROCE_DRIVER_ID});
}

// SRQ verbs: each command names the SRQ's handle and carries the caller's
// attributes; create returns what the kernel granted.
TEST_F(ProviderContext, SrqVerbsPassThroughTheKernel) {
    open_context();
    auto &k = *kernel_;
    ibv_pd pd{};
    pd.context = ctx_;
    pd.handle = 0x11;

    k.on(IB_USER_VERBS_CMD_CREATE_SRQ, [](const fake::Request &r) {
        // It asks for a mapped ring; no answer: receives by command.
        EXPECT_EQ(r.in_words * 4u,
                  sizeof(metaroce::cmd::CreateSrq) + sizeof(metaroce_create_srq_cmd));
        EXPECT_EQ(r.at<metaroce_create_srq_cmd>(sizeof(metaroce::cmd::CreateSrq) -
                                                sizeof(ib_uverbs_cmd_hdr))
                      .flags,
                  uint32_t{METAROCE_SRQ_RING});
        const auto c = r.as<ib_uverbs_create_srq>();
        EXPECT_EQ(c.pd_handle, 0x11u);
        EXPECT_EQ(c.max_wr, 100u);
        EXPECT_EQ(c.max_sge, 2u);
        ib_uverbs_create_srq_resp resp{};
        resp.srq_handle = 0x66;
        resp.max_wr = 128;
        resp.max_sge = 3;
        r.reply(resp);
        return 0;
    });
    ibv_srq_init_attr init{};
    init.attr.max_wr = 100;
    init.attr.max_sge = 2;
    init.srq_context = &pd;
    ibv_srq *srq = ibv_create_srq(&pd, &init);
    ASSERT_NE(srq, nullptr) << "errno " << errno;
    EXPECT_EQ(srq->handle, 0x66u);
    EXPECT_EQ(srq->context, ctx_);
    EXPECT_EQ(srq->pd, &pd);
    EXPECT_EQ(srq->srq_context, &pd);
    // The granted sizes are not checked: as for CREATE_QP above, without the
    // uverbs ABI version from sysfs libibverbs reads the oldest response.

    k.on(IB_USER_VERBS_CMD_MODIFY_SRQ, [](const fake::Request &r) {
        EXPECT_EQ(r.in_words * 4u, sizeof(metaroce::cmd::ModifySrq));
        const auto c = r.as<ib_uverbs_modify_srq>();
        EXPECT_EQ(c.srq_handle, 0x66u);
        EXPECT_EQ(c.attr_mask, unsigned(IBV_SRQ_LIMIT));
        EXPECT_EQ(c.srq_limit, 10u);
        return 0;
    });
    ibv_srq_attr attr{};
    attr.srq_limit = 10;
    EXPECT_EQ(ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT), 0);
    k.on(IB_USER_VERBS_CMD_MODIFY_SRQ, [](const fake::Request &) { return EINVAL; });
    EXPECT_EQ(ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT), EINVAL);

    k.on(IB_USER_VERBS_CMD_QUERY_SRQ, [](const fake::Request &r) {
        EXPECT_EQ(r.as<ib_uverbs_query_srq>().srq_handle, 0x66u);
        ib_uverbs_query_srq_resp resp{};
        resp.max_wr = 128;
        resp.max_sge = 3;
        resp.srq_limit = 10;
        r.reply(resp);
        return 0;
    });
    attr = {};
    EXPECT_EQ(ibv_query_srq(srq, &attr), 0);
    EXPECT_EQ(attr.max_wr, 128u);
    EXPECT_EQ(attr.max_sge, 3u);
    EXPECT_EQ(attr.srq_limit, 10u);

    k.on(IB_USER_VERBS_CMD_POST_SRQ_RECV, [](const fake::Request &r) {
        const auto c = r.as<ib_uverbs_post_srq_recv>();
        EXPECT_EQ(c.srq_handle, 0x66u);
        EXPECT_EQ(c.wr_count, 1u);
        EXPECT_EQ(r.at<ib_uverbs_recv_wr>(sizeof(c)).wr_id, 9u);
        r.reply(ib_uverbs_post_srq_recv_resp{});
        return 0;
    });
    ibv_sge sge{.addr = 0x1000, .length = 64, .lkey = 0x22};
    ibv_recv_wr rwr{};
    rwr.wr_id = 9;
    rwr.sg_list = &sge;
    rwr.num_sge = 1;
    ibv_recv_wr *bad = nullptr;
    EXPECT_EQ(ibv_post_srq_recv(srq, &rwr, &bad), 0);

    // A refused destroy (the kernel's EBUSY while a QP uses it) keeps the SRQ.
    k.on(IB_USER_VERBS_CMD_DESTROY_SRQ, [](const fake::Request &) { return EBUSY; });
    EXPECT_EQ(ibv_destroy_srq(srq), EBUSY);
    k.on(IB_USER_VERBS_CMD_DESTROY_SRQ, [](const fake::Request &r) {
        EXPECT_EQ(r.as<ib_uverbs_destroy_srq>().srq_handle, 0x66u);
        r.reply(ib_uverbs_destroy_srq_resp{});
        return 0;
    });
    EXPECT_EQ(ibv_destroy_srq(srq), 0);

    for (const auto &hdr : k.ioctls)
        EXPECT_EQ(hdr.driver_id, uint32_t{METAROCE_DRIVER_ID});
}

} // namespace

// Extended QPs: ibv_create_qp_ex() refuses what it cannot honour, and the
// ibv_wr_* calls between wr_start() and wr_complete() become one POST_SEND.
TEST_F(ProviderContext, ExtendedQpBatchesWorkRequestsIntoOnePostSend) {
    open_context();
    auto &k = *kernel_;
    ibv_pd pd{};
    pd.context = ctx_;
    pd.handle = 0x11;
    metaroce::Cq provider_cq{};
    pthread_spin_init(&provider_cq.lock, PTHREAD_PROCESS_PRIVATE);
    ibv_cq &cq = provider_cq.cq;
    cq.context = ctx_;
    cq.handle = 0x33;
    int create_qp_commands = 0;
    k.on(IB_USER_VERBS_CMD_CREATE_QP, [&](const fake::Request &r) {
        ++create_qp_commands;
        EXPECT_EQ(r.as<ib_uverbs_create_qp>().pd_handle, 0x11u);
        ib_uverbs_create_qp_resp resp{};
        resp.qp_handle = 0x44;
        resp.qpn = 0x123;
        r.reply(resp);
        return 0;
    });

    ibv_qp_init_attr_ex init{};
    init.send_cq = init.recv_cq = &cq;
    init.cap.max_send_wr = init.cap.max_recv_wr = 4;
    init.cap.max_send_sge = init.cap.max_recv_sge = 2;
    init.cap.max_inline_data = 16;
    init.qp_type = IBV_QPT_RC;
    init.pd = &pd;
    init.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS;
    // Refused without a CREATE_QP command: create flags, TSO, send ops of
    // other QP types or that the kernel does not execute.
    init.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
    errno = 0;
    EXPECT_EQ(ibv_create_qp_ex(ctx_, &init), nullptr);
    EXPECT_EQ(errno, EOPNOTSUPP);
    init.create_flags = 0;
    init.comp_mask |= IBV_QP_INIT_ATTR_MAX_TSO_HEADER;
    errno = 0;
    EXPECT_EQ(ibv_create_qp_ex(ctx_, &init), nullptr);
    EXPECT_EQ(errno, EOPNOTSUPP);
    init.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    init.send_ops_flags = IBV_QP_EX_WITH_TSO;
    errno = 0;
    EXPECT_EQ(ibv_create_qp_ex(ctx_, &init), nullptr);
    EXPECT_EQ(errno, EOPNOTSUPP);
    init.qp_type = IBV_QPT_UD;
    init.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE;
    errno = 0;
    EXPECT_EQ(ibv_create_qp_ex(ctx_, &init), nullptr);
    EXPECT_EQ(errno, EOPNOTSUPP);
    EXPECT_EQ(create_qp_commands, 0);

    // Create flags 0 are accepted; without send ops there is no qp_ex.
    init.qp_type = IBV_QPT_RC;
    init.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS;
    ibv_qp *plain = ibv_create_qp_ex(ctx_, &init);
    ASSERT_NE(plain, nullptr);
    EXPECT_EQ(ibv_qp_to_qp_ex(plain), nullptr);
    k.on(IB_USER_VERBS_CMD_DESTROY_QP, [](const fake::Request &r) {
        EXPECT_EQ(r.as<ib_uverbs_destroy_qp>().qp_handle, 0x44u);
        r.reply(ib_uverbs_destroy_qp_resp{});
        return 0;
    });
    EXPECT_EQ(ibv_destroy_qp(plain), 0);

    init.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    init.send_ops_flags =
        IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP;
    ibv_qp *qp = ibv_create_qp_ex(ctx_, &init);
    ASSERT_NE(qp, nullptr);
    EXPECT_EQ(create_qp_commands, 2);
    EXPECT_EQ(qp->handle, 0x44u);
    EXPECT_EQ(qp->state, IBV_QPS_RESET);
    ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
    ASSERT_NE(qpx, nullptr);

    std::vector<ib_uverbs_send_wr> posted;
    std::vector<ibv_sge> posted_sges;
    int post_error = 0;
    k.on(IB_USER_VERBS_CMD_POST_SEND, [&](const fake::Request &r) {
        const auto c = r.as<ib_uverbs_post_send>();
        EXPECT_EQ(c.qp_handle, 0x44u);
        posted.clear();
        posted_sges.clear();
        for (uint32_t i = 0; i < c.wr_count; ++i)
            posted.push_back(r.at<ib_uverbs_send_wr>(sizeof(c) + i * c.wqe_size));
        for (uint32_t i = 0; i < c.sge_count; ++i)
            posted_sges.push_back(
                r.at<ibv_sge>(sizeof(c) + c.wr_count * c.wqe_size + i * sizeof(ibv_sge)));
        r.reply(ib_uverbs_post_send_resp{.bad_wr = post_error ? 1u : 0u});
        return post_error;
    });

    char inline_bytes[] = "0123456789";
    ibv_wr_start(qpx);
    qpx->wr_id = 1;
    qpx->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_rdma_write(qpx, 0x99, 0xabc000);
    const ibv_sge sges[2] = {{0x1000, 8, 0x7}, {0x2000, 4, 0x7}};
    ibv_wr_set_sge_list(qpx, 2, sges);
    qpx->wr_id = 2;
    qpx->wr_flags = 0;
    ibv_wr_send(qpx);
    ibv_wr_set_inline_data(qpx, inline_bytes, 10);
    std::memset(inline_bytes, 'x', sizeof(inline_bytes)); // the provider kept a copy
    qpx->wr_id = 3;
    ibv_wr_atomic_cmp_swp(qpx, 0x98, 0xdef000, 5, 6);
    ibv_wr_set_sge(qpx, 0x8, 0x3000, 8);
    ASSERT_EQ(ibv_wr_complete(qpx), 0);
    ASSERT_EQ(posted.size(), 3u);
    EXPECT_EQ(posted[0].wr_id, 1u);
    EXPECT_EQ(posted[0].opcode, unsigned{IBV_WR_RDMA_WRITE});
    EXPECT_EQ(posted[0].send_flags, unsigned{IBV_SEND_SIGNALED});
    EXPECT_EQ(posted[0].num_sge, 2u);
    EXPECT_EQ(posted[0].wr.rdma.rkey, 0x99u);
    EXPECT_EQ(posted[0].wr.rdma.remote_addr, 0xabc000u);
    EXPECT_EQ(posted[1].opcode, unsigned{IBV_WR_SEND});
    EXPECT_EQ(posted[1].send_flags, unsigned{IBV_SEND_INLINE});
    EXPECT_EQ(posted[2].opcode, unsigned{IBV_WR_ATOMIC_CMP_AND_SWP});
    EXPECT_EQ(posted[2].wr.atomic.compare_add, 5u);
    EXPECT_EQ(posted[2].wr.atomic.swap, 6u);
    EXPECT_EQ(posted[2].wr.atomic.rkey, 0x98u);
    ASSERT_EQ(posted_sges.size(), 4u);
    EXPECT_EQ(posted_sges[1].addr, 0x2000u);
    EXPECT_EQ(posted_sges[2].length, 10u);
    EXPECT_EQ(std::memcmp(reinterpret_cast<const void *>(posted_sges[2].addr), "0123456789", 10),
              0);
    EXPECT_EQ(posted_sges[3].lkey, 0x8u);

    // Aborted and empty batches post nothing.
    posted.clear();
    ibv_wr_start(qpx);
    ibv_wr_send(qpx);
    ibv_wr_abort(qpx);
    ibv_wr_start(qpx);
    EXPECT_EQ(ibv_wr_complete(qpx), 0);
    EXPECT_TRUE(posted.empty());

    // Errors surface at wr_complete(), and the batch is dropped: an opcode
    // not requested at creation, more requests than the send queue, or the
    // kernel refusing the POST_SEND.
    ibv_wr_start(qpx);
    ibv_wr_send_imm(qpx, 0);
    EXPECT_EQ(ibv_wr_complete(qpx), EOPNOTSUPP);
    ibv_wr_start(qpx);
    for (int i = 0; i < 5; ++i)
        ibv_wr_send(qpx);
    EXPECT_EQ(ibv_wr_complete(qpx), ENOMEM);
    EXPECT_TRUE(posted.empty());
    post_error = EINVAL;
    ibv_wr_start(qpx);
    ibv_wr_send(qpx);
    EXPECT_EQ(ibv_wr_complete(qpx), EINVAL);
    EXPECT_EQ(posted.size(), 1u);

    EXPECT_EQ(ibv_destroy_qp(qp), 0);
}

// Extended CQs: ibv_create_cq_ex() refuses the wc_flags it cannot give, and
// start_poll()/next_poll() read one completion per POLL_CQ.
TEST_F(ProviderContext, ExtendedCqPollsThroughTheKernel) {
    open_context();
    auto &k = *kernel_;
    int create_cq_commands = 0;
    k.on(IB_USER_VERBS_CMD_CREATE_CQ, [&](const fake::Request &r) {
        ++create_cq_commands;
        EXPECT_EQ(r.as<ib_uverbs_create_cq>().cqe, 10u);
        ib_uverbs_create_cq_resp resp{};
        resp.cq_handle = 0x33;
        resp.cqe = 15;
        r.reply(resp);
        return 0;
    });
    // ibv_create_cq_ex() reaches the provider through a libibverbs wrapper
    // that verbs_open_device() installs; this test calls the provider directly.
    ibv_cq_init_attr_ex attr{};
    attr.cqe = 10;
    attr.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
    errno = 0;
    EXPECT_EQ(kContextOps.create_cq_ex(ctx_, &attr), nullptr);
    EXPECT_EQ(errno, EOPNOTSUPP);
    attr.wc_flags = 0;
    attr.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
    attr.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
    errno = 0;
    EXPECT_EQ(kContextOps.create_cq_ex(ctx_, &attr), nullptr);
    EXPECT_EQ(errno, EOPNOTSUPP);
    EXPECT_EQ(create_cq_commands, 0);

    attr.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
    attr.wc_flags = IBV_WC_STANDARD_FLAGS;
    int cookie = 0;
    attr.cq_context = &cookie;
    ibv_cq_ex *cq_ex = kContextOps.create_cq_ex(ctx_, &attr);
    ASSERT_NE(cq_ex, nullptr) << "errno " << errno;
    EXPECT_EQ(create_cq_commands, 1);
    ibv_cq *cq = ibv_cq_ex_to_cq(cq_ex);
    EXPECT_EQ(cq->handle, 0x33u);
    EXPECT_EQ(cq->cq_context, &cookie);

    std::vector<ib_uverbs_wc> pending = {{.wr_id = 5,
                                          .status = IBV_WC_SUCCESS,
                                          .opcode = IBV_WC_RECV,
                                          .vendor_err = 0,
                                          .byte_len = 64,
                                          .ex = {.imm_data = 0x1234},
                                          .qp_num = 0x123,
                                          .src_qp = 0x77,
                                          .wc_flags = IBV_WC_WITH_IMM,
                                          .pkey_index = 0,
                                          .slid = 9,
                                          .sl = 2,
                                          .dlid_path_bits = 1,
                                          .port_num = 1,
                                          .reserved = 0},
                                         {.wr_id = 6,
                                          .status = IBV_WC_REM_ACCESS_ERR,
                                          .opcode = IBV_WC_RDMA_WRITE,
                                          .vendor_err = 0x42,
                                          .byte_len = 0,
                                          .ex = {.imm_data = 0},
                                          .qp_num = 0x123,
                                          .src_qp = 0,
                                          .wc_flags = 0,
                                          .pkey_index = 0,
                                          .slid = 0,
                                          .sl = 0,
                                          .dlid_path_bits = 0,
                                          .port_num = 1,
                                          .reserved = 0}};
    k.on(IB_USER_VERBS_CMD_POLL_CQ, [&](const fake::Request &r) {
        const auto c = r.as<ib_uverbs_poll_cq>();
        EXPECT_EQ(c.cq_handle, 0x33u);
        EXPECT_EQ(c.ne, 1u);
        ib_uverbs_poll_cq_resp head{};
        std::vector<uint8_t> out(sizeof(head) + sizeof(ib_uverbs_wc));
        if (!pending.empty()) {
            head.count = 1;
            std::memcpy(out.data() + sizeof(head), &pending.front(), sizeof(ib_uverbs_wc));
            pending.erase(pending.begin());
        }
        std::memcpy(out.data(), &head, sizeof(head));
        r.reply(out.data(), out.size());
        return 0;
    });
    ibv_poll_cq_attr poll_attr{};
    ASSERT_EQ(ibv_start_poll(cq_ex, &poll_attr), 0);
    EXPECT_EQ(cq_ex->wr_id, 5u);
    EXPECT_EQ(cq_ex->status, IBV_WC_SUCCESS);
    EXPECT_EQ(ibv_wc_read_opcode(cq_ex), IBV_WC_RECV);
    EXPECT_EQ(ibv_wc_read_byte_len(cq_ex), 64u);
    EXPECT_EQ(ibv_wc_read_imm_data(cq_ex), 0x1234u);
    EXPECT_EQ(ibv_wc_read_qp_num(cq_ex), 0x123u);
    EXPECT_EQ(ibv_wc_read_src_qp(cq_ex), 0x77u);
    EXPECT_EQ(ibv_wc_read_wc_flags(cq_ex), unsigned{IBV_WC_WITH_IMM});
    EXPECT_EQ(ibv_wc_read_slid(cq_ex), 9u);
    EXPECT_EQ(ibv_wc_read_sl(cq_ex), 2);
    EXPECT_EQ(ibv_wc_read_dlid_path_bits(cq_ex), 1);
    ASSERT_EQ(ibv_next_poll(cq_ex), 0);
    EXPECT_EQ(cq_ex->wr_id, 6u);
    EXPECT_EQ(cq_ex->status, IBV_WC_REM_ACCESS_ERR);
    EXPECT_EQ(ibv_wc_read_vendor_err(cq_ex), 0x42u);
    EXPECT_EQ(ibv_next_poll(cq_ex), ENOENT);
    ibv_end_poll(cq_ex);
    EXPECT_EQ(ibv_start_poll(cq_ex, &poll_attr), ENOENT);
    poll_attr.comp_mask = 1;
    EXPECT_EQ(ibv_start_poll(cq_ex, &poll_attr), EINVAL);

    k.on(IB_USER_VERBS_CMD_DESTROY_CQ, [](const fake::Request &r) {
        EXPECT_EQ(r.as<ib_uverbs_destroy_cq>().cq_handle, 0x33u);
        r.reply(ib_uverbs_destroy_cq_resp{});
        return 0;
    });
    EXPECT_EQ(ibv_destroy_cq(cq), 0);
}
