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
# Then the same against a victim on an SRQ and a UD QP (--victim srq, ud),
# each taking a stream that it checks itself while the fuzz runs: every
# receive completion names a posted receive, its byte_len fits and nothing
# past it is written, no buffer changes after its completion (each is held
# and rechecked before it is reposted), the stream's messages arrive intact.
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

# The victims: an RC QP; an RC QP whose receives come from an SRQ that a
# second pair's checked stream shares; a UD QP taking a checked stream of
# datagrams (no tag, a Q_Key). With srq and ud the victim checks its own
# receives (mr_craft's RecvCheck): wr_id, byte_len, nothing written past
# byte_len or after completion, the stream intact.
victims=(rc srq ud)
declare -A craft_cases=([rc]=10 [srq]=14 [ud]=13)
declare -A fuzz_secs=([rc]=$(tiered 10 4) [srq]=$(tiered 6 3) [ud]=$(tiered 6 3))
seed=${MR_FUZZ_SEED:-1}

plan=2
for v in "${victims[@]}"; do plan=$((plan + craft_cases[$v] + 1 + 1)); done
ktap_plan $((plan + 1 + 2))

mr_pair

veth1_dropped() { in_h1 cat /sys/class/net/veth1/statistics/tx_dropped; }
rx0=$(mr_stat mrc1 rx_packets) tx0=$(mr_stat mrc0 tx_packets) vd0=$(veth1_dropped)

# seeded: whether mr_craft has its seeds and starts to fuzz (read without a
# process: each costs about 0.4 s on the debug kernel).
seeded() {
	local line
	while IFS= read -r line; do [[ $line == "# seeds by opcode"* ]] && return 0; done <"$craft_log"
	return 1
}
replay() { cat "$craft_log"; return "$craft_rc"; }
sent=0
for v in "${victims[@]}"; do
	secs=${fuzz_secs[$v]}
	craft=(ip netns exec h1 /usr/local/bin/mr_craft --fuzz "$secs" --victim "$v"
		--netns mrc1=h2 mrc0 mrc1 "$TOPO_H2_IP" "$seed")
	ktap_diag "\$ ${craft[*]}"
	timeout -k 5 200 "${craft[@]}" >"$craft_log" 2>&1 &
	craft_pid=$!
	while kill -0 "$craft_pid" 2>/dev/null && ! seeded; do sleep 0.5; done

	# The verifier in init_net (the RDMA netns mode is shared, so it sees
	# both devices), from the fuzz on: both from mrc0 to mrc1 and back.
	timeout -k 5 150 /usr/local/bin/mr_verify --dev-a mrc0 --dev-b mrc1 \
		--gid-a "$gid1" --gid-b "$gid2" --ops all --seconds "$secs" \
		--max-size 65536 --random 4 >"$log" 2>&1 &
	verify_pid=$!
	craft_rc=0
	wait "$craft_pid" || craft_rc=$?
	craft_pid=
	ktap_relay "${craft_cases[$v]}" "mr_craft --fuzz --victim $v" replay
	s=$(sed -n 's/^# fuzz-sent \([0-9]*\)$/\1/p' "$craft_log")
	[ -n "$s" ] && [ -n "$sent" ] && sent=$((sent + s)) || sent=

	mr_verify_wait "$verify_pid" "$log" \
		"mr_verify (every RC operation, $secs s) on other QPs through the fuzz of $v"
	verify_pid=
done
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
