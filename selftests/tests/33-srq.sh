#!/bin/bash
# Shared receive queues between two hosts: the unmodified ibv_srq_pingpong
# (16 QPs on one SRQ and one CQ by default) at sizes around one MTU, with
# completion events and with 1 and 4 QPs; then mr_srq (userspace/tests/guest/),
# whose KTAP cases are relayed one by one: SRQ sizes and limits, the limit
# event delivered once, SRQ order, RNR while the SRQ is empty, two QPs on one
# SRQ and one CQ with every byte checked, ERR flushing no SRQ WQE, and
# destroy refused while a QP uses the SRQ.
# timeout: 600
# quick: stock debug
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
. "$here/../lib/perftest.sh"
trap topo_teardown EXIT

prog=/usr/local/bin/mr_srq
prog_cases=32

ktap_plan $((prog_cases + 14))

mr_pair

# The debug kernel moves ~1000 packets a second: 16 QPs at once run into
# RTO storms there, so it runs 2, and 64 KiB messages on one QP (two QPs
# of 64-packet messages exhaust the retry count there: a transport limit).
qps=16 big_qps=16
mr_debug_kernel && qps=2 big_qps=1
srq_pingpong() { pp_case ibv_srq_pingpong "$@"; }

# The debug kernel runs one small, one multi-packet and one big case with
# events; the other sizes and QP counts take the same paths (mr_on_stock).
# The smoke set (the quick tier there) runs the multi-packet case alone.
d="srq pingpong 1 byte, $qps QPs"
mr_not_smoke "$d" srq_pingpong "$d" 1 1000 -q "$qps"
d="srq pingpong 1024 bytes (one MTU), $qps QPs"
mr_on_stock "$d" srq_pingpong "$d" 1024 1000 -q "$qps"
srq_pingpong "srq pingpong 1025 bytes, $qps QPs" 1025 1000 -q "$qps"
d="srq pingpong 65536 bytes, $big_qps QPs"
mr_on_stock "$d" srq_pingpong "$d" 65536 200 -q "$big_qps"
d="srq pingpong 1 byte, completion events (-e)"
mr_on_stock "$d" srq_pingpong "$d" 1 500 -e -q "$qps"
d="srq pingpong 65536 bytes, completion events (-e)"
mr_not_smoke "$d" srq_pingpong "$d" 65536 100 -e -q "$big_qps"
d="srq pingpong 1024 bytes, 1 QP"
mr_on_stock "$d" srq_pingpong "$d" 1024 500 -q 1
d="srq pingpong 4096 bytes, 4 QPs, rx depth 8"
mr_on_stock "$d" srq_pingpong "$d" 4096 500 -q 4 -r 8
mr_stats_diag

ktap_check "$prog is in the guest" -x "$prog"
# Both devices are visible from h1 (the RDMA netns mode is shared).
ktap_relay "$prog_cases" mr_srq ip netns exec h1 "$prog" mrc0 mrc1

ktap_run "rdma link delete mrc0" rdma link delete mrc0
ktap_run "rdma link delete mrc1" rdma link delete mrc1

ktap_finish
