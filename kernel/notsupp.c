// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ib_core refuses to register a device without these verbs. The transport
 * that implements them is not written yet, so each one fails with
 * EOPNOTSUPP and says which verb was asked for; query_device advertises
 * zero QPs, CQs and MRs to match.
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

static int mr_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			struct ib_udata *udata)
{
	return mr_notsupp(ibcq->device, "create_cq");
}

static int mr_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	return mr_notsupp(ibcq->device, "destroy_cq");
}

static int mr_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	return mr_notsupp(ibcq->device, "poll_cq");
}

static int mr_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	return mr_notsupp(ibcq->device, "req_notify_cq");
}

static struct ib_mr *mr_get_dma_mr(struct ib_pd *ibpd, int access)
{
	return ERR_PTR(mr_notsupp(ibpd->device, "get_dma_mr"));
}

static struct ib_mr *mr_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				    u64 iova, int access,
				    struct ib_udata *udata)
{
	return ERR_PTR(mr_notsupp(ibpd->device, "reg_user_mr"));
}

static int mr_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	return mr_notsupp(ibmr->device, "dereg_mr");
}

const struct ib_device_ops mr_notsupp_ops = {
	.create_cq = mr_create_cq,
	.create_qp = mr_create_qp,
	.dereg_mr = mr_dereg_mr,
	.destroy_cq = mr_destroy_cq,
	.destroy_qp = mr_destroy_qp,
	.get_dma_mr = mr_get_dma_mr,
	.modify_qp = mr_modify_qp,
	.poll_cq = mr_poll_cq,
	.post_recv = mr_post_recv,
	.post_send = mr_post_send,
	.reg_user_mr = mr_reg_user_mr,
	.req_notify_cq = mr_req_notify_cq,
};
