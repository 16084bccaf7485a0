// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Our own declaration of the part of libibverbs' private provider interface
// (symbol version IBVERBS_PRIVATE_34, rdma-core 44) that soft-MetaRoCE uses.
//
// Debian ships only the public verbs headers, not rdma-core's provider-side
// headers, so the layouts below are written from the facts of the rdma-core
// 44 ABI: member order, types and sizes. Names of struct tags follow the ABI's
// names where that helps cross-checking; member names and everything else are
// ours. Each layout is pinned by static_asserts here and checked at run time
// against the real libibverbs by tests/abi_test.cpp.
//
// Rule for editing: never reorder, insert or remove members. The ABI changes
// only together with the IBVERBS_PRIVATE_NN version.
#ifndef METAROCE_VERBS_PRIVATE_H
#define METAROCE_VERBS_PRIVATE_H

// System headers first, never inside extern "C".
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <sys/types.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

// --- Matching ------------------------------------------------------------

// verbs_match_ent::kind
enum : uint8_t {
    METAROCE_MATCH_SENTINEL = 0, // end of table
    METAROCE_MATCH_PCI = 1,
    METAROCE_MATCH_MODALIAS = 2,  // fnmatch() pattern, also used for names
    METAROCE_MATCH_DRIVER_ID = 3, // enum rdma_driver_id reported by netlink
};

// One entry of a provider's match table; the table ends with kind == 0.
struct verbs_match_ent {
    void *driver_data;
    union {
        const char *modalias;
        uint64_t driver_id;
    } u;
    uint16_t vendor;
    uint16_t device;
    uint8_t kind;
};

// Doubly linked list hook used inside libibverbs' own bookkeeping.
struct verbs_list_node {
    verbs_list_node *next;
    verbs_list_node *prev;
};

// A uverbs device found by libibverbs (via netlink or sysfs). Owned by
// libibverbs; the provider only reads it.
struct verbs_sysfs_dev {
    verbs_list_node entry;
    void *provider_data;
    const verbs_match_ent *match; // table entry that matched, or null
    unsigned int flags;
    char sysfs_name[IBV_SYSFS_NAME_MAX]; // "uverbs0"
    dev_t sysfs_cdev;
    char ibdev_name[IBV_SYSFS_NAME_MAX]; // "metaroce0"
    char ibdev_path[IBV_SYSFS_PATH_MAX];
    char modalias[512];
    uint64_t node_guid;
    uint32_t driver_id;
    ibv_node_type node_type;
    int ibdev_idx;
    uint32_t num_ports;
    uint32_t abi_ver;
    timespec time_created;
};

struct verbs_device;

// The table a provider registers with verbs_register_driver_34().
struct verbs_device_ops {
    const char *name;
    uint32_t match_min_abi_version;
    uint32_t match_max_abi_version;
    const verbs_match_ent *match_table;
    const verbs_device_ops **static_providers;
    // Called after the table match, for every device; its answer decides.
    bool (*match_device)(verbs_sysfs_dev *sysfs_dev);
    verbs_context *(*alloc_context)(ibv_device *device, int cmd_fd, void *private_data);
    verbs_context *(*import_context)(ibv_device *device, int cmd_fd);
    verbs_device *(*alloc_device)(verbs_sysfs_dev *sysfs_dev);
    void (*uninit_device)(verbs_device *device);
};

// Allocated by the provider's alloc_device(); libibverbs fills in ops,
// refcount, sysfs and the ibv_device names afterwards.
struct verbs_device {
    ibv_device device; // must stay first
    const verbs_device_ops *ops;
    int refcount; // a C11 atomic_int, touched only by libibverbs
    verbs_list_node entry;
    verbs_sysfs_dev *sysfs;
    uint64_t core_support; // IB_UVERBS_CORE_SUPPORT_* from GET_CONTEXT
};

// --- Objects whose layout libibverbs looks into ----------------------------

enum verbs_mr_type : int {
    METAROCE_MR_TYPE_MR = 0,
    METAROCE_MR_TYPE_NULL_MR = 1,
    METAROCE_MR_TYPE_IMPORTED_MR = 2,
    METAROCE_MR_TYPE_DMABUF_MR = 3,
};

// ibv_dereg_mr() reads mr_type and access; ibv_cmd_reg_mr() writes them.
struct verbs_mr {
    ibv_mr mr;
    verbs_mr_type mr_type;
    int access;
};

struct verbs_xrcd;

// verbs_qp::comp_mask bits
enum : uint32_t {
    METAROCE_VERBS_QP_XRCD = 1u << 0,
    METAROCE_VERBS_QP_EX = 1u << 1,
};

// ibv_qp_to_qp_ex() casts every ibv_qp to this and reads comp_mask.
struct verbs_qp {
    union {
        ibv_qp qp;
        ibv_qp_ex qp_ex;
    };
    uint32_t comp_mask;
    verbs_xrcd *xrcd;
};

// --- The per-context operation table ----------------------------------------
//
// Every member is a function pointer and the members are in rdma-core 44's
// order (alphabetical). libibverbs also derives a per-command bit from each
// member's offset, so the order is ABI even for slots we leave null. A null
// slot means "not implemented": libibverbs substitutes a stub for it.
struct verbs_context_ops {
    int (*advise_mr)(ibv_pd *pd, ibv_advise_mr_advice advice, uint32_t flags, ibv_sge *sg_list,
                     uint32_t num_sges) = nullptr;
    ibv_dm *(*alloc_dm)(ibv_context *context, ibv_alloc_dm_attr *attr) = nullptr;
    ibv_mw *(*alloc_mw)(ibv_pd *pd, ibv_mw_type type) = nullptr;
    ibv_mr *(*alloc_null_mr)(ibv_pd *pd) = nullptr;
    ibv_pd *(*alloc_parent_domain)(ibv_context *context,
                                   ibv_parent_domain_init_attr *attr) = nullptr;
    ibv_pd *(*alloc_pd)(ibv_context *context) = nullptr;
    ibv_td *(*alloc_td)(ibv_context *context, ibv_td_init_attr *init_attr) = nullptr;
    void (*async_event)(ibv_context *context, ibv_async_event *event) = nullptr;
    int (*attach_counters_point_flow)(ibv_counters *counters, ibv_counter_attach_attr *attr,
                                      ibv_flow *flow) = nullptr;
    int (*attach_mcast)(ibv_qp *qp, const ibv_gid *gid, uint16_t lid) = nullptr;
    int (*bind_mw)(ibv_qp *qp, ibv_mw *mw, ibv_mw_bind *mw_bind) = nullptr;
    int (*close_xrcd)(ibv_xrcd *xrcd) = nullptr;
    void (*cq_event)(ibv_cq *cq) = nullptr;
    ibv_ah *(*create_ah)(ibv_pd *pd, ibv_ah_attr *attr) = nullptr;
    ibv_counters *(*create_counters)(ibv_context *context,
                                     ibv_counters_init_attr *init_attr) = nullptr;
    ibv_cq *(*create_cq)(ibv_context *context, int cqe, ibv_comp_channel *channel,
                         int comp_vector) = nullptr;
    ibv_cq_ex *(*create_cq_ex)(ibv_context *context, ibv_cq_init_attr_ex *init_attr) = nullptr;
    ibv_flow *(*create_flow)(ibv_qp *qp, ibv_flow_attr *flow_attr) = nullptr;
    ibv_flow_action *(*create_flow_action_esp)(ibv_context *context,
                                               ibv_flow_action_esp_attr *attr) = nullptr;
    ibv_qp *(*create_qp)(ibv_pd *pd, ibv_qp_init_attr *attr) = nullptr;
    ibv_qp *(*create_qp_ex)(ibv_context *context, ibv_qp_init_attr_ex *qp_init_attr_ex) = nullptr;
    ibv_rwq_ind_table *(*create_rwq_ind_table)(ibv_context *context,
                                               ibv_rwq_ind_table_init_attr *init_attr) = nullptr;
    ibv_srq *(*create_srq)(ibv_pd *pd, ibv_srq_init_attr *srq_init_attr) = nullptr;
    ibv_srq *(*create_srq_ex)(ibv_context *context,
                              ibv_srq_init_attr_ex *srq_init_attr_ex) = nullptr;
    ibv_wq *(*create_wq)(ibv_context *context, ibv_wq_init_attr *wq_init_attr) = nullptr;
    int (*dealloc_mw)(ibv_mw *mw) = nullptr;
    int (*dealloc_pd)(ibv_pd *pd) = nullptr;
    int (*dealloc_td)(ibv_td *td) = nullptr;
    int (*dereg_mr)(verbs_mr *vmr) = nullptr;
    int (*destroy_ah)(ibv_ah *ah) = nullptr;
    int (*destroy_counters)(ibv_counters *counters) = nullptr;
    int (*destroy_cq)(ibv_cq *cq) = nullptr;
    int (*destroy_flow)(ibv_flow *flow) = nullptr;
    int (*destroy_flow_action)(ibv_flow_action *action) = nullptr;
    int (*destroy_qp)(ibv_qp *qp) = nullptr;
    int (*destroy_rwq_ind_table)(ibv_rwq_ind_table *rwq_ind_table) = nullptr;
    int (*destroy_srq)(ibv_srq *srq) = nullptr;
    int (*destroy_wq)(ibv_wq *wq) = nullptr;
    int (*detach_mcast)(ibv_qp *qp, const ibv_gid *gid, uint16_t lid) = nullptr;
    void (*free_context)(ibv_context *context) = nullptr;
    int (*free_dm)(ibv_dm *dm) = nullptr;
    int (*get_srq_num)(ibv_srq *srq, uint32_t *srq_num) = nullptr;
    ibv_dm *(*import_dm)(ibv_context *context, uint32_t dm_handle) = nullptr;
    ibv_mr *(*import_mr)(ibv_pd *pd, uint32_t mr_handle) = nullptr;
    ibv_pd *(*import_pd)(ibv_context *context, uint32_t pd_handle) = nullptr;
    int (*modify_cq)(ibv_cq *cq, ibv_modify_cq_attr *attr) = nullptr;
    int (*modify_flow_action_esp)(ibv_flow_action *action,
                                  ibv_flow_action_esp_attr *attr) = nullptr;
    int (*modify_qp)(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask) = nullptr;
    int (*modify_qp_rate_limit)(ibv_qp *qp, ibv_qp_rate_limit_attr *attr) = nullptr;
    int (*modify_srq)(ibv_srq *srq, ibv_srq_attr *srq_attr, int srq_attr_mask) = nullptr;
    int (*modify_wq)(ibv_wq *wq, ibv_wq_attr *wq_attr) = nullptr;
    ibv_qp *(*open_qp)(ibv_context *context, ibv_qp_open_attr *attr) = nullptr;
    ibv_xrcd *(*open_xrcd)(ibv_context *context, ibv_xrcd_init_attr *xrcd_init_attr) = nullptr;
    int (*poll_cq)(ibv_cq *cq, int num_entries, ibv_wc *wc) = nullptr;
    int (*post_recv)(ibv_qp *qp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr) = nullptr;
    int (*post_send)(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad_wr) = nullptr;
    int (*post_srq_ops)(ibv_srq *srq, ibv_ops_wr *op, ibv_ops_wr **bad_op) = nullptr;
    int (*post_srq_recv)(ibv_srq *srq, ibv_recv_wr *recv_wr, ibv_recv_wr **bad_recv_wr) = nullptr;
    int (*query_device_ex)(ibv_context *context, const ibv_query_device_ex_input *input,
                           ibv_device_attr_ex *attr, size_t attr_size) = nullptr;
    int (*query_ece)(ibv_qp *qp, ibv_ece *ece) = nullptr;
    int (*query_port)(ibv_context *context, uint8_t port_num, ibv_port_attr *port_attr) = nullptr;
    int (*query_qp)(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask,
                    ibv_qp_init_attr *init_attr) = nullptr;
    int (*query_qp_data_in_order)(ibv_qp *qp, ibv_wr_opcode op, uint32_t flags) = nullptr;
    int (*query_rt_values)(ibv_context *context, ibv_values_ex *values) = nullptr;
    int (*query_srq)(ibv_srq *srq, ibv_srq_attr *srq_attr) = nullptr;
    int (*read_counters)(ibv_counters *counters, uint64_t *counters_value, uint32_t ncounters,
                         uint32_t flags) = nullptr;
    ibv_mr *(*reg_dm_mr)(ibv_pd *pd, ibv_dm *dm, uint64_t dm_offset, size_t length,
                         unsigned int access) = nullptr;
    ibv_mr *(*reg_dmabuf_mr)(ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova, int fd,
                             int access) = nullptr;
    ibv_mr *(*reg_mr)(ibv_pd *pd, void *addr, size_t length, uint64_t hca_va, int access) = nullptr;
    int (*req_notify_cq)(ibv_cq *cq, int solicited_only) = nullptr;
    int (*rereg_mr)(verbs_mr *vmr, int flags, ibv_pd *pd, void *addr, size_t length,
                    int access) = nullptr;
    int (*resize_cq)(ibv_cq *cq, int cqe) = nullptr;
    int (*set_ece)(ibv_qp *qp, ibv_ece *ece) = nullptr;
    void (*unimport_dm)(ibv_dm *dm) = nullptr;
    void (*unimport_mr)(ibv_mr *mr) = nullptr;
    void (*unimport_pd)(ibv_pd *pd) = nullptr;
};

// --- write() command buffers ------------------------------------------------
//
// The ibv_cmd_* helpers take "header + core request" buffers and a size. A
// size larger than the struct means driver-private request data follows; we
// send none, so we always pass exactly sizeof(the struct).
namespace metaroce::cmd {

template <typename Core> struct WriteCmd {
    ib_uverbs_cmd_hdr hdr;
    Core core;
};

using GetContext = WriteCmd<ib_uverbs_get_context>;
using QueryPort = WriteCmd<ib_uverbs_query_port>;
using AllocPd = WriteCmd<ib_uverbs_alloc_pd>;
using RegMr = WriteCmd<ib_uverbs_reg_mr>;
using AllocMw = WriteCmd<ib_uverbs_alloc_mw>;
using CreateCq = WriteCmd<ib_uverbs_create_cq>;
using ResizeCq = WriteCmd<ib_uverbs_resize_cq>;
using CreateQp = WriteCmd<ib_uverbs_create_qp>;
using ModifyQp = WriteCmd<ib_uverbs_modify_qp>;
using QueryQp = WriteCmd<ib_uverbs_query_qp>;
using CreateSrq = WriteCmd<ib_uverbs_create_srq>;
using ModifySrq = WriteCmd<ib_uverbs_modify_srq>;
using QuerySrq = WriteCmd<ib_uverbs_query_srq>;

} // namespace metaroce::cmd

// --- Functions exported by libibverbs at IBVERBS_PRIVATE_34 -----------------
//
// Unless noted, the int-returning ibv_cmd_* return 0 or a positive errno
// value. They are C functions and never throw.
extern "C" {

// What the driver.h macro verbs_register_driver() expands to for PABI 34.
void verbs_register_driver_34(const verbs_device_ops *ops) noexcept;

// calloc()s alloc_size bytes, initialises the verbs_context found at byte
// offset context_offset (passed as a pointer) and records driver_id, which
// libibverbs then writes into every ioctl header. On failure it closes cmd_fd,
// sets errno and returns null.
void *_verbs_init_and_alloc_context(ibv_device *device, int cmd_fd, size_t alloc_size,
                                    verbs_context *context_offset, uint32_t driver_id) noexcept;
void verbs_uninit_context(verbs_context *context) noexcept; // closes cmd_fd/async_fd
void verbs_set_ops(verbs_context *vctx, const verbs_context_ops *ops) noexcept;

int ibv_cmd_get_context(verbs_context *context, metaroce::cmd::GetContext *cmd, size_t cmd_size,
                        ib_uverbs_get_context_resp *resp, size_t resp_size) noexcept;
int ibv_cmd_query_device_any(ibv_context *context, const ibv_query_device_ex_input *input,
                             ibv_device_attr_ex *attr, size_t attr_size,
                             ib_uverbs_ex_query_device_resp *resp, size_t *resp_size) noexcept;
int ibv_cmd_query_port(ibv_context *context, uint8_t port_num, ibv_port_attr *port_attr,
                       metaroce::cmd::QueryPort *cmd, size_t cmd_size) noexcept;
int ibv_cmd_alloc_pd(ibv_context *context, ibv_pd *pd, metaroce::cmd::AllocPd *cmd, size_t cmd_size,
                     ib_uverbs_alloc_pd_resp *resp, size_t resp_size) noexcept;
int ibv_cmd_dealloc_pd(ibv_pd *pd) noexcept;
int ibv_cmd_reg_mr(ibv_pd *pd, void *addr, size_t length, uint64_t hca_va, int access,
                   verbs_mr *vmr, metaroce::cmd::RegMr *cmd, size_t cmd_size,
                   ib_uverbs_reg_mr_resp *resp, size_t resp_size) noexcept;
int ibv_cmd_dereg_mr(verbs_mr *vmr) noexcept;
// Fills mw->context, pd, rkey, handle and type.
int ibv_cmd_alloc_mw(ibv_pd *pd, ibv_mw_type type, ibv_mw *mw, metaroce::cmd::AllocMw *cmd,
                     size_t cmd_size, ib_uverbs_alloc_mw_resp *resp, size_t resp_size) noexcept;
int ibv_cmd_dealloc_mw(ibv_mw *mw) noexcept;
int ibv_cmd_create_cq(ibv_context *context, int cqe, ibv_comp_channel *channel, int comp_vector,
                      ibv_cq *cq, metaroce::cmd::CreateCq *cmd, size_t cmd_size,
                      ib_uverbs_create_cq_resp *resp, size_t resp_size) noexcept;
int ibv_cmd_destroy_cq(ibv_cq *cq) noexcept;
int ibv_cmd_resize_cq(ibv_cq *cq, int cqe, metaroce::cmd::ResizeCq *cmd, size_t cmd_size,
                      ib_uverbs_resize_cq_resp *resp, size_t resp_size) noexcept;
// Returns the number of completions, or -1 with errno set.
int ibv_cmd_poll_cq(ibv_cq *cq, int ne, ibv_wc *wc) noexcept;
int ibv_cmd_req_notify_cq(ibv_cq *cq, int solicited_only) noexcept;
int ibv_cmd_create_qp(ibv_pd *pd, ibv_qp *qp, ibv_qp_init_attr *attr, metaroce::cmd::CreateQp *cmd,
                      size_t cmd_size, ib_uverbs_create_qp_resp *resp, size_t resp_size) noexcept;
int ibv_cmd_modify_qp(ibv_qp *qp, ibv_qp_attr *attr, int attr_mask, metaroce::cmd::ModifyQp *cmd,
                      size_t cmd_size) noexcept;
int ibv_cmd_query_qp(ibv_qp *qp, ibv_qp_attr *qp_attr, int attr_mask,
                     ibv_qp_init_attr *qp_init_attr, metaroce::cmd::QueryQp *cmd,
                     size_t cmd_size) noexcept;
int ibv_cmd_destroy_qp(ibv_qp *qp) noexcept;
// On failure *bad_wr names the first work request the kernel did not take.
int ibv_cmd_post_send(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad_wr) noexcept;
int ibv_cmd_post_recv(ibv_qp *qp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept;
// Fills srq->context and srq->handle; copies the granted max_wr/max_sge back
// into attr->attr.
int ibv_cmd_create_srq(ibv_pd *pd, ibv_srq *srq, ibv_srq_init_attr *attr,
                       metaroce::cmd::CreateSrq *cmd, size_t cmd_size,
                       ib_uverbs_create_srq_resp *resp, size_t resp_size) noexcept;
int ibv_cmd_modify_srq(ibv_srq *srq, ibv_srq_attr *srq_attr, int srq_attr_mask,
                       metaroce::cmd::ModifySrq *cmd, size_t cmd_size) noexcept;
int ibv_cmd_query_srq(ibv_srq *srq, ibv_srq_attr *srq_attr, metaroce::cmd::QuerySrq *cmd,
                      size_t cmd_size) noexcept;
int ibv_cmd_destroy_srq(ibv_srq *srq) noexcept;
int ibv_cmd_post_srq_recv(ibv_srq *srq, ibv_recv_wr *wr, ibv_recv_wr **bad_wr) noexcept;
int ibv_cmd_create_ah(ibv_pd *pd, ibv_ah *ah, ibv_ah_attr *attr, ib_uverbs_create_ah_resp *resp,
                      size_t resp_size) noexcept;
int ibv_cmd_destroy_ah(ibv_ah *ah) noexcept;
int ibv_cmd_attach_mcast(ibv_qp *qp, const ibv_gid *gid, uint16_t lid) noexcept;
int ibv_cmd_detach_mcast(ibv_qp *qp, const ibv_gid *gid, uint16_t lid) noexcept;

} // extern "C"

// The private symbols above, for tests that resolve them with dlvsym().
#define METAROCE_VERBS_PRIVATE_VERSION "IBVERBS_PRIVATE_34"
#define METAROCE_VERBS_PRIVATE_SYMBOLS(X)                                                          \
    X(verbs_register_driver_34)                                                                    \
    X(_verbs_init_and_alloc_context)                                                               \
    X(verbs_uninit_context)                                                                        \
    X(verbs_set_ops)                                                                               \
    X(ibv_cmd_get_context)                                                                         \
    X(ibv_cmd_query_device_any)                                                                    \
    X(ibv_cmd_query_port)                                                                          \
    X(ibv_cmd_alloc_pd)                                                                            \
    X(ibv_cmd_dealloc_pd)                                                                          \
    X(ibv_cmd_reg_mr)                                                                              \
    X(ibv_cmd_dereg_mr)                                                                            \
    X(ibv_cmd_alloc_mw)                                                                            \
    X(ibv_cmd_dealloc_mw)                                                                          \
    X(ibv_cmd_create_cq)                                                                           \
    X(ibv_cmd_destroy_cq)                                                                          \
    X(ibv_cmd_resize_cq)                                                                           \
    X(ibv_cmd_poll_cq)                                                                             \
    X(ibv_cmd_req_notify_cq)                                                                       \
    X(ibv_cmd_create_qp)                                                                           \
    X(ibv_cmd_modify_qp)                                                                           \
    X(ibv_cmd_query_qp)                                                                            \
    X(ibv_cmd_destroy_qp)                                                                          \
    X(ibv_cmd_post_send)                                                                           \
    X(ibv_cmd_post_recv)                                                                           \
    X(ibv_cmd_create_srq)                                                                          \
    X(ibv_cmd_modify_srq)                                                                          \
    X(ibv_cmd_query_srq)                                                                           \
    X(ibv_cmd_destroy_srq)                                                                         \
    X(ibv_cmd_post_srq_recv)                                                                       \
    X(ibv_cmd_create_ah)                                                                           \
    X(ibv_cmd_destroy_ah)                                                                          \
    X(ibv_cmd_attach_mcast)                                                                        \
    X(ibv_cmd_detach_mcast)

// --- Layout pins (x86-64 / LP64) ---------------------------------------------

static_assert(sizeof(void *) == 8, "layouts below are for LP64");

static_assert(offsetof(verbs_match_ent, u) == 8);
static_assert(offsetof(verbs_match_ent, vendor) == 16);
static_assert(offsetof(verbs_match_ent, kind) == 20);
static_assert(sizeof(verbs_match_ent) == 24);

static_assert(offsetof(verbs_sysfs_dev, flags) == 32);
static_assert(offsetof(verbs_sysfs_dev, sysfs_cdev) == 104);
static_assert(offsetof(verbs_sysfs_dev, ibdev_name) == 112);
static_assert(offsetof(verbs_sysfs_dev, modalias) == 432);
static_assert(offsetof(verbs_sysfs_dev, driver_id) == 952);
static_assert(offsetof(verbs_sysfs_dev, num_ports) == 964);
static_assert(offsetof(verbs_sysfs_dev, abi_ver) == 968);
static_assert(sizeof(verbs_sysfs_dev) == 992);

static_assert(offsetof(verbs_device_ops, match_table) == 16);
static_assert(offsetof(verbs_device_ops, match_device) == 32);
static_assert(offsetof(verbs_device_ops, alloc_context) == 40);
static_assert(offsetof(verbs_device_ops, alloc_device) == 56);
static_assert(sizeof(verbs_device_ops) == 72);

static_assert(sizeof(ibv_device) == 664);
static_assert(offsetof(verbs_device, ops) == 664);
static_assert(offsetof(verbs_device, refcount) == 672);
static_assert(offsetof(verbs_device, sysfs) == 696);
static_assert(offsetof(verbs_device, core_support) == 704);
static_assert(sizeof(verbs_device) == 712);

static_assert(offsetof(verbs_mr, mr_type) == sizeof(ibv_mr));
static_assert(sizeof(verbs_mr) == 56);
static_assert(offsetof(verbs_qp, comp_mask) == sizeof(ibv_qp_ex));

// 76 slots, alphabetical; a few fixed points.
static_assert(sizeof(verbs_context_ops) == 76 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, alloc_pd) == 5 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, free_context) == 39 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, poll_cq) == 53 * sizeof(void *));
static_assert(offsetof(verbs_context_ops, unimport_pd) == 75 * sizeof(void *));

// Command buffers: header immediately followed by the core request, no
// padding, and a whole number of 32-bit words as the write() ABI requires.
static_assert(sizeof(ib_uverbs_cmd_hdr) == 8);
static_assert(sizeof(metaroce::cmd::GetContext) == 8 + sizeof(ib_uverbs_get_context));
static_assert(sizeof(metaroce::cmd::QueryPort) == 8 + sizeof(ib_uverbs_query_port));
static_assert(sizeof(metaroce::cmd::AllocPd) == 8 + sizeof(ib_uverbs_alloc_pd));
static_assert(sizeof(metaroce::cmd::RegMr) == 8 + sizeof(ib_uverbs_reg_mr));
static_assert(sizeof(metaroce::cmd::AllocMw) == 8 + sizeof(ib_uverbs_alloc_mw));
static_assert(sizeof(metaroce::cmd::CreateCq) == 8 + sizeof(ib_uverbs_create_cq));
static_assert(sizeof(metaroce::cmd::ResizeCq) == 8 + sizeof(ib_uverbs_resize_cq));
static_assert(sizeof(metaroce::cmd::CreateQp) == 8 + sizeof(ib_uverbs_create_qp));
static_assert(sizeof(metaroce::cmd::ModifyQp) == 8 + sizeof(ib_uverbs_modify_qp));
static_assert(sizeof(metaroce::cmd::QueryQp) == 8 + sizeof(ib_uverbs_query_qp));
static_assert(sizeof(metaroce::cmd::CreateSrq) == 8 + sizeof(ib_uverbs_create_srq));
static_assert(sizeof(metaroce::cmd::ModifySrq) == 8 + sizeof(ib_uverbs_modify_srq));
static_assert(sizeof(metaroce::cmd::QuerySrq) == 8 + sizeof(ib_uverbs_query_srq));
static_assert(sizeof(metaroce::cmd::CreateSrq) == 40 && sizeof(metaroce::cmd::ModifySrq) == 24 &&
              sizeof(metaroce::cmd::QuerySrq) == 24);
static_assert(sizeof(metaroce::cmd::GetContext) == 16 && sizeof(metaroce::cmd::RegMr) == 48 &&
              sizeof(metaroce::cmd::ModifyQp) == 120);

#endif // METAROCE_VERBS_PRIVATE_H
