#!/usr/bin/env bash
# heuristic_vs_tuned.sh - what a user who never tunes gets (issue 14): the
# standard kernels with the heuristic schedule (an untuned compile) against
# the same kernels tuned, per device, in one run. Prints a Markdown table:
# heuristic time, tuned time and heuristic / tuned (<= 2 is the goal).
#
#   bench/heuristic_vs_tuned.sh [--kiln PATH] [--config FILE] [--budget S] [--quick] DEVICE...
#
# Two `kiln bench --json` runs on a fresh tuning database: the first with
# --tuned on the empty database (every row heuristic), the second tuning
# each kernel within --budget seconds (default 10).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
KILN=$HERE/../build/bin/kiln
CONFIG=()
BUDGET=10
QUICK=()
while [ $# -gt 0 ]; do
  case $1 in
    --kiln) KILN=$2; shift 2 ;;
    --config) CONFIG=(--config "$2"); shift 2 ;;
    --budget) BUDGET=$2; shift 2 ;;
    --quick) QUICK=(--quick); shift ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: $0 [--kiln PATH] [--config FILE] [--budget S] [--quick] DEVICE..." >&2; exit 2; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
DEVICES=()
for d in "$@"; do DEVICES+=(--device "$d"); done
# A run with failed rows exits 1 but still prints its JSON (the failed rows
# with their errors): the table below names them instead of ending here.
"$KILN" "${CONFIG[@]}" bench "${DEVICES[@]}" "${QUICK[@]}" --tuned --db "$TMP/empty.sqlite" --json >"$TMP/heuristic.json" || [ -s "$TMP/heuristic.json" ]
"$KILN" "${CONFIG[@]}" bench "${DEVICES[@]}" "${QUICK[@]}" --budget "$BUDGET" --db "$TMP/tuned.sqlite" --json >"$TMP/tuned.json" || [ -s "$TMP/tuned.json" ]
python3 - "$TMP/heuristic.json" "$TMP/tuned.json" <<'PY'
import json, sys
heuristic = {(r["device"], r["kernel"]): r for r in json.load(open(sys.argv[1]))["rows"] if r.get("status") == "ok"}
tuned = [r for r in json.load(open(sys.argv[2]))["rows"] if r.get("status") == "ok"]
def ms(ns): return f"{ns / 1e6:.3f}"
print("| device | kernel | heuristic (ms) | tuned (ms) | heuristic / tuned |")
print("|---|---|---|---|---|")
worst = 0
for r in tuned:
    h = heuristic.get((r["device"], r["kernel"]))
    if h is None or h["tuning"]["source"] != "heuristic":
        continue
    ratio = h["time_ns"] / r["time_ns"]
    worst = max(worst, ratio)
    print(f"| {r['device']} | {r['kernel']} | {ms(h['time_ns'])} | {ms(r['time_ns'])} | {ratio:.2f} |")
print(f"\nworst heuristic / tuned: {worst:.2f}")
for name, path in (("untuned", sys.argv[1]), ("tuned", sys.argv[2])):
    for r in json.load(open(path))["rows"]:
        if r.get("status") != "ok":
            print(f"{name} run: {r['device']} {r['kernel']} failed: {str(r.get('reason', ''))[:200]}")
PY
