#!/usr/bin/env bash
# Quick start, command 1: install what is missing, configure, build, and run
# the main job (list the devices kiln finds on this machine).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

kiln_install_missing_packages
kiln_configure
kiln_build

kiln_log "main job: kiln devices"
"$KILN_BUILD_DIR/bin/kiln" devices

# ---- main job, continued ---------------------------------------------------
# TODO(later issues): once `kiln tune` and `kiln run` exist, tune and run a
# sample kernel here, e.g.
#   "$KILN_BUILD_DIR/bin/kiln" tune examples/kernels/<kernel>.kir
#   "$KILN_BUILD_DIR/bin/kiln" run  examples/kernels/<kernel>.kir
