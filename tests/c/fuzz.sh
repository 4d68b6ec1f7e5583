#!/usr/bin/env bash
# Fuzz the C core for FUZZ_SECONDS (default 60) under AddressSanitizer and UBSan: with clang's
# libFuzzer when it is available (coverage-guided), otherwise a seeded random driver built by gcc.
# Any crash, sanitizer report or SOLVED answer that fails its check stops with a nonzero exit.
# The core compiles JOBS files at a time (tests/c/build_conf.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p tests/c/build
seconds=${FUZZ_SECONDS:-60}
. tests/c/build_conf.sh
read -ra check <<<"$(conf CHECK_FLAGS)"
read -ra sanitize <<<"$(conf SANITIZE)"
libfuzzer=(-fsanitize=fuzzer,address,undefined -DMBDCP_LIBFUZZER)
if command -v clang >/dev/null 2>&1 &&
   CC=clang objects tests/c/build/obj_fuzz "${check[@]}" -fsanitize=fuzzer-no-link,address,undefined 2>/dev/null &&
   clang "${libfuzzer[@]}" "${check[@]}" -Icsrc/include tests/c/build/obj_fuzz/*.o tests/c/fuzz_core.c -lm \
       -o tests/c/build/fuzz_libfuzzer 2>/dev/null; then
    mkdir -p tests/c/build/corpus
    status=0
    tests/c/build/fuzz_libfuzzer -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix=tests/c/build/ \
        tests/c/build/corpus >tests/c/build/fuzz.log 2>&1 || status=$?
    grep -E "^Done|ERROR|SUMMARY|fuzz:|Test unit written" tests/c/build/fuzz.log || true
    exit "$status"
else
    objects tests/c/build/obj_fuzz_gcc "${check[@]}" "${sanitize[@]}"
    ${CC:-gcc} "${check[@]}" "${sanitize[@]}" -Icsrc/include tests/c/build/obj_fuzz_gcc/*.o tests/c/fuzz_core.c -lm \
        -o tests/c/build/fuzz_core
    tests/c/build/fuzz_core "$seconds"
fi
