#!/usr/bin/env bash
# Quick start, command 2: install what is missing, configure, build, and run
# every test. Exits non-zero when any test fails. .ci/run calls this.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

kiln_install_missing_packages
kiln_configure
kiln_build

kiln_log "tests: ctest -j2"
ctest --test-dir "$KILN_BUILD_DIR" --output-on-failure -j2
