// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The requeue (requeue.h): a FIFO of failed paths' rings, each with a map
 * of its packets still to move.
 */
#include "requeue.h"

void mr_requeue_init(struct mr_requeue *q)
{
	*q = (struct mr_requeue){ 0 };
}

/* Ring @r moves nothing (a ring lent to a path). */
void mr_requeue_clear(struct mr_tx_ring *r)
{
	u32 w;

	for (w = 0; w < MR_SACK_WORDS; w++)
		r->moving[w] = 0;
	r->left = 0;
}

static bool mr_requeue_bit(const struct mr_tx_ring *r, u32 psn)
{
	u32 i = psn % MR_SACK_WINDOW;

	return r->moving[i / 64] >> (i % 64) & 1;
}

/*
 * Before mr_requeue_push(): PSN @psn of ring @r is to move. The first one
 * marked is the oldest; the others follow in PSN order, within 256 of it.
 */
void mr_requeue_mark(struct mr_tx_ring *r, u32 psn)
{
	u32 i = psn % MR_SACK_WINDOW;

	if (!r->left)
		r->next_psn = psn;
	if (mr_requeue_bit(r, psn))
		return;
	r->moving[i / 64] |= 1ull << (i % 64);
	r->left++;
}

/* Append ring @r, its packets marked (mr_requeue_mark()), at least one. */
void mr_requeue_push(struct mr_requeue *q, struct mr_tx_ring *r)
{
	r->next = NULL;
	if (q->tail)
		q->tail->next = r;
	else
		q->head = r;
	q->tail = r;
	q->count += r->left;
}

/* The oldest packet to move, or NULL when there is none. */
const struct mr_tx_pkt *mr_requeue_front(struct mr_requeue *q)
{
	struct mr_tx_ring *r = q->head;

	if (!r)
		return NULL;
	while (!mr_requeue_bit(r, r->next_psn))
		r->next_psn++;
	return &r->pkt[r->next_psn % MR_SACK_WINDOW];
}

/*
 * Drop the oldest packet (after mr_requeue_front()). Return its ring when
 * that was its last, for the caller to give back; else NULL.
 */
struct mr_tx_ring *mr_requeue_pop(struct mr_requeue *q)
{
	struct mr_tx_ring *r = q->head;
	u32 i;

	if (!r || !mr_requeue_front(q))
		return NULL;
	i = r->next_psn++ % MR_SACK_WINDOW;
	r->moving[i / 64] &= ~(1ull << (i % 64));
	q->count--;
	if (--r->left)
		return NULL;
	q->head = r->next;
	if (!q->head)
		q->tail = NULL;
	return r;
}

/* Take out the oldest ring, whatever is left in it; NULL when empty. */
struct mr_tx_ring *mr_requeue_take(struct mr_requeue *q)
{
	struct mr_tx_ring *r = q->head;

	if (!r)
		return NULL;
	q->head = r->next;
	if (!q->head)
		q->tail = NULL;
	q->count -= r->left;
	mr_requeue_clear(r);
	return r;
}
