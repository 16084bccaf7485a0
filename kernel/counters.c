// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Per-device counters, as port hw counters: `rdma statistic show link
 * mrc0/1` and /sys/class/infiniband/mrc0/ports/1/hw_counters/. The hot
 * paths bump per-CPU copies; readers add them up.
 */
#include "net.h"

static const struct rdma_stat_desc mr_counter_descs[] = {
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
};

static_assert(ARRAY_SIZE(mr_counter_descs) == MR_NUM_COUNTERS);

const char *mr_counter_name(enum mr_counter i)
{
	return mr_counter_descs[i].name;
}

static struct rdma_hw_stats *mr_alloc_hw_port_stats(struct ib_device *ib_dev,
						    u32 port)
{
	return rdma_alloc_hw_stats_struct(mr_counter_descs, MR_NUM_COUNTERS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static int mr_get_hw_stats(struct ib_device *ib_dev,
			   struct rdma_hw_stats *stats, u32 port, int index)
{
	struct mr_dev *dev = to_mr_dev(ib_dev);
	unsigned int i;
	int cpu;

	memset(stats->value, 0, MR_NUM_COUNTERS * sizeof(stats->value[0]));
	for_each_possible_cpu(cpu) {
		const struct mr_stats *s = per_cpu_ptr(dev->stats, cpu);

		for (i = 0; i < MR_NUM_COUNTERS; i++)
			stats->value[i] += READ_ONCE(s->c[i]);
	}
	stats->value[MR_CNT_RX_DROP_NO_DEV] = mr_net_rx_no_dev(dev);
	return MR_NUM_COUNTERS;
}

static const struct ib_device_ops mr_counter_ops = {
	.alloc_hw_port_stats = mr_alloc_hw_port_stats,
	.get_hw_stats = mr_get_hw_stats,
};

/* Before registration: ib_core reads the counters from then on. */
int mr_counters_init(struct mr_dev *dev)
{
	dev->stats = alloc_percpu(struct mr_stats);
	if (!dev->stats)
		return -ENOMEM;
	ib_set_device_ops(&dev->ib_dev, &mr_counter_ops);
	return 0;
}

void mr_counters_free(struct mr_dev *dev)
{
	free_percpu(dev->stats);
	dev->stats = NULL;
}
