// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Where requests go and replies come from: a generic netlink socket, or in
// the tests a script of recorded datagrams.
#ifndef METAROCE_CLI_TRANSPORT_H
#define METAROCE_CLI_TRANSPORT_H

#include "nl.h"

#include <memory>

struct mnl_socket;

namespace metaroce::transport {

class Transport {
public:
    virtual ~Transport() = default;
    virtual void send(std::span<const uint8_t> msg) = 0;
    // One datagram. An empty one ends the stream (a socket never does);
    // failures throw std::system_error (ENOBUFS: events were lost).
    virtual nl::Bytes recv() = 0;
    virtual uint32_t portid() const = 0;
    virtual void join_group(uint32_t group) = 0;
};

// NETLINK_GENERIC through libmnl, with extended and capped ACKs.
class Socket final : public Transport {
public:
    Socket();
    void send(std::span<const uint8_t> msg) override;
    nl::Bytes recv() override;
    uint32_t portid() const override;
    void join_group(uint32_t group) override;

private:
    struct Close {
        void operator()(mnl_socket *s) const;
    };
    std::unique_ptr<mnl_socket, Close> sock_;
    nl::Bytes buf_;
};

} // namespace metaroce::transport

#endif
