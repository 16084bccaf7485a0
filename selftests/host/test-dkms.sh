#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `make dkms-test`: dkms.conf works. dkms adds, builds, installs, reports
# and removes metaroce against Debian's 6.1 headers, in a scratch DKMS tree
# (--dkmstree, --sourcetree, --installtree under build/dkms-test, signing
# key there too, no depmod): /var/lib/dkms, /usr/src and /lib/modules of
# this host stay as they were, which the test checks as well.
#
#   selftests/host/test-dkms.sh [KVER]    default: the newest */build in /lib/modules
#
# KTAP, then "N passed, N failed[, N skipped]"; skips all (exit 4) without
# dkms or kernel headers.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/selftests/lib/ktap.sh"
summary() {
	echo "$KTAP_PASS passed, $KTAP_FAIL failed$([ "$KTAP_SKIP" = 0 ] || echo ", $KTAP_SKIP skipped")"
	ktap_finish
}
skip_all() {
	echo "KTAP version 1"
	echo "1..0 # SKIP $*"
	echo "0 passed, 0 failed, 1 skipped"
	exit 4
}

kver=${1:-$(for d in /lib/modules/*/build; do [ -d "$d" ] && basename "$(dirname "$d")"; done | sort -V | tail -n 1)}
command -v dkms >/dev/null || skip_all "dkms is not installed (apt-get install dkms)"
[ -n "$kver" ] && [ -d "/lib/modules/$kver/build" ] ||
	skip_all "no kernel headers in /lib/modules/*/build (apt-get install linux-headers-amd64)"
arch=$(uname -m)

scratch=$top/build/dkms-test
rm -rf "$scratch"
mkdir -p "$scratch/dkms" "$scratch/install/$kver" "$scratch/tmp"
# dkms generates its signing key where mok_* say; by default in /var/lib/dkms.
dk() {
	env TMPDIR="$scratch/tmp" mok_signing_key="$scratch/mok.key" mok_certificate="$scratch/mok.pub" \
		dkms --dkmstree "$scratch/dkms" --sourcetree "$scratch/root/usr/src" \
		--installtree "$scratch/install" --no-depmod "$@"
}
host_state() { # what must not change on this host
	ls -lA --time-style=+%s /var/lib/dkms 2>&1
	ls -d /usr/src/metaroce-* 2>&1
	find "/lib/modules/$kver" -name 'metaroce*' 2>&1
	stat -c '%n %Y' "/lib/modules/$kver/modules.dep" 2>&1
}
before=$(host_state)

ktap_plan 12
ktap_run "make dkms-source copies kernel/, uapi/ and dkms.conf" \
	make -s -C "$top" dkms-source DESTDIR="$scratch/root"
src=$(echo "$scratch"/root/usr/src/metaroce-*)
version=${src##*/metaroce-}
ktap_diag "kernel $kver, DKMS version $version, scratch ${scratch#"$top"/}"
ktap_check "dkms.conf carries the version ($version)" \
	"$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$src/dkms.conf" 2>/dev/null)" = "$version"
ktap_check "the source tree has the Kbuild, the sources and uapi/, no host tests" \
	-f "$src/kernel/Kbuild" -a -f "$src/kernel/proto/wire.c" -a -f "$src/uapi/metaroce-abi.h" \
	-a ! -e "$src/kernel/proto/tests"
ktap_run "dkms add" dk add -m metaroce -v "$version"
ktap_run "dkms build against /lib/modules/$kver/build" \
	dk build -m metaroce -v "$version" -k "$kver" --kernelsourcedir "/lib/modules/$kver/build" -j 2 ||
	ktap_diag "$(cat "$scratch/dkms/metaroce/$version/build/make.log" "$scratch/dkms/metaroce/$version/$kver/$arch/log/make.log" 2>/dev/null | tail -n 30)"
ko=$scratch/dkms/metaroce/$version/$kver/$arch/module/metaroce.ko
[ -f "$ko" ] || ko=$(find "$scratch/dkms/metaroce/$version/$kver" -name 'metaroce.ko*' | head -n 1)
ktap_check "dkms built metaroce.ko (${ko#"$scratch"/})" -n "$ko" -a -f "${ko:-/nonexistent}"
ktap_diag "make.log: $(grep -c 'CC \[M\]' "$scratch/dkms/metaroce/$version/$kver/$arch/log/make.log" 2>/dev/null) objects compiled; signer: $(modinfo -F signer "$ko" 2>/dev/null || echo none)"

# The vermagic of a module that kernel ships: ours must equal it.
ref=$(find "/lib/modules/$kver/kernel" -name 'rdma_rxe.ko*' -o -name 'ib_core.ko*' 2>/dev/null | head -n 1)
want=$( [ -n "$ref" ] && modinfo -F vermagic "$ref")
got=$( [ -n "$ko" ] && modinfo -F vermagic "$ko" 2>/dev/null)
ktap_diag "vermagic: ${got:-none} (${ref##*/}: ${want:-none})"
if [ -n "$want" ]; then
	ktap_check "modinfo: vermagic is the kernel's own" "$got" = "$want"
else
	ktap_check "modinfo: vermagic names $kver" "${got%% *}" = "$kver"
fi
ktap_check "modinfo: the module is metaroce, alias rdma-link-metaroce" \
	"$(modinfo -F name "$ko" 2>/dev/null) $(modinfo -F alias "$ko" 2>/dev/null | grep -c '^rdma-link-metaroce$')" = "metaroce 1"

ktap_run "dkms install into the scratch install tree" dk install -m metaroce -v "$version" -k "$kver"
installed=$(find "$scratch/install/$kver" -name 'metaroce.ko*' | sed "s|^$scratch/install/$kver||")
ktap_check "installed as /updates/dkms/metaroce.ko (got: ${installed:-nothing})" \
	"$installed" = /updates/dkms/metaroce.ko
status=$(dk status -m metaroce -v "$version" 2>&1)
ktap_diag "dkms status: $status"
ktap_check "dkms status: installed for $kver" "$(grep -c "^metaroce/$version, $kver, $arch: installed" <<<"$status")" -eq 1
dk remove -m metaroce -v "$version" --all >"$scratch/remove.log" 2>&1
ktap_check "dkms remove takes it away again, and the host's DKMS and module trees are untouched" \
	"$(find "$scratch/install" -name 'metaroce.ko*' | wc -l) $(host_state | md5sum)" = "0 $(md5sum <<<"$before")" ||
	ktap_diag "before: $before" "after: $(host_state)" "$(cat "$scratch/remove.log")"
summary
