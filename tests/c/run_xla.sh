#!/usr/bin/env bash
# Build the XLA FFI handlers' unit tests (tests/c/test_xla_ffi.c) with AddressSanitizer and UBSan
# and run them; with --valgrind, build them plain and run them under valgrind. No JAX needed (the
# handlers are built against mbdcp/infrastructure/xla/xla_ffi_abi.h).
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p tests/c/build
. tests/c/build_conf.sh
X=mbdcp/infrastructure/xla
SOURCES="$(for f in $(conf XLA_HANDLERS); do printf '%s ' "$X/$f.c"; done)"
SOURCES+="$(for f in $(conf XLA_CORE); do printf '%s ' "csrc/src/$f.c"; done) tests/c/test_xla_ffi.c"
read -ra check <<<"$(conf CHECK_FLAGS)"
if [ "${1:-}" = "--valgrind" ]; then
    # shellcheck disable=SC2086
    ${CC:-gcc} "${check[@]}" -Icsrc/include -I$X $SOURCES -lm -o tests/c/build/test_xla_ffi_vg
    valgrind --error-exitcode=1 --leak-check=full -q tests/c/build/test_xla_ffi_vg
    exit
fi
read -ra sanitize <<<"$(conf SANITIZE)"
# shellcheck disable=SC2086
${CC:-gcc} "${check[@]}" "${sanitize[@]}" -Icsrc/include -I$X $SOURCES -lm -o tests/c/build/test_xla_ffi
tests/c/build/test_xla_ffi
