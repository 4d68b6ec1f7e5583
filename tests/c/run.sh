#!/usr/bin/env bash
# Build the C core's unit tests with AddressSanitizer and UBSan and run them.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p tests/c/build
${CC:-gcc} -std=c99 -Wall -Wextra -Werror -pedantic -g -O1 -fno-omit-frame-pointer \
    -fsanitize=address,undefined -fno-sanitize-recover=undefined \
    -Icsrc/include csrc/src/*.c tests/c/test_core.c -lm -o tests/c/build/test_core
tests/c/build/test_core
${CC:-gcc} -std=c99 -Wall -Wextra -Werror -pedantic -g -O1 -fno-omit-frame-pointer \
    -fsanitize=address,undefined -fno-sanitize-recover=undefined \
    -Icsrc/include csrc/src/*.c tests/c/test_coulomb.c -lm -o tests/c/build/test_coulomb
tests/c/build/test_coulomb
${CC:-gcc} -std=c99 -Wall -Wextra -Werror -pedantic -g -O1 -fno-omit-frame-pointer \
    -fsanitize=address,undefined -fno-sanitize-recover=undefined \
    -Icsrc/include csrc/src/*.c tests/c/test_sparse_ldl.c -lm -o tests/c/build/test_sparse_ldl
tests/c/build/test_sparse_ldl
