// The CBLAS plugin's internal interface: compiles the kernels that are
// matrix products (gemm_match.hpp) into OpenBLAS sgemm/dgemm calls
// (openblas.hpp) and refuses every other kernel with UNSUPPORTED. One device,
// "cblas:0": OpenBLAS on the host's CPU.
//
// Files: plugin.cpp (ABI table, init, options), device.cpp (DeviceInfo),
// compile.cpp (recognise, program_source), launch.cpp (the call, timed).
// The pool is the SDK's host-memory pool (kiln/sdk/host_memory.hpp), as in
// the C plugin: buffers are 64-byte aligned host memory, and launches use
// kiln_arg.host_pointer, so a buffer of c:0 runs on cblas:0 (and back)
// without a copy.
#pragma once

#include "gemm_match.hpp"
#include "openblas.hpp"

#include <kiln/plugin.h>

#include <string>

namespace kiln::cblas {

inline constexpr const char* kPluginVersion = "0.1.0";

struct State {
  const OpenBlas* blas = nullptr;
  int threads = 1;
  kiln_device_info info{};
  std::string cache_key;
};
State& state();

struct Program {
  GemmPlan plan;
  std::string text;  // program_source
};

kiln_device_info describe_device(const OpenBlas& blas, int threads);

kiln_error* compile(kiln_compile_args* args);
kiln_error* program_source(kiln_program_source_args* args);
void program_release(kiln_program* program);
kiln_error* cache_key(kiln_cache_key_args* args);
kiln_error* launch(kiln_launch_args* args);
kiln_error* launch_timed(kiln_timed_launch_args* args);

}  // namespace kiln::cblas
