#!/bin/bash
# Every refused `rdma link add` gets a clear errno, and the kernel log says
# why: a netdev with a device already, a taken name, no such netdev,
# non-Ethernet netdevs (loopback, tun), an MTU too small to carry RDMA.
# quick: stock
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
cleanup() {
	ip link del mrtun0 2>/dev/null
	ip link del mrsmall0 2>/dev/null
	topo_teardown
}
trap cleanup EXIT

ktap_plan 13
topo_two_hosts 1500
ktap_run "first device on veth1" mr_add h1 mrc0 veth1

ktap_run_fail "second device on the same netdev: EEXIST" "File exists" \
	mr_add h1 mrc9 veth1
ktap_check "dmesg says the netdev already has a device" \
	"$(dmesg | grep -c 'mrc9: netdev veth1 already has metaroce device mrc0')" -eq 1
ktap_check "no mrc9 left behind" "$(mr_exists mrc9 && echo yes || echo no)" = no

ktap_run_fail "a name that is taken: EEXIST" "File exists" mr_add h2 mrc0 veth2
ktap_check "dmesg says the name is taken" \
	"$(dmesg | grep -c 'mrc0: an RDMA device of that name exists')" -eq 1

ktap_run_fail "no such netdev: ENODEV" "No such device" mr_add h1 mrc9 nosuchdev0

ktap_run_fail "loopback: EOPNOTSUPP" "Operation not supported" mr_add h1 mrc9 lo
ktap_check "dmesg says lo is not Ethernet" \
	"$(dmesg | grep -c 'mrc9: netdev lo is not an Ethernet device')" -eq 1

modprobe tun 2>/dev/null # creates /dev/net/tun on the stock kernel
ip tuntap add dev mrtun0 mode tun
ip link set mrtun0 up
ktap_run_fail "tun device: EOPNOTSUPP" "Operation not supported" mr_add - mrc9 mrtun0

ip link add mrsmall0 mtu 300 type dummy
ktap_run_fail "netdev mtu 300: EINVAL" "Invalid argument" mr_add - mrc9 mrsmall0
ktap_check "dmesg gives the mtu needed" \
	"$(dmesg | grep -c 'mrc9: netdev mrsmall0 has mtu 300, metaroce needs at least 376')" -eq 1

ktap_check "only mrc0 exists after all refusals" \
	"$(ls /sys/class/infiniband | grep -c '^mrc')" -eq 1

ktap_finish
