#!/bin/bash
# Network namespaces: in shared mode every namespace sees every device; in
# exclusive mode a device starts in init_net and can be moved next to its
# netdev with `rdma dev set ... netns`, where libibverbs then finds it.
# quick: stock
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
cleanup() {
	rdma link delete mrc0 2>/dev/null || in_h1 rdma link delete mrc0 2>/dev/null
	mr_wait_gone mrc0 5
	topo_teardown
	mr_netns_mode shared
}
trap cleanup EXIT

ktap_plan 11
ktap_check "rdma system starts in shared netns mode" \
	"$(rdma system show | grep -c 'netns shared')" -eq 1

topo_two_hosts 1500
mr_add h1 mrc0 veth1
ktap_check "shared: h2 sees mrc0" "$(in_h2 ibv_devices | grep -cw mrc0)" -eq 1
ktap_check "shared: init_net sees mrc0" "$(ibv_devices | grep -cw mrc0)" -eq 1
rdma link delete mrc0
ktap_run "shared: device deleted" mr_wait_gone mrc0 5
topo_teardown

ktap_run "switch to exclusive netns mode" mr_netns_mode exclusive
topo_two_hosts 1500
ktap_run "exclusive: link add from inside h1" mr_add h1 mrc0 veth1
ktap_check "exclusive: the new device is in init_net" "$(ibv_devices | grep -cw mrc0)" -eq 1
ktap_run "exclusive: rdma dev set mrc0 netns h1" rdma dev set mrc0 netns h1
ktap_check "exclusive: h1 opens mrc0, port ACTIVE" \
	"$(in_h1 ibv_devinfo -d mrc0 | grep -c 'PORT_ACTIVE')" -eq 1
ktap_check "exclusive: init_net and h2 no longer see mrc0" \
	"$(ibv_devices | grep -cw mrc0)$(in_h2 ibv_devices | grep -cw mrc0)" = 00

in_h1 rdma link delete mrc0
mr_wait_gone mrc0 5
topo_teardown
ktap_run "back to shared netns mode once the namespaces are gone" mr_netns_mode shared

ktap_finish
