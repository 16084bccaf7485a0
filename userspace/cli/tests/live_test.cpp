// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The socket, the session and the error reading against the host's real
// kernel, through nlctrl (every kernel has it; metaroce itself runs only in
// the guest, where the selftests cover it).
#include "cli.h"
#include "errors.h"
#include "parse.h"
#include "session.h"

#include <cerrno>
#include <gtest/gtest.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <optional>
#include <sstream>
#include <system_error>

namespace metaroce::session {
namespace {

nl::Bytes ctrl_get(uint32_t seq, bool bad_id) {
    nl::Builder b(GENL_ID_CTRL, NLM_F_REQUEST | NLM_F_ACK, seq, CTRL_CMD_GETFAMILY, 1);
    if (bad_id)
        b.u8(CTRL_ATTR_FAMILY_ID, 16); // a u16 attribute of one byte
    else
        b.str(CTRL_ATTR_FAMILY_NAME, "nlctrl");
    return b.finish();
}

// Sandboxes may forbid netlink sockets: then there is nothing to test.
#define OPEN_OR_SKIP(sock)                                                                         \
    std::optional<transport::Socket> sock;                                                         \
    try {                                                                                          \
        sock.emplace();                                                                            \
    } catch (const std::system_error &e) {                                                         \
        GTEST_SKIP() << e.what();                                                                  \
    }

TEST(Live, NlctrlAnswersThroughTheSocket) {
    OPEN_OR_SKIP(sock_);
    transport::Socket &sock = *sock_;
    EXPECT_NE(sock.portid(), 0u);
    Session s(sock, 100);
    Reply r = s.call(ctrl_get(s.next_seq(), false));
    ASSERT_EQ(r.messages.size(), 1u);
    model::Family f = parse::family(r.messages[0]);
    EXPECT_EQ(f.id, GENL_ID_CTRL);
    EXPECT_GE(f.version, 1u);
    EXPECT_FALSE(f.events_group); // nlctrl's one group is "notify"
}

TEST(Live, ARefusalComesWithItsExtendedAck) {
    OPEN_OR_SKIP(sock_);
    transport::Socket &sock = *sock_;
    Session s(sock, 200);
    nl::Bytes req = ctrl_get(s.next_seq(), true);
    try {
        s.call(req);
        FAIL() << "the kernel took a one-byte u16";
    } catch (const errors::KernelError &e) {
        EXPECT_TRUE(e.error == EINVAL || e.error == ERANGE) << e.error;
        ASSERT_TRUE(e.offset);
        EXPECT_EQ(*e.offset, 20u); // the attribute after nlmsghdr and genlmsghdr
        EXPECT_TRUE(e.message);    // 6.1: "Attribute failed policy validation"
    }
}

TEST(Live, TheModuleIsNotLoadedOnTheHost) {
    std::optional<transport::Socket> sock;
    std::ostringstream out, err;
    int code = cli::run(
        {"dev", "show"},
        [&]() -> transport::Transport & {
            sock.emplace();
            return *sock;
        },
        300, out, err, "/nonexistent/metaroce");
    if (code == 0)
        GTEST_SKIP() << "metaroce is loaded on this host";
    EXPECT_EQ(code, 1);
    EXPECT_EQ(err.str(), "Error: the metaroce kernel module is not loaded: modprobe metaroce\n");
}

} // namespace
} // namespace metaroce::session
