#!/bin/bash
# Congestion control's mechanics between two hosts: netem marks a share of
# h1's packets CE instead of dropping them (its "ecn" option), so the
# receiver counts marks and the sender's windows shrink (ECN decreases,
# trace event metaroce_cc) while every byte arrives; a receiver whose
# ingress capacity is set low hints its sender down, which then paces at
# that rate, not faster; with the module parameter cc=0 none of it happens.
# Throughput under congestion is the incast test's (50-incast, stock
# kernel) and the bench's; this one runs on both kernels for the code.
# timeout: 600
# quick: stock
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
. "$here/../lib/perftest.sh"
params=/sys/module/metaroce/parameters
restore() {
	[ -d "$params" ] && echo 1 >"$params/cc" && echo 0 >"$params/ingress_mbps"
	topo_teardown
}
trap restore EXIT

# The pacing check is the stock kernel's (see below).
if mr_debug_kernel; then ktap_plan 14; else ktap_plan 15; fi

ktap_run "two hosts with mrc0 (h1) and mrc1 (h2)" mr_two_hosts 1500
gid1=$(topo_gid_index mrc0 "$TOPO_H1_IP")
gid2=$(topo_gid_index mrc1 "$TOPO_H2_IP")
ktap_check "congestion control is on by default" "$(cat "$params/cc")" = Y

tracing=/sys/kernel/tracing
echo 1 >"$tracing/events/metaroce/metaroce_cc/enable"
echo >"$tracing/trace"

# verify SECONDS: every operation, every byte checked, as a KTAP case.
verify() {
	local out rc=0
	out=$(/usr/local/bin/mr_verify --dev-a mrc0 --dev-b mrc1 --gid-a "$gid1" \
		--gid-b "$gid2" --ops all --seconds "$1" 2>&1) || rc=$?
	ktap_result $rc "mr_verify, every operation under CE marks: every byte and completion right"
	if [ "$rc" -eq 0 ]; then
		ktap_diag "$(grep -E '^# summary' <<<"$out")"
	else
		ktap_diag "$(grep -vE '^not ok [0-9]+ not run' <<<"$out" | head -40)"
	fi
}

# netem drops the packets that cannot carry a mark, ARP's among them: the
# neighbours are resolved first, or modify_qp to RTR can time out on them.
ktap_run "h1 and h2 know each other's MAC (a ping)" topo_ping h1 "$TOPO_H2_IP" -c 1
ktap_run "netem on h1 marks 10% of its packets CE instead of dropping them" \
	topo_netem h1 loss 10% ecn
ce0=$(mr_stat mrc1 ce_marks) dec0=$(mr_stat mrc0 cc_decreases)
re0=$(mr_stat mrc0 retransmits)
verify "$(if mr_debug_kernel; then tiered 12 6; else tiered 10 5; fi)"
ce1=$(mr_stat mrc1 ce_marks) dec1=$(mr_stat mrc0 cc_decreases)
re1=$(mr_stat mrc0 retransmits)
ktap_check "the receiver counted CE marks (ce_marks $ce0 -> $ce1)" "$ce1" -gt "$ce0"
ktap_check "the sender's windows shrank (cc_decreases $dec0 -> $dec1)" "$dec1" -gt "$dec0"
ktap_diag "retransmits $re0 -> $re1: marks are not losses (tail probes of a stalled guest may be)"
events=$(grep -c 'metaroce_cc:.* ecn ' "$tracing/trace")
ktap_diag "$(grep -m 4 'metaroce_cc:' "$tracing/trace" | sed 's/^ *//')"
ktap_check "trace events of ECN decreases ($events)" "$events" -gt 0
echo 0 >"$tracing/events/metaroce/metaroce_cc/enable"
ktap_run "netem off" topo_netem_clear h1

# A receiver of 20 Mbit/s: its hint, 20 Mbit/s less 1/16 for headers,
# caps the sender; 64 KiB WRITEs then take at least this long.
echo 20 >"$params/ingress_mbps"
iters=$(scaled 60)
hl0=$(mr_stat mrc0 cc_hint_limited) pc0=$(mr_stat mrc0 cc_paced)
start=$(date +%s.%N)
perf_case ib_write_bw 65536 "$iters"
secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')
hl1=$(mr_stat mrc0 cc_hint_limited) pc1=$(mr_stat mrc0 cc_paced)
ktap_check "the receiver's hint limited the sender (cc_hint_limited $hl0 -> $hl1)" "$hl1" -gt "$hl0"
# The hint caps the window (hint x RTT) and the pacer: the debug guest,
# far below 20 Mbit/s, meets the window first and need not be paced.
if mr_debug_kernel; then
	ktap_diag "cc_paced $pc0 -> $pc1 (not checked on the debug kernel)"
else
	ktap_check "the sender paced its packets to the hint (cc_paced $pc0 -> $pc1)" "$pc1" -gt "$pc0"
fi
# The hint is an upper bound: the run cannot be faster than 1.5x of it.
min=$(awk -v n="$iters" 'BEGIN { printf "%.2f", n * 65536 * 8 / (1.5 * 20e6) }')
ktap_diag "$iters x 64 KiB in $secs s (at least $min s at 1.5x the hint)"
ktap_check "no faster than the hint allows ($secs s >= $min s)" \
	"$(awk -v a="$secs" -v b="$min" 'BEGIN { print (a >= b) }')" -eq 1
echo 0 >"$params/ingress_mbps"

# cc=0: marks are counted, nothing reacts, nothing is paced.
echo 0 >"$params/cc"
topo_netem h1 loss 10% ecn
dec0=$(mr_stat mrc0 cc_decreases) pc0=$(mr_stat mrc0 cc_paced)
ce0=$(mr_stat mrc1 ce_marks)
perf_case ib_write_bw 65536 "$(scaled 200)"
dec1=$(mr_stat mrc0 cc_decreases) pc1=$(mr_stat mrc0 cc_paced)
ce1=$(mr_stat mrc1 ce_marks)
ktap_check "cc=0 under marks ($ce0 -> $ce1): no decrease ($dec0 -> $dec1)" \
	"$((dec1 - dec0))" -eq 0 -a "$ce1" -gt "$ce0"
topo_netem_clear h1
mr_stats_diag

ktap_finish
