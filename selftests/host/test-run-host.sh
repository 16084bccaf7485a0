#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `make host-run-test`: selftests/run --host, tested where it cannot load
# modules (this machine):
#  - it skips with exit 4 and a reason: no module support, not root, a
#    missing tool; usage errors exit 2;
#  - its cleanup between tests, with --no-module, inside a private network
#    and mount namespace (nothing it does reaches this host's network
#    setup): three stand-in tests leave namespaces, links, ip rules,
#    sysctls and a process behind, fail a case and write a kernel warning;
#    the next test sees a clean slate, what existed before survives, the
#    counts are right.
# KTAP, then "N passed, N failed[, N skipped]".
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ktap.sh"
summary() {
	echo "$KTAP_PASS passed, $KTAP_FAIL failed$([ "$KTAP_SKIP" = 0 ] || echo ", $KTAP_SKIP skipped")"
	ktap_finish
}
run=$top/selftests/run
work=$top/build/host-run-test
rm -rf "$work"
mkdir -p "$work"

ktap_plan 17

# --- skips and usage errors
out=$("$run" --host 10-link 2>&1)
rc=$?
if [ -e /proc/modules ]; then
	ktap_skip "no module support: exit 4" "this kernel has module support"
	ktap_skip "no module support: KTAP skip line and counts" "this kernel has module support"
else
	ktap_check "no module support: exit 4 (got $rc)" "$rc" -eq 4
	ktap_check "no module support: KTAP skip line naming /proc/modules, and the counts" \
		"$(grep -c -e '^1\.\.0 # SKIP .*/proc/modules is missing' -e '^0 passed, 0 failed, 1 skipped$' <<<"$out")" -eq 2 ||
		ktap_diag "$out"
fi
if command -v setpriv >/dev/null; then
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$run" --host 10-link 2>&1)
	rc=$?
	ktap_check "not root: exit 4 with the reason (got $rc)" \
		"$rc $(grep -c '^1\.\.0 # SKIP .*must run as root' <<<"$out")" = "4 1" || ktap_diag "$out"
else
	ktap_skip "not root: exit 4 with the reason" "no setpriv"
fi
# A PATH with everything but rdma.
mkdir -p "$work/path"
for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
	for f in "$d"/*; do
		[ -x "$f" ] && [ ! -e "$work/path/${f##*/}" ] && ln -s "$f" "$work/path/"
	done
done
rm -f "$work/path/rdma"
out=$(PATH=$work/path "$run" --host 10-link 2>&1)
rc=$?
ktap_check "a missing tool: exit 4 naming it (got $rc)" \
	"$rc $(grep -c '^1\.\.0 # SKIP missing tools: rdma ' <<<"$out")" = "4 1" || ktap_diag "$out"
"$run" --host --kernel debug 10-link >/dev/null 2>&1
rc1=$?
"$run" --host no-such-test >/dev/null 2>&1
rc2=$?
ktap_check "usage errors exit 2: --kernel with --host ($rc1), an unknown test ($rc2)" "$rc1 $rc2" = "2 2"

# --- the cleanup between tests, in a private network and mount namespace
tests=$work/tests
mkdir -p "$tests"
cat >"$tests/t1-mess.sh" <<EOF
#!/bin/bash
# Leaves behind what a careless test could.
. "$top/selftests/lib/ktap.sh"
ktap_plan 2
ip netns add h1
ip link add va type veth peer name vb
ip link add mrdum5 type veth peer name mrdum6
ip link add other0 type veth peer name other1
ip rule add pref 1000 lookup local && ip rule del pref 0 lookup local
ip rule add pref 100 from 10.0.1.1 iif lo lookup 100
ip rule del pref 500
sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.accept_local=1
setsid sleep 1000 >/dev/null 2>&1 &
echo \$! >"$work/sleep.pid"
sleep 1000 >/dev/null 2>&1 &
ktap_ok "made a mess"
ktap_check "the mess is there" -e /run/netns/h1 -a -e /sys/class/net/va
ktap_finish
EOF
cat >"$tests/t2-clean.sh" <<EOF
#!/bin/bash
# What t1 left is gone, and what was there before it is still there.
. "$top/selftests/lib/ktap.sh"
ktap_plan 9
ktap_check "netns h1 removed, hostns kept" "\$(ip netns list | cut -d' ' -f1 | sort | tr '\n' ' ')" = "hostns "
ktap_check "links va, vb, mrdum5, mrdum6 removed" ! -e /sys/class/net/va -a ! -e /sys/class/net/vb \
	-a ! -e /sys/class/net/mrdum5 -a ! -e /sys/class/net/mrdum6
ktap_check "links that existed before kept: hostv0, veth7 (named like the tests')" \
	-e /sys/class/net/hostv0 -a -e /sys/class/net/veth7
ktap_check "new links not named like the tests' are left alone: other0, other1" \
	-e /sys/class/net/other0 -a -e /sys/class/net/other1
ktap_check "ip rules as before" "\$(ip -4 rule show | tr -s '\t ' ' ' | tr '\n' ';')" = \
	"0: from all lookup local;500: from all lookup main;32766: from all lookup main;32767: from all lookup default;"
ktap_check "sysctls as before: rp_filter 2, accept_local 0" \
	"\$(sysctl -n net.ipv4.conf.all.rp_filter) \$(sysctl -n net.ipv4.conf.default.accept_local)" = "2 0"
if [ -e /proc/sys/net/core/netdev_max_backlog ]; then
	ktap_check "netdev_max_backlog 10000 during the run, as in the guest" "\$(sysctl -n net.core.netdev_max_backlog)" = 10000
else
	ktap_skip "netdev_max_backlog 10000 during the run" "init_net only, and this is another namespace"
fi
ktap_check "the process t1 left in a session of its own is gone" \
	"\$(tr '\0' ' ' </proc/\$(cat "$work/sleep.pid")/cmdline 2>/dev/null)" != "sleep 1000 "
ktap_check "the test programs are in /usr/local/bin" -x /usr/local/bin/mr_craft -o ! -x "$top/build/userspace/mr_craft"
ktap_finish
EOF
cat >"$tests/t3-fail.sh" <<EOF
#!/bin/bash
# A failing case and a kernel warning: both must count.
. "$top/selftests/lib/ktap.sh"
ktap_plan 2
ktap_ok "passes"
echo "WARNING: stand-in splat of the metaroce selftests harness test (not a real problem)" >/dev/kmsg
ktap_fail "fails on purpose"
ktap_finish
EOF
chmod +x "$tests"/*.sh
# By its command line: a killed sleep whose reaper is not a real init (a CI
# container) stays a zombie, which kill -0 still finds.
sleep_pid_outside() {
	[ -s "$work/sleep.pid" ] &&
		[ "$(tr '\0' ' ' </proc/"$(cat "$work/sleep.pid")"/cmdline 2>/dev/null)" = "sleep 1000 " ]
}
before_host=$(ip -o link show | cut -d: -f2 | sort; ip netns list; ls -la /usr/local/bin; ls /etc/modprobe.d)
backlog=$(sysctl -n net.core.netdev_max_backlog)

unshare --net --mount --propagation private bash -c '
	mount -t tmpfs tmpfs /run/netns 2>/dev/null || { mkdir -p /run/netns && mount -t tmpfs tmpfs /run/netns; }
	mount -t sysfs sysfs /sys # of this network namespace
	ip link set lo up
	ip netns add hostns
	ip link add hostv0 type veth peer name hostv1
	ip link add veth7 type veth peer name veth8
	ip rule add pref 500 lookup main
	sysctl -qw net.ipv4.conf.all.rp_filter=2 net.ipv4.conf.default.accept_local=0
	"$1" --host --no-module "$2"/t1-mess.sh "$2"/t2-clean.sh "$2"/t3-fail.sh
	echo "rc=$?"
	echo "after: $(ip netns list | cut -d" " -f1 | tr "\n" " ")| $(ip -o link show | awk -F": " "{ sub(/@.*/, \"\", \$2); print \$2 }" | sort | tr "\n" " ")"
	echo "rules: $(ip -4 rule show | tr -s "\t " " " | tr "\n" ";")"
	echo "rp_filter: $(sysctl -n net.ipv4.conf.all.rp_filter)"
' _ "$run" "$tests" >"$work/run.out" 2>&1
out=$(cat "$work/run.out")
ktap_diag "$(grep -E '^#|^(not )?ok|passed|^rc=|^after|^rules|^rp_filter' <<<"$out" | grep -v '^# totals')"

ktap_check "t1's mess is reported as removed" \
	"$(grep -c '^# harness: removed what t1-mess left behind: netns h1 link mrdum5 link va ip -4 rules sysctl net.ipv4.conf.all.rp_filter net.ipv4.conf.default.accept_local $' <<<"$out")" -eq 1
ktap_check "other0 and other1 are reported as left alone" \
	"$(grep -c '^# harness: left alone new links the tests do not make: other0 other1$' <<<"$out")" -eq 1
ktap_check "t1's two sleeps are reported killed" \
	"$(grep -c '^# harness: killed what t1-mess left running: \[sleep 1000 \] \[sleep 1000 \] $' <<<"$out")" -eq 1
ktap_check "t2's 9 checks of the clean slate pass (or skip where they cannot run)" \
	"$(sed -n '/^#@ test t2-clean/,/^#@ end/p' "$work/run.out" | grep -c '^ok [1-9] ')" -eq 9
ktap_check "each test gets the harness case \"no kernel splat\"" \
	"$(grep -cE '^(not )?ok [0-9]+ no kernel splat' <<<"$out")" -eq 3
ktap_check "t3's kernel warning fails its splat case, and shows" \
	"$(sed -n '/^#@ test t3-fail/,/^#@ end/p' "$work/run.out" | grep -c -e '^not ok 3 no kernel splat' -e '^# .*WARNING: stand-in splat')" -eq 2
ktap_check "the counts: 13 passed, 2 failed, 1 skipped; exit 1" \
	"$(grep -c -e '^13 passed, 2 failed, 1 skipped$' -e '^rc=1$' <<<"$out")" -eq 2
ktap_check "after the run: the namespace's own links, netns and rules as they were" \
	"$(grep -c -e '^after: hostns | hostv0 hostv1 lo other0 other1 veth7 veth8 $' \
		-e '^rules: 0: from all lookup local;500: from all lookup main;32766: from all lookup main;32767: from all lookup default;$' \
		-e '^rp_filter: 2$' <<<"$out")" -eq 3
ktap_check "netdev_max_backlog is back to $backlog" "$(sysctl -n net.core.netdev_max_backlog)" = "$backlog"
ktap_check "this host's links, netns, /usr/local/bin and modprobe.d did not change" \
	"$(ip -o link show | cut -d: -f2 | sort; ip netns list; ls -la /usr/local/bin; ls /etc/modprobe.d)" = "$before_host"
if sleep_pid_outside; then
	kill "$(cat "$work/sleep.pid")"
	ktap_fail "no process of the stand-in tests survives" "a sleep of t1-mess was still running"
else
	ktap_ok "no process of the stand-in tests survives"
fi
ktap_check "the log directory has the console and the summary" \
	-s "$top/build/selftests/latest/console.log" -a -s "$top/build/selftests/latest/summary.txt"
summary
