// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Path scheduling. Everything is a function of the calls made and the seed
 * given, so that both a test and a simulation can replay it exactly.
 */
#include "path.h"

#define MR_PATH_PORT_MASK ((1u << MR_PATH_PORT_BITS) - 1)

/**
 * mr_path_port() - the source port for the counter-th port of a connection
 * @seed: per connection, so that connections spread differently
 * @counter: how many ports the connection has handed out before
 *
 * Each step below is a bijection on 14 bits, so 2^14 consecutive counters
 * give 2^14 distinct ports, all in [MR_PATH_PORT_MIN, MR_PATH_PORT_MAX].
 * The multiply and xorshift steps scatter neighbouring counters, since
 * switches may hash neighbouring ports alike.
 */
u16 mr_path_port(u32 seed, u32 counter)
{
	u32 x = (counter ^ seed) & MR_PATH_PORT_MASK;

	x = (x * 0x2c1bu + (seed >> MR_PATH_PORT_BITS)) & MR_PATH_PORT_MASK;
	x ^= x >> 7;
	x = (x * 0x1a35u) & MR_PATH_PORT_MASK;
	x ^= x >> 5;
	return (u16)(MR_PATH_PORT_MIN + x);
}
EXPORT_SYMBOL_IF_KUNIT(mr_path_port);

static bool mr_paths_port_used(const struct mr_paths *ps, u32 id, u16 port)
{
	u32 i;

	for (i = 0; i < ps->count; i++)
		if (i != id && ps->path[i].sport == port)
			return true;
	return false;
}

/* A fresh port, different from every other path's. */
static void mr_paths_new_port(struct mr_paths *ps, u32 id)
{
	u16 port;

	do {
		port = mr_path_port(ps->seed, ps->ports++);
	} while (mr_paths_port_used(ps, id, port));
	ps->path[id].sport = port;
}

static void mr_paths_start(struct mr_paths *ps, u32 id, u16 epoch)
{
	struct mr_path *p = &ps->path[id];

	ps->inflight -= p->inflight;
	p->window = MR_PATH_INIT_WINDOW;
	p->inflight = 0;
	p->rtos = 0;
	p->credit = 0;
	p->epoch = epoch;
	p->state = MR_PATH_ACTIVE;
	mr_paths_new_port(ps, id);
}

/**
 * mr_paths_init() - set up the paths of a connection, all active
 * @ps: the scheduler
 * @count: number of paths, 1..MR_PATH_MAX (MR_PATH_DEFAULT usually)
 * @fail_after: consecutive timeouts that fail a path, at least 1
 * @seed: source port seed, e.g. a hash of the connection's QPNs
 *
 * Return: 0, or -MR_EFIELD for a count or fail_after out of range.
 */
int mr_paths_init(struct mr_paths *ps, u32 count, u32 fail_after, u32 seed)
{
	if (!count || count > MR_PATH_MAX || !fail_after)
		return -MR_EFIELD;
	*ps = (struct mr_paths){
		.fail_after = fail_after,
		.seed = seed,
	};
	return mr_paths_set_count(ps, count);
}
EXPORT_SYMBOL_IF_KUNIT(mr_paths_init);

/**
 * mr_paths_set_count() - use more or fewer paths
 * @ps: the scheduler
 * @count: the new number of paths, 1..MR_PATH_MAX
 *
 * Added paths start fresh; removed ones must be idle, as their packets
 * would otherwise have to be moved first. A path that comes back does so
 * in a new epoch, since the receiver may still hold its old window.
 *
 * Return: 0, -MR_EFIELD for a bad count, -MR_EBUSY if a path to remove has
 * packets in flight (then nothing changes).
 */
int mr_paths_set_count(struct mr_paths *ps, u32 count)
{
	u32 i;

	if (!count || count > MR_PATH_MAX)
		return -MR_EFIELD;
	for (i = count; i < ps->count; i++)
		if (ps->path[i].inflight)
			return -MR_EBUSY;
	/* A removed path keeps its epoch, one ahead, for when it returns. */
	for (i = count; i < ps->count; i++)
		ps->path[i].epoch++;
	for (i = ps->count; i < count; i++) {
		ps->count = i + 1;
		mr_paths_start(ps, i, ps->path[i].epoch);
	}
	ps->count = count;
	ps->cursor %= count;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_paths_set_count);

/* Congestion control sets a path's window: 1..MR_PATH_MAX_WINDOW. */
void mr_paths_set_window(struct mr_paths *ps, u32 id, u32 window)
{
	if (id >= ps->count)
		return;
	if (window < 1)
		window = 1;
	if (window > MR_PATH_MAX_WINDOW)
		window = MR_PATH_MAX_WINDOW;
	ps->path[id].window = window;
}
EXPORT_SYMBOL_IF_KUNIT(mr_paths_set_window);

/*
 * A path's weight in the round robin: its window times the square of the
 * fraction of it that is free, room^2 / window, in 1/16 packets and at
 * least 1 while it has room. Equally filled paths share in proportion to
 * their windows. But when the connection's window binds first, every
 * path has room, and weights by the window alone would send each path its
 * share whatever its link does: a link that few paths hash to would idle
 * while one that many do queued. By room, a path whose packets wait in a
 * queue fills and gets fewer, one whose ACKs come back gets more: the
 * packets go where they are acknowledged.
 */
static u32 mr_path_weight(const struct mr_path *p)
{
	u32 room = p->window - p->inflight;

	return (room * room * 16 + p->window - 1) / p->window;
}

/**
 * mr_paths_pick_other() - choose the path for the next new packet, not
 * @avoid if another has room
 * @ps: the scheduler
 * @avoid: a path id to pass over (e.g. the one that carried the first
 *	copy of a request sent twice); MR_PATH_MAX avoids none
 *
 * A round robin over the active paths with room, weighted by their room
 * (smooth weighted round robin, mr_path_weight()): each gains its weight
 * in credit at every pick and the one with the most goes, losing the sum
 * of the weights. So packets spread in proportion to the windows among
 * paths equally filled, move away from paths that fill, and each path
 * with room keeps getting a share (a later packet of a path is what shows
 * its holes); equal windows and fill give each path one packet in every
 * round of picks, ties going to the path after the last one chosen.
 * While fewer packets are in flight than there are paths, a chosen path
 * takes up to MR_PATH_RUN new packets in a row: a short message then
 * crosses a few paths rather than one per packet, each of which its
 * receiver acknowledges and its sender keeps a record for, and a loss in
 * a run shows in the SACK of the packets after it instead of waiting for
 * the path's timer (4,000 QPs of 16 KiB messages: an ACK for every data
 * packet). O(paths). The chosen path is charged with the packet.
 *
 * Return: the path id, -MR_EAGAIN if every active path is full, or
 * -MR_ENOPATH if no path is active.
 */
int mr_paths_pick_other(struct mr_paths *ps, u32 avoid)
{
	u32 k, id, active = 0, total = 0, weight;
	int best = -1, spare = -1;
	struct mr_path *p;

	if (ps->run_left && ps->run_id < ps->count && ps->run_id != avoid &&
	    ps->inflight < ps->count) {
		p = &ps->path[ps->run_id];
		if (p->state == MR_PATH_ACTIVE && p->inflight < p->window) {
			ps->run_left--;
			p->inflight++;
			ps->inflight++;
			return (int)ps->run_id;
		}
	}
	ps->run_left = 0;
	for (k = 0; k < ps->count; k++) {
		id = (ps->cursor + k) % ps->count;
		p = &ps->path[id];
		if (p->state != MR_PATH_ACTIVE)
			continue;
		active++;
		if (p->inflight >= p->window)
			continue;
		weight = mr_path_weight(p);
		p->credit += (s32)weight;
		total += weight;
		if (id == avoid)
			spare = (int)id;
		else if (best < 0 || p->credit > ps->path[best].credit)
			best = (int)id;
	}
	if (best < 0)
		best = spare;
	if (best < 0)
		return active ? -MR_EAGAIN : -MR_ENOPATH;
	p = &ps->path[best];
	p->credit -= (s32)total;
	p->inflight++;
	ps->inflight++;
	ps->cursor = ((u32)best + 1) % ps->count;
	ps->run_id = (u32)best;
	ps->run_left = MR_PATH_RUN - 1;
	return best;
}

/* mr_paths_pick_other() avoiding no path. */
int mr_paths_pick(struct mr_paths *ps)
{
	return mr_paths_pick_other(ps, MR_PATH_MAX);
}
EXPORT_SYMBOL_IF_KUNIT(mr_paths_pick);

/**
 * mr_paths_charge() - charge a resent packet to the path it belongs to
 * @ps: the scheduler
 * @id: the path; a resend keeps its path and PSN
 *
 * Return: 0, -MR_EFIELD for no such path, -MR_ENOPATH if it failed,
 * -MR_EAGAIN if its window is full.
 */
int mr_paths_charge(struct mr_paths *ps, u32 id)
{
	struct mr_path *p;

	if (id >= ps->count)
		return -MR_EFIELD;
	p = &ps->path[id];
	if (p->state != MR_PATH_ACTIVE)
		return -MR_ENOPATH;
	if (p->inflight >= p->window)
		return -MR_EAGAIN;
	p->inflight++;
	ps->inflight++;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_paths_charge);

/*
 * A packet of path @id reported lost goes again: it is in flight once
 * more, whatever the window (it held its place before).
 */
void mr_paths_recharge(struct mr_paths *ps, u32 id)
{
	if (id >= ps->count)
		return;
	ps->path[id].inflight++;
	ps->inflight++;
}
EXPORT_SYMBOL_IF_KUNIT(mr_paths_recharge);

static void mr_path_uncharge(struct mr_paths *ps, struct mr_path *p, u32 n)
{
	if (n > p->inflight)
		n = p->inflight;
	p->inflight -= n;
	ps->inflight -= n;
}

/* The packet mr_paths_pick() chose path @id for did not go. */
void mr_paths_unpick(struct mr_paths *ps, u32 id)
{
	if (id < ps->count)
		mr_path_uncharge(ps, &ps->path[id], 1);
}
EXPORT_SYMBOL_IF_KUNIT(mr_paths_unpick);

/* An ACK left n_acked packets acknowledged and n_lost newly lost. */
void mr_paths_ack(struct mr_paths *ps, u32 id, u32 n_acked, u32 n_lost)
{
	struct mr_path *p;

	if (id >= ps->count)
		return;
	p = &ps->path[id];
	mr_path_uncharge(ps, p, n_acked + n_lost);
	if (n_acked)
		p->rtos = 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_paths_ack);

/**
 * mr_paths_timeout() - the path's retransmission timer fired
 * @ps: the scheduler
 * @id: the path
 * @n_lost: packets the timeout declared lost
 *
 * Return: true if the path has now failed: the caller moves its
 * unacknowledged packets to other paths, then calls mr_paths_restart().
 */
bool mr_paths_timeout(struct mr_paths *ps, u32 id, u32 n_lost)
{
	struct mr_path *p;

	if (id >= ps->count)
		return false;
	p = &ps->path[id];
	mr_path_uncharge(ps, p, n_lost);
	if (p->state != MR_PATH_ACTIVE)
		return false;
	if (++p->rtos < ps->fail_after)
		return false;
	p->state = MR_PATH_FAILED;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(mr_paths_timeout);

/**
 * mr_paths_restart() - bring a path back on a new source port
 * @ps: the scheduler
 * @id: the path
 *
 * The new epoch tells the receiver to drop the old PSN space: reset the
 * path's SACK state and RTO estimator with it.
 *
 * Return: 0, or -MR_EFIELD for no such path.
 */
int mr_paths_restart(struct mr_paths *ps, u32 id)
{
	if (id >= ps->count)
		return -MR_EFIELD;
	mr_paths_start(ps, id, ps->path[id].epoch + 1);
	/* Its packets move to other paths: no run brings them back. */
	if (ps->run_id == id)
		ps->run_left = 0;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_paths_restart);
