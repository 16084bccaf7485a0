// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The responder engine: see responder.h. */
#include "bounds.h"
#include "responder.h"

/* RTR: a new connection's responder, its slices of @mtu bytes. */
void mr_responder_init(struct mr_responder *r, u32 mtu, bool uc)
{
	r->msg = NULL;
	r->open = 0;
	r->resp = NULL;
	r->used = false;
	r->uc = uc;
	r->mtu = mtu;
	r->msn_done = 0;
	r->rsn_head = 0;
	r->rsn_order = 0;
	r->recv_done[0] = 0;
	r->recv_done[1] = 0;
	r->rsn_skipped = 0;
	r->uc_skips = 0;
	r->map_budget = mr_bounds_map_budget(mtu);
	r->rd_max = MR_MSG_WINDOW;
	mr_responder_reset(r);
}

/*
 * The READs and atomics the responder takes at a time, max_dest_rd_atomic
 * (0 is taken as 1, as the requester takes its max_rd_atomic).
 */
void mr_responder_set_rd_max(struct mr_responder *r, u32 rd_max)
{
	r->rd_max = rd_max ? rd_max : 1;
}

/* Forget every response (RESET, or a new connection at RTR). */
void mr_responder_reset(struct mr_responder *r)
{
	if (r->resp)
		mr_responder_env_free(r, r->resp);
	r->resp = NULL;
	r->resp_send = 0;
	r->resp_top = r->msn_done;
}

/* Give the window's messages back when none is open. */
static void mr_responder_msgs_put(struct mr_responder *r)
{
	if (r->msg && !r->open) {
		mr_responder_env_free(r, r->msg);
		r->msg = NULL;
	}
}

/* The bytes of a slice map of @nslices bits. */
static u32 mr_responder_map_bytes(u32 nslices)
{
	return (nslices + 63) / 64 * sizeof(u64);
}

/* Close the slot @m, giving its map's bits back to the budget. */
static void mr_responder_msg_free(struct mr_responder *r, struct mr_rx_msg *m)
{
	if (m->map && m->map != &m->map1) {
		mr_responder_env_map_free(r, m->map,
					  mr_responder_map_bytes(m->nslices));
		r->map_bits -= m->nslices;
	}
	if (m->used)
		r->open--;
	*m = (struct mr_rx_msg){ 0 };
}

/*
 * Free every message slot, and the responses: RESET, and destroy. Returns
 * the slice-map bits still charged after that, which should be none.
 */
u32 mr_responder_free(struct mr_responder *r)
{
	u32 i, left;

	for (i = 0; r->msg && i < MR_MSG_WINDOW; i++)
		mr_responder_msg_free(r, &r->msg[i]);
	mr_responder_msgs_put(r);
	mr_responder_reset(r);
	left = r->map_bits;
	r->map_bits = 0;
	r->uc_skips = 0;
	return left;
}

/**
 * mr_responder_trim() - give back what an idle responder does not need
 * @r: the responder
 *
 * The host calls it now and then while mr_responder_holds(), when its
 * sender has no packet left unacknowledged, the responses' among them:
 * every response is delivered and none will be resent. Memory is given
 * back once a whole period between two calls went without a request, so
 * a busy responder does not borrow and return it for every message.
 *
 * Return: whether memory is still held.
 */
bool mr_responder_trim(struct mr_responder *r)
{
	if (r->used) {
		r->used = false;
		return mr_responder_holds(r);
	}
	if (r->resp && !r->open && r->resp_send == r->msn_done) {
		mr_responder_env_free(r, r->resp);
		r->resp = NULL;
	}
	mr_responder_msgs_put(r);
	return mr_responder_holds(r);
}

/*
 * The receive that the message numbered @rsn takes, counted like
 * rsn_head: its RSN less the RSNs that UC messages before it skipped. A
 * skip is always decided before any later message takes a receive (both
 * are decided against the receives posted, which only grow), so the
 * answer does not change once a message has its receive.
 */
u32 mr_responder_recv(const struct mr_responder *r, u32 rsn)
{
	u32 skipped = r->rsn_skipped, i;

	for (i = 0; r->uc_skips && r->msg && i < MR_MSG_WINDOW; i++) {
		const struct mr_rx_msg *m = &r->msg[i];

		if (m->used && m->skipped && mr_seq_before(m->rsn, rsn))
			skipped++;
	}
	return rsn - skipped;
}

static void mr_responder_info(const struct mr_responder *r,
			      const struct mr_pkt *pkt, struct mr_resp_info *ri)
{
	/* UC completes in MSN order: it drops, so nothing can wait. */
	*ri = (struct mr_resp_info){
		.stream = pkt->base.stream,
		.order = r->uc ? MR_ORDER_PREV : pkt->base.order,
	};
	switch (pkt->base.opcode) {
	case MR_OP_READ_REQ:
		/* One packet without payload: a message of one empty slice. */
		ri->msn = pkt->read_req.msn;
		break;
	case MR_OP_CMP_SWAP:
	case MR_OP_FETCH_ADD:
		ri->msn = pkt->atomic.msn;
		break;
	case MR_OP_WRITE:
	case MR_OP_WRITE_IMM:
		ri->msn = pkt->write.msn;
		ri->rsn = pkt->write.rsn;
		ri->imm = pkt->write.imm;
		ri->length = pkt->write.length;
		ri->offset = pkt->write.offset;
		ri->consume = mr_wire_op_flags(pkt->base.opcode) &
			      MR_WIRE_F_CONSUMES;
		break;
	default:
		ri->msn = pkt->send.msn;
		ri->rsn = pkt->send.rsn;
		/* A SEND_INV's rkey travels where a SEND_IMM's imm does. */
		ri->imm = (mr_wire_op_flags(pkt->base.opcode) &
			   MR_WIRE_F_INVALIDATES) ? pkt->send.inv_rkey :
						    pkt->send.imm;
		ri->length = pkt->send.length;
		ri->offset = pkt->send.offset;
		ri->consume = true;
		break;
	}
}

/* The fields of slot @m for the message of @pkt, all but its map. */
static void mr_responder_msg_fill(struct mr_rx_msg *m,
				  const struct mr_pkt *pkt,
				  const struct mr_resp_info *ri, u32 nslices)
{
	m->used = true;
	m->consume = ri->consume;
	m->opcode = pkt->base.opcode;
	m->stream = ri->stream;
	m->order = ri->order;
	m->msn = ri->msn;
	m->rsn = ri->rsn;
	m->recv = ri->rsn;
	m->imm = ri->imm;
	m->length = ri->length;
	m->nslices = nslices;
	m->path = pkt->base.path;
	if (pkt->base.opcode == MR_OP_READ_REQ) {
		m->rkey = pkt->read_req.rkey;
		m->va = pkt->read_req.va;
		m->rd_len = pkt->read_req.length;
	} else if (mr_wire_op_flags(pkt->base.opcode) & MR_WIRE_F_ATOMIC) {
		m->rkey = pkt->atomic.rkey;
		m->va = pkt->atomic.va;
		m->swap_add = pkt->atomic.swap_add;
		m->compare = pkt->atomic.compare;
	}
}

/*
 * Open the slot @m for the message of @rx. Its slice map, if it needs
 * one allocated, is charged to the budget: -MR_ENOSPC when it would pass
 * it (nothing is allocated), -MR_EAGAIN when there is no memory or the
 * host refuses it. A packet not new on its path (@rx->new_pkt) gets no
 * map: its path drops it, and mr_responder_unadmit() closes the slot.
 */
static int mr_responder_msg_init(struct mr_responder *r, struct mr_rx_msg *m,
				 const struct mr_rx *rx)
{
	const struct mr_resp_info *ri = &rx->ri;
	const struct mr_pkt *pkt = rx->pkt;
	u32 nslices = mr_bounds_map_bits(ri->length, r->mtu);
	u32 bytes = mr_responder_map_bytes(nslices);

	*m = (struct mr_rx_msg){ 0 };
	if (nslices <= 64) {
		m->map = &m->map1;
	} else if (!mr_bounds_map_admit(r->map_bits, nslices, r->map_budget)) {
		return -MR_ENOSPC;
	} else if (rx->new_pkt) {
		m->map = mr_responder_env_map_alloc(r, bytes);
		if (!m->map)
			return -MR_EAGAIN;
		r->map_bits += nslices;
	}
	mr_responder_msg_fill(m, pkt, ri, nslices);
	r->open++;
	return 0;
}

/*
 * UC: a message whose slice map would pass the budget opens its slot
 * without one, dropped: its packets are only acknowledged.
 */
static void mr_responder_msg_init_dropped(struct mr_responder *r,
					  struct mr_rx_msg *m,
					  const struct mr_pkt *pkt,
					  const struct mr_resp_info *ri)
{
	*m = (struct mr_rx_msg){ 0 };
	m->map = &m->map1;
	mr_responder_msg_fill(m, pkt, ri, 0);
	r->open++;
	m->dropped = true;
	m->drop = MR_RXE_MAP_BUDGET;
}

/*
 * Whether the RSN of a consuming message that opens its slot is one a
 * conforming requester sends: RSNs count the consuming messages in MSN
 * order, so the RSN lies between the next receive's and that plus the
 * messages before it in the window, and between the RSNs of the open
 * consuming messages around it, never equal to one. Two messages that
 * name one receive, or one already completed, fail this.
 */
static bool mr_responder_rsn_ok(const struct mr_responder *r,
				const struct mr_resp_info *ri)
{
	u32 next = r->rsn_order + r->rsn_skipped, i;

	if (ri->rsn - next > ri->msn - r->msn_done)
		return false;
	for (i = 0; i < MR_MSG_WINDOW; i++) {
		const struct mr_rx_msg *o = &r->msg[i];

		if (!o->used || !o->consume)
			continue;
		if (mr_seq_before(o->msn, ri->msn) ?
		    ri->rsn - o->rsn - 1 >= ri->msn - o->msn :
		    o->rsn - ri->rsn - 1 >= o->msn - ri->msn)
			return false;
	}
	return true;
}

/**
 * mr_responder_rd_busy() - the READs and atomics the responder holds
 * @r: the responder
 *
 * Those open in the window, not executed yet, and those executed (in
 * MSN order, or early in their stream) whose response has a packet not
 * sent yet. A conforming requester starts one
 * only while fewer than its max_rd_atomic (at most our rd_max) have their
 * whole response in, and a response is in only once it was sent, so this
 * is below rd_max whenever its next one arrives. Acknowledged responses
 * are not waited for: the requester's next READ may overtake the ACK of
 * the last response. A response sent but unacknowledged holds the
 * sender's window, which bounds those in turn.
 *
 * Return: how many.
 */
u32 mr_responder_rd_busy(const struct mr_responder *r)
{
	u32 busy = 0, i, msn;

	for (i = 0; r->msg && i < MR_MSG_WINDOW; i++)
		busy += r->msg[i].used && !r->msg[i].delivered &&
			(mr_wire_op_flags(r->msg[i].opcode) &
			 MR_WIRE_F_READ_OR_ATOMIC);
	/* A stream's READ may have executed beyond msn_done. */
	for (msn = r->resp_send; msn != r->resp_top; msn++) {
		const struct mr_resp *rs = mr_responder_resp(r, msn);

		busy += rs && rs->sent != rs->npkts;
	}
	return busy;
}

/* mr_responder_admit(), with the memory its message may need. */
static void mr_responder_admit_msg(struct mr_responder *r, struct mr_rx *rx)
{
	struct mr_resp_info *ri = &rx->ri;
	struct mr_rx_msg *m;
	int err;

	mr_responder_info(r, rx->pkt, ri);
	if (mr_seq_before(ri->msn, r->msn_done)) {
		rx->kind = MR_RX_OLD;
		return;
	}
	/* A conforming requester stays within the message window. */
	if (!mr_window_in(ri->msn, r->msn_done)) {
		mr_responder_env_event(r, MR_RSE_MALFORMED, 0);
		return;
	}
	m = &r->msg[ri->msn % MR_MSG_WINDOW];
	if (!m->used) {
		/*
		 * Beyond max_dest_rd_atomic: dropped before its path records
		 * it, so it is not acknowledged and its resend comes back.
		 */
		if (!r->uc && (mr_wire_op_flags(rx->pkt->base.opcode) &
			       MR_WIRE_F_READ_OR_ATOMIC) &&
		    mr_responder_rd_busy(r) >= r->rd_max) {
			mr_responder_env_event(r, MR_RSE_RD_EXCESS, 0);
			return;
		}
		if (ri->consume && !mr_responder_rsn_ok(r, ri)) {
			mr_responder_env_event(r, MR_RSE_MALFORMED, 0);
			return;
		}
		err = mr_responder_msg_init(r, m, rx);
		if (err == -MR_ENOSPC && !r->uc) {
			rx->kind = MR_RX_REFUSE;
			return;
		}
		if (err == -MR_ENOSPC) {
			mr_responder_msg_init_dropped(r, m, rx->pkt, ri);
		} else if (err) {
			/*
			 * Not recorded: the requester sends it again. The
			 * host counted the map it did not give.
			 */
			return;
		}
		rx->fresh = true;
		m->recv = r->uc ? mr_responder_recv(r, ri->rsn) : ri->rsn;
	}
	rx->kind = MR_RX_MESSAGE;
	rx->m = m;
}

/*
 * The window's messages, and for a READ or atomic its responses: borrowed
 * when the first needs them. False when there is no memory now.
 */
static bool mr_responder_memory(struct mr_responder *r,
				const struct mr_pkt *pkt)
{
	r->used = true;
	if (!r->msg) {
		r->msg = mr_responder_env_alloc(r, MR_MSG_WINDOW *
						   sizeof(*r->msg));
		if (!r->msg)
			return false;
	}
	if (!r->resp &&
	    (mr_wire_op_flags(pkt->base.opcode) & MR_WIRE_F_READ_OR_ATOMIC)) {
		r->resp = mr_responder_env_alloc(r, MR_MSG_WINDOW *
						    sizeof(*r->resp));
		if (!r->resp)
			return false;
	}
	return true;
}

/**
 * mr_responder_admit() - which message an arriving request packet is of
 * @r: the responder
 * @rx: the packet (@rx->pkt, @rx->data); its kind, info and message out
 *
 * A packet that opens a message takes its slot here, and learns whether
 * the receive it needs is posted (RC: else RNR; UC: dropped, its RSN
 * skipped). The host records it on its path next, and if the path does
 * not take it as new, undoes this (mr_responder_unadmit()). The window's
 * memory is borrowed for the first message and given back by
 * mr_responder_trim().
 */
void mr_responder_admit(struct mr_responder *r, struct mr_rx *rx)
{
	rx->kind = MR_RX_DROP;
	rx->fresh = false;
	if (!mr_responder_memory(r, rx->pkt)) {
		mr_responder_env_event(r, MR_RSE_SHORT, 0);
		return;
	}
	mr_responder_admit_msg(r, rx);
}

/*
 * The path did not take @rx as new: it must not define its message. On
 * RC, a packet that would open a consuming message again is one whose
 * earlier copy found no receive (a message that took its receive keeps
 * its slot until it completes): the host repeats the RNR (kind
 * MR_RX_RNR).
 */
void mr_responder_unadmit(struct mr_responder *r, struct mr_rx *rx)
{
	if (!rx->fresh)
		return;
	if (!r->uc && rx->m->consume)
		rx->kind = MR_RX_RNR;
	mr_responder_msg_free(r, rx->m);
	rx->fresh = false;
}

/*
 * The first packet of consuming message @rx->m, new on its path, takes
 * the message's receive, only now: with an SRQ that binds receives, which
 * a packet its path drops must not. Returns whether the message goes on:
 * RC closes it again for RNR (@rx->kind), UC drops it and skips its RSN.
 */
static bool mr_responder_take_recv(struct mr_responder *r, struct mr_rx *rx)
{
	struct mr_rx_msg *m = rx->m;

	if (!rx->fresh || !m->consume || mr_responder_env_posted(r, m->recv))
		return true;
	if (!r->uc) {
		mr_responder_msg_free(r, m);
		rx->fresh = false;
		rx->kind = MR_RX_RNR;
		return false;
	}
	m->dropped = true;
	m->skipped = true;
	m->drop = MR_RXE_NO_RECV;
	r->uc_skips++;
	return true;
}

/* UC: drop message @m for good, @error says why (see the top). */
static void mr_responder_uc_drop(struct mr_rx_msg *m, u8 error,
				 bool *complete)
{
	if (!m->dropped) {
		m->dropped = true;
		m->drop = error;
	}
	/* Complete as it stands: its other packets are only acknowledged. */
	if (!m->done) {
		m->done = true;
		*complete = true;
	}
}

/*
 * An error in message @m: RC refuses it with the NAK @nak (returned), UC
 * drops it and goes on (0).
 */
static u8 mr_responder_fail(struct mr_responder *r, struct mr_rx_msg *m,
			    u8 nak, u8 error, bool *complete)
{
	if (!r->uc)
		return nak;
	mr_responder_uc_drop(m, error, complete);
	return 0;
}

/*
 * Place a new packet of message @rx->m (kind MR_RX_MESSAGE). Returns 0 or
 * a NAK code. Sets *complete when the message has all its bytes, *dup
 * when the slice had landed before.
 */
u8 mr_responder_place(struct mr_responder *r, struct mr_rx *rx,
		      bool *complete, bool *dup)
{
	const struct mr_resp_info *ri = &rx->ri;
	const struct mr_pkt *pkt = rx->pkt;
	struct mr_rx_msg *m = rx->m;
	u32 want = ri->length - ri->offset;
	unsigned int op_flags = mr_wire_op_flags(pkt->base.opcode);
	bool rd = op_flags & MR_WIRE_F_READ_OR_ATOMIC;
	int err;

	/* Opened with no map: its host found it not new on its path. */
	if (!m->map) {
		mr_responder_unadmit(r, rx);
		rx->kind = MR_RX_DROP;
		mr_responder_env_event(r, MR_RSE_SHORT, 0);
		return 0;
	}
	if (!mr_responder_take_recv(r, rx))
		return MR_NAK_RNR;
	/* UC: the rest of a dropped message only needs acknowledging. */
	if (m->dropped) {
		mr_responder_uc_drop(m, m->drop, complete);
		return 0;
	}
	if (want > r->mtu)
		want = r->mtu;
	/* Slices are the MTU both ends agreed on; anything else is refused. */
	if (ri->length != m->length || ri->offset % r->mtu ||
	    pkt->payload_len != want || pkt->base.opcode != m->opcode ||
	    ri->stream != m->stream || ri->order != m->order ||
	    (m->consume && ri->rsn != m->rsn) || (rd && r->uc))
		return mr_responder_fail(r, m, MR_NAK_INVALID_REQUEST,
					 MR_RXE_INVALID, complete);
	if (mr_map_test(m->map, ri->offset / r->mtu)) {
		mr_responder_env_event(r, MR_RSE_DUPLICATE, 0);
		*dup = true;
		return 0;
	}
	mr_map_set(m->map, ri->offset / r->mtu);
	if (rd) {
		err = mr_responder_env_check_rd(r, m);
		if (err)
			return (u8)err;
	} else if (op_flags & MR_WIRE_F_WRITE) {
		if (mr_responder_env_write(r, rx))
			return mr_responder_fail(r, m, MR_NAK_REMOTE_ACCESS,
						 MR_RXE_REMOTE_ACCESS,
						 complete);
	} else if (pkt->payload_len || ri->length) {
		err = mr_responder_env_scatter(r, rx, m->recv);
		if (err)
			return mr_responder_fail(r, m, MR_NAK_INVALID_REQUEST,
						 err == -MR_ELENGTH ?
						 MR_RXE_TOO_LONG :
						 MR_RXE_RECV_FAULT, complete);
	}
	if (pkt->base.flags & MR_FLAG_SOLICITED)
		m->solicited = true;
	if (++m->got == m->nslices) {
		m->done = true;
		*complete = true;
	}
	return 0;
}

/*
 * Execute the READ or atomic @m, next in MSN order: record its response,
 * which the requester sends. Returns 0 or a NAK code.
 */
static u8 mr_responder_execute(struct mr_responder *r,
			       const struct mr_rx_msg *m)
{
	struct mr_resp *rs = &r->resp[m->msn % MR_MSG_WINDOW];
	u8 nak;

	*rs = (struct mr_resp){
		.opcode = m->opcode, .msn = m->msn, .rkey = m->rkey,
		.va = m->va, .path = m->path, .npkts = 1,
	};
	if (m->opcode == MR_OP_READ_REQ) {
		rs->length = m->rd_len;
		if (m->rd_len > r->mtu)
			rs->npkts = (u32)(((u64)m->rd_len + r->mtu - 1) /
					  r->mtu);
	} else {
		nak = mr_responder_env_atomic(r, m, &rs->orig);
		if (nak)
			return nak;
	}
	rs->valid = true;
	if (!mr_seq_before(m->msn, r->resp_top))
		r->resp_top = m->msn + 1;
	return 0;
}

/*
 * Complete @m's receive, which may not be the queue's head (streams): it
 * leaves the queue once every receive before it has completed. False
 * when it is not one still queued: a lie of the RSNs.
 */
static bool mr_responder_complete_recv(struct mr_responder *r,
				       const struct mr_rx_msg *m, u8 error)
{
	u32 at = m->recv - r->rsn_head;

	if (at >= MR_MSG_WINDOW || mr_map_test(r->recv_done, at))
		return false;
	if (!mr_responder_env_complete_recv(r, m, error))
		return true;	/* flushed meanwhile */
	mr_map_set(r->recv_done, at);
	while (r->recv_done[0] & 1) {
		r->recv_done[0] = r->recv_done[0] >> 1 | r->recv_done[1] << 63;
		r->recv_done[1] >>= 1;
		r->rsn_head++;
		mr_responder_env_retire_recv(r);
	}
	return true;
}

/*
 * Whether message @m may complete: the message its order byte names has,
 * or is not in the window (so has too).
 */
static bool mr_responder_after_ok(const struct mr_responder *r,
				  const struct mr_rx_msg *m)
{
	const struct mr_rx_msg *p;
	u32 back = (u32)m->order + 1, msn = m->msn - back;

	if (back > MR_ORDER_MAX || mr_seq_before(msn, r->msn_done))
		return true;
	p = &r->msg[msn % MR_MSG_WINDOW];
	return p->used && p->msn == msn && p->delivered;
}

/*
 * Complete message @m: its receive, or execute its READ or atomic. @front:
 * every message before it is delivered, so its receive must be the next
 * in MSN order. Returns 1 when a response is due, 0, or -1 when it was
 * refused (for good: nothing after it completes).
 */
static int mr_responder_deliver(struct mr_responder *r, struct mr_rx_msg *m,
				bool front)
{
	u8 nak;

	/*
	 * Its receive must be the next: a message before it that its RSN
	 * counted never came, so the RSNs lied.
	 */
	if (front && m->consume && !m->skipped && m->recv != r->rsn_order) {
		if (!r->uc) {
			mr_responder_env_refuse_late(r, m->msn,
						     MR_NAK_INVALID_REQUEST,
						     m->path);
			return -1;
		}
		/* UC: dropped, its receive is not its own. */
		m->consume = false;
		m->dropped = true;
		m->drop = MR_RXE_INVALID;
	}
	m->delivered = true;
	if (m->dropped) {
		mr_responder_env_event(r, MR_RSE_DROPPED, m->drop);
		if (!m->skipped && m->consume)
			mr_responder_complete_recv(r, m, m->drop);
		return 0;
	}
	if (mr_wire_op_flags(m->opcode) & MR_WIRE_F_READ_OR_ATOMIC) {
		nak = mr_responder_execute(r, m);
		if (nak) {
			mr_responder_env_refuse_late(r, m->msn, nak, m->path);
			return -1;
		}
		return 1;
	}
	/* A SEND, or a WRITE with immediate. */
	if (m->consume && !mr_responder_complete_recv(r, m, MR_RXE_NONE)) {
		mr_responder_env_refuse_late(r, m->msn,
					     MR_NAK_INVALID_REQUEST, m->path);
		return -1;
	}
	return 0;
}

/*
 * Message @m at msn_done, delivered, closes: "MSN done" moves past it.
 * False when its receive was not the next in MSN order (it completed
 * ahead of the messages before it, so this is checked only now).
 */
static bool mr_responder_close(struct mr_responder *r, struct mr_rx_msg *m)
{
	if (m->consume && !m->skipped && m->recv != r->rsn_order) {
		mr_responder_env_refuse_late(r, m->msn, MR_NAK_INVALID_REQUEST,
					     m->path);
		return false;
	}
	if (m->skipped) {
		r->uc_skips--;
		r->rsn_skipped++;
	} else if (m->consume) {
		r->rsn_order++;
	}
	mr_responder_msg_free(r, m);
	r->msn_done++;
	if (mr_seq_before(r->resp_top, r->msn_done))
		r->resp_top = r->msn_done;
	return true;
}

/**
 * mr_responder_advance() - complete what the messages that landed allow
 * @r: the responder
 * @fatal: a fatal NAK was sent: nothing completes any more
 *
 * One pass over the window in MSN order: a message whose slices have all
 * landed completes once the message its order byte names has (so a stream
 * waits only for itself), and "MSN done" moves over the completed ones at
 * its head.
 *
 * Return: whether a response is due.
 */
bool mr_responder_advance(struct mr_responder *r, bool fatal)
{
	u32 base = r->msn_done, left = r->open, i;
	bool respond = false, front = true;
	int res;

	for (i = 0; !fatal && r->msg && left && i < MR_MSG_WINDOW; i++) {
		struct mr_rx_msg *m = &r->msg[(base + i) % MR_MSG_WINDOW];

		if (!m->used || m->msn != base + i) {
			front = false;
			continue;
		}
		left--;
		if (!m->delivered && m->done && mr_responder_after_ok(r, m)) {
			res = mr_responder_deliver(r, m, front);
			if (res < 0)
				return false;
			respond |= res;
		}
		if (!m->delivered)
			front = false;
		else if (front && !mr_responder_close(r, m))
			return false;
	}
	return respond;
}

/*
 * The requester's side of the responses, oldest first: whether one has a
 * packet left to send. None goes after a fatal NAK (@fatal).
 */
bool mr_responder_response_due(struct mr_responder *r, bool fatal)
{
	u32 msn;

	/* Beyond msn_done, a stream's READ may have executed early. */
	for (msn = r->resp_send; msn != r->resp_top && !fatal; msn++) {
		const struct mr_resp *rs = mr_responder_resp(r, msn);

		if (rs && rs->sent != rs->npkts) {
			r->resp_next = msn;
			return true;
		}
		if (msn == r->resp_send && mr_seq_before(msn, r->msn_done))
			r->resp_send++;
	}
	return false;
}

/*
 * The next packet of the response mr_responder_response_due() found:
 * into @tp, and counted as sent.
 */
void mr_responder_response_take(struct mr_responder *r, struct mr_tx_pkt *tp)
{
	struct mr_resp *rs = &r->resp[r->resp_next % MR_MSG_WINDOW];

	tp->msn = rs->msn;
	tp->offset = rs->sent++ * r->mtu;
	tp->resp = true;
}
