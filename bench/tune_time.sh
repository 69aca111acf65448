#!/usr/bin/env bash
# tune_time.sh - how long a cold tuning takes and what it reaches (issue 14):
# each standard kernel tuned cold (fresh tuning database and compile caches)
# with --budget B, the wall time around the command against B, the report's
# split (set-up and its parts, search, compile waits, measurement, what came
# after the tuning until the process ended), the best
# time; with --long L, the same kernel tuned cold for L seconds in a database
# of its own, and the share of the long tuning's speed the short one reached
# (100% = as fast), as each tuning measured its winner and with the two
# winners timed in turns (`kiln run --opt`, three rounds each: the same
# conditions for both). Prints a Markdown table and the median wall time.
#
#   bench/tune_time.sh [--kiln PATH] [--config FILE] [--budget 2] [--long 60]
#                      [--sizes cpu|gpu] [--kernels k1,k2] [--logs DIR] DEVICE
#
# Sizes: cpu = kiln bench's (add and exp-chain 2^24, sum-rows 2048^2, the row
# kernels 1024 x 4096, transpose 2048^2, matmul 1024^3); gpu = the H200's
# (matmul 4096^3, rows 16384^2, add and exp-chain 2^28). No threshold is
# asserted: the figures are for the closing note and docs/autotune.md.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
KILN=$HERE/../build/bin/kiln
CONFIG=()
BUDGET=2
LONG=0
SIZES=cpu
KERNELS=""
LOGS=""
while [ $# -gt 0 ]; do
  case $1 in
    --kiln) KILN=$2; shift 2 ;;
    --config) CONFIG=(--config "$2"); shift 2 ;;
    --budget) BUDGET=$2; shift 2 ;;
    --long) LONG=$2; shift 2 ;;
    --sizes) SIZES=$2; shift 2 ;;
    --kernels) KERNELS=$2; shift 2 ;;
    --logs) LOGS=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# -eq 1 ] || { echo "usage: $0 [--kiln PATH] [--config FILE] [--budget S] [--long S] [--sizes cpu|gpu] [--kernels LIST] [--logs DIR] DEVICE" >&2; exit 2; }
DEVICE=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
[ -n "$LOGS" ] && mkdir -p "$LOGS"

case $SIZES in
  cpu) SPECS=("add|--size 16777216" "exp-chain|--size 16777216" "sum-rows|--m 2048 --n 2048"
              "softmax-rows|--m 1024 --n 4096" "layernorm-rows|--m 1024 --n 4096" "rmsnorm-rows|--m 1024 --n 4096"
              "transpose|--m 2048 --n 2048" "matmul|--size 1024") ;;
  gpu) SPECS=("matmul|--size 4096" "softmax-rows|--m 16384 --n 16384" "layernorm-rows|--m 16384 --n 16384"
              "sum-rows|--m 16384 --n 16384" "exp-chain|--size 268435456" "add|--size 268435456") ;;
  *) echo "--sizes is cpu or gpu, got '$SIZES'" >&2; exit 2 ;;
esac

# One cold tuning: budget name kernel sizes... -> its JSON on stdout; the wall
# seconds in $TMP/wall. Fresh database and caches (C objects, PoCL's, NVRTC's).
tune_cold() {
  local budget=$1 name=$2 kernel=$3
  shift 3
  rm -rf "$TMP/$name"
  mkdir -p "$TMP/$name"
  local start end status=0
  start=$(date +%s.%N)
  XDG_CACHE_HOME=$TMP/$name/cache timeout $((${budget%.*} * 4 + 120)) "$KILN" "${CONFIG[@]}" tune "$kernel" "$@" \
    --device "$DEVICE" --budget "$budget" --db "$TMP/$name/tuning.sqlite" --json 2>"$TMP/$name/err" || status=$?
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }' >"$TMP/wall"
  [ -n "$LOGS" ] && cp "$TMP/$name/err" "$LOGS/tune-time-$name.err"
  return $status
}

# The two winners timed side by side: `kiln run --opt` of each in turn,
# three rounds, the median of each kernel's rounds -> "short_ns long_ns".
# Each tuning measured its own winner under its own noise (other processes,
# clocks); timed in turns, the two see the same conditions.
side_by_side() {
  local kernel=$1 short_seq=$2 long_seq=$3
  shift 3
  python3 - "$KILN" "$kernel" "$DEVICE" "$short_seq" "$long_seq" "${CONFIG[@]}" -- "$@" <<'PY'
import json, statistics, subprocess, sys
kiln, kernel, device, short_seq, long_seq = sys.argv[1:6]
rest = sys.argv[6:]
config, sizes = rest[:rest.index("--")], rest[rest.index("--") + 1:]
def once(seq):
    out = subprocess.run([kiln, *config, "run", kernel, *sizes, "--device", device, "--opt", seq, "--no-check",
                          "--repeats", "10", "--json"], capture_output=True, text=True, timeout=600)
    return json.loads(out.stdout)["time_ns"]
times = {"short": [], "long": []}
for _ in range(3):
    times["short"].append(once(short_seq))
    times["long"].append(once(long_seq))
print(statistics.median(times["short"]), statistics.median(times["long"]))
PY
}

field() {  # python expression over the report `r` (JSON in $1)
  python3 -c 'import json, sys
try:
    r = json.loads(sys.argv[1]); s = r["seconds"]; p = s.get("setup_split", {})
    print(eval(sys.argv[2]))
except Exception: print("")' "$1" "$2" 2>/dev/null
}

echo "# cold kiln tune on $DEVICE, --budget $BUDGET s$([ "$LONG" != 0 ] && echo ", against --budget $LONG s") ($(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "| kernel | wall | vs budget | set-up (open, inputs, reference) | search | compile | measure | after | measured | best | $LONG s best | reaches | reaches, timed in turns |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
WALLS=()
for spec in "${SPECS[@]}"; do
  IFS='|' read -r kernel sizes <<<"$spec"
  label="$kernel $(echo "$sizes" | sed 's/--\([a-z]*\) \([0-9]*\)/\1=\2/g')"
  if [ -n "$KERNELS" ] && [[ ",$KERNELS," != *",$kernel,"* ]]; then continue; fi
  # shellcheck disable=SC2086
  if ! out=$(tune_cold "$BUDGET" short "$kernel" $sizes); then
    echo "| $label | $(cat "$TMP/wall") s | failed: $(tail -1 "$TMP/short/err" | cut -c1-60) | | | | | | | | | |"
    continue
  fi
  [ -n "$LOGS" ] && echo "$out" >"$LOGS/tune-time-$kernel-short.json"
  wall=$(cat "$TMP/wall")
  WALLS+=("$wall")
  best=$(field "$out" 'r["best_ns"]')
  long_best="" reaches="" turns=""
  if [ "$LONG" != 0 ]; then
    # shellcheck disable=SC2086
    if long=$(tune_cold "$LONG" long "$kernel" $sizes); then
      [ -n "$LOGS" ] && echo "$long" >"$LOGS/tune-time-$kernel-long.json"
      long_best=$(field "$long" 'r["best_ns"]')
      reaches=$(awk -v s="$best" -v l="$long_best" 'BEGIN { if (s > 0) printf "%.0f%%", 100 * l / s }')
      long_best=$(awk -v t="$long_best" 'BEGIN { printf "%.1f us", t / 1e3 }')
      short_seq=$(field "$out" 'r["sequence"]') long_seq=$(field "$long" 'r["sequence"]')
      if [ "$short_seq" = "$long_seq" ]; then
        turns="100% (same kernel)"
      # shellcheck disable=SC2086
      elif pair=$(side_by_side "$kernel" "$short_seq" "$long_seq" $sizes 2>/dev/null); then
        turns=$(echo "$pair" | awk '{ if ($1 > 0) printf "%.0f%% (%.1f / %.1f us)", 100 * $2 / $1, $2 / 1e3, $1 / 1e3 }')
      else
        turns="failed"
      fi
    else
      long_best="failed"
    fi
  fi
  # after: the wall time past the tuning's own end (tune_seconds counts
  # from the command's start): freeing the buffers, storing the record,
  # leaving the driver, the process's exit, and its start.
  after=$(awk -v w="$wall" -v t="$(field "$out" 'r["tune_seconds"]')" 'BEGIN { if (t != "") printf "%.2f", w - t }')
  printf '| %s | %s s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$label" "$wall" \
    "$(awk -v w="$wall" -v b="$BUDGET" 'BEGIN { printf "%+.0f%%", 100 * (w - b) / b }')" \
    "$(field "$out" '"%.2f (%.2f, %.2f, %.2f)" % (s["setup"], p.get("open", 0), p.get("inputs", 0), p.get("reference", 0))')" \
    "$(field "$out" '"%.2f" % s["search"]')" "$(field "$out" '"%.2f" % s["compile"]')" \
    "$(field "$out" '"%.2f" % s["measure"]')" "$after" "$(field "$out" 'r["candidates_measured"]')" \
    "$(awk -v t="$best" 'BEGIN { printf "%.1f us", t / 1e3 }')" "$long_best" "$reaches" "$turns"
done
echo
if [ ${#WALLS[@]} -gt 0 ]; then
  printf '%s\n' "${WALLS[@]}" | sort -n | awk '{ w[NR] = $1 } END { m = (NR % 2) ? w[(NR + 1) / 2] : (w[NR / 2] + w[NR / 2 + 1]) / 2; printf "median wall %.2f s over %d kernels\n", m, NR }'
fi
