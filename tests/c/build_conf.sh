# Sourced by the C test scripts: conf KEY prints the words of KEY in csrc/build.txt; spawn, finish,
# objects and run_tests build and run JOBS at a time (default: the machine's cores).
conf() {
    sed -n "s/^$1 *= *//p" csrc/build.txt
}

JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
PIDS=()

# spawn CMD...: run CMD in the background, at most JOBS at once
spawn() {
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
    "$@" &
    PIDS+=("$!")
}

# finish: wait for every spawned command; fails if any of them failed
finish() {
    local pid status=0
    for pid in "${PIDS[@]}"; do wait "$pid" || status=1; done
    PIDS=()
    return "$status"
}

# objects DIR FLAGS...: compile each file of csrc/src with FLAGS into DIR/NAME.o
objects() {
    local dir=$1 src
    shift
    mkdir -p "$dir"
    rm -f "$dir"/*.o
    for src in csrc/src/*.c; do
        spawn "${CC:-gcc}" "$@" -Icsrc/include -c "$src" -o "$dir/$(basename "$src" .c).o"
    done
    finish
}

# logged LOG CMD...: run CMD with its output in LOG (and its exit status, if not 0)
logged() {
    local log=$1 status=0
    shift
    "$@" >"$log" 2>&1 || status=$?
    [ "$status" = 0 ] || echo "$* exited with status $status" >>"$log"
    return "$status"
}

# run_tests BINARY...: run the tests, each under RUNNER (an array, e.g. valgrind and its options)
# if set, their output kept apart and printed in the order given (each test's closing "N passed,
# N failed" line among it); fails if any of them failed
run_tests() {
    local bin status=0
    for bin in "$@"; do
        spawn logged "$bin.log" ${RUNNER[@]+"${RUNNER[@]}"} "$bin"
    done
    finish || status=1
    for bin in "$@"; do cat "$bin.log"; done
    return "$status"
}
