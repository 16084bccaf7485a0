#!/bin/bash
# Unreliable connected QPs between two hosts: the unmodified
# ibv_uc_pingpong at 1 byte, one MTU, one byte more and 64 KiB, with and
# without completion events, over IPv4 and IPv6 GIDs; short ib_write_bw
# and ib_send_bw runs with -c UC; then mr_uc (userspace/tests/guest/),
# whose KTAP cases are relayed one by one: UC's attribute masks, READ and
# atomics refused at post, WRITE/WRITE_IMM/SEND_IMM landing, and the
# responder's drops (wrong rkey, out of bounds, no receive posted, too
# long), each counted in its uc_rx_drop_* counter, with both QPs in RTS.
# timeout: 600
# quick: stock debug
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
. "$here/../lib/perftest.sh"
trap topo_teardown EXIT

prog=/usr/local/bin/mr_uc
prog_cases=29
uc_drops="uc_rx_drop_no_recv uc_rx_drop_remote_access uc_rx_drop_too_long
	uc_rx_drop_recv_fault uc_rx_drop_invalid"

ktap_plan $((prog_cases + 24))

uc_pingpong() { pp_case ibv_uc_pingpong "$@"; }
# mr_on_stock: the sizes around the MTU add nothing that KASAN or kmemleak
# would see.

mr_pair

tx0=$(mr_sum tx_packets)
d="uc pingpong 1 byte"
mr_on_stock "$d" uc_pingpong "$d" 1 500
d="uc pingpong 1024 bytes (one MTU)"
mr_on_stock "$d" uc_pingpong "$d" 1024 500
uc_pingpong "uc pingpong 1025 bytes" 1025 500
d="uc pingpong 65536 bytes"
mr_on_stock "$d" uc_pingpong "$d" 65536 100
d="uc pingpong 1 byte, completion events (-e)"
mr_on_stock "$d" uc_pingpong "$d" 1 200 -e
d="uc pingpong 65536 bytes, completion events (-e)"
mr_on_stock "$d" uc_pingpong "$d" 65536 50 -e
v4_gids="$gid1 $gid2"
gid1=$(topo_gid_index mrc0 "$TOPO_H1_IP6") gid2=$(topo_gid_index mrc1 "$TOPO_H2_IP6")
ktap_check "IPv6 RoCE v2 GID indexes (mrc0 $gid1, mrc1 $gid2)" -n "$gid1" -a -n "$gid2"
d="uc pingpong 1 byte over IPv6 GIDs"
mr_on_stock "$d" uc_pingpong "$d" 1 200
d="uc pingpong 4096 bytes over IPv6 GIDs, completion events (-e)"
mr_not_smoke "$d" uc_pingpong "$d" 4096 100 -e
read -r gid1 gid2 <<<"$v4_gids"
ktap_diag "pingpongs done after ${SECONDS}s"
ktap_check "tx_packets grew ($tx0 -> $(mr_sum tx_packets))" "$(mr_sum tx_packets)" -gt "$tx0"

# Fewer iterations than ib_send_bw's receive depth (512): every receive
# is posted before the first SEND, so UC has nothing to drop.
# The smoke set leaves UC's WRITE and SEND to mr_uc below.
mr_not_smoke "ib_write_bw -s 65536 -c UC" perf_case ib_write_bw 65536 "$(scaled 200)" -c UC
mr_on_stock "ib_write_bw -s 1024 -c UC" perf_case ib_write_bw 1024 500 -c UC
mr_not_smoke "ib_send_bw -s 4096 -c UC" perf_case ib_send_bw 4096 "$(scaled 400)" -c UC
mr_on_stock "ib_send_bw -s 1 -c UC" perf_case ib_send_bw 1 400 -c UC
ktap_diag "perftest done after ${SECONDS}s"
mr_stats_diag
for c in $uc_drops; do
	ktap_check "$c is 0 after clean runs" "$(mr_sum "$c")" -eq 0
done

ktap_check "$prog is in the guest" -x "$prog"
# Both devices are visible from h1 (the RDMA netns mode is shared).
ktap_relay "$prog_cases" mr_uc ip netns exec h1 "$prog" mrc0 mrc1
ktap_diag "mr_uc done after ${SECONDS}s"
mr_stats_diag
ktap_check "rnr_naks stays 0: UC never NAKs" "$(mr_sum rnr_naks)" -eq 0

ktap_finish
