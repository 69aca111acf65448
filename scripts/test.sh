#!/usr/bin/env bash
# Quick start, command 2: install what is missing, configure, build, and run
# every test, then the sanitizer and fuzzing stage (scripts/sanitize.sh).
# Exits non-zero when any test fails. .ci/run calls this.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

kiln_install_missing_packages
kiln_configure
kiln_build

kiln_log "tests: ctest -j2"
ctest --test-dir "$KILN_BUILD_DIR" --output-on-failure -j2

# ASan + UBSan build of the core suites, then each fuzz target for a bounded
# time (docs/testing.md; KILN_SANITIZE=0 skips it, KILN_FUZZ_SECONDS sets
# the time per target).
"$KILN_ROOT/scripts/sanitize.sh"
