// kiln_emit_cuda KERNEL M N DTYPE SEQUENCE [--ir]: the CUDA source kiln
// generates for a standard kernel after SEQUENCE on `preset:h200` (what the
// CUDA plugin reports for an H200: kiln/passes/device_presets.hpp), after a first line
// "// LAUNCH threads=T smem=BYTES params=P grid=G" that bench/gpu-hand/bench.cu
// launches it with. --ir prints the optimized kernel's IR instead. No GPU
// needed: the source is what the CUDA plugin hands NVRTC, so it can be read,
// compiled with nvcc/ptxas for its registers, edited by hand and timed
// (bench/gpu-hand/README.md). SEQUENCE "heuristic" takes the untuned pick
// (kiln's heuristic schedule on preset:h200) and prints it on a second
// line, "// SEQUENCE ...", to be read or edited into a list.
#include <kiln/ir/dtype.hpp>
#include <kiln/ir/text.hpp>
#include <kiln/kernels/library.hpp>
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
  if (argc < 6 || (argc == 7 && std::string(argv[6]) != "--ir") || argc > 7) {
    std::cerr << "usage: kiln_emit_cuda KERNEL M N DTYPE SEQUENCE [--ir]\n";
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
  if (argc == 7) {
    std::cout << ir::print(*optimized);
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
