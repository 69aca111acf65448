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

# The autotuner: tune matmul on the C backend (timed launches, a tournament search
# over optimization sequences, each candidate checked against the untuned
# kernel), stored in the tuning database; then run the tuned program, which
# comes from the database (nothing is tuned twice) and is checked against the
# C++ reference. The C compiler is always there, so c:0 is.
kiln_log "main job: kiln tune matmul --size 512 --device c:0 --budget 20"
"$KILN_BUILD_DIR/bin/kiln" tune matmul --size 512 --device c:0 --budget 20
kiln_log "main job: kiln run matmul --size 512 --device c:0 --tuned"
"$KILN_BUILD_DIR/bin/kiln" run matmul --size 512 --device c:0 --tuned
