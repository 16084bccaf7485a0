# Test topologies for guest-side scripts (bash; needs iproute2 ip/tc/rdma).
# Source it after ktap.sh:  . "$(dirname "$0")/../lib/topology.sh"
#
# Two hosts: network namespaces h1 and h2 joined by a veth pair
#   h1: veth1  10.0.0.1/24  fd00::1/64   <->   h2: veth2  10.0.0.2/24  fd00::2/64
#   topo_two_hosts [MTU]      create it (DAD off, so IPv6 is usable at once)
#   in_h1 CMD... / in_h2 CMD...   run CMD inside h1 / h2 (ip netns exec)
#   Use this for metaroce, which is netns-aware.
#
# rxe baseline pair: both ends in init_net, because rxe in 6.1 is not
# netns-aware; policy routing forces A<->B traffic across the veth (the local
# table rule moves from pref 0 to 1000; "from A iif lo" looks up a table that
# routes B via va, and the mirror for B), so netem on va/vb really bites.
#   a: va  10.0.1.1/24  fd00:1::1/64   <->   b: vb  10.0.1.2/24  fd00:1::2/64
#   topo_rxe_pair [MTU]       create it
#   topo_rxe_add              rdma link add rxe_a on va and rxe_b on vb
#   Always give a source address (ping -I 10.0.1.1 ...): without one the
#   kernel picks the local route and the packet never touches the veth.
#
# Both:
#   topo_teardown             remove everything above (idempotent); tests
#                             should `trap topo_teardown EXIT`
#   topo_ping END DST [PING ARGS...]   ping DST from END (h1, h2, a or b) with
#                             END's address as source; v4 or v6 from DST
#   topo_ifc END              print END's interface name (veth1, veth2, va, vb)
#   topo_exec END CMD...      run CMD where END lives (its netns, or init_net)
#   topo_gid_index DEV IP [PORT]  index of DEV's RoCE v2 GID for IP (for -g)
#   topo_snmp END PROTO FIELD  a /proc/net/snmp counter where END lives, e.g.
#                             topo_snmp h2 Udp InCsumErrors
#   topo_wait_listen END PORT [SECS=5]  wait until something listens on TCP
#                             PORT where END lives
#
# Impairments with netem (egress of the given ends, so one direction each;
# impair both ends to hit both directions, e.g. for RDMA READ):
#   END is h1, h2, a, b, or a space-separated list ("h1 h2"), or "both" for the
#   two ends of the topology created last.
#   topo_netem END NETEM-ARGS...   add or change: tc qdisc replace ... netem ARGS
#                             e.g. topo_netem both loss 1% delay 5ms
#   topo_netem_clear END      remove the netem qdisc
#   topo_netem_show END       print tc -s qdisc for END
#   One-impairment shortcuts (each replaces the whole netem spec; combine
#   impairments with topo_netem):
#   topo_loss END PCT         topo_delay END MS [JITTER_MS]
#   topo_reorder END PCT [DELAY_MS=10]   topo_duplicate END PCT
#   topo_corrupt END PCT

TOPO_H1=h1 TOPO_H2=h2
TOPO_H1_IF=veth1 TOPO_H2_IF=veth2
TOPO_H1_IP=10.0.0.1 TOPO_H2_IP=10.0.0.2
TOPO_H1_IP6=fd00::1 TOPO_H2_IP6=fd00::2
TOPO_A_IF=va TOPO_B_IF=vb
TOPO_A_IP=10.0.1.1 TOPO_B_IP=10.0.1.2
TOPO_A_IP6=fd00:1::1 TOPO_B_IP6=fd00:1::2
TOPO_A_RXE=rxe_a TOPO_B_RXE=rxe_b
TOPO_LAST="h1 h2"

in_h1() { ip netns exec "$TOPO_H1" "$@"; }
in_h2() { ip netns exec "$TOPO_H2" "$@"; }

topo_two_hosts() {
	local mtu=${1:-1500} ns
	for ns in "$TOPO_H1" "$TOPO_H2"; do
		ip netns add "$ns" || return
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.all.accept_dad=0
		ip -n "$ns" link set lo up
	done
	ip link add "$TOPO_H1_IF" mtu "$mtu" netns "$TOPO_H1" type veth peer name "$TOPO_H2_IF" mtu "$mtu" netns "$TOPO_H2" || return
	ip -n "$TOPO_H1" addr add "$TOPO_H1_IP/24" dev "$TOPO_H1_IF"
	ip -n "$TOPO_H1" addr add "$TOPO_H1_IP6/64" dev "$TOPO_H1_IF" nodad
	ip -n "$TOPO_H2" addr add "$TOPO_H2_IP/24" dev "$TOPO_H2_IF"
	ip -n "$TOPO_H2" addr add "$TOPO_H2_IP6/64" dev "$TOPO_H2_IF" nodad
	ip -n "$TOPO_H1" link set "$TOPO_H1_IF" up
	ip -n "$TOPO_H2" link set "$TOPO_H2_IF" up || return
	TOPO_LAST="h1 h2"
}

topo_rxe_pair() {
	local mtu=${1:-1500} dev
	sysctl -qw net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.all.accept_dad=0
	ip link add "$TOPO_A_IF" mtu "$mtu" type veth peer name "$TOPO_B_IF" mtu "$mtu" || return
	sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 \
		net.ipv4.conf.all.accept_local=1
	for dev in "$TOPO_A_IF" "$TOPO_B_IF"; do
		sysctl -qw "net.ipv4.conf.$dev.rp_filter=0" "net.ipv4.conf.$dev.accept_local=1"
	done
	ip addr add "$TOPO_A_IP/24" dev "$TOPO_A_IF"
	ip addr add "$TOPO_A_IP6/64" dev "$TOPO_A_IF" nodad
	ip addr add "$TOPO_B_IP/24" dev "$TOPO_B_IF"
	ip addr add "$TOPO_B_IP6/64" dev "$TOPO_B_IF" nodad
	ip link set "$TOPO_A_IF" up
	ip link set "$TOPO_B_IF" up
	# Local delivery after our rules: move the local table from pref 0 to 1000.
	local fam
	for fam in -4 -6; do
		ip "$fam" rule show pref 1000 | grep -q 'lookup local' ||
			ip "$fam" rule add pref 1000 lookup local
		ip "$fam" rule del pref 0 lookup local 2>/dev/null
	done
	ip rule add pref 100 from "$TOPO_A_IP" iif lo lookup 100
	ip rule add pref 101 from "$TOPO_B_IP" iif lo lookup 101
	ip route add "$TOPO_B_IP/32" dev "$TOPO_A_IF" src "$TOPO_A_IP" table 100
	ip route add "$TOPO_A_IP/32" dev "$TOPO_B_IF" src "$TOPO_B_IP" table 101
	ip -6 rule add pref 100 from "$TOPO_A_IP6" iif lo lookup 100
	ip -6 rule add pref 101 from "$TOPO_B_IP6" iif lo lookup 101
	ip -6 route add "$TOPO_B_IP6/128" dev "$TOPO_A_IF" src "$TOPO_A_IP6" table 100
	ip -6 route add "$TOPO_A_IP6/128" dev "$TOPO_B_IF" src "$TOPO_B_IP6" table 101 || return
	TOPO_LAST="a b"
}

topo_rxe_add() {
	rdma link add "$TOPO_A_RXE" type rxe netdev "$TOPO_A_IF" &&
		rdma link add "$TOPO_B_RXE" type rxe netdev "$TOPO_B_IF"
}

topo_teardown() {
	local fam
	{
		# sysfs checks first: every command costs ~0.3 s on the debug kernel
		[ -e "/sys/class/infiniband/$TOPO_A_RXE" ] && rdma link del "$TOPO_A_RXE"
		[ -e "/sys/class/infiniband/$TOPO_B_RXE" ] && rdma link del "$TOPO_B_RXE"
		[ -e "/sys/class/net/$TOPO_A_IF" ] && ip link del "$TOPO_A_IF"
		if ip rule show pref 1000 | grep -q .; then
			for fam in -4 -6; do
				ip "$fam" rule del pref 100
				ip "$fam" rule del pref 101
				ip "$fam" route flush table 100
				ip "$fam" route flush table 101
				ip "$fam" rule show pref 0 | grep -q 'lookup local' ||
					ip "$fam" rule add pref 0 lookup local
				ip "$fam" rule del pref 1000 lookup local
			done
		fi
		[ -e "/run/netns/$TOPO_H1" ] && ip netns del "$TOPO_H1"
		[ -e "/run/netns/$TOPO_H2" ] && ip netns del "$TOPO_H2"
	} >/dev/null 2>&1
	return 0
}

# END -> "netns dev" ("-" for init_net)
_topo_end() {
	case $1 in
	h1) echo "$TOPO_H1 $TOPO_H1_IF" ;;
	h2) echo "$TOPO_H2 $TOPO_H2_IF" ;;
	a) echo "- $TOPO_A_IF" ;;
	b) echo "- $TOPO_B_IF" ;;
	*) echo "topology: unknown end '$1' (h1, h2, a, b, both)" >&2; return 1 ;;
	esac
}

_topo_ends() { if [ "$1" = both ]; then echo "$TOPO_LAST"; else echo "$1"; fi; }

topo_exec() {
	local ns dev
	read -r ns dev < <(_topo_end "$1") || return
	shift
	if [ "$ns" = - ]; then "$@"; else ip netns exec "$ns" "$@"; fi
}

topo_wait_listen() {
	local i
	for i in $(seq $((${3:-5} * 10))); do
		topo_exec "$1" ss -Hltn "sport = :$2" | grep -q . && return 0
		sleep 0.1
	done
	return 1
}

topo_ifc() { local ns dev; read -r ns dev < <(_topo_end "$1") && echo "$dev"; }

topo_ping() {
	local end=$1 dst=$2 src
	shift 2
	case $end:$dst in
	h1:*:*) src=$TOPO_H1_IP6 ;; h1:*) src=$TOPO_H1_IP ;;
	h2:*:*) src=$TOPO_H2_IP6 ;; h2:*) src=$TOPO_H2_IP ;;
	a:*:*) src=$TOPO_A_IP6 ;; a:*) src=$TOPO_A_IP ;;
	b:*:*) src=$TOPO_B_IP6 ;; b:*) src=$TOPO_B_IP ;;
	*) _topo_end "$end"; return ;;
	esac
	if [[ $dst == *:* ]]; then
		topo_exec "$end" ping -6 -I "$src" "$@" "$dst"
	else
		topo_exec "$end" ping -4 -I "$src" "$@" "$dst"
	fi
}

topo_netem() {
	local ends end ns dev
	ends=$(_topo_ends "$1")
	shift
	for end in $ends; do
		read -r ns dev < <(_topo_end "$end") || return
		topo_exec "$end" tc qdisc replace dev "$dev" root netem "$@" || return
	done
}

topo_netem_clear() {
	local end ns dev
	for end in $(_topo_ends "$1"); do
		read -r ns dev < <(_topo_end "$end") || return
		topo_exec "$end" tc qdisc del dev "$dev" root 2>/dev/null
	done
	return 0
}

topo_netem_show() {
	local end ns dev
	for end in $(_topo_ends "$1"); do
		read -r ns dev < <(_topo_end "$end") || return
		echo "$end ($dev):"
		topo_exec "$end" tc -s qdisc show dev "$dev"
	done
}

# topo_netem_drops END|both: packets netem has dropped there so far.
topo_netem_drops() {
	local end ns dev n sum=0
	for end in $(_topo_ends "$1"); do
		read -r ns dev < <(_topo_end "$end") || return
		n=$(topo_exec "$end" tc -s qdisc show dev "$dev" |
			awk '/dropped/ { sub(/,/, "", $7); print $7; exit }')
		sum=$((sum + ${n:-0}))
	done
	echo "$sum"
}

topo_loss() { topo_netem "$1" loss "$2"; }
topo_delay() { topo_netem "$1" delay "$2ms" ${3:+"$3ms"}; }
topo_reorder() { topo_netem "$1" delay "${3:-10}ms" reorder "$2"; }
topo_duplicate() { topo_netem "$1" duplicate "$2"; }
topo_corrupt() { topo_netem "$1" corrupt "$2"; }

# topo_gid_index DEV IP [PORT=1]: print the index of DEV's RoCE v2 GID for IP
# (IPv4 or IPv6, as written in TOPO_*), e.g. for ibv_rc_pingpong -g.
topo_gid_index() {
	local dev=$1 ip=$2 port=${3:-1}
	[[ $ip == *:* ]] || ip=::ffff:$ip
	# lines look like: GID[  1]:		::ffff:10.0.1.1, RoCE v2
	ibv_devinfo -v -d "$dev" -i "$port" |
		awk -v ip="$ip" '/GID\[ *[0-9]+\]:/ && /RoCE v2/ {
			idx = $0; sub(/.*GID\[ */, "", idx); sub(/\].*/, "", idx)
			addr = $0; sub(/.*\]:[ \t]*/, "", addr); sub(/,.*/, "", addr)
			if (addr == ip) { print idx; found = 1; exit } }
			END { exit !found }'
}

# /proc/net/snmp has a header line and a value line per protocol.
topo_snmp() {
	topo_exec "$1" cat /proc/net/snmp |
		awk -v p="$2:" -v f="$3" '$1 == p { if (!hdr) { for (i = 2; i <= NF; i++) if ($i == f) col = i; hdr = 1 }
			else if (col) { print $col; found = 1 } } END { exit !found }'
}
