#!/usr/bin/env bash
# Build the small per-run initramfs that is concatenated after the base image:
# /init, the selftests (lib, tests, demo, bench, pyverbs-gaps.txt), run.conf and
# our build artifacts.
#
#   mkrun.sh OUT.cpio.gz KVER FLAVOUR MODE TEST_TIMEOUT TOP TEST_FILE...
# TOP is the repository top, where the artifacts are looked for.
#
# Artifacts are taken when present (missing ones are reported, not fatal; the
# tests that need them fail by themselves):
#   TOP/build/FLAVOUR/*.ko                 -> /lib/modules/KVER/extra/ (depmod in the guest)
#   TOP/build/userspace/libmetaroce-rdmav34.so -> /usr/lib/x86_64-linux-gnu/libibverbs/
#   TOP/userspace/provider/metaroce.driver -> /etc/libibverbs.d/
#   TOP/build/userspace/GUEST_PROGRAM      -> /usr/local/bin/ (GUEST_PROGRAMS below)
#   TOP/build/conformance/mr-conform       -> /usr/local/bin/, with its cases and
#                                             protocol.rst in /selftests/conformance/
# Paths are written under usr/ (the base image has merged /usr: /lib is a symlink).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1 kver=$2 flavour=$3 mode=$4 timeout=$5 top=$6
shift 6

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
st=$here/..
mkdir -p "$stage/selftests/tests" "$stage/usr/lib/modules/$kver/extra" \
	"$stage/usr/lib/x86_64-linux-gnu/libibverbs" "$stage/etc/libibverbs.d" \
	"$stage/usr/local/bin"
install -m 755 "$st/guest/init.sh" "$stage/init"
cp -r "$st/lib" "$stage/selftests/lib"
cp "$st/pyverbs-gaps.txt" "$stage/selftests/" # tests/40-pyverbs.sh reads it
for d in demo bench; do
	[ -d "$st/$d" ] && cp -r "$st/$d" "$stage/selftests/$d"
done
names=()
for t in "$@"; do
	install -m 755 "$t" "$stage/selftests/tests/"
	names+=("$(basename "$t")")
done
cat >"$stage/selftests/run.conf" <<CONF
MODE=$mode
FLAVOUR=$flavour
TESTS="${names[*]}"
TEST_TIMEOUT=$timeout
TIER=${METAROCE_TIER:-full}
COVERAGE=${METAROCE_COVERAGE:-0}
BENCH_LOSSES="${METAROCE_BENCH_LOSSES:-}"
BENCH_SECS="${METAROCE_BENCH_SECS:-}"
BENCH_REPS="${METAROCE_BENCH_REPS:-}"
BENCH_NVME_MIB="${METAROCE_BENCH_NVME_MIB:-}"
BENCH_OPS="${METAROCE_BENCH_OPS:-}"
BENCH_TRANSPORTS="${METAROCE_BENCH_TRANSPORTS:-}"
BENCH_PIN="${METAROCE_BENCH_PIN:-}"
BENCH_INCAST="${METAROCE_BENCH_INCAST:-}"
BENCH_INCAST_REPS="${METAROCE_BENCH_INCAST_REPS:-}"
BENCH_INCAST_SHAPE="${METAROCE_BENCH_INCAST_SHAPE:-}"
BENCH_INCAST_INGRESS="${METAROCE_BENCH_INCAST_INGRESS:-}"
BENCH_INCAST_PARTS="${METAROCE_BENCH_INCAST_PARTS:-}"
BENCH_ENCRYPT="${METAROCE_BENCH_ENCRYPT:-}"
BENCH_ENCRYPT_REPS="${METAROCE_BENCH_ENCRYPT_REPS:-}"
BENCH_FASTPATH="${METAROCE_BENCH_FASTPATH:-}"
BENCH_FASTPATH_ROUNDS="${METAROCE_BENCH_FASTPATH_ROUNDS:-}"
BENCH_CONNS="${METAROCE_BENCH_CONNS:-}"
BENCH_CONNS_QPS="${METAROCE_BENCH_CONNS_QPS:-}"
BENCH_STREAMS="${METAROCE_BENCH_STREAMS:-}"
CONF

missing=()
kos=("$top/build/$flavour"/*.ko)
if [ -e "${kos[0]}" ]; then
	cp "${kos[@]}" "$stage/usr/lib/modules/$kver/extra/"
else
	missing+=("build/$flavour/*.ko")
fi
so=$top/build/userspace/libmetaroce-rdmav34.so
drv=$top/userspace/provider/metaroce.driver
if [ -f "$so" ]; then cp "$so" "$stage/usr/lib/x86_64-linux-gnu/libibverbs/"; else missing+=("${so#"$top"/}"); fi
if [ -f "$drv" ]; then cp "$drv" "$stage/etc/libibverbs.d/"; else missing+=("${drv#"$top"/}"); fi
# Test programs built by userspace/Makefile (guest-tests).
GUEST_PROGRAMS=(mr_verbs_objects mr_ring mr_qp_states mr_verify mr_bad_input mr_craft mr_srq mr_ud mr_uc mr_incast mr_many mr_streams metaroce)
for p in "${GUEST_PROGRAMS[@]}"; do
	f=$top/build/userspace/$p
	if [ -f "$f" ]; then install -m 755 "$f" "$stage/usr/local/bin/"; else missing+=("${f#"$top"/}"); fi
done
# The conformance runner, its cases and the spec their sections name.
conf=$top/build/conformance/mr-conform
if [ -f "$conf" ]; then install -m 755 "$conf" "$stage/usr/local/bin/"; else missing+=("${conf#"$top"/}"); fi
mkdir -p "$stage/selftests/conformance"
cp -r "$top/userspace/conformance/cases" "$top/Documentation/metaroce/protocol.rst" "$stage/selftests/conformance/"
[ ${#missing[@]} -eq 0 ] || echo "selftests: warning: artifacts missing: ${missing[*]}" >&2

(cd "$stage" && find . -mindepth 1 | cpio -o -H newc -R 0:0 --quiet) | gzip -1 >"$out"
