// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ib_core refuses to register a device without these verbs. The transport
 * that implements them is not written yet, so each one fails with
 * EOPNOTSUPP and says which verb was asked for; query_device advertises
 * zero QPs to match.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "metaroce.h"

static int mr_notsupp(struct ib_device *ib_dev, const char *verb)
{
	ibdev_dbg(ib_dev, "%s is not supported yet\n", verb);
	return -EOPNOTSUPP;
}

static int mr_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
			struct ib_udata *udata)
{
	return mr_notsupp(ibqp->device, "create_qp");
}

static int mr_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			int mask, struct ib_udata *udata)
{
	return mr_notsupp(ibqp->device, "modify_qp");
}

static int mr_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	return mr_notsupp(ibqp->device, "destroy_qp");
}

static int mr_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			const struct ib_send_wr **bad_wr)
{
	*bad_wr = wr;
	return mr_notsupp(ibqp->device, "post_send");
}

static int mr_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	*bad_wr = wr;
	return mr_notsupp(ibqp->device, "post_recv");
}

const struct ib_device_ops mr_notsupp_ops = {
	.create_qp = mr_create_qp,
	.destroy_qp = mr_destroy_qp,
	.modify_qp = mr_modify_qp,
	.post_recv = mr_post_recv,
	.post_send = mr_post_send,
};
