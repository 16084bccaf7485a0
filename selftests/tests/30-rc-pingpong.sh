#!/bin/bash
# RC SEND between two hosts over MetaRoCE with an unmodified tool:
# ibv_rc_pingpong at sizes around one MTU, with and without completion
# events; then pingpong and ib_write_bw under netem loss and reordering.
# `rdma statistic` must show the traffic, and retransmissions under loss.
# (32-perftest runs every perftest tool at every size.)
# timeout: 600
# kernels: stock
# (31-verify runs every RC operation on the debug kernel.)
# quick: stock
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
. "$here/../lib/perftest.sh"
trap topo_teardown EXIT

ktap_plan 22

iters=$(scaled 200)

# pingpong DESC SIZE ITERS [ARGS...]
pingpong() { pp_case ibv_rc_pingpong "$@"; }


mr_pair

tx0=$(mr_stat mrc0 tx_packets) rx0=$(mr_stat mrc0 rx_packets)
tx1=$(mr_stat mrc1 tx_packets) rx1=$(mr_stat mrc1 rx_packets)

pingpong "pingpong 1 byte" 1 1000
pingpong "pingpong 1024 bytes (one MTU)" 1024 1000
pingpong "pingpong 1025 bytes" 1025 1000
pingpong "pingpong 65536 bytes" 65536 200
pingpong "pingpong 1 byte, completion events (-e)" 1 500 -e
pingpong "pingpong 65536 bytes, completion events (-e)" 65536 100 -e


mr_stats_diag
ktap_check "mrc0 tx_packets grew ($tx0 -> $(mr_stat mrc0 tx_packets))" \
	"$(mr_stat mrc0 tx_packets)" -gt "$tx0"
ktap_check "mrc0 rx_packets grew ($rx0 -> $(mr_stat mrc0 rx_packets))" \
	"$(mr_stat mrc0 rx_packets)" -gt "$rx0"
ktap_check "mrc1 tx_packets grew ($tx1 -> $(mr_stat mrc1 tx_packets))" \
	"$(mr_stat mrc1 tx_packets)" -gt "$tx1"
ktap_check "mrc1 rx_packets grew ($rx1 -> $(mr_stat mrc1 rx_packets))" \
	"$(mr_stat mrc1 rx_packets)" -gt "$rx1"

# Loss: both directions drop 1%; everything must still arrive.
re0=$(mr_sum retransmits)
ktap_run "netem loss 1% on both ends" topo_netem both loss 1%
pingpong "pingpong 1024 bytes, 1% loss" 1024 500
pingpong "pingpong 65536 bytes, 1% loss" 65536 200
perf_case ib_write_bw 65536 "$iters"
mr_stats_diag
re1=$(mr_sum retransmits)
ktap_check "retransmits under loss ($re0 -> $re1)" "$re1" -gt "$re0"

# Reordering: 25% of packets overtake the others (which wait 10 ms).
ktap_run "netem reorder 25% on both ends" topo_reorder both 25%
oo0=$(mr_sum out_of_order)
pingpong "pingpong 1024 bytes, reorder 25%" 1024 100
pingpong "pingpong 65536 bytes, reorder 25%" 65536 50
mr_stats_diag
oo1=$(mr_sum out_of_order)
ktap_diag "out_of_order: $oo0 -> $oo1"
ktap_run "netem removed" topo_netem_clear both
ktap_check "counters readable after the run" -n "$(mr_stat mrc0 rto_events)"

ktap_finish
