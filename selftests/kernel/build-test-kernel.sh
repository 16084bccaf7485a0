#!/usr/bin/env bash
# Build (or reuse) the debug test kernel from Debian's linux-source-6.1:
# tinyconfig + debug.config. Prints the tree path on success.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/cache.sh"

tree=$(test_kernel_tree)
if [ -f "$tree/.metaroce-built" ]; then
	echo "$tree"
	exit 0
fi
# One builder at a time: a second one would remove the tree the first is
# building in (parallel runs share the cache).
mkdir -p "$METAROCE_CACHE"
exec 9>"$METAROCE_CACHE/testkernel.lock"
flock 9
if [ -f "$tree/.metaroce-built" ]; then
	echo "$tree"
	exit 0
fi
[ -f "$LINUX_SOURCE_TARBALL" ] || { echo "missing $LINUX_SOURCE_TARBALL (apt-get install linux-source-6.1)" >&2; exit 1; }

top=$(dirname "$tree")
rm -rf "$top"
mkdir -p "$top"
echo "test kernel: unpacking $LINUX_SOURCE_TARBALL" >&2
tar -C "$top" -xf "$LINUX_SOURCE_TARBALL"
cd "$tree"
make -s tinyconfig >&2
scripts/kconfig/merge_config.sh -m .config "$here/debug.config" >&2
make -s olddefconfig >&2
# merge_config warns about symbols it could not set; fail if a checker fell out.
for sym in KUNIT KASAN PROVE_LOCKING FUNCTION_PROFILER DEBUG_ATOMIC_SLEEP DEBUG_KMEMLEAK INFINIBAND_USER_ACCESS VETH NET_SCH_NETEM; do
	grep -q "^CONFIG_$sym=y" .config || { echo "test kernel: CONFIG_$sym did not stick" >&2; exit 1; }
done
grep -q '^CONFIG_RDMA_RXE=m' .config || { echo "test kernel: CONFIG_RDMA_RXE=m did not stick" >&2; exit 1; }
echo "test kernel: building in $tree ($(nproc) jobs)" >&2
start=$(date +%s)
make -s -j"$(nproc)" bzImage modules >&2
touch .metaroce-built
echo "test kernel: built in $(($(date +%s) - start)) s" >&2
echo "$tree"
