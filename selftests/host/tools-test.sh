#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `make tools-test`: the host tests of the tools, one closing count.
#
#   selftests/host/tools-test.sh TARGET...    e.g. dissector-test dkms-test
#
# Runs `make TARGET` for each (logs in build/tools-test/TARGET.log), reads
# the "N passed, N failed[, N skipped]" it ends with (none: one failure),
# and ends with the sum in the same form; exit 0 if nothing failed.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
logs=$top/build/tools-test
mkdir -p "$logs"
passed=0 failed=0 skipped=0
for target in "$@"; do
	echo "== $target"
	make -s -C "$top" --no-print-directory "$target" 2>&1 | tee "$logs/$target.log"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$logs/$target.log" | tail -n 1)
	if [ -z "$line" ]; then
		echo "== $target: no count (see ${logs#"$top"/}/$target.log)"
		failed=$((failed + 1))
		continue
	fi
	read -r p f s < <(sed -E 's/^([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?.*/\1 \2 \4/' <<<"$line")
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + ${s:-0}))
	echo "== $target: $line"
done
echo "$passed passed, $failed failed$([ "$skipped" = 0 ] || echo ", $skipped skipped")"
[ "$failed" -eq 0 ]
