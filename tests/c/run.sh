#!/usr/bin/env bash
# Build the C core's unit tests (csrc/build.txt: TESTS) with AddressSanitizer and UBSan and run them
# (one binary per test, each ending with its "N passed, N failed" line); with --valgrind, build them
# without the sanitizers and run them under valgrind. The core is compiled once per set of flags and
# linked into each test; compiles and tests run JOBS at a time (tests/c/build_conf.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/c/build_conf.sh
B=tests/c/build
mkdir -p $B
read -ra check <<<"$(conf CHECK_FLAGS)"
read -ra sanitize <<<"$(conf SANITIZE)"
read -ra tests <<<"$(conf TESTS)"
if [ "${1:-}" = "--valgrind" ]; then
    objects $B/obj_vg "${check[@]}"
    for name in "${tests[@]}"; do
        spawn "${CC:-gcc}" "${check[@]}" -Icsrc/include $B/obj_vg/*.o "tests/c/$name.c" -lm -o "$B/${name}_vg"
    done
    finish
    RUNNER=(valgrind --error-exitcode=1 --leak-check=full -q)
    bins=("${tests[@]/#/$B/}")
    run_tests "${bins[@]/%/_vg}"
    exit
fi
objects $B/obj "${check[@]}" "${sanitize[@]}"
# Lemke's method also has a copy compiled for AVX2 (csrc/src/lemke_avx2.c), taken at run time where
# the CPU has it: the core's tests once more with the portable copy alone
objects $B/obj_portable "${check[@]}" -DMBDCP_PORTABLE "${sanitize[@]}"
for name in "${tests[@]}"; do
    spawn "${CC:-gcc}" "${check[@]}" "${sanitize[@]}" -Icsrc/include $B/obj/*.o "tests/c/$name.c" -lm -o "$B/$name"
done
spawn "${CC:-gcc}" "${check[@]}" -DMBDCP_PORTABLE "${sanitize[@]}" \
    -Icsrc/include $B/obj_portable/*.o tests/c/test_core.c -lm -o $B/test_core_portable
finish
run_tests "${tests[@]/#/$B/}" $B/test_core_portable
