#!/bin/bash
# Unreliable datagrams between two hosts: the unmodified ibv_ud_pingpong at
# sizes up to the path MTU (1024 bytes on a 1500-byte netdev), with and
# without completion events, over IPv4 and IPv6 GIDs, and its refusal of a
# size above the MTU; then mr_ud (userspace/tests/guest/), whose KTAP
# cases are relayed one by one: the UD QP walk with a Q_Key, AHs, the GRH
# area and wc.src_qp, Q_Key checks, a send above the MTU, a receive too
# short and one not posted, each with its counter. Last, netem loss: UD
# does not recover datagrams, so only the device's health afterwards is
# checked.
# timeout: 900
# quick: stock
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
. "$here/../lib/perftest.sh"
trap topo_teardown EXIT

prog=/usr/local/bin/mr_ud
prog_cases=33

ktap_plan $((prog_cases + 25))

# dgrams: the datagrams each way of the pingpongs run so far.
dgrams=0
ud_pingpong() { pp_case ibv_ud_pingpong "$@" && dgrams=$((dgrams + $(scaled "$3"))); }

mr_pair

tx0=$(mr_sum tx_packets) rx0=$(mr_sum rx_packets)
d="ud pingpong 1 byte"
mr_on_stock "$d" ud_pingpong "$d" 1 1000
d="ud pingpong 512 bytes"
mr_on_stock "$d" ud_pingpong "$d" 512 1000
ud_pingpong "ud pingpong 1024 bytes (the path MTU)" 1024 1000
ud_pingpong "ud pingpong 1 byte, completion events (-e)" 1 500 -e
d="ud pingpong 1024 bytes, completion events (-e)"
mr_on_stock "$d" ud_pingpong "$d" 1024 500 -e
d="ud pingpong 1024 bytes, rx depth 4"
mr_on_stock "$d" ud_pingpong "$d" 1024 500 -r 4
# IPv6 GIDs: the datagrams go over IPv6, the GRH area holds its header.
v4_gids="$gid1 $gid2"
gid1=$(topo_gid_index mrc0 "$TOPO_H1_IP6") gid2=$(topo_gid_index mrc1 "$TOPO_H2_IP6")
ktap_check "IPv6 RoCE v2 GID indexes (mrc0 $gid1, mrc1 $gid2)" -n "$gid1" -a -n "$gid2"
ud_pingpong "ud pingpong 1024 bytes over IPv6 GIDs" 1024 500
read -r gid1 gid2 <<<"$v4_gids"
mr_stats_diag
tx1=$(mr_sum tx_packets) rx1=$(mr_sum rx_packets)
# Each iteration is one datagram each way, and nothing is resent.
ktap_check "tx_packets grew by at least the datagrams ($tx0 -> $tx1, $dgrams each way)" \
	$((tx1 - tx0)) -ge $((dgrams * 2))
ktap_check "rx_packets grew alike ($rx0 -> $rx1)" $((rx1 - rx0)) -ge $((dgrams * 2))
ktap_check "no retransmits for datagrams" "$(mr_sum retransmits)" -eq 0
for c in ud_rx_drop_qkey ud_rx_drop_no_recv ud_rx_too_long ud_tx_too_long; do
	ktap_check "$c is 0 after clean runs" "$(mr_sum "$c")" -eq 0
done

# ibv_ud_pingpong checks the size against the port's MTU itself.
ktap_run_fail "ud pingpong 1025 bytes refused: above the port MTU" 'MTU' \
	in_h1 timeout 20 ibv_ud_pingpong -d mrc0 -g "$gid1" -s 1025 -n 1 "$TOPO_H2_IP"

ktap_check "$prog is in the guest" -x "$prog"
# Both devices are visible from h1 (the RDMA netns mode is shared).
ktap_relay "$prog_cases" mr_ud ip netns exec h1 "$prog" mrc0 mrc1
mr_stats_diag

# Loss: pingpong may stall waiting for a lost datagram, and is not checked
# (nor run on the debug kernel, where it costs half a minute).
ktap_run "netem loss 5% on both ends" topo_netem both loss 5%
if mr_debug_kernel; then
	lossy="not run on the debug kernel"
elif run_pair 20 ibv_ud_pingpong -d mrc1 -g "$gid2" -s 512 -n 500 -- \
	ibv_ud_pingpong -d mrc0 -g "$gid1" -s 512 -n 500 "$TOPO_H2_IP" >/dev/null 2>&1; then
	lossy=finished
else
	lossy="timed out"
fi
ktap_diag "ud pingpong under 5% loss: $lossy"
ktap_run "netem removed" topo_netem_clear both
ud_pingpong "ud pingpong 512 bytes after the loss" 512 200

ktap_run "rdma link delete mrc0" rdma link delete mrc0
ktap_run "rdma link delete mrc1" rdma link delete mrc1

ktap_finish
