#!/usr/bin/env bash
# Build the C core's unit tests with AddressSanitizer and UBSan and run them (one binary per
# tests/c/test_*.c, each ending with its "N passed, N failed" line).
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p tests/c/build
for name in test_core test_coulomb test_sparse_ldl test_ccp; do
    ${CC:-gcc} -std=c99 -Wall -Wextra -Werror -pedantic -g -O1 -fno-omit-frame-pointer \
        -fsanitize=address,undefined -fno-sanitize-recover=undefined \
        -Icsrc/include csrc/src/*.c "tests/c/$name.c" -lm -o "tests/c/build/$name"
    "tests/c/build/$name"
done
# Lemke's method also has a copy compiled for AVX2 (csrc/src/lemke_avx2.c), taken at run time where
# the CPU has it: the core's tests once more with the portable copy alone
${CC:-gcc} -std=c99 -Wall -Wextra -Werror -pedantic -g -O1 -fno-omit-frame-pointer -DMBDCP_PORTABLE \
    -fsanitize=address,undefined -fno-sanitize-recover=undefined \
    -Icsrc/include csrc/src/*.c tests/c/test_core.c -lm -o tests/c/build/test_core_portable
tests/c/build/test_core_portable
