#!/bin/bash
# Guest /init for the selftests VM (bash, never busybox sh: its ip/tc applets
# shadow iproute2). Reads /selftests/run.conf written by selftests/host/mkrun.sh:
#   MODE=tests|demo|bench  FLAVOUR=stock|debug  TESTS="00-harness.sh ..."
#   TEST_TIMEOUT=<s per test, unless the test has a "# timeout: N" line;
#                 the whole script in demo and bench mode>
#   TIER=quick|full  quick: only the tests whose "# quick:" line names this
#                 flavour (no line: stock), exported to them as METAROCE_TIER
#   COVERAGE=0|1  1: the function profiler on metaroce.ko, its list per test
#   BENCH_* settings passed on to bench/bench.sh
#
# Output contract with the host (selftests/host/summary.awk), on ttyS0; the
# kernel log goes to ttyS1:
#   #@ init ...                      userspace reached
#   #@ test NAME                     a test script's KTAP follows (its plan
#   ...KTAP...                       counts the harness cases appended below)
#   ok N no kernel splat             harness cases: dmesg checked for BUG:,
#   ok N+1 no kmemleak report        WARNING:, KASAN..., kmemleak (debug,
#                                    full tier; the quick tier's is one
#                                    "#@ test kmemleak" section at the end)
#   #@ end NAME rc=RC secs=S
#   #@ kunit NAME ... #@ end NAME rc=RC secs=S   a KUnit module's KTAP
#   #@ coverage ... #@ end-coverage  COVERAGE=1: "TEST FUNCTION CALLS" per
#                                    function reached, "- FUNCTION" for each
#                                    one ftrace can trace
#   #@ done                          sentinel: the guest finished
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb LANG=C

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
ln -sf /proc/self/fd /dev/fd # bash process substitution needs it
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
exec </dev/null >/dev/ttyS0 2>&1

finish() {
	echo "#@ done"
	sync
	reboot -f
	sleep 10
}
trap finish EXIT

. /selftests/run.conf
echo "#@ init uptime=$(cut -d' ' -f1 /proc/uptime) kernel=$(uname -r) flavour=$FLAVOUR mode=$MODE"
hostname metaroce-vm
ip link set lo up
sysctl -qw net.core.netdev_max_backlog=10000
mount -t configfs configfs /sys/kernel/config 2>/dev/null

# Our module, if shipped, sits in extra/; depmod makes it and its aliases
# (rdma-link-metaroce) known to modprobe and request_module.
depmod -a
modprobe -a ib_uverbs rdma_ucm ib_umad veth sch_netem crc32_generic 2>/dev/null
[ "$FLAVOUR" = stock ] && modprobe -a crc32-pclmul 2>/dev/null
[ -e /sys/kernel/config ] || mount -t configfs configfs /sys/kernel/config 2>/dev/null

# links the kernel made itself (lo; dummy0, sit0 ... on the debug kernel)
BOOT_LINKS=$(cd /sys/class/net && echo *)

KMEMLEAK=/sys/kernel/debug/kmemleak
KMEMLEAK_AGE=5 # kmemleak only reports objects older than 5 s
[ -w $KMEMLEAK ] || KMEMLEAK=
# The full tier checks kmemleak after each test (two scans, about 15 s
# under KASAN and TCG); the quick tier once, after every test and KUnit
# suite: a leak is still caught, and its backtrace names where it was
# allocated, but not which test leaked it.
KMEMLEAK_EACH=
[ -z "$KMEMLEAK" ] || [ "${TIER:-full}" = quick ] || KMEMLEAK_EACH=1
SPLAT_RE='BUG:|WARNING:|KASAN|UBSAN|possible .*locking|inconsistent lock state|Call Trace|Oops|general protection|kernel BUG|blocked for more than|self-detected stall|RCU stall'

export METAROCE_TIER=${TIER:-full}

# Coverage: the function profiler (the graph tracer's, which honours
# set_ftrace_filter) counts the calls of every function of metaroce.ko.
# The filter's :mod: form names the module's functions if it is loaded,
# else those of its next load: so it is set before each test, and again by
# modprobe (an install line) whenever the module loads. A test's counts
# are read when it ends, and by an rmmod of our own (first in the tests'
# PATH) before the module goes: its records name nothing once it is gone.
TRACEFS=/sys/kernel/tracing
COVERAGE_LOG=/tmp/coverage.txt
COVERAGE_DIR=/run/coverage
coverage_start() {
	local real_rmmod
	[ "${COVERAGE:-0}" = 1 ] || return 0
	if [ ! -w $TRACEFS/function_profile_enabled ]; then
		echo "# harness: no function profiler in this kernel: no coverage"
		COVERAGE=0
		return 0
	fi
	: >$COVERAGE_LOG
	real_rmmod=$(command -v rmmod)
	mkdir -p $COVERAGE_DIR/bin /etc/modprobe.d
	# dump TEST: "TEST FUNCTION CALLS" for every function counted, all CPUs
	cat >$COVERAGE_DIR/dump <<-EOF
		#!/bin/bash
		cat $TRACEFS/trace_stat/function[0-9]* 2>/dev/null |
			awk -v t="\$1" '\$2 ~ /^[0-9]+\$/ && \$1 != "Function" { n[\$1] += \$2 } END { for (f in n) print t, f, n[f] }' \
				>>$COVERAGE_LOG
	EOF
	cat >$COVERAGE_DIR/bin/rmmod <<-EOF
		#!/bin/bash
		# the counts of the module going away, then the real rmmod
		$COVERAGE_DIR/dump "\${COVERAGE_TEST:-unknown}"
		echo 0 >$TRACEFS/function_profile_enabled
		$real_rmmod "\$@"
		rc=\$?
		echo 1 >$TRACEFS/function_profile_enabled
		exit \$rc
	EOF
	chmod 755 $COVERAGE_DIR/dump $COVERAGE_DIR/bin/rmmod
	echo "install metaroce /sbin/modprobe --ignore-install metaroce \$CMDLINE_OPTS && echo :mod:metaroce >>$TRACEFS/set_ftrace_filter" \
		>/etc/modprobe.d/metaroce-coverage.conf
	export PATH=$COVERAGE_DIR/bin:$PATH
}
coverage_begin() { # a test starts: counts from zero
	[ "${COVERAGE:-0}" = 1 ] || return 0
	echo 0 >$TRACEFS/function_profile_enabled
	echo ':mod:metaroce' >$TRACEFS/set_ftrace_filter
	echo 1 >$TRACEFS/function_profile_enabled
}
coverage_end() { # $1 test: its functions and call counts
	[ "${COVERAGE:-0}" = 1 ] || return 0
	echo 0 >$TRACEFS/function_profile_enabled # the counts stay readable
	$COVERAGE_DIR/dump "$1"
}
coverage_finish() { # the lists, and what the module offers (loaded for it)
	[ "${COVERAGE:-0}" = 1 ] || return 0
	modprobe metaroce
	grep ' \[metaroce\]$' $TRACEFS/available_filter_functions | awk '{ print "-", $1 }' >>$COVERAGE_LOG
	echo "#@ coverage functions"
	# one line per test and function, the counts of its module loads added
	awk '$1 == "-" { print; next } { n[$1 " " $2] += $3 } END { for (k in n) print k, n[k] }' $COVERAGE_LOG | sort -u
	echo "#@ end-coverage"
}

# $1 = case number: "no kernel splat", listing the offending lines on failure
check_splat() {
	local bad
	bad=$(dmesg --notime | grep -E "$SPLAT_RE" | head -n 30)
	if [ -z "$bad" ]; then
		echo "ok $1 no kernel splat"
	else
		sed 's/^/# /' <<<"$bad"
		echo "# (full kernel log in kernel.log)"
		echo "not ok $1 no kernel splat"
	fi
}

# kmemleak reports an object unreferenced in two scans in a row (the first
# records its checksum) and older than 5 s when the second starts. The first
# scan starts as the test ends, in the background while the harness tidies
# up (a scan under KASAN+TCG takes several seconds); the second at least 5 s
# after the test ended.
kmemleak_first_scan() {
	KMEMLEAK_T0=$(date +%s)
	echo scan >$KMEMLEAK &
	KMEMLEAK_PID=$!
}

# $1 = case number: "no kmemleak report" (debug kernel only), after
# kmemleak_first_scan.
check_kmemleak() {
	local rep
	wait "$KMEMLEAK_PID"
	sleep $((KMEMLEAK_AGE + KMEMLEAK_T0 - $(date +%s))) 2>/dev/null
	echo scan >$KMEMLEAK
	rep=$(cat $KMEMLEAK)
	echo clear >$KMEMLEAK
	if [ -z "$rep" ]; then
		echo "ok $1 no kmemleak report"
	else
		head -n 60 <<<"$rep" | sed 's/^/# /'
		echo "not ok $1 no kmemleak report"
	fi
}

harness_cases() { # number of cases check_after appends
	if [ -n "$KMEMLEAK_EACH" ]; then echo 2; else echo 1; fi
}

# $1 = last case number the test printed
check_after() {
	check_splat $(($1 + 1))
	[ -z "$KMEMLEAK_EACH" ] || check_kmemleak $(($1 + 2))
}

# Give the next test a clean slate even if this one did not tear down: remove
# namespaces, RDMA links, init_net links, metaroce's psk, and reset the
# policy-routing rules.
# Runs before the splat check, so a teardown that splats counts here.
reset_state() {
	local left=() d n stat pgrp cmd
	# A process a test started in a process group of its own (timeout
	# makes one) outlives the kill of the test's group; init's group is 0.
	for d in /proc/[0-9]*; do
		stat=$(cat "$d/stat" 2>/dev/null) || continue
		cmd=$(tr '\0' ' ' <"$d/cmdline" 2>/dev/null)
		read -r _ _ pgrp _ <<<"${stat##*) }"
		[ -z "$cmd" ] || [ "$pgrp" = 0 ] && continue
		left+=("process ${d#/proc/} ${cmd:0:60}")
		kill -KILL "${d#/proc/}" 2>/dev/null
	done
	for d in /run/netns/*; do [ -e "$d" ] && left+=("netns ${d##*/}"); done
	[ ${#left[@]} -eq 0 ] || ip -all netns delete
	for d in /sys/class/infiniband/*; do
		[ -e "$d" ] && rdma link del "${d##*/}" 2>/dev/null && left+=("rdma ${d##*/}")
	done
	# The module stays loaded: a key left in psk would encrypt later devices.
	d=/sys/module/metaroce/parameters/psk
	if [ -r "$d" ] && [ -n "$(cat "$d")" ]; then
		echo >"$d" && left+=("the psk module parameter")
	fi
	for d in /sys/class/net/*; do
		n=${d##*/}
		[[ " $BOOT_LINKS " == *" $n "* ]] && continue
		[ -e "$d" ] && ip link del "$n" 2>/dev/null && left+=("link $n")
	done
	if [ "$(ip -4 rule show | wc -l)" != 3 ] || [ "$(ip -6 rule show | wc -l)" != 2 ]; then
		left+=("ip rules")
		ip -4 rule flush # keeps pref 0 only
		ip -6 rule flush
		ip -4 rule show pref 0 | grep -q . || ip -4 rule add pref 0 lookup local
		ip -6 rule show pref 0 | grep -q . || ip -6 rule add pref 0 lookup local
		ip -4 rule add pref 32766 lookup main
		ip -4 rule add pref 32767 lookup default
		ip -6 rule add pref 32766 lookup main
	fi
	[ ${#left[@]} -eq 0 ] || echo "# harness: removed what $1 left behind: ${left[*]}"
}

last_case() { # last top-level case number in a KTAP log
	grep -Eo '^(not )?ok [0-9]+' "$1" | tail -n 1 | grep -Eo '[0-9]+$' || echo 0
}

run_test() {
	local path=$1 name tmo start rc log pid kernels quick
	name=$(basename "$path" .sh)
	# the quick tier runs a test on the flavours its "# quick:" line names
	if [ "$METAROCE_TIER" = quick ]; then
		quick=$(sed -n 's/^# *quick: *//p' "$path" | head -n 1)
		if [[ " ${quick:-stock} " != *" $FLAVOUR "* ]]; then
			printf '#@ test %s\nKTAP version 1\n1..0 # SKIP check-full only on the %s kernel\n#@ end %s rc=0 secs=0\n' \
				"$name" "$FLAVOUR" "$name"
			return
		fi
	fi
	# "# kernels: stock" (or "debug", or both): the flavours it runs on
	kernels=$(sed -n 's/^# *kernels: *//p' "$path" | head -n 1)
	if [ -n "$kernels" ] && [[ " $kernels " != *" $FLAVOUR "* ]]; then
		printf '#@ test %s\nKTAP version 1\n1..0 # SKIP runs on the %s kernel only\n#@ end %s rc=0 secs=0\n' \
			"$name" "$kernels" "$name"
		return
	fi
	tmo=$(sed -n 's/^# *timeout: *\([0-9]\+\).*/\1/p' "$path" | head -n 1)
	tmo=${tmo:-$TEST_TIMEOUT}
	log=/tmp/$name.ktap
	dmesg -C
	echo "#@ test $name"
	start=$(date +%s)
	# To a file, not a pipe, so a background process the test leaves behind
	# cannot hold the harness; tail streams it meanwhile. The file exists
	# before tail starts, or tail could give up on it.
	: >"$log"
	coverage_begin
	(cd /tmp && KTAP_EXTRA_CASES=$(harness_cases) COVERAGE_TEST=$name exec timeout -k 10 "$tmo" bash "$path") >>"$log" 2>&1 &
	pid=$!
	tail -s 0.1 -n +1 -f --pid=$pid "$log" 2>/dev/null &
	wait $pid
	rc=$?
	wait
	# timeout made its own process group: kill whatever the test left running
	kill -KILL -- -"$pid" 2>/dev/null
	[ $rc -eq 124 ] || [ $rc -eq 137 ] && echo "# $name: timed out after ${tmo}s"
	coverage_end "$name"
	[ -z "$KMEMLEAK_EACH" ] || kmemleak_first_scan
	reset_state "$name"
	check_after "$(last_case "$log")"
	echo "#@ end $name rc=$rc secs=$(($(date +%s) - start))"
}

# KUnit suites run at module load; forward their KTAP from the kernel log.
run_kunit() {
	local ko=$1 name start rc log
	name=$(basename "$ko" .ko)
	log=/tmp/$name.ktap
	dmesg -C
	echo "#@ kunit $name"
	start=$(date +%s)
	coverage_begin
	modprobe "$name"
	rc=$?
	coverage_end "$name"
	dmesg --notime | grep -E '^ *(KTAP version|TAP version|1\.\.[0-9]|(not )?ok [0-9]|#)' >"$log"
	cat "$log"
	modprobe -r "$name" 2>/dev/null
	[ $rc -eq 0 ] || echo "# modprobe $name failed (exit $rc)"
	[ -z "$KMEMLEAK_EACH" ] || kmemleak_first_scan
	check_after "$(last_case "$log")"
	echo "#@ end $name rc=$rc secs=$(($(date +%s) - start))"
}

if [ -n "$KMEMLEAK" ]; then
	# forget leaks from boot (older than 5 s by now): scan, clear the report
	echo scan >$KMEMLEAK
	echo clear >$KMEMLEAK
fi

case $MODE in
demo | bench)
	echo "#@ $MODE"
	timeout -k 10 "$TEST_TIMEOUT" bash "/selftests/$MODE/$MODE.sh"
	echo "#@ end $MODE rc=$?"
	;;
tests)
	coverage_start
	for t in $TESTS; do
		run_test "/selftests/tests/$t"
	done
	if [ "$FLAVOUR" = debug ]; then
		for ko in /lib/modules/"$(uname -r)"/extra/*_kunit.ko; do
			[ -e "$ko" ] && run_kunit "$ko"
		done
	fi
	if [ -n "$KMEMLEAK" ] && [ -z "$KMEMLEAK_EACH" ]; then
		start=$(date +%s)
		echo "#@ test kmemleak"
		printf 'KTAP version 1\n1..1\n'
		kmemleak_first_scan
		check_kmemleak 1
		echo "#@ end kmemleak rc=0 secs=$(($(date +%s) - start))"
	fi
	coverage_finish
	;;
esac
