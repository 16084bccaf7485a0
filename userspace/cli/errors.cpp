// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "errors.h"

#include "settings.h"

#include <cerrno>
#include <cstring>
#include <linux/genetlink.h>
#include <linux/netlink.h>

namespace metaroce::errors {

KernelError::KernelError(int err, nl::Bytes req)
    : std::runtime_error(std::strerror(err)), error(err), request(std::move(req)) {}

void read_extack(KernelError &e, std::span<const uint8_t> tlvs) {
    nl::Attrs a = nl::Attrs::parse(abi::kExtack, tlvs);
    e.message = a.str(NLMSGERR_ATTR_MSG);
    e.offset = a.u32(NLMSGERR_ATTR_OFFS);
    e.missing_type = a.u32(NLMSGERR_ATTR_MISS_TYPE);
    if (auto p = a.nest(NLMSGERR_ATTR_POLICY)) {
        e.min = p->u64(NL_POLICY_TYPE_ATTR_MIN_VALUE_U);
        e.max = p->u64(NL_POLICY_TYPE_ATTR_MAX_VALUE_U);
    }
}

namespace {

uint64_t load_scalar(std::span<const uint8_t> p) {
    uint64_t v = 0;
    std::memcpy(&v, p.data(), std::min<size_t>(p.size(), sizeof(v))); // little endian
    return v;
}

// Find the attribute starting at @target inside the attributes at [off, end).
std::optional<BadAttr> find_in(std::span<const uint8_t> req, size_t off, size_t end,
                               const abi::AttrSet &set, const std::string &where, uint32_t target) {
    while (off + NLA_HDRLEN <= end) {
        uint16_t len, type;
        std::memcpy(&len, &req[off], 2);
        std::memcpy(&type, &req[off + 2], 2);
        type &= NLA_TYPE_MASK;
        if (len < NLA_HDRLEN || off + len > end)
            return std::nullopt;
        const abi::Attr *a = set.find(type);
        std::string path = where + "/" + (a ? std::string(a->name) : std::to_string(type));
        auto payload = req.subspan(off + NLA_HDRLEN, len - NLA_HDRLEN);
        if (off == target) {
            BadAttr bad{path, std::nullopt, std::nullopt, nullptr};
            if (const settings::Setting *s = settings::find(set, type)) {
                bad.keyword = std::string(s->keyword);
                bad.value = settings::show(s->kind, load_scalar(payload));
                bad.setting = s;
            } else if (a && a->type == abi::Type::String && !payload.empty()) {
                bad.value = std::string(reinterpret_cast<const char *>(payload.data()));
            }
            return bad;
        }
        if (a && a->type == abi::Type::Nest && a->nested && target > off && target < off + len)
            return find_in(req, off + NLA_HDRLEN, off + len, *a->nested, path, target);
        off += NLA_ALIGN(len);
    }
    return std::nullopt;
}

std::string what(const Context &c) {
    std::string s = c.action;
    return s.empty() ? "metaroce" : s;
}

} // namespace

std::optional<BadAttr> attr_at(std::span<const uint8_t> request, uint32_t offset) {
    if (request.size() < NLMSG_HDRLEN + GENL_HDRLEN || offset >= request.size())
        return std::nullopt;
    const abi::AttrSet *set = abi::set_for_cmd(request[NLMSG_HDRLEN]);
    if (!set)
        return std::nullopt;
    return find_in(request, NLMSG_HDRLEN + GENL_HDRLEN, request.size(), *set,
                   std::string(set->name), offset);
}

std::string explain(const KernelError &e, const Context &c) {
    const std::string kernel = e.message ? *e.message : std::strerror(e.error);
    std::optional<BadAttr> bad = e.offset ? attr_at(e.request, *e.offset) : std::nullopt;
    // The kernel's word, where ours says what was asked for.
    const std::string detail = e.message ? " (" + *e.message + ")" : "";
    switch (e.error) {
    case ENODEV:
        return (c.dev ? "no metaroce device \"" + *c.dev + "\"" : "no such metaroce device") +
               detail;
    case ENOENT:
        if (c.qpn && c.path)
            return "no path " + std::to_string(*c.path) + " on QP " + std::to_string(*c.qpn) +
                   (c.dev ? " of " + *c.dev : "") + detail;
        if (c.qpn)
            return "no QP " + std::to_string(*c.qpn) + (c.dev ? " on " + *c.dev : "") + detail;
        break;
    case EPERM:
    case EACCES:
        return "permission denied: " + what(c) +
               (c.needs_admin ? " needs CAP_NET_ADMIN (run it as root)" : "");
    default:
        break;
    }
    if (bad) {
        std::string name = bad->keyword ? *bad->keyword : bad->path;
        std::string subject = bad->value ? name + " " + *bad->value : name;
        if (e.error == ERANGE && e.min && e.max) {
            auto s = static_cast<const settings::Setting *>(bad->setting);
            auto show = [&](uint64_t v) {
                return s ? settings::show(s->kind, v) : std::to_string(v);
            };
            return subject + " is out of range " + show(*e.min) + "-" + show(*e.max) +
                   " for this kernel module";
        }
        return what(c) + ": " + subject + ": " + kernel;
    }
    if (e.missing_type) {
        std::string name = std::to_string(*e.missing_type);
        const abi::AttrSet *set =
            e.request.size() > NLMSG_HDRLEN ? abi::set_for_cmd(e.request[NLMSG_HDRLEN]) : nullptr;
        if (const abi::Attr *a = set ? set->find(*e.missing_type) : nullptr)
            name = std::string(set->name) + "/" + std::string(a->name);
        return what(c) + ": the kernel module wants attribute " + name +
               ", which this metaroce did not send";
    }
    if (e.message)
        return what(c) + ": " + *e.message + " (" + std::strerror(e.error) + ")";
    return what(c) + ": " + kernel;
}

} // namespace metaroce::errors
