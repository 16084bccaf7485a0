#!/bin/bash
# Harness self-test: the guest environment and the topology helpers really
# work (tools, two-host netns topology over IPv4/IPv6, netem, MTU, the
# init_net rxe baseline pair and RDMA traffic across it).
# timeout: 180
# kernels: stock
# (The harness is the same on both kernels.)
# quick: stock
. "$(dirname "$0")/../lib/ktap.sh"
. "$(dirname "$0")/../lib/topology.sh"
trap topo_teardown EXIT

ktap_plan 25

# --- environment
ktap_check "/sbin/modprobe is kmod (request_module runs it)" "$(readlink -f /sbin/modprobe)" = /usr/bin/kmod
ktap_check "net.core.netdev_max_backlog is 10000" "$(sysctl -n net.core.netdev_max_backlog)" = 10000
ktap_check "ib_uverbs is loaded" -d /sys/class/infiniband_verbs

# --- two hosts
ktap_run "create two-host topology" topo_two_hosts
ktap_run "ping h1 -> h2 over IPv4" topo_ping h1 "$TOPO_H2_IP" -c 2 -i 0.2 -W 2
ktap_run "ping h2 -> h1 over IPv4" topo_ping h2 "$TOPO_H1_IP" -c 2 -i 0.2 -W 2
ktap_run "ping h1 -> h2 over IPv6" topo_ping h1 "$TOPO_H2_IP6" -c 2 -i 0.2 -W 2
ktap_run "ping h2 -> h1 over IPv6" topo_ping h2 "$TOPO_H1_IP6" -c 2 -i 0.2 -W 2

topo_loss h1 100%
ktap_run_fail "netem loss 100% on h1 blocks h1 -> h2" "100% packet loss" \
	topo_ping h1 "$TOPO_H2_IP" -c 2 -i 0.2 -W 1
topo_netem_clear h1
ktap_run "clearing netem restores h1 -> h2" topo_ping h1 "$TOPO_H2_IP" -c 2 -i 0.2 -W 2

ktap_run "netem delay 100ms on both ends" topo_delay both 100
topo_ping h1 "$TOPO_H2_IP" -c 2 -i 0.2 -W 3 >/tmp/ping.out 2>&1
min_rtt=$(sed -n 's|.*min/avg/max = \([0-9]*\).*|\1|p' /tmp/ping.out)
ktap_check "round trip with 2 x 100ms delay is >= 200 ms (got ${min_rtt:-none})" "${min_rtt:-0}" -ge 200 ||
	ktap_diag "$(cat /tmp/ping.out)"
topo_netem_clear both

topo_teardown
ktap_run "recreate two-host topology with MTU 9000" topo_two_hosts 9000
ktap_check "veth1 has MTU 9000" "$(in_h1 cat /sys/class/net/veth1/mtu)" = 9000
ktap_run "8000-byte ping h1 -> h2" topo_ping h1 "$TOPO_H2_IP" -c 1 -s 8000 -W 2
topo_teardown
ktap_check "teardown removes the namespaces" -z "$(ip netns list)"

# --- rxe baseline pair in init_net
tx_packets() { cat "/sys/class/net/$1/statistics/tx_packets"; }
ktap_run "create rxe baseline veth pair" topo_rxe_pair
before=$(tx_packets va)
topo_ping a "$TOPO_B_IP" -c 3 -i 0.2 -W 2 >/dev/null 2>&1
ok=$?
sent=$(($(tx_packets va) - before))
ktap_check "ping a -> b over IPv4 crosses va (exit $ok, va sent $sent packets)" $ok -eq 0 -a $sent -ge 3
before=$(tx_packets va)
topo_ping a "$TOPO_B_IP6" -c 3 -i 0.2 -W 2 >/dev/null 2>&1
ok=$?
sent=$(($(tx_packets va) - before))
ktap_check "ping a -> b over IPv6 crosses va (exit $ok, va sent $sent packets)" $ok -eq 0 -a $sent -ge 3
topo_loss a 100%
ktap_run_fail "netem loss 100% on va blocks a -> b" "100% packet loss" \
	topo_ping a "$TOPO_B_IP" -c 2 -i 0.2 -W 1
topo_netem_clear a

ktap_run "rdma link add rxe_a and rxe_b" topo_rxe_add
ktap_run "ibv_devices lists rxe_a and rxe_b" \
	bash -c 'ibv_devices | grep -qw rxe_a && ibv_devices | grep -qw rxe_b'
ktap_run "rxe_a port is active" bash -c 'ibv_devinfo -d rxe_a | grep -q PORT_ACTIVE'

# RC ping-pong between rxe_b (server) and rxe_a (client) over the veth
gid_a=$(topo_gid_index rxe_a "$TOPO_A_IP")
gid_b=$(topo_gid_index rxe_b "$TOPO_B_IP")
before=$(tx_packets va)
timeout 60 ibv_rc_pingpong -d rxe_b -g "${gid_b:-1}" -n 20 >/tmp/pp-server.out 2>&1 &
server=$!
topo_wait_listen a 18515
ktap_run "ibv_rc_pingpong rxe_a -> rxe_b (gids $gid_a, $gid_b)" \
	timeout 60 ibv_rc_pingpong -d rxe_a -g "${gid_a:-1}" -n 20 "$TOPO_B_IP" ||
	ktap_diag "server: $(cat /tmp/pp-server.out)"
wait $server
sent=$(($(tx_packets va) - before))
ktap_check "RDMA traffic crossed va ($sent packets)" $sent -ge 20

ktap_finish
