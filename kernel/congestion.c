// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Congestion control, the sender's side: the glue between the transport
 * and proto/cc.c, which holds the arithmetic (protocol.rst, "Congestion
 * control"). Each ACK of a path feeds its path's and its connection's
 * windows; the path's window goes to the scheduler (proto/path.c, which
 * sends packets to the paths with the most room), the connection's gates
 * its packets in flight, and new packets, requests and responses alike,
 * leave paced at the connection's rate. A resend goes at once.
 *
 * The module parameters are the settings a new device starts with; each
 * device then has its own (struct mr_dev_settings, changed over netlink),
 * and a QP takes its device's when it is created. A write of the
 * parameter cc sets it for every device: of the parameter and a device's
 * own setting, the later write counts (mr_congestion_dev_enabled()).
 */
#include <linux/module.h>

#include "congestion.h"
#include "counters.h"
#include "trace.h"

static bool cc = true;
/* Bumped by every write of cc: a device's own setting is older then. */
static atomic_t mr_congestion_cc_writes = ATOMIC_INIT(0);

static int mr_congestion_set_cc(const char *val,
				const struct kernel_param *kp)
{
	int err = param_set_bool(val, kp);

	if (!err)
		atomic_inc(&mr_congestion_cc_writes);
	return err;
}

static const struct kernel_param_ops mr_congestion_cc_ops = {
	.set = mr_congestion_set_cc,
	.get = param_get_bool,
};

module_param_cb(cc, &mr_congestion_cc_ops, &cc, 0644);
MODULE_PARM_DESC(cc, "congestion control: ECN, delay and loss drive the windows, with pacing (default on)");

static bool cc_ecn = true;
module_param(cc_ecn, bool, 0644);
MODULE_PARM_DESC(cc_ecn, "with cc: react to ECN marks (default on)");

static bool cc_delay = true;
module_param(cc_delay, bool, 0644);
MODULE_PARM_DESC(cc_delay, "with cc: react to delay above the target (default on)");

static bool cc_loss = true;
module_param(cc_loss, bool, 0644);
MODULE_PARM_DESC(cc_loss, "with cc: react to loss bursts (default on)");

static uint cc_gain_shift = 4;
module_param(cc_gain_shift, uint, 0644);
MODULE_PARM_DESC(cc_gain_shift, "DCTCP gain g = 2^-N, 1-16 (default 4: 1/16)");

static uint cc_init_path_window;
module_param(cc_init_path_window, uint, 0644);
MODULE_PARM_DESC(cc_init_path_window, "a path's initial window, packets (0: the default)");

static uint cc_max_path_window;
module_param(cc_max_path_window, uint, 0644);
MODULE_PARM_DESC(cc_max_path_window, "a path's largest window, packets, at most 256 (0: the default)");

static uint cc_init_conn_window;
module_param(cc_init_conn_window, uint, 0644);
MODULE_PARM_DESC(cc_init_conn_window, "a connection's initial window, packets (0: the default)");

static uint cc_max_conn_window;
module_param(cc_max_conn_window, uint, 0644);
MODULE_PARM_DESC(cc_max_conn_window, "a connection's largest window, packets (0: the default)");

/*
 * proto/cc.c's default (2 ms) is tuned for RTTs that jitter by a
 * millisecond; a guest under TCG stalls for 1.5-3.5 ms now and then.
 */
static uint cc_target_us = 5000;
module_param(cc_target_us, uint, 0644);
MODULE_PARM_DESC(cc_target_us, "the least delay above the base RTT that counts as queueing, us (default 5000)");

static uint cc_loss_burst;
module_param(cc_loss_burst, uint, 0644);
MODULE_PARM_DESC(cc_loss_burst, "losses of a path in one round that may mean congestion (0: the default)");

/* The count of writes of cc, to date a device's own setting with. */
u32 mr_congestion_cc_stamp(void)
{
	return atomic_read(&mr_congestion_cc_writes);
}

/* Whether @set has congestion control on: its own, or a later cc's. */
bool mr_congestion_dev_enabled(const struct mr_dev_settings *set)
{
	if (set->cc_stamp != mr_congestion_cc_stamp())
		return READ_ONCE(cc);
	return set->cc.enabled;
}

/* The parameters a new device takes: the defaults, then the knobs. */
void mr_congestion_defaults(struct mr_cc_params *prm)
{
	struct mr_cc_params def;

	mr_cc_params_default(&def);
	*prm = def;
	prm->enabled = READ_ONCE(cc);
	prm->ecn = READ_ONCE(cc_ecn);
	prm->delay = READ_ONCE(cc_delay);
	prm->loss = READ_ONCE(cc_loss);
	prm->g_shift = READ_ONCE(cc_gain_shift);
	prm->init_path_window = READ_ONCE(cc_init_path_window) ?:
				def.init_path_window;
	prm->max_path_window = READ_ONCE(cc_max_path_window) ?:
			       def.max_path_window;
	prm->init_conn_window = READ_ONCE(cc_init_conn_window) ?:
				def.init_conn_window;
	prm->max_conn_window = READ_ONCE(cc_max_conn_window) ?:
			       def.max_conn_window;
	if (READ_ONCE(cc_target_us))
		prm->target_floor_ns = (u64)READ_ONCE(cc_target_us) * NSEC_PER_USEC;
	prm->loss_burst = READ_ONCE(cc_loss_burst) ?: def.loss_burst;
	/*
	 * No window below one packet here: the guest's RTTs jitter by
	 * milliseconds, and a window of 1/64 packet paced at 64 RTTs per
	 * packet turns a run of spurious signals (netem's reordering or
	 * random marks) into a stall. The scale model keeps the default for
	 * its incasts of a thousand senders.
	 */
	def.min_window = MR_CC_ONE;
	prm->min_window = MR_CC_ONE;
	if (mr_cc_params_check(prm)) {
		pr_warn_once("metaroce: congestion control parameters out of range, using the defaults\n");
		*prm = def;
		prm->enabled = READ_ONCE(cc);
	}
}

static void mr_congestion_apply(struct mr_xport *x, u32 id)
{
	mr_paths_set_window(&x->ps, id,
			    mr_cc_path_window(&x->ccp, &x->path[id].cc));
}

/* The requester starts: every path and the connection from scratch. */
void mr_congestion_start(struct mr_xport *x)
{
	u32 i;

	/* x->ccp: the device's settings when the QP was created. */
	/* Pacing counts what leaves: headers and a full payload. */
	mr_cc_conn_init(&x->cc, &x->ccp, x->mtu + MR_TRANSPORT_HDR_RESERVE);
	for (i = 0; i < x->npaths; i++) {
		mr_cc_path_init(&x->path[i].cc, &x->cc, &x->ccp);
		mr_congestion_apply(x, i);
	}
	x->pace_ns = 0;
}

/* Path @id failed and restarts in a new epoch: a new window, too. */
void mr_congestion_path_restart(struct mr_xport *x, u32 id)
{
	struct mr_cc_path *p = &x->path[id].cc;

	mr_cc_path_exit(p, &x->cc, &x->ccp);
	mr_cc_path_init(p, &x->cc, &x->ccp);
	mr_congestion_apply(x, id);
}

/**
 * mr_congestion_ack() - an ACK of path @id, taken by its scoreboard
 * @x: the transport, locked
 * @id: the path
 * @res: what the ACK newly acknowledged and declared lost
 * @spurious: it answers a needless resend (mr_comp_spurious())
 * @rtt_ns: the RTT sample it gave, 0 if none
 * @acked_order: the newest send order it acknowledged, 0 if none
 * @ack: the ACK's header: its CE count and rate hint
 */
void mr_congestion_ack(struct mr_xport *x, u32 id,
		       const struct mr_sack_res *res, bool spurious,
		       u64 rtt_ns, u64 acked_order,
		       const struct mr_ack_hdr *ack)
{
	struct mr_tx_path *p = &x->path[id];
	struct mr_cc_ack_info info = {
		.acked = res->n_acked,
		.lost = res->n_lost,
		.spurious = spurious,
		.ecn_count = ack->ecn_count,
		.rtt_ns = rtt_ns,
		.srtt_ns = p->rto.srtt,
		.acked_order = acked_order,
		.sent_order = x->tx_order,
		.now_ns = mr_xport_now(),
		.hint_kbps = ack->rate_hint,
	};
	enum mr_cc_verdict v;

	v = mr_cc_ack(&x->ccp, &x->cc, &p->cc, &info);
	mr_congestion_apply(x, id);
	if (v == MR_CC_HOLD || v == MR_CC_INCREASE)
		return;
	mr_stats_inc(to_mr_dev(x->qp->ibqp.device), MR_CNT_CC_DECREASES);
	trace_metaroce_cc(x->qp->ibqp.qp_num, id, v, p->cc.w.cwnd,
			  p->cc.w.alpha, x->cc.w.cwnd, p->rto.srtt,
			  x->cc.hint_kbps);
}

/* The RTO of path @id fired (not its tail probe). */
void mr_congestion_timeout(struct mr_xport *x, u32 id)
{
	mr_cc_timeout(&x->ccp, &x->cc, &x->path[id].cc, x->tx_order);
	mr_congestion_apply(x, id);
}

/* Whether the connection's window has room for one more packet. */
bool mr_congestion_room(const struct mr_xport *x)
{
	return x->ps.inflight < mr_cc_conn_window(&x->ccp, &x->cc);
}

/*
 * Whether the next new packet must wait for pacing; then x->pace_ns says
 * until when, and timers.c arms the pacer for it.
 */
bool mr_congestion_wait(struct mr_xport *x)
{
	u64 now = mr_xport_now(), wait;

	wait = mr_cc_pace_delay(&x->ccp, &x->cc, now);
	if (!wait)
		return false;
	x->pace_ns = now + wait;
	mr_stats_inc(to_mr_dev(x->qp->ibqp.device), MR_CNT_CC_PACED);
	return true;
}

/* A data packet of @bytes (headers included) left: pacing counts it. */
void mr_congestion_sent(struct mr_xport *x, u32 bytes)
{
	u32 limited = x->cc.hint_limited;

	mr_cc_pace_sent(&x->ccp, &x->cc, bytes, mr_xport_now());
	if (x->cc.hint_limited != limited)
		mr_stats_inc(to_mr_dev(x->qp->ibqp.device),
			     MR_CNT_CC_HINT_LIMITED);
}
