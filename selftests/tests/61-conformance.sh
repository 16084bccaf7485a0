#!/bin/bash
# The conformance suite on a live device: mr-conform plays the peer of a
# QP of mrc0 (h1) from h2, which has no metaroce device, over UDP 4792 and
# the paths' ports, and runs every case of userspace/conformance/cases
# (Documentation/metaroce/conformance.rst); 10.0.0.3 on h2 is a host that
# is not the peer. Each case is relayed as one KTAP case, and every case
# names a section of protocol.rst, which --spec checks.
# timeout: 900
# quick: stock
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
trap topo_teardown EXIT

cases=/selftests/conformance/cases
spec=/selftests/conformance/protocol.rst
n=$(/usr/local/bin/mr-conform --list "$cases" | wc -l)
ktap_plan $((n + 3))

ktap_run "h1 with mrc0, h2 without a device" eval \
	'topo_two_hosts 1500 && mr_add "$TOPO_H1" mrc0 "$TOPO_H1_IF"'
ktap_run "10.0.0.3 on h2: a host that is not the peer" \
	ip -n "$TOPO_H2" addr add 10.0.0.3/24 dev "$TOPO_H2_IF"
ktap_relay "$n" mr-conform ip netns exec "$TOPO_H1" /usr/local/bin/mr-conform --target live --device mrc0 \
	--peer-netns "$TOPO_H2" --peer-ip "$TOPO_H2_IP" --foreign-ip 10.0.0.3 \
	--within 1500 --tolerance 10 --spec "$spec" "$cases"
