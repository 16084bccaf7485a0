#!/bin/bash
# Memory regions and completion queues through the provider and the real
# libibverbs: registration (sizes, access flags, refusals), CQ create,
# destroy, poll, arm and resize, as `rdma resource show` sees them. The
# checks are in mr_verbs_objects (userspace/tests/guest/), whose KTAP cases
# are relayed here one by one.
# timeout: 180
# quick: stock
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
trap topo_teardown EXIT

prog=/usr/local/bin/mr_verbs_objects
prog_cases=35

ktap_plan $((prog_cases + 5))
topo_two_hosts 1500
ktap_run "rdma link add mrc0 type metaroce netdev veth1 (in h1)" mr_add h1 mrc0 veth1
ktap_check "$prog is in the guest" -x "$prog"

# Relay the program's cases, keeping their diagnostics in front of them.
ktap_relay "$prog_cases" mr_verbs_objects ip netns exec h1 "$prog" mrc0

# The device goes away cleanly once the process has let go of everything.
ktap_run "rdma link delete mrc0" rdma link delete mrc0
ktap_check "mrc0 is gone" "$(mr_exists mrc0 && echo present || echo gone)" = gone

ktap_finish
