// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* metaroce_kunit.ko: KUnit suites for metaroce; they run when it is loaded. */
#include <linux/module.h>

MODULE_DESCRIPTION("KUnit suites for soft-MetaRoCE");
MODULE_LICENSE("Dual BSD/GPL");
