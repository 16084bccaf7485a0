# KTAP output helpers for guest-side test scripts (bash). Source it:
#
#   . "$(dirname "$0")/../lib/ktap.sh"
#   ktap_plan 3
#   ktap_run  "veth pair exists"    ip link show veth1
#   ktap_run_fail "no such device"  "Cannot find device" ip link show nope
#   ktap_skip "IPv6 path"           "kernel has no IPv6"
#   ktap_finish                     # prints totals, exits 1 if a case failed
#
# Functions (the case number is counted for you):
#   ktap_plan N               "KTAP version 1" and "1..N". The harness appends
#                             its own cases (no kernel splat, ...) after yours
#                             and tells this lib how many via KTAP_EXTRA_CASES,
#                             so plan only your own cases.
#   ktap_skip_all REASON      whole script skipped ("1..0 # SKIP REASON"); exits 0
#   ktap_ok DESC              a passing case
#   ktap_fail DESC [LINE...]  a failing case; LINEs are printed before it as
#                             "# " diagnostics (KTAP puts diagnostics first)
#   ktap_skip DESC REASON     a skipped case ("ok N DESC # SKIP REASON")
#   ktap_result RC DESC       ok if RC is 0, else not ok
#   ktap_diag TEXT...         a "# TEXT" diagnostic line (multi-line ok)
#   ktap_run DESC CMD...      runs CMD (stdout+stderr captured); ok if it exits
#                             0, else not ok with its exit status and output
#   ktap_run_fail DESC ERE CMD...
#                             expects CMD to fail AND its output to match the
#                             extended regex ERE (e.g. 'Operation not supported')
#   ktap_check DESC EXPR...   ok if `[[ EXPR ]]`-style test passes:
#                             ktap_check "mtu is 9000" "$mtu" -eq 9000
#   ktap_todo DESC REASON EXPR...
#                             an expectation not required yet (KTAP "# TODO
#                             REASON"): "ok" or "not ok" as EXPR (like
#                             ktap_check) says, never a failure of the test;
#                             make it a ktap_check to require it
#   ktap_relay N NAME CMD...  runs CMD, program NAME printing N KTAP cases of
#                             its own, and relays them as cases of this test
#                             (a crash counts its missing cases as failed;
#                             its "# TODO" cases go through ktap_todo),
#                             then one more case: NAME exited 0. Plan N + 1.
#   ktap_finish               checks the count against the plan, prints
#                             "# totals: pass:P fail:F skip:S", exits 1 on failure
# A case that took a second or more since the one before gets a diagnostic
# "# took S s" first: the CI budget is spent per case.
# Variables: KTAP_PASS KTAP_FAIL KTAP_SKIP KTAP_TODO (counts), KTAP_LAST_OUTPUT (output
# of the last ktap_run / ktap_run_fail).

KTAP_N=0
KTAP_PLANNED=
KTAP_PASS=0
KTAP_FAIL=0
KTAP_SKIP=0
KTAP_TODO=0
KTAP_LAST_OUTPUT=
KTAP_T0=${EPOCHREALTIME/./}

# The time since the last case, when it is a second or more.
ktap__took() {
	local now=${EPOCHREALTIME/./}
	local us=$((now - KTAP_T0))

	KTAP_T0=$now
	[ "$us" -lt 1000000 ] || printf '# took %d.%d s\n' $((us / 1000000)) $((us / 100000 % 10))
}

ktap_plan() {
	KTAP_PLANNED=$1
	echo "KTAP version 1"
	echo "1..$(($1 + ${KTAP_EXTRA_CASES:-0}))"
}

ktap_skip_all() {
	echo "KTAP version 1"
	echo "1..0 # SKIP $*"
	exit 0
}

ktap_diag() {
	local line
	while IFS= read -r line; do echo "# $line"; done <<<"$*"
}

ktap_ok() {
	ktap__took
	KTAP_N=$((KTAP_N + 1)) KTAP_PASS=$((KTAP_PASS + 1))
	echo "ok $KTAP_N $1"
}

ktap_fail() {
	local desc=$1
	shift
	local line
	ktap__took
	for line in "$@"; do ktap_diag "$line"; done
	KTAP_N=$((KTAP_N + 1)) KTAP_FAIL=$((KTAP_FAIL + 1))
	echo "not ok $KTAP_N $desc"
}

ktap_skip() {
	ktap__took
	KTAP_N=$((KTAP_N + 1)) KTAP_SKIP=$((KTAP_SKIP + 1))
	echo "ok $KTAP_N $1 # SKIP ${2:-}"
}

ktap_result() {
	if [ "$1" -eq 0 ]; then ktap_ok "$2"; else ktap_fail "$2" "exit status $1"; fi
}

ktap_run() {
	local desc=$1 rc=0
	shift
	KTAP_LAST_OUTPUT=$("$@" 2>&1) || rc=$?
	if [ "$rc" -eq 0 ]; then
		ktap_ok "$desc"
	else
		ktap_fail "$desc" "\$ $*" "exit status $rc" "${KTAP_LAST_OUTPUT:0:4000}"
	fi
	return "$rc"
}

ktap_run_fail() {
	local desc=$1 ere=$2 rc=0
	shift 2
	KTAP_LAST_OUTPUT=$("$@" 2>&1) || rc=$?
	if [ "$rc" -eq 0 ]; then
		ktap_fail "$desc" "\$ $*" "succeeded but was expected to fail" "${KTAP_LAST_OUTPUT:0:4000}"
		return 1
	elif ! grep -Eq -- "$ere" <<<"$KTAP_LAST_OUTPUT"; then
		ktap_fail "$desc" "\$ $*" "failed (exit $rc) as expected, but output does not match /$ere/" "${KTAP_LAST_OUTPUT:0:4000}"
		return 1
	fi
	ktap_ok "$desc"
}

ktap_check() {
	local desc=$1
	shift
	if test "$@"; then
		ktap_ok "$desc"
	else
		ktap_fail "$desc" "check failed: test $*"
		return 1
	fi
}

ktap_todo() {
	local desc=$1 reason=$2 res=ok
	shift 2
	test "$@" || res="not ok"
	ktap__took
	KTAP_N=$((KTAP_N + 1)) KTAP_TODO=$((KTAP_TODO + 1))
	echo "$res $KTAP_N $desc # TODO $reason"
}

ktap_relay() {
	local want=$1 name=$2 out rc=0 line n=0 rest
	shift 2
	out=$("$@" 2>&1) || rc=$?
	while IFS= read -r line; do
		case $line in
		"ok "*" # TODO "* | "not ok "*" # TODO "*)
			n=$((n + 1)) rest=${line#*ok [0-9]* }
			ktap_todo "${rest% \# TODO *}" "${rest##* \# TODO }" "${line%%ok *}" = "" ;;
		"ok "*) n=$((n + 1)); ktap_ok "${line#ok [0-9]* }" ;;
		"not ok "*) n=$((n + 1)); ktap_fail "${line#not ok [0-9]* }" ;;
		"#"* | "Bail out!"*) echo "# ${line#\# }" ;;
		esac
	done <<<"$out"
	while [ "$n" -lt "$want" ]; do
		n=$((n + 1))
		ktap_fail "$name case $n did not run" "exit status $rc"
	done
	ktap_check "$name exited 0" "$rc" -eq 0
}

ktap_finish() {
	if [ -n "$KTAP_PLANNED" ] && [ "$KTAP_N" -ne "$KTAP_PLANNED" ]; then
		ktap_diag "planned $KTAP_PLANNED cases but ran $KTAP_N"
		KTAP_FAIL=$((KTAP_FAIL + 1))
	fi
	echo "# totals: pass:$KTAP_PASS fail:$KTAP_FAIL skip:$KTAP_SKIP$([ "$KTAP_TODO" -eq 0 ] || echo " todo:$KTAP_TODO")"
	[ "$KTAP_FAIL" -eq 0 ]
	exit
}
