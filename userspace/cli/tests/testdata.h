// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Test helpers: the recorded netlink messages of tests/data (written by
// gen_data.py from the YAML spec), a fake kernel that checks each request
// against a recording and answers with another, and a runner of the CLI.
#ifndef METAROCE_CLI_TESTDATA_H
#define METAROCE_CLI_TESTDATA_H

#include "nl.h"
#include "transport.h"

#include <deque>
#include <string>
#include <vector>

namespace metaroce::testdata {

constexpr uint32_t kPortid = 0x1234;
constexpr uint16_t kFamily = 0x1e;
constexpr uint32_t kEventsGroup = 11;
constexpr uint32_t kFirstSeq = 1; // the family lookup; the command is 2

// The datagrams of a recording (separated by "---" lines in the file).
std::vector<nl::Bytes> load(const std::string &name);
// A recording of exactly one datagram.
nl::Bytes load_one(const std::string &name);
std::string hex(std::span<const uint8_t> b);

// Plays the kernel: each send() must be the next expected request (a
// mismatch fails the test and throws); recv() hands out the answers queued
// so far, then an empty datagram (the end).
class FakeKernel : public transport::Transport {
public:
    FakeKernel &expect(const std::string &request, const std::string &answer);
    FakeKernel &expect_bytes(nl::Bytes request, std::vector<nl::Bytes> answer);
    // The usual family lookup, answered with ctrl-family.hex.
    FakeKernel &family(const std::string &answer = "ctrl-family.hex");
    // Datagrams recv() returns once every exchange is done.
    FakeKernel &stream(std::vector<nl::Bytes> datagrams);
    // recv() throws this errno once, before the stream.
    FakeKernel &fail_recv_once(int err);

    void send(std::span<const uint8_t> msg) override;
    nl::Bytes recv() override;
    uint32_t portid() const override { return kPortid; }
    void join_group(uint32_t group) override { joined.push_back(group); }

    size_t pending() const { return exchanges_.size(); }
    std::vector<uint32_t> joined;
    size_t sent = 0;

private:
    struct Exchange {
        nl::Bytes request;
        std::vector<nl::Bytes> answer;
    };
    std::deque<Exchange> exchanges_;
    std::deque<nl::Bytes> queue_;
    std::deque<nl::Bytes> stream_;
    int fail_errno_ = 0;
};

struct Result {
    int code;
    std::string out, err;
};

// metaroce ARGS against @kernel (first sequence number kFirstSeq), with
// the module absent from sysfs unless @module_dir exists.
Result run(FakeKernel &kernel, const std::vector<std::string> &args,
           const std::string &module_dir = "/nonexistent/metaroce");

} // namespace metaroce::testdata

#endif
