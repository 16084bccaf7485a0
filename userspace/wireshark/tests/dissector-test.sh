#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The dissector test (`make -C userspace/wireshark test`, `make dissector-test`):
#
#   dissector-test.sh MR_PCAP WORKDIR
#
# 1. mr_pcap writes test.pcap: every opcode with known field values over
#    IPv4 and IPv6, 42 malformed packets (one defect each, one per check of
#    the codec), one frame on another port; and the values it used.
# 2. mr_pcap reads the file back with the kernel's codec: the same values.
# 3. tshark with metaroce.lua dissects it; check-dissector.py compares every
#    field of every frame, and that each malformed one is flagged for its
#    defect alone.
# 4. The port preference: the same frames on UDP 5000 decode with
#    -o metaroce.udp_port:5000 and not without.
# 5. Fuzz: 3000 of those packets mutated at random (seed METAROCE_FUZZ_SEED,
#    default 20261201), some cut short by a snaplen: no Lua error, and each
#    agrees with the codec (the fields of those it decodes, the expert item
#    of its error for the others); one case.
# Prints KTAP per part and last "N passed, N failed"; exit 0 if all passed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lua=$(cd "$here/.." && pwd)/metaroce.lua
tool=${1:?usage: dissector-test.sh MR_PCAP WORKDIR}
work=${2:?usage: dissector-test.sh MR_PCAP WORKDIR}
mkdir -p "$work"
passed=0 failed=0

count() { # $1: output of a checker ending in "N passed, N failed"
	local p f
	read -r p f < <(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p' <<<"$1" | tail -n 1)
	passed=$((passed + ${p:-0})) failed=$((failed + ${f:-1}))
}
case_() { # $1 0|1 (ok), $2 description, rest: diagnostics
	local ok=$1 desc=$2
	shift 2
	if [ "$ok" = 0 ]; then
		passed=$((passed + 1))
		echo "ok $desc"
	else
		failed=$((failed + 1))
		printf '# %s\n' "$@"
		echo "not ok $desc"
	fi
}

# tshark without the user's or the system's plugins and preferences; a
# system-wide metaroce.lua would shadow the tree's (metaroce.lua loads once).
export HOME=$work/home XDG_CONFIG_HOME=$work/home/.config
mkdir -p "$HOME"
ws() { tshark -X "lua_script:$lua" "$@" 2>"$work/tshark.err"; }

if ! command -v tshark >/dev/null; then
	case_ 1 "tshark is installed" "tshark is missing: apt-get install tshark (userspace/packages.txt)"
	echo "$passed passed, $failed failed"
	exit 1
fi
installed=$(tshark -G plugins 2>/dev/null | awk '$1 == "metaroce.lua" { print $NF }')
if [ -n "$installed" ] && ! cmp -s "$installed" "$lua"; then
	case_ 1 "no other metaroce.lua shadows the tree's" \
		"$installed is loaded before the tree's metaroce.lua and differs from it:" \
		"reinstall (make install) or remove it"
fi

echo "# part 1-2: mr_pcap write and read back"
"$tool" write "$work/test.pcap" >"$work/test.expect" 2>"$work/mr_pcap.err"
case_ $? "mr_pcap writes the test capture" "$(cat "$work/mr_pcap.err")"
"$tool" read "$work/test.pcap" >"$work/test.decoded" 2>"$work/mr_pcap.err"
diff -u "$work/test.expect" "$work/test.decoded" >"$work/test.diff"
case_ $? "the kernel's codec decodes the capture to the values it was built from" \
	"$(head -n 20 "$work/test.diff")" "$(cat "$work/mr_pcap.err")"

echo "# part 3: tshark on the test capture"
ws -r "$work/test.pcap" -T json --no-duplicate-keys >"$work/test.json"
case_ $? "tshark loads metaroce.lua and reads the capture" "$(head -n 5 "$work/tshark.err")"
grep -q 'Lua: Error' "$work/tshark.err"
case_ $((!$?)) "no Lua error" "$(grep -A3 'Lua: Error' "$work/tshark.err")"
out=$("$here/check-dissector.py" --exact --require-opcodes all \
	--label "test.pcap, default port" "$work/test.expect" "$work/test.json")
echo "$out"
count "$out"

# JSON has raw values only: the names come from the value strings.
valid=$(grep -B2 -A1 '^kind metaroce' "$work/test.expect" | grep -c '^metaroce.version')
names=$(ws -r "$work/test.pcap" -Y 'metaroce && !_ws.malformed' -V -O metaroce |
	grep -E '^ *(Opcode|Code):')
case_ $(($(grep -cE '^ *Opcode: [A-Z_]+ \(0x[0-9a-f]{2}\)$' <<<"$names") != valid)) \
	"every valid frame's opcode shows its name ($valid frames)" "$(grep Unknown <<<"$names")"
case_ $(($(grep -cE '^ *Code: (REMOTE_ACCESS|INVALID_REQUEST|RNR) \([1-3]\)$' <<<"$names") != 3)) \
	"the three NAK codes show their names" "$(grep 'Code:' <<<"$names")"

echo "# part 4: the port preference"
"$tool" write "$work/port5000.pcap" 5000 >"$work/port5000.expect" 2>"$work/mr_pcap.err"
case_ $? "mr_pcap writes the capture on port 5000" "$(cat "$work/mr_pcap.err")"
ws -o metaroce.udp_port:5000 -r "$work/port5000.pcap" -T json --no-duplicate-keys >"$work/port5000.json"
out=$("$here/check-dissector.py" --exact --label "port 5000 with metaroce.udp_port:5000" \
	"$work/port5000.expect" "$work/port5000.json")
count "$out"
echo "$out" | tail -n 1 | sed 's/^/# port 5000, preference set: /'
"$tool" read "$work/port5000.pcap" >"$work/port5000-default.expect"
ws -r "$work/port5000.pcap" -T json --no-duplicate-keys >"$work/port5000-default.json"
out=$("$here/check-dissector.py" --label "port 5000 with the default preference" \
	"$work/port5000-default.expect" "$work/port5000-default.json")
count "$out"
echo "$out" | tail -n 1 | sed 's/^/# port 5000, default preference (nothing decodes): /'
n=$(grep -c '^kind other' "$work/port5000-default.expect")
case_ $(($(grep -c '^frame' "$work/port5000-default.expect") != n)) \
	"with the default preference no frame on port 5000 is MetaRoCE ($n frames)"

echo "# part 5: the test packets mutated at random, against the codec"
seed=${METAROCE_FUZZ_SEED:-20261201}
"$tool" fuzz "$work/fuzz.pcap" 3000 "$seed" >"$work/fuzz.expect" 2>"$work/mr_pcap.err"
case_ $? "mr_pcap writes 3000 mutated frames (seed $seed)" "$(cat "$work/mr_pcap.err")"
"$tool" read "$work/fuzz.pcap" >"$work/fuzz.decoded"
cmp -s "$work/fuzz.expect" "$work/fuzz.decoded"
case_ $? "reading them back gives what the codec said when writing"
ws -r "$work/fuzz.pcap" -T json --no-duplicate-keys >"$work/fuzz.json"
out=$("$here/check-dissector.py" --aggregate "the dissector agrees with the codec on every mutated frame" \
	"$work/fuzz.expect" "$work/fuzz.json")
echo "$out" | grep -v '^KTAP\|^1\.\.' | grep -v 'passed, .* failed'
count "$out"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
