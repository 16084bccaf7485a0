#!/bin/bash
# `make bench` (runs in the guest via `selftests/run --bench`): metaroce, rxe
# and TCP side by side on ONE veth pair in init_net (topo_rxe_pair: policy
# routing sends a<->b traffic across the veth), under netem loss on both ends.
# For each loss level and each RDMA transport: ib_write_bw, ib_send_bw and
# ib_read_bw (64 KiB, 1 QP, -D seconds) and ib_write_lat (64 B); iperf3 (one
# TCP stream) on the same veth. Prints the results as a Markdown table
# between "#@ table" and "#@ end table"; the host saves it under build/bench/.
#
# Not a test: the numbers never fail it, and a run that fails or times out
# shows as "n/a (error)". It exits non-zero only on setup errors (devices,
# GIDs, metaroce traffic not crossing the veth).
# Settings (from run.conf, see selftests/run): BENCH_LOSSES (percent, the
# first one is the reference for the ratios; default "0.0 0.1 1 5 10"; "0"
# removes the qdisc, veth's default, while "0.0" is netem losing nothing, so
# that only the loss differs between the reference and the other levels),
# BENCH_SECS (seconds per bandwidth run, default 10), BENCH_REPS (bandwidth
# runs per point, default 5: the table shows their median, the notes each
# run), BENCH_NVME_MIB (MiB per NVMe-oF run, default 256, 0: none); for a
# quicker look, BENCH_OPS (a subset of
# "write send read") and BENCH_TRANSPORTS (a subset of "metaroce rxe tcp";
# latency runs for the RDMA ones). BENCH_PIN=1 pins the perftest server to
# CPU 1 and the client to CPU 0 (default: the scheduler places them; why
# pinning costs metaroce's READ: admin guide, "CPUs and polling").
# BENCH_INCAST, BENCH_INCAST_REPS: the incast and ECMP tables (incast.sh).
# BENCH_ENCRYPT (0: none, only: nothing else), BENCH_ENCRYPT_REPS: the
# encryption table, psk off against on (encrypt.sh).
# BENCH_FASTPATH (0: none, only: nothing else), BENCH_FASTPATH_ROUNDS: the
# fast path's latency and system-call tables.
# BENCH_CONNS (0: none, only: nothing else), BENCH_CONNS_QPS (default
# "1 16 256 4000"): many connections, metaroce against rxe (mr_many).
# BENCH_STREAMS (0: none, only: nothing else): one QP of 64 streams against
# 64 QPs and one stream, the same traffic (mr_streams), loss-free and at 1%.
# Last, NVMe over Fabrics loss-free: nvmet-rdma on b exports a null_blk and
# nvme-rdma on a reads and writes it with O_DIRECT dd, over each transport in
# turn (rdma_cm picks the device by GID, so the other transport's devices are
# removed for the run).
here=$(dirname "$0")
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
. "$here/../lib/nvme.sh"
[ -r /selftests/run.conf ] && . /selftests/run.conf
trap 'nvme_cleanup; topo_teardown' EXIT

# Encryption (bench/encrypt.sh): BENCH_ENCRYPT=0 leaves it out, "only" runs
# nothing else.
ENCRYPT_TABLES=/tmp/bench-encrypt.md
if [ "${BENCH_ENCRYPT:-1}" = only ]; then
	rc=0
	bash "$here/encrypt.sh" "$ENCRYPT_TABLES" || rc=$?
	[ $rc -eq 0 ] || echo "bench: encrypt.sh failed (exit $rc)"
	echo "#@ table"
	[ ! -s "$ENCRYPT_TABLES" ] || cat "$ENCRYPT_TABLES"
	echo "#@ end table"
	exit $rc
fi

# Incast and ECMP (bench/incast.sh): BENCH_INCAST=0 leaves them out, "only"
# runs nothing else.
INCAST_TABLES=/tmp/bench-incast.md
if [ "${BENCH_INCAST:-1}" = only ]; then
	bash "$here/incast.sh" "$INCAST_TABLES" || echo "bench: incast.sh failed (exit $?)"
	echo "#@ table"
	cat "$INCAST_TABLES"
	echo "#@ end table"
	exit 0
fi

LOSSES=(${BENCH_LOSSES:-0.0 0.1 1 5 10})
SECS=${BENCH_SECS:-10}
REPS=${BENCH_REPS:-5}
BW_SIZE=65536
LAT_SIZE=64
LAT_ITERS=1000
TRANSPORTS=() TCP=0
for t in ${BENCH_TRANSPORTS:-metaroce rxe tcp}; do
	case $t in
	metaroce | rxe) TRANSPORTS+=("$t") ;;
	tcp) TCP=1 ;;
	*) echo "bench: unknown transport $t" && exit 1 ;;
	esac
done
BW_OPS=(${BENCH_OPS:-write send read})
declare -A DEV_A=([metaroce]=mrc_a [rxe]=$TOPO_A_RXE) DEV_B=([metaroce]=mrc_b [rxe]=$TOPO_B_RXE)
declare -A GID_A GID_B
declare -A RESULT # "transport op loss" -> value, or "n/a (error)"
declare -A RUNS   # "transport op loss" -> each bandwidth run's Gb/s

note() { printf '# %s\n' "$*"; }
die() {
	echo "bench: setup error: $*"
	exit 1
}

# --- setup
topo_rxe_pair 1500 || die "topo_rxe_pair"
topo_rxe_add || die "rdma link add rxe"
mr_add - mrc_a "$TOPO_A_IF" || die "rdma link add mrc_a type metaroce netdev $TOPO_A_IF"
mr_add - mrc_b "$TOPO_B_IF" || die "rdma link add mrc_b type metaroce netdev $TOPO_B_IF"
for t in "${TRANSPORTS[@]}"; do
	GID_A[$t]=$(topo_gid_index "${DEV_A[$t]}" "$TOPO_A_IP") || die "no IPv4 RoCE v2 GID on ${DEV_A[$t]}"
	GID_B[$t]=$(topo_gid_index "${DEV_B[$t]}" "$TOPO_B_IP") || die "no IPv4 RoCE v2 GID on ${DEV_B[$t]}"
	note "$t: ${DEV_A[$t]} on $TOPO_A_IF (GID ${GID_A[$t]}), ${DEV_B[$t]} on $TOPO_B_IF (GID ${GID_B[$t]})"
done

veth_tx() { cat "/sys/class/net/$1/statistics/tx_packets"; }
# metaroce's loss recovery, both ends, noted per run
RECOVERY=(retransmits sack_gaps spurious_resends out_of_order tail_probes rto_deferred rto_events duplicate_packets rnr_naks)

. "$here/../lib/pair.sh"
[ "${BENCH_PIN:-0}" = 1 ] && PIN_SERVER=(taskset -c 1) PIN_CLIENT=(taskset -c 0)

# --- the fast path, loss-free (BENCH_FASTPATH=0 leaves it out, "only" runs
# nothing else): ib_write_lat and ib_send_lat, 64 B and 4 KiB, metaroce and
# rxe interleaved in BENCH_FASTPATH_ROUNDS rounds (default 3), typical and
# 99th percentile; then the system calls metaroce's provider made per 1,000
# data-path operations (METAROCE_STATS) in ib_write_bw and ib_send_bw.
FASTPATH_TABLES=/tmp/bench-fastpath.md
declare -A FP # "transport tool size typ|p99" -> each round's usec
# med_range VALUES...: "median (lo–hi)" of the numeric ones, with
# MED_DIGITS decimals (default one)
med_range() {
	sorted_nums "$@" | awk -v d="${MED_DIGITS:-1}" '{ v[NR] = $1 } END {
		if (!NR) { print "n/a"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		f = "%." d "f"
		printf f " (" f "–" f ")", m, v[1], v[NR] }'
}
# fp_ratio KEY-A KEY-B: the median of the per-round ratios, with their range
fp_ratio() {
	local -a a b r=()
	local i
	read -ra a <<<"${FP[$1]}"
	read -ra b <<<"${FP[$2]}"
	for i in "${!a[@]}"; do r+=("$(ratio "${a[$i]}" "${b[$i]:-}")"); done
	sorted_nums "${r[@]}" | awk '{ v[NR] = $1 } END {
		if (!NR) { print "n/a"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.2f (%.2f–%.2f)", m, v[1], v[NR] }'
}
# fp_calls TOOL: "operations calls" summed over both ends of one run
fp_calls() {
	local out
	out=$(METAROCE_STATS=1 perf metaroce "$1" -s "$BW_SIZE" -n 5000 -F --report_gbits 2>&1)
	# On stderr: stdout is the caller's answer.
	note "fastpath $1: $(grep 'metaroce: data path' <<<"$out" | tr '\n' ' ')" >&2
	awk '/metaroce: data path:/ {
		gsub(/[(),]/, "")
		for (i = 1; i < NF; i++) {
			if ($(i + 1) == "operations") ops += $i
			if ($(i + 1) == "sends") sends += $i
			if ($(i + 1) == "system" && $(i + 2) == "calls") calls += $i
			if ($i == "post_send") post += $(i + 1)
		} }
		END { if (ops) print ops, calls, sends, post }' <<<"$out"
}
# fp_bw TRANSPORT: Gb/s of one loss-free ib_write_bw of BW_SIZE, SECS long
# (TCP: one iperf3 stream).
fp_bw() {
	local out
	if [ "$1" = tcp ]; then
		tcp fastpath >/dev/null
		echo "${RUNS[tcp:tcp:fastpath]}"
		return
	fi
	out=$(perf "$1" ib_write_bw -s "$BW_SIZE" -D "$SECS" -F --report_gbits 2>&1)
	perf_gbps "$out" "$BW_SIZE" "$SECS" || fail_diag "$out" >&2
}
# fp_pinned TRANSPORT CPU PORT_OFFSET: a loss-free ib_write_bw whose two
# processes run on CPU (in a subshell: perf's globals stay as they are).
fp_pinned() (
	port=$((port + $3))
	# shellcheck disable=SC2034 # perf (lib/pair.sh) reads them
	PIN_SERVER=(taskset -c "$2")
	PIN_CLIENT=(taskset -c "$2")
	perf "$1" ib_write_bw -s "$BW_SIZE" -D "$SECS" -F --report_gbits
)
# fp_bw2 TRANSPORT: the Gb/s of two ib_write_bw at once, a QP each, the
# first pair of processes on CPU 0 and the second on CPU 1, summed.
fp_bw2() {
	local f1 f2 g1 g2
	f1=$(mktemp) f2=$(mktemp)
	fp_pinned "$1" 0 0 >"$f1" 2>&1 &
	fp_pinned "$1" 1 50 >"$f2" 2>&1 &
	wait
	port=$((port + 60))
	g1=$(perf_gbps "$(cat "$f1")" "$BW_SIZE" "$SECS") g2=$(perf_gbps "$(cat "$f2")" "$BW_SIZE" "$SECS")
	[ -n "$g1" ] || fail_diag "$(cat "$f1")" >&2
	[ -n "$g2" ] || fail_diag "$(cat "$f2")" >&2
	rm -f "$f1" "$f2"
	[ -n "$g1" ] && [ -n "$g2" ] && awk -v a="$g1" -v b="$g2" 'BEGIN { printf "%.4f", a + b }'
}
fastpath() {
	local rounds=${BENCH_FASTPATH_ROUNDS:-3} r t tool size out typ p99 key ops calls sends posts g
	local -A calls_of posts_of
	for ((r = 1; r <= rounds; r++)); do
		for tool in ib_write_lat ib_send_lat; do
			for size in 64 4096; do
				for t in metaroce rxe; do
					out=$(perf "$t" "$tool" -s "$size" -n "$LAT_ITERS" -F 2>&1)
					# "#bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%"
					read -r typ p99 < <(awk -v s="$size" -v n="$LAT_ITERS" \
						'$1 == s && $2 == n && NF >= 8 { print $5, $8; exit }' <<<"$out")
					key="$t $tool $size"
					FP[$key typ]+=" ${typ:-n/a}"
					FP[$key p99]+=" ${p99:-n/a}"
					note "fastpath round $r: $key: typical ${typ:-?} p99 ${p99:-?} usec"
					[ -n "$typ" ] || fail_diag "$out"
				done
			done
		done
	done
	for ((r = 1; r <= rounds; r++)); do
		for t in metaroce rxe tcp; do
			g=$(fp_bw "$t")
			FP[$t bw]+=" ${g:-n/a}"
			note "fastpath round $r: $t ib_write_bw ${BW_SIZE} B, 1 QP: ${g:-n/a} Gb/s"
		done
		for t in metaroce rxe; do
			g=$(fp_bw2 "$t")
			FP[$t bw2]+=" ${g:-n/a}"
			note "fastpath round $r: $t ib_write_bw ${BW_SIZE} B, 2 QPs on 2 CPUs: ${g:-n/a} Gb/s"
		done
	done
	for tool in ib_write_bw ib_send_bw; do
		read -r ops calls sends posts < <(fp_calls "$tool")
		calls_of[$tool]=$(awk -v o="${ops:-0}" -v c="${calls:-0}" \
			'BEGIN { if (o > 0) printf "%.1f (%d calls, %d operations)", c * 1000 / o, c, o; else print "n/a" }')
		posts_of[$tool]=$(awk -v s="${sends:-0}" -v p="${posts:-0}" \
			'BEGIN { if (s > 0) printf "%.2f (%d calls, %d sends)", p * 100 / s, p, s; else print "n/a" }')
	done
	{
		echo "Fast path, loss-free: perftest latency, $LAT_ITERS iterations, usec: the median of $rounds"
		echo "interleaved rounds (their range in brackets); metaroce / rxe: the median of the per-round ratios."
		echo
		echo "| | metaroce typical | rxe typical | metaroce / rxe | metaroce p99 | rxe p99 | metaroce / rxe |"
		echo "|---|---|---|---|---|---|---|"
		# shellcheck disable=SC2086 # the rounds: one word each
		for tool in ib_write_lat ib_send_lat; do
			for size in 64 4096; do
				echo "| ${tool#ib_} $size B | $(med_range ${FP[metaroce $tool $size typ]}) |" \
					"$(med_range ${FP[rxe $tool $size typ]}) |" \
					"$(fp_ratio "metaroce $tool $size typ" "rxe $tool $size typ") |" \
					"$(med_range ${FP[metaroce $tool $size p99]}) |" \
					"$(med_range ${FP[rxe $tool $size p99]}) |" \
					"$(fp_ratio "metaroce $tool $size p99" "rxe $tool $size p99") |"
			done
		done
		echo
		echo "Loss-free ib_write_bw, ${BW_SIZE} B, -D $SECS, Gb/s: the median of $rounds interleaved rounds"
		echo "(their range); TCP: one iperf3 stream. 2 QPs: two ib_write_bw at once, each pair of"
		echo "processes pinned to its own CPU, summed."
		echo
		echo "| | metaroce | rxe | TCP | metaroce / rxe | metaroce / TCP |"
		echo "|---|---|---|---|---|---|"
		# shellcheck disable=SC2086 # the rounds: one word each
		echo "| 1 QP | $(MED_DIGITS=3 med_range ${FP[metaroce bw]}) |" \
			"$(MED_DIGITS=3 med_range ${FP[rxe bw]}) |" \
			"$(MED_DIGITS=3 med_range ${FP[tcp bw]}) | $(fp_ratio "metaroce bw" "rxe bw") |" \
			"$(fp_ratio "metaroce bw" "tcp bw") |"
		# shellcheck disable=SC2086
		echo "| 2 QPs on 2 CPUs | $(MED_DIGITS=3 med_range ${FP[metaroce bw2]}) |" \
			"$(MED_DIGITS=3 med_range ${FP[rxe bw2]}) | |" \
			"$(fp_ratio "metaroce bw2" "rxe bw2") | |"
		echo "| 2 QPs / 1 QP | $(fp_ratio "metaroce bw2" "metaroce bw") | $(fp_ratio "rxe bw2" "rxe bw") | | | |"
		echo
		echo "System calls of metaroce's provider per 1,000 data-path operations (posts and completions"
		echo "polled, both ends; METAROCE_STATS), one run of 5,000 ${BW_SIZE} B messages:"
		echo
		echo "| | system calls / 1,000 operations | post_send's system calls / 100 sends |"
		echo "|---|---|---|"
		for tool in ib_write_bw ib_send_bw; do echo "| $tool | ${calls_of[$tool]} | ${posts_of[$tool]} |"; done
	} >"$FASTPATH_TABLES"
}

# Why a run failed, for the console: the last lines of its output.
fail_diag() { tail -n 12 <<<"$1" | sed 's/^/#   | /'; }

# bw TRANSPORT OP LOSS: one bandwidth run; RESULT in Gb/s.
bw() {
	local t=$1 op=$2 loss=$3 out rc=0 iters gbps='' drops0 tx0 extra='' c
	local -A cnt0
	for c in "${RECOVERY[@]}"; do cnt0[$c]=$(mr_sum "$c" mrc_a mrc_b); done
	drops0=$(topo_netem_drops both) tx0=$(veth_tx "$TOPO_A_IF")
	out=$(perf "$t" "ib_${op}_bw" -s "$BW_SIZE" -D "$SECS" -F --report_gbits) || rc=$?
	# "#bytes #iterations BW-peak BW-average MsgRate", the client's line first
	iters=$(awk -v s="$BW_SIZE" '$1 == s && NF >= 5 { print $2; exit }' <<<"$out")
	[ -n "$iters" ] && gbps=$(awk -v n="$iters" -v s="$BW_SIZE" -v w="$(sample_secs "$SECS")" \
		'BEGIN { printf "%.4f", n * s * 8 / w / 1e9 }')
	if [ "$t" = metaroce ]; then
		for c in "${RECOVERY[@]}"; do extra+=", $c +$(($(mr_sum "$c" mrc_a mrc_b) - ${cnt0[$c]}))"; done
	fi
	[ $rc -eq 0 ] && [ -n "$gbps" ] || gbps="n/a (error)"
	RUNS[$t:$op:$loss]+="${RUNS[$t:$op:$loss]:+ }${gbps// /_}"
	note "$t $op ${loss}%: $gbps Gb/s, ${iters:-?} iterations in $(sample_secs "$SECS") s (exit $rc, netem drops +$(($(topo_netem_drops both) - drops0)), $TOPO_A_IF tx +$(($(veth_tx "$TOPO_A_IF") - tx0)) packets$extra)"
	num "$gbps" || fail_diag "$out"
}

# lat TRANSPORT LOSS: ib_write_lat; RESULT is "typical/average" in usec.
# perftest times latency with rdtsc, which TCG sometimes breaks (inf, nan):
# numbers that are not finite, or whose sum exceeds the run's wall time,
# show as "n/a (clock)".
lat() {
	local t=$1 loss=$2 out rc=0 v start wall
	start=$(date +%s.%N)
	out=$(perf "$t" ib_write_lat -s "$LAT_SIZE" -n "$LAT_ITERS" -F) || rc=$?
	wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	# "#bytes #iterations t_min t_max t_typical t_avg ..."
	v=$(awk -v s="$LAT_SIZE" -v n="$LAT_ITERS" '$1 == s && $2 == n && NF >= 6 { print $5 "/" $6; exit }' <<<"$out")
	if [ $rc -ne 0 ] || [ -z "$v" ]; then
		RESULT[$t:lat:$loss]="n/a (error)"
	elif ! num "${v%/*}" || ! num "${v#*/}" ||
		! awk -v avg="${v#*/}" -v n="$LAT_ITERS" -v w="$wall" 'BEGIN { exit !(avg * n / 1e6 <= w) }'; then
		RESULT[$t:lat:$loss]="n/a (clock)"
	else
		RESULT[$t:lat:$loss]=$v
	fi
	note "$t write_lat ${loss}%: ${RESULT[$t:lat:$loss]} usec typical/avg (exit $rc, perftest: ${v:-none}, whole run $wall s)"
	[ $rc -eq 0 ] && [ -n "$v" ] || fail_diag "$out"
}

# tcp LOSS: one iperf3 stream a -> b across the veth; RESULT in Gb/s.
tcp() {
	local loss=$1 out rc=0 spid gbps
	timeout $((SECS + 30)) iperf3 -s -1 -B "$TOPO_B_IP" -p 5201 >/dev/null 2>&1 &
	spid=$!
	topo_wait_listen b 5201 || echo "iperf3 server did not listen"
	out=$(timeout $((SECS + 20)) iperf3 -c "$TOPO_B_IP" -B "$TOPO_A_IP" -p 5201 -t "$SECS" -f m 2>&1) || rc=$?
	[ $rc -eq 0 ] || kill "$spid" 2>/dev/null
	wait "$spid"
	gbps=$(awk '/receiver/ { for (i = 2; i <= NF; i++) if ($i == "Mbits/sec") { printf "%.4f", $(i - 1) / 1000; exit } }' <<<"$out")
	[ $rc -eq 0 ] && [ -n "$gbps" ] || gbps="n/a (error)"
	RUNS[tcp:tcp:$loss]+="${RUNS[tcp:tcp:$loss]:+ }${gbps// /_}"
	note "tcp ${loss}%: $gbps Gb/s (exit $rc)"
	num "$gbps" || fail_diag "$out"
}

# --- many connections, loss-free (BENCH_CONNS=0 leaves it out, "only" runs
# nothing else): mr_many sets up N RC QPs between the two devices, then
# sends verified messages both ways on all of them at once, round after
# round, about 64 MiB each way in all (64 KiB messages; 16 KiB at 4,000
# QPs, for the guest's memory). One run per point, metaroce then rxe.
CONNS_TABLES=/tmp/bench-conns.md
declare -A CN
conns_run() { # TRANSPORT QPS: CN[...] from one mr_many run
	local t=$1 q=$2 size=65536 rounds out rc=0
	[ "$q" -le 256 ] || size=16384
	rounds=$(((64 << 20) / (q * size)))
	[ "$rounds" -ge 1 ] || rounds=1
	out=$(timeout 600 /usr/local/bin/mr_many --dev-a "${DEV_A[$t]}" --dev-b "${DEV_B[$t]}" --qps "$q" \
		--bytes "$size" --rounds "$rounds" --threads 2 --timeout 120 --memory-checks 0 2>&1) || rc=$?
	CN[$t $q setup]=$(awk '/^# setup/ { print $3; exit }' <<<"$out")
	CN[$t $q traffic]=$(awk '/^# traffic/ { print $3; exit }' <<<"$out")
	CN[$t $q mem]=$(awk '/^# mem_per_qp_kib/ { print $3; exit }' <<<"$out")
	CN[$t $q gbps]=$(awk -v q="$q" -v s="$size" -v r="$rounds" -v a="${CN[$t $q setup]:-0}" \
		-v b="${CN[$t $q traffic]:-0}" 'BEGIN { if (b > 0) printf "%.3f", 2 * q * s * r * 8 / b / 1e9 }')
	CN[$t $q wall]=$(awk -v q="$q" -v s="$size" -v r="$rounds" -v a="${CN[$t $q setup]:-0}" \
		-v b="${CN[$t $q traffic]:-0}" 'BEGIN { if (a + b > 0) printf "%.3f", 2 * q * s * r * 8 / (a + b) / 1e9 }')
	[ $rc -eq 0 ] || CN[$t $q gbps]="n/a (exit $rc)"
	note "conns: $t $q QPs x $rounds rounds of $size B: setup ${CN[$t $q setup]:-?} s," \
		"traffic ${CN[$t $q traffic]:-?} s, ${CN[$t $q gbps]:-?} Gb/s, ${CN[$t $q mem]:-?} KiB/QP (exit $rc)"
	[ $rc -eq 0 ] || fail_diag "$out"
}
conns() {
	local q t
	for q in ${BENCH_CONNS_QPS:-1 16 256 4000}; do
		for t in metaroce rxe; do conns_run "$t" "$q"; done
	done
	{
		echo "Many connections, loss-free: mr_many, N RC QPs between the two devices, every QP sending"
		echo "verified messages both ways at once, about 64 MiB each way (64 KiB messages; 16 KiB at"
		echo "4,000 QPs). Gb/s over the traffic's time (and over setup + traffic); setup: create, connect"
		echo "and move to RTS both ends of every QP, 2 threads; memory: the kernel's slab + vmalloc per"
		echo "QP end, idle after the traffic (queues, CQ share and MR included). One run per point."
		echo
		echo "| QPs | metaroce Gb/s | rxe Gb/s | metaroce / rxe | with setup: metaroce / rxe | setup s metaroce | setup s rxe | KiB/QP metaroce | KiB/QP rxe |"
		echo "|---|---|---|---|---|---|---|---|---|"
		for q in ${BENCH_CONNS_QPS:-1 16 256 4000}; do
			echo "| $q | ${CN[metaroce $q gbps]:-n/a} (${CN[metaroce $q wall]:-n/a}) |" \
				"${CN[rxe $q gbps]:-n/a} (${CN[rxe $q wall]:-n/a}) |" \
				"$(ratio "${CN[metaroce $q gbps]:-}" "${CN[rxe $q gbps]:-}") |" \
				"$(ratio "${CN[metaroce $q wall]:-}" "${CN[rxe $q wall]:-}") |" \
				"${CN[metaroce $q setup]:-n/a} | ${CN[rxe $q setup]:-n/a} |" \
				"${CN[metaroce $q mem]:-n/a} | ${CN[rxe $q mem]:-n/a} |"
		done
	} >"$CONNS_TABLES"
}
# --- one QP of 64 streams against 64 QPs and against one stream: the same
# 2,000 writes of 16 KiB with immediate, at most 128 in flight, loss-free
# and at 1 % loss both ways (BENCH_STREAMS=0 leaves it out, "only" runs
# nothing else). One run per point.
STREAMS_TABLES=/tmp/bench-streams.md
declare -A ST
streams_bench() {
	local loss how out
	for loss in 0 1; do
		if [ "$loss" = 0 ]; then topo_netem_clear both; else topo_netem both loss 1%; fi
		for how in 64 64q 1; do
			out=$(timeout 300 /usr/local/bin/mr_streams "${DEV_A[metaroce]}" "${DEV_B[metaroce]}" \
				"$how" 2000 16384 2>&1) || fail_diag "$out"
			ST[$loss $how]=$(grep -m1 -E -o '(streams|qps) [0-9]*: overtakes.*' <<<"$out")
			note "streams: loss $loss%, $how: ${ST[$loss $how]:-failed}"
		done
	done
	topo_netem_clear both
	{
		echo "Streams: mr_streams, 2,000 RDMA writes of 16 KiB with immediate in 64 flows (message i in"
		echo "flow i % 64), at most 128 in flight: one QP of 64 streams, 64 QPs of one stream, one QP"
		echo "of one stream. Gb/s of the whole; completion delay, post to completion at the receiver;"
		echo "overtakes: completions while an earlier message was incomplete. One run per point."
		echo
		echo "| loss | carried by | Gb/s | delay p50 ms | delay p99 ms | overtakes |"
		echo "|---|---|---|---|---|---|"
		for loss in 0 1; do
			for how in 64 64q 1; do
				awk -v loss="$loss %" -v how="$how" -v l="${ST[$loss $how]:-}" 'BEGIN {
					name = how == "64" ? "1 QP x 64 streams" : how == "64q" ? "64 QPs" : "1 QP x 1 stream"
					n = split(l, w, " ")
					for (i = 1; i < n; i++) v[w[i]] = w[i + 1]
					if (l == "") { printf "| %s | %s | n/a | n/a | n/a | n/a |\n", loss, name; exit }
					printf "| %s | %s | %s | %.1f | %.1f | %s |\n", loss, name, v["gbps"],
						v["delay_p50_us"] / 1000, v["delay_p99_us"] / 1000, v["overtakes"] }'
			done
		done
	} >"$STREAMS_TABLES"
}
if [ "${BENCH_STREAMS:-1}" = only ]; then
	streams_bench
	echo "#@ table"
	cat "$STREAMS_TABLES"
	echo "#@ end table"
	exit 0
fi
[ "${BENCH_STREAMS:-1}" = 0 ] || streams_bench

if [ "${BENCH_CONNS:-1}" = only ]; then
	conns
	echo "#@ table"
	cat "$CONNS_TABLES"
	echo "#@ end table"
	exit 0
fi
[ "${BENCH_CONNS:-1}" = 0 ] || conns

if [ "${BENCH_FASTPATH:-1}" = only ]; then
	fastpath
	echo "#@ table"
	cat "$FASTPATH_TABLES"
	echo "#@ end table"
	exit 0
fi
[ "${BENCH_FASTPATH:-1}" = 0 ] || fastpath

set_loss() {
	if [ "$1" = 0 ]; then topo_netem_clear both; else topo_netem both loss "$1%"; fi
}

# --- metaroce must really cross the veth (else the loss would not touch it)
tx0=$(veth_tx "$TOPO_A_IF") mtx0=$(mr_stat mrc_a tx_packets)
out=$(SECS=2 perf metaroce ib_write_bw -s "$BW_SIZE" -n 100 -F) || die "a short metaroce ib_write_bw failed:
$out"
mtx=$(($(mr_stat mrc_a tx_packets) - mtx0)) vtx=$(($(veth_tx "$TOPO_A_IF") - tx0))
note "check: mrc_a sent $mtx packets, $TOPO_A_IF transmitted $vtx"
[ "$mtx" -gt 0 ] && [ "$vtx" -ge "$mtx" ] ||
	die "metaroce traffic does not cross $TOPO_A_IF (mrc_a tx_packets +$mtx, $TOPO_A_IF tx_packets +$vtx)"

# --- warm-up, not counted: the first runs after boot are up to a third
# slower (TCG translates the code paths afresh)
for op in "${BW_OPS[@]}"; do
	for t in "${TRANSPORTS[@]}"; do
		out=$(SECS=4 perf "$t" "ib_${op}_bw" -s "$BW_SIZE" -D 4 -F) || note "warm-up $t $op failed"
	done
done

# --- REPS rounds. In each, every op runs at every loss level back to back,
# transports interleaved, so that the runs a ratio compares are close in
# time: the host's load drifts over minutes.
start=$(date +%s)
ops=("${BW_OPS[@]}")
[ $TCP = 0 ] || ops+=(tcp)
for ((rep = 1; rep <= REPS; rep++)); do
	for op in "${ops[@]}"; do
		for loss in "${LOSSES[@]}"; do
			set_loss "$loss" || die "netem loss $loss% on $TOPO_A_IF and $TOPO_B_IF"
			if [ "$op" = tcp ]; then
				tcp "$loss"
			else
				for t in "${TRANSPORTS[@]}"; do bw "$t" "$op" "$loss"; done
			fi
		done
	done
	note "round $rep of $REPS done after $(($(date +%s) - start)) s"
done
for loss in "${LOSSES[@]}"; do
	set_loss "$loss" || die "netem loss $loss% on $TOPO_A_IF and $TOPO_B_IF"
	for t in "${TRANSPORTS[@]}"; do lat "$t" "$loss"; done
done
set_loss 0
for key in "${!RUNS[@]}"; do
	# shellcheck disable=SC2086 # one word per run
	RESULT[$key]=$(median ${RUNS[$key]})
	note "median of ${key//:/ }%: ${RESULT[$key]} Gb/s (runs: ${RUNS[$key]})"
done

# --- NVMe over Fabrics, each transport alone on the veth
NVME_MIB=${BENCH_NVME_MIB:-256}
links_del() { # TRANSPORT: its two devices, if there
	local d
	for d in "${DEV_A[$1]}" "${DEV_B[$1]}"; do
		if mr_exists "$d"; then rdma link del "$d" || return; fi
	done
}
links_add() {
	case $1 in
	metaroce) mr_add - mrc_a "$TOPO_A_IF" && mr_add - mrc_b "$TOPO_B_IF" ;;
	rxe) topo_rxe_add ;;
	esac
}
# nvme_run TRANSPORT: RESULT[TRANSPORT:nvme_write|nvme_read] in MB/s
nvme_run() {
	local t=$1 out dev rc=0
	RESULT[$t:nvme_write]="n/a (error)" RESULT[$t:nvme_read]="n/a (error)"
	if ! out=$(nvme_export "$TOPO_B_IP" 2>&1); then
		note "nvme over $t: export failed: $out"
	elif ! dev=$(nvme_connect "$TOPO_B_IP" "$TOPO_A_IP" 2>&1); then
		note "nvme over $t: $dev"
	else
		# not in $(...): nvme_throughput sets its results in this shell
		nvme_throughput "$dev" "$NVME_MIB" >/tmp/nvme.out 2>&1 || rc=$?
		note "nvme over $t: $(cat /tmp/nvme.out) (exit $rc)"
		[ $rc -eq 0 ] && RESULT[$t:nvme_write]=$NVME_WRITE_MBPS RESULT[$t:nvme_read]=$NVME_READ_MBPS
		nvme_disconnect
	fi
	nvme_unexport
}
if [ "$NVME_MIB" -gt 0 ] && [ ${#TRANSPORTS[@]} -gt 0 ]; then
	if out=$(nvme_setup 2>&1); then
		links_del metaroce && links_del rxe || die "rdma link del"
		for t in "${TRANSPORTS[@]}"; do
			links_add "$t" || die "rdma link add ($t)"
			nvme_run "$t"
			links_del "$t" || die "rdma link del ($t)"
		done
	else
		note "nvme setup failed: $out"
	fi
fi

# encrypt.sh makes the veth pair again: this one goes first.
for d in mrc_a mrc_b; do
	if mr_exists "$d"; then rdma link del "$d" || die "rdma link del $d"; fi
done
topo_teardown
if [ "${BENCH_ENCRYPT:-1}" != 0 ]; then
	bash "$here/encrypt.sh" "$ENCRYPT_TABLES" || note "encrypt.sh failed (exit $?)"
fi
if [ "${BENCH_INCAST:-1}" != 0 ]; then
	bash "$here/incast.sh" "$INCAST_TABLES" || note "incast.sh failed (exit $?)"
fi

# --- the table
# pratio KEY-A KEY-B: the median of the per-round ratios of two RUNS lists,
# and with several rounds their range: the host's noise shows in the table.
pratio() {
	local -a a b r=()
	local i m range
	read -ra a <<<"${RUNS[$1]}"
	read -ra b <<<"${RUNS[$2]}"
	for i in "${!a[@]}"; do
		r+=("$(ratio "${a[$i]}" "${b[$i]:-}")")
	done
	m=$(ratio "$(median "${r[@]}")" 1)
	range=$(sorted_nums "${r[@]}" |
		awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR > 1) printf " (%s–%s)", lo, hi }')
	[ "$m" = n/a ] || m+=$range
	echo "$m"
}
ref=${LOSSES[0]}
echo "#@ table"
echo "Bandwidth: ${BW_SIZE} B messages, 1 QP, perftest -D $SECS (iterations completed in its $(sample_secs "$SECS") s"
echo "sample window); TCP: one iperf3 stream for $SECS s, the same runs repeated in each op's rows."
echo "Gb/s: the median of $REPS rounds, after a warm-up (the console log lists each run). Ratios: the median"
echo "of the per-round ratios (their range in brackets); a round runs each op at every loss level back to back,"
echo "transports interleaved."
echo "netem loss on both veth ends. Ratios to ${ref}% loss, all from this run."
if [ ${#PIN_CLIENT[@]} -gt 0 ]; then
	echo "perftest pinned: server on CPU 1, client on CPU 0 (BENCH_PIN=1)."
else
	echo "perftest not pinned: the scheduler places server and client (BENCH_PIN=1 pins them)."
fi
echo
echo "| op | loss | metaroce Gb/s | ratio to ${ref}% | rxe Gb/s | ratio to ${ref}% | metaroce/rxe | TCP Gb/s | ratio to ${ref}% | metaroce/TCP |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for op in "${BW_OPS[@]}"; do
	for loss in "${LOSSES[@]}"; do
		m=${RESULT[metaroce:$op:$loss]} r=${RESULT[rxe:$op:$loss]} c=${RESULT[tcp:tcp:$loss]}
		echo "| $op | ${loss}% | $m | $(pratio "metaroce:$op:$loss" "metaroce:$op:$ref") | $r | $(pratio "rxe:$op:$loss" "rxe:$op:$ref") | $(pratio "metaroce:$op:$loss" "rxe:$op:$loss") | $c | $(pratio "tcp:tcp:$loss" "tcp:tcp:$ref") | $(pratio "metaroce:$op:$loss" "tcp:tcp:$loss") |"
	done
done
echo
echo "Latency: ib_write_lat, ${LAT_SIZE} B, ${LAT_ITERS} iterations, usec typical/average (perftest's rdtsc"
echo "timing; \"n/a (clock)\" where it printed inf/nan or more than the run's wall time)."
echo
echo "| loss | metaroce | rxe |"
echo "|---|---|---|"
for loss in "${LOSSES[@]}"; do
	echo "| ${loss}% | ${RESULT[metaroce:lat:$loss]} | ${RESULT[rxe:lat:$loss]} |"
done
if [ "$NVME_MIB" -gt 0 ]; then
	echo
	echo "NVMe over Fabrics (nvme-rdma to nvmet-rdma on a null_blk), ${NVME_MIB} MiB O_DIRECT dd, 1 MiB blocks, no loss, MB/s."
	echo
	echo "| direction | metaroce | rxe | metaroce/rxe |"
	echo "|---|---|---|---|"
	for d in write read; do
		m=${RESULT[metaroce:nvme_$d]} r=${RESULT[rxe:nvme_$d]}
		echo "| $d | $m | $r | $(ratio "$m" "$r") |"
	done
fi
if [ -s "$ENCRYPT_TABLES" ]; then
	echo
	cat "$ENCRYPT_TABLES"
fi
if [ -s "$INCAST_TABLES" ]; then
	echo
	cat "$INCAST_TABLES"
fi
if [ -s "$FASTPATH_TABLES" ]; then
	echo
	cat "$FASTPATH_TABLES"
fi
if [ -s "$CONNS_TABLES" ]; then
	echo
	cat "$CONNS_TABLES"
fi
if [ -s "$STREAMS_TABLES" ]; then
	echo
	cat "$STREAMS_TABLES"
fi
echo "#@ end table"
exit 0
