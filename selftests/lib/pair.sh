# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# perftest between the two ends of topo_rxe_pair (both in init_net), for
# bench.sh and demo.sh. The caller sets DEV_A, DEV_B, GID_A, GID_B
# (associative, by transport: metaroce, rxe) and SECS; PIN_SERVER and
# PIN_CLIENT may hold a command prefix (taskset). Then the numbers the
# benches print: num, sorted_nums, median, ratio, perf_gbps.

# perf TRANSPORT TOOL ARGS...: server on side b, client on side a (under
# PIN_SERVER and PIN_CLIENT), exchanging QP data over localhost TCP so
# only RDMA traffic uses the veth. Prints both outputs; fails if either side
# fails or times out.
port=18515
PIN_SERVER=() PIN_CLIENT=()
perf() {
	local t=$1 tool=$2 srv rc=0 src=0 spid limit
	shift 2
	limit=$((SECS + 40))
	port=$((port + 1))
	srv=$(mktemp)
	"${PIN_SERVER[@]}" timeout "$limit" "$tool" -d "${DEV_B[$t]}" -x "${GID_B[$t]}" -p "$port" "$@" >"$srv" 2>&1 &
	spid=$!
	if ! topo_wait_listen a "$port"; then
		echo "server did not listen on port $port"
		rc=1
	else
		"${PIN_CLIENT[@]}" timeout "$limit" "$tool" -d "${DEV_A[$t]}" -x "${GID_A[$t]}" -p "$port" "$@" 127.0.0.1 2>&1 || rc=$?
	fi
	# A client that gave up leaves the server waiting: give it a moment.
	[ $rc -eq 0 ] || { sleep 2; kill "$spid" 2>/dev/null; }
	wait "$spid" || src=$?
	echo "--- server (exit $src)"
	cat "$srv"
	rm -f "$srv"
	[ $rc -eq 0 ] && [ $src -eq 0 ]
}

# perftest's -D mode counts the iterations completed in a sample window of
# D - 2 * (D / 4) seconds timed by alarm(); its own Gb/s divides by rdtsc
# cycles, which under TCG often print 0.000000. So the rate is computed here
# from the iterations and the window.
sample_secs() { echo $(($1 - 2 * ($1 / 4))); }


# perf_gbps OUTPUT SIZE SECS: Gb/s of a -D SECS bandwidth run of SIZE-byte
# messages from perf's OUTPUT ("#bytes #iterations BW-peak BW-average
# MsgRate", the client's line first); nothing if there is no result line.
perf_gbps() {
	local iters
	iters=$(awk -v s="$2" '$1 == s && NF >= 5 { print $2; exit }' <<<"$1")
	[ -n "$iters" ] && awk -v n="$iters" -v s="$2" -v w="$(sample_secs "$3")" \
		'BEGIN { printf "%.4f", n * s * 8 / w / 1e9 }'
}

num() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]]; }

# sorted_nums VALUES...: the numeric ones, one per line, ascending
sorted_nums() { printf '%s\n' "$@" | grep -E '^[0-9]+(\.[0-9]+)?$' | sort -g; }

# median RUNS...: of the numeric ones, "n/a (error)" if none is
median() {
	sorted_nums "$@" |
		awk '{ v[NR] = $1 }
			END {
				if (!NR) { print "n/a (error)"; exit }
				if (NR % 2) printf "%.4f\n", v[(NR + 1) / 2]
				else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2
			}'
}

ratio() { # A B: A/B with two decimals, n/a unless both are numbers and B > 0
	if num "$1" && num "$2" && awk -v b="$2" 'BEGIN { exit !(b > 0) }'; then
		awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'
	else
		echo n/a
	fi
}
