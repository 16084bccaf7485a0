// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Host tests of proto/window.h: the message window over wrapping MSNs.
#include <gtest/gtest.h>

extern "C" {
#include "window.h"
}

TEST(Window, Bounds)
{
	EXPECT_TRUE(mr_window_in(0, 0));
	EXPECT_TRUE(mr_window_in(MR_MSG_WINDOW - 1, 0));
	EXPECT_FALSE(mr_window_in(MR_MSG_WINDOW, 0));
	EXPECT_FALSE(mr_window_in(MR_MSG_WINDOW + 1, 0));
	EXPECT_TRUE(mr_window_in(1000 + MR_MSG_WINDOW - 1, 1000));
	EXPECT_FALSE(mr_window_in(1000 + MR_MSG_WINDOW, 1000));
}

// A message before the base is outside, however close.
TEST(Window, BeforeBase)
{
	EXPECT_FALSE(mr_window_in(999, 1000));
	EXPECT_FALSE(mr_window_in(1000 - MR_MSG_WINDOW, 1000));
	EXPECT_FALSE(mr_window_in(0xffffffffu, 0));
	EXPECT_FALSE(mr_window_in(0x80000000u, 0));
}

// The window spans the wrap of the 32-bit MSN.
TEST(Window, Wraparound)
{
	const uint32_t base = 0xffffffffu - 10;

	EXPECT_TRUE(mr_window_in(base, base));
	EXPECT_TRUE(mr_window_in(0xffffffffu, base));
	EXPECT_TRUE(mr_window_in(0, base));
	EXPECT_TRUE(mr_window_in(base + MR_MSG_WINDOW - 1, base));
	EXPECT_FALSE(mr_window_in(base + MR_MSG_WINDOW, base));
	EXPECT_FALSE(mr_window_in(base - 1, base));
	// Every message of the window, from every base near the wrap.
	for (uint32_t b = 0xffffffffu - MR_MSG_WINDOW; b != MR_MSG_WINDOW; b++)
		for (uint32_t d = 0; d < 2 * MR_MSG_WINDOW; d++)
			EXPECT_EQ(mr_window_in(b + d, b), d < MR_MSG_WINDOW);
}
