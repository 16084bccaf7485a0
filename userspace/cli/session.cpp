// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "session.h"

#include "errors.h"
#include "metaroce-netlink.h"
#include "parse.h"
#include "request.h"

#include <cerrno>
#include <cstring>
#include <linux/netlink.h>
#include <unistd.h>

namespace metaroce::session {

namespace {

int32_t load_int(std::span<const uint8_t> p) {
    int32_t v;
    std::memcpy(&v, p.data(), sizeof(v));
    return v;
}

// The error of an NLMSG_ERROR, or a KernelError with its extended ACK.
void check_error(std::span<const uint8_t> msg, const nl::Header &h, const nl::Bytes &request) {
    constexpr size_t kErrLen = sizeof(int32_t) + NLMSG_HDRLEN; // struct nlmsgerr
    if (msg.size() < NLMSG_HDRLEN + kErrLen)
        throw nl::MalformedError("malformed reply from the kernel: a short NLMSG_ERROR");
    auto body = msg.subspan(NLMSG_HDRLEN);
    int32_t err = load_int(body);
    if (err == 0)
        return;
    errors::KernelError e(-err, request);
    if (h.flags & NLM_F_ACK_TLVS) {
        size_t tlv = kErrLen;
        if (!(h.flags & NLM_F_CAPPED)) {
            // The whole request is echoed before the TLVs.
            uint32_t orig;
            std::memcpy(&orig, &body[sizeof(int32_t)], sizeof(orig));
            tlv = sizeof(int32_t) + NLMSG_ALIGN(orig);
        }
        if (tlv > body.size())
            throw nl::MalformedError("malformed reply from the kernel: NLMSG_ERROR too short "
                                     "for the request it echoes");
        errors::read_extack(e, body.subspan(tlv));
    }
    throw e;
}

} // namespace

const model::Family &Session::family() {
    if (family_)
        return *family_;
    Reply r;
    try {
        r = call(request::get_family(next_seq()));
    } catch (const errors::KernelError &e) {
        if (e.error == ENOENT && access(module_dir_.c_str(), F_OK) == 0)
            throw errors::CliError("the loaded metaroce kernel module has no netlink interface "
                                   "(it is older than this tool): load a newer one");
        if (e.error == ENOENT)
            throw errors::CliError("the metaroce kernel module is not loaded: modprobe metaroce");
        throw errors::CliError(std::string("looking up the metaroce netlink family: ") +
                               std::strerror(e.error));
    }
    if (r.messages.size() != 1)
        throw nl::MalformedError("malformed reply from nlctrl: " +
                                 std::to_string(r.messages.size()) + " family records");
    model::Family f = parse::family(r.messages[0]);
    if (f.version != METAROCE_GENL_VERSION)
        throw errors::CliError(
            "the metaroce kernel module speaks version " + std::to_string(f.version) +
            " of its netlink interface, this metaroce version " +
            std::to_string(METAROCE_GENL_VERSION) + ": install the metaroce tool of that module");
    family_ = f;
    return *family_;
}

Reply Session::call(const nl::Bytes &request) {
    const nl::Header req = nl::header(request);
    const bool dump = (req.flags & NLM_F_DUMP) == NLM_F_DUMP;
    const uint32_t portid = t_.portid();
    t_.send(request);
    Reply r;
    for (;;) {
        nl::Bytes d = t_.recv();
        if (d.empty())
            throw nl::MalformedError("the kernel did not finish its reply");
        for (auto msg : nl::split(d)) {
            nl::Header h = nl::header(msg);
            if (h.seq == 0 && h.pid == 0)
                continue; // an event, if we had joined the group
            if (h.seq != req.seq || (h.pid && portid && h.pid != portid))
                throw nl::MalformedError("malformed reply from the kernel: sequence number " +
                                         std::to_string(h.seq) + " answers request " +
                                         std::to_string(req.seq));
            if (h.type == NLMSG_ERROR) {
                check_error(msg, h, request);
                return r; // the ACK
            }
            if (h.type == NLMSG_DONE) {
                auto body = msg.subspan(NLMSG_HDRLEN);
                int32_t err = body.size() >= sizeof(int32_t) ? load_int(body) : 0;
                if (err) {
                    errors::KernelError e(-err, request);
                    if (h.flags & NLM_F_ACK_TLVS)
                        errors::read_extack(e, body.subspan(sizeof(int32_t)));
                    throw e;
                }
                if (!dump)
                    throw nl::MalformedError("malformed reply from the kernel: NLMSG_DONE "
                                             "answers a request that is not a dump");
                return r;
            }
            if (h.type < NLMSG_MIN_TYPE)
                continue; // NLMSG_NOOP, NLMSG_OVERRUN
            if (h.flags & NLM_F_DUMP_INTR)
                r.interrupted = true;
            r.messages.emplace_back(msg.begin(), msg.end());
        }
    }
}

std::optional<nl::Bytes> Session::next_event() {
    const model::Family &f = family();
    if (!joined_) {
        if (!f.events_group)
            throw errors::CliError("the metaroce kernel module has no \"" +
                                   std::string(METAROCE_GENL_MCGRP_EVENTS) + "\" group");
        t_.join_group(*f.events_group);
        joined_ = true;
    }
    while (pending_.empty()) {
        nl::Bytes d = t_.recv();
        if (d.empty())
            return std::nullopt;
        for (auto msg : nl::split(d))
            if (nl::header(msg).type == f.id)
                pending_.emplace_back(msg.begin(), msg.end());
    }
    nl::Bytes msg = std::move(pending_.front());
    pending_.pop_front();
    return msg;
}

} // namespace metaroce::session
