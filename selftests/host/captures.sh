#!/usr/bin/env bash
# The packet captures a guest run sent (selftests/lib/capture.sh), saved and
# checked on the host, where tshark is:
#
#   captures.sh CONSOLE LOGDIR
#
# Each "#@ capture TEST NAME ARGS..." block of CONSOLE (a gzipped pcap in
# base64, up to "#@ end-capture") becomes LOGDIR/NAME and is checked with the
# dissector: `make -C userspace/wireshark check-capture PCAP=LOGDIR/NAME
# ARGS="ARGS"` (tests/check-capture.sh). Its KTAP is printed as the section
# "#@ test TEST:capture" ... "#@ end TEST:capture rc=N secs=S" that
# summary.awk counts with the guest's. Prints nothing if there is no capture.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
console=${1:?usage: captures.sh CONSOLE LOGDIR}
logdir=${2:?usage: captures.sh CONSOLE LOGDIR}

# One "ok TEST NAME ARGS..." (or "bad TEST NAME") line per block, and the
# blocks' files.
tr -d '\r' <"$console" | awk -v dir="$logdir" '
	/^#@ capture / {
		test = $3; name = $4
		# a name is a plain file name: nothing written outside dir
		if (name !~ /^[A-Za-z0-9._-]+$/ || name ~ /^\./) { print "bad " test " " name; next }
		out = dir "/" name ".b64"; printf "" >out
		line = $0; sub(/^#@ capture +/, "", line); print "ok " line
		next
	}
	/^#@ end-capture/ { if (out != "") close(out); out = ""; next }
	out != "" { print >out }
' >"$logdir/captures.list"

while read -r verdict test name args; do
	start=$(date +%s)
	echo "#@ test $test:capture"
	if [ "$verdict" = bad ]; then
		printf 'KTAP version 1\n1..1\n# refused file name %q\nnot ok 1 the capture has a plain name\n' "$name"
		echo "#@ end $test:capture rc=1 secs=0"
		continue
	fi
	rc=0
	if base64 -d "$logdir/$name.b64" | gunzip >"$logdir/$name" 2>"$logdir/$name.err"; then
		rm -f "$logdir/$name.b64" "$logdir/$name.err"
		echo "# $name: $(stat -c %s "$logdir/$name") bytes, saved in ${logdir#"$top"/}/$name"
		make -s -C "$top/userspace/wireshark" check-capture PCAP="$logdir/$name" ARGS="$args" 2>&1 || rc=$?
	else
		rc=1
		printf 'KTAP version 1\n1..1\n# %s\nnot ok 1 %s arrives whole (base64, gzip)\n' \
			"$(head -c 300 "$logdir/$name.err" | tr -s '\n' ' ')" "$name"
		rm -f "$logdir/$name" "$logdir/$name.err"
	fi
	echo "#@ end $test:capture rc=$rc secs=$(($(date +%s) - start))"
done <"$logdir/captures.list"
rm -f "$logdir/captures.list"
