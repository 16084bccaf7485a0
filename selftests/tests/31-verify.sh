#!/bin/bash
# The data verifier: mr_verify (userspace/tests/guest/) drives every RC
# operation both ways between mrc0 (h1) and mrc1 (h2) with patterned data
# over many sizes, SGE lists and a window of WRs, and checks every byte,
# guard zone and completion. It runs loss-free, then under netem on both
# ends: loss 1% and 10%, 25% reordering, 5% duplication, 1% corruption and
# bursty (Gilbert-Elliott) loss. Each run's KTAP cases are relayed here;
# each condition must also show in the counters (retransmits, out_of_order,
# duplicate_packets, UDP checksum errors). Reproduce one run by hand with the
# "$ mr_verify ..." line printed before it.
# timeout: 480
# quick: stock debug
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
trap topo_teardown EXIT

prog=/usr/local/bin/mr_verify
prog_cases=13
conditions=7

# two hosts, gids, the flipped-byte self-check, per condition the relayed
# cases and one counter check
# (two for corruption), six netem setups and the final removal; the tag
# checks after the loss-free run and at the end.
ktap_plan $((3 + conditions * (prog_cases + 2) + 1 + 6 + 1 + 2))

# The debug kernel (KASAN, kmemleak) under TCG moves about 1000 packets a
# second: smaller messages there, 8 s per condition (about 8000 packets).
if [ -e /sys/kernel/debug/kmemleak ]; then
	run_args=(--seconds "$(tiered 8 2)" --max-size 65536 --random 4)
else
	run_args=(--seconds "$(tiered 8 2)")
fi
seed=${MR_VERIFY_SEED:-1}

mr_pair

# Every operation: SEND(+imm), WRITE(+imm), READ, CMP_SWAP, FETCH_ADD.
ops=all

# The checks can fail: a byte flipped on purpose must be reported.
ktap_run_fail "mr_verify reports a byte flipped on purpose" 'expected 0x[0-9a-f]+ got 0x[0-9a-f]+' \
	"$prog" --dev-a mrc0 --dev-b mrc1 --gid-a "$gid1" --gid-b "$gid2" --ops "$ops" \
	--rounds 1 --max-size 4096 --random 1 --linger 0.2 --flip-byte 5

# Counters of both devices added up, one "NAME VALUE" per line.
stats_both() { { mr_stats mrc0; mr_stats mrc1; } | awk '{ s[$1] += $2 } END { for (n in s) print n, s[n] }'; }

# delta BEFORE AFTER: D[NAME] = AFTER - BEFORE for every counter.
declare -A D
delta() {
	local n v
	D=()
	while read -r n v; do D[$n]=$v; done <<<"$2"
	while read -r n v; do D[$n]=$((${D[$n]:-0} - v)); done <<<"$1"
}

csum_errors() { echo $(($(topo_snmp h1 Udp InCsumErrors) + $(topo_snmp h2 Udp InCsumErrors))); }

# verify NAME: mr_verify in init_net (the RDMA netns mode is shared, so it
# sees both devices), relayed; then the counter deltas as diagnostics.
verify() {
	local name=$1 before after secs drops n
	local cmd=("$prog" --dev-a mrc0 --dev-b mrc1 --gid-a "$gid1" --gid-b "$gid2"
		--ops "$ops" --seed "$seed" "${run_args[@]}")
	ktap_diag "$name: \$ ${cmd[*]}"
	before=$(stats_both)
	secs=$(date +%s)
	ktap_relay "$prog_cases" "mr_verify ($name)" timeout -k 5 150 "${cmd[@]}"
	after=$(stats_both)
	delta "$before" "$after"
	drops=0
	for n in "${!D[@]}"; do [[ $n == *drop* ]] && drops=$((drops + D[$n])); done
	ktap_diag "$name: $(($(date +%s) - secs)) s; retransmits +${D[retransmits]} sack_gaps +${D[sack_gaps]}" \
		"rto_events +${D[rto_events]} duplicate_packets +${D[duplicate_packets]}" \
		"out_of_order +${D[out_of_order]} drops +$drops tx_packets +${D[tx_packets]}"
	seed=$((seed + 1))
}

# skip_condition NAME CHECKS: in the debug kernel's smoke set, a condition
# whose paths another takes (1 % loss: 10 %'s; corruption: the UDP
# checksum drops it before MetaRoCE; bursty loss: 10 %'s) is skipped, its
# netem setup, relayed cases and CHECKS counter checks
skip_condition() {
	mr_smoke || return 1
	mr_skip_cases $((1 + prog_cases + 1 + $2)) "$1" "check-full only on the debug kernel"
}

verify "loss-free"
ktap_check "loss-free: packets went both ways (rx_packets +${D[rx_packets]})" "${D[rx_packets]}" -gt 0
# Every connection settles its tags by HELLOs, and then every packet has
# the right one: nothing of the peer's own traffic is dropped for its tag.
ktap_check "loss-free: tags agreed by HELLO (hello_rx +${D[hello_rx]}), none dropped for its tag (+${D[rx_drop_bad_tag]})" \
	"${D[hello_rx]:-0}" -gt 0 -a "${D[rx_drop_bad_tag]:-1}" -eq 0
start_stats=$(stats_both)

if ! skip_condition "loss 1%" 1; then
	ktap_run "netem loss 1% on both ends" topo_loss both 1%
	verify "loss 1%"
	ktap_check "loss 1%: retransmits (+${D[retransmits]})" "${D[retransmits]}" -gt 0
fi

ktap_run "netem loss 10% on both ends" topo_loss both 10%
verify "loss 10%"
ktap_check "loss 10%: retransmits (+${D[retransmits]})" "${D[retransmits]}" -gt 0

# netem reorders only packets of a path sent within its delay of each other:
# the debug kernel sends a path's packets about 16 ms apart, so it needs a
# longer delay than the stock kernel to reorder any.
reorder_ms=10
mr_debug_kernel && reorder_ms=50
ktap_run "netem delay ${reorder_ms}ms reorder 25% on both ends" topo_reorder both 25% "$reorder_ms"
verify "reorder 25%"
ktap_check "reorder 25%: packets out of order (+${D[out_of_order]})" "${D[out_of_order]}" -gt 0

ktap_run "netem duplicate 5% on both ends" topo_duplicate both 5%
verify "duplicate 5%"
ktap_check "duplicate 5%: duplicates counted (+${D[duplicate_packets]})" \
	"${D[duplicate_packets]}" -gt 0

# netem flips a bit after computing the UDP checksum, so the UDP stack of the
# receiving namespace drops the datagram (Udp InCsumErrors) before MetaRoCE
# sees it; a flip in the IP header is an Ip InHdrErrors, in the MAC header
# the packet is not for us. None reaches MetaRoCE's own checks.
if ! skip_condition "corrupt 1%" 2; then
	ktap_run "netem corrupt 1% on both ends" topo_corrupt both 1%
	csum0=$(csum_errors)
	hdr0=$(($(topo_snmp h1 Ip InHdrErrors) + $(topo_snmp h2 Ip InHdrErrors)))
	verify "corrupt 1%"
	csum1=$(csum_errors)
	hdr1=$(($(topo_snmp h1 Ip InHdrErrors) + $(topo_snmp h2 Ip InHdrErrors)))
	ktap_diag "corrupt 1%: Udp InCsumErrors $csum0 -> $csum1, Ip InHdrErrors $hdr0 -> $hdr1"
	ktap_check "corrupt 1%: corrupted datagrams dropped by the UDP checksum (Udp InCsumErrors +$((csum1 - csum0)))" \
		"$csum1" -gt "$csum0"
	rx_drops=$((D[rx_drop_short] + D[rx_drop_version] + D[rx_drop_malformed] + D[rx_drop_no_csum]))
	ktap_check "corrupt 1%: none got past it (MetaRoCE rx_drop_short/version/malformed/no_csum +$rx_drops)" \
		"$rx_drops" -eq 0
fi

# Gilbert-Elliott: 1% good->bad, 10% bad->good (bursts of ~10 packets), 70%
# loss in the bad state, 0.1% in the good one: about 6% loss, in bursts.
if ! skip_condition "bursty loss" 1; then
	ktap_run "netem loss gemodel 1% 10% 70% 0.1% on both ends" topo_netem both loss gemodel 1% 10% 70% 0.1%
	verify "bursty loss"
	ktap_check "bursty loss: retransmits (+${D[retransmits]})" "${D[retransmits]}" -gt 0
fi

delta "$start_stats" "$(stats_both)"
ktap_diag "after the loss-free run: hello_tx +${D[hello_tx]} hello_rx +${D[hello_rx]} rx_drop_early +${D[rx_drop_early]}"
ktap_check "under loss, reordering, duplicates and corruption no packet was dropped for its tag (+${D[rx_drop_bad_tag]})" \
	"${D[rx_drop_bad_tag]:-1}" -eq 0
ktap_run "netem removed" topo_netem_clear both
ktap_finish
