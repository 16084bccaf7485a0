/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Trace events of metaroce.ko (events/metaroce/ in tracefs). trace.c defines
 * CREATE_TRACE_POINTS before including this file.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM metaroce

#if !defined(METAROCE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define METAROCE_TRACE_H

#include <linux/tracepoint.h>

#include "metaroce.h"
#include "proto/wire.h"

/* A received datagram: its headers as decoded, and what became of it. */
TRACE_EVENT(metaroce_rx,
	    TP_PROTO(const struct mr_dev *dev, u32 len,
		     const struct mr_pkt *pkt, const char *verdict),
	    TP_ARGS(dev, len, pkt, verdict),
	    TP_STRUCT__entry(__string(dev, dev_name(&dev->ib_dev.dev))
			     __field(u32, len)
			     __field(u8, opcode)
			     __field(u8, path)
			     __field(u16, epoch)
			     __field(u32, qpn)
			     __field(u32, psn)
			     __string(verdict, verdict)),
	    TP_fast_assign(__assign_str(dev, dev_name(&dev->ib_dev.dev));
			   __entry->len = len;
			   __entry->opcode = pkt->base.opcode;
			   __entry->path = pkt->base.path;
			   __entry->epoch = pkt->base.epoch;
			   __entry->qpn = pkt->base.qpn;
			   __entry->psn = pkt->base.psn;
			   __assign_str(verdict, verdict);),
	    TP_printk("%s len=%u op=0x%02x qpn=0x%06x path=%u epoch=%u psn=%u %s",
		      __get_str(dev), __entry->len, __entry->opcode,
		      __entry->qpn, __entry->path, __entry->epoch,
		      __entry->psn, __get_str(verdict))
);

/* A datagram handed to the IP layer, or refused before it. */
TRACE_EVENT(metaroce_tx,
	    TP_PROTO(const struct mr_dev *dev, const struct mr_flow *flow,
		     __be16 dport, u32 len, int err),
	    TP_ARGS(dev, flow, dport, len, err),
	    TP_STRUCT__entry(__string(dev, dev_name(&dev->ib_dev.dev))
			     __array(u8, saddr, sizeof(struct in6_addr))
			     __array(u8, daddr, sizeof(struct in6_addr))
			     __field(u16, sport)
			     __field(u16, dport)
			     __field(u32, len)
			     __field(int, err)),
	    TP_fast_assign(__assign_str(dev, dev_name(&dev->ib_dev.dev));
			   memcpy(__entry->saddr, &flow->saddr,
				  sizeof(__entry->saddr));
			   memcpy(__entry->daddr, &flow->daddr,
				  sizeof(__entry->daddr));
			   __entry->sport = be16_to_cpu(flow->sport);
			   __entry->dport = be16_to_cpu(dport);
			   __entry->len = len;
			   __entry->err = err;),
	    TP_printk("%s %pI6c:%u -> %pI6c:%u len=%u err=%d",
		      __get_str(dev), __entry->saddr, __entry->sport,
		      __entry->daddr, __entry->dport, __entry->len,
		      __entry->err)
);

/* A packet sent again: why ("sack", "probe", "rto", "moved"), and where. */
TRACE_EVENT(metaroce_retransmit,
	    TP_PROTO(u32 qpn, u32 path, u16 epoch, u32 psn, u32 msn,
		     u32 offset, bool resp, const char *why),
	    TP_ARGS(qpn, path, epoch, psn, msn, offset, resp, why),
	    TP_STRUCT__entry(__field(u32, qpn)
			     __field(u32, path)
			     __field(u16, epoch)
			     __field(u32, psn)
			     __field(u32, msn)
			     __field(u32, offset)
			     __field(bool, resp)
			     __string(why, why)),
	    TP_fast_assign(__entry->qpn = qpn;
			   __entry->path = path;
			   __entry->epoch = epoch;
			   __entry->psn = psn;
			   __entry->msn = msn;
			   __entry->offset = offset;
			   __entry->resp = resp;
			   __assign_str(why, why);),
	    TP_printk("qpn=0x%06x path=%u epoch=%u psn=%u %s msn=%u offset=%u %s",
		      __entry->qpn, __entry->path, __entry->epoch, __entry->psn,
		      __entry->resp ? "response" : "request", __entry->msn,
		      __entry->offset, __get_str(why))
);

/* A path failed: its packets moved, and it restarted on a new port. */
TRACE_EVENT(metaroce_path_failover,
	    TP_PROTO(u32 qpn, u32 path, u16 old_epoch, u16 old_sport,
		     u16 epoch, u16 sport, u32 moved),
	    TP_ARGS(qpn, path, old_epoch, old_sport, epoch, sport, moved),
	    TP_STRUCT__entry(__field(u32, qpn)
			     __field(u32, path)
			     __field(u16, old_epoch)
			     __field(u16, old_sport)
			     __field(u16, epoch)
			     __field(u16, sport)
			     __field(u32, moved)),
	    TP_fast_assign(__entry->qpn = qpn;
			   __entry->path = path;
			   __entry->old_epoch = old_epoch;
			   __entry->old_sport = old_sport;
			   __entry->epoch = epoch;
			   __entry->sport = sport;
			   __entry->moved = moved;),
	    TP_printk("qpn=0x%06x path=%u failed (epoch %u, port %u): %u packets moved; now epoch %u, port %u",
		      __entry->qpn, __entry->path, __entry->old_epoch,
		      __entry->old_sport, __entry->moved, __entry->epoch,
		      __entry->sport)
);

/* Congestion control shrank a window: which, why, and what it is now. */
TRACE_EVENT(metaroce_cc,
	    TP_PROTO(u32 qpn, u32 path, int verdict, u32 path_cwnd, u32 alpha,
		     u32 conn_cwnd, u64 srtt_ns, u32 hint_kbps),
	    TP_ARGS(qpn, path, verdict, path_cwnd, alpha, conn_cwnd, srtt_ns,
		    hint_kbps),
	    TP_STRUCT__entry(__field(u32, qpn)
			     __field(u32, path)
			     __field(int, verdict)
			     __field(u32, path_cwnd)
			     __field(u32, alpha)
			     __field(u32, conn_cwnd)
			     __field(u64, srtt_ns)
			     __field(u32, hint_kbps)),
	    TP_fast_assign(__entry->qpn = qpn;
			   __entry->path = path;
			   __entry->verdict = verdict;
			   __entry->path_cwnd = path_cwnd;
			   __entry->alpha = alpha;
			   __entry->conn_cwnd = conn_cwnd;
			   __entry->srtt_ns = srtt_ns;
			   __entry->hint_kbps = hint_kbps;),
	    TP_printk("qpn=0x%06x path=%u %s path_cwnd=%u/1024 alpha=%u/65536 conn_cwnd=%u/1024 srtt=%lluns hint=%ukbps",
		      __entry->qpn, __entry->path,
		      __print_symbolic(__entry->verdict,
				       { 2, "ecn" }, { 3, "loss" }),
		      __entry->path_cwnd, __entry->alpha, __entry->conn_cwnd,
		      __entry->srtt_ns, __entry->hint_kbps)
);

#endif /* METAROCE_TRACE_H */

/* This part must be outside the include guard. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
