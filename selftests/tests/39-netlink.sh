#!/bin/bash
# The metaroce generic netlink family through the real `metaroce` tool:
# devices seen per network namespace, settings that change what dev show
# reports (all or nothing, and only for root), refusals with the kernel's
# extack message, the QPs (their handshake state; the connection tags for
# root alone) and paths of a live connection with counters
# that grow, path failovers, QPs to ERR and settings changes seen by
# `metaroce monitor`, a device moved to its own UDP port, and malformed
# requests (built by hand: the tool never sends them) answered with an
# errno. The same QP through iproute2's rdma: its driver details (`rdma
# resource show qp -dd`) and per-QP counters bound by hand and in auto
# mode (`rdma statistic qp`), whose counts survive unbind and destroy and
# are not counted twice.
# timeout: 450
# quick: stock debug
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
. "$here/../lib/perftest.sh"
mon_pid='' bg_pid='' cli_pid=''
cleanup() {
	[ -n "$mon_pid" ] && kill "$mon_pid" 2>/dev/null
	[ -n "$bg_pid" ] && kill "$bg_pid" ${cli_pid:+"$cli_pid"} 2>/dev/null
	wait 2>/dev/null
	topo_teardown
}
trap cleanup EXIT

# The guest's copy; on a host (--host), the installed one.
mr=/usr/local/bin/metaroce
[ -x "$mr" ] || mr=$(command -v metaroce) || ktap_skip_all "no metaroce tool"
command -v jq >/dev/null || ktap_skip_all "jq is missing (mr_json)"
ktap_plan 56
tmp=$(mktemp -d)

ktap_run "two hosts with mrc0 (h1) and mrc1 (h2)" mr_two_hosts 1500
gid1=$(topo_gid_index mrc0 "$TOPO_H1_IP")
gid2=$(topo_gid_index mrc1 "$TOPO_H2_IP")

# nobody CMD...: CMD in h1 as uid/gid 65534, without capabilities (leaving
# uid 0 clears them).
nobody() { in_h1 setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# --- devices and namespaces ---
out=$(in_h1 "$mr" dev 2>&1)
ktap_diag "$out"
ktap_check "dev (in h1): mrc0 on veth1" "$(grep -cE '^[0-9]+: mrc0: netdev veth1 ' <<<"$out")" -eq 1
ktap_check "dev (in h1): mrc1 of h2 is not listed" "$(grep -c mrc1 <<<"$out")" -eq 0
in_h1 "$mr" -j dev >"$tmp/h1.json" 2>&1
ktap_run "dev -j (in h1) is JSON" mr_json type "$tmp/h1.json"
ifindex=$(ip -n h1 -o link show veth1 | cut -d: -f1)
ktap_check "dev -j: one device, mrc0, netdev veth1 with ifindex $ifindex" \
	"$(mr_json 'length, (.[0] | .ifname, .netdev, (.netdev_ifindex | num))' "$tmp/h1.json")" \
	= "1 mrc0 veth1 $ifindex"
# "none" if rdma's has none: two failed look-ups must not compare equal.
rdma_ifindex=$(rdma -j dev show mrc0 | mr_json '.[0].ifindex')
ktap_check "dev -j: index is the RDMA device's (${rdma_ifindex:-none})" \
	"$(mr_json '.[0].ifindex' "$tmp/h1.json")" = "${rdma_ifindex:-none}"
ktap_check "dev -j (in h2): only mrc1" \
	"$(in_h2 "$mr" -j dev | mr_json '.[].ifname')" = mrc1
ktap_check "dev -j (init_net): no device, both netdevs are elsewhere" \
	"$("$mr" -j dev | mr_json length)" -eq 0
ktap_run_fail "dev show of a device of another namespace: no such device" \
	'no metaroce device "mrc1"' in_h1 "$mr" dev show mrc1
ktap_run_fail "dev show of a name that does not exist" \
	'no metaroce device "nosuch0"' in_h1 "$mr" dev show nosuch0

# --- settings ---
ktap_run "dev set mrc0 paths 8 fail-after 2 cc-gain 5 target-delay 3ms init-path-window 8" \
	in_h1 "$mr" dev set mrc0 paths 8 fail-after 2 cc-gain 5 target-delay 3ms init-path-window 8
in_h1 "$mr" -j dev show mrc0 >"$tmp/set.json"
ktap_check "dev show reports them" \
	"$(mr_json '.[0] | (.paths, .fail_after, .cc.gain_shift, .cc.target_delay_ns | num), .cc.init_path_window' "$tmp/set.json")" \
	= "8 2 5 3000000 8"
ktap_run_fail "an initial window above the maximum is refused with the kernel's message" \
	'do not fit together' in_h1 "$mr" dev set mrc0 paths 4 init-path-window 128 max-path-window 64
ktap_check "... and changes nothing (paths still 8, all or nothing)" \
	"$(in_h1 "$mr" -j dev show mrc0 | mr_json '.[0] | .paths, .cc.max_path_window')" \
	= "8 $(mr_json '.[0].cc.max_path_window' "$tmp/set.json")"
# Of `dev set cc` and a write of the module parameter cc, the later counts.
ccshow() { in_h1 "$mr" -j dev show mrc0 | mr_json '.[0].cc.enabled'; }
in_h1 "$mr" dev set mrc0 cc off
off=$(ccshow)
echo 1 >/sys/module/metaroce/parameters/cc
on=$(ccshow)
ktap_check "dev set cc off shows off, a later write of parameters/cc=1 on ($off, $on)" \
	"$off $on" = "false true"
ktap_run_fail "dev set as an unprivileged user: permission denied" \
	'permission denied' nobody "$mr" dev set mrc0 paths 4
ktap_run "dev show as an unprivileged user works" \
	nobody "$mr" dev show mrc0

# --- a device's own UDP port ---
# ports NS: the UDP ports bound in NS, sorted and unique.
ports() { ip netns exec "$1" ss -Hlun | awk '{ sub(/.*:/, "", $4); print $4 }' | sort -un | tr '\n' ' '; }
udp_bound() { [[ $(ports "$1") == *"$2"* ]]; }
in_h1 "$mr" dev set mrc0 udp-port 4800 && in_h2 "$mr" dev set mrc1 udp-port 4800
ktap_check "udp-port 4800 on both ends (only the GSI QP): shown, and 4792 closed ($(ports h1))" \
	"$(in_h1 "$mr" -j dev show mrc0 | mr_json '.[0].udp_port') $(ports h1)" = "4800 4800 "
ktap_run "mr_verify over port 4800 (every RC operation, 2 s)" \
	timeout -k 5 60 /usr/local/bin/mr_verify --dev-a mrc0 --dev-b mrc1 \
	--gid-a "$gid1" --gid-b "$gid2" --ops all --seconds 2 --max-size 65536
# Not through in_h1: kill must reach python itself.
ip netns exec h1 python3 -c 'import socket, time; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("0.0.0.0", 4801)); time.sleep(30)' &
squat_pid=$!
topo_wait 5 udp_bound h1 4801
ktap_run_fail "udp-port held by another socket: EADDRINUSE with the reason" \
	'in use in the namespace' in_h1 "$mr" dev set mrc0 udp-port 4801
kill "$squat_pid" 2>/dev/null
wait "$squat_pid" 2>/dev/null
in_h1 "$mr" dev set mrc0 udp-port 4792 && in_h2 "$mr" dev set mrc1 udp-port 4792
ktap_check "back on 4792: 4800 closed ($(ports h1))" "$(ports h1)" = "4792 "

# --- malformed requests, as the kernel's policy answers them ---
raw=$(in_h1 python3 "$here/../lib/genl_raw.py" paths-range name-long index-short \
	unknown-attr read-only truncated no-selector 2>&1)
ktap_diag "$raw"
ktap_check "raw requests: ERANGE for a value out of range, EINVAL for the rest" \
	"$(tr '\n' ' ' <<<"$raw")" = "paths-range 34 name-long 22 index-short 22 unknown-attr 22 read-only 22 truncated 22 no-selector 22 "

# --- a live connection: its QP and its paths ---
# Far longer than the checks take on a slow guest (the debug kernel beside
# host stages took over 120 s): they end it when done.
secs=900
in_h2 timeout 960 ib_write_bw -d mrc1 -x "$gid2" -F -D "$secs" -s 65536 >"$tmp/srv" 2>&1 &
bg_pid=$!
topo_wait_listen h2 18515
in_h1 timeout 960 ib_write_bw -d mrc0 -x "$gid1" -F -D "$secs" -s 65536 "$TOPO_H2_IP" >"$tmp/cli" 2>&1 &
cli_pid=$!
qpn=
for _ in $(seq 50); do
	qpn=$(in_h1 "$mr" -j qp show dev mrc0 | mr_json '.[] | select(rc_rts and get("paths"; 0) != 0) | .qpn')
	[ -n "$qpn" ] && break
	sleep 0.2
done
qpn=${qpn%% *}
ktap_diag "$(in_h1 "$mr" -s qp show dev mrc0)"
ktap_check "qp show: an RC QP in RTS with the device's 8 paths (qpn ${qpn:-none})" \
	"$(in_h1 "$mr" -j qp show dev mrc0 qpn "${qpn:-0}" 2>&1 | mr_json '.[0].paths' 2>&1)" = 8
# The connection tags: both ends done with the handshake, each end's tag
# the one the other sends (its peer tag); only root sees them (-d).
# qp_keys KEY...: those members of the one QP of the JSON on stdin, "-" if absent.
qp_keys() {
	local keys
	keys=$(printf '"%s", ' "$@")
	mr_json ".[0] as \$q | (${keys%, }) as \$k | \$q | get(\$k; \"-\")" 2>&1
}
read -r hs1 ltag1 ptag1 rqpn <<<"$(in_h1 "$mr" -j -d qp show dev mrc0 qpn "${qpn:-0}" | qp_keys handshake local_tag peer_tag rqpn)"
read -r hs2 ltag2 ptag2 <<<"$(in_h2 "$mr" -j -d qp show dev mrc1 qpn "${rqpn:-0}" | qp_keys handshake local_tag peer_tag)"
tags="mrc0 $ltag1/$ptag1, mrc1 $ltag2/$ptag2"
ktap_check "qp show -d: handshake done at both ends ($hs1 $hs2), each end's tag the other's peer tag ($tags)" \
	"$hs1 $hs2 $([[ $ltag1 =~ ^0x[0-9a-f]{16}$ && $ltag1 != 0x0000000000000000 && $ltag1 = "$ptag2" && $ptag1 = "$ltag2" && $ltag1 != "$ltag2" ]] && echo mirrored)" = "done done mirrored"
ktap_check "qp show without -d: no tags, even for root" \
	"$(in_h1 "$mr" -j qp show dev mrc0 qpn "${qpn:-0}" | qp_keys handshake local_tag peer_tag)" = "done - -"
ktap_check "qp show -d as an unprivileged user: the handshake, no tags" \
	"$(nobody "$mr" -j -d qp show dev mrc0 qpn "${qpn:-0}" | qp_keys handshake local_tag peer_tag)" = "done - -"
tx() { in_h1 "$mr" -s -j qp show dev mrc0 qpn "$qpn" | mr_json '.[0].stats.tx_packets'; }
tx0=$(tx)
sleep 1
tx1=$(tx)
ktap_check "its tx_packets grow while traffic runs ($tx0 -> $tx1)" "${tx1:-0}" -gt "${tx0:-0}"
in_h1 "$mr" -s -j path show dev mrc0 qpn "$qpn" >"$tmp/paths.json" 2>&1
# At once, while the QP still runs (the debug kernel is slow).
one=$(in_h1 "$mr" -j path show dev mrc0 qpn "$qpn" path 3 2>&1)
ktap_diag "$(in_h1 "$mr" path show dev mrc0 qpn "$qpn")"
ktap_check "path show: 8 paths, ids 0-7, source ports in 49152-65535" \
	"$(mr_json 'length, [.[].path] == [range(8)], all(.[]; .sport | num | . >= 49152 and . <= 65535)' "$tmp/paths.json")" \
	= "8 true true"
ktap_check "path show: paths have an SRTT after traffic" \
	"$(mr_json '[.[] | select(get("srtt_ns"; 0) | num > 0)] | length' "$tmp/paths.json")" -gt 0
ktap_check "path show -s: every path has sent packets (stats tx_packets)" \
	"$(mr_json '[.[] | select(.stats.tx_packets | num > 0)] | length' "$tmp/paths.json")" -eq 8
ktap_check "path show of one path (path 3): that one alone" \
	"$(mr_json '[.[].path]' <<<"$one" 2>&1)" = "[3]"
ktap_run_fail "udp-port while the device has an RC QP: EBUSY" \
	'while the device has QPs' in_h1 "$mr" dev set mrc0 udp-port 4800
ktap_run_fail "path show of a QP that does not exist: ENOENT" \
	'no QP 99999 on mrc0' in_h1 "$mr" path show dev mrc0 qpn 99999

# --- the same QP in iproute2's rdma: driver details ---
# rdma prints the driver's attributes with a drv_ prefix.
rdma -j -dd resource show qp link mrc0/1 lqpn "$qpn" >"$tmp/res.json" 2>&1
ktap_diag "$(rdma -dd resource show qp link mrc0/1 lqpn "$qpn" 2>&1)"
# Each attribute "none" if absent, so that it fails its own check alone.
# shellcheck disable=SC2016 # $k is jq's
res=$(mr_json '.[0] | (("paths", "srtt_ns", "tx_packets", "retransmits", "paths_failed") as $k | get("drv_" + $k; "none")),
	([.drv_path_srtt_us | split(",")[] | tonumber | select(. > 0)] | length)' "$tmp/res.json" 2>&1)
read -r r_paths r_srtt r_tx r_re r_failed r_sampled <<<"$res"
ktap_check "rdma -j resource show qp -dd: paths $r_paths, the device's 8" "$r_paths" = 8
ktap_check "... an SRTT after traffic (srtt_ns $r_srtt)" "${r_srtt:-0}" -gt 0
ktap_check "... tx_packets $r_tx, at least the $tx1 metaroce qp show saw before" \
	"${r_tx:-0}" -ge "${tx1:-1}"
ktap_check "... retransmits $r_re within them, no failed path ($r_failed)" \
	"$([ "${r_re:-x}" -le "$r_tx" ] 2>/dev/null && echo "ok $r_failed")" = "ok 0"
ktap_check "... 8 per-path SRTTs, every path sampled ($r_sampled)" "${r_sampled:-0}" -eq 8

# --- a counter for it: `rdma statistic qp` ---
# Text and awk from here: python is slow in the guest and the QP is live.
# kv KEY: the value after KEY in rdma's output on stdin; "none" if absent.
kv() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); f = 1; exit } } END { if (!f) print "none" }'; }
rtx() { rdma -dd resource show qp link mrc0/1 lqpn "$qpn" | kv drv_tx_packets; }
qpc() { rdma statistic qp show link mrc0/1 | kv "$1"; }
# portqp NAME: NAME of the port's table in `rdma statistic show link`,
# which adds up all counters (hw_counters in sysfs shows the port's own 0).
portqp() { rdma statistic show link mrc0/1 | kv "$1"; }
p0=$(portqp qp_tx_packets)
t0=$(rtx)
ktap_run "rdma statistic qp bind link mrc0/1 lqpn $qpn" \
	rdma statistic qp bind link mrc0/1 lqpn "$qpn"
sleep 0.5
out=$(rdma statistic qp show link mrc0/1 2>&1)
t1=$(rtx)
ktap_diag "$out"
cntn=$(kv cntn <<<"$out") c1=$(kv qp_tx_packets <<<"$out")
ktap_check "statistic qp show: counter $cntn (lqpn $qpn) counted from 0 at the bind (0 < qp_tx_packets $c1 <= $((t1 - t0)) sent since)" \
	"$([ "$c1" -gt 0 ] 2>/dev/null && [ "$c1" -le $((t1 - t0)) ] && grep -c "LQPN: <$qpn>" <<<"$out")" = 1
ktap_check "... and shows only the per-QP counters (rx_packets: $(kv rx_packets <<<"$out"))" \
	"$(kv rx_packets <<<"$out")" = none
ktap_run "rdma statistic qp unbind link mrc0/1 cntn $cntn lqpn $qpn" \
	rdma statistic qp unbind link mrc0/1 cntn "$cntn" lqpn "$qpn"
p1=$(portqp qp_tx_packets)
ktap_check "after unbind no counter is left" "$(qpc cntn)" = none
sleep 0.3
p2=$(portqp qp_tx_packets)
t2=$(rtx)
ktap_check "statistic show link: the released counter's count stays ($c1 <= $((p1 - p0)) <= $((t2 - t0)))" \
	"$([ $((p1 - p0)) -ge "$c1" ] 2>/dev/null && [ $((p1 - p0)) -le $((t2 - t0)) ] && echo ok)" = ok
ktap_check "... and the unbound QP adds nothing to it ($p1 = $p2)" "$p2" = "$p1"
rdma statistic qp bind link mrc0/1 lqpn "$qpn"
sleep 0.3
c2=$(qpc qp_tx_packets)
t3=$(rtx)
ktap_check "bound again: a new counter, from 0 again (0 < $c2 <= $((t3 - t2)))" \
	"$([ "$c2" -gt 0 ] 2>/dev/null && [ "$c2" -le $((t3 - t2)) ] && echo ok)" = ok
# Done with the live connection: end both ends (their pids, from rdma).
speer=$(rdma resource show qp link mrc0/1 lqpn "$qpn" | kv rqpn)
kill "$(rdma resource show qp link mrc0/1 lqpn "$qpn" | kv pid)" \
	"$(rdma resource show qp link mrc1/1 lqpn "$speer" | kv pid)"
wait "$bg_pid" "$cli_pid"
bg_pid='' cli_pid=''
for _ in $(seq 50); do
	[ "$(rtx)" = none ] && break
	sleep 0.1
done
p3=$(portqp qp_tx_packets)
ktap_check "destroyed while bound: no counter left ($(qpc cntn)), its count joined the port's ($((p3 - p2)) >= $c2)" \
	"$(qpc cntn) $([ $((p3 - p2)) -ge "$c2" ] 2>/dev/null && echo ok)" = "none ok"

# --- a failover, seen by monitor ---
# As 34-failover.sh: a quarter of the source ports lead into a black hole;
# 16 paths make it all but certain that one of them does.
blackhole() {
	topo_exec "$1" tc qdisc add dev "$(topo_ifc "$1")" root handle 1: prio &&
		topo_exec "$1" tc filter add dev "$(topo_ifc "$1")" parent 1: protocol ip \
			prio 1 u32 match ip protocol 17 0xff match ip dport 4792 0xffff \
			match ip sport 49152 0xf000 action drop
}
in_h1 "$mr" -j monitor >"$tmp/mon" 2>&1 &
mon_pid=$!
sleep 0.3
ktap_run "dev set mrc0 paths 16 (monitor running)" in_h1 "$mr" dev set mrc0 paths 16
ktap_run "black hole for source ports 49152-53247 on both ends" \
	eval 'blackhole h1 && blackhole h2'
# Auto mode binds each QP at RTR; the client's counter on mrc0 must count
# every loss event mrc0 counts, no more, once the QP has gone.
ktap_run "rdma statistic qp set link mrc0/1 auto type on" \
	rdma statistic qp set link mrc0/1 auto type on
losses() {
	local n
	for n in retransmits rto_events tail_probes path_failovers; do
		echo -n "$(mr_stat mrc0 "$n") $(portqp "qp_$n") "
	done
}
fo0=$(mr_stat mrc0 path_failovers)
l0=($(losses))
perf_case ib_write_bw 65536 "$(scaled 200)"
fo1=$(mr_stat mrc0 path_failovers)
l1=($(losses))
rdma statistic qp set link mrc0/1 auto off
ld=()
for i in "${!l1[@]}"; do ld+=($((l1[i] - l0[i]))); done
ktap_diag "$(rdma statistic show link mrc0/1 | tr ' ' '\n' | grep -A1 '^qp_' | paste -sd ' ')"
ktap_check "auto mode: retransmits, RTOs, tail probes and failovers, mrc0's and its counters' (${ld[*]})" \
	"$([ "${ld[0]}" -gt 0 ] && echo lossy) ${ld[0]} ${ld[2]} ${ld[4]} ${ld[6]}" = "lossy ${ld[1]} ${ld[3]} ${ld[5]} ${ld[7]}"
# QPs moved to ERR by their owner (mr_qp_states, as in 22-qp-states.sh).
topo_exec h1 tc qdisc del dev "$(topo_ifc h1)" root
topo_exec h2 tc qdisc del dev "$(topo_ifc h2)" root
in_h1 timeout 60 /usr/local/bin/mr_qp_states mrc0 mrc1 >"$tmp/states" 2>&1
ktap_diag "mr_qp_states: $(grep -c '^ok' "$tmp/states") ok, $(grep -c '^not ok' "$tmp/states") not ok"
sleep 0.3
kill "$mon_pid"
wait "$mon_pid" 2>/dev/null
mon_pid=
ktap_diag "$(head -5 "$tmp/mon")"
events=$(grep -c '"path-failover"' "$tmp/mon")
ktap_check "monitor saw path failovers ($events events, path_failovers $fo0 -> $fo1)" \
	"$events" -gt 0
ktap_check "one event per failover of mrc0" "$events" -eq $((fo1 - fo0))
ktap_check "monitor saw the settings change (dev-change with paths 16)" \
	"$(grep '"dev-change"' "$tmp/mon" | grep -c '"paths":16')" -eq 1
ktap_check "monitor saw QPs of mrc0 go to ERR by their owner (qp-error reason user)" \
	"$(grep '"qp-error"' "$tmp/mon" | grep '"ifname":"mrc0"' | grep -c '"reason":"user"')" -gt 0
ktap_diag "$(grep -m 2 '"qp-error"' "$tmp/mon")"

rm -rf "$tmp"
ktap_finish
