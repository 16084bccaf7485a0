#!/bin/bash
# A lying peer: one that holds the connection tag (the peer itself, or a
# host on the path when no key is set) and reports what did not happen
# (issue 31). mr_craft --lying-acks (userspace/tests/guest/), from h1's address
# with the real tag, to the requester QP on h2 while its SEND waits out an
# RNR refusal: ACKs that report the SEND done, or messages never sent, must
# complete nothing (rx_bogus_msn_done); REMOTE_ACCESS and INVALID_REQUEST
# NAKs of it that name a PSN or epoch that never carried it must fail
# nothing (rx_drop_bogus_nak). The QP stays in RTS, and the SEND completes
# with its data intact once the receive is posted.
# timeout: 120
# quick: stock debug
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
cleanup() {
	wait 2>/dev/null
	topo_teardown
}
trap cleanup EXIT

craft_cases=6
ktap_plan $((2 + craft_cases + 1 + 1))
mr_pair
if mr_debug_kernel; then count=32; else count=200; fi
ktap_relay "$craft_cases" "mr_craft --lying-acks" in_h1 /usr/local/bin/mr_craft --lying-acks "$count" \
	mrc0 mrc1 "$TOPO_H2_IP"
ktap_check "both ports still active" "$(mr_port_state mrc0) $(mr_port_state mrc1)" = \
	"PORT_ACTIVE PORT_ACTIVE"
ktap_finish
