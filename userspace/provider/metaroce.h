// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// soft-MetaRoCE rdma-core provider: internal interface, shared by the
// provider and its unit tests.
#ifndef METAROCE_PROVIDER_H
#define METAROCE_PROVIDER_H

#include "verbs_private.h"

#include "metaroce-abi.h"

#include <cstdlib>
#include <memory>
#include <type_traits>

namespace metaroce {

// Objects libibverbs allocates or frees with the C allocator, or that it
// copies around, must stay C-compatible.
template <typename T>
inline constexpr bool kCObject =
    std::is_standard_layout_v<T> &&std::is_trivially_destructible_v<T> &&std::is_trivial_v<T>;

struct FreeDeleter {
    void operator()(void *p) const noexcept { std::free(p); }
};

template <typename T> using CPtr = std::unique_ptr<T, FreeDeleter>;

// Zeroed heap object, released with free(): the allocation discipline
// libibverbs and C providers use for provider objects.
template <typename T> CPtr<T> zalloc() noexcept {
    static_assert(kCObject<T>);
    return CPtr<T>(static_cast<T *>(std::calloc(1, sizeof(T))));
}

struct Device {
    verbs_device vdev; // first: libibverbs hands us &vdev.device
};

// What a send posted in a ring is checked against: the MRs this context
// registered, by lkey. The kernel checks every slot again; this answers a
// wrong lkey at post time, with EINVAL, as the POST_SEND command does.
struct MrInfo {
    uint32_t lkey;
    int access;
    const ibv_pd *pd;
    uint64_t iova, length;
};
struct MrTable {
    pthread_rwlock_t lock;
    MrInfo *mrs; // sorted by lkey; malloc()ed
    size_t count, capacity;
};

struct Context {
    verbs_context vctx; // first: libibverbs hands us &vctx.context
    MrTable mrs;
};

static_assert(kCObject<Device> && kCObject<Context> && kCObject<verbs_mr> && kCObject<verbs_qp>);

// Every CQ. Its completions are in a ring the kernel shares through mmap()
// (ring != nullptr), polled with no system call, or, with a module that
// does not offer one, fetched by the POLL_CQ command. The ibv_cq_ex API
// reads one completion at a time into wc, where the read_* accessors find
// it; a batch of them between start_poll() and end_poll() releases its
// slots to the kernel once, at the end.
struct Cq {
    union {
        ibv_cq cq; // first: ibv_cq_ex begins with the fields of ibv_cq
        ibv_cq_ex cq_ex;
    };
    ibv_wc wc;
    metaroce_cq_ring *ring; // mapped, or nullptr
    uint64_t map_offset;    // where, on the context's cmd_fd
    size_t map_size;
    uint32_t entries;        // slots of the ring, a power of 2
    uint32_t consumer;       // ours; the ring's copy is for the kernel
    pthread_spinlock_t lock; // the consumer side of the ring
};
static_assert(kCObject<Cq>);
// ibv_cq_ex_to_cq() and the ibv_cmd_*_cq helpers rely on the shared prefix.
static_assert(offsetof(ibv_cq_ex, handle) == offsetof(ibv_cq, handle) &&
              offsetof(ibv_cq_ex, mutex) == offsetof(ibv_cq, mutex) &&
              offsetof(ibv_cq_ex, async_events_completed) ==
                  offsetof(ibv_cq, async_events_completed));

// A receive queue (a QP's or an SRQ's) in a ring shared with the kernel;
// ring is nullptr when receives are posted by command. producer is ours;
// the ring's consumer counts the receives the kernel has retired, so at
// most depth (max_wr) are outstanding.
struct RecvRing {
    metaroce_wq_ring *ring;
    size_t map_size;
    uint32_t entries, stride, max_sge, depth;
    uint32_t producer;
    pthread_spinlock_t lock;
};

// A send queue in a ring shared with the kernel (RC and UC QPs); ring is
// nullptr when sends are posted by command. As for a receive ring, the
// ring's consumer counts the sends the kernel has retired, so at most
// depth (max_send_wr) are outstanding.
struct SendRing {
    metaroce_wq_ring *ring;
    uint64_t map_offset; // where, on the context's cmd_fd
    size_t map_size;
    uint32_t entries, stride, max_sge, max_inline, depth;
    uint32_t producer;
    pthread_spinlock_t lock;
};

// Every SRQ.
struct Srq {
    ibv_srq srq; // first: libibverbs hands us &srq
    RecvRing rq;
};
static_assert(kCObject<Srq>);

// Every QP. Extended QPs batch the requests of their ibv_wr_* calls between
// wr_start() and wr_complete() in arrays sized by the granted send queue
// (a longer batch could not be posted anyway); wr_complete() posts them
// with the ordinary POST_SEND command. The arrays are calloc()ed, owned by
// the QP and freed by destroy_qp().
struct Qp {
    verbs_qp vqp; // first: libibverbs hands us &vqp.qp (== &vqp.qp_ex)
    uint64_t send_ops_flags;
    ibv_send_wr *wrs;     // [max_wr]
    uint16_t *streams;    // [max_wr]: mrcdv_wr_set_stream()
    ibv_sge *sges;        // [max_wr * max_sge]
    uint8_t *inline_data; // [max_wr * max_inline]
    uint32_t max_wr, max_sge, max_inline;
    uint32_t nstreams; // granted by the kernel; 0: one
    uint32_t count;    // requests in the batch
    int batch_error;   // first error of the batch, reported by wr_complete()
    RecvRing rq;
    SendRing sq;
};
static_assert(kCObject<Qp>);

// The table registered with libibverbs.
extern const verbs_device_ops kDeviceOps;
// The per-context verbs installed by alloc_context().
extern const verbs_context_ops kContextOps;
// kDeviceOps.match_table: exactly one driver-id entry plus the terminator.
extern const verbs_match_ent kMatchTable[2];

// True when the environment variable is set to something other than "" or "0".
bool env_enabled(const char *name) noexcept;
// True when METAROCE_DEBUG is.
bool debug_enabled() noexcept;
// printf-style line to stderr, prefixed "metaroce: ", only when debugging.
void debug(const char *fmt, ...) noexcept __attribute__((format(printf, 1, 2)));

} // namespace metaroce

#endif // METAROCE_PROVIDER_H
