/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The congestion control fuzz body, for libFuzzer and GoogleTest alike. */
#ifndef METAROCE_PROTO_TESTS_FUZZ_CC_H
#define METAROCE_PROTO_TESTS_FUZZ_CC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 0, or the number of the property that failed. */
int mr_fuzz_cc(const unsigned char *data, size_t size);

#ifdef __cplusplus
}
#endif

#endif
