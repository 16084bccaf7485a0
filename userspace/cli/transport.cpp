// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "transport.h"

#include <cerrno>
#include <libmnl/libmnl.h>
#include <linux/netlink.h>
#include <system_error>

namespace metaroce::transport {

namespace {

// Large enough for any datagram of a dump (the kernel fills up to 32 KiB).
constexpr size_t kRecvSize = 65536;

[[noreturn]] void fail(const char *what) {
    throw std::system_error(errno, std::generic_category(), what);
}

} // namespace

void Socket::Close::operator()(mnl_socket *s) const {
    mnl_socket_close(s);
}

Socket::Socket() : buf_(kRecvSize) {
    sock_.reset(mnl_socket_open(NETLINK_GENERIC));
    if (!sock_)
        fail("netlink socket");
    if (mnl_socket_bind(sock_.get(), 0, MNL_SOCKET_AUTOPID) < 0)
        fail("netlink bind");
    int on = 1;
    // Both exist since Linux 4.12; without them errors only lose detail.
    mnl_socket_setsockopt(sock_.get(), NETLINK_EXT_ACK, &on, sizeof(on));
    mnl_socket_setsockopt(sock_.get(), NETLINK_CAP_ACK, &on, sizeof(on));
}

void Socket::send(std::span<const uint8_t> msg) {
    if (mnl_socket_sendto(sock_.get(), msg.data(), msg.size()) < 0)
        fail("netlink send");
}

nl::Bytes Socket::recv() {
    for (;;) {
        ssize_t n = mnl_socket_recvfrom(sock_.get(), buf_.data(), buf_.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            fail("netlink receive");
        return nl::Bytes(buf_.begin(), buf_.begin() + n);
    }
}

uint32_t Socket::portid() const {
    return mnl_socket_get_portid(sock_.get());
}

void Socket::join_group(uint32_t group) {
    int g = static_cast<int>(group);
    if (mnl_socket_setsockopt(sock_.get(), NETLINK_ADD_MEMBERSHIP, &g, sizeof(g)) < 0)
        fail("joining the events group");
}

} // namespace metaroce::transport
