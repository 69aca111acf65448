// lowering_bench: how long the core takes to lower kernels, without a
// device: the heuristic schedule of the long row kernels on preset:h200
// (every candidate recipe lowered and priced, on every hardware thread:
// what `kiln run` and the tuner ask before anything is measured), one
// optimize() of the 21-step recipe it picks for f32 softmax, and one
// ir::verify of its result.
//
//   build/bin/lowering_bench [--benchmark_filter=Heuristic] [--benchmark_repetitions=3]
//   taskset -c 0 build/bin/lowering_bench   (one core: the heuristic's threads share it)
//
// Debian's Google Benchmark is a debug build and says so; what it times
// here is libkiln's code, built with the build type's flags.
#include "kiln/ir/verify.hpp"
#include "kiln/kernels/library.hpp"
#include "kiln/passes/device_presets.hpp"
#include "kiln/passes/optimization.hpp"
#include "kiln/tune/heuristic.hpp"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstdio>
#include <string>

namespace {

using namespace kiln;

// The longest rows: 5342 x 50257 (2^28 elements).
constexpr kernels::KernelSize kLongRows{.m = 5342, .n = 50257};

kernels::StandardKernel long_rows(const char* name, ir::DType dtype) {
  Result<kernels::StandardKernel> kernel = kernels::make_standard_kernel(name, kLongRows, dtype);
  if (!kernel.ok()) {
    std::fprintf(stderr, "lowering_bench: %s\n", kernel.error().to_string().c_str());
    std::exit(1);
  }
  return std::move(kernel).value();
}

// The untuned pick for f32 softmax at kLongRows on preset:h200: 21 steps
// (tests/tune/heuristic_schedule_test.cpp pins it).
passes::OptSequence softmax_recipe() {
  const auto kernel = long_rows("softmax-rows", ir::DType::F32);
  Result<tune::HeuristicSchedule> schedule = tune::heuristic_schedule(kernel.kernel, passes::h200_preset());
  if (!schedule.ok()) {
    std::fprintf(stderr, "lowering_bench: %s\n", schedule.error().to_string().c_str());
    std::exit(1);
  }
  return schedule->sequence;
}

ir::Kernel optimized_softmax() {
  const auto kernel = long_rows("softmax-rows", ir::DType::F32);
  return passes::optimize(kernel.kernel, softmax_recipe(), passes::h200_preset()).value();
}

void BM_HeuristicSchedule(benchmark::State& state, const char* name, ir::DType dtype) {
  const auto kernel = long_rows(name, dtype);
  const DeviceInfo device = passes::h200_preset();
  std::size_t considered = 0;
  for (auto _ : state) {
    Result<tune::HeuristicSchedule> schedule = tune::heuristic_schedule(kernel.kernel, device);
    if (!schedule.ok()) {
      state.SkipWithError(schedule.error().to_string().c_str());
      return;
    }
    considered = schedule->considered;
  }
  state.counters["candidates"] = static_cast<double>(considered);
}

void BM_OptimizeSoftmaxRecipe(benchmark::State& state) {
  const auto kernel = long_rows("softmax-rows", ir::DType::F32);
  const passes::OptSequence recipe = softmax_recipe();
  const DeviceInfo device = passes::h200_preset();
  for (auto _ : state) benchmark::DoNotOptimize(passes::optimize(kernel.kernel, recipe, device));
}

void BM_VerifyOptimizedSoftmax(benchmark::State& state) {
  const ir::Kernel kernel = optimized_softmax();
  for (auto _ : state) benchmark::DoNotOptimize(ir::verify(kernel));
  state.counters["ops"] = static_cast<double>(kernel.size());
}

}  // namespace

BENCHMARK_CAPTURE(BM_HeuristicSchedule, softmax_f32, "softmax-rows", ir::DType::F32)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_HeuristicSchedule, softmax_f16, "softmax-rows", ir::DType::F16)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_HeuristicSchedule, layernorm_f16, "layernorm-rows", ir::DType::F16)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_HeuristicSchedule, rmsnorm_f16, "rmsnorm-rows", ir::DType::F16)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_OptimizeSoftmaxRecipe)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_VerifyOptimizedSoftmax)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
