// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// UD QPs and address handles between two metaroce devices (one per host),
// as KTAP: the RESET -> INIT -> RTR -> RTS walk with a Q_Key, datagrams
// with the 40-byte GRH area in front (the IPv4 header in its last 20
// bytes), wc.src_qp and immediate data, the QP's Q_Key used when a WR's
// has the high bit set, and the drops the counters must show: a wrong
// Q_Key, no receive posted, a receive too short; a send above the path
// MTU completes with a local length error and the QP goes on.
//
// usage: mr_ud DEV_A DEV_B (e.g. mrc0 mrc1; DEV_A sends, DEV_B receives)
#include "guest_test.h"

#include <netinet/ip.h>

using namespace guest;

namespace {

using Ah = std::unique_ptr<ibv_ah, Deleter<ibv_destroy_ah>>;

constexpr uint32_t kQkey = 0x11111111;
constexpr size_t kGrh = 40;
constexpr size_t kBuf = 8192;
constexpr int kCases = 33;

// A UD QP with its buffer, on one end.
struct UdEnd {
    RcEnd *end = nullptr;
    Qp qp;
    Mapping buf{kBuf, PROT_READ | PROT_WRITE};
    Mr mr;
};

// Creates the UD QP of @e and walks it to RTS: 0 or the first errno.
int setup(UdEnd &e, RcEnd &end) {
    e.end = &end;
    ibv_qp_init_attr init{};
    init.send_cq = end.scq.get();
    init.recv_cq = end.rcq.get();
    init.cap.max_send_wr = 16;
    init.cap.max_recv_wr = 16;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    init.qp_type = IBV_QPT_UD;
    init.sq_sig_all = 1;
    e.qp.reset(ibv_create_qp(end.pd.get(), &init));
    if (!e.qp)
        return errno;
    int err;
    e.mr = reg_mr(end.pd.get(), e.buf.get(), kBuf, IBV_ACCESS_LOCAL_WRITE, &err);
    if (!e.mr)
        return err;
    for (ibv_qp_state s : kRcSteps)
        if (int ret = modify_ud(e.qp.get(), s, kQkey, 0x123))
            return ret;
    return 0;
}

// Posts one receive of @len bytes at the start of @e's buffer.
int post_recv(UdEnd &e, uint64_t wr_id, uint32_t len) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(e.buf.get()), len, e.mr->lkey};
    return post_recv_wr(e.qp.get(), wr_id, &sge);
}

// Sends @len bytes from offset 4096 of @from's buffer to @to's QP through
// @ah, with @qkey and (when @imm) immediate data; the send completion.
ibv_wc send(UdEnd &from, const UdEnd &to, ibv_ah *ah, uint32_t len, uint32_t qkey,
            bool imm = false) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(from.buf.get() + 4096), len, from.mr->lkey};
    ibv_send_wr wr = send_wr(len, imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, &sge);
    wr.imm_data = htonl(0xabcd0123);
    wr.wr.ud.ah = ah;
    wr.wr.ud.remote_qpn = to.qp->qp_num;
    wr.wr.ud.remote_qkey = qkey;
    ibv_wc wc{};
    wc.status = IBV_WC_GENERAL_ERR;
    if (post_send_wr(from.qp.get(), wr))
        return wc;
    auto wcs = poll_wcs(from.end->scq.get(), 1);
    return wcs.empty() ? wc : wcs[0];
}

// The receive completion of @e, if one comes within @ms.
bool recv_wc(UdEnd &e, ibv_wc *wc, int ms = 2000) {
    auto wcs = poll_wcs(e.end->rcq.get(), 1, ms);
    if (wcs.empty())
        return false;
    *wc = wcs[0];
    return true;
}

long long counter(const RcEnd &e, const char *name) {
    auto c = rdma_counters(e.name.c_str());
    auto it = c.find(name);
    return it == c.end() ? -1 : it->second;
}

uint32_t mtu_bytes(ibv_mtu mtu) {
    return 128u << mtu;
}

} // namespace

int main(int argc, char **argv) {
    start(argc, argv, 2, "DEV_A DEV_B");
    RcEnd a, b;
    open_rc_ends(a, argv[1], b, argv[2]);
    Ktap t(kCases);
    UdEnd sa, sb;

    t.check(setup(sa, a) == 0, "UD QP on the sender: RESET -> INIT (Q_Key) -> RTR -> RTS");
    t.check(setup(sb, b) == 0, "UD QP on the receiver: RESET -> INIT (Q_Key) -> RTR -> RTS");
    if (!sa.qp || !sb.qp || !sa.mr || !sb.mr)
        bail("no UD QPs");
    {
        ibv_qp_attr attr{};
        ibv_qp_init_attr init{};
        int ret = ibv_query_qp(sb.qp.get(), &attr, IBV_QP_STATE | IBV_QP_QKEY, &init);
        t.check(ret == 0 && attr.qp_state == IBV_QPS_RTS && attr.qkey == kQkey &&
                    init.qp_type == IBV_QPT_UD,
                "query_qp: RTS, the Q_Key, type UD", "ret %d state %d qkey %#x type %d", ret,
                attr.qp_state, attr.qkey, init.qp_type);
        attr.qp_state = IBV_QPS_RTS;
        attr.dest_qp_num = 5;
        t.refused(ibv_modify_qp(sb.qp.get(), &attr, IBV_QP_STATE | IBV_QP_DEST_QPN), EINVAL,
                  "a destination QPN is no UD attribute: refused");
    }

    ibv_ah_attr ah_attr{};
    ah_attr.is_global = 1;
    ah_attr.grh.dgid = b.gid;
    ah_attr.grh.sgid_index = static_cast<uint8_t>(a.gid_index);
    ah_attr.grh.hop_limit = 64;
    ah_attr.port_num = 1;
    Ah ah(ibv_create_ah(a.pd.get(), &ah_attr));
    t.check(ah != nullptr, "create_ah to the receiver's IPv4 GID", "errno %d", errno);
    if (!ah)
        bail("no AH");
    {
        ibv_ah_attr bad = ah_attr;
        bad.is_global = 0;
        errno = 0;
        Ah none(ibv_create_ah(a.pd.get(), &bad));
        t.check(!none, "create_ah without a GRH refused (RoCE needs one)", "it was created");
    }

    // A datagram with immediate data: GRH, payload, src_qp, flags.
    const uint32_t len = 100;
    for (uint32_t i = 0; i < len; i++)
        sa.buf.get()[4096 + i] = static_cast<uint8_t>(i * 7 + 1);
    std::memset(sb.buf.get(), 0xee, kBuf);
    t.check(post_recv(sb, 1, kGrh + len) == 0, "post a receive of GRH + 100 bytes");
    ibv_wc swc = send(sa, sb, ah.get(), len, kQkey, true);
    t.check(swc.status == IBV_WC_SUCCESS && swc.opcode == IBV_WC_SEND,
            "SEND_WITH_IMM of 100 bytes completes", "status %s opcode %d",
            ibv_wc_status_str(swc.status), swc.opcode);
    ibv_wc rwc{};
    bool got = recv_wc(sb, &rwc);
    t.check(got && rwc.status == IBV_WC_SUCCESS && rwc.opcode == IBV_WC_RECV &&
                rwc.byte_len == kGrh + len,
            "the receive completes with GRH + 100 bytes", "got %d status %s opcode %d len %u", got,
            ibv_wc_status_str(rwc.status), rwc.opcode, rwc.byte_len);
    t.check(got && rwc.src_qp == sa.qp->qp_num, "wc.src_qp is the sender's QPN",
            "src_qp %#x, sender %#x", rwc.src_qp, sa.qp->qp_num);
    t.check(got && (rwc.wc_flags & IBV_WC_GRH) && (rwc.wc_flags & IBV_WC_WITH_IMM) &&
                ntohl(rwc.imm_data) == 0xabcd0123,
            "wc_flags GRH and WITH_IMM, the immediate data", "flags %#x imm %#x", rwc.wc_flags,
            ntohl(rwc.imm_data));
    t.check(std::memcmp(sb.buf.get() + kGrh, sa.buf.get() + 4096, len) == 0 &&
                sb.buf.get()[kGrh + len] == 0xee,
            "the payload lands right after the GRH area, nothing beyond");
    {
        const uint8_t *g = sb.buf.get();
        bool zero = true;
        for (size_t i = 0; i < 20; i++)
            zero &= g[i] == 0;
        iphdr ip{};
        std::memcpy(&ip, g + 20, sizeof(ip));
        t.check(zero && ip.version == 4 && ip.ihl == 5 && ip.protocol == IPPROTO_UDP &&
                    std::memcmp(&ip.saddr, a.gid.raw + 12, 4) == 0 &&
                    std::memcmp(&ip.daddr, b.gid.raw + 12, 4) == 0,
                "GRH area: 20 zero bytes, then the IPv4 header (UDP, sender -> receiver)",
                "zero %d version %d ihl %d proto %d", zero, ip.version, ip.ihl, ip.protocol);
    }

    // The high bit of the WR's Q_Key: the sending QP's own (the same here).
    post_recv(sb, 2, kGrh + len);
    swc = send(sa, sb, ah.get(), len, 0x80000000u);
    got = recv_wc(sb, &rwc);
    t.check(swc.status == IBV_WC_SUCCESS && got && rwc.status == IBV_WC_SUCCESS && rwc.wr_id == 2,
            "Q_Key 0x80000000 in the WR: the QP's Q_Key is sent, delivered", "got %d", got);

    // A wrong Q_Key: dropped at the receiver, counted, the receive stays.
    long long qk0 = counter(b, "ud_rx_drop_qkey");
    post_recv(sb, 3, kGrh + len);
    swc = send(sa, sb, ah.get(), len, 0x22222222);
    t.check(swc.status == IBV_WC_SUCCESS, "a send with a wrong Q_Key completes at the sender");
    got = recv_wc(sb, &rwc, 300);
    t.check(!got, "the datagram with the wrong Q_Key is not delivered", "wr_id %llu",
            static_cast<unsigned long long>(rwc.wr_id));
    long long qk1 = counter(b, "ud_rx_drop_qkey");
    t.check(qk1 == qk0 + 1, "ud_rx_drop_qkey counts it", "%lld -> %lld", qk0, qk1);
    swc = send(sa, sb, ah.get(), len, kQkey);
    got = recv_wc(sb, &rwc);
    t.check(got && rwc.status == IBV_WC_SUCCESS && rwc.wr_id == 3,
            "the receive it left takes the next datagram");

    // One path MTU exactly, then one byte more: a local length error.
    const uint32_t mtu = mtu_bytes(a.port.active_mtu);
    post_recv(sb, 4, kGrh + mtu);
    swc = send(sa, sb, ah.get(), mtu, kQkey);
    got = recv_wc(sb, &rwc);
    t.check(swc.status == IBV_WC_SUCCESS && got && rwc.status == IBV_WC_SUCCESS &&
                rwc.byte_len == kGrh + mtu,
            "a datagram of one path MTU (" + std::to_string(mtu) + " bytes) is delivered",
            "send %s, got %d", ibv_wc_status_str(swc.status), got);
    long long tl0 = counter(a, "ud_tx_too_long");
    post_recv(sb, 5, kGrh + mtu + 1);
    swc = send(sa, sb, ah.get(), mtu + 1, kQkey);
    t.check(swc.status == IBV_WC_LOC_LEN_ERR, "a send of MTU + 1 bytes: local length error",
            "status %s", ibv_wc_status_str(swc.status));
    long long tl1 = counter(a, "ud_tx_too_long");
    t.check(tl1 == tl0 + 1, "ud_tx_too_long counts it", "%lld -> %lld", tl0, tl1);
    t.check(!recv_wc(sb, &rwc, 300), "nothing was sent");
    {
        // The failed send moved the QP to SQE: sends flush until it is
        // moved back to RTS.
        ibv_qp_attr attr{};
        ibv_qp_init_attr init{};
        int ret = ibv_query_qp(sa.qp.get(), &attr, IBV_QP_STATE, &init);
        t.check(ret == 0 && attr.qp_state == IBV_QPS_SQE, "after the length error the QP is in SQE",
                "ret %d state %d", ret, attr.qp_state);
        swc = send(sa, sb, ah.get(), 8, kQkey);
        t.check(swc.status == IBV_WC_WR_FLUSH_ERR, "a send posted in SQE completes flushed",
                "status %s", ibv_wc_status_str(swc.status));
        attr.qp_state = IBV_QPS_RTS;
        t.check(ibv_modify_qp(sa.qp.get(), &attr, IBV_QP_STATE) == 0, "modify SQE -> RTS");
    }
    swc = send(sa, sb, ah.get(), 8, kQkey);
    got = recv_wc(sb, &rwc);
    t.check(swc.status == IBV_WC_SUCCESS && got && rwc.wr_id == 5 && rwc.byte_len == kGrh + 8,
            "back in RTS the QP goes on: the next send is delivered", "got %d", got);

    // A receive shorter than GRH + payload: consumed with a length error.
    long long rl0 = counter(b, "ud_rx_too_long");
    post_recv(sb, 6, kGrh + 10);
    send(sa, sb, ah.get(), 11, kQkey);
    got = recv_wc(sb, &rwc);
    t.check(got && rwc.wr_id == 6 && rwc.status == IBV_WC_LOC_LEN_ERR,
            "a datagram longer than its receive: local length error", "got %d status %s", got,
            ibv_wc_status_str(rwc.status));
    long long rl1 = counter(b, "ud_rx_too_long");
    t.check(rl1 == rl0 + 1, "ud_rx_too_long counts it", "%lld -> %lld", rl0, rl1);

    // No receive posted: dropped (UD has no RNR), counted.
    long long nr0 = counter(b, "ud_rx_drop_no_recv");
    swc = send(sa, sb, ah.get(), len, kQkey);
    usleep(200000);
    long long nr1 = counter(b, "ud_rx_drop_no_recv");
    t.check(swc.status == IBV_WC_SUCCESS && nr1 == nr0 + 1,
            "no receive posted: dropped, ud_rx_drop_no_recv counts it", "%lld -> %lld", nr0, nr1);

    // What UD does not do.
    {
        ibv_sge sge{reinterpret_cast<uintptr_t>(sa.buf.get()), 8, sa.mr->lkey};
        ibv_send_wr wr = send_wr(7, IBV_WR_RDMA_WRITE, &sge);
        wr.wr.ud.ah = ah.get();
        wr.wr.ud.remote_qpn = sb.qp->qp_num;
        t.refused(post_send_wr(sa.qp.get(), wr), EINVAL, "RDMA WRITE on a UD QP refused");
    }

    // ERR flushes posted receives.
    post_recv(sb, 8, kGrh + len);
    ibv_qp_attr err_attr{};
    err_attr.qp_state = IBV_QPS_ERR;
    t.check(ibv_modify_qp(sb.qp.get(), &err_attr, IBV_QP_STATE) == 0, "receiver to ERR");
    got = recv_wc(sb, &rwc);
    t.check(got && rwc.wr_id == 8 && rwc.status == IBV_WC_WR_FLUSH_ERR,
            "its posted receive is flushed", "got %d status %s", got,
            ibv_wc_status_str(rwc.status));

    t.check(ibv_destroy_ah(ah.release()) == 0, "destroy_ah");
    return t.passed() ? 0 : 1;
}
