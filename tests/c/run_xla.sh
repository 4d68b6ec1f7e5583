#!/usr/bin/env bash
# Build the XLA FFI handlers' unit tests (tests/c/test_xla_ffi.c) with AddressSanitizer and UBSan
# and run them; with --valgrind, build them plain and run them under valgrind. No JAX needed (the
# handlers are built against mbdcp/infrastructure/xla/xla_ffi_abi.h).
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p tests/c/build
X=mbdcp/infrastructure/xla
SOURCES="$X/ffi_frame.c $X/lemke_ffi.c $X/step_ffi.c csrc/src/step.c csrc/src/assemble.c
         csrc/src/lemke.c csrc/src/lemke_avx2.c csrc/src/dense.c csrc/src/status.c tests/c/test_xla_ffi.c"
if [ "${1:-}" = "--valgrind" ]; then
    # shellcheck disable=SC2086
    ${CC:-gcc} -std=c99 -g -O1 -Icsrc/include -I$X $SOURCES -lm -o tests/c/build/test_xla_ffi_vg
    valgrind --error-exitcode=1 --leak-check=full -q tests/c/build/test_xla_ffi_vg
    exit
fi
# shellcheck disable=SC2086
${CC:-gcc} -std=c99 -Wall -Wextra -Werror -pedantic -g -O1 -fno-omit-frame-pointer \
    -fsanitize=address,undefined -fno-sanitize-recover=undefined \
    -Icsrc/include -I$X $SOURCES -lm -o tests/c/build/test_xla_ffi
tests/c/build/test_xla_ffi
