// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// What the guest test programs share: KTAP output, RAII owners for verbs
// objects and anonymous memory, opening a device by name, and `rdma
// resource show` lines.
#pragma once

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace guest {

// One KTAP case per check; the destructor notes a plan that was not met.
class Ktap {
public:
    explicit Ktap(int planned) : planned_(planned) {
        std::printf("KTAP version 1\n1..%d\n", planned_);
    }
    Ktap(const Ktap &) = delete;
    Ktap &operator=(const Ktap &) = delete;
    ~Ktap() {
        if (n_ != planned_)
            std::printf("# planned %d cases but ran %d\n", planned_, n_);
        std::fflush(stdout);
    }

    // One case; on failure the printf-style diagnostic comes first.
    bool check(bool ok, const std::string &desc, const char *fmt = nullptr, ...)
        __attribute__((format(printf, 4, 5))) {
        if (!ok && fmt) {
            va_list ap;
            va_start(ap, fmt);
            std::printf("# ");
            std::vprintf(fmt, ap);
            std::printf("\n");
            va_end(ap);
        }
        std::printf("%s %d %s\n", ok ? "ok" : "not ok", ++n_, desc.c_str());
        failed_ += !ok;
        return ok;
    }
    // A call that must fail with errno @want.
    bool refused(int err, int want, const std::string &desc) {
        return check(err == want, desc, "got errno %d (%s), want %d (%s)", err, std::strerror(err),
                     want, std::strerror(want));
    }
    bool passed() const { return failed_ == 0 && n_ == planned_; }

private:
    int planned_;
    int n_ = 0;
    int failed_ = 0;
};

struct CloseDevice {
    void operator()(ibv_context *c) const noexcept { ibv_close_device(c); }
};
struct DeallocPd {
    void operator()(ibv_pd *pd) const noexcept { ibv_dealloc_pd(pd); }
};
struct DeregMr {
    void operator()(ibv_mr *mr) const noexcept { ibv_dereg_mr(mr); }
};
struct DestroyCq {
    void operator()(ibv_cq *cq) const noexcept { ibv_destroy_cq(cq); }
};
struct DestroyQp {
    void operator()(ibv_qp *qp) const noexcept { ibv_destroy_qp(qp); }
};
struct DestroyChannel {
    void operator()(ibv_comp_channel *ch) const noexcept { ibv_destroy_comp_channel(ch); }
};
struct FreeDeviceList {
    void operator()(ibv_device **l) const noexcept { ibv_free_device_list(l); }
};
struct Pclose {
    void operator()(FILE *f) const noexcept { pclose(f); }
};
using Context = std::unique_ptr<ibv_context, CloseDevice>;
using Pd = std::unique_ptr<ibv_pd, DeallocPd>;
using Mr = std::unique_ptr<ibv_mr, DeregMr>;
using Cq = std::unique_ptr<ibv_cq, DestroyCq>;
using Qp = std::unique_ptr<ibv_qp, DestroyQp>;
using Channel = std::unique_ptr<ibv_comp_channel, DestroyChannel>;

// Anonymous memory, unmapped on scope exit. Page-aligned, so MRs over it
// start on a page; get() is null if mmap failed.
class Mapping {
public:
    Mapping(size_t len, int prot) : len_(len) {
        void *p = mmap(nullptr, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        addr_ = p == MAP_FAILED ? nullptr : static_cast<uint8_t *>(p);
    }
    Mapping(const Mapping &) = delete;
    Mapping &operator=(const Mapping &) = delete;
    ~Mapping() {
        if (addr_)
            munmap(addr_, len_);
    }
    uint8_t *get() const { return addr_; }
    size_t size() const { return len_; }

private:
    size_t len_;
    uint8_t *addr_;
};

// reg_mr: the MR, or null with the errno in *err.
inline Mr reg_mr(ibv_pd *pd, void *addr, size_t len, int access, int *err) {
    errno = 0;
    Mr mr(ibv_reg_mr(pd, addr, len, access));
    *err = mr ? 0 : errno;
    return mr;
}

// Opens the device called @name, or returns null.
inline Context open_device(const char *name) {
    std::unique_ptr<ibv_device *, FreeDeviceList> list(ibv_get_device_list(nullptr));
    for (ibv_device **d = list.get(); d && *d; d++)
        if (std::strcmp(ibv_get_device_name(*d), name) == 0)
            return Context(ibv_open_device(*d));
    return nullptr;
}

// The `rdma resource show KIND [dev DEV]` lines of this process (every device
// when @dev is null), each field followed by a space.
inline std::vector<std::string> rdma_resources(const char *kind, const char *dev) {
    std::string cmd = std::string("rdma resource show ") + kind;
    if (dev)
        cmd += std::string(" dev ") + dev;
    cmd += " 2>&1";
    std::unique_ptr<FILE, Pclose> f(popen(cmd.c_str(), "r"));
    std::vector<std::string> lines;
    if (!f)
        return lines;
    const std::string pid = " pid " + std::to_string(getpid()) + " ";
    char buf[1024];
    while (std::fgets(buf, sizeof(buf), f.get())) {
        std::string line(buf);
        if (!line.empty() && line.back() == '\n')
            line.pop_back();
        line += ' '; // every field is then followed by a space
        if (line.find(pid) != std::string::npos)
            lines.push_back(line);
    }
    return lines;
}

} // namespace guest
