#!/usr/bin/env bash
# Fuzz the C core for FUZZ_SECONDS (default 60) under AddressSanitizer and UBSan: with clang's
# libFuzzer when it is available (coverage-guided), otherwise a seeded random driver built by gcc.
# Any crash, sanitizer report or SOLVED answer that fails its check stops with a nonzero exit.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p tests/c/build
seconds=${FUZZ_SECONDS:-60}
. tests/c/build_conf.sh
read -ra check <<<"$(conf CHECK_FLAGS)"
read -ra sanitize <<<"$(conf SANITIZE)"
flags=("${check[@]}" -Icsrc/include csrc/src/*.c tests/c/fuzz_core.c -lm)
if command -v clang >/dev/null 2>&1 &&
   clang -fsanitize=fuzzer,address,undefined -DMBDCP_LIBFUZZER "${flags[@]}" -o tests/c/build/fuzz_libfuzzer 2>/dev/null; then
    mkdir -p tests/c/build/corpus
    status=0
    tests/c/build/fuzz_libfuzzer -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix=tests/c/build/ \
        tests/c/build/corpus >tests/c/build/fuzz.log 2>&1 || status=$?
    grep -E "^Done|ERROR|SUMMARY|fuzz:|Test unit written" tests/c/build/fuzz.log || true
    exit "$status"
else
    ${CC:-gcc} "${sanitize[@]}" "${flags[@]}" -o tests/c/build/fuzz_core
    tests/c/build/fuzz_core "$seconds"
fi
