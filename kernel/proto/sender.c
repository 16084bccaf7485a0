// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The sender engine (sender.h): path choice, scoreboards, RTT, congestion
 * windows and pacing, the ACKs' losses resent at once, the tail probe,
 * the RTO and failover. protocol.rst gives the rules this file follows.
 */
#include "coalesce.h"
#include "sender.h"

void mr_sender_timing_default(struct mr_sender_timing *tm)
{
	*tm = (struct mr_sender_timing){
		.rto_init_ns = MR_RTO_INIT_NS,
		.rto_min_ns = MR_RTO_MIN_NS,
		.rto_max_ns = MR_RTO_MAX_NS,
		.pto_min_ns = MR_PTO_MIN_NS,
	};
}

/*
 * Give the engine its memory: @npaths paths, which the host owns; their
 * packet records it borrows as they send (mr_sender_env_ring_get()). It
 * is stopped until started.
 */
void mr_sender_setup(struct mr_sender *s, struct mr_tx_path *path,
		     u32 npaths, u32 fail_after,
		     const struct mr_sender_timing *tm,
		     const struct mr_cc_params *ccp)
{
	u32 i;

	s->on = false;
	s->npaths = npaths;
	s->fail_after = fail_after;
	s->tm = *tm;
	s->ccp = *ccp;
	s->path = path;
	for (i = 0; i < npaths; i++) {
		path[i].ring = NULL;
		path[i].ring_used = false;
	}
	mr_requeue_init(&s->requeue);
	s->rings = 0;
}

/* Path @p has packets to record: its ring, borrowed if need be. */
static struct mr_tx_ring *mr_sender_ring(struct mr_sender *s,
					 struct mr_tx_path *p)
{
	struct mr_tx_ring *r = p->ring;

	p->ring_used = true;
	if (r)
		return r;
	r = mr_sender_env_ring_get(s);
	if (!r)
		return NULL;
	s->rings++;
	mr_requeue_clear(r);
	p->ring = r;
	p->ring_psn = p->sb.nxt;
	p->sb.mark = r->mark;
	return r;
}

/* Path @p lets go of its ring (NULL if it had none). */
static struct mr_tx_ring *mr_sender_ring_detach(struct mr_tx_path *p)
{
	struct mr_tx_ring *r = p->ring;

	p->ring = NULL;
	p->sb.mark = NULL;
	return r;
}

static void mr_sender_ring_free(struct mr_sender *s, struct mr_tx_ring *r)
{
	s->rings--;
	mr_sender_env_ring_put(s, r);
}

/* Path @p gives its ring back: it is idle, or failed. */
static void mr_sender_ring_put(struct mr_sender *s, struct mr_tx_path *p)
{
	struct mr_tx_ring *r = mr_sender_ring_detach(p);

	if (r)
		mr_sender_ring_free(s, r);
}

/**
 * mr_sender_release() - give back every ring the engine holds
 * @s: the engine, stopped or never started
 *
 * The host calls it before it frees the paths; mr_sender_start() calls it
 * too. Packets in flight are forgotten.
 */
void mr_sender_release(struct mr_sender *s)
{
	struct mr_tx_ring *r;
	u32 i;

	for (i = 0; i < s->npaths; i++)
		mr_sender_ring_put(s, &s->path[i]);
	while ((r = mr_requeue_take(&s->requeue)))
		mr_sender_ring_free(s, r);
}

/**
 * mr_sender_trim() - give back the rings of paths that stayed idle
 * @s: the engine
 *
 * The host calls it now and then while mr_sender_holds(): a path with
 * nothing in flight keeps its ring until a whole period between two calls
 * went without a packet on it, so a busy path does not borrow and return
 * memory for every message, and an idle connection holds none.
 *
 * Return: whether rings are still held.
 */
bool mr_sender_trim(struct mr_sender *s)
{
	u32 i;

	for (i = 0; i < s->npaths; i++) {
		struct mr_tx_path *p = &s->path[i];

		if (!p->ring || p->sb.una != p->sb.nxt)
			continue;
		if (p->ring_used)
			p->ring_used = false;
		else
			mr_sender_ring_put(s, p);
	}
	return mr_sender_holds(s);
}

static void mr_sender_apply(struct mr_sender *s, u32 id)
{
	mr_paths_set_window(&s->ps, id,
			    mr_cc_path_window(&s->ccp, &s->path[id].cc));
}

/*
 * Set the deadline of path @p: first a tail probe, after about two round
 * trips without an ACK (a lost last packet has nothing behind it to show
 * the gap), then the RTO proper.
 */
static void mr_sender_arm(struct mr_sender *s, struct mr_tx_path *p, u64 now)
{
	p->deadline = now + mr_rto_wait(&p->rto, p->probed, s->tm.pto_min_ns);
	p->armed_ns = now;
}

static void mr_sender_path_quiet(struct mr_tx_path *p)
{
	p->deadline = 0;
	p->probed = false;
	p->deferred = false;
}

/**
 * mr_sender_start() - start sending, every path and window from scratch
 * @s: the engine
 * @psn: the first PSN of every path
 * @early: start each path in a new epoch instead, which begins at PSN 0
 *	(a responder that must answer before it has its own sq_psn)
 * @seed: of the paths' source ports
 * @pkt_bytes: what a full packet puts on the wire: pacing counts it
 *
 * Return: 0, or -MR_EFIELD for a bad path count.
 */
int mr_sender_start(struct mr_sender *s, u32 psn, bool early, u32 seed,
		    u32 pkt_bytes)
{
	u32 i;

	if (mr_paths_init(&s->ps, s->npaths, s->fail_after, seed))
		return -MR_EFIELD;
	mr_sender_release(s);
	mr_cc_conn_init(&s->cc, &s->ccp, pkt_bytes);
	for (i = 0; i < s->npaths; i++) {
		struct mr_tx_path *p = &s->path[i];

		mr_sack_tx_init(&p->sb, psn, NULL);
		if (early) {
			mr_paths_restart(&s->ps, i);
			mr_sack_tx_reset(&p->sb, s->ps.path[i].epoch);
		}
		mr_rto_init(&p->rto, s->tm.rto_init_ns, s->tm.rto_min_ns,
			    s->tm.rto_max_ns);
		mr_sender_path_quiet(p);
		mr_cc_path_init(&p->cc, &s->cc, &s->ccp);
		mr_sender_apply(s, i);
	}
	s->pace_ns = 0;
	s->rtos = 0;
	s->on = true;
	return 0;
}

/* Send nothing more; no deadline is left armed. */
void mr_sender_stop(struct mr_sender *s)
{
	u32 i;

	s->on = false;
	for (i = 0; i < s->npaths; i++)
		s->path[i].deadline = 0;
}

/* Whether the connection's window has room for one more packet. */
bool mr_sender_room(const struct mr_sender *s)
{
	return s->ps.inflight < mr_cc_conn_window(&s->ccp, &s->cc);
}

/*
 * Whether the next new packet must wait for pacing; then s->pace_ns says
 * until when, and the host calls mr_sender_pace_over() at that time.
 */
bool mr_sender_pace_wait(struct mr_sender *s, u64 now)
{
	u64 wait = mr_cc_pace_delay(&s->ccp, &s->cc, now);

	if (!wait)
		return false;
	s->pace_ns = now + wait;
	mr_sender_env_event(s, MR_SEV_PACED, 0, 0);
	return true;
}

void mr_sender_pace_over(struct mr_sender *s)
{
	s->pace_ns = 0;
}

/**
 * mr_sender_take() - a path and a PSN for the next packet
 * @s: the engine
 * @avoid: a path not to take if another has room; -1: any
 * @psn: the PSN taken
 * @now: the time, ns
 *
 * Within the connection's window, on the path with the most room. A path
 * whose scoreboard is full (an old hole waits for its probe or RTO while
 * 256 later PSNs went out) is passed over: the others still have room. So
 * is one that cannot borrow its ring; when none could, the pacer's wait
 * (s->pace_ns) says when to try again. The caller sends on the path with
 * mr_sender_send().
 *
 * Return: the path, or a negative error when none may send now.
 */
int mr_sender_take(struct mr_sender *s, int avoid, u32 *psn, u64 now)
{
	bool short_of_rings = false;
	struct mr_tx_path *p;
	u32 tries;
	int id;

	if (!mr_sender_room(s))
		return -MR_ENOSPC;
	for (tries = 0; tries < s->npaths; tries++) {
		id = avoid < 0 ? mr_paths_pick(&s->ps) :
				 mr_paths_pick_other(&s->ps, (u32)avoid);
		if (id < 0)
			return id;
		p = &s->path[id];
		if (!mr_sender_ring(s, p))
			short_of_rings = true;
		else if (!mr_sack_tx_send(&p->sb, psn))
			return id;
		mr_paths_unpick(&s->ps, (u32)id);
	}
	if (!short_of_rings)
		return -MR_ENOSPC;
	s->pace_ns = now + MR_RING_WAIT_NS;
	return -MR_EAGAIN;
}

/**
 * mr_sender_send() - record packet @tp as sent at @psn of path @id, send it
 * @s: the engine
 * @id: the path, from mr_sender_take() (or the scoreboard, for a resend)
 * @psn: its PSN
 * @tp: which packet (copied)
 * @why: MR_SEND_FIRST, or why it goes again
 * @now: the time, ns
 *
 * The packet that fills its path's window asks for an ACK at once: the
 * receiver coalesces ACKs over packets this path may not send. One that
 * fills the connection's windows well below the hint says so
 * (mr_cc_window_limited()). A packet lost before the wire counts as sent:
 * its PSN is taken, so the SACK or the RTO resends it, and the path's
 * timer is set when this is its only packet out, whatever the outcome (a
 * PSN out without a timer stalls).
 *
 * Return: what mr_sender_env_xmit() returned.
 */
int mr_sender_send(struct mr_sender *s, u32 id, u32 psn,
		   const struct mr_tx_pkt *tp, enum mr_send_why why, u64 now)
{
	struct mr_tx_path *p = &s->path[id];
	struct mr_tx_pkt *rec = &p->ring->pkt[psn % MR_SACK_WINDOW];
	const struct mr_path *ps = &s->ps.path[id];
	u8 flags = ps->inflight >= ps->window ? MR_FLAG_ACK_REQ : 0;
	u32 limited;
	int n;

	if (mr_cc_window_limited(&s->ccp, &s->cc, s->ps.inflight))
		flags |= MR_FLAG_WINDOW_LIMITED;

	*rec = *tp;
	rec->sends = why != MR_SEND_FIRST && tp->sends < 255 ? tp->sends + 1 : 1;
	rec->why = (u8)why;
	rec->sent_ns = now;
	rec->order = ++s->tx_order;
	n = mr_sender_env_xmit(s, id, psn, rec, flags, why);
	if (n > 0) {
		p->n_sent++;
		if (why != MR_SEND_FIRST) {
			p->n_resent++;
			mr_sender_env_event(s, MR_SEV_RESENT, id, why);
		}
		limited = s->cc.hint_limited;
		mr_cc_pace_sent(&s->ccp, &s->cc, (u32)n, now);
		if (s->cc.hint_limited != limited)
			mr_sender_env_event(s, MR_SEV_HINT_LIMITED, id, 0);
	}
	if (!p->deadline && s->on)
		mr_sender_arm(s, p, now);
	return n;
}

/*
 * Send PSN @psn of path @id again, for reason @why; @charge: it had been
 * reported lost, and is in flight again.
 */
static void mr_sender_resend(struct mr_sender *s, u32 id, u32 psn,
			     bool charge, enum mr_send_why why, u64 now)
{
	struct mr_tx_path *p = &s->path[id];
	struct mr_tx_pkt tp;

	if (mr_sack_tx_resend(&p->sb, psn))
		return;
	if (charge)
		mr_paths_recharge(&s->ps, id);
	tp = p->ring->pkt[psn % MR_SACK_WINDOW];
	mr_sender_send(s, id, psn, &tp, why, now);
}

/*
 * Send the packets moved off failed paths, oldest first, as the windows
 * allow; those of messages complete meanwhile are dropped. Return whether
 * none is left: new packets go only after them.
 */
bool mr_sender_push_moved(struct mr_sender *s, u64 now)
{
	while (s->requeue.count && s->on) {
		const struct mr_tx_pkt *e = mr_requeue_front(&s->requeue);
		struct mr_tx_pkt tp = {
			.msn = e->msn, .offset = e->offset,
			.gen = e->gen, .resp = e->resp,
		};
		struct mr_tx_ring *done;
		u32 psn;
		int id;

		if (!mr_sender_env_stale(s, &tp)) {
			id = mr_sender_take(s, -1, &psn, now);
			if (id < 0)
				return false;
			mr_sender_send(s, (u32)id, psn, &tp, MR_SEND_MOVED, now);
			if (!s->on)
				return false;
		}
		done = mr_requeue_pop(&s->requeue);
		if (done)
			mr_sender_ring_free(s, done);
	}
	return !s->requeue.count;
}

/* Lower @oldest to the MSN of request @tp if that is older, but not @from. */
static bool mr_sender_older(const struct mr_tx_pkt *tp, u32 from, u32 *oldest)
{
	if (!tp->resp && !mr_seq_before(tp->msn, from) &&
	    mr_seq_before(tp->msn, *oldest))
		*oldest = tp->msn;
	return *oldest == from;
}

/**
 * mr_sender_oldest_unacked() - the oldest message not yet delivered whole
 * @s: the engine
 * @from: the oldest message not complete: older ones are skipped
 * @upto: the answer when no packet of a message before it is out
 *
 * Of the request packets not acknowledged, on the paths or waiting to
 * move off a failed one, the oldest message from @from on: no message
 * before it lacks a packet at the receiver, as far as its ACKs tell.
 *
 * Return: that MSN, or @upto.
 */
u32 mr_sender_oldest_unacked(const struct mr_sender *s, u32 from, u32 upto)
{
	const struct mr_tx_ring *r;
	u32 i, psn;

	if (upto == from)
		return upto;
	for (i = 0; i < s->npaths; i++) {
		const struct mr_tx_path *p = &s->path[i];

		for (psn = p->sb.una; p->ring &&
		     mr_sack_tx_next_unacked(&p->sb, &psn); psn++)
			if (mr_sender_older(&p->ring->pkt[psn % MR_SACK_WINDOW],
					    from, &upto))
				return upto;
	}
	for (r = s->requeue.head; r; r = r->next)
		for (i = 0; i < MR_SACK_WINDOW; i++)
			if ((r->moving[i / 64] >> (i % 64) & 1) &&
			    mr_sender_older(&r->pkt[i], from, &upto))
				return upto;
	return upto;
}

/*
 * The RTT sample of an ACK: from the oldest packet it newly acknowledges
 * that went only once (Karn). That packet waited for the receiver's ACK
 * coalescing (every MR_ACK_EVERY packets of the path, or a completion),
 * so the estimate, and the tail probe and RTO built on it, cover the time
 * an ACK really takes, as RFC 7323 timestamps do; the packet that
 * triggered the ACK would measure only the wire.
 */
static u64 mr_sender_rtt_sample(struct mr_tx_path *p,
				const struct mr_sack_res *res, u64 now)
{
	u64 rtt;
	u32 w;

	for (w = 0; w < MR_SACK_WORDS; w++) {
		u64 once = res->acked[w] & ~res->ambiguous[w];
		u32 psn;

		if (!once)
			continue;
		psn = res->base + 64 * w + (u32)__builtin_ctzll(once);
		rtt = now - p->ring->pkt[psn % MR_SACK_WINDOW].sent_ns;
		mr_rto_sample(&p->rto, rtt);
		return rtt;
	}
	return 0;
}

/*
 * Note the connection's delivery progress for mr_rto_early(); returns the
 * newest send order this ACK acknowledged.
 */
static u64 mr_sender_progress(struct mr_sender *s, const struct mr_tx_path *p,
			      const struct mr_sack_res *res, u64 now)
{
	u64 newest = 0;
	u32 w, i;

	s->acked_ns = now;
	for (w = 0; w < MR_SACK_WORDS; w++) {
		u64 bits = res->acked[w];

		while (bits) {
			i = (u32)__builtin_ctzll(bits);
			bits &= bits - 1;
			i = (res->base + 64 * w + i) % MR_SACK_WINDOW;
			if (p->ring->pkt[i].order > newest)
				newest = p->ring->pkt[i].order;
		}
	}
	if (newest > s->acked_front)
		s->acked_front = newest;
	return newest;
}

/*
 * Whether the ACK answers a needless resend: the receiver acknowledges a
 * duplicate at once, naming it, so an ACK that names a packet we already
 * knew had arrived, and resent, means the original arrived as well (the
 * path reordered it, or delayed it), not that it was lost.
 */
static bool mr_sender_spurious(const struct mr_tx_path *p,
			       const struct mr_base_hdr *ack)
{
	return p->ring && mr_sack_tx_arrived(&p->sb, ack->epoch, ack->psn) &&
	       p->ring->pkt[ack->psn % MR_SACK_WINDOW].sends > 1;
}

/* Feed congestion control one ACK of path @id. */
static void mr_sender_cc_ack(struct mr_sender *s, u32 id,
			     const struct mr_sack_res *res, bool spurious,
			     u64 rtt, u64 acked_order,
			     const struct mr_ack_hdr *ack, u64 now)
{
	struct mr_tx_path *p = &s->path[id];
	struct mr_cc_ack_info info = {
		.acked = res->n_acked,
		.lost = res->n_lost,
		.spurious = spurious,
		.ecn_count = ack->ecn_count,
		.rtt_ns = rtt,
		.srtt_ns = p->rto.srtt,
		.acked_order = acked_order,
		.sent_order = s->tx_order,
		.now_ns = now,
		.hint_kbps = ack->rate_hint,
	};
	enum mr_cc_verdict v;

	v = mr_cc_ack(&s->ccp, &s->cc, &p->cc, &info);
	mr_sender_apply(s, id);
	if (v != MR_CC_HOLD && v != MR_CC_INCREASE)
		mr_sender_env_event(s, MR_SEV_CC_DECREASE, id, v);
}

/**
 * mr_sender_ack() - an ACK (decoded, of this connection) from the receiver
 * @s: the engine, started
 * @ack: the ACK
 * @now: the time, ns
 *
 * It updates the path's scoreboard, RTT and windows, resends at once what
 * it reports lost, and restarts the path's timer from its progress.
 *
 * Return: 0 when it was taken (it may have opened the windows);
 * -MR_EFIELD for a path the connection does not have, -MR_ESTALE when it
 * says nothing new (reordered, or of an abandoned epoch), another
 * negative error when it is bogus.
 */
int mr_sender_ack(struct mr_sender *s, const struct mr_pkt *ack, u64 now)
{
	u32 id = ack->base.path, i, psn;
	u64 rtt, acked_order = 0;
	struct mr_sack_res res;
	struct mr_tx_path *p;
	bool spurious;
	int err;

	if (id >= s->npaths)
		return -MR_EFIELD;
	p = &s->path[id];
	spurious = mr_sender_spurious(p, &ack->base);
	err = mr_sack_tx_ack(&p->sb, ack->base.epoch, ack->ack.cum_psn,
			     ack->ack.sack, &res);
	if (err)
		return err;
	/* A gap the SACK reported arrived twice: the hosts reorder. */
	if (spurious &&
	    p->ring->pkt[ack->base.psn % MR_SACK_WINDOW].why == MR_SEND_SACK) {
		mr_sack_tx_reordered(&p->sb);
		mr_sender_env_event(s, MR_SEV_SPURIOUS, id, p->sb.reorder);
	}
	rtt = mr_sender_rtt_sample(p, &res, now);
	mr_paths_ack(&s->ps, id, res.n_acked, res.n_lost);
	if (res.n_acked) {
		acked_order = mr_sender_progress(s, p, &res, now);
		s->rtos = 0;
		mr_sender_path_quiet(p);
	}
	mr_sender_cc_ack(s, id, &res, spurious, rtt, acked_order, &ack->ack,
			 now);
	for (i = 0; i < MR_SACK_WINDOW && res.n_lost; i++) {
		if (!mr_sack_res_test(res.lost, i))
			continue;
		psn = res.base + i;
		p->n_sack_gaps++;
		mr_sender_env_event(s, MR_SEV_SACK_GAP, id, psn);
		mr_sender_resend(s, id, psn, true, MR_SEND_SACK, now);
		if (!s->on)
			return 0;
	}
	/* Restart the RTO from this progress while packets remain out. */
	if (p->sb.una != p->sb.nxt && !p->deadline)
		mr_sender_arm(s, p, now);
	return 0;
}

/**
 * mr_sender_hello() - what the handshake learnt, before any data
 * @s: the engine
 * @hint_kbps: the rate hint of the peer's proven HELLO (0: none)
 * @rtt_ns: the handshake's round trip (0: unknown)
 * @now: the time, ns
 *
 * The receiver's first hint: it bounds the first flight (mr_cc_hello()).
 */
void mr_sender_hello(struct mr_sender *s, u32 hint_kbps, u64 rtt_ns, u64 now)
{
	if (s->on)
		mr_cc_hello(&s->ccp, &s->cc, hint_kbps, rtt_ns, s->tx_order,
			    now);
}

/* The earliest deadline of the paths, ns; 0: none. */
u64 mr_sender_expiry(const struct mr_sender *s)
{
	u64 next = 0;
	u32 i;

	if (!s->on)
		return 0;
	for (i = 0; i < s->npaths; i++) {
		u64 d = s->path[i].deadline;

		if (d && (!next || d < next))
			next = d;
	}
	return next;
}

/* A path failed: its unacknowledged packets go to the others. */
static void mr_sender_failover(struct mr_sender *s, u32 id)
{
	struct mr_tx_path *p = &s->path[id];
	u16 old_epoch = p->sb.epoch, old_sport = s->ps.path[id].sport;
	u64 rto = mr_rto_get(&p->rto);
	struct mr_tx_ring *r = p->ring;
	u32 psn, moved = 0;

	for (psn = p->sb.una; r && mr_sack_tx_next_unacked(&p->sb, &psn); psn++) {
		if (mr_sender_env_stale(s, &r->pkt[psn % MR_SACK_WINDOW]))
			continue;
		mr_requeue_mark(r, psn);
		moved++;
	}
	/* The ring moves whole: the requeue needs no memory of its own. */
	if (moved)
		mr_requeue_push(&s->requeue, mr_sender_ring_detach(p));
	else
		mr_sender_ring_put(s, p);
	mr_paths_restart(&s->ps, id);
	mr_cc_path_exit(&p->cc, &s->cc, &s->ccp);
	mr_cc_path_init(&p->cc, &s->cc, &s->ccp);
	mr_sender_apply(s, id);
	mr_sack_tx_reset(&p->sb, s->ps.path[id].epoch);
	/*
	 * A fresh estimator, but it starts from the backed-off timeout: if
	 * the peer, not the route, is silent, the retry budget must still
	 * span seconds rather than a few initial timeouts.
	 */
	mr_rto_init(&p->rto, rto, s->tm.rto_min_ns, s->tm.rto_max_ns);
	mr_sender_path_quiet(p);
	s->n_failovers++;
	mr_sender_env_failover(s, id, old_epoch, old_sport, moved);
}

/**
 * mr_sender_abandon() - path @id's packets in flight are lost
 * @s: the sender
 * @id: the path
 *
 * The network the path crossed is gone (a plane out of service): its
 * unacknowledged packets go to the other paths now, without waiting for
 * its timeouts, and it restarts on a new port and epoch, as after a
 * failover. A path with nothing in flight is left as it is.
 */
void mr_sender_abandon(struct mr_sender *s, u32 id)
{
	if (!s->on || id >= s->npaths || s->path[id].sb.una == s->path[id].sb.nxt)
		return;
	mr_sender_failover(s, id);
}

/*
 * Whether the timer of path @p fired too early for its oldest packet, PSN
 * @psn: older packets of the connection are still coming back
 * (mr_rto_early()), or its answer is arriving.
 */
static bool mr_sender_timer_early(struct mr_sender *s, struct mr_tx_path *p,
				  u32 psn)
{
	const struct mr_tx_pkt *tp = &p->ring->pkt[psn % MR_SACK_WINDOW];

	if (mr_rto_early(tp->order, s->acked_front, MR_ACK_EVERY * s->npaths,
			 p->armed_ns, s->acked_ns, p->deferred)) {
		p->deferred |= s->acked_front >= tp->order;
		return true;
	}
	return mr_sender_env_answered(s, tp);
}

/*
 * The timer of path @id is due. Too early (older packets still coming
 * back): wait again. Else the tail probe, the first time; then the RTO,
 * which backs off, fails the path after fail_after in a row and the
 * connection after the retry budget.
 */
static void mr_sender_path_timeout(struct mr_sender *s, u32 id, u64 now)
{
	struct mr_tx_path *p = &s->path[id];
	/* Every path gets retries + 1 timeouts in a row, spread as may be. */
	u32 budget = (mr_sender_env_retries(s) + 1) * s->npaths * s->fail_after;
	u32 psn = p->sb.una;

	p->deadline = 0;
	if (!mr_sack_tx_next_unacked(&p->sb, &psn))
		return;
	if (mr_sender_timer_early(s, p, psn)) {
		mr_sender_env_event(s, MR_SEV_DEFERRED, id, psn);
		mr_sender_arm(s, p, now);
		return;
	}
	if (!p->probed) {
		/* The tail probe: the oldest packet again, no backoff. */
		p->probed = true;
		p->n_probes++;
		mr_sender_env_event(s, MR_SEV_PROBE, id, psn);
		mr_sender_resend(s, id, psn, false, MR_SEND_PROBE, now);
		if (s->on && !p->deadline && p->sb.una != p->sb.nxt)
			mr_sender_arm(s, p, now);
		return;
	}
	p->n_rtos++;
	mr_sender_env_event(s, MR_SEV_RTO, id, psn);
	mr_rto_timeout(&p->rto);
	mr_cc_timeout(&s->ccp, &s->cc, &p->cc, s->tx_order);
	mr_sender_apply(s, id);
	if (++s->rtos > budget) {
		mr_sender_env_retry_exceeded(s);
		return;
	}
	if (mr_paths_timeout(&s->ps, id, 0)) {
		mr_sender_failover(s, id);
		return;
	}
	/*
	 * Only the oldest packet goes again: a late ACK then costs one
	 * packet, and a real tail loss is repaired one packet per RTO
	 * (losses before a later arrival the SACK reports at once).
	 */
	mr_sender_resend(s, id, psn, false, MR_SEND_RTO, now);
	/* Nothing was sent (it had just been reported): still watch it. */
	if (s->on && !p->deadline && p->sb.una != p->sb.nxt)
		mr_sender_arm(s, p, now);
}

/* The time is @now: run every path timer due by then. */
void mr_sender_timeout(struct mr_sender *s, u64 now)
{
	u32 i;

	for (i = 0; i < s->npaths && s->on; i++) {
		u64 d = s->path[i].deadline;

		if (d && d <= now)
			mr_sender_path_timeout(s, i, now);
	}
}
