// The CBLAS plugin's internal interface: compiles the kernels that are
// matrix products (gemm_match.hpp) into OpenBLAS sgemm/dgemm calls
// (openblas.hpp) and refuses every other kernel with UNSUPPORTED. One device,
// "cblas:0": OpenBLAS on the host's CPU.
//
// Files (the plugin shape, docs/plugin-guide.md): plugin.cpp (ABI table,
// init, options, cache key), device.cpp (DeviceInfo, the one device),
// compile.cpp (recognise, program_source), launch.cpp (the call, timed);
// helpers: gemm_match.cpp (the pattern), openblas.cpp (the library).
// No pool.cpp: the pool is the SDK's host-memory pool (kiln/sdk/host_memory.hpp), as in
// the C plugin: buffers are 64-byte aligned host memory, and launches use
// kiln_arg.host_pointer, so a buffer of c:0 runs on cblas:0 (and back)
// without a copy.
#pragma once

#include "gemm_match.hpp"
#include "openblas.hpp"

#include <kiln/plugin.h>
#include <kiln/sdk/plugin_table.hpp>

#include <string>

namespace kiln::cblas {

inline constexpr const char* kPluginVersion = "0.1.0";

struct State {
  const OpenBlas* blas = nullptr;
  int threads = 1;
  kiln_device_info info{};
  std::string cache_key;
};
State& state();  // throws INVALID_ARGUMENT outside init..shutdown

struct Program {
  GemmPlan plan;
  std::string text;  // program_source
};

// device.cpp
kiln_device_info describe_device(const OpenBlas& blas, int threads);
extern const sdk::DeviceFunctions kDeviceFunctions;

// compile.cpp
extern const sdk::CompileFunctions kCompileFunctions;

// launch.cpp
extern const sdk::LaunchFunctions kLaunchFunctions;

}  // namespace kiln::cblas
