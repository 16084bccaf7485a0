# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The plots of `make bench`, drawn from the data plot-bench.sh extracts:
#
#   gnuplot -e "plot='throughput|latency|incast'; data='DIR'; term='svg|png'; \
#               file='OUT'; subtitle='TEXT'" plot-bench.gp
#
# DIR holds, per plot: ops and throughput-OP.tsv (loss %, metaroce, rxe, TCP
# Gb/s); latency.tsv (loss %, metaroce typical, average, rxe typical,
# average usec); incast.tsv (a header "time_s NAME...", then time and one
# share per sender). NaN is a gap; on the log scales a value of 0 is drawn
# on the floor of the axis.

set datafile separator "\t"

metaroce = "#1f77b4"; rxe = "#d62728"; tcp = "#555555"
set style line 1 lc rgb metaroce lw 2 pt 7 ps 0.9
set style line 2 lc rgb rxe lw 2 pt 5 ps 0.8
set style line 3 lc rgb tcp lw 2 pt 9 ps 0.9
set style line 11 lc rgb metaroce lw 2 pt 6 ps 0.9 dt 2
set style line 12 lc rgb rxe lw 2 pt 4 ps 0.8 dt 2
set grid ytics mytics lc rgb "#dddddd"
set border 3
set tics nomirror

# A number on a log axis: gaps stay gaps, 0 goes to the floor.
clip(col, floor) = valid(col) ? (column(col) > floor ? column(col) : floor) : 1/0
loss_label(col) = stringcolumn(col) . "%"

# The terminal, at the size of the plot.
width = plot eq "throughput" ? 1260 : 760
height = 470
if (term eq "svg") {
	set terminal svg size width, height dynamic noenhanced font "Sans,12" background rgb "white"
} else {
	set terminal pngcairo size width, height noenhanced font "Sans,10" background rgb "white"
}
set output file

if (plot eq "throughput") {
	ops = system("cat '" . data . "/ops'")
	n = words(ops)
	floor = 1e-4
	set multiplot layout 1, n title "Throughput against netem loss (both ends), 64 KiB messages, 1 QP\n" . subtitle
	set logscale y
	set format y "%g"
	set yrange [floor:*]
	set xlabel "netem loss"
	set key bottom left reverse Left samplen 2
	do for [i = 1:n] {
		op = word(ops, i)
		f = data . "/throughput-" . op . ".tsv"
		set title "ib_" . op . "_bw (TCP: iperf3, 1 stream)"
		if (i == 1) { set ylabel "Gb/s (log scale)" } else { unset ylabel }
		plot f using 0:(clip(2, floor)):xtic(loss_label(1)) with linespoints ls 1 title "metaroce", \
		     f using 0:(clip(3, floor)) with linespoints ls 2 title "rxe", \
		     f using 0:(clip(4, floor)) with linespoints ls 3 title "TCP"
		if (i == 1) { unset key }
	}
	unset multiplot
}

if (plot eq "latency") {
	floor = 1
	f = data . "/latency.tsv"
	set title "ib_write_lat, 64 B, against netem loss (both ends)\n" . subtitle
	set logscale y
	set format y "%g"
	set xlabel "netem loss"
	set ylabel "usec (log scale)"
	set key top left reverse Left samplen 3
	plot f using 0:(clip(2, floor)):xtic(loss_label(1)) with linespoints ls 1 title "metaroce typical", \
	     f using 0:(clip(3, floor)) with linespoints ls 11 title "metaroce average", \
	     f using 0:(clip(4, floor)) with linespoints ls 2 title "rxe typical", \
	     f using 0:(clip(5, floor)) with linespoints ls 12 title "rxe average"
}

if (plot eq "incast") {
	f = data . "/incast.tsv"
	set title "Incast: each sender's share over time\n" . subtitle
	set xlabel "time (s)"
	set ylabel "share"
	set yrange [0:*]
	set key outside right top autotitle columnheader
	plot for [i = 2:*] f using 1:i with lines lw 2 title columnheader(i)
}
