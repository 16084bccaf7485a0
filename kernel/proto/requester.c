// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The requester engine: see requester.h. */
#include "requester.h"
#include "window.h"

/*
 * Start over, as a new connection: on the way to RTS, or in RTR when a
 * response is due first.
 */
void mr_requester_start(struct mr_requester *r, u32 mtu, u32 rnr_retry)
{
	u32 *last = r->stream_last, n = r->nstreams;

	*r = (struct mr_requester){ .mtu = mtu, .rnr_left = rnr_retry };
	mr_requester_streams(r, last, n);
}

/*
 * A connection of @n streams (0 or 1: one), @last an array of @n the host
 * keeps for the requester. Before the first message.
 */
void mr_requester_streams(struct mr_requester *r, u32 *last, u32 n)
{
	u32 i;

	r->nstreams = n > 1 && last ? n : 0;
	r->stream_last = r->nstreams ? last : NULL;
	/* As if each stream's last message were beyond the window. */
	for (i = 0; i < r->nstreams; i++)
		last[i] = r->msn_send - MR_MSG_WINDOW;
}

/*
 * The order byte of message @msn on @stream, which starts now: how far
 * back the stream's previous message is. On one stream, always the one
 * before; one beyond the window is complete at the peer (the window
 * holds nothing older than the oldest message not complete).
 */
static u8 mr_requester_order(struct mr_requester *r, u32 msn, u16 stream)
{
	u32 back;

	if (!r->nstreams)
		return MR_ORDER_PREV;
	if (stream >= r->nstreams)
		stream = 0;
	back = msn - r->stream_last[stream];
	r->stream_last[stream] = msn;
	return back - 1 < MR_ORDER_MAX ? (u8)(back - 1) : MR_ORDER_NONE;
}

/* RTS after an early start: the RNR retries of RTS. */
void mr_requester_rts(struct mr_requester *r, u32 rnr_retry)
{
	r->rnr_left = rnr_retry;
}

/* ERR, RESET, destroy: no RNR wait holds a timer. */
void mr_requester_stop(struct mr_requester *r)
{
	r->rnr_wait = false;
}

/*
 * Recount rd_out: READs and atomics started whose response has not fully
 * arrived. One whose response is in, but which waits behind an earlier
 * message to complete, no longer occupies the responder: it does not
 * count. Kept as a running count (mr_requester_push(),
 * mr_requester_rd_answered(), mr_requester_retire()); recounted only when
 * an RNR rewind moves msn_send back.
 */
static void mr_requester_rd_recount(struct mr_requester *r)
{
	struct mr_req_msg m;
	u32 msn;

	r->rd_out = 0;
	for (msn = r->msn_head; msn != r->msn_send; msn++) {
		mr_requester_env_msg(r, msn, &m);
		r->rd_out += m.rd && !m.answered;
	}
}

/* Send packet @tp: its path and PSN were taken. False: stop pushing. */
static bool mr_requester_send(struct mr_requester *r, struct mr_sender *s,
			      int id, u32 psn, const struct mr_tx_pkt *tp,
			      u64 now)
{
	mr_sender_send(s, (u32)id, psn, tp, MR_SEND_FIRST, now);
	return s->on && !r->tx_err;
}

/*
 * The responses that are due, oldest first, as the paths allow: READ and
 * atomic responses ride this end's paths like its requests. False when
 * the paths or the pacer hold the rest.
 */
static bool mr_requester_push_responses(struct mr_requester *r,
					struct mr_sender *s, u64 now)
{
	while (mr_requester_env_response_due(r)) {
		struct mr_tx_pkt tp = {};
		u32 psn;
		int id;

		if (mr_sender_pace_wait(s, now))
			return false;
		id = mr_sender_take(s, -1, &psn, now);
		if (id < 0)
			return false;
		mr_requester_env_response(r, &tp);
		mr_sender_send(s, (u32)id, psn, &tp, MR_SEND_FIRST, now);
		if (!s->on)
			return false;
	}
	return true;
}

/* The next new packet of message @msn, @m: cut it, and move on. */
static struct mr_tx_pkt mr_requester_cut(struct mr_requester *r, u32 msn,
					 const struct mr_req_msg *m)
{
	struct mr_tx_pkt tp = { .msn = msn, .offset = r->send_off,
				.gen = r->gen };

	if (!m->started)
		mr_requester_env_start(r, msn,
				       m->consumes ? r->rsn_next++ : 0,
				       mr_requester_order(r, msn, m->stream));
	r->send_off += r->mtu;
	if (m->rd || r->send_off >= m->length) {
		r->rd_out += m->rd && !m->answered;
		r->msn_send++;
		r->send_off = 0;
		if (mr_seq_before(r->msn_hi, r->msn_send))
			r->msn_hi = r->msn_send;
	}
	return tp;
}

/**
 * mr_requester_push() - send what the windows allow
 * @r: the requester
 * @s: its sender engine, started
 * @rd_max: READs and atomics the responder executes at a time
 * @now: the time, ns
 *
 * Packets moved off a failed path go first, then responses to the peer,
 * then new requests: none while a message failed or an RNR wait holds,
 * none beyond the message window from the oldest unretired message.
 */
void mr_requester_push(struct mr_requester *r, struct mr_sender *s,
		       u32 rd_max, u64 now)
{
	u32 posted;

	if (!s->on || !mr_sender_push_moved(s, now) ||
	    !mr_requester_push_responses(r, s, now))
		return;
	if (!s->on || r->tx_err || r->rnr_wait)
		return;
	posted = mr_requester_env_posted(r);
	if (!rd_max)
		rd_max = 1;
	while (r->msn_send - r->msn_head < posted &&
	       mr_window_in(r->msn_send, r->msn_head)) {
		u32 msn = r->msn_send, psn;
		struct mr_tx_pkt tp;
		struct mr_req_msg m;
		int id;

		mr_requester_env_msg(r, msn, &m);
		if (m.rd && r->rd_out >= rd_max)
			return;
		if (mr_sender_pace_wait(s, now))
			return;
		id = mr_sender_take(s, -1, &psn, now);
		if (id < 0)
			return;
		tp = mr_requester_cut(r, msn, &m);
		if (!mr_requester_send(r, s, id, psn, &tp, now))
			return;
		/*
		 * A READ or atomic request goes twice, on two paths: if its
		 * only packet were lost, no later packet on that path might
		 * reveal the gap before the tail probe, and the responder
		 * executes nothing after it until it arrives. The responder
		 * executes it once (the second copy is a duplicate).
		 */
		if (m.rd && s->npaths > 1) {
			id = mr_sender_take(s, id, &psn, now);
			if (id < 0 || !mr_requester_send(r, s, id, psn, &tp, now))
				return;
		}
	}
}

/*
 * The message at msn_head completed and leaves (@rd_open: a READ or atomic
 * whose response never came in whole, still counted in rd_out).
 */
void mr_requester_retire(struct mr_requester *r, bool rd_open)
{
	r->rd_out -= rd_open;
	r->msn_head++;
}

/* The whole response to the READ or atomic of message @msn is in. */
void mr_requester_rd_answered(struct mr_requester *r, u32 msn)
{
	/* Counted while started: see mr_requester_rd_recount(). */
	if (mr_seq_before(msn, r->msn_send))
		r->rd_out--;
}

/**
 * mr_requester_peer_done() - an ACK reported the messages before @msn_done
 *	complete at the peer
 * @r: the requester
 * @s: its sender engine, which has taken the ACK
 * @msn_done: the ACK's "MSN done"
 *
 * A message completes only once every packet it was sent in is
 * acknowledged too: a peer that reports messages done whose packets it
 * never acknowledged (it lies, or its ACKs came out of order) completes
 * nothing until they are.
 *
 * Return: false when @msn_done names messages never sent, or the one an
 * RNR wait holds: it is bogus, and changes nothing.
 */
bool mr_requester_peer_done(struct mr_requester *r, const struct mr_sender *s,
			    u32 msn_done)
{
	/*
	 * Nothing not yet sent can be done, nor, during an RNR wait, the
	 * refused message: its data was discarded.
	 */
	if (mr_seq_before(r->msn_hi, msn_done) ||
	    (r->rnr_wait && mr_seq_before(r->rnr_msn, msn_done)))
		return false;
	if (mr_seq_before(r->peer_done, msn_done))
		r->peer_done = msn_done;
	if (mr_seq_before(r->msn_head, r->peer_done))
		r->acked = mr_sender_oldest_unacked(s, r->msn_head,
						    r->msn_send);
	return true;
}

/**
 * mr_requester_settle() - what the peer reported done, unacknowledged long
 * @r: the requester
 * @now: the time, ns
 * @after_ns: how long the oldest message may wait so
 *
 * A message the peer reported done waits for the ACKs of its last
 * packets, but not for ever: a peer that completed it and went away (its
 * QP destroyed as soon as its own last message was acknowledged) took an
 * ACK lost on one path with it, and a resend can only time out. After
 * @after_ns, what the peer reported done counts as acknowledged.
 *
 * Return: whether it did now (the host completes what it can).
 */
bool mr_requester_settle(struct mr_requester *r, u64 now, u64 after_ns)
{
	if (!mr_seq_before(r->msn_head, r->peer_done) ||
	    mr_seq_before(r->msn_head, r->acked)) {
		r->done_since = 0;
		return false;
	}
	if (!r->done_since) {
		r->done_since = now ? now : 1;
		return false;
	}
	if (now - r->done_since < after_ns)
		return false;
	r->acked = r->peer_done;
	r->done_since = 0;
	return true;
}

/*
 * Message @msn failed with the host's @status: send nothing new. False if
 * an earlier message failed already: the error it holds stands.
 */
bool mr_requester_fail(struct mr_requester *r, u32 msn, u32 status)
{
	if (r->tx_err && !mr_seq_before(msn, r->err_msn))
		return false;
	r->tx_err = true;
	r->err_msn = msn;
	r->err_status = status;
	return true;
}

/*
 * The peer refused message @msn for want of a receive: send no new data
 * until @deadline, then again from @msn. False when the @rnr_retry
 * retries are spent.
 */
bool mr_requester_rnr_wait(struct mr_requester *r, u32 msn, u32 rnr_retry,
			   u64 deadline)
{
	if (rnr_retry != MR_RNR_RETRY_INFINITE) {
		if (!r->rnr_left)
			return false;
		r->rnr_left--;
	}
	r->rnr_wait = true;
	r->rnr_msn = msn;
	r->rnr_deadline = deadline;
	return true;
}

/**
 * mr_requester_head() - whether the oldest message not retired completes
 * @r: the requester
 *
 * A failed message retires with its error once every message before it
 * has; a message retires with success once the peer reported it done and
 * acknowledged every packet of it (mr_requester_peer_done()), or, a READ
 * or atomic, once its whole response is in.
 */
enum mr_req_head mr_requester_head(struct mr_requester *r)
{
	struct mr_req_msg m;

	if (r->tx_err && r->msn_head == r->err_msn)
		return MR_REQ_HEAD_FAILED;
	if (r->msn_head == r->msn_send)
		return MR_REQ_HEAD_WAITS;
	mr_requester_env_msg(r, r->msn_head, &m);
	if (m.rd)
		return m.answered ? MR_REQ_HEAD_DONE : MR_REQ_HEAD_WAITS;
	return mr_seq_before(r->msn_head, r->peer_done) &&
	       mr_seq_before(r->msn_head, r->acked) ? MR_REQ_HEAD_DONE :
						      MR_REQ_HEAD_WAITS;
}

/**
 * mr_requester_nak() - what a NAK from the responder means
 * @r: the requester
 * @s: its sender engine, which knows what the NAK's PSN carried
 * @nak: the NAK
 * @rnr_retry: the RNR retries (MR_RNR_RETRY_INFINITE: without end)
 * @now: the time, ns
 *
 * Only a message started and not complete can be refused, by a NAK that
 * names a packet in flight: of that message for RNR; for a fatal NAK, of
 * that message or a later one (the responder refuses everything after it,
 * and a late refusal names its path's last packet), or a response. An
 * RNR NAK during a wait, or of a packet sent before the last rewind, is
 * old news.
 */
enum mr_req_nak mr_requester_nak(struct mr_requester *r,
				 const struct mr_sender *s,
				 const struct mr_pkt *nak, u32 rnr_retry,
				 u64 now)
{
	u32 msn = nak->nak.msn;
	const struct mr_tx_pkt *tp;
	u64 delay;

	if (!mr_requester_started(r, msn))
		return MR_REQ_NAK_OLD;
	switch (nak->nak.code) {
	case MR_NAK_REMOTE_ACCESS:
	case MR_NAK_INVALID_REQUEST:
		tp = mr_sender_in_flight(s, nak->base.path, nak->base.epoch,
					 nak->base.psn);
		if (!tp || (!tp->resp && mr_seq_before(tp->msn, msn)))
			return MR_REQ_NAK_BOGUS;
		return MR_REQ_NAK_FAIL;
	case MR_NAK_RNR:
		if (r->rnr_wait)
			return MR_REQ_NAK_IGNORED;
		tp = mr_sender_in_flight(s, nak->base.path, nak->base.epoch,
					 nak->base.psn);
		if (!tp || tp->msn != msn || tp->gen != r->gen)
			return MR_REQ_NAK_IGNORED;
		/* The NAK's delay is in units of 10 us, at least one. */
		delay = (nak->nak.rnr_delay ? nak->nak.rnr_delay : 1) * 10000ull;
		if (!mr_requester_rnr_wait(r, msn, rnr_retry, now + delay))
			return MR_REQ_NAK_RNR_SPENT;
		return MR_REQ_NAK_RNR_WAIT;
	}
	return MR_REQ_NAK_IGNORED;
}

/**
 * mr_requester_read_slice() - a slice of the response to a READ of ours
 * @r: the requester
 * @length: the READ's length
 * @sl: the slices of its response that landed
 * @pkt: the READ_RESP, new on its path, of a READ started and not retired
 *
 * Slices are the MTU; each lands once. A resent slice may come empty: the
 * responder lost the region since (its ACK was lost), and the READ fails
 * if this end still lacks it.
 */
enum mr_req_slice mr_requester_read_slice(const struct mr_requester *r,
					  u32 length, struct mr_req_slices *sl,
					  const struct mr_pkt *pkt)
{
	u32 off = pkt->read_resp.offset, want, slice;

	if (sl->done)
		return MR_REQ_SLICE_DUP;
	want = length - (off < length ? off : length);
	if (want > r->mtu)
		want = r->mtu;
	if (pkt->read_resp.length != length || off % r->mtu ||
	    (off && off >= length) ||
	    (pkt->payload_len != want && pkt->payload_len))
		return MR_REQ_SLICE_MALFORMED;
	slice = off / r->mtu;
	if (mr_map_test(sl->map, slice))
		return MR_REQ_SLICE_DUP;
	if (pkt->payload_len != want)
		return MR_REQ_SLICE_EMPTY;
	mr_map_set(sl->map, slice);
	return MR_REQ_SLICE_NEW;
}

/*
 * A slice of the response to READ or atomic @msn landed (@read_length: a
 * READ's length; 0 for an atomic, whose response is one packet, as an
 * empty READ's is); the whole response frees the responder.
 */
void mr_requester_answered(struct mr_requester *r, u32 msn,
			   struct mr_req_slices *sl, u32 read_length)
{
	u32 slices = (u32)(((u64)read_length + r->mtu - 1) / r->mtu);

	sl->done = ++sl->got >= (slices ? slices : 1);
	if (sl->done)
		mr_requester_rd_answered(r, msn);
}

/* The RNR wait is over: send the refused message again, and what followed. */
void mr_requester_rnr_resume(struct mr_requester *r)
{
	r->rnr_wait = false;
	/*
	 * Never rewind before the oldest message not retired: msn_send would
	 * fall behind msn_head, and mr_requester_rd_recount() walk 2^32 MSNs.
	 */
	if (mr_seq_before(r->rnr_msn, r->msn_head))
		r->rnr_msn = r->msn_head;
	if (mr_seq_before(r->rnr_msn, r->msn_send) ||
	    (r->rnr_msn == r->msn_send && r->send_off)) {
		r->msn_send = r->rnr_msn;
		/* Its packets go again: none of those is acknowledged. */
		if (mr_seq_before(r->rnr_msn, r->acked))
			r->acked = r->rnr_msn;
		r->send_off = 0;
		mr_requester_rd_recount(r);
	}
	r->gen++;
}

/**
 * mr_requester_header() - the opcode header of a request packet
 * @r: the requester
 * @tp: the packet, of a message not retired, or a stale one
 * @w: its message, or NULL when @tp is stale (mr_requester_stale())
 * @pkt: the packet; its base header's opcode and flags are set here
 *
 * A stale packet goes as an empty SEND with its MSN: the responder only
 * acknowledges it, and the path's PSN hole closes.
 *
 * Return: the packet's payload length.
 */
u32 mr_requester_header(const struct mr_requester *r,
			const struct mr_tx_pkt *tp, const struct mr_req_wire *w,
			struct mr_pkt *pkt)
{
	u8 op = w ? w->opcode : MR_OP_SEND;
	u32 left;

	pkt->base.opcode = op;
	if (!w) {
		pkt->send.msn = tp->msn;
		return 0;
	}
	pkt->base.stream = w->stream;
	pkt->base.order = w->order;
	if (w->solicited)
		pkt->base.flags |= MR_FLAG_SOLICITED;
	switch (op) {
	case MR_OP_READ_REQ:
		pkt->read_req = (struct mr_read_req_hdr){
			.msn = tp->msn, .rkey = w->rkey,
			.va = w->va, .length = w->length,
		};
		return 0;
	case MR_OP_CMP_SWAP:
	case MR_OP_FETCH_ADD:
		pkt->atomic = (struct mr_atomic_hdr){
			.msn = tp->msn, .rkey = w->rkey, .va = w->va,
			.swap_add = w->swap_add, .compare = w->compare,
		};
		return 0;
	case MR_OP_WRITE:
	case MR_OP_WRITE_IMM:
		pkt->write = (struct mr_write_hdr){
			.msn = tp->msn, .rkey = w->rkey,
			.va = w->va, .length = w->length,
			.offset = tp->offset, .rsn = w->rsn, .imm = w->imm,
		};
		break;
	default:
		pkt->send = (struct mr_send_hdr){
			.msn = tp->msn, .rsn = w->rsn, .length = w->length,
			.offset = tp->offset,
			.imm = op == MR_OP_SEND_INV ? 0 : w->imm,
			.inv_rkey = op == MR_OP_SEND_INV ? w->inv_rkey : 0,
		};
		break;
	}
	left = w->length - tp->offset;
	return left < r->mtu ? left : r->mtu;
}
