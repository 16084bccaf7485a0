// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// mr_streams DEV_A DEV_B FLOWS MSGS SIZE: the example of the direct verbs
// of mrcdv.h. An RC QP of FLOWS streams on DEV_A (mrcdv_create_qp) writes
// MSGS messages of SIZE bytes with immediate data to a plain RC QP on
// DEV_B, message i on stream i % FLOWS (mrcdv_wr_set_stream between
// ibv_wr_start and ibv_wr_complete). B checks every completion: its stream
// (mrcdv_wc_stream), its place in its stream's order, its data. With one
// stream every message completes in post order; with many, a message that
// lost a packet holds back only its stream, which "overtakes" counts (a
// completion while an earlier message is incomplete). FLOWS written "64q"
// carries the same traffic over 64 QPs of one stream instead, for
// comparison. Completion delays (post at A to completion at B) and the
// rate go to diagnostics.
#include "guest_test.h"

#include <mrcdv.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <vector>

using namespace guest;

namespace {

// printf into a string: the cases' descriptions carry their figures.
std::string str(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
std::string str(const char *fmt, ...) {
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return buf;
}

using Clock = std::chrono::steady_clock;
constexpr uint32_t kWindow = 128; // messages in flight: the message window
constexpr uint32_t kRecvs = 256;

// Creates the RC QP of @streams streams on @e, with the extended send API.
Qp create_streams_qp(RcEnd &e, uint32_t streams, int *err) {
    ibv_qp_init_attr_ex init{};
    init.qp_type = IBV_QPT_RC;
    init.send_cq = e.scq.get();
    init.recv_cq = e.rcq.get();
    init.cap.max_send_wr = kWindow;
    init.cap.max_recv_wr = 1;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    init.sq_sig_all = 1;
    init.pd = e.pd.get();
    init.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    init.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
    mrcdv_qp_init_attr mrc{};
    mrc.streams = streams;
    Qp qp(mrcdv_create_qp(e.ctx.get(), &init, &mrc, sizeof(mrc)));
    *err = qp ? 0 : errno;
    return qp;
}

// A plain RC QP on @e, the receiving side: streams need nothing there,
// but room: a receive that completes ahead of an earlier one keeps its
// slot until that one completes, so the queue holds the message window
// on top of the receives outstanding.
Qp create_plain_qp(RcEnd &e) {
    ibv_qp_init_attr init{};
    init.qp_type = IBV_QPT_RC;
    init.send_cq = e.scq.get();
    init.recv_cq = e.rcq.get();
    init.cap.max_send_wr = 1;
    init.cap.max_recv_wr = kRecvs + kWindow;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    return Qp(ibv_create_qp(e.pd.get(), &init));
}

// Both QPs from RESET to RTS; 0 or the errno of the step that failed.
int connect(RcEnd &a, ibv_qp *qa, RcEnd &b, ibv_qp *qb) {
    const RcPath pa = rc_path(a, b, qb->qp_num, 0x100, 0x200);
    const RcPath pb = rc_path(b, a, qa->qp_num, 0x200, 0x100);
    for (ibv_qp_state step : kRcSteps)
        if (int err = modify_rc(qa, step, pa, {}) ?: modify_rc(qb, step, pb, {}))
            return err;
    return 0;
}

uint8_t pattern(uint32_t msg, uint32_t byte) {
    return uint8_t(msg * 131 + byte * 7 + 1);
}

struct Result {
    uint32_t delivered = 0, order_errors = 0, stream_errors = 0, data_errors = 0;
    uint32_t send_stream_errors = 0, failed = 0, overtakes = 0, repost_errors = 0;
    std::vector<double> delay_us;
    double seconds = 0;
};

// The connections the flows take: one QP of a stream per flow, or one QP
// per flow (qa[f] to qb[f]), each of one stream.
struct Conns {
    std::vector<ibv_qp *> qa, qb;
    bool per_flow() const { return qa.size() > 1; }
};

// Message @i of flow f = i % @flows: a WRITE with immediate (f, its
// sequence in the flow) of @size bytes into slot i of B's region, on
// stream f of the one QP, or on flow f's own QP. At most kWindow messages
// are in flight, whichever way they go: the same traffic.
class Traffic {
public:
    Traffic(RcEnd &a, RcEnd &b, Conns conns, uint32_t flows, uint32_t msgs, uint32_t size)
        : a_(a), b_(b), conns_(std::move(conns)), flows_(flows), msgs_(msgs), size_(size),
          src_(size_t{msgs} * size, PROT_READ | PROT_WRITE),
          dst_(size_t{msgs} * size, PROT_READ | PROT_WRITE), posted_at_(msgs), done_(msgs),
          next_seq_(flows) {
        for (size_t q = 0; q < conns_.qb.size(); q++)
            flow_of_qpn_[conns_.qb[q]->qp_num] = uint32_t(q);
    }

    bool setup() {
        int err = 0;
        if (!src_.get() || !dst_.get())
            return false;
        for (uint32_t i = 0; i < msgs_; i++)
            for (uint32_t k = 0; k < size_; k++)
                src_.get()[size_t{i} * size_ + k] = pattern(i, k);
        smr_ = reg_mr(a_.pd.get(), src_.get(), src_.size(), IBV_ACCESS_LOCAL_WRITE, &err);
        dmr_ = reg_mr(b_.pd.get(), dst_.get(), dst_.size(),
                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, &err);
        if (!smr_ || !dmr_)
            return false;
        for (ibv_qp *qb : conns_.qb)
            for (uint32_t i = 0; i < recvs_per_qp(); i++)
                if (post_recv_wr(qb, i, nullptr, 0))
                    return false;
        return true;
    }

    // Receives each receiving QP keeps posted.
    uint32_t recvs_per_qp() const { return conns_.per_flow() ? kWindow / 8 : kRecvs; }

    Result run(int timeout_ms) {
        Result r;
        const auto start = Clock::now(), deadline = start + std::chrono::milliseconds(timeout_ms);
        uint32_t next = 0, in_flight = 0;
        while (r.delivered + r.failed < msgs_ && Clock::now() < deadline) {
            for (; next < msgs_ && in_flight < kWindow; next++, in_flight++)
                if (post(next))
                    return r;
            in_flight -= poll_sends(r);
            poll_receives(r);
        }
        r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
        return r;
    }

private:
    // Message @i, alone in a batch of the extended API.
    int post(uint32_t i) {
        const uint32_t flow = i % flows_, seq = i / flows_;
        ibv_qp_ex *qpx = ibv_qp_to_qp_ex(conns_.qa[conns_.per_flow() ? flow : 0]);
        ibv_wr_start(qpx);
        qpx->wr_id = i;
        qpx->wr_flags = IBV_SEND_SIGNALED;
        ibv_wr_rdma_write_imm(qpx, dmr_->rkey, uintptr_t(dst_.get()) + uint64_t{i} * size_,
                              htobe32(flow << 16 | (seq & 0xffff)));
        if (!conns_.per_flow())
            mrcdv_wr_set_stream(qpx, uint16_t(flow));
        ibv_wr_set_sge(qpx, smr_->lkey, uintptr_t(src_.get()) + uint64_t{i} * size_, size_);
        posted_at_[i] = Clock::now();
        return ibv_wr_complete(qpx);
    }

    // The stream a completion of flow @flow must name.
    uint32_t stream_of(uint32_t flow) const { return conns_.per_flow() ? 0 : flow; }

    uint32_t poll_sends(Result &r) {
        ibv_wc wc[32];
        const int n = ibv_poll_cq(a_.scq.get(), 32, wc);
        for (int k = 0; k < n; k++) {
            if (wc[k].status != IBV_WC_SUCCESS)
                r.failed++;
            else if (mrcdv_wc_stream(&wc[k]) != stream_of(uint32_t(wc[k].wr_id % flows_)))
                r.send_stream_errors++;
        }
        return uint32_t(std::max(n, 0));
    }

    void poll_receives(Result &r) {
        ibv_wc wc[32];
        const int n = ibv_poll_cq(b_.rcq.get(), 32, wc);
        for (int k = 0; k < n; k++) {
            const uint32_t imm = be32toh(wc[k].imm_data), flow = imm >> 16;
            if (wc[k].status != IBV_WC_SUCCESS || flow >= flows_) {
                r.failed++;
                continue;
            }
            const uint32_t i = uint32_t(next_seq_[flow]) * flows_ + flow;
            if ((imm & 0xffff) != (next_seq_[flow] & 0xffff))
                r.order_errors++;
            next_seq_[flow]++;
            if (mrcdv_wc_stream(&wc[k]) != stream_of(flow) ||
                (conns_.per_flow() && flow_of_qpn_[wc[k].qp_num] != flow))
                r.stream_errors++;
            if (i < msgs_)
                deliver(r, i);
            ibv_qp *qb = conns_.qb[conns_.per_flow() ? flow % conns_.qb.size() : 0];
            r.repost_errors += post_recv_wr(qb, wc[k].wr_id, nullptr, 0) != 0;
        }
    }

    void deliver(Result &r, uint32_t i) {
        const uint8_t *p = dst_.get() + size_t{i} * size_;
        for (uint32_t k = 0; k < size_; k++)
            if (p[k] != pattern(i, k)) {
                r.data_errors++;
                break;
            }
        r.delay_us.push_back(
            std::chrono::duration<double, std::micro>(Clock::now() - posted_at_[i]).count());
        r.overtakes += i != low_;
        done_[i] = true;
        while (low_ < msgs_ && done_[low_])
            low_++;
        r.delivered++;
    }

    RcEnd &a_, &b_;
    Conns conns_;
    uint32_t flows_, msgs_, size_;
    Mapping src_, dst_;
    Mr smr_, dmr_;
    std::vector<Clock::time_point> posted_at_;
    std::vector<bool> done_;
    std::vector<uint32_t> next_seq_;
    std::map<uint32_t, uint32_t> flow_of_qpn_;
    uint32_t low_ = 0; // the oldest message not delivered
};

double percentile(std::vector<double> v, double p) {
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(p * double(v.size())))];
}

} // namespace

int main(int argc, char **argv) {
    start(argc, argv, 5, "DEV_A DEV_B FLOWS[q] MSGS SIZE");
    const uint32_t flows = std::max(uint32_t(std::stoul(argv[3])), 1u),
                   msgs = uint32_t(std::stoul(argv[4])), size = uint32_t(std::stoul(argv[5]));
    const bool per_qp = std::string(argv[3]).back() == 'q';
    const uint32_t streams = per_qp ? 1 : flows, nqp = per_qp ? flows : 1;
    RcEnd a, b;
    open_rc_ends(a, argv[1], b, argv[2]);
    Ktap t(9);

    mrcdv_device_attr attr{};
    const int qerr = mrcdv_query_device(a.ctx.get(), &attr, sizeof(attr));
    t.check(qerr == 0 && attr.max_streams >= streams,
            str("mrcdv_query_device: max_streams %u (error %d)", attr.max_streams, qerr));

    // What mrcdv_create_qp refuses: too many streams, streams on UD.
    int err = 0;
    Qp too_many = create_streams_qp(a, attr.max_streams + 1, &err);
    t.check(!too_many && err == EINVAL,
            str("%u streams refused with EINVAL (errno %d)", attr.max_streams + 1, err));
    ibv_qp_init_attr_ex ud{};
    ud.qp_type = IBV_QPT_UD;
    ud.send_cq = a.scq.get();
    ud.recv_cq = a.rcq.get();
    ud.cap = {1, 1, 1, 1, 0};
    ud.pd = a.pd.get();
    ud.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    ud.send_ops_flags = IBV_QP_EX_WITH_SEND;
    mrcdv_qp_init_attr two{};
    two.streams = 2;
    errno = 0;
    Qp ud_qp(mrcdv_create_qp(a.ctx.get(), &ud, &two, sizeof(two)));
    const int ud_err = errno;
    t.check(!ud_qp && ud_err == EINVAL,
            str("streams on a UD QP refused with EINVAL (errno %d)", ud_err));

    std::vector<Qp> qas, qbs;
    Conns conns;
    for (uint32_t q = 0; q < nqp; q++) {
        qas.push_back(create_streams_qp(a, streams, &err));
        qbs.push_back(create_plain_qp(b));
        if (!qas.back() || !qbs.back())
            bail("cannot create the QPs: errno " + std::to_string(err ? err : errno));
        if (int e = connect(a, qas.back().get(), b, qbs.back().get()))
            bail("cannot connect the QPs: errno " + std::to_string(e));
        conns.qa.push_back(qas.back().get());
        conns.qb.push_back(qbs.back().get());
    }
    t.check(mrcdv_qp_streams(conns.qa[0]) == streams && mrcdv_qp_streams(conns.qb[0]) == 1,
            str("mrcdv_qp_streams: %u on A, %u on B", mrcdv_qp_streams(conns.qa[0]),
                mrcdv_qp_streams(conns.qb[0])));
    Traffic traffic(a, b, std::move(conns), flows, msgs, size);
    if (!traffic.setup())
        bail("cannot set up the buffers and receives");
    const Result r = traffic.run(60000);

    t.check(r.delivered == msgs && !r.failed,
            str("%u of %u messages delivered, %u failed", r.delivered, msgs, r.failed));
    t.check(!r.order_errors, str("each stream completes in its order (%u errors)", r.order_errors));
    t.check(!r.stream_errors,
            str("each receive completion names its stream (%u errors)", r.stream_errors));
    t.check(!r.send_stream_errors,
            str("each send completion names its stream (%u errors)", r.send_stream_errors));
    t.check(!r.data_errors && !r.repost_errors,
            str("every message's data verified (%u bad), every receive posted again (%u "
                "refused)",
                r.data_errors, r.repost_errors));
    std::printf("# %s\n",
                str("%s %u: overtakes %u delay_p50_us %.0f delay_p99_us %.0f delay_max_us %.0f "
                    "gbps %.3f",
                    per_qp ? "qps" : "streams", flows, r.overtakes, percentile(r.delay_us, 0.5),
                    percentile(r.delay_us, 0.99), percentile(r.delay_us, 1.0),
                    double(r.delivered) * size * 8 / r.seconds / 1e9)
                    .c_str());
    return t.passed() ? 0 : 1;
}
