# Helpers for tests that run a verbs tool pair (server in h2, client in h1)
# over the two-host topology (bash). Source after ktap.sh, topology.sh and
# metaroce.sh (mr_stat).
#
#   mr_stats_diag          both devices' counters as KTAP diagnostics
#   run_pair LIMIT SERVER-CMD... -- CLIENT-CMD...
#                          server in h2, client in h1; both must exit 0 within
#                          LIMIT seconds; combined output in $pair_out. The
#                          client starts once the server listens on
#                          $PAIR_PORT (18515) as $PAIR_WAIT END PORT says
#                          (topo_wait_listen: TCP; cm_wait_listen: rdma_cm)
#   cm_wait_listen END PORT  wait up to 5 s for an rdma_cm listener on PORT
#                          (`rdma resource show cm_id`; END is unused: the
#                          RDMA netns mode is shared)
#   pp_case TOOL DESC SIZE ITERS [ARGS...]
#                          one run of an ibv_*_pingpong TOOL as a KTAP case
#                          (ITERS scaled); its rate and the retransmits/RTOs
#                          it cost go to diagnostics. Needs $gid1 and $gid2.
#   perf_case TOOL SIZE ITERS [ARGS...]
#                          one perftest run as a KTAP case: both sides must
#                          exit 0 and print their result line; the line and
#                          the retransmits/RTOs it cost go to diagnostics.
#                          Needs $gid1 and $gid2 (GID indexes of mrc0/mrc1).

mr_stats_diag() {
	ktap_diag "$(rdma statistic show link mrc0/1)"
	ktap_diag "$(rdma statistic show link mrc1/1)"
}

pair_out=
run_pair() {
	local limit=$1 port=${PAIR_PORT:-18515} srv=() cli=() spid rc=0 src=0 tmp
	shift
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	tmp=$(mktemp)
	in_h2 timeout "$limit" "${srv[@]}" >"$tmp" 2>&1 &
	spid=$!
	if ! "${PAIR_WAIT:-topo_wait_listen}" h2 "$port"; then
		echo "server did not listen on $port"
		topo_stop "$spid"
		wait "$spid"
		cat "$tmp"
		rm -f "$tmp"
		return 1
	fi
	pair_out=$(in_h1 timeout "$limit" "${cli[@]}" 2>&1) || rc=$?
	wait "$spid" || src=$?
	pair_out+=$'\n--- server ---\n'$(cat "$tmp")
	rm -f "$tmp"
	echo "$pair_out"
	[ "$rc" -eq 0 ] && [ "$src" -eq 0 ]
}

_cm_listening() { rdma resource show cm_id 2>/dev/null | grep -E "state LISTEN .*(:|port )$1( |\$)" | grep -q .; }
cm_wait_listen() { topo_wait 5 _cm_listening "$2"; }

pp_case() {
	local tool=$1 desc=$2 size=$3 iters rc=0 re rto
	iters=$(scaled "$4")
	shift 4
	re=$(mr_sum retransmits) rto=$(mr_sum rto_events)
	KTAP_LAST_OUTPUT=$(run_pair 60 \
		"$tool" -d mrc1 -g "$gid2" -s "$size" -n "$iters" "$@" -- \
		"$tool" -d mrc0 -g "$gid1" -s "$size" -n "$iters" "$@" \
		"$TOPO_H2_IP") || rc=$?
	if [ "$rc" -eq 0 ]; then
		ktap_diag "$desc: $(grep -E 'Mbit/sec|usec/iter' <<<"$KTAP_LAST_OUTPUT" | head -2 | tr '\n' ' ')"
		ktap_diag "  retransmits +$(($(mr_sum retransmits) - re)), rto_events +$(($(mr_sum rto_events) - rto))"
		ktap_ok "$desc"
	else
		ktap_fail "$desc" "exit status $rc" "${KTAP_LAST_OUTPUT:0:3000}"
		mr_stats_diag
	fi
}

# perftest prints "#bytes #iterations ..." then one line per size; -F: a
# guest's CPU clock is too noisy for its frequency check.
perf_case() {
	local tool=$1 size=$2 iters=$3 rc=0 line re rto desc
	shift 3
	desc="$tool -s $size -n $iters${*:+ $*}"
	re=$(mr_sum retransmits) rto=$(mr_sum rto_events)
	KTAP_LAST_OUTPUT=$(run_pair 120 \
		"$tool" -d mrc1 -x "$gid2" -F -n "$iters" -s "$size" "$@" -- \
		"$tool" -d mrc0 -x "$gid1" -F -n "$iters" -s "$size" "$@" "$TOPO_H2_IP") || rc=$?
	line=$(grep -E "^ *$size +$iters " <<<"$KTAP_LAST_OUTPUT" | head -1)
	if [ "$rc" -eq 0 ] && [ -n "$line" ]; then
		ktap_diag "$desc: $(tr -s ' ' <<<"$line")"
		ktap_diag "  retransmits +$(($(mr_sum retransmits) - re)), rto_events +$(($(mr_sum rto_events) - rto))"
		ktap_ok "$desc"
	else
		ktap_fail "$desc" "exit status $rc, result line: '$line'" \
			"${KTAP_LAST_OUTPUT:0:3000}"
		mr_stats_diag
	fi
}
