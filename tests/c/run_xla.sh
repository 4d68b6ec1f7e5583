#!/usr/bin/env bash
# Build the XLA FFI handlers' unit tests (tests/c/test_xla_ffi.c) with AddressSanitizer and UBSan
# and run them; with --valgrind, build them plain and run them under valgrind. No JAX needed (the
# handlers are built against mbdcp/infrastructure/xla/xla_ffi_abi.h). The sources compile JOBS at a
# time (tests/c/build_conf.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
B=tests/c/build
mkdir -p $B
. tests/c/build_conf.sh
X=mbdcp/infrastructure/xla
SOURCES=()
for f in $(conf XLA_HANDLERS); do SOURCES+=("$X/$f.c"); done
for f in $(conf XLA_CORE); do SOURCES+=("csrc/src/$f.c"); done
read -ra check <<<"$(conf CHECK_FLAGS)"
flags=("${check[@]}")
out=$B/test_xla_ffi
if [ "${1:-}" = "--valgrind" ]; then
    RUNNER=(valgrind --error-exitcode=1 --leak-check=full -q)
    out=${out}_vg
else
    read -ra sanitize <<<"$(conf SANITIZE)"
    flags+=("${sanitize[@]}")
fi
rm -rf "$out.obj"
mkdir -p "$out.obj"
for src in "${SOURCES[@]}" tests/c/test_xla_ffi.c; do
    spawn "${CC:-gcc}" "${flags[@]}" -Icsrc/include -I$X -c "$src" -o "$out.obj/$(basename "$src" .c).o"
done
finish
"${CC:-gcc}" "${flags[@]}" "$out".obj/*.o -lm -o "$out"
run_tests "$out"
