// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "testdata.h"

#include "cli.h"

#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <system_error>

namespace metaroce::testdata {

std::vector<nl::Bytes> load(const std::string &name) {
    std::ifstream f(std::string(METAROCE_CLI_TEST_DATA) + "/" + name);
    if (!f)
        throw std::runtime_error("no test data " + name);
    std::vector<nl::Bytes> out(1);
    std::string line;
    while (std::getline(f, line)) {
        if (line == "---") {
            out.emplace_back();
            continue;
        }
        line = line.substr(0, line.find('#'));
        std::istringstream words(line);
        std::string w;
        while (words >> w) {
            if (w.size() % 2)
                throw std::runtime_error(name + ": odd hex word " + w);
            for (size_t i = 0; i < w.size(); i += 2)
                out.back().push_back(static_cast<uint8_t>(std::stoul(w.substr(i, 2), nullptr, 16)));
        }
    }
    return out;
}

nl::Bytes load_one(const std::string &name) {
    auto d = load(name);
    if (d.size() != 1)
        throw std::runtime_error(name + " holds " + std::to_string(d.size()) + " datagrams");
    return d[0];
}

std::string hex(std::span<const uint8_t> b) {
    static const char digits[] = "0123456789abcdef";
    std::string s;
    for (size_t i = 0; i < b.size(); i++) {
        if (i && i % 4 == 0)
            s += ' ';
        s += digits[b[i] >> 4];
        s += digits[b[i] & 15];
    }
    return s;
}

FakeKernel &FakeKernel::expect(const std::string &request, const std::string &answer) {
    return expect_bytes(load_one(request), load(answer));
}

FakeKernel &FakeKernel::expect_bytes(nl::Bytes request, std::vector<nl::Bytes> answer) {
    exchanges_.push_back({std::move(request), std::move(answer)});
    return *this;
}

FakeKernel &FakeKernel::family(const std::string &answer) {
    return expect("req-ctrl-getfamily.hex", answer);
}

FakeKernel &FakeKernel::stream(std::vector<nl::Bytes> datagrams) {
    for (auto &d : datagrams)
        stream_.push_back(std::move(d));
    return *this;
}

FakeKernel &FakeKernel::fail_recv_once(int err) {
    fail_errno_ = err;
    return *this;
}

void FakeKernel::send(std::span<const uint8_t> msg) {
    sent++;
    if (exchanges_.empty()) {
        ADD_FAILURE() << "unexpected request " << hex(msg);
        throw std::runtime_error("unexpected request");
    }
    Exchange x = std::move(exchanges_.front());
    exchanges_.pop_front();
    if (!std::equal(msg.begin(), msg.end(), x.request.begin(), x.request.end())) {
        ADD_FAILURE() << "request\n  sent     " << hex(msg) << "\n  expected " << hex(x.request);
        throw std::runtime_error("wrong request");
    }
    for (auto &d : x.answer)
        queue_.push_back(std::move(d));
}

nl::Bytes FakeKernel::recv() {
    if (!queue_.empty()) {
        nl::Bytes d = std::move(queue_.front());
        queue_.pop_front();
        return d;
    }
    if (fail_errno_) {
        int e = fail_errno_;
        fail_errno_ = 0;
        throw std::system_error(e, std::generic_category(), "netlink receive");
    }
    if (!stream_.empty()) {
        nl::Bytes d = std::move(stream_.front());
        stream_.pop_front();
        return d;
    }
    return {};
}

Result run(FakeKernel &kernel, const std::vector<std::string> &args,
           const std::string &module_dir) {
    std::ostringstream out, err;
    int code = cli::run(
        args, [&]() -> transport::Transport & { return kernel; }, kFirstSeq, out, err, module_dir);
    return {code, out.str(), err.str()};
}

} // namespace metaroce::testdata
