// kiln_emit_cuda KERNEL M N DTYPE SEQUENCE [--ir|--cost]: the CUDA source kiln
// generates for a standard kernel after SEQUENCE on `preset:h200` (what the
// CUDA plugin reports for an H200: kiln/passes/device_presets.hpp), after a first line
// "// LAUNCH threads=T smem=BYTES params=P grid=G" that bench/gpu-hand/bench.cu
// launches it with. --ir prints the optimized kernel's IR instead. No GPU
// needed: the source is what the CUDA plugin hands NVRTC, so it can be read,
// compiled with nvcc/ptxas for its registers, edited by hand and timed
// (bench/gpu-hand/README.md). SEQUENCE "heuristic" takes the untuned pick
// (kiln's heuristic schedule on preset:h200) and prints it on a second
// line, "// SEQUENCE ...", to be read or edited into a list. --cost prints
// the cost model's estimate on preset:h200 instead, its terms in ns (what the
// heuristic schedule ranks recipes by: docs/cost-model.md).
#include <kiln/ir/dtype.hpp>
#include <kiln/ir/text.hpp>
#include <kiln/kernels/library.hpp>
#include <kiln/passes/cost.hpp>
#include <kiln/passes/device_presets.hpp>
#include <kiln/passes/optimization.hpp>
#include <kiln/sdk/c_emitter.hpp>
#include <kiln/sdk/grid.hpp>
#include <kiln/tune/heuristic.hpp>

#include <iostream>
#include <optional>
#include <string>

using namespace kiln;

int main(int argc, char** argv) {
  const std::string mode = argc == 7 ? argv[6] : "";
  if (argc < 6 || argc > 7 || (argc == 7 && mode != "--ir" && mode != "--cost")) {
    std::cerr << "usage: kiln_emit_cuda KERNEL M N DTYPE SEQUENCE [--ir|--cost]\n";
    return 2;
  }
  const std::optional<ir::DType> dtype = ir::dtype_from_name(argv[4]);
  if (!dtype) {
    std::cerr << "kiln_emit_cuda: unknown dtype '" << argv[4] << "'\n";
    return 2;
  }
  const auto kernel = kernels::make_standard_kernel(argv[1], {.m = std::stoll(argv[2]), .n = std::stoll(argv[3])}, *dtype);
  if (!kernel) {
    std::cerr << "kiln_emit_cuda: " << kernel.error().message << "\n";
    return 1;
  }
  const DeviceInfo device = passes::h200_preset();
  const bool heuristic = std::string(argv[5]) == "heuristic";
  Result<passes::OptSequence> sequence = passes::OptSequence{};
  if (!heuristic) {
    sequence = passes::parse_sequence(argv[5]);
  } else if (auto pick = tune::heuristic_schedule(kernel->kernel, device)) {
    sequence = std::move(pick->sequence);
  } else {
    sequence = std::move(pick).error();
  }
  if (!sequence) {
    std::cerr << "kiln_emit_cuda: " << sequence.error().message << "\n";
    return 1;
  }
  const auto optimized = passes::optimize(kernel->kernel, *sequence, device);
  if (!optimized) {
    std::cerr << "kiln_emit_cuda: " << optimized.error().message << "\n";
    return 1;
  }
  if (mode == "--ir") {
    std::cout << ir::print(*optimized);
    return 0;
  }
  if (mode == "--cost") {
    const passes::CostEstimate c = passes::estimate_cost(*optimized, device);
    std::cout << "total " << c.total_ns << " launch " << c.launch_ns << " compute " << c.compute_ns << " global "
              << c.global_memory_ns << " local " << c.local_memory_ns << " barrier " << c.barrier_ns << " occupancy "
              << c.occupancy << "\n";
    return 0;
  }
  try {
    sdk::EmitOptions options;
    options.entry = "k";
    const std::vector<kiln_op> wire = optimized->to_wire();
    const sdk::EmittedKernel emitted = sdk::emit_c_family(wire, sdk::cuda_dialect(), options);
    const auto& local = emitted.shape.local_sizes;
    // The standard kernels' lengths are constants: no argument is read.
    const sdk::LaunchGrid grid = sdk::compute_grid(wire, {});
    std::cout << "// LAUNCH threads=" << local[0] * local[1] * local[2] << " smem=" << emitted.dynamic_local_bytes
              << " params=" << emitted.shape.params.size() << " grid=" << grid.total_groups()
              << "\n";
    if (heuristic) std::cout << "// SEQUENCE " << passes::to_string(*sequence) << "\n";
    std::cout << emitted.source << "\n";
  } catch (const std::exception& e) {
    std::cerr << "kiln_emit_cuda: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
