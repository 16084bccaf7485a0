#!/bin/bash
# A peer that holds the connection tag and lies (mr_craft --lying,
# userspace/tests/guest/): from mrc0's namespace, with the real tag of
# an RC QP on mrc1, two SENDs that name the same receive (RSN), the second
# interleaved so that it would land after the first completed that
# receive. The second must be dropped and counted (rx_drop_malformed), no
# byte of it may land in any receive, no receive may complete for it, and
# another pair between the devices must carry data after. Then READs beyond
# the negotiated depth (max_dest_rd_atomic): the excess is dropped and
# counted (rx_drop_rd_excess), the QP and other pairs go on. The harness's
# "no kernel splat" case covers the rest.
# timeout: 120
# quick: stock debug
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
trap topo_teardown EXIT

craft_cases=9
ktap_plan $((2 + craft_cases + 1 + 2))

mr_pair
ktap_relay "$craft_cases" "mr_craft --lying" ip netns exec h1 /usr/local/bin/mr_craft --lying \
	--netns mrc1=h2 mrc0 mrc1 "$TOPO_H2_IP"

ktap_run "rdma link delete mrc0" rdma link delete mrc0
ktap_run "rdma link delete mrc1" rdma link delete mrc1
ktap_finish
