/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The requester engine: the application's messages as the sending side
 * cuts them. It decides what goes next (packets moved off a failed path,
 * then this end's responses to the peer, then new requests, in message
 * order, MTU by MTU), hands each packet to the sender engine, which picks
 * its path and PSN, and keeps the messages' bookkeeping: which the peer
 * reported done, which READs and atomics still occupy the responder, the
 * first error, and the RNR wait with its rewind. Like the other engines it
 * does no I/O and reads no clock: it is handed the time, and it asks the
 * host about the messages through the environment functions below, which
 * each host (the kernel's req.c, the scale model, the host tests) defines
 * once, at link time.
 *
 * The messages themselves (their WQEs and memory) are the host's; only
 * this file writes struct mr_requester.
 */
#ifndef METAROCE_PROTO_REQUESTER_H
#define METAROCE_PROTO_REQUESTER_H

#include "sender.h"
#include "types.h"

/* An RNR retry count of 7 retries without limit (IBTA). */
#define MR_RNR_RETRY_INFINITE 7

struct mr_requester {
	bool tx_err;		/* a message failed: send nothing new */
	u32 err_msn;
	u32 err_status;		/* the host's, for the failed message */
	u32 mtu;		/* payload bytes per request packet */
	u32 msn_head;		/* the oldest message not retired */
	u32 msn_send;		/* the message whose new packets go next */
	u32 msn_hi;		/* msn_send before any RNR rewind */
	u32 rd_out;		/* see mr_requester_rd_recount() */
	u32 peer_done;		/* the newest "MSN done" the peer reported */
	u32 acked;		/* no packet of a message before it is unacked */
	u32 send_off;		/* of msn_send: its next new packet */
	u32 rsn_next;		/* the next message that consumes a receive */
	u32 gen;		/* RNR rewinds */
	bool rnr_wait;
	u32 rnr_msn;
	u32 rnr_left;		/* RNR retries left */
	u64 rnr_deadline;
	u64 done_since;		/* the head reported done, not acknowledged */
	/*
	 * Streams (mr_requester_streams()): the newest message started on
	 * each, of nstreams; none (0) for a connection of one stream.
	 */
	u32 nstreams;
	u32 *stream_last;
};

/* What the requester needs to know of one message (mr_requester_env_msg). */
struct mr_req_msg {
	u32 length;
	bool rd;		/* a READ or atomic: one packet, answered */
	bool consumes;		/* takes a receive at the peer: gets an RSN */
	bool started;		/* mr_requester_env_start() was called */
	bool answered;		/* its whole response is in */
	u16 stream;		/* below nstreams; 0 without streams */
};

/*
 * A request message as its packets carry it (mr_requester_header()): the
 * host's WQE in the wire's terms.
 */
struct mr_req_wire {
	u8 opcode;		/* MR_OP_* */
	bool solicited;		/* MR_FLAG_SOLICITED on its packets */
	u32 rkey;
	u64 va;
	u32 length;
	u32 rsn;		/* mr_requester_env_start() gave it */
	u16 stream;
	u8 order;		/* MR_ORDER_*: mr_requester_env_start() gave it */
	u32 imm;		/* WRITE_IMM, SEND_IMM; not sent by SEND_INV */
	u32 inv_rkey;		/* SEND_INV only */
	u64 swap_add;		/* CMP_SWAP's swap, FETCH_ADD's addend */
	u64 compare;		/* CMP_SWAP */
};

/*
 * The environment, one definition per host.
 *
 * How many messages are posted from msn_head on (its send queue).
 */
u32 mr_requester_env_posted(struct mr_requester *r);
/* Message @msn, which is posted. */
void mr_requester_env_msg(struct mr_requester *r, u32 msn,
			  struct mr_req_msg *m);
/*
 * Message @msn starts: keep for its packets the peer's receive @rsn it
 * consumes (if it consumes one) and its order byte (MR_ORDER_*).
 */
void mr_requester_env_start(struct mr_requester *r, u32 msn, u32 rsn,
			    u8 order);
/* Whether a response to the peer is due (mr_requester_env_response()). */
bool mr_requester_env_response_due(struct mr_requester *r);
/* The next packet of the oldest response due, into @tp. */
void mr_requester_env_response(struct mr_requester *r, struct mr_tx_pkt *tp);

/* What the oldest message not retired is to the completer. */
enum mr_req_head {
	MR_REQ_HEAD_WAITS,	/* not complete yet */
	MR_REQ_HEAD_DONE,	/* complete: it retires, with success */
	MR_REQ_HEAD_FAILED,	/* it failed (err_status): it retires so */
};

/* What a NAK means (mr_requester_nak()). */
enum mr_req_nak {
	MR_REQ_NAK_OLD,		/* of a message not started or complete */
	MR_REQ_NAK_BOGUS,	/* names no packet of ours at or after it */
	MR_REQ_NAK_IGNORED,	/* old news, or a code it does not know */
	MR_REQ_NAK_RNR_WAIT,	/* the RNR wait began */
	MR_REQ_NAK_FAIL,	/* the message fails with the NAK's code */
	MR_REQ_NAK_RNR_SPENT,	/* the RNR retries are spent: it fails */
};

/* What a slice of a READ response is (mr_requester_read_slice()). */
enum mr_req_slice {
	MR_REQ_SLICE_MALFORMED,	/* disagrees with its READ */
	MR_REQ_SLICE_DUP,	/* landed before */
	MR_REQ_SLICE_EMPTY,	/* a resend whose region the peer lost */
	MR_REQ_SLICE_NEW,	/* place it */
};

/*
 * Which slices of a READ's response have landed: the host keeps one per
 * READ (its map of more than 64 bits too); requester.c writes it.
 */
struct mr_req_slices {
	u32 got;
	bool done;		/* the whole response is in */
	u64 map1;
	u64 *map;		/* &map1, or the host's */
};

void mr_requester_start(struct mr_requester *r, u32 mtu, u32 rnr_retry);
void mr_requester_rts(struct mr_requester *r, u32 rnr_retry);
void mr_requester_streams(struct mr_requester *r, u32 *last, u32 n);
void mr_requester_stop(struct mr_requester *r);
void mr_requester_push(struct mr_requester *r, struct mr_sender *s,
		       u32 rd_max, u64 now);
void mr_requester_retire(struct mr_requester *r, bool rd_open);
void mr_requester_rd_answered(struct mr_requester *r, u32 msn);
bool mr_requester_peer_done(struct mr_requester *r, const struct mr_sender *s,
			    u32 msn_done);
bool mr_requester_fail(struct mr_requester *r, u32 msn, u32 status);
bool mr_requester_settle(struct mr_requester *r, u64 now, u64 after_ns);

/* How long a message the peer reported done waits for its last ACKs. */
#define MR_SETTLE_NS (100 * MR_NS_PER_MS)
bool mr_requester_rnr_wait(struct mr_requester *r, u32 msn, u32 rnr_retry,
			   u64 deadline);
void mr_requester_rnr_resume(struct mr_requester *r);
enum mr_req_head mr_requester_head(struct mr_requester *r);
enum mr_req_nak mr_requester_nak(struct mr_requester *r,
				 const struct mr_sender *s,
				 const struct mr_pkt *nak, u32 rnr_retry,
				 u64 now);
enum mr_req_slice mr_requester_read_slice(const struct mr_requester *r,
					  u32 length, struct mr_req_slices *sl,
					  const struct mr_pkt *pkt);
void mr_requester_answered(struct mr_requester *r, u32 msn,
			   struct mr_req_slices *sl, u32 read_length);
u32 mr_requester_header(const struct mr_requester *r,
			const struct mr_tx_pkt *tp, const struct mr_req_wire *w,
			struct mr_pkt *pkt);

/*
 * Whether request packet @tp is of a message already complete and
 * retired: it goes as an empty SEND (mr_requester_header() without the
 * message), only to close its PSN hole.
 */
static inline bool mr_requester_stale(const struct mr_requester *r,
				      const struct mr_tx_pkt *tp)
{
	return !tp->resp && mr_seq_before(tp->msn, r->msn_head);
}

/* When mr_requester_rnr_resume() is due; 0: no RNR wait. */
static inline u64 mr_requester_expiry(const struct mr_requester *r)
{
	return r->rnr_wait ? r->rnr_deadline : 0;
}

/* Whether message @msn has been started and not retired. */
static inline bool mr_requester_started(const struct mr_requester *r, u32 msn)
{
	return !mr_seq_before(msn, r->msn_head) &&
	       mr_seq_before(msn, r->msn_send + !!r->send_off);
}

#endif /* METAROCE_PROTO_REQUESTER_H */
