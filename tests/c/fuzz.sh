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
build_libfuzzer() {
    CC=clang objects tests/c/build/obj_fuzz "${check[@]}" -fsanitize=fuzzer-no-link,address,undefined &&
        clang "${libfuzzer[@]}" "${check[@]}" -Icsrc/include tests/c/build/obj_fuzz/*.o tests/c/fuzz_core.c -lm \
            -o tests/c/build/fuzz_libfuzzer
}
rm -f tests/c/build/fuzz_libfuzzer
# a clang that cannot build the fuzzer says why (a warning under -Werror once stopped it unseen)
if command -v clang >/dev/null 2>&1 && ! build_libfuzzer >tests/c/build/fuzz_build.log 2>&1; then
    echo "warning: the libFuzzer build failed; the gcc random driver runs instead:" >&2
    head -20 tests/c/build/fuzz_build.log >&2
fi
if [ -x tests/c/build/fuzz_libfuzzer ]; then
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
