// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// mr_verify: the data verifier. One process opens two RDMA devices, connects
// an RC QP on each to the other and drives every operation both ways at once
// (A->B and B->A streams): SEND, SEND_WITH_IMM, RDMA_WRITE(_WITH_IMM),
// RDMA_READ, ATOMIC_CMP_AND_SWP and ATOMIC_FETCH_AND_ADD, over sizes around
// the MTU up to 1 MiB plus seeded random ones, with 0..4 SGEs of uneven
// length, chains of WRs, inline sends and a window of WRs in flight.
// Every byte is a function of seed, stream, message and offset, so a lost,
// misplaced or stale byte shows; guard bytes surround every buffer and all
// memory not in use by a message in flight must stay guard. Every completion
// is checked (status, wr_id in post order, opcode, byte_len, imm and its
// flag); a missing one times out, an extra one shows when the CQs are polled
// after the run. Atomics are checked against a model of the remote words.
// Prints KTAP (kCases cases); exits 1 on any failure.
//
//   mr_verify --dev-a mrc0 --dev-b mrc1 [--gid-a N --gid-b N]
//             [--ops all|send,write,read,atomic,send_only,send_imm,write_only,
//              write_imm,cmp_swap,fetch_add] [--rounds N | --seconds S]
//             [--seed N] [--window N] [--max-size BYTES] [--random N]
//             [--timeout S] [--linger S] [--flip-byte ID]
// --flip-byte ID flips one received byte of A->B message ID before it is
// checked, to show that the checks catch it.
// Works on any two devices of one host, e.g. rxe_a and rxe_b.
#include "guest_test.h"
#include "pattern.h"

#include <infiniband/verbs.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using namespace guest;
using Clock = std::chrono::steady_clock;

constexpr size_t kGuard = 64;       // guard bytes checked on each side of a region
constexpr size_t kSlotSlack = 4096; // room for jitter, SGE gaps and the recv SGE
constexpr unsigned kMaxSges = 4;    // SGEs per WR: 0..4
constexpr unsigned kAtomicWords = 64;
constexpr size_t kPage = 4096;

enum Op : unsigned { kSend, kSendImm, kWrite, kWriteImm, kRead, kCmpSwap, kFetchAdd, kNumOps };

struct OpInfo {
    const char *name;
    ibv_wr_opcode wr;
    ibv_wc_opcode wc;
    bool recv; // consumes a receive WR at the responder
    bool imm;
    bool atomic;
};
constexpr std::array<OpInfo, kNumOps> kOps = {{
    {"send", IBV_WR_SEND, IBV_WC_SEND, true, false, false},
    {"send_imm", IBV_WR_SEND_WITH_IMM, IBV_WC_SEND, true, true, false},
    {"write", IBV_WR_RDMA_WRITE, IBV_WC_RDMA_WRITE, false, false, false},
    {"write_imm", IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WC_RDMA_WRITE, true, true, false},
    {"read", IBV_WR_RDMA_READ, IBV_WC_RDMA_READ, false, false, false},
    {"cmp_swap", IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WC_COMP_SWAP, false, false, true},
    {"fetch_add", IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WC_FETCH_ADD, false, false, true},
}};

// Cases: connect, one per op, atomic memory, none missing, none extra,
// idle memory, QP states.
constexpr int kCases = 1 + kNumOps + 5;

class Rng {
public:
    explicit Rng(uint64_t seed) : state_(seed) {}
    uint64_t next() { return mix(state_++); }
    uint64_t below(uint64_t n) { return n ? next() % n : 0; }

private:
    uint64_t state_;
};

struct Options {
    const char *dev[2] = {nullptr, nullptr};
    int gid[2] = {-1, -1};
    bool ops[kNumOps] = {};
    uint64_t rounds = 1;
    double seconds = 0;
    uint64_t seed = 1;
    unsigned window = 16;
    uint32_t max_size = 1u << 20;
    unsigned random_sizes = 8;
    double timeout = 30;
    double linger = 1;
    int64_t flip = -1; // self-check: flip a byte of this A->B message before verifying
};

struct Msg {
    uint64_t id = 0;
    Op op = kSend;
    uint32_t len = 0;
    uint64_t key = 0;
    size_t slot = 0;
    std::vector<Piece> local; // requester SGEs: source, or READ/atomic target
    size_t local_lo = 0, local_hi = 0;
    std::vector<Piece> remote; // the responder's data: recv SGEs, write target, read source
    size_t remote_lo = 0, remote_hi = 0;
    uint32_t imm = 0;
    bool inlined = false;
    unsigned word = 0;
    uint64_t compare_add = 0, swap = 0, orig = 0;
    bool send_done = false, recv_done = false;
};

struct Family {
    uint64_t msgs = 0, bytes = 0, errors = 0;
};

struct End {
    const char *name = nullptr;
    Context ctx;
    Pd pd;
    Cq scq, rcq;
    Qp qp;
    ibv_device_attr dev{};
    ibv_port_attr port{};
    int gid_index = -1;
    ibv_gid gid{};
    uint32_t psn = 0;
    uint32_t max_inline = 0;
    uint32_t qp_cap_send_sge = 0;
};

// Bookkeeping shared by both streams.
struct Run {
    Options opt;
    Family fam[kNumOps];
    int reported = 0; // mismatch diagnostics printed (the first few only)
    bool missing = false, aborted = false;
    uint32_t mtu = 0;
    std::vector<uint32_t> sizes;

    // A diagnostic for the first few failures; every failure counts.
    void fail(Op op, const char *fmt, ...) __attribute__((format(printf, 3, 4))) {
        fam[op].errors++;
        if (reported++ >= 10)
            return;
        va_list ap;
        va_start(ap, fmt);
        vdiag(fmt, ap);
        va_end(ap);
        std::fflush(stdout);
    }
};

// Pieces of @total bytes from @start: 0 (only for 0 bytes) to kMaxSges of
// uneven length, with gaps of 0..127 guard bytes. *end is past the last one.
std::vector<Piece> layout(Rng &rng, size_t start, uint32_t total, unsigned max_sge, size_t *end) {
    std::vector<Piece> pieces;
    unsigned n;
    if (total == 0)
        n = static_cast<unsigned>(rng.below(2));
    else
        n = 1 + static_cast<unsigned>(rng.below(std::min<uint64_t>({kMaxSges, max_sge, total})));
    std::vector<uint32_t> cuts{0, total};
    while (cuts.size() < n + 1) {
        uint32_t c = 1 + static_cast<uint32_t>(rng.below(total - 1));
        if (std::find(cuts.begin(), cuts.end(), c) == cuts.end())
            cuts.push_back(c);
    }
    std::sort(cuts.begin(), cuts.end());
    size_t off = start;
    for (unsigned i = 0; i < n; i++) {
        uint32_t len = n == 1 ? total : cuts[i + 1] - cuts[i];
        pieces.push_back({off, len});
        off += len + (i + 1 < n ? rng.below(128) : 0);
    }
    *end = off;
    return pieces;
}

// One direction: requester @req posts, responder @resp serves. Slot i of
// each side's buffer belongs to the message in flight with id % window == i.
class Stream {
public:
    Stream(Run &run, End &req, End &resp, int index)
        : run_(run), req_(req), resp_(resp), index_(index),
          rng_(mix(run.opt.seed * 2 + static_cast<uint64_t>(index))) {
        label_ = std::string(req.name) + "->" + resp.name;
    }

    const std::string &label() const { return label_; }
    uint64_t messages() const { return next_id_; }

    bool setup(int access) {
        const Options &o = run_.opt;
        slot_size_ = (o.max_size + kSlotSlack + kPage - 1) / kPage * kPage;
        const size_t total = slot_size_ * o.window;
        req_buf_ = std::make_unique<Mapping>(total, PROT_READ | PROT_WRITE);
        resp_buf_ = std::make_unique<Mapping>(total, PROT_READ | PROT_WRITE);
        words_ = std::make_unique<Mapping>(kPage, PROT_READ | PROT_WRITE);
        if (!req_buf_->get() || !resp_buf_->get() || !words_->get()) {
            std::printf("# %s: mmap of 2 x %zu bytes failed\n", label_.c_str(), total);
            return false;
        }
        std::memset(req_buf_->get(), kGuardByte, total);
        std::memset(resp_buf_->get(), kGuardByte, total);
        std::memset(words_->get(), kGuardByte, kPage);
        model_.resize(kAtomicWords);
        for (unsigned i = 0; i < kAtomicWords; i++) {
            model_[i] = rng_.next();
            std::memcpy(word_ptr(i), &model_[i], 8);
        }
        int err = 0;
        req_mr_ = reg_mr(req_.pd.get(), req_buf_->get(), total, IBV_ACCESS_LOCAL_WRITE, &err);
        if (req_mr_)
            resp_mr_ = reg_mr(resp_.pd.get(), resp_buf_->get(), total, access, &err);
        if (resp_mr_)
            words_mr_ = reg_mr(resp_.pd.get(), words_->get(), kPage, access, &err);
        if (!words_mr_) {
            std::printf("# %s: reg_mr of %zu bytes failed: %s\n", label_.c_str(), total,
                        std::strerror(err));
            return false;
        }
        return true;
    }

    bool active() const { return !inflight_.empty() || !plan_.empty() || more_; }
    void stop_planning() { more_ = false; }

    // Posts what the window allows, in chains of 1..4 WRs.
    bool post(const Clock::time_point &deadline) {
        while (inflight_.size() < run_.opt.window) {
            if (plan_.empty() && !plan_round(deadline))
                return true;
            size_t room = run_.opt.window - inflight_.size();
            size_t chain = std::min<size_t>({room, plan_.size(), 1 + rng_.below(4)});
            if (!post_chain(chain))
                return false;
        }
        return true;
    }

    // A completion of this stream's requester (send CQ) or responder (recv CQ).
    bool on_send_wc(const ibv_wc &wc) {
        auto it = std::find_if(inflight_.begin(), inflight_.end(),
                               [](const Msg &m) { return !m.send_done; });
        if (it == inflight_.end()) {
            run_.fail(kSend, "%s: send completion wr_id %" PRIu64 " (%s) with nothing in flight",
                      label_.c_str(), wc.wr_id, ibv_wc_status_str(wc.status));
            return false;
        }
        Msg &m = *it;
        const OpInfo &op = kOps[m.op];
        bool ok = check_wc(m, wc, "send", m.id, op.wc, qp_num(req_), false);
        if (ok && (m.op == kRead || op.atomic) && wc.byte_len != (op.atomic ? 8 : m.len)) {
            run_.fail(m.op, "%s msg %" PRIu64 " %s size %u: send byte_len %u", label_.c_str(), m.id,
                      op.name, m.len, wc.byte_len);
            ok = false;
        }
        m.send_done = true;
        return ok;
    }

    bool on_recv_wc(const ibv_wc &wc) {
        auto it = std::find_if(inflight_.begin(), inflight_.end(),
                               [](const Msg &m) { return kOps[m.op].recv && !m.recv_done; });
        if (it == inflight_.end()) {
            run_.fail(kSend, "%s: recv completion wr_id %" PRIu64 " (%s) with none expected",
                      label_.c_str(), wc.wr_id, ibv_wc_status_str(wc.status));
            return false;
        }
        Msg &m = *it;
        const OpInfo &op = kOps[m.op];
        bool ok = check_wc(m, wc, "recv", m.id,
                           m.op == kWriteImm ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV,
                           qp_num(resp_), op.imm);
        if (ok && wc.byte_len != m.len) {
            run_.fail(m.op, "%s msg %" PRIu64 " %s size %u: recv byte_len %u", label_.c_str(), m.id,
                      op.name, m.len, wc.byte_len);
            ok = false;
        }
        if (ok && op.imm && wc.imm_data != m.imm) {
            run_.fail(m.op, "%s msg %" PRIu64 " %s: imm_data 0x%08x, want 0x%08x", label_.c_str(),
                      m.id, op.name, wc.imm_data, m.imm);
            ok = false;
        }
        m.recv_done = true;
        return ok;
    }

    // Verifies and frees the oldest messages whose completions are all in.
    void retire() {
        while (!inflight_.empty()) {
            Msg &m = inflight_.front();
            if (!m.send_done || (kOps[m.op].recv && !m.recv_done))
                return;
            if (index_ == 0 && static_cast<int64_t>(m.id) == run_.opt.flip)
                flip_byte(m);
            verify(m);
            std::memset(req_buf_->get() + m.local_lo, kGuardByte, m.local_hi - m.local_lo);
            std::memset(resp_buf_->get() + m.remote_lo, kGuardByte, m.remote_hi - m.remote_lo);
            Family &f = run_.fam[m.op];
            f.msgs++;
            f.bytes += kOps[m.op].atomic ? 8 : m.len;
            inflight_.pop_front();
        }
    }

    // What a timeout leaves: the oldest message still waiting.
    void report_missing() {
        for (const Msg &m : inflight_) {
            if (m.send_done && (!kOps[m.op].recv || m.recv_done))
                continue;
            run_.fail(m.op,
                      "%s: timeout: msg %" PRIu64 " %s size %u (%zu in flight) misses its %s%s%s",
                      label_.c_str(), m.id, kOps[m.op].name, m.len, inflight_.size(),
                      m.send_done ? "" : "send completion",
                      !m.send_done && kOps[m.op].recv && !m.recv_done ? " and " : "",
                      kOps[m.op].recv && !m.recv_done ? "recv completion" : "");
            return;
        }
    }

    // After the run: atomic words equal the model; all else is guard.
    bool final_words_ok(bool *used) {
        *used = run_.fam[kCmpSwap].msgs + run_.fam[kFetchAdd].msgs > 0;
        bool ok = true;
        for (unsigned i = 0; i < kAtomicWords; i++) {
            uint64_t v;
            std::memcpy(&v, word_ptr(i), 8);
            if (v != model_[i]) {
                std::printf("# %s: atomic word %u is 0x%016" PRIx64 ", model 0x%016" PRIx64 "\n",
                            label_.c_str(), i, v, model_[i]);
                ok = false;
                break;
            }
        }
        return ok;
    }

    bool idle_memory_ok() {
        struct Area {
            const char *what;
            const uint8_t *p;
            size_t lo, hi;
        };
        const size_t words_lo = words_off(0), words_hi = words_off(kAtomicWords);
        const Area areas[] = {
            {"requester buffer", req_buf_->get(), 0, req_buf_->size()},
            {"responder buffer", resp_buf_->get(), 0, resp_buf_->size()},
            {"atomic page", words_->get(), 0, words_lo},
            {"atomic page", words_->get(), words_hi, kPage},
        };
        for (const Area &a : areas)
            for (size_t i = a.lo; i < a.hi; i++)
                if (a.p[i] != kGuardByte) {
                    std::printf("# %s: %s byte %zu is 0x%02x after the run, want guard 0x%02x\n",
                                label_.c_str(), a.what, i, a.p[i], kGuardByte);
                    return false;
                }
        return true;
    }

private:
    static uint32_t qp_num(const End &e) { return e.qp->qp_num; }
    size_t words_off(unsigned i) const { return kPage / 2 + 8 * i; }
    uint8_t *word_ptr(unsigned i) const { return words_->get() + words_off(i); }
    uint8_t *req_slot(const Msg &m) const { return req_buf_->get() + m.slot * slot_size_; }

    bool check_wc(const Msg &m, const ibv_wc &wc, const char *side, uint64_t want_id,
                  ibv_wc_opcode want_op, uint32_t want_qpn, bool want_imm) {
        const char *name = kOps[m.op].name;
        const bool is_recv = std::strcmp(side, "recv") == 0;
        if (wc.status != IBV_WC_SUCCESS) {
            run_.fail(m.op, "%s msg %" PRIu64 " %s size %u: %s completion status %s (%d)",
                      label_.c_str(), m.id, name, m.len, side, ibv_wc_status_str(wc.status),
                      wc.status);
            return false;
        }
        // IBV_WC_WITH_IMM means something on receive completions only.
        const bool imm_wrong = is_recv && !!(wc.wc_flags & IBV_WC_WITH_IMM) != want_imm;
        if (wc.wr_id != want_id || wc.opcode != want_op || wc.qp_num != want_qpn || imm_wrong) {
            run_.fail(m.op,
                      "%s msg %" PRIu64 " %s size %u: %s completion wr_id %" PRIu64
                      " opcode %d qp %u flags 0x%x, want wr_id %" PRIu64
                      " opcode %d qp %u imm flag %d",
                      label_.c_str(), m.id, name, m.len, side, wc.wr_id, wc.opcode, wc.qp_num,
                      wc.wc_flags, want_id, want_op, want_qpn, want_imm);
            return false;
        }
        return true;
    }

    // One round: every selected op at every size, plus random sizes, shuffled.
    bool plan_round(const Clock::time_point &deadline) {
        if (!more_)
            return false;
        if (run_.opt.seconds > 0 ? Clock::now() >= deadline : rounds_ >= run_.opt.rounds) {
            more_ = false;
            return false;
        }
        rounds_++;
        std::vector<std::pair<Op, uint32_t>> round;
        for (unsigned o = 0; o < kNumOps; o++) {
            if (!run_.opt.ops[o])
                continue;
            const Op op = static_cast<Op>(o);
            for (uint32_t s : run_.sizes)
                round.emplace_back(op, kOps[o].atomic ? 8 : s);
            for (unsigned i = 0; i < run_.opt.random_sizes; i++) {
                // Log-uniform in 1..max_size: small and large both common.
                const unsigned bits = 1 + static_cast<unsigned>(rng_.below(20));
                const uint64_t s =
                    1 + rng_.below(std::min<uint64_t>(1ull << bits, run_.opt.max_size));
                round.emplace_back(op, kOps[o].atomic ? 8 : static_cast<uint32_t>(s));
            }
        }
        for (size_t i = round.size(); i > 1; i--)
            std::swap(round[i - 1], round[rng_.below(i)]);
        plan_.insert(plan_.end(), round.begin(), round.end());
        return !plan_.empty();
    }

    Msg make(Op op, uint32_t len) {
        const OpInfo &info = kOps[op];
        Msg m;
        m.id = next_id_++;
        m.op = op;
        m.len = len;
        m.key = mix(run_.opt.seed ^ (static_cast<uint64_t>(index_) << 62) ^ mix(m.id));
        m.slot = m.id % run_.opt.window;
        const size_t req_base = m.slot * slot_size_, resp_base = req_base;
        size_t end;
        if (info.atomic) {
            const size_t off = req_base + kGuard + 8 * rng_.below(8);
            m.local = {{off, 8}};
            end = off + 8;
            m.word = static_cast<unsigned>(rng_.below(kAtomicWords));
            m.orig = model_[m.word];
            if (op == kFetchAdd) {
                m.compare_add = rng_.next();
                model_[m.word] += m.compare_add;
            } else {
                m.compare_add = rng_.below(2) ? m.orig : rng_.next();
                m.swap = rng_.next();
                if (m.compare_add == m.orig)
                    model_[m.word] = m.swap;
            }
        } else {
            m.local =
                layout(rng_, req_base + kGuard + rng_.below(64), len, req_.qp_cap_send_sge, &end);
        }
        m.local_lo = req_base;
        m.local_hi = end + kGuard;
        const size_t start = resp_base + kGuard + rng_.below(64);
        if (op == kSend || op == kSendImm) {
            // Receive buffers may be larger than the message: the rest stays guard.
            m.remote =
                layout(rng_, start, len + static_cast<uint32_t>(rng_.below(33)), kMaxSges, &end);
        } else if (!info.atomic) {
            m.remote = {{start, len}};
            end = start + len;
            if (op == kWriteImm) // its receive WR gets a buffer that must stay untouched
                end += kGuard + rng_.below(64) + 16;
        } else {
            end = start;
        }
        m.remote_lo = resp_base;
        m.remote_hi = end + kGuard;
        m.imm = static_cast<uint32_t>(rng_.next());
        return m;
    }

    bool post_chain(size_t n) {
        std::vector<Msg> msgs;
        for (size_t i = 0; i < n; i++) {
            msgs.push_back(make(plan_.front().first, plan_.front().second));
            plan_.pop_front();
        }
        std::vector<std::vector<ibv_sge>> ssge(n), rsge(n);
        std::vector<ibv_send_wr> swr(n);
        std::vector<ibv_recv_wr> rwr;
        rwr.reserve(n);
        for (size_t i = 0; i < n; i++) {
            Msg &m = msgs[i];
            const OpInfo &info = kOps[m.op];
            uint8_t *lbuf = req_buf_->get();
            uint8_t *rbuf = resp_buf_->get();
            if (m.op == kRead)
                fill_pattern(rbuf, m.remote, m.len, m.key);
            else if (!info.atomic)
                fill_pattern(lbuf, m.local, m.len, m.key);
            for (const Piece &p : m.local)
                ssge[i].push_back(
                    {reinterpret_cast<uintptr_t>(lbuf + p.off), p.len, req_mr_->lkey});
            ibv_send_wr &w = swr[i];
            w.wr_id = m.id;
            w.sg_list = ssge[i].empty() ? nullptr : ssge[i].data();
            w.num_sge = static_cast<int>(ssge[i].size());
            w.opcode = info.wr;
            w.next = i + 1 < n ? &swr[i + 1] : nullptr;
            if (info.imm)
                w.imm_data = m.imm;
            const bool may_inline = m.op <= kWriteImm && m.len > 0 && m.len <= req_.max_inline;
            if (may_inline && rng_.below(2)) {
                w.send_flags |= IBV_SEND_INLINE;
                m.inlined = true;
            }
            if (m.op >= kWrite && m.op <= kRead) {
                w.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(rbuf + m.remote[0].off);
                w.wr.rdma.rkey = resp_mr_->rkey;
            } else if (info.atomic) {
                w.wr.atomic.remote_addr = reinterpret_cast<uintptr_t>(word_ptr(m.word));
                w.wr.atomic.rkey = words_mr_->rkey;
                w.wr.atomic.compare_add = m.compare_add;
                w.wr.atomic.swap = m.swap;
            }
            if (info.recv) {
                if (m.op == kWriteImm) {
                    const size_t off = m.remote_hi - kGuard - 16;
                    rsge[i].push_back(
                        {reinterpret_cast<uintptr_t>(rbuf + off), 16, resp_mr_->lkey});
                } else {
                    for (const Piece &p : m.remote)
                        rsge[i].push_back(
                            {reinterpret_cast<uintptr_t>(rbuf + p.off), p.len, resp_mr_->lkey});
                }
                ibv_recv_wr r{};
                r.wr_id = m.id;
                r.sg_list = rsge[i].empty() ? nullptr : rsge[i].data();
                r.num_sge = static_cast<int>(rsge[i].size());
                rwr.push_back(r);
            }
        }
        for (size_t i = 0; i + 1 < rwr.size(); i++)
            rwr[i].next = &rwr[i + 1];
        if (!rwr.empty()) {
            ibv_recv_wr *bad = nullptr;
            if (int rc = ibv_post_recv(resp_.qp.get(), rwr.data(), &bad)) {
                run_.fail(msgs[0].op, "%s: post_recv of %zu WRs: %s", label_.c_str(), rwr.size(),
                          std::strerror(rc));
                return false;
            }
        }
        ibv_send_wr *bad = nullptr;
        if (int rc = ibv_post_send(req_.qp.get(), swr.data(), &bad)) {
            const size_t at = bad ? static_cast<size_t>(bad - swr.data()) : 0;
            const Msg &m = msgs[std::min(at, n - 1)];
            run_.fail(m.op, "%s: post_send of msg %" PRIu64 " %s size %u: %s", label_.c_str(), m.id,
                      kOps[m.op].name, m.len, std::strerror(rc));
            return false;
        }
        for (Msg &m : msgs) {
            // Inline data was copied at post time: later source bytes must not matter.
            if (m.inlined)
                for (const Piece &p : m.local)
                    std::memset(req_buf_->get() + p.off, kGuardByte, p.len);
            inflight_.push_back(std::move(m));
        }
        return true;
    }

    // Where the data landed (or, for 0 bytes, a guard byte next to it).
    void flip_byte(const Msg &m) {
        uint8_t *p;
        if (kOps[m.op].atomic || m.op == kRead)
            p = req_buf_->get() + (m.len ? m.local[0].off : m.local_lo);
        else
            p = resp_buf_->get() + (m.len ? m.remote[0].off : m.remote_lo);
        *p ^= 0x10;
        std::printf("# flipped a byte of %s msg %" PRIu64 " %s size %u on purpose\n",
                    label_.c_str(), m.id, kOps[m.op].name, m.len);
    }

    void mismatch(const Msg &m, const char *where, const Mismatch &x) {
        const size_t base = m.slot * slot_size_;
        if (x.msg_off >= 0)
            run_.fail(m.op,
                      "%s msg %" PRIu64 " %s size %u: %s byte at message offset %" PRId64
                      " (slot offset %zu): expected 0x%02x got 0x%02x",
                      label_.c_str(), m.id, kOps[m.op].name, m.len, where, x.msg_off, x.off - base,
                      x.want, x.got);
        else
            run_.fail(m.op,
                      "%s msg %" PRIu64 " %s size %u: %s guard byte at slot offset %zu "
                      "changed: expected 0x%02x got 0x%02x",
                      label_.c_str(), m.id, kOps[m.op].name, m.len, where, x.off - base, x.want,
                      x.got);
    }

    void verify(const Msg &m) {
        const uint8_t *lbuf = req_buf_->get();
        const uint8_t *rbuf = resp_buf_->get();
        const OpInfo &info = kOps[m.op];
        std::optional<Mismatch> x;
        if (info.atomic) {
            uint64_t got;
            std::memcpy(&got, lbuf + m.local[0].off, 8);
            if (got != m.orig)
                run_.fail(m.op,
                          "%s msg %" PRIu64 " %s word %u: returned original value expected "
                          "0x%016" PRIx64 " got 0x%016" PRIx64,
                          label_.c_str(), m.id, info.name, m.word, m.orig, got);
            const size_t off = m.local[0].off;
            if ((x = check_pattern(lbuf, m.local_lo, off, {}, 0, 0)) ||
                (x = check_pattern(lbuf, off + 8, m.local_hi, {}, 0, 0)))
                mismatch(m, "requester result buffer", *x);
            if ((x = check_pattern(rbuf, m.remote_lo, m.remote_hi, {}, 0, 0)))
                mismatch(m, "responder buffer", *x);
            return;
        }
        if (m.op == kRead) {
            if ((x = check_pattern(lbuf, m.local_lo, m.local_hi, m.local, m.len, m.key)))
                mismatch(m, "requester (read target)", *x);
            if ((x = check_pattern(rbuf, m.remote_lo, m.remote_hi, m.remote, m.len, m.key)))
                mismatch(m, "responder (read source, must be unchanged)", *x);
            return;
        }
        if ((x = check_pattern(rbuf, m.remote_lo, m.remote_hi, m.remote, m.len, m.key)))
            mismatch(m, "responder", *x);
        if ((x = check_pattern(lbuf, m.local_lo, m.local_hi, m.local, m.inlined ? 0 : m.len,
                               m.key)))
            mismatch(m, "requester source (must be unchanged)", *x);
    }

    Run &run_;
    End &req_, &resp_;
    int index_;
    Rng rng_;
    std::string label_;
    size_t slot_size_ = 0;
    std::unique_ptr<Mapping> req_buf_, resp_buf_, words_;
    Mr req_mr_, resp_mr_, words_mr_;
    std::vector<uint64_t> model_;
    std::deque<Msg> inflight_;
    std::deque<std::pair<Op, uint32_t>> plan_;
    uint64_t next_id_ = 0, rounds_ = 0;
    bool more_ = true;
};

bool parse_ops(const char *list, bool *ops) {
    std::string s(list);
    size_t pos = 0;
    while (pos <= s.size()) {
        size_t comma = s.find(',', pos);
        std::string w = s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        pos = comma == std::string::npos ? s.size() + 1 : comma + 1;
        struct Name {
            const char *name;
            std::vector<Op> ops;
        };
        static const Name names[] = {
            {"all", {kSend, kSendImm, kWrite, kWriteImm, kRead, kCmpSwap, kFetchAdd}},
            {"send", {kSend, kSendImm}},
            {"write", {kWrite, kWriteImm}},
            {"read", {kRead}},
            {"atomic", {kCmpSwap, kFetchAdd}},
            {"send_only", {kSend}},
            {"send_imm", {kSendImm}},
            {"write_only", {kWrite}},
            {"write_imm", {kWriteImm}},
            {"cmp_swap", {kCmpSwap}},
            {"fetch_add", {kFetchAdd}},
        };
        bool known = false;
        for (const Name &n : names)
            if (w == n.name) {
                for (Op o : n.ops)
                    ops[o] = true;
                known = true;
            }
        if (!known) {
            std::fprintf(stderr, "mr_verify: unknown op '%s'\n", w.c_str());
            return false;
        }
    }
    return true;
}

[[noreturn]] void usage() {
    std::fprintf(stderr,
                 "usage: mr_verify --dev-a DEV --dev-b DEV [--gid-a N] [--gid-b N] [--ops LIST]\n"
                 "       [--rounds N | --seconds S] [--seed N] [--window N] [--max-size B]\n"
                 "       [--random N] [--timeout S] [--linger S] [--flip-byte ID]\n");
    std::exit(2);
}

Options parse(int argc, char **argv) {
    Options o;
    bool ops_given = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (i + 1 >= argc)
            usage();
        const char *v = argv[++i];
        if (a == "--dev-a")
            o.dev[0] = v;
        else if (a == "--dev-b")
            o.dev[1] = v;
        else if (a == "--gid-a")
            o.gid[0] = std::atoi(v);
        else if (a == "--gid-b")
            o.gid[1] = std::atoi(v);
        else if (a == "--ops")
            ops_given = parse_ops(v, o.ops) ? true : (usage(), false);
        else if (a == "--rounds")
            o.rounds = std::strtoull(v, nullptr, 0);
        else if (a == "--seconds")
            o.seconds = std::atof(v);
        else if (a == "--seed")
            o.seed = std::strtoull(v, nullptr, 0);
        else if (a == "--window")
            o.window = static_cast<unsigned>(std::max(1, std::atoi(v)));
        else if (a == "--max-size")
            o.max_size = static_cast<uint32_t>(std::strtoul(v, nullptr, 0));
        else if (a == "--random")
            o.random_sizes = static_cast<unsigned>(std::atoi(v));
        else if (a == "--timeout")
            o.timeout = std::atof(v);
        else if (a == "--linger")
            o.linger = std::atof(v);
        else if (a == "--flip-byte")
            o.flip = std::atoll(v);
        else
            usage();
    }
    if (!o.dev[0] || !o.dev[1] || o.max_size < 16)
        usage();
    if (!ops_given)
        parse_ops("all", o.ops);
    return o;
}

bool open_end(End &e, const Options &o, int i) {
    e.name = o.dev[i];
    e.ctx = open_device(e.name);
    if (!e.ctx) {
        std::printf("# cannot open RDMA device %s\n", e.name);
        return false;
    }
    if (ibv_query_device(e.ctx.get(), &e.dev) || ibv_query_port(e.ctx.get(), 1, &e.port)) {
        std::printf("# %s: query_device/query_port: %s\n", e.name, std::strerror(errno));
        return false;
    }
    e.gid_index = o.gid[i] >= 0 ? o.gid[i] : find_ipv4_gid(e.ctx.get(), e.port, &e.gid);
    if (e.gid_index < 0 || ibv_query_gid(e.ctx.get(), 1, e.gid_index, &e.gid)) {
        std::printf("# %s: no usable GID (index %d)\n", e.name, e.gid_index);
        return false;
    }
    const int depth = static_cast<int>(o.window) * 2 + 8;
    e.pd.reset(ibv_alloc_pd(e.ctx.get()));
    if (e.pd) {
        e.scq.reset(ibv_create_cq(e.ctx.get(), depth, nullptr, nullptr, 0));
        e.rcq.reset(ibv_create_cq(e.ctx.get(), depth, nullptr, nullptr, 0));
    }
    if (!e.scq || !e.rcq) {
        std::printf("# %s: alloc_pd/create_cq: %s\n", e.name, std::strerror(errno));
        return false;
    }
    ibv_qp_init_attr init{};
    init.send_cq = e.scq.get();
    init.recv_cq = e.rcq.get();
    init.cap.max_send_wr = o.window;
    init.cap.max_recv_wr = o.window;
    init.cap.max_send_sge = kMaxSges;
    init.cap.max_recv_sge = kMaxSges;
    init.cap.max_inline_data = 64;
    init.qp_type = IBV_QPT_RC;
    init.sq_sig_all = 1;
    e.qp.reset(ibv_create_qp(e.pd.get(), &init));
    if (!e.qp) { // a device without inline data
        init.cap.max_inline_data = 0;
        e.qp.reset(ibv_create_qp(e.pd.get(), &init));
    }
    if (!e.qp) {
        std::printf("# %s: create_qp: %s\n", e.name, std::strerror(errno));
        return false;
    }
    e.max_inline = init.cap.max_inline_data;
    e.qp_cap_send_sge = init.cap.max_send_sge;
    return true;
}

bool connect(End &self, const End &peer, ibv_mtu mtu, const RcParams &params) {
    const RcPath path = {.dest_qpn = peer.qp->qp_num,
                         .dgid = peer.gid,
                         .sgid_index = self.gid_index,
                         .mtu = mtu,
                         .sq_psn = self.psn,
                         .rq_psn = peer.psn};
    for (ibv_qp_state step : kRcSteps)
        if (int rc = modify_rc(self.qp.get(), step, path, params)) {
            std::printf("# %s: to %s: %s\n", self.name,
                        step == IBV_QPS_INIT  ? "INIT"
                        : step == IBV_QPS_RTR ? "RTR"
                                              : "RTS",
                        std::strerror(rc));
            return false;
        }
    return true;
}

bool in_rts(const End &e) {
    ibv_qp_attr a{};
    ibv_qp_init_attr init{};
    if (ibv_query_qp(e.qp.get(), &a, IBV_QP_STATE, &init))
        return false;
    if (a.qp_state != IBV_QPS_RTS)
        std::printf("# %s: QP %u is in state %d, want RTS (%d)\n", e.name, e.qp->qp_num, a.qp_state,
                    IBV_QPS_RTS);
    return a.qp_state == IBV_QPS_RTS;
}

double since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

} // namespace

int main(int argc, char **argv) {
    Run run;
    run.opt = parse(argc, argv);
    const Options &o = run.opt;
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    Ktap t(kCases);

    std::array<End, 2> ends;
    bool atomics = o.ops[kCmpSwap] || o.ops[kFetchAdd];
    int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    if (atomics)
        access |= IBV_ACCESS_REMOTE_ATOMIC;
    bool up = open_end(ends[0], o, 0) && open_end(ends[1], o, 1);
    std::optional<Stream> streams[2];
    if (up) {
        if (atomics && (ends[0].dev.atomic_cap == IBV_ATOMIC_NONE ||
                        ends[1].dev.atomic_cap == IBV_ATOMIC_NONE))
            std::printf("# note: a device reports atomic_cap NONE; trying atomics anyway\n");
        const ibv_mtu mtu = std::min(ends[0].port.active_mtu, ends[1].port.active_mtu);
        run.mtu = 128u << mtu;
        const uint8_t rd_atomic = static_cast<uint8_t>(
            std::min({16, ends[0].dev.max_qp_rd_atom, ends[1].dev.max_qp_rd_atom,
                      ends[0].dev.max_qp_init_rd_atom, ends[1].dev.max_qp_init_rd_atom}));
        Rng psn(mix(o.seed));
        for (End &e : ends)
            e.psn = static_cast<uint32_t>(psn.next()) & 0xffffff;
        const RcParams params = {.access = access,
                                 .max_rd_atomic = rd_atomic,
                                 .max_dest_rd_atomic = rd_atomic,
                                 .min_rnr_timer = 12};
        up = connect(ends[0], ends[1], mtu, params) && connect(ends[1], ends[0], mtu, params);
        std::printf("# %s gid %d qp %u <-> %s gid %d qp %u, mtu %u, rd_atomic %u, inline %u\n",
                    ends[0].name, ends[0].gid_index, ends[0].qp->qp_num, ends[1].name,
                    ends[1].gid_index, ends[1].qp->qp_num, run.mtu, rd_atomic, ends[0].max_inline);
        for (uint32_t s :
             {0u, 1u, run.mtu - 1, run.mtu, run.mtu + 1, 3 * run.mtu + 7, 65536u, 1u << 20})
            if (s <= o.max_size)
                run.sizes.push_back(s);
        streams[0].emplace(run, ends[0], ends[1], 0);
        streams[1].emplace(run, ends[1], ends[0], 1);
        up = up && streams[0]->setup(access) && streams[1]->setup(access);
    }
    if (!t.check(up, std::string("connect RC QPs ") + o.dev[0] + " <-> " + o.dev[1] +
                         " and register buffers")) {
        for (int i = 1; i < kCases; i++)
            t.check(false, "not run: no connection");
        return 1;
    }

    // The run: post what the windows allow, poll the four CQs, retire.
    const auto start = Clock::now();
    const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(o.seconds));
    auto last_progress = Clock::now();
    struct Source {
        ibv_cq *cq;
        Stream *stream;
        bool send;
    };
    const Source sources[] = {
        {ends[0].scq.get(), &*streams[0], true},
        {ends[1].rcq.get(), &*streams[0], false},
        {ends[1].scq.get(), &*streams[1], true},
        {ends[0].rcq.get(), &*streams[1], false},
    };
    while (!run.aborted && (streams[0]->active() || streams[1]->active())) {
        for (auto &s : streams)
            if (!s->post(deadline))
                run.aborted = true;
        bool progress = false;
        for (const Source &src : sources) {
            ibv_wc wc[16];
            const int n = ibv_poll_cq(src.cq, 16, wc);
            if (n < 0) {
                run.fail(kSend, "poll_cq: %d", n);
                run.aborted = true;
            }
            for (int i = 0; i < n; i++)
                if (!(src.send ? src.stream->on_send_wc(wc[i]) : src.stream->on_recv_wc(wc[i])))
                    run.aborted = true;
            progress |= n > 0;
        }
        for (auto &s : streams)
            s->retire();
        if (progress) {
            last_progress = Clock::now();
        } else if (since(last_progress) > o.timeout) {
            std::printf("# no completion for %.0f s\n", o.timeout);
            for (auto &s : streams)
                s->report_missing();
            run.missing = true;
            run.aborted = true;
        } else {
            usleep(50);
        }
    }
    const double secs = since(start);
    if (run.aborted)
        for (auto &s : streams)
            s->stop_planning();

    uint64_t msgs = 0, bytes = 0;
    std::string per_op;
    for (unsigned i = 0; i < kNumOps; i++) {
        msgs += run.fam[i].msgs;
        bytes += run.fam[i].bytes;
        per_op += std::string(" ") + kOps[i].name + " " + std::to_string(run.fam[i].msgs);
    }
    std::printf("# summary: %" PRIu64 " messages, %" PRIu64 " bytes in %.1f s, %.2f MB/s, "
                "%.0f msg/s;%s; %s %" PRIu64 ", %s %" PRIu64 "%s\n",
                msgs, bytes, secs, secs > 0 ? bytes / secs / 1e6 : 0.0,
                secs > 0 ? msgs / secs : 0.0, per_op.c_str(), streams[0]->label().c_str(),
                streams[0]->messages(), streams[1]->label().c_str(), streams[1]->messages(),
                run.aborted ? " (aborted)" : "");

    for (unsigned i = 0; i < kNumOps; i++) {
        const Family &f = run.fam[i];
        std::string desc = std::string(kOps[i].name) + ": every byte and completion right";
        if (!o.ops[i]) {
            t.check(true, desc + " # SKIP not selected");
            continue;
        }
        t.check(f.errors == 0 && f.msgs > 0,
                desc + " (" + std::to_string(f.msgs) + " messages, " + std::to_string(f.bytes) +
                    " bytes)",
                "%" PRIu64 " errors, %" PRIu64 " messages", f.errors, f.msgs);
    }

    bool words_ok = true, used = false, u;
    for (auto &s : streams) {
        words_ok = s->final_words_ok(&u) && words_ok;
        used |= u;
    }
    if (atomics)
        t.check(words_ok && used, "atomic words: final remote memory matches the model");
    else
        t.check(words_ok, "atomic words untouched # SKIP no atomics selected");
    t.check(!run.missing, "no completion missing", "timeout after %.0f s", o.timeout);

    // Anything that still arrives is a doubled (or stray) completion.
    int extra = 0;
    const auto linger = Clock::now();
    while (since(linger) < o.linger) {
        for (const Source &src : sources) {
            ibv_wc wc;
            while (ibv_poll_cq(src.cq, 1, &wc) > 0)
                if (extra++ < 5)
                    std::printf("# extra completion on %s: wr_id %" PRIu64
                                " status %s opcode %d byte_len %u\n",
                                src.stream->label().c_str(), wc.wr_id, ibv_wc_status_str(wc.status),
                                wc.opcode, wc.byte_len);
        }
        usleep(1000);
    }
    t.check(extra == 0 || run.aborted,
            "no extra completion in " + std::to_string(o.linger) + " s after the run", "%d extra",
            extra);
    bool idle = !run.aborted;
    if (idle)
        for (auto &s : streams)
            idle = s->idle_memory_ok() && idle;
    t.check(idle, "all memory outside messages in flight is still guard");
    const bool rts = in_rts(ends[0]) & in_rts(ends[1]);
    t.check(rts, "both QPs still in RTS");
    return t.passed() ? 0 : 1;
}
