// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Timers: one timer per QP serves every path's tail probe and RTO and the
 * RNR wait. The engines only write deadlines (struct mr_tx_path.deadline,
 * mr_xport.rnr_deadline, through mr_xport_arm_path()); this file arms the
 * timer for the earliest one and, when it fires, tells the engines what is
 * due: the completer for a path, the requester for the end of an RNR wait.
 * It is one of the transport's entry points, with receive.c and xport.c.
 */
#include "comp.h"
#include "req.h"
#include "timers.h"

/* The timer fired: run what is due, send what that allows, re-arm. */
static void mr_timers_fire(struct timer_list *t)
{
	struct mr_xport *x = from_timer(x, t, timer);
	u64 now = mr_xport_now();
	u32 i;

	spin_lock_bh(&x->lock);
	if (!x->tx_on)
		goto out;
	if (x->rnr_wait && x->rnr_deadline <= now)
		mr_req_rnr_resume(x);
	for (i = 0; i < x->npaths && x->tx_on; i++) {
		u64 d = x->path[i].deadline;

		if (d && d <= now)
			mr_comp_path_timeout(x, i, now);
	}
	mr_req_push(x);
	mr_timers_sync(x);
out:
	spin_unlock_bh(&x->lock);
}

void mr_timers_init(struct mr_xport *x)
{
	timer_setup(&x->timer, mr_timers_fire, 0);
	x->timer_ns = 0;
}

/* The transport stopped (tx_on is false): the timer no longer re-arms. */
void mr_timers_stop(struct mr_xport *x)
{
	del_timer_sync(&x->timer);
}

/*
 * Arm the timer for the earliest deadline, while the requester runs.
 * Called with the transport locked, by every entry point before it unlocks.
 */
void mr_timers_sync(struct mr_xport *x)
{
	u64 next = x->rnr_wait ? x->rnr_deadline : 0, now;
	u32 i;

	if (!x->tx_on)
		return;
	for (i = 0; i < x->npaths; i++) {
		u64 d = x->path[i].deadline;

		if (d && (!next || d < next))
			next = d;
	}
	if (!next || (next == x->timer_ns && timer_pending(&x->timer)))
		return;
	now = mr_xport_now();
	x->timer_ns = next;
	mod_timer(&x->timer, jiffies + 1 +
		  (next > now ? nsecs_to_jiffies(next - now) : 0));
}
