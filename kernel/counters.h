/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-device counters, shown by `rdma statistic` as port hw counters. The
 * hot paths bump per-CPU copies with the inline helpers here; counters.c
 * names them and adds them up. The port's table ends with the per-QP
 * counters that restrack.c counts for QPs bound to a counter.
 */
#ifndef METAROCE_COUNTERS_H
#define METAROCE_COUNTERS_H

#include <linux/percpu.h>

#include "metaroce.h"

/*
 * Counters, in the order `rdma statistic` lists them. Their names are
 * stable for scripts: new ones go at the end.
 */
enum mr_counter {
	MR_CNT_RX_PACKETS,	/* datagrams that reached a device */
	MR_CNT_RX_BYTES,	/* their UDP payload bytes */
	MR_CNT_TX_PACKETS,
	MR_CNT_TX_BYTES,
	MR_CNT_RX_DROP_SHORT,	/* shorter than the headers it announces */
	MR_CNT_RX_DROP_VERSION,
	MR_CNT_RX_DROP_MALFORMED,
	MR_CNT_RX_DROP_NO_CSUM,	/* a datagram without UDP checksum */
	MR_CNT_RX_DROP_NO_QP,
	MR_CNT_RX_DROP_NO_DEV,	/* per netns: no device on the ingress netdev */
	MR_CNT_TX_DROP_NO_ROUTE,
	MR_CNT_TX_DROP_ERROR,	/* no socket, or a flow we cannot send */
	MR_CNT_RETRANSMITS,
	MR_CNT_SACK_GAPS,
	MR_CNT_RTO_EVENTS,
	MR_CNT_DUPLICATE_PACKETS,
	MR_CNT_OUT_OF_ORDER,
	MR_CNT_PATH_FAILOVERS,
	MR_CNT_TAIL_PROBES,	/* a path's last packets, resent before its RTO */
	MR_CNT_RTO_DEFERRED,	/* a timer early: older packets still coming back */
	MR_CNT_SPURIOUS_RESENDS,	/* a SACK gap arrived twice: reordered */
	MR_CNT_RNR_NAKS,	/* sent: a SEND found no receive posted */
	MR_CNT_UD_RX_DROP_QKEY,	/* a datagram with the wrong Q_Key */
	MR_CNT_UD_RX_DROP_NO_RECV,	/* no receive posted, or QP not ready */
	MR_CNT_UD_RX_TOO_LONG,	/* longer than its receive: length error */
	MR_CNT_UD_TX_TOO_LONG,	/* a send WR above the path MTU */
	MR_CNT_GSI_TX_PACKETS,	/* MADs sent from QP1 */
	MR_CNT_GSI_RX_PACKETS,	/* MADs delivered to QP1 */
	/* UC messages the responder dropped (never NAKed), by cause: */
	MR_CNT_UC_RX_DROP_NO_RECV,	/* no receive posted at its first packet */
	MR_CNT_UC_RX_DROP_REMOTE_ACCESS,	/* rkey, bounds or QP access */
	MR_CNT_UC_RX_DROP_TOO_LONG,	/* longer than its receive */
	MR_CNT_UC_RX_DROP_RECV_FAULT,	/* its receive's SGEs are unusable */
	MR_CNT_UC_RX_DROP_INVALID,	/* READ, atomic or malformed on UC */
	/* Congestion control: */
	MR_CNT_CE_MARKS,	/* received marked Congestion Experienced */
	MR_CNT_CC_DECREASES,	/* a path's or the connection's window shrank */
	MR_CNT_CC_HINT_LIMITED,	/* sent at the receiver's hint, not faster */
	MR_CNT_CC_PACED,	/* a new packet waited for pacing */
	/* Connection security: */
	MR_CNT_RX_DROP_NOT_PEER,	/* RC/UC: not from the connected peer */
	MR_CNT_RX_DROP_BAD_TAG,	/* RC/UC: without the connection's tag */
	MR_CNT_RX_DROP_EARLY,	/* with it, before we hold the peer's */
	MR_CNT_HELLO_TX,	/* HELLOs sent (the tag handshake) */
	MR_CNT_HELLO_RX,	/* HELLOs received from the peer's address */
	/* Bounds on what a peer can make us hold or send: */
	MR_CNT_RX_REFUSED_MAP_BUDGET,	/* slice map past the QP's budget */
	MR_CNT_FATAL_NAKS,	/* a fatal NAK repeated to a later packet */
	MR_CNT_FATAL_NAKS_SUPPRESSED,	/* ... not repeated: within the gap */
	MR_CNT_ACKS_HELD,	/* a completion's ACKs past MR_ACK_BURST */
	MR_CNT_RX_DROP_RD_EXCESS,	/* a READ/atomic past max_dest_rd_atomic */
	MR_CNT_RX_DROP_DEV_MAP_BUDGET,	/* slice map past the device's budget */
	MR_CNT_SRQ_RNR_HOLD_LIMIT,	/* RNR: past a QP's share of its SRQ */
	/* A peer that holds the tag and lies: */
	MR_CNT_RX_DROP_BOGUS_NAK,	/* a fatal NAK of no packet in flight */
	MR_CNT_RX_BOGUS_MSN_DONE,	/* "MSN done" past every MSN sent */
	/* Encryption (crypt.c): */
	MR_CNT_TX_ENCRYPTED,
	MR_CNT_RX_DECRYPTED,
	MR_CNT_RX_DROP_AUTH,	/* the tag failed: tampered, or another key */
	MR_CNT_RX_DROP_NOT_ENCRYPTED,	/* clear, to a device with a key */
	/* Of the codec's drops, those encrypted, to a device without a key: */
	MR_CNT_RX_DROP_ENCRYPTED,
	MR_CNT_RX_DROP_NO_KEY,	/* the peer's keys are not made (yet) */
	MR_CNT_TX_DROP_NO_KEY,
	/* keys made for a new sender whose packet did not open: not kept */
	MR_CNT_RX_PEER_UNPROVEN,
	/* a nonce counter taken before, or too old: a replay */
	MR_CNT_RX_DROP_REPLAY,
	/* keys for a new sender not made: past the rate of derivations */
	MR_CNT_RX_KEY_RATE_LIMITED,
	MR_CNT_PEER_EVICTIONS,	/* a peer's keys freed to make room */
	MR_CNT_PEER_TABLE_FULL,	/* no room for a new peer: none idle */
	/* a mapped ring with an index out of range or a bad WQE: QP to ERR */
	MR_CNT_RING_ERRORS,
	/* a path found no memory for its packet records: it tries later */
	MR_CNT_TX_RING_WAITS,
	MR_NUM_COUNTERS
};

/*
 * Per-QP counters (restrack.c), after the device's in the port's table:
 * ib_core adds a counter's values to the port's by index, so both tables
 * are one. The port itself reports 0 for them; `rdma statistic show link`
 * adds up what every counter, live or released, counted.
 */
enum mr_qp_counter {
	MR_QPC_TX_PACKETS = MR_NUM_COUNTERS,	/* data, resends included */
	MR_QPC_RETRANSMITS,
	MR_QPC_SACK_GAPS,
	MR_QPC_RTO_EVENTS,
	MR_QPC_TAIL_PROBES,
	MR_QPC_PATH_FAILOVERS,
	MR_QPC_RNR_NAKS,
	MR_QPC_CE_MARKS,	/* marks the peer echoed to us */
	MR_QPC_CC_DECREASES,
	MR_QPC_CC_HINT_LIMITED,
	MR_NUM_PORT_COUNTERS
};

#define MR_NUM_QP_COUNTERS (MR_NUM_PORT_COUNTERS - MR_NUM_COUNTERS)

struct mr_stats {
	u64 c[MR_NUM_COUNTERS];
};

static inline void mr_stats_add(struct mr_dev *dev, enum mr_counter i, u64 n)
{
	this_cpu_add(dev->stats->c[i], n);
}

static inline void mr_stats_inc(struct mr_dev *dev, enum mr_counter i)
{
	this_cpu_inc(dev->stats->c[i]);
}

int mr_counters_init(struct mr_dev *dev);
void mr_counters_free(struct mr_dev *dev);
const char *mr_counters_name(enum mr_counter i);
struct rdma_hw_stats *mr_counters_alloc_stats(void);
void mr_counters_sum(struct mr_dev *dev, u64 *values);

#endif /* METAROCE_COUNTERS_H */
