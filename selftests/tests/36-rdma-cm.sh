#!/bin/bash
# rdma_cm between two hosts over MetaRoCE: QP1 (the GSI QP of ib_mad)
# carries ib_cm's MADs, so the unmodified rdmacm-utils connect by IP
# address: rping (validated data), ucmatose (RC), udaddy (UD, SIDR),
# rdma_server/rdma_client over IPv4 and then IPv6, and perftest with -R
# (send, write, read) over IPv4: perftest 6.06 resolves the server with
# AF_INET hints, so it cannot take an IPv6 address. Each host's device
# lives in its own netns, as do the tools. `rdma resource` shows QP1, and
# the gsi_* counters its MADs.
# timeout: 900
# quick: stock debug
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
. "$here/../lib/perftest.sh"
trap topo_teardown EXIT

ktap_plan 24

# rdma_cm listeners show in `rdma resource show cm_id`, not in ss.
PAIR_WAIT=cm_wait_listen

# cm_case DESC PORT SERVER-CMD... -- CLIENT-CMD...
cm_case() {
	local desc=$1 rc=0 gsi
	PAIR_PORT=$2
	shift 2
	gsi=$(mr_sum gsi_rx_packets)
	KTAP_LAST_OUTPUT=$(run_pair 90 "$@") || rc=$?
	if [ "$rc" -eq 0 ]; then
		ktap_diag "$desc: MADs received +$(($(mr_sum gsi_rx_packets) - gsi))"
		ktap_ok "$desc"
	else
		ktap_fail "$desc" "exit status $rc" "${KTAP_LAST_OUTPUT:0:3000}"
		mr_stats_diag
	fi
}

# cm_perf TOOL SIZE ITERS DST [ARGS...]: perftest over rdma_cm (-R); the
# result line goes to diagnostics.
cm_perf() {
	local tool=$1 size=$2 iters=$3 dst=$4 rc=0 line desc
	shift 4
	desc="$tool -R -s $size -n $iters to $dst"
	PAIR_PORT=18515
	KTAP_LAST_OUTPUT=$(run_pair 120 \
		"$tool" -d mrc1 -R -F -n "$iters" -s "$size" "$@" -- \
		"$tool" -d mrc0 -R -F -n "$iters" -s "$size" "$@" "$dst") || rc=$?
	# Both sides may print one (ib_send_bw's sender reports 0 MB/s).
	line=$(grep -E "^ *$size +$iters " <<<"$KTAP_LAST_OUTPUT" | tr -s ' \t' ' ' | paste -sd '|')
	if [ "$rc" -eq 0 ] && [ -n "$line" ]; then
		ktap_diag "$desc: $line"
		ktap_ok "$desc"
	else
		ktap_fail "$desc" "exit status $rc, result line: '$line'" \
			"${KTAP_LAST_OUTPUT:0:3000}"
		mr_stats_diag
	fi
}

# One round of the rdmacm-utils tools to the server address $1. Over IPv6
# the debug kernel runs rping (RC) and udaddy (UD) only: ucmatose and
# rdma_server take no kernel path there that those and the IPv4 round miss.
cm_round() {
	local srv=$1 fam=$2 count more=cm_case cm=cm_case
	count=$(scaled 200)
	[ "$fam" = IPv6 ] && more=cm_case_on_stock
	# the smoke set: IPv4 alone (IPv6 takes the same QP1 and CM paths)
	if [ "$fam" = IPv6 ] && mr_smoke; then cm=cm_case_not_smoke more=cm_case_not_smoke; fi
	$cm "rping $fam: $count pings of 1024 bytes, validated" 7174 \
		rping -s -a "$srv" -C "$count" -S 1024 -V -- \
		rping -c -a "$srv" -C "$count" -S 1024 -V
	$more "ucmatose $fam: 2 RC connections, 50 messages each" 7471 \
		ucmatose -b "$srv" -c 2 -C 50 -- ucmatose -s "$srv" -c 2 -C 50
	$cm "udaddy $fam: 2 UD endpoints, 20 datagrams each" 7174 \
		udaddy -b "$srv" -c 2 -C 20 -- udaddy -s "$srv" -c 2 -C 20
	$more "rdma_server/rdma_client $fam" 7471 \
		rdma_server -s "$srv" -- rdma_client -s "$srv"
}
cm_case_on_stock() { mr_on_stock "$1" cm_case "$@"; }
cm_case_not_smoke() { mr_not_smoke "$1" cm_case "$@"; }

ktap_run "two hosts with mrc0 (h1) and mrc1 (h2)" mr_two_hosts 1500

# ib_mad created QP1 on each device at registration.
for dev in mrc0 mrc1; do
	qp1=$(rdma resource show qp link "$dev/1" lqpn 1 2>&1)
	ktap_diag "$qp1"
	ktap_check "$dev has QP1 of type GSI (rdma resource)" \
		"$(grep -c 'lqpn 1 .*type GSI' <<<"$qp1")" -eq 1
done

cm_round "$TOPO_H2_IP" IPv4
# rping and ucmatose connect RC QPs through rdma_cm on the debug kernel too.
for tool in ib_send_bw ib_write_bw ib_read_bw; do
	mr_on_stock "$tool -R -s 65536 -n 500 to $TOPO_H2_IP" \
		cm_perf "$tool" 65536 500 "$TOPO_H2_IP"
done
cm_round "$TOPO_H2_IP6" IPv6
mr_stats_diag

for dev in mrc0 mrc1; do
	ktap_check "$dev gsi_tx_packets counts the MADs sent ($(mr_stat "$dev" gsi_tx_packets))" \
		"$(mr_stat "$dev" gsi_tx_packets)" -gt 0
	ktap_check "$dev gsi_rx_packets counts the MADs received ($(mr_stat "$dev" gsi_rx_packets))" \
		"$(mr_stat "$dev" gsi_rx_packets)" -gt 0
done
ktap_check "no datagram dropped for its Q_Key" "$(mr_sum ud_rx_drop_qkey)" -eq 0

# A netdev MTU where rdma_cm (96 header bytes) asks one MTU step above the
# port's active MTU (120 header bytes), a power of two plus 96 to 119: 1130
# gives 1024 against 512. The QP gets the active MTU and the connection
# works.
for end in h1 h2; do topo_exec "$end" ip link set "$(topo_ifc "$end")" mtu 1130; done
ktap_check "netdev MTU 1130: the port's active_mtu is 512" \
	"$(mr_devinfo_field mrc0 active_mtu)" = "512 (2)"
cm_case_not_smoke "rping IPv4 at netdev MTU 1130: 20 pings of 1024 bytes, validated" 7174 \
	rping -s -a "$TOPO_H2_IP" -C 20 -S 1024 -V -- \
	rping -c -a "$TOPO_H2_IP" -C 20 -S 1024 -V

# No listener: ib_cm answers the REQ with a REJ, and the client says so.
ktap_run_fail "rping to a port nobody listens on is rejected" 'REJECTED|error|fail' \
	in_h1 timeout 30 rping -c -a "$TOPO_H2_IP" -p 7999 -C 1

ktap_run "rdma link delete mrc0" rdma link delete mrc0
ktap_run "rdma link delete mrc1" rdma link delete mrc1

ktap_finish
