#!/usr/bin/env bash
# Extract the ELF vmlinux from an xz-compressed bzImage (Debian's kernels), so
# QEMU boots it directly through its PVH note: about 4.5 s faster under TCG
# than decompressing at boot.
#   extract-vmlinux.sh <bzImage> <out>
set -euo pipefail
in=$1 out=$2
# xz stream magic FD 37 7A 58 5A 00; the first hit is the payload.
off=$(LC_ALL=C grep -m1 -obUaP '\xfd7zXZ\x00' "$in" | cut -d: -f1)
[ -n "$off" ] || { echo "extract-vmlinux: no xz payload in $in" >&2; exit 1; }
# --single-stream stops at the end of the payload (tail then gets SIGPIPE).
xz -dc --single-stream < <(tail -c +$((off + 1)) "$in") >"$out.tmp"
[ "$(head -c 4 "$out.tmp" | od -An -c | tr -d ' ')" = '177ELF' ] || { echo "extract-vmlinux: payload of $in is not ELF" >&2; exit 1; }
mv "$out.tmp" "$out"
