// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* soft-MetaRoCE: an RDMA device over any Ethernet netdev. */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "metaroce.h"

static int __init mr_init(void)
{
	int err;

	err = mr_link_init();
	if (err) {
		pr_err("cannot register netdev notifier (%d)\n", err);
		return err;
	}
	pr_info("loaded\n");
	return 0;
}

static void __exit mr_exit(void)
{
	mr_link_exit();
	pr_info("unloaded\n");
}

module_init(mr_init);
module_exit(mr_exit);

MODULE_AUTHOR("soft-MetaRoCE developers");
MODULE_DESCRIPTION("soft-MetaRoCE: MetaRoCE RDMA transport over Ethernet netdevs");
MODULE_LICENSE("Dual BSD/GPL");
