#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# selftests/run --host: the guest's tests (selftests/tests/*.sh) run directly
# on this machine, as root, with no QEMU: for a kernel CI or an admin on a
# host that loads modules. See selftests/README.md, "On a host".
#
#   selftests/run --host [--module FILE.ko] [--clear-dmesg] [--kmemleak] [TEST ...]
#
# The module: the installed one (modprobe metaroce), or FILE.ko (default
# build/stock/metaroce.ko when nothing is installed and it was built for the
# running kernel) through a temporary /etc/modprobe.d/ entry, so that
# `rdma link add ... type metaroce` loads it as it loads an installed one.
# The provider and test programs: the installed ones, else build/userspace/
# (RDMAV_DRIVERS; build/userspace/mr_* over /usr/local/bin in a private
# mount namespace: the host's /usr/local/bin does not change).
#
# Around each test, as guest/init.sh does in the guest: the module is not
# loaded when it starts; after it, whatever it left is removed, but only what
# the tests make (network namespaces, RDMA devices and links that appeared
# during the test, links only if named as the tests name theirs: va, vb,
# vethN, mr*), and the ip rules, the net.ipv4/ipv6.conf.{all,default,lo}
# sysctls and the RDMA netns mode are put back as they were; then the case
# "no kernel splat" checks the kernel log written during the test (from a
# marker; --clear-dmesg clears the log before each test as the guest does),
# and with --kmemleak "no kmemleak report". At the end the host gets back
# netdev_max_backlog (set to 10000, as in the guest) and the modules loaded
# for the tests are unloaded.
#
# Skips (KTAP "1..0 # SKIP reason", exit 4) when not root, when a tool is
# missing, when the kernel has no module support (/proc/modules), when
# metaroce is already loaded (the tests unload it), or when there is no
# module for the running kernel. Ends, as the guest runner does, with
# "N passed, N failed[, N skipped]"; exit 0 if nothing failed, 1 otherwise,
# 2 on a usage error. --no-module runs without metaroce and without loading
# anything (the harness' own test, selftests/host/test-run-host.sh).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
st=$(cd "$here/.." && pwd)
top=$(cd "$st/.." && pwd)
. "$st/lib/cache.sh"

usage() { sed -n '7s/^# \{0,1\}//p' "$0"; exit "${1:-0}"; }
module_file='' clear_dmesg=0 kmemleak=0 no_module=0 private=0 tests=()
while [ $# -gt 0 ]; do
	case $1 in
	--host) ;;
	--module) module_file=${2:?--module FILE.ko}; shift ;;
	--module=*) module_file=${1#*=} ;;
	--clear-dmesg) clear_dmesg=1 ;;
	--kmemleak) kmemleak=1 ;;
	--no-module) no_module=1 ;;
	--in-private-mount-ns) private=1 ;;
	-h | --help) usage ;;
	--kernel* | --kvm | --keep | --demo | --bench | --timeout*)
		echo "selftests: --host runs the tests on this machine; $1 is for the QEMU guest" >&2
		exit 2 ;;
	-*) echo "selftests: unknown option $1" >&2; usage 2 >&2 ;;
	*) tests+=("$1") ;;
	esac
	shift
done

skip_all() {
	echo "KTAP version 1"
	echo "1..0 # SKIP $*"
	echo "selftests: skipped: $*" >&2
	echo "0 passed, 0 failed, 1 skipped"
	exit 4
}

# Test names to files, as selftests/run resolves them.
files=()
if [ ${#tests[@]} -eq 0 ]; then
	for f in "$st"/tests/*.sh; do [ -e "$f" ] && files+=("$f"); done
fi
for t in "${tests[@]}"; do
	for f in "$t" "$st/tests/$t" "$st/tests/$t.sh"; do
		[ -f "$f" ] && { files+=("$(cd "$(dirname "$f")" && pwd)/$(basename "$f")"); continue 2; }
	done
	echo "selftests: no test '$t' (looked in $st/tests)" >&2
	exit 2
done
[ ${#files[@]} -gt 0 ] || { echo "selftests: no tests found" >&2; exit 2; }

# --- can this machine run them at all?
[ "$(id -u)" = 0 ] || skip_all "the host tests must run as root (they create namespaces, links and RDMA devices)"
missing=()
for tool in ip tc rdma modprobe insmod rmmod modinfo dmesg timeout unshare mount ibv_devinfo ibv_devices; do
	command -v "$tool" >/dev/null || missing+=("$tool")
done
[ ${#missing[@]} -eq 0 ] || skip_all "missing tools: ${missing[*]} (make deps installs them)"
kver=$(uname -r)
if [ $no_module = 0 ]; then
	[ -e /proc/modules ] || skip_all "kernel $kver has no module support (/proc/modules is missing); use the QEMU guest: selftests/run"
	grep -q '^metaroce ' /proc/modules &&
		skip_all "metaroce is loaded already; the tests unload it (rmmod metaroce first)"
	if [ -z "$module_file" ] && ! modinfo metaroce >/dev/null 2>&1; then
		module_file=$top/build/stock/metaroce.ko
		[ -f "$module_file" ] && [ "$(modinfo -F vermagic "$module_file" 2>/dev/null | cut -d' ' -f1)" = "$kver" ] ||
			skip_all "no metaroce module for $kver: make install, or make KDIR=/lib/modules/$kver/build and --module build/stock/metaroce.ko"
	fi
	if [ -n "$module_file" ]; then
		module_file=$(realpath "$module_file" 2>/dev/null) && [ -f "$module_file" ] || {
			echo "selftests: --module: no such file" >&2
			exit 2
		}
		mv=$(modinfo -F vermagic "$module_file" 2>/dev/null | cut -d' ' -f1)
		[ "$mv" = "$kver" ] || {
			echo "selftests: $module_file is built for ${mv:-no kernel (not a module?)}, this is $kver" >&2
			exit 2
		}
	fi
fi

# The rest runs in a private mount namespace (see the top).
if [ $private = 0 ]; then
	args=()
	[ -z "$module_file" ] || args+=(--module "$module_file")
	[ $clear_dmesg = 0 ] || args+=(--clear-dmesg)
	[ $kmemleak = 0 ] || args+=(--kmemleak)
	[ $no_module = 0 ] || args+=(--no-module)
	exec unshare --mount --propagation slave "$0" --in-private-mount-ns "${args[@]}" "${files[@]}"
fi

logdir=$top/build/selftests/$(date +%Y%m%d-%H%M%S)-host-tests-$$
mkdir -p "$logdir" "$logdir/work"
ln -sfn "$(basename "$logdir")" "$top/build/selftests/latest"
prune_run_logs "$top/build/selftests"
console=$logdir/console.log

# --- what the host had before, to put back at the end
sysctl_snapshot() {
	sysctl -a 2>/dev/null | grep -E '^net\.ipv(4|6)\.conf\.(all|default|lo)\.|^net\.core\.netdev_max_backlog ' | sort
}
sysctl_restore() { # $1: a snapshot; puts back the keys that changed, prints them
	local line k
	while IFS= read -r line; do
		k=${line%% = *}
		sysctl -qw "$k=${line#* = }" 2>/dev/null && printf '%s ' "$k"
	done < <(comm -23 <(echo "$1") <(sysctl_snapshot))
}
rule_args() { # "1000:	from all lookup local" -> pref 1000 from all lookup local, one a line
	local line=$1
	echo "pref ${line%%:*} ${line#*:}" | sed 's/\[detached\]//g' | tr -s ' \t' '\n' | sed '/^$/d'
}
rules_restore() { # $1 -4|-6, $2 the rules before; true if something changed
	local now line changed=1
	now=$(ip "$1" rule show 2>/dev/null)
	[ "$now" = "$2" ] && return 1
	local -a args
	while IFS= read -r line; do # add the missing ones first: never no local rule
		[ -n "$line" ] || continue
		mapfile -t args < <(rule_args "$line")
		ip "$1" rule add "${args[@]}" && changed=0
	done < <(comm -23 <(sort <<<"$2") <(sort <<<"$now"))
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		mapfile -t args < <(rule_args "$line")
		ip "$1" rule del "${args[@]}" && changed=0
	done < <(comm -13 <(sort <<<"$2") <(sort <<<"$now"))
	return $changed
}
netns_mode() { rdma system show 2>/dev/null | sed -n 's/.*netns \([a-z]*\).*/\1/p'; }
host_sysctl=$(sysctl_snapshot)
host_modules=$(cut -d' ' -f1 /proc/modules 2>/dev/null | sort)
modconf=''

mnt=''
cleanup() {
	[ -z "$modconf" ] || rm -f "$modconf"
	if [ -n "$mnt" ]; then
		umount /usr/local/bin "$mnt/host" 2>/dev/null
		rm -f "$mnt"/bin/*
		rmdir "$mnt/bin" "$mnt/host" "$mnt" 2>/dev/null
	fi
	if [ $no_module = 0 ]; then
		grep -q '^metaroce ' /proc/modules 2>/dev/null && rmmod metaroce 2>/dev/null
		# what the tests loaded, newest first (modprobe -r skips those in use)
		# Modules that were not loaded before the run and nothing uses now;
		# twice, since one may hold another.
		for _ in 1 2; do
			comm -13 <(echo "$host_modules") <(cut -d' ' -f1 /proc/modules | sort) |
				xargs -r -n 1 modprobe -r -q 2>/dev/null
		done
	fi
	sysctl_restore "$host_sysctl" >/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- setup, as guest/init.sh does it
if [ $no_module = 0 ]; then
	modprobe -a ib_uverbs rdma_ucm ib_umad veth sch_netem 2>/dev/null
	if [ -n "$module_file" ]; then
		# request_module() runs modprobe in the host's root: a real file.
		deps=$(modinfo -F depends "$module_file" | tr ',' ' ')
		modconf=/etc/modprobe.d/metaroce-selftests-$$.conf
		cat >"$modconf" <<-CONF
			# Written by selftests/run --host (pid $$) for $module_file; removed when it ends.
			alias rdma-link-metaroce metaroce
			install metaroce /sbin/modprobe -a ${deps:-ib_core} && /sbin/insmod $module_file \$CMDLINE_OPTS
		CONF
	fi
fi
sysctl -qw net.core.netdev_max_backlog=10000
# libibverbs and the test programs: installed, else from build/userspace.
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
if [ ! -e "/usr/lib/$multiarch/libibverbs/libmetaroce-rdmav34.so" ] &&
	[ -e "$top/build/userspace/libmetaroce-rdmav34.so" ]; then
	export RDMAV_DRIVERS=$top/build/userspace/libmetaroce
fi
# /usr/local/bin, where the tests call our programs, gets them on top of
# its own files (links to a second view of it); in /tmp, never under a
# directory that is ever removed recursively.
progs=("$top"/build/userspace/mr_*)
if [ -e "${progs[0]}" ] && [ -d /usr/local/bin ]; then
	mnt=$(mktemp -d /tmp/metaroce-host-bin.XXXXXX)
	mkdir "$mnt/host" "$mnt/bin"
	mount --bind /usr/local/bin "$mnt/host"
	for f in "$mnt"/host/*; do [ -e "$f" ] && ln -s "$f" "$mnt/bin/"; done
	for f in "${progs[@]}"; do [ -x "$f" ] && ln -sf "$f" "$mnt/bin/"; done
	mount --bind "$mnt/bin" /usr/local/bin
else
	echo "selftests: warning: build/userspace/mr_* are not built (make userspace); tests that run them fail" >&2
fi
run_sysctl=$(sysctl_snapshot)
run_rules4=$(ip -4 rule show) run_rules6=$(ip -6 rule show 2>/dev/null)
run_netns_mode=$(netns_mode)

KMEMLEAK=/sys/kernel/debug/kmemleak
[ $kmemleak = 1 ] && [ -w $KMEMLEAK ] || KMEMLEAK=
SPLAT_RE='BUG:|WARNING:|KASAN|UBSAN|possible .*locking|inconsistent lock state|Call Trace|Oops|general protection|kernel BUG|blocked for more than|self-detected stall|RCU stall'
TEST_LINK_RE='^(va|vb|veth[0-9]+|mr[a-z0-9_]*)$'

harness_cases() { if [ -n "$KMEMLEAK" ]; then echo 2; else echo 1; fi; }

# The kernel log since this test's marker (or all of it after --clear-dmesg).
test_klog() { dmesg --notime 2>/dev/null | awk -v m="$1" 'f; index($0, m) { f = 1 }'; }

check_splat() { # $1 case number, $2 marker
	local bad
	if ! dmesg >/dev/null 2>&1; then
		echo "ok $1 no kernel splat # SKIP cannot read the kernel log"
		return
	fi
	if ! dmesg --notime | grep -qF "$2"; then
		echo "ok $1 no kernel splat # SKIP the kernel log lost the test's marker"
		return
	fi
	bad=$(test_klog "$2" | grep -E "$SPLAT_RE" | head -n 30)
	if [ -z "$bad" ]; then
		echo "ok $1 no kernel splat"
	else
		sed 's/^/# /' <<<"$bad"
		echo "# (the kernel log of the test is in ${logdir#"$top"/}/kernel.log)"
		echo "not ok $1 no kernel splat"
	fi
}

check_kmemleak() { # $1 case number: two scans 5 s apart, as in the guest
	local rep
	echo scan >$KMEMLEAK
	sleep 5
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

list_netns() { ip netns list 2>/dev/null | cut -d' ' -f1 | sort; }
# From ip, not /sys/class/net: sysfs shows the namespace that mounted it.
list_links() { ip -o link show 2>/dev/null | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | sort; }
list_dir() { (cd "$1" 2>/dev/null && printf '%s\n' *) | grep -vx '\*' | sort; }

# Remove what the test left behind (only what the tests make) and put the
# shared settings back; $1 the test, before_* the state it started from.
reset_state() {
	local left=() others=() n keys
	for n in $(comm -13 <(echo "$before_netns") <(list_netns)); do
		ip netns delete "$n" 2>/dev/null && left+=("netns $n")
	done
	for n in $(comm -13 <(echo "$before_rdma") <(list_dir /sys/class/infiniband)); do
		rdma link del "$n" 2>/dev/null && left+=("rdma $n")
	done
	for n in $(comm -13 <(echo "$before_links") <(list_links)); do
		ip link show "$n" >/dev/null 2>&1 || continue # a veth peer, gone with the other end
		if [[ $n =~ $TEST_LINK_RE ]]; then
			ip link del "$n" 2>/dev/null && left+=("link $n")
		else
			others+=("$n")
		fi
	done
	rules_restore -4 "$run_rules4" && left+=("ip -4 rules")
	rules_restore -6 "$run_rules6" && left+=("ip -6 rules")
	[ -z "$run_netns_mode" ] || [ "$(netns_mode)" = "$run_netns_mode" ] ||
		{ rdma system set netns "$run_netns_mode" 2>/dev/null; left+=("rdma netns mode"); }
	keys=$(sysctl_restore "$run_sysctl")
	[ -z "$keys" ] || left+=("sysctl $keys")
	[ $no_module = 1 ] || ! grep -q '^metaroce ' /proc/modules || rmmod metaroce 2>/dev/null ||
		left+=("metaroce would not unload")
	[ ${#left[@]} -eq 0 ] || echo "# harness: removed what $1 left behind: ${left[*]}"
	[ ${#others[@]} -eq 0 ] || echo "# harness: left alone new links the tests do not make: ${others[*]}"
}

# Processes started by the test that still run: by the marker in their
# environment (the test's process group alone misses those that setsid).
kill_leftovers() {
	local p pids=() cmds=()
	for p in /proc/[0-9]*; do
		grep -qzx "METAROCE_SELFTEST_ID=$1" "$p/environ" 2>/dev/null || continue
		pids+=("${p#/proc/}")
		cmds+=("$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null | cut -c1-40)")
	done
	[ ${#pids[@]} -gt 0 ] || return 0
	kill -KILL "${pids[@]}" 2>/dev/null
	echo "# harness: killed what ${1#*:} left running: $(printf '[%s] ' "${cmds[@]}")"
}

last_case() { grep -Eo '^(not )?ok [0-9]+' "$1" | tail -n 1 | grep -Eo '[0-9]+$' || echo 0; }

run_test() {
	local path=$1 name tmo start rc log pid marker
	name=$(basename "$path" .sh)
	tmo=$(sed -n 's/^# *timeout: *\([0-9]\+\).*/\1/p' "$path" | head -n 1)
	tmo=${tmo:-${METAROCE_TEST_TIMEOUT:-300}}
	log=$logdir/$name.ktap
	before_netns=$(list_netns) before_rdma=$(list_dir /sys/class/infiniband)
	before_links=$(list_links)
	marker="metaroce-selftests[$$]: test $name"
	[ $clear_dmesg = 0 ] || dmesg -C 2>/dev/null
	echo "$marker" >/dev/kmsg 2>/dev/null
	[ -z "$KMEMLEAK" ] || { echo scan >$KMEMLEAK; echo clear >$KMEMLEAK; }
	echo "#@ test $name"
	start=$(date +%s)
	# The log exists before tail opens it; the marker in the environment
	# finds what the test leaves running, even in a session of its own.
	: >"$log"
	(cd "$logdir/work" && KTAP_EXTRA_CASES=$(harness_cases) METAROCE_SELFTEST_ID="$$:$name" \
		exec timeout -k 10 "$tmo" bash "$path") >>"$log" 2>&1 &
	pid=$!
	tail -s 0.1 -n +1 -f --pid=$pid "$log" 2>/dev/null &
	wait $pid
	rc=$?
	wait
	kill_leftovers "$$:$name"
	[ $rc -eq 124 ] || [ $rc -eq 137 ] && echo "# $name: timed out after ${tmo}s"
	reset_state "$name"
	test_klog "$marker" >>"$logdir/kernel.log"
	check_splat $(($(last_case "$log") + 1)) "$marker"
	[ -z "$KMEMLEAK" ] || check_kmemleak $(($(last_case "$log") + 2))
	echo "#@ end $name rc=$rc secs=$(($(date +%s) - start))"
}

echo "selftests: host $(hostname) kernel $kver, ${#files[@]} test(s), module ${module_file:-$([ $no_module = 1 ] && echo none || echo installed)}, logs in ${logdir#"$top"/}" >&2
{
	echo "#@ init kernel=$kver flavour=host mode=tests"
	for f in "${files[@]}"; do
		run_test "$f"
	done
	echo "#@ done"
} 2>&1 | tee "$console" | awk '/^#@ capture /{ c = 1; print; next } /^#@ end-capture/{ c = 0; next } !c'
echo
# Captures the tests sent (lib/capture.sh), checked as in selftests/run.
"$here/captures.sh" "$console" "$logdir" | tee "$logdir/captures.log"
awk -f "$here/summary.awk" "$console" "$logdir/captures.log" | tee "$logdir/summary.txt"
exit "${PIPESTATUS[0]}"
