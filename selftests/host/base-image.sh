#!/usr/bin/env bash
# Build (or reuse) the cached base image for one kernel flavour.
#
#   selftests/host/base-image.sh stock|debug
#
# Prints the cache directory, which holds:
#   kernel          the image QEMU boots (stock: ELF vmlinux booted via PVH;
#                   debug: the test kernel's bzImage)
#   kver            the kernel release (`uname -r` in the guest)
#   base.cpio       userspace + kernel modules, uncompressed (boots ~0.7 s
#                   faster under TCG than gzip); the per-run archive is
#                   concatenated after it (see mkrun.sh)
# The key hashes this script, the versions of the packages it copies from and
# the kernel, so a change to any of them rebuilds the image; old images of the
# same flavour are removed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/cache.sh"

flavour=${1:?usage: base-image.sh stock|debug}

# Python for rdma-core's own test suite (pyverbs; tests/40-pyverbs.sh), in
# the host's version.
PY=python$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
# Debian packages whose files are copied whole (docs and man pages left out).
# jq: the tests read the tools' JSON with it (mr_json), far cheaper to start
# than python on the debug kernel.
PKGS=(bash kmod iproute2 rdma-core ibverbs-utils ibverbs-providers libibverbs1
	librdmacm1 rdmacm-utils perftest iperf3 libiperf0 tcpdump libpcap0.8
	python3-minimal "$PY-minimal" "lib$PY-minimal" "lib$PY-stdlib" "lib$PY"
	python3-pyverbs jq libjq1 libonig5)
# Parts of the Python stdlib nothing here imports (the stdlib's own tests,
# build and packaging tools, docs): keep the image lean.
PY_SKIP="test|lib2to3|pydoc_data|distutils|ensurepip|venv|idlelib|tkinter|turtledemo|config-[^/]*|sqlite3|curses|dbm|lib-dynload/(_test|_sqlite|_curses|_dbm|_gdbm|readline|xxlimited)[^/]*"
# rdma-core's test suite ships as documentation, partly gzipped.
PYVERBS_TESTS=/usr/share/doc/rdma-core/tests
# Single programs from packages we don't want whole. busybox fills the rest.
BINS=(timeout tail nproc stdbuf env sort seq stat date dd sha256sum comm join
	dmesg nsenter unshare setpriv taskset flock mount umount)
# Modules for the stock kernel; modprobe -D adds their dependencies. gcm,
# ctr and ghash-generic: metaroce's encryption (the psk parameter) asks the
# crypto API for gcm(aes), which loads them.
STOCK_MODULES=(ib_core ib_uverbs ib_umad rdma_cm rdma_ucm ib_cm iw_cm rdma_rxe
	crc32_generic crc32-pclmul udp_tunnel ip6_udp_tunnel veth dummy tun 8021q
	sch_netem sch_tbf sch_red sch_fq_codel sch_prio cls_u32 cls_flower
	act_gact act_mirred configfs nvme-rdma nvmet-rdma null_blk inet_diag tcp_diag
	gcm ctr ghash-generic)

case $flavour in
stock)
	kver=$STOCK_KVER
	[ -n "$kver" ] || { echo "base-image: no /boot/vmlinuz-6.1*-amd64 (apt-get install linux-image-amd64)" >&2; exit 1; }
	kstamp=$(dpkg-query -W -f='${Version}' "linux-image-$kver" 2>/dev/null || stat -c %Y "/boot/vmlinuz-$kver")
	;;
debug)
	tree=$(test_kernel_tree)
	[ -f "$tree/.metaroce-built" ] || { echo "base-image: test kernel not built; run selftests/kernel/build-test-kernel.sh" >&2; exit 1; }
	kver=$(make -s -C "$tree" kernelrelease)
	kstamp="$tree $(stat -c %Y "$tree/.metaroce-built")"
	;;
*) echo "base-image: unknown flavour '$flavour'" >&2; exit 2 ;;
esac

# dpkg -L below skips a package that is not installed without a word: the
# guest would lack its programs.
installed=$({ dpkg-query -W -f='${Package} ${Status}\n' "${PKGS[@]}" 2>/dev/null || true; } |
	awk '/ install ok installed$/ {print $1}')
missing=()
for p in "${PKGS[@]}"; do grep -qxF "$p" <<<"$installed" || missing+=("$p"); done
[ ${#missing[@]} -eq 0 ] || { echo "base-image: not installed: ${missing[*]} (make deps)" >&2; exit 1; }

key=$({
	cat "$0"
	echo "$flavour $kver $kstamp"
	dpkg-query -W "${PKGS[@]}" busybox-static coreutils util-linux libc6 libgcc-s1 2>/dev/null
} | sha256sum | cut -c1-12)
out=$METAROCE_CACHE/image-$flavour-$key
# one builder at a time (parallel runs share the cache)
mkdir -p "$METAROCE_CACHE"
exec 9>"$METAROCE_CACHE/image-$flavour.lock"
flock 9
if [ -f "$out/base.cpio" ]; then
	echo "$out"
	exit 0
fi

echo "base-image: building $flavour image for $kver in $out" >&2
rm -rf "$METAROCE_CACHE"/image-"$flavour"-*
mkdir -p "$out"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# Merged /usr like the host, so every path ldd or dpkg prints lands right.
mkdir -p "$stage"/usr/{bin,sbin,lib,lib64} "$stage"/{etc,proc,sys,dev,tmp,run,root,mnt}
for d in bin sbin lib lib64; do ln -s "usr/$d" "$stage/$d"; done
mkdir -p "$stage/var" && ln -s ../run "$stage/var/run"

copy() { # copy host files into the stage, keeping symlinks and their targets
	local f
	for f in "$@"; do
		[ -d "$f" ] && continue
		cp -a --parents "$f" "$stage/" 2>/dev/null || true
		if [ -L "$f" ]; then cp -a --parents "$(readlink -f "$f")" "$stage/" 2>/dev/null || true; fi
	done
}

# 1. whole packages, then the single programs
mapfile -t files < <(dpkg -L "${PKGS[@]}" | grep -Ev '^/usr/(share|include)(/|$)|^/lib/(systemd|udev)|^/usr/lib/(systemd|udev)|^/etc/(init\.d|modprobe\.d|udev|systemd)|^/\.$' |
	grep -Ev "^/usr/lib/$PY/($PY_SKIP)(/|\$)" |
	while read -r f; do [ ! -d "$f" ] && echo "$f"; done)
copy "${files[@]}"
[ -d "$PYVERBS_TESTS" ] || { echo "base-image: no $PYVERBS_TESTS (apt-get install python3-pyverbs)" >&2; exit 1; }
mkdir -p "$stage$PYVERBS_TESTS"
cp -a "$PYVERBS_TESTS/." "$stage$PYVERBS_TESTS/"
gunzip -f "$stage$PYVERBS_TESTS"/*.gz
for b in "${BINS[@]}"; do copy "$(command -v "$b")"; done
copy /usr/libexec/coreutils/libstdbuf.so # stdbuf preloads it
# modprobe must be kmod's at /sbin/modprobe: the kernel's request_module runs it.
[ "$(readlink "$stage/sbin/modprobe")" = /bin/kmod ] && [ -f "$stage/usr/bin/kmod" ] || { echo "base-image: /sbin/modprobe is not kmod" >&2; exit 1; }

# 2. busybox for everything else (never over a real program)
cp /bin/busybox "$stage/usr/bin/busybox"
busybox --list-full | while read -r app; do
	[ -e "$stage/$app" ] || [ -L "$stage/$app" ] || ln -s /usr/bin/busybox "$stage/$app"
done

# 3. shared libraries: everything ldd finds, plus what glibc dlopen()s
libs=$(find "$stage/usr" -type f \( -perm -u+x -o -name '*.so*' \) -print0 |
	{ xargs -0 ldd 2>/dev/null || true; } | awk '/=> \//{print $3} /^\t\/.*ld-linux/{print $1}' | sort -u)
copy $libs /lib64/ld-linux-x86-64.so.2 /lib/x86_64-linux-gnu/libgcc_s.so.1 \
	/lib/x86_64-linux-gnu/libnss_files.so.2 2>/dev/null || true

# 4. minimal /etc
echo 'root:x:0:0:root:/root:/bin/bash' >"$stage/etc/passwd"
echo 'root:x:0:' >"$stage/etc/group"
printf '127.0.0.1 localhost\n::1 localhost\n10.0.0.1 h1\n10.0.0.2 h2\n' >"$stage/etc/hosts"
echo 'hosts: files' >"$stage/etc/nsswitch.conf"

# 5. kernel and modules
mods=$stage/lib/modules/$kver
case $flavour in
stock)
	"$here/extract-vmlinux.sh" "/boot/vmlinuz-$kver" "$out/kernel"
	for m in "${STOCK_MODULES[@]}"; do
		modprobe -S "$kver" -D "$m" 2>/dev/null | awk '$1 == "insmod" {print $2}'
	done | sort -u | while read -r ko; do copy "$ko"; done
	for f in modules.order modules.builtin modules.builtin.modinfo; do
		cp "/lib/modules/$kver/$f" "$mods/"
	done
	;;
debug)
	cp "$tree/arch/x86/boot/bzImage" "$out/kernel"
	make -s -C "$tree" INSTALL_MOD_PATH="$stage/usr" modules_install >&2
	rm -f "$mods/build" "$mods/source"
	;;
esac
depmod -b "$stage" "$kver"

echo "$kver" >"$out/kver"
(cd "$stage" && find . -mindepth 1 | cpio -o -H newc -R 0:0 --quiet) >"$out/base.cpio.tmp"
mv "$out/base.cpio.tmp" "$out/base.cpio"
echo "base-image: $(du -h "$out/base.cpio" | cut -f1)" >&2
echo "$out"
