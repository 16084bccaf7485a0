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
#   topo_wait SECS CMD...     run CMD every 0.1 s until it succeeds, at most
#                             SECS*10 times (a count, not a clock: a slow CMD
#                             under TCG still gets its tries); its status
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
# topo_stop PID...: stop background jobs started as "in_hN timeout ... &".
# $! is the subshell running the function, and timeout makes a process
# group of its own, so the subshell's children are signalled first.
topo_stop() {
	local pid f stat ppid
	for pid; do
		for f in /proc/[0-9]*/stat; do
			stat=$(cat "$f" 2>/dev/null) || continue
			read -r _ ppid _ <<<"${stat##*) }"
			[ "$ppid" = "$pid" ] && kill "$(basename "$(dirname "$f")")" 2>/dev/null
		done
		kill "$pid" 2>/dev/null
	done
}

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

topo_wait() {
	local tries=$(($1 * 10))
	shift
	until "$@"; do
		tries=$((tries - 1))
		[ "$tries" -gt 0 ] || return 1
		sleep 0.1
	done
}

_topo_listening() { topo_exec "$1" ss -Hltn "sport = :$2" | grep -q .; }
topo_wait_listen() { topo_wait "${3:-5}" _topo_listening "$1" "$2"; }

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
# (IPv4 or IPv6, as written in TOPO_*), e.g. for ibv_rc_pingpong -g. ib_core
# fills the GID table from a work queue after `rdma link add`: wait up to 10 s.
topo_gid_index() {
	local dev=$1 ip=$2 port=${3:-1} i
	[[ $ip == *:* ]] || ip=::ffff:$ip
	for ((i = 0; i < 100; i++)); do
		_topo_gid_index "$dev" "$ip" "$port" && return
		sleep 0.1
	done
	return 1
}

_topo_gid_index() {
	# lines look like: GID[  1]:		::ffff:10.0.1.1, RoCE v2
	ibv_devinfo -v -d "$1" -i "$3" 2>/dev/null |
		awk -v ip="$2" '/GID\[ *[0-9]+\]:/ && /RoCE v2/ {
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

# ---------------------------------------------------------------------------
# Incast: N sender hosts, a probe host and a receiver, each on its own veth
# to one router namespace; the router's port toward the receiver is the
# bottleneck (tbf, optionally with RED or fq_codel as its child).
#   sender i (1..N): netns inc-s<i>, eth0 10.60.<i>.1/24   <-> router to-s<i> 10.60.<i>.254
#   probe:           netns inc-p,    eth0 10.61.0.1/24     <-> router to-p    10.61.0.254
#   receiver:        netns inc-rcv,  eth0 10.62.0.1/24     <-> router to-rcv  10.62.0.254
#   router:          netns inc-r (ip_forward=1); hosts route everything via it
#   Neighbour entries are permanent: RED drops ARP like any packet that is
#   not ECN-capable, and while ECN-capable senders that ignore their CE
#   marks hold its average queue above max, the router's ARP probes for the
#   receiver fail and the port goes dark for seconds.
#   topo_incast N [MTU=1500]   create it (N 1..200)
#   topo_incast_host END       netns of END: s1..sN, p, rcv, r
#   topo_incast_ip END         IPv4 address of END's eth0 (s1..sN, p, rcv)
#   in_incast END CMD...       run CMD in END's netns
#   topo_incast_port AQM RATE LIMIT [BURST=16kb]
#                              (re)make the bottleneck: root tbf RATE (tc units,
#                              e.g. 100mbit) on to-rcv; AQM "taildrop": tbf's own
#                              byte FIFO of LIMIT (e.g. 128kb); "red": RED with
#                              ECN marking (min LIMIT/16, max LIMIT/6, limit
#                              LIMIT, p 0.1; ECT packets are marked, not dropped,
#                              below the limit); "fq_codel": fq_codel ecn
#                              (target 1ms, interval 10ms, limit LIMIT/1000 pkts
#                              but at least 100)
#   topo_incast_port_stats     one line "sent P dropped D marked M bytes B" of
#                              the bottleneck so far (packets; marked: CE marks
#                              of RED or fq_codel, 0 for tail drop)
#   topo_incast_teardown       remove it (idempotent)
# ECMP: one sender, two routers joined by L parallel links, one receiver.
#   sender:   netns ecmp-s,   eth0 10.70.0.1/24 <-> router 1 to-s   10.70.0.254
#   router 1: netns ecmp-r1,  l<k> 10.71.<k>.1/24 <-> router 2 l<k> 10.71.<k>.2/24
#   router 2: netns ecmp-r2,  to-rcv 10.72.0.254 <-> receiver eth0 10.72.0.1/24
#   receiver: netns ecmp-rcv
#   Each router routes toward the far side over all links (nexthop via ...
#   nexthop via ...) with net.ipv4.fib_multipath_hash_policy=1 (L4 hash: the
#   UDP source port picks the link). Neighbour entries are permanent (see
#   above).
#   topo_ecmp [L=4] [MTU=1500] create it
#   topo_ecmp_host END / topo_ecmp_ip END / in_ecmp END CMD...   as above;
#                              END: s, r1, r2, rcv
#   topo_ecmp_rate RATE LIMIT [BURST=16kb]   tbf on every link's egress in
#                              router 1 (the data direction)
#   topo_ecmp_blackhole K      link K silently drops everything router 1 sends
#                              on it (netem loss 100%); the route still uses it
#   topo_ecmp_restore K        link K rate-limited again (as topo_ecmp_rate)
#   topo_ecmp_link_stats       one line per link: "K sent P dropped D" since
#                             its qdisc was made
#   topo_ecmp_teardown         remove it (idempotent)
# Variables (read-only for callers): TOPO_INCAST_N (senders), TOPO_INCAST_AQM
# (the port's AQM), TOPO_ECMP_LINKS, TOPO_ECMP_RATE/LIMIT/BURST.

TOPO_INCAST_N=0
TOPO_INCAST_AQM=
TOPO_ECMP_LINKS=0
TOPO_ECMP_RATE=
TOPO_ECMP_LIMIT=
TOPO_ECMP_BURST=

topo_incast_host() {
	case $1 in
	r) echo inc-r ;;
	p) echo inc-p ;;
	rcv) echo inc-rcv ;;
	s[0-9]*) echo "inc-$1" ;;
	*) echo "topology: unknown incast end '$1' (s1..sN, p, rcv, r)" >&2; return 1 ;;
	esac
}

topo_incast_ip() {
	case $1 in
	p) echo 10.61.0.1 ;;
	rcv) echo 10.62.0.1 ;;
	s[0-9]*) echo "10.60.${1#s}.1" ;;
	*) echo "topology: '$1' has no incast address (s1..sN, p, rcv)" >&2; return 1 ;;
	esac
}

in_incast() {
	local ns
	ns=$(topo_incast_host "$1") || return
	shift
	ip netns exec "$ns" "$@"
}

# _topo_pin NS1 IF1 IP1 NS2 IF2 IP2: permanent neighbour entries both ways
# over the link IF1 (in NS1) <-> IF2 (in NS2).
_topo_pin() {
	local mac1 mac2
	mac1=$(ip -n "$1" -br link show "$2" | awk '{ print $3 }')
	mac2=$(ip -n "$4" -br link show "$5" | awk '{ print $3 }')
	ip -n "$1" neigh replace "$6" lladdr "$mac2" dev "$2" nud permanent &&
		ip -n "$4" neigh replace "$3" lladdr "$mac1" dev "$5" nud permanent
}

# _topo_spoke NS HOST_IP ROUTER_IF ROUTER_IP PREFIX MTU ROUTER_NS: a host
# namespace with eth0 on a veth to ROUTER_NS, default route via the router.
_topo_spoke() {
	local ns=$1 hip=$2 rif=$3 rip=$4 pfx=$5 mtu=$6 rns=$7
	ip netns add "$ns" || return
	ip -n "$ns" link set lo up
	ip link add eth0 mtu "$mtu" netns "$ns" type veth peer name "$rif" mtu "$mtu" netns "$rns" || return
	ip -n "$ns" addr add "$hip/$pfx" dev eth0
	ip -n "$rns" addr add "$rip/$pfx" dev "$rif"
	ip -n "$ns" link set eth0 up
	ip -n "$rns" link set "$rif" up
	ip -n "$ns" route add default via "$rip" dev eth0 &&
		_topo_pin "$ns" eth0 "$hip" "$rns" "$rif" "$rip"
}

_topo_router() {
	ip netns add "$1" || return
	ip -n "$1" link set lo up
	ip netns exec "$1" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 \
		net.ipv4.conf.default.rp_filter=0
}

topo_incast() {
	local n=$1 mtu=${2:-1500} i
	if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ] || [ "$n" -gt 200 ]; then
		echo "topology: topo_incast N: N must be 1..200, not '$n'" >&2
		return 1
	fi
	# veth's per-CPU backlog overflows under TCG at the default 1000
	sysctl -qw net.core.netdev_max_backlog=10000
	_topo_router inc-r || return
	for ((i = 1; i <= n; i++)); do
		_topo_spoke "inc-s$i" "10.60.$i.1" "to-s$i" "10.60.$i.254" 24 "$mtu" inc-r || return
	done
	_topo_spoke inc-p 10.61.0.1 to-p 10.61.0.254 24 "$mtu" inc-r || return
	_topo_spoke inc-rcv 10.62.0.1 to-rcv 10.62.0.254 24 "$mtu" inc-r || return
	TOPO_INCAST_N=$n
}

topo_incast_port() {
	local aqm=$1 rate=$2 limit=$3 burst=${4:-16kb} bytes
	case $limit in
	*[kK]b) bytes=$((${limit%??} * 1024)) ;;
	*[mM]b) bytes=$((${limit%??} * 1024 * 1024)) ;;
	*[0-9]) bytes=$limit ;;
	*) echo "topology: topo_incast_port: LIMIT '$limit' is not N, Nkb or Nmb" >&2; return 1 ;;
	esac
	in_incast r tc qdisc del dev to-rcv root 2>/dev/null
	in_incast r tc qdisc add dev to-rcv root handle 1: tbf rate "$rate" burst "$burst" limit "$bytes" || return
	case $aqm in
	taildrop) ;;
	red)
		local min=$((bytes / 16)) max=$((bytes / 6))
		in_incast r tc qdisc add dev to-rcv parent 1:1 handle 10: red limit "$bytes" \
			min "$min" max "$max" avpkt 1100 burst $(((2 * min + max) / 3300 + 1)) \
			probability 0.1 bandwidth "$rate" ecn || return
		;;
	fq_codel)
		local pkts=$((bytes / 1000))
		[ "$pkts" -ge 100 ] || pkts=100
		in_incast r tc qdisc add dev to-rcv parent 1:1 handle 10: fq_codel limit "$pkts" \
			target 1ms interval 10ms ecn || return
		;;
	*) echo "topology: topo_incast_port: AQM '$aqm' is not taildrop, red or fq_codel" >&2; return 1 ;;
	esac
	TOPO_INCAST_AQM=$aqm
}

# The root tbf counts what left and every drop below it (the child's
# included); the child counts the CE marks.
topo_incast_port_stats() {
	in_incast r tc -s qdisc show dev to-rcv | awk '
		/^qdisc/ { root = ($0 ~ / root /) }
		root && /Sent/ { bytes = $2; sent = $4; d = $7; sub(/,/, "", d); dropped = d }
		/marked/ { for (i = 1; i < NF; i++) if ($i == "marked") marked += $(i + 1) }
		/ecn_mark/ { for (i = 1; i < NF; i++) if ($i == "ecn_mark") marked += $(i + 1) }
		END { printf "sent %d dropped %d marked %d bytes %d\n", sent, dropped, marked, bytes }'
}

# _topo_del_netns PREFIX: remove every namespace named PREFIX*
_topo_del_netns() {
	local d
	for d in /run/netns/"$1"*; do
		[ -e "$d" ] && ip netns del "${d##*/}" 2>/dev/null
	done
	return 0
}

topo_incast_teardown() {
	_topo_del_netns inc-
	TOPO_INCAST_N=0
}

topo_ecmp_host() {
	case $1 in
	s | r1 | r2 | rcv) echo "ecmp-$1" ;;
	*) echo "topology: unknown ECMP end '$1' (s, r1, r2, rcv)" >&2; return 1 ;;
	esac
}

topo_ecmp_ip() {
	case $1 in
	s) echo 10.70.0.1 ;;
	rcv) echo 10.72.0.1 ;;
	*) echo "topology: '$1' has no ECMP host address (s, rcv)" >&2; return 1 ;;
	esac
}

in_ecmp() {
	local ns
	ns=$(topo_ecmp_host "$1") || return
	shift
	ip netns exec "$ns" "$@"
}

topo_ecmp() {
	local links=${1:-4} mtu=${2:-1500} k hops1=() hops2=()
	if ! [[ $links =~ ^[0-9]+$ ]] || [ "$links" -lt 1 ] || [ "$links" -gt 16 ]; then
		echo "topology: topo_ecmp L: L must be 1..16, not '$links'" >&2
		return 1
	fi
	sysctl -qw net.core.netdev_max_backlog=10000
	_topo_router ecmp-r1 || return
	_topo_router ecmp-r2 || return
	for ns in ecmp-r1 ecmp-r2; do
		ip netns exec "$ns" sysctl -qw net.ipv4.fib_multipath_hash_policy=1 || return
	done
	_topo_spoke ecmp-s 10.70.0.1 to-s 10.70.0.254 24 "$mtu" ecmp-r1 || return
	_topo_spoke ecmp-rcv 10.72.0.1 to-rcv 10.72.0.254 24 "$mtu" ecmp-r2 || return
	for ((k = 1; k <= links; k++)); do
		ip link add "l$k" mtu "$mtu" netns ecmp-r1 type veth peer name "l$k" mtu "$mtu" netns ecmp-r2 || return
		ip -n ecmp-r1 addr add "10.71.$k.1/24" dev "l$k"
		ip -n ecmp-r2 addr add "10.71.$k.2/24" dev "l$k"
		ip -n ecmp-r1 link set "l$k" up
		ip -n ecmp-r2 link set "l$k" up
		_topo_pin ecmp-r1 "l$k" "10.71.$k.1" ecmp-r2 "l$k" "10.71.$k.2" || return
		hops1+=(nexthop via "10.71.$k.2" dev "l$k")
		hops2+=(nexthop via "10.71.$k.1" dev "l$k")
	done
	ip -n ecmp-r1 route add 10.72.0.0/24 "${hops1[@]}" || return
	ip -n ecmp-r2 route add 10.70.0.0/24 "${hops2[@]}" || return
	TOPO_ECMP_LINKS=$links
}

# a fresh tbf (fresh counters) on link $1
_topo_ecmp_tbf() {
	in_ecmp r1 tc qdisc del dev "l$1" root 2>/dev/null
	in_ecmp r1 tc qdisc add dev "l$1" root tbf rate "$TOPO_ECMP_RATE" \
		burst "$TOPO_ECMP_BURST" limit "$TOPO_ECMP_LIMIT"
}

topo_ecmp_rate() {
	local k
	TOPO_ECMP_RATE=$1 TOPO_ECMP_LIMIT=$2 TOPO_ECMP_BURST=${3:-16kb}
	for ((k = 1; k <= TOPO_ECMP_LINKS; k++)); do
		_topo_ecmp_tbf "$k" || return
	done
}

topo_ecmp_blackhole() { in_ecmp r1 tc qdisc replace dev "l$1" root netem loss 100%; }

topo_ecmp_restore() {
	if [ -n "$TOPO_ECMP_RATE" ]; then
		_topo_ecmp_tbf "$1"
	else
		in_ecmp r1 tc qdisc del dev "l$1" root 2>/dev/null
		return 0
	fi
}

topo_ecmp_link_stats() {
	local k
	for ((k = 1; k <= TOPO_ECMP_LINKS; k++)); do
		in_ecmp r1 tc -s qdisc show dev "l$k" | awk -v k="$k" '
			/Sent/ && !done { d = $7; sub(/,/, "", d); printf "%d sent %d dropped %d\n", k, $4, d; done = 1 }'
	done
}

topo_ecmp_teardown() {
	_topo_del_netns ecmp-
	TOPO_ECMP_LINKS=0
}

# Planes: two hosts joined by N independent networks, as multi-plane
# fabrics are: each host has one address, on a dummy interface, which every
# plane routes to; plane k is a router namespace with one veth to each host.
#   host 1:  netns pl-h1, dummy0 10.80.0.1/32, p<k> 10.81.<k>.1/24
#   host 2:  netns pl-h2, dummy0 10.80.0.2/32, p<k> 10.82.<k>.1/24
#   plane k: netns pl-r<k>, to-h1 10.81.<k>.254/24, to-h2 10.82.<k>.254/24
#   Each host routes the other's address over every plane (one route with a
#   nexthop per plane), so a lookup restricted to a plane's netdev takes it.
#   topo_planes N [MTU=1500]   create it (N 1..8)
#   in_planes END CMD...       END: h1, h2 or r<k>
#   topo_planes_rate RATE LIMIT [BURST=16kb]   tbf on both router ports of
#                              every plane (both directions)
#   topo_plane_carrier K on|off   host 1's p<k> up or down (its router's
#                              port loses its carrier; a router port set
#                              down would lose its routes)
#   topo_plane_blackhole K     plane K's router drops everything toward both
#                              hosts (netem loss 100%); carriers stay up
#   topo_plane_restore K       plane K rate-limited again
#   topo_planes_stats          one line per plane: "K sent P dropped D", both
#                              ports added up, since their qdiscs were made
#   topo_planes_teardown       remove it (idempotent)
TOPO_PLANES=0
TOPO_PLANES_RATE=
TOPO_PLANES_LIMIT=
TOPO_PLANES_BURST=

in_planes() {
	local ns=pl-$1
	shift
	ip netns exec "$ns" "$@"
}

topo_planes() {
	local n=${1:-4} mtu=${2:-1500} k h hops1=() hops2=()
	if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ] || [ "$n" -gt 8 ]; then
		echo "topology: topo_planes N: N must be 1..8, not '$n'" >&2
		return 1
	fi
	sysctl -qw net.core.netdev_max_backlog=10000
	# loaded by the first dummy, the module would add its own to init_net
	modprobe -q dummy numdummies=0
	for h in 1 2; do
		_topo_router "pl-h$h" || return
		ip -n "pl-h$h" link add dummy0 mtu "$mtu" type dummy || return
		ip -n "pl-h$h" addr add "10.80.0.$h/32" dev dummy0
		ip -n "pl-h$h" link set dummy0 up
	done
	for ((k = 0; k < n; k++)); do
		_topo_router "pl-r$k" || return
		for h in 1 2; do
			ip link add "p$k" mtu "$mtu" netns "pl-h$h" type veth peer \
				name "to-h$h" mtu "$mtu" netns "pl-r$k" || return
		done
		ip -n "pl-h1" addr add "10.81.$k.1/24" dev "p$k"
		ip -n "pl-h2" addr add "10.82.$k.1/24" dev "p$k"
		ip -n "pl-r$k" addr add "10.81.$k.254/24" dev to-h1
		ip -n "pl-r$k" addr add "10.82.$k.254/24" dev to-h2
		for h in 1 2; do
			ip -n "pl-h$h" link set "p$k" up
			ip -n "pl-r$k" link set "to-h$h" up
		done
		_topo_pin pl-h1 "p$k" "10.81.$k.1" "pl-r$k" to-h1 "10.81.$k.254" || return
		_topo_pin pl-h2 "p$k" "10.82.$k.1" "pl-r$k" to-h2 "10.82.$k.254" || return
		ip -n "pl-r$k" route add 10.80.0.1/32 via "10.81.$k.1" dev to-h1 || return
		ip -n "pl-r$k" route add 10.80.0.2/32 via "10.82.$k.1" dev to-h2 || return
		hops1+=(nexthop via "10.81.$k.254" dev "p$k")
		hops2+=(nexthop via "10.82.$k.254" dev "p$k")
	done
	if [ "$n" = 1 ]; then
		ip -n pl-h1 route add 10.80.0.2/32 via 10.81.0.254 dev p0 || return
		ip -n pl-h2 route add 10.80.0.1/32 via 10.82.0.254 dev p0 || return
	else
		ip -n pl-h1 route add 10.80.0.2/32 "${hops1[@]}" || return
		ip -n pl-h2 route add 10.80.0.1/32 "${hops2[@]}" || return
	fi
	TOPO_PLANES=$n
}

# a fresh tbf (fresh counters) on both ports of plane $1
_topo_planes_tbf() {
	local port
	for port in to-h1 to-h2; do
		in_planes "r$1" tc qdisc del dev "$port" root 2>/dev/null
		in_planes "r$1" tc qdisc add dev "$port" root tbf rate "$TOPO_PLANES_RATE" \
			burst "$TOPO_PLANES_BURST" limit "$TOPO_PLANES_LIMIT" || return
	done
}

topo_planes_rate() {
	local k
	TOPO_PLANES_RATE=$1 TOPO_PLANES_LIMIT=$2 TOPO_PLANES_BURST=${3:-16kb}
	for ((k = 0; k < TOPO_PLANES; k++)); do
		_topo_planes_tbf "$k" || return
	done
}

topo_plane_carrier() {
	if [ "$2" != on ]; then
		ip -n pl-h1 link set "p$1" down
		return
	fi
	# down flushed the pinned neighbour
	ip -n pl-h1 link set "p$1" up &&
		_topo_pin pl-h1 "p$1" "10.81.$1.1" "pl-r$1" to-h1 "10.81.$1.254"
}

topo_plane_blackhole() {
	local port
	for port in to-h1 to-h2; do
		in_planes "r$1" tc qdisc replace dev "$port" root netem loss 100% || return
	done
}

topo_plane_restore() {
	local port
	if [ -n "$TOPO_PLANES_RATE" ]; then
		_topo_planes_tbf "$1"
	else
		for port in to-h1 to-h2; do in_planes "r$1" tc qdisc del dev "$port" root 2>/dev/null; done
		return 0
	fi
}

topo_planes_stats() {
	local k
	for ((k = 0; k < TOPO_PLANES; k++)); do
		in_planes "r$k" tc -s qdisc show | awk -v k="$k" '
			/Sent/ { s += $4; d = $7; sub(/,/, "", d); dr += d }
			END { printf "%d sent %d dropped %d\n", k, s, dr }'
	done
}

topo_planes_teardown() {
	_topo_del_netns pl-
	TOPO_PLANES=0
}
