// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The generic netlink family "metaroce" (uapi/metaroce-netlink.h): device
 * settings and counters, the QPs and paths of a device, and events. The
 * top of the driver: it calls down into the device list (socket.c), the
 * QP table (qp.c) and one snapshot of the transport (xport.c); the lower
 * layers reach it only through notify.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/ipv6.h>
#include <net/netlink.h>

#include "../uapi/metaroce-netlink.h"
#include "congestion.h"
#include "counters.h"
#include "netlink.h"
#include "notify.h"
#include "plane.h"
#include "qp.h"
#include "share.h"
#include "socket.h"
#include "xport.h"

enum mr_netlink_groups {
	MR_NETLINK_GROUP_EVENTS,
};

static const struct genl_multicast_group mr_netlink_mcgrps[] = {
	[MR_NETLINK_GROUP_EVENTS] = { .name = METAROCE_GENL_MCGRP_EVENTS },
};

/* Ranges beyond the s16 min/max of a policy (not const in 6.1). */
static struct netlink_range_validation mr_netlink_range_qpn = {
	.min = 1, .max = MR_QPN_MAX,
};

static struct netlink_range_validation mr_netlink_range_ai = {
	.min = METAROCE_CC_AI_MIN, .max = METAROCE_CC_AI_MAX,
};

static struct netlink_range_validation mr_netlink_range_path_window = {
	.min = METAROCE_CC_WINDOW_MIN, .max = METAROCE_CC_PATH_WINDOW_MAX,
};

static struct netlink_range_validation mr_netlink_range_conn_window = {
	.min = METAROCE_CC_WINDOW_MIN, .max = METAROCE_CC_CONN_WINDOW_MAX,
};

static struct netlink_range_validation mr_netlink_range_min_window = {
	.min = METAROCE_CC_MIN_WINDOW_MIN, .max = METAROCE_CC_MIN_WINDOW_MAX,
};

static struct netlink_range_validation mr_netlink_range_target = {
	.min = METAROCE_CC_TARGET_DELAY_MIN_NS,
	.max = METAROCE_CC_TARGET_DELAY_MAX_NS,
};

static const struct nla_policy mr_netlink_cc_policy[METAROCE_A_CC_MAX + 1] = {
	[METAROCE_A_CC_ENABLED] = NLA_POLICY_MAX(NLA_U8, 1),
	[METAROCE_A_CC_ECN] = NLA_POLICY_MAX(NLA_U8, 1),
	[METAROCE_A_CC_DELAY] = NLA_POLICY_MAX(NLA_U8, 1),
	[METAROCE_A_CC_LOSS] = NLA_POLICY_MAX(NLA_U8, 1),
	[METAROCE_A_CC_GAIN_SHIFT] =
		NLA_POLICY_RANGE(NLA_U8, METAROCE_CC_GAIN_SHIFT_MIN,
				 METAROCE_CC_GAIN_SHIFT_MAX),
	[METAROCE_A_CC_AI] = NLA_POLICY_FULL_RANGE(NLA_U32,
						   &mr_netlink_range_ai),
	[METAROCE_A_CC_INIT_PATH_WINDOW] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mr_netlink_range_path_window),
	[METAROCE_A_CC_INIT_CONN_WINDOW] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mr_netlink_range_conn_window),
	[METAROCE_A_CC_MAX_PATH_WINDOW] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mr_netlink_range_path_window),
	[METAROCE_A_CC_MAX_CONN_WINDOW] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mr_netlink_range_conn_window),
	[METAROCE_A_CC_MIN_WINDOW] =
		NLA_POLICY_FULL_RANGE(NLA_U32, &mr_netlink_range_min_window),
	[METAROCE_A_CC_TARGET_DELAY_NS] =
		NLA_POLICY_FULL_RANGE(NLA_U64, &mr_netlink_range_target),
	[METAROCE_A_CC_LOSS_BURST] =
		NLA_POLICY_RANGE(NLA_U32, METAROCE_CC_LOSS_BURST_MIN,
				 METAROCE_CC_LOSS_BURST_MAX),
};

static const struct nla_policy mr_netlink_key_policy[METAROCE_A_KEY_MAX + 1] = {
	[METAROCE_A_KEY_PEER_IPV4] = NLA_POLICY_EXACT_LEN(4),
	[METAROCE_A_KEY_PEER_IPV6] = NLA_POLICY_EXACT_LEN(16),
	[METAROCE_A_KEY_SECRET] = NLA_POLICY_RANGE(NLA_BINARY,
						   METAROCE_KEY_LEN_MIN,
						   METAROCE_KEY_LEN_MAX),
};

#define MR_NETLINK_READ_ONLY \
	{ .type = NLA_REJECT, .reject_message = "read-only attribute" }

static const struct nla_policy mr_netlink_dev_get_policy[METAROCE_A_DEV_NAME + 1] = {
	[METAROCE_A_DEV_INDEX] = { .type = NLA_U32 },
	[METAROCE_A_DEV_NAME] = { .type = NLA_NUL_STRING, .len = 63 },
};

static const struct nla_policy mr_netlink_dev_set_policy[METAROCE_A_DEV_MAX + 1] = {
	[METAROCE_A_DEV_INDEX] = { .type = NLA_U32 },
	[METAROCE_A_DEV_NAME] = { .type = NLA_NUL_STRING, .len = 63 },
	[METAROCE_A_DEV_NETDEV_IFINDEX] = MR_NETLINK_READ_ONLY,
	[METAROCE_A_DEV_NETDEV_NAME] = MR_NETLINK_READ_ONLY,
	[METAROCE_A_DEV_UDP_PORT] = NLA_POLICY_MIN(NLA_U16, 1),
	[METAROCE_A_DEV_PATHS] = NLA_POLICY_RANGE(NLA_U32, METAROCE_PATHS_MIN,
						  METAROCE_PATHS_MAX),
	[METAROCE_A_DEV_FAIL_AFTER] =
		NLA_POLICY_RANGE(NLA_U32, METAROCE_FAIL_AFTER_MIN,
				 METAROCE_FAIL_AFTER_MAX),
	[METAROCE_A_DEV_NUM_QPS] = MR_NETLINK_READ_ONLY,
	[METAROCE_A_DEV_CC] = NLA_POLICY_NESTED(mr_netlink_cc_policy),
	[METAROCE_A_DEV_INGRESS_KBPS] = { .type = NLA_U32 },
	[METAROCE_A_DEV_INGRESS_ACTIVE_KBPS] = MR_NETLINK_READ_ONLY,
	[METAROCE_A_DEV_STATS] = MR_NETLINK_READ_ONLY,
	[METAROCE_A_DEV_KEY] = NLA_POLICY_NESTED(mr_netlink_key_policy),
	[METAROCE_A_DEV_NUM_KEYS] = MR_NETLINK_READ_ONLY,
};

static const struct nla_policy mr_netlink_qp_policy[METAROCE_A_QP_NUM + 1] = {
	[METAROCE_A_QP_DEV_INDEX] = { .type = NLA_U32 },
	[METAROCE_A_QP_DEV_NAME] = { .type = NLA_NUL_STRING, .len = 63 },
	[METAROCE_A_QP_NUM] = NLA_POLICY_FULL_RANGE(NLA_U32,
						    &mr_netlink_range_qpn),
};

static const struct nla_policy mr_netlink_path_policy[METAROCE_A_PATH_ID + 1] = {
	[METAROCE_A_PATH_DEV_INDEX] = { .type = NLA_U32 },
	[METAROCE_A_PATH_DEV_NAME] = { .type = NLA_NUL_STRING, .len = 63 },
	[METAROCE_A_PATH_QPN] = NLA_POLICY_FULL_RANGE(NLA_U32,
						      &mr_netlink_range_qpn),
	[METAROCE_A_PATH_ID] = NLA_POLICY_MAX(NLA_U32, MR_PATH_MAX - 1),
};

static const struct nla_policy mr_netlink_plane_policy[METAROCE_A_PLANE_MAX + 1] = {
	[METAROCE_A_PLANE_DEV_INDEX] = { .type = NLA_U32 },
	[METAROCE_A_PLANE_DEV_NAME] = { .type = NLA_NUL_STRING, .len = 63 },
	[METAROCE_A_PLANE_NETDEV_NAME] = { .type = NLA_NUL_STRING,
					   .len = IFNAMSIZ - 1 },
};

static struct genl_family mr_netlink_family;

/*
 * The device of @net named by @index_attr and/or @name_attr, with a
 * reference (ib_device_put()); an ERR_PTR if there is none.
 */
static struct mr_dev *mr_netlink_dev_find(struct net *net,
					  struct nlattr *index_attr,
					  struct nlattr *name_attr,
					  struct netlink_ext_ack *extack)
{
	struct mr_dev *dev = NULL;
	u32 index = 0;

	if (!index_attr && !name_attr) {
		NL_SET_ERR_MSG_MOD(extack, "a device index or name is required");
		return ERR_PTR(-EINVAL);
	}
	if (index_attr) {
		index = nla_get_u32(index_attr);
		dev = mr_socket_dev_next(net, index);
		if (dev && dev->ib_dev.index != index) {
			ib_device_put(&dev->ib_dev);
			dev = NULL;
		}
		if (!dev) {
			NL_SET_ERR_MSG_ATTR(extack, index_attr,
					    "no such metaroce device in this network namespace");
			return ERR_PTR(-ENODEV);
		}
		if (name_attr &&
		    nla_strcmp(name_attr, dev_name(&dev->ib_dev.dev))) {
			ib_device_put(&dev->ib_dev);
			NL_SET_ERR_MSG_ATTR(extack, name_attr,
					    "the device index and the name are of two devices");
			return ERR_PTR(-EINVAL);
		}
		return dev;
	}
	while ((dev = mr_socket_dev_next(net, index))) {
		if (!nla_strcmp(name_attr, dev_name(&dev->ib_dev.dev)))
			return dev;
		index = dev->ib_dev.index + 1;
		ib_device_put(&dev->ib_dev);
	}
	NL_SET_ERR_MSG_ATTR(extack, name_attr,
			    "no such metaroce device in this network namespace");
	return ERR_PTR(-ENODEV);
}

static void mr_netlink_settings_get(struct mr_dev *dev,
				    struct mr_dev_settings *set)
{
	mutex_lock(&dev->settings_lock);
	*set = dev->settings;
	mutex_unlock(&dev->settings_lock);
	/* What a new QP gets: a later write of the parameter cc wins. */
	set->cc.enabled = mr_congestion_dev_enabled(set);
}

static int mr_netlink_put_cc(struct sk_buff *skb,
			     const struct mr_cc_params *cc)
{
	struct nlattr *nest = nla_nest_start(skb, METAROCE_A_DEV_CC);

	if (!nest ||
	    nla_put_u8(skb, METAROCE_A_CC_ENABLED, cc->enabled) ||
	    nla_put_u8(skb, METAROCE_A_CC_ECN, cc->ecn) ||
	    nla_put_u8(skb, METAROCE_A_CC_DELAY, cc->delay) ||
	    nla_put_u8(skb, METAROCE_A_CC_LOSS, cc->loss) ||
	    nla_put_u8(skb, METAROCE_A_CC_GAIN_SHIFT, cc->g_shift) ||
	    nla_put_u32(skb, METAROCE_A_CC_AI, cc->ai) ||
	    nla_put_u32(skb, METAROCE_A_CC_INIT_PATH_WINDOW,
			cc->init_path_window * MR_CC_ONE) ||
	    nla_put_u32(skb, METAROCE_A_CC_INIT_CONN_WINDOW,
			cc->init_conn_window * MR_CC_ONE) ||
	    nla_put_u32(skb, METAROCE_A_CC_MAX_PATH_WINDOW,
			cc->max_path_window * MR_CC_ONE) ||
	    nla_put_u32(skb, METAROCE_A_CC_MAX_CONN_WINDOW,
			cc->max_conn_window * MR_CC_ONE) ||
	    nla_put_u32(skb, METAROCE_A_CC_MIN_WINDOW, cc->min_window) ||
	    nla_put_u64_64bit(skb, METAROCE_A_CC_TARGET_DELAY_NS,
			      cc->target_floor_ns, METAROCE_A_CC_PAD) ||
	    nla_put_u32(skb, METAROCE_A_CC_LOSS_BURST, cc->loss_burst))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

/* One counter of a stats nest: METAROCE_A_STATS_ENTRY {NAME, VALUE}. */
static int mr_netlink_put_entry(struct sk_buff *skb, const char *name,
				u64 value)
{
	struct nlattr *entry;

	entry = nla_nest_start(skb, METAROCE_A_STATS_ENTRY);
	if (!entry ||
	    nla_put_string(skb, METAROCE_A_STATS_ENTRY_NAME, name) ||
	    nla_put_u64_64bit(skb, METAROCE_A_STATS_ENTRY_VALUE, value,
			      METAROCE_A_STATS_ENTRY_PAD))
		return -EMSGSIZE;
	nla_nest_end(skb, entry);
	return 0;
}

static int mr_netlink_put_stats(struct sk_buff *skb, struct mr_dev *dev)
{
	struct nlattr *nest;
	u64 *values;
	int i;

	values = kcalloc(MR_NUM_COUNTERS, sizeof(*values), GFP_KERNEL);
	if (!values)
		return -ENOMEM;
	mr_counters_sum(dev, values);
	values[MR_CNT_RX_DROP_NO_DEV] = mr_socket_rx_no_dev(dev);
	nest = nla_nest_start(skb, METAROCE_A_DEV_STATS);
	if (!nest)
		goto err;
	for (i = 0; i < MR_NUM_COUNTERS; i++)
		if (mr_netlink_put_entry(skb, mr_counters_name(i), values[i]))
			goto err;
	nla_nest_end(skb, nest);
	kfree(values);
	return 0;
err:
	kfree(values);
	return -EMSGSIZE;
}

/* A device message: a DEV_GET reply or DEV_CHANGE_NTF. Process context. */
static int mr_netlink_dev_fill(struct sk_buff *skb, struct mr_dev *dev,
			       u8 cmd, u32 portid, u32 seq, int flags)
{
	struct mr_dev_settings set;
	void *hdr;
	int err;

	hdr = genlmsg_put(skb, portid, seq, &mr_netlink_family, flags, cmd);
	if (!hdr)
		return -EMSGSIZE;
	mr_netlink_settings_get(dev, &set);
	err = -EMSGSIZE;
	if (nla_put_u32(skb, METAROCE_A_DEV_INDEX, dev->ib_dev.index) ||
	    nla_put_string(skb, METAROCE_A_DEV_NAME,
			   dev_name(&dev->ib_dev.dev)) ||
	    nla_put_u32(skb, METAROCE_A_DEV_NETDEV_IFINDEX,
			dev->ndev->ifindex) ||
	    nla_put_string(skb, METAROCE_A_DEV_NETDEV_NAME, dev->ndev->name) ||
	    nla_put_u16(skb, METAROCE_A_DEV_UDP_PORT,
			mr_socket_dev_port(dev)) ||
	    nla_put_u32(skb, METAROCE_A_DEV_PATHS, set.paths) ||
	    nla_put_u32(skb, METAROCE_A_DEV_FAIL_AFTER, set.fail_after) ||
	    nla_put_u32(skb, METAROCE_A_DEV_NUM_QPS,
			atomic_read(&dev->num_qp)))
		goto cancel;
	if (mr_netlink_put_cc(skb, &set.cc))
		goto cancel;
	if (nla_put_u32(skb, METAROCE_A_DEV_INGRESS_KBPS,
			READ_ONCE(dev->share.ingress_kbps)) ||
	    nla_put_u32(skb, METAROCE_A_DEV_INGRESS_ACTIVE_KBPS,
			mr_share_active_kbps(dev)))
		goto cancel;
	err = mr_netlink_put_stats(skb, dev);
	if (err)
		goto cancel;
	if (nla_put_u32(skb, METAROCE_A_DEV_NUM_KEYS, 0)) {
		err = -EMSGSIZE;
		goto cancel;
	}
	genlmsg_end(skb, hdr);
	return 0;
cancel:
	genlmsg_cancel(skb, hdr);
	return err;
}

static int mr_netlink_dev_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct mr_dev *dev;
	struct sk_buff *msg;
	int err;

	dev = mr_netlink_dev_find(genl_info_net(info),
				  info->attrs[METAROCE_A_DEV_INDEX],
				  info->attrs[METAROCE_A_DEV_NAME],
				  info->extack);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	msg = nlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg) {
		err = -ENOMEM;
		goto out;
	}
	err = mr_netlink_dev_fill(msg, dev, METAROCE_CMD_DEV_GET,
				  info->snd_portid, info->snd_seq, 0);
	if (err) {
		nlmsg_free(msg);
		goto out;
	}
	err = genlmsg_reply(msg, info);
out:
	ib_device_put(&dev->ib_dev);
	return err;
}

/* cb->args[0]: the index the next device has at least. */
static int mr_netlink_dev_get_dumpit(struct sk_buff *skb,
				     struct netlink_callback *cb)
{
	struct net *net = sock_net(cb->skb->sk);
	struct mr_dev *dev;
	int err = 0;

	while ((dev = mr_socket_dev_next(net, cb->args[0]))) {
		err = mr_netlink_dev_fill(skb, dev, METAROCE_CMD_DEV_GET,
					  NETLINK_CB(cb->skb).portid,
					  cb->nlh->nlmsg_seq, NLM_F_MULTI);
		if (!err)
			cb->args[0] = dev->ib_dev.index + 1;
		ib_device_put(&dev->ib_dev);
		if (err)
			break;
	}
	/* A device too large for an empty skb is an error, not the end. */
	if (err && !skb->len)
		return err;
	return skb->len;
}

static void mr_netlink_dev_notify(struct mr_dev *dev)
{
	struct net *net = dev_net(dev->ndev);
	struct sk_buff *msg;

	if (!genl_has_listeners(&mr_netlink_family, net,
				MR_NETLINK_GROUP_EVENTS))
		return;
	msg = nlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return;
	if (mr_netlink_dev_fill(msg, dev, METAROCE_CMD_DEV_CHANGE_NTF, 0, 0,
				0)) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_multicast_netns(&mr_netlink_family, net, msg, 0,
				MR_NETLINK_GROUP_EVENTS, GFP_KERNEL);
}

/* A window in 1/1024 packet where the parameters keep whole packets. */
static int mr_netlink_cc_packets(struct nlattr *attr, u32 *packets,
				 struct netlink_ext_ack *extack)
{
	u32 v = nla_get_u32(attr);

	if (v % MR_CC_ONE) {
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "initial and maximum windows are whole packets (multiples of 1024)");
		return -EINVAL;
	}
	*packets = v / MR_CC_ONE;
	return 0;
}

/* The new settings: @set's congestion control with what @attr changes. */
static int mr_netlink_cc_parse(struct nlattr *attr,
			       struct mr_dev_settings *set,
			       struct netlink_ext_ack *extack)
{
	struct mr_cc_params *cc = &set->cc;
	struct nlattr *tb[METAROCE_A_CC_MAX + 1];
	int err;

	err = nla_parse_nested(tb, METAROCE_A_CC_MAX, attr,
			       mr_netlink_cc_policy, extack);
	if (err)
		return err;
	if (tb[METAROCE_A_CC_ENABLED]) {
		cc->enabled = nla_get_u8(tb[METAROCE_A_CC_ENABLED]);
		/* Later than any write of the parameter cc so far. */
		set->cc_stamp = mr_congestion_cc_stamp();
	}
	if (tb[METAROCE_A_CC_ECN])
		cc->ecn = nla_get_u8(tb[METAROCE_A_CC_ECN]);
	if (tb[METAROCE_A_CC_DELAY])
		cc->delay = nla_get_u8(tb[METAROCE_A_CC_DELAY]);
	if (tb[METAROCE_A_CC_LOSS])
		cc->loss = nla_get_u8(tb[METAROCE_A_CC_LOSS]);
	if (tb[METAROCE_A_CC_GAIN_SHIFT])
		cc->g_shift = nla_get_u8(tb[METAROCE_A_CC_GAIN_SHIFT]);
	if (tb[METAROCE_A_CC_AI]) {
		if (nla_get_u32(tb[METAROCE_A_CC_AI]) > MR_CC_MAX_AI) {
			NL_SET_ERR_MSG_ATTR(extack, tb[METAROCE_A_CC_AI],
					    "the increase is at most 16 packets per round (16384)");
			return -EINVAL;
		}
		/* One knob for both: the paths' sum and the connection's. */
		cc->ai = nla_get_u32(tb[METAROCE_A_CC_AI]);
		cc->ai_conn = cc->ai;
	}
	if (tb[METAROCE_A_CC_INIT_PATH_WINDOW])
		err = mr_netlink_cc_packets(tb[METAROCE_A_CC_INIT_PATH_WINDOW],
					    &cc->init_path_window, extack);
	if (!err && tb[METAROCE_A_CC_INIT_CONN_WINDOW])
		err = mr_netlink_cc_packets(tb[METAROCE_A_CC_INIT_CONN_WINDOW],
					    &cc->init_conn_window, extack);
	if (!err && tb[METAROCE_A_CC_MAX_PATH_WINDOW])
		err = mr_netlink_cc_packets(tb[METAROCE_A_CC_MAX_PATH_WINDOW],
					    &cc->max_path_window, extack);
	if (!err && tb[METAROCE_A_CC_MAX_CONN_WINDOW])
		err = mr_netlink_cc_packets(tb[METAROCE_A_CC_MAX_CONN_WINDOW],
					    &cc->max_conn_window, extack);
	if (err)
		return err;
	if (tb[METAROCE_A_CC_MIN_WINDOW]) {
		if (nla_get_u32(tb[METAROCE_A_CC_MIN_WINDOW]) > MR_CC_ONE) {
			NL_SET_ERR_MSG_ATTR(extack, tb[METAROCE_A_CC_MIN_WINDOW],
					    "the minimum window is at most one packet (1024)");
			return -EINVAL;
		}
		cc->min_window = nla_get_u32(tb[METAROCE_A_CC_MIN_WINDOW]);
	}
	if (tb[METAROCE_A_CC_TARGET_DELAY_NS])
		cc->target_floor_ns =
			nla_get_u64(tb[METAROCE_A_CC_TARGET_DELAY_NS]);
	if (tb[METAROCE_A_CC_LOSS_BURST])
		cc->loss_burst = nla_get_u32(tb[METAROCE_A_CC_LOSS_BURST]);
	if (mr_cc_params_check(cc)) {
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "congestion control values do not fit together (an initial window above its maximum?)");
		return -EINVAL;
	}
	return 0;
}

/*
 * Both ends of a connection send to one port: moving a device that has
 * connections would strand its peers. The GSI QP's MADs hold none.
 */
static int mr_netlink_set_port(struct mr_dev *dev, const struct nlattr *attr,
			       struct netlink_ext_ack *extack)
{
	u16 port = nla_get_u16(attr);
	int err;

	if (port == mr_socket_dev_port(dev))
		return 0;
	if (mr_qp_count_non_gsi(dev)) {
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "the UDP port cannot change while the device has QPs");
		return -EBUSY;
	}
	err = mr_socket_dev_set_port(dev, port);
	if (err == -EADDRINUSE)
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "the UDP port is in use in the namespace");
	else if (err)
		NL_SET_ERR_MSG_ATTR(extack, attr, "cannot open the UDP port");
	return err;
}

/* All or nothing: the new settings are checked whole, then applied. */
static int mr_netlink_dev_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **tb = info->attrs;
	struct mr_dev_settings set;
	struct mr_dev *dev;
	int err = 0;

	dev = mr_netlink_dev_find(genl_info_net(info),
				  tb[METAROCE_A_DEV_INDEX],
				  tb[METAROCE_A_DEV_NAME], extack);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	if (tb[METAROCE_A_DEV_KEY]) {
		NL_SET_ERR_MSG_ATTR(extack, tb[METAROCE_A_DEV_KEY],
				    "connection keys are not implemented yet");
		err = -EOPNOTSUPP;
		goto out;
	}

	mutex_lock(&dev->settings_lock);
	set = dev->settings;
	if (tb[METAROCE_A_DEV_PATHS])
		set.paths = nla_get_u32(tb[METAROCE_A_DEV_PATHS]);
	if (tb[METAROCE_A_DEV_FAIL_AFTER])
		set.fail_after = nla_get_u32(tb[METAROCE_A_DEV_FAIL_AFTER]);
	if (tb[METAROCE_A_DEV_CC])
		err = mr_netlink_cc_parse(tb[METAROCE_A_DEV_CC], &set, extack);
	/* Last, as it alone can fail once tried: all or nothing. */
	if (!err && tb[METAROCE_A_DEV_UDP_PORT])
		err = mr_netlink_set_port(dev, tb[METAROCE_A_DEV_UDP_PORT],
					  extack);
	if (!err) {
		dev->settings = set;
		if (tb[METAROCE_A_DEV_INGRESS_KBPS])
			WRITE_ONCE(dev->share.ingress_kbps,
				   nla_get_u32(tb[METAROCE_A_DEV_INGRESS_KBPS]));
	}
	mutex_unlock(&dev->settings_lock);
	if (!err)
		mr_netlink_dev_notify(dev);
out:
	ib_device_put(&dev->ib_dev);
	return err;
}

static u8 mr_netlink_qp_type(enum ib_qp_type type)
{
	switch (type) {
	case IB_QPT_RC:
		return METAROCE_QP_TYPE_RC;
	case IB_QPT_UC:
		return METAROCE_QP_TYPE_UC;
	case IB_QPT_UD:
		return METAROCE_QP_TYPE_UD;
	default:
		return METAROCE_QP_TYPE_GSI;
	}
}

/* An address in GID form: v4-mapped ones as 4 bytes, else 16. */
static int mr_netlink_put_addr(struct sk_buff *skb, int v4, int v6,
			       const struct in6_addr *a)
{
	if (ipv6_addr_v4mapped(a))
		return nla_put_in_addr(skb, v4, a->s6_addr32[3]);
	return nla_put_in6_addr(skb, v6, a);
}

/* @secrets: the caller may see the connection tags (CAP_NET_ADMIN). */
/* Where the QP's connection goes: the peer, the addresses, the tags. */
static int mr_netlink_qp_put_conn(struct sk_buff *skb, struct mr_qp *qp,
				  const struct mr_xport_info *xi, bool secrets)
{
	if (READ_ONCE(qp->state) >= IB_QPS_RTR &&
	    (nla_put_u32(skb, METAROCE_A_QP_PEER_NUM,
			 READ_ONCE(qp->attr.dest_qp_num)) ||
	     mr_netlink_put_addr(skb, METAROCE_A_QP_LOCAL_IPV4,
				 METAROCE_A_QP_LOCAL_IPV6, &qp->flow.saddr) ||
	     mr_netlink_put_addr(skb, METAROCE_A_QP_PEER_IPV4,
				 METAROCE_A_QP_PEER_IPV6, &qp->flow.daddr)))
		return -EMSGSIZE;
	if (nla_put_u8(skb, METAROCE_A_QP_HANDSHAKE, xi->handshake))
		return -EMSGSIZE;
	if (secrets && xi->local_tag &&
	    (nla_put_u64_64bit(skb, METAROCE_A_QP_LOCAL_TAG, xi->local_tag,
			       METAROCE_A_QP_PAD) ||
	     nla_put_u64_64bit(skb, METAROCE_A_QP_PEER_TAG, xi->peer_tag,
			       METAROCE_A_QP_PAD)))
		return -EMSGSIZE;
	return 0;
}

/* The transport's windows and rates, once it has paths. */
static int mr_netlink_qp_put_xport(struct sk_buff *skb,
				   const struct mr_xport_info *xi)
{
	if (nla_put_u32(skb, METAROCE_A_QP_PATHS, xi->npaths) ||
	    nla_put_u32(skb, METAROCE_A_QP_MTU, xi->mtu) ||
	    nla_put_u32(skb, METAROCE_A_QP_CONN_WINDOW, xi->conn_window) ||
	    nla_put_u32(skb, METAROCE_A_QP_INFLIGHT, xi->inflight) ||
	    nla_put_u32(skb, METAROCE_A_QP_PACING_KBPS, xi->pacing_kbps) ||
	    nla_put_u32(skb, METAROCE_A_QP_RATE_HINT_KBPS, xi->hint_kbps) ||
	    nla_put_u32(skb, METAROCE_A_QP_ALPHA, xi->alpha))
		return -EMSGSIZE;
	if (xi->srtt_ns && nla_put_u64_64bit(skb, METAROCE_A_QP_SRTT_NS,
					     xi->srtt_ns, METAROCE_A_QP_PAD))
		return -EMSGSIZE;
	return 0;
}

static int mr_netlink_qp_put_stats(struct sk_buff *skb,
				   const struct mr_xport_info *xi)
{
	struct nlattr *nest = nla_nest_start(skb, METAROCE_A_QP_STATS);

	if (!nest ||
	    nla_put_u64_64bit(skb, METAROCE_A_QP_STATS_TX_PACKETS,
			      xi->tx_packets, METAROCE_A_QP_STATS_PAD) ||
	    nla_put_u64_64bit(skb, METAROCE_A_QP_STATS_RETRANSMITS,
			      xi->retransmits, METAROCE_A_QP_STATS_PAD) ||
	    nla_put_u64_64bit(skb, METAROCE_A_QP_STATS_SACK_GAPS,
			      xi->sack_gaps, METAROCE_A_QP_STATS_PAD) ||
	    nla_put_u64_64bit(skb, METAROCE_A_QP_STATS_RTO_EVENTS,
			      xi->rto_events, METAROCE_A_QP_STATS_PAD) ||
	    nla_put_u64_64bit(skb, METAROCE_A_QP_STATS_TAIL_PROBES,
			      xi->tail_probes, METAROCE_A_QP_STATS_PAD) ||
	    nla_put_u64_64bit(skb, METAROCE_A_QP_STATS_PATH_FAILOVERS,
			      xi->path_failovers, METAROCE_A_QP_STATS_PAD) ||
	    nla_put_u64_64bit(skb, METAROCE_A_QP_STATS_RNR_NAKS,
			      xi->rnr_naks, METAROCE_A_QP_STATS_PAD) ||
	    nla_put_u64_64bit(skb, METAROCE_A_QP_STATS_CE_MARKS, xi->ce_marks,
			      METAROCE_A_QP_STATS_PAD) ||
	    nla_put_u64_64bit(skb, METAROCE_A_QP_STATS_CC_DECREASES,
			      xi->cc_decreases, METAROCE_A_QP_STATS_PAD) ||
	    nla_put_u64_64bit(skb, METAROCE_A_QP_STATS_HINT_LIMITED,
			      xi->hint_limited, METAROCE_A_QP_STATS_PAD))
		return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int mr_netlink_qp_fill(struct sk_buff *skb, struct mr_dev *dev,
			      struct mr_qp *qp, u32 portid, u32 seq, int flags,
			      bool secrets)
{
	struct mr_xport_info xi;
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &mr_netlink_family, flags,
			  METAROCE_CMD_QP_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, METAROCE_A_QP_DEV_INDEX, dev->ib_dev.index) ||
	    nla_put_string(skb, METAROCE_A_QP_DEV_NAME,
			   dev_name(&dev->ib_dev.dev)) ||
	    nla_put_u32(skb, METAROCE_A_QP_NUM, qp->ibqp.qp_num) ||
	    nla_put_u8(skb, METAROCE_A_QP_TYPE,
		       mr_netlink_qp_type(qp->ibqp.qp_type)) ||
	    nla_put_u8(skb, METAROCE_A_QP_STATE, READ_ONCE(qp->state)))
		goto cancel;
	if (qp->xp) {
		mr_xport_telemetry(qp, &xi, NULL);
		if (mr_netlink_qp_put_conn(skb, qp, &xi, secrets) ||
		    (xi.npaths && (mr_netlink_qp_put_xport(skb, &xi) ||
				   mr_netlink_qp_put_stats(skb, &xi))))
			goto cancel;
	}
	genlmsg_end(skb, hdr);
	return 0;
cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

static int mr_netlink_qp_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *num = info->attrs[METAROCE_A_QP_NUM];
	struct sk_buff *msg;
	struct mr_dev *dev;
	struct mr_qp *qp;
	int err;

	if (!num) {
		NL_SET_ERR_MSG_MOD(info->extack, "a QP number is required");
		return -EINVAL;
	}
	dev = mr_netlink_dev_find(genl_info_net(info),
				  info->attrs[METAROCE_A_QP_DEV_INDEX],
				  info->attrs[METAROCE_A_QP_DEV_NAME],
				  info->extack);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	qp = mr_qp_get(dev, nla_get_u32(num));
	if (!qp) {
		NL_SET_ERR_MSG_ATTR(info->extack, num, "no such QP");
		err = -ENOENT;
		goto out;
	}
	msg = nlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	err = -ENOMEM;
	if (msg)
		err = mr_netlink_qp_fill(msg, dev, qp, info->snd_portid,
					 info->snd_seq, 0,
					 netlink_ns_capable(skb,
							    genl_info_net(info)->user_ns,
							    CAP_NET_ADMIN));
	mr_qp_put(qp);
	if (!err)
		err = genlmsg_reply(msg, info);
	else
		nlmsg_free(msg);
out:
	ib_device_put(&dev->ib_dev);
	return err;
}

/* A dump's selector, found again at each step: the device may have gone. */
static struct mr_dev *mr_netlink_dump_dev(struct netlink_callback *cb,
					  int index_type, int name_type)
{
	const struct genl_dumpit_info *di = genl_dumpit_info(cb);

	return mr_netlink_dev_find(sock_net(cb->skb->sk),
				   di->attrs[index_type], di->attrs[name_type],
				   cb->extack);
}

/*
 * A dump of one device's objects (@index_type, @name_type: its selector)
 * or of every device's: a device that is not there fails the request,
 * before the dump.
 */
static int mr_netlink_dump_start(struct netlink_callback *cb, int index_type,
				 int name_type)
{
	const struct genl_dumpit_info *di = genl_dumpit_info(cb);
	struct mr_dev *dev;

	if (!di->attrs[index_type] && !di->attrs[name_type])
		return 0;
	dev = mr_netlink_dump_dev(cb, index_type, name_type);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	ib_device_put(&dev->ib_dev);
	return 0;
}

/*
 * The dump itself: @dump_dev fills @skb with the objects of the selected
 * device, or of each device of the namespace in index order.
 * cb->args[0]: the device index to go on with; [1] is @dump_dev's.
 */
static int mr_netlink_dump_devs(struct sk_buff *skb,
				struct netlink_callback *cb, int index_type,
				int name_type,
				int (*dump_dev)(struct sk_buff *skb,
						struct netlink_callback *cb,
						struct mr_dev *dev))
{
	const struct genl_dumpit_info *di = genl_dumpit_info(cb);
	struct mr_dev *dev;
	int err = 0;

	if (di->attrs[index_type] || di->attrs[name_type]) {
		dev = mr_netlink_dump_dev(cb, index_type, name_type);
		if (IS_ERR(dev))
			return PTR_ERR(dev);
		err = dump_dev(skb, cb, dev);
		ib_device_put(&dev->ib_dev);
	} else {
		while ((dev = mr_socket_dev_next(sock_net(cb->skb->sk),
						 cb->args[0]))) {
			if (dev->ib_dev.index != cb->args[0]) {
				cb->args[0] = dev->ib_dev.index;
				cb->args[1] = 0;
			}
			err = dump_dev(skb, cb, dev);
			ib_device_put(&dev->ib_dev);
			if (err)
				break;
			cb->args[0]++;
			cb->args[1] = 0;
		}
	}
	if (err && !skb->len)
		return err;
	return skb->len;
}

static int mr_netlink_qp_get_start(struct netlink_callback *cb)
{
	return mr_netlink_dump_start(cb, METAROCE_A_QP_DEV_INDEX,
				     METAROCE_A_QP_DEV_NAME);
}

/*
 * The QPs of @dev from QPN cb->args[1] on; with METAROCE_A_QP_NUM, that
 * QP alone. Return: 0 when done with the device, or -EMSGSIZE when the
 * skb is full.
 */
static int mr_netlink_qp_dump_dev(struct sk_buff *skb,
				  struct netlink_callback *cb,
				  struct mr_dev *dev)
{
	struct nlattr *only = genl_dumpit_info(cb)->attrs[METAROCE_A_QP_NUM];
	u32 qpn = cb->args[1];
	struct mr_qp *qp;
	int err;

	if (only && qpn <= nla_get_u32(only))
		qpn = nla_get_u32(only);
	while ((qp = mr_qp_get_next(dev, &qpn))) {
		if (only && qpn != nla_get_u32(only)) {
			mr_qp_put(qp);
			break;
		}
		err = mr_netlink_qp_fill(skb, dev, qp,
					 NETLINK_CB(cb->skb).portid,
					 cb->nlh->nlmsg_seq, NLM_F_MULTI,
					 netlink_net_capable(cb->skb,
							     CAP_NET_ADMIN));
		mr_qp_put(qp);
		if (err)
			return err;
		cb->args[1] = ++qpn;
	}
	return 0;
}

/* cb->args[1]: the next QPN. */
static int mr_netlink_qp_get_dumpit(struct sk_buff *skb,
				    struct netlink_callback *cb)
{
	return mr_netlink_dump_devs(skb, cb, METAROCE_A_QP_DEV_INDEX,
				    METAROCE_A_QP_DEV_NAME,
				    mr_netlink_qp_dump_dev);
}

static int mr_netlink_path_fill(struct sk_buff *skb, struct mr_dev *dev,
				u32 qpn, u32 id,
				const struct mr_xport_path_info *pi,
				struct netlink_callback *cb)
{
	struct nlattr *nest;
	void *hdr;

	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &mr_netlink_family, NLM_F_MULTI,
			  METAROCE_CMD_PATH_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, METAROCE_A_PATH_DEV_INDEX, dev->ib_dev.index) ||
	    nla_put_string(skb, METAROCE_A_PATH_DEV_NAME,
			   dev_name(&dev->ib_dev.dev)) ||
	    nla_put_u32(skb, METAROCE_A_PATH_QPN, qpn) ||
	    nla_put_u32(skb, METAROCE_A_PATH_ID, id) ||
	    nla_put_u16(skb, METAROCE_A_PATH_SPORT, pi->sport) ||
	    nla_put_u16(skb, METAROCE_A_PATH_EPOCH, pi->epoch) ||
	    nla_put_u8(skb, METAROCE_A_PATH_STATE, pi->state))
		goto cancel;
	if (pi->srtt_ns &&
	    (nla_put_u64_64bit(skb, METAROCE_A_PATH_SRTT_NS, pi->srtt_ns,
			       METAROCE_A_PATH_PAD) ||
	     nla_put_u64_64bit(skb, METAROCE_A_PATH_RTTVAR_NS, pi->rttvar_ns,
			       METAROCE_A_PATH_PAD)))
		goto cancel;
	if (nla_put_u64_64bit(skb, METAROCE_A_PATH_RTO_NS, pi->rto_ns,
			      METAROCE_A_PATH_PAD))
		goto cancel;
	if (pi->base_rtt_ns &&
	    nla_put_u64_64bit(skb, METAROCE_A_PATH_BASE_RTT_NS,
			      pi->base_rtt_ns, METAROCE_A_PATH_PAD))
		goto cancel;
	if (nla_put_u32(skb, METAROCE_A_PATH_WINDOW, pi->window) ||
	    nla_put_u32(skb, METAROCE_A_PATH_INFLIGHT, pi->inflight) ||
	    nla_put_u32(skb, METAROCE_A_PATH_ALPHA, pi->alpha) ||
	    nla_put_u32(skb, METAROCE_A_PATH_CONSEC_RTOS, pi->consec_rtos))
		goto cancel;
	nest = nla_nest_start(skb, METAROCE_A_PATH_STATS);
	if (!nest ||
	    nla_put_u64_64bit(skb, METAROCE_A_PATH_STATS_TX_PACKETS,
			      pi->n_sent, METAROCE_A_PATH_STATS_PAD) ||
	    nla_put_u64_64bit(skb, METAROCE_A_PATH_STATS_RETRANSMITS,
			      pi->n_resent, METAROCE_A_PATH_STATS_PAD) ||
	    nla_put_u64_64bit(skb, METAROCE_A_PATH_STATS_SACK_GAPS,
			      pi->n_sack_gaps, METAROCE_A_PATH_STATS_PAD) ||
	    nla_put_u64_64bit(skb, METAROCE_A_PATH_STATS_RTO_EVENTS,
			      pi->n_rtos, METAROCE_A_PATH_STATS_PAD) ||
	    nla_put_u64_64bit(skb, METAROCE_A_PATH_STATS_TAIL_PROBES,
			      pi->n_probes, METAROCE_A_PATH_STATS_PAD))
		goto cancel;
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return 0;
cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/*
 * The QP a path dump names, with references on it and its device; an
 * errno (and extack) if it has none.
 */
static int mr_netlink_path_qp(struct netlink_callback *cb,
			      struct mr_dev **devp, struct mr_qp **qpp)
{
	const struct genl_dumpit_info *di = genl_dumpit_info(cb);
	struct nlattr *qpn_attr = di->attrs[METAROCE_A_PATH_QPN];
	struct mr_dev *dev;

	if (!qpn_attr) {
		NL_SET_ERR_MSG_MOD(cb->extack, "a QP number is required");
		return -EINVAL;
	}
	dev = mr_netlink_dump_dev(cb, METAROCE_A_PATH_DEV_INDEX,
				  METAROCE_A_PATH_DEV_NAME);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	*qpp = mr_qp_get(dev, nla_get_u32(qpn_attr));
	if (!*qpp) {
		ib_device_put(&dev->ib_dev);
		NL_SET_ERR_MSG_ATTR(cb->extack, qpn_attr, "no such QP");
		return -ENOENT;
	}
	*devp = dev;
	return 0;
}

/* Bad selectors fail the request itself, before the dump begins. */
static int mr_netlink_path_get_start(struct netlink_callback *cb)
{
	struct mr_dev *dev;
	struct mr_qp *qp;
	int err;

	err = mr_netlink_path_qp(cb, &dev, &qp);
	if (err)
		return err;
	mr_qp_put(qp);
	ib_device_put(&dev->ib_dev);
	return 0;
}

/*
 * cb->args[0]: the next path id. Each step takes a fresh snapshot: the
 * paths of one reply are consistent, those of two may be apart in time.
 */
static int mr_netlink_path_get_dumpit(struct sk_buff *skb,
				      struct netlink_callback *cb)
{
	const struct genl_dumpit_info *di = genl_dumpit_info(cb);
	struct nlattr *id_attr = di->attrs[METAROCE_A_PATH_ID];
	struct mr_xport_path_info *paths = NULL;
	struct mr_xport_info xi;
	struct mr_dev *dev;
	struct mr_qp *qp;
	u32 id, end;
	int err;

	err = mr_netlink_path_qp(cb, &dev, &qp);
	if (err)
		return err;
	if (!qp->xp)
		goto out;	/* UD, GSI: no paths */
	paths = kcalloc(MR_PATH_MAX, sizeof(*paths), GFP_KERNEL);
	if (!paths) {
		err = -ENOMEM;
		goto out;
	}
	mr_xport_telemetry(qp, &xi, paths);
	id = cb->args[0];
	end = xi.npaths;
	if (id_attr) {
		if (nla_get_u32(id_attr) >= xi.npaths) {
			NL_SET_ERR_MSG_ATTR(cb->extack, id_attr,
					    "no such path");
			err = -ENOENT;
			goto out;
		}
		id = max(id, nla_get_u32(id_attr));
		end = nla_get_u32(id_attr) + 1;
	}
	for (; id < end; id++) {
		err = mr_netlink_path_fill(skb, dev, qp->ibqp.qp_num, id,
					   &paths[id], cb);
		if (err)
			break;
		cb->args[0] = id + 1;
	}
out:
	kfree(paths);
	mr_qp_put(qp);
	ib_device_put(&dev->ib_dev);
	if (err && !skb->len)
		return err;
	return skb->len;
}

static int mr_netlink_plane_fill(struct sk_buff *skb, struct mr_dev *dev,
				 const struct mr_plane_info *pi,
				 struct netlink_callback *cb)
{
	static const char * const names[] = {
		"tx_packets", "tx_bytes", "rx_packets", "rx_bytes",
		"ce_marks", "downs",
	};
	const u64 values[] = {
		pi->tx_packets, pi->tx_bytes, pi->rx_packets, pi->rx_bytes,
		pi->ce_marks, pi->downs,
	};
	struct nlattr *nest;
	void *hdr;
	int i;

	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &mr_netlink_family, NLM_F_MULTI,
			  METAROCE_CMD_PLANE_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u32(skb, METAROCE_A_PLANE_DEV_INDEX, dev->ib_dev.index) ||
	    nla_put_string(skb, METAROCE_A_PLANE_DEV_NAME,
			   dev_name(&dev->ib_dev.dev)) ||
	    nla_put_u32(skb, METAROCE_A_PLANE_ID, pi->id) ||
	    nla_put_u32(skb, METAROCE_A_PLANE_NETDEV_IFINDEX, pi->ifindex) ||
	    nla_put_string(skb, METAROCE_A_PLANE_NETDEV_NAME, pi->name) ||
	    nla_put_u8(skb, METAROCE_A_PLANE_STATE, pi->state) ||
	    nla_put_u32(skb, METAROCE_A_PLANE_PATHS, pi->paths) ||
	    (pi->state == MR_PLANE_TIMED_OUT &&
	     nla_put_u64_64bit(skb, METAROCE_A_PLANE_RETRY_NS, pi->retry_ns,
			       METAROCE_A_PLANE_PAD)))
		goto cancel;
	nest = nla_nest_start(skb, METAROCE_A_PLANE_STATS);
	if (!nest)
		goto cancel;
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (mr_netlink_put_entry(skb, names[i], values[i]))
			goto cancel;
	nla_nest_end(skb, nest);
	genlmsg_end(skb, hdr);
	return 0;
cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

static int mr_netlink_plane_get_start(struct netlink_callback *cb)
{
	return mr_netlink_dump_start(cb, METAROCE_A_PLANE_DEV_INDEX,
				     METAROCE_A_PLANE_DEV_NAME);
}

/* The planes of @dev from id cb->args[1] on; -EMSGSIZE: the skb is full. */
static int mr_netlink_plane_dump_dev(struct sk_buff *skb,
				     struct netlink_callback *cb,
				     struct mr_dev *dev)
{
	struct mr_plane_info pi;
	int err;

	while (!mr_plane_info(dev, cb->args[1], &pi)) {
		err = mr_netlink_plane_fill(skb, dev, &pi, cb);
		if (err)
			return err;
		cb->args[1]++;
	}
	return 0;
}

/* cb->args[1]: the next plane id. */
static int mr_netlink_plane_get_dumpit(struct sk_buff *skb,
				       struct netlink_callback *cb)
{
	return mr_netlink_dump_devs(skb, cb, METAROCE_A_PLANE_DEV_INDEX,
				    METAROCE_A_PLANE_DEV_NAME,
				    mr_netlink_plane_dump_dev);
}

/* PLANE_ADD and PLANE_DEL: the device, and a netdev of its namespace. */
static int mr_netlink_plane_set_doit(struct sk_buff *skb,
				     struct genl_info *info)
{
	struct netlink_ext_ack *extack = info->extack;
	struct nlattr **tb = info->attrs;
	struct net_device *ndev;
	struct mr_dev *dev;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, METAROCE_A_PLANE_NETDEV_NAME))
		return -EINVAL;
	dev = mr_netlink_dev_find(genl_info_net(info),
				  tb[METAROCE_A_PLANE_DEV_INDEX],
				  tb[METAROCE_A_PLANE_DEV_NAME], extack);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	rtnl_lock();
	ndev = __dev_get_by_name(dev_net(dev->ndev),
				 nla_data(tb[METAROCE_A_PLANE_NETDEV_NAME]));
	if (!ndev) {
		NL_SET_ERR_MSG_ATTR(extack, tb[METAROCE_A_PLANE_NETDEV_NAME],
				    "no such netdev in the device's network namespace");
		err = -ENODEV;
	} else if (info->genlhdr->cmd == METAROCE_CMD_PLANE_ADD) {
		err = mr_plane_add(dev, ndev, extack);
	} else {
		err = mr_plane_del(dev, ndev, mr_qp_count_non_gsi(dev) > 0,
				   extack);
	}
	rtnl_unlock();
	ib_device_put(&dev->ib_dev);
	return err;
}

/* An event about @qp to @dev's namespace; any context, under RCU. */
static struct sk_buff *mr_netlink_event_new(struct mr_qp *qp, u8 cmd,
					    void **hdr)
{
	struct mr_dev *dev = to_mr_dev(qp->ibqp.device);
	struct sk_buff *msg;

	/* A device detached from its namespace is on its way out. */
	if (!rcu_access_pointer(dev->mrn) ||
	    !genl_has_listeners(&mr_netlink_family, dev_net(dev->ndev),
				MR_NETLINK_GROUP_EVENTS))
		return NULL;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_ATOMIC);
	if (!msg)
		return NULL;
	*hdr = genlmsg_put(msg, 0, 0, &mr_netlink_family, 0, cmd);
	if (!*hdr ||
	    nla_put_u32(msg, METAROCE_A_EVENT_DEV_INDEX, dev->ib_dev.index) ||
	    nla_put_string(msg, METAROCE_A_EVENT_DEV_NAME,
			   dev_name(&dev->ib_dev.dev)) ||
	    nla_put_u32(msg, METAROCE_A_EVENT_QPN, qp->ibqp.qp_num)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

static void mr_netlink_event_send(struct mr_qp *qp, struct sk_buff *msg,
				  void *hdr)
{
	genlmsg_end(msg, hdr);
	genlmsg_multicast_netns(&mr_netlink_family,
				dev_net(to_mr_dev(qp->ibqp.device)->ndev), msg,
				0, MR_NETLINK_GROUP_EVENTS, GFP_ATOMIC);
}

/* Called by comp.c (through notify.c) under the transport's lock. */
static void mr_netlink_path_failover(struct mr_qp *qp,
				     const struct mr_notify_failover *f)
{
	struct sk_buff *msg;
	void *hdr;

	msg = mr_netlink_event_new(qp, METAROCE_CMD_PATH_FAILOVER_NTF, &hdr);
	if (!msg)
		return;
	if (nla_put_u32(msg, METAROCE_A_EVENT_PATH_ID, f->path_id) ||
	    nla_put_u16(msg, METAROCE_A_EVENT_OLD_EPOCH, f->old_epoch) ||
	    nla_put_u16(msg, METAROCE_A_EVENT_NEW_EPOCH, f->new_epoch) ||
	    nla_put_u16(msg, METAROCE_A_EVENT_OLD_SPORT, f->old_sport) ||
	    nla_put_u16(msg, METAROCE_A_EVENT_NEW_SPORT, f->new_sport) ||
	    nla_put_u32(msg, METAROCE_A_EVENT_MOVED, f->moved)) {
		nlmsg_free(msg);
		return;
	}
	mr_netlink_event_send(qp, msg, hdr);
}

static void mr_netlink_qp_error(struct mr_qp *qp, u8 reason)
{
	struct sk_buff *msg;
	void *hdr;

	msg = mr_netlink_event_new(qp, METAROCE_CMD_QP_ERROR_NTF, &hdr);
	if (!msg)
		return;
	if (nla_put_u8(msg, METAROCE_A_EVENT_REASON, reason)) {
		nlmsg_free(msg);
		return;
	}
	mr_netlink_event_send(qp, msg, hdr);
}

/* Called by plane.c (through notify.c), in any context. */
static void mr_netlink_plane_event(struct mr_dev *dev, u32 id,
				   const char *netdev, bool up, u8 reason)
{
	struct sk_buff *msg;
	void *hdr;

	if (!rcu_access_pointer(dev->mrn) ||
	    !genl_has_listeners(&mr_netlink_family, dev_net(dev->ndev),
				MR_NETLINK_GROUP_EVENTS))
		return;
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_ATOMIC);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &mr_netlink_family, 0,
			  up ? METAROCE_CMD_PLANE_UP_NTF :
			       METAROCE_CMD_PLANE_DOWN_NTF);
	if (!hdr ||
	    nla_put_u32(msg, METAROCE_A_EVENT_DEV_INDEX, dev->ib_dev.index) ||
	    nla_put_string(msg, METAROCE_A_EVENT_DEV_NAME,
			   dev_name(&dev->ib_dev.dev)) ||
	    nla_put_u32(msg, METAROCE_A_EVENT_PLANE, id) ||
	    nla_put_string(msg, METAROCE_A_EVENT_PLANE_NETDEV, netdev) ||
	    nla_put_u8(msg, METAROCE_A_EVENT_PLANE_REASON, reason)) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_end(msg, hdr);
	genlmsg_multicast_netns(&mr_netlink_family, dev_net(dev->ndev), msg, 0,
				MR_NETLINK_GROUP_EVENTS, GFP_ATOMIC);
}

static const struct mr_notify_ops mr_netlink_notify_ops = {
	.path_failover = mr_netlink_path_failover,
	.qp_error = mr_netlink_qp_error,
	.plane = mr_netlink_plane_event,
};

static const struct genl_ops mr_netlink_ops[] = {
	{
		.cmd = METAROCE_CMD_DEV_GET,
		.doit = mr_netlink_dev_get_doit,
		.dumpit = mr_netlink_dev_get_dumpit,
		.policy = mr_netlink_dev_get_policy,
		.maxattr = ARRAY_SIZE(mr_netlink_dev_get_policy) - 1,
	},
	{
		.cmd = METAROCE_CMD_DEV_SET,
		.doit = mr_netlink_dev_set_doit,
		.policy = mr_netlink_dev_set_policy,
		.maxattr = ARRAY_SIZE(mr_netlink_dev_set_policy) - 1,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = METAROCE_CMD_QP_GET,
		.doit = mr_netlink_qp_get_doit,
		.start = mr_netlink_qp_get_start,
		.dumpit = mr_netlink_qp_get_dumpit,
		.policy = mr_netlink_qp_policy,
		.maxattr = ARRAY_SIZE(mr_netlink_qp_policy) - 1,
	},
	{
		.cmd = METAROCE_CMD_PATH_GET,
		.start = mr_netlink_path_get_start,
		.dumpit = mr_netlink_path_get_dumpit,
		.policy = mr_netlink_path_policy,
		.maxattr = ARRAY_SIZE(mr_netlink_path_policy) - 1,
	},
	{
		.cmd = METAROCE_CMD_PLANE_GET,
		.start = mr_netlink_plane_get_start,
		.dumpit = mr_netlink_plane_get_dumpit,
		.policy = mr_netlink_plane_policy,
		.maxattr = ARRAY_SIZE(mr_netlink_plane_policy) - 1,
	},
	{
		.cmd = METAROCE_CMD_PLANE_ADD,
		.doit = mr_netlink_plane_set_doit,
		.policy = mr_netlink_plane_policy,
		.maxattr = ARRAY_SIZE(mr_netlink_plane_policy) - 1,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = METAROCE_CMD_PLANE_DEL,
		.doit = mr_netlink_plane_set_doit,
		.policy = mr_netlink_plane_policy,
		.maxattr = ARRAY_SIZE(mr_netlink_plane_policy) - 1,
		.flags = GENL_UNS_ADMIN_PERM,
	},
};

static struct genl_family mr_netlink_family __ro_after_init = {
	.name = METAROCE_GENL_NAME,
	.version = METAROCE_GENL_VERSION,
	.netnsok = true,
	/* Handlers take the device list's and the QPs' locks themselves. */
	.parallel_ops = true,
	.module = THIS_MODULE,
	.ops = mr_netlink_ops,
	.n_ops = ARRAY_SIZE(mr_netlink_ops),
	/* Every command gets strict validation. */
	.resv_start_op = METAROCE_CMD_DEV_GET,
	.mcgrps = mr_netlink_mcgrps,
	.n_mcgrps = ARRAY_SIZE(mr_netlink_mcgrps),
};

int __init mr_netlink_init(void)
{
	int err;

	err = genl_register_family(&mr_netlink_family);
	if (err)
		return err;
	mr_notify_register(&mr_netlink_notify_ops);
	return 0;
}

void mr_netlink_exit(void)
{
	mr_notify_unregister();
	genl_unregister_family(&mr_netlink_family);
}
