#!/usr/bin/env bash
# run.sh (on the GPU machine, from .gpu/hand/): builds bench.cu around each
# variant's source with nvcc (those not built yet) and times it (median of 22
# launches, the L2 flushed before each) in two rounds, each after a float4 add
# over 2^28 f32 (the bandwidth yardstick of the same run). PROF="NAME ...":
# also Nsight Compute's speed-of-light, warp-state and stall counts of those
# variants, into $OUT/prof_NAME.txt. `run.sh --build-only` builds and stops
# (gen.sh runs it on the CPU machine where nvcc is, so the device compiles
# nothing).
cd "$(dirname "$0")" || exit 1
mkdir -p bin
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
ls ./*.cu | grep -v bench.cu | xargs -P "$(nproc)" -I{} sh -c 'n=$(basename {} .cu); [ -x bin/$n ] || '"$NVCC"' -arch=sm_90 -std=c++17 -O2 -Xlinker -s -include {} bench.cu -o bin/$n 2>bin/$n.err || echo "BUILD FAILED $n"'
[ "${1:-}" = --build-only ] && exit 0
read -r M N <size
nvidia-smi --query-gpu=name --format=csv,noheader
launch() {  # NAME: THREADS SMEM PARAMS [GRID] from the source's first line (grid=G: a hand-written persistent kernel)
  head -1 "$1.cu" | sed -E 's/.*threads=([0-9]+) smem=([0-9]+) params=([0-9]+)( grid=([0-9]+))?.*/\1 \2 \3 \5/'
}
for round in 1 2; do
  first=$(ls ./*.cu | grep -v bench.cu | head -1)
  "bin/$(basename "$first" .cu)" add
  for f in ./*.cu; do
    n=$(basename "$f" .cu); [ "$n" = bench ] && continue
    printf '%-24s ' "$n"; "bin/$n" "$M" "$N" "$(cut -d_ -f2 <<<"$n")" $(launch "$n")
  done
done
if command -v ncu >/dev/null && [ -n "${PROF:-}" ]; then
  for n in $PROF; do
    ncu --section SpeedOfLight --section WarpStateStats --section Occupancy --section ComputeWorkloadAnalysis \
        --metrics smsp__pcsamp_warps_issue_stalled_barrier,smsp__pcsamp_warps_issue_stalled_long_scoreboard,smsp__pcsamp_warps_issue_stalled_short_scoreboard,smsp__pcsamp_warps_issue_stalled_mio_throttle,smsp__pcsamp_warps_issue_stalled_wait,smsp__pcsamp_warps_issue_stalled_not_selected,smsp__pcsamp_warps_issue_stalled_selected,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active \
        --launch-skip 4 --launch-count 1 -k k "bin/$n" "$M" "$N" "$(cut -d_ -f2 <<<"$n")" $(launch "$n") \
        >"${OUT:-.}/prof_$n.txt" 2>&1
    grep -E "DRAM Throughput|L2 Cache Throughput|Duration|Achieved Occupancy|pcsamp|pipe_|issue_active|Issue Slots Busy" "${OUT:-.}/prof_$n.txt"
  done
fi
