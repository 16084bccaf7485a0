// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Per-device counters, as port hw counters: `rdma statistic show link
 * mrc0/1` and /sys/class/infiniband/mrc0/ports/1/hw_counters/. The hot
 * paths bump per-CPU copies (counters.h); readers add them up here.
 */
#include <kunit/visibility.h>
#include "counters.h"

static const struct rdma_stat_desc mr_counters_descs[] = {
	[MR_CNT_RX_PACKETS].name = "rx_packets",
	[MR_CNT_RX_BYTES].name = "rx_bytes",
	[MR_CNT_TX_PACKETS].name = "tx_packets",
	[MR_CNT_TX_BYTES].name = "tx_bytes",
	[MR_CNT_RX_DROP_SHORT].name = "rx_drop_short",
	[MR_CNT_RX_DROP_VERSION].name = "rx_drop_version",
	[MR_CNT_RX_DROP_MALFORMED].name = "rx_drop_malformed",
	[MR_CNT_RX_DROP_NO_CSUM].name = "rx_drop_no_csum",
	[MR_CNT_RX_DROP_NO_QP].name = "rx_drop_no_qp",
	[MR_CNT_RX_DROP_NO_DEV].name = "rx_drop_no_dev",
	[MR_CNT_TX_DROP_NO_ROUTE].name = "tx_drop_no_route",
	[MR_CNT_TX_DROP_ERROR].name = "tx_drop_error",
	[MR_CNT_RETRANSMITS].name = "retransmits",
	[MR_CNT_SACK_GAPS].name = "sack_gaps",
	[MR_CNT_RTO_EVENTS].name = "rto_events",
	[MR_CNT_DUPLICATE_PACKETS].name = "duplicate_packets",
	[MR_CNT_OUT_OF_ORDER].name = "out_of_order",
	[MR_CNT_PATH_FAILOVERS].name = "path_failovers",
	[MR_CNT_TAIL_PROBES].name = "tail_probes",
	[MR_CNT_RTO_DEFERRED].name = "rto_deferred",
	[MR_CNT_SPURIOUS_RESENDS].name = "spurious_resends",
	[MR_CNT_RNR_NAKS].name = "rnr_naks",
	[MR_CNT_UD_RX_DROP_QKEY].name = "ud_rx_drop_qkey",
	[MR_CNT_UD_RX_DROP_NO_RECV].name = "ud_rx_drop_no_recv",
	[MR_CNT_UD_RX_TOO_LONG].name = "ud_rx_too_long",
	[MR_CNT_UD_TX_TOO_LONG].name = "ud_tx_too_long",
	[MR_CNT_GSI_TX_PACKETS].name = "gsi_tx_packets",
	[MR_CNT_GSI_RX_PACKETS].name = "gsi_rx_packets",
	[MR_CNT_UC_RX_DROP_NO_RECV].name = "uc_rx_drop_no_recv",
	[MR_CNT_UC_RX_DROP_REMOTE_ACCESS].name = "uc_rx_drop_remote_access",
	[MR_CNT_UC_RX_DROP_TOO_LONG].name = "uc_rx_drop_too_long",
	[MR_CNT_UC_RX_DROP_RECV_FAULT].name = "uc_rx_drop_recv_fault",
	[MR_CNT_UC_RX_DROP_INVALID].name = "uc_rx_drop_invalid",
	[MR_CNT_CE_MARKS].name = "ce_marks",
	[MR_CNT_CC_DECREASES].name = "cc_decreases",
	[MR_CNT_CC_HINT_LIMITED].name = "cc_hint_limited",
	[MR_CNT_CC_PACED].name = "cc_paced",
	[MR_CNT_RX_DROP_NOT_PEER].name = "rx_drop_not_peer",
	[MR_CNT_RX_DROP_BAD_TAG].name = "rx_drop_bad_tag",
	[MR_CNT_RX_DROP_EARLY].name = "rx_drop_early",
	[MR_CNT_HELLO_TX].name = "hello_tx",
	[MR_CNT_HELLO_RX].name = "hello_rx",
	[MR_CNT_RX_REFUSED_MAP_BUDGET].name = "rx_refused_map_budget",
	[MR_CNT_FATAL_NAKS].name = "fatal_naks",
	[MR_CNT_FATAL_NAKS_SUPPRESSED].name = "fatal_naks_suppressed",
	[MR_CNT_ACKS_HELD].name = "acks_held",
	[MR_CNT_RX_DROP_RD_EXCESS].name = "rx_drop_rd_excess",
	[MR_CNT_RX_DROP_DEV_MAP_BUDGET].name = "rx_drop_dev_map_budget",
	[MR_CNT_SRQ_RNR_HOLD_LIMIT].name = "srq_rnr_hold_limit",
	[MR_CNT_RX_DROP_BOGUS_NAK].name = "rx_drop_bogus_nak",
	[MR_CNT_RX_BOGUS_MSN_DONE].name = "rx_bogus_msn_done",
	[MR_CNT_TX_ENCRYPTED].name = "tx_encrypted",
	[MR_CNT_RX_DECRYPTED].name = "rx_decrypted",
	[MR_CNT_RX_DROP_AUTH].name = "rx_drop_auth",
	[MR_CNT_RX_DROP_NOT_ENCRYPTED].name = "rx_drop_not_encrypted",
	[MR_CNT_RX_DROP_ENCRYPTED].name = "rx_drop_encrypted",
	[MR_CNT_RX_DROP_NO_KEY].name = "rx_drop_no_key",
	[MR_CNT_TX_DROP_NO_KEY].name = "tx_drop_no_key",
	[MR_CNT_RX_PEER_UNPROVEN].name = "rx_peer_unproven",
	[MR_CNT_RX_DROP_REPLAY].name = "rx_drop_replay",
	[MR_CNT_RX_KEY_RATE_LIMITED].name = "rx_key_rate_limited",
	[MR_CNT_PEER_EVICTIONS].name = "peer_evictions",
	[MR_CNT_PEER_TABLE_FULL].name = "peer_table_full",
	[MR_CNT_RING_ERRORS].name = "ring_errors",
	[MR_CNT_TX_RING_WAITS].name = "tx_ring_waits",
	[MR_QPC_TX_PACKETS].name = "qp_tx_packets",
	[MR_QPC_RETRANSMITS].name = "qp_retransmits",
	[MR_QPC_SACK_GAPS].name = "qp_sack_gaps",
	[MR_QPC_RTO_EVENTS].name = "qp_rto_events",
	[MR_QPC_TAIL_PROBES].name = "qp_tail_probes",
	[MR_QPC_PATH_FAILOVERS].name = "qp_path_failovers",
	[MR_QPC_RNR_NAKS].name = "qp_rnr_naks",
	[MR_QPC_CE_MARKS].name = "qp_ce_marks",
	[MR_QPC_CC_DECREASES].name = "qp_cc_decreases",
	[MR_QPC_CC_HINT_LIMITED].name = "qp_cc_hint_limited",
};

static_assert(ARRAY_SIZE(mr_counters_descs) == MR_NUM_PORT_COUNTERS);

const char *mr_counters_name(enum mr_counter i)
{
	return mr_counters_descs[i].name;
}
EXPORT_SYMBOL_IF_KUNIT(mr_counters_name);

/*
 * The port's hw counters (device.c), or a counter's (restrack.c): the same
 * table, as ib_core adds them up by index.
 */
struct rdma_hw_stats *mr_counters_alloc_stats(void)
{
	return rdma_alloc_hw_stats_struct(mr_counters_descs,
					  MR_NUM_PORT_COUNTERS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/*
 * Add up the per-CPU copies into @values (MR_NUM_COUNTERS of them; the
 * per-QP ones after them are the counters', not the device's).
 */
void mr_counters_sum(struct mr_dev *dev, u64 *values)
{
	unsigned int i;
	int cpu;

	memset(values, 0, MR_NUM_COUNTERS * sizeof(*values));
	for_each_possible_cpu(cpu) {
		const struct mr_stats *s = per_cpu_ptr(dev->stats, cpu);

		for (i = 0; i < MR_NUM_COUNTERS; i++)
			values[i] += READ_ONCE(s->c[i]);
	}
}
EXPORT_SYMBOL_IF_KUNIT(mr_counters_sum);

/* Before registration: ib_core reads the counters from then on. */
int mr_counters_init(struct mr_dev *dev)
{
	dev->stats = alloc_percpu(struct mr_stats);
	return dev->stats ? 0 : -ENOMEM;
}
EXPORT_SYMBOL_IF_KUNIT(mr_counters_init);

void mr_counters_free(struct mr_dev *dev)
{
	free_percpu(dev->stats);
	dev->stats = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(mr_counters_free);
