// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* soft-MetaRoCE: an RDMA device over any Ethernet netdev. */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "comp.h"
#include "crypt.h"
#include "link.h"
#include "netlink.h"
#include "receive.h"
#include "socket.h"

static int __init mr_main_init(void)
{
	int err;

	err = mr_comp_init();
	if (err)
		return err;
	/* Sockets before devices: a device needs its namespace's socket. */
	err = mr_socket_init(mr_receive_udp);
	if (err) {
		mr_comp_exit();
		return err;
	}
	err = mr_link_init();
	if (err) {
		pr_err("cannot register netdev notifier (%d)\n", err);
		mr_socket_exit();
		mr_comp_exit();
		return err;
	}
	/* Last: the family's handlers need the device list. */
	err = mr_netlink_init();
	if (err) {
		pr_err("cannot register the generic netlink family (%d)\n",
		       err);
		mr_link_exit();
		mr_socket_exit();
		mr_comp_exit();
		return err;
	}
	pr_info("loaded\n");
	return 0;
}

static void __exit mr_main_exit(void)
{
	mr_netlink_exit();
	mr_link_exit();
	mr_socket_exit();
	mr_comp_exit();
	pr_info("unloaded\n");
}

module_init(mr_main_init);
module_exit(mr_main_exit);

MODULE_AUTHOR("soft-MetaRoCE developers");
MODULE_DESCRIPTION("soft-MetaRoCE: MetaRoCE RDMA transport over Ethernet netdevs");
MODULE_LICENSE("Dual BSD/GPL");
