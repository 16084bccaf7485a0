#!/bin/bash
# Device lifecycles: port state and async events follow the netdev's
# carrier; the device goes with its netdev (delete, move to another netns);
# rmmod removes every device and revokes open contexts, and survives 20
# load/unload cycles with devices present (3 on the debug kernel, where
# each costs ~7 s and kmemleak finds a leak in one).
# timeout: 600
# quick: stock debug
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
cleanup() {
	[ -n "${watch_pid:-}" ] && kill "$watch_pid" 2>/dev/null
	ip netns del h3 2>/dev/null
	topo_teardown
}
trap cleanup EXIT

ktap_plan 17
topo_two_hosts 1500
mr_add h1 mrc0 veth1 && mr_add h2 mrc1 veth2

# ibv_asyncwatch prints one line per async event; stdbuf keeps it unbuffered.
events=/tmp/mrc0.events
ip netns exec h1 stdbuf -oL ibv_asyncwatch -d mrc0 >"$events" 2>&1 &
watch_pid=$!
topo_wait 10 grep -q 'async event FD' "$events" # it listens once it prints its event fd

# Carrier changes reach drivers through linkwatch, up to a second late, and
# a flap shorter than that coalesces into no change at all. So after each
# step wait for its event (count N of TYPE) before the next step.
await_event() { # TYPE N
	local tries=50
	until [ "$(grep -c "IBV_EVENT_$1" "$events")" -ge "$2" ] || [ "$tries" -eq 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
}

ip -n h1 link set veth1 down
await_event PORT_ERR 1
ktap_check "port DOWN when the netdev goes down" "$(mr_port_state mrc0)" = PORT_DOWN
ip -n h1 link set veth1 up
await_event PORT_ACTIVE 1
ktap_check "port ACTIVE when it comes back up" "$(mr_port_state mrc0)" = PORT_ACTIVE
ip -n h2 link set veth2 down
await_event PORT_ERR 2
ktap_check "port DOWN when the peer drops carrier" "$(mr_port_state mrc0)" = PORT_DOWN
ip -n h2 link set veth2 up
await_event PORT_ACTIVE 2
ktap_check "port ACTIVE when carrier returns" "$(mr_port_state mrc0)" = PORT_ACTIVE
sleep 0.5 # and nothing more arrives
ktap_diag "$(cat "$events")"
ktap_check "async events: PORT_ERR twice" "$(grep -c 'IBV_EVENT_PORT_ERR' "$events")" -eq 2
ktap_check "async events: PORT_ACTIVE twice" "$(grep -c 'IBV_EVENT_PORT_ACTIVE' "$events")" -eq 2

# We implement disassociate_ucontext, so an open device does not pin the
# module: unloading revokes the process's context and tells it.
ktap_run "rmmod while a process has a device open" rmmod metaroce
topo_wait 5 grep -q 'IBV_EVENT_DEVICE_FATAL' "$events"
ktap_check "the process got IBV_EVENT_DEVICE_FATAL" \
	"$(grep -c 'IBV_EVENT_DEVICE_FATAL' "$events")" -eq 1
kill "$watch_pid" 2>/dev/null
wait "$watch_pid" 2>/dev/null
watch_pid=
mr_add h1 mrc0 veth1 && mr_add h2 mrc1 veth2

before=$(mr_exists mrc1 && echo present)
ip -n h2 link del veth2
ktap_check "device goes when its netdev is deleted" \
	"$before $(mr_wait_gone mrc1 5 && echo gone)" = "present gone"
ktap_check "dmesg says why" "$(dmesg | grep -c 'mrc1: netdev veth2 is going away')" -eq 1

ip netns add h3
ip -n h1 link add mrdum0 type dummy
ip -n h1 link set mrdum0 up
mr_add h1 mrc2 mrdum0
before=$(mr_exists mrc2 && echo present)
ip -n h1 link set mrdum0 netns h3
ktap_check "device goes when its netdev moves to another netns" \
	"$before $(mr_wait_gone mrc2 5 && echo gone)" = "present gone"

ip -n h1 link add mrdum1 type dummy
mr_add h1 mrc3 mrdum1
ktap_run "rmmod with devices present" rmmod metaroce
ktap_check "no metaroce device remains" "$(ls /sys/class/infiniband | grep -c '^mrc')" -eq 0

# the quick tier: 5 cycles (1 on the debug kernel) reload as 20 do
cycles=$(if mr_debug_kernel; then tiered 3 1; else tiered 20 5; fi)
cycles_ok=0
for i in $(seq 1 "$cycles"); do
	modprobe metaroce || break
	mr_add h1 "mrc$i" mrdum1 || break
	mr_add - "mrx$i" lo 2>/dev/null # refused; exercises the error path too
	ip -n h1 link add "mrd$i" type dummy && mr_add h1 "mry$i" "mrd$i" || break
	rmmod metaroce || break
	ip -n h1 link del "mrd$i"
	cycles_ok=$i
done
ktap_check "$cycles load/add/unload cycles with devices present" "$cycles_ok" -eq "$cycles"
ktap_check "no metaroce device after the cycles" "$(ls /sys/class/infiniband | grep -c '^mr')" -eq 0
ktap_check "module is unloaded" "$(grep -c '^metaroce ' /proc/modules)" -eq 0

# Back for the next test: link add autoloads it again.
ktap_run "link add autoloads the module again" mr_add h1 mrc0 mrdum1

ktap_finish
