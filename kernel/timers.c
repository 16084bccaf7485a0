// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Timers: one timer per QP serves every path's tail probe and RTO, the
 * RNR wait, the next HELLO and the engines' trim of idle memory; two
 * high-resolution ones pace new packets (the pacer) and bound how long
 * an ACK is held (the acker). The engines only write deadlines (the
 * sender engine's, mr_sender_expiry(), and its pace_ns; the receiver
 * engine's, mr_receiver_expiry(); rnr_deadline; the handshake's next
 * HELLO); this file arms the timers for them and, when one fires, tells
 * the engines what is due: the sender engine for its paths, the receiver
 * engine for held ACKs, the handshake for a HELLO, the requester for the
 * end of an RNR wait or of a pacing wait, both engines for the trim. It
 * is one of the transport's entry points, with receive.c and xport.c.
 */
#include "comp.h"
#include "handshake.h"
#include "req.h"
#include "timers.h"

/*
 * How often the engines may give back memory that stayed unused: from
 * one to two periods after the last message, so that a busy connection
 * keeps what it borrowed and an idle one holds none.
 */
#define MR_TRIM_NS	(50 * NSEC_PER_MSEC)

/* The trim is due: the engines give back what stayed idle a period. */
static void mr_timers_trim(struct mr_xport *x, u64 now)
{
	if (!x->timers.trim_ns || x->timers.trim_ns > now)
		return;
	x->timers.trim_ns = 0;
	mr_sender_trim(&x->snd);
	/* Responses go only once every packet of ours is acknowledged. */
	if (mr_sender_drained(&x->snd))
		mr_responder_trim(&x->rsp);
}

/* The timer fired: run what is due, send what that allows, re-arm. */
static void mr_timers_fire(struct timer_list *t)
{
	struct mr_xport *x = from_timer(x, t, timers.timer);
	u64 now = mr_xport_now();

	spin_lock_bh(&x->lock);
	if (!x->snd.on)
		goto out;
	if (x->req.rnr_wait && x->req.rnr_deadline <= now)
		mr_requester_rnr_resume(&x->req);
	mr_sender_timeout(&x->snd, now);
	if (mr_requester_settle(&x->req, now, MR_SETTLE_NS))
		mr_comp_complete(x);
	mr_timers_trim(x, now);
	if (mr_handshake_send(x))
		mr_comp_retry_exceeded(x);
	mr_req_push(x);
	mr_timers_sync(x);
out:
	spin_unlock_bh(&x->lock);
}

/* The pacing wait is over: send what the windows allow now. */
static enum hrtimer_restart mr_timers_pace(struct hrtimer *t)
{
	struct mr_xport *x = container_of(t, struct mr_xport, timers.pacer);

	spin_lock_bh(&x->lock);
	x->timers.pacer_ns = 0;
	mr_sender_pace_over(&x->snd);
	mr_req_push(x);
	mr_timers_sync(x);
	spin_unlock_bh(&x->lock);
	return HRTIMER_NORESTART;
}

/* Held ACKs are due: send them. */
static enum hrtimer_restart mr_timers_ack(struct hrtimer *t)
{
	struct mr_xport *x = container_of(t, struct mr_xport, timers.acker);

	spin_lock_bh(&x->lock);
	x->timers.acker_ns = 0;
	if (x->ack.rx_on)
		mr_receiver_timeout(&x->rcv, mr_xport_now());
	mr_timers_sync(x);
	spin_unlock_bh(&x->lock);
	return HRTIMER_NORESTART;
}

void mr_timers_init(struct mr_xport *x)
{
	timer_setup(&x->timers.timer, mr_timers_fire, 0);
	x->timers.timer_ns = 0;
	/* Soft: it runs in softirq, like the receive path it competes with. */
	hrtimer_init(&x->timers.pacer, CLOCK_MONOTONIC,
		     HRTIMER_MODE_ABS_SOFT);
	x->timers.pacer.function = mr_timers_pace;
	x->timers.pacer_ns = 0;
	hrtimer_init(&x->timers.acker, CLOCK_MONOTONIC,
		     HRTIMER_MODE_ABS_SOFT);
	x->timers.acker.function = mr_timers_ack;
	x->timers.acker_ns = 0;
	x->timers.trim_ns = 0;
}

/* The transport stopped (not on): the timers no longer re-arm. */
void mr_timers_stop(struct mr_xport *x)
{
	del_timer_sync(&x->timers.timer);
	hrtimer_cancel(&x->timers.pacer);
	hrtimer_cancel(&x->timers.acker);
	x->timers.trim_ns = 0;
}

/* Arm the pacer when a paced packet waits (pace_ns set). */
static void mr_timers_sync_pacer(struct mr_xport *x)
{
	u64 pace = x->snd.pace_ns;

	if (!pace || pace == x->timers.pacer_ns)
		return;
	x->timers.pacer_ns = pace;
	hrtimer_start(&x->timers.pacer, ns_to_ktime(pace),
		      HRTIMER_MODE_ABS_SOFT);
}

/*
 * Arm the timers: the acker for held ACKs while the responder runs, the
 * pacer for a paced packet and the timer for the earliest deadline while
 * the requester does. Called with the transport locked, by every entry
 * point before it unlocks.
 */
void mr_timers_sync(struct mr_xport *x)
{
	u64 next = mr_requester_expiry(&x->req), now, d, ack;

	if (x->hello.deadline && (!next || x->hello.deadline < next))
		next = x->hello.deadline;

	ack = mr_receiver_expiry(&x->rcv);
	if (x->ack.rx_on && ack && ack != x->timers.acker_ns) {
		x->timers.acker_ns = ack;
		hrtimer_start(&x->timers.acker, ns_to_ktime(ack),
			      HRTIMER_MODE_ABS_SOFT);
	}
	if (!x->snd.on)
		return;
	mr_timers_sync_pacer(x);
	d = mr_sender_expiry(&x->snd);
	if (d && (!next || d < next))
		next = d;
	if (!x->timers.trim_ns && (mr_sender_holds(&x->snd) ||
				   mr_responder_holds(&x->rsp)))
		x->timers.trim_ns = mr_xport_now() + MR_TRIM_NS;
	d = x->timers.trim_ns;
	if (d && (!next || d < next))
		next = d;
	if (!next || (next == x->timers.timer_ns &&
		      timer_pending(&x->timers.timer)))
		return;
	now = mr_xport_now();
	x->timers.timer_ns = next;
	mod_timer(&x->timers.timer, jiffies + 1 +
		  (next > now ? nsecs_to_jiffies(next - now) : 0));
}
