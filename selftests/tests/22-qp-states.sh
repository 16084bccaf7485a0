#!/bin/bash
# RC queue pairs through the provider and the real libibverbs, between a
# metaroce device on each host: creation limits, RESET -> INIT -> RTR -> RTS
# with the peer's QPN and GID, query_qp, refused transitions and work
# requests, the flush of queued WRs on the move to ERR (and its completion
# event), destroy, as `rdma resource show qp` sees them, and one SEND
# that completes on both ends. The checks are in mr_qp_states
# (userspace/tests/guest/), whose KTAP cases are relayed here one by one.
# timeout: 180
# quick: stock
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
trap topo_teardown EXIT

prog=/usr/local/bin/mr_qp_states
prog_cases=49

ktap_plan $((prog_cases + 6))
ktap_run "two hosts with mrc0 (h1) and mrc1 (h2)" mr_two_hosts 1500
ktap_check "$prog is in the guest" -x "$prog"

# Both devices are visible from h1 (the RDMA netns mode is shared).
ktap_relay "$prog_cases" mr_qp_states ip netns exec h1 "$prog" mrc0 mrc1

# The devices go away cleanly once the process has let go of everything.
ktap_run "rdma link delete mrc0" rdma link delete mrc0
ktap_run "rdma link delete mrc1" rdma link delete mrc1
ktap_check "mrc0 and mrc1 are gone" \
	"$(mr_exists mrc0 || mr_exists mrc1 && echo present || echo gone)" = gone

ktap_finish
