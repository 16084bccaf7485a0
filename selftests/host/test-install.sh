#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `make install-test`: `make install DESTDIR=...` puts exactly the files it
# should where they belong, unchanged, without running depmod; and the
# per-user dissector install (`make -C userspace/wireshark install-user`)
# is what tshark loads.
#
#   selftests/host/test-install.sh [KVER]   default: the newest */build in /lib/modules
#
# KTAP, then "N passed, N failed[, N skipped]"; skips all (exit 4) without
# kernel headers.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ktap.sh"
summary() {
	echo "$KTAP_PASS passed, $KTAP_FAIL failed$([ "$KTAP_SKIP" = 0 ] || echo ", $KTAP_SKIP skipped")"
	ktap_finish
}

kver=${1:-$(for d in /lib/modules/*/build; do [ -d "$d" ] && basename "$(dirname "$d")"; done | sort -V | tail -n 1)}
if [ -z "$kver" ] || [ ! -d "/lib/modules/$kver/build" ]; then
	printf 'KTAP version 1\n1..0 # SKIP no kernel headers in /lib/modules/*/build\n0 passed, 0 failed, 1 skipped\n'
	exit 4
fi
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
root=$top/build/install-test
rm -rf "$root"
mkdir -p "$root"
depmod_stamp() { stat -c %Y "/lib/modules/$kver/modules.dep" 2>/dev/null || echo none; }
stamp=$(depmod_stamp)

# What must be installed: written out here, not taken from the Makefiles.
want=(
	"lib/modules/$kver/updates/metaroce.ko 644"
	"usr/lib/$multiarch/libibverbs/libmetaroce-rdmav34.so 644"
	"etc/libibverbs.d/metaroce.driver 644"
	"usr/lib/$multiarch/wireshark/plugins/metaroce.lua 644"
	"usr/include/infiniband/mrcdv.h 644"
	"usr/share/man/man7/mrcdv.7 644"
)
for page in mrcdv_create_qp mrcdv_query_device mrcdv_wc_read_stream mrcdv_wr_set_stream; do
	want+=("usr/share/man/man3/$page.3 644")
done
if [ -d "$top/userspace/cli" ]; then # the CLI's hook in userspace/Makefile
	want+=("usr/sbin/metaroce 755" "usr/share/man/man8/metaroce.8 644"
		"usr/share/bash-completion/completions/metaroce 644")
fi

ktap_plan 10
ktap_diag "kernel $kver, DESTDIR ${root#"$top"/}"
ktap_run "make install DESTDIR=... KVER=$kver" make -s -C "$top" install DESTDIR="$root" KVER="$kver" ||
	ktap_diag "$(tail -n 20 <<<"$KTAP_LAST_OUTPUT")"
got=$(cd "$root" && find . \( -type f -o -type l \) -printf '%P %m\n' | sort)
ktap_check "exactly the ${#want[@]} expected files, with their modes" \
	"$got" = "$(printf '%s\n' "${want[@]}" | sort)" ||
	ktap_diag "installed:" "$got" "expected:" "$(printf '%s\n' "${want[@]}" | sort)"
ko=$root/lib/modules/$kver/updates/metaroce.ko
ktap_check "the module is the one built for $kver" \
	"$(cmp -s "$ko" "$top/build/stock/metaroce.ko" && modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$kver"
ktap_check "the provider is the one built" "$(cmp -s "$root/usr/lib/$multiarch/libibverbs/libmetaroce-rdmav34.so" \
	"$top/build/userspace/libmetaroce-rdmav34.so" && echo same)" = same
ktap_check "the driver file names the provider" \
	"$(cat "$root/etc/libibverbs.d/metaroce.driver" 2>/dev/null)" = "driver metaroce"
ktap_check "the dissector is the tree's" "$(cmp -s "$root/usr/lib/$multiarch/wireshark/plugins/metaroce.lua" \
	"$top/userspace/wireshark/metaroce.lua" && echo same)" = same
ktap_check "no depmod with DESTDIR: no modules.dep in DESTDIR, the host's untouched" \
	"$(find "$root" -name 'modules.*' | wc -l) $(depmod_stamp)" = "0 $stamp"

# The per-user dissector, as README.md documents it, under a scratch HOME.
home=$root/home
ktap_run "make -C userspace/wireshark install-user" make -s -C "$top/userspace/wireshark" install-user HOME="$home"
ktap_check "tshark lists it as a Lua plugin of that user" \
	"$(HOME=$home tshark -G plugins 2>/dev/null | awk '$1 == "metaroce.lua" { print $NF }')" = \
	"$home/.local/lib/wireshark/plugins/metaroce.lua"
if command -v tshark >/dev/null && make -s -C "$top/userspace/wireshark" >/dev/null; then
	# The frames mr_pcap says are MetaRoCE, malformed ones too.
	want=$("$top/build/wireshark/mr_pcap" write "$root/frames.pcap" | grep -c '^kind metaroce')
	decoded=$(HOME=$home tshark -r "$root/frames.pcap" -Y metaroce 2>/dev/null | wc -l)
	ktap_check "tshark decodes MetaRoCE with it, no -X ($decoded of $want frames)" \
		"$decoded" -eq "$want" -a "$want" -gt 0
else
	ktap_fail "tshark decodes MetaRoCE with it" "tshark or mr_pcap is missing"
fi
summary
