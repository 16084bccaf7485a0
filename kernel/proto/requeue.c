// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The requeue ring: a FIFO over caller-given slots.
 */
#include "requeue.h"

/* An empty ring over @size slots at @slot. */
void mr_requeue_init(struct mr_requeue_ring *q, struct mr_requeue *slot,
		     u32 size)
{
	q->slot = slot;
	q->size = size;
	mr_requeue_reset(q);
}

/* Drop every entry. */
void mr_requeue_reset(struct mr_requeue_ring *q)
{
	q->head = 0;
	q->count = 0;
}

/* Append a copy of @e. Return: 0, or -MR_ENOSPC when the ring is full. */
int mr_requeue_push(struct mr_requeue_ring *q, const struct mr_requeue *e)
{
	if (q->count == q->size)
		return -MR_ENOSPC;
	q->slot[(q->head + q->count++) % q->size] = *e;
	return 0;
}

/* The oldest entry, or NULL when the ring is empty. */
const struct mr_requeue *mr_requeue_front(const struct mr_requeue_ring *q)
{
	return q->count ? &q->slot[q->head] : NULL;
}

/* Drop the oldest entry; nothing when the ring is empty. */
void mr_requeue_pop(struct mr_requeue_ring *q)
{
	if (!q->count)
		return;
	q->head = (q->head + 1) % q->size;
	q->count--;
}
