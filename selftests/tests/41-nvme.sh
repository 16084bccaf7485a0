#!/bin/bash
# NVMe over Fabrics on metaroce: nvmet-rdma exports a memory-backed null_blk
# from b, nvme-rdma connects from a, and random data is written through the
# namespace and read back with checksums, loss-free and under 1% netem loss.
# nvme-rdma and nvmet-rdma open their rdma_cm IDs in init_net, so the two
# ends are the veth pair va/vb in init_net with policy routing
# (topo_rxe_pair), each with a metaroce device instead of rxe. The kernel
# consumers use fast registration (REG_MR), SEND with invalidate and the
# rdma_rw API. Then disconnect and `rdma link delete`; the harness checks
# for splats and, on the debug kernel, kmemleak reports.
# 64 MiB per round on the stock kernel (about a thousand netem drops at
# 1%), 4 MiB on the debug kernel (about 1 MB/s there).
# timeout: 600
# quick: stock
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
. "$here/../lib/perftest.sh"
. "$here/../lib/nvme.sh"
trap 'nvme_cleanup; topo_teardown' EXIT

ktap_plan 18

if mr_debug_kernel; then mib=4; else mib=$(tiered 64 16); fi
a_sum() { mr_stat mrc_a "$1"; }
both_sum() { echo $(($(mr_stat mrc_a "$1") + $(mr_stat mrc_b "$1"))); }

ktap_run "veth va/vb in init_net" topo_rxe_pair 1500
add_devices() { mr_add - mrc_a "$TOPO_A_IF" && mr_add - mrc_b "$TOPO_B_IF"; }
del_devices() { rdma link delete mrc_a && rdma link delete mrc_b; }

ktap_run "metaroce devices mrc_a on va, mrc_b on vb" add_devices
ktap_run "nvmet, nvme-rdma and a 1 GiB memory-backed null_blk" nvme_setup
ktap_run "nvmet-rdma port on $TOPO_B_IP:$NVME_PORT exports nullb0" nvme_export "$TOPO_B_IP"

rc=0
dev=$(nvme_connect "$TOPO_B_IP" "$TOPO_A_IP") || rc=$?
ktap_result $rc "nvme-rdma connects from $TOPO_A_IP: $dev"
[ $rc -eq 0 ] || ktap_diag "$dev" "$(dmesg | grep -Ei 'nvme|rdma|mrc_' | tail -n 15)"
ktap_check "the controller runs over metaroce (mrc_a has a connected RC QP)" \
	"$(rdma resource show qp link mrc_a/1 2>/dev/null | grep -c 'type RC.*state RTS')" -gt 0

tx0=$(a_sum tx_bytes)
t0=$(date +%s)
ktap_run "$mib MiB of random data written and read back, checksums equal" nvme_verify "$dev" "$mib"
ktap_diag "$KTAP_LAST_OUTPUT (in $(($(date +%s) - t0)) s)"
moved=$(($(a_sum tx_bytes) - tx0))
ktap_check "mrc_a sent at least $mib MiB ($moved bytes)" "$moved" -ge $((mib << 20))
ktap_run "timed O_DIRECT write and read of $mib MiB" nvme_throughput "$dev" "$mib"
ktap_diag "$KTAP_LAST_OUTPUT"

ktap_run "netem loss 1% on both ends" topo_netem "a b" loss 1%
re0=$(both_sum retransmits)
drops0=$(topo_netem_drops a)
t0=$(date +%s)
ktap_run "1% loss: $mib MiB written and read back, checksums equal" nvme_verify "$dev" "$mib"
ktap_diag "$KTAP_LAST_OUTPUT (in $(($(date +%s) - t0)) s)"
re1=$(both_sum retransmits)
drops1=$(topo_netem_drops a)
ktap_check "netem dropped packets on $TOPO_A_IF (${drops0:-0} -> ${drops1:-0}), metaroce resent (retransmits $re0 -> $re1)" \
	"${drops1:-0}" -gt "${drops0:-0}" -a "$re1" -gt "$re0"
ktap_run "netem off" topo_netem_clear "a b"

# At rest (the I/O is over; a keep-alive may be out for a moment), every
# RC QP of the controller has nothing in flight: `metaroce qp show`.
# inflight: "QPS INFLIGHT", a QP without an inflight member counting 1.
inflight() {
	/usr/local/bin/metaroce -j qp show dev mrc_a |
		mr_json '[.[] | select(rc_rts)] | length, (map(get("inflight"; 1) | num) | add // 0)'
}
rest=
for _ in $(seq 50); do
	rest=$(inflight)
	[[ $rest =~ ^[1-9][0-9]*\ 0$ ]] && break
	sleep 0.2
done
ktap_check "at rest: the controller's RC QPs in metaroce qp show have 0 in flight (QPs, in flight: $rest)" \
	"$([[ $rest =~ ^[1-9][0-9]*\ 0$ ]] && echo 1)" = 1
errors=$(dmesg | grep -E 'I/O error|nvme.*(timeout|reset|failed with status|error recovery)')
ktap_check "no I/O error, timeout or controller error recovery" -z "$errors"
[ -z "$errors" ] || ktap_diag "$errors"

ktap_run "disconnect" nvme_disconnect
ktap_check "no fabrics controller left" "$(ls /sys/class/nvme-fabrics/ctl 2>/dev/null | grep -c nvme)" -eq 0
# The devices go before the export: their removal closes nvmet-rdma's
# listener. Unexporting first destroys it under nvmet_config_sem, which
# lockdep reports against the CM handler taking that lock on connect (an
# nvmet issue, whatever the RDMA device).
ktap_run "rdma link delete mrc_a and mrc_b" del_devices
nvme_unexport
ktap_finish
