#!/usr/bin/env bash
# The sanitizer stage of scripts/test.sh (docs/testing.md): a clang build with
# AddressSanitizer + UndefinedBehaviorSanitizer (-fno-sanitize-recover=all:
# the first finding fails its test) of the core suites, run with ctest, then
# each libFuzzer target for a bounded time (scripts/fuzz.sh).
#
# The suites: ir (IR, text parser, verifier), sdk (the reference
# interpreter and the SDK every plugin links), runtime (config parser,
# buffers, launches on the test plugins), fuzz (the replay of saved fuzz
# inputs, the parser mutation test): the code that reads untrusted input
# (text, JSON, op arrays) and needs only libkiln and the SDK, so the stage
# costs CI about 5 minutes (docs/testing.md has the measurement).
# KILN_SANITIZE_FULL=1 adds loader (dlopen, the broken-plugin fixtures) and
# tune (the SQLite tuning database), which need the CLI and the dummy plugin
# built too (about 3 minutes more). The passes and the GPU plugins are left
# to the normal build: they handle kernels the verifier already accepted.
#
# Environment:
#   KILN_SANITIZE_BUILD_DIR  build folder (default: build-sanitize)
#   KILN_FUZZ_SECONDS        seconds per fuzz target (default 4; 0: no fuzzing)
#   KILN_SANITIZE_FULL=1     also the loader and tune suites
#   KILN_SANITIZE_OPT        optimization level of the build (default -O0)
#   KILN_SANITIZE=0          skip this stage
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

if [[ "${KILN_SANITIZE:-1}" == 0 ]]; then
  kiln_log "KILN_SANITIZE=0: sanitizer stage skipped"
  exit 0
fi
if ! command -v clang++ >/dev/null; then
  echo "error: the sanitizer stage needs clang++ (apt-get install clang libclang-rt-14-dev), or KILN_SANITIZE=0" >&2
  exit 1
fi

build="${KILN_SANITIZE_BUILD_DIR:-$KILN_ROOT/build-sanitize}"
targets=(kiln_ir_tests kiln_ir_fuzz_tests kiln_sdk_tests kiln_interpreter_tests kiln_runtime_tests
         kiln_config_limits_tests kiln_fuzz_replay_tests kiln_fuzzers)
labels='^(ir|sdk|runtime|fuzz)$'
if [[ "${KILN_SANITIZE_FULL:-0}" == 1 ]]; then
  targets+=(kiln_loader_tests kiln_tune_tests)
  labels='^(ir|sdk|runtime|fuzz|loader|tune)$'
fi

# -O0: clang builds instrumented code 2.6 times faster than at -O1 (5.6 s
# against 2.2 s for one pass file), and the build is most of this stage; the
# suites run a little slower. A long fuzzing run wants KILN_SANITIZE_OPT=-O1
# in its own folder (more executions per second).
kiln_clang_configure "$build" "${KILN_SANITIZE_OPT:--O0}" -DKILN_SANITIZE=ON -DKILN_FUZZ=ON -DKILN_BUILD_BENCH=OFF
kiln_log "sanitizer build: ${targets[*]} ($KILN_JOBS jobs)"
cmake --build "$build" -j "$KILN_JOBS" --target "${targets[@]}"

# Leaks are not findings here: plugins and test fixtures exit with objects
# alive on purpose. Everything else aborts.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
# The parser mutation test runs its full 50000 mutants in the normal build;
# here a tenth (the libFuzzer targets below do the long searching).
export KILN_FUZZ_ITERATIONS="${KILN_FUZZ_ITERATIONS:-5000}"
kiln_log "sanitizer tests: ctest -L '$labels' -j2"
ctest --test-dir "$build" --output-on-failure -j2 -L "$labels"

KILN_BUILD_DIR="$build" "$KILN_ROOT/scripts/fuzz.sh" "${KILN_FUZZ_SECONDS:-4}"
