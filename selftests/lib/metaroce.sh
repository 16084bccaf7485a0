# metaroce helpers for guest-side test scripts (bash). Source after
# ktap.sh and topology.sh.
#
#   mr_two_hosts [MTU]     topo_two_hosts plus a metaroce device on each host:
#                          mrc0 on veth1 (created from h1), mrc1 on veth2 (h2)
#   mr_pair                the start of a transport test, two cases: "two
#                          hosts with mrc0 (h1) and mrc1 (h2)" (mr_two_hosts
#                          1500) and their IPv4 RoCE v2 GID indexes, which it
#                          leaves in gid1 and gid2
#   mr_add NS DEV NETDEV   `rdma link add DEV type metaroce netdev NETDEV` in NS
#                          (NS "-" is init_net)
#   mr_unload              remove every metaroce device and the module
#   mr_port_state DEV      PORT_ACTIVE / PORT_DOWN ... as ibv_devinfo shows it
#   mr_devinfo_field DEV FIELD   one field of `ibv_devinfo -v -d DEV`
#   mr_wait_gone DEV [S]   wait up to S seconds (5) for DEV to disappear
#   mr_exists DEV          true if the RDMA device DEV exists
#   mr_dmesg_has ERE       true if the kernel log matches ERE
#   mr_stat DEV NAME       one counter of `rdma statistic show link DEV/1`
#                          (read from sysfs hw_counters when visible: no
#                          process to start, ~0.6 s each on the debug kernel)
#   mr_stats DEV           all of them, one "NAME VALUE" per line
#   mr_sum NAME [DEV...]   a counter summed over DEVs (default mrc0 mrc1)
#   mr_json FILTER [FILE]  the outputs of the jq FILTER over the JSON in FILE
#                          (or stdin) on one line, space-separated (strings
#                          raw, arrays as JSON). As strict as python's
#                          json.load and d["key"]: nothing printed and exit
#                          status non-zero on invalid JSON, not exactly one
#                          document, a jq error or any null output (what jq
#                          gives for a missing member). FILTER may use
#                            num             the input, an error if no number
#                            get(KEY; DEF)   member KEY, DEF if absent
#                                            (python's dict.get)
#                            rc_rts          true for an RC QP in RTS of
#                                            `metaroce -j qp show`
#                          (jq, not python: far cheaper to start on the
#                          debug kernel)
#   mr_debug_kernel        true on the debug kernel (KASAN, kmemleak)
#   scaled N               N, or N/10 on the debug kernel (KASAN and kmemleak
#                          under TCG move about 1000 packets a second)
#   mr_verify_wait PID LOG DESC
#                          the case DESC: mr_verify, started in the background
#                          as PID with its output in LOG, exited 0 and
#                          reported no failed case
#   mr_quick               true in the quick tier (`make check`, METAROCE_TIER
#                          quick), false in the full one (`make check-full`)
#   tiered FULL QUICK      FULL in the full tier, QUICK in the quick one: a
#                          loop's count, a run's seconds
#   mr_full_only DESC CMD...  CMD in the full tier; in the quick one the case
#                          DESC is skipped ("check-full only"): for long
#                          variants whose paths a shorter case takes too
#   mr_smoke               true in the debug kernel's smoke set (the quick
#                          tier on the debug kernel)
#   mr_not_smoke DESC CMD...  CMD, but in the smoke set the case DESC is
#                          skipped ("check-full only on the debug kernel"):
#                          for variants whose paths the smoke run takes in
#                          another case (selftests/README.md, "Tiers")
#   mr_skip_cases N DESC REASON  N skipped cases "DESC (i of N)": the
#                          cases of a block a tier leaves out
#   mr_on_stock DESC CMD...  CMD on the stock kernel; on the debug one the
#                          case DESC is skipped: for tool runs (tens of
#                          seconds each there) whose kernel paths other
#                          cases already take on the debug kernel
#   mr_psk KEY             the module parameter psk (64 hex digits, "" for
#                          none), which devices created afterwards take as
#                          their pre-shared key; loads the module first
#                          if it is not loaded. Tests that set it put ""
#                          back when they end: the module stays loaded
#                          between tests. MR_PSK is the parameter's file.
#   mr_netns_mode MODE     `rdma system set netns MODE` (shared/exclusive),
#                          retried for 10 s: ib_core refuses while any other
#                          namespace exists, and deleted ones go away late

mr_add() {
	local ns=$1 dev=$2 ndev=$3
	if [ "$ns" = - ]; then
		rdma link add "$dev" type metaroce netdev "$ndev"
	else
		ip netns exec "$ns" rdma link add "$dev" type metaroce netdev "$ndev"
	fi
}

mr_two_hosts() {
	topo_two_hosts "$@" || return
	mr_add "$TOPO_H1" mrc0 "$TOPO_H1_IF" && mr_add "$TOPO_H2" mrc1 "$TOPO_H2_IF"
}

mr_pair() {
	ktap_run "two hosts with mrc0 (h1) and mrc1 (h2)" mr_two_hosts 1500
	gid1=$(topo_gid_index mrc0 "$TOPO_H1_IP")
	gid2=$(topo_gid_index mrc1 "$TOPO_H2_IP")
	ktap_check "IPv4 RoCE v2 GID indexes (mrc0 $gid1, mrc1 $gid2)" -n "$gid1" -a -n "$gid2"
}

mr_exists() { [ -e "/sys/class/infiniband/$1" ]; }

mr_wait_gone() {
	local dev=$1 tries=$((${2:-5} * 10))
	while mr_exists "$dev" && [ "$tries" -gt 0 ]; do
		sleep 0.1
		tries=$((tries - 1))
	done
	! mr_exists "$dev"
}

# Module exit removes every metaroce device itself.
mr_unload() {
	if grep -q '^metaroce ' /proc/modules; then
		rmmod metaroce || return
	fi
	! grep -q '^metaroce ' /proc/modules
}

mr_devinfo_field() {
	ibv_devinfo -v -d "$1" 2>/dev/null | awk -v f="$2:" '$1 == f { $1 = ""; sub(/^ +/, ""); print; exit }'
}

mr_port_state() { mr_devinfo_field "$1" state | cut -d' ' -f1; }

mr_dmesg_has() { dmesg | grep -Eq -- "$1"; }

mr_netns_mode() {
	local tries=50
	until rdma system set netns "$1" 2>/dev/null; do
		tries=$((tries - 1))
		[ "$tries" -gt 0 ] || return 1
		sleep 0.2
	done
}

mr_stats() {
	rdma statistic show link "$1/1" |
		awk '{ for (i = 3; i < NF; i += 2) print $i, $(i + 1) }'
}

mr_stat() {
	local f=/sys/class/infiniband/$1/ports/1/hw_counters/$2 v
	if [ -r "$f" ] && read -r v <"$f"; then
		echo "$v"
		return
	fi
	mr_stats "$1" | awk -v n="$2" '$1 == n { print $2; f = 1 } END { exit !f }'
}

mr_sum() {
	local name=$1 dev v sum=0 devs
	shift
	devs=("$@")
	[ $# -gt 0 ] || devs=(mrc0 mrc1)
	for dev in "${devs[@]}"; do
		v=$(mr_stat "$dev" "$name")
		sum=$((sum + ${v:-0}))
	done
	echo "$sum"
}

MR_JSON_DEFS='
def num: if type == "number" then . else error("not a number: \(tojson)") end;
def get($k; $default): if has($k) then .[$k] else $default end;
def rc_rts: (get("type"; "") | ascii_downcase) == "rc" and
	(get("state"; "") | ascii_downcase) == "rts";
'
mr_json() {
	# -s: the whole input first, so invalid JSON prints no partial result.
	jq -r -s "$MR_JSON_DEFS"'
		if length == 1 then .[0] else error("\(length) JSON documents, not one") end |
		['"$1"'] |
		if any(.[]; . == null) then error("null (a missing member?) in \(tojson)")
		else map(tostring) | join(" ") end' "${@:2}"
}

mr_debug_kernel() { [ -e /sys/kernel/debug/kmemleak ]; }

scaled() {
	if mr_debug_kernel; then echo $(($1 / 10 > 0 ? $1 / 10 : 1)); else echo "$1"; fi
}

mr_verify_wait() {
	local pid=$1 log=$2 desc=$3 rc=0
	wait "$pid" || rc=$?
	ktap_diag "$(tail -n 3 "$log")"
	if [ "$rc" -eq 0 ] && ! grep -q '^not ok' "$log"; then
		ktap_ok "$desc"
	else
		ktap_fail "$desc" "exit status $rc" "$(grep -m5 '^not ok' "$log")"
	fi
}

MR_PSK=/sys/module/metaroce/parameters/psk
mr_psk() {
	[ -e "$MR_PSK" ] || modprobe metaroce || return
	echo "$1" >"$MR_PSK"
}

mr_quick() { [ "${METAROCE_TIER:-full}" = quick ]; }

tiered() { if mr_quick; then echo "$2"; else echo "$1"; fi; }

mr_full_only() {
	local desc=$1
	shift
	if mr_quick; then ktap_skip "$desc" "check-full only"; else "$@"; fi
}

mr_smoke() { mr_quick && mr_debug_kernel; }

mr_skip_cases() {
	local i
	for i in $(seq "$1"); do ktap_skip "$2 ($i of $1)" "$3"; done
}

mr_not_smoke() {
	local desc=$1
	shift
	if mr_smoke; then ktap_skip "$desc" "check-full only on the debug kernel"; else "$@"; fi
}

mr_on_stock() {
	local desc=$1
	shift
	if mr_debug_kernel; then ktap_skip "$desc" "stock kernel only"; else "$@"; fi
}
