#!/bin/bash
# The conformance suite on a live device: mr-conform plays the peer of a
# QP of mrc0 (h1) from h2, which has no metaroce device, over UDP 4792 and
# the paths' ports, and runs every case of userspace/conformance/cases
# (Documentation/metaroce/conformance.rst); 10.0.0.3 on h2 is a host that
# is not the peer. Each case is relayed as one KTAP case, and every case
# names a section of protocol.rst, which --spec checks. Then the cases of
# addresses, ports and datagrams over IPv6. Then the module
# again with a pre-shared key, a fresh mrc0, and the encrypted cases
# (cases/encrypted, --psk): once per device, since a device keeps the keys
# it derived.
# kernels: stock
# timeout: 900
# quick: stock
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
trap topo_teardown EXIT

cases=/selftests/conformance/cases
spec=/selftests/conformance/protocol.rst
key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
n=$(/usr/local/bin/mr-conform --list "$cases" | wc -l)
ne=$(/usr/local/bin/mr-conform --list "$cases/encrypted" | wc -l)
# Over IPv6, the cases of addresses, ports and datagrams (the GRH area of
# a UD receive holds the IPv6 header then).
v6=("$cases"/encapsulation.mrc "$cases"/hello.mrc "$cases"/handshake.mrc "$cases"/peer-tags.mrc
	"$cases"/datagrams.mrc)
n6=$(/usr/local/bin/mr-conform --list "${v6[@]}" | wc -l)
ktap_plan $((n + 3 + n6 + 2 + ne + 2))

ktap_run "h1 with mrc0, h2 without a device" eval \
	'topo_two_hosts 1500 && mr_add "$TOPO_H1" mrc0 "$TOPO_H1_IF"'
ktap_run "10.0.0.3 on h2: a host that is not the peer" \
	ip -n "$TOPO_H2" addr add 10.0.0.3/24 dev "$TOPO_H2_IF"
ktap_relay "$n" mr-conform ip netns exec "$TOPO_H1" /usr/local/bin/mr-conform --target live --device mrc0 \
	--peer-netns "$TOPO_H2" --peer-ip "$TOPO_H2_IP" --foreign-ip 10.0.0.3 \
	--within 1500 --tolerance 10 --spec "$spec" "$cases"

ktap_run "fd00::3 on h2, and mrc0's IPv6 GID" eval \
	'ip -n "$TOPO_H2" addr add fd00::3/64 dev "$TOPO_H2_IF" nodad &&
	 [ -n "$(topo_gid_index mrc0 "$TOPO_H1_IP6")" ]'
ktap_relay "$n6" mr-conform ip netns exec "$TOPO_H1" /usr/local/bin/mr-conform --target live \
	--device mrc0 --peer-netns "$TOPO_H2" --peer-ip "$TOPO_H2_IP6" --foreign-ip fd00::3 \
	--within 1500 --tolerance 10 --spec "$spec" "${v6[@]}"

topo_teardown
ktap_run "modprobe metaroce psk=KEY, h1 with a new mrc0" eval \
	'mr_unload && modprobe metaroce psk=$key && topo_two_hosts 1500 &&
	 mr_add "$TOPO_H1" mrc0 "$TOPO_H1_IF" && ip -n "$TOPO_H2" addr add 10.0.0.3/24 dev "$TOPO_H2_IF"'
ktap_relay "$ne" mr-conform ip netns exec "$TOPO_H1" /usr/local/bin/mr-conform --target live \
	--device mrc0 --peer-netns "$TOPO_H2" --peer-ip "$TOPO_H2_IP" --foreign-ip 10.0.0.3 \
	--within 1500 --tolerance 10 --psk "$key" --spec "$spec" "$cases/encrypted"
mr_unload
