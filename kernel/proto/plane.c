// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Planes: the choice of a path's plane and the life of a plane's service.
 * The host serialises the calls on one plane; the choice is a function.
 */
#include "plane.h"

static u32 mr_plane_bits(u32 mask)
{
	u32 n = 0;

	for (; mask; mask &= mask - 1)
		n++;
	return n;
}

/* @count planes, the low bits of @usable: only those planes count. */
static u32 mr_plane_mask(u32 count, u32 usable)
{
	return usable & ((1u << count) - 1);
}

void mr_plane_masks_init(struct mr_plane_masks *m)
{
	m->usable = 0;
	m->probing = 0;
	m->retry = ~0ull;
}
EXPORT_SYMBOL_IF_KUNIT(mr_plane_masks_init);

/* Plane @id (@pl) at @now, into the masks. */
void mr_plane_masks_add(struct mr_plane_masks *m, const struct mr_plane *pl,
			u32 id, u64 now)
{
	if (mr_plane_usable(pl))
		m->usable |= 1u << id;
	else if (mr_plane_probing(pl, now))
		m->probing |= 1u << id;
	else if (pl->state == MR_PLANE_TIMED_OUT && pl->retry_at < m->retry)
		m->retry = pl->retry_at;
}
EXPORT_SYMBOL_IF_KUNIT(mr_plane_masks_add);

/*
 * Whether a plane that served, or was tried again, in @before does
 * neither in @after: the packets sent on it are lost with it.
 */
bool mr_plane_masks_lost(const struct mr_plane_masks *before,
			 const struct mr_plane_masks *after)
{
	return (before->usable | before->probing) &
	       ~(after->usable | after->probing);
}
EXPORT_SYMBOL_IF_KUNIT(mr_plane_masks_lost);

void mr_plane_init(struct mr_plane *pl, bool carrier, u64 now)
{
	pl->state = carrier ? MR_PLANE_UP : MR_PLANE_NO_CARRIER;
	pl->retry_at = 0;
	pl->retry_ns = MR_PLANE_RETRY_MIN_NS;
	pl->up_since = now;
}
EXPORT_SYMBOL_IF_KUNIT(mr_plane_init);

/* In service. */
bool mr_plane_usable(const struct mr_plane *pl)
{
	return pl->state == MR_PLANE_UP;
}
EXPORT_SYMBOL_IF_KUNIT(mr_plane_usable);

/* Timed out long enough ago to be tried again, by one path. */
bool mr_plane_probing(const struct mr_plane *pl, u64 now)
{
	return pl->state == MR_PLANE_TIMED_OUT && now >= pl->retry_at;
}
EXPORT_SYMBOL_IF_KUNIT(mr_plane_probing);

static enum mr_plane_change mr_plane_up(struct mr_plane *pl, u64 now)
{
	pl->state = MR_PLANE_UP;
	pl->up_since = now;
	return MR_PLANE_CAME_UP;
}

/*
 * Its netdev's carrier (and administrative state) changed: a plane without
 * carrier is out at once, whatever it was; one that gets it back is in.
 */
enum mr_plane_change mr_plane_carrier(struct mr_plane *pl, bool on, u64 now)
{
	if (!on) {
		if (pl->state == MR_PLANE_NO_CARRIER)
			return MR_PLANE_SAME;
		pl->state = MR_PLANE_NO_CARRIER;
		return MR_PLANE_WENT_DOWN;
	}
	if (pl->state != MR_PLANE_NO_CARRIER)
		return MR_PLANE_SAME;
	pl->retry_ns = MR_PLANE_RETRY_MIN_NS;
	return mr_plane_up(pl, now);
}
EXPORT_SYMBOL_IF_KUNIT(mr_plane_carrier);

/*
 * A packet arrived on the plane. One that answers what was sent on a plane
 * being tried again proves it carries traffic both ways; before its wait
 * is over, the plane stays out (the peer's data may cross a plane ours
 * cannot).
 */
enum mr_plane_change mr_plane_rx(struct mr_plane *pl, u64 now)
{
	if (pl->state != MR_PLANE_TIMED_OUT || now < pl->retry_at)
		return MR_PLANE_SAME;
	return mr_plane_up(pl, now);
}
EXPORT_SYMBOL_IF_KUNIT(mr_plane_rx);

/*
 * Every path of a connection on the plane timed out
 * (mr_plane_paths_timed_out()): the plane is out until its wait is over,
 * and the next wait is twice as long, unless it had stayed up long enough
 * for this to be a new failure.
 */
enum mr_plane_change mr_plane_timed_out(struct mr_plane *pl, u64 now)
{
	if (pl->state == MR_PLANE_NO_CARRIER)
		return MR_PLANE_SAME;
	if (pl->state == MR_PLANE_TIMED_OUT && now < pl->retry_at)
		return MR_PLANE_SAME;
	if (pl->state == MR_PLANE_UP && now - pl->up_since >= MR_PLANE_STABLE_NS)
		pl->retry_ns = MR_PLANE_RETRY_MIN_NS;
	pl->retry_at = now + pl->retry_ns;
	if (pl->retry_ns < MR_PLANE_RETRY_MAX_NS)
		pl->retry_ns *= 2;
	/* A plane tried again and out again was down all along. */
	if (pl->state == MR_PLANE_TIMED_OUT)
		return MR_PLANE_SAME;
	pl->state = MR_PLANE_TIMED_OUT;
	return MR_PLANE_WENT_DOWN;
}
EXPORT_SYMBOL_IF_KUNIT(mr_plane_timed_out);

/**
 * mr_plane_pick() - the plane path @path leaves on
 * @path: the path's id
 * @count: planes, 1..MR_PLANES_MAX
 * @usable: bit i set when plane i is in service
 * @probing: bit i set when plane i is tried again after its timeouts
 *
 * A path's own plane is @path modulo @count, so that paths spread evenly
 * and keep their plane while it serves. The paths of a plane out of
 * service spread over the planes in service, and come back to it when it
 * does; while it is tried again, its first path alone goes back to it.
 * With no plane in service, each path keeps its own.
 *
 * Return: the plane, below @count.
 */
u32 mr_plane_pick(u32 path, u32 count, u32 usable, u32 probing)
{
	u32 home, n, k, mask, i;

	if (!count)
		return 0;
	home = path % count;
	mask = mr_plane_mask(count, usable);
	if ((mask & (1u << home)) || !mask)
		return home;
	if ((probing & (1u << home)) && path < count)
		return home;
	n = mr_plane_bits(mask);
	k = (path / count) % n;
	for (i = 0; i < count; i++)
		if ((mask & (1u << i)) && k-- == 0)
			return i;
	return home;
}
EXPORT_SYMBOL_IF_KUNIT(mr_plane_pick);

/* How many of paths 0..@paths-1 leave on @plane. */
u32 mr_plane_paths(u32 plane, u32 paths, u32 count, u32 usable, u32 probing)
{
	u32 n = 0, id;

	for (id = 0; id < paths; id++)
		if (mr_plane_pick(id, count, usable, probing) == plane)
			n++;
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(mr_plane_paths);

void mr_plane_track_init(struct mr_plane_track *t)
{
	u32 id;

	for (id = 0; id < MR_PATH_MAX; id++)
		mr_plane_track_restart(t, id);
}
EXPORT_SYMBOL_IF_KUNIT(mr_plane_track_init);

/* Path @id starts a new PSN space (a failover): no plane holds its PSNs. */
void mr_plane_track_restart(struct mr_plane_track *t, u32 id)
{
	t->sent[id] = MR_PLANE_NONE;
	t->prev[id] = MR_PLANE_NONE;
	t->first[id] = 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_plane_track_restart);

/*
 * Path @id sent @psn on @plane (@resend: again; @nxt: the path's next new
 * PSN). A path that comes to another plane starts its record there with
 * its next new PSN: a resend's PSN was first sent where the path was.
 */
void mr_plane_track_sent(struct mr_plane_track *t, u32 id, u32 plane,
			 u32 psn, bool resend, u32 nxt)
{
	if (plane == t->sent[id])
		return;
	t->prev[id] = t->sent[id];
	t->sent[id] = (u8)plane;
	t->first[id] = resend ? nxt : psn;
}
EXPORT_SYMBOL_IF_KUNIT(mr_plane_track_sent);

/* Whether a timeout of path @id's @psn is about the plane it is on now. */
bool mr_plane_track_blames(const struct mr_plane_track *t, u32 id, u32 psn)
{
	return t->sent[id] != MR_PLANE_NONE && !mr_seq_before(psn, t->first[id]);
}
EXPORT_SYMBOL_IF_KUNIT(mr_plane_track_blames);

/*
 * Whether path @id's packets in flight (from @una on) were sent on a plane
 * that does not serve (@serving: the planes that do, for this peer): then
 * they are lost with it.
 */
bool mr_plane_track_lost(const struct mr_plane_track *t, u32 id, u32 una,
			 u32 serving)
{
	u8 now = t->sent[id], prev = t->prev[id];

	if (now == MR_PLANE_NONE)
		return false;
	if (!(serving & (1u << now)))
		return true;
	return prev != MR_PLANE_NONE && !(serving & (1u << prev)) &&
	       mr_seq_before(una, t->first[id]);
}
EXPORT_SYMBOL_IF_KUNIT(mr_plane_track_lost);

/*
 * Path @id of a connection times out again (it had timed out before, with
 * no acknowledgment since: one timeout may be congestion): whether every
 * path of the connection on the plane it sent on (@sent_on[i]: path i's
 * last packet's plane) has timed out too. A path with nothing in flight
 * tells nothing, nor does one that sent on another plane than the one it
 * is on now: its packets were lost where it was.
 */
bool mr_plane_paths_timed_out(const struct mr_paths *ps, const u8 *sent_on,
			      u32 id, u32 count, u32 usable, u32 probing)
{
	u32 plane = sent_on[id], i;

	if (ps->path[id].rtos + 1 < MR_PLANE_TIMEOUTS ||
	    plane != mr_plane_pick(id, count, usable, probing))
		return false;
	for (i = 0; i < ps->count; i++) {
		const struct mr_path *p = &ps->path[i];

		if (i == id || sent_on[i] != plane ||
		    mr_plane_pick(i, count, usable, probing) != plane)
			continue;
		if (p->inflight && !p->rtos)
			return false;
	}
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(mr_plane_paths_timed_out);
