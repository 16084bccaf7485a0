#!/bin/bash
# `make bench`, encryption part (bench.sh runs it; BENCH_ENCRYPT=0 leaves it
# out, BENCH_ENCRYPT=only runs nothing else). Usage: encrypt.sh TABLES_FILE
#
# metaroce's ib_write_bw and ib_read_bw (64 KiB, 1 QP, -D BENCH_SECS) on the
# bench's veth pair in init_net (topo_rxe_pair, no netem), with the module
# parameter psk off and on (AES-128-GCM): in each of BENCH_ENCRYPT_REPS
# rounds (3) mrc_a and mrc_b are made again without a key and with one, and
# every op runs on each, the two orders alternating between rounds so that
# the host's drift does not favour one. A warm-up of each first. Each run
# notes the encryption counters; a run with the key that encrypted nothing
# is a setup error. Writes the Markdown table to TABLES_FILE: Gb/s as the
# median of the rounds, the on/off ratio as the median of the per-round
# ratios with their range. About 1 + REPS minutes with BENCH_SECS=10. Not a
# test: numbers never fail it.
here=$(dirname "$0")
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
. "$here/../lib/pair.sh"
[ -r /selftests/run.conf ] && . /selftests/run.conf
tables=${1:?usage: encrypt.sh TABLES_FILE}
cleanup() {
	[ -e "$MR_PSK" ] && echo >"$MR_PSK" # later devices: no key
	topo_teardown
}
trap cleanup EXIT

SECS=${BENCH_SECS:-10}
REPS=${BENCH_ENCRYPT_REPS:-3}
BW_SIZE=65536
OPS=(write read)
MODES=(off on)
# A fixed key: this is a benchmark, not a deployment.
KEY=4d657461526f43452062656e6368206b65792030313233343536373839616263
# shellcheck disable=SC2034 # perf (lib/pair.sh) reads them
declare -A DEV_A=([metaroce]=mrc_a) DEV_B=([metaroce]=mrc_b) GID_A GID_B
declare -A RUNS # "op mode" -> each run's Gb/s

note() { printf '# encrypt: %s\n' "$*"; }
die() {
	echo "bench: encrypt: setup error: $*"
	exit 1
}

# relink MODE: mrc_a and mrc_b made again, with the key for "on"
relink() {
	local d
	for d in mrc_a mrc_b; do
		if mr_exists "$d"; then rdma link del "$d" || return; fi
	done
	if [ "$1" = on ]; then mr_psk "$KEY"; else mr_psk ""; fi || return
	mr_add - mrc_a "$TOPO_A_IF" && mr_add - mrc_b "$TOPO_B_IF" || return
	GID_A[metaroce]=$(topo_gid_index mrc_a "$TOPO_A_IP") &&
		GID_B[metaroce]=$(topo_gid_index mrc_b "$TOPO_B_IP")
}

# bw OP MODE [SECS]: one run; with no SECS, recorded in RUNS
bw() {
	local op=$1 mode=$2 secs=${3:-$SECS} out rc=0 gbps enc0 dec0 enc dec
	enc0=$(mr_stat mrc_a tx_encrypted) dec0=$(mr_stat mrc_b rx_decrypted)
	out=$(SECS=$secs perf metaroce "ib_${op}_bw" -s "$BW_SIZE" -D "$secs" -F --report_gbits) || rc=$?
	gbps=$(perf_gbps "$out" "$BW_SIZE" "$secs")
	enc=$(($(mr_stat mrc_a tx_encrypted) - ${enc0:-0})) dec=$(($(mr_stat mrc_b rx_decrypted) - ${dec0:-0}))
	[ $rc -eq 0 ] && [ -n "$gbps" ] || gbps="n/a (error)"
	note "$op psk $mode${3:+ (warm-up)}: $gbps Gb/s (exit $rc, mrc_a tx_encrypted +$enc, mrc_b rx_decrypted +$dec)"
	num "$gbps" || tail -n 12 <<<"$out" | sed 's/^/#   | /'
	if [ "$mode" = on ] && [ "$enc" -le 0 ]; then
		die "psk is set but mrc_a encrypted nothing"
	elif [ "$mode" = off ] && [ "$enc" -ne 0 ]; then
		die "psk is empty but mrc_a encrypted $enc packets"
	fi
	[ -n "${3:-}" ] || RUNS[$op:$mode]+="${RUNS[$op:$mode]:+ }${gbps// /_}"
}

topo_rxe_pair 1500 || die "topo_rxe_pair"
mr_psk "" || die "no module parameter psk: this metaroce.ko has no encryption"

for mode in "${MODES[@]}"; do
	relink "$mode" || die "rdma link add mrc_a, mrc_b with psk $mode"
	bw write "$mode" 4
done
start=$(date +%s)
for ((rep = 1; rep <= REPS; rep++)); do
	order=("${MODES[@]}")
	[ $((rep % 2)) = 0 ] && order=(on off)
	for mode in "${order[@]}"; do
		relink "$mode" || die "rdma link add mrc_a, mrc_b with psk $mode"
		for op in "${OPS[@]}"; do bw "$op" "$mode"; done
	done
	note "round $rep of $REPS done after $(($(date +%s) - start)) s"
done

# onoff OP: the median of the per-round on/off ratios, and their range
onoff() {
	local -a on off r=()
	local i m
	read -ra on <<<"${RUNS[$1:on]}"
	read -ra off <<<"${RUNS[$1:off]}"
	for i in "${!on[@]}"; do r+=("$(ratio "${on[$i]}" "${off[$i]:-}")"); done
	m=$(ratio "$(median "${r[@]}")" 1)
	[ "$m" = n/a ] || m+=$(sorted_nums "${r[@]}" |
		awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR > 1) printf " (%s–%s)", lo, hi }')
	echo "$m"
}
{
	echo "Encryption: metaroce, ${BW_SIZE} B messages, 1 QP, perftest -D $SECS, no netem; the devices made again"
	echo "in each of $REPS rounds without and with a pre-shared key (psk, AES-128-GCM), the order alternating."
	echo "Gb/s: the median of the rounds; on/off: the median of the per-round ratios (their range in brackets)."
	echo
	echo "| op | psk off Gb/s | psk on Gb/s | on/off |"
	echo "|---|---|---|---|"
	for op in "${OPS[@]}"; do
		# shellcheck disable=SC2086 # one word per run
		echo "| $op | $(median ${RUNS[$op:off]}) | $(median ${RUNS[$op:on]}) | $(onoff "$op") |"
	done
} >"$tables"
for key in "${!RUNS[@]}"; do note "runs of ${key/:/ psk }: ${RUNS[$key]}"; done
exit 0
