#!/bin/bash
# The wire format as captured: tcpdump on h1's veth records UDP 4792 while
# real traffic runs between mrc0 (h1) and mrc1 (h2), traffic that makes every
# opcode of the wire format (kernel/proto/wire.h):
#   mr_verify, one round of small messages: SEND, SEND_IMM, WRITE,
#     WRITE_IMM, READ_REQ/READ_RESP, CMP_SWAP, FETCH_ADD/ATOMIC_RESP, ACK
#   mr_ud: UD_SEND, UD_SEND_IMM
#   mr_bad_input: NAKs of all three codes (remote access, invalid request,
#     RNR) and SEND_INV (a type 2 window invalidated by the peer)
# The capture goes to the host as a "#@ capture" block on the console (the
# guest has no tshark, and no shared directory); selftests/run saves it as
# wire.pcap in the run's log directory and checks it there with metaroce.lua
# (host/captures.sh, case "60-wire-capture:capture"): each datagram decodes
# as the kernel's codec decodes it, the values are plausible (version 1,
# QPNs of the fresh devices, lengths), and every opcode shows up.
# kernels: stock
# timeout: 240
# quick: stock
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
. "$here/../lib/capture.sh"
trap 'capture_stop >/dev/null 2>&1; topo_teardown' EXIT

command -v tcpdump >/dev/null || ktap_skip_all "tcpdump is missing"
pcap=/tmp/wire.pcap
# QPNs the host check accepts: the devices are new, and allocate QPNs
# cyclically from 16 (MR_QPN_MIN); the programs make fewer than 256 QPs
# (up to 43 on 2026-12-01).
qpns=16-271

ktap_plan 10

mr_pair
capture_start h1 "$pcap"
ktap_result $? "tcpdump listens on $TOPO_H1_IF (udp port 4792)"

# Every datagram a device received crossed h1's veth, where the tap sees it
# (tcpdump is stopped once it has counted that many);
# one the devices sent may still be lost on the way (h1's backlog full under
# TCG, counted as h2's veth tx_dropped), so the capture lies between the two.
lost() { ip netns exec h2 cat "/sys/class/net/$TOPO_H2_IF/statistics/tx_dropped"; }
tx0=$(mr_sum tx_packets) rx0=$(mr_sum rx_packets) lost0=$(lost)
# Both devices are visible from h1 and init_net (the RDMA netns mode is
# shared); the datagrams cross the veth either way.
ktap_run "mr_verify: every RC operation, one round up to 2 KiB" timeout 120 \
	/usr/local/bin/mr_verify --dev-a mrc0 --dev-b mrc1 --gid-a "$gid1" --gid-b "$gid2" \
	--ops all --rounds 1 --max-size 2048 --random 2 --linger 0.2
ktap_run "mr_ud: UD datagrams, with and without immediate data" \
	ip netns exec h1 timeout 120 /usr/local/bin/mr_ud mrc0 mrc1
ktap_run "mr_bad_input: NAKs of every code, SEND_WITH_INV" \
	ip netns exec h1 timeout 120 /usr/local/bin/mr_bad_input mrc0 mrc1
sleep 0.5 # the last ACKs
# What the devices received before the stop was on the wire before it, and
# what they sent after it cannot be in the capture: rx is read before,
# tx after. tcpdump stops once it has caught up with rx.
rx=$(($(mr_sum rx_packets) - rx0))
capture_stop "$rx"
ktap_result $? "tcpdump stops and counts what it captured"
tx=$(($(mr_sum tx_packets) - tx0)) lost=$(($(lost) - lost0))
ktap_diag "captured ${CAPTURE_PACKETS:-?} frames ($(stat -c %s "$pcap" 2>/dev/null) bytes); the devices sent $tx datagrams and received $rx, h2's veth dropped $lost"
ktap_check "tcpdump dropped none (${CAPTURE_DROPPED:-?})" "${CAPTURE_DROPPED:-1}" -eq 0
ktap_check "the capture holds every datagram the devices received, and no more than they sent ($rx <= ${CAPTURE_PACKETS:-0} <= $tx)" \
	"$rx" -gt 0 -a "${CAPTURE_PACKETS:-0}" -ge "$rx" -a "${CAPTURE_PACKETS:-0}" -le "$tx"
# Last, as the host checks it after the guest: the arguments of check-capture.sh.
ktap_run "the capture goes to the host" \
	capture_send wire.pcap "$pcap" --require-opcodes all --sane "$qpns" --one-case
printf '%s\n' "$KTAP_LAST_OUTPUT"
ktap_finish
