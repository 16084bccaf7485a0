#!/bin/bash
# rdma-core's own test suite (pyverbs; Debian's python3-pyverbs, unpacked into
# the image under /usr/share/doc/rdma-core/tests) against rxe and against
# metaroce, both on veth va in one guest: `run_tests.py --dev DEV --gid IDX -v`
# for each, every test's result parsed, the pass/fail/skip table for both.
# The rule: metaroce passes every test rxe passes, except the gaps listed in
# selftests/pyverbs-gaps.txt (one test id and its reason a line); a listed
# test that passes now fails this test until its line goes, and so does every
# metaroce skip whose message that file does not explain, or explains but no
# test gives any more. Tests listed as random (metaroce passes them for some
# of the suite's random draws) are rerun RANDOM_RUNS times: all passing is stale.
# Stock kernel only: the suite waits 10 s on every completion that does not
# come (about 30 on metaroce today: 5 min), which the debug kernel (~10x
# slower per packet) would stretch past the debug stage's budget.
# timeout: 1400
# quick: stock
here=$(dirname "$0")
. "$here/../lib/ktap.sh"
. "$here/../lib/topology.sh"
. "$here/../lib/metaroce.sh"
. "$here/../lib/perftest.sh"
trap topo_teardown EXIT

mr_debug_kernel && ktap_skip_all "debug kernel: the suite's 10 s completion timeouts would take too long; runs on stock"

SUITE=/usr/share/doc/rdma-core/tests
GAPS=$here/../pyverbs-gaps.txt
SUITE_TIMEOUT=600 # per device; metaroce takes about 330 s today
RANDOM_RUNS=16     # an entry passing about half the time passes all by chance 1 in 65536
RXE=$TOPO_A_RXE MRC=mrc_a
out=/tmp/pyverbs
mkdir -p "$out"

ktap_plan 16

# pv_parse LOG: `run_tests.py -v` output -> "ID STATUS [SKIP MESSAGE]" per
# test; STATUS is pass, fail, error, skip, xfail, xpass or unknown (no result
# found). A result follows the test's "name (id)" line, on it or on a later
# line (after the docstring's first line, or output of the test itself).
pv_parse() {
	awk '
	function result(line,   r) {
		if (id == "") return
		if (match(line, /(^| \.\.\. )(ok|FAIL|ERROR|expected failure|unexpected success)$/)) {
			r = substr(line, RSTART, RLENGTH); sub(/^ \.\.\. /, "", r)
			print id, st[r]; id = ""
		} else if (match(line, /(^| \.\.\. )skipped .*$/)) {
			r = substr(line, RSTART, RLENGTH); sub(/^( \.\.\. )?skipped /, "", r)
			print id, "skip", substr(r, 2, length(r) - 2); id = ""
		}
	}
	BEGIN {
		st["ok"] = "pass"; st["FAIL"] = "fail"; st["ERROR"] = "error"
		st["expected failure"] = "xfail"; st["unexpected success"] = "xpass"
	}
	{ sub(/\r$/, "") }
	/^=+$/ && length($0) >= 70 { exit } # the failure details follow
	/^[A-Za-z_][A-Za-z0-9_]* \(tests\.[A-Za-z0-9_.]+\)/ {
		if (id != "") print id, "unknown"
		id = $2; gsub(/[()]/, "", id)
		rest = $0; sub(/^[^)]*\)/, "", rest)
		result(rest); next
	}
	{ result($0) }
	END { if (id != "") print id, "unknown" }' "$1"
}

# pv_why LOG ID: the last line of ID's traceback in the failure details
pv_why() {
	awk -v id="$2" '
	/^(ERROR|FAIL): / { cur = $3; gsub(/[()]/, "", cur); head = 1; next }
	/^(=+|-+)$/ && length($0) >= 70 {
		if (trace && cur == id) { print last; exit }
		trace = head; head = 0; last = ""; next
	}
	trace && NF { last = $0 }' "$1"
}

# pv_totals LOG: "RAN FAILURES ERRORS SKIPPED" from unittest's summary lines
pv_totals() {
	awk '/^Ran [0-9]+ tests? in/ { ran = $2 }
	/^(OK|FAILED)/ {
		f = e = s = 0
		if (match($0, /failures=[0-9]+/)) f = substr($0, RSTART + 9, RLENGTH - 9)
		if (match($0, /errors=[0-9]+/)) e = substr($0, RSTART + 7, RLENGTH - 7)
		if (match($0, /skipped=[0-9]+/)) s = substr($0, RSTART + 8, RLENGTH - 8)
		print ran, f, e, s; found = 1; exit
	}
	END { exit !found }' "$1"
}

# expect_none DESC HEADER LIST: ok if LIST is empty, else not ok showing it
expect_none() {
	if [ -z "$3" ]; then ktap_ok "$1"; else ktap_fail "$1" "$2" "$3"; fi
}

count() { awk -v s="$2" '$2 == s { n++ } END { print n + 0 }' "$1"; }

# run_suite DEV: cases "GID index" and "suite ran" and "parsed"; leaves
# $out/DEV.log and $out/DEV.res (with skip messages naming the device DEV)
declare -A PASS FAIL SKIP GID
run_suite() {
	local dev=$1 gid rc=0 start secs ran f e s
	gid=$(topo_gid_index "$dev" "$TOPO_A_IP")
	ktap_check "$dev: RoCE v2 GID index for $TOPO_A_IP (${gid:-none})" -n "$gid" || gid=1
	GID[$dev]=$gid
	start=$(date +%s)
	timeout -k 10 "$SUITE_TIMEOUT" python3 "$SUITE/run_tests.py" --dev "$dev" --gid "$gid" -v >"$out/$dev.log" 2>&1 || rc=$?
	secs=$(($(date +%s) - start))
	# skip messages may name the device
	pv_parse "$out/$dev.log" | sed "s/\\b$dev\\b/DEV/g" >"$out/$dev.res"
	read -r ran f e s < <(pv_totals "$out/$dev.log") || ran=
	if [ -n "$ran" ] && [ "$ran" -eq "$NTESTS" ] && { [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ]; }; then
		ktap_ok "$dev: the suite ran its $NTESTS tests in $secs s (exit $rc)"
	else
		ktap_fail "$dev: the suite ran its $NTESTS tests (ran ${ran:-?}, exit $rc after $secs s; 124: timed out)" \
			"$(tail -n 30 "$out/$dev.log")"
	fi
	PASS[$dev]=$(count "$out/$dev.res" pass)
	FAIL[$dev]=$(($(count "$out/$dev.res" fail) + $(count "$out/$dev.res" error) + $(count "$out/$dev.res" xpass) + $(count "$out/$dev.res" unknown)))
	SKIP[$dev]=$(count "$out/$dev.res" skip)
	ktap_check "$dev: every test's result parsed (unittest: $ran tests, $f failures, $e errors, $s skipped)" \
		"$(wc -l <"$out/$dev.res") $(count "$out/$dev.res" fail) $(count "$out/$dev.res" error) ${SKIP[$dev]} unknown:$(count "$out/$dev.res" unknown)" \
		= "$ran $f $e $s unknown:0"
}

ktap_run "veth va/vb with rxe devices $TOPO_A_RXE, $TOPO_B_RXE" eval 'topo_rxe_pair && topo_rxe_add'
ktap_run "metaroce device $MRC on $TOPO_A_IF too" mr_add - "$MRC" "$TOPO_A_IF"

python3 "$SUITE/run_tests.py" --list-tests 2>/dev/null | grep -E '^tests\.' | sort >"$out/list"
NTESTS=$(wc -l <"$out/list")
ktap_check "the suite lists its tests ($NTESTS)" "$NTESTS" -gt 0

run_suite "$RXE"
nodev=$(mr_stat "$MRC" rx_drop_no_dev)
run_suite "$MRC"
ktap_diag "$MRC rx_drop_no_dev during its suite: $nodev -> $(mr_stat "$MRC" rx_drop_no_dev)"
ktap_check "rxe passes tests (${PASS[$RXE]}), so the comparison means something" "${PASS[$RXE]}" -gt 0

ktap_diag "$(printf '%-10s %5s %5s %5s\n' "pyverbs" pass fail skip
	for d in "$RXE" "$MRC"; do printf '%-10s %5d %5d %5d\n' "$d" "${PASS[$d]}" "${FAIL[$d]}" "${SKIP[$d]}"; done)"

# The tracked list: "gap | ID | REASON", "random | ID | REASON" and
# "skip | MESSAGE | REASON".
field() { awk -F' [|] ' -v k="$1" -v n="$2" '$1 == k { print $n }' "$GAPS"; }
field gap 2 | sort >"$out/gaps"
field random 2 | sort >"$out/random"
field skip 2 | sort >"$out/skip-reasons"
sort -u "$out/gaps" "$out/random" >"$out/listed"
bad=$({
	awk -F' [|] ' '/^(#|$)/ { next }
		NF != 3 || ($1 != "gap" && $1 != "random" && $1 != "skip") || $3 ~ /^ *$/ { print "not KIND | KEY | REASON: " $0; next }
		$1 != "skip" && $2 !~ /^tests\.[A-Za-z0-9_]+\.[A-Za-z0-9_]+\.[A-Za-z0-9_]+$/ { print "not one test id: " $0 }' "$GAPS"
	{ field gap 2; field random 2; field skip 2; } | sort | uniq -d | sed 's/^/duplicate: /'
})
expect_none "$(basename "$GAPS"): $(wc -l <"$out/gaps") gaps, $(wc -l <"$out/random") random and $(wc -l <"$out/skip-reasons") skip messages, each one test id or message with a reason" \
	"malformed:" "$bad"

passes() { awk '$2 == "pass" { print $1 }' "$1" | sort; }
passes "$out/$RXE.res" >"$out/rxe-pass"
passes "$out/$MRC.res" >"$out/mrc-pass"

# Regressions: rxe passes, metaroce does not, and the list does not say why.
regress=$(comm -23 "$out/rxe-pass" "$out/mrc-pass" | comm -23 - "$out/listed" | while read -r id; do
	echo "$id: $(awk -v id="$id" '$1 == id { $1 = ""; print substr($0, 2) }' "$out/$MRC.res") $(pv_why "$out/$MRC.log" "$id")"
done)
expect_none "metaroce passes every test rxe passes, but for $(wc -l <"$out/listed") listed gaps" \
	"rxe passes these, metaroce does not, and $(basename "$GAPS") does not list them:" "$regress"

stale=$({
	comm -12 "$out/gaps" "$out/mrc-pass" | sed 's/$/: passes on metaroce now; remove it from the list/'
	comm -23 "$out/listed" "$out/rxe-pass" | comm -12 - "$out/list" | sed 's/$/: rxe does not pass it; not a gap/'
	comm -23 "$out/listed" "$out/list" | sed 's/$/: no such test in the suite/'
})
expect_none "no stale gap entries" "stale:" "$stale"

# Random entries: stale when every rerun passes. One run of the suite, each
# listed test named RANDOM_RUNS times (unittest runs every name given).
: >"$out/random-runs"
if [ -s "$out/random" ]; then
	mapfile -t reruns < <(for _ in $(seq "$RANDOM_RUNS"); do cat "$out/random"; done)
	timeout -k 10 300 python3 "$SUITE/run_tests.py" --dev "$MRC" --gid "${GID[$MRC]}" -v \
		"${reruns[@]}" >"$out/random.log" 2>&1
	pv_parse "$out/random.log" >"$out/random-runs"
fi
while read -r id; do
	echo "$id $(awk -v id="$id" '$1 == id && $2 == "pass" { n++ } END { print n + 0 }' "$out/random-runs")"
done <"$out/random" >"$out/random-passes"
ktap_diag "random entries, passes in $RANDOM_RUNS reruns on $MRC:"
ktap_diag "$(cat "$out/random-passes")"
stale=$(awk -v n="$RANDOM_RUNS" '$2 >= n { print $1 ": passed all " n " reruns; not random any more" }' "$out/random-passes")
expect_none "no stale random entries ($RANDOM_RUNS reruns each)" "stale:" "$stale"

# Skips on metaroce of tests rxe does not pass either: the message must be explained.
comm -23 "$out/list" "$out/rxe-pass" >"$out/rxe-nopass"
awk '$2 == "skip" { id = $1; $1 = $2 = ""; print id "\t" substr($0, 3) }' "$out/$MRC.res" | sort >"$out/mrc-skips"
join -t "$(printf '\t')" "$out/rxe-nopass" "$out/mrc-skips" | cut -f2 | sort | uniq -c | sort -rn >"$out/mrc-skip-messages"
unexplained=$(awk '{ $1 = ""; print substr($0, 2) }' "$out/mrc-skip-messages" | sort | comm -23 - "$out/skip-reasons")
expect_none "every metaroce skip of a test rxe does not pass either has a listed reason ($(wc -l <"$out/mrc-skip-messages") messages)" \
	"skip messages not in $(basename "$GAPS"):" "$unexplained"
stale=$(awk '{ $1 = ""; print substr($0, 2) }' "$out/mrc-skip-messages" | sort | comm -13 - "$out/skip-reasons")
expect_none "no stale skip messages" "no metaroce skip gives these any more:" "$stale"

ktap_diag "gaps by reason:"
ktap_diag "$(field gap 3 | sort | uniq -c | sort -rn)"
ktap_diag "metaroce skips shared with rxe, by message:"
ktap_diag "$(cat "$out/mrc-skip-messages")"
for d in "$RXE" "$MRC"; do
	ktap_diag "$d fails:"
	ktap_diag "$(awk '$2 != "pass" && $2 != "skip"' "$out/$d.res" | while read -r id st; do echo "$id $st: $(pv_why "$out/$d.log" "$id")"; done)"
done

ktap_finish
