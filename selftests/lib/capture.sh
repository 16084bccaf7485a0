# Packet captures in the guest, sent to the host (bash; needs tcpdump).
# Source it after topology.sh:  . "$(dirname "$0")/../lib/capture.sh"
#
#   capture_start END FILE [FILTER]   tcpdump on END's interface (h1, h2, a,
#                             b: topo_ifc) into FILE, whole frames, FILTER
#                             (default: the MetaRoCE port, udp port 4792);
#                             returns once tcpdump listens (or fails in 10 s)
#   capture_stop [AT_LEAST]   stop it, once tcpdump has captured AT_LEAST
#                             frames (or 10 s have passed); sets
#                             CAPTURE_PACKETS and CAPTURE_DROPPED from
#                             tcpdump's own count
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
	# once. Not --immediate-mode: its ring has a slot of the snapshot
	# length per packet, a few slots in all, and drops under load. Not
	# through a function: $! must be tcpdump itself (ip netns exec execs
	# it), which a background job's ignored SIGINT would not stop.
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

# What tcpdump has captured so far: SIGUSR1 makes it print its count on
# one line ("tcpdump: N packets captured, ...") and go on. libpcap hands
# packets over a ring block at a time, a block at most a second after its
# first packet: those still in a block when tcpdump stops are neither
# captured nor counted as dropped, so capture_stop waits for the count.
_capture_counts() { grep -c 'packets\{0,1\} captured,' "$CAPTURE_LOG"; }
_capture_answered() { [ "$(_capture_counts)" -gt "$1" ]; }
_capture_count() {
	local before
	before=$(_capture_counts)
	kill -USR1 "$CAPTURE_PID" 2>/dev/null || return 1
	topo_wait 1 _capture_answered "$before"
	sed -n 's/^tcpdump: \([0-9]*\) packets\{0,1\} captured,.*/\1/p' "$CAPTURE_LOG" | tail -n 1
}

capture_stop() {
	local at_least=${1:-0} deadline n
	[ -n "$CAPTURE_PID" ] || return 1
	deadline=$(($(date +%s) + 10))
	while [ "$at_least" -gt 0 ] && [ "$(date +%s)" -lt "$deadline" ]; do
		n=$(_capture_count) || break
		[ "${n:-0}" -ge "$at_least" ] && break
		sleep 0.1
	done
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
