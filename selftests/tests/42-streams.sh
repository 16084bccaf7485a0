#!/bin/bash
# Streams through the direct verbs of mrcdv.h: mr_streams, the example
# program (userspace/tests/guest/mr_streams.cpp), writes from an RC QP of
# 64 streams on mrc0 to a plain QP on mrc1 and checks each completion's
# stream, its order within its stream, and its data; under 1% loss, under
# reordering, and the same traffic on one stream. A message that lost a
# packet must hold back only its stream: with 64 streams messages complete
# ahead of an earlier one that waits ("overtakes"), with one never. The
# debug kernel's quick tier runs the 64 streams under loss alone, shorter.
# timeout: 300
# quick: stock debug
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
trap topo_teardown EXIT

prog=/usr/local/bin/mr_streams
prog_cases=9
msgs=$(tiered 2000 600)
mr_smoke && msgs=200
size=4096

ktap_plan $((2 + 3 * (prog_cases + 1) + 6))

mr_pair

streams_log=$(mktemp)
run_streams() { timeout -k 5 120 "$prog" "$@" >"$streams_log" 2>&1; local rc=$?; cat "$streams_log"; return $rc; }

# streams RUN STREAMS: one run, its KTAP relayed; its figures into
# overtakes[RUN] and delays[RUN].
declare -A overtakes delays
streams() {
	local line
	ktap_relay "$prog_cases" "mr_streams ($1)" run_streams mrc0 mrc1 "$2" "$msgs" "$size"
	line=$(grep -m1 -E -o '(streams|qps) [0-9]*: overtakes.*' "$streams_log")
	ktap_diag "$1: $line"
	overtakes[$1]=$(sed -n 's/.*overtakes \([0-9]*\).*/\1/p' <<<"$line")
	delays[$1]=$(sed -n 's/.*delay_p99_us \([0-9]*\).*/\1/p' <<<"$line")
}

ktap_run "netem loss 1% on both ends" topo_netem both loss 1%
streams "64 streams, 1% loss" 64
ktap_check "64 streams: messages complete past one that lost a packet (${overtakes["64 streams, 1% loss"]:-none} overtakes)" \
	"${overtakes["64 streams, 1% loss"]:-0}" -gt 0
if mr_smoke; then
	mr_skip_cases $((2 * (prog_cases + 1) + 2)) "one stream, and reordering" "check-full only on the debug kernel"
else
	streams "one stream, 1% loss" 1
	ktap_check "one stream: every message completes in post order (${overtakes["one stream, 1% loss"]:-none} overtakes)" \
		"${overtakes["one stream, 1% loss"]:-1}" -eq 0
	ktap_diag "completion delay p99 under 1% loss: 64 streams ${delays["64 streams, 1% loss"]:-?} us, one stream ${delays["one stream, 1% loss"]:-?} us"
	ktap_run "netem reorder 25% on both ends" topo_reorder both 25%
	streams "64 streams, reorder 25%" 64
fi
ktap_run "netem removed" topo_netem_clear both
ktap_check "counters readable after the runs" -n "$(mr_stat mrc0 retransmits)"
ktap_finish
