#!/bin/bash
# The network layer: each namespace with a metaroce device has the UDP port
# open (IPv4 and IPv6) and only then; crafted and garbage datagrams land in
# the right per-device drop counter of `rdma statistic`, over IPv4 and IPv6.
# timeout: 240
# quick: stock
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
cleanup() {
	ip netns del h3 2>/dev/null
	topo_teardown
}
trap cleanup EXIT

PORT=4792

# Sockets bound to the port in a namespace ("-" is init_net).
port_socks() {
	if [ "$1" = - ]; then ss -Huln "sport = :$PORT"; else ip netns exec "$1" ss -Huln "sport = :$PORT"; fi | wc -l
}

# One datagram from NS to HOST:PORT, its bytes given as a printf format.
send() { ip netns exec "$1" bash -c 'printf "$1" >"/dev/udp/$2/'$PORT'"' _ "$3" "$2"; }

ktap_plan 32
topo_two_hosts 1500

ktap_check "port $PORT closed in h1 before any device" "$(port_socks h1)" -eq 0
mr_add h1 mrc0 veth1
ktap_check "device in h1: port open there, IPv4 and IPv6" "$(port_socks h1)" -eq 2
ktap_check "h2 has no socket yet" "$(port_socks h2)" -eq 0
mr_add h2 mrc1 veth2
ktap_check "device in h2: port open there too" "$(port_socks h2)" -eq 2
ktap_check "no socket in init_net" "$(port_socks -)" -eq 0

stats=$(rdma statistic show link mrc1/1 2>&1)
ktap_diag "$stats"
names="rx_packets rx_bytes tx_packets tx_bytes rx_drop_short rx_drop_version
	rx_drop_malformed rx_drop_no_csum rx_drop_no_qp rx_drop_no_dev
	tx_drop_no_route tx_drop_error retransmits sack_gaps rto_events
	duplicate_packets out_of_order path_failovers tail_probes rto_deferred
	spurious_resends
	rnr_naks ud_rx_drop_qkey ud_rx_drop_no_recv ud_rx_too_long ud_tx_too_long
	gsi_tx_packets gsi_rx_packets uc_rx_drop_no_recv uc_rx_drop_remote_access
	rx_drop_not_peer rx_drop_bad_tag rx_drop_early hello_tx hello_rx
	uc_rx_drop_too_long uc_rx_drop_recv_fault uc_rx_drop_invalid
	rx_refused_map_budget fatal_naks fatal_naks_suppressed acks_held
	rx_drop_bogus_nak rx_bogus_msn_done rx_drop_rd_excess srq_rnr_hold_limit"
missing=
declare -A listed
while read -r n v; do listed[$n]=$v; done < <(mr_stats mrc1)
for n in $names; do
	v=${listed[$n]-absent}
	[ "$v" = 0 ] || missing="$missing $n=$v"
done
ktap_check "rdma statistic lists every counter, all 0 (${missing:-ok})" -z "$missing"

# Headers per Documentation/metaroce/protocol.rst: base header (version,
# opcode, flags, path, order, QPN 24 bits, PSN, epoch, stream, tag),
# then SEND's (MSN, RSN, length, offset). length 0, no payload, a tag that
# is not 0: well-formed.
Z4='\x00\x00\x00\x00'
TAG='\x00\x00\x00\x00\x00\x00\x00\x01'
base() { printf '%s' "\\x$1\\x$2\\x00\\x00\\x$3\\x00\\x00\\x11$Z4$Z4$TAG"; }
SEND=$(base 02 01 00)$Z4$Z4$Z4$Z4 # 40 bytes to QPN 0x11, which does not exist
WRONG_VER=$(base 01 01 00)$Z4$Z4$Z4$Z4 # version 1, which had no tag
SHORT_BASE='\x02\x01\x00\x00\x00\x00\x00\x11\x00\x00' # 10 bytes
SHORT_OP=$(base 02 01 00)$Z4 # 28 bytes: SEND's header cut short
# An ACK (48 bytes of header) with byte 4 set: a request's order, reserved
# in any other packet.
RESERVED=$(base 02 20 01)$Z4$Z4$Z4$Z4$Z4$Z4$Z4$Z4$Z4$Z4$Z4$Z4
BAD_OPCODE=$(base 02 7f 00)$Z4$Z4$Z4$Z4

h2=$TOPO_H2_IP
send h1 "$h2" "$SEND"
send h1 "$h2" "$SEND"
send h1 "$h2" "$WRONG_VER"
send h1 "$h2" "$SHORT_BASE"
send h1 "$h2" "$SHORT_OP"
send h1 "$h2" "$RESERVED"
send h1 "$h2" "$BAD_OPCODE"
send h1 "$h2" 'garbage, not MetaRoCE at all'
sleep 0.3
stats=$(rdma statistic show link mrc1/1 2>&1)
ktap_diag "$stats"
ktap_check "IPv4: rx_packets counts all 8 datagrams" "$(mr_stat mrc1 rx_packets)" -eq 8
ktap_check "IPv4: rx_bytes is their UDP payload (40+40+40+10+28+72+40+28)" \
	"$(mr_stat mrc1 rx_bytes)" -eq 298
ktap_check "IPv4: well-formed SEND to a missing QP -> rx_drop_no_qp (2)" \
	"$(mr_stat mrc1 rx_drop_no_qp)" -eq 2
# 'g' (0x67) is not version 2 either.
ktap_check "IPv4: version 1 and ASCII garbage -> rx_drop_version (2)" \
	"$(mr_stat mrc1 rx_drop_version)" -eq 2
ktap_check "IPv4: truncated base and SEND headers -> rx_drop_short (2)" \
	"$(mr_stat mrc1 rx_drop_short)" -eq 2
ktap_check "IPv4: reserved bit, unknown opcode -> rx_drop_malformed (2)" \
	"$(mr_stat mrc1 rx_drop_malformed)" -eq 2
ktap_check "nothing transmitted" "$(mr_stat mrc1 tx_packets)" -eq 0

h2=$TOPO_H2_IP6
send h1 "$h2" "$SEND"
send h1 "$h2" "$WRONG_VER"
send h1 "$h2" "$SHORT_BASE"
send h1 "$h2" "$RESERVED"
sleep 0.3
ktap_diag "$(rdma statistic show link mrc1/1 2>&1)"
ktap_check "IPv6: rx_packets counts 4 more (12)" "$(mr_stat mrc1 rx_packets)" -eq 12
ktap_check "IPv6: SEND -> rx_drop_no_qp (3)" "$(mr_stat mrc1 rx_drop_no_qp)" -eq 3
ktap_check "IPv6: version 1 -> rx_drop_version (3)" "$(mr_stat mrc1 rx_drop_version)" -eq 3
ktap_check "IPv6: truncated base -> rx_drop_short (3)" "$(mr_stat mrc1 rx_drop_short)" -eq 3
ktap_check "IPv6: reserved bit -> rx_drop_malformed (3)" "$(mr_stat mrc1 rx_drop_malformed)" -eq 3

# Random bytes: whatever they are, each is counted once and dropped. One
# process sends them all (a process costs about 0.4 s on the debug kernel).
ip netns exec h1 python3 -c '
import os, socket, sys
v4 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
v6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
port = int(sys.argv[3])
for i in range(1, 41):
    v4.sendto(os.urandom(16 + i), (sys.argv[1], port))
    v6.sendto(os.urandom(i * 37), (sys.argv[2], port))
' "$TOPO_H2_IP" "$TOPO_H2_IP6" "$PORT"
sleep 0.5
rx=$(mr_stat mrc1 rx_packets)
drops=0
for n in rx_drop_short rx_drop_version rx_drop_malformed rx_drop_no_qp rx_drop_no_csum; do
	drops=$((drops + $(mr_stat mrc1 "$n")))
done
ktap_diag "$(rdma statistic show link mrc1/1 2>&1)"
ktap_check "80 random datagrams: rx_packets 92" "$rx" -eq 92
ktap_check "every datagram received was dropped under one reason" "$drops" -eq "$rx"

# Over lo, no netdev with a metaroce device: counted for the namespace.
send h2 127.0.0.1 "$SEND"
send h2 ::1 "$SEND"
sleep 0.3
ktap_check "datagrams over lo in h2 -> mrc1 rx_drop_no_dev (2)" "$(mr_stat mrc1 rx_drop_no_dev)" -eq 2
ktap_check "... and rx_packets unchanged (92)" "$(mr_stat mrc1 rx_packets)" -eq 92

ktap_diag "$(rdma statistic show link mrc0/1 2>&1)"
ktap_check "counters are per device: mrc0 in h1 saw nothing" \
	"$(mr_stat mrc0 rx_packets) $(mr_stat mrc0 rx_drop_no_qp) $(mr_stat mrc0 rx_drop_no_dev)" = "0 0 0"
send h2 "$TOPO_H1_IP" "$SEND"
sleep 0.3
ktap_check "SEND from h2 to h1 lands on mrc0" \
	"$(mr_stat mrc0 rx_packets) $(mr_stat mrc0 rx_drop_no_qp) $(mr_stat mrc1 rx_packets)" = "1 1 92"

# A second device in h1 shares its namespace's sockets; the last one closes them.
ip -n h1 link add mrdum0 type dummy
ip -n h1 link set mrdum0 up
mr_add h1 mrc2 mrdum0
ktap_check "second device in h1: still one socket per family" "$(port_socks h1)" -eq 2
rdma link delete mrc0
ktap_check "one device left in h1: port still open" "$(port_socks h1)" -eq 2
rdma link delete mrc2
mr_wait_gone mrc2
ktap_check "last device in h1 deleted: port closed in h1" "$(port_socks h1)" -eq 0
ktap_check "h2's port is untouched" "$(port_socks h2)" -eq 2
mr_add h1 mrc0 veth1
ktap_check "a new device in h1 opens the port again" "$(port_socks h1)" -eq 2

# A namespace that dies with its device: the device goes, the socket with it.
ip netns add h3
ip -n h3 link add mrdum1 type dummy
mr_add h3 mrc3 mrdum1
ktap_check "device on a dummy in h3: port open in h3" "$(port_socks h3)" -eq 2
ip netns del h3
ktap_run "deleting h3 removes mrc3" mr_wait_gone mrc3 10
ktap_check "h1 and h2 keep their ports and devices" \
	"$(port_socks h1) $(port_socks h2) $(mr_exists mrc0 && mr_exists mrc1 && echo yes)" = "2 2 yes"

ktap_finish
