#!/bin/bash
# rdma link add/show/delete on a veth inside a network namespace, and the
# device as libibverbs shows it through our provider: port state, MTU, GIDs.
# quick: stock debug
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
trap topo_teardown EXIT

ktap_plan 18
topo_two_hosts 1500

ktap_check "module not loaded before the first link add" \
	"$(grep -c '^metaroce ' /proc/modules)" -eq 0
ktap_run "rdma link add mrc0 type metaroce netdev veth1 (in h1)" \
	mr_add h1 mrc0 veth1
ktap_check "link add autoloaded metaroce" "$(grep -c '^metaroce ' /proc/modules)" -eq 1
ktap_run "rdma link add mrc1 on veth2 (in h2)" mr_add h2 mrc1 veth2

# The netdev is named only to a caller in the netdev's own namespace.
show=$(rdma link show 2>&1; in_h1 rdma link show mrc0/1 2>&1; in_h2 rdma link show mrc1/1 2>&1)
ktap_diag "$show"
ktap_check "rdma link show (in h1): mrc0 ACTIVE on veth1" \
	"$(grep -c 'link mrc0/1 state ACTIVE physical_state LINK_UP netdev veth1' <<<"$show")" -eq 1
ktap_check "rdma link show (in h2): mrc1 ACTIVE on veth2" \
	"$(grep -c 'link mrc1/1 state ACTIVE physical_state LINK_UP netdev veth2' <<<"$show")" -eq 1

ktap_run "ibv_devices lists mrc0 and mrc1 (from h2)" \
	bash -c 'in_h2() { ip netns exec h2 "$@"; }; out=$(in_h2 ibv_devices) && echo "$out" &&
		grep -qw mrc0 <<<"$out" && grep -qw mrc1 <<<"$out"'

info=$(in_h1 ibv_devinfo -v -d mrc0 2>&1)
ktap_diag "$info"
field() { awk -v f="$1:" '$1 == f { $1 = ""; sub(/^ +/, ""); print; exit }' <<<"$info"; }
ktap_check "ibv_devinfo: port state PORT_ACTIVE" "$(field state)" = "PORT_ACTIVE (4)"
ktap_check "ibv_devinfo: link layer Ethernet" "$(field link_layer)" = "Ethernet"
ktap_check "ibv_devinfo: active_mtu 1024 on a 1500-byte veth" "$(field active_mtu)" = "1024 (3)"
ktap_check "ibv_devinfo: max_mtu 4096" "$(field max_mtu)" = "4096 (5)"
# EUI-64 from the MAC: flip the universal/local bit, insert ff:fe.
mac=$(cat /sys/class/net/veth1/address 2>/dev/null || ip netns exec h1 cat /sys/class/net/veth1/address)
IFS=: read -r m0 m1 m2 m3 m4 m5 <<<"$mac"
guid=$(printf '%02x%s:%sff:fe%s:%s%s' $((0x$m0 ^ 2)) "$m1" "$m2" "$m3" "$m4" "$m5")
ktap_check "ibv_devinfo: node_guid is the EUI-64 of veth1's MAC" "$(field node_guid)" = "$guid"
ktap_check "GID table: RoCE v2 GID for 10.0.0.1" \
	"$(grep -cE 'GID\[ *[0-9]+\]:[[:space:]]+::ffff:10\.0\.0\.1, RoCE v2' <<<"$info")" -eq 1
ktap_check "GID table: RoCE v2 GID for fd00::1" \
	"$(grep -cE 'GID\[ *[0-9]+\]:[[:space:]]+fd00::1, RoCE v2' <<<"$info")" -eq 1

ip -n h1 addr add 10.9.9.1/24 dev veth1
sleep 0.5
ktap_check "GID table follows a new address (10.9.9.1)" \
	"$(in_h1 ibv_devinfo -v -d mrc0 | grep -cE '::ffff:10\.9\.9\.1, RoCE v2')" -eq 1

ip -n h1 link set veth1 mtu 9000
ip -n h2 link set veth2 mtu 9000
ktap_check "active_mtu follows the netdev: 4096 at mtu 9000" \
	"$(mr_devinfo_field mrc0 active_mtu)" = "4096 (5)"

ktap_run "rdma link delete mrc0" rdma link delete mrc0
ktap_check "mrc0 is gone after delete, mrc1 stays" \
	"$(mr_exists mrc0 && echo present || echo gone) $(mr_exists mrc1 && echo present)" = "gone present"

ktap_finish
