#!/usr/bin/env bash
# gpu-check.sh - build kiln on the GPU machine, run the CUDA and OpenCL plugin
# tests on the GPU, time the workload probe kernels next to PyTorch, run
# `kiln devices` and `kiln run <each standard kernel>` on cuda:0 (and the
# GPU's OpenCL and Vulkan devices where present), and print a short table
# last. One call does everything (device time is short); a step that fails
# becomes a row of the table, never the end of the script.
#
#   scripts/gpu-check.sh                 configure + build in build-gpu/, then run
#   scripts/gpu-check.sh --prebuilt DIR  run the binaries of an existing build tree
#                                        (one built there by an earlier call, or
#                                        the bundle of scripts/gpu-bundle.sh, built
#                                        on a CPU machine and carried in .gpu/)
#
# Environment: OUT (logs go there when set, else to <build>/gpu-logs; with
# OUT set they end packed in OUT/logs.tgz beside summary.txt unless
# KILN_GPU_PACK_LOGS=0),
# KILN_GPU_BUILD_DIR (default build-gpu), KILN_GPU_CMAKE_ARGS (extra
# configure arguments, e.g. -DBoost_INCLUDE_DIR=/opt/boost/include),
# KILN_GPU_REQUIRE (a part of the GPU's name, e.g. H200: on any other card
# the script stops before the build and says so), KILN_GPU_SKIP_TORCH=1 (no
# PyTorch reference), KILN_GPU_TUNE_DEVICE (default
# cuda:0), KILN_GPU_TUNE_BUDGET (seconds
# of `kiln tune` per kernel, default 45), KILN_GPU_PREFIX (where carried
# packages are unpacked, default /tmp/kiln-prefix), KILN_GPU_STEPS (which of
# tests,perf,run,tune,rows,mma,tunetime,multitune to do, comma-separated; default tests,perf,run,tune;
# `rows` (the row kernels against kiln's add and torch, KILN_GPU_ROWS_* below)
# and `mma` (f16/bf16 matmul on the tensor cores, KILN_GPU_MMA_*), `tunetime` (issue 14: cold 2 s tunings
# at the compass sizes, their split, the learned cost model; KILN_GPU_TUNETIME_*) and `multitune` (the 11
# kernels of bench/model-kernels under one budget, KILN_GPU_MULTITUNE_BUDGET) are asked for by name: a device call of
# at most 10 minutes may split them, `--prebuilt` on the second). KILN_GPU_BUILD_TARGETS: the targets
# to build (default: everything, or only kiln_cli and kiln-plugin-cuda when no step runs the tests,
# perf or run).
#
# What the GPU machine lacks (sqlite3.h, the Vulkan loader and headers,
# glslang, glvnd for NVIDIA's Vulkan ICD) travels as Debian packages in the
# git-ignored .debs/ folder: `scripts/gpu-check.sh --fetch-debs` fills it on a
# Debian 12 machine; the device call names it in `carry`.
set -u

if [ "${1:-}" = "--fetch-debs" ]; then
  mkdir -p "$(dirname "$0")/../.debs" && cd "$(dirname "$0")/../.debs" &&
    exec apt-get download libsqlite3-0 libsqlite3-dev libvulkan1 libvulkan-dev glslang-dev glslang-tools \
      spirv-tools libshaderc-dev libglvnd0 libglx0 libegl1
fi

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${KILN_GPU_BUILD_DIR:-$ROOT/build-gpu}
PREBUILT=0
if [ "${1:-}" = "--prebuilt" ]; then
  PREBUILT=1
  BUILD=$(cd "${2:?--prebuilt needs a build directory}" && pwd)
  # A tree built elsewhere names that machine's folders in its RUNPATH.
  export LD_LIBRARY_PATH="$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
LOGS=${OUT:-$BUILD/gpu-logs}
mkdir -p "$LOGS"
ROWS=()   # "what|result|detail" lines for the final table
STEPS=${KILN_GPU_STEPS:-tests,perf,run,tune}
want() { [[ ",$STEPS," == *",$1,"* ]]; }
row() { ROWS+=("$1|$2|$3"); }

print_table() {
  echo
  echo "==================== kiln gpu-check ===================="
  printf '%-34s %-10s %s\n' "check" "result" "detail"
  for r in "${ROWS[@]}"; do
    IFS='|' read -r what result detail <<<"$r"
    printf '%-34s %-10s %s\n' "$what" "$result" "$detail"
  done
  echo "logs: $LOGS"
}

# ---------------------------------------------------------------- machine --
{
  echo "# $(date -u +%FT%TZ) $(uname -srm)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>&1 || true
  command -v nvcc >/dev/null && nvcc --version | tail -1
  cmake --version | head -1
  ${CXX:-c++} --version | head -1
  (clinfo -l 2>/dev/null || echo "clinfo: not installed")
} >"$LOGS/machine.txt" 2>&1
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
if [ -n "$GPU" ]; then row "machine" "ok" "$GPU"; else row "machine" "none" "no nvidia-smi / no GPU"; fi
# KILN_GPU_REQUIRE=NAME: figures asked of one card (an issue's H200) are not
# taken on another; the call ends here, before the build, when the GPU's
# name lacks NAME.
if [ -n "${KILN_GPU_REQUIRE:-}" ] && [[ "$GPU" != *"$KILN_GPU_REQUIRE"* ]]; then
  row "required card" "absent" "KILN_GPU_REQUIRE=$KILN_GPU_REQUIRE, this machine has '${GPU:-no GPU}': nothing run"
  print_table
  exit 0
fi

# --------------------------------------------------------- carried debs --
PREFIX=${KILN_GPU_PREFIX:-/tmp/kiln-prefix}
if ls "$ROOT"/.debs/*.deb >/dev/null 2>&1; then
  mkdir -p "$PREFIX"
  for deb in "$ROOT"/.debs/*.deb; do
    if command -v dpkg-deb >/dev/null; then dpkg-deb -x "$deb" "$PREFIX"
    else (cd "$PREFIX" && ar p "$deb" "$(ar t "$deb" | grep '^data.tar')" | tar -x --zstd -f - 2>/dev/null ||
            ar p "$deb" "$(ar t "$deb" | grep '^data.tar')" | tar -xJf -); fi
  done
  export CMAKE_PREFIX_PATH="$PREFIX/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export LD_LIBRARY_PATH="$PREFIX/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PATH="$PREFIX/usr/bin:$PATH"
  # glslang's CMake package names SPIRV-Tools by bare -l: the linker's path.
  export LIBRARY_PATH="$PREFIX/usr/lib/x86_64-linux-gnu${LIBRARY_PATH:+:$LIBRARY_PATH}"
  row "carried packages" "ok" "$(ls "$ROOT"/.debs/*.deb | wc -l) .debs unpacked into $PREFIX"
fi
# NVIDIA's OpenCL library may be installed without its ICD file: register it
# privately (OCL_ICD_VENDORS) next to the ICDs the machine has.
NV_OPENCL=$(ldconfig -p 2>/dev/null | awk '/libnvidia-opencl.so.1 /{print $NF; exit}')
if [ -n "$NV_OPENCL" ] && ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
  mkdir -p "$PREFIX/etc/OpenCL/vendors"
  cp /etc/OpenCL/vendors/*.icd "$PREFIX/etc/OpenCL/vendors/" 2>/dev/null
  echo "$NV_OPENCL" >"$PREFIX/etc/OpenCL/vendors/nvidia.icd"
  export OCL_ICD_VENDORS=$PREFIX/etc/OpenCL/vendors
  row "opencl icd" "ok" "registered $NV_OPENCL"
fi
has_header() { [ -e "/usr/include/$1" ] || [ -e "$PREFIX/usr/include/$1" ]; }

# ------------------------------------------------------------------ build --
if [ "$PREBUILT" = 0 ]; then
  GEN=()
  command -v ninja >/dev/null && GEN=(-G Ninja)
  CONFIG=(-DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_BENCH=OFF -DKILN_PLUGIN_CUDA=ON)
  # Only what this machine has: no Vulkan loader/headers there, for instance.
  has_header vulkan/vulkan.h || CONFIG+=(-DKILN_PLUGIN_VULKAN=OFF)
  has_header CL/cl.h || CONFIG+=(-DKILN_PLUGIN_OPENCL=OFF)
  # shellcheck disable=SC2206
  EXTRA=(${KILN_GPU_CMAKE_ARGS:-})
  if cmake -S "$ROOT" -B "$BUILD" "${GEN[@]}" "${CONFIG[@]}" "${EXTRA[@]}" >"$LOGS/configure.log" 2>&1; then
    row "configure" "ok" "$(grep -c ': building' "$LOGS/configure.log") plugins building"
  else
    row "configure" "FAILED" "$(grep -m1 -i 'error' "$LOGS/configure.log" | cut -c1-80)"
    print_table
    exit 1
  fi
  start=$(date +%s)
  # Steps that only drive the CLI (tune, rows, mma) need the CLI and the
  # CUDA plugin alone: minutes less of a short device call.
  TARGETS=${KILN_GPU_BUILD_TARGETS:-}
  if [ -z "$TARGETS" ] && ! want tests && ! want perf && ! want run; then TARGETS="kiln_cli kiln-plugin-cuda"; fi
  # shellcheck disable=SC2086
  if cmake --build "$BUILD" -j"$(nproc)" ${TARGETS:+--target $TARGETS} >"$LOGS/build.log" 2>&1; then
    row "build" "ok" "${TARGETS:-everything} in $(($(date +%s) - start)) s"
  else
    row "build" "FAILED" "$(grep -m1 -E 'error|FAILED' "$LOGS/build.log" | cut -c1-80)"
  fi
  # The CLI on its own: if it does not build, the checks above still run.
  if cmake --build "$BUILD" -j"$(nproc)" --target kiln_cli >"$LOGS/build-cli.log" 2>&1; then
    row "build kiln" "ok" "bin/kiln"
  else
    row "build kiln" "FAILED" "$(grep -m1 -E 'error|FAILED' "$LOGS/build-cli.log" | cut -c1-80)"
  fi
fi

# ------------------------------------------------------------------ tests --
FAILED=0
run_tests() {  # name binary [gtest args...]
  local name=$1 bin=$2
  shift 2
  if [ ! -x "$bin" ]; then
    row "$name" "missing" "$bin not built"
    return
  fi
  "$bin" --gtest_color=no "$@" >"$LOGS/$name.log" 2>&1
  local rc=$?
  local passed skipped failed
  passed=$(grep -c '^\[       OK \]' "$LOGS/$name.log")
  skipped=$(grep -c '^\[  SKIPPED \] .*(' "$LOGS/$name.log")
  failed=$(grep -c '^\[  FAILED  \] .*(' "$LOGS/$name.log")
  if [ "$rc" = 0 ]; then
    row "$name" "ok" "$passed passed, $skipped skipped"
  else
    FAILED=1
    row "$name" "FAILED" "$passed passed, $failed failed, $skipped skipped (rc $rc)"
    grep '^\[  FAILED  \] .*(' "$LOGS/$name.log" | head -5 | while read -r line; do row "" "" "${line:13:70}"; done
  fi
}
export POCL_CACHE_DIR=${POCL_CACHE_DIR:-$BUILD/pocl-cache}
mkdir -p "$POCL_CACHE_DIR"
# The environment the checks below run in (the carried Vulkan loader and
# glvnd on LD_LIBRARY_PATH, NVIDIA's private OpenCL ICD), for commands run
# after this script in the same device call: `source $OUT/env.sh` first, or
# kiln there finds no libvulkan.so.1 and skips vulkan:0.
for var in LD_LIBRARY_PATH PATH OCL_ICD_VENDORS POCL_CACHE_DIR; do
  [ -n "${!var:-}" ] && printf 'export %s=%q\n' "$var" "${!var}"
done >"$LOGS/env.sh"
if want tests; then
  run_tests cuda-tests "$BUILD/bin/kiln_cuda_tests"
  run_tests opencl-tests "$BUILD/bin/kiln_opencl_tests"
  run_tests vulkan-tests "$BUILD/bin/kiln_vulkan_tests"
  # Every standard kernel, every dtype it allows, odd sizes, through the runtime.
  run_tests conformance-gpu "$BUILD/bin/kiln_conformance_tests" --gtest_filter='*cuda*:*opencl*:*vulkan*'
  run_tests plugin-conformance-cuda "$BUILD/bin/kiln_plugin_conformance_tests" --gtest_filter='*cuda*'
  run_tests tune-tests "$BUILD/bin/kiln_tune_tests"
fi
# The CUDA device's info, as the plugin reports it.
INFO=$(grep -m1 'cuda:0 =' "$LOGS/cuda-tests.log" 2>/dev/null | sed 's/.*cuda:0 = //')
[ -n "$INFO" ] && row "cuda:0" "info" "${INFO:0:90}"

# ------------------------------------------------------------ performance --
if want perf && [ -x "$BUILD/bin/kiln_cuda_tests" ]; then
  "$BUILD/bin/kiln_cuda_tests" --gtest_color=no --gtest_also_run_disabled_tests \
    --gtest_filter='CudaPerfProbe.*' >"$LOGS/perf-probe.log" 2>&1 || FAILED=1
fi
if want perf && [ "${KILN_GPU_SKIP_TORCH:-0}" != 1 ] && python3 -c 'import torch' 2>/dev/null; then
  python3 - >"$LOGS/torch.log" 2>&1 <<'PY' || true
import torch
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
dev = "cuda"
flush = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
def median_ms(fn, repeats=20, warmups=3):
    for _ in range(warmups): fn()
    times = []
    for _ in range(repeats):
        flush.fill_(1)  # cold L2, as the kiln probe
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    return sorted(times)[(len(times) - 1) // 2]
n = 1 << 28
x = torch.rand(n, device=dev); y = torch.rand(n, device=dev)
print("PERF add_2^28_f32", 3 * 4 * n / median_ms(lambda: x + y) / 1e6, "GB/s")
ms = median_ms(lambda: torch.exp(x) * 2 + 1)
print("PERF exp_chain_2^28_f32_ms", ms, "ms")
print("PERF exp_chain_2^28_f32", 2 * 4 * n / ms / 1e6, "GB/s (eager: 3 kernels)")
del x, y
m = torch.rand(16384, 16384, device=dev)
print("PERF sum_rows_16384^2_f32", 4 * 16384 * 16384 / median_ms(lambda: m.sum(1)) / 1e6, "GB/s")
del m
a = torch.rand(4096, 4096, device=dev); b = torch.rand(4096, 4096, device=dev)
print("PERF matmul_4096^3_f32", 2 * 4096 ** 3 / median_ms(lambda: a @ b) / 1e9, "TFLOP/s")
PY
fi
perf() { grep -m1 "^PERF $1 " "$2" 2>/dev/null | awk '{printf "%.1f", $3}'; }
# Without the perf step there is nothing to report here (not a row of n/a's).
want perf && for w in add_2^28_f32:GB/s exp_chain_2^28_f32:GB/s exp_chain_2^28_f32_ms:ms sum_rows_16384^2_f32:GB/s matmul_4096^3_f32:TFLOP/s; do
  name=${w%%:*} unit=${w##*:}
  ours=$(perf "$name" "$LOGS/perf-probe.log")
  torch=$(perf "$name" "$LOGS/torch.log")
  ratio=""
  if [ -n "$ours" ] && [ -n "$torch" ]; then
    ratio=$(awk -v a="$ours" -v b="$torch" -v u="$unit" 'BEGIN { r = (u == "ms") ? b / a : a / b; printf "%.0f%% of torch", 100 * r }')
  fi
  row "$name" "${ours:-n/a}" "$unit; torch ${torch:-n/a} $unit; $ratio"
done
# The issue's yardstick for a fused elementwise chain: torch's x + y bandwidth.
ours=$(perf exp_chain_2^28_f32 "$LOGS/perf-probe.log")
torch=$(perf add_2^28_f32 "$LOGS/torch.log")
if [ -n "$ours" ] && [ -n "$torch" ]; then
  row "exp_chain vs torch add" "$(awk -v a="$ours" -v b="$torch" 'BEGIN { printf "%.0f%%", 100 * a / b }')" \
    "of torch's x+y bandwidth (target >= 85%)"
fi

# ------------------------------------------------------- kiln devices/run --
# The user's path: the kiln CLI on the GPU's devices. The config keeps the
# GPU's own OpenCL platform and Vulkan device (PoCL and lavapipe are checked
# on the CPU machines).
KILN=$BUILD/bin/kiln
if [ -x "$KILN" ]; then
  if "$KILN" devices >"$LOGS/kiln-devices.log" 2>&1; then
    row "kiln devices" "ok" "$(grep -cE '^    [a-z0-9_-]+:[0-9]+ ' "$LOGS/kiln-devices.log") devices"
  else
    row "kiln devices" "FAILED" "$(tail -1 "$LOGS/kiln-devices.log" | cut -c1-80)"
  fi
  GPU_CONFIG=$LOGS/gpu-config.json
  cat >"$GPU_CONFIG" <<'JSON'
{"plugins": {"opencl": {"options": {"platforms": ["NVIDIA"]}},
             "vulkan": {"options": {"devices": ["NVIDIA"]}}}}
JSON
  "$KILN" --config "$GPU_CONFIG" devices >"$LOGS/kiln-devices-gpu.log" 2>&1
  RUN_DEVICES=()
  for d in cuda:0 opencl:0 vulkan:0; do
    grep -q "^    $d " "$LOGS/kiln-devices-gpu.log" 2>/dev/null && RUN_DEVICES+=("$d")
  done
  [ ${#RUN_DEVICES[@]} = 0 ] && row "kiln run" "skipped" "no cuda/opencl/vulkan device listed"
  json_field() {  # key json: the value of a top-level key ('' when absent or not JSON)
    python3 -c 'import json, sys
try: v = json.loads(sys.argv[2]).get(sys.argv[1], "")
except Exception: v = ""
print(str(v).lower() if isinstance(v, bool) else v)' "$1" "$2" 2>/dev/null
  }
  # Sizes large enough to mean something on an H200 and odd (no block size
  # divides them), small enough for the host-side C++ reference to check in
  # about a second; f32 on every GPU device, f16 and bf16 on cuda:0.
  want run || RUN_DEVICES=()
  for kernel in add add-dyn exp-chain sum-rows max-rows softmax-rows layernorm-rows matmul matmul-bt transpose; do
    case $kernel in
      add|add-dyn|exp-chain) size=(--size 16777219) ;;
      matmul|matmul-bt) size=(--m 1023 --n 1025 --k 1027) ;;
      *) size=(--m 4099 --n 4097) ;;
    esac
    passed=0 tried=0 detail=""
    for d in "${RUN_DEVICES[@]}"; do
      dtypes=(f32)
      [ "$d" = cuda:0 ] && dtypes=(f32 f16 bf16)
      for dt in "${dtypes[@]}"; do
        tried=$((tried + 1))
        out=$(timeout 300 "$KILN" --config "$GPU_CONFIG" run "$kernel" --device "$d" --dtype "$dt" "${size[@]}" --json 2>>"$LOGS/kiln-run.err")
        echo "$out" >>"$LOGS/kiln-run.log"
        if [ "$(json_field ok "$out")" = true ]; then
          passed=$((passed + 1))
          [ "$dt" = f32 ] || continue
          case $kernel in
            matmul*) detail+="$d $(awk -v v="$(json_field gflops "$out")" 'BEGIN{printf "%.0f", v}') GFLOP/s; " ;;
            *) detail+="$d $(awk -v v="$(json_field gbps "$out")" 'BEGIN{printf "%.0f", v}') GB/s; " ;;
          esac
        else
          FAILED=1
          err=$(json_field error "$out")
          detail+="$d $dt FAILED${err:+ (${err:0:40})}; "
        fi
      done
    done
    [ ${#RUN_DEVICES[@]} = 0 ] || row "run $kernel" "$passed/$tried ok" "${detail%; }"
  done

  # ---------------------------------------------------------- kiln tune --
  # The issue's yardsticks, tuned by `kiln tune` on cuda:0 and set against
  # torch's figures from this same run; then each again, which must come
  # from the tuning database and launch nothing.
  TUNE_DEVICE=${KILN_GPU_TUNE_DEVICE:-cuda:0}
  if want tune && [ -n "$(grep -m1 "^    $TUNE_DEVICE " "$LOGS/kiln-devices-gpu.log" 2>/dev/null)" ]; then
    TUNE_DB=$LOGS/tuning.sqlite
    rm -f "$TUNE_DB"
    BUDGET=${KILN_GPU_TUNE_BUDGET:-45}
    for spec in "exp-chain|--size 268435456|exp_chain_2^28_f32|add_2^28_f32|GB/s|85" \
                "sum-rows|--m 16384 --n 16384|sum_rows_16384^2_f32|sum_rows_16384^2_f32|GB/s|80" \
                "matmul|--size 4096|matmul_4096^3_f32|matmul_4096^3_f32|TFLOP/s|50"; do
      IFS='|' read -r kernel sizes _ref_name torch_name unit target <<<"$spec"
      # shellcheck disable=SC2086
      out=$(timeout 400 "$KILN" tune "$kernel" $sizes --device "$TUNE_DEVICE" --budget "$BUDGET" --db "$TUNE_DB" --json \
              2>"$LOGS/tune-$kernel.log")
      echo "$out" >>"$LOGS/kiln-tune.log"
      best=$(json_field best_ns "$out")
      if [ -z "$best" ]; then
        FAILED=1
        row "tune $kernel" "FAILED" "$(tail -1 "$LOGS/tune-$kernel.log" | cut -c1-80)"
        continue
      fi
      case $kernel in
        exp-chain) rate=$(awk -v t="$best" 'BEGIN { printf "%.0f", 2 * 4 * 2^28 / t }') ;;
        sum-rows) rate=$(awk -v t="$best" 'BEGIN { printf "%.0f", 4 * 16384 * (16384 + 1) / t }') ;;
        matmul) rate=$(awk -v t="$best" 'BEGIN { printf "%.1f", 2 * 4096^3 / t / 1000 }') ;;
      esac
      torch=$(perf "$torch_name" "$LOGS/torch.log")
      ratio=""
      [ -n "$torch" ] && ratio=$(awk -v a="$rate" -v b="$torch" 'BEGIN { printf "%.0f%%", 100 * a / b }')
      row "tune $kernel" "$rate $unit" "${ratio:-?} of torch ${torch:-n/a} (target >= $target%); $(json_field speedup "$out" | cut -c1-5)x over untuned"
      row "" "" "seq: $(json_field sequence "$out" | cut -c1-76)"
      # shellcheck disable=SC2086
      again=$(timeout 120 "$KILN" tune "$kernel" $sizes --device "$TUNE_DEVICE" --db "$TUNE_DB" --json 2>/dev/null)
      echo "$again" >>"$LOGS/kiln-tune.log"
      row "tune $kernel again" "$(json_field from_cache "$again" | sed 's/true/cached/')" \
        "$(json_field candidates_measured "$again") candidates measured, $(json_field tune_seconds "$again" | cut -c1-6) s"
    done
  fi

  # ---------------------------------------------------------- mma --
  # Issue 12: half-precision matrix products on the tensor cores (the MMA op
  # and mma_tile), tuned on the tune device beside torch's matmul in the same
  # run: f16 and bf16 at 4096^3 and 1024^3, then the odd and skinny shapes,
  # each checked against the reference by `kiln run --tuned`.
  # KILN_GPU_MMA_BUDGET (seconds per tune, default 20), KILN_GPU_MMA_DTYPES,
  # KILN_GPU_MMA_SHAPES (a subset of "4096 1024 1000x999x1001 16x4096x4096
  # 4097x4095x4093 1x4096x4096 8x4096x4096", default the first four),
  # KILN_GPU_MMA_DTYPES (f16 bf16 f32 tf32; tf32 = f32 tuned with --allow-tf32
  # against torch with allow_tf32, f32 = exact against cuBLAS sgemm),
  # KILN_GPU_MMA_OPTS (sequences separated by '|', each timed first at 4096^3 by
  # `kiln run --opt SEQ --no-check`: configs side by side without a tuning),
  # KILN_GPU_MMA_OPT_CHECKS (the shapes each of those sequences is checked at
  # against the C++ reference, from the list above; default "1024").
  if want mma && [ -n "$(grep -m1 "^    $TUNE_DEVICE " "$LOGS/kiln-devices-gpu.log" 2>/dev/null)" ]; then
    # The ops the kernels below are made of, on the device against the
    # interpreter (MMA, cp.async, ldmatrix, WGMMA on sm_90), and simt_staged
    # against the untuned f32 kernel bit for bit: seconds.
    run_tests mma-op-tests "$BUILD/bin/kiln_cuda_tests" --gtest_filter='CudaMmaDevice.*:CudaCopyDevice.*:CudaWgmmaDevice.*:CudaSimtStagedDevice.*'
    MMA_DB=$LOGS/tuning-mma.sqlite
    rm -f "$MMA_DB"
    MMA_BUDGET=${KILN_GPU_MMA_BUDGET:-20}
    MMA_DTYPES=${KILN_GPU_MMA_DTYPES:-f16 bf16}
    if [ "${KILN_GPU_SKIP_TORCH:-0}" != 1 ]; then
      python3 - "$MMA_DTYPES" >"$LOGS/torch-mma.log" 2>&1 <<'PY' || true
import sys, torch
dev = "cuda"
def median_ms(fn, repeats=20, warmups=3):
    for _ in range(warmups): fn()
    times = []
    for _ in range(repeats):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    return sorted(times)[(len(times) - 1) // 2]
for name in sys.argv[1].split():
    dt = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "tf32": torch.float32}[name]
    # f32: exact f32 products (cuBLAS sgemm); tf32: torch's allow_tf32 switch.
    torch.backends.cuda.matmul.allow_tf32 = name == "tf32"
    for n in (4096, 1024):
        a = torch.rand(n, n, device=dev, dtype=dt); b = torch.rand(n, n, device=dev, dtype=dt)
        print("PERF matmul_%d_%s" % (n, name), 2 * n ** 3 / median_ms(lambda: a @ b) / 1e9, "TFLOP/s")
PY
    fi
    MMA_SHAPES=${KILN_GPU_MMA_SHAPES:-4096 1024 1000x999x1001 16x4096x4096}
    IFS='|' read -ra MMA_OPTS <<<"${KILN_GPU_MMA_OPTS:-}"
    for dt in $MMA_DTYPES; do
      # "tf32": f32 inputs with the tuning's allow_tf32 precision option.
      dtype_args="--dtype $dt"
      [ "$dt" = tf32 ] && dtype_args="--dtype f32 --allow-tf32"
      for opt in "${MMA_OPTS[@]}"; do
        # shellcheck disable=SC2086
        out=$(timeout 120 "$KILN" run matmul --size 4096 ${dtype_args%--allow-tf32} --device "$TUNE_DEVICE" --opt "$opt" --no-check \
                --repeats 10 --json 2>>"$LOGS/run-mma-opts.log")
        echo "$out" >>"$LOGS/kiln-run-mma-opts.log"
        gflops=$(json_field gflops "$out")
        row "mma: 4096 $dt --opt" "$(awk -v g="${gflops:-0}" 'BEGIN { printf "%.1f TFLOP/s", g / 1000 }')" "$(echo "$opt" | cut -c1-76)"
        # The same sequence checked against the C++ reference where that is
        # quick (1024^3, odd shapes): the 4096^3 timing above is unchecked.
        for check in ${KILN_GPU_MMA_OPT_CHECKS:-1024}; do
          IFS=x read -r mm nn kk <<<"$check"
          [ -z "${nn:-}" ] && nn=$mm && kk=$mm
          # shellcheck disable=SC2086
          checked=$(timeout 120 "$KILN" run matmul --m "$mm" --n "$nn" --k "$kk" $dtype_args --device "$TUNE_DEVICE" \
                      --opt "$opt" --repeats 3 --json 2>>"$LOGS/run-mma-opts.log" | grep -o '"ok":[a-z]*' | head -1)
          row "mma: $check $dt --opt check" "${checked:-FAILED}" "$(echo "$opt" | cut -c1-76)"
        done
      done
      for spec in "4096|--size 4096" "1024|--size 1024" "1000x999x1001|--m 1000 --n 999 --k 1001" \
                  "16x4096x4096|--m 16 --n 4096 --k 4096" "4097x4095x4093|--m 4097 --n 4095 --k 4093" \
                  "1x4096x4096|--m 1 --n 4096 --k 4096" "8x4096x4096|--m 8 --n 4096 --k 4096"; do
        IFS='|' read -r shape sizes <<<"$spec"
        [[ " $MMA_SHAPES " == *" $shape "* ]] || continue
        # shellcheck disable=SC2086
        out=$(timeout 200 "$KILN" tune matmul $sizes $dtype_args --device "$TUNE_DEVICE" --budget "$MMA_BUDGET" \
                --db "$MMA_DB" --json 2>"$LOGS/tune-mma-$shape-$dt.log")
        echo "$out" >>"$LOGS/kiln-tune-mma.log"
        best=$(json_field best_ns "$out")
        if [ -z "$best" ]; then
          FAILED=1
          row "mma: matmul $shape $dt" "FAILED" "$(tail -1 "$LOGS/tune-mma-$shape-$dt.log" | cut -c1-80)"
          continue
        fi
        IFS=x read -r mm nn kk <<<"$shape"
        [ -z "${nn:-}" ] && nn=$mm && kk=$mm
        rate=$(awk -v t="$best" -v m="$mm" -v n="$nn" -v k="$kk" 'BEGIN { printf "%.1f", 2 * m * n * k / t / 1000 }')
        torch=$(perf "matmul_${shape}_$dt" "$LOGS/torch-mma.log")
        ratio=""
        [ -n "$torch" ] && ratio=$(awk -v a="$rate" -v b="$torch" 'BEGIN { printf "%.2fx", a / b }')
        # shellcheck disable=SC2086
        checked=$(timeout 200 "$KILN" run matmul $sizes $dtype_args --device "$TUNE_DEVICE" --tuned --db "$MMA_DB" \
                    --json 2>"$LOGS/run-mma-$shape-$dt.log" | grep -o '"ok":[a-z]*' | head -1)
        row "mma: matmul $shape $dt" "$rate TFLOP/s" "${ratio:+$ratio torch ${torch} TFLOP/s; }run --tuned ${checked:-?}; $(json_field tune_seconds "$out" | cut -c1-5) s"
        row "" "" "seq: $(json_field sequence "$out" | cut -c1-76)"
      done
    done
  fi

  # ---------------------------------------------------------- rows --
  # Issue 13: softmax-rows, layernorm-rows and rmsnorm-rows, tuned on the
  # tune device, against kiln's own tuned add (2^28 f32, same run; target
  # >= 90% of its bandwidth) and torch (CUDA events, cold L2 as above). m
  # makes every input 2^28 elements (512 MB in f16, far beyond the H200's
  # 60 MB L2), below. KILN_GPU_ROWS_BUDGET (seconds per tune, default 12),
  # KILN_GPU_ROWS_KERNELS, KILN_GPU_ROWS_NS and KILN_GPU_ROWS_DTYPES
  # (space-separated) narrow it to fit one device call. Each tuned row
  # prints GB/s, x add, x torch, the heuristic choice's GB/s (the tuner
  # times it first: what a compile without a tuning runs) and the whole
  # chosen sequence. KILN_GPU_ROWS_OPTS: hand-picked sequences timed in the
  # same call by `kiln run --opt SEQ --no-check` (a file, or the text
  # itself), one per line `KERNELS NS DTYPES SEQUENCE`, the first three
  # comma-separated lists or `*` (the step's own lists); `#` starts a
  # comment (scripts/gpu-rows-candidates.txt holds the current ones).
  if want rows && [ -n "$(grep -m1 "^    $TUNE_DEVICE " "$LOGS/kiln-devices-gpu.log" 2>/dev/null)" ]; then
    ROWS_DB=$LOGS/tuning-rows.sqlite
    rm -f "$ROWS_DB" "$LOGS/rows-sequences.txt"
    ROWS_BUDGET=${KILN_GPU_ROWS_BUDGET:-12}
    ROWS_KERNELS=${KILN_GPU_ROWS_KERNELS:-softmax-rows layernorm-rows rmsnorm-rows}
    # m = ceil(elements / n): 2^28 elements, the add yardstick's count, so a
    # fixed cost per launch weighs the same on both (at 2^26 the f16 rows
    # moved 256 MB against the add's 3.2 GB, and their times stopped at
    # 70 us whatever the schedule). KILN_GPU_ROWS_ELEMENTS to change it.
    ROWS_ELEMENTS=${KILN_GPU_ROWS_ELEMENTS:-268435456}
    export KILN_GPU_ROWS_ELEMENTS=$ROWS_ELEMENTS
    ROWS_NS=${KILN_GPU_ROWS_NS:-16384 768 4096 50257}
    ROWS_DTYPES=${KILN_GPU_ROWS_DTYPES:-f32 f16 bf16}
    rows_m() { echo $((ROWS_ELEMENTS / $1 + (ROWS_ELEMENTS % $1 > 0))); }
    # A sequence in short for the table (the whole one goes to rows-sequences.txt):
    # tr = tiled_reduce, sl = split_loop, sa = split_aligned, u = unroll, rc = row_cache, vec = vectorize,
    # rd = reciprocal_divide; l = loop, f = factor, b = branch, sg = subgroup;
    # rc(l=0,1) = row_cache(loop=0,local=1), the row in LOCAL memory.
    rows_short() {
      sed -e 's/tiled_reduce(/tr(/g; s/split_loop(/sl(/g; s/split_aligned(/sa(/g; s/unroll(/u(/g; s/row_cache(/rc(/g' \
          -e 's/vectorize(lanes=/vec(/g; s/reciprocal_divide()/rd()/g; s/loop=/l=/g; s/factor=/f=/g' \
          -e 's/local=//g; s/branch=/b=/g; s/subgroup=/sg=/g; s/; /;/g' <<<"$1"
    }
    # GB/s of KERNEL m n BYTES-per-element in NS nanoseconds: each element read
    # and written once (rmsnorm also reads its n weights).
    rows_rate() {
      local extra=0
      [ "$1" = rmsnorm-rows ] && extra=$3
      awk -v t="$5" -v m="$2" -v n="$3" -v b="$4" -v e="$extra" 'BEGIN { printf "%.0f", (2 * m * n + e) * b / t }'
    }
    : >"$LOGS/torch-rows.log"
    if [ "${KILN_GPU_SKIP_TORCH:-0}" != 1 ] && python3 -c 'import torch' 2>/dev/null; then
      python3 - "$ROWS_KERNELS" "$ROWS_NS" "$ROWS_DTYPES" >"$LOGS/torch-rows.log" 2>&1 <<'PY' || true
import os, sys, torch
import torch.nn.functional as F
kernels, ns, dtypes = (a.split() for a in sys.argv[1:4])
dev = "cuda"
flush = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
def median_ms(fn, repeats=20, warmups=3):
    for _ in range(warmups): fn()
    times = []
    for _ in range(repeats):
        flush.fill_(1)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    return sorted(times)[(len(times) - 1) // 2]
def rms_norm(x, w, eps=1e-6):
    if hasattr(F, "rms_norm"): return F.rms_norm(x, (x.shape[-1],), w, eps)
    return (x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * w
types = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
for dt in dtypes:
    for n in map(int, ns):
        m = -(-int(os.environ.get("KILN_GPU_ROWS_ELEMENTS", 1 << 28)) // n)
        x = torch.rand(m, n, device=dev, dtype=types[dt]) * 2 - 1
        w = torch.rand(n, device=dev, dtype=types[dt]) + 0.5
        bytes_ = 2 * x.numel() * x.element_size()
        for k in kernels:
            fn = {"softmax-rows": lambda: torch.softmax(x, -1),
                  "layernorm-rows": lambda: F.layer_norm(x, (n,), eps=1e-5),
                  "rmsnorm-rows": lambda: rms_norm(x, w)}[k]
            extra = n * x.element_size() if k == "rmsnorm-rows" else 0
            print("PERF rows_%s_%d_%s" % (k, n, dt), (bytes_ + extra) / median_ms(fn) / 1e6, "GB/s")
        del x, w
PY
    fi
    out=$(timeout 300 "$KILN" tune add --size 268435456 --device "$TUNE_DEVICE" --budget "$ROWS_BUDGET" --db "$ROWS_DB" --json \
            2>"$LOGS/tune-rows-add.log")
    echo "$out" >>"$LOGS/kiln-tune-rows.log"
    add_ns=$(json_field best_ns "$out")
    add_rate=""
    [ -n "$add_ns" ] && add_rate=$(awk -v t="$add_ns" 'BEGIN { printf "%.0f", 3 * 4 * 2^28 / t }')
    row "rows: tune add 2^28 f32" "${add_rate:-FAILED} GB/s" "the yardstick (kiln's own add, this run)"
    for dt in $ROWS_DTYPES; do
      bytes=4
      [ "$dt" = f32 ] || bytes=2
      for n in $ROWS_NS; do
        m=$(rows_m "$n")
        for kernel in $ROWS_KERNELS; do
          out=$(timeout 300 "$KILN" tune "$kernel" --m "$m" --n "$n" --dtype "$dt" --device "$TUNE_DEVICE" \
                  --budget "$ROWS_BUDGET" --db "$ROWS_DB" --json 2>"$LOGS/tune-rows-$kernel-$n-$dt.log")
          echo "$out" >>"$LOGS/kiln-tune-rows.log"
          best=$(json_field best_ns "$out")
          what="rows: ${kernel%-rows} n=$n $dt"
          if [ -z "$best" ]; then
            FAILED=1
            row "$what" "FAILED" "$(tail -1 "$LOGS/tune-rows-$kernel-$n-$dt.log" | cut -c1-80)"
            continue
          fi
          rate=$(rows_rate "$kernel" "$m" "$n" "$bytes" "$best")
          torch=$(perf "rows_${kernel}_${n}_$dt" "$LOGS/torch-rows.log")
          vs_add=$([ -n "$add_rate" ] && awk -v a="$rate" -v b="$add_rate" 'BEGIN { printf "%.2fx", a / b }')
          vs_torch=$([ -n "$torch" ] && awk -v a="$rate" -v b="$torch" 'BEGIN { printf "%.2fx", a / b }')
          # The first candidate the tuner measures is the heuristic choice.
          heuristic_ns=$(grep -m1 -oE '^tune: \[1/[0-9]+\] measured +[0-9.]+ (ns|us|ms)' "$LOGS/tune-rows-$kernel-$n-$dt.log" |
                           awk '{ v = $(NF - 1); u = $NF; printf "%.0f", v * (u == "ms" ? 1e6 : u == "us" ? 1e3 : 1) }')
          heuristic=""
          [ -n "$heuristic_ns" ] && heuristic=$(rows_rate "$kernel" "$m" "$n" "$bytes" "$heuristic_ns")
          # Candidates measured, and skipped without a measurement (the tuner's warning).
          measured=$(json_field candidates_measured "$out")
          skipped=$(grep -oE '[0-9]+ candidates? (was|were) skipped' <<<"$out" | head -1 | cut -d' ' -f1)
          row "$what" "$rate GB/s" "x add ${vs_add:-?} (add ${add_rate:-n/a}, target >= 0.90x); x torch ${vs_torch:-?} (${torch:-n/a}); heuristic ${heuristic:-?} GB/s; ${measured:-?} measured, ${skipped:-0} skipped"
          seq=$(json_field sequence "$out")
          echo "$what: $seq" >>"$LOGS/rows-sequences.txt"
          row "" "" "seq: $(rows_short "$seq")"
        done
      done
    done
    # Hand-picked sequences, timed without a tuning (KILN_GPU_ROWS_OPTS).
    ROWS_OPTS=${KILN_GPU_ROWS_OPTS:-}
    if [ -n "$ROWS_OPTS" ] && [ -f "$ROWS_OPTS" ]; then ROWS_OPTS=$(cat "$ROWS_OPTS")
    elif [ -n "$ROWS_OPTS" ] && [ -f "$ROOT/$ROWS_OPTS" ]; then ROWS_OPTS=$(cat "$ROOT/$ROWS_OPTS"); fi
    rows_list() { if [ "$1" = "*" ]; then echo "$2"; else echo "${1//,/ }"; fi; }
    while read -r opt_kernels opt_ns opt_dtypes opt_seq; do
      [ -z "$opt_kernels" ] || [[ "$opt_kernels" == \#* ]] && continue
      for dt in $(rows_list "$opt_dtypes" "$ROWS_DTYPES"); do
        bytes=4
        [ "$dt" = f32 ] || bytes=2
        for n in $(rows_list "$opt_ns" "$ROWS_NS"); do
          m=$(rows_m "$n")
          for kernel in $(rows_list "$opt_kernels" "$ROWS_KERNELS"); do
            out=$(timeout 120 "$KILN" run "$kernel" --m "$m" --n "$n" --dtype "$dt" --device "$TUNE_DEVICE" --opt "$opt_seq" \
                    --no-check --repeats 20 --json 2>>"$LOGS/run-rows-opts.log")
            echo "$out" >>"$LOGS/kiln-run-rows-opts.log"
            ns=$(json_field time_ns "$out")
            what="rows opt: ${kernel%-rows} n=$n $dt"
            if [ -z "$ns" ] || [ "$(json_field ok "$out")" != true ]; then
              row "$what" "n/a" "$(tail -1 "$LOGS/run-rows-opts.log" | cut -c1-100)"
            else
              rate=$(rows_rate "$kernel" "$m" "$n" "$bytes" "$ns")
              torch=$(perf "rows_${kernel}_${n}_$dt" "$LOGS/torch-rows.log")
              vs_add=$([ -n "$add_rate" ] && awk -v a="$rate" -v b="$add_rate" 'BEGIN { printf "%.2fx", a / b }')
              vs_torch=$([ -n "$torch" ] && awk -v a="$rate" -v b="$torch" 'BEGIN { printf "%.2fx", a / b }')
              # The same sequence checked against the C++ reference on 64 rows.
              checked=$(timeout 120 "$KILN" run "$kernel" --m 64 --n "$n" --dtype "$dt" --device "$TUNE_DEVICE" --opt "$opt_seq" \
                          --repeats 1 --json 2>>"$LOGS/run-rows-opts.log")
              checked=$(json_field ok "$checked")
              [ "$checked" = true ] || FAILED=1
              row "$what" "$rate GB/s" "x add ${vs_add:-?}; x torch ${vs_torch:-?}; check on 64 rows: ${checked:-FAILED}"
            fi
            row "" "" "opt: $(rows_short "$opt_seq")"
          done
        done
      done
    done <<<"$ROWS_OPTS"
  fi

  # ---------------------------------------------------------- tunetime --
  # Issue 14: cold `kiln tune --budget 2` of the standard kernels at the
  # compass sizes on the tune device (bench/tune_time.sh --sizes gpu), each
  # with a fresh database and compile caches: wall seconds around the
  # command, the set-up/search/compile/measure split, candidates measured
  # and the best time, against a cold 60 s tuning of the same kernel
  # (KILN_GPU_TUNETIME_LONG: its seconds, 0 skips it; _KERNELS: a subset).
  # Then, unless KILN_GPU_TUNETIME_MODEL=0, two 30 s tunings at other sizes
  # in one database (records for the learned cost model) and `kiln cache
  # model`: its held-out rank correlation against the analytic model's.
  # KILN_GPU_TUNETIME_BUDGET (default 2). About 8 minutes with the 60 s ones.
  if want tunetime && [ -n "$(grep -m1 "^    $TUNE_DEVICE " "$LOGS/kiln-devices-gpu.log" 2>/dev/null)" ]; then
    TT_DB=$LOGS/tunetime.sqlite
    TT_CACHE=$LOGS/tunetime-cache
    rm -rf "$TT_DB" "$TT_DB"-* "$TT_CACHE"
    TT_BUDGET=${KILN_GPU_TUNETIME_BUDGET:-2}
    tt_tune() {  # budget db kernel sizes...: prints the JSON
      local budget=$1 db=$2 kernel=$3
      shift 3
      XDG_CACHE_HOME=$TT_CACHE timeout 300 "$KILN" --config "$GPU_CONFIG" tune "$kernel" "$@" --device "$TUNE_DEVICE" \
        --budget "$budget" --db "$db" --json 2>>"$LOGS/tunetime.err"
    }
    # Each kernel cold at the budget and, unless KILN_GPU_TUNETIME_LONG=0,
    # cold at that many seconds (default 60) in a database of its own: the
    # table of bench/tune_time.sh (wall, split, best, share of the long best).
    TT_LONG=${KILN_GPU_TUNETIME_LONG:-60}
    "$ROOT/bench/tune_time.sh" --kiln "$KILN" --config "$GPU_CONFIG" --budget "$TT_BUDGET" --long "$TT_LONG" \
      --sizes gpu --kernels "${KILN_GPU_TUNETIME_KERNELS:-matmul,softmax-rows,layernorm-rows,sum-rows,exp-chain,add}" \
      --logs "$LOGS/tunetime" "$TUNE_DEVICE" >"$LOGS/tunetime.md" 2>>"$LOGS/tunetime.err"
    cat "$LOGS/tunetime.md"
    median=$(sed -n 's/^median wall \([0-9.]*\) s.*/\1/p' "$LOGS/tunetime.md")
    if [ -n "$median" ]; then
      row "tunetime median (cold)" "$median s" "budget $TT_BUDGET s, vs ${TT_LONG} s tunings: $LOGS/tunetime.md"
    else
      FAILED=1
      row "tunetime" "FAILED" "$(tail -1 "$LOGS/tunetime.err" | cut -c1-80)"
    fi
  fi
  if want tunetime && [ "${KILN_GPU_TUNETIME_MODEL:-1}" != 0 ] &&
     [ -n "$(grep -m1 "^    $TUNE_DEVICE " "$LOGS/kiln-devices-gpu.log" 2>/dev/null)" ]; then
    # Records for the learned model: two tunings of 24 candidates at other sizes.
    for spec in "softmax-rows|--m 8192 --n 8192" "matmul|--size 2048"; do
      IFS='|' read -r kernel sizes <<<"$spec"
      # shellcheck disable=SC2086
      tt_tune 30 "$TT_DB" "$kernel" $sizes >>"$LOGS/kiln-tunetime.log"
    done
    model=$(timeout 60 "$KILN" cache model --device "$TUNE_DEVICE" --db "$TT_DB" --json 2>>"$LOGS/tunetime.err")
    echo "$model" >>"$LOGS/kiln-tunetime.log"
    row "tunetime cost model" "$(json_field ranks_by "$model")" \
      "held out on $(json_field held_out_tunings "$model") tunings: learned $(json_field learned_spearman "$model" | cut -c1-5), analytic $(json_field analytic_spearman "$model" | cut -c1-5) ($(json_field records "$model") records)"
  fi

  # ---------------------------------------------------------- multitune --
  # Issue 14: a folder of 11 kernels (one small transformer layer,
  # bench/model-kernels) tuned on the tune device by one `kiln tune DIR
  # --budget B` call into a fresh database; its summary table goes to the
  # log, the row says the wall time against the budget and the kernels
  # tuned. KILN_GPU_MULTITUNE_BUDGET (default 30).
  if want multitune && [ -n "$(grep -m1 "^    $TUNE_DEVICE " "$LOGS/kiln-devices-gpu.log" 2>/dev/null)" ]; then
    MT_BUDGET=${KILN_GPU_MULTITUNE_BUDGET:-30}
    rm -f "$LOGS/multitune.sqlite"*
    start=$(date +%s.%N)
    XDG_CACHE_HOME=$LOGS/multitune-cache timeout 300 "$KILN" --config "$GPU_CONFIG" tune "$ROOT/bench/model-kernels" \
      --device "$TUNE_DEVICE" --budget "$MT_BUDGET" --db "$LOGS/multitune.sqlite" >"$LOGS/multitune.log" 2>&1
    status=$?
    end=$(date +%s.%N)
    wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
    tuned=$(grep -c ' tuned$' "$LOGS/multitune.log")
    if [ "$status" = 0 ]; then
      row "multitune 11 kernels" "$wall s" "budget $MT_BUDGET s; $tuned tuned (table: $LOGS/multitune.log)"
    else
      FAILED=1
      row "multitune 11 kernels" "FAILED" "$(tail -1 "$LOGS/multitune.log" | cut -c1-80)"
    fi
    sed -n '/^kernel /,$p' "$LOGS/multitune.log"
  fi
else
  row "kiln devices/run" "missing" "$KILN not built"
fi

print_table | tee "$LOGS/summary.txt"
# The device tool brings back a bounded number of files from $OUT: a `rows`
# step writes one log per tuning, and a call of 27 tunings came back with
# none of them. With OUT set (KILN_GPU_PACK_LOGS=0 keeps them as they are)
# the logs, databases included, go into one logs.tgz beside summary.txt.
PACK=$(mktemp --suffix=.tgz)
if [ -n "${OUT:-}" ] && [ "${KILN_GPU_PACK_LOGS:-1}" = 1 ] &&
  tar czf "$PACK" -C "$LOGS" --exclude=./summary.txt . 2>/dev/null; then
  find "$LOGS" -mindepth 1 -maxdepth 1 -not -name summary.txt -exec rm -rf {} +
  mv "$PACK" "$LOGS/logs.tgz"
fi
rm -f "$PACK"
exit $FAILED
