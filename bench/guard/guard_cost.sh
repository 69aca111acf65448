#!/usr/bin/env bash
# guard_cost.sh - what the bounds policy "guard" costs (docs/ir.md, "Memory
# safety"): a gather and a scatter whose indices the value ranges cannot
# prove in range, run untuned (the heuristic schedule) under "trust" and
# "guard", interleaved, on each device given. Prints a Markdown table of
# median times (ms) and guard/trust.
#
#   bench/guard/guard_cost.sh [--kiln PATH] [--config BASE.json] [--rounds N] DEVICE...
#
# BASE.json (default: the built-in config) names the plugins; the script
# adds "bounds" to a copy of it, so it must be plain JSON (no comments). Each round runs trust then guard, N rounds
# (default 3), each `kiln run --repeats 30`; the figure is the median of
# the rounds' medians. The scatter's indices collide (random inputs), so
# its result depends on the order of the writes: it is not checked.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
KILN=$HERE/../../build/bin/kiln
BASE=
ROUNDS=3
while [ $# -gt 0 ]; do
  case $1 in
    --kiln) KILN=$2; shift 2 ;;
    --config) BASE=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: $0 [--kiln PATH] [--config BASE.json] [--rounds N] DEVICE..." >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for policy in trust guard; do
  python3 - "$BASE" "$policy" >"$TMP/$policy.json" <<'PY'
import json, sys
base, policy = sys.argv[1], sys.argv[2]
config = {}
if base:
    config = json.load(open(base))  # plain JSON: no comments or trailing commas
config["bounds"] = policy
json.dump(config, sys.stdout)
PY
done
median() { python3 -c 'import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
echo "| kernel (2^22) | device | trust (ms) | guard (ms) | guard / trust |"
echo "|---|---|---|---|---|"
for device in "$@"; do
  for kernel in gather scatter; do
    check=()
    [ "$kernel" = scatter ] && check=(--no-check)
    declare -A times=([trust]="" [guard]="")
    for _ in $(seq "$ROUNDS"); do
      for policy in trust guard; do
        ns=$("$KILN" --config "$TMP/$policy.json" run "$HERE/$kernel.kir" --device "$device" --json \
               --repeats 30 "${check[@]}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["time_ns"])')
        times[$policy]="${times[$policy]} $ns"
      done
    done
    # shellcheck disable=SC2086
    trust=$(median ${times[trust]}); guard=$(median ${times[guard]})
    python3 -c "import sys; t,g=float(sys.argv[1]),float(sys.argv[2]); print(f'| {sys.argv[3]} | {sys.argv[4]} | {t/1e6:.3f} | {g/1e6:.3f} | {g/t:.2f} |')" \
      "$trust" "$guard" "$kernel" "$device"
  done
done
