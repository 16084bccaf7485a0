#!/bin/bash
# Many connections on one device: mr_many (userspace/tests/guest/) sets up
# 4,000 RC QPs on mrc0 (h1) and as many on mrc1 (h2), four threads at a
# time, and sends one verified message each way on every connection, two
# rounds. Reported: the setup time and rate, the kernel's slab and vmalloc
# memory per QP idle after the traffic; asserted: every byte right, what
# the traffic borrowed given back, everything freed at destroy. While the
# connections are idle, `rdma -dd resource show qp` must report each one's
# transport state at most 16 KB (its fixed part: the packet records and
# the responder's window are borrowed only while busy). The debug kernel
# runs 64 connections (KASAN and kmemleak see the same paths; under TCG it
# moves about 1000 packets a second, and its quarantine keeps freed memory,
# so the memory cases are skipped there).
# timeout: 300
# quick: stock debug
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
trap topo_teardown EXIT

prog=/usr/local/bin/mr_many
prog_cases=4
STATE_MAX=16384
if mr_debug_kernel; then
	QPS=64 BYTES=256 THREADS=2 MEMORY_CHECKS=0
else
	QPS=4000 BYTES=1024 THREADS=4 MEMORY_CHECKS=1
fi
tmp=$(mktemp -d)

ktap_plan $((prog_cases + 6))
mr_pair
ktap_check "$prog is in the guest" -x "$prog"

"$prog" --dev-a mrc0 --dev-b mrc1 --qps "$QPS" --bytes "$BYTES" --rounds 2 \
	--threads "$THREADS" --memory-checks "$MEMORY_CHECKS" --hold 30 --timeout 60 >"$tmp/out" 2>&1 &
pid=$!
for ((i = 0; i < 1200; i++)); do
	grep -q '^# holding' "$tmp/out" && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.5
done
# Every RC QP of mrc0, idle: its transport state.
rdma -dd -j resource show qp link mrc0/1 >"$tmp/qps.json" 2>&1
stats=$(jq -r '[.[] | select(.type == "RC") | .drv_state_bytes // empty] | sort |
	"\(length) \(.[0]) \(.[length / 2 | floor]) \(.[-1])"' "$tmp/qps.json" 2>&1)
read -r n lo med hi <<<"$stats"
[[ $hi =~ ^[0-9]+$ ]] || hi=none
ktap_diag "state_bytes of $n idle RC QPs: min $lo median $med max $hi"
ktap_check "rdma -dd shows every connection's state_bytes ($n of $QPS)" "${n:-0}" -eq "$QPS"
ktap_check "an idle connection holds at most $STATE_MAX bytes of transport state ($hi)" \
	"$(if [ "$hi" != none ] && [ "$hi" -le "$STATE_MAX" ]; then echo 1; else echo 0; fi)" -eq 1
# The hold is over once seen: end it early.
kill -USR1 "$pid" 2>/dev/null
wait "$pid"
prog_rc=$?
relay() { cat "$tmp/out"; return "$prog_rc"; }
ktap_relay "$prog_cases" mr_many relay
ktap_diag "mrc0's counters not 0: $(mr_stats mrc0 | awk '$2 != 0 { printf "%s %s  ", $1, $2 }')"
ktap_diag "mrc1's counters not 0: $(mr_stats mrc1 | awk '$2 != 0 { printf "%s %s  ", $1, $2 }')"
rm -rf "$tmp"
ktap_finish
