#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `make json-test`: mr_json (lib/metaroce.sh), the guest tests' JSON reader,
# on the host: the values it prints, and that it prints nothing and fails
# wherever python's json.load and d["key"] failed (invalid JSON, not one
# document, a missing member, a type error) or num sees no number. KTAP,
# then "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/selftests/lib/ktap.sh"
. "$top/selftests/lib/metaroce.sh"
command -v jq >/dev/null || ktap_skip_all "jq is missing (make deps)"

# yields DESC WANT JSON FILTER: mr_json FILTER on JSON prints WANT, exit 0.
yields() {
	local out rc=0
	out=$(mr_json "$4" 2>&1 <<<"$3") || rc=$?
	ktap_check "$1 ($out)" "$rc $out" = "0 $2"
}
# refuses DESC JSON FILTER: mr_json fails, with nothing on stdout.
refuses() {
	local out rc=0
	out=$(mr_json "$3" 2>/dev/null <<<"$2") || rc=$?
	ktap_check "$1 (exit $rc)" "$rc" -ne 0 -a -z "$out"
}

ktap_plan 16
dev='[{"ifname":"mrc0","paths":8,"cc":{"enabled":false,"target_delay_ns":3000000}}]'
yields "members, nested and boolean, on one line" "mrc0 8 3000000 false" "$dev" \
	'.[0] | .ifname, (.paths | num), .cc.target_delay_ns, .cc.enabled'
yields "arrays print as JSON" "[3,4]" '[{"path":3},{"path":4}]' '[.[].path]'
yields "no output at all: an empty line, not a failure" "" '[]' '.[].qpn'
yields "get: the member, or the default when absent" "done -" '[{"handshake":"done"}]' \
	'.[0] | get("handshake"; "-"), get("local_tag"; "-")'
qps='[{"type":"RC","state":"RTS","qpn":17},{"type":"UD","state":"RTS","qpn":1},{"type":"rc","state":"init","qpn":18},{"qpn":19}]'
yields "rc_rts: RC QPs in RTS only, either case" "17" "$qps" '.[] | select(rc_rts) | .qpn'
file=$(mktemp)
trap 'rm -f "$file"' EXIT
echo "$dev" >"$file"
ktap_check "a file instead of stdin" "$(mr_json '.[0].ifname' "$file" </dev/null)" = mrc0
refuses "invalid JSON" '[{"paths":8' '.[0].paths'
refuses "valid JSON with garbage after it" '[{"paths":8}] x' '.[0].paths'
refuses "two documents" '[1] [2]' 'length'
refuses "no document" '' 'length'
refuses "a missing member" "$dev" '.[0].fail_after'
refuses "a missing member among present ones" "$dev" '.[0] | .ifname, .nosuch, .paths'
refuses "an index past the end" '[]' '.[0].paths'
refuses "a type error (a number indexed by name)" '[8]' '.[0].paths'
refuses "num on a string" '[{"paths":"8"}]' '.[0].paths | num'
refuses "a member explicitly null" '[{"paths":null}]' '.[0].paths'
echo "$KTAP_PASS passed, $KTAP_FAIL failed"
ktap_finish
