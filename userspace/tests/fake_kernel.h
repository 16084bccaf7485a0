// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// A stand-in for /dev/infiniband/uverbsN, for host tests without RDMA.
//
// The test binary defines write() and ioctl(); libibverbs' calls bind to
// them. Calls on the fd of the active fake::Kernel are handled here, all
// others go to the real system calls. The fake answers the uverbs ioctl
// with ENOTTY (a kernel without the ioctl interface), so libibverbs falls
// back to write() commands, which the fake decodes and hands to per-command
// handlers. Commands without a handler fail with EOPNOTSUPP, which is what
// the kernel answers for a verb the driver does not implement.
#ifndef METAROCE_TESTS_FAKE_KERNEL_H
#define METAROCE_TESTS_FAKE_KERNEL_H

#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <vector>

namespace fake {

// One write() command as the kernel would see it.
struct Request {
    uint32_t command = 0; // IB_USER_VERBS_CMD_* / IB_USER_VERBS_EX_CMD_*
    bool extended = false;
    uint32_t in_words = 0; // raw header fields
    uint32_t out_words = 0;
    std::vector<uint8_t> in; // the request after the header(s)
    uint64_t response = 0;   // user address of the response buffer
    size_t out_len = 0;      // its size in bytes

    // The request decoded as T (zero-filled if the request is shorter).
    template <typename T> T as() const {
        T v{};
        std::memcpy(&v, in.data(), std::min(sizeof(T), in.size()));
        return v;
    }
    // Bytes of the request at offset, as T.
    template <typename T> T at(size_t offset) const {
        T v{};
        if (offset < in.size())
            std::memcpy(&v, in.data() + offset, std::min(sizeof(T), in.size() - offset));
        return v;
    }
    // Copies a response to the caller's buffer, as copy_to_user() would.
    void reply(const void *data, size_t len) const;
    template <typename T> void reply(const T &v) const { reply(&v, sizeof(v)); }
};

// Returns 0 or the errno value the command fails with.
using Handler = std::function<int(const Request &)>;

class Kernel {
public:
    Kernel();
    ~Kernel();
    Kernel(const Kernel &) = delete;
    Kernel &operator=(const Kernel &) = delete;

    // The fake device fd. Whoever receives it (a verbs context) closes it.
    int fd() const { return fd_; }
    void on(uint32_t command, Handler h) { handlers_[command] = std::move(h); }

    std::vector<Request> writes;             // every write() command seen
    std::vector<ib_uverbs_ioctl_hdr> ioctls; // every RDMA_VERBS_IOCTL header seen

    // Used by the interposed system calls.
    long handle_write(const void *buf, size_t len);
    long handle_ioctl(const void *arg);

private:
    int fd_;
    std::map<uint32_t, Handler> handlers_;
};

} // namespace fake

#endif // METAROCE_TESTS_FAKE_KERNEL_H
