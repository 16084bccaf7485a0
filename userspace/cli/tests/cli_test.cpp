// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// `metaroce` end to end against recorded kernel replies: the requests it
// sends (checked byte for byte by the fake kernel), what it prints, and
// every error path.
#include "json_value.h"
#include "testdata.h"

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <unistd.h>

namespace metaroce::testdata {
namespace {

using testjson::parse;

// --- devices -----------------------------------------------------------

const char kDevText[] =
    "3: mrc0: netdev veth0 udp-port 4792 paths 16 fail-after 3 qps 4 ingress-rate auto (10Gbit)\n"
    "    cc on cc-ecn on cc-delay on cc-loss on cc-gain 4 cc-ai 1 target-delay 50us loss-burst 8\n"
    "    init-path-window 16 init-conn-window 64 max-path-window 256 max-conn-window 4096 "
    "min-window 0.25\n";

TEST(DevShow, DumpsEveryDevice) {
    FakeKernel k;
    k.family().expect("req-dev-dump.hex", "dev-dump.hex");
    auto r = run(k, {"dev", "show"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out, std::string(kDevText) +
                         "4: mrc1: netdev eth1 udp-port 4792 paths 4 qps 0 ingress-rate 2.5Gbit\n"
                         "    cc off\n");
    EXPECT_EQ(k.pending(), 0u);
}

TEST(DevShow, OneDeviceIsAGet) {
    FakeKernel k;
    k.family().expect("req-dev-get.hex", "dev-get.hex");
    auto r = run(k, {"dev", "show", "mrc0"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, kDevText);
}

TEST(DevShow, AbbreviationsAndTheDefaultCommand) {
    for (auto args :
         std::vector<std::vector<std::string>>{{"d"}, {"dev"}, {"de", "sh"}, {"dev", "list"}}) {
        FakeKernel k;
        k.family().expect("req-dev-dump.hex", "dev-dump.hex");
        auto r = run(k, args);
        EXPECT_EQ(r.code, 0) << args[0] << ": " << r.err;
        EXPECT_EQ(r.out.substr(0, 9), "3: mrc0: ");
    }
}

TEST(DevShow, StatisticsWithDashS) {
    FakeKernel k;
    k.family().expect("req-dev-get.hex", "dev-get.hex");
    auto r = run(k, {"-s", "dev", "show", "mrc0"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, std::string(kDevText) +
                         // 100 columns at most
                         "    rx_packets 1200 rx_bytes 1234567 tx_packets 1100 tx_bytes 1200000 "
                         "retransmits 7 path_failovers 1\n");
}

TEST(DevShow, Json) {
    FakeKernel k;
    k.family().expect("req-dev-dump.hex", "dev-dump.hex");
    auto r = run(k, {"-j", "dev", "show"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out,
              "[{\"ifindex\":3,\"ifname\":\"mrc0\",\"netdev\":\"veth0\",\"netdev_ifindex\":5,"
              "\"udp_port\":4792,\"paths\":16,\"fail_after\":3,\"qps\":4,\"keys\":0,"
              "\"ingress_kbps\":0,\"ingress_active_kbps\":10000000,\"cc\":{\"enabled\":true,"
              "\"ecn\":true,\"delay\":true,\"loss\":true,\"gain_shift\":4,\"ai\":1,"
              "\"init_path_window\":16,\"init_conn_window\":64,\"max_path_window\":256,"
              "\"max_conn_window\":4096,\"min_window\":0.25,\"target_delay_ns\":50000,"
              "\"loss_burst\":8}},"
              "{\"ifindex\":4,\"ifname\":\"mrc1\",\"netdev\":\"eth1\",\"netdev_ifindex\":7,"
              "\"udp_port\":4792,\"paths\":4,\"qps\":0,\"keys\":0,\"ingress_kbps\":2500000,"
              "\"ingress_active_kbps\":2500000,\"cc\":{\"enabled\":false}}]\n");
    auto v = parse(r.out);
    EXPECT_EQ(v[0]["cc"]["min_window"].number(), "0.25");
    EXPECT_FALSE(v[1].has("fail_after"));
}

TEST(DevShow, PrettyJsonWithStatistics) {
    FakeKernel k;
    k.family().expect("req-dev-get.hex", "dev-get.hex");
    auto r = run(k, {"-j", "-p", "-s", "dev", "show", "mrc0"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out.substr(0, 30), "[\n    {\n        \"ifindex\": 3,\n");
    auto v = parse(r.out);
    EXPECT_EQ(v[0]["stats"]["rx_bytes"].number(), "1234567");
    EXPECT_EQ(v[0]["stats"].size(), 6u);
}

TEST(DevShow, AnInterruptedDumpWarns) {
    FakeKernel k;
    k.family().expect("req-dev-dump.hex", "dev-dump-intr.hex");
    auto r = run(k, {"dev", "show"});
    EXPECT_EQ(r.code, 0);
    EXPECT_EQ(r.out.substr(0, 9), "4: mrc1: ");
    EXPECT_EQ(r.err, "Warning: the kernel's dump was interrupted by a change and may be "
                     "inconsistent; run it again.\n");
}

// --- dev set -----------------------------------------------------------

TEST(DevSet, SendsTheSettingsAndPrintsNothing) {
    FakeKernel k;
    k.family().expect("req-dev-set-paths.hex", "dev-set-ack.hex");
    auto r = run(k, {"dev", "set", "mrc0", "paths", "48"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(k.pending(), 0u);
}

TEST(DevSet, CcOffAndIngressAuto) {
    FakeKernel k;
    k.family().expect("req-dev-set-cc-off.hex", "dev-set-ack.hex");
    // Ack recorded for another request: the fake checks the request, the
    // tool only the sequence number.
    auto r = run(k, {"dev", "set", "mrc0", "ingress-rate", "auto", "cc", "off"});
    EXPECT_EQ(r.code, 0) << r.err;
}

TEST(DevSet, PermissionDenied) {
    FakeKernel k;
    k.family().expect("req-dev-set-paths.hex", "err-eperm.hex");
    auto r = run(k, {"dev", "set", "mrc0", "paths", "48"});
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err,
              "Error: permission denied: dev set mrc0 needs CAP_NET_ADMIN (run it as root)\n");
}

TEST(DevSet, KernelRangeNamesTheSettingAndItsRange) {
    // The tool allows 64 paths, this (imagined) module 32.
    FakeKernel k;
    k.family().expect("req-dev-set-paths.hex", "err-range.hex");
    auto r = run(k, {"dev", "set", "mrc0", "paths", "48"});
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "Error: paths 48 is out of range 1-32 for this kernel module\n");
}

TEST(DevSet, UncappedErrorsAreReadToo) {
    FakeKernel k;
    k.family().expect("req-dev-set-paths.hex", "err-range-uncapped.hex");
    auto r = run(k, {"dev", "set", "mrc0", "paths", "48"});
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "Error: dev set mrc0: paths 48: integer out of range\n");
}

TEST(DevSet, BusyPortCarriesTheKernelsMessage) {
    FakeKernel k;
    k.family().expect("req-dev-set-port.hex", "err-ebusy.hex");
    auto r = run(k, {"dev", "set", "mrc0", "udp-port", "4793"});
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "Error: dev set mrc0: udp-port 4793: the UDP port cannot change while the "
                     "device has QPs\n");
}

TEST(DevSet, InconsistentValues) {
    FakeKernel k;
    k.family().expect("req-dev-set-cc-off.hex", "err-einval-cc.hex");
    auto r = run(k, {"dev", "set", "mrc0", "cc", "off", "ingress-rate", "auto"});
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "Error: dev set mrc0: dev/cc: min-window is above init-path-window\n");
}

TEST(DevSet, NotSupported) {
    FakeKernel k;
    k.family().expect("req-dev-set-cc-off.hex", "err-eopnotsupp.hex");
    auto r = run(k, {"dev", "set", "mrc0", "cc", "off", "ingress-rate", "auto"});
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "Error: dev set mrc0: congestion control is not built in (Operation not "
                     "supported)\n");
}

TEST(DevSet, UsageErrorsSendNothing) {
    struct Case {
        std::vector<std::string> args;
        std::string err;
    };
    const std::vector<Case> cases = {
        {{"dev", "set"}, "dev set needs a device"},
        {{"dev", "set", "mrc0"}, "dev set mrc0: nothing to set"},
        {{"dev", "set", "mrc0", "paths"}, "paths needs a value"},
        {{"dev", "set", "mrc0", "paths", "70"}, "paths 70 is out of range 1-64"},
        {{"dev", "set", "mrc0", "paths", "0"}, "paths 0 is out of range 1-64"},
        {{"dev", "set", "mrc0", "paths", "8", "paths", "9"}, "paths is given twice"},
        {{"dev", "set", "mrc0", "udp-port", "65536"}, "udp-port 65536 is out of range 1-65535"},
        {{"dev", "set", "mrc0", "cc", "maybe"}, "cc takes on or off, not \"maybe\""},
        {{"dev", "set", "mrc0", "cc-gain", "11"}, "cc-gain 11 is out of range 1-10"},
        {{"dev", "set", "mrc0", "max-path-window", "257"},
         "max-path-window 257 is out of range 1-256"},
        {{"dev", "set", "mrc0", "min-window", "0"}, "min-window 0 is out of range 0.0009765625-16"},
        {{"dev", "set", "mrc0", "target-delay", "2s"}, "target-delay 2s is out of range 1us-1s"},
        {{"dev", "set", "mrc0", "target-delay", "50"},
         "target-delay \"50\" needs a unit: ns, us, ms or s"},
        {{"dev", "set", "mrc0", "ingress-rate", "10G"},
         "ingress-rate \"10G\" has an unknown unit; use bit, Kbit, Mbit, Gbit or Tbit"},
        {{"dev", "set", "mrc0", "speed", "1"},
         "unknown setting \"speed\"; see \"metaroce dev help\""},
        {{"dev", "set", std::string(64, 'm'), "paths", "1"},
         "device name \"" + std::string(64, 'm') + "\" is longer than 63 characters"},
        {{"dev", "s"}, "\"s\" is ambiguous; which dev command?"},
        {{"dev", "frob"}, "unknown dev command \"frob\""},
        {{"dev", "show", "mrc0", "extra"}, "unexpected \"extra\" after the device"},
        {{"link"}, "unknown object \"link\""},
        {{"-x", "dev"}, "unknown option \"-x\""},
        {{}, "no object given"},
        {{"qp", "show", "qpn", "0"}, "qpn 0 is out of range 1-16777215"},
        {{"qp", "show", "qpn", "1", "qpn", "2"}, "qpn is given twice"},
        {{"qp", "show", "lqpn", "1"}, "unknown qp show argument \"lqpn\""},
        {{"path", "show", "dev", "mrc0"}, "path show needs dev DEV and qpn N"},
        {{"path", "show", "dev", "mrc0", "qpn", "17", "path", "64"},
         "path 64 is out of range 0-63"},
        {{"monitor", "all"}, "monitor takes no arguments"},
        {{"plane", "add", "dev", "mrp0"}, "plane add needs dev DEV and netdev NETDEV"},
        {{"plane", "del", "netdev", "p0"}, "plane del needs dev DEV and netdev NETDEV"},
        {{"plane", "add", "dev", "mrp0", "netdev", std::string(16, 'p')},
         "netdev name \"" + std::string(16, 'p') + "\" is longer than 15 characters"},
        {{"plane", "show", "netdev", "p0"}, "unknown plane show argument \"netdev\""},
        {{"p", "show"}, "\"p\" is ambiguous; which object?"},
    };
    for (const auto &c : cases) {
        FakeKernel k;
        auto r = run(k, c.args);
        EXPECT_EQ(r.code, 2) << c.err;
        EXPECT_EQ(r.err, "Error: " + c.err + "\nTry \"metaroce help\".\n");
        EXPECT_EQ(r.out, "");
        EXPECT_EQ(k.sent, 0u) << c.err;
    }
}

// --- errors common to every command -------------------------------------

TEST(Errors, ModuleNotLoaded) {
    FakeKernel k;
    k.family("ctrl-enoent.hex");
    auto r = run(k, {"dev", "show"});
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "Error: the metaroce kernel module is not loaded: modprobe metaroce\n");
}

TEST(Errors, ModuleWithoutTheFamily) {
    FakeKernel k;
    k.family("ctrl-enoent.hex");
    auto r = run(k, {"dev", "show"}, METAROCE_CLI_TEST_DATA); // a directory that exists
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "Error: the loaded metaroce kernel module has no netlink interface (it is "
                     "older than this tool): load a newer one\n");
}

TEST(Errors, OtherInterfaceVersion) {
    FakeKernel k;
    k.family("ctrl-family-v2.hex");
    auto r = run(k, {"qp", "show"});
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "Error: the metaroce kernel module speaks version 2 of its netlink "
                     "interface, this metaroce version 1: install the metaroce tool of that "
                     "module\n");
}

TEST(Errors, NoSuchDevice) {
    FakeKernel k;
    k.family().expect("req-dev-get-mrc9.hex", "err-enodev.hex");
    auto r = run(k, {"dev", "show", "mrc9"});
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "Error: no metaroce device \"mrc9\" (no metaroce device of that name in "
                     "this namespace)\n");
}

TEST(Errors, MalformedRepliesAreReportedNotTrusted) {
    struct Case {
        std::string file, err;
    };
    for (const Case &c : std::vector<Case>{
             {"bad-attr-len.hex",
              "malformed reply from the kernel: dev/paths has 2 bytes, a u32 has 4"},
             {"bad-string.hex",
              "malformed reply from the kernel: dev/name is a string without its terminating "
              "NUL"},
             {"bad-truncated.hex",
              "malformed reply from the kernel: a message of length 132 in the 40 bytes left of "
              "a datagram"},
             {"bad-seq.hex",
              "malformed reply from the kernel: sequence number 7 answers request 2"},
         }) {
        FakeKernel k;
        k.family().expect("req-dev-dump.hex", c.file);
        auto r = run(k, {"dev", "show"});
        EXPECT_EQ(r.code, 1) << c.file;
        EXPECT_EQ(r.err, "Error: " + c.err + "\n") << c.file;
        EXPECT_EQ(r.out, "") << c.file;
    }
}

TEST(Errors, DoneAnswersOnlyDumps) {
    FakeKernel k;
    k.family().expect("req-dev-get.hex", "qp-dump-empty.hex");
    auto r = run(k, {"dev", "show", "mrc0"});
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "Error: malformed reply from the kernel: NLMSG_DONE answers a request that "
                     "is not a dump\n");
}

TEST(Errors, AReplyCutShort) {
    FakeKernel k;
    k.family().expect_bytes(load_one("req-dev-dump.hex"), {load("dev-dump.hex")[0]});
    auto r = run(k, {"dev", "show"});
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "Error: the kernel did not finish its reply\n");
}

// --- QPs -----------------------------------------------------------------

const char kQp17[] =
    "dev mrc0 qpn 17 type RC state RTS handshake done local 10.0.0.1 peer 10.0.0.2 rqpn 18 "
    "paths 4 mtu 1024 window 256.5 inflight 37 pacing 12.5Mbit hint 10Gbit alpha 0.063 srtt "
    "45.2us\n";
const char kQp19[] = "dev mrc0 qpn 19 type UC state RTR handshake waiting local fd00::1 peer "
                     "fd00::2 rqpn 20 paths 4 mtu 4096 window 64 inflight 0 pacing off hint "
                     "none alpha 0.000\n";

TEST(QpShow, DumpsEveryQp) {
    FakeKernel k;
    k.family().expect("req-qp-dump.hex", "qp-dump.hex");
    auto r = run(k, {"qp", "show"});
    EXPECT_EQ(r.code, 0) << r.err;
    // The kernel sent the tags too (as to root): they wait for -d.
    EXPECT_EQ(r.out, "dev mrc0 qpn 1 type GSI state RTS\n" + std::string(kQp17) + kQp19 +
                         "dev mrc0 qpn 21 type UD state RTS\n");
}

TEST(QpShow, DetailsShowTheConnectionTags) {
    for (auto opt : {"-d", "--details", "-details"}) {
        FakeKernel k;
        k.family().expect("req-qp-dump.hex", "qp-dump.hex");
        auto r = run(k, {opt, "qp", "show"});
        EXPECT_EQ(r.code, 0) << opt << ": " << r.err;
        EXPECT_EQ(r.out, "dev mrc0 qpn 1 type GSI state RTS\n" + std::string(kQp17) +
                             "    local-tag 0x0123456789abcdef peer-tag 0xfedcba9876543210\n" +
                             kQp19 +
                             "    local-tag 0x00000000deadbeef peer-tag 0x0000000000000000\n"
                             "dev mrc0 qpn 21 type UD state RTS\n")
            << opt;
    }
    // Details come before the counters.
    FakeKernel k;
    k.family().expect("req-qp-get.hex", "qp-get.hex");
    auto r = run(k, {"-d", "-s", "qp", "show", "dev", "mrc0", "qpn", "17"});
    EXPECT_EQ(r.code, 0) << r.err;
    std::string head = std::string(kQp17) +
                       "    local-tag 0x0123456789abcdef peer-tag 0xfedcba9876543210\n"
                       "    tx-packets ";
    EXPECT_EQ(r.out.substr(0, head.size()), head);
}

TEST(QpShow, UnprivilegedCallersGetNoTags) {
    FakeKernel k;
    k.family().expect("req-qp-dump.hex", "qp-dump-unprivileged.hex");
    auto r = run(k, {"-d", "qp", "show"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out, "dev mrc0 qpn 1 type GSI state RTS\n" + std::string(kQp17) + kQp19 +
                         "dev mrc0 qpn 23 type RC state INIT handshake none\n");
    FakeKernel j;
    j.family().expect("req-qp-dump.hex", "qp-dump-unprivileged.hex");
    r = run(j, {"-j", "-d", "qp", "show"});
    EXPECT_EQ(r.code, 0) << r.err;
    auto v = parse(r.out);
    ASSERT_EQ(v.size(), 4u);
    EXPECT_EQ(v[1]["handshake"].str(), "done");
    EXPECT_EQ(v[2]["handshake"].str(), "waiting");
    EXPECT_EQ(v[3]["handshake"].str(), "none");
    for (size_t i = 0; i < v.size(); i++) {
        EXPECT_FALSE(v[i].has("local_tag")) << i;
        EXPECT_FALSE(v[i].has("peer_tag")) << i;
    }
    EXPECT_FALSE(v[0].has("handshake"));
}

TEST(QpShow, HandshakeStatesBeforeRtrAndFromTheFuture) {
    FakeKernel k;
    k.family().expect("req-qp-dump.hex", "qp-dump-handshakes.hex");
    auto r = run(k, {"-d", "qp", "show"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, "dev mrc0 qpn 23 type RC state INIT handshake none\n"
                     "dev mrc0 qpn 25 type RC state RTS handshake 200\n"
                     "    local-tag 0x0123456789abcdef peer-tag 0xfedcba9876543210\n");
}

TEST(QpShow, FiltersGoToTheKernel) {
    FakeKernel k;
    k.family().expect("req-qp-dump-dev.hex", "qp-dump-empty.hex");
    auto r = run(k, {"qp", "show", "dev", "mrc0"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, "");
    FakeKernel n;
    n.family().expect("req-qp-dump-num.hex", "qp-dump-empty.hex");
    r = run(n, {"qp", "show", "qpn", "17"});
    EXPECT_EQ(r.code, 0) << r.err;
    FakeKernel j;
    j.family().expect("req-qp-dump-dev.hex", "qp-dump-empty.hex");
    r = run(j, {"-j", "qp", "show", "dev", "mrc0"});
    EXPECT_EQ(r.out, "[]\n");
}

TEST(QpShow, OneQpWithStatistics) {
    FakeKernel k;
    k.family().expect("req-qp-get.hex", "qp-get.hex");
    auto r = run(k, {"-s", "qp", "show", "dev", "mrc0", "qpn", "17"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, std::string(kQp17) +
                         "    tx-packets 100000 tx-bytes 102400000 rx-packets 50000 rx-bytes "
                         "1600000 retransmits 12\n"
                         "    sack-gaps 9 rto-events 2 tail-probes 3 path-failovers 1 duplicates 4 "
                         "rnr-naks 0 ce-marks 250\n"
                         "    cc-decreases 6 hint-limited 40\n");
}

TEST(QpShow, NoSuchQp) {
    FakeKernel k;
    k.family().expect("req-qp-get-99.hex", "err-enoent-qp.hex");
    auto r = run(k, {"qp", "show", "dev", "mrc0", "qpn", "99"});
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "Error: no QP 99 on mrc0 (no such QP)\n");
}

TEST(QpShow, Json) {
    FakeKernel k;
    k.family().expect("req-qp-dump.hex", "qp-dump.hex");
    auto r = run(k, {"-j", "-s", "qp", "show"});
    EXPECT_EQ(r.code, 0) << r.err;
    auto v = parse(r.out);
    ASSERT_EQ(v.size(), 4u);
    EXPECT_EQ(v[0]["type"].str(), "GSI");
    EXPECT_FALSE(v[0].has("stats"));
    const auto &q = v[1];
    EXPECT_EQ(q["ifname"].str(), "mrc0");
    EXPECT_EQ(q["qpn"].number(), "17");
    EXPECT_EQ(q["local"].str(), "10.0.0.1");
    EXPECT_EQ(q["peer"].str(), "10.0.0.2");
    EXPECT_EQ(q["window"].number(), "256.5");
    EXPECT_EQ(q["alpha"].number(), "0.0625");
    EXPECT_EQ(q["pacing_kbps"].number(), "12500");
    EXPECT_EQ(q["rate_hint_kbps"].number(), "10000000");
    EXPECT_EQ(q["srtt_ns"].number(), "45200");
    EXPECT_EQ(q["stats"]["rto_events"].number(), "2");
    EXPECT_EQ(q["stats"].size(), 14u);
    EXPECT_EQ(v[2]["peer"].str(), "fd00::2");
    EXPECT_EQ(v[2]["alpha"].number(), "0");
    EXPECT_EQ(q["handshake"].str(), "done");
    EXPECT_EQ(v[2]["handshake"].str(), "waiting");
    // Without -d, no tags even when the kernel sent them.
    EXPECT_FALSE(q.has("local_tag"));
    EXPECT_FALSE(q.has("peer_tag"));
}

TEST(QpShow, JsonTagsAreStrings) {
    FakeKernel k;
    k.family().expect("req-qp-dump.hex", "qp-dump.hex");
    auto r = run(k, {"-j", "-d", "qp", "show"});
    EXPECT_EQ(r.code, 0) << r.err;
    auto v = parse(r.out);
    ASSERT_EQ(v.size(), 4u);
    EXPECT_EQ(v[1]["local_tag"].str(), "0x0123456789abcdef");
    EXPECT_EQ(v[1]["peer_tag"].str(), "0xfedcba9876543210");
    EXPECT_EQ(v[2]["local_tag"].str(), "0x00000000deadbeef");
    EXPECT_EQ(v[2]["peer_tag"].str(), "0x0000000000000000");
    EXPECT_FALSE(v[0].has("local_tag"));
    EXPECT_NE(r.out.find("\"handshake\":\"done\",\"local\":\"10.0.0.1\""), std::string::npos)
        << r.out;
}

// --- planes --------------------------------------------------------------

TEST(PlaneShow, AnAlignedTable) {
    FakeKernel k;
    k.family().expect("req-plane-dump.hex", "plane-dump.hex");
    auto r = run(k, {"plane", "show", "dev", "mrp0"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, "DEV   PLANE  NETDEV  STATE      PATHS  TX-PACKETS  RX-PACKETS  DOWNS\n"
                     "mrp0  0      p0      up         8      190326      96012       0\n"
                     "mrp0  1      p1      timed-out  0      48211       24010       1\n");
}

TEST(PlaneShow, StatisticsAddColumns) {
    FakeKernel k;
    k.family().expect("req-plane-dump.hex", "plane-dump.hex");
    auto r = run(k, {"-s", "plane", "show", "dev", "mrp0"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out.substr(r.out.find('\n') + 1),
              "mrp0  0      p0      up         8      190326      96012       0      271000000  "
              "5000000   3         -\n"
              "mrp0  1      p1      timed-out  0      48211       24010       1      68000000   "
              "1000000   0         180ms\n");
}

TEST(PlaneShow, Json) {
    FakeKernel k;
    k.family().expect("req-plane-dump.hex", "plane-dump.hex");
    auto r = run(k, {"-j", "-s", "plane", "show", "dev", "mrp0"});
    EXPECT_EQ(r.code, 0) << r.err;
    auto v = parse(r.out);
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[0]["netdev"].str(), "p0");
    EXPECT_EQ(v[0]["state"].str(), "up");
    EXPECT_EQ(v[0]["paths"].number(), "8");
    EXPECT_FALSE(v[0].has("retry_ns"));
    EXPECT_EQ(v[1]["state"].str(), "timed-out");
    EXPECT_EQ(v[1]["retry_ns"].number(), "180000000");
    EXPECT_EQ(v[1]["downs"].number(), "1");
    EXPECT_EQ(v[1]["stats"]["tx_bytes"].number(), "68000000");
}

TEST(PlaneSet, RefusalsCarryTheKernelsMessage) {
    FakeKernel k;
    k.family().expect("req-plane-add.hex", "err-eexist-plane.hex");
    auto r = run(k, {"plane", "add", "dev", "mrp0", "netdev", "p2"});
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find("the netdev is a plane of the device already"), std::string::npos)
        << r.err;
}

TEST(PlaneSet, DelPrintsNothing) {
    FakeKernel k;
    k.family().expect("req-plane-del.hex", "plane-del-ack.hex");
    auto r = run(k, {"plane", "del", "dev", "mrp0", "netdev", "p2"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, "");
}

// --- paths ---------------------------------------------------------------

TEST(PathShow, AnAlignedTable) {
    FakeKernel k;
    k.family().expect("req-path-dump.hex", "path-dump.hex");
    auto r = run(k, {"path", "show", "dev", "mrc0", "qpn", "17"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out,
              "PATH  SPORT  EPOCH  STATE   SRTT    RTTVAR  RTO   WINDOW  INFLIGHT  ALPHA  RETRANS\n"
              "0     49213  0      active  45.2us  12.1us  10ms  16      12        0.000  3\n"
              "1     50122  1      active  52us    8us     10ms  8.5     8         0.250  5\n"
              "2     61007  2      failed  1.5ms   600us   40ms  1       0         1.000  4\n"
              "3     55555  0      active  -       -       20ms  0.25    0         0.000  0\n");
}

TEST(PathShow, StatisticsAddColumns) {
    FakeKernel k;
    k.family().expect("req-path-dump.hex", "path-dump.hex");
    auto r = run(k, {"-s", "path", "show", "dev", "mrc0", "qpn", "17"});
    EXPECT_EQ(r.code, 0) << r.err;
    auto first_line = r.out.substr(0, r.out.find('\n'));
    EXPECT_EQ(first_line, "PATH  SPORT  EPOCH  STATE   SRTT    RTTVAR  RTO   WINDOW  INFLIGHT  "
                          "ALPHA  RETRANS  BASE-RTT  CONSEC-RTOS  TX-PACKETS  SACK-GAPS  "
                          "RTO-EVENTS  TAIL-PROBES  CE-MARKS");
    EXPECT_NE(r.out.find("\n1     50122  1      active  52us    8us     10ms  8.5     8         "
                         "0.250  5        41us      0            24000       4          1       "
                         "    1            200\n"),
              std::string::npos)
        << r.out;
}

TEST(PathShow, OnePath) {
    FakeKernel k;
    k.family().expect("req-path-dump-id.hex", "qp-dump-empty.hex");
    auto r = run(k, {"path", "show", "dev", "mrc0", "qpn", "17", "path", "2"});
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "Error: no path 2 on QP 17 of mrc0\n");
}

TEST(PathShow, Json) {
    FakeKernel k;
    k.family().expect("req-path-dump.hex", "path-dump.hex");
    auto r = run(k, {"-j", "path", "show", "dev", "mrc0", "qpn", "17"});
    EXPECT_EQ(r.code, 0) << r.err;
    auto v = parse(r.out);
    ASSERT_EQ(v.size(), 4u);
    EXPECT_EQ(v[1]["sport"].number(), "50122");
    EXPECT_EQ(v[1]["window"].number(), "8.5");
    EXPECT_EQ(v[1]["alpha"].number(), "0.25");
    EXPECT_EQ(v[1]["srtt_ns"].number(), "52000");
    EXPECT_EQ(v[1]["retransmits"].number(), "5");
    EXPECT_FALSE(v[1].has("stats"));
    EXPECT_EQ(v[2]["state"].str(), "failed");
    EXPECT_FALSE(v[3].has("srtt_ns"));
}

TEST(PathShow, ErrorsAtTheEndOfTheDumpAndMissingAttributes) {
    FakeKernel k;
    k.family().expect("req-path-dump.hex", "err-done-einval.hex");
    auto r = run(k, {"path", "show", "dev", "mrc0", "qpn", "17"});
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "Error: path show: QP 17 changed during the dump (Invalid argument)\n");
    FakeKernel m;
    m.family().expect("req-path-dump.hex", "err-missing.hex");
    r = run(m, {"path", "show", "dev", "mrc0", "qpn", "17"});
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "Error: path show: the kernel module wants attribute path/qpn, which this "
                     "metaroce did not send\n");
}

// --- monitor -------------------------------------------------------------

TEST(Monitor, PrintsEachEventAsItComes) {
    FakeKernel k;
    k.family().stream(load("events.hex"));
    auto r = run(k, {"monitor"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(k.joined, std::vector<uint32_t>{kEventsGroup});
    EXPECT_EQ(r.out,
              "path-failover dev mrc0 qpn 17 path 2 epoch 1->2 sport 50333->61007 moved 5\n"
              "qp-error dev mrc0 qpn 19 reason retry-exceeded\n"
              "dev-change 4: mrc1: netdev eth1 udp-port 4792 paths 8 qps 0 ingress-rate 2.5Gbit\n"
              "    cc off\n"
              "plane-down dev mrc0 plane 1 netdev p1 reason timeout\n"
              "qp-error dev mrc1 qpn 33 reason 200\n");
}

TEST(Monitor, JsonIsOneDocumentPerLine) {
    FakeKernel k;
    k.family().stream(load("events.hex"));
    auto r = run(k, {"-j", "monitor"});
    EXPECT_EQ(r.code, 0) << r.err;
    std::vector<testjson::Value> docs;
    size_t start = 0, nl;
    while ((nl = r.out.find('\n', start)) != std::string::npos) {
        docs.push_back(parse(r.out.substr(start, nl - start)));
        start = nl + 1;
    }
    ASSERT_EQ(docs.size(), 5u);
    EXPECT_EQ(docs[0]["event"].str(), "path-failover");
    EXPECT_EQ(docs[0]["old_sport"].number(), "50333");
    EXPECT_EQ(docs[0]["moved"].number(), "5");
    EXPECT_EQ(docs[1]["reason"].str(), "retry-exceeded");
    EXPECT_EQ(docs[2]["event"].str(), "dev-change");
    EXPECT_EQ(docs[2]["paths"].number(), "8");
    EXPECT_EQ(docs[3]["plane"].number(), "1");
    EXPECT_EQ(docs[3]["netdev"].str(), "p1");
    EXPECT_EQ(docs[3]["plane_reason"].str(), "timeout");
    EXPECT_EQ(docs[4]["reason"].str(), "200");
}

TEST(Monitor, LostEventsWarnAndGoOn) {
    FakeKernel k;
    k.family().fail_recv_once(ENOBUFS).stream(load("events.hex"));
    auto r = run(k, {"monitor"});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err, "Warning: events were lost (the socket's receive buffer overran)\n");
    EXPECT_EQ(r.out.substr(0, 14), "path-failover ");
}

TEST(Monitor, OtherReceiveErrorsEndIt) {
    FakeKernel k;
    k.family().fail_recv_once(EBADF);
    auto r = run(k, {"monitor"});
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "Error: netlink receive: Bad file descriptor\n");
}

TEST(Monitor, NeedsTheEventsGroup) {
    FakeKernel k;
    k.family("ctrl-family-nogroup.hex");
    auto r = run(k, {"monitor"});
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "Error: the metaroce kernel module has no \"events\" group\n");
}

// --- help ----------------------------------------------------------------

TEST(Help, NeedsNoKernel) {
    FakeKernel k;
    for (auto args : std::vector<std::vector<std::string>>{{"help"},
                                                           {"-h"},
                                                           {"--help"},
                                                           {"dev", "help"},
                                                           {"qp", "help"},
                                                           {"path", "help"},
                                                           {"monitor", "help"},
                                                           {"help", "dev"},
                                                           {"-V"}}) {
        auto r = run(k, args);
        EXPECT_EQ(r.code, 0) << args[0];
        EXPECT_FALSE(r.out.empty());
    }
    EXPECT_EQ(k.sent, 0u);
    auto r = run(k, {"dev", "help"});
    EXPECT_NE(r.out.find("         cc-gain N"), std::string::npos) << r.out;
    EXPECT_EQ(run(k, {"-V"}).out,
              "metaroce (soft-MetaRoCE), netlink family \"metaroce\" version 1\n");
}

// --- JSON checked by another parser ---------------------------------------

TEST(Json, PythonAgrees) {
    if (system("python3 -c '' 2>/dev/null") != 0)
        GTEST_SKIP() << "no python3";
    std::vector<std::string> outputs;
    {
        FakeKernel k;
        k.family().expect("req-dev-dump.hex", "dev-dump.hex");
        outputs.push_back(run(k, {"-j", "-s", "dev", "show"}).out);
    }
    {
        FakeKernel k;
        k.family().expect("req-qp-dump.hex", "qp-dump.hex");
        outputs.push_back(run(k, {"-j", "-p", "-s", "-d", "qp", "show"}).out);
    }
    {
        FakeKernel k;
        k.family().expect("req-path-dump.hex", "path-dump.hex");
        outputs.push_back(run(k, {"-j", "-s", "path", "show", "dev", "mrc0", "qpn", "17"}).out);
    }
    char tmpl[] = "/tmp/metaroce-json-XXXXXX";
    int fd = mkstemp(tmpl);
    ASSERT_GE(fd, 0);
    close(fd);
    for (const auto &o : outputs) {
        {
            std::ofstream f(tmpl);
            f << o;
        }
        std::string cmd = std::string("python3 -m json.tool ") + tmpl + " >/dev/null";
        EXPECT_EQ(system(cmd.c_str()), 0) << o;
    }
    unlink(tmpl);
}

} // namespace
} // namespace metaroce::testdata
