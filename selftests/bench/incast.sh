#!/bin/bash
# `make bench`, incast part (bench.sh runs it; BENCH_INCAST=0 leaves it out,
# BENCH_INCAST=only runs nothing else). Usage: incast.sh TABLES_FILE
#
# Eight senders WRITE into one receiver through a router port of 20 Mbit/s
# (what eight TCP streams fill in this guest: 0.88-0.93 of it, where at 30
# and 40 Mbit/s they reach 0.79 and 0.69, the guest's CPUs busy) with
# 64 KiB of buffer (26 ms), RED marking ECN, then tail drop; a probe host's
# 64-byte WRITEs cross the port meanwhile (lib/incast.sh, mr_incast). Side
# by side, per round: metaroce with congestion control off, on (the module
# parameter cc; "n/a" while there is none), and eight iperf3 TCP streams.
# Then ECMP: one QP (and one TCP stream) over four equal-cost 10 Mbit/s
# links, and the QP again with one link black-holed mid-transfer; last, the
# eighth sender joining for 4 s in the middle of 12 (incast_join_ms,
# incast_leave_ms); then planes: one QP and 8 QPs over 1, 2, 4 and 8 planes
# of 10 Mbit/s (lib/topology.sh topo_planes), one TCP stream per plane
# beside them, and the time one QP over 4 planes takes to be back at 0.85
# of 3 planes after a plane's netdev goes down and after a plane is
# black-holed. BENCH_INCAST_REPS rounds (3), 10 s a run: about 9 minutes
# a round.
#
# BENCH_INCAST_SHAPE="SENDERS RATE RED_LIMIT TAIL_LIMIT" runs another
# incast (e.g. "4 60mbit 320kb 96kb", the scale model's --guest; RED marks
# from limit/16 to limit/6); BENCH_INCAST_INGRESS=default leaves the
# receiver's ingress_mbps at the module's default (its netdev's speed);
# BENCH_INCAST_PARTS (default "incast ecmp join planes") picks the parts.
#
# Writes the Markdown tables to TABLES_FILE; prints one note per run and,
# between "#@ csv NAME" and "#@ end csv", per-sender goodput per 250 ms
# ("time_s,s1,...,s8", Mbit/s) of the first round's runs, which
# selftests/run saves as build/bench/<table>-NAME.csv; the block "incast"
# (metaroce under RED, CC on where there is a cc parameter) holds each
# sender's share of the total instead, for host/plot-bench.sh. Not a test:
# numbers never fail it.
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
. "$here/../lib/incast.sh"
[ -r /selftests/run.conf ] && . /selftests/run.conf
tables=${1:?usage: incast.sh TABLES_FILE}
trap incast_teardown EXIT

N=8
RATE=20mbit LIMIT=64kb
read -r shape_n shape_rate shape_red shape_tail <<<"${BENCH_INCAST_SHAPE:-}"
N=${shape_n:-$N} RATE=${shape_rate:-$RATE}
declare -A AQM_LIMIT=([red]=${shape_red:-$LIMIT} [taildrop]=${shape_tail:-$LIMIT})
PARTS=" ${BENCH_INCAST_PARTS:-incast ecmp join planes} "
# ingress_mbps for the incast runs: the port's rate, or the default (0)
ingress() { [ "${BENCH_INCAST_INGRESS:-port}" = default ] && echo 0 || incast_mbps "$RATE"; }
SECS=10
REPS=${BENCH_INCAST_REPS:-3}
LINKS=4 LINK_RATE=10mbit LINK_LIMIT=32kb
AQMS=(red taildrop)
TRANSPORTS=(off on tcp)
INCAST_BIN_MS=250
INCAST_DRAIN=30
declare -A R # "case:transport:metric" -> values of the rounds, space-separated

note() { printf '# incast: %s\n' "$*"; }

incast_setup $N >/tmp/incast-setup.out 2>&1 || { note "setup failed: $(cat /tmp/incast-setup.out)"; exit 1; }
incast_ecmp_setup $LINKS >/tmp/incast-setup.out 2>&1 || { note "ECMP setup failed: $(cat /tmp/incast-setup.out)"; exit 1; }
if [[ $PARTS == *" planes "* ]]; then
	incast_planes_setup 8 >/tmp/incast-setup.out 2>&1 || { note "planes setup failed: $(cat /tmp/incast-setup.out)"; exit 1; }
fi
PLANE_SIZES=(1 2 4 8) PLANE_RATE=10mbit PLANE_LIMIT=32kb
CC0=$(incast_cc)
note "cc parameter: $CC0; port $RATE, buffer ${AQM_LIMIT[red]} (RED) ${AQM_LIMIT[taildrop]} (tail drop), $N senders, ingress_mbps $(ingress); ECMP $LINKS x $LINK_RATE; parts:$PARTS"

# keep CASE TRANSPORT METRIC...: append this run's INC values
keep() {
	local c=$1 t=$2 m v
	shift 2
	for m in "$@"; do
		v=${INC[$m]:-n/a}
		R[$c:$t:$m]+="${R[$c:$t:$m]:+ }${v// /_}"
	done
}

# csv NAME [share]: the run's bins for the host to save (first round only),
# a column per sender: Mbit/s, or with "share" each one's share of the
# bin's total (host/plot-bench.sh draws the block called incast)
csv() {
	[ "$rep" = 1 ] || return 0
	echo "#@ csv $1"
	awk -F, -v share="${2:-}" '
		{ v[$1, $2] = $3; if ($2 > n) n = $2; if (!($1 in seen)) { seen[$1] = 1; ts[++nt] = $1 } }
		END {
			h = "time_s"; for (s = 1; s <= n; s++) h = h ",s" s; print h
			for (i = 1; i <= nt; i++) {
				t = ts[i]; tot = 0
				for (s = 1; s <= n; s++) tot += v[t, s]
				l = sprintf("%.3f", t / 1000)
				for (s = 1; s <= n; s++)
					l = l "," (share ? (tot > 0 ? sprintf("%.3f", v[t, s] / tot) : "0") : v[t, s] + 0)
				print l
			}
		}' <<<"${INC[csv]}"
	echo "#@ end csv"
}

# planes_use N: pl_a and pl_b with planes p0..p<N-1> of the 8
planes_use() {
	local k h dev
	for h in 1 2; do
		dev=pl_$([ $h = 1 ] && echo a || echo b)
		for ((k = 0; k < 8; k++)); do
			if ((k < $1)); then
				in_planes "h$h" "$MR_CLI" plane add dev "$dev" netdev "p$k"
			else
				in_planes "h$h" "$MR_CLI" plane del dev "$dev" netdev "p$k"
			fi
		done
	done >/dev/null 2>&1
}

# with_cc on|off CMD...: CMD with the transport's cc switched, or skipped
# (INC[rc]=skip) when the module has no such parameter.
with_cc() {
	local want=$1
	shift
	if [ "$CC0" = n/a ]; then
		if [ "$want" = on ]; then INC=([rc]=skip); return 0; fi
	else
		incast_set_cc "$([ "$want" = on ] && echo 1 || echo 0)" || { INC=([rc]=skip); return 0; }
	fi
	"$@"
}
# The receiver's ingress capacity for the rate hints (incast_set_ingress):
# the incast port's rate, 0 (the netdev's speed) for ECMP, whose
# bottleneck is the fabric.

run_note() { # LABEL
	note "$1: goodput ${INC[goodput]:-n/a} Mbit/s (${INC[util]:-n/a}), drop ${INC[drop]:-n/a}, marks ${INC[marked]:-n/a}, Jain ${INC[jain]:-n/a}, probe p50/p99 ${INC[p50]:-n/a}/${INC[p99]:-n/a} us, verified ${INC[verified]:-n/a}, errors ${INC[errors]:-n/a}, stalled ${INC[stalled]:-n/a}, drain ${INC[drain_ms]:-n/a} ms, per sender ${INC[goodputs]:-n/a}, ${INC[secs]:-?} s, exit ${INC[rc]:-?}"
}

start=$(date +%s)
for ((rep = 1; rep <= REPS; rep++)); do
	incast_set_ingress "$(ingress)"
	for aqm in "${AQMS[@]}"; do
		[[ $PARTS == *" incast "* ]] || break
		for t in "${TRANSPORTS[@]}"; do
			if [ "$t" = tcp ]; then
				incast_tcp "$aqm" "$RATE" "${AQM_LIMIT[$aqm]}" "$SECS"
			else
				with_cc "$t" incast_run "$aqm" "$RATE" "${AQM_LIMIT[$aqm]}" "$SECS"
			fi
			[ "${INC[rc]}" = skip ] && continue
			run_note "round $rep, $aqm, $t"
			keep "$aqm" "$t" util drop marked sent jain p50 p99 verified errors stalled drain_ms
			csv "incast-$aqm-$t"
			# the plot: metaroce under RED, with CC when the module has it
			if [ "$aqm" = red ] && [ "$t" = "$([ "$CC0" = n/a ] && echo off || echo on)" ]; then
				csv incast share
			fi
		done
	done
	incast_set_ingress 0
	for t in "${TRANSPORTS[@]}"; do
		[[ $PARTS == *" ecmp "* ]] || break
		if [ "$t" = tcp ]; then
			incast_ecmp_tcp "$LINK_RATE" "$LINK_LIMIT" "$SECS"
		else
			with_cc "$t" incast_ecmp_run "$LINK_RATE" "$LINK_LIMIT" "$SECS"
		fi
		[ "${INC[rc]}" = skip ] && continue
		# the busiest link's share of the packets sent over the links
		INC[top]=$(tr ' ' '\n' <<<"${INC[links]}" | awk -F: '{ s += $2; if ($2 > m) m = $2 } END { if (s) printf "%.2f", m / s; else print "n/a" }')
		run_note "round $rep, ECMP, $t (links $LINKS x $LINK_RATE, link:packets:dropped ${INC[links]})"
		keep ecmp "$t" util drop top
		[ "$t" = tcp ] && continue
		with_cc "$t" incast_ecmp_run "$LINK_RATE" "$LINK_LIMIT" "$SECS" 2 3
		run_note "round $rep, ECMP with link 2 black-holed after 3 s, $t"
		INC[complete]=$([ "${INC[rc]}" = 0 ] && echo yes || echo "no_(exit_${INC[rc]})")
		keep ecmp_bh "$t" util complete
	done
	incast_set_ingress "$(ingress)"
	for t in "${TRANSPORTS[@]}"; do
		[[ $PARTS == *" join "* ]] || break
		if [ "$t" = tcp ]; then
			incast_tcp red "$RATE" "${AQM_LIMIT[red]}" 12 "$N:4:8"
		else
			with_cc "$t" incast_run red "$RATE" "${AQM_LIMIT[red]}" 12 --active "$N:4:8"
		fi
		[ "${INC[rc]}" = skip ] && continue
		INC[join]=$(incast_join_ms $N $N "$(incast_mbps "$RATE")")
		INC[leave]=$(incast_leave_ms $N "$(seq -s, 1 $((N - 1)))" "$(incast_mbps "$RATE")")
		run_note "round $rep, join and leave, $t: joiner at half its share after ${INC[join]} ms, the others take its share up after ${INC[leave]} ms"
		keep join "$t" join leave
		csv "join-leave-$t"
	done
	for n in "${PLANE_SIZES[@]}"; do
		[[ $PARTS == *" planes "* ]] || break
		planes_use "$n"
		for t in on qp8 tcp; do
			case $t in
			on) incast_planes_run "$PLANE_RATE" "$PLANE_LIMIT" "$SECS" ;;
			qp8) INCAST_PLANES_QPS=8 incast_planes_run "$PLANE_RATE" "$PLANE_LIMIT" "$SECS" ;;
			tcp) incast_planes_tcp "$PLANE_RATE" "$PLANE_LIMIT" "$SECS" ;;
			esac
			run_note "round $rep, $n planes, $t (plane:packets:dropped ${INC[planes]:-n/a})"
			keep "planes$n" "$t" util
		done
	done
	for ev in carrier blackhole; do
		[[ $PARTS == *" planes "* ]] || break
		planes_use 4
		incast_planes_run "$PLANE_RATE" "$PLANE_LIMIT" "$SECS" "$ev" 1 3 6
		INC[reach]=$(incast_reach_ms 3000 "$(awk -v r="$(incast_mbps "$PLANE_RATE")" 'BEGIN { print 0.85 * 3 * r }')")
		INC[complete]=$([ "${INC[rc]}" = 0 ] && echo yes || echo "no_(exit_${INC[rc]})")
		run_note "round $rep, 4 planes, plane 1 $ev from 3 s to 6 s: at 0.85 of 3 planes after ${INC[reach]} ms"
		keep "plane_$ev" on reach complete util
		csv "planes-$ev"
	done
	note "round $rep of $REPS done after $(($(date +%s) - start)) s"
done
[ "$CC0" = n/a ] || incast_set_cc "$CC0"
incast_set_ingress 0

# cell CASE TRANSPORT METRIC [SCALE]: median of the rounds (their range when
# they differ), numbers scaled (e.g. 0.001: us -> ms); "n/a" without any
cell() {
	local v=${R[$1:$2:$3]:-} scale=${4:-1}
	if [ -z "$v" ]; then
		echo "n/a"
		return
	fi
	tr ' ' '\n' <<<"$v" | awk -v sc="$scale" '
		/^-?[0-9.]+$/ { x[++n] = $1 * sc; next } { other = $0 }
		END {
			if (!n) { gsub(/_/, " ", other); print other; exit }
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
			m = n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
			f = (m >= 100 || m == int(m)) ? "%.0f" : (m >= 10 ? "%.1f" : (m >= 1 ? "%.2f" : "%.3f"))
			s = sprintf(f, m)
			if (n > 1 && x[1] != x[n]) s = s " (" sprintf(f, x[1]) "–" sprintf(f, x[n]) ")"
			print s
		}'
}
row() { # LABEL CASE METRIC [SCALE]
	echo "| $1 | $(cell "$2" off "$3" "${4:-}") | $(cell "$2" on "$3" "${4:-}") | $(cell "$2" tcp "$3" "${4:-}") |"
}
cc_note="CC on: the module parameter cc=1, the receiver's ingress_mbps $([ "$(ingress)" = 0 ] && echo "at its default (the netdev's speed)" || echo "the port's rate") (incast, join/leave)"
[ "$CC0" = n/a ] && cc_note="CC on: n/a, metaroce.ko has no cc parameter yet"
{
	echo "Incast: $N senders -> 1 receiver through a router port of $RATE (tbf, ${AQM_LIMIT[red]} buffer under RED, ${AQM_LIMIT[taildrop]} under tail drop), $SECS s per run"
	echo "(1 s warm-up), $REPS rounds: the median, the range in brackets. metaroce: mr_incast, RC WRITE of 64 KiB,"
	echo "8 in flight per sender, every byte checked; TCP: one iperf3 stream per sender (ECN negotiated under RED)."
	echo "Probe: 64-byte RC WRITEs from a ninth host every 20 ms, one at a time, post to completion. $cc_note."
	for aqm in "${AQMS[@]}"; do
		echo
		echo "| ${aqm/red/RED with ECN marking} | metaroce, CC off | metaroce, CC on | TCP |"
		echo "|---|---|---|---|"
		row "goodput / port" "$aqm" util
		row "dropped at the port (fraction of packets)" "$aqm" drop
		row "CE-marked at the port (packets)" "$aqm" marked
		row "Jain's fairness" "$aqm" jain
		row "probe p50 (ms)" "$aqm" p50 0.001
		row "probe p99 (ms)" "$aqm" p99 0.001
		row "messages verified" "$aqm" verified
		row "wrong bytes or failed completions" "$aqm" errors
		row "senders unfinished 30 s after the end" "$aqm" stalled
		row "longest drain after the end (ms)" "$aqm" drain_ms
	done
	if [[ $PARTS == *" ecmp "* ]]; then
		echo
		echo "ECMP: one QP (TCP: one stream) over $LINKS equal-cost links of $LINK_RATE (tbf, $LINK_LIMIT each),"
		echo "net.ipv4.fib_multipath_hash_policy=1; black hole: link 2 drops everything from 3 s on."
		echo
		echo "| ECMP | metaroce, CC off | metaroce, CC on | TCP |"
		echo "|---|---|---|---|"
		row "goodput / the links' sum" ecmp util
		row "busiest link's share of the packets" ecmp top
		row "dropped (fraction of packets)" ecmp drop
		row "black hole: goodput / the links' sum" ecmp_bh util
		row "black hole: transfer complete and verified" ecmp_bh complete
	fi
	if [[ $PARTS == *" planes "* ]]; then
		echo
		echo "Planes: two hosts, one address each on a dummy interface, joined by N planes (a router each, tbf"
		echo "$PLANE_RATE with $PLANE_LIMIT both ways); goodput over N x $PLANE_RATE. metaroce: mr_incast WRITEs from pl_a to"
		echo "pl_b, whose planes are the N netdevs; TCP: one iperf3 stream per plane, bound to its netdev."
		echo
		echo "| planes | metaroce, 1 QP | metaroce, 8 QPs | TCP, a stream per plane |"
		echo "|---|---|---|---|"
		for n in "${PLANE_SIZES[@]}"; do
			echo "| $n | $(cell "planes$n" on util) | $(cell "planes$n" qp8 util) | $(cell "planes$n" tcp util) |"
		done
		echo
		echo "A plane fails: one QP over 4 planes, plane 1's netdev down (carrier) or its router dropping"
		echo "everything (black hole) from 3 s to 6 s of 10: ms from the failure until the goodput (500 ms averaged)"
		echo "is back at 0.85 of 3 planes."
		echo
		echo "| plane failure | back at 0.85 of 3 planes (ms) | goodput / 4 planes, whole run | transfer complete and verified |"
		echo "|---|---|---|---|"
		for ev in carrier blackhole; do
			echo "| $ev | $(cell "plane_$ev" on reach) | $(cell "plane_$ev" on util) | $(cell "plane_$ev" on complete) |"
		done
	fi
	if [[ $PARTS == *" join "* ]]; then
		echo
		echo "Joining and leaving: sender $N active for 4 s in the middle of 12 (RED), goodput per 250 ms. Join: ms"
		echo "from the newcomer's first goodput until it has half a fair share (1/$N of the port, 500 ms averaged);"
		echo "leave: ms from its last until the others move 0.9 of what the port moved the second before (n/a: that"
		echo "was under half the port)."
		echo
		echo "| join / leave | metaroce, CC off | metaroce, CC on | TCP |"
		echo "|---|---|---|---|"
		row "newcomer at half its share (ms)" join join
		row "its share taken up after it left (ms)" join leave
	fi
} >"$tables"
note "done after $(($(date +%s) - start)) s"
