// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The transport (req.c, resp.c, ack.c) and the local WRs (local.c) in the
 * KUnit module, so that the QPs of qp_kunit.c have them. net.c is not part
 * of this module: nothing here sends, and the two calls into it are stubs
 * that drop the packet.
 * The transport itself is covered by selftests/tests/30-rc-pingpong.sh.
 */
#include "../req.c"
#include "../resp.c"
#include "../ack.c"
#include "../local.c"

struct sk_buff *mr_alloc_skb(struct mr_dev *dev, unsigned int len, gfp_t gfp)
{
	return NULL;
}

int mr_xmit(struct mr_dev *dev, struct sk_buff *skb,
	    const struct mr_flow *flow)
{
	kfree_skb(skb);
	return -ENOTCONN;
}

/* net.c defines the trace points in metaroce.ko; here, for this module. */
#define CREATE_TRACE_POINTS
#include "../trace.h"
