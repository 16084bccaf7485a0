// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A QP as the rdma tool shows it. `rdma resource show qp -dd` gets the
 * transport's details (paths, windows, SRTTs, loss recovery) as driver
 * attributes. `rdma statistic qp` binds QPs to counters: a counter counts
 * what its QPs do while bound, in the per-QP block of the port's table
 * (counters.h). Both read the transport through mr_xport_telemetry() only.
 *
 * A bound QP's counts move into its counter when ib_core asks for the
 * counter's values and when it unbinds (ib_core unbinds before it destroys
 * a QP), so nothing is lost or counted twice: what a QP did before it was
 * bound, or after, counts nowhere. All of it is under restrack_lock.
 */
#include <linux/slab.h>
#include <rdma/restrack.h>
#include <rdma/rdma_counter.h>
#include <rdma/rdma_netlink.h>

#include "restrack.h"
#include "xport.h"

struct mr_restrack_qp {
	struct list_head node;	/* in the device's restrack_bound */
	struct mr_qp *qp;
	u64 seen[MR_NUM_QP_COUNTERS];	/* counted into its counter so far */
};

#define MR_RESTRACK_I(c) ((c) - MR_NUM_COUNTERS)

/* The counters that are u32 in the transport wrap there. */
static const u64 mr_restrack_wrap[MR_NUM_QP_COUNTERS] = {
	[MR_RESTRACK_I(MR_QPC_TX_PACKETS)] = U64_MAX,
	[MR_RESTRACK_I(MR_QPC_RETRANSMITS)] = U64_MAX,
	[MR_RESTRACK_I(MR_QPC_SACK_GAPS)] = U64_MAX,
	[MR_RESTRACK_I(MR_QPC_RTO_EVENTS)] = U64_MAX,
	[MR_RESTRACK_I(MR_QPC_TAIL_PROBES)] = U64_MAX,
	[MR_RESTRACK_I(MR_QPC_PATH_FAILOVERS)] = U64_MAX,
	[MR_RESTRACK_I(MR_QPC_RNR_NAKS)] = U64_MAX,
	[MR_RESTRACK_I(MR_QPC_CE_MARKS)] = U32_MAX,
	[MR_RESTRACK_I(MR_QPC_CC_DECREASES)] = U32_MAX,
	[MR_RESTRACK_I(MR_QPC_CC_HINT_LIMITED)] = U32_MAX,
};

void mr_restrack_dev_init(struct mr_dev *dev)
{
	mutex_init(&dev->restrack_lock);
	INIT_LIST_HEAD(&dev->restrack_bound);
	ida_init(&dev->restrack_ids);
}

/* ib_core unbinds every QP and frees every counter before this. */
void mr_restrack_dev_fini(struct mr_dev *dev)
{
	WARN_ON(!list_empty(&dev->restrack_bound));
	ida_destroy(&dev->restrack_ids);
	mutex_destroy(&dev->restrack_lock);
}

/* Driver attributes of an RC or UC QP, for `rdma resource show qp -dd`. */

/* Each path's SRTT in microseconds, comma-separated; 0: no sample yet. */
static char *mr_restrack_path_srtts(const struct mr_xport_path_info *paths,
				    u32 n)
{
	/* Up to 20 digits and a comma per path. */
	size_t size = n * 21 + 1, len = 0;
	char *buf;
	u32 i;

	buf = kmalloc(size, GFP_KERNEL);
	if (!buf)
		return NULL;
	buf[0] = '\0';
	for (i = 0; i < n; i++)
		len += scnprintf(buf + len, size - len, "%s%llu", i ? "," : "",
				 div_u64(paths[i].srtt_ns, NSEC_PER_USEC));
	return buf;
}

static int mr_restrack_put_paths(struct sk_buff *msg,
				 const struct mr_xport_path_info *paths, u32 n)
{
	u64 srtt_max = 0;
	u32 i, failed = 0;
	char *srtts;
	int err;

	for (i = 0; i < n; i++) {
		srtt_max = max(srtt_max, paths[i].srtt_ns);
		failed += paths[i].state != MR_PATH_ACTIVE;
	}
	srtts = mr_restrack_path_srtts(paths, n);
	if (!srtts)
		return -ENOMEM;
	err = rdma_nl_put_driver_u32(msg, "paths_failed", failed) ||
	      rdma_nl_put_driver_u64(msg, "srtt_max_ns", srtt_max) ||
	      rdma_nl_put_driver_string(msg, "path_srtt_us", srtts) ?
	      -EMSGSIZE : 0;
	kfree(srtts);
	return err;
}

static int mr_restrack_put_conn(struct sk_buff *msg,
				const struct mr_xport_info *xi)
{
	if (rdma_nl_put_driver_u32(msg, "paths", xi->npaths))
		return -EMSGSIZE;
	if (!xi->npaths)
		return 0;	/* before RTR: nothing else yet */
	/* Windows are in 1/1024 packets: whole packets here. */
	if (rdma_nl_put_driver_u32(msg, "conn_window",
				   xi->conn_window / MR_CC_ONE) ||
	    rdma_nl_put_driver_u32(msg, "inflight", xi->inflight) ||
	    rdma_nl_put_driver_u32(msg, "pacing_kbps", xi->pacing_kbps) ||
	    rdma_nl_put_driver_u32(msg, "rate_hint_kbps", xi->hint_kbps) ||
	    rdma_nl_put_driver_u64(msg, "srtt_ns", xi->srtt_ns) ||
	    rdma_nl_put_driver_u64(msg, "tx_packets", xi->tx_packets) ||
	    rdma_nl_put_driver_u64(msg, "retransmits", xi->retransmits) ||
	    rdma_nl_put_driver_u64(msg, "sack_gaps", xi->sack_gaps) ||
	    rdma_nl_put_driver_u64(msg, "rto_events", xi->rto_events) ||
	    rdma_nl_put_driver_u64(msg, "tail_probes", xi->tail_probes) ||
	    rdma_nl_put_driver_u64(msg, "path_failovers",
				   xi->path_failovers) ||
	    rdma_nl_put_driver_u64(msg, "rnr_naks", xi->rnr_naks) ||
	    rdma_nl_put_driver_u32(msg, "ce_marks", xi->ce_marks) ||
	    rdma_nl_put_driver_u32(msg, "map_bits", xi->map_bits) ||
	    rdma_nl_put_driver_u32(msg, "map_budget", xi->map_budget) ||
	    rdma_nl_put_driver_u32(msg, "state_bytes", xi->state_bytes))
		return -EMSGSIZE;
	return 0;
}

/* ib_device_ops.fill_res_qp_entry: UD and GSI QPs have nothing to add. */
int mr_restrack_fill_qp(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct mr_qp *qp = to_mr_qp(ibqp);
	struct mr_xport_path_info *paths;
	struct mr_xport_info xi;
	struct nlattr *nest;
	int err;

	if (!qp->xp)
		return 0;
	paths = kcalloc(MR_PATH_MAX, sizeof(*paths), GFP_KERNEL);
	if (!paths)
		return -ENOMEM;
	mr_xport_telemetry(qp, &xi, paths);
	nest = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!nest) {
		err = -EMSGSIZE;
		goto out;
	}
	err = mr_restrack_put_conn(msg, &xi);
	if (!err && xi.npaths)
		err = mr_restrack_put_paths(msg, paths, xi.npaths);
	if (err)
		nla_nest_cancel(msg, nest);
	else
		nla_nest_end(msg, nest);
out:
	kfree(paths);
	return err;
}

/* Counters: `rdma statistic qp`. */

/* What @qp has done so far, by MR_RESTRACK_I(); UD and GSI: nothing. */
static void mr_restrack_read(struct mr_qp *qp, u64 *v)
{
	struct mr_xport_info xi;

	if (!qp->xp) {
		memset(v, 0, MR_NUM_QP_COUNTERS * sizeof(*v));
		return;
	}
	mr_xport_telemetry(qp, &xi, NULL);
	v[MR_RESTRACK_I(MR_QPC_TX_PACKETS)] = xi.tx_packets;
	v[MR_RESTRACK_I(MR_QPC_RETRANSMITS)] = xi.retransmits;
	v[MR_RESTRACK_I(MR_QPC_SACK_GAPS)] = xi.sack_gaps;
	v[MR_RESTRACK_I(MR_QPC_RTO_EVENTS)] = xi.rto_events;
	v[MR_RESTRACK_I(MR_QPC_TAIL_PROBES)] = xi.tail_probes;
	v[MR_RESTRACK_I(MR_QPC_PATH_FAILOVERS)] = xi.path_failovers;
	v[MR_RESTRACK_I(MR_QPC_RNR_NAKS)] = xi.rnr_naks;
	v[MR_RESTRACK_I(MR_QPC_CE_MARKS)] = xi.ce_marks;
	v[MR_RESTRACK_I(MR_QPC_CC_DECREASES)] = xi.cc_decreases;
	v[MR_RESTRACK_I(MR_QPC_CC_HINT_LIMITED)] = xi.hint_limited;
}

/* Move what @b's QP did since the last time into @counter. */
static void mr_restrack_sync(struct mr_restrack_qp *b,
			     struct rdma_counter *counter)
{
	u64 now[MR_NUM_QP_COUNTERS];
	u32 i;

	mr_restrack_read(b->qp, now);
	for (i = 0; i < MR_NUM_QP_COUNTERS; i++) {
		counter->stats->value[MR_NUM_COUNTERS + i] +=
			(now[i] - b->seen[i]) & mr_restrack_wrap[i];
		b->seen[i] = now[i];
	}
}

/* The port's table, the device's block hidden: the port shows it. */
struct rdma_hw_stats *
mr_restrack_counter_alloc_stats(struct rdma_counter *counter)
{
	struct rdma_hw_stats *stats = mr_counters_alloc_stats();

	if (stats)
		bitmap_set(stats->is_disabled, 0, MR_NUM_COUNTERS);
	return stats;
}

/*
 * ib_device_ops.counter_bind_qp, under the counter's lock. A counter gets
 * its id (cntn) from its first QP, as ib_core expects of the driver; it
 * counts the QP from now on, from where the counter stands (0 if new).
 */
int mr_restrack_counter_bind_qp(struct rdma_counter *counter,
				struct ib_qp *ibqp)
{
	struct mr_dev *dev = to_mr_dev(ibqp->device);
	struct mr_qp *qp = to_mr_qp(ibqp);
	struct mr_restrack_qp *b;
	bool new_id = false;
	int id, err;

	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	b->qp = qp;
	mutex_lock(&dev->restrack_lock);
	if (qp->counted) {
		err = -EBUSY;
		goto err;
	}
	if (!counter->id) {
		id = ida_alloc_min(&dev->restrack_ids, 1, GFP_KERNEL);
		if (id < 0) {
			err = id;
			goto err;
		}
		counter->id = id;
		new_id = true;
	}
	mr_restrack_read(qp, b->seen);
	list_add_tail(&b->node, &dev->restrack_bound);
	qp->counted = b;
	ibqp->counter = counter;
	mutex_unlock(&dev->restrack_lock);
	return 0;

err:
	if (new_id) {
		ida_free(&dev->restrack_ids, counter->id);
		counter->id = 0;
	}
	mutex_unlock(&dev->restrack_lock);
	kfree(b);
	return err;
}

/* ib_device_ops.counter_unbind_qp: the counter keeps what it counted. */
int mr_restrack_counter_unbind_qp(struct ib_qp *ibqp)
{
	struct mr_dev *dev = to_mr_dev(ibqp->device);
	struct mr_qp *qp = to_mr_qp(ibqp);
	struct mr_restrack_qp *b;

	mutex_lock(&dev->restrack_lock);
	b = qp->counted;
	if (!b || !ibqp->counter) {
		mutex_unlock(&dev->restrack_lock);
		return -EINVAL;
	}
	mr_restrack_sync(b, ibqp->counter);
	list_del(&b->node);
	qp->counted = NULL;
	ibqp->counter = NULL;
	mutex_unlock(&dev->restrack_lock);
	kfree(b);
	return 0;
}

/* ib_device_ops.counter_update_stats, under the counter's lock. */
int mr_restrack_counter_update_stats(struct rdma_counter *counter)
{
	struct mr_dev *dev = to_mr_dev(counter->device);
	struct mr_restrack_qp *b;

	mutex_lock(&dev->restrack_lock);
	list_for_each_entry(b, &dev->restrack_bound, node)
		if (b->qp->ibqp.counter == counter)
			mr_restrack_sync(b, counter);
	mutex_unlock(&dev->restrack_lock);
	return 0;
}

/* ib_device_ops.counter_dealloc: its last QP is gone; ib_core frees it. */
int mr_restrack_counter_dealloc(struct rdma_counter *counter)
{
	struct mr_dev *dev = to_mr_dev(counter->device);

	if (counter->id)
		ida_free(&dev->restrack_ids, counter->id);
	return 0;
}
