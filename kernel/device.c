// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ib_device: creation, registration, and the verbs that describe the
 * device and its port (query_device, query_port, ucontext, PD).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_arp.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include "ah.h"
#include "counters.h"
#include "cq.h"
#include "crypt.h"
#include "device.h"
#include "local.h"
#include "mmap.h"
#include "mr.h"
#include "mw.h"
#include "plane.h"
#include "qp.h"
#include "restrack.h"
#include "share.h"
#include "socket.h"
#include "srq.h"

static_assert((int)MR_MTU_256 == (int)IB_MTU_256);
static_assert((int)MR_MTU_4096 == (int)IB_MTU_4096);

/* Port state as the netdev dictates it: up, carrier, and a usable MTU. */
enum ib_port_state mr_device_port_state(struct mr_dev *dev)
{
	struct net_device *ndev = dev->ndev;

	if (netif_running(ndev) && netif_carrier_ok(ndev) &&
	    mr_dev_active_mtu(dev) != MR_MTU_NONE)
		return IB_PORT_ACTIVE;
	return IB_PORT_DOWN;
}

/* The netdev's link speed in Mbit/s, 0 if it reports none; under RTNL. */
/*
 * The netdev changed (under RTNL): the receiver's capacity follows its
 * speed, and a change of port state goes to ib_core's clients as an
 * async event.
 */
void mr_device_port_update(struct mr_dev *dev, struct net_device *ndev)
{
	enum ib_port_state state = mr_device_port_state(dev);
	struct ib_event event = {
		.device = &dev->ib_dev,
		.element.port_num = MR_PORT,
	};

	mr_share_link_speed(dev, mr_plane_link_mbps(dev));
	if (xchg(&dev->port_state, state) == state)
		return;
	event.event = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
						IB_EVENT_PORT_ERR;
	ibdev_info(&dev->ib_dev, "port %s on %s (mtu %u)\n",
		   state == IB_PORT_ACTIVE ? "ACTIVE" : "DOWN", ndev->name,
		   ndev->mtu);
	ib_dispatch_event(&event);
}

static int mr_device_query(struct ib_device *ib_dev,
			   struct ib_device_attr *attr, struct ib_udata *udata)
{
	if (udata->inlen || udata->outlen)
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->sys_image_guid = ib_dev->node_guid;
	attr->vendor_id = METAROCE_VENDOR_ID;
	attr->vendor_part_id = METAROCE_VENDOR_PART_ID;
	attr->max_pd = MR_MAX_PD;
	attr->max_mr = MR_MAX_MR;
	attr->max_mw = MR_MAX_MR;	/* MWs share the MRs' key space */
	attr->max_mr_size = MR_MAX_MR_SIZE;
	attr->page_size_cap = PAGE_SIZE;
	attr->max_cq = MR_MAX_CQ;
	attr->max_cqe = MR_MAX_CQE;
	attr->max_qp = MR_MAX_QP;
	attr->max_qp_wr = MR_MAX_QP_WR;
	attr->max_send_sge = MR_MAX_SGE;
	attr->max_recv_sge = MR_MAX_SGE;
	attr->max_srq = MR_MAX_SRQ;
	attr->max_srq_wr = MR_MAX_SRQ_WR;
	attr->max_srq_sge = MR_MAX_SGE;
	attr->max_sge_rd = MR_MAX_SGE;
	attr->max_qp_rd_atom = MR_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = MR_MAX_RD_ATOMIC;
	attr->max_res_rd_atom = MR_MAX_RD_ATOMIC * MR_MAX_QP;
	attr->max_pkeys = 1;
	attr->max_ah = MR_MAX_AH;
	attr->atomic_cap = IB_ATOMIC_HCA;
	/* Fast registration, local and remote invalidation (mr.c, qp.c). */
	attr->device_cap_flags = IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B;
	attr->max_fast_reg_page_list_len = MR_MAX_FAST_REG_PAGES;
	/* Devices are created by `rdma link add`, so users may delete them. */
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	return 0;
}

static int mr_device_query_port(struct ib_device *ib_dev, u32 port,
				struct ib_port_attr *attr)
{
	struct net_device *ndev = to_mr_dev(ib_dev)->ndev;
	enum mr_mtu active;

	/* ib_core zeroes *attr before calling us. */
	active = mr_dev_active_mtu(to_mr_dev(ib_dev));
	attr->state = mr_device_port_state(to_mr_dev(ib_dev));
	attr->phys_state = netif_running(ndev) && netif_carrier_ok(ndev) ?
				   IB_PORT_PHYS_STATE_LINK_UP :
				   IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = active == MR_MTU_NONE ? IB_MTU_256 :
						   (enum ib_mtu)active;
	attr->gid_tbl_len = MR_GID_TABLE_LEN;
	attr->pkey_tbl_len = 1;
	attr->ip_gids = true;
	attr->max_msg_sz = BIT(31);
	attr->port_cap_flags = IB_PORT_CM_SUP;

	/* Fails once ib_core has let go of the netdev during unregistration. */
	if (ib_get_eth_speed(ib_dev, port, &attr->active_speed,
			     &attr->active_width)) {
		attr->active_speed = IB_SPEED_SDR;
		attr->active_width = IB_WIDTH_1X;
	}
	return 0;
}

static int mr_device_port_immutable(struct ib_device *ib_dev, u32 port,
				    struct ib_port_immutable *immutable)
{
	/*
	 * RoCEv2-type GIDs (IP addresses) only. MADs go over QP1 (the GSI
	 * QP, a UD QP in ud.c), so ib_mad, ib_cm and rdma_cm use the port.
	 */
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->gid_tbl_len = MR_GID_TABLE_LEN;
	immutable->pkey_tbl_len = 1;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer mr_device_link_layer(struct ib_device *ib_dev,
						 u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int mr_device_query_pkey(struct ib_device *ib_dev, u32 port, u16 index,
				u16 *pkey)
{
	if (index > 0)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static int mr_device_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	return 0;
}

static void mr_device_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * Nothing to revoke on netns moves or hot unplug: mapped rings are
 * vmalloc memory that lives until its last mapping goes, and a
 * disassociated device writes to none.
 */
static void mr_device_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

static int mr_device_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct mr_dev *dev = to_mr_dev(ibpd->device);

	if (atomic_inc_return(&dev->num_pd) > MR_MAX_PD) {
		atomic_dec(&dev->num_pd);
		ibdev_dbg(&dev->ib_dev, "PD limit of %u reached\n", MR_MAX_PD);
		return -ENOSPC;
	}
	return 0;
}

static int mr_device_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_mr_dev(ibpd->device)->num_pd);
	return 0;
}

static struct rdma_hw_stats *mr_device_alloc_stats(struct ib_device *ib_dev,
						   u32 port)
{
	return mr_counters_alloc_stats();
}

static int mr_device_get_stats(struct ib_device *ib_dev,
			       struct rdma_hw_stats *stats, u32 port, int index)
{
	struct mr_dev *dev = to_mr_dev(ib_dev);

	mr_counters_sum(dev, stats->value);
	stats->value[MR_CNT_RX_DROP_NO_DEV] = mr_socket_rx_no_dev(dev);
	/* The per-QP ones: ib_core adds what the counters counted. */
	memset(&stats->value[MR_NUM_COUNTERS], 0,
	       MR_NUM_QP_COUNTERS * sizeof(*stats->value));
	return MR_NUM_PORT_COUNTERS;
}

/* The last op ib_core calls on a device, registered or not. */
static void mr_device_dealloc_driver(struct ib_device *ib_dev)
{
	struct mr_dev *dev = to_mr_dev(ib_dev);

	mr_restrack_dev_fini(dev);
	mr_qp_dev_fini(dev);
	mr_plane_dev_fini(dev);
	mr_mr_dev_fini(dev);
	mr_share_dev_fini(dev);
	/* Nothing reads the device any more: detached already, or now. */
	mr_socket_dev_detach(dev);
	mr_crypt_dev_fini(dev);
	mr_counters_free(dev);
	netdev_put(dev->ndev, &dev->ndev_tracker);
}

static const struct ib_device_ops mr_device_ops = {
	.owner = THIS_MODULE,
	.driver_id = (enum rdma_driver_id)METAROCE_DRIVER_ID,
	.uverbs_abi_ver = METAROCE_UVERBS_ABI_VERSION,

	.alloc_hw_port_stats = mr_device_alloc_stats,
	.alloc_mr = mr_mr_alloc_fast,
	.alloc_mw = mr_mw_alloc,
	.alloc_pd = mr_device_alloc_pd,
	.alloc_ucontext = mr_device_alloc_ucontext,
	.counter_alloc_stats = mr_restrack_counter_alloc_stats,
	.counter_bind_qp = mr_restrack_counter_bind_qp,
	.counter_dealloc = mr_restrack_counter_dealloc,
	.counter_unbind_qp = mr_restrack_counter_unbind_qp,
	.counter_update_stats = mr_restrack_counter_update_stats,
	.create_ah = mr_ah_create,
	.create_cq = mr_cq_create,
	.create_qp = mr_qp_create,
	.create_srq = mr_srq_create,
	.create_user_ah = mr_ah_create,
	.dealloc_driver = mr_device_dealloc_driver,
	.dealloc_mw = mr_mw_dealloc,
	.dealloc_pd = mr_device_dealloc_pd,
	.dealloc_ucontext = mr_device_dealloc_ucontext,
	.dereg_mr = mr_mr_dereg,
	.destroy_ah = mr_ah_destroy,
	.destroy_cq = mr_cq_destroy,
	.destroy_qp = mr_qp_destroy,
	.destroy_srq = mr_srq_destroy,
	.disassociate_ucontext = mr_device_disassociate_ucontext,
	.fill_res_qp_entry = mr_restrack_fill_qp,
	.get_dma_mr = mr_mr_get_dma,
	.get_hw_stats = mr_device_get_stats,
	.get_link_layer = mr_device_link_layer,
	.get_port_immutable = mr_device_port_immutable,
	.map_mr_sg = mr_mr_map_sg,
	.mmap = mr_mmap_map,
	.mmap_free = mr_mmap_free,
	.modify_qp = mr_qp_modify,
	.modify_srq = mr_srq_modify,
	.poll_cq = mr_cq_poll,
	.post_recv = mr_qp_post_recv,
	.post_send = mr_qp_post_send,
	.post_srq_recv = mr_srq_post_recv,
	.query_device = mr_device_query,
	.query_pkey = mr_device_query_pkey,
	.query_port = mr_device_query_port,
	.query_qp = mr_qp_query,
	.query_srq = mr_srq_query,
	.reg_user_mr = mr_mr_reg_user,
	.req_notify_cq = mr_cq_req_notify,
	.resize_cq = mr_cq_resize,

	INIT_RDMA_OBJ_SIZE(ib_ah, mr_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, mr_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, mr_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, mr_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, mr_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, mr_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, mr_ucontext, ibuc),
};

/* Create and register a metaroce device on @ndev, named @ibdev_name. */
/* What a new device is before anything that can fail. */
static void mr_device_init(struct mr_dev *dev, struct net_device *ndev)
{
	dev->ib_dev.node_type = RDMA_NODE_IB_CA;
	dev->ib_dev.phys_port_cnt = 1;
	mr_plane_dev_init(dev);
	dev->ib_dev.num_comp_vectors = num_possible_cpus();
	/* Commands for what a provider does not map, and older providers. */
	dev->ib_dev.uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POLL_CQ) |
				       BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ) |
				       BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				       BIT_ULL(IB_USER_VERBS_CMD_POST_RECV) |
				       BIT_ULL(IB_USER_VERBS_CMD_POST_SRQ_RECV);
	addrconf_addr_eui48((unsigned char *)&dev->ib_dev.node_guid,
			    ndev->dev_addr);
	dev->ndev = ndev;
	netdev_hold(ndev, &dev->ndev_tracker, GFP_KERNEL);
	atomic_set(&dev->num_pd, 0);
	atomic_set(&dev->num_cq, 0);
	atomic_set(&dev->num_srq, 0);
	atomic_set(&dev->num_ah, 0);
	mr_mr_dev_init(dev);
	mr_qp_dev_init(dev);
	mr_restrack_dev_init(dev);

	ib_set_device_ops(&dev->ib_dev, &mr_device_ops);
	dev->ib_dev.driver_def = mr_local_uapi_defs;	/* MW binds */
}

int mr_device_add(const char *ibdev_name, struct net_device *ndev)
{
	struct mr_dev *dev;
	int err;

	dev = ib_alloc_device(mr_dev, ib_dev);
	if (!dev)
		return -ENOMEM;
	mr_device_init(dev, ndev);

	/*
	 * The psk as it is now, for the device's life (sets mtu_extra).
	 * dealloc_driver undoes everything from here on.
	 */
	err = mr_crypt_dev_init(dev, ibdev_name);
	if (err)
		goto err_dealloc;
	if (ndev->mtu < mr_mtu_min_netdev() + dev->mtu_extra) {
		pr_err("%s: netdev %s has mtu %u, metaroce with encryption needs at least %u\n",
		       ibdev_name, ndev->name, ndev->mtu,
		       mr_mtu_min_netdev() + dev->mtu_extra);
		err = -EINVAL;
		goto err_dealloc;
	}
	dev->port_state = mr_device_port_state(dev);

	/* Counters first: ib_core reads them from registration on. */
	err = mr_counters_init(dev);
	if (!err)
		err = mr_share_dev_init(dev);
	if (!err)
		err = mr_socket_dev_attach(dev);
	if (err)
		goto err_dealloc;
	rtnl_lock();
	mr_share_link_speed(dev, mr_plane_link_mbps(dev));
	rtnl_unlock();

	err = ib_device_set_netdev(&dev->ib_dev, ndev, MR_PORT);
	if (err)
		goto err_dealloc;

	err = ib_register_device(&dev->ib_dev, ibdev_name, NULL);
	if (err) {
		pr_err("%s: registering the RDMA device failed (%d)\n",
		       ibdev_name, err);
		goto err_dealloc;
	}
	ibdev_info(&dev->ib_dev, "added on %s (mtu %u, rdma mtu %u, port %s%s)\n",
		   ndev->name, ndev->mtu,
		   mr_mtu_bytes(mr_dev_active_mtu(dev)),
		   dev->port_state == IB_PORT_ACTIVE ? "ACTIVE" : "DOWN",
		   dev->crypt ? ", encrypted with the psk" : "");
	return 0;

err_dealloc:
	ib_dealloc_device(&dev->ib_dev);
	return err;
}
