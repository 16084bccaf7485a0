#!/bin/bash
# Every perftest tool over MetaRoCE, unmodified: bandwidth and latency of
# RDMA WRITE, SEND and RDMA READ at 1 byte, exactly one MTU (1024 on a
# 1500-byte veth), MTU+1 and 1 MiB, and the atomics (8 bytes). Each run
# must finish with its result line on both sides. Stock kernel only: these
# are the tools' runs, and the kernel paths they take are 31-verify's, which
# the debug kernel runs checked byte for byte (a perftest run costs the
# debug guest about 17 s, mostly start-up).
# kernels: stock
# timeout: 900
# quick: stock
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
. "$here/../lib/perftest.sh"
trap topo_teardown EXIT

sizes=(1 1024 1025 1048576)
lat_sizes=("${sizes[@]}")
ktap_plan $((2 + 3 * ${#sizes[@]} + 3 * ${#lat_sizes[@]} + 2 + 1))

mr_pair
ktap_diag "active_mtu: $(mr_devinfo_field mrc0 active_mtu)"

# A 1 MiB message is 1024 packets: fewer iterations there (perftest wants
# at least 5).
iters_for() {
	local n
	if [ "$1" -ge 65536 ]; then n=$(scaled 20); else n=$(scaled 200); fi
	echo $((n < 5 ? 5 : n))
}

for tool in ib_write_bw ib_send_bw ib_read_bw; do
	for size in "${sizes[@]}"; do
		perf_case "$tool" "$size" "$(iters_for "$size")"
	done
done
# The quick tier times the latency tools at MTU+1 alone: the bandwidth
# runs above take every size through the same paths.
for tool in ib_write_lat ib_send_lat ib_read_lat; do
	for size in "${lat_sizes[@]}"; do
		if [ "$size" = 1025 ]; then
			perf_case "$tool" "$size" "$(iters_for "$size")"
		else
			mr_full_only "$tool -s $size" perf_case "$tool" "$size" "$(iters_for "$size")"
		fi
	done
done
perf_case ib_atomic_bw 8 "$(scaled 500)"
perf_case ib_atomic_lat 8 "$(scaled 500)"

mr_stats_diag
ktap_check "no packet dropped as malformed" "$(mr_sum rx_drop_malformed)" -eq 0

ktap_finish
