# Incast and ECMP measurements for guest-side scripts (bash): metaroce with
# mr_incast (userspace/tests/guest/mr_incast.cpp: every byte checked, a
# latency probe beside the senders) and TCP with iperf3, through the
# topologies of topology.sh (topo_incast, topo_ecmp). Source after ktap.sh,
# topology.sh and metaroce.sh.
#
#   incast_setup N [MTU]      topo_incast N, then metaroce devices inc_s1..inc_sN
#                             (senders), inc_p (probe host) and inc_rcv
#   incast_ecmp_setup [L=4]   topo_ecmp L, then ecmp_s and ecmp_rcv
#   incast_planes_setup N     topo_planes N, then pl_a (host 1) and pl_b
#                             (host 2) on their dummy0, each with its N veths
#                             as planes (metaroce plane add)
#   incast_teardown           both topologies removed
#   incast_cc                 the transport's congestion control switch
#                             (/sys/module/metaroce/parameters/cc): 0, 1, or
#                             n/a while the module has no such parameter
#   incast_set_cc 0|1         set it; fails (status 1) when it is n/a
#   incast_set_ingress MBPS   the receivers' ingress capacity for the rate
#                             hints (ingress_mbps; 0: the netdev's speed)
#   incast_mbps RATE          a tc rate (100mbit, 2gbit, 500kbit) in Mbit/s
#   incast_jain X...          Jain's fairness index of the numbers (3 decimals)
#
# Runs. Each sets the associative array INC (unset keys: not measured):
#   goodput  Mbit/s, summed over the senders, from the warm-up (1 s) to the
#            end, on the run's clock (mr_incast: messages completed; TCP:
#            bytes the receiver's sockets got, sampled with ss every half bin)
#   util     goodput / port rate (ECMP: / the links' sum)
#   jain     Jain's index over the senders' goodputs
#   sent dropped marked   packets the bottleneck passed, dropped and CE-marked
#   drop     dropped / (sent + dropped)
#   p50 p99 max  probe latency in us; probes: samples; probe_pending: 1 if
#            the last probe never completed (probe_pending_ms: for how long)
#   verified messages completed and checked; errors: wrong bytes or failed
#            completions; stalled: senders with messages still missing after
#            the drain time; max_gap_ms: the longest wait for a completion of
#            any sender; drain_ms: the longest a sender needed after its end
#   rc       mr_incast's exit status (0 good, 1 wrong data or failed WR,
#            3 stalled); secs: wall time of the run
#   csv      "t_ms,sender,mbps" lines of per-sender goodput per bin
#   out      mr_incast's (or iperf3's) output
#   incast_run AQM RATE LIMIT SECS [MR_INCAST ARGS...]
#                             the port made as topo_incast_port AQM RATE LIMIT,
#                             then mr_incast: every sender WRITEs into inc_rcv
#                             for SECS seconds (1 s warm-up), the probe beside
#                             them (extra args go to mr_incast, e.g. --op send,
#                             --active 8:5:10)
#   incast_probe_only SECS    the probe alone through the port as it is
#   incast_tcp AQM RATE LIMIT SECS [I:START:END]
#                             the same port, one iperf3 TCP stream per sender
#                             (ECN negotiated when AQM is not taildrop) and
#                             the probe beside them; the streams connect
#                             before the port becomes the bottleneck, and the
#                             run's clock starts then; sender I only from
#                             START to END seconds (like mr_incast --active)
#   incast_ecmp_run RATE LIMIT SECS [K AT]
#                             the links rate-limited (topo_ecmp_rate), one QP
#                             ecmp_s -> ecmp_rcv for SECS; with K AT, link K
#                             black-holed AT seconds in; also sets INC[links]
#                             "k:packets:dropped ..." per link
#   incast_ecmp_tcp RATE LIMIT SECS   one iperf3 stream over the same links
#   incast_planes_run RATE LIMIT SECS [carrier|blackhole K AT BACK]
#                             every plane rate-limited (topo_planes_rate),
#                             one QP (INCAST_PLANES_QPS QPs) pl_a -> pl_b
#                             for SECS; plane K fails AT
#                             seconds in (its carrier, or a black hole) and
#                             comes back at BACK; INC[util] is over the sum
#                             of pl_a's INC[n] planes, INC[planes]
#                             "k:packets:dropped ..." per router
#   incast_planes_tcp RATE LIMIT SECS   one iperf3 stream per plane
#   incast_bins_mbps FROM_MS TO_MS   from INC[csv]: the mean goodput of the
#                             bins that start in [FROM_MS, TO_MS)
#   incast_reach_ms FROM_MS MBPS   ms from FROM_MS until the first bin whose
#                             goodput, averaged with the next, reaches MBPS;
#                             "never" if none does
#   incast_join_ms S N [PORT_MBPS]
#                             from INC[csv]: ms from the first bin in which
#                             sender S has goodput until its goodput (two
#                             bins averaged) reaches half of a fair share
#                             among N senders of PORT_MBPS (or, without it,
#                             of the bins' total); "never" if not before it
#                             leaves
#   incast_leave_ms S SENDERS [PORT_MBPS]
#                             ms from the first bin after S stops until the
#                             remaining SENDERS (a comma list) move, two bins
#                             averaged, 0.9 of what the port moved in the
#                             second before; "never" if they do not; "n/a"
#                             if that was less than half of PORT_MBPS
# The programs run with timeouts; a run that fails to start leaves INC[rc]
# non-zero and INC[out] with the reason.

INCAST_BIN=${INCAST_BIN:-/usr/local/bin/mr_incast}
MR_CLI=${MR_CLI:-/usr/local/bin/metaroce}
INCAST_N=0
INCAST_CC_PARAM=/sys/module/metaroce/parameters/cc
INCAST_INGRESS_PARAM=/sys/module/metaroce/parameters/ingress_mbps
declare -A INC

incast_setup() {
	local n=$1 i
	# ss -i reads the receiver's byte counts through tcp_diag
	modprobe -q tcp_diag
	topo_incast "$@" || return
	for ((i = 1; i <= n; i++)); do
		mr_add "inc-s$i" "inc_s$i" eth0 || return
	done
	mr_add inc-p inc_p eth0 && mr_add inc-rcv inc_rcv eth0 || return
	INCAST_N=$n
}

incast_ecmp_setup() {
	topo_ecmp "${1:-4}" || return
	mr_add ecmp-s ecmp_s eth0 && mr_add ecmp-rcv ecmp_rcv eth0
}

incast_teardown() {
	local d
	for d in /sys/class/infiniband/inc_* /sys/class/infiniband/ecmp_*; do
		[ -e "$d" ] && rdma link del "${d##*/}" 2>/dev/null
	done
	for d in /sys/class/infiniband/pl_*; do
		[ -e "$d" ] && rdma link del "${d##*/}" 2>/dev/null
	done
	topo_incast_teardown
	topo_ecmp_teardown
	topo_planes_teardown
}

incast_planes_setup() {
	local n=$1 k h
	topo_planes "$n" || return
	for h in 1 2; do
		mr_add "pl-h$h" "pl_$([ $h = 1 ] && echo a || echo b)" dummy0 || return
	done
	for ((k = 0; k < n; k++)); do
		in_planes h1 "$MR_CLI" plane add dev pl_a netdev "p$k" || return
		in_planes h2 "$MR_CLI" plane add dev pl_b netdev "p$k" || return
	done
}

incast_cc() {
	local v
	if [ -r "$INCAST_CC_PARAM" ] && read -r v <"$INCAST_CC_PARAM"; then echo "$v"; else echo n/a; fi
}

incast_set_cc() {
	[ -w "$INCAST_CC_PARAM" ] || return 1
	echo "$1" >"$INCAST_CC_PARAM"
}

# incast_set_ingress MBPS: the receivers' ingress capacity for the rate
# hints (0: the netdev's speed); a no-op where the module has no such knob.
incast_set_ingress() {
	[ ! -w "$INCAST_INGRESS_PARAM" ] || echo "$1" >"$INCAST_INGRESS_PARAM"
}

incast_mbps() {
	awk -v r="$1" 'BEGIN {
		n = r + 0; u = tolower(r); sub(/^[0-9.]+/, "", u)
		if (u == "gbit") n *= 1000; else if (u == "kbit") n /= 1000; else if (u == "bit") n /= 1e6
		else if (u != "mbit") { print "incast_mbps: unknown unit in " r > "/dev/stderr"; exit 1 }
		printf "%g\n", n }'
}

incast_jain() {
	printf '%s\n' "$@" | awk '{ s += $1; q += $1 * $1; n++ }
		END { if (n && q > 0) printf "%.3f\n", s * s / (n * q); else print "n/a" }'
}

_incast_now() { date +%s.%N; }
_incast_since() { awk -v a="$1" -v b="$(_incast_now)" 'BEGIN { printf "%.1f", b - a }'; }

# _incast_port_delta BEFORE AFTER: INC[sent dropped marked drop] from two
# topo_incast_port_stats lines (or sums of ECMP link lines).
_incast_port_delta() {
	read -r _ s0 _ d0 _ m0 _ <<<"$1"
	read -r _ s1 _ d1 _ m1 _ <<<"$2"
	INC[sent]=$((s1 - s0)) INC[dropped]=$((d1 - d0)) INC[marked]=$((m1 - m0))
	INC[drop]=$(awk -v s="${INC[sent]}" -v d="${INC[dropped]}" \
		'BEGIN { if (s + d > 0) printf "%.4f", d / (s + d); else print "0" }')
}

# _incast_parse RATE_MBPS: INC[...] from mr_incast's output in INC[out].
_incast_parse() {
	local rate=$1 k v
	while read -r k v; do INC[$k]=$v; done < <(awk -v rate="$rate" '
		$1 == "sender" { for (i = 4; i < NF; i += 2) f[$i] = $(i + 1)
			g[++n] = f["goodput_mbps"]; if (f["max_gap_ms"] > gap) gap = f["max_gap_ms"]
			if (f["drain_ms"] > drain) drain = f["drain_ms"]; if (f["drained"] != "yes") st++ }
		$1 == "probe" { for (i = 2; i < NF; i += 2) p[$i] = $(i + 1)
			print "p50", p["p50_us"]; print "p99", p["p99_us"]; print "max", p["max_us"]
			print "probes", p["samples"]; print "probe_pending", p["pending"]
			print "probe_pending_ms", p["pending_ms"]; perr = p["errors"] }
		$1 == "total" { for (i = 2; i < NF; i += 2) t[$i] = $(i + 1)
			print "goodput", t["goodput_mbps"]; print "jain", t["jain"]
			print "verified", t["verified"]; terr = t["errors"]
			if (rate > 0) printf "util %.3f\n", t["goodput_mbps"] / rate }
		END { if (n) { print "stalled", st + 0; print "max_gap_ms", gap + 0; print "drain_ms", drain + 0
				s = ""; for (i = 1; i <= n; i++) s = s (i > 1 ? " " : "") g[i]; print "goodputs", s }
			print "errors", (terr != "" ? terr : perr + 0) }' <<<"${INC[out]}")
	INC[csv]=$(awk '$1 == "bins" { next } $1 == "bin" { for (i = 3; i <= NF; i++) printf "%s,%d,%s\n", $2, i - 2, $i }' <<<"${INC[out]}")
}

incast_run() {
	local aqm=$1 rate=$2 limit=$3 secs=$4 before t0 senders='' i
	shift 4
	INC=()
	for ((i = 1; i <= INCAST_N; i++)); do senders+="${senders:+,}inc_s$i"; done
	topo_incast_port "$aqm" "$rate" "$limit" || { INC[rc]=2 INC[out]="topo_incast_port $aqm $rate $limit failed"; return 1; }
	before=$(topo_incast_port_stats) t0=$(_incast_now)
	INC[out]=$(timeout -k 5 $((secs + 200)) "$INCAST_BIN" --recv inc_rcv --send "$senders" \
		--probe inc_p --seconds "$secs" --warmup 1 --bin-ms "${INCAST_BIN_MS:-500}" \
		--drain "${INCAST_DRAIN:-60}" "$@" 2>&1)
	INC[rc]=$?
	INC[secs]=$(_incast_since "$t0")
	_incast_port_delta "$before" "$(topo_incast_port_stats)"
	_incast_parse "$(incast_mbps "$rate")"
	[ "${INC[rc]}" -ne 2 ]
}

incast_probe_only() {
	INC=()
	INC[out]=$(timeout -k 5 $(($1 + 60)) "$INCAST_BIN" --recv inc_rcv --probe inc_p \
		--seconds "$1" --warmup 0 --drain 30 2>&1)
	INC[rc]=$?
	_incast_parse 0
	[ "${INC[rc]}" -ne 2 ]
}

# _incast_iperf_goodputs OUT...: the receiver's Mbit/s of each iperf3 client
# output given, one per line ("n/a" where none)
_incast_iperf_mbps() {
	awk '/receiver/ { for (i = 2; i <= NF; i++) if ($i == "Mbits/sec") v = $(i - 1); else if ($i == "Kbits/sec") v = $(i - 1) / 1000; else if ($i == "Gbits/sec") v = $(i - 1) * 1000 }
		END { if (v != "") print v; else print "n/a" }' <<<"$1"
}

# _incast_tcp_sampler NETNS LO HI SECS_BETWEEN: in NETNS, forever, one line
# "TIME PEER BYTES" per TCP connection to local ports LO..HI: the bytes it
# received so far (tcp_info, through tcp_diag). One process in the netns, so
# a sample costs one ss.
_incast_tcp_sampler() {
	# shellcheck disable=SC2016 # the script expands in the netns
	ip netns exec "$1" bash -c '
		while :; do
			t=$EPOCHREALTIME
			ss -tinH state established "( sport >= :$1 and sport <= :$2 )" 2>/dev/null |
				awk -v t="$t" '\''/^[0-9]/ { p = $NF; sub(/^\[::ffff:/, "", p); sub(/\]?:[0-9]+$/, "", p); next }
					{ for (i = 1; i <= NF; i++) if ($i ~ /^bytes_received:/) { v = $i; sub(/.*:/, "", v); b[p] += v } }
					END { for (q in b) printf "%s %s %.0f\n", t, q, b[q] }'\''
			sleep "$3"
		done' _ "$2" "$3" "$4"
}

# _incast_tcp_flowing FILE N [EXCEPT]: the time of the first sample at which
# every sender 1..N but EXCEPT had received 64 KiB; fails while none is
_incast_tcp_flowing() {
	awk -v n="$2" -v x="${3:-0}" '{ split($2, ip, "."); s = ip[3] + 0
			if ($1 != t) { t = $1; }
			if ($3 >= 65536 && !(s in up)) { up[s] = 1; if (s != x) c++ }
			if (c == n - (x ? 1 : 0)) { print t; found = 1; exit } }
		END { exit !found }' "$1"
}

# _incast_tcp_rates FILE T0 SECS BIN_MS N: from the samples, on the clock
# that starts at T0 (epoch seconds): INC[csv] (per sender, Mbit/s per bin,
# spread over the bins by time) and INC[goodputs] (Mbit/s from 1 s to SECS,
# or over the part of it a sender was connected); sender i is peer
# 10.60.i.1. A count that falls is a new connection: it starts from 0.
_incast_tcp_rates() {
	local out
	out=$(awk -v t0="$2" -v secs="$3" -v bin="$4" -v n="$5" -v warm=1 '
		{ t = $1 - t0; split($2, ip, "."); s = ip[3] + 0; b = $3
			if (s in lt) {
				db = b >= lb[s] ? b - lb[s] : b
				dt = t - lt[s]
				for (k = int(lt[s] * 1000 / bin); k * bin / 1000 < t; k++) {
					lo = k * bin / 1000; hi = lo + bin / 1000
					if (lo < lt[s]) lo = lt[s]
					if (hi > t) hi = t
					if (dt > 0 && hi > lo && k >= 0) bytes[k, s] += db * (hi - lo) / dt
				}
				if (lt[s] >= warm && t <= secs + 0.01) { got[s] += db; span[s] += dt }
			}
			lt[s] = t; lb[s] = b }
		END {
			for (k = 0; (k + 1) * bin / 1000 <= secs + 1e-9; k++)
				for (s = 1; s <= n; s++) printf "csv %d,%d,%.3f\n", k * bin, s, bytes[k, s] * 8 / (bin / 1000) / 1e6
			g = ""
			for (s = 1; s <= n; s++)
				g = g (s > 1 ? " " : "") sprintf("%.3f", span[s] > 0 ? got[s] * 8 / span[s] / 1e6 : 0)
			print "goodputs " g
		}' "$1")
	INC[csv]=$(sed -n 's/^csv //p' <<<"$out")
	INC[goodputs]=$(sed -n 's/^goodputs //p' <<<"$out")
}

# TCP streams start over seconds in this guest (each client is a netns exec
# and a handshake): the run's clock starts once every stream flows, and the
# clients run long enough to cover it.
incast_tcp() {
	local aqm=$1 rate=$2 limit=$3 secs=$4 join=${5:-} i before='' pids=() spid t_all=
	local ecn=1 ji=0 js=0 je=0 samples=/tmp/incast-tcp.samples slack=8 k
	INC=()
	[ -z "$join" ] || IFS=: read -r ji js je <<<"$join"
	[ "$aqm" = taildrop ] && ecn=2
	# The streams connect through a port without a bottleneck: a SYN is
	# not ECN-capable, and RED drops it while ECN-capable traffic holds
	# its average above max (seen: streams 8 s late). The bottleneck comes
	# once every stream flows, and the clock starts then.
	topo_incast_port taildrop 10gbit "$limit" || { INC[rc]=2; return 1; }
	for ((i = 1; i <= INCAST_N; i++)); do
		in_incast "s$i" sysctl -qw "net.ipv4.tcp_ecn=$ecn"
		in_incast rcv timeout $((secs + slack + 40)) iperf3 -s -1 -B 10.62.0.1 -p $((5200 + i)) >/dev/null 2>&1 &
		pids+=($!)
	done
	for ((i = 1; i <= INCAST_N; i++)); do
		_incast_wait_listen inc-rcv $((5200 + i)) || { INC[rc]=2 INC[out]="iperf3 server $i did not listen"; topo_stop "${pids[@]}"; wait; return 1; }
	done
	: >"$samples"
	_incast_tcp_sampler inc-rcv 5201 $((5200 + INCAST_N)) 0.2 >>"$samples" &
	spid=$!
	for ((i = 1; i <= INCAST_N; i++)); do
		if [ "$i" = "$ji" ]; then
			{
				for ((k = 0; k < 10 * slack; k++)); do
					_incast_tcp_flowing "$samples" "$INCAST_N" "$ji" >/dev/null && break
					sleep 0.1
				done
				sleep "$js"
				in_incast "s$i" timeout $((secs + slack + 30)) iperf3 -c 10.62.0.1 -p $((5200 + i)) \
					-t $((je - js)) -f m >"/tmp/incast-tcp-$i.out" 2>&1
			} &
		else
			in_incast "s$i" timeout $((secs + slack + 30)) iperf3 -c 10.62.0.1 -p $((5200 + i)) \
				-t $((secs + slack)) -f m >"/tmp/incast-tcp-$i.out" 2>&1 &
		fi
		pids+=($!)
	done
	for ((i = 0; i < 10 * slack; i++)); do
		t_all=$(_incast_tcp_flowing "$samples" "$INCAST_N" "$ji") && break
		sleep 0.1
	done
	if [ -z "$t_all" ]; then
		INC[rc]=1 INC[out]="the $INCAST_N TCP streams did not all start within $slack s"
	elif ! topo_incast_port "$aqm" "$rate" "$limit"; then
		INC[rc]=2 INC[out]="topo_incast_port $aqm $rate $limit failed" t_all=''
	else
		before=$(topo_incast_port_stats) t_all=$EPOCHREALTIME
		INC[out]=$(timeout -k 5 $((secs + 60)) "$INCAST_BIN" --recv inc_rcv --probe inc_p \
			--seconds "$secs" --warmup 0 --drain 30 2>&1)
		INC[rc]=0
	fi
	wait "${pids[@]}"
	topo_stop "$spid"
	wait "$spid" 2>/dev/null
	[ -z "$before" ] || _incast_port_delta "$before" "$(topo_incast_port_stats)"
	[ "${INC[rc]}" = 0 ] && _incast_parse 0
	for ((i = 1; i <= INCAST_N; i++)); do
		if [ "$(_incast_iperf_mbps "$(cat "/tmp/incast-tcp-$i.out")")" = n/a ]; then
			INC[rc]=1
			INC[out]+=$'\n'"iperf3 $i: $(tail -3 "/tmp/incast-tcp-$i.out")"
		fi
		rm -f "/tmp/incast-tcp-$i.out"
	done
	INC[samples]=$(wc -l <"$samples")
	if [ -n "$t_all" ]; then
		_incast_tcp_rates "$samples" "$t_all" "$secs" "${INCAST_BIN_MS:-500}" "$INCAST_N"
		INC[secs]=$secs
		INC[goodput]=$(awk -v g="${INC[goodputs]}" 'BEGIN { n = split(g, a, " "); for (i = 1; i <= n; i++) s += a[i]; printf "%.3f", s }')
		INC[util]=$(awk -v g="${INC[goodput]}" -v r="$(incast_mbps "$rate")" 'BEGIN { printf "%.3f", g / r }')
		# shellcheck disable=SC2086 # one word per sender
		INC[jain]=$(incast_jain ${INC[goodputs]})
	fi
	[ -z "${INCAST_KEEP:-}" ] || cp "$samples" "$INCAST_KEEP"
	rm -f "$samples"
	unset 'INC[verified]' 'INC[stalled]'
	[ "${INC[rc]}" -eq 0 ]
}

# _incast_wait_listen NETNS PORT: wait up to 5 s for a TCP listener there
_incast_listening() { ip netns exec "$1" ss -Hltn "sport = :$2" | grep -q .; }
_incast_wait_listen() { topo_wait 5 _incast_listening "$1" "$2"; }

_incast_ecmp_stats() { # "sent S dropped D marked 0" summed over the links
	topo_ecmp_link_stats | awk '{ s += $3; d += $5 } END { printf "sent %d dropped %d marked 0 bytes 0\n", s, d }'
}

incast_ecmp_run() {
	local rate=$1 limit=$2 secs=$3 k=${4:-} at=${5:-} before t0 pid links_mbps
	INC=()
	topo_ecmp_rate "$rate" "$limit" || { INC[rc]=2; return 1; }
	before=$(_incast_ecmp_stats) t0=$(_incast_now)
	timeout -k 5 $((secs + 200)) "$INCAST_BIN" --recv ecmp_rcv --send ecmp_s --seconds "$secs" \
		--warmup 1 --bin-ms "${INCAST_BIN_MS:-500}" --drain "${INCAST_DRAIN:-60}" >/tmp/incast-ecmp.out 2>&1 &
	pid=$!
	if [ -n "$k" ]; then
		sleep "$at"
		INC[links]="before the black hole: $(topo_ecmp_link_stats | awk '{ printf "%s%d:%d:%d", (NR > 1 ? " " : ""), $1, $3, $5 }')"
		topo_ecmp_blackhole "$k"
	fi
	wait "$pid"
	INC[rc]=$?
	INC[secs]=$(_incast_since "$t0")
	INC[out]=$(cat /tmp/incast-ecmp.out)
	rm -f /tmp/incast-ecmp.out
	if [ -n "$k" ]; then
		INC[links]+="; link $k black-holed: $(topo_ecmp_link_stats | awk -v k="$k" '$1 == k { print $5 " dropped" }')"
		topo_ecmp_restore "$k"
	else
		INC[links]=$(topo_ecmp_link_stats | awk '{ printf "%s%d:%d:%d", (NR > 1 ? " " : ""), $1, $3, $5 }')
		_incast_port_delta "$before" "$(_incast_ecmp_stats)"
	fi
	links_mbps=$(awk -v r="$(incast_mbps "$rate")" -v n="$TOPO_ECMP_LINKS" 'BEGIN { print r * n }')
	_incast_parse "$links_mbps"
	[ "${INC[rc]}" -ne 2 ]
}

_incast_planes_links() { topo_planes_stats | awk '{ printf "%s%d:%d:%d", (NR > 1 ? " " : ""), $1, $3, $5 }'; }

incast_planes_run() {
	local rate=$1 limit=$2 secs=$3 event=${4:-} k=${5:-} at=${6:-} back=${7:-} t0 pid
	INC=()
	topo_planes_rate "$rate" "$limit" || { INC[rc]=2; return 1; }
	t0=$(_incast_now)
	timeout -k 5 $((secs + 200)) "$INCAST_BIN" --recv pl_b \
		--send "$(printf 'pl_a%.0s,' $(seq "${INCAST_PLANES_QPS:-1}") | sed 's/,$//')" --seconds "$secs" \
		--warmup 1 --bin-ms "${INCAST_BIN_MS:-500}" --drain "${INCAST_DRAIN:-60}" >/tmp/incast-planes.out 2>&1 &
	pid=$!
	if [ -n "$event" ]; then
		sleep "$at"
		if [ "$event" = carrier ]; then topo_plane_carrier "$k" off; else topo_plane_blackhole "$k"; fi
		sleep "$(awk -v a="$at" -v b="$back" 'BEGIN { print b - a }')"
		if [ "$event" = carrier ]; then topo_plane_carrier "$k" on; else topo_plane_restore "$k"; fi
	fi
	wait "$pid"
	INC[rc]=$?
	INC[secs]=$(_incast_since "$t0")
	INC[out]=$(cat /tmp/incast-planes.out)
	rm -f /tmp/incast-planes.out
	INC[planes]=$(_incast_planes_links)
	INC[n]=$(in_planes h1 "$MR_CLI" -j plane show dev pl_a | jq length)
	_incast_parse "$(awk -v r="$(incast_mbps "$rate")" -v n="${INC[n]}" 'BEGIN { print r * n }')"
	[ "${INC[rc]}" -ne 2 ]
}

# incast_planes_tcp RATE LIMIT SECS: one iperf3 stream per plane of pl_a,
# each bound to its plane's netdev
incast_planes_tcp() {
	local rate=$1 limit=$2 secs=$3 n k spid pids=() out=0 v
	INC=()
	topo_planes_rate "$rate" "$limit" || { INC[rc]=2; return 1; }
	n=$(in_planes h1 "$MR_CLI" -j plane show dev pl_a | jq length)
	for ((k = 0; k < n; k++)); do
		in_planes h2 timeout $((secs + 40)) iperf3 -s -1 -B 10.80.0.2 -p $((5301 + k)) >/dev/null 2>&1 &
		spid+=" $!"
	done
	for ((k = 0; k < n; k++)); do
		_incast_wait_listen pl-h2 $((5301 + k)) || { INC[rc]=2; topo_stop $spid; wait; return 1; }
	done
	for ((k = 0; k < n; k++)); do
		in_planes h1 timeout $((secs + 30)) iperf3 -c 10.80.0.2 -B 10.80.0.1 --bind-dev "p$k" \
			-p $((5301 + k)) -t "$secs" -f m >"/tmp/incast-plane-tcp-$k.out" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
	wait
	INC[rc]=0
	for ((k = 0; k < n; k++)); do
		v=$(_incast_iperf_mbps "$(cat "/tmp/incast-plane-tcp-$k.out")")
		[ "$v" = n/a ] && INC[rc]=1 || out=$(awk -v a="$out" -v b="$v" 'BEGIN { print a + b }')
		rm -f "/tmp/incast-plane-tcp-$k.out"
	done
	INC[goodput]=$out
	INC[util]=$(awk -v g="$out" -v r="$(incast_mbps "$rate")" -v n="$n" 'BEGIN { printf "%.3f", g / (r * n) }')
	[ "${INC[rc]}" -eq 0 ]
}

incast_bins_mbps() {
	awk -F, -v from="$1" -v to="$2" '$1 >= from && $1 < to { s[$1] += $3 }
		END { for (t in s) { sum += s[t]; n++ } if (n) printf "%.3f\n", sum / n; else print "n/a" }' <<<"${INC[csv]}"
}

incast_reach_ms() {
	awk -F, '{ s[$1] += $3 } END { for (t in s) print t, s[t] }' <<<"${INC[csv]}" | sort -n |
		awk -v from="$1" -v want="$2" '$1 >= from { t[++n] = $1; g[n] = $2 }
			END { for (i = 1; i < n; i++) if ((g[i] + g[i + 1]) / 2 >= want) { print t[i] - from; exit }
				print "never" }'
}

incast_ecmp_tcp() {
	local rate=$1 limit=$2 secs=$3 before t0 spid out
	INC=()
	topo_ecmp_rate "$rate" "$limit" || { INC[rc]=2; return 1; }
	in_ecmp rcv timeout $((secs + 40)) iperf3 -s -1 -B 10.72.0.1 -p 5201 >/dev/null 2>&1 &
	spid=$!
	_incast_wait_listen ecmp-rcv 5201 || { INC[rc]=2 INC[out]="iperf3 server did not listen"; topo_stop "$spid"; wait "$spid"; return 1; }
	before=$(_incast_ecmp_stats) t0=$(_incast_now)
	out=$(in_ecmp s timeout $((secs + 30)) iperf3 -c 10.72.0.1 -p 5201 -t "$secs" -f m 2>&1)
	INC[rc]=$?
	wait "$spid"
	INC[secs]=$(_incast_since "$t0")
	INC[out]=$out
	INC[links]=$(topo_ecmp_link_stats | awk '{ printf "%s%d:%d:%d", (NR > 1 ? " " : ""), $1, $3, $5 }')
	_incast_port_delta "$before" "$(_incast_ecmp_stats)"
	INC[goodput]=$(_incast_iperf_mbps "$out")
	INC[util]=$(awk -v g="${INC[goodput]}" -v r="$(incast_mbps "$rate")" -v n="$TOPO_ECMP_LINKS" \
		'BEGIN { if (g == "n/a") print "n/a"; else printf "%.3f", g / (r * n) }')
	[ "${INC[rc]}" -eq 0 ] && [ "${INC[goodput]}" != n/a ]
}

# _incast_bins: INC[csv] as lines "T V1 ... VN", in time order
_incast_bins() {
	awk -F, '{ v[$1, $2] = $3; if ($2 > n) n = $2; if (!($1 in seen)) { seen[$1] = 1; ts[++nt] = $1 } }
		END { for (i = 1; i <= nt; i++) { l = ts[i]; for (s = 1; s <= n; s++) l = l " " (v[ts[i], s] + 0); print l } }' <<<"${INC[csv]}"
}

incast_join_ms() {
	_incast_bins | awk -v s="$1" -v n="$2" -v port="${3:-0}" '
		{ t[++m] = $1; x[m] = $(s + 1); tot = 0; for (i = 2; i <= NF; i++) tot += $i; y[m] = tot }
		END {
			for (k = 1; k <= m && x[k] <= 0; k++) ;
			if (k > m) { print "never"; exit }
			for (j = k + 1; j <= m && x[j] > 0; j++)
				if ((x[j] + x[j - 1]) / 2 >= 0.5 * (port > 0 ? port : (y[j] + y[j - 1]) / 2) / n) { print t[j] - t[k]; exit }
			print "never"
		}'
}

incast_leave_ms() {
	_incast_bins | awk -v s="$1" -v list="$2" -v port="${3:-0}" '
		BEGIN { n = split(list, who, ",") }
		{ t[++m] = $1; x[m] = $(s + 1); tot = 0; for (j = 1; j <= n; j++) tot += $(who[j] + 1); y[m] = tot }
		END {
			for (k = 1; k <= m && x[k] <= 0; k++) ;
			for (; k <= m && x[k] > 0; k++) ;
			if (k > m) { print "never"; exit }
			# the port before the leave: the second before it, everyone
			c = 0; ref = 0
			for (b = k - 1; b >= 1 && t[b] >= t[k] - 1000; b--) { c++; ref += y[b] + x[b] }
			if (!c) { print "never"; exit }
			ref /= c
			if (ref < port / 2) { print "n/a"; exit }
			for (j = k + 1; j <= m; j++)
				if ((y[j] + y[j - 1]) / 2 >= 0.9 * ref) { print t[j] - t[k]; exit }
			print "never"
		}'
}
