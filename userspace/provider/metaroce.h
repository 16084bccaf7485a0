// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// soft-MetaRoCE rdma-core provider: internal interface, shared by the
// provider and its unit tests.
#ifndef METAROCE_PROVIDER_H
#define METAROCE_PROVIDER_H

#include "verbs_private.h"

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

struct Context {
    verbs_context vctx; // first: libibverbs hands us &vctx.context
};

static_assert(kCObject<Device> && kCObject<Context> && kCObject<verbs_mr> && kCObject<verbs_qp>);

// The table registered with libibverbs.
extern const verbs_device_ops kDeviceOps;
// The per-context verbs installed by alloc_context().
extern const verbs_context_ops kContextOps;
// kDeviceOps.match_table: exactly one driver-id entry plus the terminator.
extern const verbs_match_ent kMatchTable[2];

// True when METAROCE_DEBUG is set to something other than "" or "0".
bool debug_enabled() noexcept;
// printf-style line to stderr, prefixed "metaroce: ", only when debugging.
void debug(const char *fmt, ...) noexcept __attribute__((format(printf, 1, 2)));

} // namespace metaroce

#endif // METAROCE_PROVIDER_H
