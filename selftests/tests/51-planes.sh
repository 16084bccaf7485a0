#!/bin/bash
# Multi-plane devices (lib/topology.sh topo_planes): two hosts, each with
# one address on a dummy interface, joined by four planes (a router
# namespace each, 10 Mbit/s tbf both ways). Each host's metaroce device
# sits on its dummy0 and takes the four veths as planes with `metaroce
# plane add`. The CLI's refusals carry the kernel's reason; `plane show -j`
# reports each plane. One QP (mr_incast: every byte checked) runs over 4,
# 2 and 1 planes (planes deleted between runs), then over 4 planes while
# one loses its carrier at 3 s and gets it back at 6 s, and while one is
# black-holed (carrier up) from 3 s to 6 s: every message completes right,
# `metaroce monitor` sees the plane go down and up, and the goodput after
# the failure is back to 0.85 of three planes within 1 s (KTAP TODO: the
# guest's timers decide it). Last, a peer that only two planes reach: its
# connection spreads over those two, and no plane times out for it. The debug kernel runs the CLI and the carrier
# failure over 2 planes, shorter, and no throughput runs.
# timeout: 420
# quick: stock debug
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
. "$here/../lib/incast.sh"
mon_pid=''
cleanup() {
	[ -n "$mon_pid" ] && kill "$mon_pid" 2>/dev/null
	wait 2>/dev/null
	incast_teardown
}
trap cleanup EXIT

[ -x "$MR_CLI" ] || MR_CLI=$(command -v metaroce) || ktap_skip_all "no metaroce tool"
command -v jq >/dev/null || ktap_skip_all "jq is missing (mr_json)"
RATE=10mbit LIMIT=32kb
TODO="plane failover: not reliably reached in the guest yet"
if mr_smoke; then N=2 SECS=6 AT=2 BACK=4; else N=4 SECS=10 AT=3 BACK=6; fi
INCAST_BIN_MS=250 INCAST_DRAIN=30
tmp=$(mktemp -d)

ktap_plan 33

# setup CMD...: in this shell (the topology's variables must stay)
setup() { "$@" >"$tmp/setup" 2>&1 || { cat "$tmp/setup"; return 1; }; }
setup incast_planes_setup $N
ktap_result $? "$N planes; pl_a and pl_b on their dummy0, each with $N planes"

h1() { in_planes h1 "$MR_CLI" "$@"; }

# --- the CLI ---
h1 -j plane show dev pl_a >"$tmp/planes.json" 2>&1
ktap_run "plane show -j is JSON" mr_json type "$tmp/planes.json"
ktap_check "plane show -j: $N planes p0.. in order, all up, 16 paths over them" \
	"$(mr_json 'length, (map(.netdev) | join(",")), (map(.state) | unique | join(",")), (map(.paths) | add)' \
		"$tmp/planes.json")" = "$N $(seq -s, -f 'p%g' 0 $((N - 1))) up 16"
ktap_diag "$(h1 -s plane show)"
ktap_run_fail "plane add of a plane already there is refused" "a plane of the device already" \
	h1 plane add dev pl_a netdev p0
ktap_run_fail "plane add of a netdev not in the namespace is refused" "no such netdev" \
	h1 plane add dev pl_a netdev veth-elsewhere
ktap_run_fail "plane add of the loopback is refused" "must be an Ethernet device" \
	h1 plane add dev pl_a netdev lo
ktap_run_fail "plane del of a netdev that is no plane is refused" "not a plane of the device" \
	h1 plane del dev pl_a netdev dummy0
ktap_run_fail "plane add without netdev is a usage error" "needs dev DEV and netdev NETDEV" \
	h1 plane add dev pl_a
ktap_run_fail "plane add to a device of another namespace is refused" "no such .*device" \
	in_planes h2 "$MR_CLI" plane add dev pl_a netdev p0
# Planes 4..7 (dummies) fill the device; a ninth is refused.
for ((k = N; k < 9; k++)); do ip -n pl-h1 link add "x$k" type dummy; done
for ((k = N; k < 8; k++)); do h1 plane add dev pl_a netdev "x$k" >/dev/null 2>&1; done
ktap_run_fail "a ninth plane is refused" "the most planes it can have" h1 plane add dev pl_a netdev x8
for ((k = N; k < 7; k++)); do h1 plane del dev pl_a netdev "x$k" >/dev/null 2>&1; done
ktap_check "planes deleted: $N and x7 left" "$(h1 -j plane show dev pl_a | mr_json length)" -eq $((N + 1))
ip -n pl-h1 link del x7
ktap_check "a plane whose netdev goes away goes with it" "$(h1 -j plane show dev pl_a | mr_json length)" -eq "$N"

# run_planes NAME ...: incast_planes_run, then its figures as diagnostics
run_planes() {
	local name=$1
	shift
	incast_planes_run $RATE $LIMIT "$@"
	ktap_diag "$name: goodput ${INC[goodput]:-n/a} Mbit/s = ${INC[util]:-n/a} of the planes' sum;" \
		"verified ${INC[verified]:-0} errors ${INC[errors]:-n/a} stalled ${INC[stalled]:-n/a} rc ${INC[rc]}"
	ktap_diag "  per plane (plane:packets:dropped): ${INC[planes]}"
}
verified() { [ "${INC[rc]}" -eq 0 ] && [ "${INC[errors]:-1}" -eq 0 ] && [ "${INC[verified]:-0}" -gt 0 ]; }

# --- one QP over N planes, then fewer ---
sizes="$N 2 1"
if mr_smoke; then
	sizes="2 1"
	mr_skip_cases 3 "one QP over 4 planes" "check-full only on the debug kernel"
fi
for n in $sizes; do
	if [ "$n" != "$N" ]; then
		for ((k = N - 1; k >= n; k--)); do
			h1 plane del dev pl_a netdev "p$k" && in_planes h2 "$MR_CLI" plane del dev pl_b netdev "p$k"
		done >"$tmp/del" 2>&1
		ktap_check "planes deleted down to $n: $(tr '\n' ' ' <"$tmp/del")" \
			"$(h1 -j plane show dev pl_a | mr_json length)" -eq "$n"
	fi
	if mr_smoke; then
		mr_skip_cases 2 "one QP over $n planes" "check-full only on the debug kernel"
		continue
	fi
	run_planes "one QP over $n planes" "$SECS"
	ktap_check "one QP over $n planes: every message right (${INC[verified]:-0})" "$(verified && echo 1)" = 1
	ktap_todo "one QP over $n planes: >= 0.9 of their sum (${INC[util]:-n/a})" "$TODO" \
		"$(awk -v u="${INC[util]:-0}" 'BEGIN { print (u >= 0.9) }')" -eq 1
done
for ((k = 1; k < N; k++)); do
	h1 plane add dev pl_a netdev "p$k" && in_planes h2 "$MR_CLI" plane add dev pl_b netdev "p$k"
done >"$tmp/add" 2>&1
ktap_check "planes back to $N" "$(h1 -j plane show dev pl_a | mr_json length)" -eq "$N"

# --- a plane fails mid-transfer, and comes back ---
# fail_run EVENT: plane 1 fails at AT s and is back at BACK s, monitor on
fail_run() {
	local event=$1 full target reach back_mbps
	in_planes h1 "$MR_CLI" -j monitor >"$tmp/mon" 2>&1 &
	mon_pid=$!
	sleep 0.5
	run_planes "$event on plane 1 at ${AT}-${BACK} s" "$SECS" "$event" 1 "$AT" "$BACK"
	sleep 0.5
	kill "$mon_pid" 2>/dev/null
	wait "$mon_pid" 2>/dev/null
	mon_pid=''
	ktap_diag "  monitor: $(tr '\n' ' ' <"$tmp/mon" | cut -c1-600)"
	ktap_check "$event: every message completed right, the QP never failed (${INC[verified]:-0})" \
		"$(verified && [ "${INC[stalled]:-1}" -eq 0 ] && echo 1)" = 1
	full=$(awk -v r="$(incast_mbps $RATE)" -v n="$N" 'BEGIN { print r * n }')
	target=$(awk -v f="$full" -v n="$N" 'BEGIN { print 0.85 * f * (n - 1) / n }')
	reach=$(incast_reach_ms $((AT * 1000)) "$target")
	back_mbps=$(incast_bins_mbps $(((BACK + 1) * 1000)) $((SECS * 1000)))
	ktap_diag "  before $(incast_bins_mbps 1000 $((AT * 1000))) Mbit/s;" \
		"during $(incast_bins_mbps $((AT * 1000)) $((BACK * 1000))) Mbit/s, at 0.85 of $((N - 1)) planes" \
		"($target) after $reach ms; after it came back $back_mbps Mbit/s of $full"
	ktap_todo "$event: goodput at 0.85 of $((N - 1)) planes within 1 s ($reach ms)" "$TODO" \
		"$([[ $reach =~ ^[0-9]+$ ]] && [ "$reach" -le 1000 ] && echo 1 || echo 0)" -eq 1
}

fail_run carrier
ktap_check "monitor: plane-down (carrier) of plane 1 on pl_a" \
	"$(jq -c 'select(.event == "plane-down" and .plane == 1 and .plane_reason == "carrier")' "$tmp/mon" | wc -l)" -ge 1
ktap_check "monitor: plane-up (carrier) of plane 1 on pl_a" \
	"$(jq -c 'select(.event == "plane-up" and .plane == 1 and .plane_reason == "carrier")' "$tmp/mon" | wc -l)" -ge 1
# Its packets right after it came back may find the neighbour or route
# not back yet: its paths may time out once more, and it is tried again.
ktap_check "plane 1 of pl_a is up again with its paths, its downs counted" \
	"$(h1 -j -s plane show dev pl_a | mr_json '(.[1] | .state, .paths, (.stats.downs >= 1))')" = "up $((16 / N)) true"

if mr_smoke; then
	mr_skip_cases 4 "black hole" "check-full only on the debug kernel"
else
	fail_run blackhole
	ktap_check "monitor: plane-down (timeout) of plane 1 on pl_a" \
		"$(jq -c 'select(.event == "plane-down" and .plane == 1 and .plane_reason == "timeout")' "$tmp/mon" | wc -l)" -ge 1
	# Tried again after its wait, it answered: back in service. Only
	# traffic tries it, and the wait grows to 3.2 s while the hole lasts:
	# when the run ended first, a short one gives it its try.
	if [ "$(h1 -j plane show dev pl_a | mr_json '.[1].state')" != up ]; then
		run_planes "more traffic, for plane 1 to be tried again" 5
	fi
	ktap_check "plane 1 of pl_a back in service after the black hole" \
		"$(h1 -j plane show dev pl_a | mr_json '.[1].state')" = up
fi
# --- a peer that only two of the planes reach ---
if mr_smoke; then
	mr_skip_cases 3 "a peer over 2 of the 4 planes" "check-full only on the debug kernel"
else
	hops=()
	for k in 0 1; do hops+=(nexthop via "10.81.$k.254" dev "p$k"); done
	ip -n pl-h1 route replace 10.80.0.2/32 "${hops[@]}"
	for ((k = 2; k < N; k++)); do in_planes h2 "$MR_CLI" plane del dev pl_b netdev "p$k"; done
	downs0=$(h1 -j plane show dev pl_a | mr_json 'map(.downs) | add')
	run_planes "a peer over 2 of the 4 planes" "$SECS"
	downs1=$(h1 -j plane show dev pl_a | mr_json 'map(.downs) | add')
	ktap_check "a peer over 2 of the 4 planes: every message right (${INC[verified]:-0})" "$(verified && echo 1)" = 1
	ktap_check "a peer over 2 of the 4 planes: no plane timed out for it (downs $downs0 -> $downs1)" \
		"$downs1" = "$downs0"
	util2=$(awk -v g="${INC[goodput]:-0}" -v r="$(incast_mbps $RATE)" 'BEGIN { printf "%.3f", g / (2 * r) }')
	ktap_todo "a peer over 2 of the 4 planes: >= 0.85 of the 2 planes ($util2)" "$TODO" \
		"$(awk -v u="$util2" 'BEGIN { print (u >= 0.85) }')" -eq 1
fi
ktap_diag "$(mr_stats pl_a | awk '$1 ~ /path_failovers|rto_events|retransmits|tx_drop/ { printf "%s %s  ", $1, $2 }')"
rm -rf "$tmp"
ktap_finish
