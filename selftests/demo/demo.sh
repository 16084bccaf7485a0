#!/bin/bash
# Demo (runs in the guest via `selftests/run --demo`, `make demo`): what
# MetaRoCE is for, in a few minutes. One veth pair va/vb in init_net
# (topo_rxe_pair, as the bench), a metaroce and an rxe device on each end;
# ib_write_bw over both, loss-free and at 1 % netem loss on both ends, side
# by side; `metaroce qp show`, `metaroce path show` and the same QP in
# `rdma resource show qp -dd` while metaroce's traffic runs (its paths:
# source ports, RTTs, windows); a transfer with
# every byte and completion checked at 1 % loss; a verdict line for each
# comparison. Exits non-zero only if a step fails, never for a number.
here=$(dirname "$0")
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
. "$here/../lib/pair.sh"
trap 'topo_netem_clear both 2>/dev/null; topo_teardown' EXIT

step() { printf '\n=== %s\n' "$*"; }
show() { printf '$ %s\n' "$*"; "$@" 2>&1; }
fail() {
	echo "demo: $*"
	exit 1
}

SECS=8 SIZE=65536
declare -A DEV_A=([metaroce]=mrc_a [rxe]=$TOPO_A_RXE) DEV_B=([metaroce]=mrc_b [rxe]=$TOPO_B_RXE)
declare -A GID_A GID_B GBPS
mr=/usr/local/bin/metaroce
[ -x "$mr" ] || mr=metaroce

step "a veth pair $TOPO_A_IF ($TOPO_A_IP) - $TOPO_B_IF ($TOPO_B_IP); metaroce and rxe devices on both ends"
topo_rxe_pair 1500 || fail "veth pair"
topo_rxe_add || fail "rdma link add ... type rxe"
show rdma link add mrc_a type metaroce netdev "$TOPO_A_IF" || fail "rdma link add mrc_a"
show rdma link add mrc_b type metaroce netdev "$TOPO_B_IF" || fail "rdma link add mrc_b"
show rdma link show
show "$mr" dev
for t in metaroce rxe; do
	GID_A[$t]=$(topo_gid_index "${DEV_A[$t]}" "$TOPO_A_IP") || fail "no RoCE v2 GID on ${DEV_A[$t]}"
	GID_B[$t]=$(topo_gid_index "${DEV_B[$t]}" "$TOPO_B_IP") || fail "no RoCE v2 GID on ${DEV_B[$t]}"
done

# The RC QP of mrc_a that carries traffic now, once it is up.
busy_qpn() {
	local i qpn
	for i in $(seq 40); do
		qpn=$("$mr" -j qp show dev mrc_a 2>/dev/null | python3 -c '
import json, sys
print(" ".join(str(q["qpn"]) for q in json.load(sys.stdin) if q.get("type", "").lower() == "rc" and q.get("state", "").lower() == "rts"))' 2>/dev/null)
		[ -n "$qpn" ] && echo "${qpn%% *}" && return
		sleep 0.25
	done
	return 1
}

# What metaroce's paths look like halfway through a run.
show_paths() {
	local qpn
	sleep $((SECS / 2))
	qpn=$(busy_qpn) || { echo "(no RC QP of mrc_a in RTS found)"; return; }
	show "$mr" qp show dev mrc_a qpn "$qpn"
	show "$mr" path show dev mrc_a qpn "$qpn"
	show rdma resource show qp link mrc_a/1 lqpn "$qpn" -dd
}

# write_bw TRANSPORT: Gb/s of ib_write_bw -D SECS (from the iterations it
# completed in its sample window: see sample_secs), or "n/a"
write_bw() {
	local out iters
	out=$(perf "$1" ib_write_bw -s "$SIZE" -D "$SECS" -F) || { echo n/a; return; }
	iters=$(awk -v s="$SIZE" '$1 == s && NF >= 5 { print $2; exit }' <<<"$out")
	[ -n "$iters" ] || { echo n/a; return; }
	awk -v n="$iters" -v s="$SIZE" -v w="$(sample_secs "$SECS")" 'BEGIN { printf "%.3f\n", n * s * 8 / w / 1e9 }'
}

for loss in 0 1; do
	if [ $loss = 0 ]; then
		step "ib_write_bw, $SIZE B messages, $SECS s each, no loss"
		topo_netem_clear both
	else
		step "the same at 1 % random loss on both ends (netem)"
		topo_netem both loss 1% || fail "netem loss 1%"
	fi
	for t in metaroce rxe; do
		[ $t = metaroce ] && show_paths &
		GBPS[$t:$loss]=$(write_bw $t)
		wait
		echo "$t, $loss % loss: ${GBPS[$t:$loss]} Gb/s"
	done
done

step "every byte and completion checked (mr_verify: SEND, WRITE, READ, atomics) at 1 % loss"
re0=$(mr_stat mrc_a retransmits)
show /usr/local/bin/mr_verify --dev-a mrc_a --dev-b mrc_b --gid-a "${GID_A[metaroce]}" \
	--gid-b "${GID_B[metaroce]}" --ops all --seconds 5 | grep -E '^# summary|^not ok'
verified=${PIPESTATUS[0]}
echo "mrc_a resent $(($(mr_stat mrc_a retransmits) - re0)) packets meanwhile"
topo_netem_clear both

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "n/a" }'; }
step "verdict"
echo "loss-free: metaroce ${GBPS[metaroce:0]} Gb/s, rxe ${GBPS[rxe:0]} Gb/s: metaroce/rxe $(ratio "${GBPS[metaroce:0]}" "${GBPS[rxe:0]}")"
echo "at 1 % loss metaroce keeps $(ratio "${GBPS[metaroce:1]}" "${GBPS[metaroce:0]}") of its loss-free throughput, rxe $(ratio "${GBPS[rxe:1]}" "${GBPS[rxe:0]}")"
echo "at 1 % loss: metaroce/rxe $(ratio "${GBPS[metaroce:1]}" "${GBPS[rxe:1]}")"
if [ "$verified" = 0 ]; then
	echo "the checked transfer at 1 % loss: every byte and completion right"
else
	fail "the checked transfer failed (exit $verified)"
fi
