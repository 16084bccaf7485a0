#!/bin/bash
# The rings a CQ and a QP's receive and send queues share with the kernel
# through mmap(): polled, armed, resized and posted with no command, and
# written by a hostile process (a consumer index past the producer, random
# indices, notify words and slots while completions flow, mappings of the
# wrong size or offset, a mapping that outlives destroy_cq, fork(), a
# receive WQE with too many SGEs, a producer far ahead, a send slot with no
# opcode, random send slots rung while the QP is destroyed, a process that
# exits with sends in flight). The checks are in mr_ring
# (userspace/tests/guest/); the kernel must stay clean (KASAN, lockdep,
# kmemleak on the debug kernel; the harness reads dmesg).
# timeout: 180
# quick: stock debug
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
trap topo_teardown EXIT

prog=/usr/local/bin/mr_ring
prog_cases=27

ktap_plan $((prog_cases + 5))
ktap_run "two hosts with mrc0 (h1) and mrc1 (h2)" mr_two_hosts 1500
ktap_check "$prog is in the guest" -x "$prog"
ktap_relay "$prog_cases" mr_ring ip netns exec h1 "$prog" mrc0 mrc1
ktap_run "rdma link delete mrc0 and mrc1" sh -c 'rdma link delete mrc0 && rdma link delete mrc1'
ktap_check "mrc0 is gone" "$(mr_exists mrc0 && echo present || echo gone)" = gone
ktap_finish
