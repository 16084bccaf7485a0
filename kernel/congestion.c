// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Congestion control's settings. The sender engine (proto/sender.c) runs
 * proto/cc.c, which holds the arithmetic (protocol.rst, "Congestion
 * control"): each ACK of a path feeds its path's and its connection's
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
