#!/usr/bin/env bash
# Build the XLA FFI handlers' unit tests (tests/c/test_xla_ffi.c) with AddressSanitizer and UBSan
# and run them; no JAX needed (the handlers are built against csrc/xla/xla_ffi_abi.h).
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p tests/c/build
${CC:-gcc} -std=c99 -Wall -Wextra -Werror -pedantic -g -O1 -fno-omit-frame-pointer \
    -fsanitize=address,undefined -fno-sanitize-recover=undefined \
    -Icsrc/include -Icsrc/xla csrc/xla/lemke_ffi.c csrc/xla/step_ffi.c csrc/src/step.c csrc/src/assemble.c \
    csrc/src/lemke.c csrc/src/dense.c csrc/src/status.c \
    tests/c/test_xla_ffi.c -lm -o tests/c/build/test_xla_ffi
tests/c/build/test_xla_ffi
