#!/usr/bin/env bash
# gen.sh LIST [BUILD_DIR]: on this (CPU) machine, the CUDA source of each
# variant in LIST, into .gpu/hand/ at the repository root (git-ignored; the
# device call carries ".gpu"), with its registers where ptxas is found.
# LIST lines: NAME|KERNEL|DTYPE|SEQUENCE|MODE, `#` a comment; MODE is
#   base    the source as kiln emits it
#   hoist   every 16-byte load of an input moved as early as its operands allow
#   hoist2  hoist, and __launch_bounds__(T, 2) (two groups an SM: at most 64
#           registers at 512 threads)
#   l1      base, with the preferred shared-memory carveout 0 (the largest L1)
#   l1na    l1, and x's 16-byte f32 loads not allocated in L1 (l1.py)
#   wstage  rmsnorm's weights copied into shared memory by cp.async at the
#           group's start, the writing loop reading them there (wstage.py)
#   wstage1 wstage, the weights read from shared memory one element at a time
#   expfma  softmax's exponentials on the FMA pipe, not MUFU (exp_poly.py)
#   exphalf every second exponential of the source so (exp_poly.py)
#   hand    a hand-written kernel of this folder instead of kiln's: SEQUENCE is
#           "FILE [NAME=VALUE ...]", the values #defined in front of it with
#           the size (NN, MM) and its LAUNCH line (persistent_rows.cu: 1024
#           threads, two f16 rows of shared memory, 132 groups; a file with a
#           `// HAND_LAUNCH` line gives its own, see cluster_rows.cu)
# NAME's second `_` field must be the dtype (sm_f16_x). HAND_M, HAND_N: the
# kernel's size (5342 x 50257 by default: 2^28 elements, rows that start anywhere).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${2:-$ROOT/build}
OUTDIR=$ROOT/.gpu/hand
M=${HAND_M:-5342} N=${HAND_N:-50257}
mkdir -p "$OUTDIR"
rm -f "$OUTDIR"/*.cu
cp "$HERE/bench.cu" "$HERE/run.sh" "$HERE/hand_rows.cuh" "$OUTDIR/"
echo "$M $N" >"$OUTDIR/size"
PTXAS=$(command -v nvcc || true)
while IFS='|' read -r name kernel dtype sequence mode; do
  [ -z "$name" ] || [[ "$name" == \#* ]] && continue
  if [ "$mode" = hand ]; then
    read -r file defines <<<"$sequence"
    # The launch: the file's `// HAND_LAUNCH threads=E smem=E params=P grid=E`
    # line, each E evaluated with NN, MM and the defines, else persistent_rows.cu's.
    launch="threads=1024 smem=$((2 * ((N + 7) / 8 + 1) * 16)) params=2 grid=132"
    if spec=$(grep -m1 '^// HAND_LAUNCH ' "$HERE/$file"); then
      launch=""
      for field in ${spec#// HAND_LAUNCH }; do
        expr=${field#*=}
        expr=${expr//NN/$N}
        expr=${expr//MM/$M}
        for d in $defines; do expr=${expr//${d%%=*}/${d#*=}}; done
        launch+="${launch:+ }${field%%=*}=$((expr))"
      done
    fi
    {
      echo "// LAUNCH $launch"
      echo "#define NN $N"
      echo "#define MM $M"
      for d in $defines; do echo "#define ${d%%=*} ${d#*=}"; done
      cat "$HERE/$file"
    } >"$OUTDIR/$name.cu"
  else
    "$BUILD/bin/kiln_emit_cuda" "$kernel" "$M" "$N" "$dtype" "$sequence" >"$OUTDIR/$name.emitted"
  fi
  case $mode in
    hand) ;;
    base) mv "$OUTDIR/$name.emitted" "$OUTDIR/$name.cu" ;;
    hoist) python3 "$HERE/hoist.py" "$OUTDIR/$name.emitted" "$OUTDIR/$name.cu" && rm "$OUTDIR/$name.emitted" ;;
    hoist2) python3 "$HERE/hoist.py" "$OUTDIR/$name.emitted" "$OUTDIR/$name.cu" 2 && rm "$OUTDIR/$name.emitted" ;;
    l1) python3 "$HERE/l1.py" "$OUTDIR/$name.emitted" "$OUTDIR/$name.cu" && rm "$OUTDIR/$name.emitted" ;;
    l1na) python3 "$HERE/l1.py" "$OUTDIR/$name.emitted" "$OUTDIR/$name.cu" na && rm "$OUTDIR/$name.emitted" ;;
    wstage) python3 "$HERE/wstage.py" "$OUTDIR/$name.emitted" "$OUTDIR/$name.cu" "$N" && rm "$OUTDIR/$name.emitted" ;;
    wstage1) python3 "$HERE/wstage.py" "$OUTDIR/$name.emitted" "$OUTDIR/$name.cu" "$N" scalar && rm "$OUTDIR/$name.emitted" ;;
    expfma) python3 "$HERE/exp_poly.py" "$OUTDIR/$name.emitted" "$OUTDIR/$name.cu" all && rm "$OUTDIR/$name.emitted" ;;
    exphalf) python3 "$HERE/exp_poly.py" "$OUTDIR/$name.emitted" "$OUTDIR/$name.cu" half && rm "$OUTDIR/$name.emitted" ;;
    *) echo "gen.sh: $name: unknown mode '$mode'" >&2; exit 2 ;;
  esac
  registers=""
  [ -n "$PTXAS" ] && registers=$("$PTXAS" -arch=sm_90 -cubin -Xptxas -v -o /dev/null "$OUTDIR/$name.cu" 2>&1 |
                                  grep -oE "Used [0-9]+ registers|[0-9]+ bytes spill stores" | tr '\n' ' ')
  echo "$name: $(head -1 "$OUTDIR/$name.cu" | cut -c4-) $registers"
done <"$1"
# With nvcc here (HAND_PREBUILD=0 to skip), run.sh builds the timing binaries
# here (static CUDA runtime, sm_90), so a device call spends no time compiling:
# there it builds only the ones missing from .gpu/hand/bin.
rm -rf "$OUTDIR/bin"
if [ -n "$PTXAS" ] && [ "${HAND_PREBUILD:-1}" != 0 ]; then
  NVCC=$PTXAS bash "$OUTDIR/run.sh" --build-only
  echo "gen.sh: $(ls "$OUTDIR/bin" | grep -vc '\.err$') binaries built here"
fi
