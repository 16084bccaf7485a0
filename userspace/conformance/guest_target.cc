// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The live target: a QP of a real RDMA device (a metaroce device in the
// guest, or any NIC that speaks MetaRoCE), driven through libibverbs, and
// the runner's peer as UDP sockets at the peer's address, in another
// network namespace or on another host, over IPv4 or IPv6 (the family of
// the peer's address; the QP is addressed by its RoCE v2 GID of that
// family). Datagrams to the QP leave from sockets bound to the peer's
// address and the path's source port (the QP answers a path at its port,
// so those sockets are read too); a second address stands in for a host
// that is not the peer.
#include "gcm.h"
#include "guest_test.h"
#include "target.h"

#include <arpa/inet.h>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fcntl.h>
#include <fstream>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace conform {
namespace {

using namespace guest;

class Fd {
public:
    explicit Fd(int fd = -1) : fd_(fd) {}
    Fd(Fd &&o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    Fd &operator=(Fd &&o) noexcept {
        std::swap(fd_, o.fd_);
        return *this;
    }
    ~Fd() {
        if (fd_ >= 0)
            close(fd_);
    }
    int get() const { return fd_; }

private:
    int fd_;
};

const char *OpcodeName(ibv_wc_opcode o) {
    switch (o) {
    case IBV_WC_SEND:
        return "send";
    case IBV_WC_RDMA_WRITE:
        return "rdma_write";
    case IBV_WC_RDMA_READ:
        return "rdma_read";
    case IBV_WC_COMP_SWAP:
        return "comp_swap";
    case IBV_WC_FETCH_ADD:
        return "fetch_add";
    case IBV_WC_RECV:
        return "recv";
    case IBV_WC_RECV_RDMA_WITH_IMM:
        return "recv_rdma_imm";
    default:
        return "other";
    }
}

const char *StateName(ibv_qp_state s) {
    static const char *const names[] = {"reset", "init", "rtr", "rts", "sqd", "sqe", "err"};
    return s <= IBV_QPS_ERR ? names[s] : "unknown";
}

class LiveTarget : public Target {
public:
    std::string Name() const override { return "live " + device_; }

    bool Open(const std::string &device, const std::string &netns, const std::string &peer_ip,
              const std::string &foreign_ip, std::string *why) {
        device_ = device;
        if (!ParseIp(peer_ip, &family_, &peer_)) {
            *why = "--peer-ip must be an IPv4 or IPv6 address";
            return false;
        }
        int foreign_family = family_;
        has_foreign_ = !foreign_ip.empty() && ParseIp(foreign_ip, &foreign_family, &foreign_);
        if (has_foreign_ && foreign_family != family_) {
            *why = "--foreign-ip must be of the family of --peer-ip";
            return false;
        }
        if (!netns.empty()) {
            Fd self(open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC));
            netns_ = Fd(open(("/run/netns/" + netns).c_str(), O_RDONLY | O_CLOEXEC));
            if (self.get() < 0 || netns_.get() < 0) {
                *why = "no network namespace " + netns;
                return false;
            }
            self_ns_ = std::move(self);
        }
        if (!open_rc_end(end_, device.c_str(), why, family_))
            return false;
        std::memcpy(qp_addr_.s6_addr, end_.gid.raw, 16); // its GID (IPv4: v4-mapped)
        if (Sock(kPort, false) < 0) {
            const bool v6 = family_ == AF_INET6;
            *why = "cannot bind " + std::string(v6 ? "[" : "") + peer_ip + (v6 ? "]:" : ":") +
                   std::to_string(kPort) + " for the peer";
            return false;
        }
        return true;
    }

    bool CreateQp(const QpSpec &spec, std::string *why) override {
        qp_.reset();
        mr_.reset();
        ah_.reset();
        // What the last QP left behind is not this case's.
        while (ibv_poll_cq(end_.scq.get(), 1, &wc_) > 0) {
        }
        while (Receive(Ms(0))) {
        }
        spec_ = spec;
        mem_ = std::make_unique<Mapping>(spec.mem_len, PROT_READ | PROT_WRITE);
        for (uint32_t i = 0; i < spec.mem_len; i++)
            mem_->get()[i] = Pattern(0, i);
        int access = IBV_ACCESS_LOCAL_WRITE;
        access |= spec.remote_write ? IBV_ACCESS_REMOTE_WRITE : 0;
        access |= spec.remote_read ? IBV_ACCESS_REMOTE_READ : 0;
        access |= spec.remote_atomic ? IBV_ACCESS_REMOTE_ATOMIC : 0;
        int err = 0;
        mr_ = reg_mr(end_.pd.get(), mem_->get(), spec.mem_len, access, &err);
        if (!mr_) {
            *why = std::string("reg_mr: ") + std::strerror(err);
            return false;
        }
        ibv_qp_init_attr init{};
        init.send_cq = end_.scq.get();
        init.recv_cq = end_.scq.get();
        init.cap = {64, 64, 2, 2, 0};
        init.qp_type = spec.type == QpType::RC   ? IBV_QPT_RC
                       : spec.type == QpType::UC ? IBV_QPT_UC
                                                 : IBV_QPT_UD;
        qp_.reset(ibv_create_qp(end_.pd.get(), &init));
        if (!qp_) {
            *why = std::string("create_qp: ") + std::strerror(errno);
            return false;
        }
        ibv_gid dgid{};
        std::memcpy(dgid.raw, peer_.s6_addr, 16); // IPv4: v4-mapped
        if (spec.type == QpType::UD)
            return ConnectUd(dgid, why);
        RcPath path;
        path.dest_qpn = kPeerQpn;
        path.dgid = dgid;
        path.sgid_index = end_.gid_index;
        path.mtu = spec.mtu >= 4096   ? IBV_MTU_4096
                   : spec.mtu >= 2048 ? IBV_MTU_2048
                   : spec.mtu >= 1024 ? IBV_MTU_1024
                   : spec.mtu >= 512  ? IBV_MTU_512
                                      : IBV_MTU_256;
        path.sq_psn = kQpPsn;
        path.rq_psn = kPeerPsn;
        RcParams params;
        params.access = access;
        params.retry_cnt = spec.retry_cnt;
        params.rnr_retry = spec.rnr_retry;
        params.min_rnr_timer = spec.min_rnr_timer;
        params.timeout = spec.timeout;
        params.max_rd_atomic = spec.max_rd_atomic;
        params.max_dest_rd_atomic = spec.max_dest_rd_atomic;
        for (ibv_qp_state to : kRcSteps)
            if (int e = modify_rc(qp_.get(), to, path, params)) {
                *why = std::string("modify_qp to ") + StateName(to) + ": " + std::strerror(e);
                return false;
            }
        return true;
    }

    // A host's scheduling is slower than the ACK delay: no "instant".
    bool Has(const std::string &feature) const override {
        return feature == "mad" || (feature == "ipv4" && family_ == AF_INET);
    }

    uint32_t Qpn() const override { return qp_ ? qp_->qp_num : 0; }
    uint32_t Rkey() const override { return mr_ ? mr_->rkey : 0; }
    uint64_t Va() const override { return reinterpret_cast<uintptr_t>(mem_->get()); }

    int PostRecv(uint64_t wr_id, uint32_t offset, uint32_t length) override {
        ibv_sge sge{Va() + offset, length, mr_->lkey};
        return post_recv_wr(qp_.get(), wr_id, &sge, 1);
    }

    int PostSend(const SendWr &w) override {
        static const std::map<std::string, ibv_wr_opcode> ops = {
            {"send", IBV_WR_SEND},
            {"send_imm", IBV_WR_SEND_WITH_IMM},
            {"send_inv", IBV_WR_SEND_WITH_INV},
            {"write", IBV_WR_RDMA_WRITE},
            {"write_imm", IBV_WR_RDMA_WRITE_WITH_IMM},
            {"read", IBV_WR_RDMA_READ},
            {"cas", IBV_WR_ATOMIC_CMP_AND_SWP},
            {"faa", IBV_WR_ATOMIC_FETCH_AND_ADD},
        };
        auto it = ops.find(w.op);
        if (it == ops.end())
            return EINVAL;
        ibv_sge sge{Va() + w.offset, w.length, mr_->lkey};
        ibv_send_wr wr = send_wr(w.wr_id, it->second, &sge, w.length || w.op == "read" ? 1 : 0);
        wr.send_flags = IBV_SEND_SIGNALED | (w.solicited ? IBV_SEND_SOLICITED : 0);
        wr.imm_data = htonl(w.imm);
        if (w.op == "send_inv")
            wr.invalidate_rkey = w.inv_rkey;
        if (w.op == "cas" || w.op == "faa") {
            wr.wr.atomic.remote_addr = w.va;
            wr.wr.atomic.rkey = w.rkey;
            wr.wr.atomic.compare_add = w.op == "cas" ? w.compare : w.swap_add;
            wr.wr.atomic.swap = w.swap_add;
        } else if (spec_.type == QpType::UD) {
            wr.wr.ud.ah = ah_.get();
            wr.wr.ud.remote_qpn = w.remote_qpn;
            wr.wr.ud.remote_qkey = w.remote_qkey;
        } else {
            wr.wr.rdma.remote_addr = w.va;
            wr.wr.rdma.rkey = w.rkey;
        }
        return post_send_wr(qp_.get(), wr);
    }

    std::optional<Completion> PollCq(Ms wait) override {
        const auto end = std::chrono::steady_clock::now() +
                         std::chrono::duration_cast<std::chrono::steady_clock::duration>(wait);
        do {
            if (ibv_poll_cq(end_.scq.get(), 1, &wc_) > 0) {
                Completion c;
                c.wr_id = wc_.wr_id;
                c.status = WcStatusName(wc_.status);
                c.opcode = OpcodeName(wc_.opcode);
                c.byte_len = wc_.byte_len;
                if (wc_.wc_flags & IBV_WC_WITH_IMM)
                    c.imm = ntohl(wc_.imm_data);
                c.src_qp = wc_.src_qp;
                return c;
            }
            usleep(500);
        } while (std::chrono::steady_clock::now() < end);
        return std::nullopt;
    }

    Bytes ReadMem(uint32_t offset, uint32_t length) override {
        if (static_cast<uint64_t>(offset) + length > spec_.mem_len)
            return {};
        return Bytes(mem_->get() + offset, mem_->get() + offset + length);
    }

    std::string QpState() override {
        ibv_qp_attr a{};
        ibv_qp_init_attr i{};
        if (ibv_query_qp(qp_.get(), &a, IBV_QP_STATE, &i))
            return "unknown";
        return StateName(a.qp_state);
    }

    void Inject(const Datagram &d) override {
        const int fd = Sock(d.sport, d.foreign);
        if (fd < 0)
            return;
        const int tos = d.ce ? 0x3 : 0, no_check = d.no_csum;
        SetEcnAndChecksum(fd, tos, no_check);
        sockaddr_storage to{};
        const socklen_t len = SockAddr(qp_addr_, kPort, &to);
        sendto(fd, d.payload.data(), d.payload.size(), 0, reinterpret_cast<sockaddr *>(&to), len);
        if (d.ce || d.no_csum)
            SetEcnAndChecksum(fd, 0, 0);
    }

    std::optional<Datagram> Receive(Ms wait) override {
        const auto end = std::chrono::steady_clock::now() +
                         std::chrono::duration_cast<std::chrono::steady_clock::duration>(wait);
        for (;;) {
            std::vector<pollfd> fds;
            std::vector<bool> foreign;
            for (auto &[key, fd] : socks_) {
                fds.push_back({fd.get(), POLLIN, 0});
                foreign.push_back(key.second);
            }
            const Ms left = end - std::chrono::steady_clock::now();
            const int ms = static_cast<int>(std::ceil(std::max(0.0, left.count())));
            if (poll(fds.data(), fds.size(), ms) <= 0)
                return std::nullopt;
            for (size_t i = 0; i < fds.size(); i++)
                if (fds[i].revents & POLLIN)
                    if (auto d = Read(fds[i].fd)) {
                        d->foreign = foreign[i];
                        return d;
                    }
        }
    }

    // The 16-byte addresses, IPv4 ones v4-mapped: as they are kept.
    Addresses Addrs() const override {
        Addresses a;
        a.qp = Bytes(qp_addr_.s6_addr, qp_addr_.s6_addr + 16);
        a.peer = Bytes(peer_.s6_addr, peer_.s6_addr + 16);
        if (has_foreign_)
            a.foreign = Bytes(foreign_.s6_addr, foreign_.s6_addr + 16);
        return a;
    }

    // The device's psk is the module's when it was created: nothing to
    // set, but a warning when the module's is another one now.
    bool SetPsk(const Bytes &psk, std::string *) override {
        std::ifstream in("/sys/module/metaroce/parameters/psk");
        std::string now;
        if (!in || !std::getline(in, now))
            return true; // another implementation, or not root
        Psk k{};
        std::string why;
        const bool set = ParsePsk(now, &k, &why);
        if (set != !psk.empty() || (set && !std::equal(psk.begin(), psk.end(), k.begin())))
            std::fprintf(stderr,
                         "mr-conform: warning: the module's psk is %s; %s encrypts with the one "
                         "it was created with\n",
                         set ? "another key" : "unset", device_.c_str());
        return true;
    }

    void Wait(Ms d) override {
        std::this_thread::sleep_for(std::chrono::duration_cast<std::chrono::microseconds>(d));
    }

    std::map<std::string, int64_t> Counters() override {
        std::map<std::string, int64_t> out;
        for (auto &[k, v] : rdma_counters(device_.c_str()))
            out[k] = v;
        return out;
    }

private:
    // @text as an IPv4 or IPv6 address: its family in *family, the address
    // in *addr (IPv4: v4-mapped). An IPv4 address in IPv6 notation
    // (::ffff:a.b.c.d) is IPv4.
    static bool ParseIp(const std::string &text, int *family, in6_addr *addr) {
        in_addr v4{};
        *addr = in6_addr{};
        if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
            addr->s6_addr[10] = addr->s6_addr[11] = 0xff;
            std::memcpy(&addr->s6_addr[12], &v4, 4);
            *family = AF_INET;
            return true;
        }
        if (inet_pton(AF_INET6, text.c_str(), addr) != 1)
            return false;
        *family = IN6_IS_ADDR_V4MAPPED(addr) ? AF_INET : AF_INET6;
        return true;
    }

    // @addr (kept as 16 bytes) and @port as a socket address of the
    // family; its length.
    socklen_t SockAddr(const in6_addr &addr, uint16_t port, sockaddr_storage *out) const {
        if (family_ == AF_INET) {
            auto *a = reinterpret_cast<sockaddr_in *>(out);
            a->sin_family = AF_INET;
            a->sin_port = htons(port);
            std::memcpy(&a->sin_addr, &addr.s6_addr[12], 4);
            return sizeof(*a);
        }
        auto *a = reinterpret_cast<sockaddr_in6 *>(out);
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(port);
        a->sin6_addr = addr;
        return sizeof(*a);
    }

    // The ECN bits of what @fd sends next (IPv4: the TOS byte, IPv6: the
    // traffic class), and whether its UDP checksum is zero (IPv6:
    // UDP_NO_CHECK6_TX, RFC 6935's exception; the QP's tunnel socket takes
    // such a datagram, as udp_sock_create() sets UDP_NO_CHECK6_RX, and
    // counts it rx_drop_no_csum).
    void SetEcnAndChecksum(int fd, int tos, int no_check) const {
        if (family_ == AF_INET) {
            setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
            setsockopt(fd, SOL_SOCKET, SO_NO_CHECK, &no_check, sizeof(no_check));
        } else {
            setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof(tos));
            setsockopt(fd, IPPROTO_UDP, UDP_NO_CHECK6_TX, &no_check, sizeof(no_check));
        }
    }

    bool ConnectUd(const ibv_gid &dgid, std::string *why) {
        ibv_qp_attr a{};
        a.qp_state = IBV_QPS_INIT;
        a.port_num = 1;
        a.qkey = spec_.qkey;
        int e = ibv_modify_qp(qp_.get(), &a,
                              IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
        a.qp_state = IBV_QPS_RTR;
        e = e ? e : ibv_modify_qp(qp_.get(), &a, IBV_QP_STATE);
        a.qp_state = IBV_QPS_RTS;
        a.sq_psn = kQpPsn;
        e = e ? e : ibv_modify_qp(qp_.get(), &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
        ibv_ah_attr ah{};
        ah.is_global = 1;
        ah.grh.dgid = dgid;
        ah.grh.sgid_index = static_cast<uint8_t>(end_.gid_index);
        ah.grh.hop_limit = 64;
        ah.port_num = 1;
        ah_.reset(ibv_create_ah(end_.pd.get(), &ah));
        if (e || !ah_) {
            *why = "UD QP to RTS, or its address handle, failed";
            return false;
        }
        return true;
    }

    // The socket at the peer's (or the foreign) address and @port, made in
    // the peer's namespace on first use.
    int Sock(uint16_t port, bool foreign) {
        const auto key = std::make_pair(port, foreign);
        if (auto it = socks_.find(key); it != socks_.end())
            return it->second.get();
        if (foreign && !has_foreign_)
            return -1;
        if (netns_.get() >= 0 && setns(netns_.get(), CLONE_NEWNET))
            return -1;
        Fd fd(socket(family_, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
        if (netns_.get() >= 0)
            setns(self_ns_.get(), CLONE_NEWNET);
        const int one = 1;
        setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (family_ == AF_INET)
            setsockopt(fd.get(), IPPROTO_IP, IP_RECVTOS, &one, sizeof(one));
        else
            setsockopt(fd.get(), IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof(one));
        // When the datagram arrived, not when the runner read it.
        setsockopt(fd.get(), SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
        sockaddr_storage a{};
        const socklen_t len = SockAddr(foreign ? foreign_ : peer_, port, &a);
        if (fd.get() < 0 || bind(fd.get(), reinterpret_cast<sockaddr *>(&a), len))
            return -1;
        const int raw = fd.get();
        socks_.emplace(key, std::move(fd));
        return raw;
    }

    std::optional<Datagram> Read(int fd) {
        uint8_t buf[9216];
        char ctl[128];
        sockaddr_storage from{};
        iovec iov{buf, sizeof(buf)};
        msghdr m{};
        m.msg_name = &from;
        m.msg_namelen = sizeof(from);
        m.msg_iov = &iov;
        m.msg_iovlen = 1;
        m.msg_control = ctl;
        m.msg_controllen = sizeof(ctl);
        const ssize_t n = recvmsg(fd, &m, 0);
        if (n < 0)
            return std::nullopt;
        Datagram d;
        d.payload.assign(buf, buf + n);
        // sin_port and sin6_port are at the same place.
        d.sport = ntohs(reinterpret_cast<const sockaddr_in *>(&from)->sin_port);
        for (cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
                timespec ts, now;
                std::memcpy(&ts, CMSG_DATA(c), sizeof(ts));
                clock_gettime(CLOCK_REALTIME, &now);
                const double ago = static_cast<double>(now.tv_sec - ts.tv_sec) * 1e3 +
                                   static_cast<double>(now.tv_nsec - ts.tv_nsec) / 1e6;
                d.t_ms = NowMs() - std::max(0.0, ago);
            } else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS) {
                const uint8_t ecn = *CMSG_DATA(c) & 3;
                d.ect = ecn == 2;
                d.ce = ecn == 3;
            } else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS) {
                int tclass = 0; // an int, not IPv4's byte
                std::memcpy(&tclass, CMSG_DATA(c), sizeof(tclass));
                const int ecn = tclass & 3;
                d.ect = ecn == 2;
                d.ce = ecn == 3;
            }
        return d;
    }

    std::string device_;
    int family_ = AF_INET;
    // 16 bytes each, IPv4 ones v4-mapped: a GID's form.
    in6_addr peer_{}, foreign_{}, qp_addr_{};
    bool has_foreign_ = false;
    Fd netns_, self_ns_;
    RcEnd end_;
    QpSpec spec_;
    std::unique_ptr<Mapping> mem_;
    Mr mr_;
    Qp qp_;
    std::unique_ptr<ibv_ah, Deleter<ibv_destroy_ah>> ah_;
    ibv_wc wc_{};
    std::map<std::pair<uint16_t, bool>, Fd> socks_;
};

} // namespace

std::unique_ptr<Target> MakeGuestTarget(const std::string &device, const std::string &peer_netns,
                                        const std::string &peer_ip, const std::string &foreign_ip,
                                        std::string *why) {
    auto t = std::make_unique<LiveTarget>();
    if (!t->Open(device, peer_netns, peer_ip, foreign_ip, why))
        return nullptr;
    return t;
}

} // namespace conform
