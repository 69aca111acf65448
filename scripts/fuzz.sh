#!/usr/bin/env bash
# scripts/fuzz.sh [SECONDS] - runs each libFuzzer target of a KILN_FUZZ=ON
# build (scripts/sanitize.sh makes one) for SECONDS (default 15), starting
# from the saved inputs (tests/fuzz/corpus, tests/fuzz/regressions) and the
# seeds generated from the standard kernels. A crash fails the run and
# leaves the input in $KILN_BUILD_DIR/fuzz/<target>/crash-*: add it to
# tests/fuzz/regressions/<target>/ with the fix (docs/testing.md).
#
# Environment: KILN_BUILD_DIR (default build-sanitize), KILN_FUZZ_TARGETS
# (default: all four), KILN_FUZZ_ARGS (more libFuzzer flags, e.g. -jobs=4).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Absolute: each target runs from its own folder below it.
build="$(cd "${KILN_BUILD_DIR:-$root/build-sanitize}" && pwd)"
seconds="${1:-15}"
if [[ "$seconds" == 0 ]]; then echo "==> fuzzing skipped (0 seconds)"; exit 0; fi

work="$build/fuzz"
mkdir -p "$work/seeds"
"$build/bin/kiln_fuzz_seeds" "$work/seeds" >/dev/null

status=0
for target in ${KILN_FUZZ_TARGETS:-config ir_parse kernel_run wire}; do
  corpus="$work/$target/corpus"
  mkdir -p "$corpus"
  dirs=("$corpus")
  for extra in "$root/tests/fuzz/corpus/$target" "$root/tests/fuzz/regressions/$target" "$work/seeds/$target"; do
    [[ -d "$extra" ]] && dirs+=("$extra")
  done
  echo "==> fuzz $target: ${seconds}s"
  # verify_asan_link_order=0: -fsanitize=fuzzer puts libstdc++ before the
  # shared ASan runtime in the binary's libraries; libstdc++ replaces no
  # function ASan intercepts, so the order is harmless.
  # shellcheck disable=SC2086
  if ! (cd "$work/$target" &&
        ASAN_OPTIONS="detect_leaks=0:verify_asan_link_order=0:${ASAN_OPTIONS:-}" "$build/bin/kiln_fuzz_$target" \
          -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
          ${KILN_FUZZ_ARGS:-} "${dirs[@]}" >"$work/$target.log" 2>&1); then
    echo "error: fuzz target $target failed; the tail of $work/$target.log:" >&2
    tail -40 "$work/$target.log" >&2
    status=1
  fi
  grep -E '^stat::(number_of_executed_units|peak_rss_mb)' "$work/$target.log" | tr '\n' ' '; echo
done
exit "$status"
