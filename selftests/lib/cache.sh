# Shared locations for selftests (sourced). Build products that are slow to
# make (test kernel, base image) live in a cache outside the work tree so that
# fresh clones on the same machine reuse them.
METAROCE_CACHE=${METAROCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/metaroce}
STOCK_KVER=${STOCK_KVER:-$(find /boot -maxdepth 1 -name 'vmlinuz-6.1*-amd64' -printf '%f\n' 2>/dev/null |
	sed 's/^vmlinuz-//' | sort -V | tail -n 1)}
LINUX_SOURCE_TARBALL=${LINUX_SOURCE_TARBALL:-/usr/src/linux-source-6.1.tar.xz}

# The test kernel's tree depends only on the tarball and our config fragment.
test_kernel_key() {
	local here
	here=$(dirname "${BASH_SOURCE[0]}")/..
	{ stat -c %s "$LINUX_SOURCE_TARBALL"; cat "$here/kernel/debug.config"; } | sha256sum | cut -c1-12
}

test_kernel_tree() {
	echo "$METAROCE_CACHE/testkernel-$(test_kernel_key)/linux-source-6.1"
}

# prune_run_logs DIR: keep the 10 newest run directories in DIR
# (<date>-<kind>-<pid>), never one whose run is still going: a host test
# may start runs of its own while a guest writes its logs.
prune_run_logs() {
	local d pid
	ls -1dt "$1"/*-*-*/ 2>/dev/null | tail -n +11 | while read -r d; do
		pid=${d%/}
		pid=${pid##*-}
		[[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null && continue
		rm -rf "$d"
	done
}
