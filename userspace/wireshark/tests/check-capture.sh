#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Check metaroce.lua on any capture, e.g. one taken in the guest:
#
#   check-capture.sh MR_PCAP CAPTURE [--port N] [--require-opcodes all|HEX,...]
#                    [--sane QPN_LO-QPN_HI] [--one-case]
#   make -C userspace/wireshark check-capture PCAP=CAPTURE [ARGS="--port N ..."]
#
# Every UDP datagram from or to the MetaRoCE port (4792, or N) is decoded by
# the kernel's codec (mr_pcap read) and by tshark with metaroce.lua, and
# check-dissector.py compares the two field by field: a datagram the codec
# accepts shows exactly its fields and values, with header and payload
# lengths adding up to the UDP payload; one it refuses carries the expert
# item of its check; other frames are not MetaRoCE. IP fragments and frames
# cut short by the snaplen are skipped. pcapng is converted with editcap.
# --require-opcodes: every opcode named decoded at least once; --sane: the
# values plausible for real traffic (check-dissector.py); --one-case: the
# frames' cases as one (a long capture), the two above still apart.
# Prints KTAP and "N passed, N failed[, N skipped]"; exit 0 if all passed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lua=$(cd "$here/.." && pwd)/metaroce.lua
usage() { sed -n '4,7s/^# \{0,1\}//p' "$0" >&2; exit 2; }
[ $# -ge 2 ] || usage
tool=$1 capture=$2 name=$2
shift 2
port=4792 opts=()
while [ $# -gt 0 ]; do
	case $1 in
	--port) port=${2:?}; shift ;;
	--require-opcodes) opts+=(--require-opcodes "${2:?}"); shift ;;
	--sane) opts+=(--sane "${2:?}"); shift ;;
	--one-case) opts+=(--aggregate "the dissector agrees with the codec on every frame") ;;
	*) usage ;;
	esac
	shift
done
[ -r "$capture" ] || { echo "check-capture: cannot read $capture" >&2; exit 2; }
command -v tshark >/dev/null || { echo "check-capture: tshark is missing (apt-get install tshark)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# mr_pcap reads classic pcap only.
if [ "$(head -c 4 "$capture" | od -An -tx1 | tr -d ' ')" = 0a0d0d0a ]; then
	editcap -F pcap "$capture" "$work/capture.pcap"
	capture=$work/capture.pcap
fi
"$tool" read "$capture" "$port" >"$work/expect"
export HOME=$work XDG_CONFIG_HOME=$work/.config # no user plugins or preferences
tshark -X "lua_script:$lua" -o "metaroce.udp_port:$port" -r "$capture" -T json \
	--no-duplicate-keys >"$work/json" 2>"$work/tshark.err" || {
	cat "$work/tshark.err" >&2
	exit 1
}
if grep -q 'Lua: Error' "$work/tshark.err"; then
	cat "$work/tshark.err" >&2
	exit 1
fi
echo "# $(grep -c '^kind metaroce' "$work/expect") MetaRoCE datagrams in $(grep -c '^frame' "$work/expect") frames"
"$here/check-dissector.py" "${opts[@]}" --label "$name, port $port" "$work/expect" "$work/json"
