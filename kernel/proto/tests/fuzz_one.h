/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* One fuzz input, shared by the libFuzzer target and the GoogleTest loop. */
#ifndef METAROCE_PROTO_TESTS_FUZZ_ONE_H
#define METAROCE_PROTO_TESTS_FUZZ_ONE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 0, or the number of the property that failed. */
int mr_fuzz_one(const unsigned char *data, size_t size);

#ifdef __cplusplus
}
#endif

#endif
