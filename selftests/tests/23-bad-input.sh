#!/bin/bash
# Bad input, between a metaroce device on each host. mr_bad_input: work
# requests that must fail (wrong rkey, out of bounds, missing rights, too
# long for the receive, RNR and transport retries exhausted, wrong QP state,
# too many SGEs, foreign lkeys) give the right completion status or errno,
# move the QP to ERR with the later WRs flushed in order, and never touch
# memory outside the target (guard zones around every MR); memory windows
# refuse binds against the rules and accesses beyond their range or rights,
# after invalidation (LOCAL_INV or the peer's SEND_WITH_INV) or through
# another QP; a QP destroyed with completions unpolled takes them along (no
# use after free in uverbs). mr_craft: crafted and garbage datagrams to
# UDP 4792 are dropped and counted by reason (`rdma statistic`), while
# ibv_rc_pingpong runs alongside and must pass;
# those that must reach the target QP's engines carry its connection tag
# (read with `metaroce -j -d qp show` in h2), and their twins with a wrong
# tag from the same address are each dropped as rx_drop_bad_tag.
# Both programs live in userspace/tests/guest/; their KTAP cases are relayed.
# timeout: 600
# quick: stock debug
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
trap topo_teardown EXIT

bad_cases=85
craft_cases=36
drops="rx_drop_short rx_drop_version rx_drop_malformed rx_drop_no_csum rx_drop_no_qp rx_drop_bad_tag"

ktap_plan $((bad_cases + 1 + craft_cases + 1 + 6 + $(wc -w <<<"$drops")))

# The debug kernel (KASAN, kmemleak) under TCG is about 10x slower per
# packet: a tenth of the crafted datagrams and pingpong iterations there
# (scaled).

ktap_run "two hosts with mrc0 (h1) and mrc1 (h2)" mr_two_hosts 1500
ktap_check "mr_bad_input, mr_craft and metaroce are in the guest" \
	-x /usr/local/bin/mr_bad_input -a -x /usr/local/bin/mr_craft -a -x /usr/local/bin/metaroce

# Both devices are visible from h1 (the RDMA netns mode is shared).
ktap_relay "$bad_cases" mr_bad_input ip netns exec h1 /usr/local/bin/mr_bad_input mrc0 mrc1

gid1=$(topo_gid_index mrc0 "$TOPO_H1_IP")
gid2=$(topo_gid_index mrc1 "$TOPO_H2_IP")
ktap_check "IPv4 RoCE v2 GID indexes (mrc0 $gid1, mrc1 $gid2)" -n "$gid1" -a -n "$gid2"

declare -A before
for c in $drops; do before[$c]=$(mr_stat mrc1 "$c"); done

# Traffic alongside the storm: a pingpong between the hosts.
iters=$(scaled "$(tiered 3000 1000)")
log=$(mktemp)
in_h2 timeout 300 ibv_rc_pingpong -d mrc1 -g "$gid2" -n "$iters" -s 1024 >"$log" 2>&1 &
srv=$!
sleep 0.5
in_h1 timeout 300 ibv_rc_pingpong -d mrc0 -g "$gid1" -n "$iters" -s 1024 "$TOPO_H2_IP" \
	>>"$log" 2>&1 &
cli=$!

ktap_relay "$craft_cases" mr_craft ip netns exec h1 /usr/local/bin/mr_craft --netns mrc1=h2 \
	mrc0 mrc1 "$TOPO_H2_IP" "$TOPO_H2_IP6" "$(scaled 300)"

rc=0
wait "$cli" || rc=$?
wait "$srv" || rc=$?
if [ "$rc" -eq 0 ] && grep -q "$iters iters" "$log"; then
	ktap_ok "ibv_rc_pingpong ($iters x 1024 bytes) alongside the storm"
else
	ktap_fail "ibv_rc_pingpong ($iters x 1024 bytes) alongside the storm" \
		"exit status $rc" "$(head -c 3000 "$log")"
fi
rm -f "$log"

ktap_diag "$(rdma statistic show link mrc1/1)"
for c in $drops; do
	now=$(mr_stat mrc1 "$c")
	ktap_check "mrc1 $c grew (${before[$c]} -> $now)" "${now:-0}" -gt "${before[$c]:-0}"
done

ktap_run "rdma link delete mrc0" rdma link delete mrc0
ktap_run "rdma link delete mrc1" rdma link delete mrc1
ktap_finish
