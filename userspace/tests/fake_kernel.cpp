// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "fake_kernel.h"

#include <cerrno>
#include <cstdarg>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace fake {
namespace {

// Constant-initialised, so the interposers are safe before main().
constinit Kernel *g_active = nullptr;
constinit int g_active_fd = -1;

} // namespace

void Request::reply(const void *data, size_t len) const {
    std::memcpy(reinterpret_cast<void *>(uintptr_t{response}), data, std::min(len, out_len));
}

Kernel::Kernel() : fd_(open("/dev/null", O_RDWR | O_CLOEXEC)) {
    g_active = this;
    g_active_fd = fd_;
}

Kernel::~Kernel() {
    g_active = nullptr;
    g_active_fd = -1;
    // fd_ belongs to the context it was handed to; closing it again here
    // could hit an unrelated, reused descriptor.
}

long Kernel::handle_write(const void *buf, size_t len) {
    Request req;
    const auto *bytes = static_cast<const uint8_t *>(buf);
    ib_uverbs_cmd_hdr hdr{};
    if (len < sizeof(hdr)) {
        errno = EINVAL;
        return -1;
    }
    std::memcpy(&hdr, bytes, sizeof(hdr));
    req.extended = hdr.command & IB_USER_VERBS_CMD_FLAG_EXTENDED;
    req.command = hdr.command & ~uint32_t{IB_USER_VERBS_CMD_FLAG_EXTENDED};
    req.in_words = hdr.in_words;
    req.out_words = hdr.out_words;
    size_t header = sizeof(hdr);
    if (req.extended) {
        ib_uverbs_ex_cmd_hdr ex{};
        header += sizeof(ex);
        if (len < header) {
            errno = EINVAL;
            return -1;
        }
        std::memcpy(&ex, bytes + sizeof(hdr), sizeof(ex));
        req.response = ex.response;
        req.out_len = (size_t{hdr.out_words} + ex.provider_out_words) * 8;
    } else {
        // Legacy commands count the header in in_words.
        if (size_t{hdr.in_words} * 4 != len) {
            errno = EINVAL;
            return -1;
        }
        req.out_len = size_t{hdr.out_words} * 4;
    }
    req.in.assign(bytes + header, bytes + len);
    if (!req.extended)
        req.response = req.as<uint64_t>(); // meaningful only for commands with a response
    writes.push_back(req);

    auto it = handlers_.find(req.command);
    const int err = it == handlers_.end() ? EOPNOTSUPP : it->second(req);
    if (err) {
        errno = err;
        return -1;
    }
    return static_cast<long>(len);
}

long Kernel::handle_ioctl(const void *arg) {
    ib_uverbs_ioctl_hdr hdr{};
    std::memcpy(&hdr, arg, sizeof(hdr));
    ioctls.push_back(hdr);
    errno = ENOTTY;
    return -1;
}

} // namespace fake

// --- Interposed system calls ----------------------------------------------------

extern "C" ssize_t write(int fd, const void *buf, size_t len) {
    if (fake::g_active && fd == fake::g_active_fd)
        return fake::g_active->handle_write(buf, len);
    return syscall(SYS_write, fd, buf, len);
}

extern "C" int ioctl(int fd, unsigned long request, ...) noexcept {
    va_list ap;
    va_start(ap, request);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    if (fake::g_active && fd == fake::g_active_fd && request == RDMA_VERBS_IOCTL)
        return static_cast<int>(fake::g_active->handle_ioctl(arg));
    return static_cast<int>(syscall(SYS_ioctl, fd, request, arg));
}
