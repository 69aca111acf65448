#!/usr/bin/env bash
# rows-call.sh (device machine, repository root): issue 13's row figures in one
# device call of at most LIMIT seconds (default 540), on the card whose name holds
# CARD (default H200; on any other it runs nothing and says so: the issue asks for
# the H200's figures). Needs the bundle of scripts/gpu-bundle.sh in .gpu/prebuilt
# and, for the hand probes, bench/gpu-hand/gen.sh's .gpu/hand (carry ".gpu", ".debs").
# Each step is a gpu-check.sh call of its own, so a step cut short loses only itself;
# tables and logs go under $OUT.
#   rows at n = 50257 tuned (default budget) with rows-persist.opts beside them, then
#   ROWS_FIRST (768), the hand probes of .gpu/hand (HAND=0: none), ROWS_REST (4096 16384),
#   one gpu-check call each, while time is left
set -u
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
echo "GPU: ${GPU:-none}"
CARD=${CARD:-H200}
case "$GPU" in *"$CARD"*) ;; *) echo "not an $CARD: nothing run"; exit 0 ;; esac
LIMIT=${LIMIT:-540}
T0=$(date +%s)
left() { echo $((LIMIT - ($(date +%s) - T0))); }
OUT=${OUT:-/tmp/rows-call}
mkdir -p "$OUT"
rows() {  # N CAP [VAR=VALUE...]: one gpu-check rows step of at most CAP s, its table into $OUT/a-rows-N.txt
  local ns=$1 cap=$2; shift 2
  env OUT="$OUT/rows-${ns// /-}" KILN_GPU_STEPS=rows KILN_GPU_ROWS_NS="$ns" KILN_GPU_PACK_LOGS=0 "$@" \
    timeout "$cap" scripts/gpu-check.sh --prebuilt .gpu/prebuilt >"$OUT/a-rows-${ns// /-}.txt" 2>&1
  echo "== rows n=$ns (rc $?, $(( $(date +%s) - T0 )) s in)"
  sed -n '/==== kiln gpu-check/,$p' "$OUT/a-rows-${ns// /-}.txt"
}
# Order: n = 50257 (the rows under 0.90x) with the opts, n = 768 (its recipes changed
# with coarsen mode 2), the hand probes (at most 120 s), then 4096 and 16384.
rows 50257 $(( $(left) - 20 )) KILN_GPU_ROWS_OPTS=bench/gpu-hand/rows-persist.opts
rows_while_time() {  # N...: a rows step each while 170 s are left
  for n in "$@"; do
    [ "$(left)" -lt 170 ] && { echo "== no time left for n=$n"; continue; }
    rows "$n" $(( $(left) - 10 ))
  done
}
rows_while_time ${ROWS_FIRST:-768}
cap=$(( $(left) - 10 )); [ "$cap" -gt 120 ] && cap=120
if [ "${HAND:-1}" = 1 ] && [ -f .gpu/hand/run.sh ] && [ "$cap" -gt 40 ]; then
  (cd .gpu/hand && OUT="$OUT" timeout "$cap" bash run.sh) >"$OUT/a-hand.txt" 2>&1
  echo "== hand probes ($(( $(date +%s) - T0 )) s in)"; cat "$OUT/a-hand.txt"
fi
rows_while_time ${ROWS_REST:-4096 16384}
