// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * metaroce_kunit.ko: KUnit suites for metaroce; they run when it is loaded.
 * They call metaroce.ko through its headers: on a kernel with KUnit the
 * module exports what they use (EXPORT_SYMBOL_IF_KUNIT).
 */
#include <linux/module.h>

MODULE_DESCRIPTION("KUnit suites for soft-MetaRoCE");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
