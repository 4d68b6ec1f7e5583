#!/usr/bin/env bash
# Build the C core's unit tests (csrc/build.txt: TESTS) with AddressSanitizer and UBSan and run them
# (one binary per test, each ending with its "N passed, N failed" line); with --valgrind, build them
# without the sanitizers and run them under valgrind.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/c/build_conf.sh
mkdir -p tests/c/build
read -ra check <<<"$(conf CHECK_FLAGS)"
read -ra sanitize <<<"$(conf SANITIZE)"
if [ "${1:-}" = "--valgrind" ]; then
    for name in $(conf TESTS); do
        ${CC:-gcc} "${check[@]}" -Icsrc/include csrc/src/*.c "tests/c/$name.c" -lm -o "tests/c/build/${name}_vg"
        valgrind --error-exitcode=1 --leak-check=full -q "tests/c/build/${name}_vg"
    done
    exit
fi
for name in $(conf TESTS); do
    ${CC:-gcc} "${check[@]}" "${sanitize[@]}" -Icsrc/include csrc/src/*.c "tests/c/$name.c" -lm -o "tests/c/build/$name"
    "tests/c/build/$name"
done
# Lemke's method also has a copy compiled for AVX2 (csrc/src/lemke_avx2.c), taken at run time where
# the CPU has it: the core's tests once more with the portable copy alone
${CC:-gcc} "${check[@]}" -DMBDCP_PORTABLE "${sanitize[@]}" \
    -Icsrc/include csrc/src/*.c tests/c/test_core.c -lm -o tests/c/build/test_core_portable
tests/c/build/test_core_portable
