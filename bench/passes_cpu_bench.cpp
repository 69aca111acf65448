// passes_cpu_bench: the standard kernels on c:0 through the runtime,
// unoptimized next to hand-picked optimization sequences (issue 5's
// targets: matmul 1024^3 at least 3x the unoptimized kernel; exp-chain at
// 2^26 at least 70% of the two-thread triad bandwidth). The `add` kernel at
// the same size is the bandwidth reference measured in the same run (three
// streams, like triad). Every optimized result is checked against the
// unoptimized kernel's before it is timed.
//
//   passes_cpu_bench [--benchmark_filter=matmul] [--device=c:0] [--repeats=5]
//                    [--dump=DIR]   (each program's IR and source, to tune by)
//
// Debian's Google Benchmark is a debug build and says so; the kernels are
// timed by the device (Device::timed_launch), not by the library.
#include "kiln/ir/text.hpp"
#include "kiln/kernels/library.hpp"
#include "kiln/passes/optimization.hpp"
#include "kiln/runtime.hpp"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

struct Options {
  std::string device = "c:0";
  unsigned repeats = 5;
  std::string dump_dir;
};
Options g_options;

kiln::Device& device() {
  static std::unique_ptr<kiln::Runtime> runtime;
  static kiln::Device opened;
  if (!opened.valid()) {
    runtime = std::make_unique<kiln::Runtime>(kiln::Runtime::open().value());
    opened = runtime->device(g_options.device).value();
  }
  return opened;
}

// Buffers of a standard kernel on the device, inputs random.
struct DeviceArgs {
  std::vector<kiln::Buffer> buffers;
  std::vector<kiln::LaunchArg> args;
  std::vector<std::size_t> outputs;  // indices into buffers

  explicit DeviceArgs(const kiln::kernels::StandardKernel& k) {
    const std::vector<kiln::kernels::HostBuffer> inputs = k.make_inputs(1);
    std::size_t next_input = 0;
    buffers.reserve(k.args.size());
    for (const kiln::kernels::ArgSpec& arg : k.args) {
      if (arg.role == kiln::kernels::ArgRole::Scalar) {
        args.push_back(kiln::LaunchArg::scalar(arg.dtype, arg.scalar_bits));
        continue;
      }
      kiln::kernels::HostBuffer host(arg.dtype, arg.elements);
      buffers.push_back(device().allocate(host.bytes()).value());
      if (arg.role == kiln::kernels::ArgRole::Input) buffers.back().write(inputs[next_input++].data()).value();
      else outputs.push_back(buffers.size() - 1);
      args.push_back(kiln::LaunchArg::buffer(buffers.back()));
    }
  }

  std::vector<kiln::kernels::HostBuffer> read(const kiln::kernels::StandardKernel& k) const {
    std::vector<kiln::kernels::HostBuffer> out;
    std::size_t next = 0;
    for (const kiln::kernels::ArgSpec& arg : k.args)
      if (arg.role == kiln::kernels::ArgRole::Output) {
        kiln::kernels::HostBuffer host(arg.dtype, arg.elements);
        buffers[outputs[next++]].read(host.data()).value();
        out.push_back(std::move(host));
      }
    return out;
  }
};

struct Measured {
  double seconds = 0;
  std::vector<kiln::kernels::HostBuffer> outputs;
};

void dump(const std::string& name, const kiln::ir::Kernel& kernel, const kiln::Program& program) {
  std::string file = name;
  for (char& c : file)
    if (c == '/' || c == ' ' || c == '^' || c == '(' || c == ')') c = '_';
  const std::string stem = g_options.dump_dir + "/" + file;
  if (std::FILE* f = std::fopen((stem + ".kir").c_str(), "w")) {
    std::fputs(kiln::ir::print(kernel).c_str(), f);
    std::fclose(f);
  }
  const kiln::Result<kiln::ProgramSource> source = program.source();
  if (!source.ok()) return;
  if (std::FILE* f = std::fopen((stem + "." + source->language).c_str(), "w")) {
    std::fputs(source->text.c_str(), f);
    std::fclose(f);
  }
}

Measured measure(const std::string& name, const kiln::kernels::StandardKernel& k, const std::string& sequence) {
  const kiln::passes::OptSequence steps = kiln::passes::parse_sequence(sequence).value();
  const kiln::ir::Kernel kernel = kiln::passes::optimize(k.kernel, steps, device().info()).value();
  const kiln::Program program = device().compile(kernel, {.mode = kiln::CompileMode::Frozen}).value();
  if (!g_options.dump_dir.empty()) dump(name, kernel, program);
  DeviceArgs args(k);
  kiln::TimedLaunchOptions options;
  options.warmups = 1;
  options.repeats = g_options.repeats;
  const kiln::Timing timing = device().timed_launch(program, args.args, options).value();
  return {static_cast<double>(timing.median_ns) * 1e-9, args.read(k)};
}

// What each case measured, for the summary printed at the end.
struct Row {
  std::string kernel, sequence;
  double seconds = 0, flops = 0, bytes = 0;
};
std::vector<Row>& rows() {
  static std::vector<Row> all;
  return all;
}

// Unoptimized results per kernel, the reference for the optimized ones.
std::map<std::string, std::vector<kiln::kernels::HostBuffer>>& baselines() {
  static std::map<std::string, std::vector<kiln::kernels::HostBuffer>> outputs;
  return outputs;
}

void run_case(benchmark::State& state, const std::string& name, const std::string& kernel,
              kiln::kernels::KernelSize size, const std::string& sequence) {
  try {
    const kiln::kernels::StandardKernel k = kiln::kernels::make_standard_kernel(kernel, size).value();
    const std::string key = kernel + "/" + std::to_string(size.m) + "x" + std::to_string(size.n) + "x" + std::to_string(size.k);
    Measured m;
    for (auto _ : state) {
      m = measure(name, k, sequence);
      state.SetIterationTime(m.seconds);
    }
    if (sequence.empty()) baselines()[key] = m.outputs;
    else if (const auto base = baselines().find(key); base != baselines().end())
      for (std::size_t i = 0; i < m.outputs.size(); ++i) {
        const double error = kiln::kernels::compare(m.outputs[i], base->second[i]);
        if (!(error <= 2 * k.tolerance)) state.SkipWithError(("wrong results: relative error " + std::to_string(error)).c_str());
      }
    rows().push_back({kernel, sequence, m.seconds, k.flops, k.bytes});
    state.counters["GFLOP/s"] = k.flops / m.seconds * 1e-9;
    state.counters["GB/s"] = k.bytes / m.seconds * 1e-9;
    state.SetLabel(sequence.empty() ? "unoptimized" : sequence);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void add_case(const std::string& name, const std::string& kernel, kiln::kernels::KernelSize size,
              const std::string& sequence) {
  benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& state) { run_case(state, name, kernel, size, sequence); })
      ->UseManualTime()
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
}

// Unoptimized and optimized side by side: GFLOP/s for matmul, GB/s for the
// streams (exp-chain also as a share of add's bandwidth in the same run
// and of the 27 GB/s two-thread triad PLATFORM.md measured on an idle machine).
void print_summary() {
  std::map<std::string, double> unoptimized;
  for (const Row& r : rows())
    if (r.sequence.empty()) unoptimized[r.kernel] = r.seconds;
  std::printf("\n%-10s %10s %12s %8s  %s\n", "kernel", "median ms", "rate", "speedup", "sequence");
  for (const Row& r : rows()) {
    const bool compute = r.kernel == "matmul";
    const double rate = (compute ? r.flops : r.bytes) / r.seconds * 1e-9;
    const auto base = unoptimized.find(r.kernel);
    const double speedup = base == unoptimized.end() ? 0 : base->second / r.seconds;
    std::printf("%-10s %10.2f %7.2f %-5s %7.2fx  %s\n", r.kernel.c_str(), r.seconds * 1e3, rate,
                compute ? "GF/s" : "GB/s", speedup, r.sequence.empty() ? "(unoptimized)" : r.sequence.c_str());
  }
  const auto add = unoptimized.find("add");
  for (const Row& r : rows())
    if (r.kernel == "exp-chain" && add != unoptimized.end()) {
      const Row* reference = nullptr;
      for (const Row& a : rows())
        if (a.kernel == "add" && a.sequence.empty()) reference = &a;
      const double gbs = r.bytes / r.seconds * 1e-9, add_gbs = reference->bytes / reference->seconds * 1e-9;
      std::printf("exp-chain %s: %.1f GB/s = %.0f%% of add's %.1f GB/s in this run, %.0f%% of 27 GB/s\n",
                  r.sequence.empty() ? "(unoptimized)" : r.sequence.c_str(), gbs, 100 * gbs / add_gbs, add_gbs,
                  100 * gbs / 27);
    }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--device=", 9) == 0) g_options.device = argv[i] + 9;
    else if (std::strncmp(argv[i], "--repeats=", 10) == 0) g_options.repeats = static_cast<unsigned>(std::atoi(argv[i] + 10));
    else if (std::strncmp(argv[i], "--dump=", 7) == 0) g_options.dump_dir = argv[i] + 7;
    else rest.push_back(argv[i]);
  }
  int rest_count = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_count, rest.data());

  const kiln::kernels::KernelSize mm{.m = 1024, .n = 1024, .k = 1024};
  add_case("matmul/1024/unoptimized", "matmul", mm, "");
  // The tile register_block's configs list first for c:0, then neighbours.
  add_case("matmul/1024/tile8x32", "matmul", mm, "register_block(loop=0,tm=8,tn=32,unroll=1); vectorize(lanes=16)");
  add_case("matmul/1024/tile8x32u4", "matmul", mm, "register_block(loop=0,tm=8,tn=32,unroll=4); vectorize(lanes=16)");
  add_case("matmul/1024/tile4x32", "matmul", mm, "register_block(loop=0,tm=4,tn=32,unroll=1); vectorize(lanes=16)");
  add_case("matmul/1024/tile4x16", "matmul", mm, "register_block(loop=0,tm=4,tn=16,unroll=1); vectorize(lanes=16)");

  const kiln::kernels::KernelSize stream{.n = std::int64_t{1} << 26};
  add_case("add/2^26/unoptimized", "add", stream, "");  // the bandwidth reference: three streams, like triad
  add_case("exp-chain/2^26/unoptimized", "exp-chain", stream, "");

  // Row kernels (docs/passes.md, "Row kernels"): 256 MiB in, 256 MiB out,
  // far beyond the L2; the tuner's CPU recipes.
  const kiln::kernels::KernelSize rows{.m = 4096, .n = 16384};
  const char* three_loops = "split_loop(loop=2,factor=16); unroll(loop=3,factor=0); lane_reduce(loop=1,lanes=16); "
                            "lane_reduce(loop=0,lanes=16); vectorize(lanes=16)";
  const char* two_loops = "split_loop(loop=1,factor=16); unroll(loop=2,factor=0); lane_reduce(loop=0,lanes=16); "
                          "vectorize(lanes=16)";
  add_case("softmax-rows/4096x16384/unoptimized", "softmax-rows", rows, "");
  add_case("softmax-rows/4096x16384/lanes", "softmax-rows", rows, three_loops);
  add_case("softmax-rows/4096x16384/lanes+exp-cached", "softmax-rows", rows,
           "split_loop(loop=2,factor=16); unroll(loop=3,factor=0); lane_reduce(loop=1,lanes=16); "
           "lane_reduce(loop=0,lanes=16); row_cache(loop=1); vectorize(lanes=16)");
  add_case("layernorm-rows/4096x16384/unoptimized", "layernorm-rows", rows, "");
  add_case("layernorm-rows/4096x16384/lanes", "layernorm-rows", rows, two_loops);
  add_case("rmsnorm-rows/4096x16384/unoptimized", "rmsnorm-rows", rows, "");
  add_case("rmsnorm-rows/4096x16384/lanes", "rmsnorm-rows", rows, two_loops);

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  print_summary();
  return 0;
}
