// Test helpers of the MMA optimizations (opt_mma_tile_test.cpp,
// opt_mma_staged_test.cpp): the dummy device claiming the MMA op, a GPU
// preset that does, and a differential run against the untuned kernel.
#pragma once

#include "passes/device_runner.hpp"
#include "passes/opt_perf_support.hpp"

#include <memory>
#include <string>

namespace kiln::passes::test {

// The dummy plugin alone, with four devices: dummy:0 claims the MMA op and
// features; dummy:1 also the asynchronous copies, the warp's matrix loads
// and an sm_90's 227 KiB of LOCAL memory per group (as the CUDA plugin on an
// H200); dummy:2 also the warp-group MMA (WGMMA, as on an H200); dummy:3 is
// a one-thread-per-group CPU with DOT_BF16 (as c:0 with AVX512_BF16). One
// runtime for every test of a binary: a process loads the plugin once, with
// the options of the first runtime that asks (a second runtime with other
// options gets the first's devices, so a test that made its own failed
// whenever another test of its binary had run first).
inline const Runtime* mma_runtime() {
  static const std::unique_ptr<Runtime> runtime = []() -> std::unique_ptr<Runtime> {
    Result<Config> config = parse_config(
        R"({"plugins": {"dummy": {"enabled": true, "options": {"simulate": [{"mma": true},
              {"mma": true, "copy_async": true, "load_matrix": true, "local_memory_bytes": 232448},
              {"mma": true, "copy_async": true, "load_matrix": true, "wgmma": true, "local_memory_bytes": 232448},
              {"max_local_threads": 1, "vector_widths": [4, 8], "dot_bf16": true}]}},
                        "c": {"enabled": false}, "opencl": {"enabled": false}, "vulkan": {"enabled": false},
                        "cuda": {"enabled": false}}})",
        "mma-tile-test-config.json");
    if (!config) return nullptr;
    Result<Runtime> made = Runtime::create(std::move(config).value());
    if (!made) return nullptr;
    return std::make_unique<Runtime>(std::move(made).value());
  }();
  return runtime.get();
}

// Device `index` of the shared dummy runtime, or nullptr (the test then
// fails: the dummy is always built with the tests).
inline const DeviceInfo* shared_dummy_device_info(std::size_t index) {
  const Runtime* runtime = mma_runtime();
  if (runtime == nullptr) return nullptr;
  const PluginRecord* record = runtime->plugin("dummy");
  if (record == nullptr || record->status != PluginStatus::Loaded || record->devices.size() <= index) return nullptr;
  return &record->devices[index];
}

// The dummy's MMA device (with `async`, the one with copies and matrix
// loads; with `wgmma`, the one with the warp-group MMA too).
inline const DeviceInfo* mma_device_info(bool async = false, bool wgmma = false) {
  return shared_dummy_device_info(wgmma ? 2 : async ? 1 : 0);
}

// The dummy's DOT_BF16 CPU (dummy:3).
inline const DeviceInfo* dot_bf16_device_info() { return shared_dummy_device_info(3); }

// The GPU preset with the MMA op and its three features claimed.
inline DeviceInfo mma_preset() {
  DeviceInfo d = gpu_preset();
  d.op_kind_dtypes[KILN_OP_MMA] |= 1u << KILN_DTYPE_F32;
  for (unsigned f : {KILN_FEATURE_MMA_M16N8K16_F16, KILN_FEATURE_MMA_M16N8K16_BF16, KILN_FEATURE_MMA_M16N8K8_TF32})
    d.features[KILN_FEATURE_WORD(f)] |= KILN_FEATURE_MASK(f);
  d.vector_width_mask |= 1u << 8;
  return d;
}

// Applies `step` for the dummy's MMA device, runs the result there and the
// untuned kernel on the interpreter (same random inputs); "" when equal
// within `tolerance`.
inline std::string differs_on_dummy(const kernels::StandardKernel& k, std::string_view step, double tolerance = 0,
                             std::uint64_t seed = 5, bool async = false, bool wgmma = false) {
  const DeviceInfo* info = mma_device_info(async, wgmma);
  if (info == nullptr) return "the dummy's MMA device is not there";
  const ir::Kernel after = applied(k.kernel, step, *info);
  const Device device = mma_runtime()->device(info->id).value();
  return compare_outcomes(run_on_interpreter(k.kernel, k.args, seed), run_on_device(device, after, k.args, seed), tolerance);
}

}  // namespace kiln::passes::test
