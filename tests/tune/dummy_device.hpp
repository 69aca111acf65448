// The dummy device the autotuner tests measure on: simulated, deterministic
// timings (docs/dummy.md). The runtime initialises a plugin once per process,
// so every test of this binary shares these options.
#pragma once

#include <gtest/gtest.h>

#include "kiln/ir/text.hpp"
#include "kiln/runtime.hpp"

#include <string>
#include <string_view>

namespace kiln::test {

inline const Runtime& dummy_runtime() {
  static const Runtime runtime = [] {
    const std::string text = R"({"plugins": {"c": {"enabled": false}, "cblas": {"enabled": false},
        "cuda": {"enabled": false}, "opencl": {"enabled": false}, "vulkan": {"enabled": false},
        "dummy": {"enabled": true, "options": {"simulate": [{"name": "sim-gpu", "launch_overhead_ns": 0, "memory_bandwidth_gbps": 20000},
                                                {"name": "sim-mma", "launch_overhead_ns": 0, "memory_bandwidth_gbps": 20000, "mma": true},
                                                {"name": "sim-wgmma", "launch_overhead_ns": 0, "memory_bandwidth_gbps": 20000, "mma": true,
                                                 "copy_async": true, "load_matrix": true, "wgmma": true, "local_memory_bytes": 232448}], "noise": 0}}}})";
    Result<Config> config = parse_config(text, "tune-test-config.json");
    if (!config) throw ErrorException(config.error());
    Result<Runtime> runtime = Runtime::create(std::move(config).value());
    if (!runtime) throw ErrorException(runtime.error());
    return std::move(runtime).value();
  }();
  return runtime;
}

inline Device dummy_device() { return dummy_runtime().device("dummy:0").value(); }
// The same simulated GPU, claiming the MMA op (every shape, docs/dummy.md).
inline Device dummy_mma_device() { return dummy_runtime().device("dummy:1").value(); }
// The same, also claiming the asynchronous copies and the warp-group MMA
// (WGMMA, as an H200) and an sm_90's 227 KiB of LOCAL memory per group.
inline Device dummy_wgmma_device() { return dummy_runtime().device("dummy:2").value(); }

inline ir::Kernel parse_ir(std::string_view text) {
  Result<ir::Kernel> kernel = ir::parse(text);
  if (!kernel) throw ErrorException(kernel.error());
  return std::move(kernel).value();
}

}  // namespace kiln::test
