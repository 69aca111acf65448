#!/usr/bin/env bash
# cpu-rows.sh - issues 13 and 16's CPU yardstick: the row kernels
# (softmax-rows, layernorm-rows, rmsnorm-rows; default m = 4096, n = 16384:
# data far beyond the L3; ROWS_N=50257 for rows of odd length, which start at
# every residue), add and exp-chain (2^26
# elements) tuned on c:0 in f32, f16 and bf16, each timed next to the
# two-thread triad measured just before it; and exp-chain over 2^18 elements
# (in and out fit the L2: exp is the limit) next to libmvec's own expf over
# buffers in L2 (bench/cpu_backends_bench: BM_Triad, BM_MvecExpf).
#
# The machine is shared: each kernel is tuned once (first round), then every
# round re-times the tuned programs (`kiln run --tuned`, median of 5) with an
# anchor measured right before each, kernels interleaved; the load average is
# printed per round, and the table gives each ratio's median over the rounds
# (targets: >= 0.8x triad for the row kernels, >= 0.85x for add and
# exp-chain, >= 1x libmvec for exp-chain in L2; that ratio is of exps per
# second, libmvec's expf moving 8 bytes an exp and a 16-bit exp-chain 4).
#
#   scripts/cpu-rows.sh [BUILD_DIR]     default build/
#
# Environment: ROWS_M, ROWS_N (4096, 16384), ROWS_DTYPES ("f32 f16 bf16"),
# ROWS_KERNELS (the five), ROWS_BUDGET (seconds per tune, default 10),
# ROWS_ROUNDS (3), ROWS_ELEMENTS (add and exp-chain, 2^26), ROWS_L2_ELEMENTS
# (exp-chain in L2, 2^18), ROWS_L2_M (softmax in L2, 16), ROWS_DB (tuning database, default a fresh
# temporary file), ROWS_FORCE (1: tune even what ROWS_DB holds; 0: reuse its
# tunings, e.g. to re-time them after a plugin change), KILN (the kiln binary, default BUILD_DIR/bin/kiln),
# KILN_CONFIG (a config file for it).
set -eu
BUILD=${1:-build}
KILN=${KILN:-$BUILD/bin/kiln}
BENCH=$BUILD/bin/cpu_backends_bench
M=${ROWS_M:-4096} N=${ROWS_N:-16384} BUDGET=${ROWS_BUDGET:-10} ROUNDS=${ROWS_ROUNDS:-3}
DTYPES=${ROWS_DTYPES:-f32 f16 bf16}
KERNELS=${ROWS_KERNELS:-softmax-rows softmax-rows-l2 layernorm-rows rmsnorm-rows add exp-chain exp-chain-l2}
ELEMENTS=${ROWS_ELEMENTS:-67108864} L2_ELEMENTS=${ROWS_L2_ELEMENTS:-262144} L2_M=${ROWS_L2_M:-16}
DB=${ROWS_DB:-$(mktemp --suffix=.sqlite)}
force=(--force)
[ "${ROWS_FORCE:-1}" = 0 ] && force=()
config=()
[ -n "${KILN_CONFIG:-}" ] && config=(--config "$KILN_CONFIG")

# An anchor's GB/s from cpu_backends_bench (BM_Triad or BM_MvecExpf).
anchor() {
  "$BENCH" --benchmark_filter="^$1/" 2>/dev/null |
    awk -v name="$1" 'index($1, name "/") == 1 { for (i = 1; i <= NF; ++i) if ($i ~ /^GB\/s=/) { sub("GB/s=", "", $i); print $i } }'
}
# The size options and the anchor of a kernel.
size_of() {
  case $1 in
    add | exp-chain) echo "--n $ELEMENTS" ;;
    exp-chain-l2) echo "--n $L2_ELEMENTS" ;;
    softmax-rows-l2) echo "--m $L2_M --n $N" ;;
    *) echo "--m $M --n $N" ;;
  esac
}
anchor_of() { case $1 in *-l2) echo BM_MvecExpf ;; *) echo BM_Triad ;; esac; }
kernel_of() { echo "${1%-l2}"; }
field() { python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

declare -A sequence ratios rates anchors
for dtype in $DTYPES; do
  for k in $KERNELS; do
    if [ "$k" = softmax-rows-l2 ]; then
      sequence[$k/$dtype]=${sequence[softmax-rows/$dtype]?softmax-rows-l2 runs the program tuned for softmax-rows: list softmax-rows before it}
      continue
    fi
    # shellcheck disable=SC2046
    out=$("$KILN" "${config[@]}" tune "$(kernel_of "$k")" --device c:0 $(size_of "$k") --dtype "$dtype" --budget "$BUDGET" \
            --db "$DB" "${force[@]}" --quiet --json)
    sequence[$k/$dtype]=$(field "$out" sequence)
    echo "tuned $k $dtype in $(field "$out" tune_seconds) s ($(field "$out" candidates_measured) measured): ${sequence[$k/$dtype]}" >&2
    # A tuning past its budget by more than a tenth: where its time went.
    python3 -c 'import json, sys
d = json.loads(sys.argv[1]); budget = float(sys.argv[2])
if d["tune_seconds"] > 1.1 * budget:
    print("  over its %g s budget; seconds: %s; warnings: %s" % (budget, json.dumps(d.get("seconds")), d.get("warnings")))' \
      "$out" "$BUDGET" >&2
  done
done
for round in $(seq 1 "$ROUNDS"); do
  echo "round $round: load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  check=()
  [ "$round" -gt 1 ] && check=(--no-check)
  for dtype in $DTYPES; do
    for k in $KERNELS; do
      a=$(anchor "$(anchor_of "$k")")
      program=(--tuned --db "$DB") runs=(--warmups 1 --repeats 5)
      [ "$k" = softmax-rows-l2 ] && program=(--opt "${sequence[$k/$dtype]}")
      # Kernels in L2 take tens of microseconds: more runs for a steady median.
      case $k in *-l2) runs=(--warmups 10 --repeats 50) ;; esac
      # shellcheck disable=SC2046
      out=$("$KILN" "${config[@]}" run "$(kernel_of "$k")" --device c:0 $(size_of "$k") --dtype "$dtype" "${program[@]}" \
              "${runs[@]}" "${check[@]}" --json)
      [ "$(field "$out" ok)" = True ] || { echo "error: $k $dtype: wrong result: $out" >&2; exit 1; }
      r=$(printf '%.2f' "$(field "$out" gbps)")
      # Kernels in L2 against libmvec: exps per second (libmvec's GB/s
      # counts 8 bytes an exp; a 16-bit exp-chain or softmax moves 4).
      scale=1
      case $k in *-l2) [ "$dtype" != f32 ] && scale=2 ;; esac
      rates[$k/$dtype]+="$r " anchors[$k/$dtype]+="$a " ratios[$k/$dtype]+="$(awk -v r="$r" -v a="$a" -v s="$scale" 'BEGIN { printf "%.3f", s * r / a }') "
    done
  done
  echo "round $round done: load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { printf "%.2f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '%-15s %-5s %-9s %9s %10s  %-8s %-24s %s\n' kernel dtype size 'GB/s' 'anchor' 'x anchor' 'x anchor, rounds' 'tuned sequence'
for dtype in $DTYPES; do
  for k in $KERNELS; do
    printf '%-15s %-5s %-9s %9s %10s  %-8s %-24s %s\n' "$k" "$dtype" "$(size_of "$k" | awk '{ print ($1 == "--m") ? $2 "x" $4 : $2 }')" \
      "$(echo "${rates[$k/$dtype]}" | median)" "$(echo "${anchors[$k/$dtype]}" | median) $( [ "$(anchor_of "$k")" = BM_Triad ] && echo triad || echo mvec)" \
      "$(echo "${ratios[$k/$dtype]}" | median)" "${ratios[$k/$dtype]}" "${sequence[$k/$dtype]}"
  done
done
