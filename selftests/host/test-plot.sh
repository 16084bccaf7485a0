#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `make plot-test`: plot-bench.sh on the README's bench table (a copy in
# testdata/bench-200911a.md, in the form selftests/run --bench saves it),
# on README.md itself, on a table with failed runs, on an incast CSV, and
# on input with nothing to draw. Checks the numbers it extracts against the
# table, that the PNGs are PNGs of the planned size and the SVGs are XML
# with their titles and legends. KTAP, then "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/selftests/lib/ktap.sh"
summary() {
	echo "$KTAP_PASS passed, $KTAP_FAIL failed$([ "$KTAP_SKIP" = 0 ] || echo ", $KTAP_SKIP skipped")"
	ktap_finish
}
plot=$here/plot-bench.sh
fixture=$here/testdata/bench-200911a.md
out=$top/build/plot-test
rm -rf "$out"
mkdir -p "$out"

png_size() { # WIDTHxHEIGHT from the IHDR chunk, or "not a PNG"
	if [ "$(head -c 8 "$1" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; then
		od -An -tu1 -j16 -N8 "$1" | awk '{ printf "%dx%d", $1 * 16777216 + $2 * 65536 + $3 * 256 + $4, $5 * 16777216 + $6 * 65536 + $7 * 256 + $8 }'
	else
		echo "not a PNG"
	fi
}
svg_texts() { # the text of an SVG's <text> elements, one a line; fails unless XML
	python3 -c '
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
for e in root.iter():
    if e.tag.endswith("text"):
        t = "".join(e.itertext()).strip()
        if t: print(t)
' "$1"
}

if ! command -v gnuplot >/dev/null; then
	printf 'KTAP version 1\n1..0 # SKIP gnuplot is missing (apt-get install gnuplot-nox)\n0 passed, 0 failed, 1 skipped\n'
	exit 4
fi
ktap_plan 14

ktap_run "plot-bench.sh on the README's table" "$plot" --data "$out/data" "$fixture" "$out" ||
	ktap_diag "$KTAP_LAST_OUTPUT"
files=$(cd "$out" && ls bench-200911a-* 2>/dev/null | tr '\n' ' ')
ktap_check "throughput and latency, SVG and PNG, nothing else ($files)" \
	"$files" = "bench-200911a-latency.png bench-200911a-latency.svg bench-200911a-throughput.png bench-200911a-throughput.svg "
ktap_check "latest-* links to them" "$(readlink "$out/latest-throughput.png") $(readlink "$out/latest-latency.svg")" = \
	"bench-200911a-throughput.png bench-200911a-latency.svg"
# The numbers drawn, against the table (README.md, "Benchmark").
ktap_check "ops in table order: write send read" "$(tr '\n' ' ' <"$out/data/ops" 2>/dev/null)" = "write send read "
ktap_check "write at 1%: metaroce 0.2656, rxe 0.0351, TCP 0.6710" \
	"$(sed -n 3p "$out/data/throughput-write.tsv" 2>/dev/null)" = "$(printf '1\t0.2656\t0.0351\t0.6710')"
ktap_check "read at 10%: metaroce 0.2226, rxe 0.0038, TCP 0.0059" \
	"$(sed -n 5p "$out/data/throughput-read.tsv" 2>/dev/null)" = "$(printf '10\t0.2226\t0.0038\t0.0059')"
ktap_check "latency at 0.0%: 56.92/63.73 and 18.66/23.47, five levels" \
	"$(head -n 1 "$out/data/latency.tsv" 2>/dev/null) $(wc -l <"$out/data/latency.tsv" 2>/dev/null)" = \
	"$(printf '0.0\t56.92\t63.73\t18.66\t23.47') 5"
ktap_check "the PNGs are PNGs of the planned sizes" \
	"$(png_size "$out/bench-200911a-throughput.png") $(png_size "$out/bench-200911a-latency.png")" = "1260x470 760x470"
texts=$(svg_texts "$out/bench-200911a-throughput.svg" 2>&1; svg_texts "$out/bench-200911a-latency.svg" 2>&1)
ktap_check "the SVGs are XML with every panel's title, the legends and the table's line" \
	"$(grep -cxE 'ib_(write|send|read)_bw \(TCP: iperf3, 1 stream\)|metaroce|rxe|TCP|(metaroce|rxe) (typical|average)|make bench: stock kernel 6.1.0-57-amd64, commit 200911a, 2026-11-30 \(README.md.s table\)' <<<"$texts")" -eq 12 ||
	ktap_diag "$texts"

ktap_run "plot-bench.sh on README.md itself" "$plot" "$top/README.md" "$out/readme"
# Failed runs show as "n/a (error)" and "n/a (clock)": gaps, not failures.
sed -e 's/| 0.0351 |/| n\/a (error) |/' -e 's/| 46.90\/52.82 |/| n\/a (clock) |/' "$fixture" >"$out/with-gaps.md"
ktap_run "a table with failed runs still plots" "$plot" --data "$out/gaps" "$out/with-gaps.md" "$out/gaps-plots"
ktap_check "their cells are gaps (NaN)" \
	"$(sed -n 3p "$out/gaps/throughput-write.tsv" | cut -f3) $(sed -n 2p "$out/gaps/latency.tsv" | cut -f2,3 | tr '\t' ,)" = "NaN NaN,NaN"
{
	echo "time_s,sender 1,sender 2,sender 3"
	for t in $(seq 0 10); do echo "$t,$(awk -v t="$t" 'BEGIN { printf "%.3f,%.3f,%.3f", 0.2 + t / 50, 0.4 - t / 100, 0.4 - t / 100 }')"; done
} >"$out/bench-incast.md-incast.csv"
printf '# make bench: an incast stand-in\n' >"$out/incast.md"
ktap_run "an incast CSV gives the incast plot" "$plot" --incast "$out/bench-incast.md-incast.csv" "$out/incast.md" "$out/incast" &&
	ktap_diag "$(ls "$out/incast" | tr '\n' ' ')"
printf '# nothing to draw\n\n| a | b |\n|---|---|\n| 1 | 2 |\n' >"$out/empty.md"
ktap_run_fail "input without a bench table: exit 1 and why" "no table of .* to draw" "$plot" "$out/empty.md" "$out/empty"
summary
