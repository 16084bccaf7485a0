#!/bin/bash
# RC SEND and RDMA WRITE between two hosts over MetaRoCE, with unmodified
# tools: ibv_rc_pingpong (SEND/RECV) at sizes around one MTU, with and
# without completion events; perftest ib_send_bw and ib_write_bw; then
# pingpong again under netem loss and reordering. `rdma statistic` must
# show the traffic, and retransmissions under loss.
# timeout: 600
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
trap topo_teardown EXIT

ktap_plan 26

stats_diag() {
	ktap_diag "$(rdma statistic show link mrc0/1)"
	ktap_diag "$(rdma statistic show link mrc1/1)"
}

# run_pair LIMIT SERVER-CMD -- CLIENT-CMD: server in h2, client in h1; both
# must exit 0 within LIMIT seconds. Output in $pair_out.
pair_out=
run_pair() {
	local limit=$1 port=18515 srv=() cli=() spid rc=0 src=0 tmp
	shift
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	tmp=$(mktemp)
	in_h2 timeout "$limit" "${srv[@]}" >"$tmp" 2>&1 &
	spid=$!
	if ! topo_wait_listen h2 "$port"; then
		echo "server did not listen on $port"
		kill "$spid" 2>/dev/null
		wait "$spid"
		cat "$tmp"
		rm -f "$tmp"
		return 1
	fi
	pair_out=$(in_h1 timeout "$limit" "${cli[@]}" 2>&1) || rc=$?
	wait "$spid" || src=$?
	pair_out+=$'\n--- server ---\n'$(cat "$tmp")
	rm -f "$tmp"
	echo "$pair_out"
	[ "$rc" -eq 0 ] && [ "$src" -eq 0 ]
}

# sum NAME: a counter over both devices.
sum() {
	local a b
	a=$(mr_stat mrc0 "$1") b=$(mr_stat mrc1 "$1")
	echo $((${a:-0} + ${b:-0}))
}

# The debug kernel (KASAN, kmemleak) under TCG moves about 1000 packets a
# second: a tenth of the iterations there, to stay within the time limits.
debug=0
[ -e /sys/kernel/debug/kmemleak ] && debug=1
scaled() { if [ "$debug" = 1 ]; then echo $(($1 / 10)); else echo "$1"; fi; }
iters=$(scaled 200)

# pingpong DESC SIZE ITERS [ARGS...]
pingpong() {
	local desc=$1 size=$2 iters rc=0 re rto
	iters=$(scaled "$3")
	shift 3
	re=$(sum retransmits) rto=$(sum rto_events)
	KTAP_LAST_OUTPUT=$(run_pair 60 \
		ibv_rc_pingpong -d mrc1 -g "$gid2" -s "$size" -n "$iters" "$@" -- \
		ibv_rc_pingpong -d mrc0 -g "$gid1" -s "$size" -n "$iters" "$@" \
		"$TOPO_H2_IP") || rc=$?
	if [ "$rc" -eq 0 ]; then
		ktap_diag "$desc: $(grep -E 'Mbit/sec|usec/iter' <<<"$KTAP_LAST_OUTPUT" | head -2 | tr '\n' ' ')"
		ktap_diag "  retransmits +$(($(sum retransmits) - re)), rto_events +$(($(sum rto_events) - rto))"
		ktap_ok "$desc"
	else
		ktap_fail "$desc" "exit status $rc" "${KTAP_LAST_OUTPUT:0:3000}"
		stats_diag
	fi
}


# perf TOOL SIZE (-F: a guest's CPU clock is too noisy for perftest's check)
perf() {
	local tool=$1 size=$2 rc=0 line re rto
	re=$(sum retransmits) rto=$(sum rto_events)
	KTAP_LAST_OUTPUT=$(run_pair 120 \
		"$tool" -d mrc1 -x "$gid2" -F -n "$iters" -s "$size" -- \
		"$tool" -d mrc0 -x "$gid1" -F -n "$iters" -s "$size" "$TOPO_H2_IP") || rc=$?
	line=$(grep -E "^ *$size +$iters " <<<"$KTAP_LAST_OUTPUT" | head -1)
	if [ "$rc" -eq 0 ] && [ -n "$line" ]; then
		ktap_diag "$tool -s $size: #bytes #iters BW-peak BW-avg[MB/s] MsgRate: $line"
		ktap_diag "  retransmits +$(($(sum retransmits) - re)), rto_events +$(($(sum rto_events) - rto))"
		ktap_ok "$tool -n $iters -s $size"
	else
		ktap_fail "$tool -n $iters -s $size" "exit status $rc, bandwidth line: '$line'" \
			"${KTAP_LAST_OUTPUT:0:3000}"
		stats_diag
	fi
}

ktap_run "two hosts with mrc0 (h1) and mrc1 (h2)" mr_two_hosts 1500
gid1=$(topo_gid_index mrc0 "$TOPO_H1_IP")
gid2=$(topo_gid_index mrc1 "$TOPO_H2_IP")
ktap_check "IPv4 RoCE v2 GID indexes (mrc0 $gid1, mrc1 $gid2)" -n "$gid1" -a -n "$gid2"

tx0=$(mr_stat mrc0 tx_packets) rx0=$(mr_stat mrc0 rx_packets)
tx1=$(mr_stat mrc1 tx_packets) rx1=$(mr_stat mrc1 rx_packets)

pingpong "pingpong 1 byte" 1 1000
pingpong "pingpong 1024 bytes (one MTU)" 1024 1000
pingpong "pingpong 1025 bytes" 1025 1000
pingpong "pingpong 65536 bytes" 65536 200
pingpong "pingpong 1 byte, completion events (-e)" 1 500 -e
pingpong "pingpong 65536 bytes, completion events (-e)" 65536 100 -e

perf ib_send_bw 65536
perf ib_send_bw 1048576
perf ib_write_bw 65536
perf ib_write_bw 1048576

stats_diag
ktap_check "mrc0 tx_packets grew ($tx0 -> $(mr_stat mrc0 tx_packets))" \
	"$(mr_stat mrc0 tx_packets)" -gt "$tx0"
ktap_check "mrc0 rx_packets grew ($rx0 -> $(mr_stat mrc0 rx_packets))" \
	"$(mr_stat mrc0 rx_packets)" -gt "$rx0"
ktap_check "mrc1 tx_packets grew ($tx1 -> $(mr_stat mrc1 tx_packets))" \
	"$(mr_stat mrc1 tx_packets)" -gt "$tx1"
ktap_check "mrc1 rx_packets grew ($rx1 -> $(mr_stat mrc1 rx_packets))" \
	"$(mr_stat mrc1 rx_packets)" -gt "$rx1"

# Loss: both directions drop 1%; everything must still arrive.
re0=$(sum retransmits)
ktap_run "netem loss 1% on both ends" topo_netem both loss 1%
pingpong "pingpong 1024 bytes, 1% loss" 1024 500
pingpong "pingpong 65536 bytes, 1% loss" 65536 200
perf ib_write_bw 65536
stats_diag
re1=$(sum retransmits)
ktap_check "retransmits under loss ($re0 -> $re1)" "$re1" -gt "$re0"

# Reordering: 25% of packets overtake the others (which wait 10 ms).
ktap_run "netem reorder 25% on both ends" topo_reorder both 25%
oo0=$(sum out_of_order)
pingpong "pingpong 1024 bytes, reorder 25%" 1024 100
pingpong "pingpong 65536 bytes, reorder 25%" 65536 50
stats_diag
oo1=$(sum out_of_order)
ktap_diag "out_of_order: $oo0 -> $oo1"
ktap_run "netem removed" topo_netem_clear both
ktap_check "counters readable after the run" -n "$(mr_stat mrc0 rto_events)"

ktap_finish
