# NVMe over Fabrics (RDMA) for guest-side scripts: nvmet-rdma exports a
# memory-backed null_blk, nvme-rdma connects to it through the kernel's
# /dev/nvme-fabrics interface (no nvme-cli needed). Both sides use rdma_cm in
# init_net (nvmet-rdma and nvme-rdma create their CM IDs there), so use the
# topo_rxe_pair topology: target on b, host on a, with one RDMA device per end
# (rdma_cm picks the device by GID, so only one transport may own the IPs).
#
#   nvme_setup                  load the modules, one 1 GiB memory-backed nullb0
#   nvme_export TRADDR          nvmet port 1 on TRADDR:4420 exporting nullb0; the
#                               listener binds to the RDMA device that owns
#                               TRADDR now, so export after adding devices
#   nvme_connect TRADDR SRCADDR connect; prints the namespace's block device
#   nvme_disconnect             disconnect every fabrics controller
#   nvme_unexport               remove the nvmet port, subsystem, namespace;
#                               after deleting the RDMA devices (41-nvme.sh
#                               says why)
#   nvme_cleanup                unexport, unload null_blk and the NVMe modules
#   nvme_verify DEV MIB         write MIB MiB of random data to DEV (O_DIRECT),
#                               read it back; ok if the checksums match
#   nvme_throughput DEV MIB     timed O_DIRECT write and read of MIB MiB; sets
#                               NVME_WRITE_MBPS and NVME_READ_MBPS (MB/s)

NVME_NQN=nqn.2026-11.org.metaroce:selftest
NVME_CFS=/sys/kernel/config/nvmet
NVME_PORT=4420

nvme_setup() {
	grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config || return
	modprobe null_blk nr_devices=1 memory_backed=1 gb=1 || return
	modprobe nvmet-rdma && modprobe nvme-rdma || return
	[ -b /dev/nullb0 ] || { echo "no /dev/nullb0"; return 1; }
}

nvme_export() {
	local sub=$NVME_CFS/subsystems/$NVME_NQN port=$NVME_CFS/ports/1
	mkdir -p "$sub" || return
	echo 1 >"$sub/attr_allow_any_host"
	mkdir -p "$sub/namespaces/1"
	echo /dev/nullb0 >"$sub/namespaces/1/device_path"
	echo 1 >"$sub/namespaces/1/enable" || return
	mkdir -p "$port"
	echo rdma >"$port/addr_trtype"
	echo ipv4 >"$port/addr_adrfam"
	echo "$1" >"$port/addr_traddr"
	echo "$NVME_PORT" >"$port/addr_trsvcid"
	ln -s "$sub" "$port/subsystems/$NVME_NQN"
}

nvme_connect() {
	local fd reply ctrl i dev
	# The reply ("instance=N,cntlid=M") is read back on the same open file.
	exec {fd}<>/dev/nvme-fabrics || return
	if ! echo "transport=rdma,traddr=$1,trsvcid=$NVME_PORT,host_traddr=$2,nqn=$NVME_NQN" >&"$fd"; then
		exec {fd}<&-
		echo "connect to $1 from $2 failed (dmesg: $(dmesg | grep -E 'nvme|rdma' | tail -n 1))"
		return 1
	fi
	read -r reply <&"$fd"
	exec {fd}<&-
	ctrl=$(sed -n 's/^instance=\([0-9]*\),.*/nvme\1/p' <<<"$reply")
	[ -n "$ctrl" ] || { echo "unexpected reply from /dev/nvme-fabrics: $reply"; return 1; }
	for i in $(seq 100); do
		# nvmeXnY under the controller, or with native multipath a
		# hidden path nvmeXcYnZ whose head is nvmeXnZ
		for dev in /sys/class/nvme/"$ctrl"/nvme*n1; do
			dev=${dev##*/}
			dev=/dev/${dev/c[0-9]*n/n}
			[ -b "$dev" ] && { echo "$dev"; return 0; }
		done
		sleep 0.2
	done
	echo "no namespace block device for $ctrl"
	return 1
}

nvme_disconnect() {
	local c
	for c in /sys/class/nvme-fabrics/ctl/nvme*; do
		[ -e "$c/delete_controller" ] && echo 1 >"$c/delete_controller"
	done
	return 0
}

nvme_unexport() {
	local sub=$NVME_CFS/subsystems/$NVME_NQN port=$NVME_CFS/ports/1
	rm -f "$port/subsystems/$NVME_NQN" 2>/dev/null
	rmdir "$port" "$sub/namespaces/1" "$sub" 2>/dev/null
	return 0
}

nvme_cleanup() {
	nvme_disconnect
	nvme_unexport
	modprobe -r nvme-rdma nvmet-rdma null_blk 2>/dev/null
	return 0
}

# Seconds since the epoch, with nanoseconds.
_nvme_now() { date +%s.%N; }

# nvme_verify DEV MIB: random data through DEV and back, checked by md5sum.
nvme_verify() {
	local dev=$1 mib=$2 sums sum_w sum_r i
	sums=$(mktemp)
	# O_DIRECT needs whole blocks: fullblock joins the pipe's short reads.
	head -c "$((mib << 20))" /dev/urandom | tee >(md5sum >"$sums") |
		dd of="$dev" bs=1M iflag=fullblock oflag=direct status=none || { rm -f "$sums"; return 1; }
	topo_wait 30 test -s "$sums"
	sum_w=$(cut -d' ' -f1 "$sums")
	rm -f "$sums"
	sum_r=$(dd if="$dev" bs=1M count="$mib" iflag=direct status=none | md5sum | cut -d' ' -f1) || return
	echo "$mib MiB written with md5 $sum_w, read back with md5 $sum_r"
	[ -n "$sum_w" ] && [ "$sum_w" = "$sum_r" ]
}

# nvme_throughput DEV MIB: sets NVME_WRITE_MBPS and NVME_READ_MBPS from
# O_DIRECT dd runs (zeros out, discarded in), so no checksum or random
# generator limits them.
nvme_throughput() {
	local dev=$1 mib=$2 t0 t1 t2
	t0=$(_nvme_now)
	dd if=/dev/zero of="$dev" bs=1M count="$mib" oflag=direct status=none || return
	t1=$(_nvme_now)
	dd if="$dev" of=/dev/null bs=1M count="$mib" iflag=direct status=none || return
	t2=$(_nvme_now)
	NVME_WRITE_MBPS=$(awk -v m="$mib" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", m * 1.048576 / (b - a) }')
	NVME_READ_MBPS=$(awk -v m="$mib" -v a="$t1" -v b="$t2" 'BEGIN { printf "%.1f", m * 1.048576 / (b - a) }')
	echo "$mib MiB: write $NVME_WRITE_MBPS MB/s, read $NVME_READ_MBPS MB/s"
}
