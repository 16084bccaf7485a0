// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address handles, and the translation of a RoCE v2 address vector into
 * the flow a packet takes: RC QPs keep one from modify_qp, UD send WRs
 * take one from their AH. An AH is only that flow; it holds no route,
 * which is looked up per packet as for RC.
 */
#include <kunit/visibility.h>
#include <net/ipv6.h>
#include <rdma/ib_addr.h>

#include "ah.h"
#include "crypt.h"
#include "socket.h"

/**
 * mr_ah_av_to_flow() - the peer of a RoCE v2 address vector
 * @dev: the device
 * @ah: the vector, its source GID attribute resolved by ib_core
 * @flow: filled with both addresses and the MetaRoCE port; sport is 0,
 *	  for the caller to choose
 *
 * Return: 0, or -EINVAL for a vector we cannot send to.
 */
int mr_ah_av_to_flow(struct mr_dev *dev, const struct rdma_ah_attr *ah,
		     struct mr_flow *flow)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(ah);
	const struct ib_gid_attr *sgid_attr = grh->sgid_attr;

	if (ah->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(ah) & IB_AH_GRH)) {
		ibdev_dbg(&dev->ib_dev, "AV without a RoCE GRH (type %d)\n",
			  ah->type);
		return -EINVAL;
	}
	if (rdma_ah_get_port_num(ah) != MR_PORT) {
		ibdev_dbg(&dev->ib_dev, "AV on port %u\n",
			  rdma_ah_get_port_num(ah));
		return -EINVAL;
	}
	if (!sgid_attr || sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP) {
		ibdev_dbg(&dev->ib_dev,
			  "AV source GID %u is not a RoCE v2 GID\n",
			  grh->sgid_index);
		return -EINVAL;
	}
	memcpy(&flow->saddr, sgid_attr->gid.raw, sizeof(flow->saddr));
	memcpy(&flow->daddr, grh->dgid.raw, sizeof(flow->daddr));
	flow->oif = 0;
	if (ipv6_addr_v4mapped(&flow->saddr) !=
	    ipv6_addr_v4mapped(&flow->daddr)) {
		ibdev_dbg(&dev->ib_dev,
			  "AV source %pI6c and destination %pI6c differ in family\n",
			  &flow->saddr, &flow->daddr);
		return -EINVAL;
	}
	if (ipv6_addr_any(&flow->daddr) ||
	    rdma_is_multicast_addr(&flow->daddr)) {
		ibdev_dbg(&dev->ib_dev, "AV destination %pI6c is not unicast\n",
			  &flow->daddr);
		return -EINVAL;
	}
	flow->sport = 0;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_ah_av_to_flow);

/*
 * Kernel and user AHs alike. Only an encrypting device's keys for the
 * peer may sleep, and are made here only when the caller may.
 */
int mr_ah_create(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		 struct ib_udata *udata)
{
	struct mr_dev *dev = to_mr_dev(ibah->device);
	int err;

	if (atomic_inc_return(&dev->num_ah) > MR_MAX_AH) {
		ibdev_dbg(&dev->ib_dev, "AH limit of %u reached\n", MR_MAX_AH);
		err = -ENOMEM;
		goto err;
	}
	err = mr_ah_av_to_flow(dev, init->ah_attr, &to_mr_ah(ibah)->flow);
	if (!err) {
		if (init->flags & RDMA_CREATE_AH_SLEEPABLE)
			mr_crypt_peer_prepare(dev, &to_mr_ah(ibah)->flow);
		return 0;
	}
err:
	atomic_dec(&dev->num_ah);
	return err;
}

int mr_ah_destroy(struct ib_ah *ibah, u32 flags)
{
	atomic_dec(&to_mr_dev(ibah->device)->num_ah);
	return 0;
}
