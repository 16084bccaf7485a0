#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Draw the tables of `make bench` (selftests/run --bench calls it after it
# saves the table; see README.md "Benchmark"):
#
#   plot-bench.sh [--incast CSV] [--data DIR] TABLE.md [OUTDIR]
#
# TABLE.md is a saved bench table (build/bench/latest.md) or any Markdown
# file with its tables (README.md). For OUTDIR/NAME-PLOT.svg and .png, NAME
# being TABLE's name without .md, it draws each plot whose table is there:
#   throughput   Gb/s against netem loss, a panel per op (write, send,
#                read), metaroce, rxe and TCP: the table whose header has
#                "op", "loss", "metaroce Gb/s", "rxe Gb/s" and "TCP Gb/s"
#   latency      ib_write_lat usec against loss, typical and average, for
#                metaroce and rxe: the table with "loss", "metaroce", "rxe"
#   incast       each sender's share over time, from --incast CSV (or
#                NAME-incast.csv next to TABLE): a header line "time_s,NAME,..."
#                then one line per sample, a column per sender
# and links OUTDIR/latest-PLOT.{svg,png} to them. --data keeps the numbers
# it drew in DIR (tab-separated, as plot-bench.gp describes them). Columns
# are found by their header, so a table may gain columns; a cell that is
# not a number (n/a) is a gap. A new plot is a data_PLOT function here and
# a section of plot-bench.gp that draws it. Exit 1 if no plot could be
# drawn or gnuplot failed, 2 on a usage error.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

incast='' keep=''
while [ $# -gt 0 ]; do
	case $1 in
	--incast) incast=${2:?--incast CSV}; shift ;;
	--data) keep=${2:?--data DIR}; shift ;;
	-h | --help) sed -n '3,29s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*) echo "plot-bench: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: plot-bench.sh [--incast CSV] [--data DIR] TABLE.md [OUTDIR]" >&2; exit 2; }
table=$1
out=${2:-$(dirname "$table")}
[ -r "$table" ] || { echo "plot-bench: cannot read $table" >&2; exit 2; }
command -v gnuplot >/dev/null || { echo "plot-bench: gnuplot is missing (apt-get install gnuplot-nox)" >&2; exit 1; }
name=$(basename "$table" .md)
[ -n "$incast" ] || { [ ! -r "${table%.md}-incast.csv" ] || incast=${table%.md}-incast.csv; }
mkdir -p "$out"
if [ -n "$keep" ]; then
	data=$keep
	rm -f "$data"/*.tsv "$data/ops"
	mkdir -p "$data"
else
	data=$(mktemp -d)
	trap 'rm -rf "$data"' EXIT
fi

# md_columns COL... < FILE: the first Markdown table whose header has every
# COL (exact cell text), as tab-separated rows of those columns.
md_columns() {
	awk -v want="$(printf '%s\t' "$@")" '
		function cells(line, out,    n, i) {
			sub(/^[ \t]*\|/, "", line); sub(/\|[ \t]*$/, "", line)
			n = split(line, out, "|")
			for (i = 1; i <= n; i++) { gsub(/^[ \t]+|[ \t]+$/, "", out[i]) }
			return n
		}
		BEGIN { nwant = split(want, w, "\t") - 1 }
		/^[ \t]*\|/ {
			n = cells($0, c)
			if (state == 0) {
				found = 0
				for (j = 1; j <= nwant; j++)
					for (i = 1; i <= n; i++)
						if (c[i] == w[j]) { col[j] = i; found++; break }
				if (found == nwant) state = 1
				next
			}
			if (state == 1) { state = 2; next } # the |---| line
			if (state == 2) {
				line = ""
				for (j = 1; j <= nwant; j++) line = line (j > 1 ? "\t" : "") c[col[j]]
				print line
			}
			next
		}
		state == 2 { exit }
	' "$table"
}

# A cell as a number, or NaN (gnuplot draws a gap).
num() { awk -v v="$1" 'BEGIN { if (v ~ /^[0-9]+(\.[0-9]+)?$/) print v; else print "NaN" }'; }

# throughput: one data file per op, rows in the table's loss order.
data_throughput() {
	local rows op loss m r t
	rows=$(md_columns op loss "metaroce Gb/s" "rxe Gb/s" "TCP Gb/s")
	[ -n "$rows" ] || return 1
	: >"$data/ops"
	while IFS=$'\t' read -r op loss m r t; do
		grep -qx "$op" "$data/ops" || echo "$op" >>"$data/ops"
		printf '%s\t%s\t%s\t%s\n' "${loss%\%}" "$(num "$m")" "$(num "$r")" "$(num "$t")" >>"$data/throughput-$op.tsv"
	done <<<"$rows"
}

# latency: loss, then typical and average usec of metaroce and rxe.
data_latency() {
	local rows loss m r
	rows=$(md_columns loss metaroce rxe)
	[ -n "$rows" ] || return 1
	while IFS=$'\t' read -r loss m r; do
		printf '%s\t%s\t%s\t%s\t%s\n' "${loss%\%}" "$(num "${m%%/*}")" "$(num "${m#*/}")" \
			"$(num "${r%%/*}")" "$(num "${r#*/}")" >>"$data/latency.tsv"
	done <<<"$rows"
}

# incast: the CSV as gnuplot reads it, commas to tabs.
data_incast() {
	[ -n "$incast" ] || return 1
	[ -r "$incast" ] || { echo "plot-bench: cannot read $incast" >&2; return 1; }
	head -n 1 "$incast" | grep -q '^time_s,' || { echo "plot-bench: $incast: the header must start with time_s," >&2; return 1; }
	tr ',' '\t' <"$incast" >"$data/incast.tsv"
}

# The subtitle: the table's own first line (make bench writes what ran where).
subtitle=$(sed -n '1s/^# *//p' "$table" | cut -c1-110)
[ -n "$subtitle" ] || subtitle=$(basename "$table")
failed=0 drawn=()
for plot in throughput latency incast; do
	data_$plot || continue
	for term in svg png; do
		file=$out/$name-$plot.$term
		if ! gnuplot -e "plot='$plot'; data='$data'; term='$term'; file='$file'" \
			-e "subtitle='${subtitle//\'/\'\'}'" "$here/plot-bench.gp" 2>"$data/gnuplot.err"; then
			echo "plot-bench: gnuplot failed on $plot ($term):" >&2
			sed 's/^/    /' "$data/gnuplot.err" >&2
			failed=1
			continue
		fi
		grep -v '^$' "$data/gnuplot.err" >&2 || true
		ln -sfn "$(basename "$file")" "$out/latest-$plot.$term"
		drawn+=("${file#"$PWD"/}")
	done
done
[ ${#drawn[@]} -gt 0 ] || { echo "plot-bench: no table of $table to draw" >&2; exit 1; }
printf 'plot: %s\n' "${drawn[@]}"
exit $failed
