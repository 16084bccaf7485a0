/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The responder engine: the peer's messages as this end takes them. It
 * admits each request packet (which message, within the message window,
 * whether the receive it needs is posted, whether its slice map fits the
 * connection's budget), tells a new slice from one that landed before,
 * checks that the slices agree with their message, and completes messages
 * in their streams' order, each after the one its order byte names (on a
 * connection of one stream, in MSN order): the receives they consumed
 * (which may complete out of the queue's order, and leave it in order),
 * the READs and
 * atomics they ask for, whose responses it records and cuts into packets
 * for the requester to send, an atomic's result kept so that it executes
 * once. UC refuses nothing: a message it cannot take is dropped and
 * completes as it stands (see the kernel's resp.c).
 *
 * Like the other engines it does no I/O: the memory (placing, reading,
 * the atomic itself), the receive queue and the counters are the host's,
 * through the environment functions below, which each host (the kernel's
 * resp.c, the scale model, the host tests) defines once, at link time.
 * Only this file writes struct mr_responder.
 */
#ifndef METAROCE_PROTO_RESPONDER_H
#define METAROCE_PROTO_RESPONDER_H

#include "sender.h"
#include "types.h"
#include "window.h"
#include "wire.h"

/* Why a UC message was dropped; the host counts it and fails its receive. */
enum mr_rx_error {
	MR_RXE_NONE,
	MR_RXE_NO_RECV,		/* no receive posted: its RSN is skipped */
	MR_RXE_MAP_BUDGET,	/* its slice map would pass the budget */
	MR_RXE_INVALID,		/* its slices disagree, or a READ on UC */
	MR_RXE_REMOTE_ACCESS,	/* the WRITE's rkey or range */
	MR_RXE_TOO_LONG,	/* longer than its receive */
	MR_RXE_RECV_FAULT,	/* its receive's memory */
};

/* The fields of a request packet that the message layer uses. */
struct mr_resp_info {
	u32 msn;
	u32 rsn;
	u32 imm;
	u32 length;
	u32 offset;
	u16 stream;
	u8 order;		/* MR_ORDER_* */
	bool consume;		/* takes a posted receive */
};

/*
 * A response of the responder: to the peer's READ (data read as each
 * packet goes out) or atomic (executed once; the result is kept here, so
 * a resend repeats it).
 */
struct mr_resp {
	bool valid;
	u8 opcode;		/* of the request */
	u32 msn;		/* of the request */
	u32 rkey;
	u64 va;
	u32 length;
	u8 path;		/* of the request: a NAK goes back on it */
	u32 npkts;
	u32 sent;		/* packets sent */
	u64 orig;		/* atomic result */
};

/* A message being placed at the responder. */
struct mr_rx_msg {
	bool used;
	bool done;		/* every slice landed */
	bool delivered;		/* completed: its receive, its execution */
	bool solicited;
	bool consume;		/* takes a posted receive */
	/* UC: dropped; the receive it owns completes in error */
	bool dropped;
	bool skipped;		/* dropped before it owned a receive */
	u8 drop;		/* enum mr_rx_error */
	u8 opcode;
	u8 order;		/* MR_ORDER_*; UC: always the previous */
	u16 stream;
	u32 msn;
	u32 rsn;
	u32 recv;		/* the receive it takes: rsn, less UC skips */
	u32 imm;
	u32 length;
	u32 nslices;		/* MTU-sized slices */
	u32 got;		/* distinct slices landed */
	u64 map1;		/* slice map of small messages */
	u64 *map;		/* of large ones, else &map1 */
	/* READ and atomics, executed when the message is next in order */
	u8 path;		/* arrival path: a late NAK goes back on it */
	u32 rkey;
	u64 va;
	u32 rd_len;
	u64 swap_add;
	u64 compare;
};

struct mr_responder {
	bool uc;		/* refuses nothing: drops */
	u32 mtu;
	/* slice-map bits the messages in the window hold, of map_budget */
	u32 map_bits;
	u32 map_budget;		/* mr_bounds_map_budget() at the MTU */
	/*
	 * READs and atomics it takes at a time (max_dest_rd_atomic): those
	 * open in the window and the responses not yet wholly sent. One
	 * beyond is dropped unacknowledged (mr_responder_rd_busy()).
	 */
	u32 rd_max;
	/* every message before it is delivered and closed */
	u32 msn_done;
	u32 rsn_head;		/* the receive at the head of the queue */
	u32 rsn_order;		/* what the messages before msn_done consumed */
	/* receives rsn_head + i completed out of order, still queued */
	u64 recv_done[MR_MSG_WINDOW / 64];
	u32 rsn_skipped;	/* UC: RSNs skipped by messages gone by */
	u32 uc_skips;		/* ... and by messages in the window */
	/*
	 * The window's messages, by MSN % window (@open of them open):
	 * borrowed from the host at the first request, kept until
	 * mr_responder_trim(), NULL otherwise.
	 */
	struct mr_rx_msg *msg;
	u32 open;
	bool used;		/* a request came since the last trim */
	u32 resp_send;		/* the oldest MSN that may have a response to send */
	u32 resp_top;		/* past the newest executed, or msn_done */
	u32 resp_next;		/* the one mr_responder_response_due() found */
	/*
	 * The responses to READs and atomics, by MSN % window: borrowed at
	 * the first, kept until mr_responder_trim().
	 */
	struct mr_resp *resp;
};

/* What one arriving request packet is to the responder. */
enum mr_rx_kind {
	MR_RX_DROP,		/* nothing more to do */
	MR_RX_MESSAGE,		/* of a message in the window: @m */
	MR_RX_OLD,		/* of a message already complete */
	MR_RX_RNR,		/* its receive is not posted */
	MR_RX_REFUSE,		/* RC: its slice map passes the budget */
};

struct mr_rx {
	const struct mr_pkt *pkt;
	const void *data;	/* its payload, for the host */
	enum mr_rx_kind kind;
	struct mr_resp_info ri;
	struct mr_rx_msg *m;
	bool fresh;		/* it opened its message's slot */
	/*
	 * The host found it new on its path (mr_receiver_fresh()): only
	 * such a packet has a slice map allocated for its message.
	 */
	bool new_pkt;
};

/* What the engine reports for the host's counters. */
enum mr_responder_event {
	MR_RSE_MALFORMED,	/* beyond the message window, or its RSN */
	MR_RSE_SHORT,		/* no memory for its slot: not recorded */
	MR_RSE_DUPLICATE,	/* a slice, or a message, that landed before */
	MR_RSE_DROPPED,		/* UC: @arg, the enum mr_rx_error */
	MR_RSE_RD_EXCESS,	/* a READ or atomic beyond rd_max: dropped */
};

/*
 * The environment, one definition per host.
 *
 * Whether receive @recv (counted like rsn_head) is posted.
 */
bool mr_responder_env_posted(struct mr_responder *r, u32 recv);
/*
 * @bytes of zeroed memory (the window's messages or responses, a slice
 * map), in the packet's context; NULL when there is none now.
 */
void *mr_responder_env_alloc(struct mr_responder *r, u32 bytes);
void mr_responder_env_free(struct mr_responder *r, void *p);
/*
 * A slice map of @bytes, zeroed: like mr_responder_env_alloc(), but the
 * host may also refuse it for a budget of its own (a device's), and
 * counts each it does not give: its packet is dropped unrecorded.
 */
void *mr_responder_env_map_alloc(struct mr_responder *r, u32 bytes);
void mr_responder_env_map_free(struct mr_responder *r, void *p, u32 bytes);
/*
 * Place the payload of WRITE @rx: 0, or -EACCES when the QP's rights, the
 * rkey or the range refuse it.
 */
int mr_responder_env_write(struct mr_responder *r, const struct mr_rx *rx);
/*
 * Place the payload of SEND @rx into receive @recv: 0, -EMSGSIZE when the
 * message is longer than the receive, another error when its memory is.
 */
int mr_responder_env_scatter(struct mr_responder *r, const struct mr_rx *rx,
			     u32 recv);
/* READ or atomic @m as it arrives: 0, or the NAK that refuses it. */
u8 mr_responder_env_check_rd(struct mr_responder *r,
			     const struct mr_rx_msg *m);
/* Execute atomic @m, its old value into @orig: 0, or the NAK code. */
u8 mr_responder_env_atomic(struct mr_responder *r, const struct mr_rx_msg *m,
			   u64 *orig);
/*
 * Complete message @m's receive, @m->recv - rsn_head from the head of the
 * queue, with @error (MR_RXE_NONE: success); it stays queued until
 * mr_responder_env_retire_recv(). False when none is posted there.
 */
bool mr_responder_env_complete_recv(struct mr_responder *r,
				    const struct mr_rx_msg *m, u8 error);
/* The receive at the head of the queue, completed, leaves it. */
void mr_responder_env_retire_recv(struct mr_responder *r);
/* READ or atomic @msn cannot execute: refuse it, for good. */
void mr_responder_env_refuse_late(struct mr_responder *r, u32 msn, u8 nak,
				  u8 path);
void mr_responder_env_event(struct mr_responder *r,
			    enum mr_responder_event ev, u32 arg);

void mr_responder_init(struct mr_responder *r, u32 mtu, bool uc);
void mr_responder_reset(struct mr_responder *r);
void mr_responder_set_rd_max(struct mr_responder *r, u32 rd_max);
u32 mr_responder_rd_busy(const struct mr_responder *r);
u32 mr_responder_free(struct mr_responder *r);
bool mr_responder_trim(struct mr_responder *r);
u32 mr_responder_recv(const struct mr_responder *r, u32 rsn);
void mr_responder_admit(struct mr_responder *r, struct mr_rx *rx);
void mr_responder_unadmit(struct mr_responder *r, struct mr_rx *rx);
u8 mr_responder_place(struct mr_responder *r, struct mr_rx *rx,
		      bool *complete, bool *dup);
bool mr_responder_advance(struct mr_responder *r, bool fatal);
bool mr_responder_response_due(struct mr_responder *r, bool fatal);
void mr_responder_response_take(struct mr_responder *r, struct mr_tx_pkt *tp);

/* The response recorded for message @msn, or NULL if forgotten. */
static inline const struct mr_resp *
mr_responder_resp(const struct mr_responder *r, u32 msn)
{
	const struct mr_resp *rs;

	if (!r->resp)
		return NULL;
	rs = &r->resp[msn % MR_MSG_WINDOW];
	return rs->valid && rs->msn == msn ? rs : NULL;
}

/* Whether borrowed memory is held, which mr_responder_trim() frees. */
static inline bool mr_responder_holds(const struct mr_responder *r)
{
	return r->msg || r->resp;
}

#endif /* METAROCE_PROTO_RESPONDER_H */
