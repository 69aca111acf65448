#!/usr/bin/env bash
# ThreadSanitizer run of the multi-threaded use of one Runtime (docs/testing.md,
# "Threads"): a clang -fsanitize=thread build of libkiln, the c and dummy
# plugins and kiln_threads_tests (compiles, launches, copies and a tuning
# from several host threads, on one device and on several), then that test.
# A data race fails it (halt_on_error). Not part of CI: the instrumented
# build costs about as much as the ASan stage; run it when the runtime's
# locking changes.
#
# Environment:
#   KILN_TSAN_BUILD_DIR  build folder (default: build-tsan)
#   KILN_TSAN_OPT        optimization level (default -O1: TSan's own advice)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

if ! command -v clang++ >/dev/null; then
  echo "error: scripts/tsan.sh needs clang++ (apt-get install clang libclang-rt-14-dev)" >&2
  exit 1
fi
build="${KILN_TSAN_BUILD_DIR:-$KILN_ROOT/build-tsan}"
kiln_clang_configure "$build" "${KILN_TSAN_OPT:--O1}" -DKILN_TSAN=ON -DKILN_BUILD_BENCH=OFF
kiln_log "tsan build: kiln_threads_tests ($KILN_JOBS jobs)"
cmake --build "$build" -j "$KILN_JOBS" --target kiln_threads_tests

# The kernels the c plugin compiles run on libgomp's threads; libgomp is not
# instrumented, so its own synchronisation is invisible to TSan: what it
# reports inside libgomp (or in a kernel it runs) is not the runtime's race.
suppressions="$build/tsan-suppressions.txt"
printf '%s\n' 'called_from_lib:libgomp.so.1' >"$suppressions"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$suppressions:${TSAN_OPTIONS:-}"
kiln_log "tsan tests: kiln_threads_tests"
"$build/bin/kiln_threads_tests" --gtest_color=no
