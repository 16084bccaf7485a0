// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// libFuzzer entry point (clang -fsanitize=fuzzer): the body is fuzz_cc.c.
#include <cstddef>
#include <cstdint>

#include "fuzz_cc.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (mr_fuzz_cc(data, size))
		__builtin_trap();
	return 0;
}
