#!/usr/bin/env bash
# bf16_matmul_rounds.sh - issue 16's bf16 figure: kiln's tuned bf16 matmul on
# c:0 against OpenBLAS's cblas_sbgemm (scripts/build-sbgemm-anchor.sh), with
# f32 (kiln tuned against OpenBLAS sgemm on cblas:0) for context. Tunes each
# size and dtype once into a fresh database (--budget seconds), then ROUNDS
# rounds of `kiln bench --tuned`, the sizes and dtypes in turn in each round,
# each row timing kiln and its anchor in the same process one after the
# other. Prints every round's ratio, the medians, and the load average.
# A SIZE is N (N^3) or MxNxK (issue 16's odd 1000x999x1001).
#
#   bench/bf16_matmul_rounds.sh [--kiln PATH] [--budget S] [--rounds N] [SIZE...]   (default sizes: 1024 2048)
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
KILN=$HERE/../build/bin/kiln
BUDGET=40
ROUNDS=5
while [ $# -gt 0 ]; do
  case $1 in
    --kiln) KILN=$2; shift 2 ;;
    --budget) BUDGET=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    *) break ;;
  esac
done
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(1024 2048)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
DB=$TMP/tuning.sqlite
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
# kiln's size options for N or MxNxK.
size_options() {
  local IFS=x
  # shellcheck disable=SC2086
  set -- $1
  if [ $# -eq 3 ]; then echo "--m $1 --n $2 --k $3"; else echo "--size $1"; fi
}
for size in "${SIZES[@]}"; do
  # shellcheck disable=SC2046
  "$KILN" tune matmul $(size_options "$size") --dtype bf16 --device c:0 --budget "$BUDGET" --db "$DB" >"$TMP/tune-bf16-$size.txt" 2>&1
  # shellcheck disable=SC2046
  "$KILN" tune matmul $(size_options "$size") --dtype f32 --device c:0 --budget "$BUDGET" --db "$DB" >"$TMP/tune-f32-$size.txt" 2>&1
  # Where each tuning's time went (the issue asks that most of it measure).
  for dtype in bf16 f32; do echo "tune $size $dtype: $(grep 'candidates measured in' "$TMP/tune-$dtype-$size.txt")"; done
done
for round in $(seq 1 "$ROUNDS"); do
  for size in "${SIZES[@]}"; do
    # shellcheck disable=SC2046
    "$KILN" bench --device c:0 --kernels matmul $(size_options "$size") --dtype bf16 --tuned --repeats 5 --db "$DB" --json \
      >"$TMP/bf16-$size-$round.json" 2>/dev/null || true
    # shellcheck disable=SC2046
    "$KILN" bench --device c:0 --kernels matmul $(size_options "$size") --dtype f32 --tuned --repeats 5 --db "$DB" --json \
      >"$TMP/f32-$size-$round.json" 2>/dev/null || true
  done
  echo "load average after round $round: $(cut -d' ' -f1-3 /proc/loadavg)"
done
python3 - "$TMP" "$ROUNDS" "${SIZES[@]}" <<'PY'
import json, statistics, sys
tmp, rounds, sizes = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
print("| size | dtype | sequence | kiln GFLOP/s per round | anchor GFLOP/s per round | ratio per round | median ratio |")
print("|---|---|---|---|---|---|---|")
for size in sizes:
    for dtype, anchor in (("bf16", "sbgemm"), ("f32", "sgemm")):
        rates, anchors, ratios, seq = [], [], [], ""
        for r in range(1, rounds + 1):
            try:
                rows = json.load(open(f"{tmp}/{dtype}-{size}-{r}.json"))["rows"]
            except Exception as e:
                print(f"round {r} {dtype} {size}: no output ({e})", file=sys.stderr); continue
            row = next((x for x in rows if x.get("device") == "c:0" and x.get("kernel") == "matmul"), None)
            if not row or row.get("status") != "ok":
                print(f"round {r} {dtype} {size}: {row}", file=sys.stderr); continue
            seq = (row.get("tuning") or {}).get("sequence", "")
            rates.append(row["rate"])
            a = row.get("anchor") or {}
            if row.get("ratio") is None:
                print(f"round {r} {dtype} {size}: no anchor: {a.get('absent_reason')}", file=sys.stderr); continue
            anchors.append(a["rate"]); ratios.append(row["ratio"])
        fmt = lambda xs: " / ".join(f"{x:.0f}" for x in xs)
        med = f"**{statistics.median(ratios):.2f}**" if ratios else "-"
        label = size if "x" in size else f"{size}^3"
        print(f"| {label} | {dtype} | `{seq}` | {fmt(rates)} | {anchor}: {fmt(anchors)} | "
              f"{' / '.join(f'{x:.2f}' for x in ratios)} | {med} |")
PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
