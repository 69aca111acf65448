#!/usr/bin/env bash
# Quick start, command 1: install what is missing, configure, build, and run
# the main job (list the devices kiln finds on this machine, run a kernel).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

kiln_install_missing_packages
kiln_configure
kiln_build

kiln_log "main job: kiln devices"
"$KILN_BUILD_DIR/bin/kiln" devices

# A standard kernel on the first device that can compile (the default device:
# the highest-priority loaded plugin's first such device), checked against its
# C++ reference and timed.
kiln_log "main job: kiln run matmul --size 256"
"$KILN_BUILD_DIR/bin/kiln" run matmul --size 256

# ---- main job, continued: the autotuner -------------------------------------
# TODO(tune): when `kiln tune` lands, tune the same kernel here and run the
# tuned version, e.g.
#   "$KILN_BUILD_DIR/bin/kiln" tune matmul --size 256
#   "$KILN_BUILD_DIR/bin/kiln" run matmul --size 256 --tuned
