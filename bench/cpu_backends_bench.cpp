// The CPU backends side by side, in one process, through the runtime (as a
// host app uses them): matmul 1024^3 f32 on c:0 (untuned: the standard
// kernel as built) and on cblas:0 (OpenBLAS), and exp-chain over 2^26 f32
// on c:0 next to a two-thread triad measuring this machine's memory
// bandwidth, and exp-chain over 2^18 f32 (in and out fit the two cores' L2:
// exp is the limit) next to libmvec's own expf over buffers in L2. Counters:
// GFLOP/s, GB/s, and the ratios c/cblas, exp-chain/triad and
// exp-chain/libmvec. Each kernel's result is checked against its C++
// reference once before it is timed (a fast wrong kernel measures nothing).
//
//   build/bin/cpu_backends_bench [--benchmark_filter=...]
//   KILN_BENCH_MATMUL=512 KILN_BENCH_EXP_LOG2=24 build/bin/cpu_backends_bench   (smaller)
#include <benchmark/benchmark.h>

#include <kiln/kernels/run.hpp>
#include <kiln/runtime.hpp>

#include "mvec_exp.hpp"
#include "triad.hpp"

#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

std::int64_t env_int(const char* name, std::int64_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::atoll(value) : fallback;
}

const std::int64_t kMatmulSize = env_int("KILN_BENCH_MATMUL", 1024);
const std::int64_t kExpChainElements = std::int64_t{1} << env_int("KILN_BENCH_EXP_LOG2", 26);
const std::int64_t kExpChainInL2Elements = std::int64_t{1} << env_int("KILN_BENCH_EXP_L2_LOG2", 18);

// Best rates measured so far in this process, for the ratio counters.
std::map<std::string, double>& best_rates() {
  static std::map<std::string, double> rates;
  return rates;
}

void record_best(const std::string& key, double rate) {
  double& best = best_rates()[key];
  best = std::max(best, rate);
}

// The c and cblas plugins only (the built-in defaults otherwise).
const kiln::Runtime& runtime() {
  static const kiln::Runtime instance = [] {
    kiln::Result<kiln::Config> config = kiln::parse_config(
        R"({"plugins": {"opencl": {"enabled": false}, "vulkan": {"enabled": false},
            "cuda": {"enabled": false}, "dummy": {"enabled": false}}})",
        "cpu-backends-bench.json");
    return kiln::Runtime::create(std::move(config).value()).value();
  }();
  return instance;
}

// A standard kernel compiled on a device, with its inputs uploaded and its
// result checked once.
struct Prepared {
  kiln::Device device;
  kiln::kernels::StandardKernel kernel;
  kiln::Program program;
  kiln::kernels::DeviceArguments arguments;
};

std::unique_ptr<Prepared> prepare(const std::string& device_id, const std::string& name,
                                  const kiln::kernels::KernelSize& size) {
  kiln::Device device = runtime().device(device_id).value();
  kiln::kernels::StandardKernel kernel = kiln::kernels::make_standard_kernel(name, size).value();
  kiln::Program program = device.compile(kernel.kernel).value();
  const std::vector<kiln::kernels::HostBuffer> inputs = kernel.make_inputs(1);
  kiln::kernels::DeviceArguments arguments =
      kiln::kernels::DeviceArguments::upload(device, kernel.args, inputs).value();
  device.launch(program, arguments.launch_args()).value().wait().value();
  const double error = kiln::kernels::check_against_reference(kernel, inputs, arguments.read_outputs().value());
  if (!(error <= kernel.tolerance))
    throw std::runtime_error(name + " on " + device_id + ": relative error " + std::to_string(error) + " > " +
                             std::to_string(kernel.tolerance));
  return std::make_unique<Prepared>(
      Prepared{std::move(device), std::move(kernel), std::move(program), std::move(arguments)});
}

// "c:0 exp-chain 1x67108864x1": what the best rates are recorded under.
std::string rate_key(const std::string& device_id, const std::string& name, const kiln::kernels::KernelSize& size) {
  return device_id + " " + name + " " + std::to_string(size.m) + "x" + std::to_string(size.n) + "x" + std::to_string(size.k);
}

// Times `kernel` on `device_id`: one timed run per iteration (manual time).
void time_kernel(benchmark::State& state, const std::string& device_id, const std::string& name,
                 const kiln::kernels::KernelSize& size) {
  // Prepared once: Google Benchmark calls this function again with more
  // iterations until the timing is stable. (The runtime first, so that it
  // outlives the buffers and programs at exit.)
  try {
    runtime();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  static std::map<std::string, std::unique_ptr<Prepared>> prepared;
  std::unique_ptr<Prepared>& p = prepared[rate_key(device_id, name, size)];
  try {
    if (p == nullptr) p = prepare(device_id, name, size);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  kiln::TimedLaunchOptions once;
  once.warmups = 0;
  once.repeats = 1;
  double total_ns = 0;
  for (auto _ : state) {
    const kiln::Timing timing = p->device.timed_launch(p->program, p->arguments.launch_args(), once).value();
    state.SetIterationTime(static_cast<double>(timing.median_ns) * 1e-9);
    total_ns += static_cast<double>(timing.median_ns);
  }
  const double mean_ns = total_ns / static_cast<double>(state.iterations());
  const double gflops = p->kernel.flops / mean_ns, gbps = p->kernel.bytes / mean_ns;
  state.counters["GFLOP/s"] = gflops;
  state.counters["GB/s"] = gbps;
  record_best(rate_key(device_id, name, size) + " GFLOP/s", gflops);
  record_best(rate_key(device_id, name, size) + " GB/s", gbps);
  state.SetLabel(device_id + " " + p->device.info().name);
}

// Times an anchor (run_seconds() a run, bytes() moved by one) as manual
// iterations; its GB/s is a counter and the best is recorded under `key`.
template <class Anchor>
void time_anchor(benchmark::State& state, Anchor& anchor, const char* key) {
  double total_s = 0;
  for (auto _ : state) {
    const double seconds = anchor.run_seconds();
    state.SetIterationTime(seconds);
    total_s += seconds;
  }
  const double gbps = anchor.bytes() * static_cast<double>(state.iterations()) / total_s * 1e-9;
  state.counters["GB/s"] = gbps;
  record_best(key, gbps);
}

// STREAM's triad over 2^26 floats on two threads (tools/anchors/triad.hpp,
// the same code `kiln bench` uses as its CPU anchor).
void BM_Triad(benchmark::State& state) {
  kiln::anchors::Triad triad(std::size_t{1} << 26, 2);
  time_anchor(state, triad, "triad GB/s");
}

void BM_ExpChain_C(benchmark::State& state) {
  const kiln::kernels::KernelSize size{1, kExpChainElements, 1};
  time_kernel(state, "c:0", "exp-chain", size);
  const double triad = best_rates()["triad GB/s"];
  if (triad > 0) state.counters["of_triad"] = best_rates()[rate_key("c:0", "exp-chain", size) + " GB/s"] / triad;
}

// libmvec's _ZGVeN16v_expf over 2^17 floats per thread (512 KiB in, 512 KiB
// out: in each core's L2), 16 passes a run, two threads (tools/anchors/
// mvec_exp.hpp); GB/s counts 8 bytes per element, as exp-chain does.
void BM_MvecExpf(benchmark::State& state) {
  static kiln::anchors::MvecExp anchor(std::size_t{1} << 17, 2, 16);
  if (!anchor.unavailable().empty()) {
    state.SkipWithError(anchor.unavailable().c_str());
    return;
  }
  time_anchor(state, anchor, "mvec expf GB/s");
}

// exp-chain where exp, not memory, is the limit: inputs and outputs in L2.
void BM_ExpChainInL2_C(benchmark::State& state) {
  const kiln::kernels::KernelSize size{1, kExpChainInL2Elements, 1};
  time_kernel(state, "c:0", "exp-chain", size);
  const double mvec = best_rates()["mvec expf GB/s"];
  if (mvec > 0) state.counters["of_mvec"] = best_rates()[rate_key("c:0", "exp-chain", size) + " GB/s"] / mvec;
}

void BM_Matmul_C(benchmark::State& state) {
  time_kernel(state, "c:0", "matmul", {kMatmulSize, kMatmulSize, kMatmulSize});
}

void BM_Matmul_Cblas(benchmark::State& state) {
  const kiln::kernels::KernelSize size{kMatmulSize, kMatmulSize, kMatmulSize};
  time_kernel(state, "cblas:0", "matmul", size);
  const double c = best_rates()[rate_key("c:0", "matmul", size) + " GFLOP/s"];
  if (c > 0) state.counters["c_of_cblas"] = c / best_rates()[rate_key("cblas:0", "matmul", size) + " GFLOP/s"];
}

}  // namespace

// Registration order is run order: the triad before exp-chain, c before
// cblas, so the ratio counters have both sides.
BENCHMARK(BM_Triad)->Unit(benchmark::kMillisecond)->UseManualTime()->MinTime(1.0);
BENCHMARK(BM_ExpChain_C)->Unit(benchmark::kMillisecond)->UseManualTime()->MinTime(1.0);
BENCHMARK(BM_MvecExpf)->Unit(benchmark::kMicrosecond)->UseManualTime()->MinTime(1.0);
BENCHMARK(BM_ExpChainInL2_C)->Unit(benchmark::kMicrosecond)->UseManualTime()->MinTime(1.0);
BENCHMARK(BM_Matmul_C)->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(3);
BENCHMARK(BM_Matmul_Cblas)->Unit(benchmark::kMillisecond)->UseManualTime()->MinTime(1.0);

BENCHMARK_MAIN();
