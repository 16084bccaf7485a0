/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The message window: a requester has at most MR_MSG_WINDOW messages
 * started and not complete, and a responder places only the messages of
 * the window from its "MSN done". MSNs are 32-bit and wrap.
 */
#ifndef METAROCE_PROTO_WINDOW_H
#define METAROCE_PROTO_WINDOW_H

#include "types.h"

/* Messages a requester may have started and not completed. */
#define MR_MSG_WINDOW 128

/*
 * Whether message @msn is one of the MR_MSG_WINDOW messages from @base:
 * for a requester, whether it may start @msn while @base is the oldest
 * not complete; for a responder, whether it places @msn. A @msn before
 * @base is outside (its distance wraps to near 2^32).
 */
static inline bool mr_window_in(u32 msn, u32 base)
{
	return msn - base < MR_MSG_WINDOW;
}

#endif /* METAROCE_PROTO_WINDOW_H */
