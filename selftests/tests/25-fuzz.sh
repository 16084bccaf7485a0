#!/bin/bash
# A fuzzer aimed at a live QP (mr_craft --fuzz, userspace/tests/guest/): an
# RC pair of its own between mrc0 (h1) and mrc1 (h2) moves traffic of every
# kind while h1 captures what leaves for mrc1's QP; then, for 10 s, h1 sends
# mutations of those packets (with the real tag, mostly) at that QP from
# its own address, as fast as the target takes them. The drops the codec
# predicts must be counted, the pair must end in RTS or ERR with every WR
# completed or flushed and no byte outside its MRs touched, and a new pair
# must carry verified data. Meanwhile mr_verify (every RC operation, every
# byte checked) runs between the same devices on other QPs and must pass.
# Every datagram that reached mrc1 is accounted for: those mrc0 sent, plus
# the fuzzer's, less what veth1 dropped. The harness's "no kernel splat" and
# "no kmemleak report" cases cover the rest. Replay a run with the seed it
# prints: MR_FUZZ_SEED (default 1) picks the mutations.
# It is meant for KASAN, lockdep and kmemleak:
# kernels: debug
# timeout: 300
# quick: debug
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
verify_pid='' craft_pid=''
log=$(mktemp) craft_log=$(mktemp)
cleanup() {
	[ -n "$verify_pid" ] && kill "$verify_pid" 2>/dev/null
	[ -n "$craft_pid" ] && kill "$craft_pid" 2>/dev/null
	wait 2>/dev/null
	rm -f "$log" "$craft_log"
	topo_teardown
}
trap cleanup EXIT

craft_cases=10
fuzz_secs=$(tiered 10 4) verify_secs=$(tiered 10 4)
seed=${MR_FUZZ_SEED:-1}

ktap_plan $((2 + craft_cases + 1 + 2 + 2))

mr_pair

veth1_dropped() { in_h1 cat /sys/class/net/veth1/statistics/tx_dropped; }
rx0=$(mr_stat mrc1 rx_packets) tx0=$(mr_stat mrc0 tx_packets) vd0=$(veth1_dropped)

craft=(ip netns exec h1 /usr/local/bin/mr_craft --fuzz "$fuzz_secs" --netns mrc1=h2
	mrc0 mrc1 "$TOPO_H2_IP" "$seed")
ktap_diag "\$ ${craft[*]}"
timeout -k 5 200 "${craft[@]}" >"$craft_log" 2>&1 &
craft_pid=$!
# seeded: whether mr_craft has its seeds and starts to fuzz (read without a
# process: each costs about 0.4 s on the debug kernel).
seeded() {
	local line
	while IFS= read -r line; do [[ $line == "# seeds by opcode"* ]] && return 0; done <"$craft_log"
	return 1
}
while kill -0 "$craft_pid" 2>/dev/null && ! seeded; do sleep 0.5; done

# The verifier in init_net (the RDMA netns mode is shared, so it sees both
# devices), from the fuzz on: both from mrc0 to mrc1 and back.
timeout -k 5 150 /usr/local/bin/mr_verify --dev-a mrc0 --dev-b mrc1 \
	--gid-a "$gid1" --gid-b "$gid2" --ops all --seconds "$verify_secs" \
	--max-size 65536 --random 4 >"$log" 2>&1 &
verify_pid=$!
craft_rc=0
wait "$craft_pid" || craft_rc=$?
craft_pid=
replay() { cat "$craft_log"; return "$craft_rc"; }
ktap_relay "$craft_cases" "mr_craft --fuzz" replay
sent=$(sed -n 's/^# fuzz-sent \([0-9]*\)$/\1/p' "$craft_log")

mr_verify_wait "$verify_pid" "$log" \
	"mr_verify (every RC operation, ${verify_secs} s) on other QPs through the fuzz"
verify_pid=

# Nothing vanished: once both are done, mrc1 received what mrc0 sent plus
# the fuzzer's datagrams, less what veth1 dropped on the way.
rx1=$rx0 tx1=$tx0
for _ in $(seq 20); do
	sleep 0.5
	r=$(mr_stat mrc1 rx_packets) t=$(mr_stat mrc0 tx_packets)
	[ "$r" = "$rx1" ] && [ "$t" = "$tx1" ] && break
	rx1=$r tx1=$t
done
vd1=$(veth1_dropped)
ktap_diag "mrc1 rx_packets +$((rx1 - rx0)), mrc0 tx_packets +$((tx1 - tx0)), fuzzed ${sent:-?}, veth1 tx_dropped +$((vd1 - vd0))"
ktap_diag "mrc1: $(rdma statistic show link mrc1/1)"
ktap_check "every datagram mrc1 received is mrc0's or the fuzzer's (rx $((rx1 - rx0)) = tx $((tx1 - tx0)) + fuzz ${sent:-?} - veth drops $((vd1 - vd0)))" \
	-n "$sent" -a $((rx1 - rx0)) -eq $((tx1 - tx0 + ${sent:-0} - (vd1 - vd0)))

ktap_run "rdma link delete mrc0" rdma link delete mrc0
ktap_run "rdma link delete mrc1" rdma link delete mrc1
ktap_finish
