#!/usr/bin/env bash
# cpu-rows.sh - issue 13's CPU yardstick: `kiln tune` softmax-rows,
# layernorm-rows and rmsnorm-rows on c:0 with rows beyond the L2 (default
# m = 4096, n = 16384 f32: 256 MiB in, 256 MiB out), and the two-thread
# triad (bench/cpu_backends_bench) before and after them in the same run;
# prints each kernel's GB/s (bytes read and written once / tuned time) and
# its ratio to the mean of the two triads (target >= 0.8).
#
#   scripts/cpu-rows.sh [BUILD_DIR]     default build/
#
# Environment: ROWS_M, ROWS_N, ROWS_DTYPE (f32), ROWS_BUDGET (seconds per
# tune, default 40), ROWS_DB (tuning database, default a fresh temporary file).
set -eu
BUILD=${1:-build}
KILN=$BUILD/bin/kiln
M=${ROWS_M:-4096} N=${ROWS_N:-16384} DTYPE=${ROWS_DTYPE:-f32} BUDGET=${ROWS_BUDGET:-40}
DB=${ROWS_DB:-$(mktemp --suffix=.sqlite)}
BYTES=4
[ "$DTYPE" = f32 ] || BYTES=2
triad() {
  "$BUILD/bin/cpu_backends_bench" --benchmark_filter=Triad 2>/dev/null |
    awk '/BM_Triad/ { for (i = 1; i <= NF; ++i) if ($i ~ /^GB\/s=/) { sub("GB/s=", "", $i); print $i } }'
}
before=$(triad)
declare -A rate sequence
for kernel in softmax-rows layernorm-rows rmsnorm-rows; do
  out=$("$KILN" tune "$kernel" --device c:0 --m "$M" --n "$N" --dtype "$DTYPE" --budget "$BUDGET" --db "$DB" \
          --force --quiet --json)
  best=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["best_ns"])' "$out")
  sequence[$kernel]=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["sequence"])' "$out")
  extra=0
  [ "$kernel" = rmsnorm-rows ] && extra=$N
  rate[$kernel]=$(awk -v t="$best" -v m="$M" -v n="$N" -v b="$BYTES" -v e="$extra" \
                    'BEGIN { printf "%.2f", (2 * m * n + e) * b / t }')
done
after=$(triad)
triad_mean=$(awk -v a="$before" -v b="$after" 'BEGIN { printf "%.2f", (a + b) / 2 }')
echo "triad (2 threads): $before GB/s before, $after GB/s after, mean $triad_mean GB/s"
for kernel in softmax-rows layernorm-rows rmsnorm-rows; do
  printf '%-15s m=%s n=%s %s  %6s GB/s  %.2fx triad  %s\n' "$kernel" "$M" "$N" "$DTYPE" "${rate[$kernel]}" \
    "$(awk -v r="${rate[$kernel]}" -v t="$triad_mean" 'BEGIN { print r / t }')" "${sequence[$kernel]}"
done
