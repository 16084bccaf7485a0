#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# `make install DESTDIR=...` of the admin tool, into a scratch root: the
# files and their modes, the installed binary, the man page (groff
# without warnings) and the bash completion (driven as bash drives it,
# against a stand-in for `metaroce -j`).
set -euo pipefail
make=${1:-make}
here=$(cd "$(dirname "$0")" && pwd)
userspace=$(cd "$here/../.." && pwd)
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
passed=0 failed=0

check() { # $1 what, rest: command
	local what=$1
	shift
	if "$@"; then
		passed=$((passed + 1))
	else
		echo "install_test: FAIL: $what" >&2
		failed=$((failed + 1))
	fi
}

"$make" -s -C "$userspace" install DESTDIR="$dest" >/dev/null

bin=$dest/usr/sbin/metaroce
man=$dest/usr/share/man/man8/metaroce.8
comp=$dest/usr/share/bash-completion/completions/metaroce
check "binary installed, mode 755" test "$(stat -c %a "$bin" 2>/dev/null)" = 755
check "man page installed, mode 644" test "$(stat -c %a "$man" 2>/dev/null)" = 644
check "completion installed, mode 644" test "$(stat -c %a "$comp" 2>/dev/null)" = 644
check "installed binary runs" grep -q 'version 1$' <<<"$("$bin" -V)"
check "libstdc++ is linked in" bash -c "! ldd '$bin' | grep -q libstdc++"

if command -v groff >/dev/null; then
	warnings=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$man" 2>&1)
	check "man page renders without warnings: $warnings" test -z "$warnings"
	# The direct verbs' pages (mrcdv.h): each renders, each call has one.
	for page in "$dest"/usr/share/man/man3/mrcdv_*.3 "$dest"/usr/share/man/man7/mrcdv.7; do
		warnings=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page" 2>&1)
		check "${page##*/} renders without warnings: $warnings" test -z "$warnings"
	done
fi
for call in $(grep -o 'mrcdv_[a-z_]*(' "$userspace/provider/mrcdv.h" | tr -d '(' | sort -u); do
	check "$call has a man page" grep -lq "^\\.B.*$call\|^$call" "$dest"/usr/share/man/man3/mrcdv_*.3
done
# Every setting the tool takes is documented and completed.
mapfile -t settings < <("$bin" dev help | awk '/^         [a-z]/ { print $1 }')
check "dev help lists settings" test "${#settings[@]}" -ge 10
for s in "${settings[@]}"; do
	check "man page documents $s" grep -q -- "$s" "$man"
done

# The completion, with `metaroce` answering from canned JSON.
complete_line() { # words...; prints the candidates for the last word
	bash --norc --noprofile -c '
		metaroce() {
			case "$*" in
			"-j dev show") echo "[{\"ifindex\":3,\"ifname\":\"mrc0\"},{\"ifindex\":4,\"ifname\":\"mrc1\"}]" ;;
			"-j qp show dev mrc0") echo "[{\"ifname\":\"mrc0\",\"qpn\":1},{\"ifname\":\"mrc0\",\"qpn\":17}]" ;;
			esac
		}
		. "$1"
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_metaroce
		echo "${COMPREPLY[*]}"
	' _ "$comp" metaroce "$@"
}
check "objects" test "$(complete_line "")" = "dev qp path plane monitor help"
check "options" test "$(complete_line -)" = \
	"-j -p -s -d -V -h --json --pretty --statistics --details --version --help"
check "after options" test "$(complete_line -j -s q)" = "qp"
check "dev commands" test "$(complete_line dev s)" = "show set"
check "devices" test "$(complete_line dev show "")" = "mrc0 mrc1"
check "set: device" test "$(complete_line dev set m)" = "mrc0 mrc1"
got=$(complete_line dev set mrc0 "")
check "set: the settings dev help lists ($got)" test "$got" = "${settings[*]}"
check "set: on/off" test "$(complete_line dev set mrc0 cc "")" = "on off"
check "set: a value needs no keyword" test -z "$(complete_line dev set mrc0 paths "")"
check "set: next setting" test "$(complete_line dev set mrc0 paths 8 cc-)" = \
	"cc-ecn cc-delay cc-loss cc-gain cc-ai"
check "set: ingress auto" test "$(complete_line dev set mrc0 ingress-rate a)" = "auto"
check "qp keywords" test "$(complete_line qp show "")" = "dev qpn"
check "qp numbers of the device" test "$(complete_line qp show dev mrc0 qpn "")" = "1 17"
check "path keywords" test "$(complete_line path show dev mrc0 "")" = "dev qpn path"
check "path: qpn" test "$(complete_line path show dev mrc0 qpn 1)" = "1 17"
check "plane commands" test "$(complete_line plane "")" = "show add del help"
check "plane add keywords" test "$(complete_line plane add "")" = "dev netdev"
check "plane show keywords" test "$(complete_line plane show "")" = "dev"
check "plane: devices" test "$(complete_line plane add dev m)" = "mrc0 mrc1"

echo "install_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
