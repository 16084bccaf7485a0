#!/bin/bash
# Hosts off the connection's path. Through the incast topology's router, a
# third host that knows both ends' addresses and their QPNs sends, with its
# own address, what would break an RC connection if a receiver took it from
# anyone (mr_craft --foreign): READ responses that start new path epochs,
# NAKs and ACKs for in-window messages, forged READ and atomic responses,
# SEND sweeps over MSNs and RSNs, WRITEs, atomics and 2 GiB READs with
# guessed rkeys. Every one must be dropped as rx_drop_not_peer; then the
# same attacks with the other end's address forged (raw IPv4: the router
# forwards them, and the target's route back to that address is the same
# port, so even a strict rp_filter passes them), which pass the peer check
# and carry random tags: every one must be dropped as rx_drop_bad_tag. The
# QPs must stay in RTS and carry verified data after, and a transfer checked
# byte for byte (mr_verify, every RC operation) runs through it all.
# timeout: 300
# quick: stock
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
verify_pid=''
cleanup() {
	[ -n "$verify_pid" ] && kill "$verify_pid" 2>/dev/null
	wait 2>/dev/null
	for d in inc_s1 inc_rcv; do rdma link del "$d" 2>/dev/null; done
	topo_incast_teardown
}
trap cleanup EXIT

craft_cases=20
ktap_plan $((3 + craft_cases + 3))

ktap_run "s1 and rcv with a device each, p (the attacker) beside them behind a router" \
	eval 'topo_incast 1 && mr_add inc-s1 inc_s1 eth0 && mr_add inc-rcv inc_rcv eth0'
s1=$(topo_incast_ip s1) rcv=$(topo_incast_ip rcv)
gid_s1=$(topo_gid_index inc_s1 "$s1")
gid_rcv=$(topo_gid_index inc_rcv "$rcv")
ktap_check "IPv4 RoCE v2 GID indexes (inc_s1 $gid_s1, inc_rcv $gid_rcv)" \
	-n "$gid_s1" -a -n "$gid_rcv"

# Both devices are visible from every namespace (the RDMA netns mode is
# shared): the verifier runs in init_net, the attacker in p.
if mr_debug_kernel; then secs=$(tiered 10 5) count=32; else secs=$(tiered 15 8) count=256; fi
log=$(mktemp)
timeout -k 5 120 /usr/local/bin/mr_verify --dev-a inc_s1 --dev-b inc_rcv \
	--gid-a "$gid_s1" --gid-b "$gid_rcv" --ops all --seconds "$secs" \
	--max-size 65536 >"$log" 2>&1 &
verify_pid=$!
both() { echo $(($(mr_stat inc_s1 "$1") + $(mr_stat inc_rcv "$1"))); }
np0=$(both rx_drop_not_peer) bt0=$(both rx_drop_bad_tag)
ktap_relay "$craft_cases" "mr_craft --foreign" in_incast p /usr/local/bin/mr_craft --foreign \
	inc_s1 inc_rcv "$rcv" "$s1" "$count"
np1=$(both rx_drop_not_peer) bt1=$(both rx_drop_bad_tag)
# Each way: 2 x count epoch resets, 3 kinds to each end.
ktap_check "rx_drop_not_peer counted all $((8 * count)) packets from p's address at least ($np0 -> $np1)" \
	$((np1 - np0)) -ge $((8 * count))
# mr_verify's packets all carry the right tags: these are the forged ones alone.
ktap_check "rx_drop_bad_tag counted exactly the $((8 * count)) with a forged address ($bt0 -> $bt1)" \
	$((bt1 - bt0)) -eq $((8 * count))

mr_verify_wait "$verify_pid" "$log" "mr_verify (every RC operation, ${secs} s) through the attacks"
verify_pid=
rm -f "$log"
ktap_finish
