#!/bin/bash
# Demo (runs in the guest via `selftests/run --demo`): two hosts, a metaroce
# device on each, and what the RDMA tools see from each host.
. "$(dirname "$0")/../lib/topology.sh"

step() { printf '\n=== %s\n' "$*"; }
show() { printf '$ %s\n' "$*"; "$@" 2>&1; }

step "two hosts h1 ($TOPO_H1_IP) and h2 ($TOPO_H2_IP) joined by a veth pair"
topo_two_hosts || exit 1
show in_h1 ip -br addr show dev "$TOPO_H1_IF"
show in_h2 ip -br addr show dev "$TOPO_H2_IF"

step "a metaroce device on each host (autoloads metaroce.ko via rdma-link-metaroce)"
show in_h1 rdma link add mrc0 type metaroce netdev "$TOPO_H1_IF"
rc1=$?
show in_h2 rdma link add mrc1 type metaroce netdev "$TOPO_H2_IF"
rc2=$?

for h in 1 2; do
	step "seen from h$h"
	show "in_h$h" rdma link show
	show "in_h$h" ibv_devices
	printf '$ ibv_devinfo -v -d mrc%d | grep -E ...\n' $((h - 1))
	"in_h$h" ibv_devinfo -v -d "mrc$((h - 1))" |
		grep -E 'hca_id|transport|node_guid|state:|mtu|link_layer|GID\['
done

step "each namespace with a device listens on the MetaRoCE UDP port"
show in_h1 ss -uln sport = :4792
show in_h1 rdma statistic show link mrc0/1

topo_teardown
[ $rc1 -eq 0 ] && [ $rc2 -eq 0 ]
