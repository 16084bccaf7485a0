# Packet captures in the guest, sent to the host (bash; needs tcpdump).
# Source it after topology.sh:  . "$(dirname "$0")/../lib/capture.sh"
#
#   capture_start END FILE [FILTER]   tcpdump on END's interface (h1, h2, a,
#                             b: topo_ifc) into FILE, whole frames, FILTER
#                             (default: the MetaRoCE port, udp port 4792);
#                             returns once tcpdump listens (or fails in 10 s)
#   capture_stop              stop it; sets CAPTURE_PACKETS and
#                             CAPTURE_DROPPED from tcpdump's own count
#   Both keep state in the shell: call them directly, not in $(...) or
#   ktap_run (which runs its command in a subshell).
#   capture_send NAME FILE CHECK-ARGS...   FILE to the host: on the console as
#                             "#@ capture TEST NAME CHECK-ARGS..." then the
#                             gzipped file in base64 and "#@ end-capture".
#                             selftests/run saves it as NAME in the run's log
#                             directory and checks it with the dissector
#                             (host/captures.sh: check-capture.sh CHECK-ARGS),
#                             as the host case TEST:capture.
# The guest has no shared directory: the console is the way out, so keep
# captures small (a few MB at most).

CAPTURE_PID='' CAPTURE_LOG=''

capture_start() {
	local end=$1 file=$2 filter=${3:-udp port 4792} tries=100 ns ifc
	read -r ns ifc < <(_topo_end "$end") || return
	CAPTURE_LOG=$(mktemp)
	# -Z root: the image has no tcpdump user; -U: every packet written at
	# once. Not through a function: $! must be tcpdump itself (ip netns exec
	# execs it), which a background job's ignored SIGINT would not stop.
	local cmd=(tcpdump -i "$ifc" -n -s 0 -U -Z root -w "$file" "$filter")
	[ "$ns" = - ] || cmd=(ip netns exec "$ns" "${cmd[@]}")
	"${cmd[@]}" >/dev/null 2>"$CAPTURE_LOG" &
	CAPTURE_PID=$!
	until grep -q 'listening on' "$CAPTURE_LOG"; do
		tries=$((tries - 1))
		if [ "$tries" -le 0 ] || ! kill -0 "$CAPTURE_PID" 2>/dev/null; then
			sed "s/^/# tcpdump: /" "$CAPTURE_LOG"
			return 1
		fi
		sleep 0.1
	done
}

capture_stop() {
	[ -n "$CAPTURE_PID" ] || return 1
	kill -TERM "$CAPTURE_PID" 2>/dev/null
	wait "$CAPTURE_PID"
	CAPTURE_PID=
	CAPTURE_PACKETS=$(sed -n 's/^\([0-9]*\) packets\{0,1\} captured$/\1/p' "$CAPTURE_LOG")
	CAPTURE_DROPPED=$(sed -n 's/^\([0-9]*\) packets\{0,1\} dropped by kernel$/\1/p' "$CAPTURE_LOG")
	[ -n "$CAPTURE_PACKETS" ] || { sed "s/^/# tcpdump: /" "$CAPTURE_LOG"; return 1; }
}

capture_send() {
	local name=$1 file=$2 test
	shift 2
	test=$(basename "$0" .sh)
	[ -s "$file" ] || return 1
	echo "#@ capture $test $name $*"
	gzip -c "$file" | base64
	echo "#@ end-capture"
}
